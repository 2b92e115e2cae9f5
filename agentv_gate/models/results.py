"""What comes out of a run: each evaluator's score, each case's result row, and AgentV's score labels.

Field names follow AgentV's snake_case wire names so that results round-trip into AgentV tooling unchanged.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, Field, computed_field

from ..base.defaults import BORDERLINE_SCORE as BORDERLINE_SCORE  # AgentV's score labels, re-exported
from ..base.defaults import DEFAULT_THRESHOLD
from ..base.defaults import PASS_SCORE as PASS_SCORE
from ..base.generations import Generation, reported_type


def score_label(score: float) -> Literal["pass", "borderline", "fail"]:
    """AgentV's own verdict for a score, kept in results beside our gate verdict."""
    if score >= PASS_SCORE:
        return "pass"
    return "borderline" if score >= BORDERLINE_SCORE else "fail"



ScoreVerdict = Literal["pass", "borderline", "fail", "skip"]
"""AgentV's per-evaluator verdict: from the score (`score_label`), unless the evaluator says otherwise."""


class EvaluationScore(BaseModel):
    """What one evaluator says of one answer."""

    score: float
    verdict: ScoreVerdict | None = None
    """Set when the score alone does not decide it: `fail` for a rubric whose required item was not
    met (the score stays as computed), `skip` for a judge whose reply never parsed (left out of the
    case's weighted mean). None: the verdict is the score's label."""
    details: dict[str, Any] | None = None
    """Structured detail for reports (a rubric judge's `checks` and raw scores)."""
    hits: list[str] = Field(default_factory=list)
    misses: list[str] = Field(default_factory=list)
    reasoning: str | None = None
    evaluator_raw_request: dict[str, Any] | None = None
    retries: int = 0
    error: str | None = None
    """Set when the evaluator could not judge (judge crashed, timed out, replied garbage)."""
    children: list[EvaluatorResult] | None = None
    """A composite's member results, for `EvaluatorResult.evaluator_results`."""
    unchecked: list[str] = Field(default_factory=list, exclude=True)
    """What the evaluator could not check (a metric the target did not report, no expected data to
    compare with), each a miss of the score: such a 0 says nothing of the answer, so `negate` keeps it."""


class EvaluatorResult(BaseModel):
    name: str
    type: str
    score: float
    weight: float = 1.0
    verdict: ScoreVerdict | None = None
    """AgentV's verdict: pass >= 0.8, borderline >= 0.6, else fail; or skip (left out of the mean)."""
    required: float | None = None
    """The mark a required evaluator had to reach; absent when it was not required."""
    hits: list[str] = Field(default_factory=list)
    misses: list[str] = Field(default_factory=list)
    reasoning: str | None = None
    evaluator_raw_request: dict[str, Any] | None = None
    retries: int = 0
    error: str | None = None
    details: dict[str, Any] | None = None
    duration_ms: int | None = None
    evaluator_results: list[EvaluatorResult] | None = None
    """Children, for a composite evaluator."""
    generation: Generation = Field(default="2.x", exclude=True)
    """The AgentV generation of the evaluator's type name: how its `scores[]` entry spells the type."""
    judge_votes: list[dict[str, Any]] | None = None
    """With `rejudge_on_fail`: every call of an LLM judge whose first verdict failed, in order
    (`{score, passed}`); the result is the majority's. Absent when the judge was asked once."""

    def score_row(self) -> dict[str, Any]:
        """This result as one entry of AgentV's `scores[]` (its type spelled as its generation spells it)."""
        row: dict[str, Any] = {
            "name": self.name, "type": reported_type(self.type, self.generation), "score": self.score,
            "weight": self.weight,
            "verdict": self.verdict or score_label(self.score), "hits": self.hits, "misses": self.misses,
            "reasoning": self.reasoning, "details": self.details, "duration_ms": self.duration_ms,
        }
        if self.required is not None:
            row["required"] = self.required
        if self.error:
            row["error"] = self.error
        if self.evaluator_results:
            row["scores"] = [child.score_row() for child in self.evaluator_results]
        if self.judge_votes:
            row["judge_votes"] = self.judge_votes
        return {k: v for k, v in row.items() if v is not None}


EvaluationScore.model_rebuild()


