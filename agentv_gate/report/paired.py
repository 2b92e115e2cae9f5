"""The paired, statistical reading of a comparison: did the change move the agent, or the dice?

An agent and an LLM judge answer differently on every run, so one trial a side cannot tell a
regression from bad luck. With several trials a side (`--trials N`, every trial run) the trials
of each case are paired by case, and two questions are answered:

* **Suite level** (what decides `--fail-on regression`): is the head's pass rate lower than the
  base's beyond chance? A paired sign-flip permutation test on the per-case differences
  (head pass rate minus base pass rate), each cubed so a few large drops weigh more than many
  one-trial wobbles (`stats.drop_weighted`), one-sided, at `--alpha`. Cases are the units: under
  "the change did nothing" each case's difference is as likely negative as positive, so the test
  holds its false-alarm rate at alpha whatever each case's pass probability. The mean-score
  difference gets the same test, reported beside it. Both come with the mean difference and an
  interval from the paired, clustered standard error.
* **Case level** (what a person reads): Fisher's exact test on each case's pass counts
  (two-sided), Benjamini–Hochberg across the paired cases; a case is a **regression** or an
  **improvement** when its adjusted p (q) is at most alpha, **inconclusive** when its pass rate
  fell but not significantly (it may or may not have regressed: it is listed, never passed in
  silence), and **unchanged** otherwise. With 3 trials a side no case can reach p < 0.05
  (3/3 against 0/3 is p = 0.1): the labels inform and the suite test decides.

A case whose base trials disagree with each other, or that flipped in the history file of
earlier runs of the same case digest, is **flaky**: it is labelled so, and only a test (never a
single trial) may fail the gate for it.

Reads rows only, like every reporter.
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ..base.trial_strategies import STRATEGIES
from ..models import CaseResult
from .comparison import CaseChange, Comparison
from .github import md_cell
from .paths import source_path
from .rows import NOT_RUN, TrialOutcomes, outcome, trial_outcomes
from .stats import Interval, benjamini_hochberg, drop_weights, fisher_two_sided, paired_interval, sign_flip_p
from .text import inert_log_text, one_line

DEFAULT_ALPHA = 0.05
Label = Literal["regression", "improvement", "inconclusive", "unchanged"]
LABEL_ORDER: tuple[Label, ...] = ("regression", "inconclusive", "improvement", "unchanged")
DRIVERS = 10
"""Cases named as driving a suite-level drop (the largest drops first)."""
CaseKey = tuple[str, str]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


@dataclass(frozen=True)
class CaseTest:
    """One paired case: its trials on both sides, Fisher's p, the BH-adjusted q and its label."""

    change: CaseChange
    base: TrialOutcomes
    head: TrialOutcomes
    p: float
    q: float
    label: Label
    flaky: bool

    @property
    def base_rate(self) -> float:
        return _mean([float(x) for x in self.base.passed])

    @property
    def head_rate(self) -> float:
        return _mean([float(x) for x in self.head.passed])

    @property
    def rate_delta(self) -> float:
        return self.head_rate - self.base_rate

    @property
    def score_delta(self) -> float:
        return _mean(self.head.scores) - _mean(self.base.scores)

    def counts(self) -> str:
        """`3/3 -> 0/3`: passing trials over trials run, base then head."""
        return (f"{sum(self.base.passed)}/{len(self.base.passed)} -> "
                f"{sum(self.head.passed)}/{len(self.head.passed)}")

    def describe(self) -> str:
        flaky = ", flaky" if self.flaky else ""
        return (f"{self.label}{flaky}: {self.counts()} passing trials, score {_mean(self.base.scores):.3f} -> "
                f"{_mean(self.head.scores):.3f}, Fisher p={self.p:.3g}, q={self.q:.3g}")


