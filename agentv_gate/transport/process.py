"""Run a program: argv (never a shell), text on stdin, stdout/stderr captured, hard timeout.

Shared by code judges, executable prompt templates and the `cli` target (the agent under test).
Each is code written by someone else, so every way it can misbehave must come back as data
rather than an exception or a hang:

* it may never read stdin (BrokenPipe on write is swallowed),
* it may write far more output than fits in memory (capture is capped, the rest is drained),
* it may hang, or fork a grandchild that keeps our pipes open after the judge itself is gone
  (it runs in its own process group, and the whole group is killed),
* a descendant may leave that group (`setsid`): on Linux agentv-gate adopts it once its parent is
  gone (a child subreaper, see reaper.py) and ends it with the run (`end_orphans`),
* it may not exist or not be executable (reported in `spawn_error`).
"""

from __future__ import annotations

import atexit
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..base.defaults import DEFAULT_MAX_RESPONSE_BYTES
from . import reaper, shims

_CHUNK = 64 * 1024
_DRAIN_GRACE_SECONDS = 1.0
"""After the judge exits, how long stray processes may keep its pipes open before being killed."""
_REAP_SECONDS = 5.0
"""After a kill, how long to wait for the pipes to close before giving up on them."""


@dataclass
class ScriptResult:
    argv: list[str]
    exit_code: int | None
    """None when the script never ran or was killed at the timeout."""
    stdout: str
    stderr: str
    timed_out: bool
    duration_ms: int
    spawn_error: str | None = None
    """Why the script could not start (not found, not executable, bad cwd); None if it ran."""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    stdout_bytes: int = 0
    """Total bytes the script wrote to stdout, including any beyond the capture cap."""
    stderr_bytes: int = 0
    timeout_seconds: float | None = None
    """The limit the script ran under, so a timeout message names the configured value."""

    @property
    def ok(self) -> bool:
        return self.spawn_error is None and not self.timed_out and self.exit_code == 0

    def failure(self) -> str | None:
        """One sentence saying why the run is not usable, or None when it exited 0 in time."""
        if self.spawn_error is not None:
            return self.spawn_error
        if self.timed_out:
            limit = self.timeout_seconds if self.timeout_seconds is not None else self.duration_ms / 1000
            return f"timed out after {limit:g}s and was killed"
        if self.exit_code is not None and self.exit_code < 0:
            try:
                name = signal.Signals(-self.exit_code).name
            except ValueError:
                name = f"signal {-self.exit_code}"
            return f"was killed by {name}"
        if self.exit_code != 0:
            return f"exited with code {self.exit_code}"
        return None


class _Sink:
    """What one pipe said: at most `limit` bytes kept, the total counted."""

    def __init__(self, limit: int) -> None:
        self._limit = max(0, limit)
        self._chunks: list[bytes] = []
        self._kept = 0
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self._limit - self._kept
        if room > 0:
            kept = chunk[:room]
            self._chunks.append(kept)
            self._kept += len(kept)

    def text(self) -> str:
        return b"".join(self._chunks).decode("utf-8", errors="replace")

    @property
    def truncated(self) -> bool:
        return self.total > self._kept


_OWN_GROUP: dict[str, Any] = {"process_group": 0} if sys.version_info >= (3, 11) else {"start_new_session": True}
"""A new process group for the script, so `killpg` reaches its grandchildren too. `process_group=0`
(setpgid) measured 2-3 ms cheaper per spawn than `start_new_session` (setsid), see bench/README.md."""


def _exit_fd(pid: int) -> int | None:
    """A pidfd for `pid` (Linux 5.3+): readable exactly when it exits. None elsewhere (macOS), where
    the exit is polled for as `Popen.wait` does (every 0.5 ms, doubling up to 50 ms)."""
    pidfd_open = getattr(os, "pidfd_open", None)
    try:
        return pidfd_open(pid) if pidfd_open is not None else None
    except OSError:
        return None


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


