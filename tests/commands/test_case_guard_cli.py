"""The per-case guard through the real CLI: a case stable on the base that breaks in every head trial
fails `--fail-on regression` (and the stricter modes) at any trial count, where the suite-level
sign-flip test over ten cases cannot reach alpha for one case alone."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.commands.test_paired_cli import base_run, project, run, schedule
from tests.helpers.cli import run_cli
from tests.helpers.files import write
from tests.helpers.github_runner import parse_github_output
from tests.helpers.reports import checked_junit, junit_cases, read_rows

STABLE = {f"c{i}": "PPPPP" for i in range(10)}


@pytest.mark.parametrize(("trials", "fail_on"), [("3", "regression"), ("5", "regression"),
                                                 ("5", "case-regression"), ("3", "inconclusive")])
def test_one_stable_case_broken_in_every_trial_fails_the_gate(tmp_path: Path, trials: str, fail_on: str) -> None:
    repo = project(tmp_path, 10)
    base_run(repo, STABLE, "--trials", trials)
    schedule(repo, {**STABLE, "c3": "FFFFF"})
    ran = run(repo, "--trials", trials, "--baseline", "base.jsonl", "--fail-on", fail_on,
              env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")})
    assert ran.returncode == 1, ran.stdout + ran.stderr
    # annotated as an error (the suite test's "inconclusive" would be only a warning)
    assert "::error file=evals/s.eval.yaml,line=" in ran.stdout
    assert "c3 failed (regression (per-case guard))::" in ran.stdout
    rows = {row["eval_id"]: row for row in read_rows(repo / ".agentv-gate/results.jsonl")}
    if fail_on == "inconclusive":  # c3 is inconclusive on its own trials: the gate fails, whatever re-runs show
        assert "reruns" not in rows["c3"] and "re-ran" not in ran.stdout
        assert f"c3 ({trials}/{trials} -> 0/{trials}, p=" in ran.stdout
        return
    # the guard re-ran c3 alone until its budget decided it, and said what that cost
    reruns = rows["c3"]["reruns"]
    assert [t["attempt"] for t in reruns] == list(range(int(trials) + 1, int(trials) + 1 + len(reruns)))
    assert all(t["rerun"] is True and t["verdict"] == "fail" for t in reruns)
    assert all("reruns" not in row for case, row in rows.items() if case != "c3")
    assert len(rows["c3"]["trials"]) == int(trials) and rows["c3"]["verdict"] == "fail"
    total = int(trials) + len(reruns)
    assert (f"per-case guard: re-ran {len(reruns)} trial(s) of 1 case(s) whose evidence was short (the default "
            "budget, each case decided at posterior-predictive p <= 0.001), cost not reported: "
            f"c3 ({trials}/{trials} -> 0/{trials} (0/{total} with re-runs))") in ran.stdout
    assert f"per-case guard: re-ran {len(reruns)} trial(s)" in (tmp_path / "summary.md").read_text()
    assert (f"gate (--fail-on {fail_on}): failed, 1 case(s) fail beyond what the base allows (per-case guard, "
            "posterior-predictive p <= 0.001 each against the whole base") in ran.stdout
    assert f"c3 ({trials}/{trials} -> 0/{trials} (0/{total} with re-runs), p=" in ran.stdout


def test_a_case_the_guard_fails_is_a_failure_in_every_report_though_its_row_passed(tmp_path: Path) -> None:
    """Under `--trials 3` (pass_at_k) a stable case passing 1 of 3 head trials passes its own row; the guard's
    re-runs find it broken and the gate fails. JUnit, the annotations, the step outputs and summary, the
    console and report.html said all 10 passed: a failed check that every dashboard showed green."""
    repo = project(tmp_path, 10)
    base_run(repo, STABLE, "--trials", "3")
    schedule(repo, {**STABLE, "c3": "P" + "F" * 40})
    outputs, summary = tmp_path / "outputs", tmp_path / "summary.md"
    ran = run(repo, "--trials", "3", "--baseline", "base.jsonl", "--fail-on", "regression",
              env={"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(outputs), "GITHUB_STEP_SUMMARY": str(summary)})
    assert ran.returncode == 1, ran.stdout + ran.stderr
    rows = {row["eval_id"]: row for row in read_rows(repo / ".agentv-gate/results.jsonl")}
    assert rows["c3"]["verdict"] == "pass"  # the results file keeps the case's own verdict
    why = "regression (per-case guard) against the base: 3/3 -> 1/3 (1/"
    junit = checked_junit(repo / ".agentv-gate/junit.xml")
    assert junit_cases(junit) == {f"c{i}": "fail" if i == 3 else "pass" for i in range(10)}
    assert junit.get("failures") == "1" and why in junit.find(".//testcase[@name='c3']/failure").get("message")
    annotations = [line for line in ran.stdout.splitlines() if line.startswith("::error ")]
    assert len(annotations) == 1 and "line=11" in annotations[0] and "c3 failed (score 1.000" in annotations[0]
    assert parse_github_output(outputs.read_text())["failed"] == "1"
    assert "❌ **9 passed, 1 failed, 0 errors** of 10 cases" in summary.read_text()
    assert "agentv-gate FAILED: 10 cases: 9 passed, 1 failed, 0 errors" in ran.stdout
    assert 'class="totals FAILED">agentv-gate FAILED: 10 cases: 9 passed, 1 failed' in \
        (repo / ".agentv-gate/report.html").read_text()


FLAKE = """\
import sys
from pathlib import Path
counter = Path(sys.argv[1]) / (sys.argv[2] + ".count")
calls = int(counter.read_text()) + 1 if counter.exists() else 1
counter.write_text(str(calls))
print("no" if sys.argv[2] == "c3" and calls <= 2 else "ok")
"""
"""A target that flakes through a counter file: c3's first two calls fail, every later one passes."""


