"""`agentv-gate comment RESULTS.jsonl [--baseline BASE.jsonl]`: the pull-request comment on its own.

For a CI system that runs the gate and comments in separate steps (or a workflow that comments
after uploading the report): the same comment `run --comment` posts, from the results file, with
the same verdict the run reached (`--baseline`, `--fail-on`, `--max-drop` as given to the run).
It exits 0 whether or not the comment could be posted (a warning says why not): the run's exit
code is the gate's verdict, and this step must not be a second one.
"""

from __future__ import annotations

import argparse

from ..errors import EXIT_OK, UsageError
from ..execution.stop import NOT_RUN_INTERRUPTED
from ..report import summarise
from ..report.baseline.render import baseline_report
from ..report.jsonl import missing_shards, unfinished_runs
from ..report.selection import selection_lines
from ..report.usage import UsageTotals
from ._baseline import check_baseline_options, load_baseline
from ._comment import comment_setup, plain_gate_line, post_comment, scope_of
from ._previous import read_previous, stopped_shards


def execute(args: argparse.Namespace) -> int:
    check_baseline_options(args)
    setup = comment_setup(scope_of(args))
    assert setup is not None  # enabled
    rows = read_previous(args.results, f"the results {args.results} hold no rows", keep_not_run=True)
    # A PASSED comment on part of a run would be a wrong pass: its missing cases never ran.
    incomplete = missing_shards(rows) or unfinished_runs(rows)
    if incomplete:
        raise UsageError(f"the results {args.results} are incomplete: {incomplete}; comment from the merged "
                         "results of every shard")
    finished = [r for r in rows if r.failure_reason_code != NOT_RUN_INTERRUPTED]
    baseline = load_baseline(args, {(r.suite, r.eval_id) for r in rows})
    summary = summarise(finished, len(rows))
    stopped = stopped_shards(rows)
    notes = selection_lines(finished)  # carried rows, replayed answers, as the run's reports said them
    if baseline is not None:
        report = baseline_report(baseline, finished, summary, stopped)
        post_comment(setup, report.shown(finished), ok=report.ok, gate_line=" · ".join([report.gate_line, *notes]),
                     planned=len(rows),
                     comparison=report.comparison, base_rows=baseline.rows, usage=UsageTotals.of(finished),
                     paired=report.test, unknown=report.unknown)
    else:
        ok = summary.ok and stopped is None
        post_comment(setup, finished, ok=ok, gate_line=" · ".join([plain_gate_line(ok, stopped), *notes]),
                     planned=len(rows),
                     usage=UsageTotals.of(finished))
    return EXIT_OK
