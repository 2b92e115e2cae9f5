"""`execution_metrics`: one check per limit given; the score is the share of checks that hold.

Tool calls and LLM calls come from the trace summary of the output messages (`event_count`,
`llm_call_count`), tokens are input + output, and the exploration ratio is the share of calls to
read-only tools. A check whose metric the target did not report is a miss naming it.
"""

from __future__ import annotations

from typing import Any

from ..javascript import reported_number
from ..judging.payload import message_dict
from ..judging.trace import trace_summary
from ..models import EvaluationContext, EvaluationScore, ExecutionMetricsConfig
from .metrics import LimitChecks, fmt, not_reported, token_total

EXPLORATION_TOOLS = frozenset({"read", "grep", "glob", "search", "list", "Read", "Grep", "Glob", "WebSearch",
                               "WebFetch"})
"""AgentV's read-only tools: calls to these count as exploring rather than acting."""


class ExecutionMetricsEvaluator:
    def evaluate(self, config: ExecutionMetricsConfig, context: EvaluationContext) -> EvaluationScore:
        messages = [message_dict(m) for m in context.output_messages]
        summary: dict[str, Any] | None = trace_summary(messages) if messages else None
        limits = LimitChecks()
        if config.max_tool_calls is not None:
            limits.at_most("Tool calls", summary["event_count"] if summary else None, config.max_tool_calls,
                           not_reported("the trace", "tool calls"))
        if config.max_llm_calls is not None:
            limits.at_most("LLM calls", summary["llm_call_count"] if summary else None, config.max_llm_calls,
                           not_reported("the trace", "llm calls"))
        if config.max_tokens is not None:
            limits.at_most("Tokens", token_total(context.token_usage, cached=False), config.max_tokens,
                           not_reported("token_usage", "tokens"))
        if config.max_cost_usd is not None:
            limits.at_most("Cost USD", reported_number(context.cost_usd), config.max_cost_usd,
                           not_reported("cost_usd", "cost usd"))
        if config.max_duration_ms is not None:
            limits.at_most("Duration", reported_number(context.duration_ms), config.max_duration_ms,
                           not_reported("duration_ms", "duration"), unit="ms")
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
            hits.append(f"Exploration ratio {ratio:.2f} within {fmt(config.exploration_tolerance)} of target "
                        f"{fmt(target)}")
        else:
            misses.append(f"Exploration ratio {ratio:.2f} outside tolerance of target {fmt(target)} "
                          f"(diff {diff:.2f}, tolerance {fmt(config.exploration_tolerance)})")
