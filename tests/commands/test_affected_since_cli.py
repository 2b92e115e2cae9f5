"""`run --affected-since BASE.jsonl` through the CLI, on scratch git repositories.

The base is a real run's results on the base commit; the change is a real edit (committed or not).
What is not affected is carried over, marked and counted apart; what the base cannot speak for runs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.git import commit_all

JUDGE = """\
import json, sys
json.load(sys.stdin)
print(json.dumps({"score": 1.0, "hits": ["fine"], "misses": []}))
"""


def case(name: str, value: str = "ok", judged: bool = False) -> str:
    judge = "      - {name: script, type: code_judge, script: [python3, judges/check.py]}\n" if judged else ""
    return f"  - id: {name}\n    input: question {name}\n    assert:\n      - {{type: contains, value: {value}}}\n{judge}"


def suite(*cases: str) -> str:
    return "tests:\n" + "".join(cases)


def base_project(tmp_path: Path, text: str | None = None, gate: str | None = None) -> tuple[Path, Path, str]:
    """A committed repository (the mock agent answers `ok`), its base run's results copied out of it, the sha."""
    repo = make_repo(tmp_path / "repo")
    write(repo / "src" / "agent.py", "print('the agent')\n")
    write(repo / "evals" / "judges" / "check.py", JUDGE)
    write(repo / "evals" / "cases.yaml", text or suite(case("a"), case("b", judged=True), case("c", judged=True)))
    if gate is not None:
        write(repo / ".agentv" / "gate.yaml", gate)
    sha = commit_all(repo)
    proc = run_cli("run", "evals", cwd=repo)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    base = tmp_path / "base.jsonl"
    shutil.copy(repo / ".agentv-gate" / "results.jsonl", base)
    return repo, base, sha


def rows(repo: Path, name: str = "results.jsonl") -> dict[str, dict[str, Any]]:
    found = [json.loads(line) for line in (repo / ".agentv-gate" / name).read_text().splitlines()]
    return {row["eval_id"]: row for row in found}


