"""Which signal ended a run, when a second one lands while the first is still unwinding.

CI cancels a job with SIGINT, then SIGTERM. When the SIGTERM lands while the SIGINT's KeyboardInterrupt
unwinds through a `threading.Condition.wait` (the orchestrator waits on one for its cases), the wait
cannot take its lock back and leaving it raises `RuntimeError: release unlocked lock`: the run ended
with an "internal error" and exit 4 (the hardening test of a repeated signal failed 2 runs in 8). The run
was interrupted, and the first signal says with which exit code.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from agentv_gate.commands.run import _SignalGate, _Terminated, first_signal


def _raised_while_unwinding() -> RuntimeError:
    """The exception chain of that race, as Python builds it: SIGINT, then SIGTERM, then the lock error."""
    try:
        try:
            try:
                raise KeyboardInterrupt
            except KeyboardInterrupt:
                raise _Terminated()  # noqa: B904 - the implicit context is the point
        except KeyboardInterrupt:
            raise RuntimeError("release unlocked lock")  # noqa: B904 - the implicit context is the point
    except RuntimeError as exc:
        return exc


def test_the_first_signal_behind_an_error_raised_while_unwinding_decides() -> None:
    error = _raised_while_unwinding()
    assert isinstance(error.__context__, _Terminated)
    first = first_signal(error)
    assert type(first) is KeyboardInterrupt  # SIGINT came first: exit 130, not 143, not 4
    assert first_signal(error.__context__) is first


def test_an_error_with_no_signal_behind_it_stays_a_bug_of_ours() -> None:
    try:
        try:
            raise ValueError("a bug")
        except ValueError:
            raise RuntimeError("another")  # noqa: B904
    except RuntimeError as exc:
        assert first_signal(exc) is None
    assert isinstance(first_signal(_Terminated()), _Terminated)


@contextmanager
def gate_installed() -> Iterator[_SignalGate]:
    gate = _SignalGate()
    previous = signal.signal(signal.SIGINT, gate.handle), signal.signal(signal.SIGTERM, gate.handle)
    try:
        yield gate
    finally:
        signal.signal(signal.SIGINT, previous[0])
        signal.signal(signal.SIGTERM, previous[1])


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_a_signal_while_a_case_is_recorded_waits_until_the_case_is_whole() -> None:
    """The hardening test of an interrupted run once saw a case in the results file that the reports
    then listed as not run: the SIGINT landed between the file's line and the row in memory."""
    recorded: list[str] = []
    with gate_installed() as gate, pytest.raises(KeyboardInterrupt) as raised:
        with gate.recording():
            os.kill(os.getpid(), signal.SIGINT)
            recorded.append("file")
            os.kill(os.getpid(), signal.SIGTERM)  # CI's second signal: the first one still decides
            recorded.append("memory")
    assert recorded == ["file", "memory"]
    assert type(raised.value) is KeyboardInterrupt
    assert gate.pending is None


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_a_signal_outside_a_recording_stops_at_once_and_sigterm_says_so() -> None:
    reached = False
    with gate_installed(), pytest.raises(_Terminated):
        os.kill(os.getpid(), signal.SIGTERM)
        reached = True
    assert not reached
    with gate_installed() as gate:
        with gate.recording():
            pass  # a recording no signal met ends normally
        assert gate.pending is None
