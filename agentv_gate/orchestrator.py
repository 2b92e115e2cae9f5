"""Per case: target -> evaluators (in order) -> weighted aggregate -> verdict; cases concurrently.

The aggregate is AgentV's: the weighted mean of the evaluators not `skip`ped, and 0 when a
`required` evaluator scored below its mark (hits and misses still list every evaluator's).

Every failure mode ends in a `CaseResult`: a target that errors makes its case an `error`
row, a judge that breaks makes its evaluator score 0 and the case an `error`, and nothing a
case does can stop another. Results are handed to `on_result` the moment each case ends, so
a reporter can stream them to disk and an interrupted run keeps everything already finished.
"""

from __future__ import annotations

import itertools
import math
import queue
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

from .base.generations import pass_mark
from .base.jscompat import js_sum
from .base.trial_strategies import STRATEGIES, aggregate
from .case_run import CaseRun
from .errors import ProviderError
from .evaluators.registry import EvaluatorRegistry, evaluate_safely
from .execution.conversation import aggregate as conversation_score
from .execution.conversation import transcript, windowed
from .execution.dependencies import DependencyWaves
from .execution.file_changes import capture_file_changes
from .execution.hooks import WorkspaceHooks
from .execution.rejudge import Mark, confirm, majority_passed, vote_line
from .execution.stop import COST_LIMITED, Refusal, StopPolicy
from .execution.suite_workers import SuiteSlots
from .judging.payload import message_dict
from .judging.trace import trace_summary
from .loader.conversation import content_text
from .loader.dependencies import Dependent, dependency_groups
from .models import (
    DEFAULT_WORKERS,
    PROVIDER_ERROR,
    CaseResult,
    Conversation,
    EvalCase,
    EvaluationContext,
    EvaluationScore,
    EvaluatorConfig,
    EvaluatorResult,
    LlmJudgeConfig,
    Message,
    TargetResponse,
    TrialsConfig,
    score_label,
)
from .redaction import has_secrets, redact, redact_tree
from .targets.base import Provider, ProviderRequest
from .targets.usage import judge_usage, summed_judge_usage


class ProviderResolver(Protocol):
    """Maps a case to the provider that answers it (judges are the evaluator registry's business)."""

    def target_for(self, case: EvalCase) -> Provider: ...

    def target_name(self, case: EvalCase) -> str:
        """The name of the target `case` runs on, without building it (for rows of cases not run)."""
        ...


@dataclass
class RunSettings:
    threshold: float | None = None
    """CLI threshold; a suite's or case's own threshold in YAML wins over it."""
    workers: int = DEFAULT_WORKERS
    keep_results: bool = True
    """`run` returns every result; off when `on_result` keeps what it needs (a long run then holds none)."""
    trials: int | None = None
    """`--trials N`: every case runs N trials (its own `execution.trials` strategy and cost limit kept),
    every one of them: pass_at_k does not stop at the first pass (AgentV's early exit), so a paired
    comparison has N outcomes per case; the verdict and score are AgentV's all the same."""
    trials_strategy: str | None = None
    """`--trials-strategy`: every case's trials strategy, `pass_hat_k` (pass^k, agentv-gate's) included."""
    first_trial: int = 0
    """The number (0-based) of the first trial run: the per-case guard's re-runs go on from the trials
    a case already ran, so a target's `{ATTEMPT}` and the cache (first trial only) see a later trial."""
    spent_usd: dict[tuple[str, str, str], float] = field(default_factory=dict)
    """(suite, test id, target) -> what the case's earlier trials cost: the per-case guard's re-runs are more
    trials of the same case, held to its `cost_limit_usd` with them."""
    rejudge_on_fail: int | None = None
    """`--rejudge-on-fail N`: the extra calls a failing LLM-judge verdict gets where its evaluator and its
    suite's `execution` say nothing (execution/rejudge.py)."""


def rejudge_count(case: EvalCase, config: EvaluatorConfig, settings: RunSettings) -> int:
    """How many more times a failing verdict of `config` is asked: the judge's own `rejudge_on_fail`, else
    its suite's, else `--rejudge-on-fail`; 0 for anything but an LLM judge (a code judge or a deterministic
    check gives the same verdict again)."""
    if not isinstance(config, LlmJudgeConfig):
        return 0
    for given in (config.rejudge_on_fail, case.suite_execution.rejudge_on_fail, settings.rejudge_on_fail):
        if given is not None:
            return given
    return 0


def case_trials(case: EvalCase, settings: RunSettings) -> TrialsConfig | None:
    """The trials a case runs: `--trials N` over the count its YAML gives; None for a single run."""
    if settings.trials is None:
        return case.trials
    if case.trials is None:
        return TrialsConfig(count=settings.trials)
    return case.trials.model_copy(update={"count": settings.trials})


