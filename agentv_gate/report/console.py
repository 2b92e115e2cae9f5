"""What a person sees: a live progress line on a terminal, then a results table, the details and the totals.

On a terminal the progress line is rewritten in place (`\\r`) so a long run shows it is alive
without scrolling. A CI log cannot be rewritten, so there (not a TTY, or GITHUB_ACTIONS=true, even
under a pseudo-terminal) each finished case gets a line as it finishes, plus heartbeats
(`live.LiveLog`). Model and judge text in the table goes through `text.clean`: a reply
with terminal escapes could otherwise recolour or erase the log, and in GitHub Actions every
printed line is also scanned for workflow commands. For that reason each table row starts with
the verdict we print, never with untrusted text (the runner only honours `::command::` at the
start of a line), and `##[` is broken up (`text.inert_log_text`). The runner also skips leading
blanks before looking for `::`, so indenting is no protection: every line of the details below
the table starts with a word of ours (a verdict, a label, `-` or `|`).

The table is fitted to the terminal (`COLUMNS`, else the terminal's width, else a wide CI log),
so its last column is cut to fit; that is why the details print each non-passing case's error
and first misses whole below it, where a path or an HTTP status at the end of a long message
is not lost.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import threading
from collections.abc import Iterable, Sequence
from typing import TextIO

from . import Summary, summarise
from .live import HEARTBEAT_SECONDS, CaseKey, LiveLog
from .paths import source_path
from .rows import ADVISORY, NEVER_QUARANTINED, NOT_RUN, QUARANTINED, EvaluatorDetail, ReportedCase, details_of, outcome
from .text import case_label, clean, inert_log_text, one_line, several_targets, truncate

PASSED_ROWS_SHOWN = 50
"""Passed cases listed before the rest are counted instead (all with --verbose, none with --quiet);
failures are always all listed."""

DETAIL_MISSES_SHOWN = 3
"""Misses printed whole per non-passing case (all of them with --verbose, per evaluator)."""
DETAIL_TEXT_LIMIT = 4000
"""One error, miss or reasoning in the details is cut past this, with a note (results.jsonl has it whole)."""
DEFAULT_WIDTH = 160
"""The table's width when neither `COLUMNS` nor a terminal says: a CI log viewer is wide and wraps."""

_COLUMNS = ("VERDICT", "CASE", "SUITE", "SCORE", "THRESHOLD", "FIRST MISS")
_WIDTH_CAPS = (11, 40, 40, 5, 9, 80)  # VERDICT: QUARANTINED whole
_MIN_WIDTH = 12
"""What CASE, SUITE and FIRST MISS shrink to, at most, to fit a narrow terminal."""
_EVALUATOR_PREFIX = re.compile(r"(?:^|; )evaluator '[^']*': ")
"""How the orchestrator joins evaluator errors into a case's error."""
_COLOURS = {"PASS": "\x1b[32m", "FAIL": "\x1b[31m", "ERROR": "\x1b[33m", "QUARANTINED": "\x1b[35m",
            "NOT RUN": "\x1b[36m", "ADVISORY": "\x1b[33m"}
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
    if outcome(result) == ADVISORY:  # why it does not fail the gate, then why the judge failed it
        return one_line(f"{result.advisory}; {result.misses[0]}" if result.misses else result.advisory)
    if result.misses:
        return one_line(result.misses[0])
    if result.verdict != "pass" and result.reasoning:
        return one_line(result.reasoning)
    return ""


def _sorted_for_table(results: Iterable[ReportedCase]) -> list[ReportedCase]:
    rank = {"error": 0, "fail": 1, ADVISORY: 2, QUARANTINED: 2, NOT_RUN: 3, "pass": 4}
    return sorted(results, key=lambda r: (rank.get(outcome(r), 1), r.suite, r.line, r.eval_id))


def terminal_width() -> int:
    """`COLUMNS` if set, else the terminal's width, else `DEFAULT_WIDTH` (stdout is a file or a pipe)."""
    return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns


def _fit(natural: list[int], width: int) -> list[int]:
    """Column widths that fit `width` with two spaces between columns: FIRST MISS gives way first,
    then SUITE, then CASE, none below `_MIN_WIDTH` (or its header)."""
    widths = list(natural)
    overflow = sum(widths) + 2 * (len(widths) - 1) - width
    for i in (5, 2, 1):
        if overflow <= 0:
            break
        floor = min(widths[i], max(_MIN_WIDTH, len(_COLUMNS[i])))
        give = min(overflow, widths[i] - floor)
        widths[i] -= give
        overflow -= give
    return widths


def render_table(results: Sequence[ReportedCase], colour: bool = False,
                 passed_shown: int | None = PASSED_ROWS_SHOWN, width: int | None = None) -> list[str]:
    """Rows for cases that did not pass first, then passed ones (at most `passed_shown`; None: all).

    Passed cases left out are counted on a last line, unless none is to be shown (--quiet): then
    the totals line below the table already counts them. The table is at most `width` columns
    wide (default: the terminal's), cutting cells with `…`; `render_details` has the whole text.
    """
    listed = list(_listed(results, passed_shown))
    with_target = several_targets(results)
    said: dict[str, str] = {}  # an error -> the first case listed with it: said once, then referred to

    def problem(r: ReportedCase) -> str:
        if r.verdict != "error" or not r.error:
            return first_problem(r)
        first = said.setdefault(r.error, case_label(r, with_target))
        return first_problem(r) if first == case_label(r, with_target) else f"error: the same as {first}"

    rows = [(outcome(r).upper(), case_label(r, with_target), r.suite, f"{r.score:.3f}", f"{r.threshold:.3f}", problem(r))
            for r in listed]
    hidden_passed = sum(1 for r in results if r.verdict == "pass") - sum(1 for row in rows if row[0] == "PASS")
    if not rows:
        return []
    texts = [tuple(inert_log_text(one_line(v)) for v in row) for row in rows]
    natural = [max([len(h)] + [min(len(t[i]), cap) for t in texts]) for i, (h, cap) in
               enumerate(zip(_COLUMNS, _WIDTH_CAPS, strict=True))]
    widths = _fit(natural, terminal_width() if width is None else width)
    cells = [tuple(_cell(v, w) for v, w in zip(t, widths, strict=True)) for t in texts]

    def fmt(row: Sequence[str], paint: bool) -> str:
        padded = [c.rjust(widths[i]) if i in (3, 4) else c.ljust(widths[i]) for i, c in enumerate(row)]
        if paint and row[0] in _COLOURS:
            padded[0] = f"{_COLOURS[row[0]]}{padded[0]}{_RESET}"
        return "  ".join(padded).rstrip()

    lines = [fmt(_COLUMNS, False)] + [fmt(c, colour) for c in cells]
    if hidden_passed and passed_shown:
        lines.append(f"... and {hidden_passed} more passed case{'s' if hidden_passed != 1 else ''} "
                     "(--verbose lists them)")
    return lines


def _listed(results: Sequence[ReportedCase], passed_shown: int | None) -> list[ReportedCase]:
    """The cases the table lists, in its order: every one that did not pass, then up to `passed_shown` passed."""
    listed: list[ReportedCase] = []
    passed_seen = 0
    for r in _sorted_for_table(results):
        if r.verdict == "pass" and not r.quarantined:  # a quarantined pass is listed: its quarantine can go
            passed_seen += 1
            if passed_shown is not None and passed_seen > passed_shown:
                continue
        listed.append(r)
    return listed


def _text_lines(label: str, text: object, indent: str) -> list[str]:
    """`label: text`, its further lines behind a `| ` of ours: cleaned, `##[` broken, cut past the limit."""
    body = truncate(clean(text).strip(), DETAIL_TEXT_LIMIT).splitlines() or [""]
    first, *rest = (inert_log_text(line.rstrip()) for line in body)
    return [f"{indent}{label}: {first}".rstrip()] + [f"{indent}| {line}".rstrip() for line in rest]


def _error_parts(error: str | None) -> list[str]:
    """The messages in a case's error (`evaluator 'a': X; evaluator 'b': Y` gives X and Y), or the evaluator's."""
    if not error:
        return []
    return [part.strip() for part in _EVALUATOR_PREFIX.split(error) if part.strip()]


