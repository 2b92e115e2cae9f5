"""A fake clock for `RateLimiter(clock=..., wait=...)`: no thread sleeps, the clock jumps instead.

`FakeClock.wait` moves the clock forward by the time the limiter asked to wait, so a test reads
exactly when each call was let through and how long it waited (`limiter.stats.waited_seconds`).
"""

from __future__ import annotations

import threading


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def wait(self, condition: threading.Condition, seconds: float | None) -> None:
        assert seconds is not None, "the limiter would wait forever: nothing in this test releases a slot"
        self.now += seconds
