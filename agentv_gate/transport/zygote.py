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

What a fresh `python3 SCRIPT` would see is kept exact where the warm start could leak through:
the modules this file imports (`selectors`, `json`, `token` by way of `traceback`, ...) are
dropped from `sys.modules` before the script runs, so a same-named file beside the script (or on
a folder the script puts on `sys.path`) shadows them as in a fresh run; an uncaught error goes
through `sys.excepthook`; `sys.exit(n)` gives the status the interpreter gives (`-1` is 255,
never a signal); and file objects the script's modules still hold at exit are closed as the
interpreter's module teardown closes them.

Its annotations are strings (and one a type comment) for that reason: the type checker reads
them, no interpreter ever evaluates them, so an old `python3` runs this file as it is.
"""

MAIN_KEYS = tuple(globals())
"""The names a fresh `python3 SCRIPT` finds in `__main__` before the script's first line, in their
order (`__annotations__` among them on the interpreters that put it there): this file was started
that way, and nothing of its own is defined yet."""

import sys  # noqa: E402 - after the snapshot above, on purpose

STARTUP_MODULES = frozenset(sys.modules)
"""What the interpreter had loaded before this file's first import: what a fresh `python3 SCRIPT`
has loaded before the script's first line (same interpreter, flags, environment and site)."""

if not getattr(sys.flags, "safe_path", False):
    del sys.path[0]  # this file's own folder (with an `http.py`) must never shadow the standard library

import array  # noqa: E402 - after the snapshot above, on purpose
import atexit  # noqa: E402
import builtins  # noqa: E402
import gc  # noqa: E402
import importlib.machinery  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import selectors  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import types  # noqa: E402
import typing  # noqa: E402

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
            gc.freeze()  # this interpreter's objects: never scanned by the child (see `_close_files`)
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
    if hasattr(sys, "orig_argv"):  # Python 3.10+: what the interpreter was started with, `python3 SCRIPT ARGS`
        sys.orig_argv = list(request["argv"])
    script = os.path.abspath(sys.argv[0])  # __file__ and tracebacks name it absolute, argv[0] as given
    if not getattr(sys.flags, "safe_path", False):  # PYTHONSAFEPATH: the interpreter prepends nothing
        sys.path.insert(0, os.path.dirname(os.path.realpath(script)))
    for name in [name for name in sys.modules if name not in STARTUP_MODULES]:
        del sys.modules[name]  # imported afresh by the script, from wherever its sys.path finds them
    return script


def _run(script: str) -> "tuple[int, bool, dict[str, object]]":
    """Run the script as `__main__` the way `python3 SCRIPT` does.

    Returns its exit status, whether it ended on an uncaught KeyboardInterrupt (the interpreter
    then dies of SIGINT) and its namespace.
    """
    main = _main_module(script)
    sys.modules["__main__"] = main
    try:
        with open(script, "rb") as source:
            code = compile(source.read(), script, "exec", dont_inherit=True)
        exec(code, main.__dict__)  # noqa: S102 - running the judge is the point
        return 0, False, main.__dict__
    except SystemExit as exc:
        return _exit_status(exc), False, main.__dict__
    except BaseException as exc:  # noqa: BLE001 - handled below as the interpreter handles it
        uncaught = exc
    # Out of the `except` block, so that an error in the hook is not chained to this one.
    uncaught.__traceback__ = _from_script(uncaught.__traceback__)
    try:
        _print_uncaught(uncaught)
    except SystemExit as hook_exit:  # the hook ended the process: its status stands
        return _exit_status(hook_exit), False, main.__dict__
    return 1, isinstance(uncaught, KeyboardInterrupt), main.__dict__


def _main_module(script: str) -> "types.ModuleType":
    """`__main__` as a fresh interpreter builds it: the names of `MAIN_KEYS`, in that order."""
    main = types.ModuleType("__main__")  # __name__, __doc__, __package__, __loader__, __spec__
    fresh = {"__annotations__": {}, "__builtins__": builtins, "__file__": script, "__cached__": None,
             "__loader__": importlib.machinery.SourceFileLoader("__main__", script)}
    for name in MAIN_KEYS:
        if name in fresh:
            main.__dict__[name] = fresh.pop(name)
    for name in ("__builtins__", "__file__", "__cached__", "__loader__"):
        if name in fresh:  # an interpreter that set none of these before running a file
            main.__dict__[name] = fresh.pop(name)
    return main


def _from_script(tb: "types.TracebackType | None") -> "types.TracebackType | None":
    """A traceback without this file's frames on top, as a fresh run's starts at the script's
    (None for a syntax error, which a fresh run prints without a "Traceback" header)."""
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return tb