def _repeats(text: str, errors: Sequence[str]) -> bool:
    """A miss or reasoning that only restates an error (`LLM judge failed: X` after error X) is not printed twice."""
    return any(text.strip().endswith(e) for e in errors)


def _misses_lines(misses: Sequence[str], shown: int | None, indent: str, errors: Sequence[str] = ()) -> list[str]:
    misses = [m for m in misses if not _repeats(m, errors)]
    lines: list[str] = []
    for miss in misses if shown is None else misses[:shown]:
        lines += _text_lines("miss", miss, indent)
    if shown is not None and len(misses) > shown:
        more = len(misses) - shown
        lines.append(f"{indent}... and {more} more miss{'es' if more != 1 else ''} (results.jsonl has them all)")
    return lines


def _evaluator_lines(detail: EvaluatorDetail) -> list[str]:
    indent = "  " * (detail.depth + 1)
    head = inert_log_text(f"{one_line(detail.name)} ({one_line(detail.type)})")
    lines = [f"{indent}- {head}: score {detail.score:.3f} {detail.verdict}"]
    inner = indent + "  "
    errors = _error_parts(detail.error)
    if detail.error:
        lines += _text_lines("error", detail.error, inner)
    for hit in detail.hits:
        lines += _text_lines("hit", hit, inner)
    lines += _misses_lines(detail.misses, None, inner, errors)
    if detail.reasoning and not _repeats(detail.reasoning, errors):
        lines += _text_lines("reasoning", detail.reasoning, inner)
    if detail.stderr:
        lines += _text_lines("stderr", detail.stderr, inner)
    return lines


def case_details(result: ReportedCase, verbose: bool = False) -> list[str]:
    """One case's block: a heading that starts with its verdict, then why (in full).

    Without `verbose`: its error, its first misses, or (with neither) the judge's reasoning. With
    `verbose`: its error, then per evaluator the score, hits, misses, reasoning and stderr tail.
    """
    where = f"{source_path(result)}:{result.line}" if result.line > 0 else source_path(result)
    target = f", target {result.target}" if result.target else ""
    lines = [inert_log_text(f"{outcome(result).upper()} {one_line(result.eval_id)} ({one_line(where)}{one_line(target)})")]
    if result.quarantined:
        label = ("quarantined, and now passes: lift its quarantine in .agentv/gate.yaml" if result.verdict == "pass"
                 else NEVER_QUARANTINED if result.verdict == "error" else "quarantined")
        lines += _text_lines(label, result.quarantined, "  ")
    if outcome(result) == ADVISORY:
        lines += _text_lines("advisory, not failing the gate", result.advisory or "", "  ")
    errors = _error_parts(result.error)
    evaluators = details_of(result) if verbose else ()
    told = {d.error.strip() for d in evaluators if d.error}  # the evaluators' own lines will say these
    if result.error and not (told and set(errors) <= told):
        lines += _text_lines("error", result.error, "  ")
    if evaluators:
        own = {m for d in evaluators for m in d.misses} | {f"stderr: {d.stderr}" for d in evaluators if d.stderr}
        lines += _misses_lines([m for m in result.misses if m not in own], None, "  ")  # `required` gates
        for detail in evaluators:
            lines += _evaluator_lines(detail)
        return lines
    lines += _misses_lines(list(result.misses), None if verbose else DETAIL_MISSES_SHOWN, "  ", errors)
    if result.reasoning and (verbose or (not result.misses and result.verdict != "pass")) and \
            not _repeats(result.reasoning, errors):
        lines += _text_lines("reasoning", result.reasoning, "  ")
    return lines


def render_details(results: Sequence[ReportedCase], passed_shown: int | None = PASSED_ROWS_SHOWN,
                   verbose: bool = False, colour: bool = False) -> list[str]:
    """The block below the table: each case that did not pass (with `verbose`, each listed case), in full."""
    lines: list[str] = []
    first_with: dict[str, str] = {}  # an error -> the case whose block said it first
    for r in _listed(results, passed_shown):
        if r.verdict == "pass" and not verbose and not r.quarantined:
            continue
        block = case_details(r, verbose)
        if r.verdict == "error" and r.error and not verbose:
            # One broken healthcheck or import stops every case alike: said once, then referred to.
            label = f"{one_line(r.eval_id)} ({source_path(r)}:{r.line})"
            first = first_with.setdefault(r.error, label)
            if first != label:
                block = [block[0], f"  error: the same as {inert_log_text(first)} above"]
        if colour and outcome(r).upper() in _COLOURS:
            verdict = outcome(r).upper()
            block[0] = f"{_COLOURS[verdict]}{verdict}{_RESET}{block[0][len(verdict):]}"
        lines += block
    return lines


