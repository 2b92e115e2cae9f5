"""The paired comparison through the real CLI: `run --baseline --trials N`, `compare`, `plan-trials`.

The agent is a real `cli` target whose answer for each case and trial is scripted: `schedule.json`
maps a test id to a string of P (answer right) and F (answer wrong), one letter per trial, so a
case's pass rate is set exactly and every run is reproducible. A test rewrites the schedule
between the base run and the head run.

The agent is an awk program reading `schedule.json` as `json.dumps` writes it (one line): the suite
starts it thousands of times, and a Python agent, even `python -S`, doubled each run's CPU. The
base run of `BASE` with three trials is made once (`base_of_three_trials`); a results file names no path of its repository,
so each test copies it beside its own fresh project.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import read_rows

AGENT = """\
index($0, key = "\\"" id "\\": \\"") {
    schedule = substr($0, index($0, key) + length(key))
    schedule = substr(schedule, 1, index(schedule, "\\"") - 1)
    print (substr(schedule, attempt % length(schedule) + 1, 1) == "P" ? "ok" : "no")
    found = 1
}
END { if (!found) { print "no schedule for " id > "/dev/stderr"; exit 1 } }
"""
"""Trial ATTEMPT of case ID answers right ("ok") when letter ATTEMPT mod its length of the case's
schedule is P; a case the schedule does not list fails the agent. The id is found as text, not as
a pattern (a test's id holds `[`)."""


def project(tmp_path: Path, cases: int) -> Path:
    repo = tmp_path / "repo"
    write(repo / "agent.awk", AGENT)
    make_repo(repo, f"""
        targets:
          - name: default
            provider: cli
            command_template: "awk -v id={{EVAL_ID}} -v attempt={{ATTEMPT}} -f {repo / 'agent.awk'} {repo / 'schedule.json'}"
    """)
    write(repo / "evals/s.eval.yaml", "tests:\n" + "".join(
        f"  - id: c{i}\n    input: Answer {i}\n    assertions: [{{type: contains, value: ok}}]\n" for i in range(cases)))
    return repo


def schedule(repo: Path, outcomes: dict[str, str]) -> None:
    write(repo / "schedule.json", json.dumps(outcomes))


def run(repo: Path, *args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return run_cli("run", "evals", "--no-cache", *args, cwd=repo, env=env, timeout=120)


def base_run(repo: Path, outcomes: dict[str, str], *args: str, name: str = "base.jsonl") -> None:
    schedule(repo, outcomes)
    ran = run(repo, *args)
    assert ran.returncode in (0, 1), ran.stderr
    shutil.copy(repo / ".agentv-gate/results.jsonl", repo / name)


BASE = {f"c{i}": "PPP" if i < 8 else "PPF" for i in range(12)}
NOISE = {**BASE, "c8": "PFP", "c9": "FPP", "c10": "PPP", "c11": "PFF"}
"""The same agent run again: the flaky cases pass on other trials, one a trial less, one a trial more."""
DROP = {**BASE, **{f"c{i}": "FFF" for i in range(8)}}
"""A real regression: 8 of 12 cases that always passed now never do."""


@pytest.fixture(scope="module")
def base_of_three_trials(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """base.jsonl of the 12-case project run with `BASE`, three trials a case."""
    repo = project(tmp_path_factory.mktemp("base-of-three"), 12)
    base_run(repo, BASE, "--trials", "3")
    return repo / "base.jsonl"


def project_with_base(tmp_path: Path, base: Path) -> Path:
    """A fresh 12-case project whose base.jsonl is `base`."""
    repo = project(tmp_path, 12)
    shutil.copy(base, repo / "base.jsonl")
    return repo


def test_noise_passes_the_paired_gate_and_lists_inconclusive_cases(tmp_path: Path, base_of_three_trials: Path) -> None:
    repo = project_with_base(tmp_path, base_of_three_trials)
    schedule(repo, NOISE)
    ran = run(repo, "--trials", "3", "--baseline", "base.jsonl", "--fail-on", "regression")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "gate (--fail-on regression): passed, no significant drop against base.jsonl (pass rate +0.0 points " \
           "(95% CI -9.0 to +9.0), p=0.75 > 0.04 (alpha 0.05 less the per-case guard's share))" in ran.stdout
    assert "paired test over 12 case(s), 3 trials a side" in ran.stdout
    # c11 fell from 2/3 to 1/3: not significant, so inconclusive, listed by name, never passed in silence
    assert "INCONCLUSIVE: c11 (evals/s.eval.yaml:" in ran.stdout and "2/3 -> 1/3 (5/15 with re-runs) passing trials" in ran.stdout
    assert "1 inconclusive case(s) listed" in ran.stdout
    assert "FLAKY (trials disagree on the base, or flipped in the history): c8, c9, c10, c11" in ran.stdout
    # every trial ran (AgentV's pass_at_k would have stopped at the first pass), and the run said so
    assert all(len(row["trials"]) == 3 for row in read_rows(repo / ".agentv-gate/results.jsonl"))
    assert "--trials 3: every trial runs, also under pass_at_k" in ran.stderr
    # --fail-on inconclusive is there for teams that want it
    strict = run(repo, "--trials", "3", "--baseline", "base.jsonl", "--fail-on", "inconclusive")
    assert strict.returncode == 1
    assert "failed, 1 case(s) inconclusive (pass rate fell, not significantly): c11 (2/3 -> 1/3)" in strict.stdout


def test_a_real_drop_fails_the_paired_gate_naming_the_cases_and_the_interval(tmp_path: Path, base_of_three_trials: Path) -> None:
    repo = project_with_base(tmp_path, base_of_three_trials)
    schedule(repo, DROP)
    summary = repo / "summary.md"
    ran = run(repo, "--trials", "3", "--baseline", "base.jsonl", "--fail-on", "regression",
              env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert ran.returncode == 1, ran.stdout + ran.stderr
    # 8 cases fell all the way: only "all 8 negative" of the 2^8 sign flips is as low, p = 1/256
    assert "failed, the pass rate fell against base.jsonl: -66.7 points (95% CI" in ran.stdout
    assert "p=0.00391 <= 0.04 (alpha 0.05 less the per-case guard's share); largest drops: c0 (3/3 -> 0/3, p=0.1)" in ran.stdout
    text = summary.read_text()
    assert "**Paired test:** paired test over 12 case(s), 3 trials a side: pass rate -66.7 points" in text
    assert "| inconclusive | c0 |" in text and "| 3/3 | 0/3 |" in text
    page = (repo / ".agentv-gate/report.html").read_text()
    assert "<h3>Paired test</h3>" in page and "-66.7 points (95% CI" in page
    # the drivers are errors in the pull request, not warnings
    assert "::error file=evals/s.eval.yaml,line=2,title=agentv-gate%3A c0 failed (regression (per-case guard))::" \
        in ran.stdout
    # the suite test decided: no case is re-run to tell what could not change the verdict
    assert "re-ran" not in ran.stdout and all("reruns" not in row for row in read_rows(repo / ".agentv-gate/results.jsonl"))


def test_one_trial_a_side_keeps_todays_rule_and_says_no_statistical_decision(tmp_path: Path) -> None:
    """Today's case-by-case rule on the noise of the first test: c9 failed its one trial, so the
    unchanged agent fails the gate; the output says no statistical decision was possible."""
    repo = project(tmp_path, 12)
    base_run(repo, BASE)
    schedule(repo, NOISE)
    for trials in ((), ("--trials", "1")):
        ran = run(repo, *trials, "--baseline", "base.jsonl", "--fail-on", "regression")
        assert ran.returncode == 1, ran.stdout + ran.stderr
        assert "agentv-gate: gate (--fail-on regression): failed, 1 case(s) regressed against base.jsonl" in ran.stdout
        assert "no statistical decision was possible: 12 of 12 paired case(s) ran a single trial" in ran.stdout


def test_case_regression_fails_on_one_significant_case_where_the_suite_test_does_not(tmp_path: Path) -> None:
    repo = project(tmp_path, 10)
    base = {f"c{i}": "P" for i in range(10)}
    base_run(repo, base, "--trials", "8")
    schedule(repo, {**base, "c0": "F", "c1": "F", "c2": "PPPPPPPF"})
    ran = run(repo, "--trials", "8", "--baseline", "base.jsonl", "--fail-on", "case-regression")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "failed, 2 case(s) regressed significantly (Fisher, BH q <= 0.05): c0 (8/8 -> 0/8), c1 (8/8 -> 0/8)" \
        in ran.stdout
    assert "REGRESSION: c0" in ran.stdout and "Fisher p=0.000155" in ran.stdout
    shutil.copy(repo / ".agentv-gate/results.jsonl", repo / "head.jsonl")
    # three cases moved: sign flips cannot go below 1/8, so the suite test alone would pass it; the
    # per-case guard does not (two stable cases failed every trial)
    lenient = run_cli("compare", "base.jsonl", "head.jsonl", cwd=repo)
    assert lenient.returncode == 1, lenient.stdout
    assert "compare: failed, 2 case(s) fail beyond what the base allows (per-case guard" in lenient.stdout
    assert "c0 (8/8 -> 0/8, p=4.4e-06), c1 (8/8 -> 0/8, p=4.4e-06)" in lenient.stdout
    as_json = json.loads(run_cli("compare", "base.jsonl", "head.jsonl", "--json", "--fail-on", "inconclusive",
                                 cwd=repo).stdout)
    assert as_json["gate"]["failed"] is True
    assert as_json["paired"]["p_drop"] == 0.125
    labels = {c["test_id"]: (c["label"], c["base_passed"], c["head_passed"]) for c in as_json["paired"]["cases"]}
    assert labels["c0"] == ("regression", 8, 0) and labels["c2"] == ("inconclusive", 8, 7)
    assert labels["c5"] == ("unchanged", 8, 8)


def test_flaky_history_keeps_one_trials_drop_from_failing_the_gate(tmp_path: Path) -> None:
    repo = project(tmp_path, 3)
    steady = {"c0": "P", "c1": "P", "c2": "P"}
    base_run(repo, {**steady, "c0": "F"}, name="earlier.jsonl")  # main once failed c0 ...
    base_run(repo, steady)  # ... and passed it on the next run of the same case
    schedule(repo, {**steady, "c0": "F"})
    plain = run(repo, "--baseline", "base.jsonl", "--fail-on", "regression")
    assert plain.returncode == 1  # today's rule
    ran = run(repo, "--baseline", "base.jsonl", "--fail-on", "regression", "--history", "earlier.jsonl")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "but 1 flaky one(s) on a single trial (c0): only a paired test" in ran.stdout
    # a case that did not flip in the history still fails the gate on one trial, as today
    schedule(repo, {**steady, "c1": "F"})
    assert run(repo, "--baseline", "base.jsonl", "--fail-on", "regression", "--history", "earlier.jsonl").returncode == 1


def test_a_history_of_runs_appended_one_after_the_other_is_read(tmp_path: Path) -> None:
    """`cat results.jsonl >> history.jsonl` after each run of main: every case is in it once per run. It was
    refused as a duplicate case; a case twice within one run still is."""
    repo = project(tmp_path, 3)
    steady = {"c0": "P", "c1": "P", "c2": "P"}
    base_run(repo, {**steady, "c0": "F"}, name="first.jsonl")
    base_run(repo, steady, name="second.jsonl")
    base_run(repo, steady)
    history = (repo / "first.jsonl").read_text() + (repo / "second.jsonl").read_text()
    write(repo / "history.jsonl", history)
    schedule(repo, {**steady, "c0": "F"})
    ran = run(repo, "--baseline", "base.jsonl", "--fail-on", "regression", "--history", "history.jsonl")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "but 1 flaky one(s) on a single trial (c0)" in ran.stdout
    write(repo / "twice.jsonl", (repo / "second.jsonl").read_text() * 2)
    refused = run(repo, "--baseline", "base.jsonl", "--fail-on", "regression", "--history", "twice.jsonl")
    assert refused.returncode == 2
    assert "twice.jsonl:4: duplicate result for case '" in refused.stderr
    assert "(first at twice.jsonl:1); each case must appear once in each run" in refused.stderr


def test_a_base_from_agentvs_pass_at_k_is_no_statistical_decision(tmp_path: Path) -> None:
    """execution.trials in the eval file keeps AgentV's early exit: such a base has no pass counts."""
    repo = project(tmp_path, 4)
    (repo / "evals/s.eval.yaml").write_text("execution:\n  trials: {count: 3}\n"
                                           + (repo / "evals/s.eval.yaml").read_text())
    base_run(repo, {"c0": "FP", "c1": "P", "c2": "P", "c3": "FFP"})
    ran = run(repo, "--trials", "3", "--baseline", "base.jsonl", "--fail-on", "regression")
    assert "no statistical decision was possible: 3 base row(s) stopped at their first passing trial" in ran.stdout


def test_pass_hat_k_needs_every_trial_to_pass(tmp_path: Path) -> None:
    repo = project(tmp_path, 2)
    schedule(repo, {"c0": "PPF", "c1": "PPP"})
    assert run(repo, "--trials", "3").returncode == 0  # pass_at_k: one pass is enough
    ran = run(repo, "--trials", "3", "--trials-strategy", "pass_hat_k")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    rows = {r["eval_id"]: r for r in read_rows(repo / ".agentv-gate/results.jsonl")}
    assert rows["c0"]["verdict"] == "fail" and rows["c1"]["verdict"] == "pass"
    assert rows["c0"]["answer"] == "no"  # the row shows its worst trial, which made its score
    assert rows["c0"]["aggregation"] == {"strategy": "pass_hat_k", "min": 0.0, "total_attempts": 3,
                                         "passed_attempts": 2}


def test_plan_trials_says_how_many_trials_detect_a_drop(tmp_path: Path) -> None:
    repo = project(tmp_path, 20)
    base_run(repo, {f"c{i}": "PPPF" if i % 2 else "PPPP" for i in range(20)}, "--trials", "4")
    ran = run_cli("plan-trials", "base.jsonl", "--drop", "30", "--simulations", "100", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "20 case(s), base pass rate 80.0%" in ran.stdout and "alpha 0.05 (the suite test at 0.04)" in ran.stdout
    assert "a drop of 30 points" in ran.stdout and "trial(s) a side" in ran.stdout
    assert run_cli("plan-trials", "base.jsonl", "--alpha", "2", cwd=repo).returncode == 2


def test_case_ids_in_the_gate_line_stay_inert_in_the_ci_log(tmp_path: Path) -> None:
    """The gate line names the cases that drove a drop; an id is a pull request's text, and the
    runner takes `##[command]` anywhere in a line."""
    repo = project(tmp_path, 6)
    suite = (repo / "evals/s.eval.yaml").read_text().replace("id: c0", "id: 'c0##[add-mask]x'")
    (repo / "evals/s.eval.yaml").write_text(suite)
    ids = ["c0##[add-mask]x", *(f"c{i}" for i in range(1, 6))]
    base_run(repo, dict.fromkeys(ids, "PPP"), "--trials", "3")
    schedule(repo, dict.fromkeys(ids, "FFF"))
    ran = run(repo, "--trials", "3", "--baseline", "base.jsonl", "--fail-on", "regression")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "largest drops: c0## [add-mask]x (3/3 -> 0/3" in ran.stdout
    assert "##[add-mask]" not in ran.stdout


def test_the_pull_request_comment_lists_the_paired_tests_cases_with_their_trials(
        tmp_path: Path, base_of_three_trials: Path) -> None:
    """The comment shows what the console shows: the paired test's line, and each case it labelled
    (the inconclusive c11 too, never passed in silence), with its trials on both sides."""
    from tests.commands.test_comment_cli import TOKEN, actions_env
    from tests.helpers.fake_github import FakeGitHub

    repo = project_with_base(tmp_path, base_of_three_trials)
    schedule(repo, NOISE)
    with FakeGitHub(token=TOKEN) as github:
        ran = run(repo, "--trials", "3", "--baseline", "base.jsonl", "--fail-on", "regression", "--comment",
                  env=actions_env(tmp_path, github))
        assert ran.returncode == 0, ran.stdout + ran.stderr
        (body,) = [c["body"] for comments in github.comments.values() for c in comments]
    assert "**Paired test:** paired test over 12 case(s), 3 trials a side" in body
    assert "| inconclusive (flaky) | c11 | " in body and " | 2/3 → 1/3 | " in body
    # what the gate can detect at these settings, from the bench
    assert "_At 3 trials a side (bench/stats_bench.py, 50 cases, alpha 0.05, the per-case guard's default " \
        "re-runs): a single stable case breaking is caught with probability 100% (77% when the judge flips " \
        "10% of verdicts); unchanged reruns fail at most 3.5% of the time; 10 of 50 cases dropping 30 points are " \
        "caught 21.5% (flaky cases or a noisy judge) to 91% (stable cases) of the time._" in body
