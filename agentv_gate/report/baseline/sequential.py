"""The per-case guard as a sequential test: more trials only for the cases whose evidence is short.

One case of fifty breaking (the agent lost a tool) never moves a sign-flip test over cases, so
each paired case also gets its own one-sided test: is its head passing less often than its base
allows? Its p is the posterior predictive of the head's passes given the case's base trials and
a prior fitted to the whole base (`pooled`): a case's own 3 base trials say little, the suite's
150 say how often a case like it passes (under a judge that flips 10% of verdicts, about 0.9, so
a head passing 5 of 48 is far outside what it allows). Its level is a share of the guard's part of
`--alpha` (`GUARD_SHARE`), a weighted Bonferroni (`case_levels`): the levels add up to the guard's
part, so with every case unchanged the guard fails a pull request at most that often, and the suite
test the rest of alpha. The weights are read from the base alone (never the head), which keeps that
bound whatever they are (Genovese, Roeder and Wasserman, "False discovery control with p-value
weighting", 2006): half of the guard's part is spread evenly, the other half goes where a complete
break would need it. Under a judge that flips 10% of verdicts a broken case whose 3 base trials
passed reads near 1e-6, one whose base already failed a trial near 1e-4: even levels (2e-4 over 50
cases) miss the second kind, and the first kind needs a hundredth of its share.

Three head trials cannot reach that level, so the test is sequential with a budget: the case is
decided as if it had run `budget` head trials, and a trial is run only while that decision is
still open. The case is

* **broken** when even if every trial left in the budget passed, the budget's p would be at most
  the level (curtailment: the fixed-budget test's own answer, reached early);
* **cleared** when even if every trial left failed, the budget's p would be above the level, or
  when the trials run so far are unremarkable (their own p above `FUTILITY`): stopping for
  futility only ever turns a "broken" the fixed test might have reached into "cleared", so it
  never adds a false alarm (a non-binding futility rule), and it keeps an unchanged case from
  running to its budget;
* **undecided** otherwise: run more of its trials.

Choosing which cases to re-run from what they showed therefore costs no error rate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from .pooled import Prior

GUARD_SHARE = 0.35
"""The per-case guard's share of `--alpha`; the suite-level sign-flip test keeps the rest. Chosen by
simulating the bench's noise models: with weighted levels, 0.4 rather than 0.2 lifted the single-break
power under a noisy judge at 3 trials a side from 79.5% to 90.5% (200 pull requests), the cases
whose base already failed a trial being the ones that need the level. Not 0.4: the sign-flip test's
p is a multiple of 2^-k with k the cases whose pass rate moved, and at alpha 0.05 the suite test
must keep more than 1/32 = 0.03125, or five stable cases each losing trials (none gaining) would
not be a drop (10 of 50 stable cases losing 30 points: caught 91% at 0.04, 75% at 0.03)."""
FUTILITY = 0.1
"""A case whose head trials so far have a p above this is cleared without more trials. Chosen by
simulating the bench's noise models: at 0.05 a broken case under a noisy judge that passes one of
its first head trials is let go more often (about four points of power); at 0.2 an unchanged pull
request among 30% flaky cases re-runs about five times the trials."""
SPREAD_SHARE = 0.5
"""The share of the guard's part of alpha spread evenly over the cases; the rest is weighted by what a
complete break of each case would read (`case_levels`). The even part keeps a level for the case a
weight cannot foresee (a break that is not complete)."""
MARGIN = 4.0
"""How many times the p of a complete break at its expected count a case's level must be to be given
any weight: the count a broken case shows varies (under a judge flipping 10% of verdicts, 6 passes
of 60 give way to 9 a fifth of the time, about twice the p)."""
BUDGET_PER_TRIAL = 20
"""The default budget: this many times the case's base trials (60 head trials at `--trials 3`). With
weighted levels a broken case whose base already failed a trial is caught only after enough head
trials: in simulation, one stable case broken under a judge flipping 10% of verdicts at 3 trials a
side was caught 85.8% of the time at 30 head trials and 92% at 60. Only the cases still undecided
run that far: an unchanged pull request re-runs a few trials."""
BUDGET_LIMIT = 200
"""The most head trials the default budget asks of a case, whatever the trials."""

Decision = Literal["broken", "cleared", "undecided"]


def guard_alpha(alpha: float) -> float:
    """The guard's part of alpha, shared out over the cases by `case_levels`."""
    return alpha * GUARD_SHARE


