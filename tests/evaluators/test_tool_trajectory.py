"""tool_trajectory: AgentV 2.19's modes and argument matching, unit by unit and through the real CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentv_gate.evaluators.json_extract import json_equal
from agentv_gate.evaluators.tool_trajectory import ToolTrajectoryEvaluator, args_match
from agentv_gate.models import EvalCase, EvaluationContext, EvaluationScore, Message, ToolTrajectoryConfig
from tests.helpers.agents import scripted_agent
from tests.helpers.cli import run_cli
from tests.helpers.evaluation import score_of
from tests.helpers.files import write
from tests.helpers.reports import RESULTS, rows_by_id

# ---------------------------------------------------------------- unit


def calls(*spec: tuple[str, Any] | tuple[str, Any, float]) -> list[Message]:
    """One assistant message carrying the tool calls `(tool, input[, duration_ms])`, in order."""
    tool_calls = [{"tool": s[0], "input": s[1], **({"duration_ms": s[2]} if len(s) > 2 else {})} for s in spec]
    return [Message.model_validate({"role": "assistant", "content": "done", "tool_calls": tool_calls})]


def evaluate(config: dict[str, Any], messages: list[Message]) -> EvaluationScore:
    evaluator = ToolTrajectoryConfig.model_validate({"name": "t", **config})
    case = EvalCase(id="c", source_file=Path("/tmp/x.eval.yaml"), suite="x", question="q")
    context = EvaluationContext(eval_case=case, candidate="done", evaluator=evaluator, output_messages=messages)
    return score_of(ToolTrajectoryEvaluator(), context)


def grade(config: dict[str, Any], messages: list[Message]) -> tuple[float, list[str], list[str]]:
    score = evaluate(config, messages)
    return score.score, score.hits, score.misses


def test_any_order_counts_each_tool_against_its_minimum() -> None:
    score, hits, misses = grade({"mode": "any_order", "minimums": {"search": 2, "fetch": 1}},
                                calls(("search", {}), ("fetch", {}), ("search", {}), ("search", {})))
    assert score == 1.0 and hits == ["search: called 3 times (required >=2)", "fetch: called 1 times (required >=1)"]
    score, _, misses = grade({"mode": "any_order", "minimums": {"search": 2, "fetch": 1}}, calls(("search", {})))
    assert score == 0.0
    assert misses == ["search: called 1 times (required >=2)", "fetch: called 0 times (required >=1)"]
    # a config built in code with no minimums (the loader refuses one) requires nothing
    assert grade({"mode": "any_order", "minimums": {}}, calls(("search", {})))[0] == 1.0


def test_in_order_allows_gaps_and_an_args_mismatch_uses_up_the_call() -> None:
    expected = [{"tool": "load"}, {"tool": "search", "args": {"query": "refunds"}}, {"tool": "save"}]
    trace = calls(("load", {}), ("log", {}), ("search", {"query": "refunds"}), ("save", {"path": "x"}))
    assert grade({"mode": "in_order", "expected": expected}, trace)[0] == 1.0
    # the first search has other args: a miss for that item, and the cursor moves past it
    trace = calls(("load", {}), ("search", {"query": "other"}), ("search", {"query": "refunds"}), ("save", {}))
    score, _, misses = grade({"mode": "in_order", "expected": expected}, trace)
    assert score == pytest.approx(2 / 3)
    assert misses == ["Expected search at position 1: tool found at 1 but args mismatch"]
    score, hits, misses = grade({"mode": "in_order", "expected": expected}, calls(("save", {}), ("load", {})))
    assert score == pytest.approx(1 / 3) and hits == ["Found load at position 1"] and len(misses) == 2
    # a matched call is used up too: one search cannot stand for two
    score, _, misses = grade({"mode": "in_order", "expected": [{"tool": "search"}, {"tool": "search"}]},
                             calls(("search", {})))
    assert score == 0.5 and misses == ["Expected search at position 1, not found in remaining trace"]


def test_exact_compares_positions_and_an_extra_call_is_a_counted_miss() -> None:
    expected = [{"tool": "a"}, {"tool": "b"}]
    assert grade({"mode": "exact", "expected": expected}, calls(("a", {}), ("b", {})))[0] == 1.0
    score, _, misses = grade({"mode": "exact", "expected": expected}, calls(("b", {}), ("a", {})))
    assert score == 0.0 and misses == ["Position 0: expected a, got b", "Position 1: expected b, got a"]
    # AgentV would score this 1.0; an extra call in an exact trajectory is not a pass here
    score, _, misses = grade({"mode": "exact", "expected": expected}, calls(("a", {}), ("b", {}), ("c", {})))
    assert score == pytest.approx(2 / 3) and misses == ["Expected 2 tool calls, got 3"]
    score, _, misses = grade({"mode": "exact", "expected": [*expected, {"tool": "c"}]}, calls(("a", {})))
    assert score == 0.25 and misses == ["Expected 3 tool calls, got 1", "Position 1: expected b, got nothing",
                                        "Position 2: expected c, got nothing"]
    # the length miss joins the latency aspects: 2 calls + 1 latency hit of 2 + 1 + 1 aspects
    timed = [{"tool": "a", "max_duration_ms": 100}, {"tool": "b"}]
    assert grade({"mode": "exact", "expected": timed}, calls(("a", {}, 50), ("b", {}), ("c", {})))[0] == 0.75


def test_superset_needs_a_distinct_call_for_each_expected_item() -> None:
    expected = [{"tool": "search"}, {"tool": "search"}, {"tool": "fetch"}]
    assert grade({"mode": "superset", "expected": expected},
                 calls(("fetch", {}), ("x", {}), ("search", {}), ("search", {})))[:2] == (
        1.0, ["Found search at position 2", "Found search at position 3", "Found fetch at position 0"])
    score, _, misses = grade({"mode": "superset", "expected": expected}, calls(("search", {}), ("fetch", {})))
    assert score == pytest.approx(2 / 3) and misses == ["Expected search not found in actual trajectory"]


def test_subset_scores_the_share_of_allowed_calls() -> None:
    expected = [{"tool": "read"}, {"tool": "search", "args": {"q": "a"}}]
    assert grade({"mode": "subset", "expected": expected}, calls(("read", {}), ("read", {})))[0] == 1.0
    score, _, misses = grade({"mode": "subset", "expected": expected},
                             calls(("read", {}), ("search", {"q": "b"}), ("delete", {}), ("read", {})))
    assert score == 0.5 and misses == ["Position 1: search is not in allowed set",
                                       "Position 2: delete is not in allowed set"]
    assert grade({"mode": "subset", "expected": expected}, calls(("read", {})))[1] == ["Position 0: read is in allowed set"]
    assert grade({"mode": "subset", "expected": expected}, [Message(role="assistant", content="hi")])[0] == 1.0
    assert grade({"mode": "subset", "expected": []}, calls(("read", {})))[0] == 0.0


def test_max_duration_counts_only_matched_calls_that_reported_a_duration() -> None:
    expected = [{"tool": "load", "max_duration_ms": 100}, {"tool": "save", "max_duration_ms": 100}]
    assert grade({"mode": "in_order", "expected": expected}, calls(("load", {}, 50), ("save", {}, 100)))[0] == 1.0
    score, hits, misses = grade({"mode": "in_order", "expected": expected}, calls(("load", {}, 50), ("save", {}, 250)))
    assert score == 0.75 and misses == ["save took 250ms (max: 100ms)"]
    # save reported no duration: its latency check leaves the count (2 + 1 aspects)
    assert grade({"mode": "exact", "expected": expected}, calls(("load", {}, 50), ("save", {})))[0] == 1.0
    # an unmatched item's latency check still counts, as a miss
    assert grade({"mode": "in_order", "expected": expected}, calls(("load", {}, 50)))[0] == 0.5


@pytest.mark.parametrize(("config", "score"), [
    ({"mode": "in_order", "expected": []}, 1.0), ({"mode": "exact"}, 1.0), ({"mode": "superset", "expected": []}, 1.0)])
def test_a_config_built_in_code_expecting_nothing_is_met(config: dict[str, Any], score: float) -> None:
    """The loader refuses these in an eval file; the evaluator called in code scores them as met."""
    assert grade(config, [Message(role="assistant", content="no tools needed")])[0] == score


def test_no_output_messages_and_no_trace_scores_zero() -> None:
    score = evaluate({"mode": "subset", "expected": []}, [])
    assert (score.score, score.misses) == (0.0, ["No trace available for evaluation"])


def test_reasoning_names_the_mode_and_the_tools_called() -> None:
    expected = [{"tool": "load"}, {"tool": "save"}]
    assert evaluate({"mode": "in_order", "expected": expected}, calls(("load", {}), ("log", {}))).reasoning == (
        "in_order: 1/2 expected calls matched; tools called: load, log")
    assert evaluate({"mode": "superset", "expected": expected}, [Message(role="assistant", content="hi")]).reasoning == (
        "superset: 0/2 expected calls found; tools called: none")


@pytest.mark.parametrize(("expected", "actual", "mode", "matches"), [
    ({"q": "a"}, {"q": "a"}, "exact", True),
    ({"q": "a"}, {"q": "a", "limit": 5}, "exact", False),
    ({"q": "a", "limit": 5}, {"q": "a"}, "exact", False),
    ({"q": "a"}, {"q": "a", "limit": 5}, "superset", True),
    ({"q": "a", "limit": 5}, {"q": "a"}, "superset", False),
    ({"q": "a", "limit": 5}, {"q": "a"}, "subset", True),
    ({"q": "a"}, {"q": "a", "limit": 5}, "subset", False),
    ({"q": "a"}, {"q": "zzz"}, "ignore", True),
    ("any", {"anything": 1}, "exact", True),
    (None, "not even an object", "exact", True),
    ({"f": {"d": 1}, "x": 1}, {"f": {"d": 1, "e": 2}, "x": 2}, ["f.d"], True),
    ({"f": {"d": 1}}, {"f": {"d": 2}}, ["f.d", "missing.path"], False),
    ({"f": {"d": 1}}, {"f": {}}, ["f.d"], False),  # a path the actual call lacks differs
    ({"n": 1}, {"n": True}, "exact", False),
    ({"n": 1}, {"n": 1.0}, "exact", True),
    ({"q": "a"}, "q=a", "exact", False),
])
def test_args_matching(expected: Any, actual: Any, mode: Any, matches: bool) -> None:
    assert args_match(expected, actual, mode) is matches


def test_item_args_match_wins_over_the_evaluators() -> None:
    config = {"mode": "in_order", "args_match": "superset",
              "expected": [{"tool": "s", "args": {"q": "a"}}, {"tool": "s", "args": {"q": "a"}, "args_match": "exact"}]}
    score, _, misses = grade(config, calls(("s", {"q": "a", "n": 1}), ("s", {"q": "a", "n": 1})))
    assert score == 0.5 and len(misses) == 1


@pytest.mark.parametrize("mode", ["in_order", "exact", "superset", "subset"])
def test_args_match_defaults_to_exact_so_an_extra_argument_fails(mode: str) -> None:
    """AgentV 2.19 (tool-trajectory.ts): `item.argsMatch ?? config.argsMatch ?? 'exact'`. A call with an
    argument the expectation does not name is not the expected call unless `superset` is asked for."""
    expected = [{"tool": "search", "args": {"q": "a"}}]
    extra = calls(("search", {"q": "a", "limit": 5}))
    assert grade({"mode": mode, "expected": expected}, extra)[0] == 0.0
    assert grade({"mode": mode, "expected": expected}, calls(("search", {"q": "a"})))[0] == 1.0
    assert grade({"mode": mode, "args_match": "superset", "expected": expected}, extra)[0] == 1.0


def test_json_equality_is_not_pythons() -> None:
    assert not json_equal(True, 1) and not json_equal([1, 2], [2, 1]) and json_equal({"a": [1.0]}, {"a": [1]})


def test_openai_shaped_calls_from_an_agent_are_no_calls_as_in_agentv() -> None:
    """AgentV's cli provider drops a call without a string `tool`: OpenAI's raw shape calls nothing there."""
    message = Message.model_validate({"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{\"q\": \"a\"}"}}]})
    assert grade({"mode": "exact", "expected": [{"tool": "search", "args": {"q": "a"}}]}, [message])[0] == 0.0


# ---------------------------------------------------------------- through the CLI

REPLIES = {
    "refund": {"text": "Refund issued.", "output_messages": [
        {"role": "assistant", "content": "Looking it up", "tool_calls": [
            {"tool": "load", "input": {"id": 7}, "output": "order 7", "id": "t1", "duration_ms": 40},
            {"tool": "search", "input": {"query": "refunds", "limit": 3}, "id": "t2", "duration_ms": 900}]},
        {"role": "assistant", "content": "Refund issued."}]},
    "chat": {"text": "Hello there", "output_messages": [{"role": "assistant", "content": "Hello there"}]},
}


@pytest.fixture()
def project(repo: Path) -> Path:
    return scripted_agent(repo, REPLIES)


def write_suite(project: Path, body: str) -> Path:
    return write(project / "evals/tools.eval.yaml", body)


SUITE = """
    tests:
      - id: refund
        input: Please refund order 7
        assert:
          - name: pipeline
            type: tool-trajectory
            mode: in_order
            args_match: superset
            expected:
              - {tool: load, max_duration_ms: 100}
              - {tool: search, args: {query: refunds}, max_duration_ms: 500}
      - id: chat
        input: Say hello in chat
        assert:
          - name: uses-search
            type: tool_trajectory
            mode: any_order
            minimums: {search: 1}
