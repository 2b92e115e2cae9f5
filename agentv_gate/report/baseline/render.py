"""The baseline feature's text: the comparison and the paired test in the console, the job summary,
report.html and `compare --json`, and the verdict with its reports (`BaselineReport`). The last
layer of `report/baseline/`: it reads what the others decided and decides nothing.

Every value from a case (ids, paths, answers) is escaped for where it goes: inert in a CI log, a
cell in Markdown, escaped in HTML.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, fields
from pathlib import Path

from ...redaction import redact
from .. import Summary
from ..github import md_cell
from ..paths import source_path
from ..rows import ReportedCase
from ..text import clean, escape_html, inert_log_text, one_line
from .compare import STATUSES, CaseChange, Comparison, Status
from .gate import UNKNOWN_ON_BASE, Baseline, Verdict, decide, stop_reason, unjudged_why
from .paired import DEFAULT_ALPHA, DRIVERS, LABEL_ORDER, NoTest, SuiteTest, case_guard, cut_short
from .stats import Interval


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


# ---------------------------------------------------------------- the comparison


def _score(row: ReportedCase | None) -> str:
    return "—" if row is None else f"{row.score:.3f} {row.verdict}"


def base_side(change: CaseChange) -> str:
    """The base side of a change: `not judged` for a base row of a case its run never started (never
    "0.000 error": it did not error)."""
    return "not judged" if unjudged_why(change) is not None else _score(change.base)


def delta_text(change: CaseChange) -> str:
    delta = change.delta
    return "" if delta is None or unjudged_why(change) is not None else f"{delta:+.3f}"


def label_of(change: CaseChange, unknown: Collection[int]) -> str:
    """The change's label; `no result on the base` for one of `unknown` (id()s of the cases the gate fails on
    because the base never judged them), which the comparison alone calls `new`."""
    return UNKNOWN_ON_BASE if id(change) in unknown else change.label


def console_lines(comparison: Comparison, shown: Sequence[Status] = ("regressed", "fixed", "still failing", "new",
                                                                       "removed"),
                  unknown: Sequence[CaseChange] = ()) -> list[str]:
    """A block for the console: a line per case whose status is in `shown`, then the counts line. The cases of
    `unknown` (`Verdict.unknown`: the gate fails on them) come right after the regressions, always shown."""
    ids = {id(c) for c in unknown}

    def line(change: CaseChange) -> str:
        row = change.row
        where = f"{row.suite}:{row.line}" if row.line > 0 else row.suite
        reason = f" — {change.reason}" if change.reason else ""
        return inert_log_text(f"{label_of(change, ids).upper()}: {one_line(row.eval_id)} ({one_line(where)}){reason}")

    lines = [] if "regressed" in shown else [line(c) for c in unknown]
    for status in shown:
        lines += [line(c) for c in comparison.with_status(status) if id(c) not in ids]
        if status == "regressed":
            lines += [line(c) for c in unknown]
    return lines + [comparison.describe(unknown)]


TABLE_ROWS = 200
"""Cases listed in the job summary's and report.html's comparison table (still-passing ones never are)."""


def _shown(comparison: Comparison, unknown: Collection[int]) -> list[CaseChange]:
    """The changed cases, regressions first, then those of `unknown` (id()s: the gate fails on them)."""
    order = {s: i for i, s in enumerate(STATUSES)}
    return sorted((c for c in comparison.changes if c.status != "passing"),
                  key=lambda c: (order["regressed"] + 0.5 if id(c) in unknown else order[c.status], c.row.suite,
                                 c.row.line, c.row.eval_id))


def _outcome_line(comparison: Comparison, min_delta: float) -> str:
    """Wins, losses and ties beyond `min_delta`, and the mean delta: one sentence, plain text."""
    o = comparison.outcome(min_delta)
    return (f"{o.wins} wins, {o.losses} losses, {o.ties} ties (a score change beyond {min_delta:g}); "
            f"mean delta {o.mean_delta:+.3f}")


def comparison_markdown(comparison: Comparison, gate_line: str, root: Path | None = None,
                        min_delta: float | None = None, unknown: Sequence[CaseChange] = ()) -> str:
    """The job summary's section: the gate's line, the counts, and a row per case that did not stay green
    (`unknown`, the cases the gate fails on that the base never judged, labelled so)."""
    ids = {id(c) for c in unknown}
    parts = ["### Against the base results\n\n", md_cell(gate_line, 1000) + "\n\n",
             md_cell(comparison.describe(unknown), 1000) + "\n\n"]
    if min_delta is not None:
        parts.append(_outcome_line(comparison, min_delta) + "\n\n")
    shown = _shown(comparison, ids)
    if shown:
        parts.append("| Change | Case | Where | Base | Now | Delta |\n| --- | --- | --- | --- | --- | ---: |\n")
        for c in shown[:TABLE_ROWS]:
            row = c.row
            where = f"{source_path(row, root)}:{row.line}" if row.line > 0 else source_path(row, root)
            parts.append(f"| {label_of(c, ids)} | {md_cell(c.name)} | {md_cell(where, 200)} | {base_side(c)} | "
                         f"{_score(c.head)} | {delta_text(c)} |\n")
        if len(shown) > TABLE_ROWS:
            parts.append(f"\n_{len(shown) - TABLE_ROWS} more changed case(s) not listed; "
                         "`agentv-gate compare BASE.jsonl HEAD.jsonl --json` lists them all._\n")
        parts.append("\n")
    return "".join(parts)


def comparison_html(comparison: Comparison, gate_line: str, min_delta: float | None = None,
                    unknown: Sequence[CaseChange] = ()) -> str:
    """report.html's section, plain HTML (readable without JavaScript); every value escaped; `unknown` as in
    `comparison_markdown`."""
    esc = escape_html
    ids = {id(c) for c in unknown}
    parts = ["<h2>Against the base results</h2>\n", f"<p class=\"totals\">{esc(clean(gate_line))}</p>\n",
             f"<p>{esc(comparison.describe(unknown))}</p>\n"]
    if min_delta is not None:
        parts.append(f"<p>{esc(_outcome_line(comparison, min_delta))}</p>\n")
    shown = _shown(comparison, ids)
    if shown:
        parts.append("<table>\n<thead><tr><th>Change</th><th>Case</th><th>Eval file</th><th>Base</th><th>Now</th>"
                     "<th>Delta</th><th>Why</th></tr></thead>\n<tbody>\n")
        for c in shown[:TABLE_ROWS]:
            row = c.row
            where = f"{source_path(row)}:{row.line}" if row.line > 0 else source_path(row)
            cells = [label_of(c, ids), clean(c.name), clean(where), base_side(c), _score(c.head), delta_text(c),
                     c.reason]
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
            "renamed_from": None if c.renamed_from is None or c.base is None else {
                "suite": c.base.suite, "test_id": c.base.eval_id},
        } for c in comparison.changes],
    }


# ---------------------------------------------------------------- the paired test


def _where(change: CaseChange) -> str:
    row = change.row
    return f"{row.suite}:{row.line}" if row.line > 0 else row.suite


def paired_console_lines(test: SuiteTest | NoTest, quiet: bool = False) -> list[str]:
    """The console's block: the suite line, the cases that drove a drop, inconclusive and flaky cases."""
    if isinstance(test, NoTest):
        return [test.line()]
    lines = [test.headline()]
    shown = test.with_label("regression", "inconclusive", "improvement") if not quiet else \
        test.with_label("regression", "inconclusive")
    for case in sorted(shown, key=lambda c: (LABEL_ORDER.index(c.label), c.rate_delta, c.p)):
        lines.append(inert_log_text(f"{case.label.upper()}: {one_line(case.change.row.eval_id)} "
                                    f"({one_line(_where(case.change))}) — {case.describe()}"))
    flaky = [c.change.row.eval_id for c in test.flaky]
    if flaky:
        more = f" and {len(flaky) - DRIVERS * 2} more" if len(flaky) > DRIVERS * 2 else ""
        lines.append(inert_log_text("FLAKY (trials disagree on the base, or flipped in the history): "
                                    + ", ".join(one_line(i) for i in flaky[:DRIVERS * 2]) + more))
    for case in test.guarded("suspicious"):
        head = case.change.head
        why = (f"the per-case guard's re-runs of it were stopped ({stop_reason(head)}) before it was decided"
               if head is not None and cut_short(case) else "the per-case guard needs more head trials to "
               "decide it (`run --fail-on regression` re-runs it, up to --max-trials)")
        lines.append(inert_log_text(f"SUSPICIOUS: {one_line(case.change.row.eval_id)} ({case.counts()}) — {why}"))
    reruns = test.reruns_line()
    if reruns:
        lines.append(inert_log_text(reruns))
    lines.append(test.counts_line())
    return lines


