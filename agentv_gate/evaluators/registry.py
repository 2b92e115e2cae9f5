"""Evaluator config classes -> evaluator objects, and the one safe way to run an evaluator.

The registry is keyed by config class (`ContainsConfig` -> `ContainsEvaluator`), so the config an
evaluator receives is always its own kind: the loader rejects an unknown `type:`, and a config
object can only be one of `models.EvaluatorConfig`'s classes. `build_evaluator_registry` makes one
shared instance per class (evaluators hold no per-case state). `overrides`, keyed the same way,
replace built-ins, which is how tests and embedders plug in their own judge.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from ..errors import UnknownEvaluatorError
from ..judging.redacted import judged_context
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
from .base import Evaluator, ResolveJudgeProvider

if TYPE_CHECKING:
    from .target_proxy import CaseTargets, NamedTargets

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
        if isinstance(config, JUDGE_CONFIGS):  # what it sends leaves the process: never a configured secret
            context = judged_context(context)
        return evaluator.evaluate(config, context)
    except Exception as exc:  # noqa: BLE001 - a broken evaluator is a result, never a crash
        message = str(exc) if isinstance(exc, UnknownEvaluatorError) else f"{type(exc).__name__}: {exc}"
        return EvaluationScore(score=0.0, misses=[f"Evaluator '{config.name}' failed: {message}"],
                               reasoning=message, error=message)


JUDGE_CONFIGS = (CodeJudgeConfig, CustomAssertionConfig, LlmJudgeConfig)
"""The evaluators that hand the case to a program or a model (a code judge or grader, a suite's own assertion,
an LLM judge with its prompt templates, rubrics and agentic modes): each is given the context with every
configured secret hidden (judging/redacted.py). A composite is not among them: its members are evaluated
here one by one, each as its kind says, and its aggregator's input is redacted where it is built."""

Factory = Callable[[], Evaluator[Any]]


class _Registry(Mapping[type[BaseModel], Evaluator[Any]]):
    """A config class -> its evaluator, made (and its module imported) when first asked for: a run pays
    for the evaluator kinds its suites use. Every config class is a key from the start. Workers ask
    from several threads; each evaluator is made once."""

    def __init__(self, factories: dict[type[BaseModel], Factory]) -> None:
        self._factories = factories
        self._made: dict[type[BaseModel], Evaluator[Any]] = {}
        self._lock = threading.Lock()

    def __getitem__(self, config_class: type[BaseModel]) -> Evaluator[Any]:
        made = self._made.get(config_class)
        if made is not None:
            return made
        factory = self._factories[config_class]  # KeyError for a class not registered, as a dict's
        with self._lock:
            if config_class not in self._made:
                self._made[config_class] = factory()
            return self._made[config_class]

    def __iter__(self) -> Iterator[type[BaseModel]]:
        return iter(self._factories)

    def __len__(self) -> int:
        return len(self._factories)


def _register(registry: dict[type[BaseModel], Factory], config_class: type[_C], make: Callable[[], Evaluator[_C]]) -> None:
    """One entry, with the type checker holding the evaluator to the config class it is filed under."""
    registry[config_class] = make


