"""Reading back one earlier results file (`compare`, `--baseline`, `--retry-errors`/`--rerun-failed`)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..errors import UsageError
from ..execution.stop import NOT_RUN_INTERRUPTED
from ..models import CaseResult
from ..report.jsonl import read_results


def read_previous(path: Path | str, if_empty: str) -> list[CaseResult]:
    """Every row of `path` but those of cases an interrupted run never finished (such a case has no
    result there, as if it had no row); a cut-off last line is a warning, a file with no row is a
    usage error saying `if_empty` (a comparison or a rerun against nothing would decide nothing)."""
    read, problems = read_results([path])
    for problem in problems:
        print(f"agentv-gate: warning: {problem}", file=sys.stderr)
    rows = [row for row in read if row.failure_reason_code != NOT_RUN_INTERRUPTED]
    if not rows:
        raise UsageError(if_empty)
    return rows