def check_lines(scores: list[dict[str, Any]]) -> list[str]:
    """`quality: ✗ [why] Explains the denial (required): no reason given`, one per rubric item of
    each `scores[]` entry (composite members included); ✓ met, ✗ not met, ? not assessed. Only an
    LLM judge's details hold rubric checks: a code judge's are whatever its script printed."""
    lines: list[str] = []
    for entry in scores:
        rubric = entry.get("type") in ("llm-judge", "llm_judge", "llm-grader") and isinstance(entry.get("details"), dict)
        for row in (entry["details"].get("checks") or [] if rubric else []):
            if not isinstance(row, dict):
                continue
            if row.get("reported") is False:
                mark, judged = "?", ": not assessed by the judge"
            elif "score" in row:
                band = f", {row['band']}" if row.get("band") else ""
                minimum = f", min {row['required_min_score']}" if row.get("required_min_score") is not None else ""
                met = row.get("met", True) and row["score"] / 10 >= PASS_SCORE
                mark, judged = ("✓" if met else "✗"), f" {row['score']}/10{band}{minimum}"
                judged += f": {row['reasoning']}" if row.get("reasoning") else ""
            else:
                mark = "✓" if row.get("satisfied") else "✗"
                judged = f": {row['reasoning']}" if row.get("reasoning") else ""
            required = " (required)" if row.get("required") and "score" not in row else ""
            lines.append(f"{entry.get('name')}: {mark} [{row.get('id')}] {row.get('outcome') or ''}{required}{judged}")
        lines += check_lines(entry.get("scores") or [])
    return lines


Verdict = Literal["pass", "fail", "error"]
ExecutionStatus = Literal["ok", "quality_failure", "execution_error"]


def utc_now_iso() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


