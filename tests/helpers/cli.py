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


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Our environment minus anything that would make the child think it runs in GitHub Actions."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
    env.setdefault("PYTHONIOENCODING", "utf-8")
    env.update(extra or {})
    return env


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`agentv-gate ARGS` in `cwd` to completion; `env` is added to a GitHub-free environment."""
    return subprocess.run([CLI, *args], cwd=cwd, env=cli_env(env), capture_output=True, text=True,
                          encoding="utf-8", errors="replace", timeout=timeout, stdin=subprocess.DEVNULL)


def start_cli(*args: str, cwd: Path, env: dict[str, str] | None = None,
              stdout: Any = subprocess.PIPE, stderr: Any = subprocess.PIPE) -> subprocess.Popen[str]:
    """The CLI in its own session, so a test can signal it (and only it) like a CI runner would."""
    return subprocess.Popen([CLI, *args], cwd=cwd, env=cli_env(env), stdout=stdout, stderr=stderr,
                            stdin=subprocess.DEVNULL, text=True, encoding="utf-8", errors="replace",
                            start_new_session=True)
