"""Reading back one earlier results file (`compare`, `--baseline`, `--retry-errors`/`--rerun-failed`)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..errors import UsageError
from ..execution.stop import NOT_RUN_INTERRUPTED
from ..models import CaseResult
from ..report.jsonl import read_results


def read_previous(path: Path | str, if_empty: str, keep_not_run: bool = False) -> list[CaseResult]:
    """Every row of `path`; a cut-off last line is a warning, a file with no row is a usage error
    saying `if_empty` (a comparison or a rerun against nothing would decide nothing).

    The rows of cases an interrupted run never finished are left out: read as a base or as a rerun's
    PREV, such a case has no result there. `keep_not_run` keeps them, for the run being judged
    (`compare`'s HEAD), where a case that passed on the base and was not run is a regression."""
    read, problems = read_results([path])
    for problem in problems:
        print(f"agentv-gate: warning: {problem}", file=sys.stderr)
    rows = [row for row in read if keep_not_run or row.failure_reason_code != NOT_RUN_INTERRUPTED]
    if not rows:
        raise UsageError(if_empty)
    return rows