@dataclass(frozen=True)
class SuiteTest:
    """The suite-level answer, and every paired case's own."""

    cases: list[CaseTest]
    alpha: float
    p_drop: float
    """One-sided p of the sign-flip test that the pass rate fell (cubed per-case differences)."""
    p_score_drop: float
    """The same test on the per-case mean-score differences (not cubed), reported beside it."""
    pass_rate: Interval | None
    score: Interval | None

    @property
    def dropped(self) -> bool:
        """The suite-level decision: the pass rate fell beyond chance at alpha."""
        return self.p_drop <= self.alpha

    def with_label(self, *labels: Label) -> list[CaseTest]:
        return [c for c in self.cases if c.label in labels]

    @property
    def flaky(self) -> list[CaseTest]:
        return [c for c in self.cases if c.flaky]

    def guarded(self, verdict: Guard) -> list[CaseTest]:
        """The cases the per-case guard reads as `verdict` (`case_guard`)."""
        return [c for c in self.cases if case_guard(c) == verdict]

    def drivers(self) -> list[CaseTest]:
        """The cases whose pass rate fell most: what a suite-level drop is made of."""
        fell = sorted((c for c in self.cases if c.rate_delta < 0), key=lambda c: (c.rate_delta, c.p))  # stable
        return fell[:DRIVERS]

    def trials(self) -> str:
        """`3 trials a side`, or the range when cases ran different counts."""
        counts = {len(c.base.passed) for c in self.cases} | {len(c.head.passed) for c in self.cases}
        low, high = min(counts), max(counts)
        return f"{low} trials a side" if low == high else f"{low}-{high} trials a side"

    def headline(self) -> str:
        """One line: the pass-rate difference, its interval and the test's p; the score's."""
        rate = self.pass_rate.describe(100, " points") if self.pass_rate else "n/a"
        score = self.score.describe(1, "", digits=3) if self.score else "n/a"
        return (f"paired test over {len(self.cases)} case(s), {self.trials()}: pass rate {rate}, "
                f"p={self.p_drop:.3g} (one-sided, drop); mean score {score}, p={self.p_score_drop:.3g}")

    def counts_line(self) -> str:
        parts = [f"{len(self.with_label(label))} {label}" for label in LABEL_ORDER]
        flaky = len(self.flaky)
        return ("cases (Fisher exact, Benjamini-Hochberg at alpha " f"{self.alpha:g}): " + ", ".join(parts)
                + (f"; {flaky} flaky" if flaky else ""))


Guard = Literal["broken", "suspicious"]


def case_guard(case: CaseTest) -> Guard | None:
    """The per-case guard, beside the suite test: a case stable on the base (every base trial passed,
    and the history, if given, never saw it flip on its digest) is `broken` when it fails every head
    trial, however many trials ran (one case alone never moves a sign-flip test over many cases), and
    `suspicious` when it fails most of them but not all (2 of 3, 3 or 4 of 5): said, never a failure by
    itself. A quarantined or not-run head is no evidence either way (counted by the gate apart)."""
    head = case.change.head
    if case.flaky or not case.base.passed or not all(case.base.passed) or head is None or head.quarantined \
            or outcome(head) == NOT_RUN or not case.head.passed:
        return None
    failed = case.head.passed.count(False)
    if failed == len(case.head.passed):
        return "broken"
    return "suspicious" if 2 * failed > len(case.head.passed) else None


@dataclass(frozen=True)
class NoTest:
    """Why no statistical decision was possible (a single trial a side, a biased sample, ...)."""

    reason: str

    def line(self) -> str:
        return f"no statistical decision was possible: {self.reason}"


DETECTS: dict[int, tuple[float, float, float]] = {3: (0.525, 0.0, 0.355), 5: (0.42, 0.0, 0.08)}
"""Per trials a side, from `bench/stats_bench.py` (50 cases, 200 simulated pull requests a cell, seed
2026, alpha 0.05): the least share of pull requests caught where one stable case broke completely
(the worst noise model: a judge flipping 10% of verdicts), and the share of unchanged reruns failed
with every case stable and at worst (every case's pass rate 0.5-0.99, no `--history`)."""


