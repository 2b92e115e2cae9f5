"""`llm_judge`: a model grades the answer from a prompt template (seed 004, REQ-EVAL-002).

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
  `max_reply_attempts` calls in all, as AgentV does; then the last problem is reported. A
  score outside [0, 1] is never clamped into range.

`EvaluationScore.retries` counts network retries inside the provider calls plus re-asks after
invalid replies.
"""

from __future__ import annotations

from typing import Any

from ..errors import JudgeReplyError, PromptTemplateError, ProviderError
from ..judging.judge_reply import VERDICT_SCHEMA, JudgeReply, parse_judge_reply
from ..judging.templates import JUDGE_SYSTEM_PROMPT, resolve_prompt
from ..models import DEFAULT_JUDGE_TIMEOUT_SECONDS, EvaluationContext, EvaluationScore, LlmJudgeConfig, TargetResponse
from ..targets.base import Provider, ProviderRequest
from .base import ResolveJudgeProvider

DEFAULT_MAX_REPLY_ATTEMPTS = 3
"""AgentV asks the judge up to 3 times before giving up on its reply."""


def _failed(message: str, raw: dict[str, Any] | None, retries: int = 0) -> EvaluationScore:
    return EvaluationScore(
        score=0.0,
        misses=[f"LLM judge failed: {message}"],
        expected_aspect_count=1,
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

    def evaluate(self, config: LlmJudgeConfig, context: EvaluationContext) -> EvaluationScore:
        raw: dict[str, Any] = {}
        try:
            prompt = resolve_prompt(context, config, self.default_timeout_seconds)
        except PromptTemplateError as exc:
            raw.update({"prompt_source": "script", **exc.raw, "error": str(exc)})
            return _failed(str(exc), raw)
        raw.update(
            {"user_prompt": prompt.text, "system_prompt": JUDGE_SYSTEM_PROMPT, "prompt_source": prompt.source}
        )
        raw.update({f"prompt_{k}": v for k, v in prompt.details.items() if v is not None})
        model = config.model or context.judge_model
        if model:
            raw["model"] = model

        try:
            provider = self._provider(context)
        except Exception as exc:  # a misconfigured judge target is this case's error, not a crash
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
        return self._judge(context, config, provider, prompt.text, model, raw)

    def _judge(
        self,
        context: EvaluationContext,
        config: LlmJudgeConfig,
        provider: Provider,
        prompt: str,
        model: str | None,
        raw: dict[str, Any],
        reply_schema: dict[str, Any] | None = VERDICT_SCHEMA,
    ) -> EvaluationScore:
        """Ask `provider` for a verdict, asking again after an unusable reply.

        `reply_schema` is what the provider is asked to hold the reply to (structured output,
        where the target supports it and has not turned it off); the reply is validated by
        `parse_judge_reply` either way.
        """
        retries = 0
        problem: JudgeReplyError | None = None
        reply: JudgeReply | None = None
        for attempt in range(1, self.max_reply_attempts + 1):
            request = ProviderRequest(
                question=prompt,
                system_prompt=JUDGE_SYSTEM_PROMPT,
                model=model,
                temperature=self.temperature,
                max_output_tokens=self.max_output_tokens,
                eval_case_id=context.eval_case.id,
                reply_schema=reply_schema,
                extra={"role": "judge", "attempt": attempt - 1, "evaluator": config.name},
            )
            try:
                response = provider.invoke(request)
            except ProviderError as exc:
                retries += int(getattr(exc, "retries", 0) or 0)
                raw["error"] = str(exc)
                raw["attempts"] = attempt
                return _failed(f"judge target '{provider.name}' failed: {exc}", raw, retries)
            except Exception as exc:  # a provider bug must not take the run down
                raw["error"] = f"{type(exc).__name__}: {exc}"
                raw["attempts"] = attempt
                return _failed(
                    f"judge target '{provider.name}' failed: {type(exc).__name__}: {exc}", raw, retries
                )
            retries += response.retries
            try:
                reply = parse_judge_reply(_reply_text(response))
            except JudgeReplyError as exc:
                problem = exc
                if attempt < self.max_reply_attempts:
                    retries += 1
                continue
            raw["attempts"] = attempt
            break
        if reply is None:
            message = (
                f"judge reply was not a valid verdict after {self.max_reply_attempts} attempt(s): {problem}"
            )
            raw["error"] = message
            raw["attempts"] = self.max_reply_attempts
            return _failed(message, raw, retries)
        return EvaluationScore(
            score=reply.score,
            hits=reply.hits,
            misses=reply.misses,
            expected_aspect_count=max(1, len(reply.hits) + len(reply.misses)),
            reasoning=reply.reasoning,
            evaluator_raw_request=raw,
            retries=retries,
        )
