"""The agentic llm-grader and workspaces combined with the verdict features, through the real CLI.

How each combination could go wrong (a wrong PASS, a write outside the repository, a secret reaching a
judge, an agent or an output), and the test that guards it:

Workspaces x `--trials N` (AgentV 4.42 prepares each trial as a run of the case of its own:
`runEvalCaseWithTrials` calls `runEvalCase`, which calls `prepareEvalCaseWorkspace`, every trial):
  1. an `isolation: per_test` workspace shared by a case's trials: trial 2's agent does nothing, yet its
     grader finds the file trial 1's agent wrote, and a mean of failing trials passes
     (test_each_trial_of_a_per_test_case_gets_a_fresh_workspace_for_the_agentic_grader);
  2. in the suite's shared workspace, `before_each` (with its `reset`) run once for all trials: the diff of
     trial 2 is taken from a baseline before trial 1, so a code grader reading `file_changes` sees trial 1's
     change as trial 2's (test_before_each_and_its_reset_run_before_every_trial_of_a_shared_workspace);
     and with no reset at all (AgentV then runs trial 2 on trial 1's leftovers, a deliberate difference)
     (test_each_trial_in_a_shared_workspace_starts_where_the_first_did);
  3. the per-case guard's re-runs (`--baseline --fail-on regression`, commands/_reruns.py) running a round
     of trials in one workspace: a re-run trial passing on an earlier re-run's files clears a broken case
     (test_the_guards_reruns_get_a_fresh_workspace_for_every_trial);
  4. `--shard K/N` + `merge`: a shard's trial-failing workspace case must reach the merged verdict as a
     failure (test_shards_of_workspace_trials_merge_to_the_failing_verdict).

The agentic grader (`provider: agentv`) whose grading breaks:
  5. it runs out of steps still asking for tools, or its last reply holds no verdict: AgentV scores it 0
     with a failed assertion; with `negate: true` that 0 turned into a 1, a PASS of a grader that never
     judged (test_a_grader_without_a_verdict_is_an_error_even_negated);
  6. the same on a quarantined case: a quarantined *failure* does not fail the gate, so a grader that never
     judged was hidden (test_a_quarantined_case_whose_grader_never_judged_fails_the_gate);
  7. the same under `--trials` with `mean`: one trial that never judged averaged with passing ones
     (test_a_trial_whose_grader_never_judged_makes_the_mean_case_an_error);
  8. the grader target down (HTTP 500) for a quarantined case under trials: an error, never quarantined
     (test_a_grader_target_down_is_an_error_under_trials_and_quarantine);
  9. `target:` delegation to an agentv grader (`grader_target` mode) answering nothing, negated
     (same test as 5, delegate mode).

The agentic grader x `--skip-missing-env` and `use_target` delegation:
 10. the case's target is set, but its `grader_target`'s key is not (an agentv target reads it from
     OPENAI_API_KEY, named nowhere in targets.yaml): the case must be reported not run (exit 5), not run its
     agent and error (test_skip_missing_env_leaves_out_a_case_whose_grader_target_has_no_key), also through a
     `use_target` switch (test_skip_missing_env_follows_a_use_target_grader_to_its_unset_key);
 10b. a `use_target` switch to an agentv target must still be the built-in agent, judging each trial's own
     workspace (test_a_use_target_grader_explores_each_trials_own_workspace).

Workspaces and the filesystem:
 11. a template linking outside the repository (a file or a folder, also through `..`) copied into the
     agent's folder, where the agentic grader would read it out to its model; a `template:` path climbing
     out of the repository (test_a_template_reaching_outside_the_repository_is_refused);
 12. an interrupted run leaving a per_test case's workspace (a copy of the template) behind, or making a
     fresh one for the next trial as it ends (test_an_interrupted_run_removes_the_workspace_of_the_case_it_cut_short).

Workspaces x `--affected-since` / `--rerun-failed` (both carry a base row whose `case_digest` matches):
 13. a pull request changing the template a case starts from, or its hook's script, left the digest as it
     was: the base's pass carried over (test_affected_since_runs_a_case_whose_template_or_hook_changed).

Secrets x the agentic grader:
 14. a key the agent writes into its workspace reaching the grader's model in the prompt's file_changes
     section, though its tools hide it (test_a_key_the_agent_writes_into_its_workspace_never_reaches_the_grader_model).
"""

from __future__ import annotations

import json
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import run_cli, start_cli
from tests.helpers.fake_llm_server import FakeLLMServer, FakeReply, RecordedRequest
from tests.helpers.files import make_repo, write
from tests.helpers.git import commit_all
from tests.helpers.reports import RESULTS, rows_by_id

CHAT = "/v1/chat/completions"
KEY = "sk-combo-test-0123456789abcdef"
ENV = {"OPENAI_API_KEY": KEY}

AGENT = """\
import json, pathlib, sys
attempt, out = int(sys.argv[1]), sys.argv[2]
writes = json.loads((pathlib.Path(__file__).parent / "writes.json").read_text())
if attempt in writes and pathlib.Path("README.md").is_file():  # only in a workspace (the template's copy)
    pathlib.Path("done.txt").write_text(f"done by trial {attempt + 1}\\n")
pathlib.Path(out).write_text(f"trial {attempt + 1}: wrote done.txt")
"""
"""The agent under test: on the (0-based) trials listed in writes.json it writes done.txt in its workspace
(its working folder, a copy of the template); on the others it does nothing, and says it did all the same."""


def _targets(repo: Path, server: FakeLLMServer | None) -> str:
    grader = "" if server is None else f"""\
    grader_target: agentic
  - name: agentic
    provider: agentv
    model: openai:judge-model
    base_url: {server.url}/v1
    max_retries: 0
"""
    return f"""\
targets:
  - name: default
    provider: cli
    command: python3 {repo}/agent.py {{ATTEMPT}} {{OUTPUT_FILE}}
{grader}"""


def project(tmp_path: Path, server: FakeLLMServer | None, suite: str, writes: list[int]) -> Path:
    """A repository whose cli agent writes done.txt on the trials `writes` names, graded by `suite`."""
    repo = make_repo(tmp_path / "repo")
    write(repo / ".agentv/targets.yaml", _targets(repo, server))
    write(repo / "agent.py", AGENT)
    write(repo / "writes.json", json.dumps(writes))
    write(repo / "evals/template/README.md", "the project\n")
    write(repo / "evals/s.eval.yaml", suite)
    return repo


def run(repo: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    return run_cli("run", "evals", "--no-cache", *args, cwd=repo, env={**ENV, **(env or {})})


def _tool_results(request: RecordedRequest) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in request.json["messages"] if m["role"] == "tool"]


def reads_done_txt(request: RecordedRequest) -> FakeReply:
    """The agentic grader's model: it reads done.txt through its tool, then passes the case only if it is there."""
    results = _tool_results(request)
    if not results:
        return FakeReply.openai_tool_calls(("r1", "read_file", json.dumps({"path": "done.txt"})))
    found = "content" in results[-1]
    return FakeReply.openai(json.dumps({"score": 1.0 if found else 0.0,
                                        "assertions": [{"text": f"done.txt there: {found}", "passed": found}]}))


def _trial_verdicts(row: dict[str, Any], key: str = "trials") -> list[str]:
    return [t["verdict"] for t in row[key]]


PER_TEST = """
    workspace:
      template: ./template
      isolation: per_test
    tests:
      - id: writes-done
        input: Write done.txt
        criteria: done.txt exists in the workspace
        assertions:
          - {name: explore, type: llm-grader}
"""


def test_each_trial_of_a_per_test_case_gets_a_fresh_workspace_for_the_agentic_grader(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.set_default(CHAT, reads_done_txt)
        repo = project(tmp_path, server, PER_TEST, writes=[0])
        ran = run(repo, "--trials", "3", "--trials-strategy", "mean")
    assert ran.returncode == 1, ran.stdout + ran.stderr  # only trial 1 did the work: a mean of 1/3
    row = rows_by_id(repo / RESULTS)["writes-done"]
    assert _trial_verdicts(row) == ["pass", "fail", "fail"]
    assert row["verdict"] == "fail" and row["score"] < 0.5


CHANGES_GRADER = """\
import json, sys
changes = json.load(sys.stdin).get("file_changes") or ""
found = "done.txt" in changes
print(json.dumps({"score": 1 if found else 0, "assertions": [{"text": f"done.txt in the diff: {found}",
                                                             "passed": found}]}))
"""
"""A code grader passing a trial only when its workspace diff holds done.txt."""

HOOK = """\
import json, pathlib, sys
payload = json.load(sys.stdin)
with open(pathlib.Path(__file__).parent / "hooks.log", "a") as out:
    out.write(json.dumps({"hook": sys.argv[1], "test_id": payload["test_id"]}) + "\\n")
"""


def _hook_log(repo: Path) -> list[str]:
    path = repo / "evals/hooks.log"
    return [json.loads(line)["hook"] for line in path.read_text().splitlines()] if path.exists() else []


def test_before_each_and_its_reset_run_before_every_trial_of_a_shared_workspace(tmp_path: Path) -> None:
    repo = project(tmp_path, None, """
        workspace:
          template: ./template
          hooks:
            before_each: {command: [python3, hook.py, before_each], reset: fast}
            after_each: {command: [python3, hook.py, after_each]}
        tests:
          - id: writes-done
            input: Write done.txt
            criteria: done.txt exists in the workspace
            assertions:
              - {name: diff, type: code-grader, command: [python3, changes.py]}
    """, writes=[0])
    write(repo / "evals/changes.py", CHANGES_GRADER)
    write(repo / "evals/hook.py", HOOK)
    ran = run(repo, "--trials", "2", "--trials-strategy", "pass_hat_k")
    assert ran.returncode == 1, ran.stdout + ran.stderr  # trial 2's agent changed nothing
    row = rows_by_id(repo / RESULTS)["writes-done"]
    assert _trial_verdicts(row) == ["pass", "fail"]
    assert _hook_log(repo) == ["before_each", "after_each", "before_each", "after_each"]  # as AgentV: every trial


def test_the_guards_reruns_get_a_fresh_workspace_for_every_trial(tmp_path: Path) -> None:
    """The per-case guard re-runs a case whose head trials dropped: each re-run trial must be judged on its
    own workspace, as the first trials were, or a re-run passing on an earlier one's files clears the case."""
    with FakeLLMServer() as server:
        server.set_default(CHAT, reads_done_txt)
        repo = project(tmp_path, server, PER_TEST, writes=[0, 3])  # trial 1 and the first re-run do the work
        trials = [{"attempt": n, "score": 1.0, "verdict": "pass"} for n in (1, 2, 3)]
        write(repo / "base.jsonl", json.dumps({  # the base: the case passed each of its 3 trials
            "eval_id": "writes-done", "suite": "evals/s.eval.yaml", "file": "evals/s.eval.yaml", "line": 5,
            "target": "default", "score": 1.0, "threshold": 0.8, "verdict": "pass", "trials": trials}) + "\n")
        ran = run(repo, "--trials", "3", "--baseline", "base.jsonl", "--fail-on", "regression", "--max-trials", "7")
    row = rows_by_id(repo / RESULTS)["writes-done"]
    assert _trial_verdicts(row) == ["pass", "fail", "fail"], ran.stdout + ran.stderr
    reruns = _trial_verdicts(row, "reruns")
    assert reruns[0] == "pass" and len(reruns) > 1 and set(reruns[1:]) == {"fail"}, reruns  # trial 4 alone worked
    assert f"3/3 -> 1/3 (2/{3 + len(reruns)} with re-runs)" in ran.stdout


def _calls_forever(request: RecordedRequest) -> FakeReply:
    return FakeReply.openai_tool_calls((f"c{len(request.json['messages'])}", "list_files", "{}"), text="looking")


NEVER_JUDGED = {
    "step-limit": ("", _calls_forever),  # 10 calls, each asking for more tools: no verdict in the last reply
    "malformed": ("", FakeReply.openai("Looks fine to me.")),  # a last reply holding no verdict
    "delegate-empty": ("            target: agentic\n", FakeReply.openai("")),  # grader_target mode, no answer
}


def _never_judged_suite(mode: str, negate: bool) -> str:
    return PER_TEST.replace("          - {name: explore, type: llm-grader}\n", f"""\
          - name: explore
            type: llm-grader
{NEVER_JUDGED[mode][0]}{'            negate: true' + chr(10) if negate else ''}""")


@pytest.mark.parametrize("mode", list(NEVER_JUDGED))
def test_a_grader_without_a_verdict_is_an_error_even_negated(tmp_path: Path, mode: str) -> None:
    """`negate: true` inverts a verdict; a grader that gave none (AgentV's 0 with "Failed to parse ...") has
    nothing to invert: 1 - 0 would pass every answer without a judgement."""
    with FakeLLMServer() as server:
        server.set_default(CHAT, NEVER_JUDGED[mode][1])
        repo = project(tmp_path, server, _never_judged_suite(mode, negate=True), writes=[0])
        ran = run(repo)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    row = rows_by_id(repo / RESULTS)["writes-done"]
    assert row["verdict"] == "error" and row["score"] == 0.0, row
    assert row["scores"][0]["error"], row["scores"][0]


QUARANTINE = """
    quarantine:
      - {id: writes-done, reason: the agent is known to miss done.txt (#7)}
"""


def test_a_quarantined_case_whose_grader_never_judged_fails_the_gate(tmp_path: Path) -> None:
    """A quarantined failure does not fail the gate; a grader that ran out of steps said nothing of the case,
    and a quarantine must never hide that."""
    with FakeLLMServer() as server:
        server.set_default(CHAT, _calls_forever)
        repo = project(tmp_path, server, _never_judged_suite("step-limit", negate=False), writes=[0])
        write(repo / ".agentv/gate.yaml", QUARANTINE)
        ran = run(repo)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    row = rows_by_id(repo / RESULTS)["writes-done"]
    assert row["verdict"] == "error" and row["quarantined"], row
    assert "Failed to parse llm-grader agent response" in row["scores"][0]["error"]


def test_a_trial_whose_grader_never_judged_makes_the_mean_case_an_error(tmp_path: Path) -> None:
    asked: list[int] = []

    def second_trial_malformed(request: RecordedRequest) -> FakeReply:
        asked.append(1)
        return FakeReply.openai("no verdict, sorry" if len(asked) == 2 else json.dumps({"score": 1.0}))

    with FakeLLMServer() as server:
        server.set_default(CHAT, second_trial_malformed)
        repo = project(tmp_path, server, PER_TEST, writes=[0, 1, 2])
        ran = run(repo, "--trials", "3", "--trials-strategy", "mean", "--threshold", "0.5")
    assert ran.returncode == 1, ran.stdout + ran.stderr  # 2 of 3 judged 1.0 is no pass on part of the evidence
    row = rows_by_id(repo / RESULTS)["writes-done"]
    assert _trial_verdicts(row) == ["pass", "error", "pass"]
    assert row["verdict"] == "error" and "trial 2 of 3" in row["error"]


def test_a_grader_target_down_is_an_error_under_trials_and_quarantine(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.set_default(CHAT, FakeReply.error(500, "judge is down"))
        repo = project(tmp_path, server, PER_TEST, writes=[0, 1])
        write(repo / ".agentv/gate.yaml", QUARANTINE)
        ran = run(repo, "--trials", "2", "--trials-strategy", "mean")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    row = rows_by_id(repo / RESULTS)["writes-done"]
    assert row["verdict"] == "error" and row["quarantined"], row
    assert _trial_verdicts(row) == ["error", "error"] and "judge is down" in row["error"]


def test_skip_missing_env_leaves_out_a_case_whose_grader_target_has_no_key(tmp_path: Path) -> None:
    """The case's own target needs no key; its `grader_target` reads OPENAI_API_KEY: unset, the case is not
    run (a not-run row, never a pass), and no request reaches the grader's model."""
    with FakeLLMServer() as server:
        server.set_default(CHAT, reads_done_txt)
        repo = project(tmp_path, server, PER_TEST, writes=[0])
        ran = run_cli("run", "evals", "--no-cache", "--skip-missing-env", "--trials", "2", cwd=repo,
                      drop=("OPENAI_API_KEY",))
        sent = server.requests
    assert ran.returncode == 5, ran.stdout + ran.stderr  # INCOMPLETE: never a pass
    assert not sent
    row = rows_by_id(repo / RESULTS)["writes-done"]
    assert row["failure_reason_code"] == "missing_env" and "OPENAI_API_KEY" in row["error"]
    assert "trials" not in row and not row.get("candidate_answer"), row  # the agent never ran


def test_a_run_without_the_agentv_graders_key_stops_before_the_first_call(tmp_path: Path) -> None:
    """Without `--skip-missing-env` the grader's unset implicit key is a configuration error found before the
    first call, as an unset `${{ VAR }}` is: not an agent run in every case, then an error from every grader."""
    with FakeLLMServer() as server:
        server.set_default(CHAT, reads_done_txt)
        repo = project(tmp_path, server, PER_TEST, writes=[0])
        ran = run_cli("run", "evals", "--no-cache", cwd=repo, drop=("OPENAI_API_KEY",))
        sent = server.requests
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert not sent and not (repo / RESULTS).exists()
    assert "environment variable 'OPENAI_API_KEY' (the agentv provider's API key" in ran.stderr
    assert "to run without OPENAI_API_KEY: set it" in ran.stderr and "--skip-missing-env" in ran.stderr


def test_validate_require_env_checks_the_agentv_graders_key_and_plain_validate_needs_none(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        repo = project(tmp_path, server, PER_TEST, writes=[0])
        plain = run_cli("validate", "evals", cwd=repo, drop=("OPENAI_API_KEY",))
        strict = run_cli("validate", "evals", "--require-env", cwd=repo, drop=("OPENAI_API_KEY",))
        keyed = run_cli("validate", "evals", "--require-env", cwd=repo, env=ENV)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert keyed.returncode == 0, keyed.stdout + keyed.stderr
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "environment variable 'OPENAI_API_KEY' (the agentv provider's API key" in strict.stdout + strict.stderr


@pytest.mark.parametrize("where", ["link-file", "link-folder", "dotdot-link", "dotdot-template"])
def test_a_template_reaching_outside_the_repository_is_refused(tmp_path: Path, where: str) -> None:
    """A template whose link (or whose own path) leaves the repository would put the runner's files in the
    agent's folder, where the agentic grader reads them out to its model: refused before anything runs."""
    outside = tmp_path / "outside"
    write(outside / "secret.txt", "runner-secret-1f2e\n")
    with FakeLLMServer() as server:
        server.set_default(CHAT, reads_done_txt)
        suite = PER_TEST
        repo = project(tmp_path, server, suite, writes=[0])
        template = repo / "evals/template"
        if where == "link-file":
            (template / "done.txt").symlink_to(outside / "secret.txt")
        elif where == "link-folder":
            (template / "docs").symlink_to(outside)
        elif where == "dotdot-link":
            (template / "done.txt").symlink_to("../../../outside/secret.txt")
        else:
            write(repo / "evals/s.eval.yaml", suite.replace("template: ./template", "template: ../../outside"))
        ran = run(repo, "--trials", "2")
        sent = server.requests
    out = ran.stdout + ran.stderr
    assert ran.returncode == 2, out
    assert not sent and "runner-secret" not in out
    assert not (repo / RESULTS).exists() or "pass" not in (repo / RESULTS).read_text()


def test_an_interrupted_run_removes_the_workspace_of_the_case_it_cut_short(tmp_path: Path) -> None:
    """SIGTERM while a per_test case's agent works: the run writes what finished and exits 143, and the
    case's workspace (the template's copy) goes with it, as a finished case's does."""
    with FakeLLMServer() as server:
        server.set_default(CHAT, reads_done_txt)
        repo = project(tmp_path, server, PER_TEST, writes=[0])
        write(repo / "agent.py", f"""\
            import pathlib, time
            pathlib.Path({str(repo / "started")!r}).write_text(str(pathlib.Path.cwd()))
            time.sleep(30)
        """)
        temporary = tmp_path / "tmp"
        temporary.mkdir()
        proc = start_cli("run", "evals", "--no-cache", "--trials", "2", cwd=repo,
                         env={**ENV, "TMPDIR": str(temporary)})
        started = repo / "started"
        deadline = time.monotonic() + 30
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), "the agent never started"
        workspace = Path(started.read_text())
        assert workspace.is_relative_to(temporary) and (workspace / "README.md").is_file()
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert proc.returncode == 143
    assert not workspace.exists()
    left = [p for p in temporary.iterdir() if p.name.startswith("agentv-gate-workspace-")]
    assert left == [], [sorted(str(f.relative_to(temporary)) for f in p.rglob("*") if ".git/" not in str(f)) for p in left]
    row = rows_by_id(repo / RESULTS)["writes-done"]
    assert row["verdict"] == "error" and "interrupted" in row["error"]


def test_shards_of_workspace_trials_merge_to_the_failing_verdict(tmp_path: Path) -> None:
    """Two per_test cases dealt to two shards, three trials each, each done by its first trial only: each
    shard judges every trial on its own workspace and fails, and the merge of the two fails on both."""
    with FakeLLMServer() as server:
        server.set_default(CHAT, reads_done_txt)
        repo = project(tmp_path, server, PER_TEST + """\
      - id: writes-done-too
        input: Write done.txt again
        criteria: done.txt exists in the workspace
        assertions:
          - {name: explore, type: llm-grader}
""", writes=[0])
        shards = [run(repo, "--trials", "3", "--trials-strategy", "mean", "--shard", f"{k}/2",
                      "--output-dir", f"shard{k}") for k in (1, 2)]
    assert [s.returncode for s in shards] == [1, 1], [s.stdout + s.stderr for s in shards]
    rows = {r["eval_id"]: r for k in (1, 2) for r in rows_by_id(repo / f"shard{k}/results.jsonl").values()}
    assert {case: _trial_verdicts(row) for case, row in rows.items()} == {
        "writes-done": ["pass", "fail", "fail"], "writes-done-too": ["pass", "fail", "fail"]}
    merged = run_cli("merge", "shard1/results.jsonl", "shard2/results.jsonl", "--output-dir", "merged", cwd=repo)
    assert merged.returncode == 1, merged.stdout + merged.stderr
    assert "2 failed" in merged.stdout


START_GRADER = """\
import json, pathlib, sys
workspace = pathlib.Path(json.load(sys.stdin)["workspace_path"])
readme = (workspace / "README.md").read_text() if (workspace / "README.md").is_file() else ""
ok = "the project" in readme and (workspace / "seed.txt").is_file()
print(json.dumps({"score": 1 if ok else 0, "assertions": [{"text": f"started right: {ok}", "passed": ok}]}))
"""
"""A code grader passing when the case's workspace started as the template and the seed hook made it."""


@pytest.mark.parametrize(("changed", "flag"), [("template", "--affected-since"), ("hook", "--affected-since"),
                                               ("template", "--rerun-failed")])
def test_affected_since_runs_a_case_whose_template_or_hook_changed(tmp_path: Path, changed: str, flag: str) -> None:
    """A change to the workspace a case starts from (its template's files, a hook's script) changes what the
    case runs on: `--affected-since` (and `--rerun-failed`) must run it, not carry its base row's pass over."""
    repo = project(tmp_path, None, """
        workspace:
          template: ./template
          isolation: per_test
          hooks:
            before_each: {command: [python3, seed.py, "{{workspace_path}}"]}
        tests:
          - id: starts-right
            input: Look around
            criteria: the workspace is the project, seeded
            assertions:
              - {name: start, type: code-grader, command: [python3, start.py]}
    """, writes=[])
    write(repo / "evals/start.py", START_GRADER)
    write(repo / "evals/seed.py", "import pathlib, sys\n(pathlib.Path(sys.argv[1]) / 'seed.txt').write_text('x')\n")
    commit_all(repo)
    base = run(repo)
    assert base.returncode == 0, base.stdout + base.stderr
    shutil.copy(repo / RESULTS, tmp_path / "base.jsonl")
    if changed == "template":
        write(repo / "evals/template/README.md", "a broken start\n")
    else:
        write(repo / "evals/seed.py", "pass\n")
    extra = ["--allow-empty-selection"] if flag == "--affected-since" else []
    ran = run(repo, flag, str(tmp_path / "base.jsonl"), *extra)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    row = rows_by_id(repo / RESULTS)["starts-right"]
    assert not row.get("carried") and row["verdict"] == "fail"


def _switched(repo: Path, server: FakeLLMServer) -> None:
    """The agent's grader_target a `use_target` switch, AGENTV_GRADER naming the agentv target it runs."""
    targets = repo / ".agentv/targets.yaml"
    targets.write_text(targets.read_text().replace("    grader_target: agentic\n", """\
    grader_target: grader
  - name: grader
    use_target: ${{ AGENTV_GRADER }}
"""))


def test_a_use_target_grader_explores_each_trials_own_workspace(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.set_default(CHAT, reads_done_txt)
        repo = project(tmp_path, server, PER_TEST, writes=[1])
        _switched(repo, server)
        ran = run(repo, "--trials", "2", "--trials-strategy", "pass_hat_k", env={"AGENTV_GRADER": "agentic"})
        sent = server.requests_for(CHAT)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "tools" in sent[0].json  # the switch runs the agentv target: the built-in agent, with its tools
    row = rows_by_id(repo / RESULTS)["writes-done"]
    assert _trial_verdicts(row) == ["fail", "pass"]


def test_skip_missing_env_follows_a_use_target_grader_to_its_unset_key(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        server.set_default(CHAT, reads_done_txt)
        repo = project(tmp_path, server, PER_TEST, writes=[0])
        _switched(repo, server)
        ran = run_cli("run", "evals", "--no-cache", "--skip-missing-env", cwd=repo, env={"AGENTV_GRADER": "agentic"},
                      drop=("OPENAI_API_KEY",))
        sent = server.requests
    assert ran.returncode == 5, ran.stdout + ran.stderr
    assert not sent
    row = rows_by_id(repo / RESULTS)["writes-done"]
    assert row["failure_reason_code"] == "missing_env" and "OPENAI_API_KEY" in row["error"]


def test_a_key_the_agent_writes_into_its_workspace_never_reaches_the_grader_model(tmp_path: Path) -> None:
    """The agentic grader's tools hide the run's secrets from its model; the workspace diff in its prompt
    (`[[ ## file_changes ## ]]`) must too, or a key the agent wrote into a file reaches the model anyway."""
    with FakeLLMServer() as server:
        server.set_default(CHAT, reads_done_txt)
        repo = project(tmp_path, server, PER_TEST, writes=[0])
        write(repo / "agent.py", """\
            import os, pathlib, sys
            pathlib.Path("config.env").write_text("OPENAI_API_KEY=" + os.environ["OPENAI_API_KEY"] + "\\n")
            pathlib.Path(sys.argv[2]).write_text("configured")
        """)
        ran = run(repo)
        sent = server.requests_for(CHAT)
    assert sent, ran.stdout + ran.stderr
    prompt = sent[0].json["messages"][1]["content"]
    assert "[[ ## file_changes ## ]]" in prompt and "config.env" in prompt
    assert all(KEY not in request.body.decode() for request in sent)


@pytest.mark.parametrize("written", ["4.x", "2.x"])
def test_each_trial_in_a_shared_workspace_starts_where_the_first_did(tmp_path: Path, written: str) -> None:
    """A suite's shared workspace with no reset: AgentV runs trial 2 on what trial 1's agent left. A trial is a
    fresh sample, so the gate restores the workspace as the case's first trial found it (earlier cases' work
    kept): trial 2's agent did nothing, and its grader must not find trial 1's file."""
    grader = """\
import json, pathlib, sys
payload = json.load(sys.stdin)
workspace = pathlib.Path(payload["workspace_path"])
ok = (workspace / "done.txt").is_file() and "done.txt" in (payload.get("file_changes") or "")
seeded = f"seed lines {len((workspace / 'seed.log').read_text().splitlines())}"
hits, misses = [seeded] + (["done.txt"] if ok else []), [] if ok else ["no done.txt"]
print(json.dumps({"score": 1 if ok else 0, "hits": hits, "misses": misses,
                  "assertions": [{"text": t, "passed": True} for t in hits] + [{"text": t, "passed": False} for t in misses]}))
"""
    four = written == "4.x"
    kind, command = ("code-grader", "command") if four else ("code_judge", "script")
    repo = project(tmp_path, None, f"""
        {'' if four else 'requires: {agentv: "^2.19"}'}
        workspace:
          template: ./template
          hooks:
            before_each: {{command: [python3, seed.py, "{{{{workspace_path}}}}"]}}
        tests:
          - id: writes-done
            input: Write done.txt
            {'criteria' if four else 'expected_outcome'}: done.txt exists in the workspace
            {'assertions' if four else 'assert'}:
              - {{name: has, type: {kind}, {command}: [python3, has.py]}}
    """, writes=[0])
    write(repo / "evals/has.py", grader)
    write(repo / "evals/seed.py", "import pathlib, sys\nwith open(pathlib.Path(sys.argv[1]) / 'seed.log', 'a') as log:\n"
                                  "    log.write('seeded\\n')\n")
    ran = run(repo, "--trials", "2", "--trials-strategy", "pass_hat_k")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    trials = rows_by_id(repo / RESULTS)["writes-done"]["trials"]
    assert [t["verdict"] for t in trials] == ["pass", "fail"]
    assert [t["scores"][0]["hits"][0] for t in trials] == ["seed lines 1"] * 2  # each trial seeded once, afresh
