"""The defaults the command line states in its help, apart from the models, so that `--help` and
`--version` answer without importing pydantic (a third of a second, most of a run's start-up)."""

DEFAULT_THRESHOLD = 0.5
"""AgentV's gate: its JUnit writer fails a case scoring below 0.5 unless told otherwise."""

DEFAULT_JUDGE_TIMEOUT_SECONDS = 120.0
"""AgentV 2.x runs code judges under its agent timeout, `--agent-timeout` (default 120 s)."""

DEFAULT_WORKERS = 8
"""Cases are I/O-bound (HTTP calls, judge subprocesses), so more workers than cores pays."""

DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024
"""Cap on one answer, 8 MiB: an HTTP reply body (decompressed), a `cli` target's stdout or
`{OUTPUT_FILE}`, a code judge's output. An answer over it is an error, never cut and read as whole."""
