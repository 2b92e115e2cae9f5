"""Properties of the verdict under `--baseline`, across the dimensions that meet there: trials per
side (1, k, unequal), stable or flaky base cases, base cases their run never started, interrupted
(`planned` above the rows) and `--max-failures`-stopped runs, cases `--skip-missing-env` left out,
quarantined and advisory cases, each `--fail-on` mode and alpha. The real decision code runs
(`baseline_report`, `gate_exit`) on real result rows; the CLI runs the same table in
test_case_guard_cli.py and test_paired_cli.py.

Each invariant is one the gate promises whatever meets: no stable case broken in every trial
passes, no case the base never judged that fails now passes, no case that did not run passes,
modes are monotone, exit codes keep their meaning."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentv_gate.errors import EXIT_FAILED, EXIT_NOT_RUN, EXIT_OK
from agentv_gate.execution.stop import NOT_RUN_MISSING_ENV, STOPPED_BY_MAX_FAILURES
from agentv_gate.models import CaseResult
from agentv_gate.report import summarise
from agentv_gate.report.baseline.gate import Baseline, gate_exit
from agentv_gate.report.baseline.paired import SuiteTest
from agentv_gate.report.baseline.render import baseline_report
from agentv_gate.report.rows import ReportedCase, outcome

MODES = ("regression", "case-regression", "inconclusive")
"""Each stricter than the one before: it fails whenever a looser one does."""


def row(case: str, passes: int, trials: int, head: str = "ran", rule: str = "mean") -> CaseResult:
    """A results row of `trials` trials, the first `passes` passing; `head` says how it ended; `rule` how
    the trials make the verdict (`mean`: every trial must pass here; `pass_at_k`, what `--trials N` runs
    by default: any one passing trial passes the row)."""
    outcomes = [1.0] * passes + [0.0] * (trials - passes)
    passed = passes == trials or (rule == "pass_at_k" and passes > 0)
    verdict = "pass" if passed else ("error" if head == "quarantined-error" else "fail")
    extra: dict[str, object] = {}
    if head == "missing-env":
        verdict, outcomes, extra = "error", [0.0], {"failure_reason_code": NOT_RUN_MISSING_ENV}
        trials = 1
    elif head == "not-started":  # a base row of a case its run never started (--max-failures)
        verdict, outcomes, extra = "error", [0.0], {"failure_reason_code": STOPPED_BY_MAX_FAILURES}
        trials = 1
    elif head.startswith("quarantined") and verdict != "pass":
        extra = {"quarantined": "flaky upstream"}
    elif head == "advisory" and verdict != "pass":  # failed only by a judge below its floor (gate.yaml)
        extra = {"advisory": "advisory: judge 'tone' agrees with humans at kappa 0.41 < 0.6"}
    return CaseResult(eval_id=case, suite="evals/s.eval.yaml", file="evals/s.eval.yaml", line=3 + int(case[1:]),
                      verdict=verdict, score=sum(outcomes) / len(outcomes),
                      trials=[{"attempt": i + 1, "score": s, "verdict": "pass" if s else "fail"}
                              for i, s in enumerate(outcomes)] if trials > 1 else None,
                      aggregation={"strategy": rule} if trials > 1 else None, **extra)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Case:
    base_trials: int
    base_passes: int
    head_trials: int
    head_passes: int
    head: str  # ran | missing-env | quarantined | quarantined-error | advisory
    flaky: bool
    judged_on_base: bool = True
    """False: its base run never started it (stopped by --max-failures first)."""
    cut_short: bool = False
    """The head run's budget was spent before the per-case guard's re-runs of it could start."""


@st.composite
def cases(draw: st.DrawFn) -> Case:
    base_trials = draw(st.sampled_from((1, 3, 8)))
    head_trials = draw(st.sampled_from((base_trials, base_trials, 1, 3)))
    return Case(base_trials, draw(st.integers(0, base_trials)), head_trials, draw(st.integers(0, head_trials)),
                draw(st.sampled_from(("ran", "ran", "ran", "ran", "missing-env", "quarantined", "quarantined-error",
                                      "advisory"))),
                draw(st.booleans()), draw(st.sampled_from((True,) * 5 + (False,))),
                draw(st.sampled_from((False,) * 5 + (True,))))


@dataclass(frozen=True)
class Outcome:
    code: int
    line: str
    test: object
    shown: list[ReportedCase]
    """The head rows as the reports show them (`Verdict.shown`)."""


def decide(table: list[Case], fail_on: str, alpha: float, not_run: int, stopped: str | None,
           rule: str = "mean") -> Outcome:
    base = [row(f"c{i}", c.base_passes, c.base_trials, "ran" if c.judged_on_base else "not-started", rule)
            for i, c in enumerate(table)]
    head = [row(f"c{i}", c.head_passes, c.head_trials, c.head, rule) for i, c in enumerate(table)]
    head = [r.model_copy(update={"reruns_stopped": "budget_exceeded"}) if c.cut_short and c.head == "ran" else r
            for r, c in zip(head, table, strict=True)]
    flaky = frozenset(("evals/s.eval.yaml", f"c{i}") for i, c in enumerate(table) if c.flaky)
    baseline = Baseline(Path("base.jsonl"), base, fail_on, None, alpha, flaky)
    summary = summarise(head, len(head) + not_run)
    report = baseline_report(baseline, head, summary, stopped)
    return Outcome(gate_exit(report, summary, stopped), report.gate_line, report.test, report.shown(head))


def stable_broken(table: list[Case]) -> bool:
    """A case that passed every base trial, never flipped in the history, ran on the head and
    failed every head trial."""
    return any(c.base_passes == c.base_trials and not c.flaky and c.head == "ran" and c.head_passes == 0
               for c in table)


def unjudged_fails(table: list[Case]) -> bool:
    """A case its base run never started that ran on the head and did not pass every trial (`mean`)."""
    return any(not c.judged_on_base and c.head == "ran" and c.head_passes < c.head_trials for c in table)


def one_trial_regression(table: list[Case]) -> bool:
    """A single trial on some side of some case the paired test reads, so the case-by-case rule decides, and
    a stable case that passed on the base does not pass on the head."""
    # a case that is no evidence (quarantined, advisory, left out, never judged on the base) leaves the paired test
    return any(min(c.base_trials, c.head_trials) == 1 for c in table
               if c.head in ("ran", "quarantined-error") and c.judged_on_base) and any(
        c.base_passes == c.base_trials and not c.flaky and c.head == "ran" and c.head_passes < c.head_trials
        for c in table)


def broken(n: int, **kw: object) -> list[Case]:
    """`n` stable passing cases, the first broken as `kw` says."""
    return [Case(**{**dict(base_trials=3, base_passes=3, head_trials=3, head_passes=3, head="ran", flaky=False),
                    **(kw if i == 0 else {})}) for i in range(n)]  # type: ignore[arg-type]


TABLES = st.lists(cases(), min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(TABLES, st.sampled_from((0.05, 0.15625, 0.25)), st.integers(0, 1), st.sampled_from((None, "--max-failures 1")))
# one flaky regression excuses no other: a single trial a side, one flaky case and one stable one regress
@example([Case(1, 1, 1, 0, "ran", True), Case(1, 1, 1, 0, "ran", False)], 0.05, 0, None)
# a base of one trial against a head failing all three, or two of three
@example([Case(1, 1, 3, 0, "ran", False), Case(1, 1, 3, 3, "ran", False)], 0.05, 0, None)
@example([Case(1, 1, 3, 1, "ran", False), Case(1, 1, 3, 3, "ran", False)], 0.05, 0, None)
# one stable case of ten broken in every trial: the suite test alone cannot see it (p = 0.5)
@example(broken(10, head_passes=0), 0.05, 0, None)
@example(broken(10, base_trials=5, base_passes=5, head_trials=5, head_passes=0), 0.05, 0, None)
# an interrupted run whose every case that ran is unchanged
@example(broken(4, head_passes=3), 0.05, 1, None)
# a case left out by --skip-missing-env beside unchanged ones
@example(broken(4, head="missing-env"), 0.05, 0, None)
# three of three cases fell all the way: the sign flips' p is exactly 1/8, the suite test's level at alpha 5/32
@example([Case(3, 3, 3, 1, "ran", True)] * 3, 0.15625, 0, None)
# a significant regression (8/8 -> 1/8) that the suite test over 5 cases does not see
@example([Case(8, 8, 8, 1, "ran", False)] + [Case(8, 8, 8, 8, "ran", False)] * 4, 0.05, 0, None)
# significant on its own (8/8 -> 2/8, BH q 0.035) where the per-case guard, at its smaller level, clears it
@example([Case(8, 8, 8, 2, "ran", False)] + [Case(8, 8, 8, 8, "ran", False)] * 4, 0.05, 0, None)
# a stable case of ten at 1 of 3 head trials, whose re-runs the spent budget stopped: undecided, not a pass
@example(broken(10, head_passes=1, cut_short=True), 0.05, 0, None)
def test_the_verdict_keeps_its_promises(table: list[Case], alpha: float, not_run: int, stopped: str | None) -> None:
    outcomes = {mode: decide(table, mode, alpha, not_run, stopped) for mode in MODES}
    for mode, out in outcomes.items():
        why = f"--fail-on {mode}: {out.line}"
        assert out.code in (EXIT_OK, EXIT_FAILED, EXIT_NOT_RUN), why
        if out.code == EXIT_OK:
            assert not stable_broken(table), why
            assert not unjudged_fails(table), why  # the base cannot show the change did not break it
            assert not_run == 0 and stopped is None, why  # a case that did not run is never a pass
            assert all(c.head != "missing-env" for c in table), why
        if out.code == EXIT_NOT_RUN:  # 5: nothing failed, cases left out: never after a stop
            assert stopped is None and not_run == 0 and any(c.head == "missing-env" for c in table), why
        if any(c.head == "missing-env" for c in table) and out.code == EXIT_FAILED and not_run == 0 \
                and stopped is None:
            assert "incomplete" not in out.line, why  # 5 is the exit of "incomplete", never 1
        test = out.test
        if isinstance(test, SuiteTest) and test.p_drop <= test.suite_alpha:  # p = its level fails
            assert out.code != EXIT_OK, why
        if isinstance(test, SuiteTest) and test.with_label("regression") and mode != "regression":
            assert out.code != EXIT_OK, why
        if one_trial_regression(table):
            assert out.code != EXIT_OK, why  # one trial on a side: the case-by-case rule decides
        if isinstance(test, SuiteTest) and mode != "all" and any(
                c.change.head is not None and bool(c.change.head.reruns_stopped) for c in test.guarded("suspicious")):
            assert out.code == EXIT_FAILED, why  # a case the spent budget left undecided: the run stopped early
    for looser, stricter in zip(MODES, MODES[1:], strict=False):
        if outcomes[looser].code != EXIT_OK:
            assert outcomes[stricter].code != EXIT_OK, (looser, stricter, outcomes[stricter].line)


@settings(max_examples=200, deadline=None)
@given(TABLES, st.sampled_from(("pass_at_k", "mean")), st.sampled_from((0.05, 0.25)), st.integers(0, 1))
# a stable case of ten passing one head trial of three (pass_at_k passes its row): the guard holds it
@example(broken(10, head_passes=1), "pass_at_k", 0.05, 0)
def test_a_failed_gate_shows_a_failure_in_every_report(table: list[Case], rule: str, alpha: float,
                                                        not_run: int) -> None:
    """JUnit, the annotations, the outputs, the console, report.html and the comment read the rows as
    `Verdict.shown` gives them: when the gate fails, at least one of them is not a pass (or cases never
    ran), so no dashboard shows a failed check as green; when it passes, every row is shown as it ran."""
    for mode in ("all", *MODES):
        out = decide(table, mode, alpha, not_run, None, rule)
        head = [row(f"c{i}", c.head_passes, c.head_trials, c.head, rule) for i, c in enumerate(table)]
        if out.code == EXIT_OK or mode == "all":  # `all`: the rows' own verdicts decide, shown as they ran
            assert [r.verdict for r in out.shown] == [r.verdict for r in head], out.line
        if out.code != EXIT_OK:
            assert not_run or any(outcome(r) != "pass" for r in out.shown), f"--fail-on {mode}: {out.line}"
        for shown, ran in zip(out.shown, head, strict=True):
            assert shown.verdict == ran.verdict or (ran.verdict == "pass" and shown.verdict == "fail")


@settings(max_examples=100, deadline=None)
@given(TABLES)
def test_a_quarantined_error_is_never_counted_as_a_pass(table: list[Case]) -> None:
    head = [row(f"c{i}", c.head_passes, c.head_trials, c.head) for i, c in enumerate(table)]
    summary = summarise(head)
    assert summary.passed == sum(1 for c in table if c.head in ("ran", "quarantined", "quarantined-error", "advisory")
                                 and c.head_passes == c.head_trials)
    assert summary.advisory == sum(1 for c in table if c.head == "advisory" and c.head_passes < c.head_trials)
    errored = sum(1 for c in table if c.head == "quarantined-error" and c.head_passes < c.head_trials)
    assert summary.errors >= errored  # errors are never quarantined: they count, and fail, as errors


@settings(max_examples=150, deadline=None)
@given(TABLES, st.sampled_from((0.05, 0.25)))
@example([Case(3, 3, 3, 0, "advisory", False), Case(3, 3, 3, 3, "ran", False)], 0.05)
@example([Case(1, 1, 1, 0, "advisory", False)], 0.05)
def test_advisory_cases_alone_never_fail_the_gate(table: list[Case], alpha: float) -> None:
    """Not decided: when every head that failed a trial is advisory (a judge below its floor failed it) and
    the run was whole, no mode fails the gate; nor does an advisory case ever count as passed (above)."""
    if any(c.head == "missing-env" for c in table) or any(
            c.head != "advisory" and c.head_passes < c.head_trials for c in table):
        return
    for mode in MODES:
        out = decide(table, mode, alpha, 0, None)
        assert out.code == EXIT_OK, (mode, out.line)


def test_a_case_that_errored_before_any_trial_leaves_the_paired_test_on() -> None:
    """Eight cases fall from 3/3 to 1/3 (each row passes: pass_at_k) beside a case already failing on the
    base whose head errored before any trial (a workspace hook): read as one trial it switched the paired
    test off, and the case-by-case rule, seeing only passing rows and a case still failing, passed the drop."""
    base = [row(f"c{i}", 3, 3, rule="pass_at_k") for i in range(8)] + [row("c8", 0, 3, rule="pass_at_k")]
    head = [row(f"c{i}", 1, 3, rule="pass_at_k") for i in range(8)] + [
        CaseResult(eval_id="c8", suite="evals/s.eval.yaml", file="evals/s.eval.yaml", line=11, verdict="error",
                   score=0.0, error="before_each hook failed")]
    summary = summarise(head)
    report = baseline_report(Baseline(Path("base.jsonl"), base, "regression", None, 0.05), head, summary, None)
    assert isinstance(report.test, SuiteTest), report.gate_line
    assert gate_exit(report, summary, None) == EXIT_FAILED, report.gate_line
    assert "the pass rate fell" in report.gate_line
    assert [r.verdict for r in report.shown(head)] == ["fail"] * 8 + ["error"]
