"""Custom assertion types: `type: word-count` names a script in a `.agentv/assertions/` folder.

The folders are searched from the eval file's folder up to the repository root, nearest first, as
AgentV searches for them. In each, `<type>.py` (run with the user's `python3`, like a code judge) or
an executable file `<type>` is taken. AgentV's own `<type>.ts`/`.js` modules are not run: finding only
one of those is a located error saying so, not an unknown type.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import EvalFileError
from .refs import SearchRoots

CUSTOM_KIND = "custom_assertion"
ASSERTIONS_DIR = Path(".agentv") / "assertions"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def find_custom_assertion(type_name: object, roots: SearchRoots, line: int) -> list[str] | None:
    """The argv that runs assertion `type_name`, or None when no folder has it."""
    name = str(type_name)
    if not _NAME.fullmatch(name):
        return None  # not a file name (no `/`, no leading `.`): it cannot name a script, so it stays an unknown type
    agentv_only: Path | None = None
    for folder in roots.search_dirs:
        base = folder / ASSERTIONS_DIR
        python, executable = base / f"{name}.py", base / name
        if python.is_file():
            return ["python3", str(_inside(python, roots, line, name))]
        if executable.is_file():
            if not os.access(executable, os.X_OK):
                raise EvalFileError(line, f"custom assertion {name!r}: {executable} is not executable",
                                    f"chmod +x {executable}, or name it {name}.py")
            return [str(_inside(executable, roots, line, name))]
        for suffix in (".ts", ".js", ".mjs"):
            if agentv_only is None and (base / f"{name}{suffix}").is_file():
                agentv_only = base / f"{name}{suffix}"
    if agentv_only is not None:
        raise EvalFileError(line, f"custom assertion {name!r} is {agentv_only}, a module agentv-gate does not load",
                            f"{name}.py or an executable {name} beside it, speaking the code-judge protocol")
    return None


def _inside(path: Path, roots: SearchRoots, line: int, name: str) -> Path:
    resolved = path.resolve()
    if not roots.allow_outside_root and not roots.inside_root(resolved):
        raise EvalFileError(line, f"custom assertion {name!r} resolves outside the repository root ({resolved})",
                            f"a script inside {roots.repo_root} (or run with --allow-outside-root)")
    return resolved