def test_a_case_failing_two_of_three_then_passing_its_reruns_passes_the_gate(tmp_path: Path) -> None:
    repo = project(tmp_path, 10)
    base_run(repo, STABLE, "--trials", "3")
    write(repo / "flake.py", FLAKE)
    (repo / "counts").mkdir()
    write(repo / ".agentv/targets.yaml", f"""
        targets:
          - name: default
            provider: cli
            command_template: "{sys.executable} -S {repo / 'flake.py'} {repo / 'counts'} {{EVAL_ID}}"
    """)
    ran = run(repo, "--trials", "3", "--baseline", "base.jsonl", "--fail-on", "regression")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    rows = {row["eval_id"]: row for row in read_rows(repo / ".agentv-gate/results.jsonl")}
    assert [t["verdict"] for t in rows["c3"]["trials"]] == ["fail", "fail", "pass"]
    # two rounds: 4/6 is still remarkable against a base where all 30 trials passed, 7/9 is not
    assert [(t["attempt"], t["verdict"]) for t in rows["c3"]["reruns"]] == [(n, "pass") for n in range(4, 10)]
    assert (repo / "counts/c3.count").read_text() == "9"  # the real target ran again, only for c3
    assert (repo / "counts/c0.count").read_text() == "3"
    assert "per-case guard: re-ran 6 trial(s) of 1 case(s)" in ran.stdout
    assert "c3 (3/3 -> 1/3 (7/9 with re-runs))" in ran.stdout
    assert "gate (--fail-on regression): passed, no significant drop" in ran.stdout
    # the same rows decided again (compare, comment) reach the same verdict
    again = run_cli("compare", "base.jsonl", ".agentv-gate/results.jsonl", "--fail-on", "regression", cwd=repo)
    assert again.returncode == 0, again.stdout + again.stderr