def paired_markdown(test: SuiteTest | NoTest) -> str:
    """The job summary's part: the suite line and a row per case that did not stay unchanged (or is flaky)."""
    if isinstance(test, NoTest):
        return md_cell(test.line(), 1000) + "\n\n"
    parts = [f"**Paired test:** {md_cell(test.headline(), 1000)}\n\n", md_cell(test.counts_line(), 1000) + "\n\n"]
    reruns = test.reruns_line()
    if reruns:
        parts.append(md_cell(reruns, 1000) + "\n\n")
    shown = [c for c in test.cases if c.label != "unchanged" or c.flaky]
    if shown:
        parts.append("| Label | Case | Where | Base trials | Head trials | Score | Fisher p | q |\n"
                     "| --- | --- | --- | ---: | ---: | --- | ---: | ---: |\n")
        for c in sorted(shown, key=lambda c: (LABEL_ORDER.index(c.label), c.rate_delta))[:200]:
            row = c.change.row
            where = f"{source_path(row)}:{row.line}" if row.line > 0 else source_path(row)
            label = c.label + (" (flaky)" if c.flaky else "")
            parts.append(f"| {label} | {md_cell(row.eval_id)} | {md_cell(where, 200)} | "
                         f"{sum(c.base.passed)}/{len(c.base.passed)} | {sum(c.head.passed)}/{len(c.head.passed)} | "
                         f"{_mean(c.base.scores):.3f} → {_mean(c.head.scores):.3f} | {c.p:.3g} | {c.q:.3g} |\n")
        parts.append("\n")
    return "".join(parts)


