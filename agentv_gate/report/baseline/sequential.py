"""The per-case guard as a sequential test: more trials only for the cases whose evidence is short.

One case of fifty breaking (the agent lost a tool) never moves a sign-flip test over cases, so
each paired case also gets its own one-sided test: is its head passing less often than its base
allows? Its p is the posterior predictive of the head's passes given the case's base trials and
a prior fitted to the whole base (`pooled`): a case's own 3 base trials say little, the suite's
150 say how often a case like it passes (under a judge that flips 10% of verdicts, about 0.9, so
a head passing 5 of 48 is far outside what it allows). Its level is the guard's share of
`--alpha` (`GUARD_SHARE`) spread over the paired cases (Bonferroni): with every case unchanged,
the guard fails a pull request at most that often, and the suite test the rest of alpha.

Three head trials cannot reach that level, so the test is sequential with a budget: the case is
decided as if it had run `budget` head trials, and a trial is run only while that decision is
still open. The case is

* **broken** when even if every trial left in the budget passed, the budget's p would be at most
  the level (curtailment: the fixed-budget test's own answer, reached early);
* **cleared** when even if every trial left failed, the budget's p would be above the level, or
  when the trials run so far are unremarkable (their own p above `FUTILITY`, `FUTILITY_STABLE` for a
  case that passed every base trial): stopping for
  futility only ever turns a "broken" the fixed test might have reached into "cleared", so it
  never adds a false alarm (a non-binding futility rule), and it keeps an unchanged case from
  running to its budget;
* **undecided** otherwise: run more of its trials.

Choosing which cases to re-run from what they showed therefore costs no error rate.
"""

from __future__ import annotations

from typing import Literal

from .pooled import Prior

GUARD_SHARE = 0.2
"""The per-case guard's share of `--alpha`; the suite-level sign-flip test keeps the rest. Chosen by
simulating the bench's noise models: doubling it lifted the single-break power under a noisy judge
by two to four points, alpha the suite test's broad drops then lack."""
FUTILITY = 0.1
"""A case whose head trials so far have a p above this is cleared without more trials. Chosen by
simulating the bench's noise models: at 0.05 a broken case under a noisy judge that passes one of
its first head trials is let go more often (about four points of power); at 0.2 for every case, with
`--history`, unchanged pull requests failed 5-5.5% (bench/guard_experiments.md)."""
FUTILITY_STABLE = 0.2
"""The same for a case stable on the base (every base trial, and its history, passed): the break the
guard exists for is one of these, and under a judge flipping 10% of verdicts it passes one or two of
its first head trials often enough that clearing at 0.1 let 5.4% of them through (3.9% at 0.2, with
false alarms still under 5% in every noise model, with and without history). The price: an unchanged
pull request under that judge re-runs about 24 trials of 150 instead of 8."""
BUDGET_PER_TRIAL = 10
"""The default budget: this many times the case's base trials (30 head trials at `--trials 3`). In
simulation 45 and 60 at 3 trials caught no more noisy-judge breaks (more rounds, more chances for
the futility stop) and cost a broken case more trials."""
BUDGET_LIMIT = 200
"""The most head trials the default budget asks of a case, whatever the trials."""

Decision = Literal["broken", "cleared", "undecided"]


def guard_level(alpha: float, cases: int) -> float:
    """Each paired case's level: the guard's share of alpha over the cases (Bonferroni)."""
    return alpha * GUARD_SHARE / max(1, cases)


def suite_level(alpha: float) -> float:
    """What the suite-level sign-flip test is held to: alpha less the guard's share."""
    return alpha * (1 - GUARD_SHARE)


def decide(prior: Prior, base_passed: int, base_n: int, head_passed: int, head_n: int, budget: int,
           level: float) -> Decision:
    """The fixed-budget test's decision, if the trials run so far already fix it (or futility)."""
    budget = max(budget, head_n)
    left = budget - head_n
    if prior.tail(base_passed, base_n, head_passed + left, budget) <= level:
        return "broken"
    if prior.tail(base_passed, base_n, head_passed, budget) > level:
        return "cleared"
    futility = FUTILITY_STABLE if base_passed == base_n else FUTILITY
    if head_n and prior.tail(base_passed, base_n, head_passed, head_n) > futility:
        return "cleared"
    return "undecided"


def trials_to_run(prior: Prior, base_passed: int, base_n: int, head_passed: int, head_n: int, budget: int,
                  level: float, batch: int) -> int:
    """How many more head trials an undecided case runs in its next round (0 when decided): the fewest
    that, all failing, would decide it broken, at most `batch` (the run's `--trials`: a round costs
    what one more run of the case would) and the budget left."""
    if decide(prior, base_passed, base_n, head_passed, head_n, budget, level) != "undecided":
        return 0
    left = max(budget, head_n) - head_n
    for more in range(1, min(batch, left) + 1):
        if decide(prior, base_passed, base_n, head_passed, head_n + more, budget, level) == "broken":
            return more
    return min(batch, left)


def default_budget(base_n: int) -> int:
    """The head trials a case is decided on when `--max-trials` is not given: `BUDGET_PER_TRIAL`
    times its base trials, at most `BUDGET_LIMIT`."""
    return max(base_n, min(BUDGET_LIMIT, BUDGET_PER_TRIAL * base_n))


__all__ = ["BUDGET_LIMIT", "BUDGET_PER_TRIAL", "FUTILITY", "FUTILITY_STABLE", "GUARD_SHARE", "Decision", "decide",
           "default_budget", "guard_level", "suite_level", "trials_to_run"]
