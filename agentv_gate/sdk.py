"""What judge authors import: `define_code_judge` (AgentV 2.x), `define_code_grader` (4.x), `define_prompt_template`.

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

A 4.x `code-grader` (AgentV 3.0+'s name) gets 4.x's payload, where `output` is the answer's text, and
answers with assertions (no score: AgentV scores the share passed):

    from agentv_gate.sdk import CodeGraderInput, define_code_grader

    @define_code_grader
    def grade(payload: CodeGraderInput) -> dict:
        ok = "Paris" in payload.output_text
        return {"assertions": [{"text": "names Paris", "passed": ok}]}

A judge with `target:` in its config may ask the case's judge model questions:

    from agentv_gate.sdk import TargetClient

    reply = TargetClient().invoke("List the claims in: ...", system_prompt="One per line.")
    claims = reply.text.splitlines()

The decorated function runs at once when its file is the program being executed (as AgentV's
run when their module loads); imported from elsewhere, e.g. by a unit test, it is returned
untouched so it can be called directly with a `CodeJudgeInput`.

Every generation's field names are accepted and cross-filled, so a judge written against
`answer`/`criteria`/`input` also works when fed a seed-003 payload (`candidate_answer`,
`expected_outcome`, `input_messages`), and the other way round. `input_text`, `output_text`
and `expected_output_text` are always filled, as in AgentV's enriched input.

Standard library only, on purpose: a judge runs with the user's own `python3` (so it can import
the team's packages), which need not have agentv-gate or its dependencies installed. agentv-gate
puts a folder holding only a stub `agentv_gate` package on the judge's PYTHONPATH
(`transport/process.py`), and the stub finds this file and `base/wire.py`, nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import json
import math
import os
import sys
import traceback
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .base.wire import content_to_text, to_snake_case_deep

__all__ = [
    "Assertion",
    "CodeGraderInput",
    "CodeGraderResult",
    "CodeJudgeInput",
    "CodeJudgeResult",
    "JudgeMessage",
    "PromptTemplateInput",
    "TargetAccessError",
    "TargetClient",
    "TargetReply",
    "TraceSummary",
    "define_code_grader",
    "define_code_judge",
    "define_prompt_template",
    "parse_grader_input",
    "parse_judge_input",
    "run_code_grader",
    "run_code_judge",
    "run_prompt_template",
]

_T = TypeVar("_T")


def _known_fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)} - {"model_extra"}


def _from_mapping(cls: type[_T], data: Any) -> _T:
    """`cls(**known keys)` with the other keys kept in `model_extra`; `null` means "not given"."""
    if isinstance(data, cls):
        return data
    if not isinstance(data, dict):
        raise TypeError(f"expected an object for {cls.__name__}, got {type(data).__name__}")
    known = _known_fields(cls)
    given = {k: v for k, v in data.items() if k in known and v is not None}
    extra = {k: v for k, v in data.items() if k not in known}
    return cls(**given, model_extra=extra)  # type: ignore[call-arg]


def _messages(value: Any, name: str) -> list[JudgeMessage]:
    if not isinstance(value, list):
        raise TypeError(f"{name} must be a list of messages, got {type(value).__name__}")
    return [_from_mapping(JudgeMessage, item) for item in value]


def _reset_nulls(record: Any) -> None:
    """A `None` given for a field whose default is not None takes that default (AgentV sends nulls)."""
    for f in dataclasses.fields(record):
        if getattr(record, f.name) is None:
            if f.default_factory is not dataclasses.MISSING:
                setattr(record, f.name, f.default_factory())
            elif f.default is not None and f.default is not dataclasses.MISSING:
                setattr(record, f.name, f.default)


@dataclass
class JudgeMessage:
    """A chat message; `tool_calls` entries carry `tool`, `input`, `output`, `id`, `timestamp`."""

    role: str = ""
    content: Any = None
    name: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    model_extra: dict[str, Any] = field(default_factory=dict, repr=False)
    """Keys the message carried beyond the ones above."""

    def __post_init__(self) -> None:
        _reset_nulls(self)

    @property
    def text(self) -> str:
        return content_to_text(self.content)


@dataclass
class TraceSummary:
    event_count: int = 0
    tool_names: list[str] = field(default_factory=list)
    tool_calls_by_name: dict[str, int] = field(default_factory=dict)
    error_count: int = 0
    llm_call_count: int | None = None
    token_usage: dict[str, Any] | None = None
    cost_usd: float | None = None
    duration_ms: float | None = None
    model_extra: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        _reset_nulls(self)


_SUMMARY_KEYS = _known_fields(TraceSummary)
_MESSAGE_LISTS = ("input", "input_messages", "expected_output", "expected_messages", "output_messages", "messages")


def _text_of(messages: list[JudgeMessage]) -> str:
    parts = [content_to_text(m.content, with_files=False).strip() for m in messages]
    return " ".join(p for p in parts if p)


@dataclass
class CodeJudgeInput:
    """The stdin payload as attributes. Unknown keys are kept in `payload.model_extra`."""

    question: str = ""
    criteria: str = ""
    expected_outcome: str = ""
    reference_answer: str = ""
    answer: str = ""
    candidate_answer: str = ""
    input: list[JudgeMessage] = field(default_factory=list)
    input_messages: list[JudgeMessage] = field(default_factory=list)
    expected_output: list[JudgeMessage] = field(default_factory=list)
    expected_messages: list[JudgeMessage] = field(default_factory=list)
    output: list[JudgeMessage] | str | None = None
    """Messages (AgentV 2.18, and ours) or the answer text (AgentV 4.42)."""
    output_messages: list[JudgeMessage] = field(default_factory=list)
    messages: list[JudgeMessage] = field(default_factory=list)
    guideline_files: list[str] = field(default_factory=list)
    input_files: list[str] = field(default_factory=list)
    code_snippets: list[str] = field(default_factory=list)
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
    model_extra: dict[str, Any] = field(default_factory=dict, repr=False)
    """Keys the payload carried beyond the ones above."""

    @classmethod
    def model_validate(cls, data: dict[str, Any]) -> CodeJudgeInput:
        """From a snake_case payload; unknown keys go to `model_extra`."""
        return _from_mapping(cls, data)

    def __post_init__(self) -> None:
        _reset_nulls(self)
        for name in _MESSAGE_LISTS:
            setattr(self, name, _messages(getattr(self, name), name))
        if isinstance(self.output, list):
            self.output = _messages(self.output, "output")
        if isinstance(self.trace_summary, dict):
            self.trace_summary = _from_mapping(TraceSummary, self.trace_summary)
        self._cross_fill()

    def _cross_fill(self) -> None:
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
                self.trace_summary = _from_mapping(TraceSummary, picked)
        self.question = self.question or _text_of(self.input)
        self.reference_answer = self.reference_answer or (
            self.expected_output[-1].text if self.expected_output else "")
        self.input_text = self.input_text or self.question
        self.output_text = self.output_text or self.answer
        self.answer = self.answer or self.output_text
        self.candidate_answer = self.candidate_answer or self.output_text
        self.expected_output_text = self.expected_output_text or self.reference_answer


PromptTemplateInput = CodeJudgeInput
"""Executable prompt templates receive the same payload."""


def _strings(value: Any, name: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise TypeError(f"{name} must be a list of strings, got {value!r}")
    return list(value)


@dataclass
class CodeJudgeResult:
    """What a judge prints: `score` in 0..1 (clamped), plus optional hits, misses and reasoning."""

    score: float
    hits: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    reasoning: str | None = None
    details: dict[str, Any] | None = None
    model_extra: dict[str, Any] = field(default_factory=dict, repr=False)
    """Further keys, printed beside the others."""

    def __post_init__(self) -> None:
        if isinstance(self.score, bool) or not isinstance(self.score, (int, float)):
            raise TypeError(f"score must be a number from 0 to 1, got {self.score!r}")
        self.hits = _strings(self.hits, "hits")
        self.misses = _strings(self.misses, "misses")
        if self.reasoning is not None and not isinstance(self.reasoning, str):
            raise TypeError(f"reasoning must be a string, got {self.reasoning!r}")

    @classmethod
    def model_validate(cls, data: Any) -> CodeJudgeResult:
        if isinstance(data, dict) and "score" not in data:
            raise ValueError(f"a judge result needs a score, got keys {sorted(map(str, data))}")
        return _from_mapping(cls, data)

    def model_dump(self, exclude_none: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"score": self.score, "hits": self.hits, "misses": self.misses,
                               "reasoning": self.reasoning, "details": self.details, **self.model_extra}
        return {k: v for k, v in out.items() if v is not None} if exclude_none else out


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
    """`fn(payload)`, awaited if async. What it prints goes to stderr: stdout must carry only the
    result, one JSON object (AgentV scores anything else 0, and so does agentv-gate)."""
    with contextlib.redirect_stdout(sys.stderr):
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
    if not isinstance(value, (CodeJudgeResult, dict)) and callable(getattr(value, "model_dump", None)):
        value = value.model_dump()  # the judge's own pydantic model, say
    elif not isinstance(value, CodeJudgeResult) and dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    result = value if isinstance(value, CodeJudgeResult) else CodeJudgeResult.model_validate(value)
    score = float(result.score)
    result.score = 0.0 if not math.isfinite(score) else max(0.0, min(1.0, score))  # AgentV clamps
    return result


def _read_stdin(stdin_text: str | None) -> str:
    return sys.stdin.read() if stdin_text is None else stdin_text


def _library_folders() -> tuple[str, ...]:
    """Where the standard library and installed packages live: frames there are not the judge's."""
    import sysconfig  # only when a judge failed: not on every judge's start

    paths = sysconfig.get_paths()
    return tuple(os.path.abspath(paths[key]) + os.sep for key in ("stdlib", "platstdlib", "purelib", "platlib")
                 if key in paths)


