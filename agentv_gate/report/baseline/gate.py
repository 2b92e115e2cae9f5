"""`run --baseline BASE.jsonl`: judge this change, not the history of main.

With `--fail-on all` (the default) the verdict is today's: every case must pass; the base only
adds what the change did to each case to the reports. With `--fail-on regression` and a single
trial a side, the gate fails only for a case that passed on the base and does not pass now (or
dropped more than `--max-drop`), so a case already failing on main does not block an unrelated
pull request. With several trials a side (`--trials N` on both runs), the paired test decides
instead (`paired`): the suite's pass rate fell beyond chance at `--alpha`; with
`--fail-on case-regression` a case whose own drop is significant fails it too, and with
`--fail-on inconclusive` a case whose pass rate fell without significance as well. A case the
`--history` file shows flipping on an unchanged digest is flaky: one trial's drop does not fail
the gate for it, only the test.

Never a wrong pass: a run cut short, a case not run (`--max-failures`) or a run with no case at
all still fails. `decide` is the one verdict function, `gate_exit` the one place the exit code is
decided; what the reports make of the verdict is `render`'s, reading the options and files
`commands._baseline`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ...base.defaults import DEFAULT_ALPHA
from ...errors import EXIT_FAILED, EXIT_NOT_RUN, EXIT_OK
from ...execution.stop import BUDGET_EXCEEDED, COST_LIMITED, ERROR_THRESHOLD_EXCEEDED, NOT_RUN_INTERRUPTED
from ...models import CaseResult
from .. import Summary
from ..rows import ADVISORY, NOT_RUN, QUARANTINED, ReportedCase, outcome
from ..text import one_line
from .compare import NO_BASE_RESULT, UNKNOWN_ON_BASE

if TYPE_CHECKING:
    from . import paired
    from .compare import CaseChange, Comparison

# paired (and compare's functions) are imported where a base is compared: every run reads `gate_exit`, only
# a run against a base (`--baseline`) needs the comparison and the paired test; compare.py is small.

WARN_ONLY = ("still failing (also on base)", "new")
"""With `--fail-on regression`, failures labelled so are annotated as warnings: they do not fail the gate."""
BROKEN = "regression (per-case guard)"
"""The per-case guard's label: never quiet under any `--fail-on` with a base."""
FLAKY = "regressed (flaky)"
"""A single-trial regression of a case the history shows flipping: said, annotated as a warning."""
NOT_DECIDED = "not decided against the base"
"""A case that passed on the base and is failed now only by judges below their floor: annotated as a warning."""
CUT_SHORT = "not decided (the per-case guard's re-runs were stopped)"
"""A case the guard could not decide because its re-runs were stopped (`RERUNS_STOPPED`): a run that stopped
before deciding a case fails, as one that stopped before running it does."""
HELD = (BROKEN, CUT_SHORT, "regression", "regression (flaky)", "inconclusive", "inconclusive (flaky)")
"""The paired labels of a head whose pass rate fell: where not quiet under `--fail-on` (`warn_only`), the
gate fails the change on that case even when its row passed its own mark (1 of 3 trials, pass_at_k)."""


