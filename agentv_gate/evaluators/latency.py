"""`latency`: the target answered within `threshold` milliseconds (its reported `duration_ms`)."""

from __future__ import annotations

from ..models import EvaluationContext, EvaluationScore, LatencyConfig
from .base import binary
from .metrics import fmt, reported_number


class LatencyEvaluator:
    def evaluate(self, config: LatencyConfig, context: EvaluationContext) -> EvaluationScore:
        duration = reported_number(context.duration_ms)
        if duration is None:
            return binary(False, "", "duration_ms not reported by the target: latency cannot be checked")
        passed = duration <= config.threshold
        line = f"Duration {fmt(duration)}ms {'<=' if passed else '>'} {fmt(config.threshold)}ms threshold"
        return binary(passed, line, line)
