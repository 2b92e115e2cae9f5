"""The arithmetic of a noisy comparison, in pure Python (no scipy, no numpy at runtime).

* `fisher_two_sided`: Fisher's exact test on two pass counts, by summing hypergeometric
  probabilities (the two-sided p sums every table no more likely than the one seen, with the
  1e-7 relative tolerance R's `fisher.test` and scipy use, so 3/3 against 0/3 gives 0.1).
* `benjamini_hochberg`: adjusted p-values (q-values) controlling the false-discovery rate across
  cases at the level they are compared with.
* `sign_flip_p`: a one-sided paired sign-flip permutation test. Under "the change did nothing",
  each case's head-minus-base difference is as likely negative as positive (base and head trials
  of a case are exchangeable), so flipping signs at random gives the statistic's null
  distribution, with cases as the units (clusters). Exact (the distribution is enumerated over
  the distinct values) when that is small, else a seeded Monte Carlo.
* `paired_interval`: the mean per-case difference with a confidence interval from the paired,
  clustered standard error (Miller 2024, "Adding Error Bars to Evals": a case's trials are one
  cluster, so the unit is the case's mean, not the trial).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

EXACT_LIMIT = 200_000
"""Partial sums the exact sign-flip enumeration may track; past it, a Monte Carlo with `DRAWS` draws."""
DRAWS = 20_000
SEED = 20_241_127
"""The Monte Carlo's fixed seed: the same rows always give the same p-value (a gate must be reproducible)."""


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def fisher_two_sided(passed_a: int, n_a: int, passed_b: int, n_b: int) -> float:
    """Two-sided p of Fisher's exact test on the 2x2 table (passed, failed) x (a, b).

    The margins are fixed; the count of passes of side a follows the hypergeometric distribution;
    p is the total probability of every table at most as likely as the observed one."""
    if not (0 <= passed_a <= n_a and 0 <= passed_b <= n_b):
        raise ValueError(f"pass counts {passed_a}/{n_a}, {passed_b}/{n_b} are not counts")
    # A side with no trials leaves one possible table (p = 1): no guard needed.
    passes, total = passed_a + passed_b, n_a + n_b
    low, high = max(0, passes - n_b), min(passes, n_a)
    denominator = _log_comb(total, passes)

    def prob(x: int) -> float:
        return math.exp(_log_comb(n_a, x) + _log_comb(n_b, passes - x) - denominator)

    observed = prob(passed_a)
    p = sum(q for q in (prob(x) for x in range(low, high + 1)) if q <= observed * (1 + 1e-7))
    return min(1.0, p)


def fisher_drop_p(base_passed: int, base_n: int, head_passed: int, head_n: int) -> float:
    """One-sided p of Fisher's exact test that the head passes less often than the base: with the
    margins fixed, the probability that the base holds at least the passes it holds. Exact for
    any common pass probability (the null "the change did nothing"), which is why the per-case
    guard can test a flaky case as validly as a stable one."""
    if not (0 <= base_passed <= base_n and 0 <= head_passed <= head_n):
        raise ValueError(f"pass counts {base_passed}/{base_n}, {head_passed}/{head_n} are not counts")
    passes, total = base_passed + head_passed, base_n + head_n
    denominator = _log_comb(total, passes)
    high = min(passes, base_n)
    p = math.fsum(math.exp(_log_comb(base_n, x) + _log_comb(head_n, passes - x) - denominator)
                  for x in range(base_passed, high + 1) if passes - x <= head_n)
    return min(1.0, p)


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values, in the order given: a case whose q is at most alpha is
    a discovery, and the expected share of false discoveries among them is at most alpha."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, pvalues[i] * m / rank)
        adjusted[i] = min(1.0, running)
    return adjusted


def drop_weighted(difference: float) -> float:
    """The suite test's per-case statistic: the cube of the head-minus-base difference.

    A case that fell from 3/3 to 0/3 counts 27 times a case that moved by one trial, so a few
    real, large drops stand out of many one-trial wobbles, which is what a regression of an
    agent looks like (some cases break, most do not move). Chosen by simulation (bench/
    stats_bench.py): against the plain sum of differences it lifts the power to see 5 of 50 cases
    fall from 0.95 to 0.2 with 8 trials from about 46% to about 86%; the signed square reaches
    about 77%. The test stays exact whatever the weighting: only its power depends on it."""
    return difference**3


