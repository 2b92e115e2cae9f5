"""`llm_judge`: a model grades the answer from a prompt template.

One judge call is: build the user prompt (default template, `{{variable}}` text, or an
executable template), send it with the fixed JSON-reply system prompt to the judge provider,
and read `{score, hits, misses, reasoning}` from the reply. The request is kept as
`evaluator_raw_request` (`user_prompt`, `system_prompt`, `target`, `model`, ...).

What can go wrong, and what happens (the case gets score 0 and `error` set, never a raise):

* no judge provider: "no judge target configured ..." naming the target to fix;
* the prompt script fails: its stderr is in the error;
* the provider fails after its network retries: the provider's message (secrets scrubbed);
* the judge target cannot do structured output (`response_format: json_schema`, asked for with
  the verdict schema) or refuses a parameter: the provider adjusts the call and says so once;
* the reply is not a valid verdict (prose, score 7, no score): the judge is asked again, up to
  `max_reply_attempts` calls in all, as AgentV does; then the evaluator is `skip` (AgentV's
  verdict: left out of the case's weighted mean) with the last problem as its error, so the case
  is reported as an error, never passed on the other evaluators alone. A score outside [0, 1]
  is never clamped into range.

With `rubrics` (`type: rubrics`, `rubrics:` here, or a case's `rubrics:`) the judge gets AgentV's
rubric prompt and replies with `checks` instead of a verdict; `judging/rubric_protocol.py` has the prompt,
the reply schema and the scoring.

`EvaluationScore.retries` counts network retries inside the provider calls plus re-asks after
invalid replies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from ..base.generations import GENERATIONS, Generation
from ..errors import JudgeReplyError, PromptTemplateError, ProviderError
from ..judging import grader_prompts, rubric_protocol
from ..judging.judge_reply import VERDICT_SCHEMA, JudgeReply, parse_checks_reply, parse_judge_reply
from ..judging.templates import JUDGE_SYSTEM_PROMPT, ResolvedPrompt, resolve_prompt
from ..models import (
    DEFAULT_JUDGE_TIMEOUT_SECONDS,
    EvaluationContext,
    EvaluationScore,
    LlmJudgeConfig,
    RubricItem,
    TargetResponse,
)
from ..redaction import redact
from ..targets.base import Provider, ProviderRequest
from ..targets.usage import JUDGE_USAGE_KEY, Usage
from . import agent_grader
from .agent_grader import is_agent_grader
from .answer_files import PreprocessorFailed, graded_answer
from .base import ResolveJudgeProvider

DEFAULT_MAX_REPLY_ATTEMPTS = 3
"""AgentV asks the judge up to 3 times before giving up on its reply."""


@dataclass(frozen=True)
class LlmWire:
    """What an LLM judge of one AgentV generation sends and how its reply is read."""

    resolve_prompt: Callable[[EvaluationContext, LlmJudgeConfig, float], ResolvedPrompt]
    system_prompt: str
    reply_schema: dict[str, Any]
    parse_reply: Callable[[str], JudgeReply]
    rubric_prompt: Callable[[list[RubricItem], EvaluationContext], str]
    rubric_system_prompt: Callable[[list[RubricItem]], str]


LLM_WIRES: dict[Generation, LlmWire] = {
    "2.x": LlmWire(resolve_prompt, JUDGE_SYSTEM_PROMPT, VERDICT_SCHEMA, parse_judge_reply,
                   lambda items, context: rubric_protocol.case_user_prompt(items, context.eval_case, context.candidate,
                                                                    context.file_changes),
                   rubric_protocol.system_prompt),
    "4.x": LlmWire(grader_prompts.resolve_grader_prompt, grader_prompts.GRADER_SYSTEM_PROMPT,
                   grader_prompts.GRADER_VERDICT_SCHEMA, grader_prompts.parse_grader_reply,
                   grader_prompts.rubric_user_prompt, grader_prompts.rubric_system_prompt),
}
"""The LLM-judge half of generations.py's table: the only place a generation picks a judge's prompts and reply."""
assert set(LLM_WIRES) == set(GENERATIONS), "every generation in generations.py has an LLM-judge wire"


def _failed(message: str, raw: dict[str, Any] | None, retries: int = 0) -> EvaluationScore:
    return EvaluationScore(
        score=0.0,
        misses=[f"LLM judge failed: {message}"],
        reasoning=message,
        evaluator_raw_request=raw,
        retries=retries,
        error=message,
    )


def _reply_text(response: TargetResponse) -> str:
    if response.text:
        return response.text
    for message in reversed(response.output_messages):
        if message.role == "assistant":
            return message.text()
    return ""


DEFAULT_JUDGE_TEMPERATURE = 0.0
"""Judging is a measurement: the same answer should get the same score."""

_Reply = TypeVar("_Reply")


@dataclass
class _Asked(Generic[_Reply]):
    """What asking the judge (up to `max_reply_attempts` times) came to."""

    reply: _Reply | None
    retries: int
    failed: EvaluationScore | None = None
    """The provider failed: this is the evaluator's result."""
    problem: JudgeReplyError | None = None
    """Every reply was unusable: the last reason why."""