def _judge_line(exc: BaseException, fn: object = None) -> str | None:
    """`file:line` of the judge's own code where it raised: the last frame in the judge's script (the
    handler's file, or the script run), else the last one outside the standard library and installed
    packages, else the innermost outside this module. `json.loads` failing names the judge's call,
    not json/decoder.py (the whole traceback is on stderr)."""
    here = os.path.abspath(__file__)
    code = getattr(fn, "__code__", None)
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    own = {os.path.abspath(f) for f in (getattr(code, "co_filename", None), main) if f}
    libraries = _library_folders()
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if os.path.abspath(f.filename) != here]
    found = (next((f for f in reversed(frames) if os.path.abspath(f.filename) in own), None)
             or next((f for f in reversed(frames) if not os.path.abspath(f.filename).startswith(libraries)), None)
             or (frames[-1] if frames else None))
    if found is None:
        return None
    path = os.path.abspath(found.filename)
    folder = os.path.dirname(path)
    while os.path.dirname(folder) != folder:  # named from the repository root, as the reports name files
        if os.path.exists(os.path.join(folder, ".git")):
            path = os.path.relpath(path, folder)
            break
        folder = os.path.dirname(folder)
    return f"{path}:{found.lineno}"


def run_code_judge(fn: CodeJudgeHandler, stdin_text: str | None = None) -> int:
    """Read, judge, print; returns the exit code (0, or 1 after printing a failure result)."""
    try:
        payload = parse_judge_input(_read_stdin(stdin_text))
        result = _normalise_result(_call(fn, payload))
    except Exception as exc:  # noqa: BLE001 - any failure is reported the AgentV way, as a result
        # The miss names the exception and the judge's line (`KeyError: 'topic' (judges/kw.py:12)`,
        # not a bare `'topic'`); the whole traceback goes to stderr, which `--verbose` shows.
        message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        where = _judge_line(exc, fn)
        if where:
            message += f" ({where})"
        trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip()
        print(f"code judge failed:\n{trace}", file=sys.stderr)
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


