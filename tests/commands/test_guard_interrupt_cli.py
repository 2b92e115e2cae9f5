"""Ctrl-C (or CI's SIGINT) during the per-case guard's re-runs, through the real CLI: the run's reports, and
`merge` and `compare` of its results file, fail the case the interrupt left undecided. Every row had been
written by then, so nothing read as "not run", and the case was only "suspicious": all three passed."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from tests.commands.test_case_guard_cli import STABLE
from tests.commands.test_paired_cli import AGENT, base_run, project, schedule
from tests.helpers.cli import run_cli, start_cli
from tests.helpers.files import write
from tests.helpers.reports import read_rows

SLOW_RERUNS = AGENT.replace("index($0", 'BEGIN { if (attempt > 3) system("sleep 30") }\nindex($0', 1)
"""The scheduled agent, taking 30 s for every trial past the third: the guard's re-runs."""


def test_an_interrupt_during_the_reruns_fails_the_undecided_case_everywhere(tmp_path: Path) -> None:
    repo = project(tmp_path, 10)
    base_run(repo, STABLE, "--trials", "3")
    assert SLOW_RERUNS != AGENT
    write(repo / "agent.awk", SLOW_RERUNS)
    schedule(repo, {**STABLE, "c3": "P" + "F" * 60})
    gate = start_cli("run", "evals", "--no-cache", "--trials", "3", "--baseline", "base.jsonl", "--fail-on",
                     "regression", cwd=repo)
    assert gate.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = gate.stderr.readline()
        if "per-case guard: 1 case(s) undecided, re-running" in line or not line:
            break
    time.sleep(0.5)  # the round's agents are sleeping
    gate.send_signal(signal.SIGINT)
    out, err = gate.communicate(timeout=60)
    assert gate.returncode == 130, out + err
    stopped = "the per-case guard's re-runs stopped (the run was interrupted) before deciding 1 case(s): c3"
    assert stopped in out and "agentv-gate FAILED" in out
    rows = {row["eval_id"]: row for row in read_rows(repo / ".agentv-gate/results.jsonl")}
    assert rows["c3"]["reruns_stopped"] == "interrupted" and len(rows) == 10
    merged = run_cli("merge", ".agentv-gate/results.jsonl", "--output-dir", "merged", "--baseline", "base.jsonl",
                     "--fail-on", "regression", cwd=repo)
    assert merged.returncode == 1 and stopped in merged.stdout, merged.stdout + merged.stderr
    compared = run_cli("compare", "base.jsonl", ".agentv-gate/results.jsonl", "--fail-on", "regression", cwd=repo)
    assert compared.returncode == 1 and stopped in compared.stdout, compared.stdout + compared.stderr
