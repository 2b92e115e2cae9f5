"""`cost`: the target's reported `cost_usd` is within `budget`."""

from __future__ import annotations

from ..models import CostConfig, EvaluationContext, EvaluationScore
from .metrics import within_budget


class CostEvaluator:
    def evaluate(self, config: CostConfig, context: EvaluationContext) -> EvaluationScore:
        return within_budget(context.cost_usd, config.budget, "cost_usd", "cost",
                             lambda cost, op: f"Cost ${cost:.4f} {op} ${config.budget:.4f} budget")
