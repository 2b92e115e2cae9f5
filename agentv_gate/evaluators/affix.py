"""`starts_with` / `ends_with`: AgentV 3+'s prefix and suffix assertions (both sides trimmed, as JavaScript trims)."""

from __future__ import annotations

from ..base.jscompat import js_trim
from ..models import AffixConfig, EvaluationContext, EvaluationScore
from .base import binary


class AffixEvaluator:
    def evaluate(self, config: AffixConfig, context: EvaluationContext) -> EvaluationScore:
        output, value = js_trim(context.candidate or ""), js_trim(config.value)
        if config.type == "starts_with":
            return binary(output.startswith(value), f'Output starts with "{value}"', f'Output does not start with "{value}"')
        return binary(output.endswith(value), f'Output ends with "{value}"', f'Output does not end with "{value}"')