def case_threshold(case: EvalCase, settings: RunSettings) -> float:
    """The case's own (its file's) threshold, else `--threshold`, else its generation's default pass mark."""
    return pass_mark(case.threshold, settings.threshold, case.generation)


def weighted_mean(results: list[EvaluatorResult]) -> float:
    """AgentV's computeWeightedMean: sum(score * weight) / sum(weight) over the evaluators not
    `skip`ped, each sum added as JavaScript adds it (`js_sum`); 0 with no weight."""
    counted = [r for r in results if r.verdict != "skip"]
    total_weight = js_sum(r.weight for r in counted)
    if not counted or total_weight <= 0:
        return 0.0
    return js_sum(r.score * r.weight for r in counted) / total_weight


def failed_requirements(results: list[EvaluatorResult]) -> list[str]:
    """Why the case scores 0: each required evaluator below its mark, forced to fail, or skipped."""
    failed = []
    for r in results:
        if r.required is None:
            continue
        if r.verdict == "skip":
            failed.append(f"required evaluator '{r.name}' could not be scored")
        elif r.score < r.required:
            failed.append(f"required evaluator '{r.name}' scored {r.score:.3f}, below its mark {r.required:g}")
        elif r.verdict == "fail":  # a verdict the evaluator forced: a rubric's, or a threshold composite's
            why = r.reasoning if r.type == "composite" and r.reasoning else "a required rubric item was not met"
            failed.append(f"required evaluator '{r.name}' failed: {why}")
    return failed


def case_score(results: list[EvaluatorResult]) -> float:
    """AgentV's case score: the weighted mean, or 0 when a required evaluator did not make its mark."""
    return 0.0 if failed_requirements(results) else weighted_mean(results)


def _negated(config: EvaluatorConfig, score: EvaluationScore) -> EvaluationScore:
    """AgentV 3+'s `negate: true`: the assertion must NOT hold. A judge error stays an error.

    A verdict the evaluator forced (a rubric's unmet required item) described the un-negated
    assertion, so the negated one gets the label of its own score."""
    if (config.model_extra or {}).get("negate") is not True or score.error:
        return score
    if score.unchecked:  # its 0 says nothing of the answer: inverted, it would pass every answer
        misses = [f"negated, but {u}: not inverted" for u in score.unchecked]
        return score.model_copy(update={"score": 0.0, "hits": [], "misses": misses + score.hits, "verdict": None,
                                        "reasoning": "; ".join(misses)})
    return score.model_copy(update={"score": 1.0 - score.score, "hits": score.misses, "misses": score.hits,
                                    "verdict": None,
                                    "reasoning": f"negated: {score.reasoning}" if score.reasoning else "negated"})


def judge_once(registry: EvaluatorRegistry, config: EvaluatorConfig, context: EvaluationContext) -> EvaluationScore:
    """One evaluation of `config` as a run makes it: `negate` applied, a broken evaluator a result."""
    return _negated(config, evaluate_safely(registry, context))


TIMED_KINDS = frozenset({"openai", "azure", "anthropic", "gemini"})
"""Model providers AgentV 4.42 times (llm-providers.ts: the call's duration); 2.19's report none."""


def _skipped_in_4_42(result: EvaluatorResult) -> bool:
    """A grader AgentV 4.42 reports as `skip`: one left with no readable reply, or an LLM grader whose judge
    could not be asked (4.42's llm-grader turns every failure of the call into `skip`)."""
    return result.verdict == "skip" or (result.error is not None and result.type == "llm_judge")


def _to_result(config: EvaluatorConfig, score: EvaluationScore, duration_ms: int | None = None) -> EvaluatorResult:
    children = getattr(score, "children", None)
    return EvaluatorResult(
        name=config.name,
        type=getattr(config, "reported_type", config.type),
        score=score.score,
        weight=config.weight,
        verdict=score.verdict or score_label(score.score),
        required=config.required_mark,
        details=score.details,
        duration_ms=duration_ms,
        hits=score.hits,
        misses=score.misses,
        reasoning=score.reasoning,
        evaluator_raw_request=score.evaluator_raw_request,
        retries=score.retries,
        error=score.error,
        evaluator_results=children,
        generation=getattr(config, "generation", "2.x"),
    )


