"""`workers:` on a target without an HTTP rate limiter (cli, mock): at most that many calls at once."""

from __future__ import annotations

import threading

from agentv_gate.models import TargetResponse
from agentv_gate.targets.base import ProviderRequest
from agentv_gate.targets.registry import ConcurrencyCapped, build_capped
from tests.helpers.targets import target


class Counting:
    """A provider that holds every call until the test opens the gate, counting calls in flight."""

    name, kind = "agent", "cli"

    def __init__(self) -> None:
        self.busy = self.most = 0
        self.lock = threading.Lock()
        self.entered = threading.Semaphore(0)
        self.gate = threading.Event()

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        with self.lock:
            self.busy += 1
            self.most = max(self.most, self.busy)
        self.entered.release()
        self.gate.wait(30)
        with self.lock:
            self.busy -= 1
        return TargetResponse(text="ok")


def test_workers_wraps_providers_without_a_limiter_and_leaves_http_ones_to_theirs() -> None:
    assert isinstance(build_capped(target(provider="mock", response="x", workers=2)), ConcurrencyCapped)
    assert not isinstance(build_capped(target(provider="mock", response="x")), ConcurrencyCapped)
    http = build_capped(target(provider="openai", base_url="http://127.0.0.1:9", model="m", workers=2))
    assert not isinstance(http, ConcurrencyCapped) and http.limiter.limits.workers == 2  # type: ignore[attr-defined]


def test_the_cap_holds_across_threads() -> None:
    inner = Counting()
    capped = ConcurrencyCapped(inner, 2)  # type: ignore[arg-type]
    threads = [threading.Thread(target=lambda: [capped.invoke(ProviderRequest(question="q")) for _ in range(3)])
               for _ in range(6)]
    for thread in threads:
        thread.start()
    assert inner.entered.acquire(timeout=30) and inner.entered.acquire(timeout=30)
    assert not inner.entered.acquire(timeout=0.2)  # a third call is held outside
    inner.gate.set()
    for thread in threads:
        thread.join()
    assert inner.most <= 2 and capped.name == "agent" and capped.kind == "cli"