@dataclass
class Baseline:
    path: Path
    rows: list[CaseResult]
    fail_on: str
    max_drop: float | None
    alpha: float = DEFAULT_ALPHA
    flaky: frozenset[tuple[str, str]] = frozenset()
    """(suite, test id) of cases that flipped in the `--history` file on the base's digest."""
    max_trials: int | None = None
    """`--max-trials`: the head trials the per-case guard decides a case on (None: its default)."""
    earlier: Mapping[tuple[str, str], tuple[bool, ...]] = field(default_factory=dict)
    """(suite, test id) -> the case's trials in the `--history` file on the base's digest: the guard's base evidence."""
    unrun: Sequence[CaseResult] = ()
    """The rows of cases the base run was interrupted before: compared (a renamed case pairs with its old row,
    and reads as new), never counted in the base's own figures (`rows`)."""
    who: str = ""
    """Who states the verdict (`compare`); the gate's own lines say `gate (--fail-on MODE)`."""
    frame: Sequence[CaseResult] | None = None
    """In one shard of a sharded run: the base rows of every shard's cases. The merge, the required check,
    decides each case against the whole base at the whole run's level; a shard that stopped re-running a
    case at its own (looser) level left the merge a case it could only call suspicious. None: a whole run."""

    @property
    def name(self) -> str:
        return self.who or f"gate (--fail-on {self.fail_on})"

    def unknown_on_base(self, comparison: Comparison) -> list[CaseChange]:
        return unknown_on_base(comparison)

    def compare(self, results: Sequence[ReportedCase]) -> Comparison:
        from .compare import compare_results

        return compare_results([*self.rows, *self.unrun], results, self.max_drop)

    def flaky_in(self, comparison: Comparison) -> frozenset[tuple[str, str]]:
        """The flaky cases the change left as they were: flips of a version the change edited excuse nothing."""
        from . import paired

        return paired.same_version(comparison, self.flaky)

    def test(self, comparison: Comparison) -> paired.SuiteTest | paired.NoTest:
        from . import paired

        return paired.paired_test(comparison, self.alpha, self.flaky_in(comparison), self.max_trials, self.earlier,
                                  self.frame)

    def flaky_regressions(self, comparison: Comparison) -> list[str]:
        """Ids of cases that regressed on one trial and are flaky in the history (in the version the head judged)."""
        flaky = self.flaky_in(comparison)
        return [c.row.eval_id for c in blocking_regressions(comparison) if (c.row.suite, c.row.eval_id) in flaky]

    def verdict(self, summary: Summary, comparison: Comparison, stopped: str | None,
                test: paired.SuiteTest | paired.NoTest | None = None) -> tuple[bool, str]:
        """(gate passed, one line saying why) for `--fail-on` as given."""
        from . import paired

        flaky = self.flaky_regressions(comparison)
        regressed = len(blocking_regressions(comparison))
        if self.fail_on == "all":
            # A case regressed while every case passes: it only dropped more than --max-drop, which
            # must count here too (else the flag labels it and the gate passes it).
            if summary.ok and regressed:
                return False, (f"gate (--fail-on all): failed, {regressed} case(s) dropped more than "
                               f"--max-drop {self.max_drop:g}")
            return summary.ok and stopped is None, f"gate (--fail-on all): {'passed' if summary.ok else 'failed'}"
        gate = self.name
        if summary.total == 0:
            return False, f"{gate}: failed, no case ran"
        if summary.not_run:
            return False, f"{gate}: failed, {summary.not_run} case(s) not run (interrupted)"
        if stopped:
            return False, f"{gate}: failed, the run stopped early ({stopped})"
        if summary.unanswered:  # a new case erroring is only "new" to the comparison: it was never judged
            return False, (f"{gate}: failed, {summary.unanswered} case(s) need new answers (not in the replayed "
                           "recording): they were not judged")
        unknown = self.unknown_on_base(comparison)
        if unknown:
            return False, f"{gate}: failed, {unknown_line(unknown)}"
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
                       f"posterior-predictive p <= {test.guard_level_text()} each against the whole base, or every head "
                       "trial failed where every "
                       "base trial passed): " + ", ".join(f"{one_line(c.change.row.eval_id)} ({c.counts()}, "
                                                         f"p={c.p_guard:.2g})" for c in broken[:5]))
    cut = test.cut_short()
    if cut:
        why = "; ".join(sorted({stop_reason(c.change.head) for c in cut if c.change.head is not None}))
        return False, (f"{gate}: failed, the per-case guard's re-runs stopped ({why}) before deciding {len(cut)} "
                       "case(s): " + ", ".join(f"{one_line(c.change.row.eval_id)} ({c.counts()})" for c in cut[:5]))
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




RERUNS_STOPPED = {
    BUDGET_EXCEEDED: "its budget was spent: --budget-usd or the suite's total_budget_usd",
    COST_LIMITED: "the case's cost_limit_usd was reached",
    NOT_RUN_INTERRUPTED: "the run was interrupted",
    ERROR_THRESHOLD_EXCEEDED: "its suite stopped on an execution error under fail_on_error",
}
"""Each `reruns_stopped` code, as the gate's line says it."""


def stop_reason(head: ReportedCase) -> str:
    """What stopped the guard's re-runs of the case, for people."""
    code = str(getattr(head, "reruns_stopped", None))
    return RERUNS_STOPPED.get(code, one_line(code))


