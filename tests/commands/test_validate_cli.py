"""`agentv-gate validate`: one located line per problem, exit 0/1/2, no network, no judge run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path


def validate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentv_gate.cli", "validate", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def test_valid_suite_exits_zero(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals/ok.eval.yaml").write_text("tests:\n  - id: a\n    criteria: c\n    input: q\n")
    proc = validate("evals", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == ""
    assert "ok: 1 case(s) in 1 file(s)" in proc.stderr


def test_each_problem_is_one_located_line_and_exit_is_one(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals/bad.eval.yaml").write_text(
        "tests:\n"
        "  - id: a\n    criteria: c\n    input: q\n"
        "    assert:\n      - type: nonsense\n"
        "  - id: a\n    criteria: c\n    input: q\n"
        "  - id: b\n    criteria: c\n    input: q\n    grader: llm_judge\n"
    )
    (tmp_path / "evals/broken.yaml").write_text("tests: [\n")
    proc = validate("evals", cwd=tmp_path)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    # The parser's own wording differs between libyaml and pure Python; the location and kind do not.
    lines[-1] = re.sub(r"malformed YAML: .* \(expected", "malformed YAML: ... (expected", lines[-1])
    assert lines == [
        "evals/bad.eval.yaml:6: unknown evaluator type 'nonsense' (expected one of code_judge, llm_judge, contains, "
        "regex, equals, is_json, field_accuracy, composite, starts_with, ends_with, tool_trajectory, latency, cost, "
        "token_usage, execution_metrics, or a script .agentv/assertions/nonsense.py)",
        "evals/bad.eval.yaml:7: duplicate case id 'a' (first at line 2) (expected unique case ids within a file)",
        "evals/bad.eval.yaml:13: warning: 'grader' is deprecated (expected 'evaluator')",
        "evals/broken.yaml:2: malformed YAML: ... (expected valid YAML)",
    ]


def test_warnings_fail_only_with_strict(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    suite = tmp_path / "old.eval.yaml"
    suite.write_text("tests:\n  - id: a\n    criteria: c\n    input: q\n    grader: llm_judge\n")
    assert validate(str(suite), cwd=tmp_path).returncode == 0
    assert validate(str(suite), "--strict", cwd=tmp_path).returncode == 1


def test_nothing_found_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert validate("empty", cwd=tmp_path).returncode == 2
    assert validate("missing-folder", cwd=tmp_path).returncode == 1