def detection_line(test: SuiteTest) -> str | None:
    """What the gate can detect at the trials this test ran, for the pull-request comment's footer;
    None at a trial count the bench did not measure."""
    counts = {len(c.base.passed) for c in test.cases} | {len(c.head.passed) for c in test.cases}
    if len(counts) != 1 or next(iter(counts)) not in DETECTS:
        return None
    trials = next(iter(counts))
    caught, stable, worst = DETECTS[trials]
    return (f"At {trials} trials a side (bench/stats_bench.py, 50 cases): a single stable case breaking is caught "
            f"with probability at least {caught:.1%} (100% unless the judge flips verdicts); unchanged reruns "
            f"fail {stable:.0%} of the time when every case is stable, at most {worst:.1%} when many are flaky "
            "and no --history names them.")


def _stopped_early(side: Sequence[TrialOutcomes]) -> int:
    """Rows whose trials AgentV's pass_at_k cut short at a pass: fewer trials than the most any row of
    the side has, the last one a pass. Their pass counts over-state the pass rate."""
    most = max((len(t.passed) for t in side), default=0)
    return sum(1 for t in side if t.strategy in STRATEGIES and STRATEGIES[t.strategy].stops_at_first_pass
               and len(t.passed) < most and t.passed[-1])


def suite_drop_p(counts: Sequence[tuple[int, int, int, int]]) -> float:
    """The suite test: one-sided p of the sign-flip test on the cubed per-case pass-rate differences,
    from each case's (base passed, base trials, head passed, head trials)."""
    return sign_flip_p(drop_weights(counts))


def paired_test(comparison: Comparison, alpha: float = DEFAULT_ALPHA,
                flaky: Collection[CaseKey] = ()) -> SuiteTest | NoTest:
    """The statistical reading of `comparison`, or why there is none. `flaky`: (suite, test id) of
    cases that flipped in the history file; a case whose base trials disagree is flaky too."""
    # in eval-file order: head rows come in the order cases finished
    paired = sorted(comparison.paired, key=lambda c: (c.row.suite, c.row.line, c.row.eval_id, c.row.target))
    if not paired:
        return NoTest("no case has results on both sides")
    sides = [(trial_outcomes(c.base), trial_outcomes(c.head)) for c in paired if c.base and c.head]
    for name, side in (("base", [b for b, _ in sides]), ("head", [h for _, h in sides])):
        early = _stopped_early(side)
        if early:
            return NoTest(f"{early} {name} row(s) stopped at their first passing trial (AgentV's pass_at_k from "
                          "execution.trials), which over-states their pass rate; `--trials N` runs every trial")
    single = sum(1 for b, h in sides if len(b.passed) < 2 or len(h.passed) < 2)
    if single:
        return NoTest(f"{single} of {len(sides)} paired case(s) ran a single trial on a side; run both "
                      "the base and the head with --trials N (N >= 2) for a paired test")
    pvalues = [fisher_two_sided(sum(b.passed), len(b.passed), sum(h.passed), len(h.passed)) for b, h in sides]
    qvalues = benjamini_hochberg(pvalues)
    cases = []
    for change, (b, h), p, q in zip(paired, sides, pvalues, qvalues, strict=True):
        rate = _mean([float(x) for x in h.passed]) - _mean([float(x) for x in b.passed])
        label: Label
        if q <= alpha and rate != 0:
            label = "regression" if rate < 0 else "improvement"
        else:
            label = "inconclusive" if rate < 0 else "unchanged"
        mixed = len(set(b.passed)) > 1
        cases.append(CaseTest(change, b, h, p, q, label, mixed or (change.row.suite, change.row.eval_id) in flaky))
    rates = [c.rate_delta for c in cases]
    scores = [c.score_delta for c in cases]
    counts = [(sum(b.passed), len(b.passed), sum(h.passed), len(h.passed)) for b, h in sides]
    return SuiteTest(cases, alpha, suite_drop_p(counts), sign_flip_p(scores),
                     paired_interval(rates, alpha), paired_interval(scores, alpha))


