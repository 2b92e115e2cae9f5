"""`run` in the pull-request loop, through the real CLI: --baseline/--fail-on, filters and --list, reruns, --max-failures.

The project's mock agent answers each case from its targets file, so a test makes a case pass or
fail on the "base" and on the "head" by rewriting that file between two runs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.github_runner import runner_commands
from tests.helpers.reports import read_rows

CASES = ("alpha", "beta", "gamma", "delta")

SUITE = "tests:\n" + "".join(f"""\
  - id: {name}
    input: Say {name}
    assertions:
      - type: contains
        value: {name}
""" for name in CASES)


def answers(project: Path, *knows: str) -> None:
    """The mock agent answers the cases in `knows` right and every other case wrong."""
    lines = "".join(f"      {name}: I say {name}\n" for name in knows)
    make_repo(project, "targets:\n  - name: default\n    provider: mock\n    response: no idea\n"
              + ("    responses:\n" + lines if lines else ""))


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "repo")
    write(root / "evals/suite.eval.yaml", SUITE)
    write(root / "evals/other.eval.yaml", "tests:\n  - id: alpha-extra\n    input: Say alpha\n"
          "    assertions:\n      - {type: contains, value: alpha}\n")
    return root


def results(project: Path, name: str = ".agentv-gate/results.jsonl") -> dict[str, dict]:
    return {row["eval_id"]: row for row in read_rows(project / name)}


def base_run(project: Path, *knows: str) -> Path:
    """Run every case with an agent that knows `knows`; its results kept as base.jsonl."""
    answers(project, *knows)
    run_cli("run", "evals", cwd=project)
    return Path(shutil.copy(project / ".agentv-gate/results.jsonl", project / "base.jsonl"))


# ---------------------------------------------------------------- --baseline / --fail-on


def test_fail_on_regression_passes_when_only_old_failures_remain(project: Path) -> None:
    base = base_run(project, "alpha", "beta", "alpha-extra")  # gamma, delta fail on main
    answers(project, "alpha", "beta", "gamma", "alpha-extra")  # the change fixes gamma
    proc = run_cli("run", "evals", "--baseline", str(base), "--fail-on", "regression", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "STILL FAILING (ALSO ON BASE): delta" in proc.stdout
    assert "FIXED: gamma" in proc.stdout
    assert "gate (--fail-on regression): passed, no case regressed" in proc.stdout


def test_fail_on_regression_fails_for_a_case_that_passed_on_the_base(project: Path) -> None:
    base = base_run(project, "alpha", "beta", "alpha-extra")
    answers(project, "alpha", "alpha-extra")  # the change breaks beta
    proc = run_cli("run", "evals", "--baseline", str(base), "--fail-on", "regression", cwd=project)
    assert proc.returncode == 1
    assert "REGRESSED: beta" in proc.stdout
    assert "1 case(s) regressed" in proc.stdout


def test_fail_on_all_keeps_todays_verdict_and_still_labels_cases(project: Path) -> None:
    base = base_run(project, "alpha", "beta", "alpha-extra")
    answers(project, "alpha", "beta", "alpha-extra")
    proc = run_cli("run", "evals", "--baseline", str(base), cwd=project)
    assert proc.returncode == 1  # gamma and delta fail, as they did on main
    assert "STILL FAILING (ALSO ON BASE): gamma" in proc.stdout


def test_new_cases_are_labelled_new(project: Path) -> None:
    base = base_run(project, "alpha", "beta", "gamma", "delta", "alpha-extra")
    write(project / "evals/more.eval.yaml", "tests:\n  - id: epsilon\n    input: Say epsilon\n"
          "    assertions:\n      - {type: contains, value: epsilon}\n")
    proc = run_cli("run", "evals", "--baseline", str(base), "--fail-on", "regression", cwd=project)
    assert "NEW: epsilon" in proc.stdout
    assert proc.returncode == 0


@pytest.mark.parametrize("argv", [["--test-id", "alpha*"], ["--suite", "other.eval.yaml"], ["--shard", "1/2"]])
def test_cases_this_run_leaves_out_are_not_labelled_removed(project: Path, argv: list[str]) -> None:
    """A filtered or sharded run against a base of every case: the cases it chose not to run are
    still in the eval files, so they are not "removed" (nor counted in the comparison)."""
    base = base_run(project, "alpha", "beta", "gamma", "delta", "alpha-extra")
    # delta really removed: omega asks another question (delta renamed, it would be delta's row's case)
    write(project / "evals/suite.eval.yaml", SUITE.replace("id: delta\n    input: Say delta", "id: omega\n    input: Say omega"))
    proc = run_cli("run", "evals", *argv, "--baseline", str(base), cwd=project)
    ran = set(results(project))
    assert "REMOVED: delta" in proc.stdout
    assert [line for line in proc.stdout.splitlines() if line.startswith("REMOVED:")] == ["REMOVED: delta "
                                                                                        "(evals/suite.eval.yaml:17)"
                                                                                        " — no result now"]
    assert f"{len(ran & set(CASES + ('alpha-extra',)))} still passing" in proc.stdout


def test_max_drop_fails_a_passing_case_whose_score_fell(project: Path) -> None:
    write(project / "evals/suite.eval.yaml", "tests:\n  - id: half\n    input: Say alpha and beta\n"
          "    assertions:\n      - {type: contains, value: alpha}\n      - {type: contains, value: beta}\n")
    make_repo(project, "targets:\n  - name: default\n    provider: mock\n    response: I say alpha beta\n")
    run_cli("run", "evals", "--threshold", "0.4", cwd=project)
    base = Path(shutil.copy(project / ".agentv-gate/results.jsonl", project / "base.jsonl"))
    make_repo(project, "targets:\n  - name: default\n    provider: mock\n    response: I say alpha\n")
    # `half` scores 0.5 now (1.0 on the base): it still passes its 0.4 mark ...
    argv = ["run", "evals", "--threshold", "0.4", "--baseline", str(base), "--fail-on", "regression"]
    assert run_cli(*argv, cwd=project).returncode == 0
    # ... but it dropped by more than 0.3
    proc = run_cli(*argv, "--max-drop", "0.3", cwd=project)
    assert proc.returncode == 1
    assert "REGRESSED: half" in proc.stdout and "dropped more than --max-drop 0.3" in proc.stdout
    # --fail-on all (the default) with --max-drop: every case must pass, and none may drop that much
    proc = run_cli("run", "evals", "--threshold", "0.4", "--baseline", str(base), "--max-drop", "0.3", cwd=project)
    assert proc.returncode == 1, proc.stdout
    assert "gate (--fail-on all): failed, 1 case(s) dropped more than --max-drop 0.3" in proc.stdout


def test_github_summary_and_annotations_say_what_changed(project: Path) -> None:
    base = base_run(project, "alpha", "beta", "alpha-extra")
    answers(project, "alpha", "alpha-extra")
    summary = project / "summary.md"
    proc = run_cli("run", "evals", "--baseline", str(base), "--fail-on", "regression", cwd=project,
                   env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert proc.returncode == 1
    text = summary.read_text()
    assert "### Against the base results" in text
    assert "| regressed | beta |" in text and "| still failing (also on base) | gamma |" in text
    commands = [line for line in proc.stdout.splitlines() if line.startswith("::")]
    beta = next(line for line in commands if "beta" in line.split("::")[1])
    gamma = next(line for line in commands if "gamma" in line.split("::")[1])
    assert beta.startswith("::error ") and "(regressed)" in beta
    # An old failure does not fail this gate: a warning, not an error
    assert gamma.startswith("::warning ") and "(still failing (also on base))" in gamma
    assert "Against the base results" in (project / ".agentv-gate/report.html").read_text()


@pytest.mark.parametrize("argv, message", [
    (["--fail-on", "regression"], "--fail-on regression needs --baseline"),
    (["--max-drop", "0.1"], "--max-drop needs --baseline"),
])
def test_regression_options_without_a_base_are_refused(project: Path, argv: list[str], message: str) -> None:
    proc = run_cli("run", "evals", *argv, cwd=project)
    assert proc.returncode == 2 and message in proc.stderr
    assert not (project / ".agentv-gate/results.jsonl").exists()


def test_a_base_of_other_eval_files_is_refused_before_running(project: Path) -> None:
    other = write(project / "other.jsonl", '{"eval_id": "x", "suite": "evals/x.yaml", "file": "x", "line": 1, '
                  '"score": 1, "threshold": 0.5}\n')
    proc = run_cli("run", "evals", "--baseline", str(other), "--fail-on", "regression", cwd=project)
    assert proc.returncode == 2
    assert "shares no case with this run" in proc.stderr
    assert not (project / ".agentv-gate/results.jsonl").exists()


def test_a_missing_base_file_is_a_clear_error(project: Path) -> None:
    proc = run_cli("run", "evals", "--baseline", "nowhere.jsonl", cwd=project)
    assert proc.returncode == 2 and "nowhere.jsonl" in proc.stderr


# ---------------------------------------------------------------- filters and --list


def test_test_id_and_suite_globs_select_cases(project: Path) -> None:
    answers(project, *CASES, "alpha-extra")
    proc = run_cli("run", "evals", "--test-id", "alpha*", "--eval-id", "gamma", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert set(results(project)) == {"alpha", "alpha-extra", "gamma"}
    proc = run_cli("run", "evals", "--test-id", "alpha*", "--suite", "suite.eval.yaml", cwd=project)
    assert set(results(project)) == {"alpha"}
    proc = run_cli("run", "evals", "--suite", "evals/other*", cwd=project)
    assert set(results(project)) == {"alpha-extra"}


def test_a_filter_matching_nothing_is_exit_3_not_a_green_run(project: Path) -> None:
    proc = run_cli("run", "evals", "--test-id", "nope-*", cwd=project)
    assert proc.returncode == 3
    assert "--test-id 'nope-*' matched none of the 5 case(s)" in proc.stderr


def test_list_prints_cases_with_file_and_line_and_runs_nothing(project: Path) -> None:
    (project / ".agentv/targets.yaml").unlink()  # listing needs no target
    proc = run_cli("run", "evals", "--list", "--test-id", "*a", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "evals/other.eval.yaml:2\talpha-extra", "evals/suite.eval.yaml:2\talpha", "evals/suite.eval.yaml:7\tbeta",
        "evals/suite.eval.yaml:12\tgamma",
        "evals/suite.eval.yaml:17\tdelta",
    ]
    assert "5 case(s) would run" in proc.stderr
    assert not (project / ".agentv-gate").exists()



def test_list_prints_a_hostile_file_name_on_one_line(project: Path) -> None:
    """A file name is the pull request's text and may hold a newline: `--list` keeps each case on
    one line, and no line of it is a workflow command."""
    name = "x\n::add-mask::everything ##[stop-commands]y.eval.yaml"
    (project / "evals" / name).write_text("tests:\n  - {id: c, input: q, assert: [{type: contains, value: q}]}\n")
    proc = run_cli("run", "evals", "--list", "--test-id", "c", cwd=project, env={"GITHUB_ACTIONS": "true"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["evals/x ::add-mask::everything ## [stop-commands]y.eval.yaml:2\tc"]
    assert runner_commands(proc.stdout) == []


def test_a_base_that_is_one_shard_of_a_run_is_refused_for_cases_it_lacks(project: Path) -> None:
    """BASE.jsonl = shard 1/2's results: the cases of shard 2 have no row there, so each would be
    "new" and, failing now, only a warning under --fail-on regression, though it passed on the base
    branch. Refused (exit 2) before anything runs; a shard's base for the same shard still works."""
    answers(project, *CASES, "alpha-extra")
    assert run_cli("run", "evals", "--shard", "1/2", cwd=project).returncode == 0
    base = Path(shutil.copy(project / ".agentv-gate/results.jsonl", project / "base.jsonl"))
    answers(project)  # every case fails now
    proc = run_cli("run", "evals", "--baseline", str(base), "--fail-on", "regression", cwd=project)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "part of a sharded run" in proc.stderr and "agentv-gate merge" in proc.stderr, proc.stderr
    proc = run_cli("run", "evals", "--shard", "1/2", "--baseline", str(base), "--fail-on", "regression", cwd=project)
    assert proc.returncode == 1 and "regressed" in proc.stdout, proc.stdout + proc.stderr


