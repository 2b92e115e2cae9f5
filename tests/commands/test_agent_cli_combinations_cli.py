"""AgentV 4.x agent-CLI targets (`claude-cli`, `copilot-cli`) and answer preprocessors, met by the verdict
features: `--trials N`, `--baseline --fail-on ...`, `--shard K/N` then `merge`, the quarantine,
`--skip-missing-env`, `--max-failures` and an interrupted run. Each feature has its own tests; these
are the combinations, each through the real CLI against a stand-in agent CLI (stream-json for Claude,
the Agent Client Protocol for Copilot) whose every call is scripted per case.

How each combination could give a wrong PASS (or lose a result, or show a secret), and the test for it
(each was seen failing with its rule broken in the package, then restored):

* trials x agent CLI: a crash on trial 2 of 3 left out of the `mean` (or pass^k) as if it were not run,
  so the two passing trials average into a pass; under pass_at_k a crash among failing trials read as a
  plain fail -> `test_a_crash_on_trial_two_is_never_averaged_into_a_pass`,
  `test_under_pass_at_k_a_crash_among_failing_trials_is_an_error`.
* baseline x agent CLI: an agent that never answers (Copilot not signed in) on every head trial of a case
  that passed every base trial, or (one trial a side) a base pass that errors now, not read as a
  regression -> `test_an_agent_that_never_answers_fails_a_regression_gate`. (Under `--fail-on regression`
  with trials a side, a crashed trial is a failed trial of the paired test, never left out: one crash in
  three on one case is no significant drop, as `test_merged_agent_cli_shards_never_pass_without_every_case`
  shows.)
* quarantine x agent CLI: the agent's crash on a quarantined case hidden as quarantined (JUnit skipped,
  exit 0), with or without trials -> `test_a_quarantined_agent_crash_stays_an_error`; with trials a
  side, the per-case guard skipping a quarantined head that *errored* in every trial, so
  `--fail-on regression` passed a case whose agent broke (found: fixed)
  -> `test_a_quarantined_case_whose_agent_broke_fails_the_paired_gate`; and the other way (a wrong fail):
  a quarantined case's significant drop failing `--fail-on case-regression` and `inconclusive` (found:
  fixed) -> `test_a_quarantined_failure_fails_no_paired_gate`.
* quarantine x --max-failures: a quarantined case's failure (which fails no gate) counted, stopping the
  run and turning the cases after it into not-run errors (found: fixed)
  -> `test_a_quarantined_failure_does_not_stop_a_max_failures_run`.
* --skip-missing-env x agent CLI x baseline: the Copilot target's key unset, its case left out and
  counted as passing (exit 0), quarantined or not -> `test_a_left_out_copilot_case_under_a_baseline_is_not_run_never_a_pass`;
  under trials, the one left-out row (no trials, read as one) switching the paired test off for the whole
  run, so a significant drop of the cases that ran was missed, and with the test failing, the exit 5
  (incomplete) instead of 1 (found: fixed) -> `test_a_left_out_case_does_not_switch_off_the_paired_test_of_the_others`;
  a base run without the key, whose left-out row did the same and let that drop exit 0 (found: fixed)
  -> `test_a_base_with_a_left_out_case_still_gets_a_paired_test`.
* shards x merge x agent CLI: a shard of agent-CLI cases missing merged into a pass, a crash on trial 2
  in one shard lost in the merge, a shard's left-out case merged into exit 0
  -> `test_merged_agent_cli_shards_never_pass_without_every_case`.
* --max-failures x agent CLI x trials x baseline: a crash on a later trial not counted as the case's
  failure, the cases never started left without rows (a reader would see a whole passing run), the
  stopped run's results merged into a pass
  -> `test_max_failures_counts_an_agent_crash_and_reports_every_case_not_started`.
* SIGINT x agent CLI x trials x baseline x --skip-missing-env x merge: the agent hung on trial 2, the run
  interrupted: the case whose trial 1 passed written as a pass, the finished or left-out case lost, the
  agent left running, exit 0, the interrupted results merged into a pass (or into exit 5 for the left-out
  case) -> `test_an_interrupted_trial_of_a_hung_agent_is_not_run_never_a_pass`
  (Claude and Copilot); a hung preprocessor outliving the run, its case lost
  -> `test_an_interrupted_run_ends_a_hung_preprocessor_and_reports_its_case_not_run`.
* preprocessors x trials x baseline: a preprocessor whose program is missing (a tool not installed)
  scored as a note the grader passes, averaged away under `mean`, read as no evidence against a base,
  or hidden behind a grader reply cached by an earlier run; one failing on trial 2 only, averaged away
  -> `test_a_missing_preprocessor_tool_is_an_error_under_trials`, `..._fails_a_regression_gate`,
  `test_a_cached_grader_reply_never_stands_in_for_a_failing_preprocessor`,
  `test_a_preprocessor_failing_on_one_trial_is_never_averaged_away`.
* secrets: the key the Copilot target is given (`api_key: ${{ VAR }}`, which the CLI gets as
  COPILOT_PROVIDER_API_KEY) or one in the environment Claude inherits, echoed in an answer, a crash's stderr
  or a failing preprocessor's, reaching results.jsonl, junit.xml, report.html or the console, through
  trials, shards, a base and a merge -> `test_a_key_the_agent_echoes_reaches_no_output`,
  `test_a_preprocessor_failing_on_one_trial_is_never_averaged_away`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from agentv_gate.errors import EXIT_FAILED, EXIT_NOT_RUN, EXIT_OK, EXIT_SIGINT, EXIT_USAGE
from tests.helpers.cli import run_cli, start_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply, RecordedRequest
from tests.helpers.files import make_repo, write
from tests.helpers.processes import kill_quietly, pid_alive, wait_for
from tests.helpers.reports import read_rows

OWN = ("COMBO_T_",)
SECRET = "sk-combo-0123456789abcdef"
KEY = {"COMBO_T_KEY": SECRET}

AGENT = """\
#!{python} -S
import json, os, re, sys, time
state = {state!r}
copilot = "--acp" in sys.argv

