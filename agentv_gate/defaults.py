"""The defaults the command line states in its help, apart from the models, so that `--help` and
`--version` answer without importing pydantic (a third of a second, most of a run's start-up)."""

DEFAULT_THRESHOLD = 0.5
"""AgentV's gate: its JUnit writer fails a case scoring below 0.5 unless told otherwise."""

DEFAULT_JUDGE_TIMEOUT_SECONDS = 120.0
"""AgentV 2.x runs code judges under its agent timeout, `--agent-timeout` (default 120 s)."""

MAX_DURATION_MS = 2**31 - 1
"""The longest wait a duration setting may ask for: JavaScript's timer limit (`setTimeout`, about
24.8 days), past which AgentV's timers fire at once. A larger value is a slip, and Python's clocks
overflow on it mid-run (`OverflowError: timestamp out of range`), so it is refused where it is written."""

DEFAULT_WORKERS = 8
"""Cases are I/O-bound (HTTP calls, judge subprocesses), so more workers than cores pays."""
