"""`agentv-gate run` (the default command): load -> shard -> orchestrate -> stream results -> reports -> exit code.

Reports are written however the run ends: normally, on a failing case, on Ctrl-C or SIGTERM
(exit 130/143 after writing what finished), or on a bug of ours (exit 4 after writing what
finished), so CI never loses a finished case's result. Those endings are not errors to raise:
the run has already started, and what it finished must still reach the reports.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any, Generic, TypeVar

from ..base.defaults import MAX_DURATION_MS, MAX_REJUDGE
from ..base.files import project_root
from ..errors import EXIT_OK, EXIT_SIGINT, EXIT_SIGTERM, ConfigError, NoCasesError, ReportError, UsageError
from ..evaluators.registry import build_evaluator_registry
from ..execution.hooks import WorkspaceHooks
from ..execution.stop import (
    NOT_RUN_INTERRUPTED,
    NOT_RUN_MISSING_ENV,
    FailureLimit,
    RunBudget,
    StopPolicies,
    execution_block_policies,
)
from ..loader import CaseRef, SuitePlan, nothing_found, plan_paths
from ..loader.judge_floor import JudgeFloor, load_judge_floor
from ..loader.quarantine import Quarantine, find_gate_config, load_quarantine
from ..models import DEFAULT_JUDGE_TIMEOUT_SECONDS, DEFAULT_WORKERS, CaseResult, EvalCase, utc_now_iso
from ..orchestrator import Orchestrator, RunSettings, ShardSpec, each_target, scrubbed, select_shard
from ..redaction import redact
from ..report import TargetTraffic
from ..report.baseline.gate import Baseline
from ..report.console import ConsoleReporter
from ..report.jsonl import JsonlWriter
from ..report.junit import write_junit
from ..report.live import heartbeat_seconds
from ..report.rows import ReportRow
from ..report.run_info import RunInfo, current_commit
from ..report.text import inert_lines, inert_log_text, one_line
from ..report.usage import UsageTotals
from ..targets.cache import DEFAULT_CACHE_DIR, ResponseCache, caching_wrapper
from ..targets.cli_batch import plan_batches
from ..targets.per_file import PerFileTargets, open_targets
from ..targets.recording import (
    AGENT_CHANGED,
    NOT_RECORDED,
    Manifest,
    Recorder,
    Replay,
    current_ref,
    recording_wrapper,
    replay_env,
    replaying_wrapper,
)
from ..targets.resolver import TargetResolver
from ..transport.process import allow_new_scripts, end_orphans, kill_running_scripts
from ._affected import agent_changes, load_affected
from ._baseline import check_baseline_options, load_baseline
from ._comment import CommentSetup, comment_setup, scope_of
from ._eval_paths import eval_paths
from ._hints import import_hint
from ._outputs import check_output_paths, output_paths, report_cache, report_traffic, write_reports
from ._reruns import Reruns, rerun_suspicious, undecided_cases, write_reruns
from ._select import Rerun, list_cases, load_rerun, rerun_partial_cases, run_digest, select_cases

MAX_TRIALS = 100
MAX_WORKERS = 256
"""Each worker is a thread with its own HTTP session; past a few hundred they only cost memory."""


class _Terminated(KeyboardInterrupt):
    """SIGTERM (a cancelled CI job) handled like Ctrl-C: stop, write what finished."""


class _SignalGate:
    """SIGINT and SIGTERM as exceptions, held back while one finished case is being recorded.

    A signal raised between a case's line in the results file and its row in memory would leave the
    case both finished (on disk) and not run (in the reports of the interrupted run): one result read
    two ways. Inside `recording()` the signal waits, and is raised when the case is whole."""

    def __init__(self) -> None:
        self.recording_depth = 0
        self.pending: KeyboardInterrupt | None = None

    def handle(self, signum: int, frame: FrameType | None) -> None:
        exc = _Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()
        if not self.recording_depth:
            raise exc
        if self.pending is None:  # the first signal decides the exit code (130 or 143)
            self.pending = exc

    @contextmanager
    def recording(self) -> Iterator[None]:
        self.recording_depth += 1
        try:
            yield
        finally:
            self.recording_depth -= 1
            if not self.recording_depth and self.pending is not None:
                exc, self.pending = self.pending, None
                raise exc


def check_options(args: argparse.Namespace) -> None:
    """The command line's values and combinations, refused (exit 2) before any file is read: `--list`,
    which runs nothing, included, so a value `run` would refuse is not first found in CI."""
    check_baseline_options(args)
    check_output_paths(args.output_dir, args.junit, args.results)
    if args.comment and args.shard is not None:
        raise UsageError(f"--comment with --shard {args.shard}: each shard would replace the comment with its "
                         "part of the run; comment from the job that merges the shards (`merge --comment`)")
    if args.no_cache and args.cache_dir is not None:
        raise UsageError(f"--cache-dir {args.cache_dir} and --no-cache contradict each other: the run would "
                         "neither read nor write that folder; drop one")
    if getattr(args, "record_judges", False) and getattr(args, "record", None) is None:
        raise UsageError("--record-judges without --record DIR: it says what a recording holds")
    if args.max_failures is not None and args.max_failures < 1:
        raise UsageError(f"--max-failures {args.max_failures} is not a whole number >= 1")
    if args.budget_usd is not None and not 0 < args.budget_usd < float("inf"):
        raise UsageError(f"--budget-usd {args.budget_usd} is not a number of dollars above 0")
    if args.threshold is not None and not 0 <= args.threshold <= 1:
        raise UsageError(f"--threshold {args.threshold} is not in 0..1")
    if args.workers is not None and not 1 <= args.workers <= MAX_WORKERS:
        raise UsageError(f"--workers {args.workers} is not in 1..{MAX_WORKERS}")
    if args.judge_timeout is not None and not 0 < args.judge_timeout <= MAX_DURATION_MS / 1000:
        raise UsageError(f"--judge-timeout {args.judge_timeout} is not a number of seconds > 0 and at most "
                         f"{MAX_DURATION_MS / 1000:.3f}")
    if args.trials is not None and not 1 <= args.trials <= MAX_TRIALS:
        raise UsageError(f"--trials {args.trials} is not in 1..{MAX_TRIALS}")
    if args.rejudge_on_fail is not None and not 0 <= args.rejudge_on_fail <= MAX_REJUDGE:
        raise UsageError(f"--rejudge-on-fail {args.rejudge_on_fail} is not in 0..{MAX_REJUDGE}")


def execute(args: argparse.Namespace) -> int:
    session = RunSession(args)
    nothing_to_run = session.start()
    return nothing_to_run if nothing_to_run is not None else session.run()


_T = TypeVar("_T")


class _Background(Generic[_T]):
    """`function()` on a thread of its own from now on; `result()` waits for it (and raises what it raised)."""

    def __init__(self, function: Callable[[], _T]) -> None:
        self._function = function
        self._value: _T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="start-up", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._function()
        except BaseException as exc:  # noqa: BLE001 - handed to whoever asks for the result
            self._error = exc

    def wait(self) -> None:
        self._thread.join()

    def result(self) -> _T:
        self.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


class RunSession:
    """One `run`, in named steps: `start` reads the eval files, chooses the cases and opens the targets and
    the outputs; `run` hands the cases to the orchestrator, which gives each result to `on_result`; a
    signal ends in `interrupted`, a bug of ours in `stopped`, both writing the reports of what finished;
    `finish` writes the reports of a whole run and decides its exit code."""

    # Set by `start`, in this order.
    comment: CommentSetup | None
    plan: SuitePlan
    quarantine: Quarantine
    judge_floor: JudgeFloor | None
    rerun: Rerun | None
    selected: list[CaseRef]
    """The cases this job runs (this shard's, after the filters and a rerun's choice)."""
    every_chosen: list[CaseRef]
    """The whole filtered run, every shard's: what `shard_total` counts."""
    baseline: Baseline | None
    cache: ResponseCache | None
    resolver: TargetResolver | PerFileTargets
    left_out: list[CaseResult]
    """Not-run rows of the cases --skip-missing-env leaves out."""
    skipped: set[tuple[str, str, str]]
    console: ConsoleReporter
    junit: Path
    results_path: Path
    html: Path
    writer: JsonlWriter
    planned: int
    """Rows this job writes: a matrix case has a row per target, a rerun's carried rows count."""
    chosen: int
    """Rows of the whole filtered run, every shard's: a shard cut short between a matrix case's targets
    still has a row of every case, so `merge` counts rows, not cases."""
    run_id: str
    commit: str | None
    digests: dict[tuple[str, str], str]
    contents: dict[tuple[str, str], str]
    """Each case's content digest (`CaseRef.content`), for a baseline to pair it if it is renamed later."""
    failure_limit: FailureLimit | None
    hooks: WorkspaceHooks

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.replay: Replay | None = None
        self.carried_total = 0
        self.affected = False
        """With --affected-since: the rows carried over, every shard's (the first shard writes them)."""
        self.started, self.started_at = time.monotonic(), utc_now_iso()
        self.rows: list[ReportRow] = []
        """What the end-of-run reports read; full rows are only in the JSONL."""
        self.signals = _SignalGate()
        self.usage = UsageTotals()
        """Tokens and dollars, added up as rows come: the compact rows do not keep them."""
        self.reruns = Reruns()
        """The trials the per-case guard re-ran, written into the results file at the end."""

    @property
    def carried(self) -> list[CaseResult]:
        """A rerun's rows not run again, kept as they were: its results file is complete."""
        return self.rerun.kept if self.rerun else []

    # ---------------------------------------------------------------- start

    def start(self) -> int | None:
        """Everything before the first case. None to go on; an exit code when this job runs nothing
        (`--list`, a shard with no cases)."""
        args = self.args
        check_options(args)
        self.comment = comment_setup(scope_of(args), enabled=args.comment)  # the token leaves the environment first
        # `git rev-parse` runs while the eval files are read (`--list` names no commit: no git for it)
        commit = _Background(current_commit if not args.list else lambda: None)
        try:
            return self._start(commit)
        finally:
            commit.wait()  # always waited for: its `git` never outlives the start, even one that raised

    def _start(self, commit: _Background[str | None]) -> int | None:
        args = self.args
        paths = eval_paths(args)
        self._read_plan(paths)
        shard = _shard_of(args)
        if not self.plan.refs:
            raise NoCasesError(nothing_found("cases", paths))
        self._choose(shard)
        if args.list:
            list_cases(self.selected)
            return EXIT_OK
        reported = {(ref.suite, ref.id) for ref in self.selected} | {(row.suite, row.eval_id) for row in self.carried}
        every = {(ref.suite, ref.id) for ref in self.plan.refs}
        # one shard of several: the guard decides against every shard's cases, as the merge of the shards will
        whole = ({(ref.suite, ref.id) for ref in self.every_chosen} | {(row.suite, row.eval_id) for row in self.carried}
                 if shard is not None and shard.count > 1 else None)
        self.baseline = load_baseline(args, every, every - reported, whole)
        heartbeat = heartbeat_seconds(os.environ)
        self._open_targets()
        self._open_outputs(heartbeat)
        if not self.selected and not self.carried:
            # More shards than cases (or than affected cases, whose carried rows the first shard writes): this
            # job has nothing to do, which fails nothing; `merge` judges the whole.
            print(f"agentv-gate: shard {args.shard} has no cases ({len(self.every_chosen)} case(s) in all); "
                  "writing empty reports", file=sys.stderr)
            self.writer.close()
            self.resolver.close()
            write_junit([], self.junit)
            return EXIT_OK
        self.run_id = uuid.uuid4().hex[:12]
        self.commit = commit.result()
        self.digests = {(ref.suite, ref.id): run_digest(args, ref) for ref in self.selected}
        self.contents = {(ref.suite, ref.id): ref.content for ref in self.selected if ref.content}
        # A carried row was written by another run, which may not have known a secret this one does (its
        # variable unset there): hidden as in every row this run makes (`orchestrator.scrubbed`).
        if self.rerun is not None:
            self.rerun.kept = [scrubbed(old) for old in self.rerun.kept]
        for old in self.carried:
            self.writer.write(self.stamp(old))
            self.rows.append(ReportRow.of(old, review=True))
            self.usage.add(old)
        quarantine, floor = self.quarantine, self.judge_floor
        # a quarantined or advisory failure never fails the gate, so it stops no run either (an error does both)
        self.failure_limit = FailureLimit(args.max_failures, muted=lambda result: quarantine.reason_for(
            result.suite, result.eval_id) is not None or (floor is not None and floor.advisory_for(result) is not None)
        ) if args.max_failures is not None else None
        return None

    def _read_plan(self, paths: list[Path]) -> None:
        """The eval files and the gate config, each problem said; refused (nothing run) on an error."""
        args = self.args
        self.plan = plan_paths(paths, args.repo_root, args.allow_outside_root, args.allow_unknown_keys,
                               strict=args.strict)
        for problem in self.plan.problems:
            # a value read from a secret `${{ VAR }}` included; eval-file text never becomes a workflow command
            print(inert_lines(one_line(redact(str(problem)))), file=sys.stderr)
        if self.plan.errors:
            unknown = " or pass --allow-unknown-keys" if any(p.unknown_key for p in self.plan.errors) else ""
            raise ConfigError(f"{len(self.plan.errors)} problem(s) in eval files; nothing was run "
                              f"(see `agentv-gate validate`{unknown})", problems=self.plan.problems)
        if self.args.verbose:
            for index, said in self.plan.generations.items():
                print(inert_lines(one_line(f"{self.plan.files[index]}: {said}")), file=sys.stderr)
        gate_config = find_gate_config(self.plan.files)
        self.quarantine = quarantine = load_quarantine(gate_config)
        quarantine.problems += quarantine.notices([(ref.suite, ref.id) for ref in self.plan.refs])
        self.judge_floor = load_judge_floor(gate_config)
        if self.judge_floor is not None:
            quarantine.problems += self.judge_floor.problems
        for problem in quarantine.problems:
            print(inert_lines(one_line(redact(str(problem)))), file=sys.stderr)
        if any(p.severity == "error" for p in quarantine.problems):
            raise ConfigError(f"the gate config {gate_config} has problems; nothing was run",
                              problems=quarantine.problems)
        for why in (self.judge_floor.below.values() if self.judge_floor is not None else ()):
            print(inert_lines(one_line(f"agentv-gate: {why} (judges in .agentv/gate.yaml): its failing verdicts "
                                       "are warnings, not failures of the gate")), file=sys.stderr)

    def _choose(self, shard: ShardSpec | None) -> None:
        """The pull-request loop's choice (filters, reruns; see _select), then this shard's part of it.

        The filters choose the cases, the shards deal out those: every shard job of a filtered run
        agrees on the whole (`shard_total`, which `merge` checks), and none is left with a glob that
        matches only other shards' cases."""
        self.rerun = load_rerun(self.args)
        self.selected = self.every_chosen = select_cases(self.args, self.plan.refs, self.rerun)
        affected = load_affected(self.args, self.selected, self.quarantine.agent_paths, self.plan.files)
        if affected is not None:  # before the shards, which deal out only the affected cases
            self.rerun, self.selected = affected
            self.every_chosen = self.selected
            self.affected = True
        if shard is not None:
            self.selected = select_shard(self.selected, shard)

    def _carry_for_targets(self) -> None:
        """--affected-since, once the targets are known: a base row is carried only for a target the case
        runs on now, and a case the base has rows for on only some of its targets now runs on every one
        (another `--target` is another agent). Every shard works this out alike, so they agree on the
        whole; the first shard runs those cases and writes the carried rows."""
        assert self.rerun is not None
        refs = {(ref.suite, ref.id): ref for ref in self.plan.refs}
        had: dict[tuple[str, str], set[str]] = {}
        for row in self.rerun.kept:
            had.setdefault((row.suite, row.eval_id), set()).add(row.target)
        stale = {key for key, targets in had.items() if set(self.resolver.target_names(refs[key])) != targets}
        partial = [ref for ref in self.plan.refs if (ref.suite, ref.id) in stale]
        if partial:
            print(f"agentv-gate: {len(partial)} case(s) have base rows for other targets than they run on now: "
                  "they run on every target", file=sys.stderr)
        self.rerun.kept = [row for row in self.rerun.kept if (row.suite, row.eval_id) not in stale]
        self.every_chosen = [*self.every_chosen, *partial]
        self.carried_total = len(self.rerun.kept)
        if not self.every_chosen:
            self._nothing_affected()
        shard = _shard_of(self.args)
        if shard is None or shard.index == 1:
            self.selected = [*self.selected, *partial]
        else:
            self.rerun.kept = []  # the first shard writes the carried rows, once

    def _nothing_affected(self) -> None:
        """No case is affected: never a quiet green run of nothing."""
        assert self.rerun is not None
        carried = len({(row.suite, row.eval_id) for row in self.rerun.kept})
        said = (f"--affected-since {self.rerun.previous}: NO CASE IS AFFECTED by this change; 0 cases run, "
                f"{carried} carried over")
        if not self.args.allow_empty_selection:
            self.resolver.close()
            raise NoCasesError(f"{said}: nothing was judged (pass --allow-empty-selection to take the carried "
                               "rows' verdict)")
        print(f"agentv-gate: warning: {said}: the verdict is the carried rows' (--allow-empty-selection)",
              file=sys.stderr)

    def _open_targets(self) -> None:
        """The response cache and the targets of every case, not just this shard's: a bad target name fails
        every shard alike. Then a rerun's cases on some targets only, and the cases left out for an unset
        variable (--skip-missing-env)."""
        args = self.args
        recording = getattr(args, "record", None) or getattr(args, "replay", None)
        # A recording holds the answers as the model gave them, and a replay gives only those: neither
        # reads the response cache.
        self.cache = None if args.no_cache or recording else ResponseCache(args.cache_dir or DEFAULT_CACHE_DIR)
        wrap, env_for = caching_wrapper(self.cache) if self.cache else None, None
        root = str(project_root(Path.cwd()))
        if getattr(args, "record", None) is not None:
            manifest = Manifest(_gate_version(), current_commit(), current_ref(), judges=args.record_judges)
            wrap = recording_wrapper(Recorder(args.record, manifest, root))
        elif getattr(args, "replay", None) is not None:
            replay = self.replay = Replay.open(args.replay, root)
            changes = agent_changes(replay.manifest.commit, self.quarantine.agent_paths, self.plan.files,
                                    since="the recording", ignore=[args.replay])
            if changes.changed:  # its answers are another agent's: none of them judges this one
                replay.agent_changed = changes.describe()
                print(f"agentv-gate: warning: {AGENT_CHANGED} ({replay.manifest.source}): {changes.describe()}; "
                      "no case can be judged from it (record again, with the keys)", file=sys.stderr)
            wrap = replaying_wrapper(replay)
            env_for = lambda targets: replay_env(targets, os.environ, replay)  # noqa: E731
            print(f"agentv-gate: replaying the answers recorded at {replay.manifest.source} in {args.replay} "
                  f"({len(replay.entries)} request(s){', judges too' if replay.manifest.judges else ''}); "
                  "nothing is sent to a model", file=sys.stderr)
        self.resolver = open_targets(args.targets, args.target, self.plan.refs, wrap=wrap,
                                      allow_unknown_keys=args.allow_unknown_keys,
                                      skip_missing_env=args.skip_missing_env, strict=args.strict,
                                      env_for=env_for)
        for warning in self.resolver.warnings:
            print(inert_lines(one_line(warning)), file=sys.stderr)
        if self.rerun is not None and self.affected:
            self._carry_for_targets()
        elif self.rerun is not None:
            self.selected = rerun_partial_cases(args, self.plan.refs, self.rerun, self.selected,
                                                self.resolver.target_names)
        self.left_out = _missing_env_rows(self.resolver, self.selected, args.threshold)
        if self.left_out:
            print(f"agentv-gate: {len(self.left_out)} case(s) not run: environment variables unset "
                  "(--skip-missing-env; each row names the variable)", file=sys.stderr)
        self.skipped = {(row.suite, row.eval_id, row.target) for row in self.left_out}

    def _open_outputs(self, heartbeat: float) -> None:
        """The console and the results file, which every result is written to as it comes."""
        args = self.args
        self.junit, self.results_path, self.html = output_paths(args.output_dir, args.junit, args.results)
        self.console = ConsoleReporter(quiet=args.quiet, verbose=args.verbose, heartbeat=heartbeat)
        try:
            self.writer = JsonlWriter(self.results_path)
        except ReportError:
            self.resolver.close()
            raise
        target_names = self.resolver.target_names
        self.planned = sum(len(target_names(ref)) for ref in self.selected) + len(self.carried)
        self.chosen = sum(len(target_names(ref)) for ref in self.every_chosen) + self.carried_total

    def _runnable_targets(self, case: Any) -> list[str]:
        return [t for t in self.resolver.target_names(case) if (case.suite, case.id, t) not in self.skipped]

    def stamp(self, result: CaseResult) -> CaseResult:
        """What a row says of the run that wrote it, so a reader can tell when rows are missing, and
        which version of its case it judged, so a later rerun can tell whether it still holds (a
        carried row keeps the digest it was carried for)."""
        result.run_id, result.run_rows = self.run_id, self.planned
        result.case_digest = self.digests.get((result.suite, result.eval_id), result.case_digest)
        result.content_digest = self.contents.get((result.suite, result.eval_id), result.content_digest)
        result.commit = result.commit or self.commit
        result.quarantined = self.quarantine.reason_for(result.suite, result.eval_id)
        result.baseline_fail_on = self.baseline.fail_on if self.baseline is not None else None
        result.advisory = self.judge_floor.advisory_for(result) if self.judge_floor is not None else None
        # a row carried from merged shards is this run's now: its old shard would read as part of a sharded run
        result.shard, result.shard_total = (self.args.shard, self.chosen) if self.args.shard else (None, None)
        return result

    # ---------------------------------------------------------------- run

    def run(self) -> int:
        """The cases, each result reaching `on_result` as it ends; the reports however the run ends."""
        orchestrator = self._orchestrator()
        previous = signal.signal(signal.SIGTERM, self.signals.handle)
        previous_int = signal.getsignal(signal.SIGINT)
        if previous_int is signal.default_int_handler:  # an ignored SIGINT (a background job) stays ignored
            signal.signal(signal.SIGINT, self.signals.handle)
        self.console.start(self.planned - len(self.carried))  # carried rows of a rerun are not run again
        allow_new_scripts()  # an earlier interrupted run in this process refused them
        try:
            for row in self.left_out:
                self.on_result(row)
            runnable = [ref for ref in self.selected if self._runnable_targets(ref)]
            for resolver, cases in (self.resolver.each_file(runnable) if isinstance(self.resolver, PerFileTargets)
                                    else [(self.resolver, runnable)]):
                plan_batches(resolver, cases)
            orchestrator.run(each_target(self.plan.read_cases(runnable), self._runnable_targets))
            for ref in self.plan.vanished:
                self.on_result(_vanished_result(ref, self.args.threshold))
            self._rerun_suspicious()
        except KeyboardInterrupt as exc:
            return self.interrupted(first_signal(exc) or exc)
        except ReportError:
            kill_running_scripts()  # the run stops here: no judge may outlive it
            raise
        except Exception as exc:  # a bug of ours: report what finished, then `cli.main` says what broke (exit 4)
            signalled = first_signal(exc)
            if signalled is not None:
                return self.interrupted(signalled)
            self.stopped()
            raise
        finally:
            self._close(previous, previous_int)
        return self.finish()

    def _rerun_suspicious(self) -> None:
        """The per-case guard's re-runs (`_reruns`): only with a baseline, trials and `--fail-on` past
        `all`, and only for a run that went to its end (a stopped run fails whatever they would show).
        A row `--rerun-failed` kept (its row passed: pass_at_k passes one trial of three) is re-run as any:
        its case is as written now (else it would have run again), and left undecided it would only be
        "suspicious", which passes the gate on a case the guard fails; its earlier re-runs count, numbered on."""
        baseline = self.baseline
        # the trials may come from `--trials` or from a suite's `execution.trials` (a paired test either way)
        if baseline is None or baseline.fail_on == "all" or self.args.trials == 1 or (
                self.failure_limit is not None and self.failure_limit.message):
            return
        if self.replay is not None:
            # a recording holds one answer a request and the judges' trials it recorded: a re-run would judge
            # the same answer again, or find no recorded verdict and err, an error the guard would read as a failure
            undecided = undecided_cases(baseline, self.rows)
            if undecided and not self.args.quiet:
                print(inert_log_text(f"agentv-gate: per-case guard: no re-runs in a replay (the recording holds "
                                     f"the trials it recorded); {len(undecided)} case(s) stay undecided: "
                                     + ", ".join(one_line(key[1]) for key in undecided[:10])), file=sys.stderr)
            return
        kept = {(row.suite, row.eval_id) for row in self.rerun.kept} if self.rerun is not None else set()
        refs = {(ref.suite, ref.id): ref for ref in self.plan.refs if (ref.suite, ref.id) in kept}
        refs.update({(ref.suite, ref.id): ref for ref in self.selected})
        earlier = Reruns({(row.suite, row.eval_id, row.target): [dict(t) for t in row.reruns]
                          for row in self.rerun.kept if row.reruns}) if self.rerun is not None else Reruns()

        def cases_of(keys: set[tuple[str, str, str]]) -> Iterator[EvalCase]:
            wanted = [refs[(suite, case_id)] for suite, case_id, _ in sorted(keys) if (suite, case_id) in refs]
            for case in each_target(self.plan.read_cases(wanted), self._runnable_targets):
                if (case.suite, case.id, self.resolver.target_name(case)) in keys:
                    yield case

        # the run's own budgets (`--budget-usd`, each suite's `total_budget_usd`), whose spending goes on from the
        # run's into each round: never `--max-failures`, whose count is of cases, not of a case's re-run trials
        stop = StopPolicies([policy for policy in self.stop_policies.policies if policy is not self.failure_limit])

        def orchestrator_for(settings: RunSettings) -> Orchestrator:
            return Orchestrator(self.resolver, self.registry,
                                replace(self.settings, trials=settings.trials, first_trial=settings.first_trial,
                                        spent_usd=settings.spent_usd),
                                stop=stop, hooks=self.hooks)

        self.reruns = earlier
        rerun_suspicious(baseline, self.rows, self.settings.trials, cases_of, orchestrator_for, self.args.quiet,
                         self.reruns)

    def _orchestrator(self) -> Orchestrator:
        args, resolver = self.args, self.resolver
        registry = build_evaluator_registry(None, resolver.judge_resolver(),
                                            judge_timeout_seconds=args.judge_timeout or DEFAULT_JUDGE_TIMEOUT_SECONDS,
                                            targets=resolver)
        # Without --workers, enough threads for the most `workers:` any target declares.
        workers = args.workers or min(MAX_WORKERS, max(DEFAULT_WORKERS, resolver.most_workers() or 0))
        self.settings = settings = RunSettings(threshold=args.threshold, workers=workers, keep_results=False,
                                               trials=args.trials, trials_strategy=args.trials_strategy,
                                               rejudge_on_fail=args.rejudge_on_fail)
        self.registry = registry
        if args.trials is not None and args.trials > 1 and not args.quiet:
            print(f"agentv-gate: --trials {args.trials}: every trial runs, also under pass_at_k (AgentV stops at "
                  "the first passing trial; the verdict is the same), so each case has its pass count for a "
                  "paired comparison", file=sys.stderr)
        self.hooks = WorkspaceHooks(repo_cache=Path(args.cache_dir or DEFAULT_CACHE_DIR) / "repos")
        run_budget = [RunBudget(args.budget_usd)] if args.budget_usd is not None else []
        self.stop_policies = stop = execution_block_policies(*([self.failure_limit] if self.failure_limit else []), *run_budget)
        console = self.console
        return Orchestrator(resolver, registry, settings, on_result=self.on_result, stop=stop, hooks=self.hooks,
                            on_start=lambda case: console.case_started((case.suite, case.id, case.source_line)),
                            dependent_suites={ref.suite for ref in self.selected if ref.depends_on})

    def on_result(self, result: CaseResult) -> None:
        """One case ended: its row goes to the results file and the console at once (on the main thread,
        as `write_partial_reports`)."""
        if self.replay is not None:
            result.replayed = self.replay.manifest.source
            if result.verdict == "error" and result.eval_id in self.replay.missed and \
                    "not in the recording" in (result.error or ""):
                result.failure_reason_code = NOT_RECORDED
        row = ReportRow.of(self.stamp(result), evaluators=self.args.verbose, review=True)  # report.html shows all
        with self.signals.recording():
            self.writer.write(result)
            self.rows.append(row)
            self.usage.add(result)
        self.console.case_done(result)

    def interrupted(self, exc: KeyboardInterrupt) -> int:
        """Ctrl-C or SIGTERM: the scripts still running end, the reports of what finished are written."""
        # A second signal (Ctrl-C twice; CI sends SIGINT, then SIGTERM) must not cut the reports short.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        # Hanging judges and cli targets (and their grandchildren) die now, so no process outlives
        # the run and the worker threads waiting on them let the interpreter exit.
        kill_running_scripts()
        print(f"\nagentv-gate: interrupted; writing {len(self.rows)} finished case(s) of {self.planned}",
              file=sys.stderr)
        terminated = isinstance(exc, _Terminated)
        self.write_partial_reports("the run was interrupted (SIGTERM)" if terminated
                                   else "the run was interrupted (SIGINT)")
        return EXIT_SIGTERM if terminated else EXIT_SIGINT

    def stopped(self) -> None:
        """A bug of ours stopped the run: the reports of what finished, before `cli.main` says what broke."""
        kill_running_scripts()
        print(f"agentv-gate: stopped by an internal error; writing {len(self.rows)} finished case(s) of "
              f"{self.planned}", file=sys.stderr)
        self.write_partial_reports("the run stopped on an internal error")

    def _close(self, previous: Any, previous_int: Any) -> None:
        """However the run ended: the live console, the suites' after_all hooks, the signal handlers, the
        processes left behind, the targets, the cache's line."""
        self.console.end_live()  # a run stopped by a report error must not leave a heartbeat or a group open
        finish_hooks(self.hooks)
        # After an interruption both stay ignored: the process is on its way out with its exit code,
        # and a late signal must not turn that into death by signal.
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:
            signal.signal(signal.SIGTERM, previous)
            if previous_int is not None:
                signal.signal(signal.SIGINT, previous_int)
        end_orphans()  # what judges and targets left running in sessions of their own ends with the run
        self.resolver.close()
        report_cache(self.cache, self.args.quiet)

    # ---------------------------------------------------------------- the reports

    def traffic(self) -> list[TargetTraffic]:
        return [TargetTraffic(name, s.calls, s.rate_limited, s.waited_seconds)
                for name, s in sorted(self.resolver.limiter_stats().items())]

    def _info(self) -> RunInfo:
        return RunInfo.for_run(self.started_at, time.monotonic() - self.started, self.commit)

    def finish(self) -> int:
        """The run ended on its own: every report, and the exit code they decide."""
        self.writer.close()
        write_reruns(self.results_path, self.reruns)
        report_traffic(self.traffic(), self.args.quiet)
        code = write_reports(self.rows, self.junit, self.results_path, self.console, planned=self.planned,
                             html=self.html, baseline=self.baseline,
                             stopped=self.failure_limit.message if self.failure_limit else None,
                             traffic=self.traffic(), usage=self.usage, comment=self.comment, info=self._info())
        hint = import_hint(self.rows)
        if hint:
            print(inert_lines(redact(f"agentv-gate: {hint}")), file=sys.stderr)
        return code

    def write_partial_reports(self, why: str) -> None:
        """The reports of a run cut short: its own exit code stands, so a report error is only said.
        Each case not run becomes an error row saying so (`why`): in the results JSONL, so that a
        `merge` of it fails, and as an `<error>` testcase in the JUnit file, so a dashboard reading
        it never shows the cut-short run as green. Closes the writer: results reach `on_result` on
        this thread only, so no case finishes after `finished` is taken."""
        finished = {(row.suite, row.eval_id, row.target) for row in self.rows}
        unfinished = [_not_run_result(ref, target, why, self.args.threshold) for ref in self.selected
                      for target in self.resolver.target_names(ref) if (ref.suite, ref.id, target) not in finished]
        try:
            for result in unfinished:
                self.writer.write(self.stamp(result))
            self.writer.close()
            write_reruns(self.results_path, self.reruns)
        except ReportError as exc:
            print(f"agentv-gate: {exc}", file=sys.stderr)
        not_run = [ReportRow.of(result) for result in unfinished]
        try:
            write_reports(self.rows, self.junit, self.results_path, self.console, planned=self.planned,
                          html=self.html, baseline=self.baseline,
                          stopped=self.failure_limit.message if self.failure_limit else None,
                          traffic=self.traffic(), not_run=not_run, usage=self.usage, comment=self.comment,
                          info=self._info())
        except ReportError as exc:
            print(f"agentv-gate: {exc}", file=sys.stderr)


