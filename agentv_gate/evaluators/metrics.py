"""The target's execution metrics as the budget evaluators read them: a number, or None when not reported.

A metric the target did not report is never taken as 0 (which would pass every budget): the
evaluator that needs it scores 0 with a miss naming it, as AgentV does. `within_budget` is the
one-check shape of `cost` and `latency`; `LimitChecks` the one-line-per-limit shape of
`token_usage` and `execution_metrics`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..base.jscompat import reported_number
from ..models import EvaluationScore
from .base import binary


def token_part(usage: dict[str, Any] | None, key: str) -> float | None:
    return reported_number(usage.get(key)) if isinstance(usage, dict) else None


def token_total(usage: dict[str, Any] | None, *, cached: bool) -> float | None:
    """Input + output tokens, plus cached ones where reported when `cached` (AgentV's `token_usage`
    counts them, its `execution_metrics` does not); None unless input and output are both reported."""
    tokens_in, tokens_out = token_part(usage, "input"), token_part(usage, "output")
    if tokens_in is None or tokens_out is None:
        return None
    return tokens_in + tokens_out + ((token_part(usage, "cached") or 0.0) if cached else 0.0)


def fmt(value: float) -> str:
    """12.0 -> "12", 0.0125 -> "0.0125": metrics read as the user wrote their limits."""
    return f"{value:g}"


def not_reported(metric: str, check: str) -> str:
    """The miss of a check whose metric the target did not report."""
    return f"{metric} not reported by the target: {check} cannot be checked"


NO_DATA = {"duration_ms": "No duration data available in trace", "cost_usd": "No cost data available in trace",
           "token_usage": "No token usage data available in trace"}
"""AgentV 2.19's miss, word for word, when the target reported no such metric (latency, cost, token-usage)."""


def within_budget(value: Any, limit: float, metric: str, check: str,
                  line: Callable[[float, str], str]) -> EvaluationScore:
    """1 when the reported `value` is at most `limit`, else 0. `line(value, "<=" or ">")` is the hit or
    miss saying so; a value not reported is AgentV's miss for it (`NO_DATA`), else `not_reported(metric, check)`."""
    actual = reported_number(value)
    if actual is None:
        missing = NO_DATA.get(metric) or not_reported(metric, check)
        return binary(False, "", missing).model_copy(update={"unchecked": [missing]})
    passed = actual <= limit
    text = line(actual, "<=" if passed else ">")
    return binary(passed, text, text)


@dataclass
class LimitChecks:
    """The hits and misses of several `at most` limits, one line each."""

    hits: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    """The misses of limits whose metric was not reported (see `EvaluationScore.unchecked`)."""

    def at_most(self, label: str, actual: float | None, limit: float, missing: str, *, unit: str = "",
                shown_limit: str | None = None, shown_actual: str | None = None, suffix: str = " max") -> None:
        """A hit when `actual <= limit`, else a miss; `missing` is the miss when `actual` was not reported.
        The numbers are shown as `fmt` writes them unless `shown_limit`/`shown_actual` say otherwise."""
        shown = fmt(limit) if shown_limit is None else shown_limit
        if actual is None:
            self.misses.append(missing)
            self.unchecked.append(missing)
            return
        value = fmt(actual) if shown_actual is None else shown_actual
        if actual <= limit:
            self.hits.append(f"{label} {value}{unit} <= {shown}{unit}{suffix}")
        else:
            self.misses.append(f"{label} {value}{unit} > {shown}{unit}{suffix}")
