"""`--budget-usd` and the per-case guard's re-runs through the real CLI: the re-runs spend the run's one
budget, and a case whose re-runs the spent budget stopped before it was decided fails the gate, in `run` and
in everything that reads its results file, as a case the run stopped before running does."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.commands.test_paired_cli import AGENT, base_run, project, run, schedule
from tests.commands.test_sharded_guard_cli import GATE, STABLE
from tests.helpers.cli import run_cli
from tests.helpers.files import write
from tests.helpers.reports import checked_junit, junit_cases, read_rows

COSTLY = AGENT.replace(
    'print (substr(schedule, attempt % length(schedule) + 1, 1) == "P" ? "ok" : "no")',
    'print "{\\"text\\": \\"" (substr(schedule, attempt % length(schedule) + 1, 1) == "P" ? "ok" : "no") '
    '"\\", \\"cost_usd\\": 0.01}"')
"""The scheduled agent, reporting $0.01 an answer (a `cli` agent's JSON answer with `cost_usd`)."""


def costly_project(tmp_path: Path, head: dict[str, str]) -> Path:
    repo = project(tmp_path, 10)
    assert COSTLY != AGENT
    write(repo / "agent.awk", COSTLY)
    base_run(repo, STABLE, "--trials", "3")
    schedule(repo, head)
    return repo


@pytest.mark.parametrize("budget", ["--budget-usd", "total_budget_usd"])
def test_a_case_the_spent_budget_left_undecided_fails_every_verdict(tmp_path: Path, budget: str) -> None:
    """c3 passes one head trial and fails every later one. The 30 trials of the run cost $0.30 of a $0.35
    budget (the run's, or its suite's): two rounds of re-runs start (each round's cost counts against the
    next; every round once started from the run's $0.30 again, or from nothing for the suite's, and the
    re-runs went on to $0.52), the third is refused, and c3, 1/9 with re-runs, was "suspicious" and passed."""
    repo = costly_project(tmp_path, {**STABLE, "c3": "P" + "F" * 60})
    flags: tuple[str, ...] = ("--budget-usd", "0.35")
    if budget == "total_budget_usd":
        eval_file = repo / "evals/s.eval.yaml"
        eval_file.write_text("execution: {total_budget_usd: 0.35}\n" + eval_file.read_text())
        flags = ()
    ran = run(repo, *GATE, *flags)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert ("gate (--fail-on regression): failed, the per-case guard's re-runs stopped (its budget was spent: "
            "--budget-usd or the suite's total_budget_usd) before deciding 1 case(s): c3 (3/3 -> 1/3 (1/9 with "
            "re-runs))") in ran.stdout
    rows = {row["eval_id"]: row for row in read_rows(repo / ".agentv-gate/results.jsonl")}
    assert len(rows["c3"]["reruns"]) == 6 and rows["c3"]["reruns_stopped"] == "budget_exceeded"
    assert all("reruns_stopped" not in row for case, row in rows.items() if case != "c3")
    assert junit_cases(checked_junit(repo / ".agentv-gate/junit.xml"))["c3"] == "fail"
    assert "re-runs of it were stopped (its budget was spent" in ran.stdout
    # what reads the results file decides the same: nothing there is re-run
    compared = run_cli("compare", "base.jsonl", ".agentv-gate/results.jsonl", "--fail-on", "regression", cwd=repo)
    assert compared.returncode == 1, compared.stdout + compared.stderr
    merged = run_cli("merge", ".agentv-gate/results.jsonl", "--output-dir", "merged", "--baseline", "base.jsonl",
                     "--fail-on", "regression", cwd=repo)
    assert merged.returncode == 1, merged.stdout + merged.stderr


def test_with_budget_left_the_guard_decides_and_a_cleared_case_passes(tmp_path: Path) -> None:
    """The paths that end normally: c3 failing two head trials and passing every later one is cleared within
    the budget; broken, it is decided broken; neither row says its re-runs were stopped."""
    repo = costly_project(tmp_path, {**STABLE, "c3": "PFF" + "P" * 60})
    ran = run(repo, *GATE, "--budget-usd", "5")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "gate (--fail-on regression): passed" in ran.stdout
    assert all("reruns_stopped" not in row for row in read_rows(repo / ".agentv-gate/results.jsonl"))
    schedule(repo, {**STABLE, "c3": "P" + "F" * 60})
    ran = run(repo, *GATE, "--budget-usd", "5")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "1 case(s) fail beyond what the base allows (per-case guard" in ran.stdout
    assert all("reruns_stopped" not in row for row in read_rows(repo / ".agentv-gate/results.jsonl"))


def test_the_reruns_are_held_to_the_cases_cost_limit_with_its_first_trials(tmp_path: Path) -> None:
    """`cost_limit_usd: 0.05` and $0.01 a trial: the case's 3 trials cost $0.03, so its re-runs may add two.
    Each round had counted only its own trials, so the guard re-ran 22 ($0.25 on a case held to $0.05)."""
    repo = costly_project(tmp_path, {**STABLE, "c3": "P" + "F" * 60})
    eval_file = repo / "evals/s.eval.yaml"
    eval_file.write_text("execution:\n  trials: {count: 3, strategy: mean, cost_limit_usd: 0.05}\n"
                         + eval_file.read_text())
    ran = run(repo, "--baseline", "base.jsonl", "--fail-on", "regression")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    rows = {row["eval_id"]: row for row in read_rows(repo / ".agentv-gate/results.jsonl")}
    assert len(rows["c3"]["trials"]) == 3 and len(rows["c3"]["reruns"]) == 2
    assert rows["c3"]["reruns_stopped"] == "cost_limited"
    assert ("re-runs stopped (the case's cost_limit_usd was reached) before deciding 1 case(s): c3 (3/3 -> 1/3 "
            "(1/5 with re-runs))") in ran.stdout


def test_a_rerun_with_budget_left_decides_the_case_and_drops_the_earlier_stop(tmp_path: Path) -> None:
    """c3 fails two head trials and passes every later one. Under $0.32 the second round of re-runs is refused
    (the gate fails, c3 undecided at 4/6); `--rerun-failed` of that file with no budget keeps c3's row (it
    passed, 1 of 3), re-runs it on from its 6 trials, clears it, and its row no longer says it was stopped."""
    repo = costly_project(tmp_path, {**STABLE, "c3": "PFF" + "P" * 60})
    first = run(repo, *GATE, "--budget-usd", "0.32")
    assert first.returncode == 1, first.stdout + first.stderr
    previous = repo / "previous.jsonl"
    previous.write_text((repo / ".agentv-gate/results.jsonl").read_text())
    assert {row["eval_id"]: row for row in read_rows(previous)}["c3"]["reruns_stopped"] == "budget_exceeded"
    again = run(repo, *GATE, "--rerun-failed", "previous.jsonl")
    assert again.returncode == 0, again.stdout + again.stderr
    row = {row["eval_id"]: row for row in read_rows(repo / ".agentv-gate/results.jsonl")}["c3"]
    assert "reruns_stopped" not in row and len(row["reruns"]) == 6
