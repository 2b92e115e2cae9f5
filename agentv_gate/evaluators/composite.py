"""`composite`: run member evaluators and combine their scores with an aggregator.

Aggregators, as in AgentV (`aggregator.type`; `-`/`_` and `grader`/`judge` spellings accepted):

* `weighted_average` (default): sum(score*w)/sum(w), `w` from `aggregator.weights[member]`,
  else 1.0, as AgentV's (a member's own `weight` is never read: the loader refuses it). Member
  hits and misses are prefixed `[member]`; the reasoning joins `member: reasoning` with "; ".
* `threshold`: a member passes when its verdict is `pass` or `borderline`, as AgentV counts it (the
  label of its score, unless the member forced its own: a rubric judge with an unmet required item
  is `fail` whatever its score, a nested threshold composite is what its threshold said); the score
  is the passing fraction, the verdict AgentV's `pass` when the fraction reaches `threshold`, else `fail`
  (not the fraction's own label); the reasoning says `k/n evaluators passed (threshold: t)`, the hits and
  misses are the members' (AgentV's words), after that count in a 4.x file (4.42 lists it first).
* `code_judge`: a script (`path`, or `script`; `cwd` relative to the eval file) reads
  `{"results": {member: {score, hits, misses, reasoning, verdict, ...}}}` on stdin and prints
  `{score, hits, misses, reasoning}`, with the same failure rules as a code judge.
* `llm_judge`: the judge model gets `prompt` (default AgentV's) with `{{EVALUATOR_RESULTS_JSON}}`
  replaced, and must answer `{score, hits, misses, reasoning}`.

An aggregator type AgentV does not know never reaches here: the loader skips that composite with a
warning, as both AgentVs skip it; one built by hand is a config error, never a weighted average.
Members run concurrently. Any member error is the composite's error too, so a broken judge inside a
composite still marks the case as an error.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..base.generations import Generation
from ..base.jscompat import is_finite_number, js_sum
from ..errors import JudgeReplyError
from ..judging.judge_reply import validate_verdict
from ..judging.templates import JUDGE_SYSTEM_PROMPT
from ..models import (
    DEFAULT_JUDGE_TIMEOUT_SECONDS,
    CodeJudgeConfig,
    CompositeConfig,
    EvaluationContext,
    EvaluationScore,
    EvaluatorConfig,
    EvaluatorResult,
    aggregator_kind,
    score_label,
)
from ..redaction import redact_tree
from .code_judge import judge_cwd, run_judge_script, script_argv
from .json_extract import JsonExtractError, parse_json_object

if TYPE_CHECKING:
    from ..targets.base import Provider

MAX_PARALLEL_MEMBERS = 8
PASSING_VERDICTS = ("pass", "borderline")
"""The member verdicts AgentV's threshold aggregator counts as passing."""
DEFAULT_AGGREGATOR_PROMPT = """Review the following evaluation results:
{{EVALUATOR_RESULTS_JSON}}

Decide the final score and verdict based on all evaluator results.
Return a JSON object with: score (0.0-1.0), verdict (pass/fail/borderline), and reasoning."""
MemberRunner = Callable[[EvaluationContext], EvaluationScore]
"""Runs one member's context through the registry; never raises."""


def member_result(config: EvaluatorConfig, score: EvaluationScore, weight: float) -> EvaluatorResult:
    return EvaluatorResult(name=config.name, type=getattr(config, "reported_type", config.type), score=score.score, weight=weight,
                           verdict=score.verdict or score_label(score.score), details=score.details,
                           hits=score.hits, misses=score.misses, reasoning=score.reasoning,
                           evaluator_raw_request=score.evaluator_raw_request, retries=score.retries,
                           error=score.error, evaluator_results=score.children,
                           generation=getattr(config, "generation", "2.x"))


def _finite_weight(weight: Any) -> bool:
    """A weight AgentV reads (`typeof weight === 'number'`) that cannot tip the mean: a finite number >= 0."""
    return is_finite_number(weight) and weight >= 0


def _config_error(config: CompositeConfig, message: str) -> EvaluationScore:
    return _error(f"composite '{config.name}': {message}")


def _error(message: str, raw: dict[str, Any] | None = None) -> EvaluationScore:
    """Score 0 that says why and marks the result as an error (the composite could not judge)."""
    return EvaluationScore(score=0.0, misses=[message], reasoning=message,
                           evaluator_raw_request=raw, error=message)


