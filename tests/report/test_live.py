"""The live log of a run off a terminal and in GitHub Actions: case lines, heartbeats, groups, line discipline."""

from __future__ import annotations

import io
import threading

import pytest

from agentv_gate.errors import UsageError
from agentv_gate.report.console import ConsoleReporter
from agentv_gate.report.github import annotation_lines
from agentv_gate.report.live import LiveLog, duration_text, heartbeat_seconds
from tests.helpers.github_runner import runner_commands
from tests.helpers.reports import case_result as case
from tests.helpers.terminal import read_pty


class Log(io.StringIO):
    """A log that tells a waiting test when a line containing `marker` arrives (no sleeping)."""

    def __init__(self, marker: str) -> None:
        super().__init__()
        self.marker = marker
        self.seen = threading.Event()

    def write(self, text: str) -> int:
        if self.marker in text:
            self.seen.set()
        return super().write(text)






def test_quiet_leaves_the_cases_that_did_not_pass_to_the_end() -> None:
    log = io.StringIO()
    reporter = ConsoleReporter(quiet=True, progress=log, out=io.StringIO(), github=False)
    reporter.start(3)
    for r in (case("ok"), case("bad", "fail", misses=["no Seine"]), case("broken", "error", error="timeout")):
        reporter.case_done(r)
    reporter.finish([])
    assert log.getvalue().splitlines() == []  # the end lists each case that did not pass, once


def test_a_line_shows_the_duration_and_never_starts_with_untrusted_text() -> None:
    log = io.StringIO()
    reporter = ConsoleReporter(progress=log, out=io.StringIO(), github=True)
    reporter.start(1)
    reporter.case_done(case("::add-mask::x\n::error::y", "fail", suite="evals/%0A::warning::s.yaml",
                            duration_ms=125_000, misses=["\x1b[2J##[add-mask]z\n::set-output name=a::b"]))
    reporter.finish([])
    text = log.getvalue()
    assert text.startswith("FAIL  evals/%0A::warning::s.yaml ::add-mask::x ::error::y  0.000 < 0.800  2m05s  ")
    assert runner_commands(text) == [], "nothing the runner would take for a command"
    assert "\x1b" not in text


def test_durations_read_at_a_glance() -> None:
    assert [duration_text(s) for s in (0.312, 12.44, 125, 3720)] == ["0.31s", "12.4s", "2m05s", "1h02m"]


def test_github_folds_passed_cases_by_suite_and_leaves_failures_outside() -> None:
    log = io.StringIO()
    reporter = ConsoleReporter(progress=log, out=io.StringIO(), github=True)
    reporter.start(5)
    for r in (case("a1"), case("a2"), case("a3", "fail"), case("b1", suite="evals/b.yaml"),
              case("b2", suite="evals/b.yaml")):
        reporter.case_done(r)
    reporter.end_live(before_commands=True)
    lines = log.getvalue().splitlines()
    assert [line.split("  1.000")[0].split("  0.000")[0] for line in lines] == [
        "::group::evals/a.yaml (passed cases)", "PASS  evals/a.yaml a1", "PASS  evals/a.yaml a2", "::endgroup::",
        "FAIL  evals/a.yaml a3",
        "::group::evals/b.yaml (passed cases)", "PASS  evals/b.yaml b1", "PASS  evals/b.yaml b2", "::endgroup::",
    ]


def test_github_never_draws_the_in_place_line_even_on_a_terminal(tty: tuple[io.TextIOWrapper, int]) -> None:
    """Under act with a pseudo-terminal the `\\r…\\x1b[K` line swallowed the next annotation."""
    writer, master = tty
    out = io.StringIO()
    reporter = ConsoleReporter(progress=writer, out=out, github=True)
    assert not reporter.live
    reporter.start(2)
    reporter.case_done(case("ok"))
    reporter.case_done(case("bad", "fail"))
    reporter.end_live(before_commands=True)
    seen = read_pty(master)
    assert "\r" not in seen.replace("\r\n", "\n") and "\x1b[K" not in seen
    assert seen.replace("\r\n", "\n").endswith("::endgroup::\nFAIL  evals/a.yaml bad  0.000 < 0.800  0.00s\n")


def test_a_drawn_progress_line_is_ended_before_workflow_commands(tty: tuple[io.TextIOWrapper, int]) -> None:
    """In any mode: a runner reads a command only at the start of a line, CR or not."""
    writer, master = tty
    reporter = ConsoleReporter(progress=writer, out=io.StringIO(), github=False)
    reporter.start(1)
    bad = case("bad", "fail")
    reporter.case_done(bad)
    reporter.end_live(before_commands=True)
    for line in annotation_lines([bad]):
        writer.write(line + "\n")
    writer.flush()
    seen = read_pty(master)
    after_progress = seen.rsplit("\x1b[K", 1)[1]
    assert after_progress.startswith("\r\n::error file=evals/a.yaml"), repr(seen)


def test_heartbeat_when_nothing_was_printed_for_a_while() -> None:
    log = Log("still running")
    reporter = ConsoleReporter(progress=log, out=io.StringIO(), github=False, heartbeat=0.05)
    reporter.start(3)
    reporter.case_started(("evals/a.yaml", "slow", 4))
    reporter.case_started(("evals/a.yaml", "done", 1))
    reporter.case_done(case("done", line=1))
    assert log.seen.wait(10), log.getvalue()
    reporter.finish([])
    beat = next(line for line in log.getvalue().splitlines() if "still running" in line)
    assert beat.startswith("[1/3] still running: 1 case (evals/a.yaml slow ")
    assert "0 failed, 0 errors" in beat and "elapsed, about " in beat and beat.endswith(" left")


def test_heartbeat_before_any_case_finished_says_the_time_left_is_unknown() -> None:
    log = Log("still running")
    live = LiveLog(log, quiet=True, github=True, heartbeat=0.05)
    live.start(2)
    assert log.seen.wait(10)
    live.end()
    first = log.getvalue().splitlines()[0]
    assert first.startswith("[0/2] still running: 0 cases · 0 failed, 0 errors · ")
    assert first.endswith("time left unknown until a case finishes")
    after = log.getvalue()
    assert not live._thread, "end() stops the heartbeat"
    assert log.getvalue() == after


def test_heartbeat_closes_an_open_group_so_it_is_seen() -> None:
    log = Log("still running")
    reporter = ConsoleReporter(progress=log, out=io.StringIO(), github=True, heartbeat=0.05)
    reporter.start(2)
    reporter.case_done(case("ok"))
    assert log.seen.wait(10)
    reporter.end_live()
    lines = log.getvalue().splitlines()
    assert lines[2] == "::endgroup::" and lines[3].startswith("[1/2] still running")
    assert lines.count("::endgroup::") == 1


@pytest.mark.parametrize(("value", "seconds"), [(None, 30.0), ("", 30.0), ("0.5", 0.5), ("120", 120.0)])
def test_heartbeat_interval_from_the_environment(value: str | None, seconds: float) -> None:
    env = {} if value is None else {"AGENTV_GATE_HEARTBEAT_SECONDS": value}
    assert heartbeat_seconds(env) == seconds


@pytest.mark.parametrize("value", ["0", "-1", "soon", "nan", "inf"])
def test_a_heartbeat_interval_that_makes_no_sense_is_refused(value: str) -> None:
    with pytest.raises(UsageError, match=f"AGENTV_GATE_HEARTBEAT_SECONDS='{value}' is not a number of seconds"):
        heartbeat_seconds({"AGENTV_GATE_HEARTBEAT_SECONDS": value})
