"""AgentV 4.x's `replay` target through the CLI: the case's recorded output is the answer, the graders run
fresh; a record that is missing, doubled or malformed, or a fixture file outside the project, is an error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers.cli import run_cli


def _record(test_id: str, answer: str, **extra: Any) -> str:
    record = {"schema_version": "agentv.replay_fixture.v1", "suite": "recorded", "test_id": test_id,
              "source_target": "live", "attempt": 0,
              "output": [{"role": "assistant", "content": answer,
                          "tool_calls": [{"tool": "Read", "input": {"path": "a.py"}, "duration_ms": 5}]}],
              "token_usage": {"input": 10, "output": 5}, "cost_usd": 0.001, "duration_ms": 40, **extra}
    return json.dumps(record)


def _suite(repo: Path, fixtures: str, lines: list[str]) -> None:
    (repo / ".agentv").mkdir(exist_ok=True)
    (repo / ".agentv/targets.yaml").write_text(
        "targets:\n  - name: replayed\n    provider: replay\n"
        f"    fixtures: {fixtures}\n    suite: recorded\n    source_target: live\n")
    (repo / "evals").mkdir(exist_ok=True)
    (repo / "fixtures").mkdir(exist_ok=True)
    (repo / "fixtures/out.jsonl").write_text("\n".join(lines) + "\n")
    (repo / "evals/r.eval.yaml").write_text("""\
execution:
  target: replayed
tests:
  - id: good
    input: fix it
    assertions:
      - {type: contains, value: fixed}
      - {type: tool-trajectory, mode: in_order, expected: [{tool: Read}]}
      - {type: cost, budget: 0.01}
  - id: wrong
    input: fix it
    assertions: [{type: contains, value: fixed}]
  - id: missing
    input: fix it
    assertions: [{type: contains, value: fixed}]
  - id: twice
    input: fix it
    assertions: [{type: contains, value: fixed}]
""")


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    return {row["test_id"] if "test_id" in row else row["eval_id"]: row for row in rows}


def test_a_replay_target_answers_from_its_recorded_outputs(repo: Path, tmp_path: Path) -> None:
    _suite(repo, "../fixtures/out.jsonl", [
        _record("good", "I fixed it"), _record("wrong", "nothing done"),
        _record("twice", "fixed"), _record("twice", "fixed"),
        _record("good", "fixed", source_target="other"), _record("missing", "fixed", attempt=1)])
    ran = run_cli("run", "evals/r.eval.yaml", "--output-dir", str(tmp_path / "out"), cwd=repo)
    rows = _rows(tmp_path / "out")
    assert ran.returncode == 1, ran.stderr
    assert rows["good"]["score"] == 1.0 and rows["good"].get("verdict") in ("pass", None), rows["good"]
    assert rows["wrong"]["score"] == 0.0
    text = json.dumps(rows["missing"]) + json.dumps(rows["twice"])
    assert "found no record for suite=recorded" in text and "found 2 duplicate records" in text
    assert all(rows[c].get("error") for c in ("missing", "twice")), rows


def test_a_malformed_record_is_an_error_naming_its_line(repo: Path, tmp_path: Path) -> None:
    _suite(repo, "../fixtures/out.jsonl", [_record("good", "fixed"), _record("wrong", "fixed", surprise=1)])
    ran = run_cli("run", "evals/r.eval.yaml", "--output-dir", str(tmp_path / "out"), cwd=repo)
    assert ran.returncode == 1
    assert "out.jsonl:2: <record>: unknown key 'surprise'" in json.dumps(_rows(tmp_path / "out")["good"])


def test_a_fixture_file_outside_the_project_is_not_read(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere.jsonl").write_text(_record("good", "fixed") + "\n")
    _suite(repo, str(tmp_path / "elsewhere.jsonl"), [])
    ran = run_cli("run", "evals/r.eval.yaml", "--output-dir", str(tmp_path / "out"), cwd=repo)
    assert ran.returncode == 1
    rows = _rows(tmp_path / "out")
    assert "lies outside the repository" in json.dumps(rows["good"]) and rows["good"]["score"] == 0.0