def sign_flip_p(values: Sequence[float], seed: int = SEED) -> float:
    """One-sided p that the sum of `values` is this low by chance: P(sum of s_i * v_i <= observed),
    s_i independent fair signs. Exact when the distinct |values| allow, else `DRAWS` seeded draws
    (the observed assignment counted as one of them, so p is never 0). Integer values are summed
    exactly (no rounding), which is also faster."""
    exact = all(isinstance(v, int) for v in values)
    nonzero = [v for v in values if v != 0] if exact else [v for v in values if abs(v) > 1e-12]
    if not nonzero:
        return 1.0
    observed = sum(nonzero) if exact else math.fsum(nonzero)
    counts = Counter(abs(v) if exact else round(abs(v), 9) for v in nonzero)
    size = 1
    for c in counts.values():
        size *= c + 1
    if size <= EXACT_LIMIT:
        return _exact_sign_flip(counts, observed, exact)
    rng = random.Random(seed)
    hits = 1
    magnitudes = [abs(v) for v in nonzero]
    for _ in range(DRAWS):
        total = math.fsum(m if rng.random() < 0.5 else -m for m in magnitudes)
        if total <= observed + 1e-9:
            hits += 1
    return hits / (DRAWS + 1)


def _exact_sign_flip(counts: Counter[float], observed: float, integers: bool) -> float:
    """The whole null distribution: for a value v seen c times, j of them negative contribute
    v * (c - 2j) with probability C(c, j) / 2^c. Float sums are keyed to 9 decimals."""
    dist: dict[float, float] = {0: 1.0}
    for value, c in counts.items():
        weights = [math.comb(c, j) / 2**c for j in range(c + 1)]
        moves = [value * (c - 2 * j) for j in range(c + 1)]
        step: dict[float, float] = {}
        get = step.get
        for total, p in dist.items():
            for move, w in zip(moves, weights, strict=True):
                key = total + move if integers else round(total + move, 9)
                step[key] = get(key, 0.0) + p * w
        dist = step
    slack = 0 if integers else 1e-9
    return min(1.0, math.fsum(p for total, p in dist.items() if total <= observed + slack))


def drop_weights(counts: Sequence[tuple[int, int, int, int]]) -> list[int]:
    """`drop_weighted` of each case's head-minus-base pass rate, as exact integers: each case's
    (base passed, base trials, head passed, head trials) over the common denominator of all cases
    (the least common multiple of every trial count, cubed), so the sign-flip sums are exact."""
    unit = 1
    for _, base_n, _, head_n in counts:
        unit = math.lcm(unit, base_n, head_n)
    return [(head * (unit // head_n) - base * (unit // base_n)) ** 3 for base, base_n, head, head_n in counts]


def normal_quantile(p: float) -> float:
    """The standard normal quantile, by bisection on erfc (to 1e-12): only a few are ever needed.
    erfc keeps the lower tail exact down to the smallest float, so a tiny `p` (`--alpha 1e-300`) is
    computed, not lost to rounding as `1 + erf` would lose it."""
    if not 0 < p < 1:
        raise ValueError(f"{p} is not a probability in (0, 1)")
    low, high = -40.0, 40.0
    while high - low > 1e-12:
        mid = (low + high) / 2
        if 0.5 * math.erfc(-mid / math.sqrt(2)) < p:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def t_quantile(p: float, df: int) -> float:
    """Student's t quantile by the Cornish-Fisher expansion around the normal one (within 0.01 of
    the exact value from 3 degrees of freedom on; an interval over fewer cases is said to be rough)."""
    z = normal_quantile(p)
    return (z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3))


@dataclass(frozen=True)
class Interval:
    """A paired difference (head minus base, averaged over cases) and its two-sided interval."""

    mean: float
    low: float
    high: float
    level: float
    se: float

    def describe(self, scale: float = 1.0, unit: str = "", digits: int = 1) -> str:
        """E.g. `-12.0 points (95% CI -20.1 to -3.9)`."""
        return (f"{self.mean * scale:+.{digits}f}{unit} ({self.level:.0%} CI {self.low * scale:+.{digits}f} to "
                f"{self.high * scale:+.{digits}f})")


def paired_interval(differences: Sequence[float], alpha: float) -> Interval | None:
    """The mean of per-case differences with a (1 - alpha) interval: mean ± t(1 - alpha/2, N-1) · s/√N,
    `s` the standard deviation of the per-case differences (the clustered standard error when each
    case is one cluster of trials). None for fewer than 2 cases."""
    n = len(differences)
    if n < 2:
        return None
    mean = math.fsum(differences) / n
    sd = math.sqrt(math.fsum((d - mean) ** 2 for d in differences) / (n - 1))
    se = sd / math.sqrt(n)
    # the t distribution is symmetric: the lower tail's quantile, negated, never rounds 1 - alpha/2 to 1
    margin = -t_quantile(alpha / 2, n - 1) * se
    return Interval(mean, mean - margin, mean + margin, 1 - alpha, se)


__all__ = ["DRAWS", "EXACT_LIMIT", "SEED", "Interval", "benjamini_hochberg", "drop_weighted", "drop_weights",
           "fisher_drop_p", "fisher_two_sided",
           "normal_quantile", "paired_interval", "sign_flip_p", "t_quantile"]