def blocking_regressions(comparison: Comparison) -> list[CaseChange]:
    """The regressions that fail a gate: not a quarantined failure's (it never fails the gate; a quarantined
    error still does), nor a case `--skip-missing-env` left out (counted apart: the run is incomplete, exit 5),
    nor an advisory one (failed only by a judge below its floor: not decided, listed)."""
    return [c for c in comparison.regressed
            if c.head is None or outcome(c.head) not in (QUARANTINED, NOT_RUN, ADVISORY)]


@dataclass
class Verdict:
    """The gate's verdict against a base, worked out once at the end of the run: what every report and
    the exit code read."""

    comparison: Comparison
    ok: bool
    gate_line: str
    warn_only: tuple[str, ...]
    test: paired.SuiteTest | paired.NoTest | None = None
    flaky: frozenset[tuple[str, str]] = frozenset()
    incomplete: bool = False
    """The gate failed only because cases were left out (`--skip-missing-env`): exit 5, not 1."""
    fail_on: str = "all"
    """The `--fail-on` mode that decided it: under `all` the rows' own verdicts decide, never a case's fall."""
    unknown: tuple[CaseChange, ...] = ()
    """The cases the base never judged that do not pass now (`Baseline.unknown_on_base`)."""

    def labels(self) -> dict[tuple[str, str, str], str]:
        """Each head row's label for its annotation: the paired label when there is a paired test,
        `regressed (flaky)` for a flaky case's single-trial regression, else the case-by-case status."""
        from . import paired

        labels = self.comparison.labels()
        if isinstance(self.test, paired.SuiteTest):
            for case in self.test.cases:
                head = case.change.head
                if head is not None:
                    guard = paired.case_guard(case)
                    labels[(head.suite, head.eval_id, head.target)] = (
                        BROKEN if guard == "broken" else CUT_SHORT if paired.cut_short(case)
                        else case.label + (" (flaky)" if case.flaky else ""))
        for change in self.comparison.regressed:
            head = change.head
            if head is not None and (head.suite, head.eval_id) in self.flaky:
                labels[(head.suite, head.eval_id, head.target)] = FLAKY
            if head is not None and outcome(head) == ADVISORY:
                labels[(head.suite, head.eval_id, head.target)] = NOT_DECIDED
        for change in self.unknown:
            head = change.head
            assert head is not None
            labels[(head.suite, head.eval_id, head.target)] = UNKNOWN_ON_BASE
        return labels

    def held_against(self) -> dict[tuple[str, str, str], str]:
        """(suite, test id, target) of each head row that passed its own mark but that the failed gate holds
        against the change, with why: a case the per-case guard finds broken, a significant or (under
        `--fail-on inconclusive`, or in a suite-level drop) any fall of its pass rate. Empty when it passed."""
        from . import paired

        if self.ok or self.fail_on == "all" or not isinstance(self.test, paired.SuiteTest):
            return {}
        labels = self.labels()
        held = {}
        for case in self.test.cases:
            head = case.change.head
            if head is None or head.verdict != "pass":
                continue
            key = (head.suite, head.eval_id, head.target)
            label = labels.get(key)
            if label in HELD and label not in self.warn_only:
                held[key] = f"{label} against the base: {case.counts()} passing trials; the gate fails the change on it"
        return held

    def shown(self, results: Sequence[ReportedCase]) -> list[ReportedCase]:
        """The rows as every report shows them: a row the gate holds against the change (`held_against`) is a
        failure there, its reason first among its misses, so no report, dashboard or output reads it as a
        pass while the gate fails on it. The results file keeps the case's own verdict."""
        held = self.held_against()
        if not held:
            return list(results)
        return [_as_failed(row, held[key]) if (key := (row.suite, row.eval_id, row.target)) in held else row
                for row in results]


def _as_failed(row: ReportedCase, why: str) -> ReportedCase:
    fields = {"verdict": "fail", "misses": (why, *row.misses)}
    if isinstance(row, CaseResult):
        return row.model_copy(update={**fields, "misses": list(fields["misses"])})
    return replace(row, **fields)  # type: ignore[type-var]


