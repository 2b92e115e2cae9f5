#!/usr/bin/env python3
"""Prototype: a per-case-valid suite test for broad drift, from fresh re-runs of the head (not the gate's code yet).

The gate's suite test (`paired.py`, a sign-flip test over cases on the first `--trials`) holds its
error rate whatever each case's pass rate, but it reads only 3 head trials a case; the per-case guard
(`sequential.py`) re-runs the head, but is built to catch one broken case. This script measures a
third test, the **re-run score test**:

1. *Screening* (the head's own trials only, never the base): a case whose first `--trials` head trials
   did not all pass is re-run `m(h)` more trials (`RULES`); the number depends on the head's passes `h`
   alone.
2. *The test* compares each re-run case's base trials with its re-run trials, conditionally on their
   pooled passes `S = B + R`: under "the change did nothing" the base's `n_b` trials and the re-run's `m`
   trials are `n_b + m` independent draws of one pass probability, so whatever that probability, `B`
   given `S` is hypergeometric. The statistic `T = sum_i w_i (B_i - n_b S_i / (n_b + m_i))` with weights
   `w_i = w(h_i, n_h, S_i, N_i)` (anything the screening or `S` fixes: `WEIGHTS`) has an exact null
   distribution, the convolution of the weighted hypergeometrics, and its one-sided p is exact for every
   vector of pass probabilities: no prior, no plug-in. The first head trials choose and weigh; they are
   never compared with the base, so choosing on them costs nothing.

The gate around it is the gate's own code (`paired.paired_test` for the sign-flip p and the guard,
`_reruns.wanted` for the guard's re-runs, on real result rows); the noise models and the drops are
`bench/stats_bench.py`'s (`probabilities`). Each simulated pull request draws, per case, the base's and
the head's trials and a pool of further head trials at the head's pass probability: the re-run test
reads the pool's first `m(h)`, the guard's re-runs continue after them (they share those trials, as
`run` would: the guard sees the screening re-runs first).

    .venv/bin/python bench/drift_proto.py --prs 100 --explore            # every rule and weight, 3 and 5 trials
    .venv/bin/python bench/drift_proto.py --prs 200 --rule r3 --weight fail --markdown   # the final table
"""

from __future__ import annotations

import argparse
import math
import pickle
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from stats_bench import NOISE, SUITE, probabilities

from agentv_gate.commands._reruns import wanted
from agentv_gate.models import CaseResult
from agentv_gate.report.baseline import paired
from agentv_gate.report.baseline.gate import Baseline

POOL = 60
"""Further head trials drawn per case (the re-run test's and the guard's re-runs read them in order)."""
QUANTUM = 12
"""Weights are rounded to multiples of 1/QUANTUM, so the statistic is an integer and its null exact."""


# --- the test -----------------------------------------------------------------------------------------

def hypergeometric(n_b: int, m: int, s: int) -> list[tuple[int, float]]:
    """(b, P(B = b)) for B the base's passes given S = s passes among its n_b and the re-run's m trials."""
    total = math.comb(n_b + m, n_b)
    return [(b, math.comb(s, b) * math.comb(n_b + m - s, n_b - b) / total)
            for b in range(max(0, s - m), min(n_b, s) + 1)]


@dataclass(frozen=True)
class Case:
    base: int
    """Base passes (of n_b)."""
    n_b: int
    head: int
    """Passes of the head's own (screening) trials (of n_h)."""
    n_h: int
    rerun: int
    """Passes of the m re-run trials the screening asked for."""
    m: int


Weight = Callable[[Case], float]


def score_p(cases: Sequence[Case], weight: Weight) -> float:
    """One-sided exact p that the base passes more than the re-runs (a drop), conditionally on each case's
    S = base + re-run passes: P0(T >= t) for T = sum of the integer weights times the base passes."""
    dist = {0: 1.0}
    observed = 0
    for c in cases:
        if c.m == 0:
            continue
        s = c.base + c.rerun
        if s in (0, c.n_b + c.m):  # every trial alike: no information, a point mass
            continue
        k = round(weight(c) * QUANTUM)
        if k <= 0:
            continue
        observed += k * c.base
        pmf = hypergeometric(c.n_b, c.m, s)
        new: dict[int, float] = {}
        for t, pt in dist.items():
            for b, pb in pmf:
                new[t + k * b] = new.get(t + k * b, 0.0) + pt * pb
        dist = new
    return min(1.0, math.fsum(p for t, p in dist.items() if t >= observed))


