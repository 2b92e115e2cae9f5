"""Stop policies: when a run stops starting cases, and what the cases it did not start are written as.

The orchestrator asks every policy before it starts a case (`refusal`) and tells every policy
each result (`record`). A refused case is never run and never passes: it becomes an error row
saying why (`failure_reason_code`), so the gate fails and the summary explains it. Cases already
running when a policy trips finish normally. One mechanism for every such rule:

* `BudgetStop`: a suite's `execution.total_budget_usd` (summed `cost_usd` reached it);
* `ErrorStop`: a suite's `execution.fail_on_error: true` (one execution error happened);
* `FailureLimit`: `--max-failures N`, counting failed and errored rows over the whole run;
* `RunBudget`: `--budget-usd X` (AgentV 4.x), the summed `cost_usd` of the whole run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ..models import CaseResult, EvalCase


@dataclass(frozen=True)
class Refusal:
    """Why a case is not started: AgentV's `failure_reason_code` and a sentence for the row's error."""

    code: str
    message: str
    budget_exceeded: bool = False

    def apply(self, result: CaseResult) -> CaseResult:
        """`result` (a fresh row for the case) written as not run, for this reason."""
        result.verdict = "error"
        result.error = f"not run: {self.message}"
        result.misses = [f"Error: {result.error}"]
        result.failure_reason_code = self.code
        if self.budget_exceeded:
            result.budget_exceeded = True
        return result


class StopPolicy(Protocol):
    """A rule that may refuse to start cases, from what the results so far say. Thread-safe."""

    def refusal(self, case: EvalCase) -> Refusal | None: ...

    def record(self, case: EvalCase, result: CaseResult) -> None: ...


@dataclass
class BudgetStop:
    """Per suite: once the summed `cost_usd` of its rows reaches `execution.total_budget_usd`,
    its unstarted cases are written with `budget_exceeded: true`."""

    spent: dict[str, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def refusal(self, case: EvalCase) -> Refusal | None:
        budget = case.suite_execution.total_budget_usd
        if budget is None:
            return None
        with self._lock:
            spent = self.spent.get(case.suite, 0.0)
        if spent < budget:
            return None
        return Refusal(BUDGET_EXCEEDED, f"the suite's total_budget_usd ({budget:g}) was spent "
                       f"(${spent:.4f} reported so far)", budget_exceeded=True)

    def record(self, case: EvalCase, result: CaseResult) -> None:
        if case.suite_execution.total_budget_usd is None or not result.cost_usd:
            return
        with self._lock:
            self.spent[case.suite] = self.spent.get(case.suite, 0.0) + float(result.cost_usd)


@dataclass
class ErrorStop:
    """Per suite with `execution.fail_on_error: true`: after its first execution error, its
    unstarted cases are written as errors (`error_threshold_exceeded`)."""

    first_error: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def refusal(self, case: EvalCase) -> Refusal | None:
        if not case.suite_execution.fail_on_error:
            return None
        with self._lock:
            first = self.first_error.get(case.suite)
        if first is None:
            return None
        return Refusal(ERROR_THRESHOLD_EXCEEDED, f"fail_on_error: case '{first}' of this suite had an execution "
                       "error")

    def record(self, case: EvalCase, result: CaseResult) -> None:
        if not case.suite_execution.fail_on_error or result.execution_status != "execution_error":
            return
        if result.failure_reason_code is not None:
            return  # a refused case does not start the chain again
        with self._lock:
            self.first_error.setdefault(case.suite, result.eval_id)


STOPPED_BY_MAX_FAILURES = "max_failures"
"""The `failure_reason_code` of a case `--max-failures` kept from starting (`merge` looks for it)."""

NOT_RUN_MISSING_ENV = "missing_env"
"""The `failure_reason_code` of a case `run --skip-missing-env` left out: a variable its target or a
judge it calls reads is unset. Reported as not run (exit 5 when nothing else failed), never as a pass."""

BUDGET_EXCEEDED = "budget_exceeded"
"""The `failure_reason_code` of a case not started because its suite's `total_budget_usd` or the run's
`--budget-usd` was spent (AgentV's code)."""

ERROR_THRESHOLD_EXCEEDED = "error_threshold_exceeded"
"""The `failure_reason_code` of a case not started after an execution error of its suite under
`fail_on_error` (AgentV's code)."""

COST_LIMITED = "cost_limited"
"""The code of a per-case guard's re-run not started because the case's earlier trials already reached its
`cost_limit_usd` (only ever in a row's `reruns_stopped`: the case itself ran)."""

NOT_RUN_INTERRUPTED = "interrupted"
"""The `failure_reason_code` of a case a run cut short (Ctrl-C, SIGTERM, an internal error) never
finished. Its row is in the results file so that `merge` of that file fails; reading a file back as
the base or as PREV of a rerun treats such a row as absent (the case has no result there)."""


@dataclass
class FailureLimit:
    """`--max-failures N`: after the Nth case that failed or errored (a refused one not counted, nor a
    failure `muted` says fails no gate: a quarantined case's), no other case of the run starts."""

    limit: int
    failures: int = 0
    refused: int = 0
    muted: Callable[[CaseResult], bool] | None = None
    """Whether a failed (never an errored) row is one the gate does not count, such as a quarantined case's."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def refusal(self, case: EvalCase) -> Refusal | None:
        with self._lock:
            if self.failures < self.limit:
                return None
            self.refused += 1
            failures = self.failures
        return Refusal(STOPPED_BY_MAX_FAILURES, f"the run stopped after {failures} failed or errored case(s) "
                       f"(--max-failures {self.limit})")

    def record(self, case: EvalCase, result: CaseResult) -> None:
        if result.verdict == "pass" or result.failure_reason_code is not None:
            return
        if result.verdict == "fail" and self.muted is not None and self.muted(result):
            return
        with self._lock:
            self.failures += 1

    @property
    def message(self) -> str | None:
        """What the summary says, when cases were left out (reaching the limit on the last case is not)."""
        if not self.refused:
            return None
        return (f"stopped after {self.failures} failed or errored case(s) (--max-failures {self.limit}); "
                f"{self.refused} case(s) not run, reported as errors")


@dataclass
class RunBudget:
    """`--budget-usd X`: once the summed `cost_usd` of the run's rows reaches X, no other case starts
    (AgentV 4.x's run-level budget, beside each suite's `budget_usd`)."""

    budget: float
    spent: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def refusal(self, case: EvalCase) -> Refusal | None:
        with self._lock:
            spent = self.spent
        if spent < self.budget:
            return None
        return Refusal(BUDGET_EXCEEDED, f"the run's --budget-usd ({self.budget:g}) was spent (${spent:.4f} "
                       "reported so far)", budget_exceeded=True)

    def record(self, case: EvalCase, result: CaseResult) -> None:
        if result.cost_usd:
            with self._lock:
                self.spent += float(result.cost_usd)


@dataclass
class StopPolicies:
    """Several policies as one: the first refusal wins; every policy sees every result."""

    policies: Sequence[StopPolicy] = ()

    def refusal(self, case: EvalCase) -> Refusal | None:
        for policy in self.policies:
            found = policy.refusal(case)
            if found is not None:
                return found
        return None

    def record(self, case: EvalCase, result: CaseResult) -> None:
        for policy in self.policies:
            policy.record(case, result)


def execution_block_policies(*extra: StopPolicy) -> StopPolicies:
    """The policies of AgentV's `execution` block, which every run has (each is idle for a suite
    that does not set its key), and the run's own (`--max-failures`)."""
    return StopPolicies([BudgetStop(), ErrorStop(), *extra])
