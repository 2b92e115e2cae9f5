"""Console: live progress only on a terminal, a clean summary table, totals that agree with `summarise`."""

from __future__ import annotations

import io
import threading

import pytest

from agentv_gate.report import summarise
from agentv_gate.report.console import ConsoleReporter, render_table
from tests.helpers.reports import case_result
from tests.helpers.terminal import read_pty

case = case_result


RESULTS = [
    case("p1", line=1),
    case("f1", "fail", line=5, score=0.25, misses=["missing 'Jupiter'", "second miss"]),
    case("e1", "error", line=9, suite="evals/b.yaml", error="judge exited with code 1\nTraceback"),
]






def test_summary_counts() -> None:
    s = summarise(RESULTS)
    assert (s.total, s.passed, s.failed, s.errors) == (3, 1, 1, 1)
    assert s.pass_rate == pytest.approx(1 / 3) and not s.ok
    assert summarise([case("a")]).ok and not summarise([]).ok and summarise([]).pass_rate == 0.0
    assert s.describe() == "3 cases: 1 passed, 1 failed, 1 error (pass rate 33.3%)"


def test_not_a_terminal_gets_a_line_per_case_and_the_summary_at_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "160")  # the table fits the terminal the tests happen to run in otherwise
    progress, out = io.StringIO(), io.StringIO()
    reporter = ConsoleReporter(progress=progress, out=out, github=False)
    reporter.start(3)
    for r in RESULTS:
        reporter.case_done(r)
    assert progress.getvalue() == (
        "PASS  evals/a.yaml p1  1.000 >= 0.800  0.00s\n"
        "FAIL  evals/a.yaml f1  0.250 < 0.800  0.00s  missing 'Jupiter'\n"
        "ERROR evals/b.yaml e1  0.000 < 0.800  0.00s  error: judge exited with code 1 Traceback\n")
    assert out.getvalue() == "", "the table waits for the end"
    live = progress.getvalue()
    text = reporter.finish(RESULTS)
    assert out.getvalue() == text and progress.getvalue() == live
    lines = text.splitlines()
    assert lines[0].split() == ["VERDICT", "CASE", "SUITE", "SCORE", "THRESHOLD", "FIRST", "MISS"]
    assert [line.split()[0] for line in lines[1:4]] == ["ERROR", "FAIL", "PASS"]
    assert lines[1].split()[1:5] == ["e1", "evals/b.yaml", "0.000", "0.800"]
    assert lines[1].endswith("error: judge exited with code 1 Traceback")
    table = text.split("\n\n", 1)[0]
    assert lines[2].endswith("missing 'Jupiter'") and "second miss" not in table  # below it, in the details
    assert lines[-1] == "agentv-gate FAILED: 3 cases: 1 passed, 1 failed, 1 error (pass rate 33.3%)"
    assert "\x1b" not in text


def test_terminal_gets_a_progress_line_rewritten_in_place(tty: tuple[io.TextIOWrapper, int]) -> None:
    writer, master = tty
    reporter = ConsoleReporter(progress=writer, out=io.StringIO(), github=False)
    assert reporter.live
    reporter.start(3)
    for r in RESULTS:
        reporter.case_done(r)
    seen = read_pty(master)
    assert "\n" not in seen, "progress must rewrite one line, not scroll"
    frames = [f.replace("\x1b[K", "") for f in seen.split("\r") if f]
    assert frames == ["[0/3] 0 failed, 0 errors",
                      "[1/3] 0 failed, 0 errors · last: p1 pass",
                      "[2/3] 1 failed, 0 errors · last: f1 fail",
                      "[3/3] 1 failed, 1 error · last: e1 error"]
    reporter.finish(RESULTS)
    assert read_pty(master) == "\r\x1b[K", "the progress line is cleared before the summary"


def test_quiet_run_shows_no_progress_even_on_a_terminal(tty: tuple[io.TextIOWrapper, int]) -> None:
    writer, master = tty
    reporter = ConsoleReporter(quiet=True, progress=writer, out=io.StringIO(), github=False)
    reporter.start(1)
    reporter.case_done(RESULTS[0])
    assert not reporter.live and read_pty(master) == ""


def test_untrusted_text_cannot_drive_the_terminal_or_the_ci_log() -> None:
    evil = [case("id\x1b[2J\x1b]0;owned\x07::add-mask::x", "fail",
                 misses=["\x1b[31mred\x1b[0m ##[add-mask]secret\r\n::set-output name=a::b\x00"])]
    out = io.StringIO()
    text = ConsoleReporter(progress=io.StringIO(), out=out, colour=True).finish(evil)
    row = text.splitlines()[1]
    assert row.startswith("\x1b[31mFAIL")  # our colour, on our verdict
    ours_end = row.index("\x1b[0m") + len("\x1b[0m")
    assert "\x1b" not in row[ours_end:], "no escape sequence from the model survives"
    assert "##[" not in text and "## [add-mask]secret" in text
    assert "\x00" not in text and "\r" not in text
    assert all(not line.lstrip().startswith("::") for line in text.splitlines())


def test_progress_line_is_sanitised_too(tty: tuple[io.TextIOWrapper, int]) -> None:
    writer, master = tty
    reporter = ConsoleReporter(progress=writer, out=io.StringIO(), github=False)
    reporter.start(1)
    reporter.case_done(case("x\x1b[2J\n##[add-mask]y"))
    seen = read_pty(master).replace("\x1b[K", "")
    assert "\x1b[2J" not in seen and "##[" not in seen and seen.endswith("last: x ## [add-mask]y pass")


def test_many_passes_are_counted_not_listed_but_failures_always_are() -> None:
    results = [case(f"ok{i:03d}", line=i) for i in range(120)] + [case(f"bad{i}", "fail") for i in range(60)]
    lines = render_table(results, passed_shown=50)
    assert sum(1 for line in lines if line.startswith("FAIL")) == 60
    assert sum(1 for line in lines if line.startswith("PASS")) == 50
    assert lines[-1] == "... and 70 more passed cases (--verbose lists them)"


def test_counts_stay_right_when_workers_report_at_once() -> None:
    reporter = ConsoleReporter(progress=io.StringIO(), out=io.StringIO())
    reporter.start(800)

    def work() -> None:
        for i in range(100):
            reporter.case_done(case("x", "fail" if i % 4 == 0 else "pass"))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert (reporter.done, reporter.failed, reporter.errors) == (800, 200, 0)


def test_empty_run_prints_just_the_totals() -> None:
    out = io.StringIO()
    assert ConsoleReporter(progress=io.StringIO(), out=out).finish([]) == (
        "agentv-gate FAILED: 0 cases: 0 passed, 0 failed, 0 errors (pass rate 0.0%)\n")
