"""Stop policies at their edges, through their public classes: the budget spent exactly, the error that
does and does not trip `fail_on_error`, and which rows `--max-failures` counts.

The same rules run end to end in tests/commands/test_execution_block_cli.py and
tests/commands/test_boundaries_cli.py; here each edge is pinned on both sides without a subprocess.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_gate.execution.stop import (
    STOPPED_BY_MAX_FAILURES,
    BudgetStop,
    ErrorStop,
    FailureLimit,
    Refusal,
    StopPolicies,
    execution_block_policies,
)
from agentv_gate.models import CaseResult, EvalCase, SuiteExecution
from tests.helpers.reports import case_result


def case(suite: str = "evals/a.yaml", case_id: str = "c", **execution: object) -> EvalCase:
    return EvalCase(id=case_id, source_file=Path(suite), suite=suite, question="q",
                    suite_execution=SuiteExecution.model_validate(execution))


def costing(dollars: float | None, verdict: str = "pass") -> CaseResult:
    return case_result("r", verdict, cost_usd=dollars)  # type: ignore[arg-type]


# ---------------------------------------------------------------- total_budget_usd


@pytest.mark.parametrize(("spent", "stops"), [(0.75, False), (0.9999, False), (1.0, True), (1.0001, True)])
def test_the_budget_stops_starting_cases_once_spent_exactly(spent: float, stops: bool) -> None:
    """AgentV 2.19's orchestrator marks the budget exhausted at `cumulative >= total_budget_usd`."""
    policy = BudgetStop()
    suite = case(total_budget_usd=1.0)
    policy.record(suite, costing(spent))
    refusal = policy.refusal(suite)
    assert (refusal is not None) is stops
    if refusal is not None:
        assert refusal.code == "budget_exceeded" and refusal.budget_exceeded
        assert f"(${spent:.4f} reported so far)" in refusal.message


def test_the_budget_adds_up_every_row_of_its_suite_and_no_other() -> None:
    policy = BudgetStop()
    mine, other = case(total_budget_usd=1.0), case("evals/b.yaml", total_budget_usd=1.0)
    policy.record(mine, costing(0.5))
    assert policy.refusal(mine) is None
    policy.record(mine, costing(None))  # no cost reported: nothing spent
    policy.record(other, costing(0.5))
    assert policy.refusal(mine) is None
    policy.record(mine, costing(0.5))
    assert policy.refusal(mine) is not None and policy.refusal(other) is None


@pytest.mark.parametrize(("spent", "stops"), [(0.49, False), (0.4999, False), (0.5, True), (0.5001, True)])
def test_the_runs_budget_usd_stops_starting_cases_once_spent_exactly(spent: float, stops: bool) -> None:
    """`--budget-usd` (AgentV 4.x's run-level budget) reads the same line as a suite's: spent is spent."""
    from agentv_gate.execution.stop import RunBudget

    policy = RunBudget(0.5)
    for suite in ("evals/a.yaml", "evals/b.yaml"):  # the whole run's rows, whatever their suite
        policy.record(case(suite), costing(spent / 2))
    refusal = policy.refusal(case("evals/c.yaml"))
    assert (refusal is not None) is stops
    if refusal is not None:
        assert (refusal.code, refusal.budget_exceeded) == ("budget_exceeded", True)
        assert refusal.message == f"the run's --budget-usd (0.5) was spent (${spent:.4f} reported so far)"


def test_a_budget_of_zero_starts_nothing_and_no_budget_never_stops() -> None:
    assert BudgetStop().refusal(case(total_budget_usd=0.0)) is not None
    unlimited = BudgetStop()
    unlimited.record(case(), costing(1e9))
    assert unlimited.refusal(case()) is None and unlimited.spent == {}


# ---------------------------------------------------------------- fail_on_error


def test_fail_on_error_trips_on_an_execution_error_not_on_a_quality_failure() -> None:
    policy = ErrorStop()
    suite = case(fail_on_error=True)
    policy.record(suite, case_result("low", "fail", score=0.1))
    assert policy.refusal(suite) is None, "a case that ran and scored low is not an execution error"
    policy.record(suite, case_result("broken", "error", error="target: down"))
    refusal = policy.refusal(suite)
    assert refusal is not None and refusal.code == "error_threshold_exceeded"
    assert "case 'broken'" in refusal.message
    assert policy.refusal(case("evals/b.yaml", fail_on_error=True)) is None  # per suite


