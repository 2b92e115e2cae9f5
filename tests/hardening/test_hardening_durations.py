"""Every duration is bounded where it is written: `validate` refuses one too long to wait, located.

`timeout_seconds: 1e308` passed `validate` and failed each case at run time with
`OverflowError: timestamp out of range`. The bound is JavaScript's timer limit (2^31 - 1 ms,
about 24.8 days; AgentV's timers fire at once past it): a value over it is refused at its line by
`validate` and by `run` before anything runs; a value at it loads.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_gate.base.defaults import MAX_DURATION_MS
from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.hostile import no_traceback

SUITE = "tests:\n  - id: one\n    input: hi\n    assertions:\n      - {type: contains, value: ok}\n"
HUGE = "1e308"
MOST_SECONDS = f"{MAX_DURATION_MS / 1000:.3f}"


def target(setting: str) -> str:
    """A targets file whose one target carries `setting` on its line 5."""
    provider = ("    provider: mock\n    response: ok\n" if setting.startswith(("delay", "retry"))
                else "    provider: cli\n    command: echo ok\n")
    return f"targets:\n  - name: default\n{provider}    {setting}\n"


@pytest.mark.parametrize("setting", [f"timeout_seconds: {HUGE}", f"delay_ms: {HUGE}", f"delay_max_ms: {HUGE}",
                                     f"retry_max_delay_ms: {HUGE}", "timeoutSeconds: 9999999999"])
def test_a_target_duration_too_long_to_wait_is_refused_at_its_line(tmp_path: Path, setting: str) -> None:
    repo = make_repo(tmp_path / "repo", target(setting))
    write(repo / "evals/a.eval.yaml", SUITE)
    key = setting.split(":")[0]
    for command in ("validate", "run"):
        proc = run_cli(command, "evals", cwd=repo)
        assert proc.returncode in ((1, 2) if command == "validate" else (2,)), proc.stdout + proc.stderr
        said = proc.stdout + proc.stderr
        assert no_traceback(said) and "OverflowError" not in said and "out of range" not in said, said
        assert "targets.yaml:5:" in said and f"'{key}'" in said and "at most" in said, said


def test_durations_at_the_bound_load(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", target(f"timeout_seconds: {MOST_SECONDS}"))
    write(repo / "evals/a.eval.yaml", SUITE)
    proc = run_cli("validate", "evals", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert run_cli("run", "evals", cwd=repo).returncode == 0


@pytest.mark.parametrize(("assertion", "key"), [
    ("{name: code_judge, type: code_judge, script: [python3, j.py], timeout_seconds: 1e308}", "timeout_seconds"),
    ("{name: code_judge, type: code_judge, script: [python3, j.py], timeout_seconds: 2147484}", "timeout_seconds"),
])
def test_a_judge_timeout_too_long_is_refused_at_its_line(tmp_path: Path, assertion: str, key: str) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / "evals/j.py", "print('{\"score\": 1}')\n")
    write(repo / "evals/a.eval.yaml", f"tests:\n  - id: one\n    input: hi\n    assertions:\n      - {assertion}\n")
    proc = run_cli("validate", "evals", cwd=repo)
    assert proc.returncode == 1 and no_traceback(proc.stdout + proc.stderr), proc.stdout + proc.stderr
    assert "a.eval.yaml:5:" in proc.stdout and key in proc.stdout and "at most" in proc.stdout, proc.stdout


def test_a_hook_timeout_too_long_is_refused_at_its_line(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / "evals/a.eval.yaml", "workspace:\n  hooks:\n    before_all:\n      command: [true]\n"
          f"      timeout_ms: {MAX_DURATION_MS + 1}\n" + SUITE)
    proc = run_cli("validate", "evals", cwd=repo)
    assert proc.returncode == 1 and no_traceback(proc.stdout + proc.stderr), proc.stdout + proc.stderr
    assert "a.eval.yaml:5:" in proc.stdout and "timeout_ms" in proc.stdout and "at most" in proc.stdout, proc.stdout


def test_judge_timeout_flag_too_long_is_a_usage_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / "evals/a.eval.yaml", SUITE)
    proc = run_cli("run", "evals", "--judge-timeout", HUGE, cwd=repo)
    assert proc.returncode == 2 and "--judge-timeout" in proc.stderr and "at most" in proc.stderr, proc.stderr