def case_levels(alpha: float, prior: Prior, bases: Sequence[tuple[int, int]], budgets: Sequence[int]) -> list[float]:
    """Each case's level (a weighted Bonferroni adding up to the guard's part of alpha), from its base
    (passes, trials), the prior fitted to the whole base and its budget. A case's need is the p its
    head would read if it broke completely, its budget's trials passing at the rate the suite fails
    (the base's fail rate: what a judge's own noise lets through), times `MARGIN`. The weighted part
    goes in proportion to need to the cases with the smallest needs, a group of equal needs whole or
    not at all, while their needs add up to at most twice it (each then gets at least half its need).
    A case whose break no share could catch (its base passed one trial in three under a noisy judge)
    would only take the level the others need: it keeps the even part, as does a case that failed
    every base trial (it cannot break further)."""
    if not bases:
        return []
    part = guard_alpha(alpha)
    even = part * SPREAD_SHARE / len(bases)
    weighted = part - even * len(bases)
    needs = [math.inf if passed == 0 else
             MARGIN * prior.tail(passed, trials, round(budget * (1 - prior.mean)), budget)
             for (passed, trials), budget in zip(bases, budgets, strict=True)]
    chosen: list[int] = []
    spent = 0.0
    for need in sorted(set(needs)):
        group = [i for i, n in enumerate(needs) if n == need]
        if spent + need * len(group) > 2 * weighted:
            break
        chosen += group
        spent += need * len(group)
    if not chosen or spent <= 0:
        return [part / len(bases)] * len(bases)
    levels = [even] * len(bases)
    for i in chosen:
        levels[i] += weighted * needs[i] / spent
    return levels


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
    if head_n and prior.tail(base_passed, base_n, head_passed, head_n) > FUTILITY:
        return "cleared"
    return "undecided"


def trials_to_run(prior: Prior, base_passed: int, base_n: int, head_passed: int, head_n: int, budget: int,
                  level: float, batch: int) -> int:
    """How many more head trials an undecided case runs in its next round (0 when decided): the fewest
    that, all failing, would decide it broken, at most `batch` (the run's `--trials`: a round costs what
    one more run of the case would) and the budget left. A case that has passed no head trial yet may
    run as many as it has run so far: its rounds double, so a total break is decided in a few rounds
    of agent calls, not budget / `--trials` of them, while a case that passes now and then (what
    futility clears) never runs past what it needs by more than a round of `--trials`. The schedule
    never changes the decision, which is the fixed-budget test's."""
    if decide(prior, base_passed, base_n, head_passed, head_n, budget, level) != "undecided":
        return 0
    left = max(budget, head_n) - head_n
    most = min(max(batch, head_n) if head_passed == 0 else batch, left)
    for more in range(1, most + 1):
        if decide(prior, base_passed, base_n, head_passed, head_n + more, budget, level) == "broken":
            return more
    return most


def default_budget(base_n: int) -> int:
    """The head trials a case is decided on when `--max-trials` is not given: `BUDGET_PER_TRIAL`
    times its base trials, at most `BUDGET_LIMIT`."""
    return max(base_n, min(BUDGET_LIMIT, BUDGET_PER_TRIAL * base_n))


__all__ = ["BUDGET_LIMIT", "BUDGET_PER_TRIAL", "FUTILITY", "GUARD_SHARE", "MARGIN", "SPREAD_SHARE", "Decision", "case_levels",
           "decide", "default_budget", "guard_alpha", "suite_level", "trials_to_run"]
