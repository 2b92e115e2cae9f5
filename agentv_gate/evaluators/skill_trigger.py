"""`skill-trigger` (AgentV 4.x): did the agent invoke the named skill, read off its tool calls as 4.42 reads them.

The first call that shows the skill decides, in the agent's order, across every output message: a call of a tool
named `skill` (any case) whose `input.skill` contains the name, a `read` (any case) whose `input.file_path` (else
`input.path`) contains `skills/<name>/`, or else any call whose output (text, or its JSON) contains that path.
The score is 1 when that matches `should_trigger`, else 0, with one assertion in 4.42's words. Tool names are
compared as the target reported them: the gate's targets (cli, mock, the HTTP models) report them as written,
as AgentV's do, which normalise names only for agent CLIs the gate does not run.
"""

from __future__ import annotations

import json
from typing import Any

from ..judging.payload import message_dict
from ..judging.trace import raw_tool_calls
from ..models import EvaluationContext, EvaluationScore, SkillTriggerConfig
from .base import binary


def _js_string(value: Any) -> str:
    """JavaScript's `String(value ?? '')` for the values a tool call's JSON can hold."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dict):
        return "[object Object]"
    if isinstance(value, list):
        return ",".join(_js_string(item) for item in value)
    return str(value)


def _field(fields: Any, *names: str) -> Any:
    """`input.a ?? input.b`: the first of `names` that is present and not null, on a mapping input."""
    if not isinstance(fields, dict):
        return None
    return next((fields[name] for name in names if fields.get(name) is not None), None)


def _output_text(output: Any) -> str:
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, separators=(",", ":"))


def _evidence(skill: str, calls: list[dict[str, Any]]) -> str | None:
    """What shows the skill was invoked (4.42's words), or None."""
    path = f"skills/{skill}/"
    for call in calls:
        tool = call["tool"]
        fields = call.get("input")
        if tool.lower() == "skill":
            argument = _js_string(_field(fields, "skill"))
            if skill in argument:
                return f'Skill tool invoked with skill="{argument}"'
        elif tool.lower() == "read":
            file_path = _js_string(_field(fields, "file_path", "path"))
            if path in file_path:
                return f"Read tool loaded skill file: {file_path}"
        if call.get("output") is not None and path in _output_text(call["output"]):
            return f'Tool "{tool}" output referenced skill file for "{skill}"'
    return None


class SkillTriggerEvaluator:
    def evaluate(self, config: SkillTriggerConfig, context: EvaluationContext) -> EvaluationScore:
        messages = [message_dict(m) for m in context.output_messages]
        calls = [call for _, call in raw_tool_calls(messages)]
        evidence = _evidence(config.skill, calls)
        skill = config.skill
        if config.should_trigger:
            missed = (f'Skill "{skill}" not found in {len(calls)} tool call(s)' if calls
                      else "No tool calls recorded")
            return binary(evidence is not None, evidence or "", missed)
        return binary(evidence is None, f'Skill "{skill}" correctly did not trigger', evidence or "")
