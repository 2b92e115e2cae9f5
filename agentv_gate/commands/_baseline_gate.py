"""`run --baseline BASE.jsonl`: judge this change, not the history of main.

With `--fail-on all` (the default) the verdict is today's: every case must pass; the base only
adds what the change did to each case to the reports. With `--fail-on regression` and a single
trial a side, the gate fails only for a case that passed on the base and does not pass now (or
dropped more than `--max-drop`), so a case already failing on main does not block an unrelated
pull request. With several trials a side (`--trials N` on both runs), the paired test decides
instead (`report.paired`): the suite's pass rate fell beyond chance at `--alpha`; with
`--fail-on case-regression` a case whose own drop is significant fails it too, and with
`--fail-on inconclusive` a case whose pass rate fell without significance as well. A case the
`--history` file shows flipping on an unchanged digest is flaky: one trial's drop does not fail
the gate for it, only the test.

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

from ..errors import EXIT_FAILED, EXIT_NOT_RUN, EXIT_OK, UsageError
from ..execution.stop import NOT_RUN_INTERRUPTED
from ..models import CaseResult
from ..redaction import redact
from ..report import Summary, paired
from ..report.comparison import (
    CaseChange,
    Comparison,
    Status,
    compare_results,
    comparison_html,
    comparison_markdown,
    console_lines,
)
from ..report.jsonl import missing_shards, unfinished_runs
from ..report.rows import NOT_RUN, QUARANTINED, ReportedCase, outcome
from ..report.text import inert_log_text, one_line
from ._previous import read_previous

MAX_GUARD_TRIALS = 1000
"""The most head trials `--max-trials` may ask of one case."""
WARN_ONLY = ("still failing (also on base)", "new")
"""With `--fail-on regression`, failures labelled so are annotated as warnings: they do not fail the gate."""
BROKEN = "regression (per-case guard)"
"""The per-case guard's label: never quiet under any `--fail-on` with a base."""
FLAKY = "regressed (flaky)"
"""A single-trial regression of a case the history shows flipping: said, annotated as a warning."""


@dataclass
class Baseline:
    path: Path
    rows: list[CaseResult]
    fail_on: str
    max_drop: float | None
    alpha: float = paired.DEFAULT_ALPHA
    flaky: frozenset[tuple[str, str]] = frozenset()
    """(suite, test id) of cases that flipped in the `--history` file on the base's digest."""
    max_trials: int | None = None
    """`--max-trials`: the head trials the per-case guard decides a case on (None: its default)."""

    def compare(self, results: Sequence[ReportedCase]) -> Comparison:
        return compare_results(self.rows, results, self.max_drop)

    def test(self, comparison: Comparison) -> paired.SuiteTest | paired.NoTest:
        return paired.paired_test(comparison, self.alpha, self.flaky, self.max_trials)

    def flaky_regressions(self, comparison: Comparison) -> list[str]:
        """Ids of cases that regressed on one trial and are flaky in the history."""
        return [c.row.eval_id for c in blocking_regressions(comparison) if (c.row.suite, c.row.eval_id) in self.flaky]

    def verdict(self, summary: Summary, comparison: Comparison, stopped: str | None,
                test: paired.SuiteTest | paired.NoTest | None = None) -> tuple[bool, str]:
        """(gate passed, one line saying why) for `--fail-on` as given."""
        flaky = self.flaky_regressions(comparison)
        regressed = len(blocking_regressions(comparison))
        if self.fail_on == "all":
            # A case regressed while every case passes: it only dropped more than --max-drop, which
            # must count here too (else the flag labels it and the gate passes it).
            if summary.ok and regressed:
                return False, (f"gate (--fail-on all): failed, {regressed} case(s) dropped more than "
                               f"--max-drop {self.max_drop:g}")
            return summary.ok and stopped is None, f"gate (--fail-on all): {'passed' if summary.ok else 'failed'}"
        gate = f"gate (--fail-on {self.fail_on})"
        if summary.total == 0:
            return False, f"{gate}: failed, no case ran"
        if summary.not_run:
            return False, f"{gate}: failed, {summary.not_run} case(s) not run (interrupted)"
        if stopped:
            return False, f"{gate}: failed, the run stopped early ({stopped})"
        incomplete = (f"{gate}: incomplete, {summary.missing_env} case(s) not run (environment variables unset)"
                      if summary.missing_env else None)
        if isinstance(test, paired.SuiteTest):
            passed, why = paired_verdict(gate, self.fail_on, test, self.path)
            return (False, incomplete) if passed and incomplete else (passed, why)
        if regressed - len(flaky):
            return False, f"{gate}: failed, {regressed - len(flaky)} case(s) regressed against {self.path}"
        if incomplete:
            return False, incomplete
        if flaky:
            return True, (f"{gate}: passed, no case regressed against {self.path} but {len(flaky)} flaky one(s) on "
                          f"a single trial ({', '.join(one_line(i) for i in flaky[:5])}): only a paired test "
                          "(--trials N on both sides) may fail the gate for a flaky case")
        return True, f"{gate}: passed, no case regressed against {self.path}"


