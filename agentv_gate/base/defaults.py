"""The defaults the command line states in its help, apart from the models, so that `--help` and
`--version` answer without importing pydantic (a third of a second, most of a run's start-up)."""

PASS_SCORE = 0.8
BORDERLINE_SCORE = 0.6
"""AgentV's score labels (scoreToVerdict): pass >= 0.8, borderline >= 0.6, else fail."""

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

DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024
"""Cap on one answer, 8 MiB: an HTTP reply body (decompressed), a `cli` target's stdout or
`{OUTPUT_FILE}`, a code judge's output. An answer over it is an error, never cut and read as whole."""

FAIL_ON = ("all", "regression", "case-regression", "inconclusive")
"""Each stricter than the one before: `regression` fails on a significant suite-level drop (one trial
a side: on any case that regressed), `case-regression` on a significant case too, `inconclusive` on a
case whose pass rate fell without significance as well."""

DEFAULT_ALPHA = 0.05
"""The baseline's paired test's significance level unless `--alpha` says otherwise (report/baseline/paired.py)."""

MAX_REJUDGE = 10
"""The most extra calls `rejudge_on_fail` / `--rejudge-on-fail` may ask of a judge whose verdict failed:
past a handful, a judge that needs them is the problem `judge-check` measures, not noise to outvote."""

DEFAULT_JUDGE_CHECK_ASKS = 5
"""`judge-check`'s default: each judged case asked this many times."""
