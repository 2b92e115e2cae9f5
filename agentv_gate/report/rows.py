"""What the end-of-run reports read of each case, and the compact row a run keeps for them.

The full `CaseResult` (judge requests, per-evaluator detail, the whole answer) goes to the
results JSONL the moment a case ends. The JUnit file, the job summary and the console table
are written at the end, so a run keeps one `ReportRow` per case for them: about a third of a
`CaseResult`'s memory, with the strings every row repeats (suite, file, target) shared.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ..models import CaseResult


class ReportedCase(Protocol):
    """The fields reporters read; `CaseResult` and `ReportRow` both have them."""

    @property
    def eval_id(self) -> str: ...
    @property
    def suite(self) -> str: ...
    @property
    def file(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def dataset(self) -> str | None: ...
    @property
    def case_file(self) -> str | None: ...
    @property
    def target(self) -> str: ...
    @property
    def verdict(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def threshold(self) -> float: ...
    @property
    def duration_ms(self) -> int: ...
    @property
    def error(self) -> str | None: ...
    @property
    def reasoning(self) -> str | None: ...
    @property
    def misses(self) -> Sequence[str]: ...
    @property
    def candidate_answer(self) -> str: ...
    @property
    def checks(self) -> Sequence[str]: ...


@dataclass(frozen=True, slots=True)
class ReportRow:
    eval_id: str
    suite: str
    file: str
    line: int
    target: str
    verdict: str
    score: float
    threshold: float
    duration_ms: int
    error: str | None
    reasoning: str | None
    misses: tuple[str, ...]
    candidate_answer: str
    """Kept only for a case that did not pass: reports show the answer of failures alone."""
    dataset: str | None = None
    case_file: str | None = None
    checks: tuple[str, ...] = ()
    """Rubric checks, one line each; kept only for a case that did not pass, as the answer is."""

    @classmethod
    def of(cls, result: CaseResult) -> ReportRow:
        passed = result.verdict == "pass"
        return cls(result.eval_id, sys.intern(result.suite), sys.intern(result.file), result.line,
                   sys.intern(result.target), sys.intern(result.verdict), result.score, result.threshold,
                   result.duration_ms, result.error, result.reasoning, tuple(result.misses),
                   "" if passed else result.candidate_answer,
                   sys.intern(result.dataset) if result.dataset else None, result.case_file,
                   () if passed else tuple(result.checks))


__all__ = ["ReportRow", "ReportedCase"]
