"""The live log's edges: a hostile suite name as a group title, the unit changes of a duration, a case
line exactly at its threshold, and what a heartbeat counts, all with a clock the test moves."""

from __future__ import annotations

import io

import pytest

from agentv_gate.report.live import LiveLog, case_line, duration_text
from tests.helpers.github_runner import runner_commands
from tests.helpers.reports import case_result as case


def runner_data(escaped: str) -> str:
    """A command's data part as the runner reads it (actions/runner ActionCommand.UnescapeData)."""
    return escaped.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("suite", ["evals/%0A::warning::forged.yaml", "evals/100%.yaml", "evals/%25%0D.yaml"])
def test_a_group_title_is_escaped_command_data_so_the_runner_shows_the_file_name(suite: str) -> None:
    log = io.StringIO()
    live = LiveLog(log, quiet=False, github=True, heartbeat=3600)
    live.case_done(case("ok", suite=suite))
    live.end()
    opened = log.getvalue().splitlines()[0]
    assert opened.startswith("::group::") and opened.endswith(" (passed cases)")
    assert runner_data(opened.removeprefix("::group::").removesuffix(" (passed cases)")) == suite
    assert [c.split("::")[1] for c in runner_commands(log.getvalue())] == ["group", "endgroup"]


@pytest.mark.parametrize(("seconds", "text"), [(9.994, "9.99s"), (10, "10.0s"), (59.94, "59.9s"), (60, "1m00s"),
                                               (3599.9, "59m59s"), (3600, "1h00m"), (3661, "1h01m"),
                                               (7140, "1h59m"), (7199, "1h59m"), (7200, "2h00m"),
                                               (10799, "2h59m")])
def test_a_duration_changes_unit_exactly_at_ten_sixty_and_3600_seconds(seconds: float, text: str) -> None:
    assert duration_text(seconds) == text


def test_a_case_line_shows_its_duration_in_seconds() -> None:
    assert case_line(case("c", duration_ms=59_990), "").endswith("  60.0s")  # 59.99 s, not a minute


@pytest.mark.parametrize(("score", "mark"), [(0.79, "<"), (0.8, ">="), (0.81, ">=")])
def test_a_case_line_marks_a_score_exactly_at_its_threshold_as_reaching_it(score: float, mark: str) -> None:
    line = case_line(case("c", "pass" if score >= 0.8 else "fail", score=score), "")
    assert f" {score:.3f} {mark} 0.800  " in line + "  "


def test_a_heartbeat_names_the_three_longest_running_and_counts_the_rest() -> None:
    clock = Clock()
    live = LiveLog(io.StringIO(), quiet=True, github=False, heartbeat=3600, clock=clock)
    live.total = 12
    live._started = clock.now  # no thread: the text alone
    for n, started in enumerate((5.0, 1.0, 3.0)):
        live.running[("evals/a.yaml", f"c{n}", n)] = clock.now + started
    clock.now += 20
    assert live.heartbeat_text() == ("[ 0/12] still running: 3 cases (evals/a.yaml c1 19.0s, evals/a.yaml c2 17.0s, "
                                     "evals/a.yaml c0 15.0s) · 0 failed, 0 errors · 20.0s elapsed, "
                                     "time left unknown until a case finishes")
    live.running[("evals/a.yaml", "c3", 3)] = clock.now
    live.case_done(case("e", "error", error="x"))
    live.case_done(case("f", "fail"))
    live.case_done(case("p"))
    text = live.heartbeat_text()
    assert "4 cases (evals/a.yaml c1 19.0s, evals/a.yaml c2 17.0s, evals/a.yaml c0 15.0s, 1 more)" in text
    assert ", 1 more) · 1 failed, 1 error · " in text
    assert text.endswith("20.0s elapsed, about 1m00s left")  # 20 s for 3 cases, 9 to go


def test_a_heartbeat_with_one_case_running_says_case() -> None:
    clock = Clock()
    live = LiveLog(io.StringIO(), quiet=True, github=False, heartbeat=3600, clock=clock)
    live.total = 2
    live._started = clock.now
    live.case_started(("evals/a.yaml", "slow", 1))
    assert "still running: 1 case (evals/a.yaml slow 0.00s)" in live.heartbeat_text()
    for n in range(2):
        live.case_done(case(f"e{n}", "error", error="x"))
    assert " · 0 failed, 2 errors · " in live.heartbeat_text()


@pytest.mark.parametrize(("chars", "cut"), [(199, False), (200, False), (201, True)])
def test_a_case_line_shows_200_characters_of_its_problem(chars: int, cut: bool) -> None:
    line = case_line(case("c", "fail"), "p" * chars)
    shown = line.split("  ")[-1]
    assert shown.startswith("p" * min(chars, 200)) and ("p" * 201 not in shown)
    assert shown.endswith("[truncated: 1 more characters]") is cut


@pytest.mark.parametrize(("chars", "cut"), [(80, False), (81, True)])
def test_a_heartbeat_shows_80_characters_of_a_running_case_s_name(chars: int, cut: bool) -> None:
    clock = Clock()
    live = LiveLog(io.StringIO(), quiet=True, github=False, heartbeat=3600, clock=clock)
    live.case_started(("s" * chars, "i" * chars, 1))
    text = live.heartbeat_text()
    assert (("s" * chars + " ") in text) is (not cut)
    assert ("s" * 80) in text and ("s" * 81) not in text and ("i" * 80) in text and ("i" * 81) not in text


def test_a_closed_log_does_not_stop_the_run() -> None:
    log = io.StringIO()
    live = LiveLog(log, quiet=False, github=True, heartbeat=3600)
    log.close()
    live.case_done(case("ok"))
    live.case_done(case("bad", "fail"))
    live.end()
    assert (live.done, live.failed) == (2, 1)


class Lines(io.StringIO):
    """A log that tells a waiting test when a heartbeat line arrives."""

    def __init__(self) -> None:
        super().__init__()
        import threading

        self.beat = threading.Event()

    def write(self, text: str) -> int:
        if "still running" in text:
            self.beat.set()
        return super().write(text)


def test_a_heartbeat_comes_when_the_clock_says_it_is_due_and_not_before() -> None:
    """The heartbeat thread wakes on real time but decides on the log's clock: a clock that stands
    still is never due, one moved past the interval is due at once."""
    clock = Clock()
    log = Lines()
    live = LiveLog(log, quiet=True, github=False, heartbeat=0.05, clock=clock)
    live.start(1)
    try:
        assert not log.beat.wait(0.5), "a heartbeat before its interval passed on the log's clock"
        clock.now += 0.05
        assert log.beat.wait(10), "no heartbeat once it was due"
    finally:
        live.end()


@pytest.mark.parametrize("case_id", ["##[add-mask]leak", "x ##[set-output name=a]b", "###[stop-commands]t"])
def test_a_case_line_breaks_a_legacy_runner_command_in_a_case_id(case_id: str) -> None:
    """The runner reads `##[command]` anywhere in a line: an id from the pull request must not give one."""
    for verdict in ("pass", "fail"):
        line = case_line(case(case_id, verdict, suite="evals/##[warning]s.yaml"), "##[error]problem")
        assert "##[" not in line and "## [" in line, line
