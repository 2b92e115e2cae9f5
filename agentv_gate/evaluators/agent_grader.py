"""AgentV 4.42's agent modes of an llm-grader, for a grader whose target is a `provider: agentv` one.

AgentV 4.42.4 picks the mode by who grades (llm-grader.ts `evaluate`, builtin-graders.ts `llmGraderFactory`):

* **built-in**: no `target:` on the grader, and the case target's grader (`grader_target`, else itself) is an
  `agentv` target. The model gets the workspace tools (workspace_tools.py) and AgentV's agent prompts, and
  runs up to 10 model calls (DEFAULT_MAX_STEPS) at temperature 0: AgentV runs these graders through its
  one shared grader, built without the evaluator's `max_steps` or `temperature`, so neither changes them;
* **delegate** (`grader_target`): `target:` names an `agentv` target. The grader is asked once, without
  tools, with AgentV's delegated prompt (the output schema at its end) and the agentv provider's own
  system prompt and temperature;
* any other grader (an LLM target, with or without `target:`) is the plain LLM grader (llm_judge.py):
  `max_steps` has no effect there either.

The verdict is read from the last reply as AgentV reads an agent's: `{score, assertions}`, or rubric
`checks` when the grader has rubrics; a reply that holds neither scores 0 with AgentV's one failed
assertion, "Failed to parse llm-grader agent response as valid evaluation JSON" (AgentV asks an agent only
once). A grader whose tool loop ran out of steps while still asking for tools has no verdict in its last
reply and gets that assertion too, as in AgentV; so does a delegated grader that answered nothing. Where
AgentV counts that 0 as a failing verdict, the gate also makes it this evaluator's error: the grader never
judged the answer, so `negate: true` must not invert it into a pass, a quarantine must not hide it, and a
trial of it must not be averaged with judged ones. The case without a workspace, a target that cannot be
used and a failed call are this evaluator's error too (AgentV fails the grader with the message; the gate
never scores a grader it could not run).
"""

from __future__ import annotations

from typing import Any

from ..errors import JudgeReplyError, PromptTemplateError
from ..judging import grader_prompts, rubric_protocol
from ..judging.judge_reply import parse_checks_reply
from ..judging.payload import case_messages
from ..models import EvaluationContext, EvaluationScore, LlmJudgeConfig, RubricItem, question_text
from ..targets.base import Provider, ProviderRequest
from ..targets.usage import JUDGE_USAGE_KEY, Usage
from .workspace_tools import WorkspaceTools

DEFAULT_MAX_STEPS = 10
"""AgentV 4.42's DEFAULT_MAX_STEPS: what its built-in agent grader runs with."""
AGENT_KIND = "agentv"
PARSE_FAILURE = "Failed to parse llm-grader agent response as valid evaluation JSON"
NO_WORKSPACE = "llm-grader built-in agent mode requires a workspace (workspacePath is not set)"

AGENT_SYSTEM_LINES = (
    "You are an expert grader with access to the workspace filesystem.",
    "Use the provided tools to investigate the workspace and verify the criteria are met.",
    "Thoroughly examine relevant files before making your assessment.",
    "",
)


def is_agent_grader(provider: Provider | None) -> bool:
    return provider is not None and getattr(provider, "kind", None) == AGENT_KIND


def _schema(items: list[RubricItem] | None) -> str:
    return grader_prompts.RUBRIC_SYSTEM_PROMPT if items else grader_prompts.GRADER_SYSTEM_PROMPT


def _sections(context: EvaluationContext, criteria: str | None) -> list[str]:
    """question, criteria, reference answer, answer, file changes and tool calls, as both agent prompts list them."""
    case = context.eval_case
    _, _, outputs = case_messages(context)
    parts = ["[[ ## question ## ]]", case.question or question_text(case.input_messages), "",
             "[[ ## criteria ## ]]", case.expected_outcome if criteria is None else criteria, ""]
    if case.reference_answer.strip():
        parts += ["[[ ## reference_answer ## ]]", case.reference_answer, ""]
    parts += ["[[ ## answer ## ]]", context.candidate, ""]
    if context.file_changes:
        parts += ["[[ ## file_changes ## ]]", context.file_changes, ""]
    tool_calls = grader_prompts.format_tool_calls(outputs)
    if tool_calls:
        parts += ["[[ ## tool_calls ## ]]", tool_calls, ""]
    return parts


def _rubric_lines(items: list[RubricItem]) -> list[str]:
    return [f"- [{item.id}]{' (REQUIRED)' if item.required else ''}{grader_prompts.weight_label(item)}: {item.outcome}"
            for item in items]


def built_in_user_prompt(context: EvaluationContext, items: list[RubricItem] | None, criteria: str | None) -> str:
    parts = ["Evaluate the candidate answer by investigating the workspace.", "", *_sections(context, criteria)]
    if items:
        parts += ["[[ ## rubrics ## ]]", *_rubric_lines(items), "",
                  "For each rubric, investigate the workspace to determine if it is satisfied. Provide brief reasoning."]
    else:
        parts.append("Investigate the workspace to verify the criteria. Provide a score between 0.0 and 1.0.")
    return "\n".join(parts)


def delegated_prompt(context: EvaluationContext, items: list[RubricItem] | None, criteria: str | None) -> str:
    parts = ["You are an expert grader. Investigate the workspace to verify the criteria are met.", "",
             *_sections(context, criteria)]
    if items:
        parts += ["[[ ## rubrics ## ]]", *_rubric_lines(items), "", _schema(items)]
    else:
        parts.append(_schema(items))
    return "\n".join(parts)


