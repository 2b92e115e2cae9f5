"""The features that choose or carry which cases run, met by the verdict features, through the real CLI.

How each combination could give a wrong PASS (or lose a result, or show a secret), and the test for it:

* --affected-since x not-run base rows x --fail-on regression: a case the base never judged (not started
  after --max-failures, left out by --skip-missing-env) carried as if judged, so the change passed without
  it running anywhere, or exited 5 forever (found: fixed) -> `test_a_case_the_base_never_ran_is_run_not_carried`.
* --affected-since x --shard x merge: a shard dealt none of the affected cases exited 1, and `merge` refused
  the whole ("no results at all from shard 3/3") (found: fixed); a missing shard must still be refused
  -> `test_a_shard_with_no_affected_case_passes_empty_and_the_merge_judges_the_whole`.
* --rerun-failed x --test-id x --baseline: a case the filter leaves out kept its old pass though it changed
  since (a new assertion it fails), shown as passed in every report and "still passing" against the base
  (found: fixed); a failure PREV says to run again that the filter leaves out keeps its old row (it still
  counts), but the warning the docs promise was said only for a case gone from the eval files (found:
  fixed) -> `test_a_rerun_never_carries_the_stale_pass_of_a_case_its_filters_leave_out`.
* --history x --baseline (run and `compare`): a history kept as the docs say (each run's results appended)
  was refused as holding "duplicate" rows, exit 2 (found, and fixed on main meanwhile); a case the change edited, whose old
  version flipped on main, excused as `regressed (flaky)` though the new version fails every time: the
  change passed (found: fixed) -> `test_history_excuses_only_the_version_of_a_case_it_saw_flip`; a run of the
  history stopped by --max-failures before the case started read as a failed outcome of it, so one pass
  beside it made the case "flaky" and its regression a warning (found: fixed)
  -> `test_a_run_of_the_history_that_never_started_a_case_is_no_flip_of_it`.
* carried rows x secrets: a row carried from PREV (or BASE) written by a run that did not know a key (its
  variable unset there) reached results.jsonl, report.html and the job summary with the key in it, though
  this run knows it (found: fixed) -> `test_a_secret_in_a_carried_row_reaches_no_report`.
* --affected-since x depends_on: editing a case that depends on another ran it without its dependency,
  which a run that does not hold counts as failed: `Skipped: dependency failed`, a wrong failure (found:
  fixed) -> `test_an_affected_case_runs_with_the_cases_it_depends_on`. (The other way round, a dependency
  affected and its dependant carried, hides nothing: a dependency gates its dependants only by erroring,
  and its own error fails the gate.)
* --retry-errors x --trials: an errored trial replaced alone, the case's other trials lost or kept from the
  old row, or a retry with another trial count carrying rows judged at the old one
  -> `test_retry_errors_runs_every_trial_again_of_a_case_one_trial_of_which_crashed` (pins: the whole case
  runs again, every trial; another `--trials` runs every case again).
* SIGINT x --affected-since x --baseline x compare, merge, --rerun-failed: the run cut short while an
  affected case's agent hung: the case lost, its carried neighbours making the run look whole, exit 0, the
  interrupted results compared or merged into a pass, or a rerun of them carrying the not-run row
  -> `test_an_interrupted_affected_run_never_passes_and_what_it_cut_short_runs_next` (pins).
* the quarantine x a renamed case x --baseline, --affected-since, --rerun-failed: a case renamed keeping
  its old entry's quarantine (a failure hidden), or a carried quarantined row standing in for it
  -> `test_a_renamed_case_leaves_its_quarantine_behind_in_every_selection` (pins: the entry is said to name
  no case, the renamed case runs and fails the gate).
* carried rows x the AgentV generation: a base or PREV pass judged at AgentV 2.x's mark (0.5) carried into a
  run at 4.x's (0.8), where the same score fails
  -> `test_a_pass_at_agentv_2s_mark_is_never_carried_into_a_run_at_4s` (pins: the pass mark is in the digest).
* --tag x the pull-request comment: two gate steps on the same paths with other `--tag`s shared one comment,
  so the second step's PASSED replaced the first's FAILED (found: fixed; `comment` and the action's comment
  step take `--tag`/`--exclude-tag`, and the action's comment step `--max-trials`, which moves the per-case
  guard's verdict) -> `test_gate_steps_on_other_tags_keep_a_comment_each`.
* --replay x --baseline x --affected-since: a recording made from an older version of a case: a question it
  never recorded read as "new" (a warning under --fail-on regression), or a stricter assertion judged on
  an old verdict instead of the recorded answer
  -> `test_a_replay_of_answers_to_an_older_case_never_passes_a_regression_gate` (pins).
* main's merged shards x an unsharded --affected-since or --rerun-failed x `comment`, `merge`: the carried
  rows kept their base shard's label, so when they all came from one shard the results read as "part of a
  sharded run": the action's comment step refused them (exit 2, no comment), and so did `merge` (found:
  fixed) -> `test_rows_carried_from_merged_shards_are_the_unsharded_runs_own`.
* --affected-since x the targets file x --fail-on regression: with `agent_paths` that do not name it (the
  docs' own `[src/**, prompts/**]`), or in an eval folder, a targets file pointing the target at another
  model or command changed no case's digest: every unedited case carried its pass from the old agent, and
  the change passed (found: fixed)
  -> `test_another_model_in_the_targets_file_runs_every_case_whatever_agent_paths_say`.
* a base stopped by --max-failures x --trials x --baseline --fail-on regression: the base's not-run row of a
  case read as that many failed trials, so its passes now were an "improvement" that offset five cases
  falling 3/3 -> 1/3, and the paired test passed the change (found: fixed)
  -> `test_a_base_stopped_early_still_gets_a_paired_test_of_the_cases_it_ran`.

Checked and safe, with no test of their own here: a carried row whose `file`, `suite`, `case_file` or
`targets_file` point outside the repository (`../`) is only text in the reports, never read or written; the
recording keeps each agent trial apart (`attempt` is part of a request), so a replay under `--trials` gives
each trial its own recorded answer; `--rerun-failed`/`--retry-errors` refuse `--affected-since` (pinned in
test_affected_since_cli.py) and `--shard` (pinned at the end of the merged-shards test), so no merged shard
holds a rerun's carried rows.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from agentv_gate.errors import EXIT_FAILED, EXIT_OK, EXIT_SIGINT
from tests.helpers.cli import run_cli, start_cli
from tests.helpers.fake_github import FakeGitHub
from tests.helpers.files import make_repo, write
from tests.helpers.git import commit_all
from tests.helpers.processes import kill_quietly, pid_alive, wait_for
from tests.helpers.reports import RESULTS, junit_cases, read_rows, rows_by_id

SECRET = "sk-selcombo-0123456789abcdef"


def _agent(repo: Path) -> str:
    """A `cli` agent that answers a case with the text of answers/ID-ATTEMPT.txt, else answers/ID.txt; it crashes
    on a trial whose answers/ID-ATTEMPT.err exists, and hangs (its pid in answers/ID.pid) when answers/ID.hang does."""
    a = repo / "answers"
    script = (f"test -f {a}/{{EVAL_ID}}-{{ATTEMPT}}.err && exit 3; test -f {a}/{{EVAL_ID}}.hang && "
              f"{{ echo $$ > {a}/{{EVAL_ID}}.pid; exec sleep 60; }}; cat {a}/{{EVAL_ID}}-{{ATTEMPT}}.txt 2>/dev/null || "
              f"cat {a}/{{EVAL_ID}}.txt 2>/dev/null || echo none")
    return f"targets:\n  - name: default\n    provider: cli\n    command: \"sh -c '{script}'\"\n"


def case(name: str, *, value: str | None = None, extra: str = "") -> str:
    """A case passing when the answer holds `value` (default `ok-NAME`)."""
    return (f"  - id: {name}\n    input: question {name}\n{extra}    assertions:\n"
            f"      - {{type: contains, value: {value or 'ok-' + name}}}\n")


def project(tmp_path: Path, answers: dict[str, str], cases: str | None = None, gate: str | None = None,
            git: bool = False) -> Path:
    """A repository whose agent gives each case the answer `answers` names; its eval file `cases` (default one
    case per answer). With `git`, committed (the answers are the agent's files: src/ and answers/ are its
    `agent_paths` unless `gate` says otherwise)."""
    repo = make_repo(tmp_path / "repo")
    write(repo / ".agentv/targets.yaml", _agent(repo))
    set_answers(repo, answers)
    write(repo / "evals/s.eval.yaml", "tests:\n" + (cases if cases is not None else "".join(case(n) for n in answers)))
    if gate is not None:
        write(repo / ".agentv/gate.yaml", gate)
    if git:
        write(repo / ".gitignore", ".agentv-gate/\n*.jsonl\n*.hang\n*.pid\n*.err\n")  # the test's switches, not the agent
        if gate is None:
            write(repo / ".agentv/gate.yaml", "agent_paths: [src/**, answers/**]\n")
        commit_all(repo)
    return repo


def set_answers(repo: Path, answers: dict[str, str]) -> None:
    for name, text in answers.items():
        write(repo / "answers" / f"{name}.txt", text + "\n")


def run(repo: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    return run_cli("run", "evals", "--no-cache", *args, cwd=repo, env=env)


def keep(repo: Path, name: str) -> str:
    """The last run's results, copied to NAME beside the repository's root (outside what it reads)."""
    shutil.copy(repo / RESULTS, repo / name)
    return name


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, text
    path.write_text(text.replace(old, new, 1))


def said(proc: Any) -> str:
    return proc.stdout + proc.stderr


# ------------------------------------------------------------------ --affected-since x not-run base rows


def test_a_case_the_base_never_ran_is_run_not_carried(tmp_path: Path) -> None:
    repo = project(tmp_path, {"a": "nope", "b": "ok-b"}, git=True)
    base = run(repo, "--max-failures", "1", "--workers", "1")  # a fails first: b is never started
    assert base.returncode == EXIT_FAILED, said(base)
    assert rows_by_id(repo / RESULTS)["b"]["failure_reason_code"] == "max_failures"
    keep(repo, "base.jsonl")
    edit(repo / "evals/s.eval.yaml", "question a", "question a, reworded")  # a is affected, b is not
    head = run(repo, "--affected-since", "base.jsonl", "--baseline", "base.jsonl", "--fail-on", "regression")
    found = rows_by_id(repo / RESULTS)
    # b has no result on the base: it runs (as a new case would), never carried as a judged case
    assert not found["b"].get("carried") and found["b"]["verdict"] == "pass", found["b"]
    assert "max_failures" not in json.dumps(found["b"]) and "carried" not in head.stdout, said(head)
    assert head.returncode == EXIT_OK, said(head)  # b: fixed; a: still failing (also on base)
    # a row --skip-missing-env wrote on the base (its variable was unset there) is no result either
    rows = read_rows(repo / "base.jsonl")
    for row in rows:
        if row["eval_id"] == "b":
            row.update(failure_reason_code="missing_env", error="not run: ${{ KEY }} is unset (--skip-missing-env)")
    (repo / "base.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    head = run(repo, "--affected-since", "base.jsonl")
    assert not rows_by_id(repo / RESULTS)["b"].get("carried"), said(head)
    assert head.returncode == EXIT_FAILED, said(head)  # a fails; never exit 5 for a case that could run


# ------------------------------------------------------------------ --affected-since x --shard x merge


def test_a_shard_with_no_affected_case_passes_empty_and_the_merge_judges_the_whole(tmp_path: Path) -> None:
    names = ["a", "b", "c", "d", "e"]
    repo = project(tmp_path, {n: f"ok-{n}" for n in names}, git=True)
    assert run(repo).returncode == EXIT_OK
    keep(repo, "base.jsonl")
    edit(repo / "evals/s.eval.yaml", "question b", "question b, reworded")
    edit(repo / "evals/s.eval.yaml", "value: ok-d", "value: ok-d-now")  # d is affected, and fails now
    codes = []
    for k in (1, 2, 3):  # two affected cases dealt out over three shards: shard 3 has none
        shard = run(repo, "--affected-since", "base.jsonl", "--shard", f"{k}/3", "--results", f"s{k}.jsonl",
                    "--junit", f"j{k}.xml")
        codes.append(shard.returncode)
    assert codes == [EXIT_OK, EXIT_FAILED, EXIT_OK], codes  # an empty shard fails nothing (merge judges the whole)
    assert read_rows(repo / "s3.jsonl") == [] and junit_cases(ET.parse(repo / "j3.xml").getroot()) == {}
    merged = run_cli("merge", "s1.jsonl", "s2.jsonl", "s3.jsonl", "--baseline", "base.jsonl", "--fail-on", "regression",
                     cwd=repo)
    assert merged.returncode == EXIT_FAILED, said(merged)  # d regressed
    assert "REGRESSED: d" in merged.stdout and "2 of 5 cases run; 3 carried from" in merged.stdout
    for lacking in (["s1.jsonl", "s3.jsonl"], ["s2.jsonl", "s3.jsonl"]):  # the carrying shard, or d's, missing
        refused = run_cli("merge", *lacking, cwd=repo)
        assert refused.returncode == 2 and "incomplete shard results" in refused.stderr, said(refused)


# ------------------------------------------------------------------ --rerun-failed x filters x --baseline


def test_a_rerun_never_carries_the_stale_pass_of_a_case_its_filters_leave_out(tmp_path: Path) -> None:
    repo = project(tmp_path, {"a": "nope", "b": "ok-b", "c": "ok-c"})
    assert run(repo).returncode == EXIT_FAILED  # a fails; b and c pass
    keep(repo, "prev.jsonl")
    set_answers(repo, {"a": "ok-a"})
    edit(repo / "evals/s.eval.yaml", "value: ok-b", "value: ok-b-now")  # b changed since: it fails now
    for flags in (["--test-id", "a"], ["--test-id", "a", "--baseline", "prev.jsonl", "--fail-on", "regression"]):
        rerun = run(repo, "--rerun-failed", "prev.jsonl", *flags)
        assert rerun.returncode == EXIT_OK, said(rerun)
        found = rows_by_id(repo / RESULTS)
        # b is left out by --test-id and its old pass judged another version of it: it is not carried as a pass
        assert "b" not in found and found["a"]["verdict"] == "pass" and found["c"]["verdict"] == "pass", found
        assert "b" not in junit_cases(ET.parse(repo / ".agentv-gate/junit.xml").getroot())
        assert "STILL PASSING: b" not in rerun.stdout and "1 case(s) left out by the filters changed since" in rerun.stderr
    # a failure PREV says to run again that the filter leaves out keeps its old row, said: it still counts
    rerun = run(repo, "--rerun-failed", "prev.jsonl", "--test-id", "c")
    assert rerun.returncode == EXIT_FAILED and rows_by_id(repo / RESULTS)["a"]["verdict"] == "fail", said(rerun)
    assert "case 'a' of evals/s.eval.yaml is in prev.jsonl but left out by the filters; its old row is kept" \
        in rerun.stderr
    # without the filter, b runs again (it changed) and fails: the rerun is never green without it
    rerun = run(repo, "--rerun-failed", "prev.jsonl")
    assert rerun.returncode == EXIT_FAILED and rows_by_id(repo / RESULTS)["b"]["verdict"] == "fail", said(rerun)


# ------------------------------------------------------------------ --history x --baseline x a changed case


def test_history_excuses_only_the_version_of_a_case_it_saw_flip(tmp_path: Path) -> None:
    repo = project(tmp_path, {"a": "nope", "b": "ok-b"})
    run(repo)
    keep(repo, "run1.jsonl")  # main once failed a ...
    set_answers(repo, {"a": "ok-a"})
    run(repo)
    keep(repo, "base.jsonl")  # ... and passed it on the next run
    # the history as the docs keep it: each run's results appended (`cat results.jsonl >> history.jsonl`)
    (repo / "history.jsonl").write_text((repo / "run1.jsonl").read_text() + (repo / "base.jsonl").read_text())
    gate = ["--baseline", "base.jsonl", "--history", "history.jsonl", "--fail-on", "regression"]
    set_answers(repo, {"a": "nope"})
    flaky = run(repo, *gate)  # the same version of a fails once more: flaky, a warning on one trial
    assert flaky.returncode == EXIT_OK, said(flaky)
    assert "1 flaky one(s) on a single trial (a)" in flaky.stdout
    # the change edits a (a new assertion the answer misses): its flips on main say nothing of this version
    set_answers(repo, {"a": "ok-a"})
    edit(repo / "evals/s.eval.yaml", "value: ok-a", "value: ok-a-now")
    changed = run(repo, *gate)
    assert changed.returncode == EXIT_FAILED, said(changed)
    assert "REGRESSED: a" in changed.stdout and "flaky" not in changed.stdout, changed.stdout
    keep(repo, "head.jsonl")
    compared = run_cli("compare", "base.jsonl", "head.jsonl", "--history", "history.jsonl", cwd=repo)
    assert compared.returncode == EXIT_FAILED and "compare: failed, 1 case(s) regressed" in compared.stdout, said(compared)


# ------------------------------------------------------------------ carried rows x secrets


def test_a_secret_in_a_carried_row_reaches_no_report(tmp_path: Path) -> None:
    repo = project(tmp_path, {"a": "ok-a", "b": f"wrong, and the key is {SECRET}"})
    first = run(repo)  # the key is no variable of this run's: its echo is kept as it was said
    assert first.returncode == EXIT_FAILED and SECRET in (repo / RESULTS).read_text()
    keep(repo, "prev.jsonl")
    summary = tmp_path / "summary.md"
    env = {"SEL_API_KEY": SECRET, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    rerun = run(repo, "--retry-errors", "prev.jsonl", "-v", env=env)  # no error: every row is carried as it was
    assert rerun.returncode == EXIT_FAILED, said(rerun)
    assert rows_by_id(repo / RESULTS)["b"]["verdict"] == "fail"
    for out in [said(rerun), summary.read_text(), *(p.read_text() for p in (repo / ".agentv-gate").iterdir())]:
        assert SECRET not in out
    assert "wrong, and the key is ***" in (repo / RESULTS).read_text()


# ------------------------------------------------------------------ --affected-since x depends_on


def test_an_affected_case_runs_with_the_cases_it_depends_on(tmp_path: Path) -> None:
    repo = project(tmp_path, {"a": "ok-a", "b": "ok-b", "c": "ok-c"},
                   cases=case("a") + case("b", extra="    depends_on: [a]\n") + case("c"), git=True)
    assert run(repo).returncode == EXIT_OK
    keep(repo, "base.jsonl")
    edit(repo / "evals/s.eval.yaml", "question b", "question b, reworded")
    head = run(repo, "--affected-since", "base.jsonl")
    found = rows_by_id(repo / RESULTS)
    # b runs after a, as its first run did: never "dependency failed" for a dependency only carried
    assert head.returncode == EXIT_OK, said(head)
    assert (found["a"].get("carried"), found["b"]["verdict"], found["c"].get("carried")) == (None, "pass", True)
    assert "2 of 3 case(s) affected (1 changed, 0 new, 1 they depend on)" in head.stderr


# ------------------------------------------------------------------ --retry-errors x --trials


def test_retry_errors_runs_every_trial_again_of_a_case_one_trial_of_which_crashed(tmp_path: Path) -> None:
    repo = project(tmp_path, {"a": "ok-a", "b": "ok-b"})
    write(repo / "answers/a-1.err", "")  # a's agent crashes on its second trial only
    trials = ["--trials", "3", "--trials-strategy", "mean"]
    first = run(repo, *trials)
    assert first.returncode == EXIT_FAILED, said(first)  # the crash is never averaged away
    before = rows_by_id(repo / RESULTS)
    assert before["a"]["verdict"] == "error" and [t["verdict"] for t in before["a"]["trials"]] == ["pass", "error", "pass"]
    keep(repo, "prev.jsonl")
    (repo / "answers/a-1.err").unlink()
    again = run(repo, "--retry-errors", "prev.jsonl", *trials, "--baseline", "prev.jsonl", "--fail-on", "regression")
    assert again.returncode == EXIT_OK, said(again)
    after = rows_by_id(repo / RESULTS)
    # the whole case ran again, all three trials (none kept from the errored row, none lost)
    assert [(t["attempt"], t["verdict"]) for t in after["a"]["trials"]] == [(1, "pass"), (2, "pass"), (3, "pass")]
    assert after["b"]["timestamp"] == before["b"]["timestamp"] and len(after["b"]["trials"]) == 3  # carried whole
    # PREV judged with --trials 3: a retry with another count judges something else, so every case runs again
    other = run(repo, "--retry-errors", "prev.jsonl", "--trials", "2")
    assert "1 case(s) changed since prev.jsonl" in other.stderr and other.returncode == EXIT_OK, said(other)
    assert all(len(row["trials"]) == 2 for row in read_rows(repo / RESULTS))


# ------------------------------------------------------------------ an interrupted run x --affected-since x the verdicts


def interrupt_when_hung(repo: Path, case_id: str, *args: str, finished: tuple[str, ...] = ()) -> tuple[str, str]:
    """`run ARGS`, SIGINT once case `case_id`'s agent hangs and the cases `finished` have their rows: exit 130,
    the agent not left running."""
    pid_file = repo / "answers" / f"{case_id}.pid"
    proc = start_cli("run", "evals", "--no-cache", *args, cwd=repo)
    try:
        assert wait_for(lambda: pid_file.exists() and pid_file.read_text().strip(), 30), "the agent never hung"
        assert wait_for(lambda: (repo / RESULTS).exists() and all(
            f'"eval_id": "{name}"' in (repo / RESULTS).read_text() for name in finished), 30), "never finished"
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == EXIT_SIGINT, out + err
        assert wait_for(lambda: not pid_alive(int(pid_file.read_text())), 10), "the hung agent outlived the run"
        return out, err
    finally:
        if proc.poll() is None:
            proc.kill()
        if pid_file.exists() and pid_file.read_text().strip():
            kill_quietly([int(pid_file.read_text())])


def test_an_interrupted_affected_run_never_passes_and_what_it_cut_short_runs_next(tmp_path: Path) -> None:
    repo = project(tmp_path, {"a": "ok-a", "b": "ok-b", "c": "ok-c"}, git=True)
    assert run(repo).returncode == EXIT_OK
    keep(repo, "base.jsonl")
    for name in ("b", "c"):
        edit(repo / "evals/s.eval.yaml", f"question {name}", f"question {name}, reworded")
    write(repo / "answers/c.hang", "")
    out, _ = interrupt_when_hung(repo, "c", "--affected-since", "base.jsonl", "--baseline", "base.jsonl",
                                 "--fail-on", "regression", finished=("b",))
    assert "PASSED" not in out
    found = rows_by_id(repo / RESULTS)
    assert (found["a"].get("carried"), found["b"]["verdict"], found["c"]["failure_reason_code"]) == (
        True, "pass", "interrupted")
    assert junit_cases(ET.parse(repo / ".agentv-gate/junit.xml").getroot())["c"] == "error"
    keep(repo, "head.jsonl")
    # the interrupted results: c regressed (passed on the base, not run now); a merge of them fails
    compared = run_cli("compare", "base.jsonl", "head.jsonl", cwd=repo)
    assert compared.returncode == EXIT_FAILED and "REGRESSED: c" in compared.stdout, said(compared)
    merged = run_cli("merge", "head.jsonl", "--output-dir", "merged", "--baseline", "base.jsonl", "--fail-on",
                     "regression", cwd=repo)
    assert merged.returncode == EXIT_FAILED, said(merged)
    # a rerun of them runs c (it has no result there), and only c
    (repo / "answers/c.hang").unlink()
    rerun = run(repo, "--rerun-failed", "head.jsonl", "--baseline", "base.jsonl", "--fail-on", "regression")
    assert rerun.returncode == EXIT_OK, said(rerun)
    again = rows_by_id(repo / RESULTS)
    assert again["c"]["verdict"] == "pass" and again["b"]["timestamp"] == found["b"]["timestamp"]


# ------------------------------------------------------------------ the quarantine x a renamed case x carried rows


def test_a_renamed_case_leaves_its_quarantine_behind_in_every_selection(tmp_path: Path) -> None:
    gate = ("agent_paths: [src/**, answers/**]\nquarantine:\n"
            "  - {id: a, file: evals/s.eval.yaml, reason: the judge misreads it}\n")
    repo = project(tmp_path, {"a": "nope", "b": "ok-b"}, gate=gate, git=True)
    first = run(repo)
    assert first.returncode == EXIT_OK and rows_by_id(repo / RESULTS)["a"]["quarantined"], said(first)
    keep(repo, "base.jsonl")
    edit(repo / "evals/s.eval.yaml", "id: a\n", "id: a-renamed\n")  # the case is another now: the list names it not
    for flags in ([], ["--baseline", "base.jsonl"], ["--affected-since", "base.jsonl"], ["--rerun-failed", "base.jsonl"]):
        proc = run(repo, *flags)
        assert proc.returncode == EXIT_FAILED, (flags, said(proc))
        assert "quarantine entry 'a' names no case of evals/s.eval.yaml" in proc.stderr
        row = rows_by_id(repo / RESULTS)["a-renamed"]
        assert row["verdict"] == "fail" and not row.get("quarantined") and not row.get("carried"), flags


# ------------------------------------------------------------------ carried rows x the AgentV generation's pass mark


def test_a_pass_at_agentv_2s_mark_is_never_carried_into_a_run_at_4s(tmp_path: Path) -> None:
    half = case("a") + "      - {type: contains, value: also-this}\n"  # the answer meets one of two: score 0.5
    repo = project(tmp_path, {"a": "ok-a", "b": "ok-b"}, cases=half + case("b"),
                   gate='agentv: {version: "2.19"}\nagent_paths: [src/**]\n', git=True)
    first = run(repo)
    assert first.returncode == EXIT_OK and rows_by_id(repo / RESULTS)["a"]["threshold"] == 0.5, said(first)
    keep(repo, "base.jsonl")
    edit(repo / ".agentv/gate.yaml", '"2.19"', '"4.42"')  # the repository moves on: the pass mark is 0.8
    for flags in (["--affected-since", "base.jsonl"], ["--rerun-failed", "base.jsonl"], ["--retry-errors", "base.jsonl"]):
        proc = run(repo, *flags)
        assert proc.returncode == EXIT_FAILED, (flags, said(proc))
        found = rows_by_id(repo / RESULTS)
        assert (found["a"]["verdict"], found["a"]["threshold"], found["a"].get("carried")) == ("fail", 0.8, None)


# ------------------------------------------------------------------ --tag filters x the pull-request comment


def test_gate_steps_on_other_tags_keep_a_comment_each(tmp_path: Path) -> None:
    repo = project(tmp_path, {"a": "nope", "b": "ok-b"}, cases="")
    write(repo / "evals/fast.eval.yaml", "tags: [fast]\ntests:\n" + case("a"))
    write(repo / "evals/slow.eval.yaml", "tags: [slow]\ntests:\n" + case("b"))
    (repo / "evals/s.eval.yaml").unlink()
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"number": 7, "pull_request": {"number": 7, "head": {"sha": "a" * 40},
                                                               "base": {"ref": "main"}}}))
    with FakeGitHub(token="ghs_selcombo1234567890") as github:
        env = {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_PATH": str(event), "GITHUB_EVENT_NAME": "pull_request",
               "GITHUB_REPOSITORY": github.repository, "GITHUB_API_URL": github.url, "GITHUB_WORKFLOW": "evals",
               "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "AGENTV_GATE_GITHUB_TOKEN": github.token}
        fast = run(repo, "--tag", "fast", "--comment", env=env)
        assert fast.returncode == EXIT_FAILED, said(fast)
        keep(repo, "fast.jsonl")
        slow = run(repo, "--tag", "slow", "--comment", env=env)  # the workflow's next gate step, on the other tag
        assert slow.returncode == EXIT_OK, said(slow)
        bodies = [c["body"] for c in github.comments.get(7, [])]
        # the slow step's PASSED never replaces the comment that says the fast step failed
        assert len(bodies) == 2 and "FAILED" in bodies[0] and "PASSED" in bodies[1], bodies
        # `agentv-gate comment` (the action's own comment step) with the run's --tag finds the run's comment
        again = run_cli("comment", "fast.jsonl", "evals", "--tag", "fast", cwd=repo, env=env)
        assert again.returncode == EXIT_OK, said(again)
        after = [c["body"] for c in github.comments.get(7, [])]
        assert len(after) == 2 and "FAILED" in after[0], after


# ------------------------------------------------------------------ --replay of an older recording x --baseline


def test_a_replay_of_answers_to_an_older_case_never_passes_a_regression_gate(tmp_path: Path) -> None:
    repo = project(tmp_path, {"a": "ok-a", "b": "ok-b"}, git=True)
    recorded = run(repo, "--record", "rec")  # main, with the keys: its answers and its results
    assert recorded.returncode == EXIT_OK, said(recorded)
    keep(repo, "base.jsonl")
    gate = ["--replay", "rec", "--baseline", "base.jsonl", "--fail-on", "regression"]
    # the pull request asks a differently: its question was never recorded, so it is not judged (not "new")
    edit(repo / "evals/s.eval.yaml", "question a", "question a, reworded")
    replayed = run(repo, *gate)
    assert replayed.returncode == EXIT_FAILED, said(replayed)
    row = rows_by_id(repo / RESULTS)["a"]
    assert row["failure_reason_code"] == "not_recorded" and "differs first at" in row["error"]
    assert "1 case(s) need new answers" in replayed.stdout
    # it asks the same, judged more strictly: the recorded answer is judged afresh, and fails as a regression
    edit(repo / "evals/s.eval.yaml", "question a, reworded", "question a")
    edit(repo / "evals/s.eval.yaml", "value: ok-a", "value: ok-a-now")
    replayed = run(repo, *gate)
    assert replayed.returncode == EXIT_FAILED and "REGRESSED: a" in replayed.stdout, said(replayed)
    # and carried over by --affected-since beside the replayed case: the unaffected b's row, the replayed a's failure
    replayed = run(repo, *gate, "--affected-since", "base.jsonl")
    found = rows_by_id(repo / RESULTS)
    assert replayed.returncode == EXIT_FAILED, said(replayed)
    assert found["b"].get("carried") and found["a"]["replayed"] and found["a"]["verdict"] == "fail"


# ------------------------------------------------------------------ main's merged shards x an unsharded --affected-since or rerun


def test_rows_carried_from_merged_shards_are_the_unsharded_runs_own(tmp_path: Path) -> None:
    names = ["a", "b", "c", "d"]  # two shards: a and c, b and d
    repo = project(tmp_path, {n: f"ok-{n}" for n in names}, git=True)
    set_answers(repo, {"d": "nope"})  # main breaks d ...
    commit_all(repo)
    for k in (1, 2):
        run(repo, "--shard", f"{k}/2", "--results", f"main{k}.jsonl", "--junit", f"main{k}.xml")
    assert run_cli("merge", "main1.jsonl", "main2.jsonl", "--results-out", "base.jsonl", "--junit", "m.xml",
                   cwd=repo).returncode == EXIT_FAILED
    # ... the pull request edits every case of shard 2 (b and d): only shard 1's rows are carried
    edit(repo / "evals/s.eval.yaml", "question b", "question b, reworded")
    edit(repo / "evals/s.eval.yaml", "question d", "question d, reworded")
    head = run(repo, "--affected-since", "base.jsonl", "--baseline", "base.jsonl", "--fail-on", "regression")
    assert head.returncode == EXIT_OK, said(head)  # d: still failing (also on base)
    found = rows_by_id(repo / RESULTS)
    assert found["a"]["carried"] and not any(row.get("shard") for row in found.values()), found
    keep(repo, "head.jsonl")
    # the comment step reads them as one whole run, never "part of a sharded run" (exit 2, no comment)
    for command in (["comment", "head.jsonl", "evals", "--baseline", "base.jsonl", "--fail-on", "regression"],
                    ["merge", "head.jsonl", "--output-dir", "merged", "--baseline", "base.jsonl", "--fail-on",
                     "regression"]):
        proc = run_cli(*command, cwd=repo)
        assert proc.returncode == EXIT_OK, (command, said(proc))
    # the same for a rerun of main's merged results (the one job a sharded run is rerun in)
    set_answers(repo, {"d": "ok-d"})
    rerun = run(repo, "--rerun-failed", "base.jsonl")
    assert rerun.returncode == EXIT_OK and not any(row.get("shard") for row in read_rows(repo / RESULTS)), said(rerun)
    assert run_cli("comment", str(RESULTS), "evals", cwd=repo).returncode == EXIT_OK
    for flag in ("--rerun-failed", "--retry-errors"):  # in one job only: no shard of a merge holds carried rerun rows
        refused = run(repo, flag, "base.jsonl", "--shard", "1/2")
        assert refused.returncode == 2 and "cannot be combined with --shard" in refused.stderr, said(refused)


# ------------------------------------------------------------------ --affected-since x the targets file


def test_another_model_in_the_targets_file_runs_every_case_whatever_agent_paths_say(tmp_path: Path) -> None:
    for where, gate in ((".agentv/targets.yaml", "agent_paths: [src/**]\n"),  # agent_paths that do not name it
                        ("evals/.agentv/targets.yaml", "quarantine: []\n")):  # in an eval folder (the default rule)
        repo = project(tmp_path / where.replace("/", "_"), {"a": "ok-a", "b": "ok-b"}, gate=gate)
        if where != ".agentv/targets.yaml":
            (repo / where).parent.mkdir(parents=True)
            (repo / ".agentv/targets.yaml").rename(repo / where)
        write(repo / ".gitignore", ".agentv-gate/\n*.jsonl\n")
        commit_all(repo)
        assert run(repo).returncode == EXIT_OK
        keep(repo, "base.jsonl")
        # the pull request points the target at another agent (it answers a only), and rewords a
        write(repo / where, "targets:\n  - name: default\n    provider: cli\n    command: \"echo ok-a\"\n")
        edit(repo / "evals/s.eval.yaml", "question a", "question a, reworded")
        head = run(repo, "--affected-since", "base.jsonl", "--baseline", "base.jsonl", "--fail-on", "regression")
        assert head.returncode == EXIT_FAILED, (where, said(head))  # b regressed: never carried from the old agent
        assert "running every case" in head.stderr and where in head.stderr, said(head)
        assert not any(row.get("carried") for row in read_rows(repo / RESULTS))


def test_a_run_of_the_history_that_never_started_a_case_is_no_flip_of_it(tmp_path: Path) -> None:
    repo = project(tmp_path, {"x": "nope", "a": "ok-a"})  # x fails on main, before a
    stopped = run(repo, "--max-failures", "1", "--workers", "1")  # main once stopped before starting a ...
    assert rows_by_id(repo / RESULTS)["a"]["failure_reason_code"] == "max_failures", said(stopped)
    keep(repo, "run1.jsonl")
    run(repo)
    keep(repo, "base.jsonl")  # ... and passed it on the next run
    (repo / "history.jsonl").write_text((repo / "run1.jsonl").read_text() + (repo / "base.jsonl").read_text())
    set_answers(repo, {"a": "nope"})  # the change breaks a: one trial a side, a regression
    head = run(repo, "--baseline", "base.jsonl", "--history", "history.jsonl", "--fail-on", "regression")
    assert head.returncode == EXIT_FAILED, said(head)
    assert "REGRESSED: a" in head.stdout and "flaky" not in head.stdout


# ------------------------------------------------------------------ a base stopped by --max-failures x --trials x the paired test


def test_a_base_stopped_early_still_gets_a_paired_test_of_the_cases_it_ran(tmp_path: Path) -> None:
    names = [f"c{i}" for i in range(5)]
    repo = project(tmp_path, {**{n: f"ok-{n}" for n in names}, "x": "nope", "y": "ok-y"})
    trials = ["--trials", "3", "--workers", "1"]
    base = run(repo, *trials, "--max-failures", "1")  # c0..c4 pass 3/3, x fails: main stops before y
    assert rows_by_id(repo / RESULTS)["y"]["failure_reason_code"] == "max_failures", said(base)
    keep(repo, "base.jsonl")
    for name in names:  # the change breaks every c: only its first trial passes (a pass under pass_at_k)
        set_answers(repo, {name: "no"})
        write(repo / "answers" / f"{name}-0.txt", f"ok-{name}\n")
    head = run(repo, *trials, "--baseline", "base.jsonl", "--fail-on", "regression", "--max-trials", "6")
    # y, never run on the base, is no evidence: it does not switch the paired test off for the others
    assert "no statistical decision" not in head.stdout, head.stdout
    assert head.returncode == EXIT_FAILED and "the pass rate fell" in head.stdout, said(head)