def z_p(cases: Sequence[Case], weight: Weight) -> float:
    """The plug-in z version of the same statistic (the normal approximation of its conditional null)."""
    num = var = 0.0
    for c in cases:
        if c.m == 0:
            continue
        s, total = c.base + c.rerun, c.n_b + c.m
        w = weight(c)
        rate = s / total
        num += w * (c.base - c.n_b * rate)
        var += w * w * c.n_b * rate * (1 - rate) * c.m / max(1, total - 1)
    if var <= 0:
        return 1.0
    return 0.5 * math.erfc(num / math.sqrt(2 * var))


# the screening rules: m(h, n_h), the re-runs a case gets from its head passes alone
RULES: dict[str, Callable[[int, int], int]] = {
    "r1": lambda h, n: n if h < n else 0,
    "r2": lambda h, n: 2 * n if h < n else 0,
    "r3": lambda h, n: 3 * n if h < n else 0,
    "r5": lambda h, n: 5 * n if h < n else 0,
    "r9": lambda h, n: 9 * n if h < n else 0,
    "step": lambda h, n: 0 if h == n else (2 * n if h == n - 1 else 4 * n),
    "all3": lambda h, n: 3 * n,
    "t2": lambda h, n: 0 if h == n else (n if h == n - 1 else 3 * n),
    "t3": lambda h, n: 0 if h == n else (2 * n if h == n - 1 else 5 * n),
}


def _fail_rate(c: Case) -> float:
    return 1 - (c.base + c.rerun + 0.5) / (c.n_b + c.m + 1)


# weights: from the screening (h) and the pooled passes S only (both fixed under the permutation null)
WEIGHTS: dict[str, Weight] = {
    "flat": lambda c: 1.0,
    "misses": lambda c: (c.n_h - c.head) / c.n_h,
    "fail": _fail_rate,
    "fail2": lambda c: _fail_rate(c) ** 0.5,
    "fail15": lambda c: _fail_rate(c) ** 1.5,
    "failmiss": lambda c: _fail_rate(c) * (1 + c.n_h - c.head) / (1 + c.n_h),
    "invvar": lambda c: 0.25 / (_fail_rate(c) * (1 - _fail_rate(c))),
    "invmiss": lambda c: 0.25 / (_fail_rate(c) * (1 - _fail_rate(c))) * (1 + c.n_h - c.head) / (1 + c.n_h),
}


# --- the simulation -----------------------------------------------------------------------------------

@dataclass
class PR:
    base: list[int]
    head: list[int]
    pool: list[list[bool]]
    dropped: list[bool]
    p_drop: float
    guard_broken: bool
    guard_reruns: list[int]
    """Re-runs the guard alone asked of each case (pool trials it read, from the first)."""


def result_row(i: int, outcomes: Sequence[bool]) -> CaseResult:
    row = CaseResult(eval_id=f"case-{i:02}", suite=SUITE, file=SUITE, line=2 + 3 * i,
                     verdict="pass" if any(outcomes) else "fail", score=1.0 if any(outcomes) else 0.0, threshold=0.5)
    row.trials = [{"attempt": n + 1, "score": 1.0 if ok else 0.0, "verdict": "pass" if ok else "fail"}
                  for n, ok in enumerate(outcomes)]
    row.aggregation = {"strategy": "pass_at_k", "passed_attempts": sum(outcomes), "total_attempts": len(outcomes)}
    return row