def first_signal(exc: BaseException) -> KeyboardInterrupt | None:
    """The first signal behind `exc`, if a signal started it.

    A second signal (CI sends SIGINT, then SIGTERM) can land while the first one's KeyboardInterrupt
    unwinds through a `threading.Condition.wait`, before the wait takes its lock back: leaving the
    `with` then raises `RuntimeError: release unlocked lock`, with the interrupts only in its context.
    That run was interrupted, not stopped by a bug, and the first signal says how (130 or 143)."""
    first = None
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, KeyboardInterrupt):
            first = current
        current = current.__context__
    return first


def _gate_version() -> str:
    from .. import __version__

    return str(__version__)


def _shard_of(args: argparse.Namespace) -> ShardSpec | None:
    if args.shard is None:
        return None
    try:
        return ShardSpec.parse(args.shard)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def finish_hooks(hooks: WorkspaceHooks) -> None:
    """Every started suite's after_all hook, however the run ended; what failed in after_* hooks is said."""
    hooks.finish()
    for warning in hooks.warnings:
        # It quotes what the hook printed: a CI log scans stderr for workflow commands too, and a
        # hook's traceback may hold a key.
        print(inert_lines(redact(f"agentv-gate: warning: {warning}")), file=sys.stderr)


def _error_row(ref: CaseRef, error: str, threshold: float | None, **fields: Any) -> CaseResult:
    """The row of a case that produced no result of its own: an error saying why, at the case's line, with
    the pass mark it would have been judged at (`--threshold` is `threshold`)."""
    return CaseResult(eval_id=ref.id, suite=ref.suite, file=str(ref.source_file), line=ref.source_line,
                      verdict="error", error=error, threshold=ref.pass_mark(threshold), **fields)


