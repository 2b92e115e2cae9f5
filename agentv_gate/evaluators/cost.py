"""`cost`: the target's reported `cost_usd` is within `budget`."""

from __future__ import annotations

from ..models import CostConfig, EvaluationContext, EvaluationScore
from .base import binary
from .metrics import reported_number


class CostEvaluator:
    def evaluate(self, config: CostConfig, context: EvaluationContext) -> EvaluationScore:
        cost = reported_number(context.cost_usd)
        if cost is None:
            return binary(False, "", "cost_usd not reported by the target: cost cannot be checked")
        passed = cost <= config.budget
        line = f"Cost ${cost:.4f} {'<=' if passed else '>'} ${config.budget:.4f} budget"
        return binary(passed, line, line)
