"""One raw case mapping -> `EvalCase`, accepting every generation of AgentV's field names.

Generations: `question`/`input_messages`/`input`, `expected_outcome`/`criteria`/`outcome`,
`expected_messages`/`expected_output`, `reference_answer`; evaluators from `evaluators`,
`execution.evaluators`, `assert`, or the single `evaluator` / deprecated `grader`.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any

from ..models import EvalCase, EvaluatorConfig, Message, content_to_text
from .evaluator_parser import parse_evaluator, parse_evaluators
from .problems import EvalFileError, Problem
from .refs import SearchRoots
from .yaml_lines import line_of

# AgentV's default guideline patterns: such files are listed for the judge, not pasted into the question.
GUIDELINE_PATTERNS = ("*.instructions.md", "*/instructions/*", "*.prompt.md", "*/prompts/*")


def is_guideline(ref: str) -> bool:
    norm = "/" + ref.replace("\\", "/").lstrip("./")
    return any(fnmatch.fnmatch(norm, "*" + pat.lstrip("*")) or fnmatch.fnmatch(norm, pat) for pat in GUIDELINE_PATTERNS)


class CaseBuilder:
    """Holds what is shared by the cases of one file: roots, suite defaults, problems found."""

    def __init__(self, file: Path, suite: str, roots: SearchRoots, defaults: dict[str, Any], problems: list[Problem]):
        self.file = file
        self.suite = suite
        self.roots = roots
        self.defaults = defaults
        self.problems = problems

    # ---------------------------------------------------------------- messages

    def _messages(self, raw: Any, line: int, field: str, files: dict[str, list[str]] | None) -> list[Message]:
        if raw is None:
            return []
        if isinstance(raw, str):
            return [Message(role="user" if field == "input" else "assistant", content=raw)]
        if isinstance(raw, dict) and "role" in raw:
            raw = [raw]
        if not isinstance(raw, list):
            raise EvalFileError(line_of(raw, line), f"'{field}' must be text or a list of messages",
                                "a string or [{role: ..., content: ...}]")
        messages = []
        for item in raw:
            item_line = line_of(item, line_of(raw, line))
            if isinstance(item, str):
                messages.append(Message(role="user" if field == "input" else "assistant", content=item))
                continue
            if not isinstance(item, dict) or "role" not in item:
                raise EvalFileError(item_line, f"each entry of '{field}' must be a message with a 'role'",
                                    "{role: user, content: ...}")
            data = dict(item)
            data["content"] = self._content(data.get("content", ""), item_line, files)
            messages.append(Message.model_validate(data))
        return messages

    def _content(self, content: Any, line: int, files: dict[str, list[str]] | None) -> Any:
        """File segments become text segments carrying the file's content (AgentV embeds it)."""
        if isinstance(content, dict) and "type" in content:
            content = [content]
        if not isinstance(content, list):
            return content
        out: list[Any] = []
        for seg in content:
            seg_line = line_of(seg, line)
            if isinstance(seg, dict) and seg.get("type") == "file":
                ref = str(seg.get("value", seg.get("path", "")))
                if not ref:
                    raise EvalFileError(seg_line, "file segment has no 'value'", "type: file, value: path/to/file")
                path = self.roots.resolve(ref, seg_line, "referenced file")
                rel = self._display(path)
                if files is not None and is_guideline(ref):
                    files["guideline"].append(str(path))
                    continue
                if files is not None:
                    files["input"].append(str(path))
                try:
                    text = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    raise EvalFileError(seg_line, f"referenced file {ref!r} cannot be read: {exc}", "a UTF-8 file") from None
                out.append({"type": "file", "value": f'<file path="{rel}">\n{text}\n</file>', "path": rel})
            else:
                out.append(seg)
        return out

    def _display(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.roots.repo_root.resolve()))
        except ValueError:
            return str(path)

    # ---------------------------------------------------------------- evaluators

    def _evaluators(self, raw: dict[str, Any], line: int) -> list[EvaluatorConfig]:
        execution = raw.get("execution") if isinstance(raw.get("execution"), dict) else {}
        listed = [
            (raw.get("evaluators"), True),
            (execution.get("evaluators"), True),
            (raw.get("assert"), False),
            (execution.get("assert"), False),
        ]
        configs: list[EvaluatorConfig] = []
        found = False
        for value, name_required in listed:
            if value is not None:
                found = True
                configs.extend(parse_evaluators(value, self.roots, self.file, self.problems, name_required=name_required))
        if found:
            return configs
        single = raw.get("evaluator")
        if single is None and "grader" in raw:
            single = raw["grader"]
            self.problems.append(Problem(self.file, line, "'grader' is deprecated", "'evaluator'", severity="warning"))
        if single is not None:
            return [parse_evaluator(single, self.roots, self.file, self.problems, name_required=False)]
        return list(self.defaults.get("evaluators", []))

    # ---------------------------------------------------------------- the case

    def build(self, raw: Any, index: int) -> EvalCase:
        line = line_of(raw)
        if not isinstance(raw, dict):
            raise EvalFileError(line, f"case #{index + 1} must be a mapping, got {type(raw).__name__}", "id: ..., input: ...")
        case_id = raw.get("id", raw.get("eval_id"))
        if case_id is None or str(case_id).strip() == "":
            raise EvalFileError(line, f"case #{index + 1} has no 'id'", "a unique id per case")
        files: dict[str, list[str]] = {"guideline": [], "input": []}

        if "input_messages" in raw:
            input_messages = self._messages(raw["input_messages"], line, "input", files)
        elif "input" in raw:
            input_messages = self._messages(raw["input"], line, "input", files)
        elif "question" in raw:
            input_messages = self._messages(raw["question"], line, "input", files)
        else:
            raise EvalFileError(line, f"case '{case_id}' has no input", "'input', 'input_messages' or 'question'")
        question = raw.get("question")
        if not isinstance(question, str):
            question = next((m.text() for m in input_messages if m.role == "user"), "")
        if not question and not input_messages:
            raise EvalFileError(line, f"case '{case_id}' has an empty input", "at least one user message")

        expected_raw = raw.get("expected_messages", raw.get("expected_output"))
        expected_messages = self._messages(expected_raw, line, "expected_output", None)
        reference = raw.get("reference_answer")
        if reference is None:
            reference = expected_messages[-1].text() if expected_messages else ""
        outcome = raw.get("expected_outcome", raw.get("criteria", raw.get("outcome", "")))
        for key, value in (("expected_outcome", outcome), ("reference_answer", reference)):
            if not isinstance(value, (str, int, float)):
                raise EvalFileError(line_of(value, line), f"'{key}' must be text", "a string")

        execution = raw.get("execution") if isinstance(raw.get("execution"), dict) else {}
        threshold = _threshold(raw.get("threshold", execution.get("threshold", self.defaults.get("threshold"))), line)
        target = raw.get("target", execution.get("target", self.defaults.get("target")))

        return EvalCase(
            id=str(case_id),
            source_file=self.file,
            source_line=line,
            suite=self.suite,
            question=question,
            input_messages=input_messages,
            expected_outcome=str(outcome or ""),
            expected_messages=expected_messages,
            reference_answer=str(reference or ""),
            guideline_files=files["guideline"],
            input_files=files["input"],
            evaluators=self._evaluators(raw, line),
            threshold=threshold,
            target=str(target) if target else None,
            conversation_id=raw.get("conversation_id"),
            metadata=raw.get("metadata") if isinstance(raw.get("metadata"), dict) else None,
        )


def _threshold(value: Any, line: int) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= float(value) <= 1:
        raise EvalFileError(line_of(value, line), f"threshold {value!r} is not a number in 0..1", "a number from 0 to 1")
    return float(value)


__all__ = ["CaseBuilder", "content_to_text", "is_guideline"]