def behaviour(prompt):
    case = re.search(r"\\[\\[(\\w[\\w-]*)\\]\\]", prompt).group(1)
    plan = json.load(open(os.path.join(state, "plan.json")))[case]
    counter = os.path.join(state, "calls-" + case)
    n = int(open(counter).read()) if os.path.exists(counter) else 0
    open(counter, "w").write(str(n + 1))
    return case, plan[min(n, len(plan) - 1)]

def act(case, letter):
    if letter == "C":
        sys.stderr.write("agent crashed on " + case + "; key " + os.environ.get("COMBO_T_KEY", "")
                         + os.environ.get("COPILOT_PROVIDER_API_KEY", "") + "\\n")
        sys.exit(2)
    if letter == "H":
        open(os.path.join(state, "hung.pid"), "w").write(str(os.getpid()))
        time.sleep(60)
    if letter == "L":
        return "Paris, and my key is " + os.environ.get("COMBO_T_KEY", "") + os.environ.get("COPILOT_PROVIDER_API_KEY", "")
    return "Paris" if letter == "P" else "London"

def send(obj):
    sys.stdout.write(json.dumps(obj) + "\\n"); sys.stdout.flush()

if not copilot:
    case, letter = behaviour(sys.stdin.read())
    text = act(case, letter)
    send({{"type": "assistant", "message": {{"content": [{{"type": "text", "text": text}}]}}}})
    send({{"type": "result", "total_cost_usd": 0.01, "duration_ms": 5}})
    sys.exit(0)
for line in sys.stdin:
    msg = json.loads(line)
    if "method" not in msg:
        continue
    m, i = msg["method"], msg["id"]
    if m == "initialize":
        send({{"jsonrpc": "2.0", "id": i, "result": {{"protocolVersion": 1}}}})
    elif m == "session/new":
        send({{"jsonrpc": "2.0", "id": i, "result": {{"sessionId": "s"}}}})
    elif m == "session/prompt":
        case, letter = behaviour(" ".join(p["text"] for p in msg["params"]["prompt"]))
        if letter == "A":
            send({{"jsonrpc": "2.0", "id": i, "error": {{"code": -32000, "message": "Authentication required"}}}})
            continue
        text = act(case, letter)
        send({{"jsonrpc": "2.0", "method": "session/update", "params": {{"sessionId": "s", "update": {{
            "sessionUpdate": "agent_message_chunk", "content": {{"type": "text", "text": text}}}}}}}})
        send({{"jsonrpc": "2.0", "id": i, "result": {{"stopReason": "end_turn"}}}})