def paired_html(test: SuiteTest | NoTest) -> str:
    """report.html's part, every value escaped."""
    esc = escape_html
    if isinstance(test, NoTest):
        return f"<p>{esc(test.line())}</p>\n"
    parts = [f"<h3>Paired test</h3>\n<p class=\"totals\">{esc(test.headline())}</p>\n<p>{esc(test.counts_line())}</p>\n"]
    reruns = test.reruns_line()
    if reruns:
        parts.append(f"<p>{esc(reruns)}</p>\n")
    shown = [c for c in test.cases if c.label != "unchanged" or c.flaky]
    if shown:
        parts.append("<table>\n<thead><tr><th>Label</th><th>Case</th><th>Eval file</th><th>Base trials</th>"
                     "<th>Head trials</th><th>Score</th><th>Fisher p</th><th>q</th></tr></thead>\n<tbody>\n")
        for c in sorted(shown, key=lambda c: (LABEL_ORDER.index(c.label), c.rate_delta))[:200]:
            row = c.change.row
            where = f"{source_path(row)}:{row.line}" if row.line > 0 else source_path(row)
            cells = [c.label + (" (flaky)" if c.flaky else ""), row.eval_id, where,
                     f"{sum(c.base.passed)}/{len(c.base.passed)}", f"{sum(c.head.passed)}/{len(c.head.passed)}",
                     f"{_mean(c.base.scores):.3f} → {_mean(c.head.scores):.3f}", f"{c.p:.3g}", f"{c.q:.3g}"]
            parts.append("<tr>" + "".join(f"<td>{esc(str(v))}</td>" for v in cells) + "</tr>\n")
        parts.append("</tbody>\n</table>\n")
    return "".join(parts)


def paired_json(test: SuiteTest | NoTest) -> dict[str, object]:
    """`compare --json`'s `paired` object."""
    if isinstance(test, NoTest):
        return {"decision": None, "reason": test.reason}

    def interval(i: Interval | None) -> dict[str, float] | None:
        return None if i is None else {"mean": round(i.mean, 6), "low": round(i.low, 6), "high": round(i.high, 6),
                                       "level": round(i.level, 6)}

    return {
        "decision": "regression" if test.dropped else "no significant drop",
        "alpha": test.alpha, "suite_alpha": test.suite_alpha, "guard_level": test.guard_level,
        "max_trials": test.budget, "p_drop": test.p_drop, "p_score_drop": test.p_score_drop,
        "pass_rate_delta": interval(test.pass_rate), "score_delta": interval(test.score),
        "cases": [{"suite": c.change.row.suite, "test_id": c.change.row.eval_id, "label": c.label, "flaky": c.flaky,
                   "base_passed": sum(c.base.passed), "base_trials": len(c.base.passed),
                   "history_passed": sum(c.earlier), "history_trials": len(c.earlier),
                   "head_passed": sum(c.head.passed), "head_trials": len(c.head.passed),
                   "p": c.p, "q": c.q, "guard": case_guard(c), "guard_p": c.p_guard,
                   "reruns": len(c.reruns), "reruns_passed": sum(c.reruns)} for c in test.cases],
    }


