"""Processes that leave their judge's process group (setsid, a double fork) must not outlive the run.

A judge or `cli` target runs in a process group of its own, and the whole group is killed when it
ends; a descendant that calls `setsid` leaves that group. On Linux, agentv-gate makes itself a
*child subreaper* (`prctl(PR_SET_CHILD_SUBREAPER)`): a process whose parent dies is then
re-parented to agentv-gate instead of to init, so every such orphan becomes a child of ours that
we can see (`/proc/PID/stat`, parent pid) and end. The same re-parenting hands us the judges a
dead warm interpreter forked, so their own exit status is read by us (forkserver.py).

Which children are orphans to end: children of this process that it did not start itself (the
caller names those it did: live scripts, warm interpreters) and that started after this run
began (`mark_run_start`), so an embedding program's own earlier children are never touched. Only
specific pids are ever waited for, never "any child": `subprocess` keeps the statuses it waits for.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Iterable

_PR_SET_CHILD_SUBREAPER = 36
_lock = threading.Lock()
_subreaper: bool | None = None
_since: int | None = None
"""Clock ticks since boot (as in /proc/PID/stat) when the first script of this run started."""
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_MAX_ROUNDS = 50


def mark_run_start() -> None:
    """Processes started from now on may be this run's orphans; earlier ones never are."""
    global _since
    with _lock:
        # The next whole tick: /proc rounds start times down, so a process started just before now
        # may show this tick; one started in the rest of it is missed (a leak, never a wrong kill).
        _since = _boot_ticks() + 1


def become_subreaper() -> bool:
    """Make this process the child subreaper (once); before a script starts."""
    global _subreaper, _since
    with _lock:
        if _subreaper is None:
            _subreaper = _set_subreaper()
        if _since is None:
            _since = _boot_ticks() + 1  # as in mark_run_start
        return _subreaper


def _set_subreaper() -> bool:
    if sys.platform != "linux":
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _boot_ticks() -> int:
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * _TICKS)


def _children() -> list[tuple[int, int]]:
    """(pid, start time in ticks) of every process whose parent is this one."""
    me = os.getpid()
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if len(fields) > 19 and int(fields[1]) == me:  # fields[0] is the state, [1] the parent, [19] the start
            found.append((int(entry), int(fields[19])))
    return found


def end_orphans(keep: Iterable[int] = ()) -> int:
    """Kill and reap the orphans this run's scripts left behind (see the module doc); returns how many.

    Each orphan's own process group goes with it, and children it had are re-parented to us as it
    dies, so the sweep repeats until none is left.
    """
    with _lock:
        since = _since
        if not _subreaper or since is None:
            return 0
    spared = set(keep)
    ended = 0
    for _ in range(_MAX_ROUNDS):
        orphans = [pid for pid, started in _children() if pid not in spared and started >= since]
        if not orphans:
            break
        killed = [pid for pid in orphans if _kill(pid)]
        spared.update(set(orphans) - set(killed))  # another user's (sudo): waiting would hang
        for pid in killed:
            try:
                os.waitpid(pid, 0)
                ended += 1
            except ChildProcessError:
                spared.add(pid)  # reaped elsewhere meanwhile: not ours to wait for
    return ended


def _kill(pid: int) -> bool:
    """SIGKILL to `pid` (and its group when it leads one); False when it may not be signalled."""
    try:
        if os.getpgid(pid) == pid:  # a group (a session) of its own: its members go with it
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except PermissionError:
        return False
    except OSError:
        pass  # already gone (a zombie still is signalled fine): waiting for it reaps it
    return True


__all__ = ["become_subreaper", "end_orphans", "mark_run_start"]
