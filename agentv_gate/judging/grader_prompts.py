"""An AgentV 4.x `llm-grader`'s prompts and reply, word for word as AgentV 4.42.4 sends and reads them.

4.x renamed its template variables to plain text: `{{input}}` is the question, `{{output}}` the answer and
`{{expected_output}}` the reference answer, each trimmed text (2.x filled `{{input}}`/`{{output}}` with the
messages as JSON), beside `{{criteria}}`, `{{metadata}}` / `{{metadata_json}}`, `{{rubrics}}` /
`{{rubrics_json}}`, `{{file_changes}}` and `{{tool_calls}}` (`- Tool: key input`, one line per call).
An unknown `{{name}}` stays as written. The default template says "expert grader" and names its
sections as 2.x did; `[[ ## file_changes ## ]]` and `[[ ## tool_calls ## ]]` follow it when there are
any. The system prompt asks for `{score, assertions: [{text, passed, evidence?}], details?}`; the
reply's first 8 assertions are kept (4.42's slice), passed ones as hits and failed ones as misses.

The rubric prompts differ from 2.19's in their first line ("expert grader"), in the file-changes and
tool-calls sections, and in the rubric operators (`operator: contradiction` adds its guidance).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import JudgeReplyError
from ..models import DEFAULT_JUDGE_TIMEOUT_SECONDS, LlmJudgeConfig, PromptScriptConfig, RubricItem, question_text
from .grader_payload import build_prompt_template_payload
from .judge_reply import JudgeReply, _read_one, _score, _strict_object, _text
from .payload import case_messages
from .rubric_protocol import score_range_lines
from .templates import ResolvedPrompt, _script_argv, render_template, run_prompt_script

if TYPE_CHECKING:
    from ..models import EvaluationContext

GRADER_TEMPLATE = """You are an expert grader. Your goal is to grade the answer based on how well it achieves the criteria for the original task.

Use the reference_answer as a gold standard for a high-quality response (if provided). The reference_answer may be a simple text response, or it may contain a sequence of expected agent messages including tool calls. When it contains multiple messages, the last message represents the final expected answer. The answer does not need to match it verbatim, but should capture the key points and follow the same spirit.

Be concise and focused in your evaluation. Provide succinct, specific feedback rather than verbose explanations.

