"""The per-case guard as a sequential test: more trials only for the cases whose evidence is short.

One case of fifty breaking (the agent lost a tool) never moves a sign-flip test over cases, so
each paired case also gets its own one-sided test: Fisher's exact test that the head passes less
often than the base (`stats.fisher_drop_p`), exact whatever the case's pass probability, so a
flaky case is tested as validly as a stable one. Its level is the guard's share of `--alpha`
(`GUARD_SHARE`) spread over the paired cases (Bonferroni): with every case unchanged, the guard
fails a pull request at most that often, and the suite test the rest of alpha.

Three head trials cannot reach that level (3/3 against 0/3 is p = 0.05 one-sided), so the test is
sequential with a budget: the case is decided as if it had run `budget` head trials, and a trial
is run only while that decision is still open. The case is

* **broken** when even if every trial left in the budget passed, the budget's p would be at most
  the level;
* **cleared** when even if every trial left failed, it would be above it;
* **undecided** otherwise: run more of its trials.

Both ends are the fixed-budget test's own decision reached early (curtailment), so stopping
changes no verdict and the error rate is exactly the fixed test's: choosing which cases to re-run
from what they showed costs nothing. A case that passes a re-run is cleared within a trial or two;
a case that keeps failing runs to its budget. The default budget is the least that lets the guard
call a stable case broken while it still passes one trial in the budget (`default_budget`).
"""

from __future__ import annotations

from typing import Literal

from .stats import fisher_drop_p

GUARD_SHARE = 0.2
"""The per-case guard's share of `--alpha`; the suite-level sign-flip test keeps the rest. Chosen by
bench/stats_bench.py: the guard's level only sets how many re-runs a break costs (a logarithm), the
suite test's sets its power for broad drops."""
BUDGET_LIMIT = 200
"""The most head trials the default budget asks of a case, whatever the level."""

Decision = Literal["broken", "cleared", "undecided"]


def guard_level(alpha: float, cases: int) -> float:
    """Each paired case's level: the guard's share of alpha over the cases (Bonferroni)."""
    return alpha * GUARD_SHARE / max(1, cases)


def suite_level(alpha: float) -> float:
    """What the suite-level sign-flip test is held to: alpha less the guard's share."""
    return alpha * (1 - GUARD_SHARE)


def decide(base_passed: int, base_n: int, head_passed: int, head_n: int, budget: int, level: float) -> Decision:
    """The fixed-budget test's decision, if the trials run so far already fix it."""
    budget = max(budget, head_n)
    left = budget - head_n
    if fisher_drop_p(base_passed, base_n, head_passed + left, budget) <= level:
        return "broken"
    if fisher_drop_p(base_passed, base_n, head_passed, budget) > level:
        return "cleared"
    return "undecided"


def trials_to_run(base_passed: int, base_n: int, head_passed: int, head_n: int, budget: int, level: float,
                  batch: int) -> int:
    """How many more head trials an undecided case runs in its next round (0 when decided): the fewest
    that, all failing, would decide it broken, at most `batch` (the run's `--trials`: a round costs
    what one more run of the case would) and the budget left."""
    if decide(base_passed, base_n, head_passed, head_n, budget, level) != "undecided":
        return 0
    left = max(budget, head_n) - head_n
    for more in range(1, min(batch, left) + 1):
        if decide(base_passed, base_n, head_passed, head_n + more, budget, level) == "broken":
            return more
    return min(batch, left)


def default_budget(base_n: int, level: float) -> int:
    """The least number of head trials with which a case that passed all `base_n` base trials and
    passes one head trial is decided broken at `level` (capped at `BUDGET_LIMIT`): a budget that can
    see a stable case that now fails nearly always, not only every time."""
    for budget in range(max(base_n, 2), BUDGET_LIMIT + 1):
        if fisher_drop_p(base_n, base_n, 1, budget) <= level:
            return budget
    return BUDGET_LIMIT


__all__ = ["BUDGET_LIMIT", "GUARD_SHARE", "Decision", "decide", "default_budget", "guard_level", "suite_level",
           "trials_to_run"]
