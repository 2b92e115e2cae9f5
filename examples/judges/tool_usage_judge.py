#!/usr/bin/env python3
"""Async code judge (agentv-gate SDK): did the agent call the tools it had to, within budget?

    - name: tools
      type: code_judge
      script: python3 examples/judges/tool_usage_judge.py
      required_tools: [search]
      max_tool_calls: 5

Reads the trace summary (`tool_calls_by_name`, `event_count`) that every payload carries.
"""

import asyncio

from agentv_gate.sdk import CodeJudgeInput, define_code_judge


@define_code_judge
async def judge(payload: CodeJudgeInput) -> dict:
    await asyncio.sleep(0)  # an async judge may await I/O (an HTTP check, a database query...)
    config = payload.config or {}
    summary = payload.trace_summary
    calls = summary.tool_calls_by_name if summary else {}
    total = summary.event_count if summary else 0
    hits, misses = [], []
    for tool in config.get("required_tools", []):
        if calls.get(tool):
            hits.append(f"called {tool}")
        else:
            misses.append(f"never called {tool}")
    budget = config.get("max_tool_calls")
    if budget is not None:
        (hits if total <= budget else misses).append(f"{total} tool calls (budget {budget})")
    checks = len(hits) + len(misses)
    return {"score": len(hits) / checks if checks else 1.0, "hits": hits, "misses": misses}
