"""`run` and `merge`: load -> shard -> orchestrate -> stream results -> reports -> exit code.

Reports are written however the run ends: normally, on a failing case, on Ctrl-C or SIGTERM
(exit 130/143 after writing what finished), so CI never loses a finished case's result.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from .errors import ConfigError, ReportWriteError
from .evaluators.registry import build_evaluator_registry
from .loader import CaseRef, default_eval_paths, plan_paths
from .models import DEFAULT_JUDGE_TIMEOUT_SECONDS, CaseResult
from .orchestrator import Orchestrator, RunSettings, ShardSpec, select_shard
from .report import summarise
from .report.console import ConsoleReporter
from .report.github import write_github_reports
from .report.jsonl import JsonlWriter, read_results
from .report.junit import write_junit
from .report.rows import ReportedCase, ReportRow
from .targets.cache import DEFAULT_CACHE_DIR, ResponseCache, caching_wrapper
from .targets.resolver import TargetResolver
from .transport.process import allow_new_scripts, kill_running_scripts

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_SIGINT, EXIT_SIGTERM = 130, 143


class _Terminated(KeyboardInterrupt):
    """SIGTERM (a cancelled CI job) handled like Ctrl-C: stop, write what finished."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise _Terminated()


def _output_paths(args: argparse.Namespace) -> tuple[Path, Path]:
    out_dir: Path = args.output_dir
    junit = args.junit or out_dir / "junit.xml"
    # `merge` takes its inputs in `results`, so its own output path is `results_out`.
    explicit = args.results_out if args.command == "merge" else args.results
    results = explicit or out_dir / "results.jsonl"
    return junit, results


