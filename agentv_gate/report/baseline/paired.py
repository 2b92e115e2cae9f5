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

import math
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ...base.defaults import DEFAULT_ALPHA
from ...base.trial_strategies import STRATEGIES
from ...models import CaseResult
from ..rows import ADVISORY, NOT_RUN, ReportedCase, TrialOutcomes, outcome, rerun_outcomes, trial_outcomes
from ..text import one_line
from .compare import CaseChange, Comparison, case_key
from .pooled import Prior, fit
from .sequential import Decision, decide, default_budget, guard_level, suite_level
from .stats import (
    Interval,
    benjamini_hochberg,
    drop_weights,
    fisher_two_sided,
    paired_interval,
    sign_flip_p,
)

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
    reruns: tuple[bool, ...] = ()
    """The head trials the per-case guard re-ran (`run` with a budget), after the row's own."""
    rerun_cost: float | None = None
    """What those re-runs cost (None: no trial reported a cost)."""
    decision: Decision | None = None
    """The per-case guard's sequential test on every head trial, re-runs included (`sequential.decide`)."""
    p_guard: float = 1.0
    """Its one-sided p on the trials run: the posterior predictive probability of a head this bad
    given the case's base trials and the prior fitted to the whole base (`pooled`)."""
    earlier: tuple[bool, ...] = ()
    """The case's trials in `--history` on the base's digest (`earlier_trials`): base evidence for the guard."""
    level: float | None = None
    """The guard's level for this case (None: the suite's `guard_level`): half of it for a case with history."""

    @property
    def guard_base(self) -> tuple[bool, ...]:
        """What the per-case guard reads the head against: the base row's trials, then the history's."""
        return self.base.passed + self.earlier

    @property
    def head_passed(self) -> tuple[bool, ...]:
        """Every head trial: the row's own, then the guard's re-runs."""
        return self.head.passed + self.reruns

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
        """`3/3 -> 0/3`: passing trials over trials run, base then head (`3/3 (6/6 in the history) -> 0/3 (0/27
        with re-runs)`)."""
        rerun = (f" ({sum(self.head_passed)}/{len(self.head_passed)} with re-runs)" if self.reruns else "")
        history = f" ({sum(self.earlier)}/{len(self.earlier)} in the history)" if self.earlier else ""
        return (f"{sum(self.base.passed)}/{len(self.base.passed)}{history} -> "
                f"{sum(self.head.passed)}/{len(self.head.passed)}{rerun}")

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
    budget: int | None = None
    """`--max-trials`: the most head trials the guard may run a case (None: `sequential.default_budget`)."""
    prior: Prior | None = None
    """The prior over the cases' pass rates the guard reads each case against, fitted to the whole base."""
    guard_cases: int = 0
    """The cases the guard's level is spread over, when more than `cases`: every shard's, in one shard."""

    def budget_of(self, case: CaseTest) -> int:
        """The head trials the guard decides `case` on."""
        return self.budget if self.budget is not None else default_budget(len(case.base.passed))

    @property
    def suite_alpha(self) -> float:
        """The suite test's level: alpha less the per-case guard's share (`sequential.suite_level`)."""
        return suite_level(self.alpha)

    @property
    def guard_level(self) -> float:
        """Each case's level in the per-case guard (its share of alpha over the paired cases)."""
        return guard_level(self.alpha, max(len(self.cases), self.guard_cases))

    def guard_level_text(self) -> str:
        """`0.001`, or `0.001 (half that for a case with history)` when some case was read with `--history`."""
        halved = any(c.level is not None and c.level < self.guard_level for c in self.cases)
        return f"{self.guard_level:.2g}" + (" (half that for a case with history)" if halved else "")

    @property
    def dropped(self) -> bool:
        """The suite-level decision: the pass rate fell beyond chance at the suite test's level."""
        return self.p_drop <= self.suite_alpha

    def reran(self) -> list[CaseTest]:
        """The cases the guard re-ran."""
        return [c for c in self.cases if c.reruns]

    def reruns_line(self) -> str | None:
        """What the per-case guard's re-runs cost, or None when it re-ran nothing."""
        reran = self.reran()
        if not reran:
            return None
        trials = sum(len(c.reruns) for c in reran)
        costs = [c.rerun_cost for c in reran if c.rerun_cost is not None]
        cost = f", ${math.fsum(costs):.4f}" if costs else ", cost not reported"
        budget = f"--max-trials {self.budget}" if self.budget is not None else "the default budget"
        return (f"per-case guard: re-ran {trials} trial(s) of {len(reran)} case(s) whose evidence was short "
                f"({budget}, each case decided at posterior-predictive p <= {self.guard_level_text()}){cost}: "
                + ", ".join(f"{one_line(c.change.row.eval_id)} ({c.counts()})" for c in reran[:DRIVERS]))

    def with_label(self, *labels: Label) -> list[CaseTest]:
        return [c for c in self.cases if c.label in labels]

    @property
    def flaky(self) -> list[CaseTest]:
        return [c for c in self.cases if c.flaky]

    def guarded(self, verdict: Guard) -> list[CaseTest]:
        """The cases the per-case guard reads as `verdict` (`case_guard`)."""
        return [c for c in self.cases if case_guard(c) == verdict]

    def cut_short(self) -> list[CaseTest]:
        """The suspicious cases whose re-runs were stopped before they were decided (`cut_short`)."""
        return [c for c in self.cases if cut_short(c)]

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


