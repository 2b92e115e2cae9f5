"""A warm Python interpreter that forks, on request, into `python3 SCRIPT ARGS...`.

Started by `forkserver.py` with the judge's own interpreter and environment, it must run under
any Python 3 a judge names, so it imports nothing but the standard library (never agentv_gate).

Protocol, over a SOCK_SEQPACKET socket (one JSON object per message, file descriptors alongside):
  request  {"id", "argv", "cwd", "env"} with fds [stdin, stdout, stderr]
  started  {"id", "pid"}            or  {"id", "error"} when the fork failed
  exited   {"id", "status"}         (the raw wait status, as os.waitpid gives it)

A forked child does what `python3 SCRIPT` would do: its own process group, default signals, the
given cwd, environment and stdio, `sys.argv`, `sys.path[0]` and `__file__` as the interpreter
sets them, the script run as `__main__`, an uncaught error printed from the script's frames on,
and the interpreter's shutdown in its order (non-daemon threads joined, atexit handlers, streams
flushed, the script's objects freed) with the script's exit status. What it skips is tearing
down every module, which in a forked child costs more than the whole judge (see `_shut_down`).

Its annotations are strings (and one a type comment) for that reason: the type checker reads
them, no interpreter ever evaluates them, so an old `python3` runs this file as it is.
"""

import array
import atexit
import builtins
import importlib.machinery
import json
import os
import selectors
import signal
import socket
import sys
import traceback
import types
import typing

MAX_MESSAGE = 1 << 20


def _recv(sock: "socket.socket") -> "tuple[bytes, list[int]]":
    fds = array.array("i")
    data, ancdata, _flags, _addr = sock.recvmsg(MAX_MESSAGE, socket.CMSG_SPACE(3 * fds.itemsize))
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    return data, list(fds)


def _send(sock: "socket.socket", message: "dict[str, object]") -> None:
    try:
        sock.send(json.dumps(message).encode())
    except OSError:
        pass  # the supervisor is gone; its end of the socket closing ends the loop below


def _serve(sock: "socket.socket") -> "tuple[dict[str, typing.Any], list[int]]":
    """Fork a child per request and report each child's start and exit; returns only in a child."""
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    running = {}  # type: dict[int, object]  # pid -> request id
    while True:
        for key, _ in selector.select():
            if key.fileobj is wake_r:
                os.read(wake_r, 4096)
                continue
            data, fds = _recv(sock)
            if not data:
                os._exit(0)  # the supervisor closed its end: nothing more will be asked
            request = json.loads(data)
            try:
                pid = os.fork()
            except OSError as exc:
                _send(sock, {"id": request["id"], "error": str(exc)})
                pid = -1
            if pid == 0:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                selector.close()
                for fd in (wake_r, wake_w, sock.fileno()):
                    os.close(fd)
                return request, fds
            for fd in fds:
                os.close(fd)
            if pid > 0:
                try:
                    os.setpgid(pid, pid)  # also done by the child: whichever runs first, killpg works at once
                except OSError:
                    pass
                running[pid] = request["id"]
                _send(sock, {"id": request["id"], "pid": pid})
        while running:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid in running:
                _send(sock, {"id": running.pop(pid), "status": status})


def _become(request: "dict[str, typing.Any]", fds: "list[int]") -> str:
    """Turn this forked child into the judge's process (everything but running the script)."""
    os.setpgid(0, 0)
    for number, fd in enumerate(fds):
        os.dup2(fd, number)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = request["argv"][1:]
    script = os.path.abspath(sys.argv[0])  # __file__ and tracebacks name it absolute, argv[0] as given
    if not getattr(sys.flags, "safe_path", False):  # PYTHONSAFEPATH: the interpreter prepends nothing
        sys.path[0] = os.path.dirname(os.path.realpath(script))
    return script


def _run(script: str) -> "tuple[int, dict[str, object]]":
    """Run the script as `__main__` the way `python3 SCRIPT` does; returns its exit status."""
    main = types.ModuleType("__main__")
    main.__file__ = script
    main.__dict__["__cached__"] = None  # (ModuleType does not declare it)
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", script)
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    try:
        with open(script, "rb") as source:
            code = compile(source.read(), script, "exec", dont_inherit=True)
        exec(code, main.__dict__)  # noqa: S102 - running the judge is the point
        return 0, main.__dict__
    except SystemExit as exc:
        return _exit_status(exc), main.__dict__
    except BaseException as exc:  # noqa: BLE001 - printed as the interpreter would print it
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != script:
            tb = tb.tb_next
        traceback.print_exception(type(exc), exc, tb)  # None (a syntax error): no "Traceback" header either
        if isinstance(exc, KeyboardInterrupt):
            return -signal.SIGINT, main.__dict__
        return 1, main.__dict__


def _exit_status(exc: SystemExit) -> int:
    """What the interpreter makes of `sys.exit(code)`."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    try:
        sys.stderr.write(str(exc.code) + "\n")
    except Exception:  # noqa: BLE001,S110 - as the interpreter, say nothing more
        pass
    return 1


def _shut_down(status: int, namespace: "dict[str, object]") -> "typing.NoReturn":
    """The interpreter's shutdown, in its order, minus tearing down every module: a forked child
    would copy most of the warm interpreter's memory page by page just to free it (27 ms here)."""
    threading = sys.modules.get("threading")
    if threading is not None:
        threading._shutdown()  # non-daemon threads are waited for
    atexit._run_exitfuncs()
    status = _flush(status)
    namespace.clear()  # the script's objects are freed, so their finalizers (unclosed files) run
    status = _flush(status)
    if status < 0:
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    os._exit(status & 0xFF)


def _flush(status: int) -> int:
    """Flushing stdout failing at exit makes the interpreter exit with 120."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            if stream is sys.stdout and status == 0:
                status = 120
    return status


def main() -> None:
    channel = socket.socket(fileno=int(sys.argv[1]))
    _send(channel, {"ready": True})
    request, fds = _serve(channel)
    _shut_down(*_run(_become(request, fds)))


if __name__ == "__main__":
    main()
