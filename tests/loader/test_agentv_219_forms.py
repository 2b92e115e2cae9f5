"""Loader edges of the AgentV 2.19 forms the compatibility corpus (tests/compat) runs end to end."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentv_gate.loader import load_eval_file
from agentv_gate.loader.env import find_dotenv, interpolate, load_dotenv, parse_dotenv
from agentv_gate.loader.evaluator_parser import auto_name
from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import read_rows


@pytest.mark.parametrize("kind, value, expected", [
    ("contains", "Paris", "contains-Paris"),
    ("icontains", "paris", "icontains-paris"),
    ("contains", ["a", "b"], "contains"),               # only a string value goes into the name
    ("contains-any", ["a", "b"], "contains-any-2"),
    ("contains_all", ["a", "b", "c"], "contains-all-3"),
    ("regex", "x" * 40, "regex-" + "x" * 30),
    ("is_json", None, "is-json"),
    ("equals", "42", "equals-42"),
    ("equals", 42, "equals"),
    ("starts-with", "Dear", "starts-with-Dear"),
    ("ends-with", "", "ends-with"),
    ("llm-judge", None, None),                          # not an assertion: agentv-gate names it by its type
])
def test_auto_names_follow_agentv(kind: str, value: object, expected: str | None) -> None:
    assert auto_name(kind, value) == expected


def test_a_missing_file_entry_is_located_at_its_line_and_other_cases_load(tmp_path: Path) -> None:
    suite = write(tmp_path / "s.eval.yaml", """\
        tests:
          - id: inline
            criteria: c
            input: hi
          - file://cases/absent.yaml
    """)
    result = load_eval_file(suite, tmp_path)
    assert [c.id for c in result.cases] == ["inline"]
    [problem] = result.errors
    assert (problem.file, problem.line) == (suite, 5) and "case file 'cases/absent.yaml' not found" in problem.message


@pytest.mark.parametrize("suite_text, listed, line, message", [
    ("tests: ./cases.yaml\n", "id: not-a-list\n", 1, "tests file './cases.yaml' holds no list of cases"),
    ("tests: ./cases.yaml\n", "- id: a\n  input: [\n", 1, "tests file './cases.yaml': line 3: malformed YAML"),
    ("tests:\n  - file://cases.yaml\n", "id: x\n", 2, "case file 'file://cases.yaml' holds no list of cases"),
    ("tests:\n  - file://cases.yaml\n", "- id: a\n  input: [\n", 2,
     "case file 'file://cases.yaml': line 3: malformed YAML"),
    # AgentV wants a YAML list there and refuses a mapping: its `assert` (and any other key) was read by no one
    ("tests: ./cases.yaml\n", "assert: [{type: contains, value: x}]\ntests:\n  - {id: a, criteria: c, input: q}\n", 1,
     "tests file './cases.yaml' is a mapping: a case file is a YAML list of cases"),
    ("tests:\n  - file://cases.yaml\n", "tests:\n  - {id: a, criteria: c, input: q}\n", 2,
     "case file 'file://cases.yaml' is a mapping: a case file is a YAML list of cases"),
])
def test_a_case_file_without_a_list_of_cases_is_located_where_the_suite_names_it(
        tmp_path: Path, suite_text: str, listed: str, line: int, message: str) -> None:
    """A `tests:` file and a `file://` entry are read alike; a problem in one is the suite's, at its line."""
    suite = write(tmp_path / "s.eval.yaml", suite_text)
    write(tmp_path / "cases.yaml", listed)
    result = load_eval_file(suite, tmp_path)
    [problem] = result.errors
    assert not result.cases and (problem.file, problem.line) == (suite, line)
    assert problem.message.startswith(message), problem.message


def test_a_broken_case_in_a_case_file_is_located_in_that_file(tmp_path: Path) -> None:
    suite = write(tmp_path / "s.eval.yaml", """\
        tests:
          - file://cases/more.yaml
    """)
    cases = write(tmp_path / "cases/more.yaml", """\
        - id: good
          criteria: c
          input: hi
        - id: no-input
          criteria: c
    """)
    result = load_eval_file(suite, tmp_path)
    [case] = result.cases
    assert (case.source_file, case.source_line, case.suite_file, case.case_file) == (cases.resolve(), 1, suite,
                                                                                     "cases/more.yaml")
    [problem] = result.errors
    assert (problem.file, problem.line) == (cases.resolve(), 4) and "has no input" in problem.message


def test_tests_may_name_its_case_file_with_file_scheme(tmp_path: Path) -> None:
    suite = write(tmp_path / "s.eval.yaml", "tests: file://cases.jsonl\n")
    write(tmp_path / "cases.jsonl", '{"id": "a", "criteria": "c", "input": "hi"}\n')
    assert [c.id for c in load_eval_file(suite, tmp_path).cases] == ["a"]


