"""Where a value of an eval file is written, and JSONL rows read with the same lines.

Annotations must point at the failing case's line, so mappings come back as `LineDict`, a
plain dict that also carries `.line` (1-based). JSON serialisation and pydantic treat it as
an ordinary dict, so no marker key leaks into configs passed through to judges. YAML itself is
read by `yaml_reader`, the one reader of every YAML file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import EvalFileError
from ..yaml_reader import LineDict, LineList, decode_text, load_yaml_text, located_yaml_errors


def yaml_kind(value: Any) -> str:
    """What a value is, in the eval file's words ("a mapping"), for messages: never our class names."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def line_of(value: Any, default: int = 1) -> int:
    return getattr(value, "line", default)


def key_line(mapping: Any, key: str, default: int = 1) -> int:
    """Line where `key` is written in a mapping (falls back to the mapping's own line)."""
    lines = getattr(mapping, "key_lines", None)
    if lines and key in lines:
        return int(lines[key])
    return line_of(mapping, default)


def item_line(seq: Any, index: int, default: int = 1) -> int:
    """Line of the index-th entry of a sequence, scalars included."""
    lines = getattr(seq, "item_lines", None)
    if lines and index < len(lines):
        return int(lines[index])
    return line_of(seq[index] if isinstance(seq, list) and index < len(seq) else None, default)


def _with_lines(value: Any, line: int) -> Any:
    if isinstance(value, dict):
        out = LineDict((k, _with_lines(v, line)) for k, v in value.items())
        out.line = line
        return out
    if isinstance(value, list):
        seq = LineList(_with_lines(v, line) for v in value)
        seq.line = line
        seq.item_lines = [line] * len(value)
        return seq
    return value


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refused when a key is written twice: JSON keeps the last, which would drop
    the first quietly (a case's `assertions` gone), where YAML refuses the same mapping."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return value


def iter_jsonl_rows(text: str) -> Iterator[tuple[int, Any]]:
    """(line, value) for each non-blank line, one at a time; a malformed line is yielded as the
    `EvalFileError` saying so, in place of its value, so the rows after it still load.

    Every mapping inside a value carries that line number.
    """
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        if raw.lstrip().startswith("//"):
            # JSON has no comments: AgentV's JSON.parse refuses the file here, so a commented-out case (or a
            # comment) is never silently skipped
            yield number, EvalFileError(number, "a '//' comment line: JSONL has no comments, and AgentV 2.19 "
                                                "refuses the file", "one JSON object per line, no comment lines")
            continue
        try:
            value = json.loads(raw, object_pairs_hook=_unique_keys)
        except _DuplicateKey as exc:
            yield number, EvalFileError(number, f"duplicate key {exc.key!r}", "each key once per object")
            continue
        except json.JSONDecodeError as exc:
            yield number, EvalFileError(number, f"malformed JSON: {exc.msg} at column {exc.colno}", "one JSON object per line")
            continue
        except RecursionError:
            yield number, EvalFileError(number, "malformed JSON: nesting too deep", "one JSON object per line")
            continue
        except ValueError as exc:  # an integer past Python's 4300-digit limit
            yield number, EvalFileError(number, f"malformed JSON: {exc}".split(";")[0], "one JSON object per line")
            continue
        yield number, _with_lines(value, number)


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:  # gone or unreadable since discovery found it
        raise EvalFileError(1, f"cannot be read: {exc.strerror or exc}", "a readable file") from None


def read_text(path: Path) -> str:
    """The file's text as Python's text mode reads it (`yaml_reader.decode_text`), or a located error."""
    return decode_text(read_bytes(path))


__all__ = ["LineDict", "LineList", "item_line", "iter_jsonl_rows", "key_line", "line_of", "load_yaml_text",
           "located_yaml_errors", "read_bytes", "read_text", "yaml_kind"]
