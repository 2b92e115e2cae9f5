"""Older AgentV spellings that eval files in the wild still use, each pinned to what it means.

`eval_id:` for a case's id, `eval_cases:` for a gen2 case list (suite evaluators only for cases
that have none); two spellings of one field written together are refused where the unread one is.
"""

from __future__ import annotations

from pathlib import Path

from agentv_gate.loader import load_eval_file
from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import read_rows


def test_legacy_eval_id_names_the_case_in_the_results(tmp_path: Path) -> None:
    # `$schema: agentv-eval-v2` heads AgentV 2.x eval files (its `validate` requires it), and `note:` is
    # the free text AgentV 2.x's eval-file docs list beside conversation_id: both read, not refused
    make_repo(tmp_path)
    write(tmp_path / "evals/old.eval.yaml", """
        $schema: agentv-eval-v2
        evalcases:
          - eval_id: legacy-name
            note: flaky on small models; keep
            expected_outcome: says ok
            input_messages: [{role: user, content: q}]
            evaluators:
              - {name: ok, type: contains, value: ok}
    """)
    proc = run_cli("run", "evals", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    [row] = read_rows(tmp_path / ".agentv-gate/results.jsonl")
    assert (row["eval_id"], row["verdict"]) == ("legacy-name", "pass")


def test_eval_cases_is_gen2_suite_evaluators_fill_only_cases_without_their_own(repo: Path) -> None:
    f = write(repo / "evals/s.yaml", """
        execution:
          evaluators:
            - {name: suite-default, type: contains, value: x}
        eval_cases:
          - id: own
            expected_outcome: o
            input_messages: [{role: user, content: q}]
            evaluators:
              - {name: own, type: equals, value: y}
          - id: inherits
            expected_outcome: o
            input_messages: [{role: user, content: q}]
    """)
    result = load_eval_file(f, repo)
    assert result.errors == []
    own, inherits = result.cases
    assert [e.name for e in own.evaluators] == ["own"]  # gen3 would append the suite's
    assert [e.name for e in inherits.evaluators] == ["suite-default"]


def test_two_spellings_of_one_field_are_refused_where_the_unread_one_is_written(tmp_path: Path) -> None:
    """expected_messages and expected_output both given: one of them was ignored (agentv-gate and AgentV
    2.19 read expected_messages, later AgentV reads expected_output), so neither is guessed at."""
    make_repo(tmp_path, """
        targets:
          - name: default
            provider: mock
            response: '{"city": "Paris"}'
    """)
    write(tmp_path / "evals/both.eval.yaml", """
        tests:
          - id: both
            input: Which city?
            expected_messages:
              - {role: assistant, content: {city: Paris}}
            expected_output:
              - {role: assistant, content: {city: London}}
            assert:
              - type: field_accuracy
                fields: [{path: city}]
    """)
    proc = run_cli("run", "evals", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert ("evals/both.eval.yaml:6: 'expected_output' in test 'both' is never read: 'expected_messages' "
            "(line 4) is written too, and only the first of expected_messages, expected_output is read") in proc.stderr


def test_every_pair_of_spellings_and_of_evaluator_lists_is_located(repo: Path) -> None:
    f = write(repo / "evals/pairs.eval.yaml", """
        execution:
          evaluators: [{name: never, type: contains, value: London}]
        assert:
          - {type: contains, value: Paris}
        tests:
          - id: a
            eval_id: b
            input_messages: [{role: user, content: q}]
            input: ignored
            criteria: c
            expected_outcome: o
            outcome: o2
          - id: lists
            input: q
            evaluator: {type: contains, value: London}
            assert: [{type: contains, value: Paris}]
            execution:
              evaluators: [{name: e, type: contains, value: London}]
          - id: single
            input: q
            evaluator: {type: contains, value: London}
            grader: {type: contains, value: Paris}
          - id: asked-twice
            input: What is the capital of France?
            question: What is the capital of Spain?
            criteria: Names the capital
    """)
    result = load_eval_file(f, repo)
    first = "and only the first of"
    runs = "AgentV runs only the first of assertions, assert, execution.evaluators, evaluators"
    assert [(p.line, p.message) for p in result.errors] == [
        (2, f"'execution.evaluators' in the suite: 'assert' (line 3) is a list of evaluators too; {runs}"),
        (7, f"'eval_id' in test 'a' is never read: 'id' (line 6) is written too, {first} id, eval_id is read"),
        (9, f"'input' in test 'a' is never read: 'input_messages' (line 8) is written too, {first} "
            "input_messages, input, question is read"),
        (11, f"'expected_outcome' in test 'a' is never read: 'criteria' (line 10) is written too, {first} "
             "criteria, expected_outcome, outcome is read"),
        (12, f"'outcome' in test 'a' is never read: 'criteria' (line 10) is written too, {first} "
             "criteria, expected_outcome, outcome is read"),
        (18, f"'execution.evaluators' in test 'lists': 'assert' (line 16) is a list of evaluators too; {runs}"),
        (15, "'evaluator' in test 'lists' is never read: a single evaluator is read only without a list, and "
             "'assert' (line 16) is one"),
        (22, f"'grader' in test 'single' is never read: 'evaluator' (line 21) is written too, {first} "
             "evaluator, grader is read"),
        (25, f"'question' in test 'asked-twice' is never read: 'input' (line 24) is written too, {first} "
             "input_messages, input, question is read"),
    ]
    # the judge's question is the input the agent was asked, never the unread `question`
    assert [c.question for c in result.cases if c.id == "asked-twice"] == ["What is the capital of France?"]


def test_a_schema_tag_that_is_not_an_eval_files_is_refused(repo: Path) -> None:
    # A targets file (or anything else) given where an eval file is expected says so at its tag.
    write(repo / "evals/wrong.yaml", """
        $schema: agentv-targets-v2
        tests:
          - {id: a, input: q, assert: [{type: contains, value: x}]}
    """)
    proc = run_cli("validate", "evals", cwd=repo)
    assert proc.returncode == 1
    assert ("evals/wrong.yaml:1: '$schema' is 'agentv-targets-v2', not an eval file's schema "
            "(expected agentv-eval-v2, or no '$schema')") in proc.stdout


def test_a_suites_single_evaluator_is_its_default_evaluator(repo: Path) -> None:
    # AgentV's JSONL sidecar example carries `evaluator: llm_judge`; a suite's single `evaluator:` is read
    # as its list of one, and refused beside a list, as a test's is.
    write(repo / "evals/set.jsonl", '{"id": "j", "input": "q", "criteria": "names Paris"}\n')
    write(repo / "evals/set.yaml", "description: sidecar\nevaluator: llm_judge\n")
    write(repo / "evals/s.yaml", """
        evaluator: {type: contains, value: Berlin}
        tests:
          - {id: a, input: q}
    """)
    result = load_eval_file(repo / "evals/s.yaml")
    assert not result.problems and [c.evaluators[0].type for c in result.cases] == ["contains"]
    proc = run_cli("validate", "evals", cwd=repo)
    assert proc.returncode == 0, proc.stdout
    write(repo / "evals/s.yaml", """
        evaluator: llm_judge
        assert: [{type: contains, value: Berlin}]
        tests:
          - {id: a, input: q}
    """)
    proc = run_cli("validate", "evals/s.yaml", cwd=repo)
    assert proc.returncode == 1
    assert "evals/s.yaml:1: 'evaluator' in the suite is never read: a single evaluator is read only without a list" \
        in proc.stdout


def test_a_second_case_list_is_refused_and_tests_is_the_one_read(tmp_path: Path) -> None:
    """AgentV reads `tests`, else `eval_cases`, else `evalcases`, and never a second list. agentv-gate read
    `evalcases` first: here case b (contains World) passed where AgentV runs case a (contains Nope) and fails."""
    make_repo(tmp_path, "targets:\n  - name: default\n    provider: mock\n    response: Hello World\n")
    write(tmp_path / "evals/two.eval.yaml", """
        tests:
          - id: a
            criteria: c
            input: hi
            assert: [{type: contains, value: Nope}]
        evalcases:
          - id: b
            expected_outcome: c
            input_messages: [{role: user, content: hi}]
            evaluators: [{name: w, type: contains, value: World}]
    """)
    proc = run_cli("run", "evals/two.eval.yaml", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert ("evals/two.eval.yaml:6: 'evalcases' is never read: 'tests' (line 1) is the suite's case list, and "
            "AgentV reads only the first of tests, eval_cases, evalcases") in proc.stderr
    assert not (tmp_path / ".agentv-gate/results.jsonl").exists()


def test_cases_is_no_case_list_agentv_reads(tmp_path: Path) -> None:
    make_repo(tmp_path)
    write(tmp_path / "evals/c.eval.yaml", "cases:\n  - id: a\n    criteria: c\n    input: hi\n")
    proc = run_cli("validate", "evals/c.eval.yaml", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "evals/c.eval.yaml:1: no list of cases found" in proc.stdout
