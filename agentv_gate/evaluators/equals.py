"""`equals`: the answer is exactly a value (AgentV: `output.trim() === value.trim()`).

`trim: false` compares untrimmed. A non-string value (a number, an object) is compared as JSON:
the answer must parse to an equal JSON value, so `value: 42` accepts "42" and "42.0".
"""

from __future__ import annotations

import json

from ..javascript import js_trim
from ..models import EqualsConfig, EvaluationContext, EvaluationScore
from .base import binary
from .json_extract import json_equal, loads_strict


class EqualsEvaluator:
    def evaluate(self, config: EqualsConfig, context: EvaluationContext) -> EvaluationScore:
        output = context.candidate or ""
        if isinstance(config.value, str):
            expected = config.value
            passed = (js_trim(output) == js_trim(expected)) if config.trim else output == expected
            return binary(passed, f'Output equals "{expected}"', f'Output does not equal "{expected}"')
        shown = json.dumps(config.value, ensure_ascii=False)
        try:
            passed = json_equal(loads_strict(js_trim(output)), config.value)
        except ValueError:
            passed = False
        return binary(passed, f"Output equals {shown}", f"Output does not equal {shown}")