def gate(base: list[list[bool]], head: list[list[bool]], pool: list[list[bool]], first: list[int],
         trials: int, alpha: float) -> tuple[float, bool, list[int]]:
    """The gate's sign-flip p, whether its guard calls a case broken, and the pool trials each case read:
    `first[i]` screening re-runs given up front, then the guard's own rounds (`_reruns.wanted`), until a
    case is broken or nothing is undecided."""
    base_rows = [result_row(i, o) for i, o in enumerate(base)]
    head_rows = [result_row(i, o) for i, o in enumerate(head)]
    used = list(first)
    for i, k in enumerate(first):
        if k:
            head_rows[i].reruns = [{"attempt": trials + j + 1, "score": float(ok), "verdict": "pass" if ok else "fail",
                                    "rerun": True} for j, ok in enumerate(pool[i][:k])]
    baseline = Baseline(Path("base.jsonl"), base_rows, "regression", None, alpha)
    index = {(r.suite, r.eval_id, r.target): i for i, r in enumerate(head_rows)}
    p_drop = None
    while True:
        test = baseline.test(baseline.compare(head_rows))
        assert isinstance(test, paired.SuiteTest)
        if p_drop is None:
            p_drop = test.p_drop
        # as `_reruns.decided` (less the sign-flip, whose level this script varies): the sequential test called
        # a case broken, else the undecided cases' next trials; a stable case failing every head trial is
        # undecided until its re-runs speak
        want = {} if any(c.decision == "broken" for c in test.cases) else wanted(test, trials)
        if not want:
            return p_drop, any(paired.case_guard(c) == "broken" for c in test.cases), used
        for key, more in want.items():
            i = index[key]
            kept = head_rows[i].reruns or []
            for ok in pool[i][used[i]:used[i] + more]:
                kept.append({"attempt": trials + len(kept) + 1, "score": float(ok), "verdict": "pass" if ok else "fail",
                             "rerun": True})
            head_rows[i].reruns = kept
            used[i] += more


def simulate(noise: str, cases: int, dropped: int, trials: int, rng: random.Random, alpha: float,
             rule: Callable[[int, int], int] | None) -> PR:
    """One pull request; with `rule`, the screening re-runs are given to the guard first (shared)."""
    base_p, head_p = probabilities(noise, cases, dropped, rng)
    base = [[rng.random() < p for _ in range(trials)] for p in base_p]
    head = [[rng.random() < p for _ in range(trials)] for p in head_p]
    pool = [[rng.random() < p for _ in range(POOL)] for p in head_p]
    first = [rule(sum(h), trials) if rule else 0 for h in head]
    p_drop, broken, used = gate(base, head, pool, first, trials, alpha)
    return PR([sum(b) for b in base], [sum(h) for h in head], pool, [b != h for b, h in zip(base_p, head_p, strict=True)],
              p_drop, broken, used)


def drift_cases(pr: PR, trials: int, rule: Callable[[int, int], int]) -> list[Case]:
    out = []
    for b, h, pool in zip(pr.base, pr.head, pr.pool, strict=True):
        m = rule(h, trials)
        out.append(Case(b, trials, h, trials, sum(pool[:m]), m))
    return out


def oracle_cases(pr: PR, trials: int, m: int) -> list[Case]:
    """The bound: told which cases dropped, each re-run m trials (not a test anyone can run)."""
    return [Case(b, trials, h, trials, sum(pool[:m]), m if d else 0)
            for b, h, pool, d in zip(pr.base, pr.head, pr.pool, pr.dropped, strict=True)]


def cost(pr: PR, trials: int, rule: Callable[[int, int], int] | None) -> int:
    """Trials re-run: per case the most the screening or the guard read of the pool."""
    return sum(max(rule(h, trials) if rule else 0, g) for h, g in zip(pr.head, pr.guard_reruns, strict=True))


