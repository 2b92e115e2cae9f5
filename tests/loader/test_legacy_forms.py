"""Older AgentV spellings that eval files in the wild still use, each pinned to what it means.

`eval_id:` for a case's id, `eval_cases:` for a gen2 case list (suite evaluators only for cases
that have none), and `expected_messages:` winning over `expected_output:` when a case has both.
"""

from __future__ import annotations

from pathlib import Path

from agentv_gate.loader import load_eval_file
from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import read_rows


def test_legacy_eval_id_names_the_case_in_the_results(tmp_path: Path) -> None:
    make_repo(tmp_path)
    write(tmp_path / "evals/old.eval.yaml", """
        evalcases:
          - eval_id: legacy-name
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


def test_expected_messages_wins_over_expected_output_when_both_are_given(tmp_path: Path) -> None:
    """The judge compares the answer with expected_messages; expected_output is ignored, as in AgentV."""
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
    [row] = read_rows(tmp_path / ".agentv-gate/results.jsonl")
    assert (row["verdict"], row["score"]) == ("pass", 1.0), proc.stderr
    assert proc.returncode == 0
