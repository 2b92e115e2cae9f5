"""Nothing in a suite is silently ignored: every key is read, or reported at its line.

Through the real CLI: `validate` reports every problem at once; `run` refuses with exit 2 before
any target is called (the agent is a cli target that leaves a marker file when it runs).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentv_gate.base.key_checks import NOT_YET, NOT_YET_EVALUATOR_TYPES, SELF_CHECK
from agentv_gate.loader.eval_file_keys import TEST_KEYS, declared
from tests.helpers.cli import cli_env, run_cli
from tests.helpers.files import make_repo, write


@pytest.fixture()
def repo(repo: Path) -> Path:
    """The shared repository, its agent a cli target that leaves `agent-ran` when called, judged by a mock."""
    return make_repo(repo, f"""
        targets:
          - name: default
            provider: cli
            command_template: "touch {repo / 'agent-ran'} && echo Paris"
            judge_target: judge
          - name: judge
            provider: mock
            judge_response: {{score: 1, hits: [ok], misses: [], reasoning: fine}}
    """)


def suite(repo: Path, body: str) -> None:
    write(repo / "evals/x.eval.yaml", body)


def refused(repo: Path) -> str:
    """`run` exits 2 without calling the agent; `validate` exits 1. Both outputs, for the caller's checks."""
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert not (repo / "agent-ran").exists()
    checked = run_cli("validate", "evals", cwd=repo)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    return ran.stderr + checked.stdout


def test_misspelled_assert_is_located_with_a_suggestion(repo: Path) -> None:
    suite(repo, """
        tests:
          - id: refund
            input: What is the capital of France?
            criteria: Names Paris
            asserts:
              - type: contains
                value: London
    """)
    out = refused(repo)
    assert "evals/x.eval.yaml:5: unknown key 'asserts' in test 'refund' (did you mean 'assert'?)" in out
    assert "--allow-unknown-keys" in out


def test_suite_level_typo_is_not_dropped(repo: Path) -> None:
    suite(repo, """
        description: strict suite
        treshold: 0.99
        tests:
          - {id: a, input: Hi, criteria: Greets}
    """)
    assert "evals/x.eval.yaml:2: unknown key 'treshold' in the suite (did you mean 'threshold'?)" in refused(repo)


def test_execution_typos_at_both_levels(repo: Path) -> None:
    suite(repo, """
        execution:
          treshold: 0.9
        tests:
          - id: a
            input: Hi
            criteria: Greets
            execution:
              skip_default: true
    """)
    out = refused(repo)
    assert "x.eval.yaml:2: unknown key 'treshold' in the suite's 'execution' (did you mean 'threshold'?)" in out
    assert "x.eval.yaml:8: unknown key 'skip_default' in 'execution' of test 'a' (did you mean 'skip_defaults'?)" in out


def test_evaluator_and_aggregator_typos(repo: Path) -> None:
    suite(repo, """
        tests:
          - id: a
            input: Hi
            criteria: Greets
            assert:
              - type: contains
                valeu: Hello
                value: Hi
              - name: both
                type: composite
                evaluators: [{type: is_json}]
                aggregator: {type: threshold, treshold: 0.5}
    """)
    out = refused(repo)
    assert "x.eval.yaml:7: unknown key 'valeu' in contains evaluator #1 (did you mean 'value'?)" in out
    assert "x.eval.yaml:12: unknown key 'treshold' in the aggregator of composite evaluator 'both'" in out


def test_an_aggregator_key_its_kind_does_not_read_is_refused(repo: Path) -> None:
    # Each key is read by some aggregator, but not by this one: a `path:` on a weighted average runs
    # no script, `weights:` never change a threshold's count, a `threshold:` is not a weighted mean's.
    suite(repo, """
        tests:
          - id: a
            input: Hi
            assert:
              - name: mean
                type: composite
                evaluators: [{type: is_json}]
                aggregator:
                  path: scripts/aggregate.py
              - name: count
                type: composite
                evaluators: [{type: is_json}]
                aggregator: {type: threshold, threshold: 0.5, weights: {is_json: 2}}
              - name: judged
                type: composite
                evaluators: [{type: is_json}]
                aggregator: {type: llm-judge, threshold: 0.5, prompt: "Score {{EVALUATOR_RESULTS_JSON}}"}
    """)
    out = refused(repo)
    assert ("x.eval.yaml:9: 'path' in the aggregator of composite evaluator 'mean': the weighted_average "
            "aggregator does not read it (read by: code_judge)") in out
    assert ("x.eval.yaml:13: 'weights' in the aggregator of composite evaluator 'count': the threshold "
            "aggregator does not read it (read by: weighted_average, code_judge, llm_judge)") in out
    assert ("x.eval.yaml:17: 'threshold' in the aggregator of composite evaluator 'judged': the llm_judge "
            "aggregator does not read it (read by: threshold)") in out


