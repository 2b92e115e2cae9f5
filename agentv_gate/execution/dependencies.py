"""Cases that depend on other cases (AgentV 4.x `depends_on`): run in waves, a failed dependency gating its dependants.

As AgentV 4.42's orchestrator runs an eval file on a target: its tests in waves (a test's wave is one past
its dependencies' latest; a test with none is in wave 0), each wave only once every test of the earlier
waves has finished, the tests of a wave at once. A dependency has failed when it ended in an execution
error (here: its row is `error`, which covers every execution error of AgentV and a few more, such as a
judge that cannot run); a low score is not a failure. A test with a failed dependency, by its
`on_dependency_failure`: `skip` (the default) or `fail` writes it unrun as an error, `Skipped: dependency
failed (a, b)` or `Failed: ...` (AgentV's words and `dependency_failed` reason), never a pass; `run` runs
it. A dependency the run does not hold (left out for an unset variable) counts as failed, as in AgentV.

Only the suites that use `depends_on` are held back to be put in wave order; every other case streams
through as it comes. Each (suite, target) is its own graph, as each target's run is in AgentV.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator

from ..models import CaseResult, EvalCase

Key = tuple[str, str]
"""(suite, target)."""


class DependencyWaves:
    """The wave order and the results so far of the dependent suites of one run. Thread-safe."""

    def __init__(self, suites: Collection[str], target_of: Callable[[EvalCase], str],
                 cancelled: threading.Event) -> None:
        self._suites = frozenset(suites)
        self._target_of = target_of
        self._cancelled = cancelled
        self._ready = threading.Condition()
        self._wave: dict[tuple[str, str, str], int] = {}
        self._open: dict[tuple[str, str, int], int] = defaultdict(int)
        """(suite, target, wave) -> how many of its cases have not finished."""
        self._verdicts: dict[tuple[str, str, str], str] = {}

    def arrange(self, cases: Iterable[EvalCase]) -> Iterator[EvalCase]:
        """`cases`, each dependent suite's cases held back until the suite's last and given in wave order."""
        held: list[EvalCase] = []
        for case in cases:
            if held and case.suite != held[0].suite:
                yield from self._in_waves(held)
                held = []
            if case.suite in self._suites:
                held.append(case)
            else:
                yield case
        yield from self._in_waves(held)

    def _in_waves(self, cases: list[EvalCase]) -> list[EvalCase]:
        by_key: dict[Key, dict[str, EvalCase]] = defaultdict(dict)
        for case in cases:
            by_key[(case.suite, self._target_of(case))][case.id] = case
        waves: dict[int, list[EvalCase]] = defaultdict(list)
        for (suite, target), present in by_key.items():
            levels = _waves(present)
            for case_id, case in present.items():
                wave = levels[case_id]
                waves[wave].append(case)
                with self._ready:
                    self._wave[(suite, target, case_id)] = wave
                    self._open[(suite, target, wave)] += 1
        return [case for wave in sorted(waves) for case in waves[wave]]

    def wait_turn(self, case: EvalCase) -> None:
        """Until every case of the earlier waves of its suite and target has finished (or the run stops)."""
        suite, target = case.suite, self._target_of(case)
        with self._ready:
            wave = self._wave.get((suite, target, case.id), 0)
            while not self._cancelled.is_set() and any(self._open[(suite, target, w)] for w in range(wave)):
                self._ready.wait(0.5)

    def refusal(self, case: EvalCase) -> str | None:
        """`Skipped: dependency failed (...)` / `Failed: ...` when a dependency failed and the case is not to run."""
        if not case.depends_on or case.on_dependency_failure == "run":
            return None
        suite, target = case.suite, self._target_of(case)
        with self._ready:
            failed = [d for d in case.depends_on if self._verdicts.get((suite, target, d), "error") == "error"]
        if not failed:
            return None
        return f"{'Skipped' if case.on_dependency_failure == 'skip' else 'Failed'}: dependency failed ({', '.join(failed)})"

    def record(self, case: EvalCase, result: CaseResult | None) -> None:
        """The case has finished with `result` (None: it broke off, an error): its dependants may now be decided."""
        key = (case.suite, self._target_of(case), case.id)
        with self._ready:
            if key not in self._wave or key in self._verdicts:
                return
            self._verdicts[key] = result.verdict if result is not None else "error"
            self._open[(key[0], key[1], self._wave[key])] -= 1
            self._ready.notify_all()


def _waves(present: dict[str, EvalCase]) -> dict[str, int]:
    """Each case's wave: one past the latest of its dependencies that the run holds (the loader refused cycles)."""
    levels: dict[str, int] = {}
    while len(levels) < len(present):
        placed = False
        for case_id, case in present.items():
            if case_id in levels:
                continue
            held = [d for d in case.depends_on if d in present]
            if all(d in levels for d in held):
                levels[case_id] = 1 + max((levels[d] for d in held), default=-1)
                placed = True
        if not placed:  # a cycle the loader would have refused: the rest run last, never waiting on each other
            last = 1 + max(levels.values(), default=-1)
            levels.update({case_id: last for case_id in present if case_id not in levels})
    return levels
