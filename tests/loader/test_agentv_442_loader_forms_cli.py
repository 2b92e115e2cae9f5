"""AgentV 4.42 loader forms, through the CLI: a glob entry in a case list, a JSONL sidecar's
`execution.assertions`, and a JSONL sidecar's target (which AgentV 2.19 and 4.42 never read).

Each behaviour here was checked against AgentV 4.42.4 itself (`agentv eval`): `- file://cases/*.yaml`
reads the matches in sorted order, a glob matching nothing warns and adds no case, `tests:
file://cases/*.yaml` as a string is refused (it names no file); a sidecar's `execution.assertions`
applies to every line; a sidecar's `execution.target` leaves the cases on `default`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers.cli import run_cli

TARGETS = ('targets:\n  - name: default\n    provider: mock\n    response: "Rome"\n'
           '  - name: other\n    provider: mock\n    response: "Paris"\n')


def _repo(root: Path) -> Path:
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".agentv").mkdir()
    (root / ".agentv" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    (root / "evals").mkdir()
    return root


def _rows(repo: Path) -> list[dict[str, object]]:
    text = (repo / ".agentv-gate" / "results.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _case(case_id: str, word: str) -> str:
    return f"- id: {case_id}\n  input: hi\n  assertions: [{{type: contains, value: {word}}}]\n"


def test_a_glob_entry_reads_every_match_in_sorted_order(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    cases = repo / "evals" / "cases"
    cases.mkdir()
    (cases / "b.yaml").write_text(_case("b-rome", "Rome"), encoding="utf-8")
    (cases / "a.yaml").write_text(_case("a-rome", "Rome"), encoding="utf-8")
    (cases / "c.jsonl").write_text('{"id": "c-paris", "input": "hi", "assert": [{"type": "contains", "value": '
                                   '"Paris"}]}\n', encoding="utf-8")
    (cases / "notes.txt").write_text("not matched\n", encoding="utf-8")
    (repo / "evals" / "s.eval.yaml").write_text("tests:\n  - file://cases/*.{yaml,jsonl}\n", encoding="utf-8")
    done = run_cli("run", "evals/s.eval.yaml", cwd=repo)
    assert done.returncode == 1, done.stdout + done.stderr  # c-paris fails on `default` (Rome)
    assert sorted(row["eval_id"] for row in _rows(repo)) == ["a-rome", "b-rome", "c-paris"]  # type: ignore[type-var]
    assert run_cli("validate", "evals/s.eval.yaml", cwd=repo).returncode == 0
    # the reading order shows in which file a duplicate id is reported: the later one, naming the first
    (cases / "b.yaml").write_text(_case("a-rome", "Rome"), encoding="utf-8")
    done = run_cli("validate", "evals/s.eval.yaml", cwd=repo)
    assert done.returncode == 1
    assert "evals/cases/b.yaml:1: duplicate case id 'a-rome' (first at " in done.stdout
    assert "cases/a.yaml:1)" in done.stdout


def test_a_glob_matching_nothing_is_a_located_warning_and_adds_no_case(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    (repo / "evals" / "one.yaml").write_text(_case("one", "Rome"), encoding="utf-8")
    (repo / "evals" / "s.eval.yaml").write_text("tests:\n  - file://one.yaml\n  - file://none/*.yaml\n",
                                                encoding="utf-8")
    for command in ("run", "validate"):
        done = run_cli(command, "evals/s.eval.yaml", cwd=repo)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "evals/s.eval.yaml:3: warning: case file glob 'none/*.yaml' matched no files" in done.stdout + done.stderr
    assert [row["eval_id"] for row in _rows(repo)] == ["one"]


def test_a_glob_reaching_outside_the_repository_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.yaml").write_text(_case("outside", "Rome"), encoding="utf-8")
    repo = _repo(tmp_path / "repo")
    (repo / "evals" / "s.eval.yaml").write_text("tests:\n  - file://../../*.yaml\n", encoding="utf-8")
    for command, code in (("run", 2), ("validate", 1)):
        done = run_cli(command, "evals/s.eval.yaml", cwd=repo)
        assert done.returncode == code, done.stdout + done.stderr
        refusal = "evals/s.eval.yaml:2: case file glob '../../*.yaml' reaches outside the repository root"
        assert refusal in done.stdout + done.stderr


def test_a_glob_match_linked_outside_the_repository_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.yaml").write_text(_case("outside", "Rome"), encoding="utf-8")
    repo = _repo(tmp_path / "repo")
    (repo / "evals" / "cases").mkdir()
    (repo / "evals" / "cases" / "x.yaml").symlink_to(tmp_path / "secret.yaml")
    (repo / "evals" / "s.eval.yaml").write_text("tests:\n  - file://cases/*.yaml\n", encoding="utf-8")
    done = run_cli("run", "evals/s.eval.yaml", cwd=repo)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "reaches outside the repository root" in done.stdout + done.stderr


def _jsonl_suite(repo: Path, sidecar: str) -> None:
    (repo / "evals" / "set.jsonl").write_text('{"id": "a", "input": "hi", "criteria": "names Paris"}\n',
                                              encoding="utf-8")
    (repo / "evals" / "set.yaml").write_text(sidecar, encoding="utf-8")


def test_a_jsonl_sidecar_execution_assertions_apply_to_every_line(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    _jsonl_suite(repo, "execution:\n  assertions:\n    - {type: contains, value: Rome}\n")
    for command in ("run", "validate"):
        done = run_cli(command, "evals/set.jsonl", cwd=repo)
        assert done.returncode == 0, done.stdout + done.stderr
    assert [score["type"] for score in _rows(repo)[0]["scores"]] == ["contains"]  # type: ignore[index]
    _jsonl_suite(repo, "execution:\n  assertions:\n    - {type: contains, value: Paris}\n")
    assert run_cli("run", "evals/set.jsonl", cwd=repo).returncode == 1  # it checks: a miss fails


def test_a_jsonl_sidecar_target_has_no_effect_and_says_so(tmp_path: Path) -> None:
    """AgentV 2.19 and 4.42 run `default` (answering Rome) whatever the sidecar names: the case fails there."""
    repo = _repo(tmp_path / "repo")
    _jsonl_suite(repo, "execution:\n  target: other\n  assertions:\n    - {type: contains, value: Paris}\n")
    done = run_cli("run", "evals/set.jsonl", cwd=repo)
    assert done.returncode == 1, done.stdout + done.stderr
    assert _rows(repo)[0]["target"] == "default"
    done = run_cli("validate", "evals/set.jsonl", cwd=repo)
    assert "evals/set.yaml:2: warning: 'execution.target' has no effect here" in done.stdout + done.stderr
