"""`token_usage`: every limit given holds for the target's reported tokens; 1 or 0, never partial.

Total is input + output + cached (cached counted only when reported), as AgentV sums it.
"""

from __future__ import annotations

from ..models import EvaluationContext, EvaluationScore, TokenUsageConfig
from .metrics import fmt, token_part


class TokenUsageEvaluator:
    def evaluate(self, config: TokenUsageConfig, context: EvaluationContext) -> EvaluationScore:
        usage = context.token_usage
        tokens_in, tokens_out = token_part(usage, "input"), token_part(usage, "output")
        total = None if tokens_in is None or tokens_out is None else \
            tokens_in + tokens_out + (token_part(usage, "cached") or 0.0)
        hits: list[str] = []
        misses: list[str] = []
        for label, key, actual, limit in (("Total tokens", "max_total", total, config.max_total),
                                          ("Input tokens", "max_input", tokens_in, config.max_input),
                                          ("Output tokens", "max_output", tokens_out, config.max_output)):
            if limit is None:
                continue
            if actual is None:
                misses.append(f"token_usage not reported by the target: {key} cannot be checked")
            elif actual <= limit:
                hits.append(f"{label} {fmt(actual)} <= {limit} max")
            else:
                misses.append(f"{label} {fmt(actual)} > {limit} max")
        passed = not misses and bool(hits)
        return EvaluationScore(score=1.0 if passed else 0.0, hits=hits, misses=misses,
                               expected_aspect_count=len(hits) + len(misses) or 1,
                               reasoning="; ".join(hits + misses) or "no limit given",
                               evaluator_raw_request={"type": "token_usage", "token_usage": usage})