DROPS = {"0": 0, "break1": -1, "10": 10}
SPLITS = {  # (sign-flip level, re-run test level), in units of alpha; the guard keeps its 0.2
    "today": (0.8, 0.0), "sf.4": (0.4, 0.4), "sf.2": (0.2, 0.6), "sf.1": (0.1, 0.7), "none": (0.0, 0.8)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--prs", type=int, default=100)
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--trials", default="3,5")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--noise", default=",".join(NOISE))
    parser.add_argument("--drops", default="0,break1,10")
    parser.add_argument("--explore", action="store_true", help="every rule, weight and split on the same PRs "
                                                                "(the guard not sharing the screening re-runs)")
    parser.add_argument("--rule", default="r3", choices=sorted(RULES))
    parser.add_argument("--weight", default="fail", choices=sorted(WEIGHTS))
    parser.add_argument("--split", default="sf.2", choices=sorted(SPLITS))
    parser.add_argument("--cache", type=Path, help="pickle of simulated PRs (written if missing, read if present)")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    trial_counts = [int(t) for t in args.trials.split(",")]
    models = args.noise.split(",")
    drops = args.drops.split(",")
    print(f"seed {args.seed}; {args.prs} PRs a cell; {args.cases} cases; alpha {args.alpha}; models {models}; "
          + ("explore (guard alone)" if args.explore else f"rule {args.rule}, weight {args.weight}, split {args.split}"
             " (the guard shares the screening re-runs)"), flush=True)
    started = time.monotonic()
    sims: dict[tuple[str, int, str], list[PR]] = {}
    if args.cache and args.cache.exists():
        sims = pickle.loads(args.cache.read_bytes())
    shared = None if args.explore else RULES[args.rule]
    for noise in models:
        for trials in trial_counts:
            for drop in drops:
                key = (noise, trials, drop)
                if key in sims:
                    continue
                rng = random.Random(f"{args.seed}-{noise}-{trials}-{drop}")
                sims[key] = [simulate(noise, args.cases, DROPS[drop], trials, rng, args.alpha, shared)
                             for _ in range(args.prs)]
            print(f"  simulated {noise} {trials} [{time.monotonic() - started:.0f}s]", flush=True)
    if args.cache and not args.cache.exists():
        args.cache.write_bytes(pickle.dumps(sims))
    alpha = args.alpha
    if args.explore:
        explore(sims, models, trial_counts, drops, alpha)
        return 0
    rule, weight = RULES[args.rule], WEIGHTS[args.weight]
    sf, rr = SPLITS[args.split]
    rows = []
    for noise in models:
        for trials in trial_counts:
            cells = []
            for drop in drops:
                prs = sims[(noise, trials, drop)]
                fails = sum(pr.p_drop <= sf * alpha or pr.guard_broken
                            or (rr > 0 and score_p(drift_cases(pr, trials, rule), weight) <= rr * alpha) for pr in prs)
                today = sum(pr.p_drop <= 0.8 * alpha or pr.guard_broken for pr in prs)
                extra = sum(cost(pr, trials, rule) for pr in prs) / len(prs)
                cells.append((fails / len(prs), today / len(prs), extra))
            rows.append((noise, trials, cells))
            print(f"{noise:8} {trials}: " + "  ".join(f"{d}: {f:6.1%} (today {t:5.1%}) +{e:.1f}"
                                                       for d, (f, t, e) in zip(drops, cells, strict=True)), flush=True)
    if args.markdown:
        print("\n| noise model | trials | " + " | ".join(drops) + " |\n| --- | ---: |" + " ---: |" * len(drops))
        for noise, trials, cells in rows:
            print(f"| {noise} | {trials} | " + " | ".join(f"{f:.1%} (+{e:.0f})" for f, _, e in cells) + " |")
    return 0


def explore(sims: dict[tuple[str, int, str], list[PR]], models: list[str], trial_counts: list[int],
            drops: list[str], alpha: float) -> None:
    """The re-run test alone at 0.6 alpha, and the gate with each split, for every rule and weight."""
    for trials in trial_counts:
        print(f"\n== trials {trials}: re-run test alone at level 0.6*alpha (FA under 0 / power break1, 10) "
              "and the mean screening re-runs")
        for rule_name, rule in RULES.items():
            for weight_name, weight in WEIGHTS.items():
                parts = []
                for noise in models:
                    cells = []
                    for drop in drops:
                        prs = sims[(noise, trials, drop)]
                        rej = sum(score_p(drift_cases(pr, trials, rule), weight) <= 0.6 * alpha for pr in prs)
                        cells.append(f"{rej / len(prs):4.0%}")
                    m = sum(sum(rule(h, trials) for h in pr.head) for pr in sims[(noise, trials, drops[0])])
                    parts.append(f"{noise[:7]} {'/'.join(cells)} +{m / len(sims[(noise, trials, drops[0])]):.0f}")
                print(f"{rule_name:5} {weight_name:8} " + " | ".join(parts), flush=True)
        for m in (trials, 3 * trials, 9 * trials):
            parts = []
            for noise in models:
                prs = sims[(noise, trials, "10")] if "10" in drops else []
                rej = sum(score_p(oracle_cases(pr, trials, m), WEIGHTS["flat"]) <= 0.6 * alpha for pr in prs)
                parts.append(f"{noise[:7]} {rej / max(1, len(prs)):4.0%}")
            print(f"oracle m={m}: " + " | ".join(parts))


if __name__ == "__main__":
    sys.exit(main())
