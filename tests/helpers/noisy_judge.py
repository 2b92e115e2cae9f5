"""A judge model that fails answers at random, seeded: the loopback stand-in for a noisy LLM judge.

`NoisyJudge(fail_rate, seed)` is a `FakeLLMServer` responder (`server.set_default(CHAT, judge)`). Each
request's prompt names its case by a `[case:NAME]` marker (put it in the case's input); the judge counts
the calls per case and fails the k-th call of case NAME (0-based) when `NoisyJudge.fails(NAME, k)`, a
hash of (seed, NAME, k) below `fail_rate`. So the verdicts do not depend on the order the run's workers
send the calls in, and a test can compute what the gate should decide from the same function.

`scores` may replace the two verdicts (1 pass / 0 fail) with a score per call: `scores(name, k) -> float`.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import Counter
from collections.abc import Callable

from tests.helpers.fake_llm_server import FakeReply, RecordedRequest

MARKER = re.compile(r"\[case:([A-Za-z0-9_.-]+)\]")


def case_marker(name: str) -> str:
    """The text a case's input holds so the judge knows which case it grades."""
    return f"[case:{name}]"


class NoisyJudge:
    def __init__(self, fail_rate: float, seed: int = 0,
                 scores: Callable[[str, int], float] | None = None) -> None:
        self.fail_rate = fail_rate
        self.seed = seed
        self.scores = scores
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    def fails(self, name: str, k: int) -> bool:
        """Whether call `k` (0-based) for case `name` fails: a seeded hash, uniform on 0..1, below the rate."""
        digest = hashlib.sha256(f"{self.seed}:{name}:{k}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < self.fail_rate

    def score(self, name: str, k: int) -> float:
        return self.scores(name, k) if self.scores is not None else (0.0 if self.fails(name, k) else 1.0)

    def __call__(self, request: RecordedRequest) -> FakeReply:
        text = request.body.decode("utf-8", "replace")
        found = MARKER.search(text)
        name = found.group(1) if found else "?"
        with self._lock:
            k = self.calls[name]
            self.calls[name] += 1
        score = self.score(name, k)
        verdict = {"score": score, "hits": ["fine"] if score >= 0.5 else [],
                   "misses": [] if score >= 0.5 else ["judged poor"], "reasoning": f"call {k} of {name}"}
        return FakeReply.openai(json.dumps(verdict))


__all__ = ["MARKER", "NoisyJudge", "case_marker"]