def test_fail_on_error_names_the_first_error_and_a_refused_case_does_not_restart_the_chain() -> None:
    policy = ErrorStop()
    suite = case(fail_on_error=True)
    refused = Refusal("budget_exceeded", "spent").apply(case_result("x", "error"))
    policy.record(suite, refused)
    assert policy.refusal(suite) is None
    policy.record(suite, case_result("first", "error", error="e"))
    policy.record(suite, case_result("second", "error", error="e"))
    refusal = policy.refusal(suite)
    assert refusal is not None and "case 'first'" in refusal.message


def test_without_fail_on_error_an_error_stops_nothing() -> None:
    policy = ErrorStop()
    policy.record(case(), case_result("broken", "error", error="down"))
    assert policy.refusal(case()) is None and policy.first_error == {}


# ---------------------------------------------------------------- --max-failures


@pytest.mark.parametrize("verdict", ["fail", "error"])
def test_max_failures_counts_failed_and_errored_cases_alike(verdict: str) -> None:
    limit = FailureLimit(2)
    limit.record(case(), case_result("one", verdict))  # type: ignore[arg-type]
    assert limit.refusal(case()) is None, "one below the limit: the run goes on"
    limit.record(case(), case_result("ok", "pass"))
    assert limit.refusal(case()) is None, "a pass is not counted"
    limit.record(case(), case_result("two", verdict))  # type: ignore[arg-type]
    refusal = limit.refusal(case())
    assert refusal is not None and refusal.code == STOPPED_BY_MAX_FAILURES
    assert refusal.message == "the run stopped after 2 failed or errored case(s) (--max-failures 2)"
    assert limit.message == ("stopped after 2 failed or errored case(s) (--max-failures 2); "
                             "1 case(s) not run, reported as errors")


def test_max_failures_does_not_count_the_cases_it_refused_and_says_nothing_when_none_was_left_out() -> None:
    limit = FailureLimit(1)
    assert limit.message is None
    limit.record(case(), case_result("bad", "fail"))
    assert limit.message is None, "reaching the limit on the last case leaves nothing out"
    refusal = limit.refusal(case())
    assert refusal is not None
    limit.record(case(), refusal.apply(case_result("later", "pass")))
    assert limit.failures == 1 and limit.refused == 1
    limit.refusal(case())
    assert limit.message is not None and "2 case(s) not run" in limit.message


# ---------------------------------------------------------------- the policies together


def test_a_refusal_is_an_error_row_that_never_passes() -> None:
    row = Refusal("budget_exceeded", "spent", budget_exceeded=True).apply(case_result("c", "pass", score=1.0))
    assert (row.verdict, row.error, row.misses, row.failure_reason_code, row.budget_exceeded) == (
        "error", "not run: spent", ["Error: not run: spent"], "budget_exceeded", True)
    plain = Refusal(STOPPED_BY_MAX_FAILURES, "stopped").apply(case_result("d", "pass"))
    assert not plain.budget_exceeded


def test_the_first_policy_that_refuses_wins_and_every_policy_sees_every_result() -> None:
    limit = FailureLimit(1)
    policies = execution_block_policies(limit)
    suite = case(total_budget_usd=1.0, fail_on_error=True)
    assert policies.refusal(suite) is None
    policies.record(suite, case_result("broken", "error", error="down", cost_usd=1.0))
    refusal = policies.refusal(suite)
    assert refusal is not None and refusal.code == "budget_exceeded"  # the budget is asked first
    assert limit.failures == 1
    assert StopPolicies([ErrorStop(), limit]).refusal(suite) is not None
    only_limit = StopPolicies([ErrorStop(), limit]).refusal(case())
    assert only_limit is not None and only_limit.code == STOPPED_BY_MAX_FAILURES


def test_max_failures_keeps_refusing_when_cases_running_at_the_limit_fail_past_it() -> None:
    """With several workers, cases already running when the limit is reached finish and may fail too:
    the count passes the limit, and the run must still start nothing more."""
    limit = FailureLimit(1)
    for name in ("first", "running-1", "running-2"):
        limit.record(case(), case_result(name, "fail"))
    assert limit.failures == 3
    refusal = limit.refusal(case())
    assert refusal is not None and "after 3 failed or errored case(s) (--max-failures 1)" in refusal.message
