"""Preflight: every target and judge a run will call is checked before the first call.

The agent is a cli target that leaves a marker file when it runs, so each test proves the
configuration error stopped the run before the agent was called (and paid for).
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.files import write

OWN_VARIABLES = ("PREFLIGHT_",)
"""The variables these tests set or leave unset on purpose: never taken from the developer's environment."""


def write_project(repo: Path, targets: str, suite: str) -> None:
    agent = f"touch {repo / 'agent-ran'} && echo Paris"
    write(repo / ".agentv/targets.yaml", targets.replace("AGENT", agent))
    write(repo / "evals/x.eval.yaml", suite)


def stopped_before_the_agent(repo: Path, env: dict[str, str] | None = None) -> str:
    ran = run_cli("run", "evals", "--no-cache", cwd=repo, env=env, drop=OWN_VARIABLES)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert not (repo / "agent-ran").exists(), "the agent was called before the configuration error was found"
    return ran.stderr


SUITE = """
    tests:
      - id: a
        input: Capital of France?
        criteria: Names Paris
"""


OPENAI_JUDGE = """
        targets:
          - name: default
            provider: cli
            command_template: "AGENT"
            judge_target: judge
          - name: judge
            provider: openai
            model: gpt-4o
            api_key: ${{ PREFLIGHT_JUDGE_KEY }}
"""
"""The cli agent, judged by an OpenAI judge whose key comes from the environment."""


def test_unset_judge_key_is_found_before_the_agent_is_called(repo: Path) -> None:
    write_project(repo, OPENAI_JUDGE, SUITE)
    err = stopped_before_the_agent(repo)
    assert (".agentv/targets.yaml:9: target 'judge': environment variable 'PREFLIGHT_JUDGE_KEY' "
            "(api_key: ${{ PREFLIGHT_JUDGE_KEY }}) is not set or empty") in err
    # validate needs no secrets: it names the variable `run` will need, and passes...
    checked = run_cli("validate", "evals", cwd=repo, drop=OWN_VARIABLES)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "note: not set here, needed by `run`: PREFLIGHT_JUDGE_KEY (target(s) judge)" in checked.stderr
    # ...unless asked to check them
    checked = run_cli("validate", "evals", "--require-env", cwd=repo, drop=OWN_VARIABLES)
    assert checked.returncode == 1 and "PREFLIGHT_JUDGE_KEY" in checked.stdout


def test_required_judge_setting_from_an_unset_variable(repo: Path) -> None:
    write_project(repo, """
        targets:
          - name: default
            provider: cli
            command_template: "AGENT"
            judge_target: judge
          - name: judge
            provider: azure
            endpoint: ${{ PREFLIGHT_AZURE_ENDPOINT }}
            api_key: ${{ PREFLIGHT_AZURE_KEY }}
            deployment: gpt-4o
    """, SUITE)
    err = stopped_before_the_agent(repo, env={"PREFLIGHT_AZURE_KEY": "k"})
    assert "PREFLIGHT_AZURE_ENDPOINT" in err and ".agentv/targets.yaml:" in err


def test_missing_judge_target_with_a_suggestion(repo: Path) -> None:
    write_project(repo, """
        targets:
          - name: default
            provider: cli
            command_template: "AGENT"
            judge_target: juge
          - name: judge
            provider: mock
    """, SUITE)
    err = stopped_before_the_agent(repo)
    assert ".agentv/targets.yaml:5: target 'default': judge_target 'juge' is not defined (did you mean 'judge'?)" in err


def test_cli_agent_without_any_judge_is_refused_up_front(repo: Path) -> None:
    write_project(repo, """
        targets:
          - name: default
            provider: cli
            command_template: "AGENT"
    """, SUITE)
    err = stopped_before_the_agent(repo)
    assert "evals/x.eval.yaml:2: no judge target configured: set judge_target on target 'default'" in err


def test_judge_named_by_an_evaluator_and_by_a_composite_member(repo: Path) -> None:
    targets = """
        targets:
          - name: default
            provider: cli
            command_template: "AGENT"
            judge_target: judge
          - name: judge
            provider: mock
            judge_response: {score: 1, hits: [ok], misses: [], reasoning: fine}
    """
    write_project(repo, targets, """
        tests:
          - id: a
            input: Capital of France?
            criteria: Names Paris
            assert:
              - name: both
                type: composite
                evaluators:
                  - {name: tone, type: llm_judge, target: jduge}
    """)
    err = stopped_before_the_agent(repo)
    assert "evals/x.eval.yaml:9: llm_judge target: no target named 'jduge'" in err and "(did you mean 'judge'?)" in err
    write_project(repo, targets, """
        tests:
          - id: a
            input: Capital of France?
            criteria: Names Paris
            assert:
              - {name: tone, type: llm_judge, target: judge}
    """)
    ran = run_cli("run", "evals", "--no-cache", cwd=repo, drop=OWN_VARIABLES)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (repo / "agent-ran").exists()


def test_validate_catches_a_misspelled_target_at_the_eval_file_line(repo: Path) -> None:
    """What the agentv-gate-validate pre-commit hook runs: offline, targets found as `run` finds them."""
    write_project(repo, """
        targets:
          - name: my-agent
            provider: cli
            command_template: "AGENT"
            judge_target: judge
          - name: judge
            provider: mock
    """, """
        tests:
          - id: a
            input: Hi
            criteria: Greets
            target: my-agnet
    """)
    checked = run_cli("validate", "evals/x.eval.yaml", cwd=repo, drop=OWN_VARIABLES)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "evals/x.eval.yaml:5: no target named 'my-agnet'" in checked.stdout
    assert "(did you mean 'my-agent'?)" in checked.stdout
    stopped_before_the_agent(repo)


