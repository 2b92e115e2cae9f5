"""The evaluator contract (seed 004, REQ-EVAL-001/004): `kind` plus `evaluate(context)`.

Evaluators never print and never raise for a bad answer or a broken judge: they return an
`EvaluationScore` whose `error` says what went wrong, so one case never stops a run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from ..models import EvaluationContext, EvaluationScore

if TYPE_CHECKING:
    from ..targets.base import Provider


class Evaluator(Protocol):
    kind: str

    def evaluate(self, context: EvaluationContext) -> EvaluationScore: ...


ResolveJudgeProvider = Callable[[EvaluationContext], "Provider | None"]


def wrong_config(kind: str, context: EvaluationContext) -> EvaluationScore:
    """The registry sent this evaluator a config of another type: a wiring bug, reported as data."""
    got = getattr(context.evaluator, "type", type(context.evaluator).__name__)
    message = f"{kind} evaluator was given a '{got}' config"
    return EvaluationScore(score=0.0, misses=[message], expected_aspect_count=1, error=message)


def binary(passed: bool, hit: str, miss: str) -> EvaluationScore:
    """AgentV's assertions score 0 or 1, with one hit or one miss saying which."""
    return EvaluationScore(score=1.0 if passed else 0.0, hits=[hit] if passed else [],
                           misses=[] if passed else [miss], expected_aspect_count=1,
                           reasoning=hit if passed else miss)
