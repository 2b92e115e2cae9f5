"""The trial strategies, as one table: how a case's trials make its score, when they stop, what passes.

Each strategy is a row of `STRATEGIES` (as inspect_ai's reducers are named once): its score rule (the
trials' scores to the one score the gate reads, and AgentV's `aggregation` object), its stop rule,
its verdict rule, and whether AgentV has it (an eval file may name only those). The loader's schema,
the CLI's `--trials-strategy`, the orchestrator's trial loop and the paired report read this table.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .jscompat import js_sum

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


def _pass_at_k(scores: Sequence[float], passed: int) -> tuple[float, dict[str, Any]]:
    return max(scores), {"strategy": "pass_at_k", "passed_attempts": passed, "total_attempts": len(scores)}


def _pass_hat_k(scores: Sequence[float], passed: int) -> tuple[float, dict[str, Any]]:
    return min(scores), {"strategy": "pass_hat_k", "min": min(scores), "total_attempts": len(scores)}


def _mean(scores: Sequence[float], passed: int) -> tuple[float, dict[str, Any]]:
    mean = js_sum(scores) / len(scores)  # AgentV's reduce, left to right (see js_sum)
    return mean, {"strategy": "mean", "mean": mean, "min": min(scores), "max": max(scores)}


def _confidence_interval(scores: Sequence[float], passed: int) -> tuple[float, dict[str, Any]]:
    n = len(scores)
    mean = js_sum(scores) / n
    if n < 2:
        return mean, {"strategy": "confidence_interval", "mean": mean, "ci95_lower": _clamp(mean),
                      "ci95_upper": _clamp(mean), "stddev": 0.0}
    stddev = math.sqrt(js_sum((s - mean) ** 2 for s in scores) / (n - 1))
    margin = t_critical(n - 1) * stddev / math.sqrt(n)
    lower = _clamp(mean - margin)
    return lower, {"strategy": "confidence_interval", "mean": mean, "ci95_lower": lower,
                   "ci95_upper": _clamp(mean + margin), "stddev": stddev}


Verdict = Literal["any_pass", "every_pass", "score"]
"""`any_pass`: the case passes when one trial passed its threshold; `every_pass`: only when every trial
did (a trial not run, cut short by a cost limit, never passed); `score`: the strategy's score against
the case's threshold. Whatever the rule, a trial that errored makes the case an error, except that one
passing trial passes an `any_pass` case."""


@dataclass(frozen=True)
class Strategy:
    score: Callable[[Sequence[float], int], tuple[float, dict[str, Any]]]
    """The score rule: the scored trials' scores, and how many trials passed AgentV's verdict -> (the case's
    score, AgentV's `aggregation` object)."""
    verdict: Verdict
    stops_at_first_pass: bool = False
    """The stop rule: AgentV runs no trial after the first that passes (`--trials N` runs them all)."""
    agentv: bool = True
    """AgentV has it, so an eval file may name it; else only `--trials-strategy` does."""

    @property
    def shows_best_trial(self) -> bool:
        """Which trial's row the case shows: the best one where one pass passes, else the worst."""
        return self.verdict == "any_pass"


STRATEGIES: dict[str, Strategy] = {
    "pass_at_k": Strategy(_pass_at_k, "any_pass", stops_at_first_pass=True),
    "mean": Strategy(_mean, "score"),
    "confidence_interval": Strategy(_confidence_interval, "score"),
    "pass_hat_k": Strategy(_pass_hat_k, "every_pass", agentv=False),
}
"""Every trial strategy, AgentV's first; `pass_at_k` is the default."""

AGENTV_STRATEGIES = tuple(name for name, strategy in STRATEGIES.items() if strategy.agentv)
"""The strategies an eval file may name (`execution.trials.strategy`)."""


def aggregate(strategy: str, scores: Sequence[float], passed: int) -> tuple[float, dict[str, Any]]:
    """(the case's score, AgentV's `aggregation` object) for the scores of the trials that were scored.

    `passed` is how many trials passed the gate (pass_at_k reports it)."""
    if not scores:
        return 0.0, {"strategy": strategy}
    return STRATEGIES[strategy].score(scores, passed)
