"""Where a score meets a verdict, at the edges a user can reach from YAML and the command line.

Each test pins one behaviour that a one-character bug would flip without any other test noticing
(found by mutation testing): all-zero weights, `negate` on a broken judge, `--threshold 0`, and an
evaluator error beside a score that would pass or fail.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import read_rows

CRASHING_JUDGE = """\
import sys
sys.stdin.read()
print("judge exploded", file=sys.stderr)
sys.exit(3)
"""


def run_suite(tmp_path: Path, suite: str, *args: str) -> tuple[int, dict[str, dict[str, Any]], str]:
    """`agentv-gate run evals ARGS` against the mock agent answering `ok`: exit code, rows by id, stderr."""
    make_repo(tmp_path)
    write(tmp_path / "evals/crash.py", CRASHING_JUDGE)
    write(tmp_path / "evals/suite.eval.yaml", suite)
    proc = run_cli("run", "evals", *args, cwd=tmp_path)
    rows = {row["eval_id"]: row for row in read_rows(tmp_path / ".agentv-gate/results.jsonl")}
    return proc.returncode, rows, proc.stderr


def test_a_case_whose_evaluators_all_weigh_zero_scores_zero_and_fails(tmp_path: Path) -> None:
    code, rows, err = run_suite(tmp_path, """
        tests:
          - id: weightless
            input: q
            assert:
              - {name: a, type: contains, value: ok, weight: 0}
              - {name: b, type: equals, value: ok, weight: 0}
    """, "--threshold", "0.5")
    row = rows["weightless"]
    # Both assertions hold, but nothing weighs anything: no score to pass on (not an internal error).
    assert (row["verdict"], row["score"], row.get("error")) == ("fail", 0.0, None), err
    assert code == 1


def test_negate_on_a_judge_that_errored_keeps_score_zero_and_the_error(tmp_path: Path) -> None:
    code, rows, err = run_suite(tmp_path, """
        tests:
          - id: negated-crash
            input: q
            assert:
              - {name: never, type: code_judge, script: [python3, crash.py], negate: true}
    """)
    row = rows["negated-crash"]
    assert (row["verdict"], row["score"]) == ("error", 0.0), err
    assert row["hits"] == []  # misses not swapped into hits: the judge said nothing to invert
    assert any("exit" in m.lower() or "judge exploded" in m for m in row["misses"]), row["misses"]
    assert code == 1


def test_threshold_zero_on_the_command_line_passes_every_scored_case(tmp_path: Path) -> None:
    code, rows, err = run_suite(tmp_path, """
        tests:
          - id: wrong
            input: q
            assert:
              - {type: contains, value: Seine}
          - id: right
            input: q
            assert:
              - {type: contains, value: ok}
    """, "--threshold", "0")
    assert {k: (r["verdict"], r["score"], r["threshold"]) for k, r in rows.items()} == {
        "wrong": ("pass", 0.0, 0.0), "right": ("pass", 1.0, 0.0)}, err
    assert code == 0


def test_an_evaluator_error_makes_the_case_an_error_whatever_the_score(tmp_path: Path) -> None:
    """Half the weight passes (score 0.5): at the threshold and below it, the broken judge wins."""
    assertions = """
            assert:
              - {name: holds, type: contains, value: ok}
              - {name: broken, type: code_judge, script: [python3, crash.py]}
    """
    code, rows, err = run_suite(tmp_path, f"""
        tests:
          - id: at-threshold
            input: q
            threshold: 0.5
{assertions}
          - id: below-threshold
            input: q
            threshold: 0.9
{assertions}
    """)
    for case in ("at-threshold", "below-threshold"):
        row = rows[case]
        assert (row["verdict"], row["score"]) == ("error", 0.5), (case, err)
        assert "evaluator 'broken'" in row["error"]
    assert code == 1


def test_a_case_threshold_written_with_no_value_keeps_the_suites(tmp_path: Path) -> None:
    """`threshold:` left blank (null) on a case is not written, as AgentV reads it (`evalCase.threshold ??`
    the suite's): the suite's 0.9 holds, not the command line's default 0.5 that half a score meets."""
    code, rows, err = run_suite(tmp_path, """
        threshold: 0.9
        tests:
          - id: half
            input: q
            threshold:
            assert:
              - {type: contains, value: ok}
              - {type: contains, value: Seine}
    """)
    assert (rows["half"]["verdict"], rows["half"]["threshold"]) == ("fail", 0.9), err
    assert code == 1


def test_negate_never_turns_a_check_that_could_not_be_made_into_a_pass(tmp_path: Path) -> None:
    """The mock agent reports no cost or tokens, and a case without expected output gives
    field_accuracy nothing to compare: each scores 0 as it checked nothing. Negated, that 0 became
    1, so these cases passed every answer; they stay 0 (a fail), saying why."""
    code, rows, err = run_suite(tmp_path, """
        tests:
          - {id: cost, input: q, assert: [{type: cost, budget: 0.01, negate: true}]}
          - {id: tokens, input: q, assert: [{type: token-usage, max_total: 1, negate: true}]}
          - {id: metrics, input: q, assert: [{type: execution-metrics, max_cost_usd: 1, max_tokens: 1,
                                              negate: true}]}
          - {id: fields, input: q, assert: [{type: field_accuracy, fields: [{path: a, match: exact}], negate: true}]}
          - id: composite
            input: q
            assert:
              - type: composite
                negate: true
                assert: [{name: budget, type: cost, budget: 1}, {name: ok, type: contains, value: ok}]
          - {id: reported, input: q, assert: [{type: contains, value: nope, negate: true}]}
    """)
    assert {k: r["verdict"] for k, r in rows.items()} == {
        "cost": "fail", "tokens": "fail", "metrics": "fail", "fields": "fail",
        "composite": "fail", "reported": "pass"}, err
    assert all(r["score"] == 0.0 for k, r in rows.items() if k != "reported"), rows
    assert any("No cost data available in trace" in m and "not inverted" in m for m in rows["cost"]["misses"]), \
        rows["cost"]["misses"]
    assert code == 1
