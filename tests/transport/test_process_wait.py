"""Waiting for a judge or `cli` target to exit where the system has no pidfd (macOS runners).

Linux 5.3+ wakes the wait at the child's exit through a pidfd; macOS has no `os.pidfd_open`, and
the wait falls back to Popen's polling. Both must return at exit and time out alike.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from agentv_gate.transport.process import _wait_for_exit


@pytest.fixture(params=["pidfd", "no pidfd"])
def platform(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "pidfd" and not hasattr(os, "pidfd_open"):
        pytest.skip("this system has no pidfd_open")
    if request.param == "no pidfd":
        monkeypatch.delattr(os, "pidfd_open", raising=False)  # as on macOS
    return str(request.param)


def test_the_wait_returns_when_the_child_exits(platform: str) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    _wait_for_exit(proc, timeout=30)
    assert proc.returncode == 3


def test_the_wait_times_out_on_a_child_that_hangs(platform: str) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            _wait_for_exit(proc, timeout=0.2)
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()
