"""The JSON an AgentV 4.x `code-grader` reads on stdin, key for key as AgentV 4.42.4 writes it.

4.x changed what the central key means: `output` is the final answer as a string (2.x sent the answer's
messages there), and the transcript moved to `messages` and `trace`. A grader written against 4.42's
SDK reads `output` as text; given the 2.x message list it sees no answer and scores 0 where AgentV
scores 1. So a 4.x grader gets exactly 4.42's payload (`CodeGrader.evaluate`), and nothing of the 2.x
names: a 2.x judge keeps `judging/payload.py`'s payload, unchanged.

The keys, in 4.42's order: `criteria`, `expected_output`, `output` (the answer; null, with the answer in
the JSON file `output_path`, once its JSON passes 50 000 characters), `messages` (the transcript),
`input_files`, `input`, `metadata` (null without), `trace` (summary counts, `messages`, `events`,
timings, provenance), `trace_summary`, `token_usage`, `cost_usd`, `duration_ms`, `start_time`,
`end_time`, `file_changes`, `workspace_path`, `config`, every key snake_case deep, as 4.42 converts them.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.wire import to_snake_case_deep
from .payload import case_messages
from .trace import raw_tool_calls, time_bounds, trace_summary

if TYPE_CHECKING:
    from ..models import EvaluationContext

FILE_BACKED_OUTPUT_CHARS = 50_000
"""4.42 writes an answer whose JSON passes this many characters to `output_path` instead of `output`."""

_TRACE_MESSAGE_KEYS = ("role", "name", "content", "token_usage", "metadata")
"""What 4.42's trace events keep of a message (`toTraceMessage`)."""


def transcript(inputs: list[dict[str, Any]], outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """4.42's `buildTraceMessages`: the answer's messages alone when they already hold the conversation
    (a user or system turn among them, or the one input message repeated first), else input then answer."""
    if not outputs:
        return inputs
    if any(message.get("role") in ("user", "system") for message in outputs):
        return outputs
    if len(inputs) == 1 and inputs[0].get("role") == outputs[0].get("role") \
            and json.dumps(inputs[0].get("content")) == json.dumps(outputs[0].get("content")):
        return outputs
    return inputs + outputs


def _trace_message(message: dict[str, Any]) -> dict[str, Any]:
    return {key: message[key] for key in _TRACE_MESSAGE_KEYS if message.get(key) is not None}


def trace_events(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """4.42's event stream (`buildTraceFromMessages`): a `message` event per message, a `tool_call` event per
    call with a `tool_result` after it when the call has an output, and a closing `final_response`."""
    events: list[dict[str, Any]] = []
    calls_of: dict[int, list[dict[str, Any]]] = {}
    for index, call in raw_tool_calls(messages):
        calls_of.setdefault(index, []).append(call)
    for index, message in enumerate(messages):
        event_id = f"message-{index}"
        events.append(_drop_none({"event_id": event_id, "ordinal": len(events), "type": "message",
                                  "timestamp": message.get("start_time"), "duration_ms": message.get("duration_ms"),
                                  "message": _trace_message(message), "metadata": {"message_index": index}}))
        for tool_index, call in enumerate(calls_of.get(index, [])):
            tool_id = f"{event_id}-tool-{tool_index}"
            where = {"message_index": index, "tool_index": tool_index}
            status = call.get("status") or "ok"
            events.append(_drop_none({
                "event_id": tool_id, "parent_event_id": event_id, "ordinal": len(events), "type": "tool_call",
                "timestamp": call.get("start_time"), "duration_ms": call.get("duration_ms"),
                "tool": _drop_none({"name": call["tool"], "call_id": call.get("id"), "input": call.get("input"),
                                    "output": call.get("output"), "status": status}),
                "metadata": where}))
            if call.get("output") is not None:
                events.append(_drop_none({
                    "event_id": f"{tool_id}-result", "parent_event_id": tool_id, "ordinal": len(events),
                    "type": "tool_result", "timestamp": call.get("end_time"),
                    "tool": _drop_none({"name": call["tool"], "call_id": call.get("id"), "output": call["output"],
                                        "status": status}),
                    "metadata": where}))
    final = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "assistant"), None)
    if final is not None:
        last = messages[final]
        events.append(_drop_none({"event_id": "final-response", "parent_event_id": f"message-{final}",
                                  "ordinal": len(events), "type": "final_response",
                                  "timestamp": last.get("end_time") or last.get("start_time"),
                                  "message": _trace_message(last), "metadata": {"message_index": final}}))
    return events


