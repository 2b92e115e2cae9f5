#!/usr/bin/env python3
"""False alarms and power of the `--fail-on regression` gate with trials, by simulation.

A fake agent and judge with a known pass probability per case: a suite of `--cases` cases (50)
whose probabilities are drawn uniformly from 0.5..0.99, run on the base and on the head with the
same probabilities (a pull request whose only change is noise), or with `k` cases falling from
0.95 to 0.2 on the head (a real regression; those k cases pass with 0.95 on the base). Each
simulated run becomes real results rows (`CaseResult` with every trial in `trials[]`, as
`run --trials N` writes them, pass_at_k verdicts), and the gate's own code decides: the
comparison (`report.baseline.compare.compare_results`), the paired test (`report.baseline.paired`) and
`--fail-on regression`'s verdict (`report.baseline.render.baseline_report`), nothing re-implemented.

Beside it, on the very same rows, today's case-by-case rule: fail when any case that passed on
the base does not pass on the head (with N trials the row's pass_at_k verdict: any trial passed).
With 1 trial a side the gate *is* that rule (no statistical decision is possible).

`--noise` picks the suite (see `NOISE`): the per-case guard reads each case against a prior fitted
to the whole base, so its false alarms depend on how alike the cases are, and each model strains
that differently (30% flaky cases; a few cases that rarely pass; one case unlike a noisy judge's
suite). The guard's re-runs are simulated with the gate's own choice of cases and trials.

Printed: the seed and every setting, then per trial count the share of simulated pull requests
failed (false alarms in the "no change" column, power in the others) with the mean trials re-run,
for the gate and for the case-by-case rule; for `break1`, also the power over the pull requests
whose broken case passed every base trial (stable on the base as the gate reads it: under a noisy
judge a case that always passes shows a failed base trial in about a quarter of them).
`--markdown` prints the table for the docs. Not a
timed test: about a minute a model at `--trials 3,5 --prs 200`.

    .venv/bin/python bench/stats_bench.py                        # 500 PRs a cell, seed 2026
    .venv/bin/python bench/stats_bench.py --noise judge10 --trials 3,5 --drops 0,break1,10 --prs 200
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentv_gate.commands._reruns import decided, wanted
from agentv_gate.models import CaseResult
from agentv_gate.report import summarise
from agentv_gate.report.baseline import paired
from agentv_gate.report.baseline.gate import Baseline
from agentv_gate.report.baseline.render import baseline_report

SUITE = "evals/sim.eval.yaml"


def rows(probabilities: list[float], trials: int, rng: random.Random, run: str = "run") -> list[CaseResult]:
    """One simulated run: each case's trials pass with its probability (score 1) or fail (score 0),
    written as `run --trials N` writes them (every trial kept, the pass_at_k verdict)."""
    out = []
    for i, p in enumerate(probabilities):
        outcomes = [rng.random() < p for _ in range(trials)]
        verdict = "pass" if any(outcomes) else "fail"
        row = CaseResult(eval_id=f"case-{i:02}", suite=SUITE, file=SUITE, line=2 + 3 * i, verdict=verdict,
                         score=1.0 if any(outcomes) else 0.0, threshold=0.5, run_id=run)
        if trials > 1:
            row.trials = [{"attempt": n + 1, "score": 1.0 if ok else 0.0, "verdict": "pass" if ok else "fail"}
                          for n, ok in enumerate(outcomes)]
            row.aggregation = {"strategy": "pass_at_k", "passed_attempts": sum(outcomes), "total_attempts": trials}
        out.append(row)
    return out


NOISE = ("uniform", "stable", "flaky30", "judge10", "fewlow", "oneweak")
"""uniform: every case's p ~ U(0.5, 0.99), a drop 0.95 -> 0.2 (the table of the docs' first figures);
stable: every case passes (p = 1); flaky30: 30% of cases flaky, p ~ U(0.5, 0.95), the rest p = 1;
judge10: every case passes but the judge flips 10% of verdicts; fewlow: every case passes but 3,
which pass with p ~ U(0.05, 0.5) (a few cases that rarely pass on the base); oneweak: judge10 with
one case whose true pass rate is 0.3 (a case unlike the others, that the prior must not pool).
Under all but the first a drop is 30 points of the case's true pass rate, and `break1` breaks one
stable case completely (p = 0)."""


def probabilities(noise: str, cases: int, dropped: int, rng: random.Random) -> tuple[list[float], list[float]]:
    """The base's and the head's pass probability of each case under `noise`; dropped < 0 breaks
    one stable case completely."""
    if noise == "uniform":
        base_p = [rng.uniform(0.5, 0.99) for _ in range(cases)]
        head_p = list(base_p)
        for i in range(max(dropped, 0)):
            base_p[i], head_p[i] = 0.95, 0.2
        if dropped < 0:
            base_p[0], head_p[0] = 1.0, 0.0
        return base_p, head_p
    if noise == "fewlow":
        true = [1.0] * (cases - 3) + [rng.uniform(0.05, 0.5) for _ in range(3)]
    elif noise == "oneweak":
        true = [1.0] * (cases - 1) + [0.3]
    else:
        flaky = int(cases * 0.3) if noise == "flaky30" else 0
        true = [1.0] * (cases - flaky) + [rng.uniform(0.5, 0.95) for _ in range(flaky)]
    head_true = list(true)
    if dropped < 0:
        head_true[0] = 0.0
    for i in range(max(dropped, 0)):  # the drops hit stable and flaky cases alike
        j = (i * cases) // dropped
        head_true[j] = max(0.0, true[j] - 0.3)

    def judged(p: float) -> float:
        return p * 0.9 + (1 - p) * 0.1 if noise in ("judge10", "oneweak") else p

    return [judged(p) for p in true], [judged(p) for p in head_true]


def rerun(baseline: Baseline, head: list[CaseResult], head_p: list[float], trials: int, rng: random.Random) -> int:
    """The per-case guard's re-runs, as `run` makes them (`_reruns.decided` and `wanted`, the gate's own
    code, choose the cases and how many trials each round); only the trials are simulated, at the
    head's pass probability. The trials re-run."""
    by_key = {(row.suite, row.eval_id, row.target): (row, head_p[i]) for i, row in enumerate(head)}
    spent = 0
    while True:
        test = baseline.test(baseline.compare(head))
        if not isinstance(test, paired.SuiteTest) or decided(test, baseline):
            return spent
        want = wanted(test, trials)
        if not want:
            return spent
        for key, more in want.items():
            row, p = by_key[key]
            kept = row.reruns or []
            for _ in range(more):
                ok = rng.random() < p
                kept.append({"attempt": trials + len(kept) + 1, "score": 1.0 if ok else 0.0,
                             "verdict": "pass" if ok else "fail", "rerun": True})
            row.reruns = kept
            spent += more