def test_validate_takes_a_targets_file_and_says_when_there_is_none(repo: Path) -> None:
    write_project(repo, """
        targets:
          - name: other
            provider: mock
    """, SUITE)
    (repo / ".agentv/targets.yaml").rename(repo / "ci-targets.yaml")
    # No targets file: `run` would stop (exit 2), so validate does too, saying so
    plain = run_cli("validate", "evals", cwd=repo, drop=OWN_VARIABLES)
    assert plain.returncode == 2 and "no targets file" in plain.stderr, plain.stderr
    ran = run_cli("run", "evals", "--no-cache", cwd=repo, drop=OWN_VARIABLES)
    assert ran.returncode == plain.returncode
    checked = run_cli("validate", "evals", "--targets", "ci-targets.yaml", cwd=repo, drop=OWN_VARIABLES)
    assert checked.returncode == 0, checked.stdout + checked.stderr  # a lone target is the default
    (repo / "ci-targets.yaml").write_text("targets:\n  - {name: a, provider: mock}\n  - {name: b, provider: mock}\n")
    checked = run_cli("validate", "evals", "--targets", "ci-targets.yaml", cwd=repo, drop=OWN_VARIABLES)
    assert checked.returncode == 1 and "no target named 'default'" in checked.stdout


def test_forced_target_typo(repo: Path) -> None:
    write_project(repo, """
        targets:
          - name: default
            provider: cli
            command_template: "AGENT"
            judge_target: judge
          - name: judge
            provider: mock
    """, SUITE)
    ran = run_cli("run", "evals", "--no-cache", "--target", "jduge", cwd=repo, drop=OWN_VARIABLES)
    assert ran.returncode == 2 and "--target: no target named 'jduge' (did you mean 'judge'?)" in ran.stderr
    assert not (repo / "agent-ran").exists()


def test_a_cost_limit_no_target_can_reach_warns_and_strict_refuses_it(repo: Path) -> None:
    """`total_budget_usd` and `cost_limit_usd` add up the `cost_usd` the target reports, which only a
    cli agent that prints one does: on a model or mock target they can never stop anything. AgentV 2.19
    runs such a suite (its trials example does), so the gate runs it too and says the limit has no effect;
    `--strict` refuses it before the agent is called."""
    write_project(repo, """
        targets:
          - name: default
            provider: mock
            response: Paris
          - name: agent
            provider: cli
            command_template: "AGENT"
          - name: priced
            provider: openai
            base_url: http://127.0.0.1:9/v1
            model: m
            price_per_1k_input: 0.5
            price_per_1k_output: 1.5
    """, """
        execution:
          total_budget_usd: 5
          trials: {count: 3, cost_limit_usd: 1}
        tests:
          - id: on-mock
            input: q
            assert: [{type: contains, value: Paris}]
          - id: on-agent
            input: q
            target: agent
            execution: {trials: {count: 2, cost_limit_usd: 0.5}}
            assert: [{type: contains, value: Paris}]
          - id: own-limit-on-mock
            input: q
            execution:
              trials: {count: 2, cost_limit_usd: 0.5}
            assert: [{type: contains, value: Paris}]
          - id: own-limit-on-priced-model
            input: q
            target: priced
            execution:
              trials: {count: 2, cost_limit_usd: 0.5}
            assert: [{type: contains, value: Paris}]
    """)
    never = ("has no effect here: it can never be reached: target 'default' (mock) reports no cost_usd; only a "
             "cli agent that prints one, or a target with price_per_1k_input/output, does")
    ran = run_cli("run", "evals", "--no-cache", "--test-id", "on-mock", cwd=repo, drop=OWN_VARIABLES)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert f"evals/x.eval.yaml:3: warning: 'cost_limit_usd' {never}" in ran.stderr
    assert f"evals/x.eval.yaml:16: warning: 'cost_limit_usd' {never}" in ran.stderr
    assert "total_budget_usd" not in ran.stderr and ":12:" not in ran.stderr  # a suite case runs on the cli agent
    assert ran.stderr.count("can never be reached") == 2, ran.stderr  # a model target with prices reports a cost
    strict = run_cli("run", "evals", "--no-cache", "--strict", cwd=repo, drop=OWN_VARIABLES)
    assert strict.returncode == 2, strict.stdout + strict.stderr
    assert not (repo / "agent-ran").exists(), "the agent was called before the configuration error was found"
    assert f"evals/x.eval.yaml:3: 'cost_limit_usd' {never}" in strict.stderr


def test_a_ca_bundle_that_does_not_exist_is_found_before_the_agent_is_called(repo: Path) -> None:
    # REQUESTS_CA_BUNDLE naming no file would make every HTTPS call to the judge fail, case after case.
    write_project(repo, OPENAI_JUDGE, SUITE)
    missing = repo / "company-ca.pem"
    env = {"PREFLIGHT_JUDGE_KEY": "sk-test", "REQUESTS_CA_BUNDLE": str(missing)}
    err = stopped_before_the_agent(repo, env)
    assert (f".agentv/targets.yaml:6: target 'judge': REQUESTS_CA_BUNDLE names {missing}, which does not exist; "
            "every HTTPS call to https://api.openai.com/v1 would fail") in err
    (missing).write_text("not checked further here\n")
    checked = run_cli("validate", "evals", cwd=repo, env=env, drop=OWN_VARIABLES)
    assert checked.returncode == 0, checked.stdout
