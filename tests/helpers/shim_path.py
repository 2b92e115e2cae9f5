"""The tests' PATH with a pyenv or asdf shim's interpreter before the shims, where the machine has them.

On a machine whose first `python3` is a version manager's shim (pyenv on the CI image), every judge,
agent and grader the suite starts as `python3 ...` paid the shim's chain of shell scripts, and
every `agentv-gate run` paid it again to resolve the shim (`agentv_gate/transport/shims.py`):
about 80 ms of CPU each, several hundred times. The interpreter the shim runs in a scratch folder
(the global version: no `.python-version` there, which is where the tests' projects live) goes
first on PATH instead, so `python3` is the same interpreter, started directly. The gate's shim
resolution keeps its own tests (`tests/transport/test_fresh_judges.py`, on a pyenv-like tree of
their own); anywhere else, with no shim first on PATH, nothing changes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

_SHIM_MARKS = ('pyenv" exec "$program"', 'pyenv exec "$program"', 'asdf" exec ', "asdf exec ")


def _is_shim(program: Path) -> bool:
    try:
        head = program.read_bytes()[:2048]
    except OSError:
        return False
    return head.startswith(b"#!") and any(mark.encode() in head for mark in _SHIM_MARKS)


def interpreter_first(path: str) -> str:
    """`path` with the folder of the interpreter its first `python3` shim runs put just before the shim's."""
    found = shutil.which("python3", path=path)
    if found is None or not _is_shim(Path(found)):
        return path
    try:
        probe = subprocess.run([found, "-c", "import sys; print(sys.executable)"], cwd=tempfile.gettempdir(),
                               env={**os.environ, "PATH": path}, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return path
    real = Path(probe.stdout.strip())
    if probe.returncode != 0 or not real.is_absolute() or _is_shim(real) or not os.access(real, os.X_OK):
        return path
    entries = path.split(os.pathsep)
    shims = str(Path(found).parent)
    at = next((i for i, entry in enumerate(entries) if entry.rstrip("/") == shims), 0)
    return os.pathsep.join([*entries[:at], str(real.parent), *entries[at:]])
