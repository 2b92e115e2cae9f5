"""What one run of one case carries from the orchestrator down to every call it makes.

The orchestrator makes a `CaseRun` when a case starts and hands it down in the open: the target's
`ProviderRequest.run`, each evaluator's `EvaluationContext.run`, a composite's members, a code judge's
target proxy. Whoever reads a value can see who set it, whichever thread the read happens on: a
composite's members and a target proxy's requests run on threads of their own, where a per-thread
setting would not be seen and a per-thread count would be lost.

Plain data on the standard library only, so every layer, `models` included, may hold one.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace


@dataclass
class CacheHits:
    """Answers replayed from the response cache for one case, counted from any thread."""

    count: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, hits: int = 1) -> None:
        with self._lock:
            self.count += hits


@dataclass(frozen=True)
class CaseRun:
    """One run of one case (one trial of it, when it has trials)."""

    eval_dir: str | None = None
    """The folder of the case's eval file (its suite file for a case read from a dataset): a `cli`
    target's relative `cwd` and healthcheck folder are resolved from it."""
    eval_file: str | None = None
    """The case's eval file (its suite file for a case read from a dataset), absolute: a `replay` target
    looks its recorded answer up by it, as AgentV looks one up by the eval file's path."""
    trial: int = 0
    """0 for a single run or the first trial; trial N + 1 is `trial == N`."""
    use_cache: bool = True
    """Whether calls made for this run may be answered from the response cache and stored in it: off for
    a suite with `execution.cache: false`, and for every trial after the first, whose target and judges
    must give a fresh sample (a replayed verdict would be counted again as if given anew)."""
    workspace_path: str | None = None
    """The workspace the case runs in (its template's copy, or an empty folder for hooks without one),
    once its suite made one: a cli target's working directory, a code judge's `workspace_path` and
    `AGENTV_WORKSPACE_PATH`."""
    workspace_baseline: str | None = None
    """The git baseline of that workspace: what the target changed there is diffed from it for the
    evaluators (execution/file_changes.py)."""
    cache_hits: CacheHits = field(default_factory=CacheHits)
    """Shared by every trial of the case, so the case's row reports the hits of all of them."""

    def for_trial(self, trial: int) -> CaseRun:
        """The run of trial `trial` (0-based) of this case: the cache only for the first."""
        return replace(self, trial=trial, use_cache=self.use_cache and trial == 0)


__all__ = ["CacheHits", "CaseRun"]
