"""Every problem inside one target of targets.yaml is reported by one `validate`, each at its key's line.

A target's values are checked one after the other, and building its provider stops at the first
setting it cannot use: a target with four mistakes took four rounds of fixing one and running again.
"""

from __future__ import annotations

from pathlib import Path

from agentv_gate.errors import EXIT_FAILED, EXIT_OK
from tests.helpers.cli import run_cli
from tests.helpers.files import write

SUITE = """\
tests:
  - id: a
    input: Capital of France?
    assertions:
      - {type: contains, value: Paris}
"""


def test_every_problem_of_one_target_at_once_each_at_its_key(repo: Path) -> None:
    write(repo / ".agentv/targets.yaml", """\
targets:
  - name: default
    provider: openai
    endpoint: http://127.0.0.1:9/v1
    api_key: sk-a-literal-key-0123456789
    model: gpt-4o
    temprature: 0.2
    workers: many
    judge_target: 5
    timeout_seconds: soon
    max_response_bytes: -3
    temperature: hot
""")
    write(repo / "evals/x.eval.yaml", SUITE)
    checked = run_cli("validate", "evals", cwd=repo)
    assert checked.returncode == EXIT_FAILED, checked.stdout + checked.stderr
    lines = [line for line in checked.stdout.splitlines() if line.startswith(".agentv/targets.yaml:")]
    assert lines == [
        ".agentv/targets.yaml:7: unknown key 'temprature' in target 'default' (did you mean 'temperature'?)",
        ".agentv/targets.yaml:5: target 'default': api_key must use ${{ VARIABLE_NAME }} syntax to read it from "
        "the environment; a literal secret in targets.yaml is refused",
        ".agentv/targets.yaml:8: target 'default': workers must be a whole number >= 1, got 'many'",
        ".agentv/targets.yaml:9: target 'default': judge_target must be a target name, got 5",
        ".agentv/targets.yaml:10: openai target 'default': timeout_seconds must be a number, got 'soon'",
        ".agentv/targets.yaml:11: openai target 'default': max_response_bytes must be a whole number of bytes >= 1, "
        "got -3",
        ".agentv/targets.yaml:12: openai target 'default': temperature must be a number, got 'hot'",
    ]
    assert "sk-a-literal-key" not in checked.stdout + checked.stderr


def test_a_provider_problem_left_alone_is_still_the_only_one(repo: Path) -> None:
    """Building again without the bad setting finds nothing more: one problem, and a target that
    needs the setting left out is not blamed for lacking it (`model` is required once `model` is out)."""
    write(repo / ".agentv/targets.yaml", """\
targets:
  - name: default
    provider: openai
    endpoint: http://127.0.0.1:9/v1
    api_key: ${{ EVERY_PROBLEM_KEY }}
    model: gpt-4o
    temperature: hot
""")
    write(repo / "evals/x.eval.yaml", SUITE)
    checked = run_cli("validate", "evals", cwd=repo, env={"EVERY_PROBLEM_KEY": "sk-every-0123456789"})
    assert checked.returncode == EXIT_FAILED
    assert [line for line in checked.stdout.splitlines() if line.startswith(".agentv/")] == [
        ".agentv/targets.yaml:7: openai target 'default': temperature must be a number, got 'hot'"]
    fixed = (repo / ".agentv/targets.yaml").read_text().replace("temperature: hot", "temperature: 0.2")
    (repo / ".agentv/targets.yaml").write_text(fixed)
    assert run_cli("validate", "evals", cwd=repo, env={"EVERY_PROBLEM_KEY": "sk-every-0123456789"}).returncode == EXIT_OK
