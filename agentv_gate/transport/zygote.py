"""A warm Python interpreter that forks, on request, into `python3 SCRIPT ARGS...`.

Started by `forkserver.py` with the judge's own interpreter and environment, it must start under
any Python 3 a judge names (before 3.8, which has no audit hooks, it exits at once and judges start
the ordinary way), so it imports nothing but the standard library (never agentv_gate).

Protocol, over a SOCK_SEQPACKET socket (one JSON object per message, file descriptors alongside):
  request  {"id", "argv", "cwd", "env"} with fds [stdin, stdout, stderr]
  started  {"id", "pid"} (sent by the child)  or  {"id", "error"} when the fork failed
  exited   {"id", "status"}         (the raw wait status, as os.waitpid gives it)

A forked child does what `python3 SCRIPT` would do: its own process group, default signals, the
given cwd, environment and stdio, `sys.argv`, `sys.path[0]` and `__file__` as the interpreter
sets them, the script run as `__main__` from the bottom of the stack of the process's only
thread (see `_serve`), an uncaught error printed from the script's frames on,
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

import _queue  # noqa: E402 - after the snapshot above, on purpose
import _thread  # noqa: E402
import array  # noqa: E402
import atexit  # noqa: E402
import builtins  # noqa: E402
import collections  # noqa: E402
import functools  # noqa: E402
import gc  # noqa: E402
import importlib.machinery  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import operator  # noqa: E402
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


_SCRIPT = [None]  # type: list[typing.Any]
"""In a judge: its script, as a function of its `__main__` namespace, for `_DISPATCH` to call."""

_CALL = getattr(operator, "call", None) or operator.methodcaller("__call__")  # operator.call: 3.11+

_DISPATCH = functools.partial(next, map(_CALL, iter(_SCRIPT)), None)
"""Calls the script once, from C: in a judge's own forks the iterator is spent and it does nothing."""

_JUDGE = {}  # type: dict[str, typing.Any]
"""What the child of the next fork is to become (set before each fork), and its pid once it has."""


def _serve(sock: "socket.socket") -> None:
    """Fork a child per request and report each child's start and exit (the children never return).

    The fork is made by a thread that runs no Python code: `os.fork` called from C, with the
    judge run by the fork's after-fork callbacks (`_enter_child`, `_DISPATCH`, `_leave_child`).
    The forked thread is the judge's main and only thread, and the script's frame has nothing
    under it, as in a fresh interpreter: `sys._getframe().f_back` is None, and the recursion limit
    leaves it the same headroom (exactly on Python 3.12+, where C calls are counted apart).
    """
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    _JUDGE["close"] = (selector, [wake_r, wake_w], sock)
    asked = _queue.SimpleQueue()  # type: _queue.SimpleQueue[typing.Any]
    forked = _queue.SimpleQueue()  # type: _queue.SimpleQueue[typing.Any]
    sys.unraisablehook = lambda unraisable: forked.put((None, unraisable.exc_value))  # a fork that failed

    def start_forking() -> None:
        pipeline = map(forked.put, zip(iter(asked.get, None), iter(os.fork, None)))  # noqa: B905 - 3.8 has no strict=
        sink = collections.deque(maxlen=0)  # type: collections.deque[typing.Any]
        _thread.start_new_thread(sink.extend, (pipeline,))

    start_forking()
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
            _JUDGE["request"], _JUDGE["fds"] = request, fds
            gc.freeze()  # this interpreter's objects: never scanned by the child (see `_close_files`)
            asked.put(request["id"])
            job, pid = forked.get()
            for fd in fds:
                os.close(fd)
            if job is None:  # os.fork raised, ending the forking thread: report it, start another
                _send(sock, {"id": request["id"], "error": str(pid)})
                start_forking()
                continue
            running[pid] = request["id"]  # the child itself reports its start (see `_enter_child`)
        while running:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid in running:
                _send(sock, {"id": running.pop(pid), "status": status})


