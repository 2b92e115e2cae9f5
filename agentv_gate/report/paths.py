"""Which path a report shows for a case's eval file: relative to the repository, with forward slashes.

CI tools (GitHub annotations, GitLab and Jenkins test reports) resolve a file against the checkout,
so an absolute path from the machine that ran the eval links nowhere. The loader already stores
each case's `suite` as the eval file's path relative to the repository root, which stays right
for results merged from other machines; the absolute `file` is the fallback.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath, PureWindowsPath

from .rows import ReportedCase


def display_path(file: str, root: Path | None = None) -> str:
    """`file` relative to `root` (default: the working folder) when inside it; as given otherwise."""
    if not file:
        return ""
    path = Path(file)
    base = (root or Path.cwd()).resolve()
    candidate = path if path.is_absolute() else base / path
    try:
        return candidate.resolve().relative_to(base).as_posix()
    except (ValueError, OSError):
        return str(path) if path.is_absolute() else PurePosixPath(path).as_posix()


def _is_relative(path: str) -> bool:
    return bool(path) and not PurePosixPath(path).is_absolute() and not PureWindowsPath(path).is_absolute()


def suite_path(result: ReportedCase, root: Path | None = None) -> str:
    """The repo-relative eval file `result` belongs to: its `suite` when relative, else its `file` made relative."""
    suite = result.suite.replace("\\", "/")
    while suite.startswith("./"):
        suite = suite[2:]
    if _is_relative(suite) and not suite.startswith("../"):
        return suite
    return display_path(result.file, root)


def source_path(result: ReportedCase, root: Path | None = None) -> str:
    """The repo-relative file the case is written in: its eval file (`suite_path`), or the case
    file its suite includes it from (`- file://cases/more.yaml`)."""
    return result.case_file or suite_path(result, root)
