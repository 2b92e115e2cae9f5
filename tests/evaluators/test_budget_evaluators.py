"""latency, cost, token_usage, execution_metrics: budgets on what the target reports, through the real CLI.

A metric the target did not report never counts as 0 (that would pass every budget): the evaluator
needing it scores 0 with a miss naming the metric.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentv_gate.evaluators.cost import CostEvaluator
from agentv_gate.evaluators.execution_metrics import ExecutionMetricsEvaluator
from agentv_gate.evaluators.latency import LatencyEvaluator
from agentv_gate.evaluators.token_usage import TokenUsageEvaluator
from agentv_gate.models import (
    CostConfig,
    EvalCase,
    EvaluationContext,
    EvaluationScore,
    ExecutionMetricsConfig,
    LatencyConfig,
    Message,
    TokenUsageConfig,
)
from tests.helpers.agents import scripted_agent
from tests.helpers.cli import run_cli
from tests.helpers.evaluation import score_of
from tests.helpers.files import write
from tests.helpers.reports import RESULTS, rows_by_id

CALLS = [{"tool": "Read", "input": {}}, {"tool": "grep", "input": {}}, {"tool": "edit", "input": {}}]
REPLIES: dict[str, Any] = {
    "lean": {"text": "Done.", "token_usage": {"input": 1000, "output": 200, "cached": 300}, "cost_usd": 0.02,
             "duration_ms": 1500, "output_messages": [
                 {"role": "assistant", "content": "working", "tool_calls": CALLS},
                 {"role": "assistant", "content": "Done."}]},
    "heavy": {"text": "Done.", "token_usage": {"input": 9000, "output": 900}, "cost_usd": 0.4, "duration_ms": 9000},
    "silent": "Done, and I report no metrics at all.",
}

SUITE = """
    tests:
      - id: {case}
        input: Do the {case} task
        criteria: Does the task
        assert:
          - {{name: fast, type: latency, threshold: 5000}}
          - {{name: cheap, type: cost, budget: 0.05}}
          - {{name: small, type: token-usage, max_total: 1600, max_output: 800}}
          - name: lean
            type: execution-metrics
            max_tool_calls: 3
            max_llm_calls: 2
            max_tokens: 1300
            max_cost_usd: 0.05
            target_exploration_ratio: 0.6
            exploration_tolerance: 0.1
"""


EVALUATORS: dict[type, Any] = {LatencyConfig: LatencyEvaluator(), CostConfig: CostEvaluator(),
                               TokenUsageConfig: TokenUsageEvaluator(), ExecutionMetricsConfig: ExecutionMetricsEvaluator()}


def budget(config: Any, **reported: Any) -> EvaluationScore:
    """`config`'s score, in process, for a plain answer with the metrics `reported`."""
    case = EvalCase(id="c", source_file=Path("/tmp/x.eval.yaml"), suite="x", question="q")
    context = EvaluationContext(eval_case=case, candidate="Done.", evaluator=config,
                                **{"output_messages": [Message(role="assistant", content="Done.")], **reported})
    return score_of(EVALUATORS[type(config)], context)


@pytest.mark.parametrize(("config", "reported", "score", "lines"), [
    # a limit met exactly holds
    (LatencyConfig(name="l", threshold=5000), {"duration_ms": 5000}, 1.0, ["Duration 5000ms <= 5000ms threshold"]),
    # 0 is a reported number, a negative one is not
    (CostConfig(name="c", budget=0.05), {"cost_usd": 0}, 1.0, ["Cost $0.0000 <= $0.0500 budget"]),
    (CostConfig(name="c", budget=0.05), {"cost_usd": -0.5}, 0.0,
     ["No cost data available in trace"]),
    # one limit missed is the whole evaluator's 0, whatever else held
    (TokenUsageConfig(name="t", max_total=1600, max_output=100), {"token_usage": {"input": 1000, "output": 200}}, 0.0,
     ["Total tokens 1200 <= 1600", "Output tokens 200 > 100"]),
    # input without output is no total
    (TokenUsageConfig(name="t", max_total=1600), {"token_usage": {"input": 100}}, 0.0,
     ["token_usage not reported by the target: max_total cannot be checked"]),
    # |0.5 - 0.4| is 0.09999999999999998 in floats: on the tolerance, so within it
    (ExecutionMetricsConfig(name="e", target_exploration_ratio=0.4, exploration_tolerance=0.1),
     {"output_messages": [Message.model_validate({"role": "assistant", "content": "", "tool_calls": CALLS[1:]})]},
     1.0, ["Exploration ratio 0.50 within tolerance of target 0.4"]),
    (ExecutionMetricsConfig(name="e", target_exploration_ratio=0.6, exploration_tolerance=0.1),
     {"output_messages": [Message.model_validate({"role": "assistant", "content": "", "tool_calls": CALLS[1:] + CALLS[2:]})]},
     0.0, ["Exploration ratio 0.33 outside tolerance of target 0.6 (diff: 0.27, tolerance: 0.1)"]),
    # no slack for float error, as in AgentV: 0.5 - 0.399999999 is past 0.1, so outside it
    (ExecutionMetricsConfig(name="e", target_exploration_ratio=0.399999999, exploration_tolerance=0.1),
     {"output_messages": [Message.model_validate({"role": "assistant", "content": "", "tool_calls": CALLS[1:]})]},
     0.0, ["Exploration ratio 0.50 outside tolerance of target 0.4 (diff: 0.10, tolerance: 0.1)"]),
])
def test_budget_limits_in_process(config: Any, reported: dict[str, Any], score: float, lines: list[str]) -> None:
    result = budget(config, **reported)
    assert result.score == score and [*result.hits, *result.misses] == lines