"""


def test_trajectory_from_a_cli_agent_passes_and_fails_through_the_cli(project: Path) -> None:
    write(project / ".agentv/gate.yaml", 'agentv: {version: "2.19"}\n')  # 2.19's pass mark: 3 of 4 passes
    write_suite(project, SUITE)
    proc = run_cli("run", "evals", cwd=project)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    found = rows_by_id(project / RESULTS)
    refund = found["refund"]
    # 2 calls matched, load within 100 ms, search over 500 ms: 3 of 4 aspects
    assert refund["score"] == 0.75 and refund["verdict"] == "pass"
    assert refund["misses"] == ["search took 900ms (max: 500ms)"]
    assert refund["evaluator_raw_request"]["tool_calls"][1] == {"tool": "search", "input": {"query": "refunds", "limit": 3},
                                                                "duration_ms": 900.0}
    chat = found["chat"]  # a plain answer: no tool was called, never a pass
    assert chat["score"] == 0.0 and chat["verdict"] == "fail"
    assert chat["misses"] == ["search: called 0 times (required >=1)"]


@pytest.mark.parametrize(("assertion", "message"), [
    ("{name: t, type: tool-trajectory, mode: any_order}", "mode any_order needs 'minimums'"),
    ("{name: t, type: tool-trajectory, mode: in_order, expected: []}", "mode in_order needs a non-empty 'expected'"),
    ("{name: t, type: tool-trajectory, mode: sideways, expected: [{tool: a}]}", "field 'mode'"),
    ("{name: t, type: tool-trajectory, mode: exact, expected: [{tool: a, argz: {q: 1}}]}", "expected.0.argz"),
    ("{name: t, type: tool-trajectory, mode: exact, minimums: {a: 1}, expected: [{tool: a}]}",
     "'minimums' is read only in mode any_order"),
    ("{name: t, type: tool-trajectory, mode: superset, expected: [{tool: a, max_duration_ms: 5}]}",
     "max_duration_ms (a) is checked only in modes in_order and exact"),
    ("{name: t, type: tool-trajectory, mode: any_order, minimums: {a: two}}", "minimums.a"),
])
def test_bad_trajectory_config_is_a_located_error_and_nothing_runs(project: Path, assertion: str, message: str) -> None:
    suite = write_suite(project, f"""
        tests:
          - id: refund
            input: Please refund order 7
            criteria: Refunds the order
            assert:
              - {assertion}
    """)
    proc = run_cli("validate", "evals", cwd=project)
    assert proc.returncode == 1
    assert proc.stdout.startswith(f"{suite.relative_to(project)}:6: "), proc.stdout
    assert message in proc.stdout
    proc = run_cli("run", "evals", cwd=project)
    assert proc.returncode == 2 and message in proc.stderr
    assert not (project / ".agentv-gate/results.jsonl").exists()


def test_an_args_match_path_the_expected_args_leave_out_is_not_checked() -> None:
    """`args_match: [query, limit]` with expected `{query}`: the agent's `limit` is free, its `query` is not."""
    paths = ["query", "limit"]
    assert args_match({"query": "paris"}, {"query": "paris", "limit": 5}, paths)
    assert args_match({"query": "paris"}, {"query": "paris"}, paths)
    assert not args_match({"query": "paris"}, {"query": "lyon", "limit": 5}, paths)
    assert not args_match({"query": "paris", "limit": 3}, {"query": "paris", "limit": 5}, paths)
    assert not args_match({"query": "paris", "limit": 3}, {"query": "paris"}, paths)  # asked for, not sent
