"""`token_usage`: every limit given holds for the target's reported tokens; 1 or 0, never partial.

Total is input + output + cached (cached counted only when reported), as AgentV sums it.
"""

from __future__ import annotations

from ..models import EvaluationContext, EvaluationScore, TokenUsageConfig
from .metrics import NO_DATA, LimitChecks, not_reported, token_part, token_total


class TokenUsageEvaluator:
    def evaluate(self, config: TokenUsageConfig, context: EvaluationContext) -> EvaluationScore:
        usage = context.token_usage
        checks = LimitChecks()
        if not isinstance(usage, dict):  # AgentV's one miss for a target that reported no usage at all
            checks.misses.append(NO_DATA["token_usage"])
            checks.unchecked.append(NO_DATA["token_usage"])
        # AgentV's order: input, output, then total
        for label, key, actual, limit in (("Input tokens", "max_input", token_part(usage, "input"), config.max_input),
                                          ("Output tokens", "max_output", token_part(usage, "output"), config.max_output),
                                          ("Total tokens", "max_total", token_total(usage, cached=True), config.max_total)):
            if limit is not None and isinstance(usage, dict):
                checks.at_most(label, actual, limit, not_reported("token_usage", key), shown_limit=str(limit),
                               suffix="")  # AgentV: "Input tokens 12 <= 100", no "max"
        hits, misses = checks.hits, checks.misses
        passed = not misses and bool(hits)
        return EvaluationScore(score=1.0 if passed else 0.0, hits=hits, misses=misses,
                               reasoning="; ".join(hits + misses) or "no limit given", unchecked=checks.unchecked,
                               evaluator_raw_request={"type": "token_usage", "token_usage": usage})
