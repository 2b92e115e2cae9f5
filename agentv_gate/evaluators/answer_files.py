"""The answer an AgentV 4.42 llm-grader reads when the agent answered with content blocks, not text.

AgentV 4.42 (`LlmGrader.prepareContext`, content-preprocessor.ts) takes the last assistant message that has
content; when that content is a list of blocks rather than text, the grader's answer becomes the blocks' text
joined by newlines: a `text` block's text, a `file` block's file as `[[ file: PATH ]]` and its text, any other
block left out. A file block is turned into text by the first of the grader's `preprocessors` whose type names
its media type (`xlsx` for the spreadsheet MIME type): the command gets `{path, original_path, media_type}` as
JSON on stdin and its trimmed stdout is the text. Without a preprocessor the file is read as UTF-8, and a file
that is not text, cannot be read or is remote becomes a note the grader reads
(`[file preprocessing warning] PATH (TYPE): why`), as AgentV writes it. A relative path is read in the case's
workspace, else the target's working folder, else the folder agentv-gate runs in.

Where the gate differs, each to keep a verdict honest:

* a preprocessor that cannot start, exits non-zero, is killed at its timeout (AgentV has none; here the run's
  judge timeout) or prints more than the output cap is the grader's error, at the entry's file and line, never a
  note the grader may pass: the team's converter failed, not the agent;
* a file block naming a file outside the repository (or the case's workspace) is not read: the grader gets the
  note saying so, unless the run allows files outside the repository (`--allow-outside-root`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from ..base.defaults import DEFAULT_MAX_RESPONSE_BYTES
from ..base.files import resolves_inside
from ..base.jscompat import js_trim
from ..models import EvaluationContext, Message, PreprocessorConfig, media_type_of
from ..transport.process import run_judge
from .code_judge import trimmed_stderr

CONTENT_TYPES = frozenset({"text", "image", "file"})
"""AgentV's content block types: a list of anything else is no content there (`isContentArray`)."""
_REMOTE = re.compile(r"^[a-z]+://", re.IGNORECASE)
REPLACEMENT_CHAR = "\ufffd"


class PreprocessorFailed(Exception):
    """A preprocessor that did not give a file's text: the grader's error, located at the entry."""


@dataclass(frozen=True)
class _Text:
    text: str
    warnings: tuple[str, ...] = ()


def _has_content(message: Message) -> bool:
    """AgentV keeps a message's content when it is text or a list of content blocks; other content is none."""
    content = message.content
    if "content" not in message.model_fields_set or content is None:
        return False
    if isinstance(content, str):
        return True
    return isinstance(content, list) and bool(content) and all(
        isinstance(block, dict) and block.get("type") in CONTENT_TYPES for block in content)


def blocks_of(messages: list[Message]) -> list[dict[str, Any]] | None:
    """The content blocks of the last assistant message that has content; None when it is text (or none)."""
    for message in reversed(messages):
        if message.role == "assistant" and _has_content(message):
            return None if isinstance(message.content, str) else list(message.content)
    return None


def graded_answer(context: EvaluationContext, preprocessors: list[PreprocessorConfig] | None,
                  timeout_seconds: float, max_output_bytes: int = DEFAULT_MAX_RESPONSE_BYTES) -> str | None:
    """The answer a 4.x llm-grader reads, or None when it reads the candidate as it is (a text answer).
    Raises `PreprocessorFailed` when a preprocessor does not give its file's text."""
    blocks = blocks_of(context.output_messages)
    if blocks is None:
        return None
    base = Path(context.answer_dir) if context.answer_dir else Path.cwd()
    roots = [Path(root) for root in (context.eval_case.files_root, context.run.workspace_path) if root]
    parts: list[str] = []
    warnings: list[str] = []
    for block in blocks:
        if block.get("type") == "text":
            text = block.get("text")
            parts.append("" if text is None else str(text))
        elif block.get("type") == "file":
            found = _file_text(block, preprocessors or [], base, roots, context.eval_case.files_root is None,
                               timeout_seconds, max_output_bytes)
            if found.text:
                parts.append(found.text)
            warnings.extend(found.warnings)
    return "\n".join(part for part in ["\n".join(parts), *warnings] if part)


def _note(block: dict[str, Any], reason: str) -> str:
    return f"[file preprocessing warning] {block.get('path')} ({block.get('media_type')}): {reason}"


def _file_text(block: dict[str, Any], preprocessors: list[PreprocessorConfig], base: Path, roots: list[Path],
               anywhere: bool, timeout_seconds: float, max_output_bytes: int) -> _Text:
    written, media = block.get("path"), block.get("media_type")
    if not isinstance(written, str) or not isinstance(media, str):
        raise PreprocessorFailed(f"the answer's file block {json.dumps(block, default=str)[:200]} has no text "
                                 "'path' and 'media_type' (AgentV's grader fails on it too)")
    if written.startswith("file://"):
        path = Path(unquote(urlparse(written).path))
    elif _REMOTE.match(written):
        return _Text("", (_note(block, "remote file paths are not supported for preprocessing"),))
    else:
        path = Path(base, written).absolute()
    if not anywhere and not any(resolves_inside(path, root.resolve()) for root in roots):
        return _Text("", (_note(block, "the file is outside the repository and the case's workspace, so "
                                       "agentv-gate does not read it"),))
    wanted = media_type_of(media)
    chosen = next((entry for entry in preprocessors if entry.media_type == wanted), None)
    if chosen is not None:
        return _Text(f"[[ file: {written} ]]\n{_run(chosen, path, block, timeout_seconds, max_output_bytes)}")
    try:
        with path.open("rb") as handle:
            data = handle.read(max_output_bytes + 1)
    except OSError as exc:
        return _Text("", (_note(block, f"{exc.strerror or exc}: {path}"),))
    if len(data) > max_output_bytes:
        return _Text("", (_note(block, f"the file is larger than {max_output_bytes} bytes; configure a "
                                       "preprocessor"),))
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
    if b"\0" in data or REPLACEMENT_CHAR in text:
        return _Text("", (_note(block, "default UTF-8 read produced binary or invalid text; configure a "
                                       "preprocessor"),))
    return _Text(f"[[ file: {written} ]]\n{text}")


def _run(entry: PreprocessorConfig, path: Path, block: dict[str, Any], timeout_seconds: float,
         max_output_bytes: int) -> str:
    """The preprocessor's trimmed stdout for one file, run as a judge is (its environment, a fresh process)."""
    payload = json.dumps({"path": str(path), "original_path": block.get("path"), "media_type": block.get("media_type")})
    result = run_judge(list(entry.resolved_command), payload, timeout_seconds, max_output_bytes=max_output_bytes)
    where = f"{entry.source_file}:{entry.source_line}" if entry.source_file else "preprocessors"
    failure = result.failure()
    if failure is None and result.stdout_truncated:
        failure = f"printed more than {max_output_bytes} bytes on stdout (the cap)"
    if failure is not None:
        stderr = trimmed_stderr(result.stderr)
        raise PreprocessorFailed(f"{where}: preprocessor '{entry.type}' ({' '.join(entry.command)}) {failure} on the "
                                 f"answer's file {block.get('path')}" + (f"; stderr: {stderr}" if stderr else ""))
    return js_trim(result.stdout.replace("\r\n", "\n"))
