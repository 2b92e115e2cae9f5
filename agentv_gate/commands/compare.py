"""`agentv-gate compare BASE.jsonl HEAD.jsonl`: what a change did to each case, and exit 1 if any regressed.

The verdict and the exit code are `run --baseline`'s (`report/baseline/gate.py`: `decide`, `gate_exit`), on
the head's rows as `run` wrote them: with several trials a case on both sides the paired test decides
(see `report/baseline/paired.py` and `--fail-on`); a head interrupted or stopped early, or a case the base
never judged failing now, fails as it fails the gate.

AgentV's `compare` (rows paired by test id; wins, losses and ties beyond `--threshold`), plus the
gate's question: did a case that passed on the base stop passing? Two files that share no case are
refused (exit 2): every case would be "new" or "removed", nothing could regress, and a green exit
would say nothing. Writes report.html (the head's rows with the comparison on top) and, under
GitHub Actions, the comparison into the job summary and an annotation per regressed case.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ..errors import ReportWriteError, UsageError
from ..execution.stop import NOT_RUN_INTERRUPTED
from ..models import CaseResult
from ..report import summarise
from ..report.baseline import paired
from ..report.baseline.compare import CaseChange, Comparison, Status, compare_results
from ..report.baseline.gate import Baseline, decide, gate_exit
from ..report.baseline.render import (
    base_side,
    comparison_html,
    comparison_json,
    comparison_markdown,
    delta_text,
    label_of,
    paired_console_lines,
    paired_html,
    paired_json,
    paired_markdown,
)
from ..report.github import annotation_lines, append_step_summary
from ..report.html import write_html
from ..report.jsonl import missing_shards, unfinished_runs
from ..report.rows import ReportedCase
from ..report.text import inert_json, inert_log_text, one_line
from ._baseline import check_alpha, check_max_trials, read_history
from ._outputs import output_paths
from ._previous import read_previous, stopped_shards


def _check_delta(name: str, value: float | None) -> None:
    if value is not None and not (math.isfinite(value) and 0 <= value <= 1):
        raise UsageError(f"{name} {value} is not in 0..1")


def render_text(comparison: Comparison, min_delta: float, test: paired.SuiteTest | paired.NoTest,
                line: str, unknown: Sequence[CaseChange] = ()) -> str:
    """A line per case that did not stay green, then AgentV's totals and the counts. `unknown`: the cases the
    gate fails on that the base never judged (`Verdict.unknown`), labelled so, right after the regressions."""
    ids = {id(c) for c in unknown}
    lines = []
    for change in sorted(comparison.changes, key=lambda c: (c.status != "regressed", id(c) not in ids, c.row.suite,
                                                            c.row.eval_id)):
        if change.status == "passing":
            continue
        base = "-" if change.base is None else base_side(change)
        head = "-" if change.head is None else f"{change.head.score:.3f} {change.head.verdict}"
        delta = f" ({delta_text(change)})" if delta_text(change) else ""
        lines.append(inert_log_text(f"{label_of(change, ids).upper()}: {one_line(change.name)} "
                                    f"[{one_line(change.row.suite)}] {base} -> {head}{delta}"))
    outcome = comparison.outcome(min_delta)
    lines.append(f"{outcome.wins} win(s), {outcome.losses} loss(es), {outcome.ties} tie(s) beyond {min_delta:g}; "
                 f"mean delta {outcome.mean_delta:+.3f} over {len(comparison.paired)} paired case(s)")
    lines.append(comparison.describe(unknown))
    lines += paired_console_lines(test)
    lines.append(inert_log_text(f"agentv-gate {line}"))  # it names cases, a pull request's text
    return "\n".join(lines) + "\n"


def _github(comparison: Comparison, held: list[ReportedCase], labels: dict[tuple[str, str, str], str],
            min_delta: float,
            test: paired.SuiteTest | paired.NoTest, line: str, json_out: bool = False,
            unknown: Sequence[CaseChange] = ()) -> None:
    """Job summary and one annotation per regressed case; failing to write them is said, not fatal.

    With `--json` the annotations go to stderr (the runner reads both streams), so stdout stays one
    JSON document for `compare --json > comparison.json`."""
    root = Path(os.environ["GITHUB_WORKSPACE"]) if os.environ.get("GITHUB_WORKSPACE") else None
    regressed: list[ReportedCase] = [c.head for c in comparison.regressed if c.head is not None]
    for annotation in annotation_lines(regressed + held, root, labels=labels):
        print(annotation, file=sys.stderr if json_out else sys.stdout)
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        markdown = ("## agentv-gate compare\n\n" + comparison_markdown(comparison, line, root, min_delta, unknown)
                    + paired_markdown(test))
        try:
            append_step_summary(markdown, os.environ["GITHUB_STEP_SUMMARY"])
        except ReportWriteError as exc:
            print(f"agentv-gate: {exc}", file=sys.stderr)


def _check_shards(comparison: Comparison, base_path: Path, base: list[CaseResult], head_path: Path,
                  head: list[CaseResult]) -> None:
    """Refuse a side that holds only some shards of a sharded run while the other side has cases it
    lacks: in HEAD those read as "removed" and in BASE their HEAD rows as "new", neither a
    regression, though they may just sit in a shard not given (and have regressed there). A shard
    compared with the same shard of the other side pairs every case, and is fine."""
    sides: tuple[tuple[str, Path, list[CaseResult], Status], ...] = (
        ("head", head_path, head, "removed"), ("base", base_path, base, "new"))
    for side, path, rows, status in sides:
        missing = missing_shards(rows)
        unpaired = comparison.with_status(status)
        if missing and unpaired:
            raise UsageError(f"the {side} results {path} hold only part of a sharded run ({missing}), and "
                             f"{len(unpaired)} case(s) of the other side are not in them; they may be in a shard "
                             "not given and have regressed there: join the shards with `agentv-gate merge` "
                             "and compare the merged results.jsonl")


def execute(args: argparse.Namespace) -> int:
    _check_delta("--min-delta", args.min_delta)
    _check_delta("--max-drop", args.max_drop)
    check_alpha(args.alpha)
    check_max_trials(args.max_trials)
    every_base = read_previous(args.base, f"the base results {args.base} hold no rows", keep_not_run=True)
    base = [row for row in every_base if row.failure_reason_code != NOT_RUN_INTERRUPTED]
    if not base:
        raise UsageError(f"the base results {args.base} hold no rows of cases that ran")
    head = read_previous(args.head, f"the head results {args.head} hold no rows", keep_not_run=True)
    unfinished = unfinished_runs(head)
    if unfinished:  # its missing cases would read as "removed", which is no regression
        raise UsageError(f"the head results {args.head} are incomplete: {unfinished}")
    comparison = compare_results(base, head, args.max_drop)
    _check_shards(comparison, args.base, every_base, args.head, head)
    if not comparison.paired:
        raise UsageError(f"{args.base} and {args.head} share no case (paired by suite and test id); "
                         "are they results of the same eval files?")
    flaky, earlier = read_history(args.history, base)
    alpha = paired.DEFAULT_ALPHA if args.alpha is None else args.alpha
    baseline = Baseline(args.base, base, args.fail_on, args.max_drop, alpha, flaky, args.max_trials, earlier,
                        [row for row in every_base if row.failure_reason_code == NOT_RUN_INTERRUPTED], who="compare")
    # the one verdict function `run --baseline` reads, on the head's rows as `run` would have written them
    summary, stopped = summarise(head), stopped_shards(head)
    verdict = decide(baseline, head, summary, stopped)
    comparison = verdict.comparison  # with the interrupted base's rows: a case renamed since pairs with its old row
    test = verdict.test if verdict.test is not None else paired.NoTest("no comparison")
    failed, line = not verdict.ok, verdict.gate_line
    shown = verdict.shown(head)
    held = [row for row, ran in zip(shown, head, strict=True) if row.verdict != ran.verdict]
    if args.json:
        # Printed to the CI log, whose runner takes `##[command]` anywhere in a line (ids are a PR's text).
        document = {**comparison_json(comparison, args.min_delta), "paired": paired_json(test),
                    "gate": {"failed": failed, "line": line}}
        sys.stdout.write(inert_json(json.dumps(document, indent=2, ensure_ascii=False)) + "\n")
    else:
        sys.stdout.write(render_text(comparison, args.min_delta, test, line, verdict.unknown))
    _, _, html = output_paths(args.output_dir, None, None)
    try:
        write_html(shown, html, extra=comparison_html(comparison, line, args.min_delta, verdict.unknown)
                   + paired_html(test))
    except ReportWriteError as exc:
        print(f"agentv-gate: {exc}", file=sys.stderr)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        unknown = [c.head for c in verdict.unknown if c.head is not None]
        _github(comparison, held + unknown, verdict.labels(), args.min_delta, test, line, json_out=args.json,
                unknown=verdict.unknown)
    return gate_exit(verdict, summary, stopped)
