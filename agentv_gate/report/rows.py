"""What the end-of-run reports read of each case, and the compact row a run keeps for them.

The full `CaseResult` (judge requests, per-evaluator detail, the whole answer) goes to the
results JSONL the moment a case ends. The JUnit file, the job summary and the console table
are written at the end, so a run keeps one `ReportRow` per case for them: about a third of a
`CaseResult`'s memory, with the strings every row repeats (suite, file, target) shared.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..base.wire import content_to_text
from ..execution.stop import NOT_RUN_MISSING_ENV
from ..models import CaseResult, EvaluatorResult, score_label


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
    @property
    def failure_reason_code(self) -> str | None: ...
    @property
    def quarantined(self) -> str | None: ...
    @property
    def advisory(self) -> str | None: ...


QUARANTINED = "quarantined"
NEVER_QUARANTINED = ("on the quarantine list, but errors are never quarantined (a judge or target that broke "
                     "says nothing of the case): this error fails the gate")
"""What every report says of a quarantined case that errored."""
NOT_RUN = "not run"
ADVISORY = "advisory"
"""A failure only judges below `.agentv/gate.yaml`'s `judges:` floor gave: a warning, neither pass nor failure."""


def outcome(result: ReportedCase) -> str:
    """What the reports call a case: its verdict, except that a case left out for unset environment
    variables is `not run` and a quarantined case that failed is `quarantined` (neither is a
    pass, neither is a failure of the gate: `summarise` counts them apart). An error is never
    quarantined: the list names cases known to fail, and a judge that crashed says nothing of the case."""
    if result.verdict == "pass":
        return "pass"
    if result.failure_reason_code == NOT_RUN_MISSING_ENV:
        return NOT_RUN
    if result.quarantined and result.verdict != "error":
        return QUARANTINED
    if result.advisory and result.verdict == "fail":
        return ADVISORY
    return result.verdict


@dataclass(frozen=True, slots=True)
class EvaluatorDetail:
    """What `--verbose` prints of one evaluator of one case; composite members follow at `depth` + 1."""

    name: str
    type: str
    score: float
    verdict: str
    hits: tuple[str, ...] = ()
    misses: tuple[str, ...] = ()
    reasoning: str | None = None
    error: str | None = None
    stderr: str | None = None
    """The tail of a code judge's stderr (kept in its raw request), the first thing to read when a judge misbehaves."""
    depth: int = 0
    weight: float = 1.0


def _details_of(results: Sequence[EvaluatorResult], depth: int = 0) -> list[EvaluatorDetail]:
    found: list[EvaluatorDetail] = []
    for r in results:
        raw: dict[str, Any] = r.evaluator_raw_request or {}
        stderr = raw.get("stderr") if isinstance(raw.get("stderr"), str) else None
        # A failed judge's stderr is also one of its misses; said once, under its own label.
        misses = tuple(m for m in r.misses if not (stderr and m == f"stderr: {stderr}"))
        found.append(EvaluatorDetail(r.name, r.type, r.score, r.verdict or score_label(r.score), tuple(r.hits),
                                     misses, r.reasoning, r.error, stderr or None, depth, r.weight))
        found += _details_of(r.evaluator_results or [], depth + 1)
    return found


def _from_score_row(row: dict[str, Any], raw: dict[str, Any] | None = None) -> EvaluatorResult:
    """An `EvaluatorResult` back from its `scores[]` entry (AgentV spells the type with dashes)."""
    fields = {k: v for k, v in row.items() if k in EvaluatorResult.model_fields}
    children = [_from_score_row(c) for c in row.get("scores") or [] if isinstance(c, dict)]
    return EvaluatorResult.model_validate({**fields, "type": str(row.get("type", "")).replace("-", "_"),
                                           "evaluator_raw_request": raw, "evaluator_results": children or None})


