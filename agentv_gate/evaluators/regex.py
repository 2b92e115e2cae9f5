"""`regex`: the answer matches a pattern (AgentV: `new RegExp(pattern, flags).test(output)`).

Patterns are written for JavaScript in AgentV suites, so JavaScript flags are accepted (`i`,
`m`, `s`; `g`, `u`, `y`, `d`, `v` change nothing for a single test) and `(?<name>...)` groups are
rewritten to Python's `(?P<name>...)` (and `\\k<name>` to `(?P=name)`). A pattern that does
not compile is a config error.
"""

from __future__ import annotations

import re

from ..models import EvaluationContext, EvaluationScore, RegexConfig
from .base import binary

_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "g": 0, "u": 0, "y": 0, "d": 0, "v": 0}
_JS_NAMED_GROUP = re.compile(r"\(\?<(?![=!])")
_JS_BACKREF = re.compile(r"\\k<([A-Za-z_][A-Za-z0-9_]*)>")


def compile_js_regex(pattern: str, flags: str | None) -> re.Pattern[str]:
    """Raises ValueError naming the bad flag or the compile error."""
    value = 0
    for flag in flags or "":
        if flag not in _FLAGS:
            raise ValueError(f"unknown regex flag {flag!r} (expected some of {''.join(_FLAGS)})")
        value |= _FLAGS[flag]
    try:
        translated = _JS_BACKREF.sub(r"(?P=\1)", _JS_NAMED_GROUP.sub("(?P<", pattern))
        return re.compile(translated, value)
    except re.error as exc:
        raise ValueError(f"invalid regex /{pattern}/: {exc}") from None


class RegexEvaluator:
    def evaluate(self, config: RegexConfig, context: EvaluationContext) -> EvaluationScore:
        try:
            compiled = compile_js_regex(config.value, config.flags)
        except ValueError as exc:
            message = f"regex evaluator '{config.name}': {exc}"
            return EvaluationScore(score=0.0, misses=[message], expected_aspect_count=1, error=message)
        flags = config.flags or ""
        label = f"/{config.value}/{flags}" + (f" (flags: {flags})" if flags else "")
        passed = compiled.search(context.candidate or "") is not None
        return binary(passed, f"Output matches pattern {label}", f"Output does not match pattern {label}")