# ---------------------------------------------------------------- reruns


FLAKY_TARGETS = """\
targets:
  - name: default
    provider: mock
    response: I say alpha beta gamma delta
  - name: flaky
    provider: cli
    command_template: "sh -c 'test -f {flag} && echo I say delta || {{ echo agent down >&2; exit 3; }}'"
    timeout_seconds: 10
"""


def flaky_project(project: Path) -> Path:
    flag = project / "agent-is-up"
    make_repo(project, FLAKY_TARGETS.format(flag=flag))
    suite = (project / "evals/suite.eval.yaml").read_text().replace(
        "  - id: delta\n    input: Say delta\n", "  - id: delta\n    input: Say delta\n    target: flaky\n")
    (project / "evals/suite.eval.yaml").write_text(suite)
    return flag


def test_retry_errors_reruns_only_errored_cases_and_writes_a_complete_file(project: Path) -> None:
    flag = flaky_project(project)
    proc = run_cli("run", "evals", cwd=project)
    first = results(project)
    assert proc.returncode == 1 and first["delta"]["verdict"] == "error"
    flag.write_text("")
    previous = project / ".agentv-gate/results.jsonl"  # the same file is read, then rewritten
    proc = run_cli("run", "evals", "--retry-errors", str(previous), cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    second = results(project)
    assert set(second) == set(first)
    assert second["delta"]["verdict"] == "pass"
    for name in ("alpha", "beta", "gamma", "alpha-extra"):  # carried over as they were, not run again
        assert second[name]["timestamp"] == first[name]["timestamp"]
    assert second["delta"]["timestamp"] != first["delta"]["timestamp"]


def test_rerun_failed_reruns_failed_and_errored_cases(project: Path) -> None:
    flag = flaky_project(project)
    answers_file = project / ".agentv/targets.yaml"
    answers_file.write_text(answers_file.read_text().replace("I say alpha beta gamma delta", "I say alpha"))
    run_cli("run", "evals", cwd=project)
    first = results(project)
    assert {k for k, v in first.items() if v["verdict"] != "pass"} == {"beta", "gamma", "delta"}
    shutil.copy(project / ".agentv-gate/results.jsonl", project / "prev.jsonl")
    flag.write_text("")
    answers_file.write_text(answers_file.read_text().replace("I say alpha\n", "I say alpha beta gamma\n"))
    proc = run_cli("run", "evals", "--rerun-failed", "prev.jsonl", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    second = results(project)
    assert all(v["verdict"] == "pass" for v in second.values())
    assert second["alpha"]["timestamp"] == first["alpha"]["timestamp"]


def test_retry_errors_with_no_error_reruns_nothing_and_keeps_the_verdict(project: Path) -> None:
    answers(project, "alpha")
    run_cli("run", "evals", cwd=project)
    shutil.copy(project / ".agentv-gate/results.jsonl", project / "prev.jsonl")
    proc = run_cli("run", "evals", "--retry-errors", "prev.jsonl", cwd=project)
    assert proc.returncode == 1  # the failures are carried over: never a pass
    assert len(results(project)) == 5


@pytest.mark.parametrize("flag", ["--retry-errors", "--rerun-failed"])
@pytest.mark.parametrize("interrupted_rows", [False, True])
def test_a_rerun_runs_the_cases_the_previous_file_has_no_row_for(project: Path, flag: str,
                                                                   interrupted_rows: bool) -> None:
    """PREV of an interrupted run (or one older than the eval files) lacks rows, or has rows saying
    the case was not run (an interrupted run writes those): those cases never ran, so the rerun runs
    them, never a green report that leaves them out."""
    answers(project, "alpha", "beta", "alpha-extra")  # gamma and delta fail when they run
    run_cli("run", "evals", cwd=project)
    lines = (project / ".agentv-gate/results.jsonl").read_text().splitlines()
    kept = [line for line in lines if '"eval_id": "gamma"' not in line and '"eval_id": "delta"' not in line]
    if interrupted_rows:
        kept += [json.dumps({**json.loads(line), "verdict": "error", "score": 0.0, "failure_reason_code": "interrupted",
                             "error": "not run: the run was interrupted (SIGINT)"})
                 for line in lines if line not in kept]
    write(project / "prev.jsonl", "\n".join(kept) + "\n")  # cut short before gamma and delta ran
    proc = run_cli("run", "evals", flag, "prev.jsonl", cwd=project)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = results(project)
    assert len(rows) == 5 and (rows["gamma"]["verdict"], rows["delta"]["verdict"]) == ("fail", "fail")
    assert "2 case(s) have no row in prev.jsonl" in proc.stderr


def test_a_rerun_runs_a_matrix_case_again_when_the_previous_file_lacks_one_of_its_targets(project: Path) -> None:
    """Cut short between a matrix case's targets, PREV has `delta [default]` but not `delta [other]`."""
    targets = "targets:\n" + "".join(f"  - name: {t}\n    provider: mock\n    response: I say alpha beta gamma delta\n"
                                      for t in ("default", "other"))
    make_repo(project, targets)
    suite = project / "evals/suite.eval.yaml"
    suite.write_text("execution:\n  targets: [default, other]\n" + suite.read_text())
    assert run_cli("run", "evals", cwd=project).returncode == 0
    rows = (project / ".agentv-gate/results.jsonl").read_text().splitlines()
    cut = [line for line in rows if not ('"eval_id": "delta"' in line and '"target": "other"' in line)]
    assert len(cut) == len(rows) - 1
    write(project / "prev.jsonl", "\n".join(cut) + "\n")
    make_repo(project, targets.replace("I say alpha beta gamma delta\n", "no idea\n", 2)
              .replace("name: default\n    provider: mock\n    response: no idea",
                       "name: default\n    provider: mock\n    response: I say alpha beta gamma delta"))
    proc = run_cli("run", "evals", "--retry-errors", "prev.jsonl", cwd=project)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # delta [other] ran, and fails now
    after = [(r["eval_id"], r["target"], r["verdict"]) for r in read_rows(project / ".agentv-gate/results.jsonl")]
    assert len(after) == len(rows) and ("delta", "other", "fail") in after and ("delta", "default", "pass") in after
    assert "1 case(s) have rows in prev.jsonl for only some of their targets" in proc.stderr


def test_retry_errors_and_rerun_failed_are_exclusive(project: Path) -> None:
    proc = run_cli("run", "evals", "--retry-errors", "a.jsonl", "--rerun-failed", "b.jsonl", cwd=project)
    assert proc.returncode == 2


# ---------------------------------------------------------------- --max-failures


def test_max_failures_stops_starting_cases_and_reports_the_rest_as_not_run(project: Path) -> None:
    answers(project)  # every case fails
    proc = run_cli("run", "evals", "--max-failures", "2", "--workers", "1", cwd=project)
    assert proc.returncode == 1
    rows = results(project)
    assert len(rows) == 5
    failed = [v for v in rows.values() if v["verdict"] == "fail"]
    not_run = [v for v in rows.values() if v["verdict"] == "error"]
    # Cases already started when the 2nd failure came in still finish; none starts after it.
    assert len(failed) >= 2 and not_run and len(failed) + len(not_run) == 5
    assert all(v["error"].startswith("not run: the run stopped after 2 failed or errored case(s)")
               for v in not_run)
    assert "--max-failures 2" in proc.stderr and f"{len(not_run)} case(s) not run" in proc.stderr


def test_max_failures_fails_the_gate_even_when_failures_are_old(project: Path) -> None:
    base = base_run(project, "alpha-extra")  # everything in suite.eval.yaml fails on main too
    proc = run_cli("run", "evals", "--max-failures", "1", "--workers", "1", "--baseline", str(base),
                   "--fail-on", "regression", cwd=project)
    assert proc.returncode == 1
    assert "the run stopped early" in proc.stdout


def test_max_failures_not_reached_changes_nothing(project: Path) -> None:
    answers(project, *CASES, "alpha-extra")
    proc = run_cli("run", "evals", "--max-failures", "1", cwd=project)
    assert proc.returncode == 0, proc.stderr


def test_a_rerun_names_a_case_gone_from_the_eval_files_inertly(project: Path) -> None:
    """The warning for a case PREV has but the eval files no longer do quotes its id, which a pull
    request wrote: it must not run a workflow command on the CI log (stderr is scanned too)."""
    hostile = "gone\n::add-mask::everything\n  ::error::pwned ##[set-output name=x]y\x1b[2J"
    write(project / "evals/gone.eval.yaml", f"tests:\n  - id: {json.dumps(hostile)}\n    input: Say x\n"
          "    assertions:\n      - {type: contains, value: never}\n")
    run_cli("run", "evals", cwd=project)
    assert hostile in results(project)
    shutil.copy(project / ".agentv-gate/results.jsonl", project / "prev.jsonl")
    (project / "evals/gone.eval.yaml").write_text("tests:\n  - id: other\n    input: Say x\n"
                                                  "    assertions:\n      - {type: contains, value: x}\n")
    proc = run_cli("run", "evals", "--rerun-failed", "prev.jsonl", cwd=project, env={"GITHUB_ACTIONS": "true"})
    assert "no longer in the eval files" in proc.stderr, proc.stderr
    assert runner_commands(proc.stderr) == [] and "\x1b" not in proc.stderr, proc.stderr


def test_a_rerun_runs_a_passed_case_again_when_its_evaluators_changed(project: Path) -> None:
    """PREV's pass was judged by the case as it was then: a case whose assertions changed since has
    no result for what it checks now, so it runs again instead of carrying the old pass."""
    answers(project, *CASES, "alpha-extra")
    assert run_cli("run", "evals", cwd=project).returncode == 0
    shutil.copy(project / ".agentv-gate/results.jsonl", project / "prev.jsonl")
    first = results(project)
    suite = project / "evals/suite.eval.yaml"
    suite.write_text(suite.read_text().replace("value: beta\n", "value: something the agent never says\n"))
    proc = run_cli("run", "evals", "--rerun-failed", "prev.jsonl", cwd=project)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    second = results(project)
    assert second["beta"]["verdict"] == "fail"
    assert "1 case(s) changed since prev.jsonl" in proc.stderr, proc.stderr
    for name in ("alpha", "gamma", "delta", "alpha-extra"):  # unchanged: carried over, not run again
        assert second[name]["timestamp"] == first[name]["timestamp"]


@pytest.mark.parametrize("how", ["cli", "yaml"])
def test_a_rerun_runs_a_passed_case_again_when_its_threshold_changed(project: Path, how: str) -> None:
    """A pass at 0.5 carried into a run whose threshold is 0.9 would say PASS for a score below the
    run's own threshold."""
    write(project / "evals/half.eval.yaml", "tests:\n  - id: half\n    input: Say half\n    assertions:\n"
          "      - {type: contains, value: half}\n      - {type: contains, value: never}\n")
    write(project / ".agentv/gate.yaml", 'agentv: {version: "2.19"}\n')  # 2.19's pass mark: 0.5
    answers(project, *CASES, "alpha-extra", "half")
    assert run_cli("run", "evals", cwd=project).returncode == 0  # half scores 0.5 >= 0.5
    shutil.copy(project / ".agentv-gate/results.jsonl", project / "prev.jsonl")
    extra = ["--threshold", "0.9"] if how == "cli" else []
    if how == "yaml":
        half = project / "evals/half.eval.yaml"
        half.write_text("threshold: 0.9\n" + half.read_text())
    proc = run_cli("run", "evals", "--rerun-failed", "prev.jsonl", *extra, cwd=project)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    row = results(project)["half"]
    assert (row["verdict"], row["threshold"]) == ("fail", 0.9)


def test_a_rerun_runs_again_a_passed_case_whose_previous_row_has_no_digest(project: Path) -> None:
    """A row written by an older agentv-gate does not say which version of the case it judged: it
    runs again rather than being trusted."""
    answers(project, *CASES, "alpha-extra")
    assert run_cli("run", "evals", cwd=project).returncode == 0
    rows = read_rows(project / ".agentv-gate/results.jsonl")
    write(project / "prev.jsonl", "".join(json.dumps({k: v for k, v in row.items() if k != "case_digest"}) + "\n"
                                          for row in rows))
    answers(project, *CASES)  # alpha-extra fails now
    proc = run_cli("run", "evals", "--rerun-failed", "prev.jsonl", cwd=project)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert results(project)["alpha-extra"]["verdict"] == "fail"


def test_a_rerun_in_another_checkout_of_the_same_files_carries_the_passes_over(project: Path, tmp_path: Path) -> None:
    """The digest is of what the case says, not where the repository sits: the loader resolves an
    attached file to an absolute path, and a checkout elsewhere (another runner, a local clone)
    must not make every case run again."""
    write(project / "evals/notes.md", "alpha notes\n")
    write(project / "evals/attached.eval.yaml", "tests:\n  - id: attached\n    input:\n      - role: user\n"
          "        content:\n          - {type: file, value: ./notes.md}\n          - {type: text, value: Say attached}\n"
          "    assertions:\n      - {type: contains, value: attached}\n")
    answers(project, *CASES, "alpha-extra", "attached")
    assert run_cli("run", "evals", cwd=project).returncode == 0
    first = results(project)
    elsewhere = Path(shutil.copytree(project, tmp_path / "elsewhere"))
    proc = run_cli("run", "evals", "--rerun-failed", ".agentv-gate/results.jsonl", cwd=elsewhere)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "changed since" not in proc.stderr, proc.stderr
    assert all(row["timestamp"] == first[name]["timestamp"] for name, row in results(elsewhere).items())


def test_a_rerun_runs_a_passed_case_again_when_its_judge_script_changed(project: Path) -> None:
    """A code judge's verdict is its script's: edited since PREV (stricter now), the old pass says
    nothing of what the judge decides today."""
    judge = write(project / "judges/strict.py", "import json, sys\njson.load(sys.stdin)\nprint(json.dumps({'score': 1}))\n")
    write(project / "evals/judged.eval.yaml", "tests:\n  - id: judged\n    input: Say judged\n    assert:\n"
          "      - {name: strict, type: code_judge, script: python3 ../judges/strict.py}\n")
    answers(project, *CASES, "alpha-extra", "judged")
    assert run_cli("run", "evals", cwd=project).returncode == 0
    shutil.copy(project / ".agentv-gate/results.jsonl", project / "prev.jsonl")
    first = results(project)
    judge.write_text(judge.read_text().replace("'score': 1", "'score': 0"))
    proc = run_cli("run", "evals", "--rerun-failed", "prev.jsonl", cwd=project)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    second = results(project)
    assert second["judged"]["verdict"] == "fail"
    assert second["alpha"]["timestamp"] == first["alpha"]["timestamp"]
