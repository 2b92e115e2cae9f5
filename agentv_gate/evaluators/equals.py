"""`equals`: the answer is exactly a text value (AgentV: `output.trim() === value.trim()`).

`trim: false` would compare untrimmed, but AgentV always trims, so the loader refuses it. The value
is always text: AgentV skips an equals whose value is a number or a mapping, so the loader refuses
one (see `EqualsConfig`).
"""

from __future__ import annotations

from ..base.jscompat import js_trim
from ..models import EqualsConfig, EvaluationContext, EvaluationScore
from .base import binary


class EqualsEvaluator:
    def evaluate(self, config: EqualsConfig, context: EvaluationContext) -> EvaluationScore:
        output, expected = context.candidate or "", config.value
        passed = (js_trim(output) == js_trim(expected)) if config.trim else output == expected
        return binary(passed, f'Output equals "{expected}"', f'Output does not equal "{expected}"')