class Orchestrator:
    def __init__(
        self,
        providers: ProviderResolver,
        registry: EvaluatorRegistry,
        settings: RunSettings,
        on_result: Callable[[CaseResult], None] | None = None,
        on_start: Callable[[EvalCase], None] | None = None,
        stop: StopPolicy | None = None,
        hooks: WorkspaceHooks | None = None,
        dependent_suites: Collection[str] = (),
    ):
        self.providers = providers
        self.registry = registry
        self.settings = settings
        self.on_result = on_result
        self.on_start = on_start
        """Called on the worker thread as a case begins, so a live log can say what is still running."""
        self.stop = stop
        """Asked before each case starts; a refusal makes the case a not-run row (see execution/stop.py)."""
        self.hooks = hooks
        """Workspace hooks around each case (see execution/hooks.py); None when no suite has any."""
        self.cancelled = threading.Event()
        self.dependent_suites = frozenset(dependent_suites)
        """The suites whose cases use `depends_on`: run in waves (execution/dependencies.py)."""
        self.dependencies: DependencyWaves | None = None
        self.suite_slots = SuiteSlots()
        """Each suite's `execution.workers` cap (AgentV 4.x), below the run's workers."""
        self.finished: list[CaseResult] = []
        """What the current or last `run` kept (see `keep_results`): after an interrupt, the cases that
        finished before it, since `run` then raises instead of returning them."""

    # ---------------------------------------------------------------- one case

    def _base_result(self, case: EvalCase) -> CaseResult:
        return CaseResult(eval_id=case.id, suite=case.suite, file=str(case.source_file), line=case.source_line,
                          agentv_generation=case.generation, agentv_generation_reason=case.generation_reason or None,
                          dataset=case.dataset, case_file=case.case_file,
                          threshold=case_threshold(case, self.settings), conversation_id=case.conversation_id,
                          input=[message_dict(m) for m in case.input_messages],
                          criteria=case.expected_outcome or None,
                          expected_output=[message_dict(m) for m in case.expected_messages] or None)

    def run_case(self, case: EvalCase, run: CaseRun | None = None) -> CaseResult:
        """One row: a single run, or every trial of `execution.trials` and their aggregate."""
        run = run if run is not None else case_run_of(case)
        started = time.monotonic()
        result = self._base_result(case)
        try:
            provider = self.providers.target_for(case)
        except (ProviderError, KeyError, ValueError) as exc:
            return _errored(result, f"target: {exc}", started)
        result.target = provider.name
        targets_file_of = getattr(self.providers, "targets_file_of", None)  # eval files with their own targets
        if callable(targets_file_of):
            result.targets_file = targets_file_of(case)
        trials = case_trials(case, self.settings)
        if trials is None:
            return self._attempt(case, provider, result, run, started)
        return self._run_trials(case, provider, result, trials, run, started)

    def _run_trials(self, case: EvalCase, provider: Provider, base: CaseResult, trials: TrialsConfig,
                    case_run: CaseRun, started: float) -> CaseResult:
        """AgentV's trials: each a full target + evaluators run, neither answered from the cache after
        the first (a replay is not an independent sample); pass_at_k stops at the first
        trial that passes, unless `--trials N` asked for every trial; summed cost reaching
        `cost_limit_usd` starts no further trial."""
        strategy = self.settings.trials_strategy or trials.strategy
        rule = STRATEGIES[strategy]
        runs: list[CaseResult] = []
        cost = 0.0
        cost_limited = False
        first = self.settings.first_trial  # the per-case guard's re-runs number on from the case's trials
        target = self.providers.target_name(case)
        spent = self.settings.spent_usd.get((case.suite, case.id, target), 0.0)  # by the case's earlier trials
        limit = trials.cost_limit_usd
        if limit is not None and spent and spent >= limit:  # a re-run of a case its limit already stopped
            refused = Refusal(COST_LIMITED, f"its cost_limit_usd ({limit:g}) was reached by its earlier trials "
                                            f"(${spent:.4f})").apply(base.model_copy(deep=True))
            refused.target = target
            return refused
        for attempt in range(trials.count):
            # A trial after the first is a fresh sample of the target *and* the evaluators (AgentV runs
            # both uncached): `for_trial` turns the cache off for both.
            trial_run = case_run.for_trial(first + attempt)
            failure = None
            if attempt and self.hooks is not None:  # a workspace prepared afresh, as AgentV prepares each trial
                _, failure = self.hooks.next_trial(case)
                trial_run = replace(trial_run, workspace_path=self._workspace_path(case),
                                    workspace_baseline=self.hooks.baseline_of(case))
            if failure is not None:
                run = _errored(base.model_copy(deep=True), failure, time.monotonic())
            else:
                run = self._attempt(case, provider, base.model_copy(deep=True), trial_run, time.monotonic())
            runs.append(run)
            cost += run.cost_usd or 0.0
            if rule.stops_at_first_pass and _agentv_pass(run) and self.settings.trials is None:
                break
            if limit is not None and spent + cost >= limit and attempt + 1 < trials.count:
                cost_limited = True
                break
        scored = [r for r in runs if r.verdict != "error"]
        errored = [r for r in runs if r.verdict == "error"]
        score, aggregation = aggregate(strategy, [r.score for r in scored],
                                       sum(1 for r in runs if _agentv_pass(r)))
        if rule.shows_best_trial:
            shown = max(scored, key=lambda r: r.score) if scored else errored[0]
        else:
            shown = errored[0] if errored else min(scored, key=lambda r: r.score)
        result = shown.model_copy(deep=True)
        result.trials = [_trial_row(number, run) for number, run in enumerate(runs)]
        result.aggregation = aggregation
        result.cost_limited = True if cost_limited else None
        result.score = score
        result.cost_usd = cost if any(r.cost_usd is not None for r in runs) else None
        result.token_usage = _summed_usage([r.token_usage for r in runs])
        result.judge_usage = summed_judge_usage([r.judge_usage for r in runs])
        result.retries = sum(r.retries for r in runs)
        result.duration_ms = _ms_since(started)
        passed_any = any(r.verdict == "pass" for r in runs)
        if rule.verdict == "any_pass" and passed_any:
            result.verdict, result.error = "pass", None
        elif rule.verdict == "every_pass" and not errored:
            # pass^k: every trial must pass its threshold (cut short by a cost limit, the trials not run never passed)
            passed = sum(1 for r in runs if r.verdict == "pass")
            result.aggregation = {**aggregation, "passed_attempts": passed}
            result.verdict, result.error = ("pass" if passed == trials.count else "fail"), None
        elif errored:
            # Never a pass on part of the evidence: a trial that could not be scored may have failed.
            result.verdict = "error"
            result.error = "; ".join(f"trial {n} of {len(runs)}: {r.error}"
                                     for n, r in enumerate(runs, 1) if r.verdict == "error")
        else:
            result.verdict = "pass" if score >= result.threshold else "fail"
            result.error = None
        return result

    def _attempt(self, case: EvalCase, provider: Provider, result: CaseResult, run: CaseRun,
                 started: float) -> CaseResult:
        """One run of the target and the evaluators, filling `result`."""
        if case.conversation is not None:
            return self._converse(case, case.conversation, provider, result, run, started)
        called = time.monotonic()
        try:
            response = provider.invoke(
                ProviderRequest(question=case.question, messages=list(case.input_messages), eval_case_id=case.id,
                                # AgentV gives the agent every attached file, guideline files first;
                                # only the judge's prompt text leaves guideline files out.
                                input_files=[*case.guideline_files, *case.input_files],
                                attempt=run.trial, run=run,
                                # a batching cli target answers the suite's single-run cases from one run
                                suite=case.suite, trials=getattr(case_trials(case, self.settings), "count", 1))
            )
        except Exception as exc:  # noqa: BLE001 - any target failure is this case's error, never the run's
            result.retries = int(getattr(exc, "retries", 0) or 0)
            return _errored(result, f"target {provider.name}: {str(exc) or type(exc).__name__}", started)

        if case.generation == "4.x" and response.duration_ms is None and getattr(provider, "kind", None) in TIMED_KINDS:
            response = response.model_copy(update={"duration_ms": _ms_since(called)})
        file_changes = None
        if run.workspace_path is not None and run.workspace_baseline is not None:
            file_changes = capture_file_changes(Path(run.workspace_path), run.workspace_baseline)
            if file_changes is not None:  # LLM graders send it to their model: a key the agent wrote stays here
                file_changes = redact(file_changes)
        evaluations = self.run_evaluators_for_case(case, provider, response, run, file_changes)
        errors = [f"evaluator '{r.name}': {r.error}" for r in evaluations if r.error]
        errors += [f"evaluator '{r.name}': score {r.score} is not a finite number"
                   for r in evaluations if not r.error and not math.isfinite(r.score)]
        reported = (response.raw or {}).get(PROVIDER_ERROR)
        if isinstance(reported, str) and reported:  # answered and failed: scored, and an error
            errors.insert(0, f"target {provider.name}: {reported}")
        gate = failed_requirements(evaluations)
        result.score = case_score(evaluations)
        if case.generation == "4.x" and any(_skipped_in_4_42(r) for r in evaluations):
            result.score = 0.0  # AgentV 4.42: a skipped grader makes the case an execution error, scored 0
        if not math.isfinite(result.score):
            result.score = 0.0  # NaN compares false both ways: it must never meet a threshold
        result.hits = [h for r in evaluations for h in r.hits]
        # AgentV's misses are its evaluators' only; why a required gate zeroed the case leads the reasoning
        result.misses = [m for r in evaluations for m in r.misses]
        voted = {r.name: r.judge_votes for r in evaluations if r.judge_votes}
        if voted:  # a confirmed failure says so first: every report shows a case's first miss
            result.judge_votes = voted
            said = [vote_line(name, votes) for name, votes in voted.items()]
            result.misses = [m for m in said if m in result.misses] + [m for m in result.misses if m not in said]
        result.reasoning = " | ".join([*gate, *(f"{r.name}: {r.reasoning}" for r in evaluations if r.reasoning)]) or None
        result.candidate_answer = response.text
        result.scores = [r.score_row() for r in evaluations]
        result.token_usage = response.token_usage
        result.cost_usd = response.cost_usd
        result.judge_usage = judge_usage(evaluations)
        result.trace = _trace(response)
        if len(evaluations) == 1:
            # A single evaluator's request is kept at the top too (and under its deprecated name).
            result.evaluator_raw_request = result.grader_raw_request = evaluations[0].evaluator_raw_request
        else:
            result.evaluator_results = evaluations
        result.verdict = "error" if errors else ("pass" if result.score >= result.threshold else "fail")
        result.error = "; ".join(errors) or None
        result.retries = response.retries + sum(r.retries for r in evaluations)
        result.duration_ms = _ms_since(started)
        return result

    def _converse(self, case: EvalCase, conversation: Conversation, provider: Provider, result: CaseResult,
                  run: CaseRun, started: float) -> CaseResult:
        """A conversation test, as AgentV 4.42 runs it (execution/conversation.py): each turn's user message
        sent with the conversation so far, the reply judged by the turn's assertions and added to the
        conversation, then the test's own assertions on the transcript, the scores aggregated. A turn whose
        target or grader broke scores 0 as in AgentV, and makes the case an error here: never a pass on part
        of the evidence."""
        threshold, window = result.threshold, conversation.window_size
        history = [Message(role=m.role, content=m.content if isinstance(m.content, str) else content_text(m.content))
                   for m in case.input_messages]
        turns: list[EvaluatorResult] = []
        errors: list[str] = []
        responses: list[TargetResponse] = []
        stopped = False
        for number, turn in enumerate(conversation.turns, 1):
            name = f"turn-{number}"
            if stopped:
                turns.append(EvaluatorResult(name=name, type="rubrics", score=0.0, verdict="skip", generation="4.x",
                                             misses=["Skipped due to previous turn failure"]))
                continue
            history.append(Message(role="user", content=turn.input))
            try:
                response = provider.invoke(ProviderRequest(
                    question=turn.input, messages=windowed(history, window), eval_case_id=f"{case.id}/{name}",
                    attempt=run.trial, run=run, suite=case.suite))
            except Exception as exc:  # noqa: BLE001 - a turn's target failure is this case's, never the run's
                said = str(exc) or type(exc).__name__
                turns.append(EvaluatorResult(name=name, type="rubrics", score=0.0, verdict="fail", generation="4.x",
                                             misses=[f"Provider error: {said}"]))
                errors.append(f"{name}: target {provider.name}: {said}")
                stopped = conversation.on_turn_failure == "stop"
                continue
            responses.append(response)
            history.append(Message(role="assistant", content=response.text))
            if not turn.evaluators and not turn.expected_messages:
                turns.append(EvaluatorResult(name=name, type="rubrics", score=1.0, verdict="pass", generation="4.x"))
                continue
            turn_case = case.model_copy(update={
                "id": f"{case.id}/{name}", "evaluators": turn.evaluators, "input_messages": windowed(history, window),
                "question": transcript(history, window), "expected_messages": turn.expected_messages,
                "reference_answer": turn.reference_answer, "conversation": None})
            evaluations = self.run_evaluators_for_case(turn_case, provider, response, run)
            turns.append(self._graded(name, evaluations, threshold, errors, nested=not turn.default_grader))
            stopped = conversation.on_turn_failure == "stop" and turns[-1].score < threshold
        graded = list(turns)
        if case.evaluators:
            whole = transcript(history)
            whole_case = case.model_copy(update={
                "id": f"{case.id}/conversation", "input_messages": list(history), "question": whole,
                "expected_messages": [], "reference_answer": "", "conversation": None})
            evaluations = self.run_evaluators_for_case(whole_case, provider, TargetResponse(text=whole), run)
            graded.append(self._graded("conversation", evaluations, threshold, errors))
        result.score = conversation_score([r.score for r in graded], conversation.aggregation)
        failing = [f"{r.name} failed ({'skipped' if r.verdict == 'skip' else f'score {r.score:.3f} < {threshold:g}'})"
                   for r in graded if r.verdict in ("fail", "skip") or r.error]
        result.hits = [h for r in graded for h in r.hits]
        result.misses = [*failing, *(f"{r.name}: {m}" for r in graded for m in r.misses)]
        result.reasoning = " | ".join(f"{r.name}: {r.reasoning}" for r in graded if r.reasoning) or None
        result.scores = [r.score_row() for r in graded]
        last = next((m for m in reversed(history) if m.role == "assistant"), None)
        result.candidate_answer = last.content if last is not None and isinstance(last.content, str) else ""
        result.token_usage = _summed_usage([r.token_usage for r in responses])
        costs = [r.cost_usd for r in responses if r.cost_usd is not None]
        result.cost_usd = js_sum(costs) if costs else None
        result.judge_usage = summed_judge_usage([judge_usage(r.evaluator_results or []) for r in graded])
        result.trace = _trace(TargetResponse(text=result.candidate_answer, output_messages=history[len(case.input_messages):]))
        result.verdict = "error" if errors else ("pass" if result.score >= threshold else "fail")
        result.error = "; ".join(errors) or None
        result.retries = sum(r.retries for r in responses) + sum(r.retries for r in graded)
        result.duration_ms = _ms_since(started)
        return result

    @staticmethod
    def _graded(name: str, evaluations: list[EvaluatorResult], threshold: float, errors: list[str],
                nested: bool = True) -> EvaluatorResult:
        """A turn's (or the transcript's) graders as one `rubrics` entry, scored as a case is, with AgentV's verdict."""
        errors += [f"{name}: evaluator '{r.name}': {r.error}" for r in evaluations if r.error]
        score = case_score(evaluations)
        score = score if math.isfinite(score) else 0.0
        return EvaluatorResult(name=name, type="rubrics", score=score, verdict="pass" if score >= threshold else "fail",
                               generation="4.x", hits=[h for r in evaluations for h in r.hits],
                               misses=[m for r in evaluations for m in r.misses],
                               reasoning=" | ".join(f"{r.name}: {r.reasoning}" for r in evaluations if r.reasoning)
                               or None, retries=sum(r.retries for r in evaluations),
                               evaluator_results=evaluations if nested else None,
                               error="; ".join(r.error for r in evaluations if r.error) or None)

    def _workspace_path(self, case: EvalCase) -> str | None:
        """The workspace the case runs in (its suite's, see execution/hooks.py), if any."""
        workspace = self.hooks.workspace_of(case) if self.hooks is not None else None
        return None if workspace is None else str(workspace)

    def run_evaluators_for_case(self, case: EvalCase, provider: Provider, response: TargetResponse,
                                run: CaseRun | None = None, file_changes: str | None = None) -> list[EvaluatorResult]:
        """Each configured evaluator in order; none configured means the default llm_judge, speaking the case's
        own generation (a 4.x file's: 4.42's template and reply; a 2.x file's: 2.19's).
        `file_changes`: the target's changes to the case's workspace, as a diff."""
        run = run if run is not None else case_run_of(case)
        configs: list[EvaluatorConfig] = list(case.evaluators) or [LlmJudgeConfig(
            name="llm_judge", generation=case.generation, preprocessors=case.preprocessors or None)]
        output_messages = response.output_messages or [Message(role="assistant", content=response.text)]
        results: list[EvaluatorResult] = []
        for config in configs:
            context = EvaluationContext(
                eval_case=case,
                candidate=response.text,
                evaluator=config,
                output_messages=output_messages,
                target=provider.name,
                target_provider=str(getattr(provider, "kind", "") or ""),
                token_usage=response.token_usage,
                cost_usd=response.cost_usd,
                duration_ms=response.duration_ms,
                file_changes=file_changes,
                answer_dir=run.workspace_path or (response.raw or {}).get("cwd"),
                run=run,
            )
            started = time.monotonic()
            score = judge_once(self.registry, config, context)
            score, votes = self._confirmed(case, config, context, score)
            result = _to_result(config, score, _ms_since(started))
            if votes:
                result.judge_votes = votes
                line = vote_line(config.name, votes)
                if majority_passed(votes) and not score.error:
                    result.hits = [line, *result.hits]
                else:
                    result.misses = [line, *result.misses]
            results.append(result)
        return results

    def _confirmed(self, case: EvalCase, config: EvaluatorConfig, context: EvaluationContext,
                   score: EvaluationScore) -> tuple[EvaluationScore, list[dict[str, Any]] | None]:
        """A failing LLM-judge verdict asked again under `rejudge_on_fail` (execution/rejudge.py), each call
        fresh: the response cache neither answers nor keeps it."""
        extra = rejudge_count(case, config, self.settings)
        if not extra:
            return score, None
        fresh = replace(context, run=replace(context.run, use_cache=False))
        mark = Mark(case_threshold(case, self.settings), config.required_mark)
        return confirm(score, extra, mark, lambda: judge_once(self.registry, config, fresh))

    # ---------------------------------------------------------------- many cases

    def run(self, cases: Iterable[EvalCase]) -> list[CaseResult]:
        """Run cases `workers` at a time; results arrive through `on_result` as each finishes.

        Only a bounded window of futures is in flight, so memory stays flat however many cases
        there are. On KeyboardInterrupt (SIGINT, or SIGTERM turned into one by the CLI) no new
        case starts, the exception is raised again, and what finished stays in `finished`.
        """
        results: list[CaseResult] = []
        self.finished = results
        pending: set[Future[CaseResult]] = set()
        workers = max(1, self.settings.workers)
        if self.dependent_suites:
            self.dependencies = DependencyWaves(self.dependent_suites, self.providers.target_name, self.cancelled)
            cases = self.dependencies.arrange(cases)
        iterator = iter(cases)
        pool = _DaemonPool(workers)
        unhanded: list[Future[CaseResult]] = []  # ended, not yet handed over: the latest submitted first
        submitted: dict[Future[CaseResult], int] = {}
        sequence = itertools.count()
        try:
            exhausted = False
            while True:
                while not exhausted and len(pending) < workers * 2 and not self.cancelled.is_set():
                    try:
                        case = next(iterator)
                    except StopIteration:
                        exhausted = True
                        break
                    future = pool.submit(self._safe_run_case, case)
                    submitted[future] = next(sequence)
                    pending.add(future)
                if not pending:
                    break
                done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                unhanded = sorted(done, key=submitted.pop, reverse=True)  # handed over in the order they started
                while unhanded:
                    self._hand_over(unhanded.pop().result(), results)
        except BaseException as exc:
            self.cancelled.set()
            for future in pending:
                future.cancel()
            pool.shutdown(wait=False)
            if isinstance(exc, KeyboardInterrupt):
                self._hand_over_finished([*unhanded, *pending], results)
            raise
        pool.shutdown(wait=True)
        return results

    def _hand_over_finished(self, futures: list[Future[CaseResult]], results: list[CaseResult]) -> None:
        """On an interrupt: the cases that had already ended are handed over, not reported as never run. A
        second interrupt while they are ends this too (the caller writes what was handed over)."""
        for future in futures:
            if future.done() and not future.cancelled() and future.exception() is None:
                try:
                    self._hand_over(future.result(), results)
                except Exception:  # noqa: BLE001 - the interrupt is what ends the run; its reports say the rest
                    return

    def _hand_over(self, result: CaseResult, results: list[CaseResult]) -> None:
        if self.on_result is not None:
            self.on_result(result)
        if self.settings.keep_results:
            results.append(result)

    def _safe_run_case(self, case: EvalCase) -> CaseResult:
        waves = self.dependencies
        if waves is not None:  # outside the suite's slot: a waiting case must not hold one its dependency needs
            waves.wait_turn(case)
        result: CaseResult | None = None
        try:
            with self.suite_slots.slot(case):
                result = self._run_in_slot(case)
            return result
        finally:
            if waves is not None:
                waves.record(case, result)

    def _run_in_slot(self, case: EvalCase) -> CaseResult:
        refusal = self.stop.refusal(case) if self.stop is not None else None
        if refusal is not None:  # a stop policy tripped: written as not run, never run
            result = scrubbed(refusal.apply(self._base_result(case)))
            result.target = self.providers.target_name(case)
            return result
        blocked = self.dependencies.refusal(case) if self.dependencies is not None else None
        if blocked is not None:  # AgentV writes it unrun, with no hook run: an error, never a pass
            result = _errored(self._base_result(case), blocked, time.monotonic())
            result.target, result.failure_reason_code = self.providers.target_name(case), "dependency_failed"
            return scrubbed(result)
        run: CaseRun | None = None
        outputs: dict[str, str] = {}
        try:
            run = case_run_of(case)
            if self.on_start is not None:
                self.on_start(case)
            failure = None
            if self.hooks is not None:
                outputs, failure = self.hooks.before(case, getattr(case_trials(case, self.settings), "count", 1))
                run = replace(run, workspace_path=self._workspace_path(case),
                              workspace_baseline=self.hooks.baseline_of(case))
            if failure is not None:
                result = _errored(self._base_result(case), failure, time.monotonic())
                result.target = self.providers.target_name(case)
            else:
                result = self.run_case(case, run)
        except Exception as exc:  # noqa: BLE001 - last line of defence: a bug becomes this case's error
            result = CaseResult(eval_id=case.id, suite=case.suite, file=str(case.source_file),
                                line=case.source_line, dataset=case.dataset, case_file=case.case_file,
                                threshold=case_threshold(case, self.settings),
                                verdict="error", error=f"internal error: {type(exc).__name__}: {exc}")
        finally:
            if self.hooks is not None:
                outputs.update(self.hooks.after(case))
        if outputs:  # the hooks' output fields (`before_all_output`, ...)
            result = result.model_copy(update=outputs)
        if run is not None and run.cache_hits.count:
            result.cache_hits = run.cache_hits.count
        if self.stop is not None:
            self.stop.record(case, result)
        return scrubbed(result)


