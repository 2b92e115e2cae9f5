"""Each HTTP attempt's deadline, kept by a watchdog: at the deadline it shuts the attempt's sockets down.

Why a watchdog and not socket timeouts: a socket timeout bounds one read, so a server that drips its
headers or body a byte at a time keeps resetting it and holds the call for as long as it likes. A
timer that cuts the connection bounds the whole exchange whatever the server does.

Why `shutdown(SHUT_RDWR)` and not `close()`: closing a socket from another thread does not wake a
read blocked on it, while a shutdown does (the read returns at once). The base class's `shutdown`
is called even for a TLS socket, so the watchdog never touches the TLS object the reading thread
is using: the read sees the connection end.

Sockets reach the watchdog through `watch` (called by the connection classes of session.py as soon as
a connection has a socket, and before each request on a reused one), for the attempt running on
the calling thread. After the attempt, `Deadline.fired` says whether it was cut: a cut can look
like a complete reply (a body read to the end of the stream), so the caller checks it on success
too. One thread serves every deadline of the process.
"""

from __future__ import annotations

import heapq
import itertools
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


def _cut(sock: socket.socket) -> None:
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:  # closed meanwhile, or never connected: nothing left to cut
        pass


class Deadline:
    """One attempt's deadline and the sockets it watches."""

    def __init__(self, at: float) -> None:
        self.at = at
        self.fired = False
        self._done = False
        self._watched: list[socket.socket] = []
        self._lock = threading.Lock()

    def watch(self, sock: socket.socket) -> None:
        """Cut `sock` at the deadline (at once when it has passed)."""
        with self._lock:
            if self._done:
                return
            if self.fired:
                _cut(sock)
            elif not any(s is sock for s in self._watched):
                self._watched.append(sock)

    def fire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.fired = True
            for sock in self._watched:
                _cut(sock)

    def finish(self) -> None:
        """The attempt is over: nothing more is cut, and `fired` no longer changes."""
        with self._lock:
            self._done = True
            self._watched.clear()


class _Watchdog:
    """One daemon thread firing deadlines in order; a finished deadline is dropped when its time comes."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Deadline]] = []
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def schedule(self, deadline: Deadline) -> None:
        with self._wake:
            heapq.heappush(self._heap, (deadline.at, next(self._order), deadline))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="agentv-gate-deadlines", daemon=True)
                self._thread.start()
            if self._heap[0][2] is deadline:
                self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._heap:
                    self._wake.wait()
                at, _, deadline = self._heap[0]
                wait = at - time.monotonic()
                if wait > 0:
                    self._wake.wait(wait)
                    continue
                heapq.heappop(self._heap)
            deadline.fire()


    def forget(self) -> None:
        """In a forked child: the parent's thread is not there, so the next deadline starts a new one."""
        self._heap, self._wake, self._thread = [], threading.Condition(), None


_watchdog = _Watchdog()
_local = threading.local()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_watchdog.forget)


@contextmanager
def attempt_deadline(seconds: float) -> Iterator[Deadline]:
    """Run the block as one attempt that the watchdog cuts `seconds` from now."""
    deadline = Deadline(time.monotonic() + seconds)
    _watchdog.schedule(deadline)
    _local.current = deadline
    try:
        yield deadline
    finally:
        _local.current = None
        deadline.finish()


def watch(sock: socket.socket | None) -> None:
    """Put `sock` under the deadline of the attempt running on this thread, if any."""
    current: Deadline | None = getattr(_local, "current", None)
    if current is not None and sock is not None:
        current.watch(sock)
