"""Tokens and dollars per target and per judge over a run's rows: the console's last lines, the job
summary, report.html and the pull-request comment all read these totals, so they cannot disagree.

A run adds each row as it finishes (`add`), so the compact rows kept for the end-of-run reports
need not carry usage; `merge`, `compare` and `comment` build totals from the rows they read.
Figures no provider reported stay None and are shown as "not reported", never as 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..models import CaseResult
from ..targets.usage import Tally, Usage
from .github import md_cell
from .text import escape_html, inert_log_text, one_line


@dataclass
class UsageTotals:
    _targets: dict[str, Tally] = field(default_factory=dict)
    _judges: dict[str, Tally] = field(default_factory=dict)

    @classmethod
    def of(cls, rows: Iterable[CaseResult]) -> UsageTotals:
        totals = cls()
        for row in rows:
            totals.add(row)
        return totals

    def add(self, row: CaseResult) -> None:
        """One results row: its target's usage, and each of its judges'. A row that never reached its
        target (a not-run row, a setup error) counts nothing."""
        if row.target and (row.token_usage is not None or row.cost_usd is not None or row.verdict != "error"):
            tally = self._targets.get(row.target)
            if tally is None:
                tally = self._targets[row.target] = Tally()
            tally.add(row.token_usage, row.cost_usd)
        for judge, used in (row.judge_usage or {}).items():
            tally = self._judges.get(judge)
            if tally is None:
                tally = self._judges[judge] = Tally()
            if isinstance(used, dict):
                tally.add(used, used.get("cost_usd"))
            else:
                tally.add(None)

    @property
    def targets(self) -> dict[str, Usage]:
        return {name: tally.usage() for name, tally in self._targets.items()}

    @property
    def judges(self) -> dict[str, Usage]:
        return {name: tally.usage() for name, tally in self._judges.items()}

    def rows(self) -> list[tuple[str, str, Usage]]:
        """(role, name, usage), targets first, each sorted by name."""
        return ([("target", name, u) for name, u in sorted(self.targets.items())]
                + [("judge", name, u) for name, u in sorted(self.judges.items())])

    def __bool__(self) -> bool:
        return bool(self._targets or self._judges)

    def reported(self) -> bool:
        """Whether any target or judge reported tokens or a cost."""
        return any(u.tokens is not None or u.cost_usd is not None for _, _, u in self.rows())


def tokens_text(usage: Usage | None) -> str:
    """`1,234 in / 567 out`, `not reported`, or `—` for a target the other side did not have."""
    if usage is None:
        return "—"
    if usage.input is None and usage.output is None:
        return "not reported"
    return f"{_n(usage.input)} in / {_n(usage.output)} out" + _partial(usage.rows_with_tokens, usage.rows)


def cost_text(usage: Usage | None) -> str:
    if usage is None:
        return "—"
    if usage.cost_usd is None:
        return "not reported"
    return dollars(usage.cost_usd) + _partial(usage.rows_with_cost, usage.rows)


def dollars(value: float) -> str:
    return f"${value:,.4f}" if value < 100 else f"${value:,.2f}"


def _n(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def _partial(reported: int, of: int) -> str:
    return "" if reported == of else f" ({reported} of {of} reported)"


def console_lines(totals: UsageTotals) -> list[str]:
    """A line per target and judge, for the end of the console output; none when no provider reported
    anything (a mock or a plain-text agent: there is nothing to add up)."""
    if not totals.reported():
        return []
    lines = []
    for role, name, u in totals.rows():
        tokens = "tokens not reported" if u.tokens is None else f"{tokens_text(u)} tokens"
        cost = "cost not reported" if u.cost_usd is None else cost_text(u)
        what = "case" if role == "target" else "judged case"
        lines.append(inert_log_text(f"agentv-gate: {role} '{one_line(name)}': {tokens}, {cost} "
                                    f"({u.rows} {what}{'s' if u.rows != 1 else ''})"))
    return lines


def usage_markdown(head: UsageTotals, base: UsageTotals | None = None, heading: str = "#### Tokens and cost") -> str:
    """A table of tokens and dollars per target and judge; with `base`, the base's beside the head's.
    Nothing when no provider on either side reported anything (a mock, plain-text agents)."""
    if not head.reported() and not (base and base.reported()):
        return ""
    names = sorted({(role, name) for role, name, _ in head.rows()}
                   | ({(role, name) for role, name, _ in base.rows()} if base else set()),
                   key=lambda k: (k[0] != "target", k[1]))

    def get(totals: UsageTotals, role: str, name: str) -> Usage | None:
        return (totals.targets if role == "target" else totals.judges).get(name)

    if base is None:
        lines = ["| | Tokens | Cost |", "| --- | ---: | ---: |"]
        lines += [f"| {role} {md_cell(name, 200)} | {tokens_text(get(head, role, name))} | "
                  f"{cost_text(get(head, role, name))} |" for role, name in names]
    else:
        lines = ["| | Tokens (base) | Tokens (head) | Cost (base) | Cost (head) |",
                 "| --- | ---: | ---: | ---: | ---: |"]
        lines += [f"| {role} {md_cell(name, 200)} | {tokens_text(get(base, role, name))} | "
                  f"{tokens_text(get(head, role, name))} | {cost_text(get(base, role, name))} | "
                  f"{cost_text(get(head, role, name))} |" for role, name in names]
    return f"{heading}\n\n" + "\n".join(lines) + "\n\n"


def usage_html(totals: UsageTotals) -> str:
    """report.html's table of tokens and dollars per target and judge; every value escaped."""
    if not totals.reported():
        return ""
    rows = "".join(f"<tr><td>{role}</td><td>{escape_html(name)}</td><td>{tokens_text(u)}</td>"
                   f"<td>{cost_text(u)}</td><td>{u.rows}</td></tr>\n" for role, name, u in totals.rows())
    return ("<h2>Tokens and cost</h2>\n<table>\n<thead><tr><th>Role</th><th>Name</th><th>Tokens</th><th>Cost</th>"
            f"<th>Cases</th></tr></thead>\n<tbody>\n{rows}</tbody>\n</table>\n")


__all__ = ["UsageTotals", "console_lines", "cost_text", "dollars", "tokens_text", "usage_html", "usage_markdown"]