def evaluator_details(result: CaseResult) -> tuple[EvaluatorDetail, ...]:
    """Every evaluator of a case, composite members after their composite.

    A case with one evaluator keeps its raw request at the top of the row (the results file's
    layout), so its one `scores[]` entry is joined with that request here.
    """
    if result.evaluator_results:
        return tuple(_details_of(result.evaluator_results))
    if result.scores and len(result.scores) == 1:
        try:
            return tuple(_details_of([_from_score_row(result.scores[0], result.evaluator_raw_request)]))
        except ValueError:  # a results file from elsewhere with an odd row: no details, never a crash
            return ()
    return ()


def details_of(result: ReportedCase) -> Sequence[EvaluatorDetail]:
    """The evaluator details a reported case carries: a `ReportRow` kept them (or not), a `CaseResult` has them."""
    if isinstance(result, ReportRow):
        return result.evaluators
    if isinstance(result, CaseResult):
        return evaluator_details(result)
    return ()


REVIEW_TEXT_LIMIT = 4000
"""Each text a review keeps (a message, the answer, a reasoning) is cut past this, marked where cut."""


def _cut(text: str) -> str:
    if len(text) <= REVIEW_TEXT_LIMIT:
        return text
    return text[:REVIEW_TEXT_LIMIT] + f"… [{len(text) - REVIEW_TEXT_LIMIT} more characters in results.jsonl]"


def _message_texts(messages: Sequence[dict[str, Any]] | None) -> tuple[tuple[str, str], ...]:
    """(role, text) of each message, its content made text as the judges see it."""
    found = []
    for message in messages or ():
        content = message.get("content")
        text = content if isinstance(content, str) else content_to_text(content) if content is not None else ""
        found.append((str(message.get("role", "")), _cut(str(text))))
    return tuple(found)


@dataclass(frozen=True, slots=True)
class CaseReview:
    """What a reviewer of report.html reads of one case: what was asked, what was expected, what came
    back, and how each evaluator scored it. Kept for every case, passed ones too, with texts cut at
    `REVIEW_TEXT_LIMIT` (results.jsonl has them whole)."""

    input: tuple[tuple[str, str], ...] = ()
    criteria: str = ""
    expected_output: tuple[tuple[str, str], ...] = ()
    answer: str = ""
    evaluators: tuple[EvaluatorDetail, ...] = ()

    @classmethod
    def of(cls, result: CaseResult) -> CaseReview:
        return cls(_message_texts(result.input), _cut(result.criteria or ""), _message_texts(result.expected_output),
                   _cut(result.candidate_answer or ""), evaluator_details(result))


def review_of(result: ReportedCase) -> CaseReview | None:
    """The review a reported case carries: a `ReportRow` kept one (or not), a `CaseResult` makes one."""
    if isinstance(result, ReportRow):
        return result.review
    if isinstance(result, CaseResult):
        return CaseReview.of(result)
    return None


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
    evaluators: tuple[EvaluatorDetail, ...] = ()
    """Per-evaluator detail for `--verbose`; kept only when asked for, since a run holds one row per case."""
    failure_reason_code: str | None = None
    quarantined: str | None = None
    review: CaseReview | None = None
    """What a reviewer reads in report.html of every case, passed ones too (`ReportRow.of(review=True)`)."""
    trials: TrialOutcomes | None = None
    """Each trial's pass and score, for the paired comparison with a baseline; None for a single run."""
    carried_from: str | None = None
    """A row `--affected-since` carried over unrun: the short commit of the base it came from ("" unknown)."""
    replayed: str | None = None
    """With `--replay`: where the model answers came from (`main@abc1234`)."""
    advisory: str | None = None
    reruns: TrialOutcomes | None = None
    """The per-case guard's re-run trials (`CaseResult.reruns`), None when it re-ran none."""
    case_digest: str | None = None
    """Which version of the case the row judged (`CaseResult.case_digest`): `--history` flips of another
    version excuse nothing."""
    content_digest: str | None = None
    """`CaseResult.content_digest`: what pairs a renamed or moved case with its base row."""
    reruns_stopped: str | None = None
    """`CaseResult.reruns_stopped`: why the guard's re-runs of the case ended with it undecided."""

    @classmethod
    def of(cls, result: CaseResult, evaluators: bool = False, review: bool = False) -> ReportRow:
        passed = result.verdict == "pass"
        return cls(result.eval_id, sys.intern(result.suite), sys.intern(result.file), result.line,
                   sys.intern(result.target), sys.intern(result.verdict), result.score, result.threshold,
                   result.duration_ms, result.error, result.reasoning, tuple(result.misses),
                   "" if passed else result.candidate_answer,
                   sys.intern(result.dataset) if result.dataset else None, result.case_file,
                   () if passed else tuple(result.checks), evaluator_details(result) if evaluators else (),
                   result.failure_reason_code, result.quarantined, CaseReview.of(result) if review else None,
                   TrialOutcomes.of_row(result.trials, result.aggregation),
                   (result.commit or "")[:7] if result.carried else None, result.replayed, result.advisory,
                   TrialOutcomes.of_row(result.reruns, None), result.case_digest,
                   result.content_digest, result.reruns_stopped)