_live_groups: set[int] = set()
_live_lock = threading.Lock()
_starting = threading.Lock()
"""Held from a script's start until it is in `_live_groups`, and by an orphan sweep: a child of
ours the sweep does not know as live is never one just started (a sweep reaping it would turn
its `Popen.wait` into a made-up exit status 0)."""
_refuse_new = False
"""Set once the run is interrupted: scripts still starting are killed at once, none start after."""


def kill_running_scripts() -> int:
    """Kill the process group of every script still running, and refuse to start new ones.

    For an interrupted run (Ctrl-C, SIGTERM from a cancelled CI job): a hanging judge or `cli`
    target, and any grandchild it forked, must not outlive agentv-gate, and the worker threads
    waiting on them must return now rather than at their timeout, so the process can exit.
    Returns how many groups were killed.
    """
    global _refuse_new
    with _live_lock:
        _refuse_new = True
        groups = list(_live_groups)
    for pgid in groups:
        _kill_group(pgid)
    return len(groups)


def end_orphans() -> int:
    """Kill what this run's scripts left running outside their process groups (a daemon in a
    session of its own): the orphans agentv-gate adopted, never a live script.
    Called when a run ends and at exit; returns how many were ended."""
    with _starting:
        with _live_lock:
            live = set(_live_groups)
            _script_groups.intersection_update(live)  # the others' orphans end now: their pids may be reused
        return reaper.end_orphans(live)


_SWEEP_PAUSE_SECONDS = 0.02
"""The longest pause between two sweeps while some child of ours has exited but is not ours to reap
(a script whose runner has yet to read its status): the sweep wakes on every exit, and backs off
from 1 ms up to this while it finds nothing to reap."""
_IDLE_SWEEP_SECONDS = 0.5
"""How often to look again when this process has no child at all (a script starting wakes it sooner)."""
_sweeper_started = False
_script_groups: set[int] = set()
"""The process group of every script started (each leads its own): where its orphans are found."""
_spawned = threading.Event()
"""Set as each script starts: a sweep with no child to wait for waits for this."""


def _sweep_exited_orphans() -> None:
    """Reap exited orphans as they exit, for as long as the process lives (one daemon thread).

    `waitid(..., WNOWAIT)` sleeps until some child has exited and reaps nothing, so a status the
    runner (or `subprocess`) waits for stays there; the sweep then reaps only adopted orphans
    (`reaper.reap_exited`), never a live script. A shell double-forking a
    helper a millisecond hands us one a millisecond, and each is reaped within a sweep or two.
    """
    pause = 0.0
    while True:
        try:
            os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOWAIT)
        except ChildProcessError:  # no child at all: until a script starts (an orphan is the child of one)
            _spawned.wait(_IDLE_SWEEP_SECONDS)
            _spawned.clear()
            continue
        with _starting:  # a script just started is registered live before a sweep can see it exit
            with _live_lock:
                live, groups = set(_live_groups), set(_script_groups)
            reaped = reaper.reap_exited(live, groups)
        pause = 0.0 if reaped else min(max(pause * 2, 0.001), _SWEEP_PAUSE_SECONDS)
        if pause:
            time.sleep(pause)  # the exited child is someone else's to reap: let them, do not spin


def _start_sweeper() -> None:
    global _sweeper_started
    with _live_lock:
        if _sweeper_started:
            return
        _sweeper_started = True
    threading.Thread(target=_sweep_exited_orphans, name="orphan-sweep", daemon=True).start()


# Last line of defence: however the interpreter exits (an unexpected error included), the scripts
# it was supervising on daemon threads die with it instead of running on unsupervised, and then
# (atexit runs the last registered first) the orphans they leave.
atexit.register(end_orphans)
atexit.register(kill_running_scripts)


def allow_new_scripts() -> None:
    """Undo `kill_running_scripts`' refusal, for a new run in the same process (tests, embedding);
    processes started from now on belong to this run (`end_orphans` ends those left behind)."""
    global _refuse_new
    with _live_lock:
        _refuse_new = False
        _script_groups.clear()  # an earlier run's groups: their pids may be reused by now
    reaper.mark_run_start()


_decoded: tuple[dict[bytes, bytes], dict[str, str]] = ({}, {})


