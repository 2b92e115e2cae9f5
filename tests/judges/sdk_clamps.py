"""Fixture SDK judge returning a bare number above 1 (the SDK clamps, as AgentV's does)."""
from agentv_gate.sdk import define_code_judge

define_code_judge(lambda payload: 1.7)
