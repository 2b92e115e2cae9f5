"""AgentV 4.x's `execution.workers` on a suite: at most that many of its cases run at once.

A suite may cap its own concurrency below the run's `--workers` (an agent that shares one sandbox, a
rate-limited API): the run's other suites keep their workers. A case of a capped suite waits for a
free slot of its suite on its worker thread; cases of uncapped suites never wait here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ..models import EvalCase


class SuiteSlots:
    """One semaphore per capped suite, made on first use. Thread-safe."""

    def __init__(self) -> None:
        self._slots: dict[str, threading.BoundedSemaphore] = {}
        self._lock = threading.Lock()

    @contextmanager
    def slot(self, case: EvalCase) -> Iterator[None]:
        cap = case.suite_execution.workers
        if cap is None:
            yield
            return
        with self._lock:
            semaphore = self._slots.setdefault(case.suite, threading.BoundedSemaphore(cap))
        with semaphore:
            yield
