"""Which signal ended a run, when a second one lands while the first is still unwinding.

CI cancels a job with SIGINT, then SIGTERM. When the SIGTERM lands while the SIGINT's KeyboardInterrupt
unwinds through a `threading.Condition.wait` (the orchestrator waits on one for its cases), the wait
cannot take its lock back and leaving it raises `RuntimeError: release unlocked lock`: the run ended
with an "internal error" and exit 4 (the hardening test of a repeated signal failed 2 runs in 8). The run
was interrupted, and the first signal says with which exit code.
"""

from __future__ import annotations

from agentv_gate.commands.run import _Terminated, first_signal


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
