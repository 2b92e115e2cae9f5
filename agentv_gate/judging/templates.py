"""The LLM judge's prompt: AgentV's default template, `{{variable}}` text, or a program's stdout.

Three ways to write the prompt of an `llm_judge` (seeds 000-003):

* nothing: AgentV 2.19's default evaluator template;
* text, inline or in a `.md`/`.txt` file, with `{{variable}}` placeholders. Both generations'
  names are filled (`question`, `expected_outcome`/`criteria`, `candidate_answer`/`answer`,
  `reference_answer`, `input_messages`/`input`, `output_messages`/`output`,
  `expected_messages`/`expected_output`, ...); an unknown `{{name}}` is left as written, as in
  AgentV, so a typo shows up in the prompt rather than vanishing;
* a program, `prompt: {script: [...], config: {...}}`, run exactly like a code judge (same
  stdin payload, same runner), whose trimmed stdout is the prompt. A script that fails is an
  error carrying its stderr; a script that prints nothing gives an empty prompt.

The custom prompt replaces the user prompt only; the system prompt that fixes the JSON reply
format (`JUDGE_SYSTEM_PROMPT`) is always sent, as AgentV does.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import PromptTemplateError
from ..models import DEFAULT_JUDGE_TIMEOUT_SECONDS, LlmJudgeConfig, PromptScriptConfig, question_text
from ..redaction import redact
from ..transport.process import run_judge
from .payload import build_judge_payload, case_messages

if TYPE_CHECKING:
    from ..models import EvaluationContext

DEFAULT_EVALUATOR_TEMPLATE = """You are an expert evaluator. Your goal is to grade the answer based on how well it achieves the criteria for the original task.

Use the reference_answer as a gold standard for a high-quality response (if provided). The reference_answer may be a simple text response, or it may contain a sequence of expected agent messages including tool calls. When it contains multiple messages, the last message represents the final expected answer. The answer does not need to match it verbatim, but should capture the key points and follow the same spirit.

Be concise and focused in your evaluation. Provide succinct, specific feedback rather than verbose explanations.

