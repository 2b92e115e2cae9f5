"""Custom assertion types: `type: word-count` names a script in a `.agentv/assertions/` folder.

The folders are searched from the eval file's folder up to the repository root, nearest first, as
AgentV searches for them. AgentV 2.19 registers every `<type>.ts`, `.js`, `.mts` or `.mjs` module it
finds there (the nearest first) as a code judge run with `bun run <module>`: the gate runs such a
module the same way, with the same payload and reply (AgentV's `defineAssertion` prints a code
judge's `{score, hits, misses, reasoning}`). Where no folder has one, `<type>.py` (run with the
user's `python3`, like a code judge) or an executable file `<type>` is taken, nearest first: a form
of the gate's own, which AgentV does not know, so it never shadows a module AgentV would run.
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
AGENTV_MODULE_SUFFIXES = (".ts", ".js", ".mts", ".mjs")
"""AgentV's discovery patterns, in its order (`*.ts`, `*.js`, `*.mts`, `*.mjs`)."""
AGENTV_MODULE_RUNNER = ("bun", "run")
"""How AgentV runs a discovered module (`command: ['bun', 'run', filePath]`)."""


def find_custom_assertion(type_name: object, roots: SearchRoots, line: int) -> list[str] | None:
    """The argv that runs assertion `type_name`, or None when no folder has it."""
    name = str(type_name)
    if not _NAME.fullmatch(name):
        return None  # not a file name (no `/`, no leading `.`): it cannot name a script, so it stays an unknown type
    for folder in roots.search_dirs:
        for suffix in AGENTV_MODULE_SUFFIXES:
            module = folder / ASSERTIONS_DIR / f"{name}{suffix}"
            if module.is_file():
                return [*AGENTV_MODULE_RUNNER, str(_inside(module, roots, line, name))]
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
    return None


def _inside(path: Path, roots: SearchRoots, line: int, name: str) -> Path:
    resolved = path.resolve()
    if not roots.allow_outside_root and not roots.inside_root(resolved):
        raise EvalFileError(line, f"custom assertion {name!r} resolves outside the repository root ({resolved})",
                            f"a script inside {roots.repo_root} (or run with --allow-outside-root)")
    return resolved
