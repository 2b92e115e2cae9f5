"""Two sets of results side by side: what a change did to each case (`compare`, `run --baseline`).

Rows are paired by suite (the eval file's repo-relative path) and test id, as AgentV's `compare`
pairs by `test_id`; the suite is part of the key because two eval files may both have a case
`smoke`. When one file holds several rows of the same case (a target matrix) the target joins the
key, so each target's row is paired with the same target's row on the other side.

A case's status answers "what did this change do to it?":

- `regressed`: it passed on the base and does not now (failed, errored or was not run), or its
  score dropped by more than `max_drop` when that is set;
- `still failing`: it did not pass on the base either;
- `fixed`: it did not pass on the base and passes now;
- `passing`: it passes on both;
- `new`: the base has no row for it; `removed`: only the base has a row for it.

Everything here reads rows only (never an eval file), like every reporter.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .github import md_cell
from .paths import source_path
from .rows import ReportedCase
from .text import clean, inert_log_text, one_line

Status = Literal["regressed", "still failing", "fixed", "passing", "new", "removed"]
STATUSES: tuple[Status, ...] = ("regressed", "still failing", "fixed", "new", "removed", "passing")
DEFAULT_MIN_DELTA = 0.1
"""AgentV's `compare --threshold` default: a score change within it is a tie."""
DROP_DIGITS = 9
"""Decimals a score's fall is read to against `--max-drop`: far below any score a judge reports, far above
the error of subtracting two binary fractions."""

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
        deltas = [c.delta for c in self.paired if c.delta is not None]
        wins = sum(1 for d in deltas if d > min_delta)
        losses = sum(1 for d in deltas if d < -min_delta)
        return Outcome(wins, losses, len(deltas) - wins - losses, sum(deltas) / len(deltas) if deltas else 0.0)

    def describe(self) -> str:
        """One line, e.g. `against the base: 1 regressed, 2 still failing (also on base), 1 fixed, 3 new`."""
        counts = self.counts()
        parts = [f"{counts[s]} {LABELS[s]}" for s in STATUSES if counts[s]]
        return "against the base: " + (", ".join(parts) if parts else "no case in common")

    def labels(self) -> dict[tuple[str, str, str], str]:
        """(suite, test id, target) of each head row -> its status label, for annotation titles."""
        return {(c.head.suite, c.head.eval_id, c.head.target): c.label for c in self.changes if c.head is not None}


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
    changes: list[CaseChange] = []
    seen: set[CaseKey] = set()
    for key, row in zip(_keys(head, with_target), head, strict=True):
        seen.add(key)
        before = base_by_key.get(key)
        if before is None:
            changes.append(CaseChange("new", None, row, "no result on base"))
        else:
            status, reason = _status(before, row, max_drop)
            changes.append(CaseChange(status, before, row, reason))
    changes += [CaseChange("removed", row, None, "no result now") for key, row in base_by_key.items()
                if key not in seen]
    return Comparison(changes, max_drop)


# ---------------------------------------------------------------- text for the reports


def _score(row: ReportedCase | None) -> str:
    return "—" if row is None else f"{row.score:.3f} {row.verdict}"


def _delta(change: CaseChange) -> str:
    delta = change.delta
    return "" if delta is None else f"{delta:+.3f}"


def console_lines(comparison: Comparison, shown: Sequence[Status] = ("regressed", "fixed", "still failing", "new",
                                                                       "removed")) -> list[str]:
    """A block for the console: a line per case whose status is in `shown`, then the counts line."""
    lines = []
    for status in shown:
        for change in comparison.with_status(status):
            row = change.row
            where = f"{row.suite}:{row.line}" if row.line > 0 else row.suite
            reason = f" — {change.reason}" if change.reason else ""
            lines.append(inert_log_text(f"{change.label.upper()}: {one_line(row.eval_id)} ({one_line(where)}){reason}"))
    return lines + [comparison.describe()]


TABLE_ROWS = 200
"""Cases listed in the job summary's and report.html's comparison table (still-passing ones never are)."""


def _shown(comparison: Comparison) -> list[CaseChange]:
    order = {s: i for i, s in enumerate(STATUSES)}
    return sorted((c for c in comparison.changes if c.status != "passing"),
                  key=lambda c: (order[c.status], c.row.suite, c.row.line, c.row.eval_id))


