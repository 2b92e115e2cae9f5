"""`--rerun-failed PREV --baseline BASE --fail-on regression` with trials, through the real CLI.

`--rerun-failed` runs again the cases whose row did not pass. Under `--trials 3` (pass_at_k) a case passing
one trial of three passes its row, while the per-case guard may fail the gate on it (3/3 on the base). Kept
as it was, the rerun must not pass the gate on it: a kept row's case is not run here, so the guard cannot
re-run it, and a case it cannot decide is only "suspicious".
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.commands.test_case_guard_cli import STABLE
from tests.commands.test_paired_cli import base_run, project, run, schedule
from tests.helpers.reports import read_rows

BROKEN = {**STABLE, "c3": "P" + "F" * 40}
"""c3 passes one trial in 41: its row passes under pass_at_k, the guard's re-runs find it broken."""


@pytest.mark.parametrize("first", ["with the base", "without a base"])
def test_a_rerun_of_failed_cases_never_passes_a_case_the_guard_fails(tmp_path: Path, first: str) -> None:
    repo = project(tmp_path, 10)
    base_run(repo, STABLE, "--trials", "3")
    schedule(repo, BROKEN)
    gate = ("--baseline", "base.jsonl", "--fail-on", "regression")
    ran = run(repo, "--trials", "3", *(gate if first == "with the base" else ()))
    assert ran.returncode == 1 if first == "with the base" else ran.returncode == 0, ran.stdout + ran.stderr
    rows = {row["eval_id"]: row for row in read_rows(repo / ".agentv-gate/results.jsonl")}
    assert rows["c3"]["verdict"] == "pass"  # one trial of three passed: pass_at_k
    before = rows["c3"].get("reruns") or []
    shutil.copy(repo / ".agentv-gate/results.jsonl", repo / "previous.jsonl")
    again = run(repo, "--trials", "3", "--rerun-failed", "previous.jsonl", *gate)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "1 case(s) fail beyond what the base allows (per-case guard" in again.stdout
    assert "c3 (3/3 -> 1/3 (1/" in again.stdout
    # the kept row's case ran again under the guard, its re-runs numbered on from the ones it held
    after = {row["eval_id"]: row for row in read_rows(repo / ".agentv-gate/results.jsonl")}["c3"]
    assert after["timestamp"] == rows["c3"]["timestamp"] and after["trials"] == rows["c3"]["trials"]  # kept
    assert after["reruns"][:len(before)] == before
    if not before:  # undecided on its kept trials: the real target ran it again (decided ones run nothing more)
        assert after["reruns"] and all(t["rerun"] is True for t in after["reruns"])
    assert [t["attempt"] for t in after["reruns"]] == list(range(4, 4 + len(after["reruns"])))


def test_a_kept_rows_re_runs_count_and_are_numbered_on_when_the_guard_runs_more(tmp_path: Path) -> None:
    """The earlier run's guard re-ran c3 three times and cleared it within its `--max-trials 12`; this run's
    default budget wants more trials of it. The new ones follow the row's re-runs (trial 7 on), which stay."""
    repo = project(tmp_path, 10)
    base_run(repo, STABLE, "--trials", "3")
    schedule(repo, {**STABLE, "c3": "PFF"})
    gate = ("--baseline", "base.jsonl", "--fail-on", "regression")
    first = run(repo, "--trials", "3", *gate, "--max-trials", "12")
    assert first.returncode == 0, first.stdout + first.stderr
    before = {row["eval_id"]: row for row in read_rows(repo / ".agentv-gate/results.jsonl")}["c3"]
    assert [(t["attempt"], t["verdict"]) for t in before["reruns"]] == [(4, "pass"), (5, "fail"), (6, "fail")]
    shutil.copy(repo / ".agentv-gate/results.jsonl", repo / "previous.jsonl")
    schedule(repo, {**STABLE, "c3": "F"})  # the agent now fails c3 every time: what this run's re-runs see
    again = run(repo, "--trials", "3", "--rerun-failed", "previous.jsonl", *gate)
    assert again.returncode == 1, again.stdout + again.stderr
    after = {row["eval_id"]: row for row in read_rows(repo / ".agentv-gate/results.jsonl")}["c3"]
    assert after["reruns"][:3] == before["reruns"], after["reruns"]
    assert [t["attempt"] for t in after["reruns"]] == list(range(4, 4 + len(after["reruns"])))
    assert len(after["reruns"]) > 3 and all(t["verdict"] == "fail" for t in after["reruns"][3:])