def paired_verdict(gate: str, fail_on: str, test: paired.SuiteTest, against: Path) -> tuple[bool, str]:
    """(passed, why) when a paired test was possible: the suite test decides `regression`; the case
    labels add to it under `case-regression` and `inconclusive`."""
    rate = test.pass_rate.describe(100, " points") if test.pass_rate else "n/a"
    level = f"{test.suite_alpha:.3g} (alpha {test.alpha:g} less the per-case guard's share)"
    if test.dropped:
        drivers = ", ".join(f"{one_line(c.change.row.eval_id)} ({c.counts()}, p={c.p:.2g})"
                            for c in test.drivers()[:5])
        return False, (f"{gate}: failed, the pass rate fell against {against}: {rate}, p={test.p_drop:.3g} "
                       f"<= {level}; largest drops: {drivers}")
    cases = test.with_label("regression")
    if cases and fail_on in ("case-regression", "inconclusive"):
        return False, (f"{gate}: failed, {len(cases)} case(s) regressed significantly (Fisher, BH q <= "
                       f"{test.alpha:g}): " + ", ".join(f"{one_line(c.change.row.eval_id)} ({c.counts()})"
                                                        for c in cases[:5]))
    broken = test.guarded("broken")
    if broken:
        return False, (f"{gate}: failed, {len(broken)} case(s) fail beyond what the base allows (per-case guard, "
                       f"one-sided Fisher p <= {test.guard_level:.2g} each, or every head trial failed where every "
                       "base trial passed): " + ", ".join(f"{one_line(c.change.row.eval_id)} ({c.counts()}, "
                                                         f"p={c.p_guard:.2g})" for c in broken[:5]))
    unsure = test.with_label("inconclusive")
    if unsure and fail_on == "inconclusive":
        return False, (f"{gate}: failed, {len(unsure)} case(s) inconclusive (pass rate fell, not "
                       "significantly): " + ", ".join(f"{one_line(c.change.row.eval_id)} ({c.counts()})"
                                                      for c in unsure[:5]))
    listed = f"; {len(unsure)} inconclusive case(s) listed" if unsure else ""
    suspicious = test.guarded("suspicious")
    if suspicious:
        listed += f"; {len(suspicious)} suspicious case(s) (the per-case guard could not decide them) listed"
    return True, (f"{gate}: passed, no significant drop against {against} (pass rate {rate}, "
                  f"p={test.p_drop:.3g} > {level}){listed}")




def check_alpha(alpha: float | None) -> None:
    if alpha is not None and not (math.isfinite(alpha) and 0 < alpha < 1):
        raise UsageError(f"--alpha {alpha} is not a probability strictly between 0 and 1")
    if alpha is not None and alpha / 2 == 0:  # the two-sided interval's tail would be no float at all
        raise UsageError(f"--alpha {alpha} is too small to compute with (use 1e-300 or more)")


def check_max_trials(max_trials: int | None) -> None:
    if max_trials is not None and not 2 <= max_trials <= MAX_GUARD_TRIALS:
        raise UsageError(f"--max-trials {max_trials} is not in 2..{MAX_GUARD_TRIALS}")


def blocking_regressions(comparison: Comparison) -> list[CaseChange]:
    """The regressions that fail a gate: not a quarantined failure's (it never fails the gate; a quarantined
    error still does), nor a case `--skip-missing-env` left out (counted apart: the run is incomplete, exit 5)."""
    return [c for c in comparison.regressed
            if c.head is None or outcome(c.head) not in (QUARANTINED, NOT_RUN)]


def check_baseline_options(args: argparse.Namespace) -> None:
    """`--fail-on regression`, `--max-drop`, `--alpha` or `--history` without a base is a usage error:
    there is nothing to regress against, and falling back to `all` silently would change what the
    gate means."""
    fail_on = getattr(args, "fail_on", None) or "all"
    max_drop = getattr(args, "max_drop", None)
    check_alpha(getattr(args, "alpha", None))
    max_trials = getattr(args, "max_trials", None)
    check_max_trials(max_trials)
    if getattr(args, "baseline", None) is None:
        if fail_on != "all":
            raise UsageError(f"--fail-on {fail_on} needs --baseline BASE.jsonl (the results of the base branch)")
        for flag, value in (("--max-drop", max_drop), ("--alpha", getattr(args, "alpha", None)),
                            ("--history", getattr(args, "history", None)), ("--max-trials", max_trials)):
            if value is not None:
                raise UsageError(f"{flag} needs --baseline BASE.jsonl (the results of the base branch)")
    elif max_drop is not None and not (math.isfinite(max_drop) and 0 <= max_drop <= 1):
        raise UsageError(f"--max-drop {max_drop} is not in 0..1")