class _DaemonPool:
    """`workers` long-lived daemon threads taking cases from a queue (a ThreadPoolExecutor, minus one thing).

    ThreadPoolExecutor's threads are joined when the interpreter exits, so after Ctrl-C or SIGTERM
    the process, its reports written, would wait, for minutes, on a case blocked in a network read
    that only its request timeout ends. Daemon threads let it exit at once.
    Threads live for the whole run so each keeps its HTTP keep-alive session across cases.
    """

    def __init__(self, workers: int) -> None:
        self._queue: queue.SimpleQueue[tuple[Future[CaseResult], Callable[[EvalCase], CaseResult], EvalCase] | None]
        self._queue = queue.SimpleQueue()
        self._threads = [threading.Thread(target=self._work, name=f"case_{i}", daemon=True) for i in range(workers)]
        for thread in self._threads:
            thread.start()

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            future, fn, case = item
            if not future.set_running_or_notify_cancel():
                continue  # cancelled while queued
            try:
                future.set_result(fn(case))
            except BaseException as exc:  # noqa: BLE001 - handed to whoever waits on the future
                future.set_exception(exc)

    def submit(self, fn: Callable[[EvalCase], CaseResult], case: EvalCase) -> Future[CaseResult]:
        future: Future[CaseResult] = Future()
        self._queue.put((future, fn, case))
        return future

    def shutdown(self, wait: bool = True) -> None:
        for _ in self._threads:
            self._queue.put(None)
        if wait:
            for thread in self._threads:
                thread.join()


