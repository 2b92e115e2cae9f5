"""The per-case guard's sequential test against the whole base: stopping early never adds a false
alarm to the fixed-budget test's, the prior borrows strength from every case as the docs say, and
its level and budget are what the docs say."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentv_gate.report.baseline.pooled import fit
from agentv_gate.report.baseline.sequential import (
    FUTILITY,
    FUTILITY_STABLE,
    decide,
    default_budget,
    guard_level,
    suite_level,
    trials_to_run,
)
from agentv_gate.report.baseline.stats import fisher_drop_p

NOISY_JUDGE = [(3, 3)] * 36 + [(2, 3)] * 14
"""50 cases at 0.9 (a judge flipping 10% of verdicts), 3 base trials each: 0.9^3 = 73% pass all three."""
FLAKY = [(3, 3)] * 30 + [(2, 3)] * 8 + [(1, 3)] * 8 + [(0, 3)] * 4
STABLE = [(3, 3)] * 10


def test_the_guard_and_the_suite_test_share_alpha() -> None:
    assert guard_level(0.05, 10) == pytest.approx(0.001)
    assert guard_level(0.05, 10) * 10 + suite_level(0.05) == pytest.approx(0.05)


def test_five_cases_each_losing_is_a_drop_at_the_suite_level() -> None:
    """The sign-flip p of k cases all moving down is 2^-k: at alpha 0.05 the suite test must keep more
    than 1/32, or five stable cases each losing trials (none gaining) would not be a drop (10 of 50
    stable cases losing 30 points at 3 trials a side: caught 91% at 0.04, 75% at 0.03 in simulation)."""
    assert suite_level(0.05) > 1 / 32


def test_the_default_budget_is_ten_times_the_base_trials() -> None:
    assert default_budget(3) == 30 and default_budget(5) == 50
    assert default_budget(40) == 200 and default_budget(300) == 300  # capped, never below the trials there are


def test_a_noisy_judges_suite_lends_each_case_its_strength() -> None:
    """The issue's case: 3/3 on the base against 5 of 48 on the head. Fisher on the case's own trials
    cannot go below 0.0027; read against 50 cases that all pass about 90% of the time, it is far
    beyond the guard's level over 50 cases."""
    assert fisher_drop_p(3, 3, 5, 48) > guard_level(0.05, 50)
    prior = fit(NOISY_JUDGE)
    assert 0.85 < prior.mean < 0.95
    assert prior.tail(3, 3, 5, 48) < guard_level(0.05, 50) / 10
    # the same case in a suite whose cases differ: the prior widens, the case leans on its own trials
    assert fit(FLAKY).tail(3, 3, 5, 48) > prior.tail(3, 3, 5, 48) * 10


def test_a_case_unlike_the_others_is_read_from_its_own_trials() -> None:
    """A case failing on the base among cases that pass: its head failing again is no evidence."""
    prior = fit([(3, 3)] * 49 + [(0, 3)])
    assert prior.tail(0, 3, 0, 3) > 0.5
    assert prior.tail(0, 3, 0, 30) > FUTILITY


def test_a_case_stable_on_the_base_is_cleared_later_than_one_that_failed_there() -> None:
    """The guard's break passes one or two head trials under a noisy judge: a case whose every base trial
    passed is let go only at a higher p of its head so far (`FUTILITY_STABLE`), a case that failed a base
    trial at the usual one."""
    level = guard_level(0.05, 46)
    stable = fit([(3, 3)] * 40 + [(1, 3)] * 6)
    assert FUTILITY < stable.tail(3, 3, 2, 3) <= FUTILITY_STABLE
    assert decide(stable, 3, 3, 2, 3, 30, level) == "undecided"
    assert trials_to_run(stable, 3, 3, 2, 3, 30, level, 3) == 3
    mixed = fit([(3, 3)] * 32 + [(2, 3)] * 8 + [(1, 3)] * 4)
    assert FUTILITY < mixed.tail(2, 3, 1, 3) <= FUTILITY_STABLE
    assert decide(mixed, 2, 3, 1, 3, 30, guard_level(0.05, 44)) == "cleared"


def test_an_unremarkable_head_is_unchanged_in_every_suite() -> None:
    for counts in (NOISY_JUDGE, FLAKY, STABLE):
        prior = fit(counts)
        assert prior.tail(3, 3, 3, 3) == 1.0
        assert prior.tail(2, 3, 2, 3) > FUTILITY


@pytest.mark.parametrize(("head_passed", "head_n", "expected"), [
    (0, 30, "broken"),      # the budget spent, every trial failed
    (0, 24, "broken"),      # even 6 passes in the 6 left would leave it beyond the level
    (0, 21, "undecided"),
    (0, 3, "undecided"),    # 3/3 -> 0/3: could go either way in 27 more trials
    (1, 3, "undecided"),
    (4, 6, "undecided"),    # still remarkable against 30 passing base trials
    (7, 9, "cleared"),      # no longer (futility)
    (3, 3, "cleared"),
])
def test_decided_only_when_the_budget_could_not_change_it(head_passed: int, head_n: int, expected: str) -> None:
    assert decide(fit(STABLE), 3, 3, head_passed, head_n, 30, guard_level(0.05, 10)) == expected


@settings(max_examples=200, deadline=None)
@given(st.sampled_from((NOISY_JUDGE, FLAKY, STABLE)),
       st.integers(2, 5).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
       st.lists(st.booleans(), min_size=40, max_size=40), st.integers(3, 40), st.integers(1, 5),
       st.sampled_from((0.05, 0.01, 0.2)), st.integers(1, 50))
def test_stopping_early_never_fails_what_the_fixed_budget_passes(counts: list[tuple[int, int]], base: tuple[int, int],
                                                                 head: list[bool], budget: int, batch: int, alpha: float,
                                                                 cases: int) -> None:
    """Run the rounds `run` runs, drawing each trial from `head`: a case it calls broken, the fixed
    test on the whole budget calls broken too, whatever the outcomes, so re-running only the
    undecided cases adds no false alarm (it may clear early a case the fixed test would break:
    futility)."""
    prior = fit(counts)
    base_n, base_passed = base
    level = guard_level(alpha, cases)
    n = min(batch, budget)  # the case's own trials
    while True:
        more = trials_to_run(prior, base_passed, base_n, sum(head[:n]), n, budget, level, batch)
        if not more:
            break
        assert more <= batch and n + more <= budget
        n += more
    reached = decide(prior, base_passed, base_n, sum(head[:n]), n, budget, level)
    assert reached != "undecided"
    fixed = "broken" if prior.tail(base_passed, base_n, sum(head[:budget]), budget) <= level else "cleared"
    if reached == "broken":
        assert fixed == "broken"
    if n == budget:
        assert reached == fixed
