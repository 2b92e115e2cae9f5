"""The pull-request comment: what the change did to each case against the base, and what the run cost.

One Markdown body, in the order a reviewer reads it: the verdict and the base it is judged
against; regressions first (case, eval file link at its line, base -> head score, first miss);
fixes; new and removed cases; the unchanged ones folded to counts; pass rate and mean score head
vs base; tokens and dollars per target and judge head vs base; links to the run and its reports.

It is built from the comparison the other reports use (`baseline.Comparison`): a status or a field
added there (a statistical label, say) is one more column or section here. Posting it is the
commands layer's job (`commands/_comment.py`); this module only writes text.

Everything from a case (ids, paths, misses) is untrusted: each goes through `comment_text`, so it
renders as the literal text it is: no HTML, no table broken by `|`, no code span, and no `@name`
that would notify someone. GitHub refuses a comment over 65,536 characters: past that, the
longest sections fold to a count and a link to the full report, until the body fits; it is never
cut mid-table and never refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from . import Summary, summarise
from .baseline.compare import CaseChange, Comparison
from .baseline.gate import unjudged_reasons, unjudged_why
from .baseline.paired import LABEL_ORDER, NoTest, SuiteTest
from .baseline.render import detection_line
from .console import first_problem
from .github import md_cell
from .paths import source_path
from .rows import ADVISORY, QUARANTINED, ReportedCase, outcome
from .usage import UsageTotals, usage_markdown

COMMENT_LIMIT = 65_536
"""GitHub's limit on an issue comment's body, in characters."""
MARKER_PREFIX = "<!-- agentv-gate-comment:"


def comment_text(text: object, limit: int = 300) -> str:
    """Untrusted text for the comment: one line, literal (`md_cell`), and `@` followed by a zero-width
    space so `@someone` or `@org/team` in a case's text notifies nobody (as Renovate does)."""
    return md_cell(text, limit).replace("@", "@&#8203;")


def marker(key: str) -> str:
    """The hidden first line that finds this comment again on the next push (the key is a hash: no
    untrusted text inside an HTML comment, whose `-->` would end it)."""
    return f"{MARKER_PREFIX}{key} -->"


@dataclass(frozen=True)
class Links:
    """Where the comment points; each None when unknown (the text then names the thing unlinked)."""

    run: str | None = None
    summary: str | None = None
    report: str | None = None
    file: Callable[[str, int], str | None] = field(default=lambda path, line: None)
    """(repo-relative path, line) -> a URL showing that line of the head commit."""


@dataclass(frozen=True)
class Base:
    """Which results the head is compared with: a name (the base branch), its commit and when it ran."""

    name: str | None = None
    commit: str | None = None
    date: str | None = None

    def describe(self) -> str:
        name = f"`{comment_text(self.name, 100)}`" if self.name else "the base results"
        parts = [name] + ([f"at {comment_text(self.commit[:12], 12)}"] if self.commit else [])
        when = f" (results from {comment_text(self.date, 40)})" if self.date else ""
        return " ".join(parts) + when


@dataclass(frozen=True)
class Verdict:
    ok: bool
    gate_line: str
    """The gate's own line (`gate (--fail-on regression): failed, 2 case(s) regressed ...`)."""


@dataclass(frozen=True)
class _Section:
    full: str
    folded: str
    """What the section becomes when the body is too long: its heading and a count."""


def _where(row: ReportedCase, links: Links) -> str:
    path = source_path(row)
    shown = f"{path}:{row.line}" if row.line > 0 else path
    url = links.file(path, row.line) if path else None
    text = comment_text(shown, 200)
    return f"[{text}]({url})" if url else text


def _score(row: ReportedCase | None) -> str:
    return "—" if row is None else f"{row.score:.2f} {outcome(row)}"


def _base_score(change: CaseChange) -> str:
    """The base side: a row of a case its run never started (`unjudged_why`) judged nothing, and says so,
    never "0.00 error" (it did not error)."""
    return "not judged" if unjudged_why(change) is not None else _score(change.base)