def scrubbed(result: CaseResult) -> CaseResult:
    """`result` with every configured secret (and its encoded forms) hidden in every string.

    Done here, once, where every result is made, so the results JSONL, the JUnit file, the console,
    the annotations and the job summary all show `***` whatever path the text took: an answer or
    a judge's reply that echoes a key is as covered as an error message.
    """
    if not has_secrets():
        return result
    return CaseResult.model_validate(redact_tree(result.model_dump()))


def case_run_of(case: EvalCase) -> CaseRun:
    """A new run of `case`: its eval file's folder, and the cache unless its suite turned it off."""
    eval_file = (case.suite_file or case.source_file).resolve()
    return CaseRun(eval_dir=str(eval_file.parent), eval_file=str(eval_file), use_cache=case.suite_execution.cache)


def _trace(response: TargetResponse) -> dict[str, Any]:
    """The row's trace summary: counts from the answer's messages (AgentV's TraceSummary keys)."""
    summary = trace_summary([message_dict(m) for m in response.output_messages])
    summary.pop("tool_calls", None)  # the 4.42 judge-payload alias of tool_calls_by_name
    return summary


def _agentv_pass(run: CaseResult) -> bool:
    """AgentV's verdict of a trial (scoreToVerdict: score >= 0.8), which stops pass_at_k and counts in its
    `passed_attempts`, whatever the case's threshold: stopping at the threshold instead would try on past a
    0.9 under a 0.95 threshold until a luckier trial passed, where AgentV keeps the 0.9 and fails. A trial
    that could not be scored never stops the trials."""
    return run.verdict != "error" and score_label(run.score) == "pass"


