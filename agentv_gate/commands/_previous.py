"""Reading back one earlier results file (`compare`, `--baseline`, `--retry-errors`/`--rerun-failed`)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..errors import UsageError
from ..execution.stop import NOT_RUN_INTERRUPTED, STOPPED_BY_MAX_FAILURES
from ..models import CaseResult
from ..report.jsonl import read_results


def read_previous(path: Path | str, if_empty: str, keep_not_run: bool = False,
                  several_runs: bool = False) -> list[CaseResult]:
    """Every row of `path`; a cut-off last line is a warning, a file with no row is a usage error
    saying `if_empty` (a comparison or a rerun against nothing would decide nothing).

    The rows of cases an interrupted run never finished are left out: read as a base or as a rerun's
    PREV, such a case has no result there. `keep_not_run` keeps them, for the run being judged
    (`compare`'s HEAD), where a case that passed on the base and was not run is a regression.
    `several_runs`: a file of runs appended one after the other (`--history`), each case once per run."""
    read, problems = read_results([path], several_runs)
    for problem in problems:
        print(f"agentv-gate: warning: {problem}", file=sys.stderr)
    rows = [row for row in read if keep_not_run or row.failure_reason_code != NOT_RUN_INTERRUPTED]
    if not rows:
        raise UsageError(if_empty)
    return rows


def stopped_shards(results: list[CaseResult]) -> str | None:
    """Why the merged run counts as stopped early: a shard stopped by `--max-failures` wrote its
    cases not started as rows of that reason, and a stopped run never passes (see `_baseline`)."""
    runs = sorted({f"shard {r.shard}" if r.shard else "the run (no --shard)" for r in results
                   if r.failure_reason_code == STOPPED_BY_MAX_FAILURES})
    if not runs:
        return None
    return f"{', '.join(runs)} stopped early (--max-failures): its cases not started did not run"
