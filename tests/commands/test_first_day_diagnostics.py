"""The messages a user meets in a first hour with the gate, each through the real CLI.

targets.yaml problems are named repo-relative and at the key they are about; every unset variable
at once; a code judge's exception with its line; `validate` agreeing with `run` when there is no
targets file; every option of `merge` and `init` described, and every help naming the exit codes;
did-you-mean for file names, evaluator types and the case list.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_gate.cli import _OWN_EXIT_CODES
from agentv_gate.errors import EXIT_CODES, EXIT_FAILED, EXIT_OK, EXIT_USAGE
from tests.helpers.cli import run_cli
from tests.helpers.files import write

SUITE = """\
tests:
  - id: a
    input: Capital of France?
    criteria: Names Paris
"""


def test_targets_problems_are_repo_relative_at_their_key_and_all_at_once(repo: Path) -> None:
    write(repo / ".agentv/targets.yaml", """\
targets:
  - name: default
    provider: cli
    command: echo Paris
    judge_target: judgee
  - name: judge
    provider: openai
    model: gpt-4o
    api_key: ${{ DIAG_T_KEY }}
    temperature: hot
  - name: other
    provider: cli
    command: echo Paris
    healthcheck:
      timeout_seconds: 5
    judge_target: judge
""")
    write(repo / "evals/x.eval.yaml", SUITE)
    write(repo / "evals/y.eval.yaml", SUITE.replace("id: a", "id: b") + "    target: other\n")
    checked = run_cli("validate", "evals", cwd=repo, env={"DIAG_T_KEY": "sk-diag-0123456789"})
    assert checked.returncode == EXIT_FAILED
    out = checked.stdout
    assert str(repo) not in out  # the targets file as eval files are named: from the repository
    assert ".agentv/targets.yaml:5: target 'default': judge_target 'judgee' is not defined (did you mean 'judge'?)" in out
    assert ".agentv/targets.yaml:10: openai target 'judge': temperature must be a number, got 'hot'" in out
    assert ".agentv/targets.yaml:14: cli target 'other': healthcheck must have 'command'" in out


def test_every_unset_variable_of_a_target_is_named_at_once(repo: Path) -> None:
    write(repo / ".agentv/targets.yaml", """\
targets:
  - name: default
    provider: openai
    base_url: http://${{ DIAG_T_HOST }}:${{ DIAG_T_PORT }}/v1
    model: ${{ DIAG_T_MODEL }}
    api_key: ${{ DIAG_T_KEY }}
""")
    write(repo / "evals/x.eval.yaml", SUITE)
    ran = run_cli("run", "evals", "--no-cache", cwd=repo, drop=("DIAG_T_",))
    assert ran.returncode == EXIT_USAGE
    for line, name in ((4, "DIAG_T_HOST"), (4, "DIAG_T_PORT"), (5, "DIAG_T_MODEL"), (6, "DIAG_T_KEY")):
        assert f".agentv/targets.yaml:{line}: target 'default': environment variable '{name}'" in ran.stderr, name


def test_a_code_judge_exception_shows_its_line_and_traceback(repo: Path) -> None:
    write(repo / ".agentv/targets.yaml", "targets:\n  - name: default\n    provider: mock\n    response: hi\n")
    write(repo / "judges/kw.py", """\
from agentv_gate.sdk import CodeJudgeInput, define_code_judge


@define_code_judge
def judge(payload: CodeJudgeInput) -> dict:
    words = {"a": 1}
    return {"score": words["topic"]}
""")
    write(repo / "evals/x.eval.yaml", """\
tests:
  - id: a
    input: hi
    assert:
      - name: kw
        type: code_judge
        script: python3 judges/kw.py
""")
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode == EXIT_FAILED
    assert "miss: KeyError: 'topic' (judges/kw.py:7)" in ran.stdout, ran.stdout
    verbose = run_cli("run", "evals", "--no-cache", "-v", cwd=repo)
    assert "Traceback (most recent call last):" in verbose.stdout
    assert 'judges/kw.py", line 7, in judge' in verbose.stdout


def test_a_code_judge_exception_raised_inside_the_stdlib_names_the_judges_own_line(repo: Path) -> None:
    """`json.loads` raises in json/decoder.py: the one-line reason names the judge's own call (the
    last frame in its script), and -v still shows the whole traceback down to the stdlib."""
    write(repo / ".agentv/targets.yaml", "targets:\n  - name: default\n    provider: mock\n    response: hi\n")
    write(repo / "judges/parse.py", """\
