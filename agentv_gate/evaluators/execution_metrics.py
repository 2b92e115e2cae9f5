"""`execution_metrics`: one check per limit given; the score is the share of checks that hold.

Tool calls and LLM calls come from the trace summary of the output messages (`event_count`,
`llm_call_count`), tokens are input + output, and the exploration ratio is the share of calls to
read-only tools. A check whose metric the target did not report is a miss naming it.
"""

from __future__ import annotations

from typing import Any

from ..base.jscompat import reported_number
from ..judging.payload import message_dict
from ..judging.trace import trace_summary
from ..models import EvaluationContext, EvaluationScore, ExecutionMetricsConfig
from .metrics import LimitChecks, fmt, token_total

EXPLORATION_TOOLS = frozenset({"read", "grep", "glob", "search", "list", "Read", "Grep", "Glob", "WebSearch",
                               "WebFetch"})
"""AgentV's read-only tools: calls to these count as exploring rather than acting."""


class ExecutionMetricsEvaluator:
    def evaluate(self, config: ExecutionMetricsConfig, context: EvaluationContext) -> EvaluationScore:
        messages = [message_dict(m) for m in context.output_messages]
        summary: dict[str, Any] | None = trace_summary(messages) if messages else None
        limits = LimitChecks()
        needs_trace = (config.max_tool_calls is not None or config.max_llm_calls is not None
                       or config.target_exploration_ratio is not None)
        if needs_trace and summary is None:  # AgentV's guard, word for word: one miss, score 0
            return EvaluationScore(score=0.0, misses=["No trace summary available"], unchecked=["No trace summary available"],
                                   reasoning="Execution metrics not available - no trace summary provided",
                                   evaluator_raw_request={"type": "execution_metrics", "trace": None})
        # AgentV 2.19's hits and misses, word for word (`execution-metrics.ts`)
        if config.max_tool_calls is not None and summary is not None:
            limits.at_most("Tool calls", summary["event_count"], config.max_tool_calls, "")
        if config.max_llm_calls is not None and summary is not None:
            limits.at_most("LLM calls", summary["llm_call_count"], config.max_llm_calls,
                           "LLM call count data not available")
        if config.max_tokens is not None:
            limits.at_most("Total tokens", token_total(context.token_usage, cached=False), config.max_tokens,
                           "Token usage data not available")
        if config.max_cost_usd is not None:
            cost = reported_number(context.cost_usd)
            limits.at_most("Cost", cost, config.max_cost_usd, "Cost data not available",
                           shown_actual=None if cost is None else f"${cost:.4f}",
                           shown_limit=f"${config.max_cost_usd:.4f}")
        if config.max_duration_ms is not None:
            limits.at_most("Duration", reported_number(context.duration_ms), config.max_duration_ms,
                           "Duration data not available", unit="ms")
        hits, misses = limits.hits, limits.misses
        if config.target_exploration_ratio is not None:
            self._exploration(config, summary, hits, misses)
        checks = len(hits) + len(misses)
        return EvaluationScore(score=len(hits) / checks if checks else 0.0, hits=hits, misses=misses,
                               reasoning=f"{len(hits)}/{checks} execution checks hold" if checks else "no limit given",
                               unchecked=limits.unchecked,
                               evaluator_raw_request={"type": "execution_metrics", "trace": summary,
                                                      "token_usage": context.token_usage,
                                                      "cost_usd": context.cost_usd,
                                                      "duration_ms": context.duration_ms})

    def _exploration(self, config: ExecutionMetricsConfig, summary: dict[str, Any] | None, hits: list[str],
                     misses: list[str]) -> None:
        target = config.target_exploration_ratio
        assert target is not None
        by_name: dict[str, int] = summary["tool_calls_by_name"] if summary else {}
        total = sum(by_name.values())
        if not total:
            misses.append("Exploration ratio not available (no tool calls)")
            return
        ratio = sum(n for name, n in by_name.items() if name in EXPLORATION_TOOLS) / total
        diff = abs(ratio - target)
        # exactly AgentV's `diff <= tolerance`, float error and all: slack here passed |0.8 - 0.6| =
        # 0.20000000000000007 against 0.2, which AgentV misses
        if diff <= config.exploration_tolerance:
            hits.append(f"Exploration ratio {ratio:.2f} within tolerance of target {fmt(target)}")
        else:
            misses.append(f"Exploration ratio {ratio:.2f} outside tolerance of target {fmt(target)} "
                          f"(diff: {diff:.2f}, tolerance: {fmt(config.exploration_tolerance)})")
