"""Two sets of results side by side: what a change did to each case (`compare`, `run --baseline`).

Rows are paired by suite (the eval file's repo-relative path) and test id, as AgentV's `compare`
pairs by `test_id`; the suite is part of the key because two eval files may both have a case
`smoke`. When one file holds several rows of the same case (a target matrix) the target joins the
key, so each target's row is paired with the same target's row on the other side.

A case renamed (its test id changed) or moved to another eval file is still the case it was: a head
row no base row pairs with, whose `content_digest` (the case without its id and file) is that of a
base row no head row pairs with, is paired with it, its reason saying `renamed from 'old id'`. Else
renaming a case that now fails would read as a passing case removed and a new one failing, which
`--fail-on regression` only warns about. Copies of one removed case each pair with it (each is that
case). Where several removed base rows hold the content, one new row pairs only when they agree
(the same verdict): whichever it was, it is held to that, and to the best score among them; rows that
disagree are never guessed between. A row without the digest (an older agentv-gate's) pairs by name
only.

A case's status answers "what did this change do to it?":

- `regressed`: it passed on the base and does not now (failed, errored or was not run), or its
  score dropped by more than `max_drop` when that is set;
- `still failing`: it did not pass on the base either;
- `fixed`: it did not pass on the base and passes now;
- `passing`: it passes on both;
- `new`: the base has no row for it, or only a row that judged nothing (`NO_BASE_RESULT`: a case its run
  never started); `removed`: only the base has a row for it.

Everything here reads rows only (never an eval file), like every reporter.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ...execution.stop import (
    BUDGET_EXCEEDED,
    ERROR_THRESHOLD_EXCEEDED,
    NOT_RUN_INTERRUPTED,
    NOT_RUN_MISSING_ENV,
    STOPPED_BY_MAX_FAILURES,
)
from ...targets.recording import NOT_RECORDED
from ..rows import ReportedCase
from ..text import one_line

Status = Literal["regressed", "still failing", "fixed", "passing", "new", "removed"]
STATUSES: tuple[Status, ...] = ("regressed", "still failing", "fixed", "new", "removed", "passing")
DEFAULT_MIN_DELTA = 0.1
"""AgentV's `compare --threshold` default: a score change within it is a tie."""
DROP_DIGITS = 9
"""Decimals a score's fall is read to against `--max-drop`: far below any score a judge reports, far above
the error of subtracting two binary fractions."""

NO_BASE_RESULT = {NOT_RUN_INTERRUPTED: "the base run was interrupted before it",
                  STOPPED_BY_MAX_FAILURES: "the base run stopped (--max-failures) before it",
                  NOT_RUN_MISSING_ENV: "left out of the base run (--skip-missing-env)",
                  BUDGET_EXCEEDED: "the base run's budget was spent before it",
                  ERROR_THRESHOLD_EXCEEDED: "the base run's suite stopped at an execution error (fail_on_error)",
                  NOT_RECORDED: "the base replay had no recorded answer for it"}
"""The `failure_reason_code`s of a base row that holds no judgement of its case, and what each says."""

UNKNOWN_ON_BASE = "no result on the base"
"""The label of a case the base run did not judge (`NO_BASE_RESULT`) that does not pass now: it fails the gate,
since the base cannot show the change did not break it (`gate.unknown_on_base`)."""

LABELS: dict[Status, str] = {
    "regressed": "regressed",
    "still failing": "still failing (also on base)",
    "fixed": "fixed",
    "passing": "still passing",
    "new": "new",
    "removed": "removed",
}
"""How reports name each status, in the console, the job summary, annotations and report.html."""

CaseKey = tuple[str, ...]


