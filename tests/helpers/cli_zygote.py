"""A warm `agentv-gate`: one interpreter per test worker that has imported the CLI, forking a
process per command the tests run (see `helpers.cli.run_cli`).

Started as `python cli_zygote.py FD`, FD one end of a SOCK_SEQPACKET socket pair. Each request is
a JSON object (`argv`, `cwd`, `env`) with four descriptors: the command's stdin, stdout and stderr,
and a pipe for its status. For each, this process forks a waiter, which forks the command and
writes two lines to the status pipe: the command's pid as it starts, its exit code (negative: the
signal that ended it, as `subprocess` reports it) when it ends.

The command process is the interpreter `agentv-gate` would be, minus its start: same executable,
flags and site, stdio on the given descriptors, cwd, environment and `sys.argv` set, then the
console script's own `entry()`, ending through the interpreter's own exit (atexit handlers, stdio
flushed). It leaves this process's loop by that exit and nothing else.
"""

import array
import gc
import importlib
import json
import os
import signal
import socket
import sys
import typing

from agentv_gate import cli


def _receive(sock: socket.socket) -> "tuple[bytes, list[int]]":
    fds = array.array("i")
    data, ancillary, _, _ = sock.recvmsg(1 << 20, socket.CMSG_SPACE(4 * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
    return data, list(fds)


def _become_command(request: "dict[str, typing.Any]", fds: "list[int]") -> None:
    for number, fd in enumerate(fds[:3]):
        os.dup2(fd, number)
    for fd in fds:
        os.close(fd)
    os.chdir(str(request["cwd"]))
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = list(request["argv"])
    cli.entry()  # exits the interpreter with the command's status


def _wait_for(pid: int, status_fd: int) -> None:
    os.write(status_fd, f"{pid}\n".encode())
    _, status = os.waitpid(pid, 0)
    os.write(status_fd, f"{os.waitstatus_to_exitcode(status)}\n".encode())


def serve(sock: socket.socket) -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # waiters are reaped by the kernel
    while True:
        data, fds = _receive(sock)
        if not data:
            os._exit(0)  # the test worker is gone
        request = json.loads(data)
        sys.stdout.flush()
        sys.stderr.flush()
        if os.fork() == 0:  # the waiter
            sock.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            command = os.fork()
            if command == 0:
                _become_command(request, fds)
            for fd in fds[:3]:
                os.close(fd)
            _wait_for(command, fds[3])
            os._exit(0)
        for fd in fds:
            os.close(fd)


if __name__ == "__main__":
    for module in cli.COMMANDS.values():
        importlib.import_module(module)
    gc.freeze()  # the imports are shared by every fork: never scanned, never copied by a collection
    serve(socket.socket(fileno=int(sys.argv[1])))
