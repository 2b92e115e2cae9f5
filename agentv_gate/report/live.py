"""The log of a run while it runs, off a terminal (every CI log) and in GitHub Actions.

A real suite runs for minutes to an hour. Printing nothing until the end leaves a CI user unable
to tell a slow provider from a hang, or to see which case fails, until the job is over (and shows
nothing at all when the job is cancelled at its timeout). So every finished case gets one line the
moment it finishes, and a heartbeat line says what is still running when nothing was printed for
a while. On a terminal the console reporter's in-place progress line does that job instead.

Every line starts with text we choose (a verdict, `[k/n]`), never with a case id or a reply: the
GitHub runner honours `::command::` only at the start of a line. Untrusted parts go through
`text.one_line` and `text.inert_log_text`, as in the end-of-run table.

In GitHub Actions passed cases are folded into `::group::` sections named after their suite, and
a case that did not pass, or a heartbeat, closes the open group first, so failures are seen without
unfolding anything. Cases finish in roughly the order their suites were read, so a suite usually
gets one group; one interleaved with failures or another suite gets a group per stretch.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from typing import TextIO

from ..errors import UsageError
from .github import escape_data
from .rows import ReportedCase, outcome
from .text import inert_log_text, one_line, truncate

HEARTBEAT_SECONDS = 30.0
"""A heartbeat line after this long with nothing printed (AGENTV_GATE_HEARTBEAT_SECONDS overrides it)."""

HEARTBEAT_ENV = "AGENTV_GATE_HEARTBEAT_SECONDS"
PROBLEM_CHARS = 200
"""How much of a case's first miss or error a live line shows; the table and reports have the rest."""
RUNNING_SHOWN = 3
"""Running cases a heartbeat names, longest-running first; the rest are counted."""

CaseKey = tuple[str, str, int]
"""(suite, id, line): what names a case both when it starts and when its result arrives."""


def heartbeat_seconds(env: Mapping[str, str]) -> float:
    """The heartbeat interval: AGENTV_GATE_HEARTBEAT_SECONDS if set, else 30 s.

    A value that is not a finite number of seconds above 0 is a usage error, not a silent default.
    """
    raw = env.get(HEARTBEAT_ENV)
    if raw is None or raw.strip() == "":
        return HEARTBEAT_SECONDS
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (0 < value < math.inf):
        raise UsageError(f"{HEARTBEAT_ENV}={raw!r} is not a number of seconds above 0")
    return value


def duration_text(seconds: float) -> str:
    """`0.31s`, `12.4s`, `2m05s`, `1h02m`: short enough for every line, exact enough to compare."""
    if seconds < 10:
        return f"{seconds:.2f}s"
    if seconds < 60:
        return f"{seconds:.1f}s"
    whole = int(seconds)
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def _safe(text: object, limit: int = PROBLEM_CHARS) -> str:
    return truncate(inert_log_text(one_line(text)), limit)


def case_line(result: ReportedCase, first_problem: str) -> str:
    """`FAIL  evals/geo.yaml river  0.000 < 0.800  0.31s  missing 'Seine'`."""
    verdict = outcome(result).upper()
    mark = ">=" if result.score >= result.threshold else "<"
    line = (f"{verdict:<5} {_safe(result.suite)} {_safe(result.eval_id)}  "
            f"{result.score:.3f} {mark} {result.threshold:.3f}  {duration_text(result.duration_ms / 1000)}")
    problem = _safe(first_problem)
    return f"{line}  {problem}" if problem else line