def _print_uncaught(exc: BaseException) -> None:
    """What the interpreter does with an uncaught error (PyErr_Print): `sys.last_*` set, then
    `sys.excepthook` called; a hook that fails is reported with the original error."""
    tb = exc.__traceback__
    sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, tb
    if sys.version_info >= (3, 12):
        sys.last_exc = exc
    hook = getattr(sys, "excepthook", None)
    if hook is None:
        sys.stderr.write("sys.excepthook is missing\n")
        sys.__excepthook__(type(exc), exc, tb)
        return
    try:
        hook(type(exc), exc, tb)
    except SystemExit:
        raise
    except BaseException as failure:  # noqa: BLE001 - printed as the interpreter prints it
        failure.__traceback__ = _from_script(failure.__traceback__)
        sys.stderr.write("Error in sys.excepthook:\n")
        sys.__excepthook__(type(failure), failure, failure.__traceback__)
        sys.stderr.write("\nOriginal exception was:\n")
        sys.__excepthook__(type(exc), exc, tb)


_C_LONG = 1 << 63


def _exit_status(exc: SystemExit) -> int:
    """What the interpreter makes of `sys.exit(code)`: an integer is passed to C `exit()`, which
    keeps its low 8 bits (`-1` is 255, `-256` is 0); one beyond a C long is 255; anything else is
    printed and gives 1."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF if -_C_LONG <= exc.code < _C_LONG else 0xFF
    try:
        sys.stderr.write(str(exc.code) + "\n")
    except Exception:  # noqa: BLE001,S110 - as the interpreter, say nothing more
        pass
    return 1


def _shut_down(outcome: "list[typing.Any]") -> "typing.NoReturn":
    """The interpreter's shutdown, in its order, minus tearing down every module: a forked child
    would copy most of the warm interpreter's memory page by page just to free it (27 ms here).

    `outcome` is `_run`'s (status, interrupted, namespace), emptied here so that nothing but
    `__main__` holds the script's namespace when it goes."""
    status, interrupted, namespace = outcome
    outcome.clear()
    for name in ("__file__", "__cached__"):  # a fresh run deletes them once the script is done,
        namespace.pop(name, None)           # before threads are joined and atexit handlers run
    threading = sys.modules.get("threading")
    if threading is not None:
        threading._shutdown()  # non-daemon threads are waited for
    atexit._run_exitfuncs()
    status = _flush(status)
    # As a fresh interpreter's shutdown goes (probes in tests/transport/test_forkserver.py): the
    # cycles the script already dropped are collected first, as they are (a writer among them may
    # lose what it held, as it does fresh); the text the script's live writers hold is written;
    # then `__main__` leaves sys.modules with its namespace whole, so the script's objects are
    # freed, and those in reference cycles (the namespace itself, when a function of the script
    # refers to it) are collected at once, each finalizer still seeing the script's globals.
    gc.collect()
    _flush_files()
    if sys.modules.get("__main__") is not None and getattr(sys.modules["__main__"], "__dict__", None) is namespace:
        del sys.modules["__main__"]
    del namespace
    gc.collect()
    status = _flush(status)
    _close_files()
    if interrupted:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(status)


def _flush(status: int) -> int:
    """Flushing stdout failing at exit makes the interpreter exit with 120."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            if stream is sys.stdout and status == 0:
                status = 120
    return status


def _flush_files() -> None:
    """Flush the text layers of the file objects the script made and still holds (see `_close_files`)."""
    standard = (sys.stdin, sys.stdout, sys.stderr)
    for obj in gc.get_objects():
        if isinstance(obj, io.TextIOBase) and obj not in standard:
            try:
                if not obj.closed:
                    obj.flush()
            except Exception:  # noqa: BLE001,S112 - at exit the interpreter ignores these too
                continue


def _close_files() -> None:
    """Close the file objects still open (a writer an imported module holds, say), as tearing the
    modules down does in a fresh interpreter; text layers before the buffers beneath them.

    Only the objects the script made are looked at: this interpreter's own were frozen before the
    fork, and the gc does not list frozen objects (listing them all would cost ~7 ms per judge).
    """
    standard = (sys.stdin, sys.stdout, sys.stderr)
    files = [obj for obj in gc.get_objects() if isinstance(obj, io.IOBase) and obj not in standard]
    files.sort(key=lambda obj: 0 if isinstance(obj, io.TextIOBase) else 1 if isinstance(obj, io.BufferedIOBase) else 2)
    for obj in files:
        try:
            obj.close()
        except Exception:  # noqa: BLE001,S112 - at exit the interpreter ignores these too
            continue


def main() -> None:
    channel = socket.socket(fileno=int(sys.argv[1]))
    _send(channel, {"ready": True})
    request, fds = _serve(channel)
    _shut_down(list(_run(_become(request, fds))))


if __name__ == "__main__":
    main()