@dataclass(frozen=True)
class Detects:
    """What bench/stats_bench.py measured at one trial count (50 cases, 200 simulated pull requests a
    cell, seed 2026, alpha 0.05, the default --max-trials, the per-case guard's re-runs simulated)."""

    broken: float
    """One stable case broken completely, caught, with a steady judge: the least over all stable, 30%
    flaky, a few cases passing rarely."""
    broken_noisy_judge: float
    """The same under a judge that flips 10% of verdicts (the broken case then passes 10% of trials), at
    worst with or without one case at 30% among the rest."""
    false_alarms: float
    """Unchanged reruns failed, at worst over every noise model the bench has."""
    broad: tuple[float, float]
    """10 of 50 cases dropping 30 points, caught: the least (flaky cases or a noisy judge) and the most
    (stable cases) over those noise models."""


DETECTS: dict[int, Detects] = {
    3: Detects(1.0, 0.77, 0.035, (0.215, 0.91)),
    5: Detects(1.0, 0.945, 0.04, (0.40, 1.0)),
}
"""Per trials a side, from `bench/stats_bench.py --noise MODEL --trials 3,5 --drops 0,break1,10`."""
DETECTS_WITH_HISTORY: dict[int, Detects] = {
    3: Detects(1.0, 0.90, 0.03, (0.26, 0.935)),
    5: Detects(1.0, 0.985, 0.043, (0.425, 1.0)),
}
"""The same with `--history` holding one earlier run of the base (`--history 1`): what a run whose every
case has history trials on its digest, as many as its base trials at least, can detect."""


def _share(value: float) -> str:
    """`100%`, `87.5%`: a share as measured, without a trailing `.0`."""
    return f"{value:.1%}".replace(".0%", "%")


def detection_line(test: SuiteTest) -> str | None:
    """What the gate can detect at the trials this test ran, for the pull-request comment's footer;
    None at a trial count, alpha or --max-trials the bench did not measure."""
    counts = {len(c.base.passed) for c in test.cases} | {len(c.head.passed) for c in test.cases}
    if len(counts) != 1 or next(iter(counts)) not in DETECTS or test.alpha != DEFAULT_ALPHA or test.budget:
        return None
    trials = next(iter(counts))
    history = all(len(c.earlier) >= trials for c in test.cases)
    d = (DETECTS_WITH_HISTORY if history else DETECTS)[trials]
    settings = ", --history of an earlier run" if history else ""
    return (f"At {trials} trials a side (bench/stats_bench.py, 50 cases, alpha {DEFAULT_ALPHA:g}, the per-case "
            f"guard's default re-runs{settings}): a single stable case breaking is caught with probability {_share(d.broken)} "
            f"({_share(d.broken_noisy_judge)} when the judge flips 10% of verdicts); unchanged reruns fail at most "
            f"{_share(d.false_alarms)} of the time; 10 of 50 cases dropping 30 points are caught {_share(d.broad[0])} "
            f"(flaky cases or a noisy judge) to {_share(d.broad[1])} (stable cases) of the time.")


# ---------------------------------------------------------------- the verdict


@dataclass
class BaselineReport(Verdict):
    """The verdict, with what each report shows of it."""

    @property
    def markdown(self) -> str:
        return comparison_markdown(self.comparison, self.gate_line, unknown=self.unknown) + (
            paired_markdown(self.test) if self.test else "")

    @property
    def html(self) -> str:
        return comparison_html(self.comparison, self.gate_line, unknown=self.unknown) + (
            paired_html(self.test) if self.test else "")

    def print_console(self, quiet: bool) -> None:
        shown: tuple[Status, ...] = ("regressed",) if quiet else ("regressed", "fixed", "still failing", "new",
                                                                  "removed")
        extra = paired_console_lines(self.test, quiet) if self.test else []
        # the gate line names cases (a pull request's text): inert in a CI log
        print(redact("\n".join(console_lines(self.comparison, shown, self.unknown) + extra
                               + [inert_log_text(f"agentv-gate: {self.gate_line}")])))




def baseline_report(baseline: Baseline, results: Sequence[ReportedCase], summary: Summary,
                    stopped: str | None) -> BaselineReport:
    """The verdict (`gate.decide`) and its reports: every field of the verdict, so none a report reads (the
    cases the base never judged, which label their annotations) is left behind."""
    verdict = decide(baseline, results, summary, stopped)
    return BaselineReport(**{f.name: getattr(verdict, f.name) for f in fields(verdict)})


__all__ = ["DETECTS", "DETECTS_WITH_HISTORY", "BaselineReport", "Detects", "base_side", "baseline_report",
           "comparison_html", "comparison_json", "comparison_markdown", "console_lines", "delta_text", "detection_line",
           "label_of", "paired_console_lines", "paired_html", "paired_json", "paired_markdown"]