@dataclass(frozen=True)
class CaseChange:
    """One case on both sides; `base` or `head` is None for a case only one side has."""

    status: Status
    base: ReportedCase | None
    head: ReportedCase | None
    reason: str = ""
    """Why it regressed, e.g. "passed on base, fails now" or "score 0.92 -> 0.61 (dropped more than 0.2)"."""

    @property
    def row(self) -> ReportedCase:
        """The row to show (the head's, else the base's): its id, suite, file and line locate the case."""
        found = self.head or self.base
        assert found is not None
        return found

    @property
    def delta(self) -> float | None:
        """Head score minus base score; None unless both sides have the case."""
        if self.base is None or self.head is None:
            return None
        return self.head.score - self.base.score

    @property
    def label(self) -> str:
        return LABELS[self.status]

    @property
    def renamed_from(self) -> str | None:
        """The base row's test id (and eval file, when another) when the case was renamed or moved, else None."""
        if self.base is None or self.head is None or case_key(self.base) == case_key(self.head):
            return None
        where = f" of {self.base.suite}" if self.base.suite != self.head.suite else ""
        return f"{self.base.eval_id}{where}"

    @property
    def name(self) -> str:
        """The head's test id as reports list the case: `c1-renamed (renamed from c1)` for a renamed one."""
        renamed = self.renamed_from
        return self.row.eval_id + (f" (renamed from {renamed})" if renamed else "")


@dataclass(frozen=True)
class Outcome:
    """AgentV's `compare` totals: a score delta beyond `min_delta` is a win or a loss, else a tie."""

    wins: int
    losses: int
    ties: int
    mean_delta: float


@dataclass(frozen=True)
class Comparison:
    changes: list[CaseChange]
    max_drop: float | None = None

    def with_status(self, *statuses: Status) -> list[CaseChange]:
        return [c for c in self.changes if c.status in statuses]

    @property
    def regressed(self) -> list[CaseChange]:
        return self.with_status("regressed")

    @property
    def paired(self) -> list[CaseChange]:
        return [c for c in self.changes if c.base is not None and c.head is not None]

    def counts(self) -> Counter[str]:
        return Counter(c.status for c in self.changes)

    def outcome(self, min_delta: float = DEFAULT_MIN_DELTA) -> Outcome:
        # AgentV's totals pair the rows of cases both sides judged; a base row that judged nothing is no side
        deltas = [c.delta for c in self.paired if c.delta is not None and c.status != "new"]
        wins = sum(1 for d in deltas if d > min_delta)
        losses = sum(1 for d in deltas if d < -min_delta)
        return Outcome(wins, losses, len(deltas) - wins - losses, sum(deltas) / len(deltas) if deltas else 0.0)

    def describe(self, unknown: Collection[CaseChange] = ()) -> str:
        """One line, e.g. `against the base: 1 regressed, 2 still failing (also on base), 1 fixed, 3 new`; the
        changes of `unknown` (the gate fails on them: the base never judged them) counted apart, after the
        regressions, as `no result on the base`, never among the new ones."""
        apart = {id(c) for c in unknown}
        counts = Counter(c.status for c in self.changes if id(c) not in apart)
        parts = [f"{counts[s]} {LABELS[s]}" for s in STATUSES if counts[s]]
        if apart:
            parts.insert(1 if counts["regressed"] else 0, f"{len(apart)} {UNKNOWN_ON_BASE}")
        return "against the base: " + (", ".join(parts) if parts else "no case in common")

    def labels(self) -> dict[tuple[str, str, str], str]:
        """(suite, test id, target) of each head row -> its status label, for annotation titles; a renamed case's
        regression says what it was called (`regressed (renamed from c1)`); its other labels stay the ones
        `--fail-on` reads (a renamed case still failing is a warning, as any)."""
        return {(c.head.suite, c.head.eval_id, c.head.target):
                c.label + (f" (renamed from {c.renamed_from})" if c.renamed_from and c.status == "regressed" else "")
                for c in self.changes if c.head is not None}


def _keys(rows: Sequence[ReportedCase], with_target: set[tuple[str, str]]) -> list[CaseKey]:
    return [(r.suite, r.eval_id, r.target) if (r.suite, r.eval_id) in with_target else (r.suite, r.eval_id)
            for r in rows]


def _repeated(rows: Iterable[ReportedCase]) -> set[tuple[str, str]]:
    counts = Counter((r.suite, r.eval_id) for r in rows)
    return {key for key, n in counts.items() if n > 1}


def case_key(row: ReportedCase) -> tuple[str, str]:
    """What pairs a row with a case: (suite, test id)."""
    return row.suite, row.eval_id


