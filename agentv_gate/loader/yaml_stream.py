"""A suite's YAML read one case at a time, so memory does not grow with the number of cases.

Composing a whole document keeps a node per scalar until the end: a 5000-case suite peaked at
about 70 MB that way. Here the top-level case list is walked event by event and each entry is
composed, built and dropped on its own. The rest of the document (the suite's settings) is
small and is built whole. Anchors defined before an entry stay usable inside it, because the
composer keeps every anchored node it has seen, as a whole-document load does.

Two walks over the text: `read_header` builds everything except the case list (whose events
are only counted past), because suite settings may be written after the cases and every case
needs them; `iter_entries` then yields the entries. Both raise `EvalFileError` with the line of
malformed YAML, exactly as `load_yaml_text` does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeVar

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from ..errors import EvalFileError
from ..yaml12 import use_core_schema
from .yaml_lines import (
    LineDict,
    construct_line_map,
    construct_line_seq,
    construct_located_int,
    located_yaml_errors,
    refuse_merge_key,
)

try:  # libyaml's event parser when PyYAML was built with it; its pure-Python parser otherwise
    from yaml._yaml import CParser as _EventSource

    class _EntryLoader(_EventSource, Composer, SafeConstructor, Resolver):
        def __init__(self, text: str) -> None:
            _EventSource.__init__(self, text)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    class _EntryLoader(yaml.SafeLoader):  # type: ignore[no-redef]
        pass

use_core_schema(_EntryLoader)
_EntryLoader.add_constructor("tag:yaml.org,2002:int", construct_located_int)  # type: ignore[type-var]
_EntryLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_line_map)  # type: ignore[type-var]
_EntryLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, construct_line_seq)  # type: ignore[type-var]

T = TypeVar("T")


class SkippedList:
    """Stands in the header for a case list that `read_header` walked past without building."""

    def __init__(self, line: int) -> None:
        self.line = line


def _skip_node(loader: Any) -> None:
    """Consume one node's events without composing it."""
    depth = 0
    while True:
        event = loader.get_event()
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1
        if depth == 0:
            return


def _build(loader: Any, node: Any) -> Any:
    loader.constructed_objects = {}
    loader.recursive_objects = {}
    return loader.construct_object(node, deep=True)


def _key(loader: Any, node: Any) -> Any:
    """A top-level key; a `<<` merge key is refused, as in every other mapping."""
    refuse_merge_key(node)
    return _build(loader, node)


def _open(loader: Any) -> Any:
    """Past the stream and document starts: the root's first event, or None for an empty file."""
    loader.get_event()  # StreamStart
    if loader.check_event(yaml.StreamEndEvent):
        return None
    loader.get_event()  # DocumentStart
    return loader.peek_event()


def _single(loader: Any, root: T) -> T:
    """`root`, once the stream is checked to end with it (a second document is refused, as yaml.load does)."""
    loader.get_event()  # DocumentEnd
    if not loader.check_event(yaml.StreamEndEvent):
        line = loader.peek_event().start_mark.line + 1
        raise EvalFileError(line, "a second YAML document in the file", "one document per eval file")
    return root


def read_header(text: str, list_keys: tuple[str, ...]) -> Any:
    """The document with each top-level case list (under any of `list_keys`) replaced by a `SkippedList`.

    A root that is itself a list comes back as a `SkippedList`; an empty file as None; any
    other root as what it is, for the caller to refuse.
    """
    loader: Any = _EntryLoader(text)  # a mix of libyaml and PyYAML classes its stubs do not describe
    with located_yaml_errors():
        try:
            root = _open(loader)
            if root is None:
                return None
            line = root.start_mark.line + 1
            if isinstance(root, yaml.SequenceStartEvent):
                _skip_node(loader)
                return _single(loader, SkippedList(line))
            if not isinstance(root, yaml.MappingStartEvent):
                return _single(loader, _build(loader, loader.compose_node(None, None)))
            header = LineDict()
            header.line, header.key_lines = line, {}
            loader.get_event()
            while not loader.check_event(yaml.MappingEndEvent):
                key_node = loader.compose_node(None, None)
                key = _key(loader, key_node)
                key_at = key_node.start_mark.line + 1
                try:
                    hash(key)
                except TypeError:
                    raise EvalFileError(key_at, "mapping key is not a scalar") from None
                if key in header.key_lines:
                    raise EvalFileError(key_at, f"duplicate key {key!r} (first at line {header.key_lines[key]})",
                                        "each key once per mapping")
                header.key_lines[key] = key_at
                if key in list_keys and loader.check_event(yaml.SequenceStartEvent):
                    header[key] = SkippedList(loader.peek_event().start_mark.line + 1)
                    _skip_node(loader)
                else:
                    header[key] = _build(loader, loader.compose_node(None, None))
            loader.get_event()
            return _single(loader, header)
        finally:
            loader.dispose()


def iter_entries(text: str, list_key: str | None, merge_keys: bool = False) -> Iterator[tuple[int, Any]]:
    """(line, built value) for each entry of the top-level list under `list_key` (None: the root list).

    An entry whose mapping repeats a key is yielded as the `EvalFileError` saying so, in place
    of its value, so the entries after it still load. `merge_keys`: the file is read as AgentV 4.x reads
    it, which merges `<<: *anchor` keys (yaml_lines.construct_line_map); otherwise they are refused.
    """
    loader: Any = _EntryLoader(text)  # a mix of libyaml and PyYAML classes its stubs do not describe
    loader.merge_keys = merge_keys
    try:
        with located_yaml_errors():
            if _open(loader) is None:
                return
            if list_key is not None:
                loader.get_event()  # the root mapping's start
                while True:
                    if loader.check_event(yaml.MappingEndEvent):
                        return
                    key = _key(loader, loader.compose_node(None, None))
                    if key == list_key and loader.check_event(yaml.SequenceStartEvent):
                        break
                    loader.compose_node(None, None)  # kept for its anchors, never built
            loader.get_event()  # the list's start
        index = 0
        while True:
            with located_yaml_errors():
                if loader.check_event(yaml.SequenceEndEvent):
                    return
                node = loader.compose_node(None, None)
            value: Any
            try:
                with located_yaml_errors():
                    value = _build(loader, node)
            except EvalFileError as exc:
                value = exc
            yield node.start_mark.line + 1, value
            index += 1
    finally:
        loader.dispose()


__all__ = ["SkippedList", "iter_entries", "read_header"]
