"""`agentv-gate merge`: join shard JSONL files into one JUnit, one summary, one verdict, as if it had been one run.

A merge that lacks a shard must not pass: the cases that shard held never ran, so it refuses
(exit 2) rather than judge the rest.
"""

from __future__ import annotations

import argparse
import sys

from ..errors import ReportError, UsageError
from ..execution.stop import NOT_RUN_INTERRUPTED
from ..report.console import ConsoleReporter
from ..report.jsonl import JsonlWriter, missing_shards, read_results, unfinished_runs
from ..report.run_info import RunInfo, current_commit
from ..report.usage import UsageTotals
from ._baseline import check_baseline_options, load_baseline
from ._comment import comment_setup
from ._outputs import check_output_paths, output_paths, write_reports
from ._previous import stopped_shards


def execute(args: argparse.Namespace) -> int:
    check_baseline_options(args)
    check_output_paths(args.output_dir, args.junit, args.results_out, "--results-out")
    comment = comment_setup([], enabled=args.comment)  # the suite set: the workflow's whole run
    results, problems = read_results(args.results)
    for problem in problems:
        print(f"agentv-gate: warning: {problem}", file=sys.stderr)
    if not results:
        raise ReportError("no results to merge")
    missing = missing_shards(results)
    if missing:
        raise ReportError(f"incomplete shard results: {missing}; a merged verdict without them could pass "
                          "cases that never ran")
    unfinished = unfinished_runs(results)
    if unfinished:
        raise ReportError(f"incomplete results: {unfinished}; a merged verdict without its missing cases could "
                          "pass cases that never ran")
    gated = sorted({r.baseline_fail_on for r in results if r.baseline_fail_on})
    if gated and getattr(args, "baseline", None) is None:
        raise UsageError(f"these results were gated against a --baseline (--fail-on {', '.join(gated)}); merge them "
                         "with the same --baseline and --fail-on: without a base the merged verdict reads each row "
                         "alone, and passes a case a shard failed against its base")
    # The shards' --baseline / --fail-on, again for the whole: a merged verdict must mean what theirs did.
    # Read before the merged JSONL is written: the base may be the file it replaces (the output
    # folder main's results were restored into), and read after, the shards met only themselves.
    baseline = load_baseline(args, {(r.suite, r.eval_id) for r in results})
    # `results` holds the inputs, so the merged JSONL's path is `results_out`.
    junit, results_path, html = output_paths(args.output_dir, args.junit, args.results_out)
    with JsonlWriter(results_path) as writer:
        for result in results:
            writer.write(result)
    # The rows of cases an interrupted shard (or run) never finished: reported as its own reports
    # did, not run, so the merged verdict is "interrupted", never a pass.
    finished = [r for r in results if r.failure_reason_code != NOT_RUN_INTERRUPTED]
    not_run = [r for r in results if r.failure_reason_code == NOT_RUN_INTERRUPTED]
    return write_reports(finished, junit, results_path, ConsoleReporter(quiet=args.quiet, verbose=args.verbose),
                         planned=len(results), html=html, baseline=baseline, stopped=stopped_shards(results),
                         not_run=not_run, usage=UsageTotals.of(finished), comment=comment,
                         info=RunInfo(commit=current_commit(), merged_from=len(dict.fromkeys(args.results))))
