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
from datetime import datetime, timezone
from typing import Any

from ..base.jscompat import reported_number


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
    return reported_number(call.get("duration_ms"))


def _epoch_ms(value: Any) -> int | None:
    """JavaScript's `new Date(value).getTime()` of an ISO 8601 time (whole milliseconds; no zone is UTC)."""
    if not isinstance(value, str):
        return None
    try:
        stamp = datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=timezone.utc)
    return math.floor(stamp.timestamp() * 1000)


def _summary_duration(call: dict[str, Any]) -> float | None:
    """The duration AgentV's computeTraceSummary lists for a call: its `duration_ms`, else (the key absent)
    `end_time` - `start_time` when it has both."""
    if "duration_ms" in call:
        return _duration(call)
    start, end = _epoch_ms(call.get("start_time")), _epoch_ms(call.get("end_time"))
    return _duration({"duration_ms": end - start}) if start is not None and end is not None else None


def _iso(epoch_ms: int) -> str:
    """JavaScript's `toISOString()`: UTC, whole milliseconds, `Z`."""
    stamp = datetime.fromtimestamp(epoch_ms // 1000, tz=timezone.utc)
    return f"{stamp:%Y-%m-%dT%H:%M:%S}.{epoch_ms % 1000:03d}Z"


def time_bounds(messages: list[dict[str, Any]]) -> dict[str, str]:
    """AgentV's computeTraceSummary times: `start_time`, the earliest `start_time` on the messages and their
    tool calls, and `end_time`, the latest `end_time`; each key only when some message or call has it."""
    starts: list[int] = []
    ends: list[int] = []
    for message in messages:
        calls = message.get("tool_calls")
        holders = [message, *(c for c in calls if isinstance(c, dict))] if isinstance(calls, list) else [message]
        for holder in holders:
            start, end = _epoch_ms(holder.get("start_time")), _epoch_ms(holder.get("end_time"))
            starts += [start] if start is not None else []
            ends += [end] if end is not None else []
    bounds: dict[str, str] = {}
    if starts:
        bounds["start_time"] = _iso(min(starts))
    if ends:
        bounds["end_time"] = _iso(max(ends))
    return bounds


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
    tool's durations, `duration_ms` or else `end_time` - `start_time` (present only when some call has one).
    """
    calls = tool_calls(output_messages)
    by_name: dict[str, int] = {}
    durations: dict[str, list[float]] = {}
    for call in calls:
        by_name[call.name] = by_name.get(call.name, 0) + 1
        duration = _summary_duration(call.raw)
        if duration is not None:
            durations.setdefault(call.name, []).append(duration)
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
    summary.update(time_bounds(output_messages))
    return summary
