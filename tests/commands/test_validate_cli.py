"""`agentv-gate validate`: one located line per problem, exit 0/1/2, no network, no judge run."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from agentv_gate.errors import EXIT_NO_CASES
from tests.helpers.cli import run_cli
from tests.helpers.github_runner import runner_commands


def validate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli("validate", *args, cwd=cwd)


def test_valid_suite_exits_zero(repo: Path) -> None:
    (repo / "evals/ok.eval.yaml").write_text("tests:\n  - id: a\n    criteria: c\n    input: q\n")
    proc = validate("evals", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == ""
    assert "ok: 1 case(s) in 1 file(s)" in proc.stderr


def test_each_problem_is_one_located_line_and_exit_is_one(repo: Path) -> None:
    (repo / "evals/bad.eval.yaml").write_text(
        "tests:\n"
        "  - id: a\n    criteria: c\n    input: q\n"
        "    assert:\n      - type: nonsense\n"
        "  - id: a\n    criteria: c\n    input: q\n"
        "  - id: b\n    criteria: c\n    input: q\n    grader: llm_judge\n"
    )
    (repo / "evals/broken.yaml").write_text("tests: [\n")
    proc = validate("evals", cwd=repo)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    # The parser's own wording differs between libyaml and pure Python; the location and kind do not.
    lines[-1] = re.sub(r"malformed YAML: .* \(expected", "malformed YAML: ... (expected", lines[-1])
    assert lines == [
        "evals/bad.eval.yaml:6: unknown evaluator type 'nonsense' (expected one of code_judge, llm_judge, contains, "
        "regex, equals, is_json, field_accuracy, composite, starts_with, ends_with, tool_trajectory, latency, cost, "
        "token_usage, execution_metrics, skill_trigger, or a script .agentv/assertions/nonsense.py)",
        "evals/bad.eval.yaml:7: duplicate case id 'a' (first at line 2) (expected unique case ids within a file)",
        "evals/bad.eval.yaml:13: warning: 'grader' is deprecated (expected 'evaluator')",
        "evals/broken.yaml:2: malformed YAML: ... (expected valid YAML)",
    ]


def test_warnings_fail_only_with_strict(repo: Path) -> None:
    suite = repo / "old.eval.yaml"
    suite.write_text("tests:\n  - id: a\n    criteria: c\n    input: q\n    grader: llm_judge\n")
    assert validate(str(suite), cwd=repo).returncode == 0
    assert validate(str(suite), "--strict", cwd=repo).returncode == 1


def test_nothing_found_is_its_own_exit_code(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert validate("empty", cwd=tmp_path).returncode == EXIT_NO_CASES
    assert validate("missing-folder", cwd=tmp_path).returncode == 1


def test_verbose_names_a_hostile_eval_file_name_inertly(repo: Path) -> None:
    """`--verbose` lists each eval file with its case count; a file name is the pull request's text
    and may hold a newline: the CI log (stderr is scanned too) must not take it for a command."""
    name = "x\n::add-mask::everything ##[stop-commands]y.eval.yaml"
    (repo / "evals" / name).write_text("tests:\n  - {id: c, input: q, assert: [{type: contains, value: ok}]}\n")
    proc = run_cli("validate", "evals", "--verbose", cwd=repo, env={"GITHUB_ACTIONS": "true"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 case(s)" in proc.stderr
    assert runner_commands(proc.stdout + proc.stderr) == [], proc.stdout + proc.stderr


def test_without_a_targets_file_every_other_problem_is_reported_too(repo: Path) -> None:
    """A typo'd key and no targets file: both in one run, the missing targets file among them."""
    (repo / ".agentv/targets.yaml").unlink()
    (repo / "evals/typo.eval.yaml").write_text("tests:\n  - id: a\n    criteria: c\n    input: q\n    asserts: []\n"
                                               "  - id: b\n    criteria: c\n    input: q\n")
    proc = validate("evals", cwd=repo)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert re.search(r"evals/typo\.eval\.yaml:5: .*asserts", proc.stdout), proc.stdout
    assert "no targets file" in proc.stderr