def _case_list(title: str, count: int, table: str, lines: list[str], links: Links) -> _Section:
    """A heading and its table of cases, or, where the comment has no room, the heading and a pointer to the page."""
    heading = f"#### {title} ({count:,})\n\n"
    where = f"[report.html]({links.report})" if links.report else "report.html"
    return _Section(heading + table + "".join(lines) + "\n",
                    f"{heading}_{count:,} case(s), listed in {where} (too many for one comment)._\n\n")


def _case_table(title: str, changes: Sequence[CaseChange], links: Links, with_miss: bool) -> _Section | None:
    if not changes:
        return None
    head = "| Case | Eval file | Base → head |" + (" First miss |" if with_miss else "") + "\n"
    head += "| --- | --- | --- |" + (" --- |" if with_miss else "") + "\n"
    lines = []
    several = _several(changes)
    for c in changes:
        row = c.row
        name = comment_text(c.name, 300) + (f" ({comment_text(row.target, 80)})" if several else "")
        cells = [name, _where(row, links), f"{_base_score(c)} → {_score(c.head)}"]
        if with_miss:
            cells.append(comment_text(first_problem(c.head), 300) if c.head is not None else "")
        lines.append("| " + " | ".join(cells) + " |\n")
    return _case_list(title, len(changes), head, lines, links)


def _unknown_table(unknown: Sequence[CaseChange], links: Links) -> _Section | None:
    """The cases the base never judged that do not pass now: the gate fails on them, so they are listed as
    failures, right after the regressions, never among the new cases `--fail-on regression` lets by."""
    table = _case_table("No result on the base, failing now", unknown, links, with_miss=True)
    if table is None:
        return None
    reasons = unjudged_reasons(unknown)
    note = (f"_The base run never judged these cases ({comment_text(reasons, 300)}), so it cannot show this change "
            "did not break them: the gate fails on them until they pass, or the base is run again._\n\n")
    heading, rest = table.full.split("\n\n", 1)
    return _Section(f"{heading}\n\n{note}{rest}", table.folded)


def _several(changes: Sequence[CaseChange]) -> bool:
    return len({c.row.target for c in changes}) > 1


def _failing_table(rows: Sequence[ReportedCase], links: Links) -> _Section | None:
    """Without a base: the cases that did not pass, as the regressions table would show them."""
    bad = [r for r in rows if r.verdict != "pass" and outcome(r) not in (QUARANTINED, ADVISORY)]
    if not bad:
        return None
    lines = [f"| {comment_text(r.eval_id, 200)} | {_where(r, links)} | {r.score:.2f} {r.verdict} | "
             f"{comment_text(first_problem(r), 300)} |\n" for r in bad]
    return _case_list("Not passing", len(bad), "| Case | Eval file | Score | First miss |\n| --- | --- | --- | --- |\n",
                      lines, links)


def _quarantined_table(rows: Sequence[ReportedCase], links: Links) -> _Section | None:
    """The quarantined cases that did not pass, apart: they do not fail the gate, and are no failure
    to the reader either; each with the reason (and `until`) its quarantine entry gives."""
    held = [r for r in rows if outcome(r) == QUARANTINED]
    if not held:
        return None
    lines = [f"| {comment_text(r.eval_id, 200)} | {_where(r, links)} | {r.score:.2f} | "
             f"{comment_text(r.quarantined, 300)} | {comment_text(first_problem(r), 300)} |\n" for r in held]
    return _case_list("Quarantined", len(held), "_Known gaps listed in `.agentv/gate.yaml`: they do not fail the gate._\n\n"
                      "| Case | Eval file | Score | Quarantined for | First miss |\n| --- | --- | --- | --- | --- |\n",
                      lines, links)


def _advisory_table(rows: Sequence[ReportedCase], links: Links) -> _Section | None:
    """The cases failed only by judges below `.agentv/gate.yaml`'s `judges:` floor: warnings, apart."""
    held = [r for r in rows if outcome(r) == ADVISORY]
    if not held:
        return None
    lines = [f"| {comment_text(r.eval_id, 200)} | {_where(r, links)} | {r.score:.2f} | "
             f"{comment_text(r.advisory, 300)} | {comment_text(r.misses[0] if r.misses else '', 300)} |\n"
             for r in held]
    return _case_list("Advisory", len(held), "_Failed only by a judge below its floor in `.agentv/gate.yaml`: "
                      "not decided, not failing the gate._\n\n"
                      "| Case | Eval file | Score | Why advisory | First miss |\n| --- | --- | --- | --- | --- |\n",
                      lines, links)


