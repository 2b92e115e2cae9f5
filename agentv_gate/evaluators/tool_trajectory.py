"""`tool_trajectory`: did the agent call the right tools, as often, in the order, with the arguments asked?

Scoring is AgentV 2.19's, mode by mode (the README has the table): `any_order` counts calls per
tool against `minimums`; `in_order` walks the calls once with a cursor; `exact` compares position by
position; `superset` needs every expected call somewhere (each actual call used once); `subset`
needs every actual call to be an expected one. `in_order` and `exact` add a latency check per item
with `max_duration_ms` that matched (a call that reported no duration is left out of the count).

One place where a gate is stricter than AgentV on purpose: in `exact` mode a different number of
calls is a miss that counts (AgentV lists it but scores `[a, b, c]` against `[a, b]` as 1.0), so an
extra call can never pass as an exact trajectory.
"""

from __future__ import annotations

from typing import Any

from ..judging.payload import message_dict
from ..judging.trace import ToolCall, tool_calls, trace_summary
from ..models import (
    ABSENT,
    ArgsMatch,
    EvaluationContext,
    EvaluationScore,
    ToolTrajectoryConfig,
    TrajectoryItem,
    value_at_path,
)
from .json_extract import json_equal


def args_match(expected: Any, actual: Any, mode: ArgsMatch) -> bool:
    """AgentV's argument match: no `args` or `args: any` always matches, then by `mode`."""
    if expected is None or expected == "any" or mode == "ignore":
        return True
    if not isinstance(actual, dict):
        return False
    if isinstance(mode, list):  # only these paths; a path the expected object lacks is skipped
        for path in mode:
            want = value_at_path(expected, path)
            if want is not ABSENT and not json_equal(want, value_at_path(actual, path)):
                return False
        return True
    if mode == "superset":
        return all(k in actual and json_equal(v, actual[k]) for k, v in expected.items())
    if mode == "subset":
        return all(k in expected and json_equal(v, expected[k]) for k, v in actual.items())
    return json_equal(expected, actual)