def test_a_text_or_file_segments_unread_key_is_located(repo: Path) -> None:
    # A misspelt `value` sent the segment's JSON to the model as the prompt; a `path` beside a file's
    # `value` named a second file nobody read.
    (repo / "evals/a.txt").write_text("hello\n")
    suite(repo, """
        tests:
          - id: a
            criteria: Greets
            input:
              - role: user
                content:
                  - {type: text, valeu: Hi}
                  - {type: file, value: a.txt, path: b.txt}
    """)
    out = refused(repo)
    assert "x.eval.yaml:7: unknown key 'valeu' in a text segment (did you mean 'value'?)" in out
    assert "x.eval.yaml:8: unknown key 'path' in a file segment: 'value' names its file" in out


def test_code_judge_extra_keys_are_its_config_but_near_misses_are_typos(repo: Path) -> None:
    (repo / "evals/judge.py").write_text("import json,sys\nd=json.load(sys.stdin)\n"
                                         "print(json.dumps({'score': 1 if d['config']['keywords'] == ['Paris'] else 0}))\n")
    suite(repo, """
        tests:
          - id: a
            input: Capital of France?
            assert:
              - type: code_judge
                name: j
                script: [python3, judge.py]
                keywords: [Paris]
                wieght: 2
          - id: b
            input: Capital of France?
            assert:
              - type: code_judge
                name: j
                script: [python3, judge.py]
                keywords: [Paris]
                wieght: 2
    """)
    out = refused(repo)
    assert "x.eval.yaml:9: unknown key 'wieght' in code_judge evaluator 'j' (did you mean 'weight'?)" in out
    # the second test's typo is refused as the first's (the near-miss check answers once per key and table)
    assert "x.eval.yaml:17: unknown key 'wieght' in code_judge evaluator 'j' (did you mean 'weight'?)" in out
    assert "keywords" not in out
    suite(repo, """
        tests:
          - id: a
            input: Capital of France?
            assert:
              - type: code_judge
                name: j
                script: [python3, judge.py]
                keywords: [Paris]
    """)
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr  # `keywords` reached the judge as config


def test_targets_yaml_typos_at_each_level(repo: Path) -> None:
    write(repo / ".agentv/targets.yaml", """\
        targets:
          - name: default
            provider: cli
            command_template: "echo hi"
            judge_target: judge
            timout_seconds: 5
            healthcheck:
              type: command
              command_templat: "true"
          - name: judge
            provider: mock
            judge_respons: {score: 1}
            responses:
              - {id: a, respones: hi, response: hi}
          - name: spare
            provider: openai
            model: m
            temprature: 0
    """)
    suite(repo, "tests:\n  - {id: a, input: Hi, criteria: Greets}\n")
    out = refused(repo)
    targets = ".agentv/targets.yaml"
    assert f"{targets}:6: unknown key 'timout_seconds' in target 'default' (did you mean 'timeout_seconds'?)" in out
    assert f"{targets}:9: unknown key 'command_templat' in the healthcheck of target 'default'" in out
    assert f"{targets}:12: unknown key 'judge_respons' in target 'judge' (did you mean 'judge_response'?)" in out
    assert f"{targets}:14: unknown key 'respones' in responses[0] of target 'judge' (did you mean 'response'?)" in out
    assert f"{targets}:18: unknown key 'temprature' in target 'spare' (did you mean 'temperature'?)" in out