def test_execution_metrics_scores_the_share_of_checks_that_hold() -> None:
    """The heavy case's execution checks one by one: 2 of 5 hold."""
    config = ExecutionMetricsConfig(name="lean", max_tool_calls=3, max_llm_calls=2, max_tokens=1300, max_cost_usd=0.05,
                                    target_exploration_ratio=0.6, exploration_tolerance=0.1)
    score = budget(config, token_usage={"input": 9000, "output": 900}, cost_usd=0.4, duration_ms=9000)
    assert score.hits == ["Tool calls 0 <= 3 max", "LLM calls 1 <= 2 max"]
    assert score.misses == ["Total tokens 9900 > 1300 max", "Cost $0.4000 > $0.0500 max",
                            "Exploration ratio not available (no tool calls)"]
    assert (score.score, score.reasoning) == (2 / 5, "2/5 execution checks hold")



@pytest.mark.parametrize("config", [ExecutionMetricsConfig(name="e"), TokenUsageConfig(name="t")])
def test_a_config_built_in_code_with_no_limit_holds_nothing(config: Any) -> None:
    """The loader refuses these in an eval file; called in code they score 0, as one aspect."""
    nothing = budget(config, token_usage={"input": 1, "output": 1})
    assert (nothing.score, nothing.reasoning) == (0.0, "no limit given")


@pytest.fixture()
def project(repo: Path) -> Path:
    return scripted_agent(repo, REPLIES)


def run_suite(project: Path, *cases: str) -> dict[str, dict[str, Any]]:
    body = "".join(textwrap.dedent(SUITE).replace("tests:\n", "" if i else "tests:\n").format(case=case)
                   for i, case in enumerate(cases))
    write(project / "evals/budget.eval.yaml", body)
    proc = run_cli("run", "evals", cwd=project)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    rows = rows_by_id(project / RESULTS)
    return {case: {r["name"]: r for r in rows[case]["evaluator_results"]} for case in cases}


def test_budgets_pass_fail_and_refuse_missing_metrics(project: Path) -> None:
    found = run_suite(project, "lean", "heavy", "silent")
    lean = found["lean"]
    assert {name: r["score"] for name, r in lean.items()} == {"fast": 1.0, "cheap": 1.0, "small": 1.0, "lean": 1.0}
    assert lean["small"]["hits"] == ["Output tokens 200 <= 800", "Total tokens 1500 <= 1600"]  # AgentV's order
    assert "Exploration ratio 0.67 within tolerance of target 0.6" in lean["lean"]["hits"]

    heavy = found["heavy"]
    assert {name: r["score"] for name, r in heavy.items()} == {"fast": 0.0, "cheap": 0.0, "small": 0.0, "lean": 0.4}
    assert heavy["fast"]["misses"] == ["Duration 9000ms > 5000ms threshold"]
    assert heavy["cheap"]["misses"] == ["Cost $0.4000 > $0.0500 budget"]
    assert heavy["small"]["misses"] == ["Output tokens 900 > 800", "Total tokens 9900 > 1600"]
    # one plain answer message: 0 tool calls and 1 LLM call hold; no tool calls means no exploration ratio
    assert heavy["lean"]["hits"] == ["Tool calls 0 <= 3 max", "LLM calls 1 <= 2 max"]

    silent = found["silent"]  # no cost, no tokens: those checks are misses in AgentV 2.19's words
    assert silent["cheap"]["score"] == 0.0
    assert silent["cheap"]["misses"] == ["No cost data available in trace"]
    assert silent["small"]["score"] == 0.0
    assert silent["small"]["misses"] == ["No token usage data available in trace"]
    assert "Cost data not available" in silent["lean"]["misses"]
    assert "Token usage data not available" in silent["lean"]["misses"]


@pytest.mark.parametrize(("assertion", "message"), [
    ("{name: f, type: latency}", "missing required field 'threshold'"),
    ("{name: f, type: latency, threshold: -1}", "field 'threshold'"),
    ("{name: c, type: cost, budget: cheap}", "field 'budget'"),
    ("{name: t, type: token-usage}", "token_usage evaluator 't' sets no limit"),
    ("{name: t, type: token_usage, max_total: 1.5}", "field 'max_total'"),
    ("{name: e, type: execution-metrics}", "execution_metrics evaluator 'e' sets no limit"),
    ("{name: e, type: execution-metrics, max_tool_calls: 3, exploration_tolerance: 0.1}",
     "exploration_tolerance without target_exploration_ratio"),
    ("{name: e, type: execution-metrics, target_exploration_ratio: 2}", "field 'target_exploration_ratio'"),
])
def test_bad_budget_config_is_a_located_error(project: Path, assertion: str, message: str) -> None:
    suite = project / "evals/budget.eval.yaml"
    suite.write_text(f"tests:\n  - id: x\n    input: q\n    criteria: c\n    assert:\n      - {assertion}\n")
    proc = run_cli("validate", "evals", cwd=project)
    assert proc.returncode == 1
    assert proc.stdout.startswith("evals/budget.eval.yaml:6: ") and message in proc.stdout, proc.stdout
