"""Preflight names every unset `${{ VAR }}` a target reads, nested mappings included (a cli target's
`healthcheck:` and `env:`, an HTTP target's `headers:`), at the line it is written in targets.yaml,
before any target is called. Before, `url: ${{ HEALTH_URL }}` unset said "url is required for an
http healthcheck", and an unset variable in `env:` reached the agent as the text "None".
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write

SUITE = """
tests:
  - id: a
    input: Capital of France?
    criteria: Names Paris
"""


def stopped(repo: Path, targets: str, command: str = "run") -> str:
    agent = f"touch {repo / 'agent-ran'} && echo Paris"
    write(repo / ".agentv/targets.yaml", targets.replace("AGENT", agent))
    write(repo / "evals/x.eval.yaml", SUITE)
    ran = run_cli(command, "evals", *(["--no-cache"] if command == "run" else ["--require-env"]), cwd=repo)
    assert ran.returncode == (2 if command == "run" else 1), ran.stdout + ran.stderr
    assert not (repo / "agent-ran").exists(), "the agent ran before the configuration error was found"
    return ran.stdout + ran.stderr


def test_an_unset_variable_in_a_healthcheck_is_named_at_its_line(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    targets = """
        targets:
          - name: default
            provider: cli
            command: "AGENT"
            judge_target: judge
            healthcheck:
              url: ${{ P13_HEALTH_URL }}
          - name: judge
            provider: mock
    """
    for command in ("run", "validate"):
        out = stopped(repo, targets, command)
        assert (".agentv/targets.yaml:7: target 'default': environment variable 'P13_HEALTH_URL' "
                "(healthcheck.url: ${{ P13_HEALTH_URL }}) is not set or empty") in out
        assert "url is required" not in out


def test_every_unset_variable_in_env_and_headers_is_named(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    out = stopped(repo, """
        targets:
          - name: default
            provider: cli
            command: "AGENT"
            judge_target: judge
            env:
              RUN_MODE: fast
              RUN_TOKEN: ${{ P13_RUN_TOKEN }}
          - name: judge
            provider: openai
            model: gpt-4o
            api_key: ${{ P13_JUDGE_KEY }}
            headers:
              X-Org: ${{ P13_ORG }}
    """)
    assert ".agentv/targets.yaml:8: target 'default': environment variable 'P13_RUN_TOKEN' (env.RUN_TOKEN:" in out
    assert ".agentv/targets.yaml:12: target 'judge': environment variable 'P13_JUDGE_KEY' (api_key:" in out
    assert ".agentv/targets.yaml:14: target 'judge': environment variable 'P13_ORG' (headers.X-Org:" in out
