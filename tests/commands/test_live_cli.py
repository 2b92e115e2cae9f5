"""A long run seen from a CI log: the real CLI read through a pipe, line by line, while it runs.

The agent is a mock target with `delay_ms`, so one case is still running when the others have
finished: their lines must already be in the log (the process still alive), and a heartbeat must
say what is still running.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.helpers.cli import CLI, cli_env, run_cli, start_cli
from tests.helpers.files import make_repo, write
from tests.helpers.github_runner import parse_github_output, runner_commands

TARGETS = """
    targets:
      - name: default
        provider: mock
        response: Paris is the capital of France.
      - name: slow
        provider: mock
        response: Paris is the capital of France.
        delay_ms: 1500
"""

SUITE = """
    tests:
      - id: first
        input: What is the capital of France?
        assertions: [{type: contains, value: Paris}]
      - id: second
        input: Which river flows through Paris?
        assertions: [{type: contains, value: Seine}]
      - id: third
        target: slow
        input: What is the capital of France, slowly?
        assertions: [{type: contains, value: Paris}]
"""


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "repo", TARGETS)
    write(root / "evals" / "live.eval.yaml", SUITE)
    return root


def read_live(proc: subprocess.Popen[str]) -> list[tuple[str, bool]]:
    """Each stderr line as it arrives, with whether the run was still going when it did."""
    assert proc.stderr is not None
    seen = []
    for line in iter(proc.stderr.readline, ""):
        seen.append((line.rstrip("\n"), proc.poll() is None))
    return seen


def test_case_lines_and_heartbeats_arrive_while_the_run_is_going(project: Path) -> None:
    proc = start_cli("run", "evals", "--workers", "1", cwd=project, env={"AGENTV_GATE_HEARTBEAT_SECONDS": "0.1"})
    try:
        seen = read_live(proc)
        stdout = proc.stdout.read() if proc.stdout else ""
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == 1
    cases = [(line, alive) for line, alive in seen if line.startswith(("PASS", "FAIL", "ERROR"))]
    # Cases that finish together come in either order; the slow one comes last.
    assert sorted(line.split()[:3] for line, _ in cases[:2]) == [
        ["FAIL", "evals/live.eval.yaml", "second"], ["PASS", "evals/live.eval.yaml", "first"]]
    assert cases[2][0].split()[:3] == ["PASS", "evals/live.eval.yaml", "third"]
    assert cases[0][1] and cases[1][1], "the first lines came while the slow case was still running"
    failed = next(line for line, _ in cases if line.startswith("FAIL"))
    assert "0.000 < 0.800" in failed and failed.endswith('Output does not contain "Seine"')
    beats = [(line, alive) for line, alive in seen if "still running" in line]
    assert beats and all(alive for _, alive in beats)
    assert beats[0][0].startswith("[2/3] still running: 1 case (evals/live.eval.yaml third ")
    assert "1 failed, 0 errors" in beats[0][0] and beats[0][0].endswith(" left")
    # The end-of-run table and the totals are as they were.
    assert stdout.splitlines()[-1].startswith("agentv-gate FAILED: 3 cases: 2 passed, 1 failed")


def test_quiet_keeps_the_heartbeat_and_leaves_the_failures_to_the_end(project: Path) -> None:
    proc = start_cli("run", "evals", "--workers", "1", "--quiet", cwd=project,
                     env={"AGENTV_GATE_HEARTBEAT_SECONDS": "0.1"})
    try:
        seen = [line for line, _ in read_live(proc)]
    finally:
        proc.kill()
        proc.wait(timeout=30)
    # The failure is listed once, at the end, in full (not also as it happens): only heartbeats live.
    assert [line for line in seen if not line.startswith("[")] == []
    assert any(line.startswith("[2/3] still running: 1 case") for line in seen)


def test_a_bad_heartbeat_interval_is_a_usage_error(project: Path) -> None:
    proc = run_cli("run", "evals", cwd=project, env={"AGENTV_GATE_HEARTBEAT_SECONDS": "soon"})
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "agentv-gate: AGENTV_GATE_HEARTBEAT_SECONDS='soon' is not a number of seconds above 0")
    assert not (project / ".agentv-gate").exists(), "nothing ran"


def test_github_log_folds_passes_and_every_annotation_starts_a_line(project: Path, tmp_path: Path) -> None:
    """stdout and stderr in one pipe, as the runner reads a step's log."""
    write(project / "evals" / "live.eval.yaml", SUITE.replace("target: slow", "target: default"))
    output, summary = tmp_path / "output", tmp_path / "summary"
    output.write_text("")
    summary.write_text("")
    env = cli_env({"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary),
                   "GITHUB_WORKSPACE": str(project)})
    proc = subprocess.run([CLI, "run", "evals", "--workers", "1"], cwd=project, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1
    commands = runner_commands(proc.stdout)
    assert commands[-1].startswith("::error file=evals/live.eval.yaml,line=5,title=agentv-gate%3A second failed::")
    assert sum(c.startswith("::error") for c in commands) == 1
    live, grouped = [], False
    for line in proc.stdout.splitlines():
        if line.startswith("::group::"):
            assert not grouped and line == "::group::evals/live.eval.yaml (passed cases)"
            grouped = True
        elif line == "::endgroup::":
            assert grouped
            grouped = False
        elif line.startswith(("PASS  ", "FAIL  ", "::error")):
            live.append(line.split()[0])
            assert grouped == line.startswith("PASS"), f"passes folded, failures outside: {line}"
        elif line.startswith("VERDICT"):
            break
    assert sorted(live) == ["::error", "FAIL", "PASS", "PASS"] and live[-1] == "::error"
    assert parse_github_output(output.read_text())["failed"] == "1"


def test_reports_are_created_with_the_umask_permissions(project: Path) -> None:
    """junit.xml came out 0600 from the atomic write; a later step as another user could not read it."""
    proc = subprocess.run(["sh", "-c", 'umask 022 && exec "$0" run evals', CLI], cwd=project, env=cli_env(),
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1, proc.stderr
    out = project / ".agentv-gate"
    modes = {p.name: stat.S_IMODE(os.stat(p).st_mode) for p in out.iterdir() if p.is_file()}
    assert modes == {"junit.xml": 0o644, "results.jsonl": 0o644, "report.html": 0o644, ".gitignore": 0o644}