# ---------------------------------------------------------------- AgentV 4.x: `code-grader`


@dataclass
class CodeGraderInput:
    """A 4.x `code-grader`'s payload as attributes (AgentV 4.42's names): `output` is the answer as text (None
    when it was too long to inline: `output_text` reads it from `output_path` then). Unknown keys are kept
    in `model_extra`."""

    output: str | None = None
    output_path: str | None = None
    messages: list[JudgeMessage] = field(default_factory=list)
    """The transcript: the input messages, then the answer's (AgentV 4.42's `trace.messages`)."""
    input: list[JudgeMessage] = field(default_factory=list)
    expected_output: list[JudgeMessage] = field(default_factory=list)
    criteria: str = ""
    input_files: list[str] = field(default_factory=list)
    metadata: dict[str, Any] | None = None
    trace: dict[str, Any] | None = None
    """`event_count`, `tool_calls` (name -> count), `error_count`, `llm_call_count`, `messages`, `events`, ..."""
    trace_summary: dict[str, Any] | None = None
    token_usage: dict[str, Any] | None = None
    cost_usd: float | None = None
    duration_ms: float | None = None
    start_time: str | None = None
    end_time: str | None = None
    file_changes: str | None = None
    workspace_path: str | None = None
    config: dict[str, Any] | None = None
    model_extra: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        _reset_nulls(self)
        for name in ("messages", "input", "expected_output"):
            setattr(self, name, _messages(getattr(self, name), name))
        if self.output is not None and not isinstance(self.output, str):
            raise TypeError(f"output must be the answer's text (a 4.x payload), got {type(self.output).__name__}: "
                            "a 2.x code_judge payload is read with define_code_judge")

    @classmethod
    def model_validate(cls, data: dict[str, Any]) -> CodeGraderInput:
        return _from_mapping(cls, data)

    @property
    def output_text(self) -> str:
        """The answer, from `output` or, for a long one, the JSON file `output_path` names."""
        if self.output is not None:
            return self.output
        if self.output_path:
            with open(self.output_path, encoding="utf-8") as handle:
                text = json.load(handle)
            return text if isinstance(text, str) else ""
        return ""

    @property
    def expected_output_text(self) -> str:
        """The reference answer: the last expected message's text."""
        return self.expected_output[-1].text if self.expected_output else ""


