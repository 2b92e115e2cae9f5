"""The one YAML reader: eval files, their sidecars, targets.yaml, `.agentv/config.yaml` and `gate.yaml`.

Every mapping comes back as a `LineDict` (a dict that also knows its line and each key's line), every
list as a `LineList`, so any problem can be reported at `file:line`. Values are read as AgentV reads
them (the YAML 1.2 core schema, `yaml12`), a key written twice in one mapping is refused, and so is a
`<<` merge key, except in the cases of an AgentV 4.x suite, which merge it as AgentV 4.23+ does.

A suite is read in one walk over libyaml's events, with no node tree: building the tree of a whole
suite cost about 14 KB a case. Each case is packed, as it is read, into plain tuples, marshalled and
compressed with the others of its batch (a few dozen bytes a case), because the suite's settings may
be written after its cases and every case needs them. `CaseList.entries` unpacks the cases one at a
time, as often as asked: a run checks every case up front and builds most of them again when it
reaches them, from what was read once, never from the file again (which may have changed since).
"""

from __future__ import annotations

import codecs
import marshal
import pickle  # only ever loads what `_pack_object` dumped in this process
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import ScalarNode

from .base.yaml12 import MERGE_KEY_REFUSED, MERGE_TAG, core_int, use_core_schema
from .errors import EvalFileError


class LineDict(dict):  # type: ignore[type-arg]
    """A mapping as written: `.line` is where it starts, `.key_lines` where each key is written."""

    line: int = 1
    key_lines: dict[Any, int] = {}


class LineList(list):  # type: ignore[type-arg]
    """A list as written: `.line` is where it starts, `.item_lines` where each item is written."""

    line: int = 1
    item_lines: list[int] = []


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """SafeLoader's scalars by the YAML 1.2 core schema; libyaml's event parser when PyYAML has it."""


def _located_int(loader: yaml.constructor.SafeConstructor, node: yaml.ScalarNode) -> int:
    """YAML's int, but one too long for Python to read (past 4300 digits) is a located problem."""
    try:
        return core_int(loader.construct_scalar(node))
    except ValueError:
        raise EvalFileError(node.start_mark.line + 1, f"a number with {len(str(node.value))} digits is too long",
                            "a number of at most 4300 digits") from None


use_core_schema(_Loader)
_Loader.add_constructor("tag:yaml.org,2002:int", _located_int)

