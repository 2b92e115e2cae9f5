"""The real `agentv-gate` console script of this virtualenv, run as a child process.

Tests of user-visible behaviour go through the command a user types, so the entry point,
exit codes, stdout/stderr, signals and files on disk are the real ones.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

CLI = str(Path(sys.executable).parent / "agentv-gate")
"""The console script installed beside the interpreter running the tests."""


def cli_env(extra: dict[str, str] | None = None, drop: tuple[str, ...] = ()) -> dict[str, str]:
    """Our environment minus anything that would make the child think it runs in GitHub Actions, and
    minus the variables starting with any of `drop` (a test's own variables, which it sets on purpose)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", *drop))}
    env.setdefault("PYTHONIOENCODING", "utf-8")
    env.update(extra or {})
    return env


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None, drop: tuple[str, ...] = (),
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`agentv-gate ARGS` in `cwd` to completion; `env` is added to a GitHub-free environment
    (`drop`: prefixes of further variables to leave out, see `cli_env`)."""
    return subprocess.run([CLI, *args], cwd=cwd, env=cli_env(env, drop), capture_output=True, text=True,
                          encoding="utf-8", errors="replace", timeout=timeout, stdin=subprocess.DEVNULL)


SIGINT_DEFAULT_EXEC = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                       "os.execv(sys.argv[1], sys.argv[1:])")
"""Run argv[1:] with SIGINT at its default disposition, whatever this process inherited.

A process started with SIGINT ignored (a background job of a non-interactive shell, some
`nohup` setups, a CI agent) passes that on to every child, and agentv-gate, like any Unix
program, keeps an ignored SIGINT ignored. A test that sends SIGINT means Ctrl-C in a terminal,
so the child starts from the default a terminal gives it. Done by exec in a tiny interpreter
rather than `preexec_fn`, which is unsafe in a test process running server threads."""


def start_cli(*args: str, cwd: Path, env: dict[str, str] | None = None,
              stdout: Any = subprocess.PIPE, stderr: Any = subprocess.PIPE) -> subprocess.Popen[str]:
    """The CLI in its own session, so a test can signal it (and only it) like a CI runner would.

    SIGINT starts at its default disposition (see `SIGINT_DEFAULT_EXEC`), so signal tests pass
    whether or not the test run itself was started with SIGINT ignored. The exec keeps the pid.
    """
    return subprocess.Popen([sys.executable, "-S", "-c", SIGINT_DEFAULT_EXEC, CLI, *args], cwd=cwd,
                            env=cli_env(env), stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL, text=True,
                            encoding="utf-8", errors="replace", start_new_session=True)