def _unchanged(comparison: Comparison, links: Links) -> _Section | None:
    passing, failing = comparison.with_status("passing"), comparison.with_status("still failing")
    if not passing and not failing:
        return None
    summary = f"{len(passing) + len(failing):,} unchanged: {len(passing):,} still passing, {len(failing):,} still failing"
    table = _case_table("Still failing, also on base", failing, links, with_miss=True)
    body = table.full if table else ""
    return _Section(f"<details><summary>{summary}</summary>\n\n{body}</details>\n\n",
                    f"<details><summary>{summary}</summary>\n\n_listed in "
                    f"{f'[report.html]({links.report})' if links.report else 'report.html'}._\n</details>\n\n")


def _without(changes: Sequence[CaseChange], unknown: Sequence[CaseChange]) -> list[CaseChange]:
    """`changes` less those of `unknown` (listed apart, as failures; a base row that judged nothing makes its
    case `new`, never `still failing`)."""
    listed = {id(c) for c in unknown}
    return [c for c in changes if id(c) not in listed]


def _paired(test: SuiteTest | NoTest | None, links: Links) -> _Section | None:
    """The paired test over trials: its line, then every case it labelled regression, inconclusive or
    improvement, or found flaky, with its trial counts on both sides (never silently passed)."""
    if test is None:
        return None
    if isinstance(test, NoTest):
        line = f"**Paired test:** {comment_text(test.line(), 500)}\n\n"
        return _Section(line, line)
    top = f"**Paired test:** {comment_text(test.headline(), 500)} · {comment_text(test.counts_line(), 300)}\n\n"
    reruns = test.reruns_line()
    if reruns:
        top += f"{comment_text(reruns, 600)}\n\n"
    detects = detection_line(test)
    if detects:
        top += f"_{detects}_\n\n"
    shown = sorted((c for c in test.cases if c.label != "unchanged" or c.flaky),
                   key=lambda c: (LABEL_ORDER.index(c.label), c.rate_delta))
    if not shown:
        return _Section(top, top)
    rows = [f"| {c.label}{' (flaky)' if c.flaky else ''} | {comment_text(c.change.row.eval_id, 200)} | "
            f"{_where(c.change.row, links)} | {sum(c.base.passed)}/{len(c.base.passed)} → "
            f"{sum(c.head.passed)}/{len(c.head.passed)} | {c.p:.3g} | {c.q:.3g} |\n" for c in shown]
    where = f"[report.html]({links.report})" if links.report else "report.html"
    return _Section(top + "| Label | Case | Eval file | Trials passed, base → head | Fisher p | q |\n"
                    "| --- | --- | --- | --- | ---: | ---: |\n" + "".join(rows) + "\n",
                    top + f"_{len(shown):,} labelled case(s), listed in {where} (too many for one comment)._\n\n")


def _mean(rows: Sequence[ReportedCase]) -> float | None:
    return sum(r.score for r in rows) / len(rows) if rows else None


def _totals(head: Sequence[ReportedCase], summary: Summary, base: Sequence[ReportedCase] | None) -> str:
    head_mean = _mean(head)
    if base is None:
        mean = "—" if head_mean is None else f"{head_mean:.3f}"
        return ("#### Pass rate and mean score\n\n| | Head |\n| --- | ---: |\n"
                f"| Pass rate | {summary.pass_rate:.1%} ({summary.passed:,} of {summary.total:,}) |\n| Mean score | {mean} |\n\n")
    base_summary, base_mean = summarise(base), _mean(base)

    def change(a: float | None, b: float | None, points: bool) -> str:
        if a is None or b is None:
            return "—"
        return f"{(b - a) * 100:+.1f} pts" if points else f"{b - a:+.3f}"

    return ("#### Pass rate and mean score\n\n| | Base | Head | Change |\n| --- | ---: | ---: | ---: |\n"
            f"| Pass rate | {base_summary.pass_rate:.1%} ({base_summary.passed:,} of {base_summary.total:,}) | "
            f"{summary.pass_rate:.1%} ({summary.passed:,} of {summary.total:,}) | "
            f"{change(base_summary.pass_rate, summary.pass_rate, True)} |\n"
            f"| Mean score | {'—' if base_mean is None else f'{base_mean:.3f}'} | "
            f"{'—' if head_mean is None else f'{head_mean:.3f}'} | {change(base_mean, head_mean, False)} |\n\n")