import json

from agentv_gate.sdk import CodeJudgeInput, define_code_judge


def parsed(text: str) -> dict:
    return json.loads(text)


@define_code_judge
def judge(payload: CodeJudgeInput) -> dict:
    return parsed(payload.answer)
""")
    write(repo / "evals/x.eval.yaml", """\
tests:
  - id: a
    input: hi
    assert:
      - name: parse
        type: code_judge
        script: python3 judges/parse.py
""")
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert ran.returncode == EXIT_FAILED
    [miss] = [line for line in ran.stdout.splitlines() if "miss: JSONDecodeError" in line]
    assert "(judges/parse.py:7)" in miss and "decoder.py" not in miss, ran.stdout
    verbose = run_cli("run", "evals", "--no-cache", "-v", cwd=repo)
    assert 'judges/parse.py", line 7, in parsed' in verbose.stdout and "decoder.py" in verbose.stdout


def test_a_script_problem_points_at_the_script_key(repo: Path) -> None:
    write(repo / "evals/x.eval.yaml", """\
tests:
  - id: a
    input: hi
    assert:
      - name: kw
        type: code_judge
        script: python3 judges/missing.py
""")
    checked = run_cli("validate", "evals", cwd=repo)
    assert checked.returncode == EXIT_FAILED
    assert "evals/x.eval.yaml:7: script file 'judges/missing.py' not found" in checked.stdout


def test_validate_without_a_targets_file_agrees_with_run(repo: Path) -> None:
    (repo / ".agentv/targets.yaml").unlink()
    write(repo / "evals/x.eval.yaml", SUITE)
    checked = run_cli("validate", "evals", cwd=repo)
    ran = run_cli("run", "evals", "--no-cache", cwd=repo)
    assert checked.returncode == ran.returncode == EXIT_USAGE
    assert "no targets file" in checked.stderr and "no targets file" in ran.stderr


@pytest.mark.parametrize("command", ["run", "validate", "merge", "compare", "init"])
def test_every_help_describes_every_option_and_names_the_exit_codes(command: str, tmp_path: Path) -> None:
    shown = run_cli(command, "--help", cwd=tmp_path, env={"COLUMNS": "200"})
    assert shown.returncode == EXIT_OK
    options = shown.stdout.split("options:", 1)[1].split("exit codes:", 1)[0]
    positional = shown.stdout.split("positional arguments:", 1)[1].split("options:", 1)[0] \
        if "positional arguments:" in shown.stdout else ""
    undescribed = [line.strip() for line in (positional + options).splitlines()
                   if line.startswith("  ") and not line.startswith("   ") and len(line.split("  ")) < 3
                   and not line.strip().startswith("-h")]
    # An option line with no description has no second column; a wrapped one continues below it.
    lines = (positional + options).splitlines()
    for i, line in enumerate(lines):
        if line.strip() in undescribed:
            following = lines[i + 1] if i + 1 < len(lines) else ""
            assert following.startswith(" " * 8) and not following.strip().startswith("-"), \
                f"{command}: {line.strip()} has no description"
    own = _OWN_EXIT_CODES.get(command, EXIT_CODES)  # validate and init: only the codes they can end with
    for code, meaning in own.items():
        assert f"{code:>3}  {meaning}" in shown.stdout, (command, code)


def test_did_you_mean_for_a_file_an_evaluator_type_and_the_case_list(repo: Path) -> None:
    write(repo / "evals/x.eval.yaml", "cases:\n  - id: a\n    input: hi\n    criteria: says hi\n")
    checked = run_cli("validate", "evals", cwd=repo)
    assert ("evals/x.eval.yaml:1: no list of cases found: 'cases' is not a case list AgentV reads "
            "(did you mean 'tests'?)") in checked.stdout
    missing = run_cli("validate", "evals/x.eval.yml", cwd=repo)
    assert "no such file or folder (did you mean 'evals/x.eval.yaml'?)" in missing.stdout
    write(repo / "evals/x.eval.yaml", """\
tests:
  - id: a
    input: hi
    assertions:
      - type: regexp
        value: h
""")
    checked = run_cli("validate", "evals", cwd=repo)
    assert "evals/x.eval.yaml:5: unknown evaluator type 'regexp' (did you mean 'regex'?)" in checked.stdout