@dataclass
class Assertion:
    """One checked claim of a 4.x grader's reply."""

    text: str
    passed: bool
    evidence: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not isinstance(self.passed, bool):
            raise TypeError(f"an assertion is {{text: str, passed: bool}}, got {self.text!r}, {self.passed!r}")


@dataclass
class CodeGraderResult:
    """What a 4.x grader prints: `score` in 0..1 and/or `assertions` (no score: AgentV scores passed / total)."""

    score: float | None = None
    assertions: list[Assertion] = field(default_factory=list)
    details: dict[str, Any] | None = None
    model_extra: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.assertions = [item if isinstance(item, Assertion) else _assertion(item) for item in self.assertions]
        if self.score is not None and (isinstance(self.score, bool) or not isinstance(self.score, (int, float))):
            raise TypeError(f"score must be a number from 0 to 1, got {self.score!r}")

    def model_dump(self) -> dict[str, Any]:
        out: dict[str, Any] = {**self.model_extra}
        if self.score is not None:
            score = float(self.score)
            out["score"] = 0.0 if not math.isfinite(score) else max(0.0, min(1.0, score))  # AgentV clamps
        out["assertions"] = [{k: v for k, v in dataclasses.asdict(a).items() if v is not None} for a in self.assertions]
        if self.details is not None:
            out["details"] = self.details
        return out


def _assertion(item: Any) -> Assertion:
    if not isinstance(item, dict):
        raise TypeError(f"an assertion must be an object {{text, passed, evidence?}}, got {item!r}")
    return Assertion(text=item.get("text"), passed=item.get("passed"), evidence=item.get("evidence"))  # type: ignore[arg-type]


GraderReturn = CodeGraderResult | dict[str, Any] | float
CodeGraderHandler = Callable[[CodeGraderInput], GraderReturn | Awaitable[GraderReturn]]


def parse_grader_input(raw: str | dict[str, Any]) -> CodeGraderInput:
    """A 4.x payload (JSON text or already parsed; keys may be camelCase) as a `CodeGraderInput`."""
    data = json.loads(raw) if isinstance(raw, str) else raw
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object on stdin, got {type(data).__name__}")
    return CodeGraderInput.model_validate(to_snake_case_deep(data))


def _grader_result(value: Any) -> CodeGraderResult:
    if isinstance(value, bool):
        raise TypeError("a grader must return a result with a score or assertions, got a bool")
    if isinstance(value, (int, float)):
        return CodeGraderResult(score=value)
    if isinstance(value, CodeGraderResult):
        return value
    if isinstance(value, dict):
        return _from_mapping(CodeGraderResult, value)
    raise TypeError(f"a grader must return a dict, a CodeGraderResult or a number, got {type(value).__name__}")


def run_code_grader(fn: CodeGraderHandler, stdin_text: str | None = None) -> int:
    """Read, grade, print; returns the exit code (0, or 1 after saying why on stderr)."""
    try:
        payload = parse_grader_input(_read_stdin(stdin_text))
        result = _grader_result(_call(fn, payload))  # type: ignore[arg-type]
    except Exception as exc:  # noqa: BLE001 - a failure is said, never a traceback
        message = str(exc) or type(exc).__name__
        print(f"code grader failed: {type(exc).__name__}: {message}", file=sys.stderr)
        print(json.dumps({"score": 0, "assertions": [{"text": f"Grader failed: {message}", "passed": False}]}))
        return 1
    print(json.dumps(result.model_dump(), indent=2, ensure_ascii=False))
    return 0


def define_code_grader(fn: F) -> F:
    """Make `fn` the program's 4.x code-grader (`type: code-grader`): it gets a `CodeGraderInput` and returns
    `{score?, assertions}`; imported from elsewhere (a unit test) it is returned untouched."""
    if _runs_as_program(fn):
        sys.stdout.flush()
        sys.exit(run_code_grader(fn))
    return fn


# ---------------------------------------------------------------- model access (`target:`)

PROXY_URL_VARIABLE = "AGENTV_TARGET_PROXY_URL"
PROXY_TOKEN_VARIABLE = "AGENTV_TARGET_PROXY_TOKEN"