def test_a_cli_target_key_its_context_does_not_read_is_refused(repo: Path) -> None:
    # Each key is read by a cli target somewhere, but not here: retries only for an http healthcheck,
    # a healthcheck's keys of the other kind, `files_format` for a command that names no {FILES}.
    write(repo / ".agentv/targets.yaml", f"""\
        targets:
          - name: default
            provider: cli
            command_template: "touch {repo / 'agent-ran'} && echo Paris"
            max_retries: 3
            request_timeout_seconds: 5
            files_format: "--file {{path}}"
            healthcheck:
              command: "true"
              url: http://127.0.0.1:9/health
          - name: checked
            provider: cli
            command: "echo {{FILES}}"
            healthcheck: {{type: command, command: "true", url: http://127.0.0.1:9/health}}
          - name: http
            provider: cli
            command: "echo hi"
            retry_initial_delay_ms: 10
            healthcheck: {{url: http://127.0.0.1:9/health, cwd: ./tools}}
    """)
    suite(repo, "tests:\n  - {id: a, input: Hi, assert: [{type: contains, value: Paris}]}\n")
    out = refused(repo)
    targets = ".agentv/targets.yaml"
    assert (f"{targets}:6: 'request_timeout_seconds' in target 'default': a cli target does not read it (its "
            "command's timeout is timeout_seconds, its healthcheck's is healthcheck.timeout_seconds)") in out
    assert (f"{targets}:7: 'files_format' in target 'default': its command has no {{FILES}}, so nothing reads "
            "it") in out
    assert (f"{targets}:9: 'command' in the healthcheck of target 'default': an http healthcheck (it has 'url') "
            "does not read it (read by: a command healthcheck)") in out
    assert (f"{targets}:14: 'url' in the healthcheck of target 'checked': a command healthcheck does not read "
            "it (read by: an http healthcheck)") in out
    assert (f"{targets}:19: 'cwd' in the healthcheck of target 'http': an http healthcheck (it has 'url') does "
            "not read it (read by: a command healthcheck)") in out
    # retries are read by an http healthcheck (`url` wins over `command`): no problem there
    assert "'max_retries' in target 'default'" not in out and "'retry_initial_delay_ms'" not in out
    write(repo / ".agentv/targets.yaml", f"""\
        targets:
          - name: default
            provider: cli
            command_template: "touch {repo / 'agent-ran'} && echo Paris"
            max_retries: 3
            healthcheck: {{command: "true"}}
          - name: bare
            provider: cli
            command: "echo hi"
            retryMaxDelayMs: 10
    """)
    out = refused(repo)
    assert (f"{targets}:5: 'max_retries' in target 'default': the command of a cli target is never retried; "
            "only an http healthcheck (healthcheck: {url: ...}) reads it") in out
    assert (f"{targets}:10: 'retryMaxDelayMs' in target 'bare': the command of a cli target is never retried; "
            "only an http healthcheck (healthcheck: {url: ...}) reads it") in out


def test_a_suites_eval_spec_v2_metadata_is_read_and_changes_no_score(repo: Path) -> None:
    # AgentV's assert example: the suite metadata block of its eval spec v2 (name, description, version,
    # author, tags, license, requires) describes the suite; AgentV's metadata schema fixes each one's shape.
    suite(repo, """\
        name: assert-demo
        description: Demonstrates eval spec v2 assert features
        version: "1.0"
        author: acme-compliance
        tags: [demo, assert]
        license: Apache-2.0
        requires:
          agentv: ">=0.6.0"
        tests:
          - id: a
            input: Capital of France?
            assert: [{type: contains, value: Paris}]
    """)
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (repo / "agent-ran").unlink()
    suite(repo, """\
        name: assert-demo
        version: 1.0
        tags: demo
        requires: {agentv: ">=2", node: ">=20"}
        tests:
          - {id: a, input: Hi, assert: [{type: contains, value: Paris}]}
    """)
    out = refused(repo)
    assert "evals/x.eval.yaml:2: 'version' must be text, got 1.0 (expected version: \"1.0\")" in out
    assert "evals/x.eval.yaml:3: 'tags' must be a list of text, got 'demo' (expected tags: [demo, smoke])" in out
    assert ("evals/x.eval.yaml:4: 'requires' holds only 'agentv' (the AgentV versions the suite needs), "
            "got {'agentv': '>=2', 'node': '>=20'} (expected requires: {agentv: \">=2.0\"})") in out


