"""`python -m agentv_gate`: the same CLI as the `agentv-gate` console script."""

from .cli import entry

entry()