def one_pr(cases: int, dropped: int, trials: int, alpha: float, rng: random.Random,
           noise: str = "uniform", reruns: bool = True, history: int = 0) -> tuple[bool, bool, int, bool]:
    """(the gate failed, the case-by-case rule failed, trials re-run, the first case passed every base trial)
    for one simulated pull request; `history`: earlier runs of the base, as many trials each, given as `--history`."""
    base_p, head_p = probabilities(noise, cases, dropped, rng)
    base, head = rows(base_p, trials, rng, "base"), rows(head_p, trials, rng, "head")
    earlier = [row for run in range(history) for row in rows(base_p, trials, rng, f"main-{run}")]
    baseline = Baseline(Path("base.jsonl"), base, "regression", None, alpha, frozenset(paired.flaky_cases(earlier, base)),
                        earlier=paired.earlier_trials(earlier, base))
    rule = bool(baseline.compare(head).regressed)
    spent = rerun(baseline, head, head_p, trials, rng) if reruns and trials > 1 else 0
    report = baseline_report(baseline, head, summarise(head), None)
    first = base[0]
    stable = first.verdict == "pass" and all(t["verdict"] == "pass" for t in first.trials or [])
    return not report.ok, rule, spent, stable


def name(dropped: int, cases: int) -> str:
    return "no change" if dropped == 0 else "one stable case broken" if dropped < 0 else f"{dropped} of {cases} drop"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--prs", type=int, default=500, help="simulated pull requests per cell (default 500)")
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--trials", default="1,2,3,4,5,6,7,8", help="trial counts a side (default 1..8)")
    parser.add_argument("--drops", default="0,3,5,10", help="cases falling from 0.95 to 0.2 (0: noise only)")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--noise", default="uniform", choices=NOISE, help="the noise model (see NOISE)")
    parser.add_argument("--no-reruns", action="store_true", help="decide on the --trials alone (no per-case guard "
                                                                  "re-runs), as `compare` does")
    parser.add_argument("--history", type=int, default=0, help="earlier runs of the base given as --history "
                                                                 "(default 0: none)")
    parser.add_argument("--markdown", action="store_true", help="print the README's table too")
    args = parser.parse_args()
    trial_counts = [int(t) for t in args.trials.split(",")]
    drops = [-1 if d == "break1" else int(d) for d in args.drops.split(",")]
    print(f"noise model {args.noise}; "
          f"seed {args.seed}; {args.prs} simulated PRs per cell; {args.cases} cases, "
          + ("p ~ U(0.5, 0.99) on both sides; a drop: k cases at p=0.95 on the base fall to p=0.2; "
             if args.noise == "uniform" else "a drop: k cases lose 30 points of pass rate; ")
          + f"alpha {args.alpha}; {args.history} earlier base run(s) as --history; "
          "gate = run --baseline --fail-on regression (paired sign-flip test from 2 "
          "trials a side, and the per-case guard); "
          "case-by-case = any case passing on the base and not on the head (pass_at_k verdict)")
    table: dict[tuple[int, int], tuple[float, float, float]] = {}
    started = time.monotonic()
    for trials in trial_counts:
        for dropped in drops:
            rng = random.Random(f"{args.seed}-{trials}-{dropped}")
            gate = rule = spent = 0
            stable_caught: list[bool] = []
            for _ in range(args.prs):
                g, r, extra, stable = one_pr(args.cases, dropped, trials, args.alpha, rng, args.noise,
                                             not args.no_reruns, args.history)
                gate += g
                rule += r
                spent += extra
                if stable:
                    stable_caught.append(g)
            table[(trials, dropped)] = (gate / args.prs, rule / args.prs, spent / args.prs)
            if dropped < 0 and stable_caught:  # the sense of stable: every base trial agreed
                print(f"trials {trials}: the broken case passed every base trial in {len(stable_caught) / args.prs:.1%} "
                      f"of the pull requests; of those the gate failed {sum(stable_caught) / len(stable_caught):.1%}",
                      flush=True)
        cells = "  ".join(f"{name(d, args.cases)}: gate {table[(trials, d)][0]:6.1%}"
                          f" (re-ran {table[(trials, d)][2]:.1f} trials)"
                          f" case-by-case {table[(trials, d)][1]:6.1%}" for d in drops)
        print(f"trials {trials}: {cells}  [{time.monotonic() - started:.0f}s]", flush=True)
    if args.markdown:
        head = " | ".join(f"{name(d, args.cases)} gate / "
                          "case-by-case" for d in drops)
        print(f"\n| trials a side | {head} |\n| ---: |" + " ---: |" * len(drops))
        for trials in trial_counts:
            cells = " | ".join(f"{table[(trials, d)][0]:.1%} / {table[(trials, d)][1]:.1%} "
                               f"(+{table[(trials, d)][2]:.1f})" for d in drops)
            print(f"| {trials} | {cells} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
