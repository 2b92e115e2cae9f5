"""`starts_with` / `ends_with`: AgentV 3+'s prefix and suffix assertions (both sides trimmed)."""

from __future__ import annotations

from ..models import AffixConfig, EvaluationScore
from .base import EvaluationContext, binary, wrong_config


class AffixEvaluator:
    def __init__(self, kind: str):
        self.kind = kind

    def evaluate(self, context: EvaluationContext) -> EvaluationScore:
        config = context.evaluator
        if not isinstance(config, AffixConfig) or config.type != self.kind:
            return wrong_config(self.kind, context)
        output, value = (context.candidate or "").strip(), config.value.strip()
        if self.kind == "starts_with":
            return binary(output.startswith(value), f'Output starts with "{value}"', f'Output does not start with "{value}"')
        return binary(output.endswith(value), f'Output ends with "{value}"', f'Output does not end with "{value}"')