[[ ## criteria ## ]]
{{criteria}}

[[ ## question ## ]]
{{input}}

[[ ## reference_answer ## ]]
{{expected_output}}

[[ ## answer ## ]]
{{output}}"""  # noqa: E501 - AgentV 4.42's DEFAULT_GRADER_TEMPLATE, verbatim

GRADER_SYSTEM_PROMPT = "\n".join([
    "You must respond with a single JSON object matching this schema:",
    "",
    "{",
    '  "score": <number between 0.0 and 1.0>,',
    '  "assertions": [',
    "    {",
    '      "text": "<brief description of what was checked>",',
    '      "passed": <boolean>,',
    '      "evidence": "<concise evidence, 1-2 sentences, optional>"',
    "    }",
    "  ],",
    '  "details": {<optional object with domain-specific structured metrics>}',
    "}",
])
"""AgentV 4.42's buildOutputSchema(), line for line."""

RUBRIC_SYSTEM_PROMPT = """You are an expert grader. Evaluate the candidate answer against each rubric item.
You must return a valid JSON object matching this schema:
{
  "checks": [
    {
      "id": "string (rubric id)",
      "satisfied": boolean,
      "reasoning": "string (brief explanation)"
    }
  ],
  "overall_reasoning": "string (summary)"
}"""
"""AgentV 4.42's buildRubricOutputSchema(), verbatim."""

SCORE_RANGE_SYSTEM_PROMPT = """You are an expert grader. Score the candidate answer on each criterion.
You must return a valid JSON object matching this schema:
{
  "checks": [
    {
      "id": "string (criterion id)",
      "score": integer (0-10),
      "reasoning": "string (brief explanation for score)"
    }
  ],
  "overall_reasoning": "string (summary, optional)"
}

Important: The "score" must be an integer from 0 to 10 that falls within one of the defined score ranges for that criterion."""
"""AgentV 4.42's buildScoreRangeOutputSchema(), verbatim."""

GRADER_VERDICT_SCHEMA: dict[str, Any] = {
    "name": "grader_verdict",
    "schema": _strict_object({
        "score": {"type": "number", "description": "0 to 1"},
        "assertions": {"type": "array", "items": _strict_object({
            "text": {"type": "string"}, "passed": {"type": "boolean"}, "evidence": {"type": "string"}})},
    }),
}
"""The 4.x reply as a reply schema for structured output (the score is not bounded there: 7 is refused)."""

_VARIABLE = re.compile(r"\{\{\s*([a-zA-Z0-9_]+)\s*\}\}")
"""A `{{ name }}` placeholder, as 4.42's containsTemplateVariables finds them."""

MAX_ASSERTIONS = 8
"""4.42 keeps a freeform grader's first 8 assertions."""

OPERATOR_GUIDANCE = {
    "correctness": "Correctness: mark satisfied only when the answer positively supports or fulfills the outcome. "
                   "Omission or contradiction should not satisfy it.",
    "contradiction": "Contradiction guard: mark satisfied when the answer does not make a claim that contradicts the "
                     "outcome. Do not require the answer to mention the outcome; mark unsatisfied only for "
                     "incompatible claims.",
}
"""AgentV 4.42's rubric operator guidance, verbatim (rubric-operators.ts)."""

KEY_INPUT_FIELDS = {"Skill": ("skill",), "Read": ("file_path",), "Write": ("file_path",), "Edit": ("file_path",),
                    "Bash": ("command",), "Grep": ("pattern",), "Glob": ("pattern",)}
"""The input field `{{tool_calls}}` shows per tool (format-tool-calls.ts); other tools show their first short
string input."""
MAX_DETAIL = 120


def _pretty(value: Any) -> str:
    return "" if value is None else json.dumps(value, indent=2, ensure_ascii=False)


def _truncate(text: str) -> str:
    return text if len(text) <= MAX_DETAIL else f"{text[:MAX_DETAIL]}…"


def format_tool_calls(messages: list[dict[str, Any]]) -> str:
    """4.42's `formatToolCalls`: `- Tool: detail` per call of the answer's messages, '' without calls."""
    lines: list[str] = []
    for message in messages:
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if not isinstance(call, dict):
                continue
            name = str(call.get("tool") or "unknown")
            detail = _key_detail(name, call.get("input"))
            lines.append(f"- {name}: {detail}" if detail else f"- {name}")
    return "\n".join(lines)


def _key_detail(name: str, value: Any) -> str:
    if not isinstance(value, dict):
        return ""
    for key in KEY_INPUT_FIELDS.get(name, ()):
        if isinstance(value.get(key), str) and value[key]:
            return _truncate(value[key])
    for item in value.values():
        if isinstance(item, str) and 0 < len(item) <= MAX_DETAIL:
            return _truncate(item)
    return ""


def rubric_dicts(items: list[RubricItem]) -> list[dict[str, Any]]:
    """The rubric items as 4.42 holds them (parseRubricItems' keys and order), for `{{rubrics}}`."""
    out: list[dict[str, Any]] = []
    for item in items:
        if item.score_ranges:
            entry: dict[str, Any] = {"id": item.id, "weight": item.weight}
            if item.outcome:
                entry["outcome"] = item.outcome
        else:
            entry = {"id": item.id, "outcome": item.outcome}
        if item.operator:
            entry["operator"] = item.operator
        if not item.score_ranges:
            entry["weight"] = item.weight
        entry["required"] = item.required
        if item.required_min_score is not None:
            entry["required_min_score"] = item.required_min_score
        if item.score_ranges:
            entry["score_ranges"] = [{"score_range": list(b.score_range), "outcome": b.outcome}
                                     for b in item.score_ranges]
        out.append(entry)
    return out


def grader_variables(context: EvaluationContext, items: list[RubricItem] | None) -> dict[str, str]:
    """Every variable a 4.x prompt may use, filled as 4.42's buildTemplateVariables fills it."""
    case = context.eval_case
    _, _, outputs = case_messages(context)
    rubric = rubric_dicts(items) if items else None
    return {
        "input": (case.question or question_text(case.input_messages)).strip(),
        "output": (context.candidate or "").strip(),
        "expected_output": case.reference_answer.strip(),
        "criteria": case.expected_outcome.strip(),
        "metadata": _pretty(case.metadata),
        "metadata_json": "" if case.metadata is None else json.dumps(case.metadata, ensure_ascii=False,
                                                                       separators=(",", ":")),
        "rubrics": _pretty(rubric),
        "rubrics_json": "" if rubric is None else json.dumps(rubric, ensure_ascii=False, separators=(",", ":")),
        "file_changes": context.file_changes or "",
        "tool_calls": format_tool_calls(outputs),
    }


def default_grader_prompt(context: EvaluationContext, render: Callable[[str, dict[str, str]], str],
                          criteria: str | None = None) -> str:
    """The default template, then the file changes and tool calls when there are any (4.42 adds them to
    its own template only); `criteria` in place of the case's (an inline prompt with no variables)."""
    variables = grader_variables(context, None)
    if criteria is not None:
        variables["criteria"] = criteria.strip()
    text = render(GRADER_TEMPLATE, variables)
    if variables["file_changes"]:
        text += f"\n\n[[ ## file_changes ## ]]\n{variables['file_changes']}"
    if variables["tool_calls"]:
        text += f"\n\n[[ ## tool_calls ## ]]\n{variables['tool_calls']}"
    return text


def weight_label(item: RubricItem) -> str:
    """` (weight: W)` for a weight other than 1, as JavaScript prints the number."""
    weight = item.weight
    shown = int(weight) if float(weight).is_integer() else weight
    return "" if weight == 1.0 else f" (weight: {shown})"


def _guidance(items: list[RubricItem]) -> list[str]:
    return [OPERATOR_GUIDANCE[op] for op in dict.fromkeys(i.operator for i in items if i.operator)]


def rubric_user_prompt(items: list[RubricItem], context: EvaluationContext) -> str:
    """4.42's buildRubricPrompt (checklist) or buildScoreRangePrompt (an item has score ranges)."""
    case = context.eval_case
    question = case.question or question_text(case.input_messages)
    _, _, outputs = case_messages(context)
    scored = any(item.score_ranges for item in items)
    if scored:
        parts = ["You are an expert grader. Score the candidate answer on each criterion below using the provided "
                 "score ranges.",
                 "For each criterion, output an integer score from 0 to 10 based on which score range best matches "
                 "the answer.", ""]
    else:
        parts = ["You are an expert grader. Evaluate the candidate answer against each rubric item below.", ""]
    parts += ["[[ ## question ## ]]", question, "", "[[ ## criteria ## ]]", case.expected_outcome, ""]
    if case.reference_answer.strip():
        parts += ["[[ ## reference_answer ## ]]", case.reference_answer, ""]
    parts += ["[[ ## answer ## ]]", context.candidate, ""]
    file_changes, tool_calls = context.file_changes or "", format_tool_calls(outputs)
    if file_changes:
        parts += ["[[ ## file_changes ## ]]", file_changes, ""]
    if tool_calls:
        parts += ["[[ ## tool_calls ## ]]", tool_calls, ""]
    guidance = _guidance(items)
    if not scored:
        parts.append("[[ ## rubrics ## ]]")
        if guidance:
            parts += ["", "Operator guidance:", *(f"- {line}" for line in guidance), ""]
        for item in items:
            required = " (REQUIRED)" if item.required else ""
            operator = f" (operator: {item.operator})" if item.operator else ""
            parts.append(f"- [{item.id}]{required}{weight_label(item)}{operator}: {item.outcome}")
        parts += ["", "For each rubric, determine if it is satisfied and provide brief reasoning."]
        return "\n".join(parts)
    parts.append("[[ ## scoring_criteria ## ]]")
    for item in items:
        minimum = f" [REQUIRED: min score {item.required_min_score}]" if item.required_min_score is not None else ""
        parts += ["", f"### Criterion: {item.id}{weight_label(item)}{minimum}"]
        if item.operator:
            parts.append(f"Operator: {item.operator}")
        if item.outcome:
            parts.append(f"Description: {item.outcome}")
        parts += score_range_lines(item)
    if guidance:
        parts += ["", *guidance]
    parts += ["", "For each criterion, provide an integer score 0-10 that matches one of its defined score ranges."]
    return "\n".join(parts)


def rubric_system_prompt(items: list[RubricItem]) -> str:
    return SCORE_RANGE_SYSTEM_PROMPT if any(item.score_ranges for item in items) else RUBRIC_SYSTEM_PROMPT


def validate_grader_verdict(obj: dict[str, Any]) -> JudgeReply:
    """4.42's freeform schema: `score` a number in 0..1, `assertions` (optional) a list of `{text, passed,
    evidence?}`; its first 8 are kept, passed ones as hits, failed ones as misses, by their text alone (4.42
    keeps the evidence apart, in `assertions[].evidence`)."""
    if "score" not in obj:
        keys = ", ".join(sorted(map(str, obj))) or "none"
        raise JudgeReplyError(f"JSON object has no 'score' (keys: {keys})")
    score = _score(obj["score"])
    assertions = obj.get("assertions", [])
    if not isinstance(assertions, list):
        raise JudgeReplyError(f"'assertions' must be a list, got {json.dumps(assertions)[:80]}")
    hits: list[str] = []
    misses: list[str] = []
    for index, item in enumerate(assertions):
        where = f"assertions[{index}]: "
        if not isinstance(item, dict) or not isinstance(item.get("passed"), bool):
            raise JudgeReplyError(f"{where}expected {{text, passed: true|false, evidence?}}")
        text = _text(item, "text", where, required=True) or ""
        _text(item, "evidence", where)  # checked as 4.42's schema checks it; not part of the text
        if index < MAX_ASSERTIONS:
            (hits if item["passed"] else misses).append(text)  # 4.42 keeps the evidence apart
    return JudgeReply(score=score, hits=hits, misses=misses)


def parse_grader_reply(text: str) -> JudgeReply:
    """The 4.x verdict in `text`; JudgeReplyError saying what was expected and what came."""
    return _read_one(text, validate_grader_verdict, lambda reply: reply.score, "verdicts with different scores",
                     '{"score": 0..1, "assertions": [{"text": ..., "passed": true|false}]}', "score")


def _grader_script_config(config: LlmJudgeConfig) -> dict[str, Any] | None:
    """4.42's config for a prompt script: the prompt's own `config` when it has one, else the evaluator's."""
    if isinstance(config.prompt, PromptScriptConfig) and config.prompt.config is not None:
        return dict(config.prompt.config)
    return dict(config.config) if config.config else None


def _script_timeout(config: LlmJudgeConfig, default_timeout_seconds: float) -> float:
    if isinstance(config.prompt, PromptScriptConfig) and config.prompt.timeout_seconds:
        return config.prompt.timeout_seconds
    return default_timeout_seconds


def resolve_grader_prompt(context: EvaluationContext, config: LlmJudgeConfig,
                          default_timeout_seconds: float = DEFAULT_JUDGE_TIMEOUT_SECONDS) -> ResolvedPrompt:
    """A 4.x grader's user prompt: its text (inline or `file://`) with 4.x's variables, a prompt script's
    stdout, or the default template."""
    argv = _script_argv(config)
    if argv:
        return run_prompt_script(argv, context, None, _script_timeout(config, default_timeout_seconds),
                                 payload=build_prompt_template_payload(context, _grader_script_config(config)))
    variables = grader_variables(context, config.rubrics)
    text = config.resolved_prompt_text
    if text is None and isinstance(config.prompt, str) and config.prompt.strip():
        text = config.prompt
    if text is None:
        return ResolvedPrompt(default_grader_prompt(context, render_template), "default")
    if config.resolved_prompt_path is not None:  # a `file://` template replaces the default one
        return ResolvedPrompt(render_template(text, variables), "file", {"file": str(config.resolved_prompt_path)})
    if any(name in variables for name in _VARIABLE.findall(text)):
        return ResolvedPrompt(render_template(text, variables), "inline")
    # 4.42 (#982): inline text naming none of its variables is the criteria of the default template
    return ResolvedPrompt(default_grader_prompt(context, render_template, criteria=text), "inline-criteria")
