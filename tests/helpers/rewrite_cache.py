"""The test modules' assertion rewriting, done once per run instead of once per xdist worker.

pytest rewrites every test module's `assert`s as it imports it (about 4.5 s of CPU for this suite's
~300 modules) and caches the result in `__pycache__/*-pytest-*.pyc`, but only where it may write
bytecode: with PYTHONDONTWRITEBYTECODE set (some CI images, this machine) each of the four workers
rewrote every module again, at the same moment, on two cores. The controller process therefore
writes that cache before it starts the workers, which read it as pytest always does (the pyc holds
the source's hash, so an edited file is rewritten afresh, and each pyc is replaced atomically).
The rewritten code is pytest's own (`_pytest.assertion.rewrite`), so the tests assert exactly what
they did; a pytest without these internals simply leaves the workers to rewrite, as before.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]


def _modules(config: pytest.Config) -> list[Path]:
    """The files pytest rewrites when it imports them: conftest.py and those matching `python_files`."""
    patterns = config.getini("python_files")
    return sorted(path for path in TESTS.rglob("*.py") if "__pycache__" not in path.parts
                  and (path.name == "conftest.py" or any(fnmatch.fnmatch(path.name, p) for p in patterns)))


def _rewrite(config: pytest.Config, paths: list[Path]) -> None:
    from _pytest.assertion import rewrite

    state = config.stash[rewrite.assertstate_key]
    for path in paths:
        pyc = rewrite.get_cache_dir(path) / (path.name[:-3] + rewrite.PYC_TAIL)
        if rewrite._read_pyc(path, pyc, state.trace) is not None:
            continue  # up to date from an earlier run
        if not rewrite.try_makedirs(pyc.parent):
            return  # a read-only checkout: the workers rewrite, as before
        try:
            source_hash, code = rewrite._rewrite_test(path, config)
        except (OSError, SyntaxError, ValueError):
            continue  # left to the worker that imports it, which reports it as pytest always does
        rewrite._write_pyc(state, code, source_hash, pyc)


def prewrite_for_workers(config: pytest.Config) -> None:
    """In an xdist controller that rewrites asserts: fill the cache, split over the machine's cores."""
    if getattr(config, "workerinput", None) is not None or not getattr(config.option, "numprocesses", None):
        return
    if config.getoption("assertmode") != "rewrite":
        return
    try:
        from _pytest.assertion import rewrite
        _ = (rewrite.assertstate_key, rewrite.get_cache_dir, rewrite.PYC_TAIL, rewrite._read_pyc,
             rewrite.try_makedirs, rewrite._rewrite_test, rewrite._write_pyc)
    except (ImportError, AttributeError):
        return  # another pytest: its workers rewrite for themselves
    paths = _modules(config)
    shares = max(1, min(os.cpu_count() or 1, 4))
    children = []
    for share in range(1, shares):
        pid = os.fork()
        if pid == 0:  # a helper process for one share; it leaves by _exit, never through pytest
            try:
                _rewrite(config, paths[share::shares])
            finally:
                os._exit(0)  # whatever is left unwritten, the workers rewrite
        children.append(pid)
    try:
        _rewrite(config, paths[0::shares])
    finally:
        for pid in children:
            os.waitpid(pid, 0)