def no_evidence(head: ReportedCase) -> bool:
    """Whether the per-case guard leaves a head row alone: not run (`--skip-missing-env`), advisory (failed only
    by judges below their floor), or quarantined and not an error (an agent or judge that broke on a
    quarantined case fails the gate as on any other, `report.rows.outcome`)."""
    return outcome(head) in (NOT_RUN, ADVISORY) or (bool(head.quarantined) and head.verdict != "error")


def case_guard(case: CaseTest) -> Guard | None:
    """The per-case guard, beside the suite test. `broken` when its sequential test (`sequential`,
    every head trial, the guard's re-runs included) finds the head failing beyond what the base
    allows, and, whatever the evidence, when a case stable on the base (every base trial passed, and
    the history, if given, never saw it flip on its digest) failed every head trial; `suspicious`
    while the test is undecided (its trial budget not spent, as in `compare`, which runs nothing):
    said, never a failure by itself. A quarantined or not-run head is no evidence either way (counted
    by the gate apart), except a quarantined head that errored: the quarantine mutes failures, never errors."""
    head = case.change.head
    if head is None or no_evidence(head) or not case.head.passed:
        return None
    if case.decision == "broken":
        return "broken"
    stable = not case.flaky and case.base.passed and all(case.base.passed)
    if stable and not any(case.head_passed):
        return "broken"
    return "suspicious" if case.decision == "undecided" else None


def cut_short(case: CaseTest) -> bool:
    """Whether the guard left the case undecided because its re-runs were stopped (a budget, a cost
    limit, an interrupt: `CaseResult.reruns_stopped`). Such a case can no longer be decided by running
    more, so the gate fails it rather than list it as suspicious."""
    head = case.change.head
    return case_guard(case) == "suspicious" and head is not None and bool(getattr(head, "reruns_stopped", None))


def guard_decision(prior: Prior, base: tuple[bool, ...], head: tuple[bool, ...], budget: int,
                   level: float) -> tuple[Decision, float]:
    """The guard's decision and p for one case whose base evidence is `base`, with `budget` head trials."""
    passed, n = sum(base), len(base)
    return (decide(prior, passed, n, sum(head), len(head), budget, level),
            prior.tail(passed, n, sum(head), len(head)))


@dataclass(frozen=True)
class NoTest:
    """Why no statistical decision was possible (a single trial a side, a biased sample, ...)."""

    reason: str

    def line(self) -> str:
        return f"no statistical decision was possible: {self.reason}"


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


def _sides(base: ReportedCase, head: ReportedCase) -> tuple[TrialOutcomes, TrialOutcomes]:
    """A case's trials on both sides. A row that errored before any trial (a workspace hook, a refused
    dependency, a case gone mid-run) holds none: read as one trial, it would switch the paired test off for
    every case, and the case-by-case rule would then pass a drop that pass_at_k rows hide. It is read as the
    other side's count of failed trials instead, as the case-by-case rule reads an error: a failure."""
    b, h = trial_outcomes(base), trial_outcomes(head)
    if _errored_untried(head) and len(b.passed) >= 2:
        h = TrialOutcomes((False,) * len(b.passed), (0.0,) * len(b.passed))
    if _errored_untried(base) and len(h.passed) >= 2:
        b = TrialOutcomes((False,) * len(h.passed), (0.0,) * len(h.passed))
    return b, h


def _no_outcome(row: ReportedCase) -> bool:
    """A row of a case its run never judged (left out by `--skip-missing-env`, not started after
    `--max-failures` or a spent budget, interrupted): it says nothing of how often the case passes."""
    return bool(row.failure_reason_code)


def _errored_untried(row: ReportedCase) -> bool:
    return row.verdict == "error" and not getattr(row, "trials", None)  # ReportRow and CaseResult both hold `trials`