class CompositeEvaluator:
    def __init__(self, run_member: MemberRunner,
                 resolve_judge_provider: Callable[[EvaluationContext], Provider | None] | None = None,
                 default_timeout_seconds: float = DEFAULT_JUDGE_TIMEOUT_SECONDS) -> None:
        self.run_member = run_member
        self.resolve_judge_provider = resolve_judge_provider
        self.default_timeout_seconds = default_timeout_seconds

    def evaluate(self, config: CompositeConfig, context: EvaluationContext) -> EvaluationScore:
        aggregator = dict(config.aggregator or {})
        kind = aggregator_kind(aggregator)
        if kind is None:
            return _config_error(config, f"unknown aggregator type {aggregator.get('type')!r} "
                                         "(expected weighted_average, threshold, code_judge or llm_judge)")
        if not config.evaluators:
            return _config_error(config, "has no member evaluators")
        raw_weights = aggregator.get("weights")
        weights: Mapping[str, Any] = raw_weights if isinstance(raw_weights, Mapping) else {}
        # AgentV's `weights[member] ?? 1.0`: a member's own `weight` is never read (the loader refuses it).
        given = [(m, weights.get(m.name, 1.0)) for m in config.evaluators]
        bad = next(((m, w) for m, w in given if not _finite_weight(w)), None)
        if bad is not None:
            # As the loader refuses: a negative weight lets a failing member raise the score, an infinite one
            # makes it NaN, which the clamp below reads as 1.0, and text ('3') is a weight AgentV drops.
            return _config_error(config, f"weight {bad[1]!r} for member '{bad[0].name}' is not a finite number >= 0")
        weighted = [(m, float(w)) for m, w in given]
        scores = self._run_members(context, config.evaluators)
        members = [member_result(m, s, w) for (m, w), s in zip(weighted, scores, strict=True)]
        if kind == "threshold":
            result = self._threshold(members, aggregator, config.generation)
        elif kind == "code_judge":
            result = self._code_aggregator(members, aggregator, config, context)
        elif kind == "llm_judge":
            result = self._llm_aggregator(members, aggregator, context)
        else:
            result = self._weighted_average(members, weights)
        result.children = members
        result.unchecked = [*result.unchecked, *(f"[{m.name}] {u}" for m, s in zip(members, scores, strict=True)
                                                 for u in s.unchecked)]
        result.retries += sum(m.retries for m in members)
        member_errors = [f"member '{m.name}': {m.error}" for m in members if m.error]
        if member_errors:
            result.error = "; ".join(([result.error] if result.error else []) + member_errors)
        return result

    def _run_members(self, context: EvaluationContext,
                     members: list[EvaluatorConfig]) -> list[EvaluationScore]:
        contexts = [dataclasses.replace(context, evaluator=member) for member in members]
        if len(contexts) == 1:
            return [self.run_member(contexts[0])]
        # Each member's context holds the case run, so its calls see the case's cache setting and count
        # their cache hits on the case from the member's own thread.
        return _map_on_daemon_threads(self.run_member, contexts, MAX_PARALLEL_MEMBERS)

    @staticmethod
    def _prefixed(members: list[EvaluatorResult]) -> tuple[list[str], list[str]]:
        hits = [f"[{m.name}] {h}" for m in members for h in m.hits]
        misses = [f"[{m.name}] {x}" for m in members for x in m.misses]
        return hits, misses

    def _weighted_average(self, members: list[EvaluatorResult],
                          weights: Mapping[str, Any]) -> EvaluationScore:
        total = js_sum(m.weight for m in members)
        score = js_sum(m.score * m.weight for m in members) / total if total > 0 else 0.0
        hits, misses = self._prefixed(members)
        reasoning = "; ".join(f"{m.name}: {m.reasoning}" for m in members if m.reasoning) or None
        raw: dict[str, Any] = {"aggregator": "weighted_average"}
        if weights:
            raw["weights"] = dict(weights)
        return EvaluationScore(score=max(0.0, min(1.0, score)), hits=hits, misses=misses,
                               reasoning=reasoning,
                               evaluator_raw_request=raw)

    def _threshold(self, members: list[EvaluatorResult], aggregator: dict[str, Any],
                   generation: Generation = "2.x") -> EvaluationScore:
        threshold = aggregator.get("threshold", 0.5)
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            return _error(f"aggregator threshold must be a number, got {threshold!r}")
        # By verdict, not score: a member's forced `fail` (an unmet required rubric item) must not count.
        passing = sum(1 for m in members if m.verdict in PASSING_VERDICTS)
        score = passing / len(members)
        passed = score >= threshold
        summary = f"{passing}/{len(members)} evaluators passed (threshold: {threshold})"
        hits, misses = self._prefixed(members)  # 2.19's: the members' lines only; the count is the reasoning
        if generation == "4.x":  # 4.42 lists the count first among the assertions, passed when the composite is
            (hits if passed else misses).insert(0, summary)
        return EvaluationScore(score=score, verdict="pass" if passed else "fail", hits=hits, misses=misses,
                               reasoning=summary,
                               evaluator_raw_request={"aggregator": "threshold", "threshold": threshold})

    @staticmethod
    def _results_object(members: list[EvaluatorResult]) -> dict[str, Any]:
        # Each member's own verdict, as AgentV hands over the member's result whole: a rubric judge's
        # forced `fail` beside a score that reads `pass` must reach an aggregator that goes by verdicts.
        # Redacted: a member (a judge inherits the step's environment) may have quoted a key in its result.
        results = {m.name: {"type": m.type, "score": m.score, "verdict": m.verdict, "hits": m.hits,
                            "misses": m.misses, "reasoning": m.reasoning, "weight": m.weight,
                            "expected_aspect_count": len(m.hits) + len(m.misses) or 1, "error": m.error,
                            "evaluator_raw_request": m.evaluator_raw_request} for m in members}
        hidden: dict[str, Any] = redact_tree(results)
        return hidden

    def _code_aggregator(self, members: list[EvaluatorResult], aggregator: dict[str, Any],
                         config: CompositeConfig, context: EvaluationContext) -> EvaluationScore:
        script = aggregator.get("path", aggregator.get("script"))
        if not ((isinstance(script, str) and script.strip()) or (isinstance(script, list) and script)):
            return _error("code_judge aggregator needs 'path' (the script to run)")
        # The aggregator is a code judge of its own: the same cwd and script rules, the loader's paths.
        judge = CodeJudgeConfig(
            name="aggregator", script=script if isinstance(script, str) else [str(t) for t in script],
            cwd=str(aggregator["cwd"]) if aggregator.get("cwd") else None, source_file=config.source_file,
            resolved_script=config.resolved_aggregator_script, resolved_cwd=config.resolved_aggregator_cwd)
        cwd = judge_cwd(judge, context)
        try:
            argv = script_argv(judge, cwd)
        except ValueError as exc:
            return _error(f"code_judge aggregator script cannot be split into arguments: {exc}")
        timeout = float(aggregator.get("timeout_seconds") or self.default_timeout_seconds)
        raw: dict[str, Any] = {"aggregator": "code_judge", "script": argv, "cwd": str(cwd)}
        stdin = json.dumps({"results": self._results_object(members)}, indent=2, ensure_ascii=False,
                           default=str)
        return run_judge_script(argv, stdin, timeout, cwd, f"aggregator ({Path(argv[0]).name})", raw)

    def _llm_aggregator(self, members: list[EvaluatorResult], aggregator: dict[str, Any],
                        context: EvaluationContext) -> EvaluationScore:
        from ..targets.base import ProviderRequest

        provider = self.resolve_judge_provider(context) if self.resolve_judge_provider is not None else None
        custom = aggregator.get("prompt")
        template = custom if isinstance(custom, str) else DEFAULT_AGGREGATOR_PROMPT
        results_json = json.dumps(self._results_object(members), indent=2, default=str)
        prompt = template.replace("{{EVALUATOR_RESULTS_JSON}}", results_json)
        raw: dict[str, Any] = {"aggregator": "llm_judge", "userPrompt": prompt,
                               "systemPrompt": JUDGE_SYSTEM_PROMPT}
        if provider is None:
            return _error("llm_judge aggregator has no judge model (configure a judge target)", raw)
        raw["target"] = getattr(provider, "name", None)
        try:
            response = provider.invoke(ProviderRequest(question=prompt, system_prompt=JUDGE_SYSTEM_PROMPT,
                                                       eval_case_id=context.eval_case.id, run=context.run))
            data = parse_json_object(response.text)
        except JsonExtractError as exc:
            return _error(f"llm_judge aggregator reply has no JSON object: {exc}", raw)
        except Exception as exc:  # noqa: BLE001 - a failing judge model is this evaluator's error
            return _error(f"llm_judge aggregator failed: {exc}", raw)
        # The prompt asks the model for a verdict too; AgentV labels the aggregate from its score
        # (scoreToVerdict), so a model's verdict, agreeing or not, decides nothing and is not an error.
        # The rest is held to the judge's schema, as AgentV parses it with the judge's zod schema (a score
        # or hits of the wrong type: AgentV's aggregate is 0, never the number the text spells).
        try:
            verdict = validate_verdict(data)
        except JudgeReplyError as exc:
            return _error(f"llm_judge aggregator reply {exc}", raw)
        return EvaluationScore(score=verdict.score, hits=verdict.hits[:4], misses=verdict.misses[:4],
                               reasoning=verdict.reasoning, evaluator_raw_request=raw,
                               retries=getattr(response, "retries", 0) or 0)


T = TypeVar("T")
R = TypeVar("R")


def _map_on_daemon_threads(fn: Callable[[T], R], items: list[T], workers: int) -> list[R]:
    """`[fn(item) for item in items]`, at most `workers` at a time, on daemon threads.

    Not a ThreadPoolExecutor: its threads are joined when the interpreter exits, so after Ctrl-C
    or SIGTERM a member stuck in a network read would hold the process until its request timed out.
    """
    results: list[R | None] = [None] * len(items)
    failures: list[BaseException] = []
    pending = iter(range(len(items)))
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                index = next(pending, None)
            if index is None:
                return
            try:
                results[index] = fn(items[index])
            except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
                failures.append(exc)

    threads = [threading.Thread(target=work, name="composite", daemon=True) for _ in range(min(workers, len(items)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return results  # type: ignore[return-value]  # every slot was filled, or a failure was raised