class TargetAccessError(RuntimeError):
    """A call to the judge model could not be made or gave no answer: the judge has no `target:`,
    went over its `max_calls`, sent a bad request, or the model failed after its retries.

    Left uncaught in a `define_code_judge` function it fails the judge (score 0, exit 1), so the
    case is reported as an error rather than judged on a missing answer.
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        """The proxy's HTTP status (401, 400, 429, 502, ...), None when it could not be reached."""


@dataclass
class TargetReply:
    """The judge model's answer to one question."""

    text: str
    """The answer's text (the proxy's `rawText`)."""
    output: list[dict[str, Any]] = field(default_factory=list)
    """The answer as output messages (`{role, content}`)."""
    token_usage: dict[str, Any] | None = None
    error: str | None = None
    """Set on a batch item that failed (the other items still carry answers); `invoke` raises instead."""


def _reply(data: Any) -> TargetReply:
    if not isinstance(data, dict):
        raise TargetAccessError(f"the target proxy replied with a JSON {type(data).__name__}, expected an object")
    text = data.get("rawText")
    output = data.get("output")
    usage = data.get("tokenUsage")
    error = data.get("error")
    return TargetReply(text=text if isinstance(text, str) else "", output=output if isinstance(output, list) else [],
                       token_usage=usage if isinstance(usage, dict) else None,
                       error=error if isinstance(error, str) else None)


class TargetClient:
    """Calls the case's judge model through the loopback proxy agentv-gate starts for a code judge
    with `target:` (`AGENTV_TARGET_PROXY_URL` / `AGENTV_TARGET_PROXY_TOKEN`); AgentV's TargetClient."""

    def __init__(self, url: str | None = None, token: str | None = None, timeout_seconds: float = 600.0) -> None:
        url = url if url is not None else os.environ.get(PROXY_URL_VARIABLE)
        token = token if token is not None else os.environ.get(PROXY_TOKEN_VARIABLE)
        if not url or not token:
            raise TargetAccessError(
                f"no target proxy: {PROXY_URL_VARIABLE} / {PROXY_TOKEN_VARIABLE} are not set; add `target: true` "
                "(or `target: {max_calls: N}`) to this code judge in the eval file"
            )
        self.url = url.rstrip("/")
        self._token = token
        self.timeout_seconds = timeout_seconds
        # The proxy is on 127.0.0.1: a CI runner's HTTP(S)_PROXY must never receive the request.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def __repr__(self) -> str:
        return f"TargetClient(url={self.url!r})"

    def _request(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(f"{self.url}{path}", data=data, method=method, headers={
            "Authorization": f"Bearer {self._token}", "Content-Type": "application/json"})
        try:
            with self._opener.open(request, timeout=self.timeout_seconds) as response:
                return json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            try:
                said = json.loads(exc.read().decode("utf-8")).get("error")
            except (ValueError, AttributeError, OSError):
                said = None
            raise TargetAccessError(f"{method} {path}: HTTP {exc.code}: {said or exc.reason}", exc.code) from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise TargetAccessError(f"{method} {path}: cannot reach the target proxy at {self.url}: {reason}") from None

    def info(self) -> dict[str, Any]:
        """`{targetName, maxCalls, callCount, availableTargets}`."""
        data = self._request("GET", "/info")
        if not isinstance(data, dict):
            raise TargetAccessError("the target proxy's /info is not a JSON object")
        return data

    def invoke(self, question: str, system_prompt: str | None = None, *, attempt: int = 1,
               target: str | None = None) -> TargetReply:
        """Ask the judge model one question. `attempt` > 1 asks afresh instead of replaying a cached answer;
        `target` asks another target of targets.yaml instead (`info()["availableTargets"]` lists them)."""
        body: dict[str, Any] = {"question": question, "attempt": attempt}
        if system_prompt is not None:
            body["systemPrompt"] = system_prompt
        if target is not None:
            body["target"] = target
        return _reply(self._request("POST", "/invoke", body))

    def invoke_batch(self, questions: list[str | dict[str, Any]]) -> list[TargetReply]:
        """Several questions in one request: each a string, or `{question, systemPrompt?, attempt?, target?}`.
        A failed item has `error` set; over the call limit the whole batch raises."""
        requests = [{"question": q} if isinstance(q, str) else q for q in questions]
        data = self._request("POST", "/invokeBatch", {"requests": requests})
        replies = data.get("responses") if isinstance(data, dict) else None
        if not isinstance(replies, list):
            raise TargetAccessError("the target proxy's /invokeBatch reply has no responses list")
        return [_reply(item) for item in replies]
