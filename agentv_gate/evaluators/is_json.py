"""`is_json`: the whole answer parses as JSON (AgentV: `JSON.parse(output)` succeeds).

Strict like JavaScript: fenced or prose-wrapped JSON is not JSON, and neither is `NaN`.
"""

from __future__ import annotations

from ..models import EvaluationScore, IsJsonConfig
from .base import EvaluationContext, binary, wrong_config
from .json_extract import loads_strict


class IsJsonEvaluator:
    kind = "is_json"

    def evaluate(self, context: EvaluationContext) -> EvaluationScore:
        if not isinstance(context.evaluator, IsJsonConfig):
            return wrong_config(self.kind, context)
        try:
            loads_strict(context.candidate or "")
            passed = True
        except ValueError:
            passed = False
        return binary(passed, "Output is valid JSON", "Output is not valid JSON")
