"""Fixture judge: prints progress with print() inside its SDK function."""
from agentv_gate.sdk import CodeJudgeInput, define_code_judge


@define_code_judge
def judge(payload: CodeJudgeInput) -> dict:
    print("checking the answer...")
    return {"score": 1.0 if "Paris" in payload.answer else 0.0}