def _status(base: ReportedCase, head: ReportedCase, max_drop: float | None) -> tuple[Status, str]:
    unjudged = NO_BASE_RESULT.get(base.failure_reason_code or "")
    if unjudged is not None:  # neither failing nor passing there: "still failing" or "fixed" would say it was
        return "new", f"no result on base ({unjudged})"
    was, now = base.verdict == "pass", head.verdict == "pass"
    if was and not now:
        how = "errors" if head.verdict == "error" else "fails"
        return "regressed", f"passed on base ({base.score:.3f}), {how} now ({head.score:.3f})"
    # The fall as a user reads it: 1.0 -> 0.7 fell by 0.3, not by binary subtraction's 0.30000000000000004,
    # which is more than `--max-drop 0.3` and regressed a case that fell exactly the limit.
    if was and now and max_drop is not None and round(base.score - head.score, DROP_DIGITS) > max_drop:
        return "regressed", (f"score {base.score:.3f} -> {head.score:.3f}, "
                             f"dropped more than --max-drop {max_drop:g}")
    if not was and now:
        return "fixed", f"{base.verdict} on base ({base.score:.3f}), passes now ({head.score:.3f})"
    if not was:
        return "still failing", f"{base.verdict} on base ({base.score:.3f}) too"
    return "passing", ""


def compare_results(base: Sequence[ReportedCase], head: Sequence[ReportedCase],
                    max_drop: float | None = None) -> Comparison:
    """Pair `head` rows with `base` rows and say what happened to each case, in head order, then removed ones."""
    with_target = _repeated(base) | _repeated(head)
    base_by_key = dict(zip(_keys(base, with_target), base, strict=True))
    seen = set(_keys(head, with_target))
    unpaired = [row for key, row in zip(_keys(head, with_target), head, strict=True) if key not in base_by_key]
    removed = [row for key, row in base_by_key.items() if key not in seen]
    renamed = _renamed(removed, unpaired)
    changes: list[CaseChange] = []
    for key, row in zip(_keys(head, with_target), head, strict=True):
        before = base_by_key.get(key) or renamed.get(id(row))
        if before is None:
            changes.append(CaseChange("new", None, row, "no result on base"))
            continue
        status, reason = _status(before, row, max_drop)
        if before is not base_by_key.get(key):
            where = f" of {one_line(before.suite)}" if before.suite != row.suite else ""
            reason = f"renamed from '{one_line(before.eval_id)}'{where}" + (f": {reason}" if reason else "")
        changes.append(CaseChange(status, before, row, reason))
    taken = {id(row) for row in renamed.values()}
    changes += [CaseChange("removed", row, None, "no result now") for row in removed if id(row) not in taken]
    return Comparison(changes, max_drop)


def _renamed(removed: Sequence[ReportedCase], new: Sequence[ReportedCase]) -> dict[int, ReportedCase]:
    """id() of each head row of `new` -> the base row of `removed` holding its content: by content digest
    alone, or, where one digest has several rows on a side (a matrix case), by content digest and target.
    One removed row pairs with every new row of its key (copies of the case); several pair with a lone new
    row only when they agree on the verdict, as the best-scoring of them (the strictest base), and
    otherwise with none: which case became which would be a guess."""
    def digest(row: ReportedCase) -> str | None:
        return getattr(row, "content_digest", None)

    repeated = {d for side in (removed, new) for d, n in Counter(map(digest, side)).items() if n > 1}

    def by_key(side: Sequence[ReportedCase]) -> dict[tuple[str, ...], list[ReportedCase]]:
        found: dict[tuple[str, ...], list[ReportedCase]] = {}
        for row in side:
            d = digest(row)
            if d:
                found.setdefault((d, row.target) if d in repeated else (d,), []).append(row)
        return found

    olds, news = by_key(removed), by_key(new)
    pairs: dict[int, ReportedCase] = {}
    for key in olds.keys() & news.keys():
        before, after = olds[key], news[key]
        if len(before) == 1:
            pairs.update((id(row), before[0]) for row in after)
        elif len(after) == 1 and len({row.verdict for row in before}) == 1:
            pairs[id(after[0])] = max(before, key=lambda row: row.score)
    return pairs


__all__ = ["DEFAULT_MIN_DELTA", "LABELS", "NO_BASE_RESULT", "UNKNOWN_ON_BASE", "STATUSES", "CaseChange", "Comparison",
           "Outcome", "Status", "case_key", "compare_results"]