def _environment() -> dict[str, str]:
    """`os.environ` as a plain dict. Reading `os.environ` decodes every variable again, at every script a
    run starts (two a case, a target's and a judge's); the decoded copy is kept while the process's
    environment, compared as the bytes the OS holds, stays the same."""
    raw = getattr(os.environ, "_data", None)  # CPython's bytes view; without it, decode every time
    if not isinstance(raw, dict):
        return dict(os.environ)
    global _decoded
    seen, decoded = _decoded
    if raw != seen:
        seen, decoded = dict(raw), dict(os.environ)
        _decoded = seen, decoded
    return decoded


def _spawn_error(argv: list[str], exc: OSError, cwd: Path | None) -> str:
    command = argv[0] if argv else ""
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {command!r}"
    if isinstance(exc, PermissionError):
        return f"permission denied running {command!r} (is it executable?)"
    if getattr(exc, "errno", None) == 8:  # ENOEXEC: a script without a shebang line
        return f"cannot execute {command!r}: not a program and no '#!' line (name an interpreter first)"
    return f"could not start {command!r}: {exc.strerror or exc}"


SDK_PATH = str(Path(__file__).resolve().parents[1] / "sdk_path")
"""The folder put first on a judge's PYTHONPATH. It holds only a stub `agentv_gate` package whose
modules are this installation's own files, so `from agentv_gate.sdk import ...` works in any Python
3.10+ (the SDK is standard library only) without shadowing anything else the judge imports."""


def judge_environment() -> dict[str, str]:
    """What a judge or executable prompt template gets on top of the user's environment.

    The judge runs with the user's own `python3` (the first on the PATH agentv-gate was given), so
    it can import the team's packages; agentv-gate's interpreter is never put in front of it. All
    it adds: the SDK folder first on PYTHONPATH, and UTF-8 output for Python judges whatever the
    CI locale, unless the user set PYTHONIOENCODING.
    """
    existing = os.environ.get("PYTHONPATH")
    env = {"PYTHONPATH": SDK_PATH + (os.pathsep + existing if existing else "")}
    if "PYTHONIOENCODING" not in os.environ:
        env["PYTHONIOENCODING"] = "utf-8"
    return env


def run_judge(argv: list[str], stdin_text: str, timeout_seconds: float, cwd: Path | None = None,
              max_output_bytes: int = DEFAULT_MAX_RESPONSE_BYTES, call_env: dict[str, str] | None = None) -> ScriptResult:
    """`run_script` for a judge: with `judge_environment()`, a fresh process as `python3 judge.py` by hand,
    its payload on a socket as AgentV (run by node, as `npm install -g agentv` installs it) hands it."""
    return run_script(argv, stdin_text, timeout_seconds, cwd=cwd, env=judge_environment(),
                      max_output_bytes=max_output_bytes, call_env=call_env, stdin_socket=True)


