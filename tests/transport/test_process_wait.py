"""Waiting for a judge or `cli` target to exit where the system has no pidfd (macOS runners).

Linux 5.3+ wakes the wait at the child's exit through a pidfd; macOS has no `os.pidfd_open`, and
the wait polls for the exit as Popen's does. Both must return at exit, time out alike, and read the
script's output and feed its stdin the same way (one loop, no thread per pipe).
"""

from __future__ import annotations

import os
import sys
import time

import pytest

from agentv_gate.transport.process import allow_new_scripts, run_script


@pytest.fixture(params=["pidfd", "no pidfd"])
def platform(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "pidfd" and not hasattr(os, "pidfd_open"):
        pytest.skip("this system has no pidfd_open")
    if request.param == "no pidfd":
        monkeypatch.delattr(os, "pidfd_open", raising=False)  # as on macOS
    allow_new_scripts()
    return str(request.param)


def test_the_wait_returns_when_the_child_exits(platform: str) -> None:
    started = time.monotonic()
    result = run_script([sys.executable, "-c", "raise SystemExit(3)"], "", 30)
    assert result.exit_code == 3 and not result.timed_out
    assert time.monotonic() - started < 10


def test_the_wait_times_out_on_a_child_that_hangs(platform: str) -> None:
    result = run_script([sys.executable, "-c", "import time; time.sleep(60)"], "", 0.3)
    assert result.timed_out and result.exit_code is None
    assert result.duration_ms < 10_000


def test_stdin_is_fed_while_stdout_and_stderr_are_read(platform: str) -> None:
    """A payload bigger than a pipe holds, echoed back on both pipes: neither side may wait for the other."""
    payload = "x" * 300_000 + "\n"
    script = "import sys; data = sys.stdin.read(); sys.stdout.write(data); sys.stderr.write(data)"
    result = run_script([sys.executable, "-c", script], payload, 30)
    assert result.ok and result.stdout == payload and result.stderr == payload


def test_a_child_that_never_reads_stdin_still_times_out(platform: str) -> None:
    result = run_script([sys.executable, "-c", "import time; time.sleep(60)"], "y" * 1_000_000, 0.3)
    assert result.timed_out


def test_a_child_that_exits_without_reading_a_big_stdin_is_fine(platform: str) -> None:
    result = run_script([sys.executable, "-c", "print('done')"], "z" * 1_000_000, 30)
    assert result.ok and result.stdout == "done\n"


def test_each_script_gets_the_environment_as_it_is_when_the_script_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The decoded environment is kept between starts: a variable set, changed or removed since the last
    start reaches the next script as it now is."""
    allow_new_scripts()
    show = [sys.executable, "-c", "import os; print(os.environ.get('GATE_PROBE', '<unset>'))"]
    monkeypatch.setenv("GATE_PROBE", "first")
    assert run_script(show, "", 30).stdout.strip() == "first"
    assert run_script(show, "", 30).stdout.strip() == "first"
    monkeypatch.setenv("GATE_PROBE", "second")
    assert run_script(show, "", 30).stdout.strip() == "second"
    monkeypatch.delenv("GATE_PROBE")
    assert run_script(show, "", 30).stdout.strip() == "<unset>"
    assert run_script(show, "", 30, env={"GATE_PROBE": "laid over"}).stdout.strip() == "laid over"