def test_a_cli_targets_verbose_and_provider_batching_false_are_read(repo: Path) -> None:
    # AgentV's document-extraction example: a cli target AgentV runs once per case, logging its command.
    # Neither setting changes an answer or a score; a value AgentV's schema refuses is refused here too.
    write(repo / ".agentv/targets.yaml", f"""\
        targets:
          - name: default
            provider: cli
            provider_batching: false
            verbose: true
            command_template: "touch {repo / 'agent-ran'} && echo Paris"
    """)
    suite(repo, "tests:\n  - {id: a, input: Hi, assert: [{type: contains, value: Paris}]}\n")
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (repo / "agent-ran").exists()
    (repo / "agent-ran").unlink()
    write(repo / ".agentv/targets.yaml", f"""\
        targets:
          - name: default
            provider: cli
            verbose: "yes"
            providerBatching: 0
            command_template: "touch {repo / 'agent-ran'} && echo Paris"
            judge_target: judge
          - name: judge
            provider: mock
            cli_verbose: true
    """)
    out = refused(repo)
    assert (".agentv/targets.yaml:4: 'verbose' in target 'default' must be true or false, got 'yes' "
            "(AgentV refuses any other value)") in out
    assert (".agentv/targets.yaml:5: 'providerBatching' in target 'default' must be true or false, got 0 "
            "(AgentV refuses any other value)") in out
    assert ".agentv/targets.yaml:10: unknown key 'cli_verbose' in target 'judge'" in out  # a mock logs no command


