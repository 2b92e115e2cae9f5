"""`run --baseline BASE.jsonl`: judge this change, not the history of main.

With `--fail-on all` (the default) the verdict is today's: every case must pass; the base only
adds what the change did to each case to the reports. With `--fail-on regression` the gate fails
only for a case that passed on the base and does not pass now (or dropped more than `--max-drop`),
so a case already failing on main does not block an unrelated pull request.

Never a wrong pass: a run cut short, a case not run (`--max-failures`) or a run with no case at
all still fails; a base file that shares no case with the run is refused before anything runs
(every case would be "new" and nothing could regress).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..execution.stop import NOT_RUN_INTERRUPTED
from ..models import CaseResult
from ..redaction import redact
from ..report import Summary
from ..report.baseline import (
    CaseChange,
    Comparison,
    Status,
    compare_results,
    comparison_html,
    comparison_markdown,
    console_lines,
)
from ..report.jsonl import missing_shards, unfinished_runs
from ..report.rows import NOT_RUN, ReportedCase, outcome
from ._previous import read_previous

FAIL_ON = ("all", "regression")
WARN_ONLY = ("still failing (also on base)", "new")
"""With `--fail-on regression`, failures labelled so are annotated as warnings: they do not fail the gate."""


@dataclass
class Baseline:
    path: Path
    rows: list[CaseResult]
    fail_on: str
    max_drop: float | None

    def compare(self, results: Sequence[ReportedCase]) -> Comparison:
        return compare_results(self.rows, results, self.max_drop)

    def verdict(self, summary: Summary, comparison: Comparison, stopped: str | None) -> tuple[bool, str]:
        """(gate passed, one line saying why) for `--fail-on` as given."""
        regressed = len(blocking_regressions(comparison))
        if self.fail_on == "all":
            # A case regressed while every case passes: it only dropped more than --max-drop, which
            # must count here too (else the flag labels it and the gate passes it).
            if summary.ok and regressed:
                return False, (f"gate (--fail-on all): failed, {regressed} case(s) dropped more than "
                               f"--max-drop {self.max_drop:g}")
            return summary.ok and stopped is None, f"gate (--fail-on all): {'passed' if summary.ok else 'failed'}"
        if summary.total == 0:
            return False, "gate (--fail-on regression): failed, no case ran"
        if summary.not_run:
            return False, f"gate (--fail-on regression): failed, {summary.not_run} case(s) not run (interrupted)"
        if stopped:
            return False, f"gate (--fail-on regression): failed, the run stopped early ({stopped})"
        if regressed:
            return False, f"gate (--fail-on regression): failed, {regressed} case(s) regressed against {self.path}"
        if summary.missing_env:
            return False, (f"gate (--fail-on regression): incomplete, {summary.missing_env} case(s) not run "
                           "(environment variables unset)")
        return True, f"gate (--fail-on regression): passed, no case regressed against {self.path}"


def blocking_regressions(comparison: Comparison) -> list[CaseChange]:
    """The regressions that fail a gate: not a quarantined case's (it never fails the gate), nor a case
    `--skip-missing-env` left out (counted apart: the run is incomplete, exit 5)."""
    return [c for c in comparison.regressed
            if c.head is None or not (c.head.quarantined or outcome(c.head) == NOT_RUN)]


def check_baseline_options(args: argparse.Namespace) -> None:
    """`--fail-on regression` or `--max-drop` without a base is a usage error: there is nothing to
    regress against, and falling back to `all` silently would change what the gate means."""
    fail_on = getattr(args, "fail_on", None) or "all"
    max_drop = getattr(args, "max_drop", None)
    if getattr(args, "baseline", None) is None:
        if fail_on != "all":
            raise UsageError(f"--fail-on {fail_on} needs --baseline BASE.jsonl (the results of the base branch)")
        if max_drop is not None:
            raise UsageError("--max-drop needs --baseline BASE.jsonl (the results of the base branch)")
    elif max_drop is not None and not (math.isfinite(max_drop) and 0 <= max_drop <= 1):
        raise UsageError(f"--max-drop {max_drop} is not in 0..1")


def load_baseline(args: argparse.Namespace, cases: Collection[tuple[str, str]],
                  left_out: Collection[tuple[str, str]] = ()) -> Baseline | None:
    """The base results `--baseline` names, checked against `cases` ((suite, test id) of every case
    of this run, or of the merged shards); None without it. Its options were checked by
    `check_baseline_options`, which `run` and `merge` call before reading anything.

    `left_out`: the cases in the eval files that this run chose not to run (`--test-id`/`--suite`,
    another shard's); their base rows leave the comparison, since the case was not "removed", only
    not run here."""
    path = getattr(args, "baseline", None)
    if path is None:
        return None
    empty = f"--baseline {path} holds no results; run the base branch first (or drop --baseline)"
    every_row = read_previous(path, empty, keep_not_run=True)
    rows = [row for row in every_row if row.failure_reason_code != NOT_RUN_INTERRUPTED]
    if not rows:
        raise UsageError(empty)
    # A base run killed outright: the cases it never wrote would read as "new", which never regresses.
    unfinished = unfinished_runs(every_row)
    if unfinished:
        raise UsageError(f"--baseline {path} is incomplete: {unfinished}")
    # One shard's results as the base of more than that shard: the other shards' cases have no row
    # there, so each would be "new" (a warning under --fail-on regression) though it passed on the
    # base branch. An interrupted base's not-run rows still count as present here: those cases are
    # known to have no result, which is what "new" says.
    missing = missing_shards(every_row)
    lacking = set(cases) - set(left_out) - {(row.suite, row.eval_id) for row in every_row}
    if missing and lacking:
        raise UsageError(f"--baseline {path} holds only part of a sharded run ({missing}), and {len(lacking)} "
                         "case(s) of this run are not in it; they may be in a shard not given and would read as "
                         "new, never as regressed: join the base's shards with `agentv-gate merge` and pass the "
                         "merged results.jsonl")
    if cases and not any((row.suite, row.eval_id) in cases for row in rows):
        example = rows[0]
        raise UsageError(f"--baseline {path} shares no case with this run (its rows are cases like "
                         f"'{example.eval_id}' of {example.suite}); is it the results file of these eval files?")
    kept = [row for row in rows if (row.suite, row.eval_id) not in left_out]
    return Baseline(Path(path), kept, getattr(args, "fail_on", None) or "all", getattr(args, "max_drop", None))


@dataclass
class BaselineReport:
    """What the reports show of the comparison, worked out once at the end of the run."""

    comparison: Comparison
    ok: bool
    gate_line: str
    warn_only: tuple[str, ...]

    @property
    def markdown(self) -> str:
        return comparison_markdown(self.comparison, self.gate_line)

    @property
    def html(self) -> str:
        return comparison_html(self.comparison, self.gate_line)

    def print_console(self, quiet: bool) -> None:
        shown: tuple[Status, ...] = ("regressed",) if quiet else ("regressed", "fixed", "still failing", "new",
                                                                  "removed")
        print(redact("\n".join(console_lines(self.comparison, shown) + [f"agentv-gate: {self.gate_line}"])))


def baseline_report(baseline: Baseline, results: Sequence[ReportedCase], summary: Summary,
                    stopped: str | None) -> BaselineReport:
    comparison = baseline.compare(results)
    ok, line = baseline.verdict(summary, comparison, stopped)
    return BaselineReport(comparison, ok, line, WARN_ONLY if baseline.fail_on == "regression" else ())