def _finish(results: Sequence[ReportedCase], junit: Path, results_path: Path, console: ConsoleReporter,
            planned: int | None = None) -> int:
    """Write the end-of-run reports; the exit code says whether the gate passed.

    `planned` is how many cases the run set out to run, so an interrupted run's reports say it
    was cut short rather than showing the finished subset as a pass.
    """
    try:
        write_junit(results, junit)
    except ReportWriteError as exc:
        print(f"agentv-gate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    summary = summarise(results, planned)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        try:
            write_github_reports(results, junit_path=junit, results_path=results_path, planned=planned)
        except ReportWriteError as exc:
            print(f"agentv-gate: {exc}", file=sys.stderr)
    console.finish(results, planned)
    return EXIT_OK if summary.ok else EXIT_FAILED


def _report_cache(cache: ResponseCache | None, quiet: bool) -> None:
    """One stderr line when the cache was used; a cache that could not be written is said even with --quiet."""
    if cache is None or not (cache.stats.hits or cache.stats.misses):
        return
    if not quiet or cache.stats.write_errors:
        print(f"agentv-gate: response cache {cache.root}: {cache.stats.describe()}", file=sys.stderr)


def cmd_run(args: argparse.Namespace) -> int:
    plan = plan_paths(default_eval_paths(args.paths), args.repo_root, args.allow_outside_root, args.allow_unknown_keys)
    for problem in plan.problems:
        print(problem, file=sys.stderr)
    if plan.errors:
        unknown = " or pass --allow-unknown-keys" if any(p.unknown_key for p in plan.errors) else ""
        print(f"agentv-gate: {len(plan.errors)} problem(s) in eval files; nothing was run "
              f"(see `agentv-gate validate`{unknown})", file=sys.stderr)
        return EXIT_USAGE
    selected = plan.refs
    if args.shard is not None:
        try:
            selected = select_shard(plan.refs, ShardSpec.parse(args.shard))
        except ValueError as exc:
            print(f"agentv-gate: {exc}", file=sys.stderr)
            return EXIT_USAGE
    if not plan.refs:
        print("agentv-gate: no eval cases found", file=sys.stderr)
        return EXIT_USAGE
    if args.threshold is not None and not 0 <= args.threshold <= 1:
        print(f"agentv-gate: --threshold {args.threshold} is not in 0..1", file=sys.stderr)
        return EXIT_USAGE
    try:
        # Every case, not just this shard's: a bad target name fails every shard alike.
        cache = None if args.no_cache else ResponseCache(args.cache_dir or DEFAULT_CACHE_DIR)
        resolver = TargetResolver.from_args(args, plan.refs, wrap=caching_wrapper(cache) if cache else None)
    except ConfigError as exc:
        print(f"agentv-gate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for warning in resolver.warnings:
        print(warning, file=sys.stderr)

    junit, results_path = _output_paths(args)
    console = ConsoleReporter(quiet=args.quiet)
    try:
        writer = JsonlWriter(results_path)
    except ReportWriteError as exc:
        print(f"agentv-gate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not selected:
        # More shards than cases: this job has nothing to do, which fails nothing; `merge` judges the whole.
        print(f"agentv-gate: shard {args.shard} has no cases ({len(plan.refs)} case(s) in all); "
              "writing empty reports", file=sys.stderr)
        writer.close()
        resolver.close()
        try:
            write_junit([], junit)
        except ReportWriteError as exc:
            print(f"agentv-gate: {exc}", file=sys.stderr)
            return EXIT_USAGE
        return EXIT_OK

    rows: list[ReportRow] = []  # what the end-of-run reports read; full rows are only in the JSONL

    def on_result(result: CaseResult) -> None:
        if args.shard:
            result.shard, result.shard_total = args.shard, len(plan.refs)
        writer.write(result)
        rows.append(ReportRow.of(result))
        console.case_done(result)

    registry = build_evaluator_registry(None, resolver.judge_resolver(),
                                        judge_timeout_seconds=args.judge_timeout or DEFAULT_JUDGE_TIMEOUT_SECONDS)
    settings = RunSettings(threshold=args.threshold, workers=args.workers or RunSettings().workers, keep_results=False)
    orchestrator = Orchestrator(resolver, registry, settings, on_result=on_result)
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    previous_int = signal.getsignal(signal.SIGINT)
    console.start(len(selected))
    allow_new_scripts()  # an earlier interrupted run in this process refused them
    try:
        orchestrator.run(plan.read_cases(selected))
        for ref in plan.vanished:
            on_result(_vanished_result(ref))
    except KeyboardInterrupt as exc:
        # A second signal (Ctrl-C twice; CI sends SIGINT, then SIGTERM) must not cut the reports short.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        # Hanging judges and cli targets (and their grandchildren) die now, so no process outlives
        # the run and the worker threads waiting on them let the interpreter exit.
        kill_running_scripts()
        writer.close()
        print(f"\nagentv-gate: interrupted; writing {len(rows)} finished case(s) of {len(selected)}", file=sys.stderr)
        _finish(rows, junit, results_path, console, planned=len(selected))
        return EXIT_SIGTERM if isinstance(exc, _Terminated) else EXIT_SIGINT
    except ReportWriteError as exc:
        kill_running_scripts()  # the run stops here: no judge may outlive it
        print(f"agentv-gate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - a bug of ours: say so, and still report what finished
        kill_running_scripts()
        writer.close()
        print(f"agentv-gate: internal error: {type(exc).__name__}: {exc}; writing {len(rows)} finished case(s) "
              f"of {len(selected)}", file=sys.stderr)
        _finish(rows, junit, results_path, console, planned=len(selected))
        return EXIT_USAGE
    finally:
        # After an interruption both stay ignored: the process is on its way out with its exit code,
        # and a late signal must not turn that into death by signal.
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:
            signal.signal(signal.SIGTERM, previous)
            if previous_int is not None:
                signal.signal(signal.SIGINT, previous_int)
        resolver.close()
        _report_cache(cache, args.quiet)
    writer.close()
    return _finish(rows, junit, results_path, console, planned=len(selected))


def _vanished_result(ref: CaseRef) -> CaseResult:
    """A case checked at the start but not found again when its turn came: its eval file changed mid-run."""
    result = CaseResult(eval_id=ref.id, suite=ref.suite, file=str(ref.source_file), line=ref.source_line,
                        verdict="error", error=f"case '{ref.id}' was no longer at {ref.source_file}:{ref.source_line} "
                        "when the run reached it (the eval file changed during the run); run again")
    return result


def missing_shards(results: list[CaseResult]) -> str | None:
    """What is missing from a set of shard results, or None when it is whole.

    Each shard row knows how many cases the unsharded run has; fewer distinct cases than that
    means a shard job died or never uploaded (or stopped part way).
    """
    expected = max((r.shard_total for r in results if r.shard_total), default=0)
    present = {(r.suite, r.eval_id) for r in results}
    if len(present) >= expected:
        return None
    labels = {r.shard for r in results if r.shard}
    count = next((int(label.split("/")[1]) for label in labels if label.split("/")[-1].isdigit()), 0)
    absent = [f"{k}/{count}" for k in range(1, count + 1) if f"{k}/{count}" not in labels]
    where = f" (no results at all from shard(s) {', '.join(absent)})" if absent else ""
    return f"{expected - len(present)} of {expected} case(s) have no result{where}"


def cmd_merge(args: argparse.Namespace) -> int:
    """Join shard JSONL files: one JUnit, one summary, one verdict, as if it had been one run."""
    try:
        results, problems = read_results(args.results)
    except ReportWriteError as exc:
        print(f"agentv-gate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for problem in problems:
        print(f"agentv-gate: warning: {problem}", file=sys.stderr)
    if not results:
        print("agentv-gate: no results to merge", file=sys.stderr)
        return EXIT_USAGE
    missing = missing_shards(results)
    if missing:
        print(f"agentv-gate: incomplete shard results: {missing}; a merged verdict without them could pass "
              "cases that never ran", file=sys.stderr)
        return EXIT_USAGE
    junit, results_path = _output_paths(args)
    try:
        with JsonlWriter(results_path) as writer:
            for result in results:
                writer.write(result)
    except ReportWriteError as exc:
        print(f"agentv-gate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return _finish(results, junit, results_path, ConsoleReporter(quiet=True))