@dataclass(frozen=True, slots=True)
class TrialOutcomes:
    """What the paired comparison reads of a case's trials: whether each passed, and its score.

    A trial passes when its own verdict is `pass` (its score against the case's threshold); a
    trial that errored is a failure, never left out (a wrong pass would follow)."""

    passed: tuple[bool, ...]
    scores: tuple[float, ...]
    strategy: str | None = None
    """The row's trials strategy (`aggregation.strategy`): AgentV's `pass_at_k` may stop at the first
    pass, which leaves a biased sample the comparison must not test."""
    cost_usd: float | None = None
    """What the trials cost, added up; None when none reported a cost."""

    @classmethod
    def of_row(cls, trials: Sequence[Any] | None, aggregation: dict[str, Any] | None) -> TrialOutcomes | None:
        """From a results row's `trials[]`; None when it has none, or an entry is not a trial (a row
        from elsewhere is then read as a single run, never a crash)."""
        if not trials:
            return None
        passed, scores, costs = [], [], []
        for trial in trials:
            score = trial.get("score") if isinstance(trial, dict) else None
            if not isinstance(score, (int, float)) or isinstance(score, bool) or not math.isfinite(score):
                return None
            passed.append(trial.get("verdict") == "pass")
            scores.append(float(score))
            cost = trial.get("cost_usd")
            if isinstance(cost, (int, float)) and not isinstance(cost, bool) and math.isfinite(cost):
                costs.append(float(cost))
        strategy = aggregation.get("strategy") if isinstance(aggregation, dict) else None
        return cls(tuple(passed), tuple(scores), strategy if isinstance(strategy, str) else None,
                   math.fsum(costs) if costs else None)


def trial_outcomes(result: ReportedCase) -> TrialOutcomes:
    """A reported case's trials, a single run being one trial (its verdict and score)."""
    found: TrialOutcomes | None = None
    if isinstance(result, ReportRow):
        found = result.trials
    elif isinstance(result, CaseResult):
        found = TrialOutcomes.of_row(result.trials, result.aggregation)
    return found or TrialOutcomes((result.verdict == "pass",), (result.score,))


def rerun_outcomes(result: ReportedCase) -> TrialOutcomes:
    """The trials the per-case guard re-ran of a reported case (none when it re-ran none)."""
    found = result.reruns if isinstance(result, ReportRow) else (
        TrialOutcomes.of_row(result.reruns, None) if isinstance(result, CaseResult) else None)
    return found or TrialOutcomes((), ())


__all__ = ["ADVISORY", "NOT_RUN", "QUARANTINED", "CaseReview", "EvaluatorDetail", "ReportRow", "ReportedCase",
           "TrialOutcomes", "details_of", "evaluator_details", "outcome", "rerun_outcomes", "review_of", "trial_outcomes"]
