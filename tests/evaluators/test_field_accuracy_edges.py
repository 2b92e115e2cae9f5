"""`field_accuracy` at its boundaries: tolerance 0 and a difference equal to the tolerance are hits,
`relative: true` measures against the expected value, and weights or fields that add up to nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentv_gate.evaluators.field_accuracy import FieldAccuracyEvaluator
from agentv_gate.models import EvalCase, EvaluationContext, EvaluationScore, FieldAccuracyConfig, Message


def score(answer: Any, expected: Any, *specs: dict[str, Any], aggregation: str = "weighted_average") -> EvaluationScore:
    config = FieldAccuracyConfig.model_validate({"name": "f", "fields": list(specs), "aggregation": aggregation})
    case = EvalCase(id="c", source_file=Path("x.eval.yaml"), suite="x.eval.yaml", question="q",
                    expected_messages=[Message(role="assistant", content=expected)])
    context = EvaluationContext(eval_case=case, candidate=json.dumps(answer), evaluator=config)
    return FieldAccuracyEvaluator().evaluate(config, context)


@pytest.mark.parametrize(("got", "tolerance"), [(100, None), (100, 0), (100.5, 0.5), (99.5, 0.5)],
                         ids=["no-tolerance", "tolerance-0", "diff-equals-tolerance-above", "below"])
def test_numbers_within_or_exactly_at_the_tolerance_are_hits(got: float, tolerance: float | None) -> None:
    spec: dict[str, Any] = {"path": "total", "match": "numeric_tolerance"}
    if tolerance is not None:
        spec["tolerance"] = tolerance
    result = score({"total": got}, {"total": 100}, spec)
    assert result.score == 1.0 and result.misses == [], result


def test_just_past_the_tolerance_is_a_miss() -> None:
    result = score({"total": 100.75}, {"total": 100}, {"path": "total", "match": "numeric_tolerance", "tolerance": 0.5})
    assert result.score == 0.0
    assert result.misses == ["total (outside tolerance: diff=0.75, tolerance=0.5)"]


@pytest.mark.parametrize(("got", "expected", "hit"), [
    (1010, 1000, True),    # 1% off: within 2% though 10 away
    (10, 8, True),         # exactly 25% off: at the tolerance
    (1030, 1000, False),   # 3% off
    (0.01, 0, True),       # expected 0: the absolute difference is compared
    (0.5, 0, False),
])
def test_relative_tolerance_is_a_fraction_of_the_expected_value(got: float, expected: float, hit: bool) -> None:
    tolerance = 0.25 if expected == 8 else 0.02
    result = score({"n": got}, {"n": expected},
                   {"path": "n", "match": "numeric_tolerance", "tolerance": tolerance, "relative": True})
    assert (result.score, bool(result.hits)) == ((1.0, True) if hit else (0.0, False)), result


def test_fields_whose_weights_are_all_zero_score_zero() -> None:
    result = score({"a": 1, "b": 2}, {"a": 1, "b": 2}, {"path": "a", "weight": 0}, {"path": "b", "weight": 0})
    assert result.score == 0.0
    assert result.reasoning == "2/2 fields matched"  # every field matched; none of them counts


def test_no_fields_at_all_scores_one_as_in_agentv() -> None:
    result = score({"a": 1}, {"a": 2})
    assert (result.score, result.hits, result.misses) == (1.0, [], [])
    assert result.reasoning == "0/0 fields matched"
