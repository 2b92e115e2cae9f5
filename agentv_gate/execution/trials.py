"""AgentV's trial strategies: from the scores of a case's trials to the one score the gate reads.

* `pass_at_k`: the best trial's score (the run stops at the first trial that passes);
* `mean`: the mean of the trials' scores (min and max recorded);
* `confidence_interval`: the lower bound of the two-sided 95% Student-t interval of the mean,
  `mean - t(0.975, n-1) * s / sqrt(n)` with `s` the sample standard deviation, clamped to 0..1;
  with one trial, the mean. So a case passes only when, on this evidence, its true mean is very
  likely above the threshold, not when a lucky run lifted the average;
* `pass_hat_k` (pass^k, agentv-gate's addition: AgentV has no such strategy, so it is read only
  from `--trials-strategy`, never from an eval file AgentV also runs): every trial must pass; the
  case scores its worst trial. An agent passing 61% of single tries passes all of 8 far less often
  (tau-bench), which is what a user meeting the agent 8 times sees.

`t` comes from the exact table for 1..30 degrees of freedom and, above, from the Cornish-Fisher
expansion around the normal quantile (within 0.001 of the exact value there). No scipy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..base.jscompat import js_sum

T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
"""The 0.975 quantile of Student's t for 1..30 degrees of freedom (two-sided 95%)."""
Z_975 = 1.959963984540054


def t_critical(df: int) -> float:
    """t(0.975, df): the table up to 30, then the Cornish-Fisher series in 1/df."""
    if df < 1:
        raise ValueError("a t interval needs at least 2 trials")
    if df <= len(T_975):
        return T_975[df - 1]
    z = Z_975
    return (z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3))


def _clamp(value: float) -> float:
    return max(0.0, min(1.0, value))


def aggregate(strategy: str, scores: Sequence[float], passed: int) -> tuple[float, dict[str, Any]]:
    """(the case's score, AgentV's `aggregation` object) for the scores of the trials that were scored.

    `passed` is how many trials passed the gate (pass_at_k reports it)."""
    if not scores:
        return 0.0, {"strategy": strategy}
    n = len(scores)
    mean = js_sum(scores) / n  # AgentV's reduce, left to right (see js_sum)
    if strategy == "pass_at_k":
        return max(scores), {"strategy": strategy, "passed_attempts": passed, "total_attempts": n}
    if strategy == "pass_hat_k":
        return min(scores), {"strategy": strategy, "min": min(scores), "total_attempts": n}
    if strategy == "mean":
        return mean, {"strategy": strategy, "mean": mean, "min": min(scores), "max": max(scores)}
    if n < 2:
        return mean, {"strategy": strategy, "mean": mean, "ci95_lower": _clamp(mean), "ci95_upper": _clamp(mean),
                      "stddev": 0.0}
    stddev = math.sqrt(js_sum((s - mean) ** 2 for s in scores) / (n - 1))
    margin = t_critical(n - 1) * stddev / math.sqrt(n)
    lower = _clamp(mean - margin)
    return lower, {"strategy": strategy, "mean": mean, "ci95_lower": lower, "ci95_upper": _clamp(mean + margin),
                   "stddev": stddev}
