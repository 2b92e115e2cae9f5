"""`run --baseline --fail-on regression` with trials: re-run just the cases the per-case guard cannot decide yet.

After every case ran its `--trials`, the guard's sequential test (`report/baseline/sequential.py`) reads each
paired case; a case still undecided runs more head trials (the real target and evaluators, through
the orchestrator), round after round, until its test is decided or its `--max-trials` budget is
spent. The new trials go to the row's `reruns` (numbered on from its `trials[]`), never into its
verdict or score, and the results file is written again with them at the end of the run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ReportWriteError
from ..execution.stop import NOT_RUN_INTERRUPTED
from ..models import CaseResult, EvalCase
from ..orchestrator import Orchestrator, RunSettings
from ..report.jsonl import JsonlWriter, read_results
from ..report.rows import ReportRow, TrialOutcomes
from ..report.text import inert_log_text, one_line

if TYPE_CHECKING:  # the paired test's modules are imported by a run against a base only, where it is used
    from ..report.baseline import paired
    from ..report.baseline.gate import Baseline

RowKey = tuple[str, str, str]


@dataclass
class Reruns:
    """The trials re-run so far, by (suite, test id, target): `trials[]` entries, numbered on."""

    trials: dict[RowKey, list[dict[str, Any]]] = field(default_factory=dict)
    stopped: dict[RowKey, str] = field(default_factory=dict)
    """Cases whose re-runs ended undecided, and why (`failure_reason_code` of the round not started: a spent
    budget or cost limit, a suite stopped by `fail_on_error`; or the interrupt): `CaseResult.reruns_stopped`."""

    @property
    def count(self) -> int:
        return sum(len(t) for t in self.trials.values())

    def add(self, key: RowKey, first: int, result: CaseResult) -> None:
        """The trials of `result` (a re-run of `first`-numbered trials on), appended to the case's."""
        entries = result.trials or [{"attempt": 1, "score": result.score, "verdict": result.verdict,
                                     **({"error": result.error} if result.error else {}),
                                     **({"cost_usd": result.cost_usd} if result.cost_usd is not None else {})}]
        kept = self.trials.setdefault(key, [])
        start = first - len(kept)  # the row's own trials: re-runs are numbered on from them
        for entry in entries:
            kept.append({**entry, "attempt": start + len(kept) + 1, "rerun": True})


def decided(test: paired.SuiteTest, baseline: Baseline) -> bool:
    """The gate fails whatever re-runs would show: the suite test found a drop, the guard's test called a
    case broken, or a case label that `--fail-on` fails on (labels read the rows' own trials) is there.

    In one shard (`Baseline.frame`) only a case the guard called broken: the merge decides on every shard's
    cases, where this shard's drop may be offset by the others' gains, and must not be left cases the shard
    stopped deciding."""
    if any(c.decision == "broken" for c in test.cases):
        return True
    if baseline.frame is not None:
        return False
    fail_on = baseline.fail_on
    return test.dropped or (
        fail_on != "regression" and bool(test.with_label("regression"))) or (
        fail_on == "inconclusive" and bool(test.with_label("inconclusive")))


def wanted(test: paired.SuiteTest, batch: int | None) -> dict[RowKey, int]:
    """(row key) -> how many more trials each undecided case runs in this round: at most `batch` (the run's
    `--trials`), or None: as many as the case's row ran (its suite's `execution.trials`)."""
    from ..report.baseline.paired import no_evidence
    from ..report.baseline.sequential import trials_to_run

    out: dict[RowKey, int] = {}
    for case in test.cases:
        head = case.change.head
        # a stable case failing every head trial is undecided too: its re-runs may clear it (a flaky case
        # passing its few base trials) where the guard's rule for no more evidence would call it broken
        if head is None or no_evidence(head) or case.decision != "undecided":
            continue
        if test.prior is None:
            continue
        more = trials_to_run(test.prior, sum(case.guard_base), len(case.guard_base), sum(case.head_passed),
                             len(case.head_passed), test.budget_of(case),
                             test.guard_level if case.level is None else case.level,
                             batch or max(2, len(case.head.passed)))
        if more:
            out[(head.suite, head.eval_id, head.target)] = more
    return out


def undecided_cases(baseline: Baseline, rows: list[ReportRow]) -> list[RowKey]:
    """The cases the guard would re-run now, were re-runs possible."""
    from ..report.baseline import paired

    test = baseline.test(baseline.compare(rows))
    if not isinstance(test, paired.SuiteTest) or decided(test, baseline):
        return []
    return list(wanted(test, 1))


