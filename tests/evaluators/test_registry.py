"""The evaluator registry: every kind, overrides, the llm_judge fallback, and errors as results."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_gate.evaluators.code_judge import CodeJudgeEvaluator
from agentv_gate.evaluators.registry import (
    UnknownEvaluatorError,
    build_evaluator_registry,
    evaluate_safely,
    get_evaluator,
)
from agentv_gate.models import EVALUATOR_KINDS, CompositeConfig, ContainsConfig, EvalCase, EvaluationContext, EvaluationScore


class Fixed:
    def __init__(self, kind: str, score: float) -> None:
        self.kind = kind
        self.score = score
        self.seen: list[str] = []

    def evaluate(self, context: EvaluationContext) -> EvaluationScore:
        self.seen.append(context.evaluator.name)
        return EvaluationScore(score=self.score, hits=[f"{self.kind} judged"])


class Exploding:
    kind = "contains"

    def evaluate(self, context: EvaluationContext) -> EvaluationScore:
        raise RuntimeError("boom")


def context(config) -> EvaluationContext:  # type: ignore[no-untyped-def]
    case = EvalCase(id="c", source_file=Path("/tmp/x.eval.yaml"), suite="x", question="q")
    return EvaluationContext(eval_case=case, candidate="Paris", evaluator=config)


def test_registry_has_every_kind_the_models_know() -> None:
    registry = build_evaluator_registry({"llm_judge": Fixed("llm_judge", 1.0)}, lambda c: None)
    assert set(EVALUATOR_KINDS) <= set(registry)
    assert all(registry[kind].kind == kind for kind in EVALUATOR_KINDS)


def test_real_llm_judge_is_built_lazily_with_the_tuning() -> None:
    from agentv_gate.evaluators.llm_judge import LlmJudgeEvaluator

    registry = build_evaluator_registry(None, lambda c: None, max_output_tokens=123, temperature=0.3,
                                        judge_timeout_seconds=9)
    judge = registry["llm_judge"]
    assert isinstance(judge, LlmJudgeEvaluator)
    assert judge.max_output_tokens == 123 and judge.temperature == 0.3
    code = registry["code_judge"]
    assert isinstance(code, CodeJudgeEvaluator) and code.default_timeout_seconds == 9


def test_unknown_kind_falls_back_to_llm_judge_else_errors() -> None:
    llm = Fixed("llm_judge", 0.4)
    registry = build_evaluator_registry({"llm_judge": llm}, lambda c: None)
    assert get_evaluator(registry, "rubric_v9") is llm
    without = {k: v for k, v in registry.items() if k != "llm_judge"}
    expected = "no evaluator for type 'rubric_v9'.*registered: code_judge"
    with pytest.raises(UnknownEvaluatorError, match=expected):
        get_evaluator(without, "rubric_v9")


def test_overrides_replace_built_ins_and_reach_composite_members() -> None:
    fake_contains = Fixed("contains", 0.25)
    registry = build_evaluator_registry({"llm_judge": Fixed("llm_judge", 1), "contains": fake_contains},
                                        lambda c: None)
    config = CompositeConfig(name="combo", evaluators=[ContainsConfig(name="a", value="x"),
                                                       ContainsConfig(name="b", value="y")])
    score = evaluate_safely(registry, context(config))
    assert score.score == 0.25 and sorted(fake_contains.seen) == ["a", "b"]


def test_an_exploding_evaluator_becomes_an_error_result() -> None:
    registry = build_evaluator_registry({"llm_judge": Fixed("llm_judge", 1), "contains": Exploding()},
                                        lambda c: None)
    score = evaluate_safely(registry, context(ContainsConfig(name="kw", value="x")))
    assert score.score == 0.0
    assert score.misses == ["Evaluator 'kw' failed: RuntimeError: boom"]
    assert score.error == "RuntimeError: boom"