def test_a_suspicious_case_without_reruns_is_listed_not_failed(tmp_path: Path) -> None:
    """`compare` runs nothing: a case the guard cannot decide on the trials there are is said, not failed."""
    repo = project(tmp_path, 10)
    base_run(repo, STABLE, "--trials", "3")
    base_run(repo, {**STABLE, "c3": "FFP"}, "--trials", "3", name="head.jsonl")
    ran = run_cli("compare", "base.jsonl", "head.jsonl", "--fail-on", "regression", cwd=repo)
    assert "SUSPICIOUS: c3 (3/3 -> 1/3)" in ran.stdout, ran.stdout + ran.stderr
    assert "1 suspicious case(s) (the per-case guard could not decide them) listed" in ran.stdout
    assert ran.returncode == 0, ran.stdout + ran.stderr
    # with a budget of its own 3 trials the test is decided on them: cleared
    spent = run_cli("compare", "base.jsonl", "head.jsonl", "--max-trials", "3", cwd=repo)
    assert "SUSPICIOUS" not in spent.stdout and spent.returncode == 0, spent.stdout + spent.stderr


@pytest.mark.parametrize("alpha", ["1e-300", "1e-320"])
def test_a_tiny_alpha_computes_instead_of_an_internal_error(tmp_path: Path, alpha: str) -> None:
    repo = project(tmp_path, 3)
    three = {f"c{i}": "PPP" for i in range(3)}
    base_run(repo, three, "--trials", "3")
    schedule(repo, {**three, "c1": "PPF"})
    ran = run(repo, "--trials", "3", "--baseline", "base.jsonl", "--fail-on", "regression", "--alpha", alpha)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert f"(alpha {float(alpha):g} less the per-case guard's share)" in ran.stdout


def test_an_alpha_too_small_for_a_float_is_refused_before_anything_runs(tmp_path: Path) -> None:
    repo = project(tmp_path, 3)
    base_run(repo, {f"c{i}": "P" for i in range(3)})
    ran = run(repo, "--baseline", "base.jsonl", "--fail-on", "regression", "--alpha", "5e-324")
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "--alpha 5e-324 is too small to compute with" in ran.stderr


NOISY = {f"c{i}": "PPPPPPPPPF" if i % 4 else "PPPFPPPPPP" for i in range(20)}
"""A judge that flips one verdict in ten: every case passes 90% of its trials (a quarter of them fail
one of their first 3 trials, on the base as on an unchanged head)."""


def test_a_broken_case_under_a_noisy_judge_fails_the_gate(tmp_path: Path) -> None:
    """The case passes its 3 base trials and then one trial in ten (the judge's flips). Against its own 3
    base trials alone that is within chance at the guard's level over 20 cases (0.0005; Fisher's one-sided
    p of 3/3 against 2/28 is 0.0022); read against the 20 cases of the base, which all pass about 90% of
    the time, it is far outside: the gate fails."""
    repo = project(tmp_path, 20)
    base_run(repo, NOISY, "--trials", "3")
    schedule(repo, {**NOISY, "c1": "FFFFFFFFFP"})
    ran = run(repo, "--trials", "3", "--baseline", "base.jsonl", "--fail-on", "regression")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "c1 (3/3 -> 0/3 (2/28 with re-runs), p=" in ran.stdout
    rows = {row["eval_id"]: row for row in read_rows(repo / ".agentv-gate/results.jsonl")}
    passed = sum(t["verdict"] == "pass" for t in rows["c1"]["trials"] + rows["c1"]["reruns"])
    assert passed >= 1  # not every trial failed: the stable-case rule alone would not have caught it
    assert "1 case(s) fail beyond what the base allows (per-case guard" in ran.stdout
    # an unchanged head under the same judge passes
    schedule(repo, NOISY)
    again = run(repo, "--trials", "3", "--baseline", "base.jsonl", "--fail-on", "regression")
    assert again.returncode == 0, again.stdout + again.stderr