def run_script(
    argv: list[str],
    stdin_text: str,
    timeout_seconds: float,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    max_output_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    call_env: dict[str, str] | None = None,
    teardown: bool = False,
    stdin_socket: bool = False,
    unset: tuple[str, ...] = (),
) -> ScriptResult:
    """Run `argv` with `stdin_text` on stdin and return what happened; never raises for the script.

    `env` holds extra variables laid over the environment exactly as agentv-gate received it
    (PATH and all): the program runs as it would from the user's shell, always a fresh process.
    A `python3 ...` whose `python3` is a pyenv or asdf shim starts the interpreter the shim would
    run, with the environment it would give it, resolved once per folder and environment (shims.py).
    `call_env` holds variables for this one run only (a code judge's proxy URL and token): the
    program sees them like `env`, but they do not choose the interpreter (no shim reads them), so
    judges that differ only in them share one resolution. `max_output_bytes` caps each of stdout and stderr;
    the excess is read and discarded so the script never blocks on a full pipe, and `*_truncated`
    says it happened. `teardown` (a workspace's `after_*` hook) starts even after the run was
    interrupted: cleaning up is what an interrupted run still owes. `stdin_socket`: stdin is one end of a
    Unix socket pair, not a pipe, as node's `child_process.spawn` (libuv) gives AgentV's graders theirs: a
    script reading its stdin stream reads the same bytes, one opening `/dev/stdin` by name fails as it
    fails under AgentV (ENXIO), so such a grader cannot pass here and fail there. `unset`: variables the
    program must not see (a Claude CLI refuses to start inside another Claude session's markers).
    """
    argv = [str(a) for a in argv]
    started = time.monotonic()

    def elapsed_ms() -> int:
        return int((time.monotonic() - started) * 1000)

    def failed_start(message: str) -> ScriptResult:
        return ScriptResult(argv=argv, exit_code=None, stdout="", stderr="", timed_out=False,
                            duration_ms=elapsed_ms(), spawn_error=message)

    if not argv or not argv[0]:
        return failed_start("empty command: nothing to run")
    if cwd is not None and not Path(cwd).is_dir():
        return failed_start(f"working folder does not exist: {cwd}")
    full_env = {key: value for key, value in {**_environment(), **(env or {})}.items() if key not in unset}
    if _refuse_new and not teardown:
        return failed_start("not started: the run was interrupted")
    if reaper.become_subreaper():  # before any start: orphans come to us
        _start_sweeper()
    command = argv
    resolved = shims.resolve(argv, os.path.abspath(cwd) if cwd is not None else os.getcwd(), full_env)
    if resolved is not None:
        command, full_env = resolved.command(argv), resolved.environment(full_env)
    full_env.update(call_env or {})
    ours, theirs = socket.socketpair() if stdin_socket and hasattr(socket, "AF_UNIX") else (None, None)
    with _starting:  # started and registered as live before an orphan sweep can see it
        try:
            proc = subprocess.Popen(
                command,
                stdin=theirs.fileno() if theirs is not None else subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=str(cwd) if cwd is not None else None,
                env=full_env,
                close_fds=True,
                **_OWN_GROUP,
            )
        except OSError as exc:
            if ours is not None:
                ours.close()
            return failed_start(_spawn_error(argv, exc, cwd))
        finally:
            if theirs is not None:  # the script's end is the script's alone
                theirs.close()
        if ours is not None:  # written and closed like a pipe's end: its close is the script's EOF
            proc.stdin = open(ours.detach(), "wb", buffering=0)
        with _live_lock:
            _live_groups.add(proc.pid)
            _script_groups.add(proc.pid)
            refused = _refuse_new
        _spawned.set()
    if refused and not teardown:  # interrupted between the check above and the spawn
        _kill_group(proc.pid)
    try:
        return _supervise(proc, argv, stdin_text, timeout_seconds, max_output_bytes, started)
    finally:
        with _live_lock:
            _live_groups.discard(proc.pid)