class LlmJudgeEvaluator:
    def __init__(
        self,
        resolve_judge_provider: ResolveJudgeProvider | None = None,
        max_output_tokens: int | None = None,
        temperature: float | None = DEFAULT_JUDGE_TEMPERATURE,
        max_reply_attempts: int = DEFAULT_MAX_REPLY_ATTEMPTS,
        default_timeout_seconds: float = DEFAULT_JUDGE_TIMEOUT_SECONDS,
    ) -> None:
        self.resolve_judge_provider = resolve_judge_provider
        self.max_output_tokens = max_output_tokens
        self.temperature = temperature
        self.max_reply_attempts = max(1, max_reply_attempts)
        self.default_timeout_seconds = default_timeout_seconds

    def _provider(self, context: EvaluationContext) -> Provider | None:
        return self.resolve_judge_provider(context) if self.resolve_judge_provider is not None else None

    def _judge_for(self, config: LlmJudgeConfig, context: EvaluationContext,
                   raw: dict[str, Any]) -> tuple[Provider, str | None] | EvaluationScore:
        """The judge target and model (both recorded in `raw`), or the failed result saying why there is no judge."""
        model = config.model or context.judge_model
        if model:
            raw["model"] = model
        try:
            provider = self._provider(context)
        except Exception as exc:  # noqa: BLE001 - a misconfigured judge target (any resolver's) is this case's error
            raw["error"] = str(exc)
            return _failed(f"judge target cannot be used: {exc}", raw)
        if provider is None:
            target = context.target or "(unnamed)"
            message = (
                f"no judge target configured: set judge_target on target '{target}' in "
                f".agentv/targets.yaml (or `target:` on the llm_judge evaluator)"
            )
            raw["error"] = message
            return _failed(message, raw)
        raw["target"] = provider.name
        return provider, model

    def evaluate(self, config: LlmJudgeConfig, context: EvaluationContext) -> EvaluationScore:
        if config.generation == "4.x":  # 4.42 grades an answer of content blocks as their text (answer_files.py)
            try:
                answer = graded_answer(context, config.preprocessors, self.default_timeout_seconds)
            except PreprocessorFailed as exc:
                return _failed(str(exc), {"error": str(exc)})
            if answer is not None:  # the text of files the agent wrote: a key in them is hidden as in the answer
                context = replace(context, candidate=redact(answer))
            agentic = self._agent_mode(config, context)
            if agentic is not None:
                return agentic
        if config.rubrics:
            return self._rubric_judge(config, context)
        wire = LLM_WIRES[config.generation]
        raw: dict[str, Any] = {}
        try:
            prompt = wire.resolve_prompt(context, config, self.default_timeout_seconds)
        except PromptTemplateError as exc:
            raw.update({"prompt_source": "script", **exc.raw, "error": str(exc)})
            return _failed(str(exc), raw)
        raw.update(
            {"user_prompt": prompt.text, "system_prompt": wire.system_prompt, "prompt_source": prompt.source}
        )
        raw.update({f"prompt_{k}": v for k, v in prompt.details.items() if v is not None})
        judge = self._judge_for(config, context, raw)
        if isinstance(judge, EvaluationScore):
            return judge
        provider, model = judge
        return self._judge(context, config, provider, prompt.text, model, raw, wire)

    def _agent_mode(self, config: LlmJudgeConfig, context: EvaluationContext) -> EvaluationScore | None:
        """AgentV 4.42's agent modes when the grader is an `agentv` target (agent_grader.py); None otherwise,
        and when the judge cannot be resolved (the plain path reports why)."""
        try:
            provider = self._provider(context)
        except Exception:  # noqa: BLE001 - reported by the plain path, which resolves it again
            return None
        if not is_agent_grader(provider):
            return None
        assert provider is not None
        return agent_grader.grade(config, context, provider, self.default_timeout_seconds, self.max_output_tokens)

    def _rubric_judge(self, config: LlmJudgeConfig, context: EvaluationContext) -> EvaluationScore:
        """A rubric judge: AgentV's rubric prompt, a `checks` reply, the score from `judging/rubric_protocol.py`."""
        items = list(config.rubrics or [])
        scored = rubric_protocol.is_score_range(items)
        wire = LLM_WIRES[config.generation]
        prompt = wire.rubric_prompt(items, context)
        system = wire.rubric_system_prompt(items)
        raw: dict[str, Any] = {"user_prompt": prompt, "system_prompt": system, "prompt_source": "rubrics"}
        judge = self._judge_for(config, context, raw)
        if isinstance(judge, EvaluationScore):
            return judge
        provider, model = judge
        asked = self._ask(context, config, provider, prompt, system, model, raw, rubric_protocol.reply_schema(items),
                          lambda text: parse_checks_reply(text, scored))
        if asked.failed is not None:
            return asked.failed
        if asked.reply is None:
            return self._skipped("rubric checks", asked, raw)
        outcome = rubric_protocol.score_checks(items, asked.reply, evidence_apart=config.generation == "4.x",
                                               as_reported=config.generation == "4.x")
        return EvaluationScore(
            score=outcome.score,
            verdict="fail" if outcome.failed_required else None,
            hits=outcome.hits,
            misses=outcome.misses,
            reasoning=asked.reply.overall_reasoning,
            details=outcome.details,
            evaluator_raw_request=raw,
            retries=asked.retries,
        )

    def _judge(
        self,
        context: EvaluationContext,
        config: LlmJudgeConfig,
        provider: Provider,
        prompt: str,
        model: str | None,
        raw: dict[str, Any],
        wire: LlmWire,
    ) -> EvaluationScore:
        """Ask `provider` for a verdict: 2.x's `{score, hits, misses, reasoning}`, 4.x's `{score, assertions}`."""
        asked = self._ask(context, config, provider, prompt, wire.system_prompt, model, raw, wire.reply_schema,
                          wire.parse_reply)
        if asked.failed is not None:
            return asked.failed
        reply = asked.reply
        if reply is None:
            return self._skipped("verdict", asked, raw)
        return EvaluationScore(
            score=reply.score,
            hits=reply.hits,
            misses=reply.misses,
            reasoning=reply.reasoning,
            evaluator_raw_request=raw,
            retries=asked.retries,
        )

    def _skipped(self, what: str, asked: _Asked[Any], raw: dict[str, Any]) -> EvaluationScore:
        """AgentV's `skip`: no usable reply after every ask. Out of the weighted mean, and an error."""
        message = f"judge reply was not a valid {what} after {self.max_reply_attempts} attempt(s): {asked.problem}"
        raw["error"] = message
        raw["attempts"] = self.max_reply_attempts
        skipped = _failed(message, raw, asked.retries)
        skipped.verdict = "skip"
        return skipped

    def _ask(
        self,
        context: EvaluationContext,
        config: LlmJudgeConfig,
        provider: Provider,
        prompt: str,
        system_prompt: str,
        model: str | None,
        raw: dict[str, Any],
        reply_schema: dict[str, Any] | None,
        parse: Callable[[str], _Reply],
    ) -> _Asked[_Reply]:
        """Ask `provider`, asking again after an unusable reply, up to `max_reply_attempts` calls.

        `reply_schema` is what the provider is asked to hold the reply to (structured output,
        where the target supports it and has not turned it off); the reply is validated by
        `parse` either way. What every call used (tokens, cost) is added up in `raw` under
        `JUDGE_USAGE_KEY`, re-asks included: each was paid for.
        """
        retries = 0
        used = Usage()
        problem: JudgeReplyError | None = None
        for attempt in range(1, self.max_reply_attempts + 1):
            request = ProviderRequest(
                question=prompt,
                system_prompt=system_prompt,
                model=model,
                temperature=self.temperature if config.temperature is None else config.temperature,
                max_output_tokens=self.max_output_tokens,
                eval_case_id=context.eval_case.id,
                reply_schema=reply_schema,
                role="judge",
                attempt=attempt - 1,
                run=context.run,
            )
            try:
                response = provider.invoke(request)
            except ProviderError as exc:
                retries += int(getattr(exc, "retries", 0) or 0)
                raw["error"] = str(exc)
                raw["attempts"] = attempt
                return _Asked(None, retries, _failed(f"judge target '{provider.name}' failed: {exc}", raw, retries))
            except Exception as exc:  # noqa: BLE001 - a provider bug must not take the run down
                raw["error"] = f"{type(exc).__name__}: {exc}"
                raw["attempts"] = attempt
                message = f"judge target '{provider.name}' failed: {type(exc).__name__}: {exc}"
                return _Asked(None, retries, _failed(message, raw, retries))
            retries += response.retries
            used = used + Usage.reported(response.token_usage, response.cost_usd)
            raw[JUDGE_USAGE_KEY] = used.as_json()
            try:
                reply = parse(_reply_text(response))
            except JudgeReplyError as exc:
                problem = exc
                if attempt < self.max_reply_attempts:
                    retries += 1
                continue
            raw["attempts"] = attempt
            return _Asked(reply, retries)
        return _Asked(None, retries, problem=problem)
