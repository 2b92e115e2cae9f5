"""Fixture SDK judge that returns something that is not a result."""
from agentv_gate.sdk import define_code_judge


@define_code_judge
def judge(payload):
    return {"verdict": "good"}
