"""agentv-gate: AgentV-compatible agent evals as a pull-request gate."""

__version__ = "0.1.0"
