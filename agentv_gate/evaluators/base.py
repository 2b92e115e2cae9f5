"""The evaluator contract: `evaluate(config, context)`, with the config already of the evaluator's own class.

The registry (`registry.py`) picks an evaluator by the class of the case's evaluator config, so an
evaluator is never handed another kind's config and never checks its config's type again.
Evaluators never print and never raise for a bad answer or a broken judge: they return an
`EvaluationScore` whose `error` says what went wrong, so one case never stops a run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

from pydantic import BaseModel

from ..models import EvaluationContext, EvaluationScore

if TYPE_CHECKING:
    from ..targets.base import Provider

C = TypeVar("C", bound=BaseModel, contravariant=True)


class Evaluator(Protocol[C]):
    """Grades one answer (`context.candidate`) under one evaluator config of class `C`."""

    def evaluate(self, config: C, context: EvaluationContext) -> EvaluationScore: ...


ResolveJudgeProvider = Callable[[EvaluationContext], "Provider | None"]


def binary(passed: bool, hit: str, miss: str) -> EvaluationScore:
    """AgentV's assertions score 0 or 1, with one hit or one miss saying which."""
    return EvaluationScore(score=1.0 if passed else 0.0, hits=[hit] if passed else [],
                           misses=[] if passed else [miss], reasoning=hit if passed else miss)
