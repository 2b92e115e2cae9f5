"""The evaluator registry: one evaluator per config class, overrides, and errors as results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentv_gate.evaluators.affix import AffixEvaluator
from agentv_gate.evaluators.code_judge import CodeJudgeEvaluator
from agentv_gate.evaluators.registry import build_evaluator_registry, evaluate_safely
from agentv_gate.models import (
    EVALUATOR_CONFIG_CLASSES,
    EVALUATOR_KINDS,
    AffixConfig,
    CodeJudgeConfig,
    CompositeConfig,
    ContainsConfig,
    EvalCase,
    EvaluationContext,
    EvaluationScore,
    LlmJudgeConfig,
)


class Fixed:
    def __init__(self, kind: str, score: float) -> None:
        self.kind = kind
        self.score = score
        self.seen: list[str] = []

    def evaluate(self, config: Any, context: EvaluationContext) -> EvaluationScore:
        assert config is context.evaluator
        self.seen.append(config.name)
        return EvaluationScore(score=self.score, hits=[f"{self.kind} judged"])


class Exploding:
    def evaluate(self, config: ContainsConfig, context: EvaluationContext) -> EvaluationScore:
        raise RuntimeError("boom")


def context(config: Any, candidate: str = "Paris") -> EvaluationContext:
    case = EvalCase(id="c", source_file=Path("/tmp/x.eval.yaml"), suite="x", question="q")
    return EvaluationContext(eval_case=case, candidate=candidate, evaluator=config)


def test_every_config_class_has_an_evaluator() -> None:
    assert set(build_evaluator_registry()) == set(EVALUATOR_CONFIG_CLASSES)


def test_kind_names_are_read_off_the_config_classes() -> None:
    assert list(EVALUATOR_KINDS) == ["code_judge", "llm_judge", "contains", "regex", "equals", "is_json",
                                     "field_accuracy", "composite", "starts_with", "ends_with", "tool_trajectory",
                                     "latency", "cost", "token_usage", "execution_metrics", "custom_assertion",
                                     "skill_trigger"]
    assert EVALUATOR_KINDS["starts_with"] is EVALUATOR_KINDS["ends_with"] is AffixConfig


def test_one_affix_evaluator_serves_both_of_its_kinds() -> None:
    registry = build_evaluator_registry()
    assert isinstance(registry[AffixConfig], AffixEvaluator)
    starts = evaluate_safely(registry, context(AffixConfig(name="s", type="starts_with", value="Par")))
    ends = evaluate_safely(registry, context(AffixConfig(name="e", type="ends_with", value="Par")))
    assert (starts.score, starts.hits) == (1.0, ['Output starts with "Par"'])
    assert (ends.score, ends.misses) == (0.0, ['Output does not end with "Par"'])


def test_real_llm_judge_is_built_lazily_with_the_tuning() -> None:
    from agentv_gate.evaluators.llm_judge import LlmJudgeEvaluator

    registry = build_evaluator_registry(None, lambda c: None, max_output_tokens=123, temperature=0.3,
                                        judge_timeout_seconds=9)
    judge = registry[LlmJudgeConfig]
    assert isinstance(judge, LlmJudgeEvaluator)
    assert judge.max_output_tokens == 123 and judge.temperature == 0.3
    code = registry[CodeJudgeConfig]
    assert isinstance(code, CodeJudgeEvaluator) and code.default_timeout_seconds == 9


def test_a_config_class_missing_from_the_registry_is_an_error_result_not_a_fallback() -> None:
    llm = Fixed("llm_judge", 1.0)
    registry = {LlmJudgeConfig: llm}
    score = evaluate_safely(registry, context(ContainsConfig(name="kw", value="x")))
    assert llm.seen == []
    assert score.score == 0.0
    assert score.error == "no evaluator for type 'contains'"
    assert score.misses == ["Evaluator 'kw' failed: no evaluator for type 'contains'"]


def test_overrides_replace_built_ins_and_reach_composite_members() -> None:
    fake_contains = Fixed("contains", 0.25)
    registry = build_evaluator_registry({LlmJudgeConfig: Fixed("llm_judge", 1), ContainsConfig: fake_contains},
                                        lambda c: None)
    config = CompositeConfig(name="combo", evaluators=[ContainsConfig(name="a", value="x"),
                                                       ContainsConfig(name="b", value="y")])
    score = evaluate_safely(registry, context(config))
    assert score.score == 0.25 and sorted(fake_contains.seen) == ["a", "b"]


def test_an_exploding_evaluator_becomes_an_error_result() -> None:
    registry = build_evaluator_registry({LlmJudgeConfig: Fixed("llm_judge", 1), ContainsConfig: Exploding()},
                                        lambda c: None)
    score = evaluate_safely(registry, context(ContainsConfig(name="kw", value="x")))
    assert score.score == 0.0
    assert score.misses == ["Evaluator 'kw' failed: RuntimeError: boom"]
    assert score.error == "RuntimeError: boom"