[[ ## criteria ## ]]
{{criteria}}

[[ ## question ## ]]
{{question}}

[[ ## reference_answer ## ]]
{{reference_answer}}

[[ ## answer ## ]]
{{answer}}"""  # noqa: E501 - AgentV 2.19's text, verbatim
"""AgentV 2.19's DEFAULT_EVALUATOR_TEMPLATE (llm-judge.ts), verbatim: sections named as its payload names them."""

JUDGE_SYSTEM_PROMPT = "\n".join(
    [
        "You must respond with a single JSON object matching this schema:",
        "",
        "{",
        '  "score": <number between 0.0 and 1.0>,',
        '  "hits": [<array of strings, max 4 items, brief specific achievements>],',
        '  "misses": [<array of strings, max 4 items, brief specific failures or omissions, empty if none>],',
        '  "reasoning": "<string, concise explanation for the score, 1-2 sentences max>"',
        "}",
    ]
)
"""AgentV's buildOutputSchema(), line for line: the reply format every judge call asks for."""

_VARIABLE = re.compile(r"\{\{\s*([a-zA-Z0-9_]+)\s*\}\}")
PROMPT_FILE_SUFFIXES = (".md", ".txt", ".markdown", ".prompt", ".tmpl", ".j2")
STDERR_TAIL_CHARS = 2000


@dataclass
class ResolvedPrompt:
    text: str
    source: str
    """"default", "inline", "file" or "script"."""
    details: dict[str, Any] = field(default_factory=dict)
    """What produced it (file path, script argv, cwd, duration), for evaluator_raw_request."""


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def input_segments(messages: list[Any]) -> list[dict[str, Any]]:
    """AgentV 2.19's `input_segments`, which its `{{input}}` shows: each message's content as segments, text
    as `{type: text, value}`, a mapping as its pretty JSON text, an attached file as `{type: file, path,
    text, resolvedPath}` (guideline files are not among them), any other segment as written."""
    segments: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else getattr(message, "content", None)
        if isinstance(content, str):
            segments.append({"type": "text", "value": content})
        elif isinstance(content, dict):
            segments.append({"type": "text", "value": json.dumps(content, indent=2, ensure_ascii=False)})
        elif isinstance(content, list):
            for seg in content:
                if not isinstance(seg, dict):
                    continue
                if seg.get("type") == "file":
                    segments.append({"type": "file", "path": seg.get("path"), "text": seg.get("text"),
                                     "resolvedPath": seg.get("resolved_path")})
                else:
                    segments.append(dict(seg))
    return segments


def template_variables(context: EvaluationContext, config: dict[str, Any] | None = None) -> dict[str, str]:
    """Every `{{variable}}` a prompt may use, under both generations' names.

    Text values are trimmed (as AgentV trims them); message lists are pretty-printed JSON.
    """
    case = context.eval_case
    question = case.question or question_text(case.input_messages)
    inputs, expected, outputs = case_messages(context)
    answer = (context.candidate or "").strip()
    criteria = case.expected_outcome.strip()
    inputs_json, outputs_json, expected_json = _json(inputs), _json(outputs), _json(expected)  # each under two names
    variables = {
        "question": question.strip(),
        "expected_outcome": criteria,
        "criteria": criteria,
        "candidate_answer": answer,
        "answer": answer,
        "reference_answer": case.reference_answer.strip(),
        "input_messages": inputs_json,
        # AgentV 2.19's `{{input}}` is its input segments' JSON, not the messages (a prompt quoting it
        # showed the judge another text than AgentV's)
        "input": _json(input_segments(list(case.input_messages))),
        "output_messages": outputs_json,
        "output": outputs_json,
        "expected_messages": expected_json,
        "expected_output": expected_json,
        "guideline_files": _json(list(case.guideline_files)),
        "input_files": _json(list(case.input_files)),
        "file_changes": context.file_changes or "",
        "config": _json(config) if config else "",
    }
    return variables


def render_template(template: str, variables: dict[str, str]) -> str:
    """Replace `{{ name }}` in one pass (values are never re-scanned); unknown names stay as written."""
    return _VARIABLE.sub(lambda m: variables.get(m.group(1), m.group(0)), template)


def _prompt_config(config: LlmJudgeConfig) -> dict[str, Any] | None:
    """The pass-through config of an executable template: the evaluator's, then the prompt's own."""
    merged = dict(config.config or {})
    if isinstance(config.prompt, PromptScriptConfig):
        merged.update(config.prompt.config or {})
    return merged or None


def _script_argv(config: LlmJudgeConfig) -> list[str] | None:
    if config.resolved_prompt_script:
        return [str(a) for a in config.resolved_prompt_script]
    if isinstance(config.prompt, PromptScriptConfig):
        script = config.prompt.script
        return shlex.split(script) if isinstance(script, str) else [str(a) for a in script]
    return None


def run_prompt_script(
    argv: list[str],
    context: EvaluationContext,
    config: dict[str, Any] | None,
    timeout_seconds: float,
    cwd: Path | None = None,
    payload: dict[str, Any] | None = None,
) -> ResolvedPrompt:
    """Run an executable template as AgentV does: payload on stdin, trimmed stdout is the prompt.

    The payload is 2.19's judge payload unless given (a 4.x grader's is its own); the working folder is the
    script's own (the folder of the last argument), unless given.
    Raises PromptTemplateError with the script's stderr when it cannot start, times out or fails.
    """
    if cwd is None:
        last = Path(argv[-1]) if argv else None
        cwd = last.parent if last is not None and last.is_absolute() and last.parent.is_dir() else None
    payload = build_judge_payload(context, config) if payload is None else payload
    result = run_judge(argv, _json(payload), timeout_seconds, cwd=cwd)
    details: dict[str, Any] = {
        "script": argv,
        "cwd": str(cwd) if cwd else None,
        "timeout_seconds": timeout_seconds,
        "duration_ms": result.duration_ms,
        "exit_code": result.exit_code,
    }
    failure = result.failure()
    if failure is None and result.stdout_truncated:
        failure = f"printed more than {len(result.stdout.encode())} bytes on stdout (the cap), so the prompt is incomplete"
    if failure is not None:
        stderr = redact(result.stderr).strip()  # before the cut, which would leave a key's tail unrecognised
        if len(stderr) > STDERR_TAIL_CHARS:
            stderr = f"...{stderr[-STDERR_TAIL_CHARS:]}"
        name = Path(argv[0]).name if argv else "?"
        message = f"prompt template script ({name} {' '.join(argv[1:])}) {failure}"
        if stderr:
            message += f": {stderr}"
        raise PromptTemplateError(message, details)
    return ResolvedPrompt(text=result.stdout.strip(), source="script", details=details)


def _read_prompt_file(config: LlmJudgeConfig, context: EvaluationContext) -> ResolvedPrompt | None:
    """A prompt given as a file path in a config the loader did not resolve (built in code)."""
    prompt = config.prompt
    if (
        not isinstance(prompt, str)
        or "\n" in prompt
        or not prompt.strip().lower().endswith(PROMPT_FILE_SUFFIXES)
    ):
        return None
    path = Path(prompt.strip())
    if not path.is_absolute():
        path = Path(context.eval_case.source_file).parent / path
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptTemplateError(
            f"prompt file {prompt.strip()!r} cannot be read: {exc}", {"file": str(path)}
        ) from None
    return ResolvedPrompt(text=text, source="file", details={"file": str(path)})


def resolve_prompt(
    context: EvaluationContext,
    config: LlmJudgeConfig,
    default_timeout_seconds: float = DEFAULT_JUDGE_TIMEOUT_SECONDS,
) -> ResolvedPrompt:
    """The user prompt for this judge call, from whichever of the three forms the config uses."""
    argv = _script_argv(config)
    if argv:
        timeout = default_timeout_seconds
        if isinstance(config.prompt, PromptScriptConfig) and config.prompt.timeout_seconds:
            timeout = config.prompt.timeout_seconds
        return run_prompt_script(argv, context, _prompt_config(config), timeout)
    variables = template_variables(context, config.config)
    if config.resolved_prompt_text is not None:
        source = "file" if config.resolved_prompt_path is not None else "inline"
        details = {"file": str(config.resolved_prompt_path)} if config.resolved_prompt_path else {}
        return ResolvedPrompt(render_template(config.resolved_prompt_text, variables), source, details)
    from_file = _read_prompt_file(config, context)
    if from_file is not None:
        from_file.text = render_template(from_file.text, variables)
        return from_file
    if isinstance(config.prompt, str) and config.prompt.strip():
        return ResolvedPrompt(render_template(config.prompt, variables), "inline")
    text = render_template(DEFAULT_EVALUATOR_TEMPLATE, variables)
    if context.file_changes:  # the default template only, as AgentV 2.19 adds it
        text += f"\n\n[[ ## file_changes ## ]]\n{context.file_changes}"
    return ResolvedPrompt(text, "default")