def _enter_child() -> None:
    """After the fork, in the child: become the judge, ready `_DISPATCH` to run its script.

    Also called in every fork a judge makes of itself, where it does nothing."""
    if "pid" in _JUDGE or "request" not in _JUDGE:
        return
    try:
        _JUDGE["pid"] = os.getpid()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        selector, fds, sock = _JUDGE.pop("close")
        request = _JUDGE.pop("request")
        # Its own group first: the supervisor kills a judge by its group from the moment it learns
        # the pid, so the group must exist before the pid is reported.
        os.setpgid(0, 0)
        # Reported from here, before the script runs: should the warm interpreter die before its
        # own report, the supervisor must know this judge started (it would start it again).
        _send(sock, {"id": request["id"], "pid": os.getpid()})
        selector.close()
        for fd in fds:
            os.close(fd)
        sock.close()
        sys.unraisablehook = sys.__unraisablehook__
        script = _become(request, _JUDGE.pop("fds"))
        main = _main_module(script)
        sys.modules["__main__"] = main
    except BaseException:  # noqa: BLE001 - never a judge that runs nothing and exits 0
        sys.__excepthook__(*sys.exc_info())
        os._exit(1)
    try:
        with open(script, "rb") as source:
            code = compile(source.read(), script, "exec", dont_inherit=True)
    except BaseException as exc:  # noqa: BLE001 - printed as a fresh run prints it
        failure = exc
    else:
        _JUDGE["code"] = code
        _SCRIPT[0] = types.FunctionType(code, main.__dict__)
        sys.addaudithook(_audit)
        return
    _shut_down([*_uncaught(failure), main.__dict__])


def _leave_child() -> None:
    """The script returned: the interpreter's shutdown with status 0 (nothing in a judge's own forks)."""
    if _JUDGE.get("pid") == os.getpid():
        _shut_down([0, False, sys.modules["__main__"].__dict__])


def _audit(event: str, args: "tuple[typing.Any, ...]") -> None:
    """The script raised: its error reaches the C that called it as an unraisable one, announced by
    this audit event before any `sys.unraisablehook` sees it; it is handled here as the
    interpreter handles an uncaught error, and the judge ends."""
    if event != "sys.unraisablehook" or _JUDGE.get("pid") != os.getpid():
        return
    unraisable = args[1]
    tb = unraisable.exc_traceback
    if tb is None or tb.tb_frame.f_code is not _JUDGE.get("code") or unraisable.exc_value is None:
        return  # another error the script did not raise to its caller (one in a `__del__`, say)
    if unraisable.object is not _DISPATCH and repr(_DISPATCH) not in str(unraisable.err_msg):
        return  # (the object on 3.8-3.12, named in the message on later versions)
    namespace = sys.modules["__main__"].__dict__
    _shut_down([*_uncaught(unraisable.exc_value), namespace])


def _uncaught(exc: BaseException) -> "tuple[int, bool]":
    """What the interpreter does with an error the script did not catch: its exit status, and
    whether it ended on a KeyboardInterrupt (the interpreter then dies of SIGINT)."""
    if isinstance(exc, SystemExit):
        return _exit_status(exc), False
    exc.__traceback__ = _from_script(exc.__traceback__)
    try:
        _print_uncaught(exc)
    except SystemExit as hook_exit:  # the hook ended the process: its status stands
        return _exit_status(hook_exit), False
    return 1, isinstance(exc, KeyboardInterrupt)


def _become(request: "dict[str, typing.Any]", fds: "list[int]") -> str:
    """Turn this forked child into the judge's process (everything but running the script)."""
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
    except Exception:  # noqa: BLE001 - as the interpreter, say nothing more
        pass
    return 1


def _shut_down(outcome: "list[typing.Any]") -> "typing.NoReturn":
    """The interpreter's shutdown, in its order, minus tearing down every module: a forked child
    would copy most of the warm interpreter's memory page by page just to free it (27 ms here).

    `outcome` is `_run`'s (status, interrupted, namespace), emptied here so that nothing but
    `__main__` holds the script's namespace when it goes."""
    status, interrupted, namespace = outcome
    outcome.clear()
    _SCRIPT[0] = None  # the script's function held its namespace
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
            except Exception:  # noqa: BLE001 - at exit the interpreter ignores these too
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
        except Exception:  # noqa: BLE001 - at exit the interpreter ignores these too
            continue


def main() -> None:
    if not hasattr(sys, "addaudithook"):  # Python < 3.8: exit, so that judges start the ordinary way
        return
    os.register_at_fork(after_in_child=_enter_child)
    os.register_at_fork(after_in_child=_DISPATCH)
    os.register_at_fork(after_in_child=_leave_child)
    channel = socket.socket(fileno=int(sys.argv[1]))
    _send(channel, {"ready": True})
    _serve(channel)


if __name__ == "__main__":
    main()
