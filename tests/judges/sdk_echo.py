"""Fixture SDK judge that reports the cross-filled attributes it saw."""
import json

from agentv_gate.sdk import define_code_judge


@define_code_judge
def judge(payload):
    seen = {name: getattr(payload, name) for name in (
        "question", "answer", "candidate_answer", "criteria", "expected_outcome", "reference_answer",
        "input_text", "output_text", "expected_output_text")}
    seen["input_roles"] = [m.role for m in payload.input_messages]
    seen["output_texts"] = [m.text for m in payload.output_messages]
    seen["llm_call_count"] = payload.trace_summary.llm_call_count if payload.trace_summary else None
    seen["config"] = payload.config
    return {"score": 1, "reasoning": json.dumps(seen)}
