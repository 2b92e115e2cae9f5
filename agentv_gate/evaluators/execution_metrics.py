"""`execution_metrics`: one check per limit given; the score is the share of checks that hold.

Tool calls and LLM calls come from the trace summary of the output messages (`event_count`,
`llm_call_count`), tokens are input + output, and the exploration ratio is the share of calls to
read-only tools. A check whose metric the target did not report is a miss naming it.
"""

from __future__ import annotations

from typing import Any

from ..judging.payload import message_dict
from ..judging.trace import trace_summary
from ..models import EvaluationContext, EvaluationScore, ExecutionMetricsConfig
from .metrics import fmt, reported_number, token_part

EXPLORATION_TOOLS = frozenset({"read", "grep", "glob", "search", "list", "Read", "Grep", "Glob", "WebSearch",
                               "WebFetch"})
"""AgentV's read-only tools: calls to these count as exploring rather than acting."""


def _check(hits: list[str], misses: list[str], label: str, actual: float | None, limit: float, missing: str,
           unit: str = "") -> None:
    if actual is None:
        misses.append(f"{missing} not reported by the target: {label.lower()} cannot be checked")
    elif actual <= limit:
        hits.append(f"{label} {fmt(actual)}{unit} <= {fmt(limit)}{unit} max")
    else:
        misses.append(f"{label} {fmt(actual)}{unit} > {fmt(limit)}{unit} max")


class ExecutionMetricsEvaluator:
    def evaluate(self, config: ExecutionMetricsConfig, context: EvaluationContext) -> EvaluationScore:
        messages = [message_dict(m) for m in context.output_messages]
        summary: dict[str, Any] | None = trace_summary(messages) if messages else None
        hits: list[str] = []
        misses: list[str] = []
        if config.max_tool_calls is not None:
            _check(hits, misses, "Tool calls", summary["event_count"] if summary else None, config.max_tool_calls,
                   "the trace")
        if config.max_llm_calls is not None:
            _check(hits, misses, "LLM calls", summary["llm_call_count"] if summary else None, config.max_llm_calls,
                   "the trace")
        if config.max_tokens is not None:
            tokens_in, tokens_out = token_part(context.token_usage, "input"), token_part(context.token_usage, "output")
            total = None if tokens_in is None or tokens_out is None else tokens_in + tokens_out
            _check(hits, misses, "Tokens", total, config.max_tokens, "token_usage")
        if config.max_cost_usd is not None:
            _check(hits, misses, "Cost USD", reported_number(context.cost_usd), config.max_cost_usd, "cost_usd")
        if config.max_duration_ms is not None:
            _check(hits, misses, "Duration", reported_number(context.duration_ms), config.max_duration_ms,
                   "duration_ms", "ms")
        if config.target_exploration_ratio is not None:
            self._exploration(config, summary, hits, misses)
        checks = len(hits) + len(misses)
        return EvaluationScore(score=len(hits) / checks if checks else 0.0, hits=hits, misses=misses,
                               expected_aspect_count=checks or 1,
                               reasoning=f"{len(hits)}/{checks} execution checks hold" if checks else "no limit given",
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
        if diff <= config.exploration_tolerance + 1e-9:
            hits.append(f"Exploration ratio {ratio:.2f} within {fmt(config.exploration_tolerance)} of target "
                        f"{fmt(target)}")
        else:
            misses.append(f"Exploration ratio {ratio:.2f} outside tolerance of target {fmt(target)} "
                          f"(diff {diff:.2f}, tolerance {fmt(config.exploration_tolerance)})")