def flaky_cases(history: Iterable[CaseResult], base: Iterable[CaseResult]) -> set[CaseKey]:
    """(suite, test id) of each case whose outcome flipped across earlier runs of the same case
    digest (`history`: results rows of earlier runs, e.g. main's, concatenated), counting each row's
    trials, and of each base row whose own trials disagree. A digest the base row does not share is
    another version of the case, whose flips say nothing of this one."""
    digests = {(r.suite, r.eval_id): r.case_digest for r in base}
    seen: dict[tuple[str, str, str | None], set[bool]] = defaultdict(set)
    for row in [*history, *base]:
        key = (row.suite, row.eval_id)
        if key in digests and digests[key] is not None and row.case_digest not in (None, digests[key]):
            continue
        seen[(row.suite, row.eval_id, row.target)].update(trial_outcomes(row).passed)
    return {(suite, eval_id) for (suite, eval_id, _), outcomes in seen.items() if len(outcomes) > 1}


# ---------------------------------------------------------------- text for the reports


def _where(change: CaseChange) -> str:
    row = change.row
    return f"{row.suite}:{row.line}" if row.line > 0 else row.suite


def console_lines(test: SuiteTest | NoTest, quiet: bool = False) -> list[str]:
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
        lines.append(inert_log_text(f"SUSPICIOUS: {one_line(case.change.row.eval_id)} ({case.counts()}) — stable "
                                    "on the base, failed most head trials (not all): re-run it to decide"))
    lines.append(test.counts_line())
    return lines


def markdown(test: SuiteTest | NoTest) -> str:
    """The job summary's part: the suite line and a row per case that did not stay unchanged (or is flaky)."""
    if isinstance(test, NoTest):
        return md_cell(test.line(), 1000) + "\n\n"
    parts = [f"**Paired test:** {md_cell(test.headline(), 1000)}\n\n", md_cell(test.counts_line(), 1000) + "\n\n"]
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


def html_section(test: SuiteTest | NoTest) -> str:
    """report.html's part, every value escaped."""
    esc = html.escape
    if isinstance(test, NoTest):
        return f"<p>{esc(test.line())}</p>\n"
    parts = [f"<h3>Paired test</h3>\n<p class=\"totals\">{esc(test.headline())}</p>\n<p>{esc(test.counts_line())}</p>\n"]
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


def as_json(test: SuiteTest | NoTest) -> dict[str, object]:
    """`compare --json`'s `paired` object."""
    if isinstance(test, NoTest):
        return {"decision": None, "reason": test.reason}

    def interval(i: Interval | None) -> dict[str, float] | None:
        return None if i is None else {"mean": round(i.mean, 6), "low": round(i.low, 6), "high": round(i.high, 6),
                                       "level": round(i.level, 6)}

    return {
        "decision": "regression" if test.dropped else "no significant drop",
        "alpha": test.alpha, "p_drop": test.p_drop, "p_score_drop": test.p_score_drop,
        "pass_rate_delta": interval(test.pass_rate), "score_delta": interval(test.score),
        "cases": [{"suite": c.change.row.suite, "test_id": c.change.row.eval_id, "label": c.label, "flaky": c.flaky,
                   "base_passed": sum(c.base.passed), "base_trials": len(c.base.passed),
                   "head_passed": sum(c.head.passed), "head_trials": len(c.head.passed),
                   "p": c.p, "q": c.q} for c in test.cases],
    }


__all__ = ["DEFAULT_ALPHA", "DETECTS", "CaseTest", "Guard", "NoTest", "SuiteTest", "as_json", "case_guard",
           "console_lines", "detection_line", "flaky_cases", "html_section", "markdown", "paired_test", "suite_drop_p"]
