"""The target's execution metrics as the budget evaluators read them: a number, or None when not reported.

A metric the target did not report is never taken as 0 (which would pass every budget): the
evaluator that needs it scores 0 with a miss naming it, as AgentV does.
"""

from __future__ import annotations

import math
from typing import Any


def reported_number(value: Any) -> float | None:
    """A finite, non-negative number, else None (missing, null, text, a bool, NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        return None
    return float(value)


def token_part(usage: dict[str, Any] | None, key: str) -> float | None:
    return reported_number(usage.get(key)) if isinstance(usage, dict) else None


def fmt(value: float) -> str:
    """12.0 -> "12", 0.0125 -> "0.0125": metrics read as the user wrote their limits."""
    return f"{value:g}"
