"""The real `agentv-gate` console script of this virtualenv, run as a child process.

Tests of user-visible behaviour go through the command a user types, so the entry point,
exit codes, stdout/stderr, signals and files on disk are the real ones.
"""

from __future__ import annotations

import array
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
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
    (`drop`: prefixes of further variables to leave out, see `cli_env`).

    Forked from the worker's warm CLI (`WarmCli`) when the environment starts an interpreter as
    the warm one was started; otherwise, and with AGENTV_GATE_TEST_FRESH_CLI=1, the console script."""
    full_env = cli_env(env, drop)
    warm = WarmCli.matching(full_env)
    done = warm.run([CLI, *args], cwd, full_env, timeout) if warm is not None else None
    if done is not None:
        return done
    return subprocess.run([CLI, *args], cwd=cwd, env=full_env, capture_output=True, text=True,
                          encoding="utf-8", errors="replace", timeout=timeout, stdin=subprocess.DEVNULL)


_STARTUP_PREFIXES = ("PYTHON", "PYDANTIC", "LC_", "LANG", "TZ", "AGENTV_GATE_SELF_CHECK")
"""What an interpreter or our modules read as they start: a command whose environment differs from
the warm CLI's in one of these is started fresh, as it would not start as the warm one did."""


def _startup_view(env: dict[str, str]) -> dict[str, str]:
    return {key: value for key, value in env.items() if key.startswith(_STARTUP_PREFIXES)}


_WARM_ENV = cli_env()
"""The warm CLI's environment: the workers' own as the session starts, before any test changes it."""


class WarmCli:
    """One interpreter per test worker with the CLI imported (helpers/cli_zygote.py), forking each
    command: hundreds of tests run the CLI, and its start (interpreter and imports, about 0.3 s of
    CPU) was most of the suite's time. The command is still a process of its own, with the
    console script's `entry()`, its own stdio, cwd, environment, exit status and children."""

    _current: WarmCli | None = None
    _lock = threading.Lock()

    def __init__(self, env: dict[str, str]) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.startup = _startup_view(env)
        self._link = ours
        self._proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("cli_zygote.py")),
                                       str(theirs.fileno())], pass_fds=[theirs.fileno()], env=env,
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True)
        theirs.close()

    @classmethod
    def matching(cls, env: dict[str, str]) -> WarmCli | None:
        if env.get("AGENTV_GATE_TEST_FRESH_CLI") == "1" or sys.platform != "linux":
            return None
        with cls._lock:
            if cls._current is None or cls._current._proc.poll() is not None:
                cls._current = WarmCli(_WARM_ENV)
            current = cls._current
        return current if _startup_view(env) == current.startup else None

    def run(self, argv: list[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str] | None:
        """The command's outcome as `subprocess.run` gives it; None if it could not be asked for
        (a request larger than a socket message: the caller starts the console script)."""
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        status_r, status_w = os.pipe()
        stdin = os.open(os.devnull, os.O_RDONLY)
        request = json.dumps({"argv": [os.fspath(arg) for arg in argv], "cwd": str(cwd), "env": env}).encode()
        try:
            with self._lock:
                self._link.sendmsg([request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                                array.array("i", [stdin, out_w, err_w, status_w]))])
        except OSError:
            for fd in (out_r, err_r, status_r):
                os.close(fd)
            return None
        finally:
            for fd in (stdin, out_w, err_w, status_w):
                os.close(fd)
        captured = {out_r: bytearray(), err_r: bytearray(), status_r: bytearray()}
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            for fd in captured:
                selector.register(fd, selectors.EVENT_READ)
            killed = False
            while selector.get_map():
                remaining = deadline - time.monotonic()
                if remaining <= 0 and not killed:  # as subprocess.run: kill it, wait for its exit only
                    killed = True
                    pid = captured[status_r].split(b"\n")[0]
                    if pid:
                        os.kill(int(pid), signal.SIGKILL)
                    for fd in (out_r, err_r):
                        if fd in selector.get_map():
                            selector.unregister(fd)
                            os.close(fd)
                    if status_r not in selector.get_map():
                        break
                for key, _ in selector.select(None if killed else max(remaining, 0)):
                    chunk = os.read(key.fd, 1 << 16)
                    if chunk:
                        captured[key.fd] += chunk
                    else:
                        selector.unregister(key.fd)
                        os.close(key.fd)
        stdout, stderr = (captured[fd].decode("utf-8", "replace") for fd in (out_r, err_r))
        if killed:
            raise subprocess.TimeoutExpired(argv, timeout, output=stdout, stderr=stderr)
        lines = captured[status_r].decode().split()
        if len(lines) != 2:
            raise RuntimeError(f"the warm CLI gave no exit status for {argv}: {lines}")
        return subprocess.CompletedProcess(argv, int(lines[1]), stdout, stderr)


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