def warn_only(fail_on: str, test: paired.SuiteTest | paired.NoTest) -> tuple[str, ...]:
    """The labels annotated as warnings under `fail_on`: what cannot fail the gate by itself."""
    from . import paired

    if fail_on == "all":
        return ()
    quiet: tuple[str, ...] = (*WARN_ONLY, FLAKY, NOT_DECIDED)
    if isinstance(test, paired.SuiteTest):
        # the suite test decides under `regression`: a case label only informs
        quiet += ("unchanged", "improvement", "unchanged (flaky)", "improvement (flaky)")
        if fail_on != "inconclusive" and not test.dropped:  # a drop's cases are its errors
            quiet += ("inconclusive", "inconclusive (flaky)")
        if fail_on == "regression" and not test.dropped:
            quiet += ("regression", "regression (flaky)")
    return quiet


def gate_exit(against: Verdict | None, summary: Summary, stopped: str | None) -> int:
    """The one place a run's exit code is decided: 0 only for a pass, 5 when nothing failed but cases
    were left out (`--skip-missing-env`), 1 for every failure (a regression, a case not run on an
    interrupted or `--max-failures`-stopped run, a failing case under `--fail-on all`)."""
    if against is not None:
        if against.ok:
            return EXIT_OK
        return EXIT_NOT_RUN if against.incomplete else EXIT_FAILED
    if summary.incomplete and stopped is None:
        return EXIT_NOT_RUN  # nothing failed, but not everything ran: never the exit of a pass
    return EXIT_OK if summary.ok and stopped is None else EXIT_FAILED



def decide(baseline: Baseline, results: Sequence[ReportedCase], summary: Summary, stopped: str | None) -> Verdict:
    """The one verdict function: the comparison, the paired test and `--fail-on`'s reading of them."""
    comparison = baseline.compare(results)
    test = baseline.test(comparison)
    ok, line = baseline.verdict(summary, comparison, stopped, test)
    # Exit 5 only when cases left out are all that failed the gate: never beside a paired drop, a guard's
    # `broken` or a regression, each of which fails `--fail-on regression` whether or not a case was left out.
    incomplete = not ok and (line.startswith(f"{baseline.name}: incomplete,") or (
        baseline.fail_on == "all" and summary.incomplete and stopped is None and not blocking_regressions(comparison)))
    unknown = tuple(baseline.unknown_on_base(comparison)) if baseline.fail_on != "all" else ()
    return Verdict(comparison, ok, line, warn_only(baseline.fail_on, test), test, baseline.flaky_in(comparison), incomplete,
                   baseline.fail_on, unknown)


def unknown_on_base(comparison: Comparison) -> list[CaseChange]:
    """The cases the base never judged (`unjudged_why`) that the head judged and did not pass: "new" or "still
    failing" would let them by, though the change may be what broke them. A head that did not judge the case either
    (refused as on the base: its suite's error, a dependency), a quarantined or an advisory one decides nothing."""
    return [c for c in comparison.changes if c.head is not None and unjudged_why(c) is not None
            and c.head.failure_reason_code is None and outcome(c.head) not in ("pass", QUARANTINED, ADVISORY)]


def unjudged_why(change: CaseChange) -> str | None:
    """Why the base holds no judgement of the change's case, None when it does: the case is judged by the one
    base row it is paired with (its own target's, or the row it was renamed from; an interrupted base's rows
    are compared too, `Baseline.unrun`), whose `failure_reason_code` may say it judged nothing. Another target's
    verdict, or a row of its new name, says nothing of it."""
    return NO_BASE_RESULT.get(change.base.failure_reason_code or "") if change.base is not None else None


def unjudged_reasons(unknown: Sequence[CaseChange]) -> str:
    """Why the base never judged the cases of `unknown`, each reason once: `; `-joined, sorted."""
    return "; ".join(sorted({why for c in unknown if (why := unjudged_why(c)) is not None}))


def unknown_line(unknown: Sequence[CaseChange]) -> str:
    return (f"{len(unknown)} case(s) do not pass now and have no result on the base ({unjudged_reasons(unknown)}): "
            + ", ".join(one_line(c.row.eval_id) for c in unknown[:5])
            + "; the base cannot show this change did not break them (run the base again)")


__all__ = ["BROKEN", "CUT_SHORT", "FLAKY", "NO_BASE_RESULT", "UNKNOWN_ON_BASE", "WARN_ONLY", "Baseline", "Verdict",
           "blocking_regressions", "decide", "gate_exit", "paired_verdict", "stop_reason",
           "unjudged_reasons", "unjudged_why", "unknown_line", "unknown_on_base", "warn_only"]