def _vanished_result(ref: CaseRef, threshold: float | None) -> CaseResult:
    """A case checked at the start that could not be built again when its turn came. The eval files are
    read once, but building a case reads its judges' files again: one changed or deleted mid-run."""
    return _error_row(ref, f"case '{ref.id}' at {ref.source_file}:{ref.source_line} could not be built again when "
                      "the run reached it (a file it reads, such as a judge's script or prompt, changed or went "
                      "during the run); run again", threshold)


def _missing_env_rows(resolver: TargetResolver | PerFileTargets, selected: list[CaseRef],
                      threshold: float | None) -> list[CaseResult]:
    """With --skip-missing-env: a not-run row for each case (on each target) whose target or judge reads
    an unset variable, naming it; the run leaves those out and reports them, never as a pass."""
    rows = []
    for ref in selected:
        for target in resolver.target_names(ref):
            missing = resolver.missing_env_for(ref, target)
            if missing:
                why = "; ".join(dict.fromkeys(p.message for p in missing))
                rows.append(_error_row(ref, f"not run: {why} (--skip-missing-env)", threshold, target=target,
                                       failure_reason_code=NOT_RUN_MISSING_ENV))
    return rows


def _not_run_result(ref: CaseRef, target: str, why: str, threshold: float | None) -> CaseResult:
    """A case a cut-short run never finished: an error row saying so."""
    return _error_row(ref, f"not run: {why}", threshold, target=target, failure_reason_code=NOT_RUN_INTERRUPTED)