def _drop_none(mapping: dict[str, Any]) -> dict[str, Any]:
    """JSON.stringify leaves out undefined keys: so does the payload."""
    return {key: value for key, value in mapping.items() if value is not None}


def grader_trace(context: EvaluationContext, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """4.42's result trace: the summary counts over the transcript, the transcript and its events, the
    run's usage and times, and who answered (`metadata`); what the target reported itself wins."""
    derived = trace_summary(messages)
    case = context.eval_case
    trace: dict[str, Any] = {
        "event_count": derived["event_count"],
        "tool_calls": derived["tool_calls"],
        "error_count": derived["error_count"],
        "llm_call_count": derived["llm_call_count"],
        **({"tool_durations": derived["tool_durations"]} if "tool_durations" in derived else {}),
        "messages": messages,
        "events": trace_events(messages),
        "token_usage": context.token_usage,
        "cost_usd": context.cost_usd,
        "duration_ms": context.duration_ms,
        **time_bounds(messages),
        "metadata": _drop_none({"provider": context.target_provider or None, "target": context.target or None,
                                "eval_case_id": case.id}),
    }
    if isinstance(context.trace, dict):
        trace.update(context.trace)
    return _drop_none(trace)


def _file_backed(answer: str) -> tuple[str | None, str | None]:
    """(output, output_path): a long answer goes to a JSON file in a fresh temporary folder, as 4.42 does."""
    serialized = json.dumps(answer, ensure_ascii=False)
    if len(serialized) <= FILE_BACKED_OUTPUT_CHARS:
        return answer, None
    folder = Path(tempfile.mkdtemp(prefix="agentv-grader-"))
    path = folder / "output.json"
    path.write_text(serialized, encoding="utf-8")
    return None, str(path)


def build_grader_payload(context: EvaluationContext, config: dict[str, Any] | None) -> dict[str, Any]:
    """The stdin payload of a 4.x code-grader (see the module's docstring). A file-backed answer's folder is
    the caller's to remove: `output_path` names it."""
    case = context.eval_case
    inputs, expected, outputs = case_messages(context)
    messages = transcript(inputs, outputs)
    trace = grader_trace(context, messages)
    output, output_path = _file_backed(context.candidate)

    def reported(key: str) -> Any:
        return context.trace.get(key) if isinstance(context.trace, dict) else None

    summary = {key: trace[key] for key in ("event_count", "tool_calls", "error_count", "tool_durations",
                                           "llm_call_count") if key in trace}
    payload: dict[str, Any] = {
        "criteria": case.expected_outcome,
        "expected_output": expected,
        "output": output,
        "messages": messages,
        **({"output_path": output_path} if output_path is not None else {}),
        "input_files": list(case.input_files),
        "input": inputs,
        "metadata": case.metadata,
        "trace": trace,
        "trace_summary": summary,
        "token_usage": context.token_usage,
        "cost_usd": context.cost_usd,
        "duration_ms": context.duration_ms,
        "start_time": reported("start_time") or trace.get("start_time"),
        "end_time": reported("end_time") or trace.get("end_time"),
        "file_changes": context.file_changes,
        "workspace_path": context.run.workspace_path or reported("workspace_path"),
        "config": config,
    }
    snake: dict[str, Any] = to_snake_case_deep(payload, keep_data_keys=False)
    return snake


def build_prompt_template_payload(context: EvaluationContext, config: dict[str, Any] | None) -> dict[str, Any]:
    """The stdin payload of a 4.x llm-grader's executable prompt template, key for key as 4.42 writes it
    (`executePromptTemplate`): the answer as text in both `output` and `answer`, the transcript in `messages`
    and `trace`, null for what this run has none of, every key snake_case deep."""
    case = context.eval_case
    inputs, expected, outputs = case_messages(context)
    messages = transcript(inputs, outputs)
    reported = context.trace if isinstance(context.trace, dict) else {}
    payload: dict[str, Any] = {
        "criteria": case.expected_outcome,
        "expected_output": expected,
        "output": context.candidate,
        "answer": context.candidate,
        "messages": messages,
        "input_files": list(case.input_files),
        "input": inputs,
        "metadata": case.metadata,
        "trace": grader_trace(context, messages),
        "file_changes": context.file_changes,
        "workspace_path": reported.get("workspace_path"),
        "config": config,
    }
    snake: dict[str, Any] = to_snake_case_deep(payload, keep_data_keys=False)
    return snake
