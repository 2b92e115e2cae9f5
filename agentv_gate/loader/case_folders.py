"""`tests: ./cases/` (AgentV 4.x): a folder of case folders, each holding one case in `case.yaml`.

As 4.42's `loadCasesFromDirectory` reads it: the folder's immediate sub-folders in name order, each one's
`case.yaml` (else `case.yml`) a single case mapping whose `id` defaults to the sub-folder's name, and whose
`workspace:` defaults to `{template: <sub-folder>/workspace}` when that folder exists (a workspace template,
which agentv-gate refuses as a feature not run yet rather than run the case without it). A sub-folder with
no case file is skipped, as 4.42 skips it. Each case keeps its own file and lines for its problems.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import EvalFileError
from .yaml_lines import LineDict, line_of, load_yaml_text, read_text, yaml_kind

CASE_FILE_NAMES = ("case.yaml", "case.yml")


@dataclass(frozen=True)
class FolderCase:
    """One case read from a case folder: the file it is written in, and its raw mapping."""

    file: Path
    raw: Any


def _case_file(sub: Path) -> Path | None:
    return next((sub / name for name in CASE_FILE_NAMES if (sub / name).is_file()), None)


def has_case_folders(folder: Path) -> bool:
    """Whether any sub-folder of `folder` holds a case file."""
    return any(sub.is_dir() and _case_file(sub) is not None for sub in folder.iterdir())


def folder_cases(folder: Path, line: int) -> Iterator[tuple[int, FolderCase | EvalFileError]]:
    """(line, case) for each case folder under `folder`; a case file that cannot be read stands in as its
    EvalFileError at `line` (the suite's `tests:`), naming the file and its own line."""
    for sub in sorted((p for p in folder.iterdir() if p.is_dir()), key=lambda p: p.name):
        case_file = _case_file(sub)
        if case_file is None:
            continue
        try:
            raw = load_yaml_text(read_text(case_file))
        except EvalFileError as exc:
            yield line, EvalFileError(line, f"case file {case_file}: line {exc.line}: {exc.message}", exc.expected)
            continue
        if not isinstance(raw, dict):
            yield line, EvalFileError(line, f"case file {case_file} holds {yaml_kind(raw)}", "one case as a mapping")
            continue
        case = LineDict(raw)
        case.line, case.key_lines = line_of(raw, 1), getattr(raw, "key_lines", {})
        if case.get("id") is None:
            case["id"] = sub.name
        if not case.get("workspace") and (sub / "workspace").is_dir():
            case["workspace"] = {"template": str(sub / "workspace")}
        yield line_of(raw, 1), FolderCase(case_file, case)
