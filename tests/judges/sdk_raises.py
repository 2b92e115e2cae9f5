"""Fixture SDK judge whose handler raises."""
from agentv_gate.sdk import CodeJudgeInput, define_code_judge


@define_code_judge
def judge(payload: CodeJudgeInput) -> dict:
    raise KeyError("rubric file missing")
