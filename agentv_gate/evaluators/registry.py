"""Evaluator kinds -> evaluator objects, and the one safe way to run an evaluator.

`build_evaluator_registry` makes one shared instance per kind (evaluators hold no per-case
state; each reads its config from `context.evaluator`). `overrides` replace or add kinds, which
is how tests and embedders plug in their own judge. As in AgentV, a kind the registry lacks
falls back to `llm_judge`; with no `llm_judge` either, lookup fails with a clear error.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import UnknownEvaluatorError
from ..models import DEFAULT_JUDGE_TIMEOUT_SECONDS, EvaluationScore
from .affix import AffixEvaluator
from .base import EvaluationContext, Evaluator, ResolveJudgeProvider
from .code_judge import CodeJudgeEvaluator
from .composite import CompositeEvaluator
from .contains import ContainsEvaluator
from .equals import EqualsEvaluator
from .field_accuracy import FieldAccuracyEvaluator
from .is_json import IsJsonEvaluator
from .regex import RegexEvaluator

FALLBACK_KIND = "llm_judge"


def get_evaluator(registry: Mapping[str, Evaluator], kind: str) -> Evaluator:
    evaluator = registry.get(kind)
    if evaluator is not None:
        return evaluator
    fallback = registry.get(FALLBACK_KIND)
    if fallback is not None:
        return fallback
    known = ", ".join(sorted(registry)) or "none"
    raise UnknownEvaluatorError(f"no evaluator for type '{kind}' and no '{FALLBACK_KIND}' to fall back to "
                                f"(registered: {known})")


def evaluate_safely(registry: Mapping[str, Evaluator], context: EvaluationContext) -> EvaluationScore:
    """Run the evaluator for `context.evaluator`; any exception becomes a score-0 error result.

    AgentV's rule: one failing evaluator scores 0 with `Evaluator '<name>' failed: <msg>` and
    the others still run.
    """
    config = context.evaluator
    try:
        return get_evaluator(registry, config.type).evaluate(context)
    except Exception as exc:  # noqa: BLE001 - a broken evaluator is a result, never a crash
        message = str(exc) if isinstance(exc, UnknownEvaluatorError) else f"{type(exc).__name__}: {exc}"
        return EvaluationScore(score=0.0, misses=[f"Evaluator '{config.name}' failed: {message}"],
                               expected_aspect_count=1, reasoning=message, error=message)


def build_evaluator_registry(
    overrides: Mapping[str, Evaluator] | None = None,
    resolve_judge_provider: ResolveJudgeProvider | None = None,
    *,
    judge_timeout_seconds: float = DEFAULT_JUDGE_TIMEOUT_SECONDS,
    max_output_tokens: int | None = None,
    temperature: float | None = None,
) -> dict[str, Evaluator]:
    """Every built-in kind, with `overrides` applied last (composite members use them too)."""
    registry: dict[str, Evaluator] = {}
    registry["code_judge"] = CodeJudgeEvaluator(default_timeout_seconds=judge_timeout_seconds)
    registry["contains"] = ContainsEvaluator()
    registry["regex"] = RegexEvaluator()
    registry["equals"] = EqualsEvaluator()
    registry["is_json"] = IsJsonEvaluator()
    registry["starts_with"] = AffixEvaluator("starts_with")
    registry["ends_with"] = AffixEvaluator("ends_with")
    registry["field_accuracy"] = FieldAccuracyEvaluator()
    registry["composite"] = CompositeEvaluator(
        run_member=lambda context: evaluate_safely(registry, context),
        resolve_judge_provider=resolve_judge_provider,
        default_timeout_seconds=judge_timeout_seconds,
    )
    if not overrides or FALLBACK_KIND not in overrides:
        from .llm_judge import DEFAULT_JUDGE_TEMPERATURE, LlmJudgeEvaluator  # lazy: only needed when used

        registry[FALLBACK_KIND] = LlmJudgeEvaluator(
            resolve_judge_provider=resolve_judge_provider, max_output_tokens=max_output_tokens,
            temperature=DEFAULT_JUDGE_TEMPERATURE if temperature is None else temperature,
            default_timeout_seconds=judge_timeout_seconds)
    registry.update(overrides or {})
    return registry
