"""Calling one evaluator directly, as the registry calls it: with the context's own config."""

from __future__ import annotations

from typing import Any

from agentv_gate.evaluators.base import Evaluator
from agentv_gate.models import EvaluationContext, EvaluationScore


def score_of(evaluator: Evaluator[Any], context: EvaluationContext) -> EvaluationScore:
    """`evaluator`'s score for `context`, handed `context.evaluator` as `evaluate_safely` hands it."""
    return evaluator.evaluate(context.evaluator, context)
