"""`python3 judge.py` without paying for a Python start on every case.

A code judge is a new process per case (AgentV's protocol), and for a Python judge most of its
cost is the interpreter starting: about 40 ms here, against a few ms of judging. So the first
time a run starts `python3 SCRIPT ...`, a warm interpreter (`zygote.py`, run by that same
`python3` with the same environment) is started once, and each later judge is a fork of it
that runs SCRIPT as `__main__`: same interpreter, argv, cwd, environment, stdio, process group,
exit status and shutdown as a fresh `python3 SCRIPT` (tests/transport/test_forkserver.py compares the two
on everything a script can see). A 200-case suite with a Python judge then takes about a
third of the time.

Only the plain form is taken: a command named python / python3 / python3.N, then an existing
script file, then its arguments; anything else (interpreter options, `-m`, `-c`, other
programs) is started the ordinary way. So is every later judge when the warm interpreter cannot
start or dies (the judges it had forked run on and keep their own exit status: `_Zygote._adopt`),
and all of them with AGENTV_GATE_FORKSERVER=0 in the environment.
"""

from __future__ import annotations

import array
import atexit
import itertools
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO

ZYGOTE_PATH = str(Path(__file__).with_name("zygote.py"))
_PYTHON_NAME = re.compile(r"python(3(\.\d+)?)?")
_READY_SECONDS = 10.0
_START_SECONDS = 10.0


class _Job:
    def __init__(self) -> None:
        self.started = threading.Event()
        self.exited = threading.Event()
        self.pid: int | None = None
        self.error: str | None = None
        self.status: int | None = None


