"""The floor every layer stands on: how bytes leave the process (HTTP with the one retry policy;
subprocesses, started fresh). Imports nothing of agentv-gate but errors and redaction."""
