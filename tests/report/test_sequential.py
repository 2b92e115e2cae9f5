"""The per-case guard's sequential test: stopping early never changes the fixed-budget test's answer,
and its level, budget and one-sided p are what the docs say."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_gate.report.baseline.sequential import decide, default_budget, guard_level, suite_level, trials_to_run
from agentv_gate.report.baseline.stats import fisher_drop_p


def test_the_guard_and_the_suite_test_share_alpha() -> None:
    assert guard_level(0.05, 10) == pytest.approx(0.001)
    assert guard_level(0.05, 10) * 10 + suite_level(0.05) == pytest.approx(0.05)


def test_the_one_sided_fisher_p_of_a_total_break() -> None:
    assert fisher_drop_p(3, 3, 0, 3) == pytest.approx(1 / 20)  # one table in C(6, 3) as extreme
    assert fisher_drop_p(3, 3, 0, 26) == pytest.approx(1 / 3654)  # C(29, 3)
    assert fisher_drop_p(0, 3, 3, 3) == 1.0  # the head did better: no evidence of a drop
    assert fisher_drop_p(3, 3, 3, 3) == 1.0


def test_the_default_budget_is_the_least_that_sees_a_stable_case_pass_once() -> None:
    level = guard_level(0.05, 10)
    budget = default_budget(3, level)
    assert budget == 27
    assert fisher_drop_p(3, 3, 1, budget) <= level < fisher_drop_p(3, 3, 1, budget - 1)


@pytest.mark.parametrize(("head_passed", "head_n", "expected"), [
    (0, 27, "broken"),      # the budget spent, every trial failed
    (1, 27, "broken"),      # one pass in the budget: still beyond what 3/3 allows
    (2, 27, "cleared"),
    (0, 3, "undecided"),    # 3/3 -> 0/3: could go either way in 24 more trials
    (1, 3, "undecided"),
    (2, 3, "cleared"),      # even 2/27 would be within what the base allows
    (2, 4, "cleared"),
])
def test_decided_only_when_the_budget_could_not_change_it(head_passed: int, head_n: int, expected: str) -> None:
    assert decide(3, 3, head_passed, head_n, 27, guard_level(0.05, 10)) == expected


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 6).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
       st.lists(st.booleans(), min_size=40, max_size=40), st.integers(3, 40), st.integers(1, 5),
       st.sampled_from((0.05, 0.01, 0.2)), st.integers(1, 50))
def test_stopping_early_gives_the_fixed_budgets_answer(base: tuple[int, int], head: list[bool], budget: int,
                                                       batch: int, alpha: float, cases: int) -> None:
    """Run the rounds `run` runs, drawing each trial from `head`: the decision it stops at is the one
    the fixed test would give on the whole budget, whatever the outcomes, so re-running only the
    undecided cases spends no error rate."""
    base_n, base_passed = base
    level = guard_level(alpha, cases)
    n = min(batch, budget)  # the case's own trials
    while True:
        more = trials_to_run(base_passed, base_n, sum(head[:n]), n, budget, level, batch)
        if not more:
            break
        assert more <= batch and n + more <= budget
        n += more
    reached = decide(base_passed, base_n, sum(head[:n]), n, budget, level)
    assert reached != "undecided"
    fixed = "broken" if fisher_drop_p(base_passed, base_n, sum(head[:budget]), budget) <= level else "cleared"
    assert reached == fixed