def _trial_row(number: int, run: CaseResult) -> dict[str, Any]:
    """One entry of the row's `trials[]`, AgentV's fields plus the trial's duration."""
    row: dict[str, Any] = {"attempt": number + 1, "score": run.score, "verdict": run.verdict,
                           "scores": run.scores or [], "error": run.error, "cost_usd": run.cost_usd,
                           "execution_status": run.execution_status, "duration_ms": run.duration_ms}
    return {k: v for k, v in row.items() if v is not None}


def _summed_usage(usages: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """The trials' token usage added up, key by key (numbers only)."""
    total: dict[str, Any] = {}
    for usage in usages:
        for key, value in (usage or {}).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
    return total or None


def each_target(cases: Iterable[EvalCase], target_names: Callable[[EvalCase], list[str]]) -> Iterator[EvalCase]:
    """A matrix: each case once per target it runs on (`execution.targets`, several `--target`s), as a
    copy naming that one target; a case on one target passes through as it is."""
    for case in cases:
        names = target_names(case)
        if len(names) == 1 and not case.targets:
            yield case
            continue
        for name in names:
            yield case.model_copy(update={"target": name, "targets": None})


def _errored(result: CaseResult, message: str, started: float) -> CaseResult:
    result.verdict = "error"
    result.error = message
    result.misses = [f"Error: {message}"]
    result.duration_ms = _ms_since(started)
    return result


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


@dataclass
class ShardSpec:
    index: int
    count: int
    label: str = field(default="")

    @classmethod
    def parse(cls, text: str) -> ShardSpec:
        """`K/N`, 1-based, as a GitHub Actions matrix would number jobs."""
        try:
            k, n = (int(part) for part in text.split("/", 1))
        except ValueError:
            raise ValueError(f"--shard {text!r} is not K/N (e.g. 2/4)") from None
        if n < 1 or not 1 <= k <= n:
            raise ValueError(f"--shard {text!r}: K must be between 1 and N")
        return cls(k, n, f"{k}/{n}")


CaseT = TypeVar("CaseT", bound=Dependent)
"""A case, or the loader's `CaseRef` for one: its (suite, id) orders it the same way on every machine."""


def select_shard(cases: list[CaseT], shard: ShardSpec) -> list[CaseT]:
    """Round-robin over cases sorted by (suite, id): every case in exactly one shard, shards
    within one case of each other in size, and the same split on every machine and run. Cases linked by
    `depends_on` are dealt out together, as one, so each runs where its dependencies run."""
    ordered = sorted(cases, key=lambda c: (c.suite, c.id))
    groups = dependency_groups(ordered)
    return [case for position, group in enumerate(groups) if position % shard.count == shard.index - 1
            for case in group]
