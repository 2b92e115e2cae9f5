"""What judge authors import: `define_code_judge` and `define_prompt_template`.

The Python twin of AgentV's `defineCodeJudge` / `definePromptTemplate` (`@agentv/eval`): a
judge is one function from a typed input to a result, and the SDK does the plumbing - read
stdin, turn keys into snake_case attributes on a pydantic model, call the function (sync or
async), print the result, and exit non-zero on any error so the runner reports the judge as
broken rather than trusting half a result.

    from agentv_gate.sdk import CodeJudgeInput, define_code_judge

    @define_code_judge
    def judge(payload: CodeJudgeInput) -> dict:
        ok = "Paris" in payload.answer
        return {"score": 1.0 if ok else 0.0, "hits": ["names Paris"] if ok else []}

The decorated function runs at once when its file is the program being executed (as AgentV's
run when their module loads); imported from elsewhere, e.g. by a unit test, it is returned
untouched so it can be called directly with a `CodeJudgeInput`.

Every generation's field names are accepted and cross-filled, so a judge written against
`answer`/`criteria`/`input` also works when fed a seed-003 payload (`candidate_answer`,
`expected_outcome`, `input_messages`), and the other way round. `input_text`, `output_text`
and `expected_output_text` are always filled, as in AgentV's enriched input.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .judging.payload import to_snake_case_deep
from .models import content_to_text

__all__ = [
    "CodeJudgeInput",
    "CodeJudgeResult",
    "JudgeMessage",
    "PromptTemplateInput",
    "TraceSummary",
    "define_code_judge",
    "define_prompt_template",
    "parse_judge_input",
    "run_code_judge",
    "run_prompt_template",
]


class JudgeMessage(BaseModel):
    """A chat message; `tool_calls` entries carry `tool`, `input`, `output`, `id`, `timestamp`."""

    model_config = ConfigDict(extra="allow")

    role: str = ""
    content: Any = None
    name: str | None = None
    tool_calls: list[dict[str, Any]] | None = None

    @property
    def text(self) -> str:
        return content_to_text(self.content)


class TraceSummary(BaseModel):
    model_config = ConfigDict(extra="allow")

    event_count: int = 0
    tool_names: list[str] = Field(default_factory=list)
    tool_calls_by_name: dict[str, int] = Field(default_factory=dict)
    error_count: int = 0
    llm_call_count: int | None = None
    token_usage: dict[str, Any] | None = None
    cost_usd: float | None = None
    duration_ms: float | None = None


_SUMMARY_KEYS = set(TraceSummary.model_fields)


def _text_of(messages: list[JudgeMessage]) -> str:
    parts = [content_to_text(m.content, with_files=False).strip() for m in messages]
    return " ".join(p for p in parts if p)


class CodeJudgeInput(BaseModel):
    """The stdin payload as attributes. Unknown keys are kept (`payload.model_extra`)."""

    model_config = ConfigDict(extra="allow")

    question: str = ""
    criteria: str = ""
    expected_outcome: str = ""
    reference_answer: str = ""
    answer: str = ""
    candidate_answer: str = ""
    input: list[JudgeMessage] = Field(default_factory=list)
    input_messages: list[JudgeMessage] = Field(default_factory=list)
    expected_output: list[JudgeMessage] = Field(default_factory=list)
    expected_messages: list[JudgeMessage] = Field(default_factory=list)
    output: list[JudgeMessage] | str | None = None
    """Messages (AgentV 2.18, and ours) or the answer text (AgentV 4.42)."""
    output_messages: list[JudgeMessage] = Field(default_factory=list)
    messages: list[JudgeMessage] = Field(default_factory=list)
    guideline_files: list[str] = Field(default_factory=list)
    input_files: list[str] = Field(default_factory=list)
    code_snippets: list[str] = Field(default_factory=list)
    trace: dict[str, Any] | None = None
    trace_summary: TraceSummary | None = None
    token_usage: dict[str, Any] | None = None
    cost_usd: float | None = None
    duration_ms: float | None = None
    start_time: str | None = None
    end_time: str | None = None
    file_changes: str | None = None
    workspace_path: str | None = None
    metadata: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    input_text: str = ""
    output_text: str = ""
    expected_output_text: str = ""

    @model_validator(mode="before")
    @classmethod
    def _nulls_are_defaults(cls, data: Any) -> Any:
        """AgentV sends `null` for absent lists and strings; treat it as the default."""
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if v is not None}
        return data

    @model_validator(mode="after")
    def _cross_fill(self) -> CodeJudgeInput:
        """Each generation's name for the same thing holds the same value."""
        output_string = self.output if isinstance(self.output, str) else ""
        self.answer = self.answer or self.candidate_answer or output_string
        self.candidate_answer = self.candidate_answer or self.answer
        self.criteria = self.criteria or self.expected_outcome
        self.expected_outcome = self.expected_outcome or self.criteria
        self.input = self.input or self.input_messages
        self.input_messages = self.input_messages or self.input
        self.expected_output = self.expected_output or self.expected_messages
        self.expected_messages = self.expected_messages or self.expected_output
        if isinstance(self.output, list):
            self.output_messages = self.output_messages or self.output
        if not self.output_messages and len(self.messages) > len(self.input):
            self.output_messages = self.messages[len(self.input):]  # AgentV 4.42: input + output
        if not self.output and self.output_messages:
            self.output = self.output_messages  # a string output (4.42) is kept as sent
        if self.trace_summary is None and isinstance(self.trace, dict):
            picked = {k: v for k, v in self.trace.items() if k in _SUMMARY_KEYS}
            if picked:
                self.trace_summary = TraceSummary(**picked)
        self.question = self.question or _text_of(self.input)
        self.reference_answer = self.reference_answer or (
            self.expected_output[-1].text if self.expected_output else "")
        self.input_text = self.input_text or self.question
        self.output_text = self.output_text or self.answer
        self.answer = self.answer or self.output_text
        self.candidate_answer = self.candidate_answer or self.output_text
        self.expected_output_text = self.expected_output_text or self.reference_answer
        return self