"""
"""One stand-in for both agent CLIs: Claude (`-p`, the prompt on stdin, stream-json out) or Copilot (`--acp`,
JSON-RPC lines). Each case's prompt holds `[[ID]]`; `plan.json` gives the case a letter per call (the last
repeats): P answers Paris, F London, C crashes (its stderr quoting the key it was given), H hangs, L answers
Paris and echoes the key, A (Copilot) answers `Authentication required`."""


def project(tmp_path: Path, plan: dict[str, str], provider: str = "claude-cli", gate: str | None = None,
            keyed: list[str] | None = None) -> Path:
    """A repository whose default target is the stand-in as `provider`; `keyed`: cases in a second eval file on a
    Copilot target given `api_key: ${{ COMBO_T_KEY }}`."""
    repo = tmp_path / "repo"
    state = tmp_path / "state"
    state.mkdir(parents=True)
    agent = write(tmp_path / "bin" / "agent", AGENT.format(python=sys.executable, state=str(state)), executable=True)
    make_repo(repo, f"""
        targets:
          - name: default
            provider: {provider}
            executable: {agent}
            timeout_seconds: 20
          - name: keyed
            provider: copilot-cli
            executable: {agent}
            base_url: http://127.0.0.1:9/v1
            api_key: ${{{{ COMBO_T_KEY }}}}
    """)
    cases = [case for case in plan if case not in (keyed or [])]
    write(repo / "evals" / "a.eval.yaml", "tests:\n" + "".join(
        f"  - id: {case}\n    input: '[[{case}]] What is the capital of France?'\n"
        "    assertions: [{type: contains, value: Paris}]\n" for case in cases))
    if keyed:
        write(repo / "evals" / "b.eval.yaml", "target: keyed\ntests:\n" + "".join(
            f"  - id: {case}\n    input: '[[{case}]] What is the capital of France?'\n"
            "    assertions: [{type: contains, value: Paris}]\n" for case in keyed))
    if gate is not None:
        write(repo / ".agentv" / "gate.yaml", gate)
    set_plan(repo, plan)
    return repo


def set_plan(repo: Path, plan: dict[str, str]) -> None:
    state = repo.parent / "state"
    for counter in state.glob("calls-*"):
        counter.unlink()
    write(state / "plan.json", json.dumps(plan))


def run(repo: Path, *args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return run_cli("run", "evals", "--no-cache", *args, cwd=repo, env=env, drop=OWN)


def base_of(repo: Path, plan: dict[str, str], *args: str, env: dict[str, str] | None = None) -> Path:
    """The base branch's results: the suite run with `plan`, copied beside the repository's outputs."""
    set_plan(repo, plan)
    ran = run(repo, *args, env=env)
    assert ran.returncode in (EXIT_OK, EXIT_FAILED, EXIT_NOT_RUN), ran.stdout + ran.stderr
    base = repo / "base.jsonl"
    shutil.copy(repo / ".agentv-gate" / "results.jsonl", base)
    return base


def rows(repo: Path, name: str = "results.jsonl") -> dict[str, dict]:
    return {row["eval_id"]: row for row in read_rows(repo / ".agentv-gate" / name)}


def written_pid(path: Path) -> int:
    """The pid a stand-in wrote to `path`, 0 while it has written none (the file may exist, still empty)."""
    text = path.read_text().strip() if path.exists() else ""
    return int(text) if text else 0


def interrupt_once_started(proc: subprocess.Popen[str], pid_file: Path, what: str,
                           ready: Callable[[], bool] = lambda: True, settle: float = 0.0) -> tuple[str, str]:
    """SIGINT to the run once the child `what` (its pid in `pid_file`) has started, `ready` holds and `settle`
    seconds passed: the run exits 130 and the child does not outlive it; however the test ends, neither is
    left running."""
    try:
        assert wait_for(lambda: written_pid(pid_file), 30), f"{what} never started"
        child = written_pid(pid_file)
        assert wait_for(ready, 30)
        time.sleep(settle)
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == EXIT_SIGINT, out + err
        assert wait_for(lambda: not pid_alive(child), 10), f"{what} outlived the interrupted run"
        return out, err
    finally:
        if proc.poll() is None:
            proc.kill()
        if written_pid(pid_file):
            kill_quietly([written_pid(pid_file)])


def junit(repo: Path) -> dict[str, str]:
    """Each testcase's outcome in junit.xml: passed, failure, error or skipped."""
    found = {}
    for case in ET.parse(repo / ".agentv-gate" / "junit.xml").getroot().iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        found[case.get("name") or ""] = kinds[0] if kinds else "passed"
    return found


# ---------------------------------------------------------------- trials


def test_a_crash_on_trial_two_is_never_averaged_into_a_pass(tmp_path: Path) -> None:
    for provider in ("claude-cli", "copilot-cli"):
        for strategy in ("mean", "pass_hat_k"):
            repo = project(tmp_path / f"{provider}-{strategy}", {"steady": "PPP", "crashy": "PCP"}, provider)
            ran = run(repo, "--trials", "3", "--trials-strategy", strategy)
            out = ran.stdout + ran.stderr
            assert ran.returncode == EXIT_FAILED, (provider, strategy, out)
            row = rows(repo)["crashy"]
            assert row["verdict"] == "error", (provider, strategy, row)
            assert [t["verdict"] for t in row["trials"]] == ["pass", "error", "pass"]
            assert "trial 2 of 3" in row["error"] and "crashed on crashy" in row["error"] or \
                "exited before it answered" in row["error"], row["error"]
            assert rows(repo)["steady"]["verdict"] == "pass"  # the other case is still reported, and passes
            assert junit(repo) == {"steady": "passed", "crashy": "error"}
            assert "1 passed, 0 failed, 1 error" in ran.stdout, out


def test_under_pass_at_k_a_crash_among_failing_trials_is_an_error(tmp_path: Path) -> None:
    repo = project(tmp_path, {"lucky": "CFP", "never": "FCF"}, "copilot-cli")
    ran = run(repo, "--trials", "3")
    assert ran.returncode == EXIT_FAILED, ran.stdout + ran.stderr
    found = rows(repo)
    assert found["lucky"]["verdict"] == "pass"  # pass@k: one passing trial passes, as in AgentV
    assert found["never"]["verdict"] == "error", found["never"]  # never a plain fail: a trial was not scored


# ---------------------------------------------------------------- baseline


def test_an_agent_that_never_answers_fails_a_regression_gate(tmp_path: Path) -> None:
    repo = project(tmp_path, {"c1": "PPP", "c2": "PPP", "c3": "PPP"}, "copilot-cli")
    base = base_of(repo, {"c1": "PPP", "c2": "PPP", "c3": "PPP"}, "--trials", "3")
    set_plan(repo, {"c1": "PPP", "c2": "AAA", "c3": "PPP"})  # Copilot signed out for c2's every trial
    ran = run(repo, "--trials", "3", "--baseline", str(base), "--fail-on", "regression", "--max-trials", "3")
    assert ran.returncode == EXIT_FAILED, ran.stdout + ran.stderr
    assert rows(repo)["c2"]["verdict"] == "error"
    # one trial a side: the case that passed on the base and errors now regressed
    base = base_of(repo, {"c1": "P", "c2": "P", "c3": "P"})
    set_plan(repo, {"c1": "P", "c2": "C", "c3": "P"})
    ran = run(repo, "--baseline", str(base), "--fail-on", "regression")
    assert ran.returncode == EXIT_FAILED, ran.stdout + ran.stderr
    assert "1 case(s) regressed" in ran.stdout + ran.stderr


# ---------------------------------------------------------------- quarantine

QUARANTINE = """\
quarantine:
  - id: known
    reason: the agent is known to fail this (#7)
"""


def test_a_quarantined_agent_crash_stays_an_error(tmp_path: Path) -> None:
    for trials in ((), ("--trials", "3", "--trials-strategy", "mean")):
        repo = project(tmp_path / str(len(trials)), {"fine": "P", "known": "PCP" if trials else "C"}, gate=QUARANTINE)
        ran = run(repo, *trials)
        assert ran.returncode == EXIT_FAILED, ran.stdout + ran.stderr
        row = rows(repo)["known"]
        assert row["verdict"] == "error" and row["quarantined"], row
        assert junit(repo)["known"] == "error"  # never a skipped test
        assert "1 passed, 0 failed, 1 error (pass rate 50.0%)" in ran.stdout, ran.stdout  # not counted quarantined


def test_a_quarantined_case_whose_agent_broke_fails_the_paired_gate(tmp_path: Path) -> None:
    """A quarantine mutes a case's failures, never its errors: with trials a side, an agent crashing on every head
    trial of a quarantined case that passed every base trial is the per-case guard's `broken`, as it would be
    without the quarantine."""
    repo = project(tmp_path, {"c1": "PPP", "c2": "PPP", "known": "PPP"}, gate=QUARANTINE)
    base = base_of(repo, {"c1": "PPP", "c2": "PPP", "known": "PPP"}, "--trials", "3")
    set_plan(repo, {"c1": "PPP", "c2": "PPP", "known": "CCC"})
    for fail_on in ("regression", "case-regression", "inconclusive"):
        ran = run(repo, "--trials", "3", "--baseline", str(base), "--fail-on", fail_on, "--max-trials", "3")
        assert ran.returncode == EXIT_FAILED, (fail_on, ran.stdout + ran.stderr)
        assert rows(repo)["known"]["verdict"] == "error"
    # a quarantined case that only fails stays muted
    set_plan(repo, {"c1": "PPP", "c2": "PPP", "known": "FFF"})
    ran = run(repo, "--trials", "3", "--baseline", str(base), "--fail-on", "regression", "--max-trials", "3")
    assert ran.returncode == EXIT_OK, ran.stdout + ran.stderr


# ---------------------------------------------------------------- --skip-missing-env


def test_a_left_out_copilot_case_under_a_baseline_is_not_run_never_a_pass(tmp_path: Path) -> None:
    repo = project(tmp_path, {"c1": "P", "keyed1": "P"}, keyed=["keyed1"])
    base = base_of(repo, {"c1": "P", "keyed1": "P"}, env={"COMBO_T_KEY": SECRET})
    for fail_on in ("all", "regression"):
        ran = run(repo, "--skip-missing-env", "--baseline", str(base), "--fail-on", fail_on)
        assert ran.returncode == EXIT_NOT_RUN, (fail_on, ran.stdout + ran.stderr)
        row = rows(repo)["keyed1"]
        assert row["verdict"] == "error" and row["failure_reason_code"] == "missing_env", row
        assert "COMBO_T_KEY" in row["error"]
        assert "1 passed" in ran.stdout and "1 not run" in ran.stdout, ran.stdout
    # and quarantined too, it is not run: never exit 0
    write(repo / ".agentv" / "gate.yaml", "quarantine:\n  - {id: keyed1, reason: flaky upstream}\n")
    ran = run(repo, "--skip-missing-env", "--baseline", str(base), "--fail-on", "regression")
    assert ran.returncode == EXIT_NOT_RUN, ran.stdout + ran.stderr


def test_a_left_out_case_does_not_switch_off_the_paired_test_of_the_others(tmp_path: Path) -> None:
    """The row of a case left out for an unset variable holds no trials: read as a single trial it made the
    paired test impossible for the whole run, and then the one-trial rule read pass_at_k's verdicts, which a
    case that fell from 3/3 to 1/3 still passes: exit 5 (incomplete) for a run whose drop fails the gate. And
    with the paired test failing, a left-out case beside it made the exit 5, not 1."""
    cases = {f"c{i}": "PPP" for i in range(5)}
    repo = project(tmp_path, {**cases, "keyed1": "PPP"}, keyed=["keyed1"])
    base = base_of(repo, {**cases, "keyed1": "PPP"}, "--trials", "3", env={"COMBO_T_KEY": SECRET})
    head = {**{case: "FFP" for case in cases}, "keyed1": "PPP"}
    args = ("--trials", "3", "--baseline", str(base), "--fail-on", "regression", "--max-trials", "3")
    set_plan(repo, head)
    whole = run(repo, *args, env={"COMBO_T_KEY": SECRET})
    assert whole.returncode == EXIT_FAILED, whole.stdout + whole.stderr
    set_plan(repo, head)
    ran = run(repo, "--skip-missing-env", *args)
    assert ran.returncode == EXIT_FAILED, ran.stdout + ran.stderr
    assert "paired test over 5 case(s)" in ran.stdout and "failed, the pass rate fell" in ran.stdout
    assert rows(repo)["keyed1"]["failure_reason_code"] == "missing_env"
    set_plan(repo, {**cases, "keyed1": "PPP"})  # nothing dropped: the left-out case alone makes it incomplete
    ran = run(repo, "--skip-missing-env", *args)
    assert ran.returncode == EXIT_NOT_RUN, ran.stdout + ran.stderr
    assert "paired test over 5 case(s)" in ran.stdout


# ---------------------------------------------------------------- shards and merge


def merge(repo: Path, *shards: str, args: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
    return run_cli("merge", *(f"{shard}/results.jsonl" for shard in shards), "--output-dir", "merged", *args,
                   cwd=repo, drop=OWN)


def test_merged_agent_cli_shards_never_pass_without_every_case(tmp_path: Path) -> None:
    plan = {"c1": "PPP", "c2": "PPP", "c3": "PCP", "c4": "PPP", "keyed1": "PPP"}
    repo = project(tmp_path, plan, "copilot-cli", keyed=["keyed1"])
    base = base_of(repo, {case: "PPP" for case in plan}, "--trials", "3", env={"COMBO_T_KEY": SECRET})
    set_plan(repo, plan)
    trials = ("--trials", "3", "--trials-strategy", "mean")
    for k in (1, 2):
        ran = run(repo, *trials, "--skip-missing-env", "--shard", f"{k}/2", "--output-dir", f"s{k}")
        assert ran.returncode in (EXIT_FAILED, EXIT_NOT_RUN, EXIT_OK), ran.stdout + ran.stderr
    shard_of = {row["eval_id"]: k for k in (1, 2) for row in read_rows(repo / f"s{k}" / "results.jsonl")}
    assert sorted(shard_of) == sorted(plan)
    # one shard alone never passes: refused
    for k in (1, 2):
        alone = merge(repo, f"s{k}")
        assert alone.returncode == EXIT_USAGE, alone.stdout + alone.stderr
        assert "incomplete shard results" in alone.stderr
    # both: c3's crash on trial 2 is the merged run's error, and fails it, with the base too
    for args in ((), ("--baseline", str(base))):
        merged = merge(repo, "s1", "s2", args=args)
        assert merged.returncode == EXIT_FAILED, merged.stdout + merged.stderr
        found = {row["eval_id"]: row for row in read_rows(repo / "merged" / "results.jsonl")}
        assert found["c3"]["verdict"] == "error" and found["keyed1"]["failure_reason_code"] == "missing_env"
        assert [t["verdict"] for t in found["c3"]["trials"]] == ["pass", "error", "pass"]
    # --fail-on regression: the crashed trial is a failed trial of the paired test (3/3 -> 2/3, no significant
    # drop), never left out; the case left out still keeps the merged run from passing
    merged = merge(repo, "s1", "s2", args=("--baseline", str(base), "--fail-on", "regression", "--max-trials", "3"))
    assert merged.returncode == EXIT_NOT_RUN, merged.stdout + merged.stderr
    assert "c3 (evals/a.eval.yaml:8) — inconclusive: 3/3 -> 2/3 passing trials" in merged.stdout
    # with the crash gone, the left-out case alone: exit 5, never 0, with or without the base
    set_plan(repo, {**plan, "c3": "PPP"})
    crashed = shard_of["c3"]
    ran = run(repo, *trials, "--skip-missing-env", "--shard", f"{crashed}/2", "--output-dir", f"s{crashed}")
    for args in ((), ("--baseline", str(base), "--fail-on", "regression", "--max-trials", "3")):
        merged = merge(repo, "s1", "s2", args=args)
        assert merged.returncode == EXIT_NOT_RUN, merged.stdout + merged.stderr


# ---------------------------------------------------------------- --max-failures


def test_max_failures_counts_an_agent_crash_and_reports_every_case_not_started(tmp_path: Path) -> None:
    plan = {"c1": "PCP", "c2": "PPP", "c3": "PPP"}
    repo = project(tmp_path, plan)
    base = base_of(repo, {case: "PPP" for case in plan}, "--trials", "3")
    set_plan(repo, plan)
    ran = run(repo, "--trials", "3", "--trials-strategy", "mean", "--max-failures", "1", "--workers", "1",
              "--baseline", str(base), "--fail-on", "regression", "--max-trials", "3")
    assert ran.returncode == EXIT_FAILED, ran.stdout + ran.stderr
    found = rows(repo)
    assert sorted(found) == ["c1", "c2", "c3"]  # every case has its row
    assert found["c1"]["verdict"] == "error"
    for case in ("c2", "c3"):
        assert found[case]["verdict"] == "error" and found[case]["failure_reason_code"] == "max_failures", found[case]
    assert junit(repo) == {"c1": "error", "c2": "error", "c3": "error"}
    assert "stopped after 1 failed or errored case(s)" in ran.stdout + ran.stderr
    # its results merged (the one shard of a sharded workflow) never pass: with the base they fail, without it
    # (rows gated against a base) the merge is refused
    for args in ((), ("--baseline", str(base), "--fail-on", "regression", "--max-trials", "3")):
        merged = run_cli("merge", ".agentv-gate/results.jsonl", "--output-dir", "merged", *args, cwd=repo, drop=OWN)
        assert merged.returncode == (EXIT_FAILED if args else EXIT_USAGE), merged.stdout + merged.stderr


# ---------------------------------------------------------------- an interrupted run


@pytest.mark.parametrize("provider", ["claude-cli", "copilot-cli"])
def test_an_interrupted_trial_of_a_hung_agent_is_not_run_never_a_pass(tmp_path: Path, provider: str) -> None:
    """Trial 1 of `hung` passed, trial 2's agent hangs: SIGINT ends it at once, `hung` is not run (its passing
    first trial is no verdict), `done` keeps its result, and a merge of the shard never passes."""
    plan = {"done": "P", "hung": "PHP", "keyed1": "P"}
    repo = project(tmp_path, plan, provider, keyed=["keyed1"])
    base = base_of(repo, {"done": "PPP", "hung": "PPP", "keyed1": "PPP"}, "--trials", "3", env=KEY)
    set_plan(repo, plan)
    pid_file = tmp_path / "state" / "hung.pid"
    proc = start_cli("run", "evals", "--no-cache", "--trials", "3", "--shard", "1/1", "--baseline", str(base),
                     "--fail-on", "regression", "--skip-missing-env", cwd=repo)
    results = repo / ".agentv-gate" / "results.jsonl"
    out, _ = interrupt_once_started(proc, pid_file, "the hung stand-in agent", ready=lambda: results.exists() and
                                    '"eval_id":"done"' in results.read_text().replace(" ", ""))
    found = rows(repo)
    assert found["done"]["verdict"] == "pass"
    assert found["hung"]["verdict"] == "error" and found["hung"]["failure_reason_code"] == "interrupted", found["hung"]
    assert found["keyed1"]["failure_reason_code"] == "missing_env"  # left out, and still reported
    assert junit(repo) == {"done [default]": "passed", "hung [default]": "error", "keyed1 [keyed]": "skipped"}
    assert "INTERRUPTED" in out
    # interrupted: 1, never 5 (or 0); without the base the rows gated against one are refused
    for args in ((), ("--baseline", str(base), "--fail-on", "regression")):
        merged = run_cli("merge", ".agentv-gate/results.jsonl", "--output-dir", "merged", *args, cwd=repo)
        assert merged.returncode == (EXIT_FAILED if args else EXIT_USAGE), merged.stdout + merged.stderr


def test_a_quarantined_failure_does_not_stop_a_max_failures_run(tmp_path: Path) -> None:
    """A quarantined case's failure never fails the gate, so it must not stop the run and turn the cases after
    it into not-run errors (their results lost, the gate failed by a known gap); its agent's crash still does."""
    repo = project(tmp_path, {"known": "FFF", "c2": "PPP", "c3": "PPP"}, gate=QUARANTINE)
    for trials in ((), ("--trials", "3", "--trials-strategy", "mean")):
        set_plan(repo, {"known": "FFF", "c2": "PPP", "c3": "PPP"})
        ran = run(repo, "--max-failures", "1", "--workers", "1", *trials)
        assert ran.returncode == EXIT_OK, ran.stdout + ran.stderr
        assert {case: row["verdict"] for case, row in rows(repo).items()} == {"known": "fail", "c2": "pass",
                                                                             "c3": "pass"}
    set_plan(repo, {"known": "FCF", "c2": "PPP", "c3": "PPP"})
    ran = run(repo, "--max-failures", "1", "--workers", "1", "--trials", "3", "--trials-strategy", "mean")
    assert ran.returncode == EXIT_FAILED, ran.stdout + ran.stderr
    found = rows(repo)
    assert found["known"]["verdict"] == "error"
    assert [found[case]["failure_reason_code"] for case in ("c2", "c3")] == ["max_failures", "max_failures"]


# ---------------------------------------------------------------- preprocessors

XLSX_AGENT = """\
import json, os, sys
case = open(sys.argv[2]).read().strip()
os.makedirs("generated", exist_ok=True)
open("generated/report.xlsx", "wb").write(bytes([0, 159, 146, 150]))
blocks = [{"type": "file", "media_type": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
           "path": "generated/report.xlsx"}] if case == "sheet" else [{"type": "text", "text": "Q1,42"}]
json.dump({"output": [{"role": "assistant", "content": blocks}]}, open(sys.argv[1], "w"))
"""
"""A `cli` agent answering `sheet` with a spreadsheet file block (read by graders through a preprocessor) and
any other case with text."""

CONVERT = """\
import json, os, sys
json.load(sys.stdin)
counter = "../convert-calls"
n = int(open(counter).read()) if os.path.exists(counter) else 0
open(counter, "w").write(str(n + 1))
if n + 1 in {fail_on}:
    sys.stderr.write("converter broke; key " + os.environ.get("COMBO_T_KEY", "") + "\\n")
    sys.exit(3)
print("Q1,42")
"""
"""A preprocessor printing the sheet's rows; it fails (quoting the key it inherited) on the calls in `fail_on`."""


def judged_project(tmp_path: Path, fake_llm: FakeLLMServer, command: str, fail_on: tuple[int, ...] = ()) -> Path:
    def judge(request: RecordedRequest) -> FakeReply:
        prompt = next(m["content"] for m in request.json["messages"] if m["role"] == "user")
        ok = "Q1,42" in prompt
        return FakeReply.openai(json.dumps({"checks": [{"id": "rubric-1", "satisfied": ok, "reasoning": "r"}],
                                            "overall_reasoning": "r", "score": 1 if ok else 0}))

    fake_llm.set_default("/v1/chat/completions", judge)
    repo = make_repo(tmp_path / "repo", f"""
        targets:
          - name: default
            provider: cli
            command: {sys.executable} -S agent.py {{OUTPUT_FILE}} {{PROMPT_FILE}}
            cwd: ..
            judge_target: judge
          - name: judge
            provider: openai
            base_url: {fake_llm.url}
            api_key: ${{{{ COMBO_T_KEY }}}}
            model: m
    """)
    write(repo / "agent.py", XLSX_AGENT)
    write(repo / "scripts" / "convert.py", CONVERT.replace("{fail_on}", repr(set(fail_on) or {0})))
    set_preprocessor(repo, command)
    return repo


def set_preprocessor(repo: Path, command: str) -> None:
    write(repo / "evals" / "x.eval.yaml", f"""
        preprocessors:
          - type: xlsx
            command: [{command}, -S, ../scripts/convert.py]
        tests:
          - id: sheet
            input: sheet
            assertions: [The spreadsheet holds the revenue rows]
          - id: text
            input: text
            assertions: [The spreadsheet holds the revenue rows]
    """)
    (repo / "convert-calls").unlink(missing_ok=True)


MISSING = "no-such-converter-combo"
"""A preprocessor's program not installed where the pull request runs."""


def assert_missing_tool_errors(repo: Path, ran) -> None:  # type: ignore[no-untyped-def]
    assert ran.returncode == EXIT_FAILED, ran.stdout + ran.stderr
    found = rows(repo)
    assert found["sheet"]["verdict"] == "error", found["sheet"]
    assert f"command not found: '{MISSING}'" in found["sheet"]["error"], found["sheet"]["error"]
    assert found["text"]["verdict"] == "pass"  # the other case's result still counts


def test_a_missing_preprocessor_tool_is_an_error_under_trials(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    repo = judged_project(tmp_path, fake_llm, MISSING)
    for trials in (("--trials", "3", "--trials-strategy", "mean"), ("--trials", "3")):
        ran = run(repo, *trials, env=KEY)
        assert_missing_tool_errors(repo, ran)
        assert [t["verdict"] for t in rows(repo)["sheet"]["trials"]] == ["error"] * 3


def test_a_missing_preprocessor_tool_fails_a_regression_gate(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    repo = judged_project(tmp_path, fake_llm, sys.executable)
    base_of(repo, {}, env=KEY).rename(repo / "base1.jsonl")
    base3 = base_of(repo, {}, "--trials", "3", env=KEY)
    set_preprocessor(repo, MISSING)
    for args in (("--baseline", str(repo / "base1.jsonl"), "--fail-on", "regression"),
                 ("--trials", "3", "--baseline", str(base3), "--fail-on", "regression", "--max-trials", "3")):
        ran = run(repo, *args, env=KEY)
        assert_missing_tool_errors(repo, ran)


def test_a_cached_grader_reply_never_stands_in_for_a_failing_preprocessor(tmp_path: Path,
                                                                         fake_llm: FakeLLMServer) -> None:
    repo = judged_project(tmp_path, fake_llm, sys.executable)
    cache = ("--cache-dir", str(tmp_path / "cache"))
    ran = run_cli("run", "evals", *cache, cwd=repo, env=KEY, drop=OWN)
    assert ran.returncode == EXIT_OK, ran.stdout + ran.stderr
    set_preprocessor(repo, MISSING)
    ran = run_cli("run", "evals", *cache, cwd=repo, env=KEY, drop=OWN)
    assert_missing_tool_errors(repo, ran)


def test_a_preprocessor_failing_on_one_trial_is_never_averaged_away(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    """The converter breaks on its second call (trial 2 of `sheet`), printing the key it inherited."""
    repo = judged_project(tmp_path, fake_llm, sys.executable, fail_on=(2,))
    ran = run(repo, "--trials", "3", "--trials-strategy", "mean", "--workers", "1", "--verbose", env=KEY)
    assert ran.returncode == EXIT_FAILED, ran.stdout + ran.stderr
    row = rows(repo)["sheet"]
    assert row["verdict"] == "error" and [t["verdict"] for t in row["trials"]] == ["pass", "error", "pass"], row
    assert "trial 2 of 3" in row["error"] and "exited with code 3" in row["error"], row["error"]
    assert "converter broke; key ***" in row["error"]
    for report in ("results.jsonl", "junit.xml", "report.html"):
        assert SECRET not in (repo / ".agentv-gate" / report).read_text(), report
    assert SECRET not in ran.stdout + ran.stderr


# ---------------------------------------------------------------- secrets


def test_a_key_the_agent_echoes_reaches_no_output(tmp_path: Path) -> None:
    """The Copilot target's `api_key` (handed to the CLI as COPILOT_PROVIDER_API_KEY) and a key in the environment
    Claude inherits, echoed in answers and in a crash's stderr, over trials, shards, a base and a merge."""
    plan = {"c1": "LCL", "c2": "LLL", "keyed1": "LCL"}
    repo = project(tmp_path, plan, keyed=["keyed1"])
    base = base_of(repo, {case: "PPP" for case in plan}, "--trials", "3", env=KEY)
    for k in (1, 2):
        set_plan(repo, plan)
        ran = run(repo, "--trials", "3", "--trials-strategy", "mean", "--verbose", "--shard", f"{k}/2",
                  "--output-dir", f"s{k}", "--baseline", str(base), env=KEY)
        assert ran.returncode == EXIT_FAILED or k == 2, ran.stdout + ran.stderr
        assert SECRET not in ran.stdout + ran.stderr
    merged = merge(repo, "s1", "s2", args=("--baseline", str(base), "--verbose"))
    assert merged.returncode == EXIT_FAILED, merged.stdout + merged.stderr
    assert SECRET not in merged.stdout + merged.stderr
    found = {row["eval_id"]: row for row in read_rows(repo / "merged" / "results.jsonl")}
    for case in ("c1", "keyed1"):
        assert found[case]["verdict"] == "error", found[case]
        assert "key ***" in found[case]["error"], found[case]["error"]  # the crash's stderr, redacted
    assert found["c2"]["verdict"] == "pass" and "my key is ***" in found["c2"]["candidate_answer"], found["c2"]
    for folder in ("s1", "s2", "merged"):
        for report in ("results.jsonl", "junit.xml", "report.html"):
            assert SECRET not in (repo / folder / report).read_text(), (folder, report)


def test_a_base_with_a_left_out_case_still_gets_a_paired_test(tmp_path: Path) -> None:
    """The base ran without the key (a fork's push): its left-out row, read as a single trial, switched the paired
    test off, and the one-trial rule then passed five cases falling from 3/3 to 1/3 under pass_at_k: exit 0."""
    cases = {f"c{i}": "PPP" for i in range(5)}
    repo = project(tmp_path, {**cases, "keyed1": "PPP"}, keyed=["keyed1"])
    base = base_of(repo, {**cases, "keyed1": "PPP"}, "--trials", "3", "--skip-missing-env")
    assert rows(repo)["keyed1"]["failure_reason_code"] == "missing_env"
    set_plan(repo, {**{case: "FFP" for case in cases}, "keyed1": "PPP"})
    ran = run(repo, "--trials", "3", "--baseline", str(base), "--fail-on", "regression", "--max-trials", "3",
              env={"COMBO_T_KEY": SECRET})
    assert ran.returncode == EXIT_FAILED, ran.stdout + ran.stderr
    assert "paired test over 5 case(s)" in ran.stdout and "failed, the pass rate fell" in ran.stdout


def test_an_interrupted_run_ends_a_hung_preprocessor_and_reports_its_case_not_run(
        tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    repo = judged_project(tmp_path, fake_llm, sys.executable)
    pid_file = tmp_path / "converter.pid"
    write(repo / "scripts" / "convert.py", f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
          "time.sleep(60)\n")
    proc = start_cli("run", "evals", "--no-cache", "--workers", "1", "--trials", "2", cwd=repo, env=KEY)
    out, err = interrupt_once_started(proc, pid_file, "the preprocessor", settle=0.2)
    found = rows(repo)
    assert found["sheet"]["verdict"] == "error" and found["sheet"]["failure_reason_code"] == "interrupted"
    assert junit(repo)["sheet"] == "error"
    assert SECRET not in out + err


def test_a_quarantined_failure_fails_no_paired_gate(tmp_path: Path) -> None:
    """A quarantined case's failure never fails the gate: falling from 5/5 to 0/5 is significant on its own
    (Fisher, BH q <= 0.05), which failed `--fail-on case-regression` and `inconclusive` for a known gap."""
    repo = project(tmp_path, {"c1": "PPPPP", "known": "PPPPP"}, gate=QUARANTINE)
    base = base_of(repo, {"c1": "PPPPP", "known": "PPPPP"}, "--trials", "5")
    trials = ("--trials", "5", "--max-trials", "5")
    for fail_on in ("case-regression", "inconclusive"):  # `regression`: the test above, its FFF case
        set_plan(repo, {"c1": "PPPPP", "known": "FFFFF"})
        ran = run(repo, *trials, "--baseline", str(base), "--fail-on", fail_on)
        assert ran.returncode == EXIT_OK, (fail_on, ran.stdout + ran.stderr)
        assert "QUARANTINED" in ran.stdout
    set_plan(repo, {"c1": "PPPPP", "known": "FFFFF"})  # the same drop, not on the list, fails
    write(repo / ".agentv" / "gate.yaml", "quarantine: []\n")
    ran = run(repo, *trials, "--baseline", str(base), "--fail-on", "case-regression")
    assert ran.returncode == EXIT_FAILED, ran.stdout + ran.stderr
