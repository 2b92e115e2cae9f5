"""`regex`: the answer matches a pattern (AgentV: `new RegExp(pattern, flags).test(output)`).

Patterns are written for JavaScript in AgentV suites, so JavaScript flags are accepted (`i`,
`m`, `s`; `g`, `u`, `d`, `v` change nothing for a single test; `y`, sticky, tries position 0 only, as
a fresh JavaScript RegExp's `test` does) and `(?<name>...)` groups are
rewritten to Python's `(?P<name>...)` (and `\\k<name>` to `(?P=name)`); without `m`, `$` is the end of
the answer, as in JavaScript (Python's `$` also matches before a last newline). A pattern that does
not compile is a config error.
"""

from __future__ import annotations

from ..javascript import compile_js_regex
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
        find = compiled.match if "y" in flags else compiled.search  # sticky: at lastIndex 0, never further on
        passed = find(context.candidate or "") is not None
        return binary(passed, f"Output matches pattern {label}", f"Output does not match pattern {label}")
