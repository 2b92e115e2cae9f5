"""Evaluator config classes -> evaluator objects, and the one safe way to run an evaluator.

The registry is keyed by config class (`ContainsConfig` -> `ContainsEvaluator`), so the config an
evaluator receives is always its own kind: the loader rejects an unknown `type:`, and a config
object can only be one of `models.EvaluatorConfig`'s classes. `build_evaluator_registry` makes one
shared instance per class (evaluators hold no per-case state). `overrides`, keyed the same way,
replace built-ins, which is how tests and embedders plug in their own judge.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from ..errors import UnknownEvaluatorError
from ..models import (
    DEFAULT_JUDGE_TIMEOUT_SECONDS,
    AffixConfig,
    CodeJudgeConfig,
    CompositeConfig,
    ContainsConfig,
    CostConfig,
    CustomAssertionConfig,
    EqualsConfig,
    EvaluationContext,
    EvaluationScore,
    ExecutionMetricsConfig,
    FieldAccuracyConfig,
    IsJsonConfig,
    LatencyConfig,
    LlmJudgeConfig,
    RegexConfig,
    SkillTriggerConfig,
    TokenUsageConfig,
    ToolTrajectoryConfig,
)
from .affix import AffixEvaluator
from .base import Evaluator, ResolveJudgeProvider
from .code_judge import CodeJudgeEvaluator
from .composite import CompositeEvaluator
from .contains import ContainsEvaluator
from .cost import CostEvaluator
from .custom_assertion import CustomAssertionEvaluator
from .equals import EqualsEvaluator
from .execution_metrics import ExecutionMetricsEvaluator
from .field_accuracy import FieldAccuracyEvaluator
from .is_json import IsJsonEvaluator
from .latency import LatencyEvaluator
from .regex import RegexEvaluator
from .skill_trigger import SkillTriggerEvaluator
from .target_proxy import CaseTargets, NamedTargets
from .token_usage import TokenUsageEvaluator
from .tool_trajectory import ToolTrajectoryEvaluator

EvaluatorRegistry = Mapping[type[BaseModel], Evaluator[Any]]
"""Config class -> the evaluator for configs of that class."""

_C = TypeVar("_C", bound=BaseModel)


def evaluate_safely(registry: EvaluatorRegistry, context: EvaluationContext) -> EvaluationScore:
    """Run the evaluator for `context.evaluator`; any exception becomes a score-0 error result.

    AgentV's rule: one failing evaluator scores 0 with `Evaluator '<name>' failed: <msg>` and
    the others still run. The config's class picks the evaluator, so no evaluator checks its
    config again.
    """
    config = context.evaluator
    try:
        evaluator = registry.get(type(config))
        if evaluator is None:  # a wiring bug (an override map left a class out); a test pins the built-ins
            raise UnknownEvaluatorError(f"no evaluator for type '{config.type}'")
        return evaluator.evaluate(config, context)
    except Exception as exc:  # noqa: BLE001 - a broken evaluator is a result, never a crash
        message = str(exc) if isinstance(exc, UnknownEvaluatorError) else f"{type(exc).__name__}: {exc}"
        return EvaluationScore(score=0.0, misses=[f"Evaluator '{config.name}' failed: {message}"],
                               reasoning=message, error=message)


def _register(registry: dict[type[BaseModel], Evaluator[Any]], config_class: type[_C],
              evaluator: Evaluator[_C]) -> None:
    """One entry, with the type checker holding the evaluator to the config class it is filed under."""
    registry[config_class] = evaluator


def build_evaluator_registry(
    overrides: EvaluatorRegistry | None = None,
    resolve_judge_provider: ResolveJudgeProvider | None = None,
    *,
    judge_timeout_seconds: float = DEFAULT_JUDGE_TIMEOUT_SECONDS,
    max_output_tokens: int | None = None,
    temperature: float | None = None,
    targets: NamedTargets | CaseTargets | None = None,
) -> dict[type[BaseModel], Evaluator[Any]]:
    """An evaluator for every config class, with `overrides` applied last (composite members use them too)."""
    registry: dict[type[BaseModel], Evaluator[Any]] = {}
    _register(registry, CodeJudgeConfig, CodeJudgeEvaluator(default_timeout_seconds=judge_timeout_seconds,
                                                            resolve_judge_provider=resolve_judge_provider,
                                                            targets=targets))
    _register(registry, ContainsConfig, ContainsEvaluator())
    _register(registry, RegexConfig, RegexEvaluator())
    _register(registry, EqualsConfig, EqualsEvaluator())
    _register(registry, IsJsonConfig, IsJsonEvaluator())
    _register(registry, AffixConfig, AffixEvaluator())
    _register(registry, FieldAccuracyConfig, FieldAccuracyEvaluator())
    _register(registry, ToolTrajectoryConfig, ToolTrajectoryEvaluator())
    _register(registry, LatencyConfig, LatencyEvaluator())
    _register(registry, CostConfig, CostEvaluator())
    _register(registry, TokenUsageConfig, TokenUsageEvaluator())
    _register(registry, ExecutionMetricsConfig, ExecutionMetricsEvaluator())
    _register(registry, SkillTriggerConfig, SkillTriggerEvaluator())
    _register(registry, CustomAssertionConfig, CustomAssertionEvaluator(default_timeout_seconds=judge_timeout_seconds))
    _register(registry, CompositeConfig, CompositeEvaluator(
        run_member=lambda context: evaluate_safely(registry, context),
        resolve_judge_provider=resolve_judge_provider,
        default_timeout_seconds=judge_timeout_seconds,
    ))
    if not overrides or LlmJudgeConfig not in overrides:
        from .llm_judge import DEFAULT_JUDGE_TEMPERATURE, LlmJudgeEvaluator  # lazy: only needed when used

        _register(registry, LlmJudgeConfig, LlmJudgeEvaluator(
            resolve_judge_provider=resolve_judge_provider, max_output_tokens=max_output_tokens,
            temperature=DEFAULT_JUDGE_TEMPERATURE if temperature is None else temperature,
            default_timeout_seconds=judge_timeout_seconds))
    registry.update(overrides or {})
    return registry