def totals(summary: Summary) -> str:
    return f"agentv-gate {summary.verdict}: {summary.describe()}"


class ConsoleReporter:
    """`start(total)`, `case_started(key)` and `case_done(result)` from any worker thread, then
    `finish(results)` prints the table.

    `progress` (stderr by default) gets the in-place line when it is a terminal, `quiet` is off
    and `github` (GITHUB_ACTIONS=true) is not; otherwise it gets the live log, a line per finished
    case and heartbeats (`quiet`: only cases that did not pass, and heartbeats). `out` (stdout by
    default) gets the summary. Colour follows `out` being a terminal and the NO_COLOR convention.
    `quiet` keeps to what needs reading (cases that did not pass, the totals); `verbose` lists
    every passed case too, and every evaluator of every case in the details.
    """

    def __init__(self, quiet: bool = False, progress: TextIO | None = None, out: TextIO | None = None,
                 colour: bool | None = None, verbose: bool = False, github: bool | None = None,
                 heartbeat: float = HEARTBEAT_SECONDS, width: int | None = None):
        self.quiet = quiet
        self.verbose = verbose
        self.width = width
        """The table's width; None: `COLUMNS`, else the terminal's (`terminal_width`)."""
        self.passed_shown: int | None = 0 if quiet else (None if verbose else PASSED_ROWS_SHOWN)
        self.progress = progress if progress is not None else sys.stderr
        self.out = out if out is not None else sys.stdout
        github = os.environ.get("GITHUB_ACTIONS") == "true" if github is None else github
        terminal = _is_tty(self.progress) and not github
        self.live = not quiet and terminal
        self.log = None if terminal else LiveLog(self.progress, quiet=quiet, github=github, heartbeat=heartbeat,
                                                 first_problem=first_problem)
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
        if self.log is not None:
            self.log.start(total)

    def case_started(self, key: CaseKey) -> None:
        """A case began (suite, id, line); heartbeats name the cases running longest."""
        if self.log is not None:
            self.log.case_started(key)

    def case_done(self, result: ReportedCase) -> None:
        with self._lock:
            self.done += 1
            if result.verdict == "fail":
                self.failed += 1
            elif result.verdict == "error":
                self.errors += 1
            self._draw(result)
        if self.log is not None:
            self.log.case_done(result)

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

    def end_live(self, before_commands: bool = False) -> None:
        """Stop the live output: the heartbeat, an open `::group::`, the in-place line.

        `before_commands`: workflow commands (annotations) come next, and the runner reads one only
        at the start of a line, so a progress line still drawn is ended with a newline, not just
        cleared (a runner splitting on `\\n` alone would see `\\r\\x1b[K::error …`).
        """
        if self.log is not None:
            self.log.end()
        with self._lock:
            shown = self._shown
            self._clear()
            if shown and before_commands:
                try:
                    self.progress.write("\n")
                    self.progress.flush()
                except (OSError, ValueError):
                    pass

    def finish(self, results: Iterable[ReportedCase], planned: int | None = None) -> str:
        """End the live output, print the table and the totals to `out`, and return that text."""
        results = list(results)
        self.end_live()
        summary = summarise(results, planned)
        # --quiet: each case that did not pass once, in full (its block below has all the table says).
        lines = [] if self.quiet else render_table(results, colour=self.colour, passed_shown=self.passed_shown,
                                                   width=self.width)
        details = render_details(results, self.passed_shown, self.verbose, self.colour)
        blocks = [block for block in (lines, details, [totals(summary)]) if block]
        text = "\n\n".join("\n".join(block) for block in blocks) + "\n"
        try:
            self.out.write(text)
            self.out.flush()
        except (OSError, ValueError):
            pass
        return text


__all__ = ["ConsoleReporter", "case_details", "first_problem", "render_details", "render_table", "terminal_width",
           "totals"]
