"""A glob in a case list (`tests: [file://cases/*.yaml]`), expanded as AgentV 4.42's case-file loader does.

An entry is a glob when its path holds `*`, `?` or `{`. Its pattern is taken relative to the eval
file's folder only (not the search roots a plain `file://` entry walks), matches files only (fast-glob:
`*` stays within a folder name and skips a leading dot, `**` spans folders), and the matches are read
in sorted order of their absolute paths. A glob matching nothing is a warning and adds no case. Unlike
AgentV, a pattern or a match outside the repository root is refused (a pull request's glob must not
read a runner's files), unless the run allows reads outside the root; a linked folder is not walked.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import EvalFileError
from .globs import compile_glob
from .refs import SearchRoots

GLOB_CHARS = ("*", "?", "{")


class NoMatch(EvalFileError):
    """A glob that matched no file: a warning at its line (AgentV warns and adds no case)."""


def is_glob(path_text: str) -> bool:
    return any(char in path_text for char in GLOB_CHARS)


def _static_base(parts: list[str]) -> int:
    """How many leading parts hold no glob character: the folder the walk starts from."""
    for index, part in enumerate(parts):
        if is_glob(part) or "[" in part:
            return index
    return len(parts)


def glob_case_files(path_text: str, line: int, roots: SearchRoots) -> list[Path]:
    """The files `path_text` matches, sorted as AgentV sorts them. Raises EvalFileError for a glob
    reaching outside the repository, `NoMatch` when nothing matches."""
    pattern = os.path.normpath(os.path.join(os.path.abspath(roots.eval_dir), path_text))
    parts = Path(pattern).parts
    fixed = _static_base(list(parts))
    base = Path(*parts[:fixed]) if fixed else Path(parts[0])
    rest = "/".join(parts[fixed:])
    outside = f"case file glob {path_text!r} reaches outside the repository root"
    expected = f"a pattern inside {roots.repo_root} (or run with --allow-outside-root)"
    if not roots.allow_outside_root and not roots.inside_root(base):
        raise EvalFileError(line, f"{outside} ({base})", expected)
    regex = compile_glob(rest)
    found: list[Path] = []
    for folder, dirs, files in os.walk(base):  # a linked folder is not walked into (no cycle, no escape)
        dirs.sort()
        relative = os.path.relpath(folder, base)
        prefix = "" if relative == "." else relative.replace(os.sep, "/") + "/"
        found.extend(Path(folder) / name for name in files if regex.match(prefix + name))
    for match in found:
        if not roots.allow_outside_root and not roots.inside_root(match):
            raise EvalFileError(line, f"{outside}: {match} resolves to {match.resolve()}", expected)
    if not found:
        raise NoMatch(line, f"case file glob {path_text!r} matched no files (resolved to {pattern}): it adds no case",
                      "a pattern that matches case files")
    return sorted(found, key=str)
