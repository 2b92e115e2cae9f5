"""Per-case state goes down in the open, as a `CaseRun`: never through a thread-local or attributes set by name.

A composite's members and a code judge's target proxy call the judge model from threads of their own; a
setting or a counter kept per thread was not seen, or was lost, there. These tests hold the case's cache
setting and its cache hits to the run object, from any thread, and keep the side channels from coming back.
"""

from __future__ import annotations

import ast
import threading
from pathlib import Path

from agentv_gate.case_run import CaseRun
from agentv_gate.models import TargetResponse
from agentv_gate.targets.base import ProviderRequest
from agentv_gate.targets.cache import CachingProvider, ResponseCache

PACKAGE = Path(__file__).resolve().parents[1] / "agentv_gate"
PER_THREAD_TRANSPORT = {"transport/deadline.py", "transport/session.py"}
"""Thread-locals that hold no case's state: the HTTP attempt's deadline that urllib3's connection classes
find on the calling thread, and each worker thread's keep-alive session (requests.Session is not safe to share)."""
RUN_PATH = ("orchestrator.py", "commands", "evaluators", "execution", "targets", "judging")


def _calls(path: Path, name: str) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if called == name:
                lines.append(node.lineno)
    return lines


def test_no_thread_local_holds_a_cases_state() -> None:
    found = [f"{path.relative_to(PACKAGE)}:{line}" for path in sorted(PACKAGE.rglob("*.py"))
             if str(path.relative_to(PACKAGE)) not in PER_THREAD_TRANSPORT for line in _calls(path, "local")]
    assert not found, f"thread-locals outside the transport's per-thread resources: {found}"


def test_nothing_on_the_run_path_sets_attributes_by_name() -> None:
    paths = [p for top in RUN_PATH for p in ([PACKAGE / top] if top.endswith(".py") else (PACKAGE / top).rglob("*.py"))]
    found = [f"{path.relative_to(PACKAGE)}:{line}" for path in paths for line in _calls(path, "setattr")
             if path.name != "cache.py"]  # cache.py adds to its own CacheStats counters by name, no result
    assert not found, f"setattr on the run path: {found}"


class Counting:
    """A provider answering every question the same, counting its calls (the cache's inner provider)."""

    name, kind = "judge", "openai"

    def __init__(self) -> None:
        self.calls = 0
        self.lock = threading.Lock()

    def invoke(self, request: ProviderRequest) -> TargetResponse:
        with self.lock:
            self.calls += 1
        return TargetResponse(text="ok")


def test_hits_count_on_the_case_run_from_any_thread(tmp_path: Path) -> None:
    inner = Counting()
    cached = CachingProvider(inner, ResponseCache(tmp_path))
    cached.invoke(ProviderRequest(question="q"))  # stores the answer; outside a run, no run counts it
    run = CaseRun()
    threads = [threading.Thread(target=cached.invoke, args=(ProviderRequest(question="q", run=run),)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (inner.calls, run.cache_hits.count) == (1, 4)


def test_a_run_without_the_cache_neither_reads_nor_stores(tmp_path: Path) -> None:
    inner = Counting()
    cache = ResponseCache(tmp_path)
    cached = CachingProvider(inner, cache)
    uncached = CaseRun(use_cache=False)
    for _ in range(2):
        cached.invoke(ProviderRequest(question="q", run=uncached))
    assert (inner.calls, cache.stats.stored, uncached.cache_hits.count) == (2, 0, 0)
    cached.invoke(ProviderRequest(question="q", run=CaseRun()))  # the cache is still empty: a miss, then stored
    assert (inner.calls, cache.stats.stored) == (3, 1)


def test_only_the_first_trial_may_use_the_cache_and_every_trial_counts_on_the_case() -> None:
    first = CaseRun(eval_dir="/evals")
    second = first.for_trial(1)
    assert (first.for_trial(0).use_cache, second.use_cache, second.trial, second.eval_dir) == (True, False, 1, "/evals")
    assert not CaseRun(use_cache=False).for_trial(0).use_cache  # a suite's `execution.cache: false` stays off
    second.cache_hits.add(2)
    assert first.cache_hits.count == 2
