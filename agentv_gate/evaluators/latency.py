"""`latency`: the target answered within `threshold` milliseconds (its reported `duration_ms`)."""

from __future__ import annotations

from ..models import EvaluationContext, EvaluationScore, LatencyConfig
from .metrics import fmt, within_budget


class LatencyEvaluator:
    def evaluate(self, config: LatencyConfig, context: EvaluationContext) -> EvaluationScore:
        return within_budget(context.duration_ms, config.threshold, "duration_ms", "latency",
                             lambda duration, op: f"Duration {fmt(duration)}ms {op} {fmt(config.threshold)}ms threshold")
