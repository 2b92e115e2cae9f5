"""What a person sees: a live progress line on a terminal, then a results table and the totals.

On a terminal the progress line is rewritten in place (`\\r`) so a long run shows it is alive
without scrolling; in a CI log (not a TTY) per-case lines would only bury the summary, so nothing
is printed until the end. Model and judge text in the table goes through `text.clean`: a reply
with terminal escapes could otherwise recolour or erase the log, and in GitHub Actions every
printed line is also scanned for workflow commands. For that reason each table row starts with
the verdict we print, never with untrusted text (the runner only honours `::command::` at the
start of a line), and `##[` is broken up (`text.inert_log_text`).
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from collections.abc import Iterable, Sequence
from typing import TextIO

from . import Summary, summarise
from .rows import ReportedCase
from .text import case_label, inert_log_text, one_line, several_targets, truncate

PASSED_ROWS_SHOWN = 50
"""Passed cases listed before the rest are counted instead (all with --verbose, none with --quiet);
failures are always all listed."""

_COLUMNS = ("VERDICT", "CASE", "SUITE", "SCORE", "THRESHOLD", "FIRST MISS")
_WIDTH_CAPS = (7, 40, 40, 5, 9, 80)
_COLOURS = {"PASS": "\x1b[32m", "FAIL": "\x1b[31m", "ERROR": "\x1b[33m"}
_RESET = "\x1b[0m"


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _cell(text: object, width: int) -> str:
    s = inert_log_text(one_line(text))
    return s if len(s) <= width else s[: max(width - 1, 0)] + "…"


def first_problem(result: ReportedCase) -> str:
    """The error, else the first miss, else the start of the reasoning: the one thing to read first."""
    if result.verdict == "error":
        return f"error: {one_line(result.error or 'unknown error')}"
    if result.misses:
        return one_line(result.misses[0])
    if result.verdict != "pass" and result.reasoning:
        return one_line(result.reasoning)
    return ""


def _sorted_for_table(results: Iterable[ReportedCase]) -> list[ReportedCase]:
    rank = {"error": 0, "fail": 1, "pass": 2}
    return sorted(results, key=lambda r: (rank.get(r.verdict, 1), r.suite, r.line, r.eval_id))


def render_table(results: Sequence[ReportedCase], colour: bool = False,
                 passed_shown: int | None = PASSED_ROWS_SHOWN) -> list[str]:
    """Rows for cases that did not pass first, then passed ones (at most `passed_shown`; None: all).

    Passed cases left out are counted on a last line, unless none is to be shown (--quiet): then
    the totals line below the table already counts them.
    """
    ordered = _sorted_for_table(results)
    with_target = several_targets(ordered)
    hidden_passed = 0
    passed_seen = 0
    rows: list[tuple[str, ...]] = []
    for r in ordered:
        if r.verdict == "pass":
            passed_seen += 1
            if passed_shown is not None and passed_seen > passed_shown:
                hidden_passed += 1
                continue
        rows.append((r.verdict.upper(), case_label(r, with_target), r.suite, f"{r.score:.3f}", f"{r.threshold:.3f}",
                     first_problem(r)))
    cells = [tuple(_cell(v, cap) for v, cap in zip(row, _WIDTH_CAPS, strict=True)) for row in rows]
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate(_COLUMNS)]

    def fmt(row: Sequence[str], paint: bool) -> str:
        padded = [c.rjust(widths[i]) if i in (3, 4) else c.ljust(widths[i]) for i, c in enumerate(row)]
        if paint and row[0] in _COLOURS:
            padded[0] = f"{_COLOURS[row[0]]}{padded[0]}{_RESET}"
        return "  ".join(padded).rstrip()

    if not cells:
        return []
    lines = [fmt(_COLUMNS, False)] + [fmt(c, colour) for c in cells]
    if hidden_passed and passed_shown:
        lines.append(f"... and {hidden_passed} more passed case{'s' if hidden_passed != 1 else ''} "
                     "(--verbose lists them)")
    return lines


def totals(summary: Summary) -> str:
    verdict = "INTERRUPTED" if summary.not_run else ("PASSED" if summary.ok else "FAILED")
    return f"agentv-gate {verdict}: {summary.describe()}"


class ConsoleReporter:
    """`start(total)`, `case_done(result)` from any worker thread, then `finish(results)` prints the table.

    `progress` (stderr by default) gets the live line only when it is a terminal and `quiet` is
    off; `out` (stdout by default) gets the summary. Colour follows `out` being a terminal and
    the NO_COLOR convention. `quiet` keeps to what needs reading (cases that did not pass, the
    totals); `verbose` lists every passed case too.
    """

    def __init__(self, quiet: bool = False, progress: TextIO | None = None, out: TextIO | None = None,
                 colour: bool | None = None, verbose: bool = False):
        self.quiet = quiet
        self.passed_shown: int | None = 0 if quiet else (None if verbose else PASSED_ROWS_SHOWN)
        self.progress = progress if progress is not None else sys.stderr
        self.out = out if out is not None else sys.stdout
        self.live = not quiet and _is_tty(self.progress)
        self.colour = (_is_tty(self.out) and "NO_COLOR" not in os.environ) if colour is None else colour
        self.total = 0
        self.done = 0
        self.failed = 0
        self.errors = 0
        self._lock = threading.Lock()
        self._shown = False

    def start(self, total: int) -> None:
        with self._lock:
            self.total, self.done, self.failed, self.errors = total, 0, 0, 0
            self._draw(None)

    def case_done(self, result: ReportedCase) -> None:
        with self._lock:
            self.done += 1
            if result.verdict == "fail":
                self.failed += 1
            elif result.verdict == "error":
                self.errors += 1
            self._draw(result)

    def progress_text(self, last: ReportedCase | None = None) -> str:
        width = len(str(self.total))
        text = f"[{self.done:>{width}}/{self.total}] {self.failed} failed, {self.errors} error" + (
            "s" if self.errors != 1 else "")
        if last is not None:
            text += f" · last: {one_line(last.eval_id)} {last.verdict}"
        return inert_log_text(text)

    def _draw(self, last: ReportedCase | None) -> None:
        if not self.live:
            return
        columns = shutil.get_terminal_size((100, 24)).columns
        line = truncate(self.progress_text(last), max(columns - 20, 20))[: max(columns - 1, 20)]
        try:
            self.progress.write("\r" + line + "\x1b[K")
            self.progress.flush()
        except (OSError, ValueError):
            self.live = False
            return
        self._shown = True

    def _clear(self) -> None:
        if self._shown:
            try:
                self.progress.write("\r\x1b[K")
                self.progress.flush()
            except (OSError, ValueError):
                pass
            self._shown = False

    def finish(self, results: Iterable[ReportedCase], planned: int | None = None) -> str:
        """Clear the progress line, print the table and the totals to `out`, and return that text."""
        results = list(results)
        with self._lock:
            self._clear()
        summary = summarise(results, planned)
        lines = render_table(results, colour=self.colour, passed_shown=self.passed_shown)
        text = "\n".join(lines + ["", totals(summary)] if lines else [totals(summary)]) + "\n"
        try:
            self.out.write(text)
            self.out.flush()
        except (OSError, ValueError):
            pass
        return text


__all__ = ["ConsoleReporter", "first_problem", "render_table", "totals"]
