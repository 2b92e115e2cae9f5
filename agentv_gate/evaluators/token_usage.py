"""`token_usage`: every limit given holds for the target's reported tokens; 1 or 0, never partial.

Total is input + output + cached (cached counted only when reported), as AgentV sums it.
"""

from __future__ import annotations

from ..models import EvaluationContext, EvaluationScore, TokenUsageConfig
from .metrics import LimitChecks, not_reported, token_part, token_total


class TokenUsageEvaluator:
    def evaluate(self, config: TokenUsageConfig, context: EvaluationContext) -> EvaluationScore:
        usage = context.token_usage
        checks = LimitChecks()
        for label, key, actual, limit in (("Total tokens", "max_total", token_total(usage, cached=True), config.max_total),
                                          ("Input tokens", "max_input", token_part(usage, "input"), config.max_input),
                                          ("Output tokens", "max_output", token_part(usage, "output"), config.max_output)):
            if limit is not None:
                checks.at_most(label, actual, limit, not_reported("token_usage", key), shown_limit=str(limit))
        hits, misses = checks.hits, checks.misses
        passed = not misses and bool(hits)
        return EvaluationScore(score=1.0 if passed else 0.0, hits=hits, misses=misses,
                               reasoning="; ".join(hits + misses) or "no limit given", unchecked=checks.unchecked,
                               evaluator_raw_request={"type": "token_usage", "token_usage": usage})