def affected(repo: Path, base: Path, *extra: str, env: dict[str, str] | None = None) -> Any:
    return run_cli("run", "evals", "--affected-since", str(base), *extra, cwd=repo, env=env)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_editing_one_case_runs_exactly_that_case_and_carries_the_others(tmp_path: Path) -> None:
    repo, base, sha = base_project(tmp_path)
    edit(repo / "evals" / "cases.yaml", "input: question b", "input: question b, reworded")
    summary = tmp_path / "summary.md"
    proc = affected(repo, base, env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = rows(repo)
    assert set(found) == {"a", "b", "c"}
    assert [k for k, r in found.items() if not r.get("carried")] == ["b"]
    base_rows = {json.loads(line)["eval_id"]: json.loads(line) for line in base.read_text().splitlines()}
    assert found["a"]["timestamp"] == base_rows["a"]["timestamp"] and found["a"]["commit"] == sha
    assert found["b"]["timestamp"] != base_rows["b"]["timestamp"]
    line = f"1 of 3 cases run; 2 carried from {sha[:7]}"
    assert line in proc.stdout
    assert line in summary.read_text()
    assert line in (repo / ".agentv-gate" / "report.html").read_text()
    assert "1 of 3 case(s) affected (1 changed, 0 new)" in proc.stderr


def test_the_junit_file_tells_a_carried_case_from_one_this_run_judged(tmp_path: Path) -> None:
    """A dashboard reading junit.xml alone must not show a carried-over pass as this pull request's."""
    import xml.etree.ElementTree as ET

    repo, base, sha = base_project(tmp_path)
    edit(repo / "evals" / "cases.yaml", "input: question b", "input: question b, reworded")
    proc = affected(repo, base)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tree = ET.parse(repo / ".agentv-gate" / "junit.xml")
    outs = {tc.get("name"): (tc.findtext("system-out") or "") for tc in tree.iter("testcase")}
    carried = {name for name, out in outs.items() if out.startswith("carried from the base")}
    assert len(outs) == 3 and len(carried) == 2, outs
    assert not any(name.startswith("b") for name in carried), outs
    assert all(sha[:7] in outs[name] for name in carried)
    said = {p.get("name"): p.get("value") for p in tree.iter("property")}
    assert said["agentv-gate.selection"] == f"1 of 3 cases run; 2 carried from {sha[:7]}"


def test_a_new_case_runs_and_a_removed_one_is_not_carried(tmp_path: Path) -> None:
    repo, base, _sha = base_project(tmp_path)
    write(repo / "evals" / "cases.yaml", suite(case("a"), case("b", judged=True), case("d")))
    proc = affected(repo, base)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = rows(repo)
    assert set(found) == {"a", "b", "d"}
    assert [k for k, r in found.items() if not r.get("carried")] == ["d"]


def test_editing_a_judge_script_runs_every_case_that_uses_it(tmp_path: Path) -> None:
    repo, base, _sha = base_project(tmp_path)
    write(repo / "evals" / "judges" / "check.py", JUDGE.replace('"fine"', '"still fine"'))
    proc = affected(repo, base)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(k for k, r in rows(repo).items() if not r.get("carried")) == ["b", "c"]


@pytest.mark.parametrize("gate", [None, "agent_paths: [src/**]\n"], ids=["default", "agent_paths"])
def test_editing_the_agent_runs_every_case(tmp_path: Path, gate: str | None) -> None:
    repo, base, sha = base_project(tmp_path, gate=gate)
    write(repo / "src" / "agent.py", "print('a changed agent')\n")
    commit_all(repo, "agent change")
    proc = affected(repo, base)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not any(r.get("carried") for r in rows(repo).values())
    assert f"running every case: 1 file(s) of the agent changed (src/agent.py) since {sha[:7]}" in proc.stderr


def test_a_file_in_the_eval_folder_is_not_the_agent_and_agent_paths_narrow_the_default(tmp_path: Path) -> None:
    repo, base, _sha = base_project(tmp_path, gate="agent_paths: [src/**]\n")
    write(repo / "evals" / "README.md", "notes\n")
    write(repo / "docs" / "guide.md", "not the agent, by agent_paths\n")
    edit(repo / "evals" / "cases.yaml", "input: question a", "input: question a, reworded")
    proc = affected(repo, base)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [k for k, r in rows(repo).items() if not r.get("carried")] == ["a"]
    # Without agent_paths, docs/guide.md (outside the eval folders) counts as the agent's.
    (repo / ".agentv" / "gate.yaml").unlink()
    proc = affected(repo, base)
    assert "running every case" in proc.stderr and "docs/guide.md" in proc.stderr


def test_nothing_affected_is_never_a_quiet_green(tmp_path: Path) -> None:
    repo, base, _sha = base_project(tmp_path)
    proc = affected(repo, base)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "NO CASE IS AFFECTED" in proc.stderr and "--allow-empty-selection" in proc.stderr
    proc = affected(repo, base, "--allow-empty-selection")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert all(r["carried"] for r in rows(repo).values()) and len(rows(repo)) == 3
    assert "NO CASE IS AFFECTED" in proc.stderr and "0 of 3 cases run; 3 carried from" in proc.stdout


def test_a_carried_failure_stays_a_failure_and_a_carried_error_an_error(tmp_path: Path) -> None:
    text = suite(case("a"), case("bad", value="nope"), case("broken", judged=True))
    repo, base, _sha = base_project(tmp_path, text)
    base_rows = [json.loads(line) for line in base.read_text().splitlines()]
    for row in base_rows:  # the base's run of `broken` errored (its judge broke there)
        if row["eval_id"] == "broken":
            row.update(verdict="error", error="judge crashed", score=0.0)
    base.write_text("".join(json.dumps(row) + "\n" for row in base_rows))
    edit(repo / "evals" / "cases.yaml", "input: question a", "input: question a2")
    proc = affected(repo, base)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    found = rows(repo)
    assert found["bad"]["carried"] and found["bad"]["verdict"] == "fail"
    assert found["broken"]["carried"] and found["broken"]["verdict"] == "error"
    junit = (repo / ".agentv-gate" / "junit.xml").read_text()
    assert "judge crashed" in junit


def test_a_base_that_cannot_tell_runs_everything_saying_why(tmp_path: Path) -> None:
    repo, base, _sha = base_project(tmp_path)
    stripped = tmp_path / "old.jsonl"
    stripped.write_text("".join(json.dumps({k: v for k, v in json.loads(line).items() if k != "case_digest"}) + "\n"
                                for line in base.read_text().splitlines()))
    proc = affected(repo, stripped)
    assert proc.returncode == 0 and "running every case: the base's rows have no case_digest" in proc.stderr
    assert not any(r.get("carried") for r in rows(repo).values())

    proc = affected(repo, base, "--trials", "2")
    assert "running every case: the base ran --trials unset, this run --trials 2" in proc.stderr, proc.stderr

    other = tmp_path / "other.jsonl"
    other.write_text(base.read_text().replace('"eval_id": "', '"eval_id": "x-').replace('"eval_id":"', '"eval_id":"x-'))
    proc = affected(repo, other)
    assert "running every case: the base shares no case with these eval files" in proc.stderr, proc.stderr

    proc = affected(repo, base, "--base-ref", "0" * 40)
    assert "is not in this checkout" in proc.stderr and "fetch-depth: 0" in proc.stderr


def test_selection_comes_before_the_shards_and_carried_rows_are_written_once(tmp_path: Path) -> None:
    text = suite(*(case(f"c{i}") for i in range(6)))
    repo, base, sha = base_project(tmp_path, text)
    for i in (1, 4):
        edit(repo / "evals" / "cases.yaml", f"input: question c{i}\n", f"input: question c{i}, new\n")
    for shard in ("1/2", "2/2"):
        proc = affected(repo, base, "--shard", shard, "--results", f".agentv-gate/s{shard[0]}.jsonl")
        assert proc.returncode == 0, proc.stdout + proc.stderr
    one, two = rows(repo, "s1.jsonl"), rows(repo, "s2.jsonl")
    assert [k for k, r in one.items() if not r.get("carried")] == ["c1"]  # the 2 affected, one per shard
    assert list(two) == ["c4"]
    proc = run_cli("merge", ".agentv-gate/s1.jsonl", ".agentv-gate/s2.jsonl", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"2 of 6 cases run; 4 carried from {sha[:7]}" in proc.stdout


def test_a_base_of_another_target_carries_nothing_for_this_one(tmp_path: Path) -> None:
    repo, base, _sha = base_project(tmp_path)
    write(repo / ".agentv" / "targets.yaml", "targets:\n  - name: default\n    provider: mock\n    response: ok\n"
          "  - name: other\n    provider: mock\n    response: ok\n")
    # targets.yaml changed: the agent's by default; agent_paths narrows it so that only the target name differs
    write(repo / ".agentv" / "gate.yaml", "agent_paths: [src/**]\n")
    proc = affected(repo, base, "--target", "other")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = [json.loads(line) for line in (repo / ".agentv-gate" / "results.jsonl").read_text().splitlines()]
    assert sorted((r["eval_id"], r["target"], bool(r.get("carried"))) for r in found) == [
        ("a", "other", False), ("b", "other", False), ("c", "other", False)]


def test_affected_since_does_not_combine_with_a_rerun_or_a_recording(tmp_path: Path) -> None:
    repo, base, _sha = base_project(tmp_path)
    proc = affected(repo, base, "--rerun-failed", str(base))
    assert proc.returncode == 2 and "does not combine with --retry-errors or --rerun-failed" in proc.stderr
    proc = affected(repo, base, "--record", "rec")
    assert proc.returncode == 2 and "--affected-since with --record" in proc.stderr


def test_agent_paths_that_are_not_a_list_of_globs_are_refused_at_their_line(repo: Path) -> None:
    write(repo / "evals" / "a.yaml", suite(case("a")))
    write(repo / ".agentv" / "gate.yaml", "quarantine: []\nagent_paths: src/**\n")
    proc = run_cli("validate", "evals", cwd=repo)
    assert proc.returncode != 0
    assert ".agentv/gate.yaml:2: agent_paths must be a non-empty list of globs" in proc.stdout + proc.stderr
