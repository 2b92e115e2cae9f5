"""Reporters: case results in, files and log lines out (JUnit XML, GitHub, JSONL, console).

Reporters only read case results (`rows.ReportedCase`); they never open an eval file, so a merged run (results from
several shards) reports exactly like a single one. The counting lives here so the console, the
job summary, the step outputs and the exit code can never disagree about what passed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import ReportError, ReportWriteError, ResultsReadError

if TYPE_CHECKING:
    from .rows import ReportedCase


@dataclass(frozen=True)
class Summary:
    """Counts over one run's results; `pass_rate` is passed / total, 0.0 for an empty run."""

    total: int
    passed: int
    failed: int
    errors: int
    pass_rate: float
    not_run: int = 0
    """Cases the run meant to run but never finished (it was interrupted)."""
    quarantined: int = 0
    """Cases that failed or errored while on the gate's quarantine list: reported, not failing the gate."""
    missing_env: int = 0
    """Cases `--skip-missing-env` left out (a variable their targets read is unset): never a pass."""
    unanswered: int = 0
    """Of the errors, cases a `--replay` had no recorded answer for: not judged, whatever `--fail-on` says."""
    advisory: int = 0
    """Cases failed only by judges below `.agentv/gate.yaml`'s `judges:` floor: warnings, never passes, not
    deciding the gate."""

    @property
    def ok(self) -> bool:
        """True when the gate passes: at least one case ran, none failed or errored (quarantined ones
        aside), none was left out."""
        return (self.total > 0 and self.failed == 0 and self.errors == 0 and self.not_run == 0
                and self.missing_env == 0)

    @property
    def incomplete(self) -> bool:
        """Nothing failed, but cases were left out for unset environment variables (exit 5)."""
        return self.missing_env > 0 and self.failed == 0 and self.errors == 0 and self.not_run == 0

    @property
    def verdict(self) -> str:
        """The run in one word, as the console, report.html and the job summary head it."""
        if self.not_run:
            return "INTERRUPTED"
        if self.incomplete:
            return "INCOMPLETE"
        return "PASSED" if self.ok else "FAILED"

    def describe(self) -> str:
        """One line for logs and summaries, e.g. `8 cases: 5 passed, 2 failed, 1 error (pass rate 62.5%)`."""
        unfinished = f", {self.not_run} not run (interrupted)" if self.not_run else ""
        quarantined = f", {self.quarantined} quarantined" if self.quarantined else ""
        unset = f", {self.missing_env} not run (environment variables unset)" if self.missing_env else ""
        quarantined += f", {self.advisory} advisory (judge below its floor)" if self.advisory else ""
        return (
            f"{self.total} case{'s' if self.total != 1 else ''}: {self.passed} passed, {self.failed} failed, "
            f"{self.errors} error{'s' if self.errors != 1 else ''}{quarantined}{unset}{unfinished} "
            f"(pass rate {self.pass_rate:.1%})"
        )


@dataclass(frozen=True)
class TargetTraffic:
    """One HTTP target's calls in a run, for the line per target at the end and the job summary."""

    target: str
    calls: int
    """Requests sent (retries included)."""
    rate_limited: int
    """Of those, answered 429."""
    waited_seconds: float
    """Time calls spent waiting for the target's limits (workers, rates, pauses), summed over calls."""

    def describe(self) -> str:
        return (f"{self.calls} call{'s' if self.calls != 1 else ''}, {self.rate_limited} answered 429, "
                f"{self.waited_seconds:.1f} s waiting for its limits")


def summarise(results: Iterable[ReportedCase], planned: int | None = None) -> Summary:
    """Count verdicts; a case counts by its `verdict` alone (the orchestrator applied the threshold).

    `planned` is how many cases the run set out to run: fewer results than that (an interrupted
    run) makes the summary say so and never count as a pass.
    """
    from ..targets.recording import NOT_RECORDED
    from .rows import ADVISORY, NOT_RUN, QUARANTINED, outcome

    passed = failed = errors = quarantined = missing_env = unanswered = advisory = 0
    for r in results:
        shown = outcome(r)
        unanswered += r.failure_reason_code == NOT_RECORDED
        if shown == "pass":
            passed += 1
        elif shown == NOT_RUN:
            missing_env += 1
        elif shown == QUARANTINED:
            quarantined += 1
        elif shown == ADVISORY:
            advisory += 1
        elif shown == "error":
            errors += 1
        else:
            failed += 1
    total = passed + failed + errors + quarantined + missing_env + advisory
    return Summary(total=total, passed=passed, failed=failed, errors=errors,
                   pass_rate=passed / total if total else 0.0, not_run=max(0, (planned or 0) - total),
                   quarantined=quarantined, missing_env=missing_env, unanswered=unanswered, advisory=advisory)


__all__ = ["ReportError", "ReportWriteError", "ResultsReadError", "Summary", "TargetTraffic", "summarise"]
