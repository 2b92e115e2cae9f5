"""The defaults the command line states in its help, apart from the models, so that `--help` and
`--version` answer without importing pydantic (a third of a second, most of a run's start-up)."""

DEFAULT_THRESHOLD = 0.5
"""AgentV's gate: its JUnit writer fails a case scoring below 0.5 unless told otherwise."""

DEFAULT_JUDGE_TIMEOUT_SECONDS = 120.0
"""AgentV 2.x runs code judges under its agent timeout, `--agent-timeout` (default 120 s)."""

DEFAULT_WORKERS = 8
"""Cases are I/O-bound (HTTP calls, judge subprocesses), so more workers than cores pays."""