def test_dataset_names_the_suite_else_the_file_name_without_yaml(tmp_path: Path) -> None:
    named = write(tmp_path / "a.eval.yaml", "dataset: billing\ntests:\n  - {id: a, criteria: c, input: hi}\n")
    plain = write(tmp_path / "probe.eval.yaml", "tests:\n  - {id: a, criteria: c, input: hi}\n")
    assert load_eval_file(named, tmp_path).cases[0].dataset == "billing"
    assert load_eval_file(plain, tmp_path).cases[0].dataset == "probe.eval"
    bad = write(tmp_path / "b.eval.yaml", "dataset: [x]\ntests:\n  - {id: a, criteria: c, input: hi}\n")
    assert [(p.line, p.message) for p in load_eval_file(bad, tmp_path).errors] == [(1, "'dataset' must be a name, got ['x']")]


def test_prompt_command_is_the_executable_template(tmp_path: Path) -> None:
    write(tmp_path / "build.py", "print('prompt')\n")
    suite = write(tmp_path / "s.eval.yaml", """\
        tests:
          - id: a
            criteria: c
            input: hi
            assert:
              - name: j
                type: llm-judge
                prompt: {command: [python3, build.py], config: {k: 1}}
    """)
    [case] = load_eval_file(suite, tmp_path).cases
    [judge] = case.evaluators
    assert judge.resolved_prompt_script == ["python3", str((tmp_path / "build.py").resolve())]  # type: ignore[union-attr]


def test_interpolation_keeps_lines_and_leaves_numbers_alone() -> None:
    from agentv_gate.loader.yaml_lines import load_yaml_text

    doc = load_yaml_text("a:\n  b: 'x ${{ ONE }}-${{TWO}} ${{ UNSET }}!'\n  n: 3\n")
    out = interpolate(doc, {"ONE": "1", "TWO": "2"})
    assert out == {"a": {"b": "x 1-2 !", "n": 3}}
    assert out["a"].line == 2 and out["a"].key_lines == {"b": 2, "n": 3}


def test_dotenv_is_parsed_as_dotenv_does_and_never_overrides_the_environment(tmp_path: Path) -> None:
    text = 'export A=1\nB = "two\\nlines"\nC=\'single # kept\'\nD=plain # comment\n# E=no\nnot a line\n'
    assert parse_dotenv(text) == {"A": "1", "B": "two\nlines", "C": "single # kept", "D": "plain"}
    env = {"A": "from-environment"}
    dotenv = write(tmp_path / ".env", text)
    assert load_dotenv(dotenv, env) == ["B", "C", "D"]
    assert env["A"] == "from-environment"


def test_the_nearest_dotenv_up_to_the_repo_root_is_found(tmp_path: Path) -> None:
    suite = write(tmp_path / "repo/evals/deep/s.eval.yaml", "tests: []\n")
    write(tmp_path / ".env", "OUTSIDE=1\n")  # above the repository root: never read
    root_env = write(tmp_path / "repo/.env", "X=1\n")
    assert find_dotenv(suite, tmp_path / "repo") == root_env
    near = write(tmp_path / "repo/evals/.env", "X=2\n")
    assert find_dotenv(suite, tmp_path / "repo") == near
    os.remove(near)
    os.remove(root_env)
    assert find_dotenv(suite, tmp_path / "repo") in (None, Path.cwd().resolve() / ".env")


def test_a_case_file_path_holding_a_variable_is_read_as_agentv_reads_it(tmp_path: Path) -> None:
    """AgentV replaces `${{ VAR }}` in the whole parsed file before it follows `tests: path` or a
    `- file://path` entry; the path was taken as written here (`${{ DIR }}/cases.yaml`, not found), and the
    case file, not seen as loaded, also ran as a suite of its own."""
    make_repo(tmp_path, "targets:\n  - name: default\n    provider: mock\n    response: Hello World\n")
    write(tmp_path / "evals/sub/cases.yaml", "- id: x\n  criteria: c\n  input: hi\n  assert: [{type: contains, value: World}]\n")
    write(tmp_path / "evals/listed.eval.yaml", "tests:\n  - file://${{ CASES_DIR }}/cases.yaml\n")
    write(tmp_path / "evals/whole.eval.yaml", "tests: ${{ CASES_DIR }}/cases.yaml\n")
    proc = run_cli("run", "evals", cwd=tmp_path, env={"CASES_DIR": "sub"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = read_rows(tmp_path / ".agentv-gate/results.jsonl")
    assert sorted((row["dataset"], row["test_id"]) for row in rows) == [("listed.eval", "x"), ("whole.eval", "x")]
