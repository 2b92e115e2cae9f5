"""`is_json`: the whole answer parses as JSON (AgentV: `JSON.parse(output)` succeeds).

Strict like JavaScript: fenced or prose-wrapped JSON is not JSON, and neither is `NaN`.
"""

from __future__ import annotations

from ..models import EvaluationContext, EvaluationScore, IsJsonConfig
from .base import binary
from .json_extract import loads_strict


class IsJsonEvaluator:
    def evaluate(self, config: IsJsonConfig, context: EvaluationContext) -> EvaluationScore:
        try:
            loads_strict(context.candidate or "")
            passed = True
        except ValueError:
            passed = False
        return binary(passed, "Output is valid JSON", "Output is not valid JSON")
