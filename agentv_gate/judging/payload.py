"""The JSON a judge script reads on stdin: one payload every AgentV generation's judges understand.

AgentV renamed its payload fields twice, and judges written against any generation exist in
the wild. Rather than pick one, the payload carries all of them side by side, snake_case:

* AgentV 1.x-2.x: `question, expected_outcome, expected_messages,
  reference_answer, candidate_answer, output_messages, guideline_files, input_files,
  input_messages, trace_summary, config` (+ `code_snippets` from the oldest SDK schema);
* AgentV 2.18: `criteria, expected_output, answer, output, input, trace, token_usage, cost_usd,
  duration_ms, start_time, end_time, file_changes, workspace_path`;
* AgentV 4.42: `messages, metadata, trace` (with `messages`/`events`/`duration_ms`/`metadata`),
  `trace_summary` (with `tool_calls`, `llm_call_count`), and the newest SDK's `input_text,
  output_text, expected_output_text`.

Conflicts, and how they are resolved:

* `output` is a message list in 2.18 and a plain string in 4.42. We send the 2.18 list: 2.18
  is the generation this tool targets, a 4.42 judge that wants the text has `answer` (present
  in both) and `output_text`, and a string cannot be turned back into messages.
* `trace` is a summary in 2.18 and a full trace in 4.42. Their keys do not collide, so `trace`
  holds the union: the 2.18 summary keys (`event_count, tool_names, tool_calls_by_name,
  error_count, llm_call_count`) plus the 4.42 keys (`tool_calls, messages, events,
  duration_ms, metadata`). `trace_summary` likewise carries both generations' summary keys.

As in AgentV, every key is converted to snake_case recursively (keys starting with an
uppercase letter are kept), including keys inside `config` and the tool names keying
`tool_calls_by_name`, `tool_calls` and `tool_durations` (`searchWeb` keys `search_web`, `Read` stays
`Read`), as AgentV's toSnakeCaseDeep converts them: a judge written for AgentV looks a tool up by the
converted name.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..base.wire import content_to_text, to_snake_case_deep
from ..models import Message, question_text
from .trace import raw_tool_calls, tool_name, trace_summary

if TYPE_CHECKING:
    from ..models import EvaluationContext

_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)
_SUMMARY_EXTRAS = {"token_usage", "cost_usd", "duration_ms", "tool_durations", "start_time", "end_time"}


def message_dict(message: Message | dict[str, Any]) -> dict[str, Any]:
    """A message as plain JSON data, keeping extra keys (tool_calls, name, ...)."""
    if isinstance(message, Message):
        return message.model_dump(mode="json", exclude_none=True)
    return dict(message)


def _trace_events(messages: list[dict[str, Any]], first_output_index: int) -> list[dict[str, Any]]:
    """AgentV 4.42's event list: one `message` event per message, `tool_call` events for the
    answer's tool calls, and a closing `final_response` pointing at the last assistant message."""
    events: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        events.append({"event_id": f"message-{index}", "ordinal": len(events), "type": "message",
                       "message": message, "metadata": {"message_index": index}})
        if index >= first_output_index:
            for n, (_, call) in enumerate(raw_tool_calls([message])):
                events.append({"event_id": f"tool-{index}-{n}", "parent_event_id": f"message-{index}",
                               "ordinal": len(events), "type": "tool_call", "name": tool_name(call),
                               "input": call.get("input", call.get("arguments")),
                               "output": call.get("output"), "metadata": {"message_index": index}})
    last_assistant = next((i for i in range(len(messages) - 1, first_output_index - 1, -1)
                           if messages[i].get("role") == "assistant"), None)
    if last_assistant is not None:
        events.append({"event_id": "final-response", "parent_event_id": f"message-{last_assistant}",
                       "ordinal": len(events), "type": "final_response", "message": messages[last_assistant],
                       "metadata": {"message_index": last_assistant}})
    return events


def code_snippets(messages: list[dict[str, Any]]) -> list[str]:
    """Fenced code blocks from the input text, as the oldest AgentV SDK's `code_snippets`."""
    snippets: list[str] = []
    for message in messages:
        text = content_to_text(message.get("content"))
        snippets.extend(block.strip("\n") for block in _FENCE.findall(text))
    return snippets


def case_messages(context: EvaluationContext) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(input, expected, answer) messages as plain dicts; an answer that came without messages is
    one assistant message, so judges and prompts always see the answer as a message too."""
    outputs = [message_dict(m) for m in context.output_messages]
    if not outputs and context.candidate:
        outputs = [{"role": "assistant", "content": context.candidate}]
    case = context.eval_case
    return [message_dict(m) for m in case.input_messages], [message_dict(m) for m in case.expected_messages], outputs


def build_judge_payload(context: EvaluationContext, config: dict[str, Any] | None) -> dict[str, Any]:
    """The stdin payload for a code judge or executable prompt template, every generation's names."""
    case = context.eval_case
    inputs, expected, outputs = case_messages(context)
    messages = inputs + outputs
    question = case.question or question_text(case.input_messages)

    derived = trace_summary(outputs)
    summary = dict(derived)
    if context.token_usage is not None:
        summary["token_usage"] = context.token_usage
    if context.cost_usd is not None:
        summary["cost_usd"] = context.cost_usd
    if context.duration_ms is not None:
        summary["duration_ms"] = context.duration_ms
    trace: dict[str, Any] = {
        **derived,
        "messages": messages,
        "events": _trace_events(messages, len(inputs)),
        "duration_ms": context.duration_ms,
        # The provider kind is not known to an evaluator; a target may report it in its trace.
        "metadata": {"provider": None, "target": context.target, "eval_case_id": case.id},
    }
    if isinstance(context.trace, dict):
        trace.update(context.trace)  # what the target itself reported wins over what we derived
        summary.update({k: v for k, v in context.trace.items() if k in summary or k in _SUMMARY_EXTRAS})

    def from_trace(key: str) -> Any:
        return context.trace.get(key) if isinstance(context.trace, dict) else None

    payload: dict[str, Any] = {
        # 2.18 / 4.42 names
        "question": question,
        "criteria": case.expected_outcome,
        "expected_output": expected,
        "reference_answer": case.reference_answer,
        "answer": context.candidate,
        "output": outputs,
        "messages": messages,
        "guideline_files": list(case.guideline_files),
        "input_files": list(case.input_files),
        "input": inputs,
        "metadata": case.metadata,
        "trace": trace,
        "trace_summary": summary,
        "token_usage": context.token_usage,
        "cost_usd": context.cost_usd,
        "duration_ms": context.duration_ms,
        # what the target reported, else the times on the answer's messages (AgentV's mergeExecutionMetrics)
        "start_time": from_trace("start_time") or derived.get("start_time"),
        "end_time": from_trace("end_time") or derived.get("end_time"),
        "file_changes": context.file_changes,
        "workspace_path": context.run.workspace_path or from_trace("workspace_path"),
        "config": config,
        # AgentV 1.x-2.x names
        "expected_outcome": case.expected_outcome,
        "candidate_answer": context.candidate,
        "input_messages": inputs,
        "expected_messages": expected,
        "output_messages": outputs,
        "code_snippets": code_snippets(inputs),
        # newest SDK conveniences
        "input_text": question,
        "output_text": context.candidate,
        "expected_output_text": case.reference_answer,
        "eval_id": case.id,
        "target": context.target,
    }
    snake: dict[str, Any] = to_snake_case_deep(payload, keep_data_keys=False)
    return snake
