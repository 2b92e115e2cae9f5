"""Case files are part of the suite that loads them, never suites of their own.

A suite may load cases from other files: `- file://cases/more.yaml` in its `tests:` list, or
`tests: ./cases.yaml` for the whole list. Such a file often sits where discovery looks for suites
(inside `evals/`, or named `*.eval.yaml`); run as a suite too, its cases ran twice, the second time
without the suite's assertions and defaults, so a case the suite fails could PASS. So:

* a file that another suite of the run loads is dropped from the run's suites (its cases run once,
  with the suite that loads them);
* a file named on the command line (as a pre-commit hook names the files a commit touches) that no
  suite of the run loads, but suites elsewhere in the repository do, stands for those suites, as a
  JSONL suite's YAML sidecar stands for its suite.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import EvalFileError
from .discover import discover_eval_files
from .documents import Documents
from .env import interpolate
from .refs import SearchRoots, find_repo_root
from .suite import FILE_PREFIX, open_entries
from .yaml_lines import key_line


def included_files(file: Path, repo_root: Path | None = None, allow_outside_root: bool = False,
                   documents: Documents | None = None) -> set[Path]:
    """The case files (resolved) that the suite in `file` loads. A reference that does not resolve,
    or a file that does not parse, adds nothing here: reading the suite reports it where it is written.
    The suite is read (and parsed, when it may name a case file) through `documents`, once per run."""
    if file.suffix == ".jsonl":
        return set()  # a JSONL line is a case, never a reference
    documents = documents or Documents()
    try:
        data = documents.data(file)
    except EvalFileError:
        return set()
    names_prefix = FILE_PREFIX.encode() in data
    if not names_prefix and not _may_name_a_tests_file(data):
        return set()  # the common case: no case file, and no need to parse the suite here
    root = repo_root or find_repo_root(file.parent)
    roots = SearchRoots(eval_dir=file.resolve().parent, repo_root=root.resolve(), allow_outside_root=allow_outside_root)
    refs: list[tuple[str, int]] = []
    try:
        header = documents.suite(file)
        if isinstance(header, dict) and isinstance(header.get("tests"), str):
            refs.append((interpolate(header["tests"]).removeprefix(FILE_PREFIX), key_line(header, "tests")))
        if names_prefix:
            for line, raw in open_entries(header):  # their ${{ VAR }}s replaced, as the suite reads them
                if isinstance(raw, str) and raw.startswith(FILE_PREFIX) and raw[len(FILE_PREFIX):].strip():
                    refs.append((raw[len(FILE_PREFIX):].strip(), line))
    except EvalFileError:
        pass  # reported, located, when the suite is read
    found: set[Path] = set()
    for ref, line in refs:
        try:
            found.add(roots.resolve(ref, line, "case file"))
        except EvalFileError:
            continue
    return found


_TESTS_KEY = re.compile(rb"""^["']?tests["']?[ \t]*:(.*)$""", re.MULTILINE)


def _may_name_a_tests_file(data: bytes) -> bool:
    """False only when the top-level `tests:` is surely a list (`- ...` or `[...]`), so that most
    suites are not parsed here (the plan parses them, once); anything else is left to the YAML parser.
    Read from the file's bytes: a line end or a space this misses leaves the suite to the parser."""
    if b"tests" not in data:
        return False
    match = _TESTS_KEY.search(data)
    if match is None:
        return True
    rest = match.group(1).strip()
    if rest.startswith(b"#"):
        rest = b""
    if rest:
        return not rest.startswith(b"[")
    for line in _NEXT_LINES.finditer(data, match.end()):  # line by line: never a copy of the rest of the file
        stripped = line.group().strip()
        if stripped and not stripped.startswith(b"#"):
            return not stripped.startswith(b"- ") and stripped != b"-"
    return True


_NEXT_LINES = re.compile(rb"(?:[^\n\r\v\f\x1c\x1d\x1e\xc2\xe2]|\xc2(?!\x85)|\xe2(?!\x80[\xa8\xa9]))*")
"""A line as `str.splitlines` ends it, in UTF-8 bytes (NEL is C2 85; LS and PS are E2 80 A8 and A9)."""


def suites_only(files: list[Path], named: set[Path], repo_root: Path | None = None,
                allow_outside_root: bool = False, documents: Documents | None = None) -> list[Path]:
    """`files` without the case files a suite among them loads; a file in `named` (given as a path,
    not found in a folder) that none of them loads but suites elsewhere in its repository do is
    replaced by those suites. Files are read through `documents` (the run's)."""
    documents = documents or Documents()
    found: dict[Path, set[Path]] = {}  # each suite looked into once, whichever loop asks first

    def includes(file: Path) -> set[Path]:
        key = file.resolve()
        if key not in found:
            found[key] = included_files(file, repo_root, allow_outside_root, documents)
        return found[key]

    loads = {file.resolve(): includes(file) for file in files}
    loaded = {case_file for suite, case_files in loads.items() for case_file in case_files if case_file != suite}
    repositories: dict[Path, dict[Path, set[Path]]] = {}  # each repository scanned once, when needed
    kept: list[Path] = []
    for file in files:
        resolved = file.resolve()
        if resolved in loaded:
            continue
        if file not in named:
            kept.append(file)
            continue
        root = (repo_root or find_repo_root(file.parent)).resolve()
        if root not in repositories:
            suites, _ = discover_eval_files([root])
            repositories[root] = {suite: includes(suite) for suite in suites}
        loading = [_shown(suite) for suite, case_files in repositories[root].items()
                   if resolved in case_files and suite.resolve() != resolved]
        kept.extend(loading or [file])
    return list({file.resolve(): file for file in kept}.values())


def _shown(path: Path) -> Path:
    """`path` relative to the working folder when inside it, as paths given on the command line are."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


__all__ = ["included_files", "suites_only"]
