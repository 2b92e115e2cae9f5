"""The base as a whole: what every case's base trials together say about one case's pass rate.

A case's own 3 base trials say little (a case passing 15% of the time passes 3 of 3 in 0.3% of
runs), but the other cases of the same suite, judged by the same judge, say a lot: under a judge
that flips 10% of verdicts every case shows about 0.9, and a case that passed its 3 trials is then
almost surely near 0.9, not near 0.15. This is an empirical-Bayes model (Efron, "Large-Scale
Inference", 2010; the beta-binomial of Williams 1975 for pass counts):

* **The prior.** Each case's pass probability is drawn from one Beta(a, b), fitted to the base's
  pass counts by maximum marginal likelihood (`fit`). Its concentration a + b is held to at most
  the base's trials (`total`): the prior never claims more evidence than the base it is fitted to;
  a base where every trial passed gets a mean one trial short of 1, not 1.
* **Robust to a case unlike the others.** The fitted Beta is mixed with a share of the uniform
  prior (Berger's epsilon-contamination), the larger the more the cases differ
  (`CONTAMINATION_SCALE`, never below `CONTAMINATION_FLOOR`): a case whose own base trials
  disagree with the rest (a case at 0.3 among cases at 0.9) weighs its own trials, as a test on
  the case alone would.
* **The fit's own error.** The prior's mean is known only to the base's sampling error. The
  predictive averages over `SHIFTS`, equally likely shifts of the mean (quantiles of its
  approximate normal sampling distribution), so no case is read against a mean surer than the
  base makes it.

For one case, the **posterior predictive** of its head trials (`Prior.tail`): the probability that
m head trials pass at most x times, given the case's own base trials and the prior. With the model
right, this is a valid p-value for "the head passes as often as the base" (the head's trials are
new draws of the same case), which is what the per-case guard (`sequential`) tests at its level.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

CONTAMINATION_SCALE = 1.0
"""The uniform prior's share is this over (1 + the fitted concentration): the beta-binomial's
intra-case correlation, the share of the trials' variance that differences between cases explain.
A suite whose cases agree (every case near 0.9 under a noisy judge) is pooled almost fully; one
whose cases differ (30% flaky) leans on each case's own trials. Chosen by simulating the bench's
noise models: with half of it the guard alone failed 6% of unchanged pull requests of a noisy
judge's suite holding one case at 0.3 (at twice the guard's share of alpha); with twice it the
single-break power under that judge fell by about five points."""
CONTAMINATION_FLOOR = 0.02
"""The uniform's share whatever the fit: one case in fifty may be unlike the rest even where the base
cannot show it (a case at 0.3 in a noisy judge's suite at 0.9 whose base trials happened to pass).
Chosen by bench/stats_bench.py (`--noise oneweak`): without it that suite failed 9.5% of unchanged
pull requests at 5 trials a side, with it 3.5%; the single-break power under the noisy judge is
76% at 3 trials with it, 87.5% without (96.5% and 97% at 5)."""
SHIFTS = (-1.4, -0.53, 0.0, 0.53, 1.4)
"""Standard-normal points splitting the fitted mean's sampling error into five near-equal parts."""
MEAN_STEPS = 80
CONCENTRATION_STEPS = 24


def _lbeta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _log_bb(s: int, n: int, a: float, b: float) -> float:
    """log of the beta-binomial probability of s passes in n trials under Beta(a, b)."""
    return (math.lgamma(n + 1) - math.lgamma(s + 1) - math.lgamma(n - s + 1)
            + _lbeta(s + a, n - s + b) - _lbeta(a, b))


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def _expit(x: float) -> float:
    return 1 / (1 + math.exp(-x))


@lru_cache(maxsize=4096)
def _fit(patterns: tuple[tuple[int, int, int], ...]) -> tuple[float, float]:
    """(mean, concentration) maximising the marginal likelihood of `patterns` ((passes, trials, cases))."""
    total = sum(n * c for _, n, c in patterns)
    edge = 0.5 / (total + 1)
    low, high = _logit(edge), _logit(1 - edge)
    top = max(1.0, float(total))
    means = [_expit(low + (high - low) * i / (MEAN_STEPS - 1)) for i in range(MEAN_STEPS)]
    concentrations = [0.5 * (top / 0.5) ** (j / (CONCENTRATION_STEPS - 1)) for j in range(CONCENTRATION_STEPS)]
    best = (-math.inf, 0.5, 1.0)
    for mean in means:
        for k in concentrations:
            a, b = mean * k, (1 - mean) * k
            ll = math.fsum(c * _log_bb(s, n, a, b) for s, n, c in patterns)
            if ll > best[0]:
                best = (ll, mean, k)
    return best[1], best[2]


@dataclass(frozen=True)
class Prior:
    """The fitted prior over the cases' pass probabilities (see the module)."""

    mean: float
    concentration: float
    spread: float
    """The fitted mean's standard error (Jeffreys-centred, so a base where every trial passed still has one)."""
    contamination: float
    _pmf: dict[tuple[int, int, int], tuple[float, ...]] = field(default_factory=dict, compare=False, repr=False)

    def means(self) -> list[float]:
        """The fitted mean at each of `SHIFTS` of its sampling error, kept inside (0, 1)."""
        edge = 1e-6
        return [min(1 - edge, max(edge, self.mean + z * self.spread)) for z in SHIFTS]

    def components(self, passed: int, trials: int) -> list[tuple[float, float, float]]:
        """The case's posterior: (weight, a, b) of each Beta in its mixture."""
        out = []
        for mean in self.means():
            a, b = mean * self.concentration, (1 - mean) * self.concentration
            out.append(((1 - self.contamination) / len(SHIFTS) * math.exp(_log_bb(passed, trials, a, b)),
                        a + passed, b + trials - passed))
        out.append((self.contamination / (trials + 1), 1.0 + passed, 1.0 + trials - passed))
        total = math.fsum(w for w, _, _ in out)
        return [(w / total, a, b) for w, a, b in out]

    def pmf(self, passed: int, trials: int, head_n: int) -> tuple[float, ...]:
        """The posterior predictive of the number of passes in `head_n` head trials."""
        key = (passed, trials, head_n)
        found = self._pmf.get(key)
        if found is None:
            found = tuple(math.fsum(w * math.exp(_log_bb(x, head_n, a, b)) for w, a, b in self.components(passed,
                                                                                                          trials))
                          for x in range(head_n + 1))
            self._pmf[key] = found
        return found

    def tail(self, passed: int, trials: int, head_passed: int, head_n: int) -> float:
        """P(at most `head_passed` passes in `head_n` head trials) for a case whose base passed
        `passed` of `trials`: the per-case guard's p-value."""
        if head_n == 0:
            return 1.0
        return min(1.0, math.fsum(self.pmf(passed, trials, head_n)[: head_passed + 1]))


def fit(counts: Sequence[tuple[int, int]], contamination: float | None = None) -> Prior:
    """The prior fitted to every case's base (passes, trials); `contamination` None: the fitted
    intra-case correlation (`CONTAMINATION_SCALE`)."""
    patterns = tuple(sorted((s, n, c) for (s, n), c in Counter(counts).items() if n > 0))
    if not patterns:
        return Prior(0.5, 1.0, 0.0, 1.0)
    mean, concentration = _fit(patterns)
    total = sum(n * c for _, n, c in patterns)
    cases = sum(c for _, _, c in patterns)
    # a case's trials are correlated through its own pass rate: the effective trials for the mean
    per_case = total / cases
    effective = total / (1 + (per_case - 1) / (concentration + 1))
    jeffreys = (effective * mean + 0.5) / (effective + 1)
    spread = math.sqrt(jeffreys * (1 - jeffreys) / effective)
    if contamination is None:
        contamination = min(0.5, max(CONTAMINATION_FLOOR, CONTAMINATION_SCALE / (concentration + 1)))
    return Prior(mean, concentration, spread, contamination)


__all__ = ["CONTAMINATION_FLOOR", "CONTAMINATION_SCALE", "SHIFTS", "Prior", "fit"]