class _Tally:
    """Hits and misses, with sequence and latency aspects counted apart, as AgentV scores them."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        self.misses: list[str] = []
        self.sequence_hits = 0
        self.latency_hits = 0
        self.latency_unknown = 0

    def latency(self, item: TrajectoryItem, call: ToolCall) -> None:
        if item.max_duration_ms is None:
            return
        limit = f"{item.max_duration_ms:g}ms"
        if call.duration_ms is None:
            self.latency_unknown += 1  # dropped from the count: the agent did not say
        elif call.duration_ms <= item.max_duration_ms:
            self.latency_hits += 1
            self.hits.append(f"{item.tool} completed in {call.duration_ms:g}ms (max: {limit})")  # AgentV's words
        else:
            self.misses.append(f"{item.tool} took {call.duration_ms:g}ms (max: {limit})")

    def score(self, expected: list[TrajectoryItem]) -> tuple[float, int]:
        checks = sum(1 for item in expected if item.max_duration_ms is not None) - self.latency_unknown
        total = len(expected) + checks
        return ((self.sequence_hits + self.latency_hits) / total if total else 1.0), total


class ToolTrajectoryEvaluator:
    def evaluate(self, config: ToolTrajectoryConfig, context: EvaluationContext) -> EvaluationScore:
        messages = [message_dict(m) for m in context.output_messages]
        if not messages and not context.trace:
            return EvaluationScore(score=0.0, misses=["No trace available for evaluation"],
                                   reasoning="the target returned no output messages",
                                   unchecked=["No trace available for evaluation"])
        calls = tool_calls(messages)
        mode = config.mode
        if mode == "any_order":
            result = self._any_order(config, messages)
        elif mode in ("in_order", "exact"):
            result = self._sequence(config, calls, exact=mode == "exact")
        elif mode == "superset":
            result = self._superset(config, calls)
        else:
            result = self._subset(config, calls)
        actual = [call.name for call in calls]
        result.reasoning = f"{mode}: {result.reasoning}; tools called: {', '.join(actual) if actual else 'none'}"
        result.evaluator_raw_request = {"type": "tool_trajectory", "mode": mode,
                                        "tool_calls": [{"tool": c.name, "input": c.input, "duration_ms": c.duration_ms}
                                                       for c in calls]}
        return result

    def _mode(self, config: ToolTrajectoryConfig, item: TrajectoryItem) -> ArgsMatch:
        if item.args_match is not None:
            return item.args_match
        return config.args_match if config.args_match is not None else "exact"

    def _any_order(self, config: ToolTrajectoryConfig, messages: list[dict[str, Any]]) -> EvaluationScore:
        by_name: dict[str, int] = trace_summary(messages)["tool_calls_by_name"]
        minimums = config.minimums or {}
        hits: list[str] = []
        misses: list[str] = []
        for tool, minimum in minimums.items():
            count = by_name.get(tool, 0)
            line = f"{tool}: called {count} times (required >={minimum})"
            (hits if count >= minimum else misses).append(line)
        score = len(hits) / len(minimums) if minimums else 1.0
        return EvaluationScore(score=score, hits=hits, misses=misses,
                               reasoning=f"{len(hits)}/{len(minimums)} tools called often enough")

    def _sequence(self, config: ToolTrajectoryConfig, calls: list[ToolCall], *, exact: bool) -> EvaluationScore:
        expected = config.expected or []
        tally = _Tally()
        length_miss = 0
        if exact:
            if len(calls) != len(expected):
                length_miss = 1
                tally.misses.append(f"Expected {len(expected)} tool calls, got {len(calls)}")
            for i, item in enumerate(expected):
                if i >= len(calls):
                    tally.misses.append(f"Position {i}: expected {item.tool}, got nothing")
                    continue
                call = calls[i]
                if call.name != item.tool:
                    tally.misses.append(f"Position {i}: expected {item.tool}, got {call.name}")
                elif not args_match(item.args, call.input, self._mode(config, item)):
                    tally.misses.append(f"Position {i}: {item.tool} args mismatch")
                else:
                    tally.sequence_hits += 1
                    tally.hits.append(f"Position {i}: {item.tool}")
                    tally.latency(item, call)
        else:
            cursor = 0
            for i, item in enumerate(expected):
                while cursor < len(calls) and calls[cursor].name != item.tool:
                    cursor += 1
                if cursor >= len(calls):
                    tally.misses.append(f"Expected {item.tool} at position {i}, not found in remaining trace")
                    continue
                call = calls[cursor]
                if args_match(item.args, call.input, self._mode(config, item)):
                    tally.sequence_hits += 1
                    tally.hits.append(f"Found {item.tool} at position {cursor}")
                    tally.latency(item, call)
                else:
                    tally.misses.append(f"Expected {item.tool} at position {i}: tool found at {cursor} but args "
                                        "mismatch")
                cursor += 1
        score, total = tally.score(expected)
        if length_miss:
            total += length_miss
            score = (tally.sequence_hits + tally.latency_hits) / total
        return EvaluationScore(score=score, hits=tally.hits, misses=tally.misses,
                               reasoning=f"{tally.sequence_hits}/{len(expected)} expected calls matched")

    def _superset(self, config: ToolTrajectoryConfig, calls: list[ToolCall]) -> EvaluationScore:
        expected = config.expected or []
        used: set[int] = set()
        hits: list[str] = []
        misses: list[str] = []
        for item in expected:
            mode = self._mode(config, item)
            found = next((j for j, call in enumerate(calls) if j not in used and call.name == item.tool
                          and args_match(item.args, call.input, mode)), None)
            if found is None:
                misses.append(f"Expected {item.tool} not found in actual trajectory")
            else:
                used.add(found)
                hits.append(f"Found {item.tool} at position {found}")
        score = len(hits) / len(expected) if expected else 1.0
        return EvaluationScore(score=score, hits=hits, misses=misses,
                               reasoning=f"{len(hits)}/{len(expected)} expected calls found")

    def _subset(self, config: ToolTrajectoryConfig, calls: list[ToolCall]) -> EvaluationScore:
        expected = config.expected or []
        if not calls:
            return EvaluationScore(score=1.0, hits=["No actual tool calls (trivially a subset)"],
                                   reasoning="no tool calls")
        hits: list[str] = []
        misses: list[str] = []
        for i, call in enumerate(calls):
            allowed = any(call.name == item.tool and args_match(item.args, call.input, self._mode(config, item))
                          for item in expected)
            (hits if allowed else misses).append(f"Position {i}: {call.name} is {'in' if allowed else 'not in'} "
                                                 "allowed set")  # AgentV's words
        return EvaluationScore(score=len(hits) / len(calls), hits=hits, misses=misses,
                               reasoning=f"{len(hits)}/{len(calls)} calls allowed")
