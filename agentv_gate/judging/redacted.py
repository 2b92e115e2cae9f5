"""What a judge is shown of a case: its EvaluationContext with every configured secret hidden.

Every judge builds what it sends from the context: a code judge's and an executable template's stdin
payload (payload.py, grader_payload.py), an LLM judge's `{{variables}}`, default and rubric prompts
(templates.py, grader_prompts.py, rubric_protocol.py) and an agentic grader's prompt. An agent that
echoes a key from its environment put it in the answer, a tool call's input or output, the trace or a
file it wrote; scrubbing the reports afterwards (orchestrator.scrubbed) came too late, for the judge
had been sent it: on stdin, or in the HTTP body to the judge model's provider. So the context is
redacted once, before any judge reads it, with `redaction`'s rule of what a secret is: ordinary text
is left as it is, so a judge scores exactly what it scored before, with `***` where a key was.

Redacted: the answer (`candidate`), the answer's messages with their tool calls, the trace the target
reported, `file_changes`, and the case's own text (question, input and expected messages, criteria,
reference answer, metadata), which a `${{ VAR }}` may have filled. Not redacted: the evaluator's own
settings (its `config:`, prompt template text, rubrics), which the eval file writes for that judge.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..models import Message
from ..redaction import has_secrets, redact, redact_tree

if TYPE_CHECKING:
    from ..models import EvalCase, EvaluationContext


def _messages(messages: list[Message]) -> list[Message]:
    """`messages` with secrets hidden; the list itself when none held one (no copy of every transcript)."""
    out: list[Message] = []
    changed = False
    for message in messages:
        dumped = message.model_dump()
        hidden = redact_tree(dumped)
        if hidden == dumped:
            out.append(message)
        else:
            out.append(Message.model_validate(hidden))
            changed = True
    return out if changed else messages


def _case(case: EvalCase) -> EvalCase:
    update: dict[str, Any] = {}
    for name in ("question", "expected_outcome", "reference_answer"):
        text = getattr(case, name)
        hidden = redact(text)
        if hidden != text:
            update[name] = hidden
    for name in ("input_messages", "expected_messages"):
        messages = getattr(case, name)
        hidden_messages = _messages(messages)
        if hidden_messages is not messages:
            update[name] = hidden_messages
    if case.metadata is not None:
        metadata = redact_tree(case.metadata)
        if metadata != case.metadata:
            update["metadata"] = metadata
    return case.model_copy(update=update) if update else case


def judged_context(context: EvaluationContext) -> EvaluationContext:
    """`context` as a judge may see it: every configured secret (and its encoded forms) replaced by `***`.

    The same object when the run registered no secret; idempotent, so a judge inside a composite may
    be given an already redacted context again."""
    if not has_secrets():
        return context
    return replace(
        context,
        eval_case=_case(context.eval_case),
        candidate=redact(context.candidate),
        output_messages=_messages(context.output_messages),
        trace=redact_tree(context.trace) if context.trace is not None else None,
        file_changes=redact(context.file_changes) if context.file_changes is not None else None,
    )
