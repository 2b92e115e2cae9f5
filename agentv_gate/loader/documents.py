"""The files a run reads, each read from disk once and each YAML suite parsed once.

A run checks every case before it starts and builds most of them again when it reaches them;
`includes` looks into suites for the case files they load before either. All of them ask one
`Documents`, so a file is read once per run, and a suite edited (or deleted) while the run goes on
changes nothing in it: the run runs the cases it checked.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import EvalFileError
from ..yaml_reader import decode_text, load_yaml_text, read_suite
from .eval_file_keys import CASE_LIST_KEYS
from .yaml_lines import read_bytes


class Documents:
    """Bytes, texts and parsed documents by resolved path; a problem reading one is kept and raised again."""

    def __init__(self) -> None:
        self._bytes: dict[Path, bytes | EvalFileError] = {}
        self._texts: dict[Path, str | EvalFileError] = {}
        self._parsed: dict[tuple[Path, str], Any] = {}

    def data(self, path: Path) -> bytes:
        """The file's bytes, as read once (what a YAML file is parsed from, and `includes` looks into)."""
        found: bytes = _remembered(self._bytes, path.resolve(), lambda: read_bytes(path))
        return found

    def text(self, path: Path) -> str:
        """The file's text (a JSONL suite's rows are read from it each time they are asked for)."""
        found: str = _remembered(self._texts, path.resolve(), lambda: decode_text(self.data(path)))
        return found

    def suite(self, path: Path) -> Any:
        """A YAML suite or case file, as `yaml_reader.read_suite` reads it (its case lists packed)."""
        return self._parse(path, "suite")

    def document(self, path: Path) -> Any:
        """A whole small YAML document (a JSONL suite's sidecar)."""
        return self._parse(path, "document")

    def _parse(self, path: Path, how: str) -> Any:
        key = (path.resolve(), how)
        parsing = key not in self._parsed
        try:
            return _remembered(self._parsed, key, lambda: read_suite(self.data(path), CASE_LIST_KEYS) if how == "suite"
                               else load_yaml_text(self.data(path)))
        finally:
            if parsing and how == "suite" and not isinstance(self._bytes.get(key[0]), EvalFileError):
                self._bytes.pop(key[0], None)  # parsed: the file is needed no more
                self._texts.pop(key[0], None)


def _remembered(cache: dict[Any, Any], key: Any, make: Callable[[], Any]) -> Any:
    """`cache[key]`, made once by `make`; a problem making it is remembered too, and raised each time."""
    if key not in cache:
        try:
            cache[key] = make()
        except EvalFileError as exc:
            cache[key] = exc
    found = cache[key]
    if isinstance(found, EvalFileError):
        raise found
    return found
