"""Which cases a run executes: `--test-id`/`--suite` globs, `--list`, and reruns of a previous results file.

`--retry-errors PREV.jsonl` runs again only the cases that errored in PREV (AgentV's flag);
`--rerun-failed PREV.jsonl` also those that failed. The rows of every other case are carried over
as they were, so the results file the rerun writes is complete: the new rows replace the old ones.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError, NoCasesError, UsageError
from ..loader import CaseRef, filter_refs, left_out_dependencies, with_dependencies
from ..models import CaseResult
from ..redaction import redact
from ..report.paths import display_path
from ..report.text import inert_log_text, one_line
from ._previous import read_previous


@dataclass
class Rerun:
    """The previous results: which cases run again, and the rows kept as they were."""

    previous: Path
    rows: list[CaseResult]
    again: set[tuple[str, str]]
    """(suite, test id) of each case PREV says to run again."""
    kept: list[CaseResult] = field(default_factory=list)
    """Set by `select_cases`: every row of PREV whose case does not run again, as it was."""


def run_digest(args: argparse.Namespace, ref: CaseRef) -> str:
    """What a row of `ref` judged in this run: the case as written now (`CaseRef.digest`), the
    threshold it is judged against (its own, else `--threshold`, else the default) and `--trials`.
    A previous row with another digest judged something else: a pass at 0.5 must not be carried
    into a run gating at 0.9, nor a pass of assertions the case no longer has."""
    settings = f"{ref.pass_mark(getattr(args, 'threshold', None))!r}|{getattr(args, 'trials', None)!r}"
    if getattr(args, "trials_strategy", None):
        settings += f"|{args.trials_strategy}"
    if getattr(args, "rejudge_on_fail", None) is not None:  # a pass confirmed by votes is another judgement
        settings += f"|rejudge {args.rejudge_on_fail}"
    return hashlib.sha256(f"{ref.digest}|{settings}".encode()).hexdigest()[:16]


def load_rerun(args: argparse.Namespace) -> Rerun | None:
    retry, failed = getattr(args, "retry_errors", None), getattr(args, "rerun_failed", None)
    if retry is not None and failed is not None:
        raise UsageError("--retry-errors and --rerun-failed cannot be combined (--rerun-failed already "
                         "runs the errored cases again)")
    previous = retry or failed
    if previous is None:
        return None
    flag = "--retry-errors" if retry is not None else "--rerun-failed"
    if getattr(args, "shard", None):
        raise UsageError(f"{flag} cannot be combined with --shard: rerun the merged results in one job")
    rows = read_previous(previous, f"{flag} {previous} holds no results to rerun")
    chosen = [r for r in rows if r.verdict == "error" or (failed is not None and r.verdict != "pass")]
    again = {(r.suite, r.eval_id) for r in chosen}
    return Rerun(Path(previous), rows, again)


def select_cases(args: argparse.Namespace, refs: Sequence[CaseRef], rerun: Rerun | None) -> list[CaseRef]:
    """`refs` narrowed by the globs, then to the cases `rerun` runs again: those PREV says to, and
    those PREV has no row for (they never ran).

    Globs that match no case are a mistake to say (exit 3), not an empty green run. A case PREV
    says to run again that is no longer in the eval files (or that the globs leave out) keeps its
    old row, so it still counts."""
    test_ids, suites = getattr(args, "test_id", None) or [], getattr(args, "suite", None) or []
    tags, exclude_tags = getattr(args, "tag", None) or [], getattr(args, "exclude_tag", None) or []
    selected = filter_refs(refs, test_ids, suites, tags, exclude_tags)
    if not selected and refs and (test_ids or suites or tags or exclude_tags):
        given = " ".join([*(f"--test-id {g!r}" for g in test_ids), *(f"--suite {g!r}" for g in suites),
                          *(f"--tag {t!r}" for t in tags), *(f"--exclude-tag {t!r}" for t in exclude_tags)])
        raise NoCasesError(f"{given} matched none of the {len(refs)} case(s) found")
    left_out = left_out_dependencies(selected)
    if left_out:  # AgentV 4.42 refuses to run a test whose dependency its filter left out
        case, dependency = left_out[0]
        raise ConfigError(f"{case.source_file}:{case.source_line}: test '{one_line(case.id)}' depends on "
                          f"'{one_line(dependency)}', which the filters leave out: select it too "
                          f"({len(left_out)} such dependency(ies))")
    if rerun is None:
        return selected
    present = {(ref.suite, ref.id) for ref in refs}
    chosen_keys = {(ref.suite, ref.id) for ref in selected}
    for suite, eval_id in sorted(rerun.again - chosen_keys):
        # The id and suite come from PREV, written from a pull request's eval files: one line, inert.
        where = "left out by the filters" if (suite, eval_id) in present else "no longer in the eval files"
        print(inert_log_text(redact(f"agentv-gate: warning: case '{one_line(eval_id)}' of {one_line(suite)} is in "
                                    f"{rerun.previous} but {where}; its old row is kept")), file=sys.stderr)
    # A case PREV has no row for never ran (PREV is of an interrupted run, or older than the case):
    # it runs now, or the rerun's reports would leave it out and could pass without it.
    had = {(row.suite, row.eval_id) for row in rerun.rows}
    unseen = [ref for ref in selected if (ref.suite, ref.id) not in had]
    if unseen:
        print(f"agentv-gate: {len(unseen)} case(s) have no row in {rerun.previous} (not run there): "
              "they run too", file=sys.stderr)
    # A case PREV judged in another version (its evaluators, input or threshold changed since, or a
    # row of an older agentv-gate that does not say): its old pass says nothing of it now.
    now = {(ref.suite, ref.id): run_digest(args, ref) for ref in selected}
    changed = {(row.suite, row.eval_id) for row in rerun.rows
               if (row.suite, row.eval_id) in now and row.case_digest != now[(row.suite, row.eval_id)]}
    if changed - rerun.again:
        print(f"agentv-gate: {len(changed - rerun.again)} case(s) changed since {rerun.previous} (input, evaluators, judges, "
              "threshold or trials; or its rows do not say): they run again", file=sys.stderr)
    again = rerun.again | changed
    chosen = [ref for ref in selected if (ref.suite, ref.id) in again or (ref.suite, ref.id) not in had]
    # a case run again runs after its dependencies, as its first run did: they run again with it
    chosen = with_dependencies(chosen, selected)
    running = {(ref.suite, ref.id) for ref in chosen}
    # A case the filters leave out is not run; its old pass is carried only while it judged the case as it is
    # now: a pass of an earlier version (its assertions since changed) would be a pass of a case never run.
    filtered_out = {(ref.suite, ref.id): ref for ref in refs if (ref.suite, ref.id) not in now}
    stale = set()
    for row in rerun.rows:
        ref = filtered_out.get((row.suite, row.eval_id))
        if ref is not None and row.verdict == "pass" and row.case_digest != run_digest(args, ref):
            stale.add((row.suite, row.eval_id))
    if stale:
        print(f"agentv-gate: {len(stale)} case(s) left out by the filters changed since {rerun.previous} (input, "
              "evaluators, judges, threshold or trials): their old passes are not carried", file=sys.stderr)
    rerun.kept = [row for row in rerun.rows if (row.suite, row.eval_id) not in running | stale]
    return chosen


def rerun_partial_cases(args: argparse.Namespace, refs: Sequence[CaseRef], rerun: Rerun,
                        selected: list[CaseRef], targets_of: Callable[[CaseRef], list[str]]) -> list[CaseRef]:
    """`selected` plus each case PREV has rows for on only some of its targets (a matrix run cut
    short between them): it runs again on every target and its old rows go, so no target's row is
    left out of the rerun's reports."""
    targets_had: dict[tuple[str, str], set[str]] = {}
    for row in rerun.kept:
        targets_had.setdefault((row.suite, row.eval_id), set()).add(row.target)
    running = {(ref.suite, ref.id) for ref in selected}
    wanted = filter_refs(refs, getattr(args, "test_id", None) or [], getattr(args, "suite", None) or [],
                         getattr(args, "tag", None) or [], getattr(args, "exclude_tag", None) or [])
    partial = [ref for ref in wanted if (ref.suite, ref.id) in targets_had and (ref.suite, ref.id) not in running
               and not set(targets_of(ref)) <= targets_had[(ref.suite, ref.id)]]
    if partial:
        print(f"agentv-gate: {len(partial)} case(s) have rows in {rerun.previous} for only some of their targets: "
              "they run again on every target", file=sys.stderr)
        again = {(ref.suite, ref.id) for ref in partial}
        rerun.kept = [row for row in rerun.kept if (row.suite, row.eval_id) not in again]
    return [*selected, *partial]


def list_cases(refs: Sequence[CaseRef]) -> None:
    """`--list`: one line per case the run would execute (file:line, then the test id); runs nothing."""
    for ref in refs:
        # The file name and id are the repository's text: one line per case, inert in a CI log; an
        # id may read a secret-named `${{ VAR }}`, hidden here as in every report.
        line = f"{one_line(display_path(str(ref.source_file)))}:{ref.source_line}\t{one_line(ref.id)}"
        print(inert_log_text(redact(line)))
    print(f"agentv-gate: {len(refs)} case(s) would run", file=sys.stderr)
