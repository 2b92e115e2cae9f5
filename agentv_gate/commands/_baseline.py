"""`--baseline`, `--fail-on`, `--alpha`, `--history`, `--max-trials`: the options, checked before anything
runs, and the base and history files read into the gate's `Baseline` (report/baseline/gate.py)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Collection, Sequence
from pathlib import Path

from ..base.defaults import DEFAULT_ALPHA
from ..errors import UsageError
from ..execution.stop import NOT_RUN_INTERRUPTED
from ..models import CaseResult
from ..report.baseline.gate import Baseline
from ..report.jsonl import missing_shards, unfinished_runs
from ._previous import read_previous

MAX_GUARD_TRIALS = 1000
"""The most head trials `--max-trials` may ask of one case."""


def check_alpha(alpha: float | None) -> None:
    if alpha is not None and not (math.isfinite(alpha) and 0 < alpha < 1):
        raise UsageError(f"--alpha {alpha} is not a probability strictly between 0 and 1")
    if alpha is not None and alpha / 2 == 0:  # the two-sided interval's tail would be no float at all
        raise UsageError(f"--alpha {alpha} is too small to compute with (use 1e-300 or more)")


def check_max_trials(max_trials: int | None) -> None:
    if max_trials is not None and not 2 <= max_trials <= MAX_GUARD_TRIALS:
        raise UsageError(f"--max-trials {max_trials} is not in 2..{MAX_GUARD_TRIALS}")


def check_baseline_options(args: argparse.Namespace) -> None:
    """`--fail-on regression`, `--max-drop`, `--alpha` or `--history` without a base is a usage error:
    there is nothing to regress against, and falling back to `all` silently would change what the
    gate means."""
    fail_on = getattr(args, "fail_on", None) or "all"
    max_drop = getattr(args, "max_drop", None)
    check_alpha(getattr(args, "alpha", None))
    max_trials = getattr(args, "max_trials", None)
    check_max_trials(max_trials)
    if getattr(args, "baseline", None) is None:
        if fail_on != "all":
            raise UsageError(f"--fail-on {fail_on} needs --baseline BASE.jsonl (the results of the base branch)")
        for flag, value in (("--max-drop", max_drop), ("--alpha", getattr(args, "alpha", None)),
                            ("--history", getattr(args, "history", None)), ("--max-trials", max_trials)):
            if value is not None:
                raise UsageError(f"{flag} needs --baseline BASE.jsonl (the results of the base branch)")
    elif max_drop is not None and not (math.isfinite(max_drop) and 0 <= max_drop <= 1):
        raise UsageError(f"--max-drop {max_drop} is not in 0..1")


def read_history(path: Path | None, base: Sequence[CaseResult]
                 ) -> tuple[frozenset[tuple[str, str]], dict[tuple[str, str], tuple[bool, ...]]]:
    """What `--history` (results rows of earlier runs, e.g. main's, one file after the other) says of
    the base's cases: which flipped, and each case's trials there on the base's digest. Nothing without it."""
    if path is None:
        return frozenset(), {}
    history = read_previous(path, f"--history {path} holds no results rows", several_runs=True)
    from ..report.baseline import paired  # a run against a base only

    return frozenset(paired.flaky_cases(history, base)), paired.earlier_trials(history, base)


def load_baseline(args: argparse.Namespace, cases: Collection[tuple[str, str]],
                  left_out: Collection[tuple[str, str]] = (),
                  whole: Collection[tuple[str, str]] | None = None) -> Baseline | None:
    """The base results `--baseline` names, checked against `cases` ((suite, test id) of every case
    of this run, or of the merged shards); None without it. Its options were checked by
    `check_baseline_options`, which `run` and `merge` call before reading anything.

    `left_out`: the cases in the eval files that this run chose not to run (`--test-id`/`--suite`,
    another shard's); their base rows leave the comparison, since the case was not "removed", only
    not run here. `whole`: in one shard of a run, every shard's cases, whose base rows the per-case guard reads
    its prior and level from (`Baseline.frame`)."""
    path = getattr(args, "baseline", None)
    if path is None:
        return None
    empty = f"--baseline {path} holds no results; run the base branch first (or drop --baseline)"
    every_row = read_previous(path, empty, keep_not_run=True)
    rows = [row for row in every_row if row.failure_reason_code != NOT_RUN_INTERRUPTED]
    if not rows:
        raise UsageError(empty)
    # A base run killed outright: the cases it never wrote would read as "new", which never regresses.
    unfinished = unfinished_runs(every_row)
    if unfinished:
        raise UsageError(f"--baseline {path} is incomplete: {unfinished}")
    # One shard's results as the base of more than that shard: the other shards' cases have no row
    # there, so each would be "new" (a warning under --fail-on regression) though it passed on the
    # base branch. An interrupted base's not-run rows still count as present here: those cases are
    # known to have no result, which is what "new" says.
    missing = missing_shards(every_row)
    lacking = set(cases) - set(left_out) - {(row.suite, row.eval_id) for row in every_row}
    if missing and lacking:
        raise UsageError(f"--baseline {path} holds only part of a sharded run ({missing}), and {len(lacking)} "
                         "case(s) of this run are not in it; they may be in a shard not given and would read as "
                         "new, never as regressed: join the base's shards with `agentv-gate merge` and pass the "
                         "merged results.jsonl")
    if cases and not any((row.suite, row.eval_id) in cases for row in rows):
        example = rows[0]
        raise UsageError(f"--baseline {path} shares no case with this run (its rows are cases like "
                         f"'{example.eval_id}' of {example.suite}); is it the results file of these eval files?")
    kept = [row for row in rows if (row.suite, row.eval_id) not in left_out]
    alpha = getattr(args, "alpha", None)
    flaky, earlier = read_history(getattr(args, "history", None), kept)
    unrun = [row for row in every_row if row.failure_reason_code == NOT_RUN_INTERRUPTED
             and (row.suite, row.eval_id) not in left_out]
    frame = None if whole is None else [row for row in rows if (row.suite, row.eval_id) in whole]
    return Baseline(Path(path), kept, getattr(args, "fail_on", None) or "all", getattr(args, "max_drop", None),
                    DEFAULT_ALPHA if alpha is None else alpha, flaky, getattr(args, "max_trials", None), earlier,
                    unrun, frame=frame)



__all__ = ["MAX_GUARD_TRIALS", "check_alpha", "check_baseline_options", "check_max_trials", "load_baseline",
           "read_history"]
