"""Processes that leave their judge's process group (setsid, a double fork) must not outlive the run.

A judge or `cli` target runs in a process group of its own, and the whole group is killed when it
ends; a descendant that calls `setsid` leaves that group. On Linux, agentv-gate makes itself a
*child subreaper* (`prctl(PR_SET_CHILD_SUBREAPER)`): a process whose parent dies is then
re-parented to agentv-gate instead of to init, so every such orphan becomes a child of ours that
we can see (`/proc/PID/stat`, parent pid) and end.

Which children are orphans to end: children of this process that it did not start itself (the
caller names those it did: live scripts) and that started after this run began
(`mark_run_start`), so an embedding program's own earlier children are never touched. Only
specific pids are ever waited for, never "any child": `subprocess` keeps the statuses it waits for.
Orphans that exit during the run are reaped as they do (`reap_exited`, from a sweep the caller
runs while scripts do), so their zombies never pile up; live ones are ended with the run.
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


def _child_pids() -> list[int] | None:
    """This process's children from `/proc/self/task/*/children` (a few small reads, where a scan
    of /proc opens every process's stat); None where the kernel does not offer that file."""
    pids: list[int] = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return None
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children", "rb") as handle:
                pids.extend(int(pid) for pid in handle.read().split())
        except FileNotFoundError:
            if task == tasks[0]:
                return None  # no such file on this kernel (CONFIG_PROC_CHILDREN off)
        except OSError:
            continue  # the thread ended meanwhile
    return pids


def _state(pid: int) -> tuple[str, int, int] | None:
    """(state letter, process group, start time in ticks) of `pid`, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return fields[0].decode(), int(fields[2]), int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


_every_child = False


def claim_every_child() -> None:
    """Say that every child of this process is the run's: the `agentv-gate` process itself, where
    nothing but the run starts processes. An embedding program's own children are not, so there only
    orphans of the scripts' process groups are reaped during the run (see `reap_exited`)."""
    global _every_child
    _every_child = True


def reap_exited(keep: Iterable[int] = (), groups: Iterable[int] = ()) -> int:
    """Reap the adopted orphans that have already exited (zombies), now; returns how many.

    A process that double-forks helpers (`( cmd & )`) hands each one to us when the shell between
    exits, and each stays a zombie, holding a pid, until reaped: hundreds per case would exhaust a
    container's `pids.max` long before the run ends. Reaped: a zombie child that started in this
    run, is not in `keep` (what the caller started and still waits for), and is in one of `groups`
    (the process groups of the run's scripts, which a helper forked in the background stays in) or,
    in the `agentv-gate` process (`claim_every_child`), in any group. One pid at a time, never "any
    child"; a live orphan is left running until `end_orphans` at the end of the run.
    """
    with _lock:
        since = _since
        if not _subreaper or since is None:
            return 0
    spared = set(keep)
    owned = None if _every_child else set(groups)
    pids = _child_pids()
    candidates = pids if pids is not None else [pid for pid, _ in _children()]
    reaped = 0
    for pid in candidates:
        if pid in spared:
            continue
        state = _state(pid)
        if state is None or state[0] != "Z" or state[2] < since or (owned is not None and state[1] not in owned):
            continue
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                reaped += 1
        except ChildProcessError:
            pass  # reaped elsewhere meanwhile
    return reaped


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


__all__ = ["become_subreaper", "claim_every_child", "end_orphans", "mark_run_start", "reap_exited"]