def build_evaluator_registry(
    overrides: EvaluatorRegistry | None = None,
    resolve_judge_provider: ResolveJudgeProvider | None = None,
    *,
    judge_timeout_seconds: float = DEFAULT_JUDGE_TIMEOUT_SECONDS,
    max_output_tokens: int | None = None,
    temperature: float | None = None,
    targets: NamedTargets | CaseTargets | None = None,
) -> EvaluatorRegistry:
    """An evaluator for every config class, with `overrides` applied last (composite members use them too).
    Each built-in's module is imported the first time a config of its class is evaluated (function-level
    imports below): an evaluator holds no per-case state, so the one made then serves the whole run."""
    factories: dict[type[BaseModel], Factory] = {}

    def code_judge() -> Evaluator[CodeJudgeConfig]:
        from .code_judge import CodeJudgeEvaluator

        return CodeJudgeEvaluator(default_timeout_seconds=judge_timeout_seconds,
                                  resolve_judge_provider=resolve_judge_provider, targets=targets)

    def contains() -> Evaluator[ContainsConfig]:
        from .contains import ContainsEvaluator

        return ContainsEvaluator()

    def regex() -> Evaluator[RegexConfig]:
        from .regex import RegexEvaluator

        return RegexEvaluator()

    def equals() -> Evaluator[EqualsConfig]:
        from .equals import EqualsEvaluator

        return EqualsEvaluator()

    def is_json() -> Evaluator[IsJsonConfig]:
        from .is_json import IsJsonEvaluator

        return IsJsonEvaluator()

    def affix() -> Evaluator[AffixConfig]:
        from .affix import AffixEvaluator

        return AffixEvaluator()

    def field_accuracy() -> Evaluator[FieldAccuracyConfig]:
        from .field_accuracy import FieldAccuracyEvaluator

        return FieldAccuracyEvaluator()

    def tool_trajectory() -> Evaluator[ToolTrajectoryConfig]:
        from .tool_trajectory import ToolTrajectoryEvaluator

        return ToolTrajectoryEvaluator()

    def latency() -> Evaluator[LatencyConfig]:
        from .latency import LatencyEvaluator

        return LatencyEvaluator()

    def cost() -> Evaluator[CostConfig]:
        from .cost import CostEvaluator

        return CostEvaluator()

    def token_usage() -> Evaluator[TokenUsageConfig]:
        from .token_usage import TokenUsageEvaluator

        return TokenUsageEvaluator()

    def execution_metrics() -> Evaluator[ExecutionMetricsConfig]:
        from .execution_metrics import ExecutionMetricsEvaluator

        return ExecutionMetricsEvaluator()

    def skill_trigger() -> Evaluator[SkillTriggerConfig]:
        from .skill_trigger import SkillTriggerEvaluator

        return SkillTriggerEvaluator()

    def custom_assertion() -> Evaluator[CustomAssertionConfig]:
        from .custom_assertion import CustomAssertionEvaluator

        return CustomAssertionEvaluator(default_timeout_seconds=judge_timeout_seconds)

    def composite() -> Evaluator[CompositeConfig]:
        from .composite import CompositeEvaluator

        return CompositeEvaluator(run_member=lambda context: evaluate_safely(registry, context),
                                  resolve_judge_provider=resolve_judge_provider,
                                  default_timeout_seconds=judge_timeout_seconds)

    def llm_judge() -> Evaluator[LlmJudgeConfig]:
        from .llm_judge import DEFAULT_JUDGE_TEMPERATURE, LlmJudgeEvaluator

        return LlmJudgeEvaluator(resolve_judge_provider=resolve_judge_provider, max_output_tokens=max_output_tokens,
                                 temperature=DEFAULT_JUDGE_TEMPERATURE if temperature is None else temperature,
                                 default_timeout_seconds=judge_timeout_seconds)

    _register(factories, CodeJudgeConfig, code_judge)
    _register(factories, ContainsConfig, contains)
    _register(factories, RegexConfig, regex)
    _register(factories, EqualsConfig, equals)
    _register(factories, IsJsonConfig, is_json)
    _register(factories, AffixConfig, affix)
    _register(factories, FieldAccuracyConfig, field_accuracy)
    _register(factories, ToolTrajectoryConfig, tool_trajectory)
    _register(factories, LatencyConfig, latency)
    _register(factories, CostConfig, cost)
    _register(factories, TokenUsageConfig, token_usage)
    _register(factories, ExecutionMetricsConfig, execution_metrics)
    _register(factories, SkillTriggerConfig, skill_trigger)
    _register(factories, CustomAssertionConfig, custom_assertion)
    _register(factories, CompositeConfig, composite)
    _register(factories, LlmJudgeConfig, llm_judge)
    factories.update({config_class: _given(evaluator) for config_class, evaluator in (overrides or {}).items()})
    registry = _Registry(factories)
    return registry


def _given(evaluator: Evaluator[Any]) -> Factory:
    return lambda: evaluator

