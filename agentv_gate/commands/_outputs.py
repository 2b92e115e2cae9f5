"""The end `run` and `merge` share: where the reports go, writing them, and the cache's one line.

A merged report must be the one a single run would have written, so both commands finish here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ..errors import EXIT_FAILED, EXIT_OK, ReportWriteError
from ..report import summarise
from ..report.console import ConsoleReporter
from ..report.github import write_github_reports
from ..report.html import html_path_for, write_html
from ..report.junit import write_junit
from ..report.rows import ReportedCase
from ..targets.cache import ResponseCache


def output_paths(output_dir: Path, junit: Path | None, results: Path | None) -> tuple[Path, Path, Path]:
    """The JUnit, JSONL and HTML paths: JUnit and JSONL as given, else their usual names in `output_dir`;
    report.html beside the JUnit file."""
    junit = junit or output_dir / "junit.xml"
    return junit, results or output_dir / "results.jsonl", html_path_for(junit, output_dir)


def write_reports(results: Sequence[ReportedCase], junit: Path, results_path: Path, console: ConsoleReporter,
                  planned: int | None = None, html: Path | None = None) -> int:
    """Write the end-of-run reports; the exit code says whether the gate passed.

    `planned` is how many cases the run set out to run, so an interrupted run's reports say it
    was cut short rather than showing the finished subset as a pass. A JUnit file that cannot be
    written raises `ReportWriteError`: the gate's verdict has nowhere to go. The HTML page (at
    `html`, when given), the GitHub summary and annotations are extras: failing to write them is
    said, and the verdict stands.
    """
    write_junit(results, junit)
    summary = summarise(results, planned)
    if html is not None:
        try:
            write_html(results, html, planned)
        except ReportWriteError as exc:
            print(f"agentv-gate: {exc}", file=sys.stderr)
            html = None  # not there: no output or summary line may point at it
    if os.environ.get("GITHUB_ACTIONS") == "true":
        try:
            write_github_reports(results, junit_path=junit, results_path=results_path, report_path=html,
                                 planned=planned)
        except ReportWriteError as exc:
            print(f"agentv-gate: {exc}", file=sys.stderr)
    console.finish(results, planned)
    return EXIT_OK if summary.ok else EXIT_FAILED


def report_cache(cache: ResponseCache | None, quiet: bool) -> None:
    """One stderr line when the cache was used; a cache that could not be written is said even with --quiet."""
    if cache is None or not (cache.stats.hits or cache.stats.misses):
        return
    if not quiet or cache.stats.write_errors:
        print(f"agentv-gate: response cache {cache.root}: {cache.stats.describe()}", file=sys.stderr)
