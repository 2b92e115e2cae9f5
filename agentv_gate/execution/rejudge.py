"""`rejudge_on_fail: N`: a failing LLM-judge verdict is confirmed before it fails a case.

An LLM judge is the noisiest part of an eval: the same answer may score 0.2 on one call and 0.7 on
the next. So when a judge's verdict fails, the judge is asked again, up to N more times, each a fresh
call (never the response cache: a replayed verdict is no second opinion), and the strict majority of
the 1 + N calls decides. Asking stops as soon as the majority is settled (with N = 2, a second
failing call ends it). A pass costs nothing extra: a passing first verdict is never re-asked, so the
confirmation can only turn a noisy failure into a pass when most calls pass.

A tie (N odd: 1 + N calls even, as many passing as failing) is a failure: never a pass on half the
evidence. A call that errors ends the confirmation with that error (the judge broke, which says
nothing of the answer). The votes are kept on the result (`judge_votes`), and the reports say
"failed 2 of 3 judge calls".

Only LLM judges are re-asked (the orchestrator decides which): a code judge or a deterministic
evaluator gives the same verdict on the same answer, so asking again would only cost time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..models import EvaluationScore
from ..targets.usage import JUDGE_USAGE_KEY, Usage


@dataclass(frozen=True)
class Mark:
    """What one call's verdict must reach to pass: the case's threshold, and a required evaluator's mark."""

    threshold: float
    required: float | None = None

    def fails(self, score: EvaluationScore) -> bool:
        """Whether this call's verdict fails the case: a score below the threshold (or below its
        required mark), or a `fail` the evaluator forced (an unmet required rubric item). An error or
        a `skip` is no verdict at all."""
        if score.error or score.verdict == "skip":
            return False
        if score.verdict == "fail":
            return True
        return score.score < self.threshold or (self.required is not None and score.score < self.required)


def majority(calls: int) -> int:
    """How many of `calls` votes make a strict majority."""
    return calls // 2 + 1


def majority_passed(votes: list[dict[str, object]]) -> bool:
    """Whether more calls passed than failed: asking stops once either side holds a strict majority, so
    this is the majority's verdict (a tie fails)."""
    failed = sum(1 for vote in votes if not vote["passed"])
    return len(votes) - failed > failed


def vote_line(name: str, votes: list[dict[str, object]]) -> str:
    """`judge 'tone' failed 2 of 3 judge calls`, the line every report shows (a miss), or, when the
    majority passed, `judge 'tone' passed 2 of 3 judge calls` (a hit)."""
    errored = sum(1 for vote in votes if vote.get("error"))
    failed = sum(1 for vote in votes if not vote["passed"]) - errored
    if majority_passed(votes):
        return f"judge '{name}' passed {len(votes) - failed} of {len(votes)} judge calls"
    broke = f" ({errored} errored)" if errored else ""
    return f"judge '{name}' failed {failed} of {len(votes)} judge calls{broke}"


def confirm(first: EvaluationScore, extra: int, mark: Mark,
            ask_again: Callable[[], EvaluationScore]) -> tuple[EvaluationScore, list[dict[str, object]] | None]:
    """The verdict after confirming a failing `first` with up to `extra` fresh calls (`ask_again`), and
    every call's vote; `first` and None when there was nothing to confirm (it passed, errored, or
    `extra` is 0)."""
    if extra <= 0 or not mark.fails(first):
        return first, None
    needed = majority(1 + extra)
    scores = [first]
    votes: list[dict[str, object]] = [{"score": first.score, "passed": False}]
    retries = first.retries
    while len(scores) < 1 + extra:
        failed = sum(1 for vote in votes if not vote["passed"])
        if failed >= needed or len(votes) - failed >= needed:
            break
        again = ask_again()
        retries += again.retries
        if again.error or again.verdict == "skip":
            return again.model_copy(update={"retries": retries}), votes + [{"score": again.score, "passed": False,
                                                                              "error": again.error}]
        scores.append(again)
        votes.append({"score": again.score, "passed": not mark.fails(again)})
    passed = [score for score, vote in zip(scores, votes, strict=True) if vote["passed"]]
    chosen = passed[0] if len(passed) >= needed else first
    return _paid(chosen.model_copy(update={"retries": retries}), scores), votes


def _paid(chosen: EvaluationScore, calls: list[EvaluationScore]) -> EvaluationScore:
    """`chosen` with what every call used (tokens, dollars) in its raw request: each was paid for."""
    used = [raw[JUDGE_USAGE_KEY] for call in calls if isinstance(raw := call.evaluator_raw_request, dict)
            and isinstance(raw.get(JUDGE_USAGE_KEY), dict)]
    if not used or not isinstance(chosen.evaluator_raw_request, dict):
        return chosen
    total = Usage()
    for one in used:
        total = total + Usage.from_json(one)
    return chosen.model_copy(update={"evaluator_raw_request": {**chosen.evaluator_raw_request,
                                                               JUDGE_USAGE_KEY: total.as_json()}})


__all__ = ["Mark", "confirm", "majority", "majority_passed", "vote_line"]