def rerun_suspicious(baseline: Baseline, rows: list[ReportRow], batch: int | None,
                     cases_of: Callable[[set[RowKey]], Iterable[EvalCase]],
                     orchestrator_for: Callable[[RunSettings], Orchestrator], quiet: bool, reruns: Reruns) -> None:
    """Round after round, the undecided cases' next trials, into `rows` and `reruns` in place: so that an
    interrupt's partial reports write what the rounds ran. `reruns` starts as the re-runs the rows already
    hold (a row `--rerun-failed` kept), which new ones are numbered on from and added to."""
    from ..report.baseline import paired

    while True:
        test = baseline.test(baseline.compare(rows))
        if not isinstance(test, paired.SuiteTest):
            return
        want = {} if decided(test, baseline) else wanted(test, batch)
        if not want:
            return
        if not quiet:
            print(inert_log_text(f"agentv-gate: per-case guard: {len(want)} case(s) undecided, re-running "
                                 f"{sum(want.values())} trial(s): "
                                 + ", ".join(one_line(key[1]) for key in list(want)[:10])), file=sys.stderr)
        index = {(r.suite, r.eval_id, r.target): i for i, r in enumerate(rows)}
        ran_any = False
        first = {key: _trials_run(rows[index[key]]) + len(reruns.trials.get(key, ())) for key in want}
        for more, start in sorted({(n, first[key]) for key, n in want.items()}):
            keys = {key for key, n in want.items() if (n, first[key]) == (more, start)}
            done: list[CaseResult] = []
            spent = {key: _spent(rows[index[key]]) for key in keys}
            orchestrator = orchestrator_for(RunSettings(trials=more, first_trial=start, spent_usd=spent))
            orchestrator.on_result = done.append
            try:
                orchestrator.run(cases_of(keys))
            except KeyboardInterrupt:
                # the trials that finished are kept; every case of the round is left undecided by the interrupt,
                # and says so, so that what reads the results file (merge, compare) does not pass it
                _take(done, keys, start, reruns, rows, index)
                for key in want:
                    reruns.stopped[key] = NOT_RUN_INTERRUPTED
                    rows[index[key]] = replace(rows[index[key]], reruns_stopped=NOT_RUN_INTERRUPTED)
                raise
            ran_any = _take(done, keys, start, reruns, rows, index) or ran_any
        if not ran_any:
            return


def _spent(row: ReportRow) -> float:
    """What the case's trials so far cost, its re-runs included (its `cost_limit_usd` holds them all)."""
    return sum(t.cost_usd or 0.0 for t in (row.trials, row.reruns) if t is not None)


def _take(done: list[CaseResult], keys: set[RowKey], start: int, reruns: Reruns, rows: list[ReportRow],
          index: dict[RowKey, int]) -> bool:
    """A round's results into `reruns` and `rows` (in place); whether any brought trials."""
    ran_any = False
    for result in done:
        key = (result.suite, result.eval_id, result.target)
        if key not in keys:
            continue
        if result.failure_reason_code:  # not run (a budget, a cost limit, fail_on_error): no evidence, no decision
            reruns.stopped[key] = result.failure_reason_code
            rows[index[key]] = replace(rows[index[key]], reruns_stopped=result.failure_reason_code)
            continue
        reruns.add(key, start, result)
        reruns.stopped.pop(key, None)
        ran_any = True
        rows[index[key]] = replace(rows[index[key]], reruns=TrialOutcomes.of_row(reruns.trials[key], None),
                                   reruns_stopped=None)
    return ran_any


def _trials_run(row: ReportRow) -> int:
    return len(row.trials.passed) if row.trials else 1


def write_reruns(path: Path, reruns: Reruns) -> None:
    """The results file again, each re-run case's row with its `reruns`, replacing the file whole."""
    if not reruns.trials and not reruns.stopped:
        return
    rows, _ = read_results([path])
    temporary = path.with_name(path.name + ".reruns")
    with JsonlWriter(temporary) as writer:
        for row in rows:
            key = (row.suite, row.eval_id, row.target)
            update: dict[str, Any] = {"reruns": reruns.trials[key]} if key in reruns.trials else {}
            if key in reruns.stopped:
                update["reruns_stopped"] = reruns.stopped[key]
            elif update:  # re-run to its end here: a row `--rerun-failed` kept says no earlier run's stop
                update["reruns_stopped"] = None
            writer.write(row.model_copy(update=update) if update else row)
    try:
        os.replace(temporary, path)
    except OSError as exc:
        raise ReportWriteError(f"cannot write results to {path}: {exc}") from exc


__all__ = ["Reruns", "decided", "rerun_suspicious", "undecided_cases", "wanted", "write_reruns"]
