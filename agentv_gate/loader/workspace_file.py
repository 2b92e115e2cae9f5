"""`workspace: ../workspace.yaml`: a workspace written once in its own file and named by several suites.

AgentV (2.19 and 4.42 alike) reads a string `workspace:` as the path of a YAML file, relative to the
eval file's folder, whose top level is the workspace mapping itself (`hooks`, `template`, ...);
`${{ VAR }}` in it is replaced from the environment, and a hook's relative `cwd` is relative to the
workspace file's own folder; a hook without `cwd` runs, as an inline one does, in the eval file's
folder (so its command's relative paths are the eval file's). The gate does the same: the file's
mapping then goes through the same checks as an inline `workspace:`, each problem reported at its
line in the workspace file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import EvalFileError
from .env import interpolate
from .refs import SearchRoots
from .yaml_lines import load_yaml_text, read_text

EXPECTED = "workspace: ../workspace.yaml (a YAML file holding the workspace mapping), or the mapping itself"


def read_workspace_file(ref: str, line: int, roots: SearchRoots) -> tuple[Any, Path]:
    """The mapping a `workspace:` path names, and the file.

    Raises EvalFileError at the `workspace:` line (a missing, unreadable, outside or non-mapping file);
    a problem inside the file names it and its line."""
    if not ref.strip():
        raise EvalFileError(line, "'workspace' is an empty path", EXPECTED)
    path = (roots.eval_dir / Path(ref).expanduser()).resolve()
    if not roots.allow_outside_root and not roots.inside_root(path):
        raise EvalFileError(line, f"workspace file {ref!r} is outside the repository root",
                            "a file inside the repository (or --allow-outside-root)")
    if not path.is_file():
        raise EvalFileError(line, f"Workspace file not found: {ref} (resolved to {path})", EXPECTED)
    try:
        data = interpolate(load_yaml_text(read_text(path)))
    except EvalFileError as exc:
        raise EvalFileError(line, f"{ref}:{exc.line}: {exc.message}", exc.expected) from None
    if not isinstance(data, dict):
        raise EvalFileError(line, f"Invalid workspace file format: {ref} (expected a YAML object)", EXPECTED)
    return data, path


__all__ = ["read_workspace_file"]
