"""`agentv-gate plan-trials BASE.jsonl`: how many trials a side the paired test needs to see a drop.

From the base's results (each case's pass rate over its trials), it simulates pull requests in
which the suite's pass rate falls by D points and counts how often the gate's own suite test
(`report/baseline/paired.py`'s `suite_drop_p`) fails them at its level (alpha less the per-case
guard's share, as the gate holds it), for 2, 3, ... trials a side, and names the
fewest reaching the asked power. A drop is modelled two ways, since the answer depends on it:
concentrated (the most reliable cases break, each falling to a 20% pass rate: what a regression
of an agent usually looks like, and what the cubed differences are built to see), and spread
(every case loses the same share of its pass rate: the hardest drop to see). The simulation is
seeded, so the same base gives the same plan.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence

from ..errors import EXIT_OK, UsageError
from ..execution.stop import NOT_RUN_INTERRUPTED
from ..report.baseline.paired import DEFAULT_ALPHA, suite_drop_p
from ..report.baseline.sequential import suite_level
from ..report.rows import trial_outcomes
from ._baseline import check_alpha
from ._previous import read_previous

BROKEN_RATE = 0.2
"""The pass rate a broken case falls to in the concentrated model (as in bench/stats_bench.py)."""
DEFAULT_DROPS = (5.0, 10.0, 20.0)


def case_rates(path: str) -> tuple[list[float], int]:
    """Each case's estimated pass probability, (passes + 0.5) / (trials + 1) so a 3/3 case is not
    taken as certain, and the most trials a case ran."""
    rows = [r for r in read_previous(path, f"the base results {path} hold no rows")
            if r.failure_reason_code != NOT_RUN_INTERRUPTED]
    outcomes = [trial_outcomes(r).passed for r in rows]
    return [(sum(o) + 0.5) / (len(o) + 1) for o in outcomes], max(len(o) for o in outcomes)


def concentrated(rates: Sequence[float], points: float) -> tuple[list[float], int]:
    """The head's rates when the most reliable cases break (each down to BROKEN_RATE, the last only
    as far as needed) until the suite lost `points`; and how many cases broke."""
    head = list(rates)
    left = points / 100 * len(rates)
    broken = 0
    for i in sorted(range(len(rates)), key=lambda i: -rates[i]):
        if left <= 1e-12:
            break
        fall = min(left, max(0.0, rates[i] - BROKEN_RATE))
        head[i] -= fall
        left -= fall
        broken += fall > 0
    return head, broken


def spread(rates: Sequence[float], points: float) -> list[float]:
    mean = sum(rates) / len(rates)
    share = min(1.0, points / 100 / mean) if mean else 0.0
    return [p * (1 - share) for p in rates]


def power(base: Sequence[float], head: Sequence[float], trials: int, alpha: float, simulations: int,
          rng: random.Random) -> float:
    """Share of simulated pull requests whose suite test fails at alpha."""
    caught = 0
    for _ in range(simulations):
        counts = [(sum(rng.random() < b for _ in range(trials)), trials,
                   sum(rng.random() < h for _ in range(trials)), trials) for b, h in zip(base, head, strict=True)]
        caught += suite_drop_p(counts) <= alpha
    return caught / simulations


def plan(base: Sequence[float], head: Sequence[float], args: argparse.Namespace, alpha: float) -> str:
    """`3 trial(s) a side (power 84%; 2: 61%)`, or how close the most trials come."""
    rng = random.Random(args.seed)
    previous = None
    for trials in range(2, args.max_trials + 1):
        reached = power(base, head, trials, suite_level(alpha), args.simulations, rng)
        if reached >= args.power:
            before = f"; {trials - 1}: {previous:.0%}" if previous is not None else ""
            return f"{trials} trial(s) a side (power {reached:.0%}{before})"
        previous = reached
    return f"not within {args.max_trials} trials a side (power {previous:.0%} at {args.max_trials})"


def execute(args: argparse.Namespace) -> int:
    check_alpha(args.alpha)
    alpha = DEFAULT_ALPHA if args.alpha is None else args.alpha
    drops = args.drop or list(DEFAULT_DROPS)
    if not 0 < args.power < 1:
        raise UsageError(f"--power {args.power} is not in (0, 1)")
    if not 2 <= args.max_trials <= 100:
        raise UsageError(f"--max-trials {args.max_trials} is not in 2..100")
    if not 10 <= args.simulations <= 100_000:
        raise UsageError(f"--simulations {args.simulations} is not in 10..100000")
    for drop in drops:
        if not 0 < drop <= 100:
            raise UsageError(f"--drop {drop} is not a number of points in (0, 100]")
    rates, trials = case_rates(str(args.baseline))
    mean = sum(rates) / len(rates)
    lines = [f"plan-trials: {len(rates)} case(s), base pass rate {mean:.1%} (estimated from up to {trials} "
             f"trial(s) a case), alpha {alpha:g} (the suite test at {suite_level(alpha):.3g}), power {args.power:.0%}, "
             f"{args.simulations} simulated pull requests per trial count, seed {args.seed}"]
    if trials < 2:
        lines.append("note: the base ran one trial a case; its pass rates are rough (run it with --trials N)")
    for drop in drops:
        head, broken = concentrated(rates, drop)
        lost = (sum(rates) - sum(head)) / len(rates) * 100
        if lost + 1e-9 < drop:
            lines.append(f"a drop of {drop:g} points: the suite can only lose {lost:.1f} with its cases falling to "
                         f"{BROKEN_RATE:.0%}")
        else:
            lines.append(f"a drop of {drop:g} points, on the {broken} most reliable case(s) (each falling to "
                         f"{BROKEN_RATE:.0%}): {plan(rates, head, args, alpha)}")
        lines.append(f"a drop of {drop:g} points, spread over every case: {plan(rates, spread(rates, drop), args, alpha)}")
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK
