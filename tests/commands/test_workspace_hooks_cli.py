"""Workspace lifecycle hooks through the real CLI: what they are given, what a failure does, that teardown runs."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli, start_cli
from tests.helpers.files import make_repo, write
from tests.helpers.github_runner import runner_commands
from tests.helpers.reports import read_rows

HOOK = """\
import json, pathlib, sys
name = sys.argv[1]
payload = json.load(sys.stdin)
log = pathlib.Path(__file__).parent / "hooks.log"
with open(log, "a") as out:
    out.write(json.dumps({"hook": name, **payload}) + "\\n")
print(f"{name} for {payload['test_id']}")
if name == "before_each" and payload["test_id"] == "unprepared":
    print("cannot prepare", file=sys.stderr)
    sys.exit(3)
if name == "after_each" and payload["test_id"] == "messy":
    sys.exit("cleanup failed")
"""

SUITE = """
    workspace:
      hooks:
        before_all: {command: [python3, hook.py, before_all], timeout_ms: 20000}
        before_each: {command: python3 hook.py before_each}
        after_each: [python3, hook.py, after_each]
        after_all: {command: [python3, hook.py, after_all]}
    tests:
      - {id: fine, input: Hi, metadata: {team: geo}, assert: [{type: contains, value: ok}]}
      - {id: unprepared, input: Hi, assert: [{type: contains, value: ok}]}
      - {id: messy, input: Hi, assert: [{type: contains, value: ok}]}
"""


def hook_log(repo: Path) -> list[dict]:
    path = repo / "evals/hooks.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_hooks_run_around_cases_and_a_failing_before_each_makes_its_case_an_error(repo: Path) -> None:
    write(repo / "evals/hook.py", HOOK)
    write(repo / "evals/s.eval.yaml", SUITE)
    ran = run_cli("run", "evals", "--workers", "1", cwd=repo)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    rows = {row["eval_id"]: row for row in read_rows(repo / ".agentv-gate/results.jsonl")}
    assert rows["fine"]["verdict"] == "pass" and rows["messy"]["verdict"] == "pass"
    assert rows["fine"]["before_all_output"] == "before_all for __before_all__"  # AgentV's test_id for a suite hook
    assert rows["fine"]["before_each_output"] == "before_each for fine"
    assert rows["fine"]["after_each_output"] == "after_each for fine"
    bad = rows["unprepared"]
    assert bad["verdict"] == "error" and bad["execution_status"] == "execution_error"
    assert "before_each hook failed" in bad["error"] and "cannot prepare" in bad["error"]
    assert "evals/s.eval.yaml:4" in bad["error"]
    # an after_each failure only warns; the after-hooks ran for every started case, after_all once at the end
    assert "warning:" in ran.stderr and "after_each hook failed" in ran.stderr and "cleanup failed" in ran.stderr
    log = hook_log(repo)
    assert [e["hook"] for e in log].count("before_all") == 1
    assert sorted(e["test_id"] for e in log if e["hook"] == "after_each") == ["fine", "messy", "unprepared"]
    assert log[-1]["hook"] == "after_all" and log[-1]["test_id"] == "__after_all__" and log[-1]["case_input"] is None
    first_each = next(e for e in log if e["hook"] == "before_each" and e["test_id"] == "fine")
    assert first_each["case_metadata"] == {"team": "geo"}
    assert first_each["case_input"] == "Hi"  # AgentV's `evalCase.question`: the input's text
    # the suite's own empty workspace (AgentV 2.19's "create empty workspace"), the same for every hook, gone at the end
    assert {e["workspace_path"] for e in log} == {first_each["workspace_path"]}
    workspace = Path(first_each["workspace_path"])
    assert not workspace.is_relative_to(repo) and not workspace.exists()
    assert len({e["eval_run_id"] for e in log}) == 1


def test_a_failing_before_all_makes_every_case_of_its_suite_an_error(repo: Path) -> None:
    write(repo / "evals/s.eval.yaml", """
        workspace:
          hooks:
            before_all: {command: [sh, -c, "echo no database; exit 1"]}
        tests:
          - {id: a, input: Hi, assert: [{type: contains, value: ok}]}
          - {id: b, input: Hi, assert: [{type: contains, value: ok}]}
    """)
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 1
    rows = read_rows(repo / ".agentv-gate/results.jsonl")
    assert [r["verdict"] for r in rows] == ["error", "error"]
    assert all("before_all hook failed" in r["error"] and "no database" in r["error"] for r in rows)


@pytest.mark.parametrize("hook", [r'{command: ["sh", "-c", "exit 1\0"]}'])
def test_a_before_all_that_cannot_even_be_started_fails_every_case_of_its_suite(repo: Path, hook: str) -> None:
    """A hook that raised instead of running (a NUL byte in an argument) failed only the first case,
    as an internal error: the suite's other cases then ran, and passed, without their before_all.
    (A timeout past the clock's range is refused at its line before anything runs:
    tests/hardening/test_hardening_durations.py.)"""
    write(repo / "evals/s.eval.yaml", f"""
        workspace:
          hooks:
            before_all: {hook}
        tests:
          - {{id: a, input: Hi, assert: [{{type: contains, value: ok}}]}}
          - {{id: b, input: Hi, assert: [{{type: contains, value: ok}}]}}
    """)
    ran = run_cli("run", "evals", "--workers", "1", cwd=repo)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    rows = read_rows(repo / ".agentv-gate/results.jsonl")
    assert {r["eval_id"]: r["verdict"] for r in rows} == {"a": "error", "b": "error"}, rows
    assert all("before_all hook failed" in r["error"] and "evals/s.eval.yaml:3" in r["error"] for r in rows), rows


def test_after_all_runs_when_the_run_is_terminated(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, f"""
        targets:
          - name: default
            provider: cli
            command_template: "sh -c 'touch {tmp_path / "evals" / "started"}; sleep 30'"
            timeout_seconds: 60
    """)
    write(repo / "evals/teardown.py", "open('../torn-down', 'w').write('done')\n")
    write(repo / "evals/s.eval.yaml", """
        workspace:
          hooks:
            after_all: {command: [python3, teardown.py]}
        tests:
          - {id: slow, input: Hi, assert: [{type: contains, value: ok}]}
    """)
    proc = start_cli("run", "evals", cwd=repo)
    deadline = time.monotonic() + 30
    started = repo / "evals" / "started"
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), "the agent never started"
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert proc.returncode == 143
    assert (repo / "torn-down").read_text().strip() == "done"


def test_workspace_settings_not_run_yet_and_misplaced_hooks_are_refused(repo: Path) -> None:
    write(repo / "evals/s.eval.yaml", """
        workspace:
          path: ./fixed
        tests:
          - id: a
            input: Hi
            criteria: Greets
            workspace:
              hooks:
                before_all: {command: [true]}
    """)
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 2
    assert "evals/s.eval.yaml:2: 'path' is an AgentV feature agentv-gate does not run yet" in ran.stderr
    assert "evals/s.eval.yaml:9: 'before_all' runs once per suite" in ran.stderr


def test_a_hook_script_that_does_not_exist_stops_the_run_before_any_case(repo: Path) -> None:
    write(repo / "evals/s.eval.yaml", """
        workspace:
          hooks:
            before_each: {command: [python3, missing/setup.py]}
        tests:
          - {id: a, input: Hi, criteria: Greets}
    """)
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 2
    assert "evals/s.eval.yaml:3:" in ran.stderr and "missing/setup.py" in ran.stderr


def test_a_failing_after_hook_s_output_is_printed_inert_and_without_secrets(tmp_path: Path) -> None:
    """An after-hook's failure is a warning on stderr, which the GitHub runner scans for workflow
    commands like stdout: what the hook printed must not run one, nor show a configured key."""
    token = "hooktok-" + "5" * 24
    repo = make_repo(tmp_path / "repo", """
        targets:
          - name: default
            provider: cli
            command: echo ok
            env:
              SERVICE_TOKEN: ${{ HOOK_TEST_TOKEN }}
        """)
    write(repo / "evals/hook.py", """
        import os, sys
        print("cleanup failed\\n::add-mask::everything\\n  ::error::pwned\\n##[set-output name=x]y\\n\\x1b[31m"
              + os.environ["HOOK_TEST_TOKEN"])
        sys.exit(1)
        """)
    write(repo / "evals/s.eval.yaml", """
        workspace:
          hooks:
            after_each: [python3, hook.py]
            after_all: [python3, hook.py]
        tests:
          - {id: fine, input: Hi, assert: [{type: contains, value: ok}]}
        """)
    ran = run_cli("run", "evals", cwd=repo, env={"HOOK_TEST_TOKEN": token, "GITHUB_ACTIONS": "true"})
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stderr.count("cleanup failed") == 2, ran.stderr
    assert token not in ran.stderr and "***" in ran.stderr
    assert "\x1b" not in ran.stderr
    commands = [line for line in runner_commands(ran.stdout + ran.stderr) if not line.startswith("::group::")
                and line != "::endgroup::"]
    assert commands == []


SHARED_WORKSPACE = """
    # one workspace for several suites, as AgentV's workspace-shared-config example has it
    hooks:
      before_all: {command: [python3, ../../shared/hook.py, before_all]}
      before_each: {command: [python3, hook.py, before_each], cwd: ./}
"""


def test_a_workspace_file_named_by_a_2x_and_a_4x_suite_runs_its_hooks_for_both(repo: Path) -> None:
    """`workspace: ../../shared/workspace.yaml` is AgentV's shared workspace file (2.19 and 4.42): its
    mapping is the workspace, a hook's `cwd` is relative to that file, and a hook without one runs in
    the eval file's folder, as an inline hook does."""
    write(repo / "shared/hook.py", HOOK)
    write(repo / "shared/workspace.yaml", SHARED_WORKSPACE)
    write(repo / "evals/a/s.eval.yaml", """
        workspace: ../../shared/workspace.yaml
        tests:
          - {id: two, input: Hi, assert: [{type: contains, value: ok}]}
    """)
    write(repo / "evals/b/s.eval.yaml", """
        execution: {workers: 1}   # a 4.x form: the file is read as AgentV 4.x reads it
        workspace: ../../shared/workspace.yaml
        tests:
          - {id: four, input: Hi, assert: [{type: contains, value: ok}]}
    """)
    ran = run_cli("run", "evals", "--workers", "1", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    log = [json.loads(line) for line in (repo / "shared/hooks.log").read_text().splitlines()]
    assert sorted((e["hook"], e["test_id"]) for e in log) == [
        ("before_all", "__before_all__"), ("before_all", "__before_all__"), ("before_each", "four"), ("before_each", "two")]
    rows = {row["eval_id"]: row for row in read_rows(repo / ".agentv-gate/results.jsonl")}
    assert rows["two"]["before_each_output"] == "before_each for two"
    assert rows["four"]["before_all_output"] == "before_all for __before_all__"


def test_a_workspace_file_that_is_missing_not_a_mapping_or_holds_a_feature_not_run_yet_is_located(
        repo: Path) -> None:
    write(repo / "shared/list.yaml", "- hooks\n")
    write(repo / "shared/template.yaml", "hooks: {}\npath: ./fixed\n")
    write(repo / "shared/broken.yaml", "hooks: [oops\n")
    for name, ref in [("gone", "../shared/nowhere.yaml"), ("list", "../shared/list.yaml"),
                      ("template", "../shared/template.yaml"), ("broken", "../shared/broken.yaml")]:
        write(repo / f"evals/{name}.eval.yaml", f"""
            description: {name}
            workspace: {ref}
            tests:
              - {{id: a, input: Hi, criteria: Greets}}
        """)
    ran = run_cli("validate", "evals", cwd=repo)
    out = ran.stdout + ran.stderr
    assert ran.returncode == 1, out
    assert "evals/gone.eval.yaml:2: Workspace file not found: ../shared/nowhere.yaml" in out
    assert "evals/list.eval.yaml:2: Invalid workspace file format: ../shared/list.yaml (expected a YAML object)" in out
    assert "shared/template.yaml:2: 'path' is an AgentV feature agentv-gate does not run yet" in out
    assert "evals/broken.eval.yaml:2: ../shared/broken.yaml:2: malformed YAML" in out


PREPARE = """\
import json, pathlib, sys
workspace = pathlib.Path(json.load(sys.stdin)["workspace_path"])
with open(pathlib.Path(__file__).parent / "order.log", "a") as log:
    log.write(sys.argv[1] + "\\n")
if sys.argv[1] == "before_all":
    (workspace / "prepared.txt").write_text("the answer is ok")
if sys.argv[1] == "after_all":  # a teardown that empties its workspace, as hooks written for AgentV may
    for entry in workspace.iterdir():
        entry.unlink()
"""


def test_hooks_without_a_template_prepare_an_empty_workspace_the_agent_runs_in(tmp_path: Path) -> None:
    """AgentV 2.19 gives hooks without a template an empty workspace of the suite's own, runs the cli
    target there and the suite's cases one at a time. The gate gave them the eval folder: a teardown
    emptying `workspace_path` emptied the team's eval folder, and the agent never saw what was prepared."""
    repo = make_repo(tmp_path, """
        targets:
          - name: default
            provider: cli
            command_template: "sh -c 'cat prepared.txt; echo {PROMPT} >> seen.txt'"
    """)
    write(repo / "evals/prepare.py", PREPARE)
    write(repo / "evals/s.eval.yaml", """
        workspace:
          hooks:
            before_all: {command: [python3, prepare.py, before_all]}
            before_each: {command: [python3, prepare.py, before_each]}
            after_each: {command: [python3, prepare.py, after_each]}
            after_all: {command: [python3, prepare.py, after_all]}
        tests:
          - {id: a, input: one, assert: [{type: contains, value: ok}]}
          - {id: b, input: two, assert: [{type: contains, value: ok}]}
          - {id: c, input: three, assert: [{type: contains, value: ok}]}
    """)
    ran = run_cli("run", "evals", "--workers", "4", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    rows = read_rows(repo / ".agentv-gate/results.jsonl")
    assert [r["candidate_answer"].strip() for r in rows] == ["the answer is ok"] * 3
    assert sorted(p.name for p in (repo / "evals").iterdir()) == ["order.log", "prepare.py", "s.eval.yaml"]
    assert not (repo / "seen.txt").exists()
    order = (repo / "evals/order.log").read_text().split()
    assert order == ["before_all", *["before_each", "after_each"] * 3, "after_all"]  # one case at a time


ARGS_HOOK = """\
import json, pathlib, sys
with open(pathlib.Path(__file__).parent / "args.log", "a") as out:
    out.write(json.dumps(sys.argv[1:]) + "\\n")
"""


def test_a_hook_s_arguments_name_the_payload_s_values_as_agentv_replaces_them(repo: Path) -> None:
    """AgentV replaces `{{workspace_path}}`, `{{test_id}}`, `{{eval_run_id}}`, `{{case_input}}` and
    `{{case_metadata}}` in a hook's command (a hook cd-ing into "{{workspace_path}}/lib", as its 4.x
    examples do); the gate passed the braces through as written."""
    write(repo / "evals/args.py", ARGS_HOOK)
    write(repo / "evals/s.eval.yaml", """
        workspace:
          hooks:
            before_all: {command: [python3, args.py, "{{test_id}}", "{{case_input}}", "{{case_metadata}}"]}
            before_each:
              command: [python3, args.py, "{{test_id}}", "in {{workspace_path}}", "{{case_input}}",
                        "{{case_metadata}}", "{{eval_run_id}}", "{{unknown}} {{ test_id }}"]
        tests:
          - {id: tagged, input: [{role: user, content: "Say ok"}], metadata: {team: géo, n: 2},
             assert: [{type: contains, value: ok}]}
    """)
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    before_all, before_each = (json.loads(line) for line in (repo / "evals/args.log").read_text().splitlines())
    assert before_all == ["__before_all__", "", ""]
    test_id, where, case_input, metadata, run_id, untouched = before_each
    assert (test_id, case_input, metadata) == ("tagged", "Say ok", '{"team":"géo","n":2}')
    assert where.startswith("in /") and "{{" not in where and len(run_id) == 32
    assert untouched == "{{unknown}} {{ test_id }}"


def test_a_workspace_that_cannot_be_made_fails_its_cases_and_runs_nothing_in_it(repo: Path) -> None:
    """A template that cannot be copied (here a link to a folder holding it) is every case's error: no hook runs,
    not even the after-hooks (they were given the eval folder as their workspace to clean), no git
    baseline is taken anywhere (not in the folder the gate runs in), no case is judged."""
    write(repo / "evals/hook.py", HOOK)
    (repo / "evals/template").mkdir()
    (repo / "evals/template/loop").symlink_to(repo / "evals/template")
    write(repo / "evals/s.eval.yaml", """
        workspace:
          template: ./template
          hooks:
            before_all: {command: [python3, hook.py, before_all]}
            after_each: {command: [python3, hook.py, after_each]}
            after_all: {command: [python3, hook.py, after_all]}
        tests:
          - {id: a, input: Hi, assert: [{type: contains, value: ok}]}
          - {id: b, input: Hi, assert: [{type: contains, value: ok}]}
    """)
    ran = run_cli("run", "evals", cwd=repo)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    rows = read_rows(repo / ".agentv-gate/results.jsonl")
    assert [r["verdict"] for r in rows] == ["error", "error"]
    assert all(r["error"].startswith("Failed to create shared workspace from template ") for r in rows), rows
    assert hook_log(repo) == [] and list((repo / ".git").iterdir()) == []