def _supervise(proc: subprocess.Popen[bytes], argv: list[str], stdin_text: str, timeout_seconds: float,
               max_output_bytes: int, started: float) -> ScriptResult:
    """Feed, capture and wait for a started script, all from this thread; kill its group at the timeout
    or if it lingers.

    One `poll` loop over stdin (written without blocking, so a script that never reads it cannot hold
    us), stdout, stderr and the script's exit (a pidfd), rather than a thread per pipe: three thread
    starts a script were most of the gate's own cost of a judge.
    """
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    out, err = _Sink(max_output_bytes), _Sink(max_output_bytes)
    sinks = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    data = memoryview(stdin_text.encode("utf-8"))
    stdin_fd = proc.stdin.fileno()
    poller = select.poll()
    for fd in sinks:
        poller.register(fd, select.POLLIN)
    if data:
        os.set_blocking(stdin_fd, False)
        poller.register(stdin_fd, select.POLLOUT)
    else:
        _close(proc.stdin)
    exit_fd = _exit_fd(proc.pid)
    if exit_fd is not None:
        poller.register(exit_fd, select.POLLIN)
    open_pipes = set(sinks)
    deadline = started + max(0.0, timeout_seconds)
    timed_out = exited = killed = False
    duration_ms = 0
    until = deadline  # the script's deadline, then the grace for stray holders of its pipes, then the reap
    pause = 0.0005  # the polling wait's first look, where there is no pidfd
    try:
        while open_pipes or not exited:
            now = time.monotonic()
            if not exited and (proc.poll() is not None if exit_fd is None else False):
                exited, duration_ms = True, int((now - started) * 1000)
                until = _after_exit(started, timeout_seconds, now)
            if exited and not open_pipes:
                break
            if now >= until:
                if not exited:  # the timeout: the whole group goes, and the pipes get a while to close
                    timed_out, exited, duration_ms = True, True, int((now - started) * 1000)
                    _kill_group(proc.pid)
                    proc.wait()
                    until, killed = now + _REAP_SECONDS, True
                    continue
                if not killed:  # exited, but something in its group still holds the pipes: it goes too
                    _kill_group(proc.pid)
                    until, killed = now + _REAP_SECONDS, True
                    continue
                break  # a holder outside the group (setsid) keeps them: give up on them
            wait = until - now
            if exit_fd is None and not exited:
                wait, pause = min(wait, pause), min(pause * 2, 0.05)
            for fd, events in poller.poll(max(0.0, wait) * 1000):
                if fd == exit_fd:
                    poller.unregister(fd)
                    proc.wait()  # it has exited: this only reaps it
                    exited, duration_ms = True, int((time.monotonic() - started) * 1000)
                    until = _after_exit(started, timeout_seconds, time.monotonic())
                elif fd == stdin_fd:
                    data = _write_some(fd, data, events)
                    if not data:
                        poller.unregister(fd)
                        _close(proc.stdin)
                else:
                    chunk = _read_some(fd)
                    if chunk:
                        sinks[fd].add(chunk)
                    else:
                        poller.unregister(fd)
                        open_pipes.discard(fd)
    finally:
        if exit_fd is not None:
            os.close(exit_fd)
    # Whatever is left of the group (a daemon the script detached from its pipes, a grandchild
    # still holding them) must not outlive the script: the gate leaves no process behind.
    _kill_group(proc.pid)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        _close(stream)
    return ScriptResult(
        argv=argv,
        exit_code=None if timed_out else proc.returncode,
        stdout=out.text(),
        stderr=err.text(),
        timed_out=timed_out,
        duration_ms=duration_ms,
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
        stdout_bytes=out.total,
        stderr_bytes=err.total,
        timeout_seconds=timeout_seconds,
    )


def _after_exit(started: float, timeout_seconds: float, now: float) -> float:
    """How long after the script's exit a grandchild in its group may keep its pipes open: the grace,
    within what is left of the timeout (at least 0.1 s)."""
    return now + min(_DRAIN_GRACE_SECONDS, max(timeout_seconds - (now - started), 0.1))


def _write_some(fd: int, data: memoryview, events: int) -> memoryview:
    """Write what the pipe takes now; what is left (empty once all is written, or when the script
    closed its stdin or died: its exit status tells the story)."""
    if events & (select.POLLERR | select.POLLHUP) and not events & select.POLLOUT:
        return data[:0]
    try:
        return data[os.write(fd, data[:_CHUNK]):]
    except BlockingIOError:
        return data
    except OSError:  # BrokenPipe: the script does not read stdin
        return data[:0]


def _read_some(fd: int) -> bytes:
    try:
        return os.read(fd, _CHUNK)
    except OSError:
        return b""


def _close(stream: IO[bytes]) -> None:
    try:
        stream.close()
    except (OSError, ValueError):
        pass  # a pipe whose reader is gone: flushing nothing more into it is fine


