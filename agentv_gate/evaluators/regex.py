"""`regex`: the answer matches a pattern (AgentV: `new RegExp(pattern, flags).test(output)`).

Patterns are written for JavaScript in AgentV suites, so JavaScript flags are accepted (`i`,
`m`, `s`, `u`, `v`; `g` and `d` change nothing for a single test; `y`, sticky, tries position 0 only,
as a fresh JavaScript RegExp's `test` does). `javascript.compile_js_regex` translates the pattern to a
Python one meaning what JavaScript means, or refuses it; the loader has refused those before the run.
"""

from __future__ import annotations

from ..base.jscompat import compile_js_regex
from ..models import EvaluationContext, EvaluationScore, RegexConfig
from .base import binary


class RegexEvaluator:
    def evaluate(self, config: RegexConfig, context: EvaluationContext) -> EvaluationScore:
        try:
            compiled = compile_js_regex(config.value, config.flags)
        except ValueError as exc:
            message = f"regex evaluator '{config.name}': {exc}"
            return EvaluationScore(score=0.0, misses=[message], error=message)
        flags = config.flags or ""
        label = f"/{config.value}/{flags}" + (f" (flags: {flags})" if flags else "")
        passed = compiled.test(context.candidate or "")  # sticky, and UTF-16 units without u, as JavaScript does
        return binary(passed, f"Output matches pattern {label}", f"Output does not match pattern {label}")
