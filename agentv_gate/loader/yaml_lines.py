"""YAML and JSONL reading that remembers the source line of every mapping.

Annotations must point at the failing case's line, so mappings come back as `LineDict`, a
plain dict that also carries `.line` (1-based). JSON serialisation and pydantic treat it as
an ordinary dict, so no marker key leaks into configs passed through to judges.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from ..errors import EvalFileError
from ..yaml12 import MERGE_KEY_REFUSED, MERGE_TAG, core_int, use_core_schema


class LineDict(dict):  # type: ignore[type-arg]
    line: int = 1
    key_lines: dict[Any, int] = {}


class LineList(list):  # type: ignore[type-arg]
    line: int = 1
    item_lines: list[int] = []


class _LineLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """SafeLoader semantics; libyaml's parser when PyYAML has it (about 5x faster on big suites)."""


def construct_line_map(loader: yaml.constructor.SafeConstructor, node: yaml.MappingNode) -> LineDict:
    data = LineDict()
    data.line = node.start_mark.line + 1
    data.key_lines = {}
    seen: dict[Any, int] = {}
    merged: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        if key_node.tag == MERGE_TAG and getattr(loader, "merge_keys", False):
            merged.update(_merge_source(loader, value_node))
            continue
        refuse_merge_key(key_node)
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            raise EvalFileError(key_node.start_mark.line + 1, "mapping key is not a scalar") from None
        if key in seen:
            raise EvalFileError(
                key_node.start_mark.line + 1,
                f"duplicate key {key!r} (first at line {seen[key]})",
                "each key once per mapping",
            )
        seen[key] = key_node.start_mark.line + 1
        data.key_lines[key] = seen[key]
        data[key] = loader.construct_object(value_node, deep=True)
    for key, value in merged.items():  # the mapping's own keys win over merged ones (YAML's merge rule)
        if key not in data:
            data[key] = value
            data.key_lines[key] = data.line
    return data


def _merge_source(loader: yaml.constructor.SafeConstructor, node: yaml.Node) -> dict[Any, Any]:
    """What `<<:` brings: one mapping (an alias), or a list of them, earlier ones winning (YAML's merge)."""
    sources = node.value if isinstance(node, yaml.SequenceNode) else [node]
    out: dict[Any, Any] = {}
    for source in reversed(sources):
        value = loader.construct_object(source, deep=True)
        if not isinstance(value, dict):
            raise EvalFileError(source.start_mark.line + 1, "'<<' merges mappings only",
                                "<<: *anchor, where the anchor is a mapping")
        out.update(value)
    return out


def refuse_merge_key(key_node: yaml.Node) -> None:
    """A `<<: *defaults` merge key is refused at its line (see `yaml12.MERGE_KEY_REFUSED`)."""
    if key_node.tag == MERGE_TAG:
        raise EvalFileError(key_node.start_mark.line + 1, MERGE_KEY_REFUSED,
                            "the keys written out (an alias still repeats a whole value: assert: *checks)")


def construct_line_seq(loader: yaml.constructor.SafeConstructor, node: yaml.SequenceNode) -> LineList:
    data = LineList(loader.construct_object(child, deep=True) for child in node.value)
    data.line = node.start_mark.line + 1
    data.item_lines = [child.start_mark.line + 1 for child in node.value]
    return data


def construct_located_int(loader: yaml.constructor.SafeConstructor, node: yaml.ScalarNode) -> int:
    """YAML's int, but one too long for Python to read (past 4300 digits) is a located problem."""
    try:
        return core_int(loader.construct_scalar(node))
    except ValueError:
        raise EvalFileError(node.start_mark.line + 1, f"a number with {len(str(node.value))} digits is too long",
                            "a number of at most 4300 digits") from None


use_core_schema(_LineLoader)
_LineLoader.add_constructor("tag:yaml.org,2002:int", construct_located_int)
_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_line_map)
_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, construct_line_seq)


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


@contextmanager
def located_yaml_errors() -> Iterator[None]:
    """PyYAML's errors as `EvalFileError`s at the line the parser stopped on."""
    try:
        yield
    except EvalFileError:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise EvalFileError(mark.line + 1 if mark else 1, f"malformed YAML: {exc.problem or exc}", "valid YAML") from None
    except yaml.YAMLError as exc:
        raise EvalFileError(1, f"malformed YAML: {exc}", "valid YAML") from None
    except RecursionError:
        raise EvalFileError(1, "malformed YAML: nesting too deep", "valid YAML") from None


def load_yaml_text(text: str) -> Any:
    """Parse one YAML document; malformed YAML becomes an EvalFileError at the parser's line."""
    with located_yaml_errors():
        return yaml.load(text, Loader=_LineLoader)  # noqa: S506 - SafeLoader subclass


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


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise EvalFileError(1, f"not UTF-8 text ({exc.reason} at byte {exc.start})", "a UTF-8 file") from None
    except OSError as exc:  # gone or unreadable since it was found (a run reads each file twice)
        raise EvalFileError(1, f"cannot be read: {exc.strerror or exc}", "a readable file") from None
