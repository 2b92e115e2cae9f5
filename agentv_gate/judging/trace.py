"""Tool calls and the trace summary, read off the target's output messages as AgentV 2.19 reads them.

A message carries `tool_calls: [{tool, input, output, id, duration_ms}]`, AgentV's shape, which the `cli`
target passes through and the HTTP providers map their tool-use replies to. Only that shape is read, as
AgentV's cli provider reads it: a call without a string `tool` is dropped, the arguments are `input` (not
`args` or `arguments`), the duration is `duration_ms`, and a `toolCalls` list or OpenAI's raw
`function: {name, arguments}` is no call. Reading those too once passed a trajectory AgentV fails: the
agent "called" `search` here and nothing there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """One tool call, in the order the agent made it."""

    name: str
    input: Any
    duration_ms: float | None
    message_index: int
    raw: dict[str, Any]


def _name(call: dict[str, Any]) -> str:
    return str(call["tool"])


def _input(call: dict[str, Any]) -> Any:
    return call.get("input")


def _duration(call: dict[str, Any]) -> float | None:
    value = call.get("duration_ms")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        return None
    return float(value)


def raw_tool_calls(messages: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """(message index, tool call mapping) pairs across the messages, in order."""
    calls: list[tuple[int, dict[str, Any]]] = []
    for index, message in enumerate(messages):
        raw = message.get("tool_calls") or []
        if isinstance(raw, list):
            calls.extend((index, call) for call in raw if isinstance(call, dict) and isinstance(call.get("tool"), str))
    return calls


def tool_calls(messages: list[dict[str, Any]]) -> list[ToolCall]:
    return [ToolCall(_name(call), _input(call), _duration(call), index, call)
            for index, call in raw_tool_calls(messages)]


def tool_name(call: dict[str, Any]) -> str:
    return _name(call)


def trace_summary(output_messages: list[dict[str, Any]]) -> dict[str, Any]:
    """AgentV's trace summary from the answer's messages, with both generations' key names.

    `event_count` counts tool calls (the samples show 0 with no tools, even though a 4.42 trace
    lists message events); `llm_call_count` counts assistant turns; `tool_durations` lists each
    tool's reported durations (present only when some call reported one).
    """
    calls = tool_calls(output_messages)
    by_name: dict[str, int] = {}
    durations: dict[str, list[float]] = {}
    for call in calls:
        by_name[call.name] = by_name.get(call.name, 0) + 1
        if call.duration_ms is not None:
            durations.setdefault(call.name, []).append(call.duration_ms)
    errors = sum(1 for call in calls
                 if call.raw.get("error") or call.raw.get("is_error") or call.raw.get("status") == "error")
    summary: dict[str, Any] = {
        "event_count": len(calls),
        "tool_names": sorted(by_name),
        "tool_calls_by_name": dict(by_name),
        "tool_calls": dict(by_name),
        "error_count": errors,
        "llm_call_count": sum(1 for m in output_messages if m.get("role") == "assistant"),
    }
    if durations:
        summary["tool_durations"] = durations
    return summary
