"""The paired reading of a comparison on real result rows: suite test, case labels, flaky cases."""

from __future__ import annotations

import pytest

from agentv_gate.models import CaseResult
from agentv_gate.report.baseline.compare import compare_results
from agentv_gate.report.baseline.paired import NoTest, SuiteTest, earlier_trials, flaky_cases, paired_test


def row(case: str, passes: int, trials: int, digest: str | None = None,
        strategy: str = "mean") -> CaseResult:
    """A results row of `trials` trials, the first `passes` passing (score 1) and the rest failing (0)."""
    outcomes = [1.0] * passes + [0.0] * (trials - passes)
    return CaseResult(eval_id=case, suite="evals/s.eval.yaml", file="evals/s.eval.yaml", line=3,
                      verdict="pass" if passes else "fail", score=max(outcomes), case_digest=digest,
                      trials=[{"attempt": i + 1, "score": s, "verdict": "pass" if s else "fail"}
                              for i, s in enumerate(outcomes)] if trials > 1 else None,
                      aggregation={"strategy": strategy} if trials > 1 else None)


def test_three_cases_falling_all_the_way_are_case_regressions_but_not_a_suite_drop() -> None:
    """20 cases, 8 trials a side; 3 fall from 8/8 to 0/8. Each is a case-level regression (Fisher
    p = 2/C(16,8), BH over 20), but three sign flips can only reach p = 1/8: the suite test alone
    does not decide from three cases, whatever their size."""
    base = [row(f"c{i}", 8, 8) for i in range(20)]
    head = [row(f"c{i}", 0 if i < 3 else 8, 8) for i in range(20)]
    test = paired_test(compare_results(base, head), alpha=0.05)
    assert isinstance(test, SuiteTest)
    assert [c.change.row.eval_id for c in test.with_label("regression")] == ["c0", "c1", "c2"]
    assert test.cases[0].p == pytest.approx(2 / 12870)
    assert test.cases[0].q == pytest.approx(2 / 12870 * 20 / 3)
    assert test.p_drop == pytest.approx(1 / 8)
    assert not test.dropped
    assert test.pass_rate is not None and test.pass_rate.mean == pytest.approx(-0.15)
    assert test.cases[0].counts() == "8/8 -> 0/8"
    assert len(test.with_label("unchanged")) == 17


def test_many_cases_falling_is_a_suite_drop_and_small_moves_are_inconclusive() -> None:
    base = [row(f"c{i}", 3, 3) for i in range(12)]
    head = [row(f"c{i}", 0 if i < 6 else (2 if i == 6 else 3), 3) for i in range(12)]
    test = paired_test(compare_results(base, head), alpha=0.05)
    assert isinstance(test, SuiteTest)
    assert test.p_drop == pytest.approx(1 / 128)  # 7 cases fell, all must be negative
    assert test.dropped
    assert [c.change.row.eval_id for c in test.drivers()][:6] == ["c0", "c1", "c2", "c3", "c4", "c5"]
    # 3/3 -> 0/3 is p = 0.1: with 3 trials a side no case is significant on its own
    assert test.with_label("regression") == []
    assert len(test.with_label("inconclusive")) == 7
    assert "pass rate -52.8 points (95% CI" in test.headline()


def test_noise_is_no_drop() -> None:
    base = [row(f"c{i}", 2, 3) for i in range(10)]
    head = [row(f"c{i}", 3 if i % 2 else 1, 3) for i in range(10)]  # half up one, half down one
    test = paired_test(compare_results(base, head), alpha=0.05)
    assert isinstance(test, SuiteTest)
    assert not test.dropped and test.p_drop > 0.5
    assert len(test.with_label("inconclusive")) == 5 and len(test.with_label("unchanged")) == 5
    assert all(c.flaky for c in test.cases)  # 2/3 on the base: its own trials disagree


def test_a_single_trial_a_side_is_no_statistical_decision() -> None:
    test = paired_test(compare_results([row("a", 1, 1)], [row("a", 0, 1)]))
    assert isinstance(test, NoTest)
    assert "ran a single trial" in test.line() and test.line().startswith("no statistical decision was possible")


def test_a_base_cut_short_by_pass_at_k_is_not_tested() -> None:
    """AgentV's pass_at_k stops at the first pass: a 1/1 beside 3-trial rows over-states the pass rate."""
    base = [CaseResult(eval_id="a", suite="evals/s.eval.yaml", file="s", line=3, verdict="pass", score=1.0,
                       trials=[{"attempt": 1, "score": 0.0, "verdict": "fail"},
                               {"attempt": 2, "score": 1.0, "verdict": "pass"}],
                       aggregation={"strategy": "pass_at_k"}), row("b", 0, 3, strategy="pass_at_k")]
    head = [row("a", 3, 3), row("b", 3, 3)]
    test = paired_test(compare_results(base, head))
    assert isinstance(test, NoTest) and "stopped at their first passing trial" in test.reason


