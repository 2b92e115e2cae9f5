"""Watching child processes from a test: is it alive, wait until something holds, kill leftovers."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path


def wait_for(predicate: Callable[[], object], timeout: float = 30.0, interval: float = 0.05) -> bool:
    """Poll `predicate` until it is true or `timeout` seconds pass; its last answer, as a bool."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


def pid_alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie (a zombie has run its course)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def kill_quietly(pids: list[int]) -> None:
    """SIGKILL what a failed test may have left behind; already gone is fine."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