PromptTemplateInput = CodeJudgeInput
"""Executable prompt templates receive the same payload."""


class CodeJudgeResult(BaseModel):
    model_config = ConfigDict(extra="allow")

    score: float
    hits: list[str] = Field(default_factory=list)
    misses: list[str] = Field(default_factory=list)
    reasoning: str | None = None
    details: dict[str, Any] | None = None


JudgeReturn = CodeJudgeResult | dict[str, Any] | float
CodeJudgeHandler = Callable[[CodeJudgeInput], JudgeReturn | Awaitable[JudgeReturn]]
PromptHandler = Callable[[CodeJudgeInput], str | Awaitable[str]]
F = TypeVar("F", bound=Callable[..., Any])


def parse_judge_input(raw: str | dict[str, Any]) -> CodeJudgeInput:
    """A payload (JSON text or already parsed) as a `CodeJudgeInput`; keys may be camelCase."""
    data = json.loads(raw) if isinstance(raw, str) else raw
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object on stdin, got {type(data).__name__}")
    return CodeJudgeInput.model_validate(to_snake_case_deep(data))


def _call(fn: Callable[[CodeJudgeInput], Any], payload: CodeJudgeInput) -> Any:
    result = fn(payload)
    if inspect.isawaitable(result):
        async def wait() -> Any:
            return await result

        result = asyncio.run(wait())
    return result


def _normalise_result(value: Any) -> CodeJudgeResult:
    if isinstance(value, bool):
        raise TypeError("a judge must return a result with a score, got a bool")
    if isinstance(value, (int, float)):
        value = {"score": value}
    if isinstance(value, BaseModel) and not isinstance(value, CodeJudgeResult):
        value = value.model_dump()
    result = value if isinstance(value, CodeJudgeResult) else CodeJudgeResult.model_validate(value)
    score = result.score
    result.score = 0.0 if not math.isfinite(score) else max(0.0, min(1.0, score))  # AgentV clamps
    return result


def _read_stdin(stdin_text: str | None) -> str:
    return sys.stdin.read() if stdin_text is None else stdin_text


def run_code_judge(fn: CodeJudgeHandler, stdin_text: str | None = None) -> int:
    """Read, judge, print; returns the exit code (0, or 1 after printing a failure result)."""
    try:
        payload = parse_judge_input(_read_stdin(stdin_text))
        result = _normalise_result(_call(fn, payload))
    except Exception as exc:  # noqa: BLE001 - any failure is reported the AgentV way, never a traceback
        message = str(exc) or type(exc).__name__
        print(f"code judge failed: {type(exc).__name__}: {message}", file=sys.stderr)
        failure = {"score": 0, "hits": [], "misses": [message], "reasoning": f"Evaluation failed: {message}"}
        print(json.dumps(failure, indent=2))
        return 1
    print(json.dumps(result.model_dump(exclude_none=True), indent=2, ensure_ascii=False))
    return 0


def run_prompt_template(fn: PromptHandler, stdin_text: str | None = None) -> int:
    """Read, render, print the raw prompt; on error only stderr and exit code 1."""
    try:
        payload = parse_judge_input(_read_stdin(stdin_text))
        prompt = _call(fn, payload)
        if not isinstance(prompt, str):
            raise TypeError(f"a prompt template must return a string, got {type(prompt).__name__}")
    except Exception as exc:  # noqa: BLE001
        print(f"prompt template failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(prompt)
    return 0


def _runs_as_program(fn: Callable[..., Any]) -> bool:
    return getattr(fn, "__module__", None) == "__main__"


def define_code_judge(fn: F) -> F:
    """Make `fn` the program's code judge (see module docstring); usable as a decorator."""
    if _runs_as_program(fn):
        sys.stdout.flush()
        sys.exit(run_code_judge(fn))
    return fn


def define_prompt_template(fn: F) -> F:
    """Make `fn` the program's prompt template: its returned string is printed as the prompt."""
    if _runs_as_program(fn):
        sys.exit(run_prompt_template(fn))
    return fn