def read_history(path: Path | None, base: Sequence[CaseResult]) -> frozenset[tuple[str, str]]:
    """The flaky cases of `--history` (results rows of earlier runs, e.g. main's, one file after the
    other): none without it."""
    if path is None:
        return frozenset()
    history = read_previous(path, f"--history {path} holds no results rows")
    return frozenset(paired.flaky_cases(history, base))


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
    alpha = getattr(args, "alpha", None)
    return Baseline(Path(path), kept, getattr(args, "fail_on", None) or "all", getattr(args, "max_drop", None),
                    paired.DEFAULT_ALPHA if alpha is None else alpha,
                    read_history(getattr(args, "history", None), kept), getattr(args, "max_trials", None))


@dataclass
class BaselineReport:
    """What the reports show of the comparison, worked out once at the end of the run."""

    comparison: Comparison
    ok: bool
    gate_line: str
    warn_only: tuple[str, ...]
    test: paired.SuiteTest | paired.NoTest | None = None
    flaky: frozenset[tuple[str, str]] = frozenset()
    incomplete: bool = False
    """The gate failed only because cases were left out (`--skip-missing-env`): exit 5, not 1."""

    @property
    def markdown(self) -> str:
        return comparison_markdown(self.comparison, self.gate_line) + (
            paired.markdown(self.test) if self.test else "")

    @property
    def html(self) -> str:
        return comparison_html(self.comparison, self.gate_line) + (paired.html_section(self.test) if self.test else "")

    def labels(self) -> dict[tuple[str, str, str], str]:
        """Each head row's label for its annotation: the paired label when there is a paired test,
        `regressed (flaky)` for a flaky case's single-trial regression, else the case-by-case status."""
        labels = self.comparison.labels()
        if isinstance(self.test, paired.SuiteTest):
            for case in self.test.cases:
                head = case.change.head
                if head is not None:
                    labels[(head.suite, head.eval_id, head.target)] = (
                        BROKEN if paired.case_guard(case) == "broken" else case.label + (" (flaky)" if case.flaky else ""))
        for change in self.comparison.regressed:
            head = change.head
            if head is not None and (head.suite, head.eval_id) in self.flaky:
                labels[(head.suite, head.eval_id, head.target)] = FLAKY
        return labels

    def print_console(self, quiet: bool) -> None:
        shown: tuple[Status, ...] = ("regressed",) if quiet else ("regressed", "fixed", "still failing", "new",
                                                                  "removed")
        extra = paired.console_lines(self.test, quiet) if self.test else []
        # the gate line names cases (a pull request's text): inert in a CI log
        print(redact("\n".join(console_lines(self.comparison, shown) + extra
                               + [inert_log_text(f"agentv-gate: {self.gate_line}")])))


def warn_only(fail_on: str, test: paired.SuiteTest | paired.NoTest) -> tuple[str, ...]:
    """The labels annotated as warnings under `fail_on`: what cannot fail the gate by itself."""
    if fail_on == "all":
        return ()
    quiet: tuple[str, ...] = (*WARN_ONLY, FLAKY)
    if isinstance(test, paired.SuiteTest):
        # the suite test decides under `regression`: a case label only informs
        quiet += ("unchanged", "improvement", "unchanged (flaky)", "improvement (flaky)")
        if fail_on != "inconclusive" and not test.dropped:  # a drop's cases are its errors
            quiet += ("inconclusive", "inconclusive (flaky)")
        if fail_on == "regression" and not test.dropped:
            quiet += ("regression", "regression (flaky)")
    return quiet


def gate_exit(against: BaselineReport | None, summary: Summary, stopped: str | None) -> int:
    """The one place a run's exit code is decided: 0 only for a pass, 5 when nothing failed but cases
    were left out (`--skip-missing-env`), 1 for every failure (a regression, a case not run on an
    interrupted or `--max-failures`-stopped run, a failing case under `--fail-on all`)."""
    if against is not None:
        if against.ok:
            return EXIT_OK
        only_unrun = against.incomplete or (
            summary.incomplete and stopped is None and not blocking_regressions(against.comparison))
        return EXIT_NOT_RUN if only_unrun else EXIT_FAILED
    if summary.incomplete and stopped is None:
        return EXIT_NOT_RUN  # nothing failed, but not everything ran: never the exit of a pass
    return EXIT_OK if summary.ok and stopped is None else EXIT_FAILED


def baseline_report(baseline: Baseline, results: Sequence[ReportedCase], summary: Summary,
                    stopped: str | None) -> BaselineReport:
    comparison = baseline.compare(results)
    test = baseline.test(comparison)
    ok, line = baseline.verdict(summary, comparison, stopped, test)
    incomplete = not ok and line.startswith(f"gate (--fail-on {baseline.fail_on}): incomplete,")
    return BaselineReport(comparison, ok, line, warn_only(baseline.fail_on, test), test, baseline.flaky, incomplete)
