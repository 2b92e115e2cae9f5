"""A pyenv-like tree in a temporary folder: shims, a `pyenv exec` that follows pyenv's version rules,
and `versions/NAME/bin/python3` links to a real interpreter.

What a judge run through it sees is what pyenv gives it: the shim (pyenv's own template) hands the
command to `libexec/pyenv exec`, which picks the version as pyenv does (`PYENV_VERSION`, else the
first `.python-version` from the working folder up, else `$PYENV_ROOT/version`, else the system
Python), puts that version's `bin` first on PATH, exports `PYENV_VERSION`, `PYENV_ROOT` and
`PYENV_DIR`, and `exec`s the interpreter. Each `pyenv exec` appends a line to `calls`, so a test (or
bench/) can count how many times the shim really ran.
"""

from __future__ import annotations

import os
from pathlib import Path

SHIM = """#!/usr/bin/env bash
set -e
[ -n "$PYENV_DEBUG" ] && set -x

program="${{0##*/}}"

export PYENV_ROOT="{root}"
exec "{root}/libexec/pyenv" exec "$program" "$@"
"""
"""pyenv's shim template, as `pyenv rehash` writes it."""

PYENV = r"""#!/usr/bin/env bash
set -e
[ "$1" = exec ] || { echo "fake pyenv: only exec" >&2; exit 1; }
shift
program="$1"
shift
echo "$PWD $program" >> "$PYENV_ROOT/calls"
export PYENV_DIR="${PYENV_DIR:-$PWD}"
version="$PYENV_VERSION"
if [ -z "$version" ]; then
  dir="$PYENV_DIR"
  while :; do
    if [ -f "$dir/.python-version" ]; then
      while read -r word _ || [ -n "$word" ]; do  # the first word that is not a comment, as pyenv reads it
        case "$word" in ''|'#'*) continue ;; esac
        version="$word"
        break
      done < "$dir/.python-version"
      break
    fi
    [ -n "$dir" ] || break
    dir="${dir%/*}"
  done
fi
if [ -z "$version" ] && [ -f "$PYENV_ROOT/version" ]; then
  read -r version _ < "$PYENV_ROOT/version" || true
fi
if [ -z "$version" ] || [ "$version" = system ]; then
  path=":$PATH:"
  path="${path//:$PYENV_ROOT\/shims:/:}"
  path="${path#:}"
  path="${path%:}"
  exec env PATH="$path" "$program" "$@"
fi
bin="$PYENV_ROOT/versions/$version/bin"
[ -x "$bin/$program" ] || { echo "pyenv: version \`$version' is not installed" >&2; exit 127; }
export PYENV_VERSION="$version"
export PATH="$bin:$PATH"
exec "$bin/$program" "$@"
"""


class FakePyenv:
    """`root/shims/python3` (and `python`) on top of `root/versions/NAME/bin/python3` -> `python`."""

    def __init__(self, root: Path, python: str, versions: tuple[str, ...] = ("3.99.1",),
                 global_version: str | None = None) -> None:
        self.root = root
        self.python = python
        self.shims = root / "shims"
        self.calls = root / "calls"
        (root / "libexec").mkdir(parents=True, exist_ok=True)
        self.shims.mkdir(exist_ok=True)
        pyenv = root / "libexec" / "pyenv"
        pyenv.write_text(PYENV)
        pyenv.chmod(0o755)
        for name in ("python3", "python"):
            shim = self.shims / name
            shim.write_text(SHIM.format(root=root))
            shim.chmod(0o755)
        for version in versions:
            self.add_version(version)
        (root / "version").write_text(f"{global_version or versions[0]}\n")
        self.calls.write_text("")

    def add_version(self, name: str) -> Path:
        """`versions/NAME/bin/python3` (and `python`), links to the real interpreter; returns python3's path."""
        bin_dir = self.root / "versions" / name / "bin"
        bin_dir.mkdir(parents=True, exist_ok=True)
        for program in ("python3", "python"):
            link = bin_dir / program
            if not link.exists():
                os.symlink(self.python, link)
        return bin_dir / "python3"

    def runs(self) -> list[str]:
        """One line (`FOLDER PROGRAM`) per time the shim really ran."""
        return self.calls.read_text().splitlines()