class CaseResult(BaseModel):
    """One row of results JSONL; everything a reporter needs, so none re-reads an eval file."""

    eval_id: str
    suite: str
    file: str
    line: int
    dataset: str | None = None
    """AgentV's suite name: the suite's `dataset:`, else its file name without `.yaml`; JUnit names suites by it."""
    case_file: str | None = None
    """The case file the case was loaded from (`- file://...` in its suite), relative to the repo root; else None."""
    target: str = ""
    score: float = 0.0
    threshold: float = DEFAULT_THRESHOLD
    verdict: Verdict = "fail"
    hits: list[str] = Field(default_factory=list)
    misses: list[str] = Field(default_factory=list)
    reasoning: str | None = None
    candidate_answer: str = ""
    evaluator_results: list[EvaluatorResult] | None = None
    evaluator_raw_request: dict[str, Any] | None = None
    grader_raw_request: dict[str, Any] | None = None
    error: str | None = None
    duration_ms: int = 0
    retries: int = 0
    timestamp: str = Field(default_factory=utc_now_iso)
    shard: str | None = None
    shard_total: int | None = None
    """With --shard: how many rows (a case on each of its targets) the whole, unsharded run has, so
    `merge` can tell a complete set of shard results from one missing a shard (or part of one)."""
    run_id: str | None = None
    run_rows: int | None = None
    """Which `run` process wrote the row, and how many rows that run set out to write: a run killed
    outright (SIGKILL, a lost runner) leaves fewer, and `merge` and `compare` then know the file is
    not the whole run."""
    case_digest: str | None = None
    """Which version of the case, under which threshold and trials, the row judged (see
    `commands._select.run_digest`): a rerun carries the row over only while that is unchanged."""
    content_digest: str | None = None
    """The case's content (its `case_digest` without its id and eval file, nor the run's threshold or trials):
    a baseline comparison pairs a case renamed or moved to another file with its base row by it."""
    carried: bool | None = None
    """True on a row `--affected-since` carried over from its base unrun (the case did not change)."""
    replayed: str | None = None
    """With `--replay`: the recording's source (`main@abc1234`) the row's model answers came from."""
    targets_file: str | None = None
    """The targets file the case ran on, when the run's eval files found several (its own eval file's)."""
    agentv_generation: str | None = None
    agentv_generation_reason: str | None = None
    """Which AgentV (2.x / 4.x) the case's file was read as, and why (`assertions: at line 3`)."""
    cache_hits: int | None = None
    """Model calls of this case (target and judges) answered from the response cache; absent when none."""
    # AgentV 2.19's names, beside the gate's own, so tools written for AgentV's results read ours.
    conversation_id: str | None = None
    input: list[dict[str, Any]] | None = None
    """The case's input messages, as sent to the target."""
    criteria: str | None = None
    """The case's `criteria` (2.x: `expected_outcome`), so a reviewer of report.html sees what was asked."""
    expected_output: list[dict[str, Any]] | None = None
    """The case's expected output messages (`expected_output` / `expected_messages`), when it has any."""
    scores: list[dict[str, Any]] | None = None
    """One entry per evaluator (`EvaluatorResult.score_row`): name, type, score, weight, verdict, ..."""
    token_usage: dict[str, Any] | None = None
    cost_usd: float | None = None
    judge_usage: dict[str, dict[str, Any]] | None = None
    """Per judge target, what this case's LLM judges used: {input, output, cost_usd}, each null when the
    judge's provider reported nothing (never 0); absent when no LLM judge was called."""
    commit: str | None = None
    """The commit the run judged (`GITHUB_SHA`, else the checkout's HEAD), so a comparison can say
    which commit its base results are of."""
    trace: dict[str, Any] | None = None
    """The trace summary of the answer's messages: event_count, tool_names, tool_calls_by_name, ..."""
    trials: list[dict[str, Any]] | None = None
    """With `execution.trials`: every trial run (attempt, score, verdict, scores, error, cost_usd,
    execution_status, duration_ms), in order."""
    aggregation: dict[str, Any] | None = None
    """How the trials made the row's score (AgentV's: strategy, and its figures)."""
    reruns: list[dict[str, Any]] | None = None
    """The trials the per-case guard re-ran after `trials[]` (`--fail-on regression` with a baseline:
    the case's evidence was short), numbered on from them, each as a `trials[]` entry. The row's
    verdict and score stay its `trials[]`'s; the guard reads both."""
    baseline_fail_on: str | None = None
    """The `--fail-on` of the run that wrote the row against a `--baseline` (None: it had none). `merge`
    refuses such rows without a `--baseline`: deciding by each row alone, it would pass a shard's failure
    (a case the per-case guard found broken passes its own row at 1 of 3 trials)."""
    reruns_stopped: str | None = None
    """Why the per-case guard's re-runs of this case ended before it was decided: `budget_exceeded`
    (`--budget-usd` or the suite's `total_budget_usd` spent), `cost_limited` (its `cost_limit_usd`),
    `error_threshold_exceeded` (`fail_on_error`), `interrupted`. Every verdict read from the row then fails,
    as for a case not run."""
    cost_limited: bool | None = None
    """True when the trials' summed cost reached `cost_limit_usd` before `count` trials ran."""
    budget_exceeded: bool | None = None
    """True on a row not run because its suite's `total_budget_usd` was spent."""
    failure_reason_code: str | None = None
    """Why a row was not run (`budget_exceeded`, `error_threshold_exceeded`), as AgentV names it."""
    quarantined: str | None = None
    """The reason the gate's quarantine list (`.agentv/gate.yaml`) gives for this case, while its entry
    holds: the case ran and is reported, but a failure or error of it does not fail the gate."""
    judge_votes: dict[str, list[dict[str, Any]]] | None = None
    """Per LLM judge re-asked under `rejudge_on_fail` (its name): every call's `{score, passed}`, in order."""
    advisory: str | None = None
    """Why the case's failure is advisory (a judge below the `judges:` floor of `.agentv/gate.yaml`
    failed it, and nothing else did): reported as a warning, never as a pass, and not deciding the gate."""
    before_all_output: str | None = None
    before_each_output: str | None = None
    after_each_output: str | None = None
    """What the workspace hooks printed (stdout, then stderr) for this case."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def test_id(self) -> str:
        """AgentV 2.19's name for `eval_id`."""
        return self.eval_id

    @computed_field  # type: ignore[prop-decorator]
    @property
    def answer(self) -> str:
        """AgentV 2.19's name for `candidate_answer`."""
        return self.candidate_answer

    @computed_field  # type: ignore[prop-decorator]
    @property
    def execution_status(self) -> ExecutionStatus:
        """`execution_error` when the case could not be scored (target, judge or harness broke);
        otherwise AgentV's `ok` (score >= 0.8) or `quality_failure`, whatever the gate's threshold."""
        if self.verdict == "error":
            return "execution_error"
        return "ok" if self.score >= PASS_SCORE else "quality_failure"

    @property
    def checks(self) -> list[str]:
        """The rubric checks of every evaluator, one readable line each, for JUnit and the job summary."""
        return check_lines(self.scores or [])

    def to_json_row(self) -> dict[str, Any]:
        """The row as the results file writes it: one evaluator keeps `evaluator_raw_request`; several keep
        `evaluator_results`.

        A lone surrogate (a judge's `"\\ud800"` once parsed) in a dict key nested in free-form JSON
        (a code judge's `details`) makes pydantic's JSON mode raise, which stopped the run. Every field
        is JSON-like already (strings, numbers, lists, dicts parsed from JSON), so the Python dump is
        then the row: the results file writes the surrogate as a `\\ud800` escape, as it writes one
        anywhere else (`errors="backslashreplace"`), and reading the row back gives it again.
        """
        try:
            return self.model_dump(mode="json", exclude_none=True)
        except UnicodeEncodeError:
            return self.model_dump(mode="python", exclude_none=True)
