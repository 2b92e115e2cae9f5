"""The JSON a 2.x code judge or executable prompt template reads on stdin: AgentV 2.19's fields, no more.

AgentV 2.19 sends `question, criteria, expected_output, reference_answer, answer, output (messages),
guideline_files, input_files, input, trace, token_usage, cost_usd, duration_ms, start_time, end_time,
file_changes, workspace_path, config` (code-evaluator.ts), `trace` being its summary (`event_count,
tool_names, tool_calls_by_name, error_count, tool_durations?, llm_call_count?`). A judge that read a key
AgentV does not send would pass here and fail there, so nothing else is sent: not the 1.x names
(`expected_outcome`, `input_messages`, `expected_messages`, `output_messages`, `trace_summary`), not the
4.x ones (a 4.x file's graders get grader_payload.py's payload). The one addition is `candidate_answer`,
the answer under the name the project's seed (003) documents for judges; the SDK (sdk.py) cross-fills
every generation's names from these.

As in AgentV, every key is converted to snake_case recursively (keys starting with an
uppercase letter are kept), including keys inside `config` and the tool names keying
`tool_calls_by_name` and `tool_durations` (`searchWeb` keys `search_web`, `Read` stays
`Read`), as AgentV's toSnakeCaseDeep converts them: a judge written for AgentV looks a tool up by the
converted name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..base.wire import to_snake_case_deep
from ..models import Message, question_text
from .trace import trace_summary

if TYPE_CHECKING:
    from ..models import EvaluationContext



def message_dict(message: Message | dict[str, Any]) -> dict[str, Any]:
    """A message as plain JSON data, keeping extra keys (tool_calls, name, ...)."""
    if isinstance(message, Message):
        return message.model_dump(mode="json", exclude_none=True)
    return dict(message)


def case_messages(context: EvaluationContext) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(input, expected, answer) messages as plain dicts; an answer that came without messages is
    one assistant message, so judges and prompts always see the answer as a message too."""
    outputs = [message_dict(m) for m in context.output_messages]
    if not outputs and context.candidate:
        outputs = [{"role": "assistant", "content": context.candidate}]
    case = context.eval_case
    return [message_dict(m) for m in case.input_messages], [message_dict(m) for m in case.expected_messages], outputs


_TRACE_SUMMARY_KEYS = ("event_count", "tool_names", "tool_calls_by_name", "error_count", "tool_durations",
                       "llm_call_count")
"""AgentV 2.19's TraceSummary (trace.ts): all a 2.x judge's `trace` holds."""


def build_judge_payload(context: EvaluationContext, config: dict[str, Any] | None) -> dict[str, Any]:
    """The stdin payload for a 2.x code judge or executable prompt template: AgentV 2.19's fields."""
    case = context.eval_case
    inputs, expected, outputs = case_messages(context)
    question = case.question or question_text(case.input_messages)
    derived = trace_summary(outputs)
    reported = context.trace if isinstance(context.trace, dict) else {}
    merged = {**derived, **reported}  # what the target itself reported wins over what we derived
    trace = {key: merged[key] for key in _TRACE_SUMMARY_KEYS if key in merged}

    def measured(key: str) -> Any:
        return reported.get(key) or derived.get(key)

    payload: dict[str, Any] = {
        "question": question,
        "criteria": case.expected_outcome,
        "expected_output": expected,
        "reference_answer": case.reference_answer,
        "answer": context.candidate,
        "candidate_answer": context.candidate,
        "output": outputs,
        "guideline_files": list(case.guideline_files),
        "input_files": list(case.input_files),
        "input": inputs,
        "trace": trace,
        "token_usage": context.token_usage,
        "cost_usd": context.cost_usd,
        "duration_ms": context.duration_ms,
        # what the target reported, else the times on the answer's messages (AgentV's mergeExecutionMetrics)
        "start_time": measured("start_time"),
        "end_time": measured("end_time"),
        "file_changes": context.file_changes,
        "workspace_path": context.run.workspace_path or reported.get("workspace_path"),
        "config": config,
    }
    snake: dict[str, Any] = to_snake_case_deep(payload, keep_data_keys=False)
    return snake