def _custom_template(context: EvaluationContext, config: LlmJudgeConfig,
                     timeout: float) -> tuple[str | None, str | None, str]:
    """(the grader's own prompt as a template, else None; criteria in place of the case's, else None; source)."""
    prompt = grader_prompts.resolve_grader_prompt(context, config, timeout)
    if prompt.source in ("script", "file", "inline"):
        return prompt.text, None, prompt.source
    if prompt.source == "inline-criteria":
        text = config.resolved_prompt_text if config.resolved_prompt_text is not None else config.prompt
        return None, str(text), prompt.source
    return None, None, prompt.source


def _failed(message: str, raw: dict[str, Any], details: dict[str, Any]) -> EvaluationScore:
    raw["error"] = message
    return EvaluationScore(score=0.0, misses=[f"LLM judge failed: {message}"], reasoning=message,
                           evaluator_raw_request=raw, details={**details, "error": message}, error=message)


def _never_judged(problem: str, raw: dict[str, Any], details: dict[str, Any], retries: int) -> EvaluationScore:
    """AgentV's parse failure (score 0, its one failed assertion), and the gate's error saying why."""
    raw["reply_problem"] = problem
    return EvaluationScore(score=0.0, verdict="fail", misses=[PARSE_FAILURE], reasoning=PARSE_FAILURE,
                           details=details, evaluator_raw_request=raw, retries=retries,
                           error=f"{PARSE_FAILURE}: {problem}")


def _verdict(text: str, items: list[RubricItem] | None, raw: dict[str, Any], details: dict[str, Any],
             retries: int) -> EvaluationScore:
    """The verdict in the agent's last reply, or AgentV's parse failure (score 0, one failed assertion), an error."""
    try:
        if items:
            checks = parse_checks_reply(text, scored=False)
            outcome = rubric_protocol.score_checks(items, checks, evidence_apart=True)
            return EvaluationScore(score=outcome.score, verdict="fail" if outcome.failed_required else None,
                                   hits=outcome.hits, misses=outcome.misses, reasoning=checks.overall_reasoning,
                                   details={**(outcome.details or {}), **details}, evaluator_raw_request=raw,
                                   retries=retries)
        reply = grader_prompts.parse_grader_reply(text)
    except JudgeReplyError as exc:
        steps = details.get("steps")
        spent = f" after {steps} of its {DEFAULT_MAX_STEPS} model calls" if steps == DEFAULT_MAX_STEPS else ""
        return _never_judged(f"no verdict in the grader's last reply{spent} ({exc})", raw, details, retries)
    return EvaluationScore(score=reply.score, hits=reply.hits, misses=reply.misses, reasoning=reply.reasoning,
                           details=details, evaluator_raw_request=raw, retries=retries)


def grade(config: LlmJudgeConfig, context: EvaluationContext, provider: Provider, timeout: float,
          max_output_tokens: int | None) -> EvaluationScore:
    """Grade in AgentV's agent mode for `provider` (an agentv target): built-in, or delegate with `target:`."""
    items = list(config.rubrics or []) or None
    delegate = bool(config.target)
    mode = "grader_target" if delegate else "built-in"
    details: dict[str, Any] = {"mode": mode, **({"grader_target": provider.name} if delegate else {})}
    raw: dict[str, Any] = {"mode": mode, "target": provider.name}
    try:
        template, criteria, source = _custom_template(context, config, timeout)
    except PromptTemplateError as exc:
        raw.update({"prompt_source": "script", **exc.raw})
        return _failed(str(exc), raw, details)
    raw["prompt_source"] = source
    if delegate:
        prompt = f"{template}\n\n{_schema(items)}" if template is not None else delegated_prompt(context, items, criteria)
        raw["prompt"] = prompt
        request = ProviderRequest(question=prompt, eval_case_id=context.eval_case.id, role="judge",
                                  max_output_tokens=max_output_tokens, run=context.run)
    else:
        workspace = context.run.workspace_path
        system = "\n".join([*AGENT_SYSTEM_LINES, _schema(items)])
        user = template if template is not None else built_in_user_prompt(context, items, criteria)
        raw.update({"system_prompt": system, "user_prompt": user, "max_steps": DEFAULT_MAX_STEPS})
        if not workspace:
            return _failed(NO_WORKSPACE, raw, details)
        request = ProviderRequest(question=user, system_prompt=system, temperature=0.0,
                                  eval_case_id=context.eval_case.id, role="judge", max_output_tokens=max_output_tokens,
                                  tools=WorkspaceTools(workspace).tools(), max_steps=DEFAULT_MAX_STEPS,
                                  run=context.run)
    try:
        response = provider.invoke(request)
    except Exception as exc:  # noqa: BLE001 - a failed grader call (any provider's) is this evaluator's error
        return _failed(f"llm-grader {mode} evaluation failed: {exc}", raw, details)
    raw[JUDGE_USAGE_KEY] = Usage.reported(response.token_usage, response.cost_usd).as_json()
    if not delegate:
        steps = (response.raw or {}).get("steps", 1)
        calls = (response.raw or {}).get("tool_calls", 0)
        details.update({"steps": steps, "tool_calls": calls})
        raw.update({"steps": steps, "tool_calls": calls})
    text = response.text
    if delegate and not text:
        message = f"llm-grader {mode} returned no assistant response"
        return EvaluationScore(score=0.0, verdict="fail", misses=[message], reasoning=message, details=details,
                               evaluator_raw_request=raw, retries=response.retries, error=message)
    return _verdict(text, items, raw, details, response.retries)