def _outcome_line(comparison: Comparison, min_delta: float) -> str:
    """Wins, losses and ties beyond `min_delta`, and the mean delta: one sentence, plain text."""
    o = comparison.outcome(min_delta)
    return (f"{o.wins} wins, {o.losses} losses, {o.ties} ties (a score change beyond {min_delta:g}); "
            f"mean delta {o.mean_delta:+.3f}")


def comparison_markdown(comparison: Comparison, gate_line: str, root: Path | None = None,
                        min_delta: float | None = None) -> str:
    """The job summary's section: the gate's line, the counts, and a row per case that did not stay green."""
    parts = ["### Against the base results\n\n", md_cell(gate_line, 1000) + "\n\n",
             md_cell(comparison.describe(), 1000) + "\n\n"]
    if min_delta is not None:
        parts.append(_outcome_line(comparison, min_delta) + "\n\n")
    shown = _shown(comparison)
    if shown:
        parts.append("| Change | Case | Where | Base | Now | Delta |\n| --- | --- | --- | --- | --- | ---: |\n")
        for c in shown[:TABLE_ROWS]:
            row = c.row
            where = f"{source_path(row, root)}:{row.line}" if row.line > 0 else source_path(row, root)
            parts.append(f"| {c.label} | {md_cell(row.eval_id)} | {md_cell(where, 200)} | {_score(c.base)} | "
                         f"{_score(c.head)} | {_delta(c)} |\n")
        if len(shown) > TABLE_ROWS:
            parts.append(f"\n_{len(shown) - TABLE_ROWS} more changed case(s) not listed; "
                         "`agentv-gate compare BASE.jsonl HEAD.jsonl --json` lists them all._\n")
        parts.append("\n")
    return "".join(parts)


def comparison_html(comparison: Comparison, gate_line: str, min_delta: float | None = None) -> str:
    """report.html's section, plain HTML (readable without JavaScript); every value escaped."""
    esc = html.escape
    parts = ["<h2>Against the base results</h2>\n", f"<p class=\"totals\">{esc(clean(gate_line))}</p>\n",
             f"<p>{esc(comparison.describe())}</p>\n"]
    if min_delta is not None:
        parts.append(f"<p>{esc(_outcome_line(comparison, min_delta))}</p>\n")
    shown = _shown(comparison)
    if shown:
        parts.append("<table>\n<thead><tr><th>Change</th><th>Case</th><th>Eval file</th><th>Base</th><th>Now</th>"
                     "<th>Delta</th><th>Why</th></tr></thead>\n<tbody>\n")
        for c in shown[:TABLE_ROWS]:
            row = c.row
            where = f"{source_path(row)}:{row.line}" if row.line > 0 else source_path(row)
            cells = [c.label, clean(row.eval_id), clean(where), _score(c.base), _score(c.head), _delta(c), c.reason]
            parts.append("<tr>" + "".join(f"<td>{esc(str(v))}</td>" for v in cells) + "</tr>\n")
        parts.append("</tbody>\n</table>\n")
        if len(shown) > TABLE_ROWS:
            parts.append(f"<p>{len(shown) - TABLE_ROWS} more changed case(s) not listed.</p>\n")
    return "".join(parts)


def comparison_json(comparison: Comparison, min_delta: float) -> dict[str, object]:
    """`compare --json`: AgentV's totals plus each case's status, scores and delta."""
    outcome = comparison.outcome(min_delta)
    return {
        "min_delta": min_delta,
        "max_drop": comparison.max_drop,
        "wins": outcome.wins, "losses": outcome.losses, "ties": outcome.ties,
        "mean_delta": round(outcome.mean_delta, 6),
        "counts": {s: comparison.counts()[s] for s in STATUSES},
        "regressed": len(comparison.regressed),
        "cases": [{
            "suite": c.row.suite, "test_id": c.row.eval_id, "target": c.row.target, "status": c.status,
            "base_score": None if c.base is None else c.base.score,
            "head_score": None if c.head is None else c.head.score,
            "base_verdict": None if c.base is None else c.base.verdict,
            "head_verdict": None if c.head is None else c.head.verdict,
            "delta": None if c.delta is None else round(c.delta, 6),
            "reason": c.reason,
        } for c in comparison.changes],
    }


__all__ = ["DEFAULT_MIN_DELTA", "LABELS", "STATUSES", "CaseChange", "Comparison", "Outcome", "Status", "case_key",
           "comparison_html", "comparison_json", "comparison_markdown", "compare_results", "console_lines"]