class LineSession:
    """A program spoken to a line at a time (an agent speaking JSON-RPC on its stdio, as Copilot CLI's ACP): in a
    process group of its own, registered with the running scripts (an interrupted run kills it), stdout read as
    lines (each at most `max_line_bytes`), stderr kept up to the cap. `close` kills the group."""

    def __init__(self, proc: subprocess.Popen[bytes], argv: list[str], max_line_bytes: int) -> None:
        self.proc = proc
        self.argv = argv
        self._max_line = max_line_bytes
        self._buffer = b""
        self._stderr = _Sink(max_line_bytes)
        self._eof = False
        assert proc.stdout is not None and proc.stderr is not None
        self._poller = select.poll()
        self._poller.register(proc.stdout.fileno(), select.POLLIN)
        self._poller.register(proc.stderr.fileno(), select.POLLIN)
        self._open = {proc.stdout.fileno(), proc.stderr.fileno()}

    def send(self, line: str) -> bool:
        """Write one line (a newline added); False when the program no longer reads its stdin."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(line.encode("utf-8") + b"\n")
            self.proc.stdin.flush()
            return True
        except (OSError, ValueError):
            return False

    def read_line(self, deadline: float) -> str | None:
        """The next line of stdout, without its newline; None at end of output. Raises TimeoutError at
        `deadline` (time.monotonic()) and ValueError for a line longer than the cap."""
        assert self.proc.stdout is not None and self.proc.stderr is not None
        out_fd = self.proc.stdout.fileno()
        while True:
            cut = self._buffer.find(b"\n")
            if cut >= 0:
                line, self._buffer = self._buffer[:cut], self._buffer[cut + 1:]
                return line.decode("utf-8", errors="replace").rstrip("\r")
            if len(self._buffer) > self._max_line:
                raise ValueError(f"a line of output longer than {self._max_line} bytes")
            if self._eof:
                rest, self._buffer = self._buffer, b""
                return rest.decode("utf-8", errors="replace") if rest else None
            wait = deadline - time.monotonic()
            if wait <= 0:
                raise TimeoutError
            for fd, _events in self._poller.poll(wait * 1000):
                chunk = _read_some(fd)
                if fd == out_fd:
                    if chunk:
                        self._buffer += chunk
                    else:
                        self._eof = True
                elif chunk:
                    self._stderr.add(chunk)
                if not chunk:
                    self._poller.unregister(fd)
                    self._open.discard(fd)

    def stderr(self) -> str:
        """What the program wrote on stderr so far (up to the cap), waiting a moment for what it still writes."""
        assert self.proc.stderr is not None
        err_fd = self.proc.stderr.fileno()
        until = time.monotonic() + 0.2
        while err_fd in self._open and time.monotonic() < until:
            events = self._poller.poll(50)
            if not events:
                break
            for fd, _events in events:
                chunk = _read_some(fd)
                if fd == err_fd and chunk:
                    self._stderr.add(chunk)
                elif chunk:
                    self._buffer += chunk
                else:
                    self._poller.unregister(fd)
                    self._open.discard(fd)
        return self._stderr.text()

    def close(self) -> None:
        _kill_group(self.proc.pid)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                _close(stream)
        try:
            self.proc.wait(timeout=_REAP_SECONDS)
        except subprocess.TimeoutExpired:
            pass
        with _live_lock:
            _live_groups.discard(self.proc.pid)


def start_line_session(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None,
                       max_line_bytes: int = DEFAULT_MAX_RESPONSE_BYTES) -> LineSession | str:
    """`argv` started for a conversation of lines (see `LineSession`), with `env` laid over the environment as
    for `run_script`; or why it could not start (not found, not executable, no such folder, interrupted)."""
    argv = [str(a) for a in argv]
    if not argv or not argv[0]:
        return "empty command: nothing to run"
    if cwd is not None and not Path(cwd).is_dir():
        return f"working folder does not exist: {cwd}"
    if _refuse_new:
        return "not started: the run was interrupted"
    if reaper.become_subreaper():
        _start_sweeper()
    with _starting:
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    cwd=str(cwd) if cwd is not None else None, env={**os.environ, **(env or {})},
                                    close_fds=True, **_OWN_GROUP)
        except OSError as exc:
            return _spawn_error(argv, exc, cwd)
        with _live_lock:
            _live_groups.add(proc.pid)
            _script_groups.add(proc.pid)
            refused = _refuse_new
        _spawned.set()
    session = LineSession(proc, argv, max_line_bytes)
    if refused:
        session.close()
        return "not started: the run was interrupted"
    return session