def test_allow_unknown_keys_makes_them_warnings_and_the_run_goes_on(repo: Path) -> None:
    suite(repo, """
        tests:
          - id: a
            input: Capital of France?
            criteria: Names Paris
            x-owner: team-geo
    """)
    ran = run_cli("run", "evals", "--no-cache", "--allow-unknown-keys", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "warning: unknown key 'x-owner' in test 'a'" in ran.stderr
    assert (repo / "agent-ran").exists()
    checked = run_cli("validate", "evals", "--allow-unknown-keys", cwd=repo)
    assert checked.returncode == 0 and "warning: unknown key 'x-owner'" in checked.stdout
    assert run_cli("validate", "evals", "--allow-unknown-keys", "--strict", cwd=repo).returncode == 1


def _not_yet_cases() -> list[tuple[str, str, str]]:
    """(what, suite text, expected message) for every entry of NOT_YET an eval file can hold."""
    case = "  - id: a\n    input: Hi\n    criteria: Greets\n"
    out = [(f"suite {k}", f"{k}: {{}}\ntests:\n{case}", k) for k in NOT_YET["suite"]]
    out += [(f"test {k}", f"tests:\n{case}    {k}: {{}}\n", k) for k in NOT_YET["test"]]
    out += [(f"execution {k}", f"execution:\n  {k}: 1\ntests:\n{case}", k) for k in NOT_YET["execution"]]
    out += [(f"workspace {k}", f"workspace:\n  {k}: x\ntests:\n{case}", k) for k in NOT_YET["workspace"]]
    out += [(f"hook {k}", f"workspace:\n  hooks:\n    after_each: {{command: [true], {k}: fast}}\ntests:\n{case}", k)
            for k in NOT_YET.get("hook", {})]
    out += [(f"evaluator {k}", f"tests:\n{case}    assert:\n      - {{type: contains, value: Hi, {k}: true}}\n", k)
            for k in NOT_YET["evaluator"]]
    judge = "type: code_judge, script: [python3, j.py]"
    out += [(f"code_judge {k}", f"tests:\n{case}    assert:\n      - {{{judge}, {k}: true}}\n", k)
            for k in NOT_YET.get("code_judge", {})]
    judge = "type: llm_judge"
    out += [(f"llm_judge {k}", f"tests:\n{case}    assert:\n      - {{{judge}, {k}: [x]}}\n", k)
            for k in NOT_YET.get("llm_judge", {})]
    out += [(f"type {t}", f"tests:\n{case}    assert:\n      - {{name: n, type: {t.replace('_', '-')}}}\n",
             f"type: {t.replace('_', '-')}") for t in NOT_YET_EVALUATOR_TYPES]
    # AgentV 4.42's eval target refs: a target written in the eval file, with its own use_target and hooks
    out += [("eval target refs", "execution:\n  targets:\n    - {name: variant, use_target: default, hooks: "
             "{before_each: {command: [true]}}}\n" f"tests:\n{case}", "targets")]
    return out


@pytest.mark.parametrize(("text", "name"), [c[1:] for c in _not_yet_cases()], ids=[c[0] for c in _not_yet_cases()])
def test_agentv_features_not_run_yet_always_stop_the_run(repo: Path, text: str, name: str) -> None:
    (repo / "evals/j.py").write_text("print('{\"score\": 1}')\n")
    suite(repo, text)
    ran = run_cli("run", "evals", "--no-cache", "--allow-unknown-keys", cwd=repo)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert f"'{name}' is an AgentV feature agentv-gate does not run yet" in ran.stderr
    assert not (repo / "agent-ran").exists()


def test_target_features_not_run_yet(repo: Path) -> None:
    write(repo / ".agentv/targets.yaml", """\
        targets:
          - name: default
            provider: mock
            fallback_targets: [other]
          - name: gem
            provider: codex
          - name: batch
            provider: cli
            command: "echo hi {FILES}"
            provider_batching: true
          - name: pi
            provider: pi-coding-agent
            subprovider: openrouter
          - name: agent
            use_target: ${{ AGENT_TARGET }}
    """)
    suite(repo, "tests:\n  - {id: a, input: Hi, criteria: Greets}\n")
    ran = run_cli("run", "evals", "--no-cache", "--allow-unknown-keys", cwd=repo)
    assert ran.returncode == 2
    assert ".agentv/targets.yaml:4: 'fallback_targets' is an AgentV feature agentv-gate does not run yet" in ran.stderr
    assert (".agentv/targets.yaml:10: 'provider_batching: true' is an AgentV feature agentv-gate does not run yet "
            "(provider batching with {FILES}: every case's files given to one run)") in ran.stderr
    assert "codex" not in ran.stderr  # an unused target of a provider not run yet is no error...
    assert "pi-coding-agent" not in ran.stderr  # (AgentV's own examples list one beside their LLM targets)
    suite(repo, "tests:\n  - {id: a, input: Hi, criteria: Greets, target: gem}\n")
    ran = run_cli("validate", "evals", cwd=repo)
    assert "'provider: codex' is an AgentV feature agentv-gate does not run yet" in ran.stdout  # ...a used one is
    suite(repo, "tests:\n  - {id: a, input: Hi, criteria: Greets, target: agent}\n")
    ran = run_cli("validate", "evals", cwd=repo, env={"AGENT_TARGET": "gem"})
    assert ran.returncode == 1, ran.stdout + ran.stderr  # a switch to it: the target it runs, checked as if named
    assert ".agentv/targets.yaml:5: target 'gem': 'provider: codex' is an AgentV feature" in ran.stdout


def test_validate_reports_every_problem_at_once(repo: Path) -> None:
    suite(repo, """
        treshold: 0.9
        tests:
          - {id: a, input: Hi, criteria: Greets, asserts: []}
          - {id: b, input: Hi, criteria: Greets, target: defualt}
    """)
    checked = run_cli("validate", "evals", cwd=repo)
    assert checked.returncode == 1
    lines = checked.stdout.splitlines()
    assert len(lines) == 3, checked.stdout
    assert "3 error(s)" in checked.stderr


def test_the_reader_cannot_read_a_key_its_table_does_not_declare() -> None:
    raw = declared({"id": "a", "asserts": []}, TEST_KEYS)
    assert raw.get("id") == "a"
    with pytest.raises(AssertionError, match="the loader reads undeclared key 'asserts': add it to loader/eval_file_keys.py"):
        raw.get("asserts")


def test_the_check_runs_in_every_test_and_costs_a_user_nothing() -> None:
    """The suite sets AGENTV_GATE_SELF_CHECK (tests/conftest.py), and every CLI it starts inherits it; a
    user's process reads each test's mapping as it is (the check guards our readers, at a tenth of the
    cost of loading a long suite)."""
    assert SELF_CHECK
    code = "from agentv_gate.loader.eval_file_keys import declared; d = {'x': 1}; print(declared(d, ()) is d)"
    seen = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
            for env in (cli_env(), cli_env(drop=("AGENTV_GATE_SELF_CHECK",)))]
    assert seen == ["False\n", "True\n"]


def test_provider_batching_on_a_model_target_is_a_no_effect_warning(repo: Path) -> None:
    """AgentV 2.19 batches only its cli and vscode providers: on any other, `provider_batching: true`
    is accepted and the cases go one by one. So here: run, with a located warning (`--strict`: an error)."""
    write(repo / ".agentv/targets.yaml", """\
        targets:
          - name: default
            provider: mock
            response: Paris
            provider_batching: true
    """)
    suite(repo, "tests:\n  - {id: a, input: Hi, assert: [{type: contains, value: Paris}]}\n")
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (".agentv/targets.yaml:5: warning: 'provider_batching' has no effect here: target 'default' (mock): "
            "AgentV 2.19 batches only cli and vscode targets") in ran.stderr
    ran = run_cli("validate", "evals", "--strict", cwd=repo)
    assert ran.returncode == 1 and "'provider_batching' has no effect here" in ran.stdout, ran.stdout + ran.stderr