def _links(links: Links) -> str:
    items = [f"[{label}]({url})" for label, url in (("Run", links.run), ("Job summary", links.summary),
                                                     ("report.html", links.report)) if url]
    return " · ".join(items) + "\n" if items else ""


def _size(text: str) -> int:
    """Characters as GitHub counts them (UTF-16 code units: an emoji counts twice)."""
    return len(text.encode("utf-16-le")) // 2


def render_comment(head: Sequence[ReportedCase], verdict: Verdict, *, key: str,
                   comparison: Comparison | None = None, base_rows: Sequence[ReportedCase] | None = None,
                   base: Base | None = None, usage: UsageTotals | None = None,
                   base_usage: UsageTotals | None = None, links: Links | None = None,
                   planned: int | None = None, paired: SuiteTest | NoTest | None = None,
                   unknown: Sequence[CaseChange] = (), limit: int = COMMENT_LIMIT) -> str:
    """The comment's Markdown body, at most `limit` characters, starting with the hidden marker of `key`.
    `unknown`: the changes of `comparison` the gate fails on because the base never judged them
    (`Verdict.unknown`), listed as failures apart from the new cases."""
    links = links or Links()
    summary = summarise(head, planned)
    mark = "✅" if verdict.ok else "❌"
    against = f" against {(base or Base()).describe()}" if comparison is not None else ""
    counts = f" · {comment_text(comparison.describe(unknown), 300)}" if comparison is not None else ""
    top = (f"{marker(key)}\n### {mark} agentv-gate: {'PASSED' if verdict.ok else 'FAILED'}{against}\n\n"
           f"{comment_text(verdict.gate_line, 500)} · {comment_text(summary.describe(), 300)}{counts}\n\n")
    sections: list[_Section | None]
    if comparison is not None:
        sections = [_paired(paired, links),
                    _case_table("Regressions", comparison.with_status("regressed"), links, with_miss=True),
                    _unknown_table(unknown, links),
                    _case_table("Fixes", comparison.with_status("fixed"), links, with_miss=False),
                    _case_table("New", _without(comparison.with_status("new"), unknown), links, with_miss=True),
                    _case_table("Removed", comparison.with_status("removed"), links, with_miss=False),
                    _unchanged(comparison, links), _quarantined_table(head, links), _advisory_table(head, links)]
    else:
        sections = [_failing_table(head, links), _quarantined_table(head, links), _advisory_table(head, links)]
    kept = [s for s in sections if s is not None]
    tail = (_totals(head, summary, base_rows if comparison is not None else None)
            + usage_markdown(usage or UsageTotals(), base_usage if comparison is not None else None)
            + _links(links))
    bodies = [s.full for s in kept]
    fixed = _size(top) + _size(tail)
    # Fold the longest section until the body fits: the verdict, totals, cost and links always stay.
    while fixed + sum(_size(b) for b in bodies) > limit:
        unfolded = [i for i, s in enumerate(kept) if bodies[i] != s.folded]
        if not unfolded:
            break
        longest = max(unfolded, key=lambda i: _size(bodies[i]))
        bodies[longest] = kept[longest].folded
    body = top + "".join(bodies) + tail
    if _size(body) > limit:  # only a huge verdict line or cost table gets here: cut at a line, say so
        note = "\n_(cut to fit GitHub's comment size limit)_\n"
        cut = body[: limit - len(note) - 1]
        body = cut[: cut.rfind("\n") + 1] + note
        while _size(body) > limit:
            body = body[: len(body) - len(note) - 200] + note
    return body


__all__ = ["COMMENT_LIMIT", "MARKER_PREFIX", "Base", "Links", "Verdict", "comment_text", "marker", "render_comment"]
