"""The end `run` and `merge` share: where the reports go, writing them, and the cache's one line.

A merged report must be the one a single run would have written, so both commands finish here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..errors import EXIT_OK, ReportWriteError, UsageError
from ..report import TargetTraffic, summarise
from ..report.baseline.gate import Baseline, gate_exit
from ..report.console import ConsoleReporter
from ..report.github import md_cell, write_github_reports
from ..report.html import html_path_for, write_html
from ..report.junit import write_junit
from ..report.rows import ReportedCase
from ..report.run_info import RunInfo
from ..report.selection import selection_lines
from ..report.text import escape_html, inert_log_text, one_line
from ..report.usage import UsageTotals, console_lines, usage_html, usage_markdown
from ..targets.cache import ResponseCache
from ._comment import CommentSetup, plain_gate_line, post_comment


def output_paths(output_dir: Path, junit: Path | None, results: Path | None) -> tuple[Path, Path, Path]:
    """The JUnit, JSONL and HTML paths: JUnit and JSONL as given, else their usual names in `output_dir`;
    report.html beside the JUnit file."""
    junit = junit or output_dir / "junit.xml"
    return junit, results or output_dir / "results.jsonl", html_path_for(junit, output_dir)


def check_output_paths(output_dir: Path, junit: Path | None, results: Path | None,
                       results_flag: str = "--results") -> None:
    """Two reports written to one file: the one written last replaces the other (the results JSONL
    a merge or a rerun reads, as JUnit XML). Refused before anything runs; a device such as
    /dev/null may take several (it keeps nothing)."""
    junit_path, results_path, html = output_paths(output_dir, junit, results)
    named = [(f"--junit {junit}" if junit else f"the JUnit file {junit_path}", junit_path),
             (f"{results_flag} {results}" if results else f"the results file {results_path}", results_path),
             ("report.html (beside the JUnit file)", html)]
    seen: dict[str, str] = {}
    for label, path in named:
        if path.exists() and not path.is_file():
            continue
        key = os.path.realpath(path)
        if key in seen:
            raise UsageError(f"{seen[key]} and {label} name the same file: one report would replace the "
                             "other; give each its own path")
        seen[key] = label


def write_reports(results: Sequence[ReportedCase], junit: Path, results_path: Path, console: ConsoleReporter,
                  planned: int | None = None, html: Path | None = None, baseline: Baseline | None = None,
                  stopped: str | None = None, traffic: Sequence[TargetTraffic] = (),
                  not_run: Sequence[ReportedCase] = (), usage: UsageTotals | None = None,
                  comment: CommentSetup | None = None, info: RunInfo | None = None) -> int:
    """Write the end-of-run reports; the exit code says whether the gate passed.

    `planned` is how many cases the run set out to run, so an interrupted run's reports say it
    was cut short rather than showing the finished subset as a pass. A JUnit file that cannot be
    written raises `ReportWriteError`: the gate's verdict has nowhere to go. The HTML page (at
    `html`, when given), the GitHub summary and annotations are extras: failing to write them is
    said, and the verdict stands.

    With a `baseline`, every report also says what the change did to each case, and its `--fail-on`
    decides the verdict. `stopped` says why the run stopped starting cases early (`--max-failures`):
    the gate fails whatever the mode. `not_run` (a run cut short): an error row per case it never
    finished, which the JUnit file lists beside `results` (the other reports count them as not run).
    """
    summary = summarise(results, planned)
    against = None
    if baseline is not None:
        from ..report.baseline.render import baseline_report  # the comparison's modules: a run against a base only

        against = baseline_report(baseline, results, summary, stopped)
        results = against.shown(results)  # a row the gate fails on is a failure in every report
    write_junit([*results, *not_run], junit)
    notes = selection_lines(results)  # carried rows, replayed answers: said in every report alike
    notes_html = "".join(f"<p class=\"selection\">{escape_html(line)}</p>" for line in notes)
    notes_markdown = "".join(f"**{md_cell(line, 500)}**\n\n" for line in notes)
    if html is not None:
        if usage is not None:  # the judges are known from the rows' usage only: rows keep no judge names
            info = replace(info or RunInfo(), judges=tuple(usage.judges))
        try:
            write_html(results, html, planned,
                       extra=notes_html + (against.html if against else "") + (usage_html(usage) if usage else ""),
                       info=info)
        except ReportWriteError as exc:
            print(f"agentv-gate: {exc}", file=sys.stderr)
            html = None  # not there: no output or summary line may point at it
    if os.environ.get("GITHUB_ACTIONS") == "true":
        console.end_live(before_commands=True)  # annotations must start a line, outside any group
        try:
            write_github_reports(results, junit_path=junit, results_path=results_path, report_path=html,
                                 planned=planned,
                                 labels=against.labels() if against else None,
                                 warn_only=against.warn_only if against else (),
                                 extra_markdown=notes_markdown + (against.markdown if against else ""),
                                 traffic=traffic, usage_markdown=usage_markdown(usage) if usage else "")
        except ReportWriteError as exc:
            print(f"agentv-gate: {exc}", file=sys.stderr)
    console.finish(results, planned)
    for line in notes:
        print(inert_log_text(f"agentv-gate: {line}"))
    for line in console_lines(usage) if usage else []:
        print(line)
    if stopped:
        print(f"agentv-gate: {stopped}", file=sys.stderr)
    if against is not None:
        against.print_console(console.quiet)
    code = gate_exit(against, summary, stopped)
    if comment is not None:
        ok = code == EXIT_OK
        gate_line = " · ".join([against.gate_line if against is not None else plain_gate_line(ok, stopped), *notes])
        post_comment(comment, results, ok=ok, gate_line=gate_line, planned=planned,
                     comparison=against.comparison if against is not None else None,
                     base_rows=baseline.rows if baseline is not None else None, usage=usage,
                     paired=against.test if against is not None else None,
                     unknown=against.unknown if against is not None else ())
    return code


def report_cache(cache: ResponseCache | None, quiet: bool) -> None:
    """One stderr line when the cache was used; a cache that could not be written is said even with --quiet."""
    if cache is None or not (cache.stats.hits or cache.stats.misses):
        return
    if not quiet or cache.stats.write_errors:
        print(f"agentv-gate: response cache {cache.root}: {cache.stats.describe()}", file=sys.stderr)


def report_traffic(traffic: Sequence[TargetTraffic], quiet: bool) -> None:
    """One stderr line per HTTP target: calls, 429s, time waiting for its limits. A target that got
    429s is said even with --quiet: it explains a slow run."""
    for t in traffic:
        if not quiet or t.rate_limited:
            # The name is targets.yaml's (a pull request's text): one line, inert in a CI log.
            print(inert_log_text(f"agentv-gate: target '{one_line(t.target)}': {t.describe()}"), file=sys.stderr)