class LiveLog:
    """Lines for a log that cannot be rewritten in place: one per finished case, and heartbeats.

    `case_started` may be called from any worker thread, `case_done` from the thread that collects
    results; a background thread writes the heartbeat. `end()` stops it all and must come before
    anything else writes to the log (the end-of-run table, annotations).
    """

    def __init__(self, stream: TextIO, *, quiet: bool, github: bool, heartbeat: float = HEARTBEAT_SECONDS,
                 first_problem: Callable[[ReportedCase], str] = lambda r: "",
                 clock: Callable[[], float] = time.monotonic):
        self.stream = stream
        self.quiet = quiet
        self.github = github
        self.heartbeat = heartbeat
        self.first_problem = first_problem
        self.clock = clock
        self.total = self.done = self.failed = self.errors = 0
        self.running: dict[CaseKey, float] = {}
        self._errors_seen: dict[str, str] = {}
        """Each error line printed so far -> the case that printed it first."""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._group: str | None = None
        self._started = self._last_line = 0.0

    # ---------------------------------------------------------------- events

    def start(self, total: int) -> None:
        with self._lock:
            self.total = total
            self._started = self._last_line = self.clock()
        self._thread = threading.Thread(target=self._beat, name="agentv-gate-heartbeat", daemon=True)
        self._thread.start()

    def case_started(self, key: CaseKey) -> None:
        with self._lock:
            self.running[key] = self.clock()

    def case_done(self, result: ReportedCase) -> None:
        with self._lock:
            self.running.pop((result.suite, result.eval_id, result.line), None)
            self.done += 1
            if result.verdict == "error":
                self.errors += 1
            elif result.verdict != "pass":
                self.failed += 1
            if self.quiet:  # the run's end lists each case that did not pass, once
                return
            problem = self.first_problem(result)
            if result.verdict == "error" and problem:
                # Twelve cases stopped by one broken healthcheck say it once, then point back to it.
                first = self._errors_seen.setdefault(problem, f"{result.suite} {result.eval_id}")
                if first != f"{result.suite} {result.eval_id}":
                    problem = f"the same error as {first}"
            line = case_line(result, problem)
            if result.verdict == "pass" and self.github:
                self._open_group(result.suite)
            else:
                self._close_group()
            self._write(line)

    def end(self) -> None:
        """Stop the heartbeat and close an open group, so what follows starts outside it."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        with self._lock:
            self._close_group()

    # ---------------------------------------------------------------- heartbeat

    def heartbeat_text(self) -> str:
        """`[12/40] still running: 2 cases (evals/a.yaml river 41s, …) · 1 failed, 0 errors · 2m05s elapsed, about 4m30s left`."""
        now = self.clock()
        elapsed = now - self._started
        longest = sorted(self.running.items(), key=lambda item: item[1])
        names = [f"{_safe(suite, 80)} {_safe(case_id, 80)} {duration_text(now - since)}"
                 for (suite, case_id, _), since in longest[:RUNNING_SHOWN]]
        if len(longest) > RUNNING_SHOWN:
            names.append(f"{len(longest) - RUNNING_SHOWN} more")
        running = f"{len(longest)} case{'s' if len(longest) != 1 else ''}" + (f" ({', '.join(names)})" if names else "")
        if self.done:
            left = f"about {duration_text(elapsed / self.done * (self.total - self.done))} left"
        else:
            left = "time left unknown until a case finishes"
        width = len(str(self.total))
        return (f"[{self.done:>{width}}/{self.total}] still running: {running} · {self.failed} failed, "
                f"{self.errors} error{'s' if self.errors != 1 else ''} · {duration_text(elapsed)} elapsed, {left}")

    def _beat(self) -> None:
        wait = self.heartbeat
        while not self._stop.wait(wait):
            with self._lock:
                if self._stop.is_set():
                    return
                due = self._last_line + self.heartbeat - self.clock()
                if due <= 0:
                    self._close_group()
                    self._write(self.heartbeat_text())
                    due = self.heartbeat
            wait = max(due, 0.01)

    # ---------------------------------------------------------------- writing (lock held)

    def _open_group(self, suite: str) -> None:
        if self._group == suite:
            return
        self._close_group()
        # The title is the command's data part: escaped, so a `%0A` in a file name stays text.
        self._write(f"::group::{escape_data(_safe(suite))} (passed cases)")
        self._group = suite

    def _close_group(self) -> None:
        if self._group is not None:
            self._group = None
            self._write("::endgroup::")

    def _write(self, line: str) -> None:
        self._last_line = self.clock()
        try:
            self.stream.write(line + "\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass  # a closed or broken log must not stop the run; the reports still get written


__all__ = ["HEARTBEAT_ENV", "HEARTBEAT_SECONDS", "LiveLog", "case_line", "duration_text", "heartbeat_seconds"]