_STR = "tag:yaml.org,2002:str"
_COLLECTION_TAGS = (None, "!", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map")

# Packed values: a scalar is itself; anything else a tuple whose first item says what it is.
_MAP, _SEQ, _ERR, _MERGE, _OBJ = 0, 1, 2, 3, 4
_MERGE_KEY = (_MERGE,)
_BATCH = 256
"""Cases marshalled and compressed together."""
_RAW_BATCH_CHARS = 1 << 20
"""A batch holding more text than this is kept as it is: compressing a 50 MB string costs more than it saves."""

MERGE_KEY_EXPECTED = "the keys written out (an alias still repeats a whole value: assert: *checks)"


def located(exc: BaseException) -> EvalFileError:
    """A PyYAML error (or a too-deep nesting) as an `EvalFileError` at the line the parser stopped on."""
    if isinstance(exc, EvalFileError):
        return exc
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        return EvalFileError(mark.line + 1 if mark else 1, f"malformed YAML: {exc.problem or exc}", "valid YAML")
    if isinstance(exc, RecursionError):
        return EvalFileError(1, "malformed YAML: nesting too deep", "valid YAML")
    return EvalFileError(1, f"malformed YAML: {exc}", "valid YAML")


@contextmanager
def located_yaml_errors(source: str | bytes | None = None) -> Iterator[None]:
    """PyYAML's errors as `EvalFileError`s at the line the parser stopped on. With the file's bytes as
    `source`, a byte libyaml refuses as UTF-8 is said as reading the file as text says it (`decode_text`)."""
    try:
        yield
    except (yaml.YAMLError, RecursionError) as exc:
        if isinstance(exc, yaml.reader.ReaderError) and isinstance(source, bytes):
            decode_text(source)  # raises the located encoding error, if that is what libyaml stopped on
        raise located(exc) from None


UTF16_MARKS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def decode_text(data: bytes) -> str:
    """A file's bytes as Python's text mode reads them (a UTF-8 byte order mark dropped, `\r\n` and a
    lone `\r` read as `\n`), decoded in one piece. A byte that is not UTF-8 is an `EvalFileError` at its
    line, naming its offset in the file."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        at = exc.start + (len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0)
        raise EvalFileError(data.count(b"\n", 0, at) + 1, f"not UTF-8 text ({exc.reason} at byte {at})",
                            "a UTF-8 file") from None
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


class _Walker:
    """Packs one node at a time straight from the parser's events."""

    def __init__(self, source: str | bytes) -> None:
        if isinstance(source, bytes) and source.startswith(UTF16_MARKS):
            # libyaml would read it by its byte order mark; AgentV reads every file as UTF-8
            raise EvalFileError(1, "not UTF-8 text (it starts with a UTF-16 byte order mark)", "a UTF-8 file")
        self.loader: Any = _Loader(source)  # libyaml's parser mixed with PyYAML's classes: its stubs say too little
        self.get_event = self.loader.get_event
        self.peek_event = self.loader.peek_event
        """The parser's methods, bound once: a long suite is a few million events."""
        self.anchors: dict[str, Any] = {}
        self.tags: dict[str, str] = {}
        """Plain scalar -> its resolved tag: a suite writes the same keys and words over and over."""
        self.chars = 0
        """Characters of text packed since the last batch was stored."""

    def open(self) -> bool:
        """Past the stream and document starts; False for an empty stream."""
        self.get_event()
        if type(self.peek_event()) is StreamEndEvent:
            return False
        self.get_event()
        return True

    def peek_line(self) -> int:
        return int(self.peek_event().start_mark.line) + 1

    def node(self) -> Any:
        event = self.get_event()
        kind = type(event)
        if kind is ScalarEvent:
            packed = self.scalar(event)
        elif kind is MappingStartEvent:
            items: list[tuple[Any, int, Any]] = []
            following = self.peek_event()
            while type(following) is not MappingEndEvent:
                items.append((self.key(following), following.start_mark.line + 1, self.node()))
                following = self.peek_event()
            self.get_event()
            packed = self.tagged(event, (_MAP, event.start_mark.line + 1, tuple(items)))
        elif kind is SequenceStartEvent:
            lines: list[int] = []
            values: list[Any] = []
            following = self.peek_event()
            while type(following) is not SequenceEndEvent:
                lines.append(following.start_mark.line + 1)
                values.append(self.node())
                following = self.peek_event()
            self.get_event()
            packed = self.tagged(event, (_SEQ, event.start_mark.line + 1, tuple(lines), tuple(values)))
        elif kind is AliasEvent:
            try:
                return self.anchors[event.anchor]
            except KeyError:
                raise yaml.composer.ComposerError(None, None, f"found undefined alias {event.anchor!r}",
                                                  event.start_mark) from None
        else:  # pragma: no cover - the parser yields nodes' events only here
            raise yaml.composer.ComposerError(None, None, f"unexpected {kind.__name__}", event.start_mark)
        if event.anchor is not None:
            self.anchors[event.anchor] = packed
        return packed

    def key(self, event: Any) -> Any:
        """The mapping key starting at `event` (peeked), with `<<` (PyYAML's merge tag) packed as the merge marker."""
        if type(event) is ScalarEvent and event.value == "<<" and event.implicit[0] and event.tag in (None, "!"):
            if self.loader.resolve(ScalarNode, "<<", event.implicit) == MERGE_TAG:
                self.get_event()
                return _MERGE_KEY
        return self.node()

    def scalar(self, event: Any) -> Any:
        value = event.value
        tag = event.tag
        if tag is None or tag == "!":
            if not event.implicit[0]:
                tag = _STR  # quoted: text, whatever it looks like
            else:
                tag = self.tags.get(value)
                if tag is None:
                    tag = self.loader.resolve(ScalarNode, value, event.implicit)
                    if len(self.tags) < 10_000 and len(value) < 100:
                        self.tags[value] = tag
        if tag == _STR:
            self.chars += len(value)
            return value
        node = ScalarNode(tag, value, event.start_mark, event.end_mark, event.style)
        constructor = self.loader.yaml_constructors.get(tag) or self.loader.yaml_constructors[None]
        try:
            built = constructor(self.loader, node)
        except (EvalFileError, yaml.YAMLError, ValueError) as exc:
            error = located(exc) if not isinstance(exc, ValueError) else EvalFileError(
                event.start_mark.line + 1, f"malformed YAML: {exc}", "valid YAML")
            return (_ERR, error.line, error.message, error.expected)
        if built is None or type(built) in (str, int, float, bool, bytes):
            return built
        return (_OBJ, pickle.dumps(built))  # a date or other value marshal cannot hold: rare

    def tagged(self, event: Any, packed: tuple[Any, ...]) -> Any:
        """A collection with an explicit tag other than its own (`!!set`, `!custom`) is refused at its line."""
        if event.tag in _COLLECTION_TAGS:
            return packed
        return (_ERR, event.start_mark.line + 1,
                f"malformed YAML: could not determine a constructor for the tag {event.tag!r}", "valid YAML")

    def single(self, suite: bool = False) -> None:
        """The stream ends with this document (a second one is refused, as `yaml.load` refuses it;
        in a suite, saying that one document is read)."""
        self.get_event()
        event = self.peek_event()
        if type(event) is not StreamEndEvent:
            if suite:
                raise EvalFileError(event.start_mark.line + 1, "a second YAML document in the file",
                                    "one document per eval file")
            raise yaml.composer.ComposerError("expected a single document in the stream", None,
                                              "but found another document", event.start_mark)


def unpack(packed: Any, merge_keys: bool = False, text: Callable[[str], str] | None = None) -> Any:
    """A packed value as `LineDict`s and `LineList`s; a problem packed inside it is raised here, in
    document order. `merge_keys`: `<<` merges (AgentV 4.x cases); otherwise it is refused. `text`:
    applied to each string value holding `${{` (never to a key) as it is unpacked, so that replacing
    variables costs no second walk of every case."""
    return _Unpacker(merge_keys, text).value(packed)


class _Unpacker:
    """Unpacks one value. An alias packs as the very tuple of its anchor, and is built once (`built`:
    id of a packed tuple -> what it became), so aliases share one value as PyYAML's loader shares it:
    building each use afresh made a "billion laughs" file of a few lines billions of objects."""

    def __init__(self, merge_keys: bool, text: Callable[[str], str] | None) -> None:
        self.merge_keys = merge_keys
        self.text = text
        self.built: dict[int, Any] = {}

    def value(self, packed: Any) -> Any:
        if type(packed) is not tuple:
            if type(packed) is str and self.text is not None and "${{" in packed:
                return self.text(packed)
            return packed
        done = self.built.get(id(packed))
        if done is not None:
            return done
        kind = packed[0]
        if kind == _MAP:
            value: Any = self.mapping(packed)
        elif kind == _SEQ:
            value = LineList([self.value(item) for item in packed[3]])
            value.line = packed[1]
            value.item_lines = list(packed[2])
        elif kind == _ERR:
            raise EvalFileError(packed[1], packed[2], packed[3])
        else:
            value = pickle.loads(packed[1])  # dumped by `_Walker.scalar` from a value SafeLoader built
        self.built[id(packed)] = value
        return value

    def mapping(self, packed: tuple[Any, ...]) -> LineDict:
        data = LineDict()
        data.line = packed[1]
        lines: dict[Any, int] = {}
        data.key_lines = lines
        merged: dict[Any, Any] | None = None
        for key, line, value in packed[2]:
            if type(key) is tuple:  # a scalar key is text, a number, true/false or null: hashable
                if key[0] == _MERGE:
                    if not self.merge_keys:
                        raise EvalFileError(line, MERGE_KEY_REFUSED, MERGE_KEY_EXPECTED)
                    merged = {**(merged or {}), **self.merge_source(value, line)}
                    continue
                key = self.value(key)
                if isinstance(key, (dict, list)):
                    raise EvalFileError(line, "mapping key is not a scalar")
                try:
                    hash(key)
                except TypeError:
                    raise EvalFileError(line, "mapping key is not a scalar") from None
            if key in lines:
                raise EvalFileError(line, f"duplicate key {key!r} (first at line {lines[key]})",
                                    "each key once per mapping")
            lines[key] = line
            data[key] = self.value(value)
        for key, value in (merged or {}).items():  # the mapping's own keys win over merged ones (YAML's merge rule)
            if key not in data:
                data[key] = value
                lines[key] = data.line
        return data

    def merge_source(self, packed: Any, line: int) -> dict[Any, Any]:
        """What `<<:` brings: one mapping (an alias), or a list of them, earlier ones winning (YAML's merge)."""
        is_list = type(packed) is tuple and packed[0] == _SEQ
        sources = list(zip(packed[2], packed[3], strict=True)) if is_list else [(line, packed)]
        out: dict[Any, Any] = {}
        for at, source in reversed(sources):
            value = self.value(source)
            if not isinstance(value, dict):
                raise EvalFileError(source[1] if type(source) is tuple else at, "'<<' merges mappings only",
                                    "<<: *anchor, where the anchor is a mapping")
            out.update(value)
        return out


def load_yaml_text(text: str | bytes) -> Any:
    """One whole YAML document (None for an empty one), from its text or its file's bytes (see `read_suite`);
    malformed YAML is an EvalFileError at its line."""
    walker = _Walker(text)
    try:
        with located_yaml_errors(text):
            if not walker.open():
                return None
            root = walker.node()
            walker.single()
        return unpack(root)
    finally:
        walker.loader.dispose()


class CaseList:
    """A suite's list of cases, read once: each case packed, unpacked again on each `entries()`."""

    def __init__(self, line: int) -> None:
        self.line = line
        self._batches: list[bytes | list[tuple[int, Any]]] = []

    def _store(self, batch: list[tuple[int, Any]], chars: int) -> None:
        if chars > _RAW_BATCH_CHARS:
            self._batches.append(batch)
        else:
            self._batches.append(zlib.compress(marshal.dumps(batch), 1))

    def entries(self, merge_keys: bool = False, text: Callable[[str], str] | None = None) -> Iterator[tuple[int, Any]]:
        """(line, value) for each case, in order; a case that cannot be read (a key written twice, a
        refused `<<`) is yielded as the `EvalFileError` saying so, so the cases after it still load.
        `text`: as `unpack` applies it."""
        for stored in self._batches:
            batch = stored if isinstance(stored, list) else marshal.loads(zlib.decompress(stored))
            for line, packed in batch:
                try:
                    value = unpack(packed, merge_keys, text)
                except (EvalFileError, RecursionError) as exc:
                    value = located(exc)
                yield line, value


def _read_list(walker: _Walker) -> CaseList:
    """The sequence starting at the next event, packed into a `CaseList` batch by batch."""
    cases = CaseList(walker.peek_line())
    walker.get_event()
    batch: list[tuple[int, Any]] = []
    walker.chars = 0
    following = walker.peek_event()
    while type(following) is not SequenceEndEvent:
        batch.append((following.start_mark.line + 1, walker.node()))
        if len(batch) >= _BATCH or walker.chars > _RAW_BATCH_CHARS:
            cases._store(batch, walker.chars)
            batch, walker.chars = [], 0
        following = walker.peek_event()
    walker.get_event()
    if batch:
        cases._store(batch, walker.chars)
    return cases


def read_suite(text: str | bytes, list_keys: tuple[str, ...]) -> Any:
    """A suite's document, read once: its top-level lists under `list_keys` as `CaseList`s, the rest
    as `LineDict`s. A root list comes back as a `CaseList`; an empty file as None; any other root as
    what it is, for the caller to refuse. Malformed YAML anywhere is an EvalFileError at its line.

    Given the file's bytes, libyaml reads them as they are (its line ends and byte order mark as text
    mode reads them): decoding a 50 MB file and libyaml encoding it back were two copies of it and a
    tenth of the time."""
    walker = _Walker(text)
    try:
        with located_yaml_errors(text):
            if not walker.open():
                return None
            event = walker.peek_event()
            if isinstance(event, SequenceStartEvent):
                root: Any = _read_list(walker)
            elif isinstance(event, MappingStartEvent):
                root = _read_header(walker, list_keys)
            else:
                root = unpack(walker.node())
            walker.single(suite=True)
            return root
    finally:
        walker.loader.dispose()


def _read_header(walker: _Walker, list_keys: tuple[str, ...]) -> LineDict:
    """The root mapping, its case lists packed and every other value built."""
    header = LineDict()
    header.line = walker.peek_line()
    header.key_lines = {}
    walker.get_event()
    while type(walker.peek_event()) is not MappingEndEvent:
        at = walker.peek_line()
        key = walker.key(walker.peek_event())
        if key == _MERGE_KEY:
            raise EvalFileError(at, MERGE_KEY_REFUSED, MERGE_KEY_EXPECTED)
        key = unpack(key)
        try:
            hash(key)
        except TypeError:
            raise EvalFileError(at, "mapping key is not a scalar") from None
        if key in header.key_lines:
            raise EvalFileError(at, f"duplicate key {key!r} (first at line {header.key_lines[key]})",
                                "each key once per mapping")
        header.key_lines[key] = at
        if key in list_keys and type(walker.peek_event()) is SequenceStartEvent:
            header[key] = _read_list(walker)
        else:
            header[key] = unpack(walker.node())
    walker.get_event()
    return header


__all__ = ["CaseList", "LineDict", "LineList", "decode_text", "load_yaml_text", "located", "located_yaml_errors",
           "read_suite", "unpack"]