def test_an_errored_trial_counts_as_a_failure() -> None:
    base = [row(f"c{i}", 3, 3) for i in range(6)]
    head = [row(f"c{i}", 3, 3) for i in range(6)]
    for r in head:
        assert r.trials is not None
        r.trials[0] = {"attempt": 1, "score": 1.0, "verdict": "error"}
    test = paired_test(compare_results(base, head))
    assert isinstance(test, SuiteTest) and [c.counts() for c in test.cases][0] == "3/3 -> 2/3"
    assert test.p_drop == pytest.approx(1 / 64)


def test_flaky_cases_come_from_history_of_the_same_digest() -> None:
    base = [row("steady", 1, 1, digest="d1"), row("wobbly", 1, 1, digest="d1"), row("rewritten", 1, 1, digest="d2")]
    history = [row("steady", 1, 1, digest="d1"), row("wobbly", 0, 1, digest="d1"),
               row("rewritten", 0, 1, digest="old")]  # another version of the case: its flips do not count
    assert flaky_cases(history, base) == {("evals/s.eval.yaml", "wobbly")}
    assert flaky_cases([], [row("mixed", 2, 3, digest="d1")]) == {("evals/s.eval.yaml", "mixed")}


def test_the_guards_history_evidence_is_the_same_case_on_the_same_digest_run_by_other_runs() -> None:
    def ran(case: str, passes: int, trials: int, digest: str | None, run: str, **fields: object) -> CaseResult:
        return row(case, passes, trials, digest).model_copy(update={"run_id": run, "timestamp": f"when {run} ran",
                                                                    **fields})

    base = [ran("steady", 3, 3, "d1", "base"), ran("rewritten", 3, 3, "d2", "base"), ran("other", 3, 3, "d3", "base"),
            ran("undigested", 2, 3, None, "base")]
    history = [
        ran("steady", 2, 3, "d1", "main-1"), ran("steady", 3, 3, "d1", "main-2"),
        ran("steady", 3, 3, "d1", "base"),  # the base's own row, appended to the history too: not read twice
        ran("rewritten", 0, 3, "old", "main-1"),  # another version of the case says nothing of this one
        ran("other", 0, 3, "d3", "main-1", target="another-agent"),
        ran("other", 0, 1, "d3", "main-2", failure_reason_code="missing_env", verdict="fail"),  # left out: not run
        ran("other", 0, 1, "d3", "main-3", verdict="error", error="workspace hook failed"),  # no trial ran
        ran("undigested", 1, 2, "d9", "main-1"), ran("undigested", 1, 2, None, "main-2"),
        ran("gone", 1, 3, "d1", "main-1"),
        ran("steady", 3, 3, "d1", "main-3", carried=True),  # --affected-since copied an earlier run's row
        ran("steady", 3, 3, "d1", "main-4", timestamp="when main-2 ran"),  # --rerun-failed kept main-2's row
    ]
    assert earlier_trials(history, base) == {("evals/s.eval.yaml", "steady"): (True, True, False, True, True, True),
                                             ("evals/s.eval.yaml", "undigested"): (True, False)}


def test_a_base_row_carried_from_a_run_in_the_history_is_not_read_twice() -> None:
    first = row("copied", 2, 3, digest="d").model_copy(update={"run_id": "main-1", "timestamp": "2026-12-01T10:00:00Z"})
    base = [first.model_copy(update={"run_id": "main-2", "carried": True})]  # an --affected-since run of main
    other = row("copied", 3, 3, digest="d").model_copy(update={"run_id": "main-0", "timestamp": "2026-11-30T10:00:00Z"})
    assert earlier_trials([other, first, *base], base) == {("evals/s.eval.yaml", "copied"): (True, True, True)}


def test_a_history_row_that_stopped_at_its_first_pass_is_no_evidence() -> None:
    base = [row("case", 3, 3, digest="d")]
    stopped = row("case", 1, 1, digest="d", strategy="pass_at_k").model_copy(update={
        "trials": [{"attempt": 1, "score": 0.0, "verdict": "fail"}, {"attempt": 2, "score": 1.0, "verdict": "pass"}],
        "aggregation": {"strategy": "pass_at_k"}, "run_id": "main-1", "timestamp": "when main-1 ran"})
    whole = row("case", 2, 3, digest="d", strategy="pass_at_k").model_copy(update={"run_id": "main-2",
                                                                                  "timestamp": "when main-2 ran"})
    assert earlier_trials([stopped, whole], base) == {("evals/s.eval.yaml", "case"): (True, True, False)}