def paired_test(comparison: Comparison, alpha: float = DEFAULT_ALPHA,
                flaky: Collection[CaseKey] = (), budget: int | None = None,
                earlier: Mapping[CaseKey, tuple[bool, ...]] | None = None,
                frame: Sequence[ReportedCase] | None = None) -> SuiteTest | NoTest:
    """The statistical reading of `comparison`, or why there is none. `flaky`: (suite, test id) of
    cases that flipped in the history file; a case whose base trials disagree is flaky too.
    `budget`: `--max-trials`, the head trials the per-case guard decides each case on. `earlier`: each
    case's trials in the history file on the base's digest (`earlier_trials`), which the guard (only)
    reads as base evidence beside the base row's own. `frame`: in one shard of a run, the base rows of every
    shard's cases, which the guard's prior and level are read from, as the merge of the shards reads them."""
    # in eval-file order: head rows come in the order cases finished
    paired = sorted(comparison.paired, key=lambda c: (c.row.suite, c.row.line, c.row.eval_id, c.row.target))
    # a head that is no evidence is not decided: advisory (failed only by a judge below its floor), quarantined
    # (its failures fail no gate, not even as a significant drop) or left out by `--skip-missing-env`, whose row
    # holds no trial (read as one, it made every case a single trial); nor is a base row of a case the base never
    # judged (left out, not started after --max-failures, a dependency refused: a `failure_reason_code`), which
    # read as failed trials made its head's passes an improvement that offset real drops
    paired = [c for c in paired if (c.head is None or not no_evidence(c.head))
              and (c.base is None or not _no_outcome(c.base))]
    if not paired:
        return NoTest("no case has results on both sides")
    sides = [_sides(c.base, c.head) for c in paired if c.base and c.head]
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
    base_counts = [(sum(b.passed), len(b.passed)) for b, _ in sides] + _other_shards(comparison.paired, frame or ())
    level = guard_level(alpha, len(base_counts))
    # the base row's name: a renamed case's history is its old name's
    given = [(earlier or {}).get(case_key(c.base) if c.base else case_key(c.row), ()) for c in paired]
    history = [_consistent(b.passed, e) for (b, _), e in zip(sides, given, strict=True)]
    # the whole base says how often a case like each one passes: the guard's prior
    prior = fit(base_counts)
    for change, (b, h), p, q, e, g in zip(paired, sides, pvalues, qvalues, history, given, strict=True):
        rate = _mean([float(x) for x in h.passed]) - _mean([float(x) for x in b.passed])
        label: Label
        if q <= alpha and rate != 0:
            label = "regression" if rate < 0 else "improvement"
        else:
            label = "inconclusive" if rate < 0 else "unchanged"
        mixed = len(set(b.passed)) > 1
        extra = rerun_outcomes(change.head) if change.head is not None else TrialOutcomes((), ())
        case_budget = default_budget(len(b.passed)) if budget is None else budget
        # with history, the case's evidence is chosen from what the trials showed (`_consistent`): each of the
        # two readings it may get is held to half the level, so the one chosen holds the case's level (Bonferroni)
        case_level = level / 2 if g else level
        decision, p_guard = guard_decision(prior, b.passed + e, h.passed + extra.passed, case_budget, case_level)
        cases.append(CaseTest(change, b, h, p, q, label, mixed or (change.row.suite, change.row.eval_id) in flaky,
                              extra.passed, extra.cost_usd, decision, p_guard, e, case_level))
    rates = [c.rate_delta for c in cases]
    scores = [c.score_delta for c in cases]
    counts = [(sum(b.passed), len(b.passed), sum(h.passed), len(h.passed)) for b, h in sides]
    return SuiteTest(cases, alpha, suite_drop_p(counts), sign_flip_p(scores),
                     paired_interval(rates, alpha), paired_interval(scores, alpha), budget, prior, len(base_counts))


def _other_shards(paired: Sequence[CaseChange], frame: Sequence[ReportedCase]) -> list[tuple[int, int]]:
    """(passed, trials) of the frame's base rows that this shard does not pair: the cases the merge will pair
    beside this shard's (a row never judged and a single trial are not tested, as here)."""
    own = {(c.base.suite, c.base.eval_id, c.base.target) for c in paired if c.base is not None}
    out = []
    for row in frame:
        if (row.suite, row.eval_id, row.target) in own or _no_outcome(row):
            continue
        trials = trial_outcomes(row)
        if len(trials.passed) >= 2:
            out.append((sum(trials.passed), len(trials.passed)))
    return out


HISTORY_AGREES = 0.05
"""A case's history is read as base evidence only while its base trials do not pass significantly less
often (Fisher, two-sided p above this): a case main broke since the history was written would
otherwise be read against its older passes, and every pull request blamed for main's break."""