def test_history_on_the_same_digest_is_base_evidence_for_the_guard(tmp_path: Path) -> None:
    """Under a judge that flips one verdict in ten, a stable case fails one of its 3 base trials a quarter of
    the time; then it now passing 3 of 30 head trials could be a case that rarely passes, and the guard lets
    it go. Main's earlier run of the same case (`--history`), which passed it, says it is not: the gate fails."""
    repo = project(tmp_path, 20)
    base_run(repo, NOISY, "--trials", "3", name="earlier.jsonl")  # main's run before, on the same cases
    base_run(repo, {**NOISY, "c1": "PFPPPPPPPP"}, "--trials", "3")  # c1 passed 2 of 3 on the base
    schedule(repo, {**NOISY, "c1": "FFFFFFFFFP"})
    gate = ("--trials", "3", "--baseline", "base.jsonl", "--fail-on", "regression")
    alone = run(repo, *gate)
    assert alone.returncode == 0, alone.stdout + alone.stderr
    ran = run(repo, *gate, "--history", "earlier.jsonl")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "1 case(s) fail beyond what the base allows (per-case guard" in ran.stdout
    assert "c1 (2/3 (3/3 in the history) -> 0/3 (2/2" in ran.stdout
    # a history main appends every run to, the base's own included
    (repo / "appended.jsonl").write_text((repo / "earlier.jsonl").read_text() + (repo / "base.jsonl").read_text())
    assert run(repo, *gate, "--history", "appended.jsonl").returncode == 1


def test_a_history_the_base_no_longer_agrees_with_is_not_base_evidence(tmp_path: Path) -> None:
    """Main broke c1 since its history was written (history 3/3, base 0/3): read against the older passes,
    every pull request would be blamed for main's break. A change that leaves c1 as broken as main passes."""
    repo = project(tmp_path, 20)
    for n in range(3):
        base_run(repo, NOISY, "--trials", "3", name=f"earlier{n}.jsonl")
    (repo / "earlier.jsonl").write_text("".join((repo / f"earlier{n}.jsonl").read_text() for n in range(3)))
    broken = {**NOISY, "c1": "F"}
    base_run(repo, broken, "--trials", "3")
    schedule(repo, broken)
    ran = run(repo, "--trials", "3", "--baseline", "base.jsonl", "--fail-on", "regression", "--history", "earlier.jsonl")
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_a_history_the_base_passes_more_often_than_never_lets_a_break_through(tmp_path: Path) -> None:
    """Main fixed c1 since its history was written (history 0/3, base 3/3). Read together they look like a
    case passing half the time, which failing 3 of 3 head trials does not contradict: a change breaking c1
    again passed. The base alone says c1 is stable, and the break fails the gate."""
    repo = project(tmp_path, 20)
    base_run(repo, {**NOISY, "c1": "F"}, "--trials", "3", name="earlier.jsonl")
    base_run(repo, {**NOISY, "c1": "P"}, "--trials", "3")
    schedule(repo, {**NOISY, "c1": "F"})
    ran = run(repo, "--trials", "3", "--baseline", "base.jsonl", "--fail-on", "regression", "--history", "earlier.jsonl")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "1 case(s) fail beyond what the base allows (per-case guard" in ran.stdout


@pytest.mark.parametrize(("head", "code"), [("P" + "F" * 60, 1), ("PFF" + "P" * 60, 0)], ids=["broken", "flaky"])
def test_trials_from_the_eval_file_get_the_guards_reruns(tmp_path: Path, head: str, code: int) -> None:
    """`execution.trials: {count: 3, strategy: mean}` in the file and no `--trials`: the paired test ran on
    the file's trials, but the guard re-ran only under `--trials`, so c3, which passed on the base and fails
    now (1 of 3), was "suspicious" and the gate passed. Its re-runs now decide it, both ways."""
    repo = project(tmp_path, 10)
    suite = repo / "evals/s.eval.yaml"
    write(suite, "execution:\n  trials: {count: 3, strategy: mean}\n" + suite.read_text())
    base_run(repo, STABLE)
    schedule(repo, {**STABLE, "c3": head})
    ran = run(repo, "--baseline", "base.jsonl", "--fail-on", "regression")
    assert ran.returncode == code, ran.stdout + ran.stderr
    rows = {row["eval_id"]: row for row in read_rows(repo / ".agentv-gate/results.jsonl")}
    assert len(rows["c3"]["trials"]) == 3 and rows["c3"]["reruns"]
    assert all(t["attempt"] > 3 for t in rows["c3"]["reruns"])
    assert ("1 case(s) fail beyond what the base allows" in ran.stdout) is (code == 1)
    assert "SUSPICIOUS" not in ran.stdout