class ForkedProcess:
    """What `subprocess.Popen` offers the runner (pid, pipes, wait, returncode), for a forked judge.

    Its exit is reported by the warm interpreter that forked it (its parent), so waiting is an
    event set the moment that report arrives: exact, with no polling.
    """

    def __init__(self, args: list[str], pid: int, job: _Job, stdin: IO[bytes], stdout: IO[bytes], stderr: IO[bytes]):
        self.args = args
        self.pid = pid
        self.stdin: IO[bytes] | None = stdin
        self.stdout: IO[bytes] | None = stdout
        self.stderr: IO[bytes] | None = stderr
        self._job = job
        self.returncode: int | None = None

    def wait(self, timeout: float | None = None) -> int:
        if not self._job.exited.wait(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        status = self._job.status
        # None: the status was lost (the warm interpreter died just after reaping the judge, before
        # reporting): an error, never a pass, though the judge may not have been killed.
        self.returncode = os.waitstatus_to_exitcode(status) if status is not None else -signal.SIGKILL
        return self.returncode


class _Zygote:
    """One warm interpreter (for one python path and environment) and the thread reading its reports."""

    def __init__(self, python: str, env: dict[str, str]) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._link = ours
        self._ids = itertools.count(1)
        self._jobs: dict[int, _Job] = {}
        self._lock = threading.Lock()
        self.alive = True
        try:
            self._proc = subprocess.Popen([python, ZYGOTE_PATH, str(theirs.fileno())], pass_fds=[theirs.fileno()],
                                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL, env=env, close_fds=True,
                                          start_new_session=True)  # Ctrl-C in a terminal must not reach it
        finally:
            theirs.close()
        self._ready = threading.Event()
        threading.Thread(target=self._read, name="forkserver", daemon=True).start()
        if not self._ready.wait(_READY_SECONDS) or not self.alive:
            self.close()

    def _read(self) -> None:
        while True:
            try:
                data = self._link.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                break
            message = json.loads(data)
            if message.get("ready"):
                self._ready.set()
                continue
            with self._lock:
                job = self._jobs.get(message["id"])
            if job is None:
                continue
            if "status" in message:
                job.status = message["status"]
                with self._lock:
                    self._jobs.pop(message["id"], None)
                job.exited.set()
            else:
                job.pid, job.error = message.get("pid"), message.get("error")
                job.started.set()
        self.alive = False
        self._ready.set()  # an interpreter that died starting (not Python 3, say) is given up on at once
        with self._lock:
            jobs, self._jobs = list(self._jobs.values()), {}
        if jobs:
            self._adopt(jobs)

    def _adopt(self, jobs: list[_Job]) -> None:
        """The warm interpreter is gone with judges in flight. They were not killed with it: once it
        has fully exited they are our children (this process is a child subreaper, see reaper.py),
        so each one's own exit status is read here, whenever it ends, as its new parent."""
        try:
            self._proc.wait(_READY_SECONDS)
        except subprocess.TimeoutExpired:  # its socket closed but it lingers: end it
            self._proc.kill()
            self._proc.wait()
        for job in jobs:
            if job.pid is None:  # never reported started: the caller starts this judge the ordinary way
                job.error = job.error or "the warm interpreter stopped"
                job.started.set()
                job.exited.set()
            else:
                threading.Thread(target=_wait_adopted, args=(job,), name="forkserver-orphan", daemon=True).start()

    def spawn(self, argv: list[str], cwd: str, env: dict[str, str]) -> ForkedProcess | None:
        """The forked judge, or None when this interpreter cannot fork it (the caller starts it itself)."""
        if not self.alive:
            return None
        job = _Job()
        ends = [os.pipe() for _ in range(3)]  # stdin, stdout, stderr: (read, write) each, close-on-exec
        theirs = [ends[0][0], ends[1][1], ends[2][1]]
        ours = [ends[0][1], ends[1][0], ends[2][0]]
        try:
            with self._lock:
                job_id = next(self._ids)
                self._jobs[job_id] = job
                request = json.dumps({"id": job_id, "argv": argv, "cwd": cwd, "env": env}).encode()
                self._link.sendmsg([request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", theirs))])
        except OSError:
            with self._lock:
                self._jobs.pop(job_id, None)
            for fd in theirs + ours:
                os.close(fd)
            return None
        for fd in theirs:
            os.close(fd)
        if not job.started.wait(_START_SECONDS) or job.pid is None:
            for fd in ours:
                os.close(fd)
            return None
        return ForkedProcess(argv, job.pid, job, os.fdopen(ours[0], "wb"), os.fdopen(ours[1], "rb"),
                             os.fdopen(ours[2], "rb"))

    def close(self) -> None:
        self.alive = False
        try:
            self._link.close()  # the zygote reads end-of-file and exits
        except OSError:
            pass
        try:
            self._proc.kill()
            self._proc.wait(1)
        except (OSError, subprocess.TimeoutExpired):
            pass


def _wait_adopted(job: _Job) -> None:
    assert job.pid is not None
    try:
        job.status = os.waitpid(job.pid, 0)[1]
    except ChildProcessError:
        pass  # reaped by the warm interpreter just before it died: the status went with it
    job.exited.set()


FORKSERVER_ENV = "AGENTV_GATE_FORKSERVER"


def forkserver_env_problem(env: Mapping[str, str]) -> str | None:
    """What is wrong with AGENTV_GATE_FORKSERVER: only 0 (off) and 1 (on, the default) mean
    something, and `false` or `off` must not leave the warm interpreter silently on."""
    raw = env.get(FORKSERVER_ENV)
    if raw is None or raw.strip() in ("", "0", "1"):
        return None
    return f"{FORKSERVER_ENV}={raw!r} is not 0 or 1 (0 starts every Python judge afresh; 1, the default, forks it)"


HASH_SEEDS = 4
"""Warm interpreters kept per judge interpreter and environment, each started with a hash seed of its
own, judges going to them in turn: a fresh `python3` draws a new string hash seed each time, one
warm interpreter gives every judge it forks its own (its strings keep the hashes it computed, so a
fork cannot draw another). Four make two judges of a run share a seed one time in four, and never
two in a row, for three more interpreter starts per run (see bench/README.md)."""

_zygotes: dict[tuple[str, frozenset[tuple[str, str]], int], _Zygote] = {}
_turns: dict[tuple[str, frozenset[tuple[str, str]]], itertools.count[int]] = {}
_zygotes_lock = threading.Lock()


def _warm_script(argv: list[str], cwd: str, env: dict[str, str]) -> str | None:
    """The interpreter path when `argv` is `python3 SCRIPT [ARGS]` with SCRIPT an existing file."""
    if os.environ.get(FORKSERVER_ENV, "1").strip() == "0" or len(argv) < 2 or sys.platform != "linux":
        return None
    if not _PYTHON_NAME.fullmatch(os.path.basename(argv[0])) or argv[1].startswith("-"):
        return None
    if not os.path.isfile(os.path.join(cwd, argv[1])):
        return None
    python = shutil.which(argv[0], path=env.get("PATH", os.defpath)) if os.sep not in argv[0] else argv[0]
    return python if python is not None and not _is_script(python) else None


def _is_script(path: str) -> bool:
    """A `#!` wrapper (a pyenv or asdf shim) is not an interpreter to keep warm: it may change the
    environment or pick a different Python per working folder each time it runs."""
    try:
        with open(path, "rb") as handle:
            return handle.read(2) == b"#!"
    except OSError:
        return True


def spawn_warm(argv: list[str], cwd: str, env: dict[str, str],
               call_env: dict[str, str] | None = None) -> ForkedProcess | None:
    """A `python3 SCRIPT` judge forked from a warm interpreter; None to start it the ordinary way.

    The interpreter is picked by `env` (what Python reads when it starts); `call_env` is laid over
    it in the forked judge only, so per-run values (a proxy token) do not start an interpreter each.
    """
    python = _warm_script(argv, cwd, env)
    if python is None:
        return None
    started = (python, frozenset(env.items()))
    with _zygotes_lock:
        turn = next(_turns.setdefault(started, itertools.count()))
        key = (*started, turn % _seeds(env))
        zygote = _zygotes.get(key)
        if zygote is None:
            try:
                zygote = _zygotes[key] = _Zygote(python, _with_own_seed(env))
            except OSError:
                return None
    return zygote.spawn(argv, cwd, {**env, **call_env} if call_env else env)


def _seeds(env: Mapping[str, str]) -> int:
    """How many warm interpreters with seeds of their own: one when the environment sets the seed
    (every fresh judge then hashes alike too), `HASH_SEEDS` when Python draws it."""
    return HASH_SEEDS if env.get("PYTHONHASHSEED", "") in ("", "random") else 1


def _with_own_seed(env: dict[str, str]) -> dict[str, str]:
    """The warm interpreter's environment: the judge's, with a seed drawn here when Python would
    draw one. The judges it forks never see the variable: each gets the judge's own environment."""
    if _seeds(env) == 1:
        return env
    return {**env, "PYTHONHASHSEED": str(secrets.randbelow(4294967295) + 1)}


def warm_pids() -> set[int]:
    """The warm interpreters' pids: children of ours that are not orphans to end."""
    with _zygotes_lock:
        return {zygote._proc.pid for zygote in _zygotes.values() if hasattr(zygote, "_proc")}


@atexit.register
def close_all() -> None:
    with _zygotes_lock:
        zygotes = list(_zygotes.values())
        _zygotes.clear()
    for zygote in zygotes:
        zygote.close()


__all__ = ["ForkedProcess", "close_all", "spawn_warm", "warm_pids"]