def _consistent(base: tuple[bool, ...], earlier: tuple[bool, ...]) -> tuple[bool, ...]:
    """`earlier` where it only adds to what the base shows: nothing when it passes less often than the base's
    own trials (main fixed the case since: read against its older failures, a break of it now would look
    like the case's old flakiness and pass), nor when the base passes significantly less often than it
    (main broke the case since). So the history never makes the guard let go of a case it holds on the
    base's trials alone (the prior stays the base's too)."""
    if not earlier:
        return earlier
    base_rate, earlier_rate = _mean([float(x) for x in base]), _mean([float(x) for x in earlier])
    if earlier_rate < base_rate:
        return ()
    agree = fisher_two_sided(sum(base), len(base), sum(earlier), len(earlier)) > HISTORY_AGREES
    return earlier if agree else ()


def earlier_trials(history: Iterable[CaseResult], base: Iterable[CaseResult]) -> dict[CaseKey, tuple[bool, ...]]:
    """Each base case's trials in `history` (results rows of earlier runs, concatenated): rows of its
    target on the base row's very digest that ran, a row's re-runs included. Each trial once: never the
    base's own row (a history that main appends every run to holds it), nor a row `--affected-since`
    carried (a copy of an earlier run's), nor a row `--rerun-failed` kept, nor the row the base's own
    carried or kept row copies (a copy keeps its row's timestamp).
    More base evidence than a case's few base trials: what lets the guard tell a stable case the judge
    failed once on the base from a case that rarely passes."""
    wanted = {(r.suite, r.eval_id): r for r in base}
    out: dict[CaseKey, tuple[bool, ...]] = defaultdict(tuple)
    read: set[tuple[CaseKey, str]] = set()
    for row in history:
        key = (row.suite, row.eval_id)
        own = wanted.get(key)
        if own is None or row.target != own.target or _no_outcome(row) or _errored_untried(row):
            continue
        if row.case_digest != own.case_digest:
            continue
        if row.carried or row.timestamp == own.timestamp or (row.run_id is not None and row.run_id == own.run_id):
            continue  # a copy of another run's row (--affected-since), or the base's own row or the one it copies
        if (key, row.timestamp) in read:
            continue  # a row `--rerun-failed` kept as it was: the same trials, in a later run
        read.add((key, row.timestamp))
        trials = trial_outcomes(row)
        if _stopped_early([trials, trial_outcomes(own)]):
            continue  # AgentV's pass_at_k stopped at its first pass: a sample that over-states the pass rate
        out[key] += trials.passed + rerun_outcomes(row).passed
    return dict(out)


def flaky_cases(history: Iterable[CaseResult], base: Iterable[CaseResult]) -> set[CaseKey]:
    """(suite, test id) of each case whose outcome flipped across earlier runs of the same case
    digest (`history`: results rows of earlier runs, e.g. main's, concatenated), counting each row's
    trials, and of each base row whose own trials disagree. A digest the base row does not share is
    another version of the case, whose flips say nothing of this one; a row of a case its run never
    judged (not started, left out: a `failure_reason_code`) is no outcome at all."""
    digests = {(r.suite, r.eval_id): r.case_digest for r in base}
    seen: dict[tuple[str, str, str | None], set[bool]] = defaultdict(set)
    for row in [*history, *base]:
        key = (row.suite, row.eval_id)
        if key in digests and digests[key] is not None and row.case_digest not in (None, digests[key]):
            continue
        if _no_outcome(row):
            continue
        seen[(row.suite, row.eval_id, row.target)].update(trial_outcomes(row).passed)
    return {(suite, eval_id) for (suite, eval_id, _), outcomes in seen.items() if len(outcomes) > 1}


def same_version(comparison: Comparison, flaky: Collection[CaseKey]) -> frozenset[CaseKey]:
    """The cases of `flaky` whose head judged the version the history saw flipping: a case the change
    edited (its head row names another `case_digest` than its base row) is another case, whose failure
    now no flip of the old one excuses. A row that names no digest (an older agentv-gate's) says nothing."""
    edited = {(c.row.suite, c.row.eval_id) for c in comparison.paired
              if None not in (digest := (getattr(c.base, "case_digest", None), getattr(c.head, "case_digest", None)))
              and digest[0] != digest[1]}
    return frozenset(key for key in flaky if key not in edited)


__all__ = ["DEFAULT_ALPHA", "DRIVERS", "LABEL_ORDER", "CaseTest", "Guard", "Label", "NoTest", "SuiteTest", "case_guard",
           "earlier_trials", "flaky_cases", "guard_decision", "no_evidence", "paired_test", "same_version",
           "suite_drop_p"]
