"""An interpreter shim (pyenv, asdf) first on PATH, resolved once to the interpreter it runs.

A judge written `python3 judge.py` runs the first `python3` on the user's PATH. Where that is a
pyenv or asdf shim, each start costs a chain of shell scripts (about 100 ms of CPU under pyenv)
before the interpreter even starts, on every case. What the shim ends in is decided by its
version rules alone: the working folder (pyenv: `PYENV_VERSION`, else the first `.python-version`
from the folder up, else `$PYENV_ROOT/version`; asdf: `ASDF_PYTHON_VERSION`, else `.tool-versions`
from the folder up and in `$HOME`, or a legacy `.python-version`) and the environment. So the shim
is run once per (shim, working folder, environment, version files as they are) with a probe that
reports the interpreter it was handed to (its `argv[0]` and executable) and the environment it got
(what the kernel passed, before Python changes anything); later starts `exec` that interpreter
with that environment directly: the same program, argv, environment and folder as through the
shim, minus the scripts in between.

Whenever that is not certain, the shim runs as the user would run it: a `#!` wrapper that is not
pyenv's or asdf's shim, a command with interpreter options (`-m pip` picks another program under
pyenv), a probe that fails or names no interpreter, a platform without `/proc` (where the
environment a process was started with cannot be read back exactly).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass

_PYTHON_NAME = re.compile(r"python(\d+(\.\d+)*)?")
_SHIM_MAX_BYTES = 8192
_PROBE_TIMEOUT_SECONDS = 30.0
_PROBE = (
    "import json, os, sys\n"
    "argv0 = open('/proc/self/cmdline', 'rb').read().split(b'\\0')[0]\n"
    "env = open('/proc/self/environ', 'rb').read().split(b'\\0')\n"
    "print(json.dumps({'executable': sys.executable, 'argv0': os.fsdecode(argv0),\n"
    "                  'env': [os.fsdecode(item) for item in env if b'=' in item]}))\n"
)
"""Run by the shim's interpreter: what it was started as, and the environment block the kernel gave
it (`os.environ` would also hold what Python sets for itself, such as a coerced `LC_CTYPE`)."""


@dataclass(frozen=True)
class Resolved:
    """What the shim runs: the interpreter, and the variables it sets (or drops) on the way."""

    interpreter: str
    set_vars: tuple[tuple[str, str], ...]
    unset_vars: tuple[str, ...]

    def command(self, argv: list[str]) -> list[str]:
        return [self.interpreter, *argv[1:]]

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        out = {key: value for key, value in env.items() if key not in self.unset_vars}
        out.update(self.set_vars)
        return out


_cache: dict[tuple[object, ...], Resolved | None] = {}
_cache_lock = threading.Lock()
_key_locks: dict[tuple[object, ...], threading.Lock] = {}


def resolve(argv: list[str], cwd: str, env: Mapping[str, str]) -> Resolved | None:
    """The interpreter a shim at `argv[0]` would run for `argv` in `cwd` with `env`; None: run it as it is.

    `env` is what chooses (the judge's environment without per-call values such as a proxy token)."""
    if sys.platform != "linux" or len(argv) < 2 or not _PYTHON_NAME.fullmatch(os.path.basename(argv[0])):
        return None
    if any(arg == "-m" or arg.startswith("-m") for arg in argv[1:]) or argv[1].startswith("-"):
        return None
    shim = _found(argv[0], cwd, env)
    kind = _shim_kind(shim) if shim is not None else None
    if shim is None or kind is None:
        return None
    try:
        shim_stat = os.stat(shim)
    except OSError:
        return None
    key = (shim, shim_stat.st_mtime_ns, shim_stat.st_ino, cwd, frozenset(env.items()),
           _version_files(kind, shim, cwd, env))
    with _cache_lock:
        if key in _cache:
            return _cache[key]
        lock = _key_locks.setdefault(key, threading.Lock())
    with lock:  # workers starting together wait for one probe rather than each running the shim
        with _cache_lock:
            if key in _cache:
                return _cache[key]
        resolved = _probe(shim, cwd, env)
        with _cache_lock:
            _cache[key] = resolved
            _key_locks.pop(key, None)
        return resolved


def _found(command: str, cwd: str, env: Mapping[str, str]) -> str | None:
    """The file `command` names, looked up as exec does (PATH from `env`, relative entries from `cwd`)."""
    if os.sep in command:
        return os.path.normpath(os.path.join(cwd, command))
    for folder in env.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(cwd, folder or ".", command)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.normpath(path)
    return None


_kinds: dict[tuple[str, int, int], str | None] = {}


def _shim_kind(path: str) -> str | None:
    """"pyenv" or "asdf" when `path` is that tool's shim (a small `#!` script handing its name to
    `pyenv exec` / `asdf exec`); None for a real interpreter or any other wrapper."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    key = (path, stat.st_mtime_ns, stat.st_ino)
    if key in _kinds:
        return _kinds[key]
    kind = None
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SHIM_MAX_BYTES + 1)
    except OSError:
        head = b""
    if head.startswith(b"#!") and len(head) <= _SHIM_MAX_BYTES:
        text = head.decode("utf-8", "replace")
        if re.search(r'pyenv"? exec "\$program" "\$@"', text):
            kind = "pyenv"
        elif re.search(r'asdf"? exec "[^"]+" "\$@"', text):
            kind = "asdf"
    _kinds[key] = kind
    return kind


def _version_files(kind: str, shim: str, cwd: str, env: Mapping[str, str]) -> tuple[object, ...]:
    """Where the shim's version rules look, as they are now: so a resolution holds only while the
    file that decided it (or the one that would now decide instead) is unchanged."""
    names = [".python-version"] if kind == "pyenv" else [env.get("ASDF_DEFAULT_TOOL_VERSIONS_FILENAME", ".tool-versions"),
                                                         ".python-version"]
    start = env.get("PYENV_DIR") or cwd if kind == "pyenv" else cwd
    seen: list[object] = []
    folder = os.path.abspath(start)
    while True:
        for name in names:
            seen.append(_stamp(os.path.join(folder, name)))
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    if kind == "pyenv":
        root = _pyenv_root(shim) or env.get("PYENV_ROOT") or os.path.dirname(os.path.dirname(shim))
        seen += [_stamp(os.path.join(root, "version")), _stamp(os.path.join(root, "versions"))]
    else:
        home = env.get("HOME", "")
        seen += [_stamp(os.path.join(home, names[0])), _stamp(os.path.join(home, ".asdfrc"))]
    return tuple(seen)


def _pyenv_root(shim: str) -> str | None:
    """The `PYENV_ROOT` a pyenv shim exports (its template writes it in), which wins over the environment's."""
    try:
        with open(shim, encoding="utf-8", errors="replace") as handle:
            found = re.search(r'^export PYENV_ROOT="([^"$`\\]+)"$', handle.read(_SHIM_MAX_BYTES), re.M)
    except OSError:
        return None
    return found.group(1) if found else None


def _stamp(path: str) -> object:
    """A version file's text (a few bytes; a time stamp would miss a rewrite within the same clock
    tick), or a versions folder's names; None where there is nothing."""
    try:
        if os.path.isdir(path):
            return tuple(sorted(os.listdir(path)))
        with open(path, "rb") as handle:
            return handle.read(_SHIM_MAX_BYTES)
    except OSError:
        return None


def _probe(shim: str, cwd: str, env: Mapping[str, str]) -> Resolved | None:
    """Run the shim once with the probe; None when what it reports is not a plain interpreter."""
    try:
        done = subprocess.run([shim, "-c", _PROBE], cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=_PROBE_TIMEOUT_SECONDS, check=False)
        reply = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    if not isinstance(reply, dict):
        return None
    argv0, executable, got = reply.get("argv0"), reply.get("executable"), reply.get("env")
    if not isinstance(argv0, str) or not isinstance(executable, str) or not isinstance(got, list):
        return None
    if not os.path.isabs(argv0) or _shim_kind(argv0) is not None or not _is_interpreter(argv0, executable):
        return None
    received = dict(item.split("=", 1) for item in got if isinstance(item, str) and "=" in item)
    set_vars = tuple((key, value) for key, value in received.items() if env.get(key) != value)
    unset_vars = tuple(key for key in env if key not in received)
    return Resolved(argv0, set_vars, unset_vars)


def _is_interpreter(argv0: str, executable: str) -> bool:
    """`argv0` is the interpreter that ran the probe: an executable file (not a script), the same file."""
    try:
        with open(argv0, "rb") as handle:
            if handle.read(2) == b"#!":
                return False
        return os.access(argv0, os.X_OK) and os.path.samefile(argv0, executable)
    except OSError:
        return False


def forget() -> None:
    """Drop every resolution (tests; a long-lived embedding that changed its interpreters)."""
    with _cache_lock:
        _cache.clear()
        _kinds.clear()


__all__ = ["Resolved", "forget", "resolve"]
