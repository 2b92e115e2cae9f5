"""The trial strategies' arithmetic: AgentV's aggregates, and the t interval the gate reads."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import get_args

import pytest
from pydantic import ValidationError

from agentv_gate.base import trial_strategies
from agentv_gate.base.trial_strategies import AGENTV_STRATEGIES, STRATEGIES, aggregate, t_critical
from agentv_gate.cli import build_parser
from agentv_gate.models import TrialsConfig, TrialStrategy


def test_pass_at_k_keeps_the_best_score_and_counts_the_passes() -> None:
    score, aggregation = aggregate("pass_at_k", [0.2, 0.9], passed=1)
    assert score == 0.9
    assert aggregation == {"strategy": "pass_at_k", "passed_attempts": 1, "total_attempts": 2}


def test_mean_records_min_and_max() -> None:
    score, aggregation = aggregate("mean", [1.0, 0.0, 0.5], passed=1)
    assert score == pytest.approx(0.5)
    assert aggregation == {"strategy": "mean", "mean": pytest.approx(0.5), "min": 0.0, "max": 1.0}


def test_confidence_interval_scores_the_lower_student_t_bound() -> None:
    score, aggregation = aggregate("confidence_interval", [0.9, 0.8, 1.0], passed=3)
    # mean 0.9, s = 0.1, n = 3, t(0.975, 2) = 4.303
    assert score == pytest.approx(0.9 - 4.303 * 0.1 / math.sqrt(3))
    assert aggregation["ci95_upper"] == 1.0  # clamped
    assert aggregation["stddev"] == pytest.approx(0.1)


def test_confidence_interval_of_one_trial_is_its_score_and_never_below_zero() -> None:
    assert aggregate("confidence_interval", [0.7], passed=1)[0] == 0.7
    assert aggregate("confidence_interval", [0.0, 1.0], passed=1)[0] == 0.0


@pytest.mark.parametrize(("df", "exact"), [(1, 12.706), (2, 4.303), (30, 2.042), (40, 2.021), (60, 2.000),
                                           (99, 1.984)])
def test_t_quantile_matches_the_tables(df: int, exact: float) -> None:
    assert t_critical(df) == pytest.approx(exact, abs=0.001)


def test_pass_at_k_takes_the_best_trial_wherever_it_came() -> None:
    """The best, not the last nor the first: each position of the best trial is tried."""
    for scores in ([0.9, 0.2, 0.4], [0.2, 0.9, 0.4], [0.2, 0.4, 0.9]):
        assert aggregate("pass_at_k", scores, passed=1)[0] == 0.9, scores


def test_mean_records_its_min_and_max_wherever_they_came() -> None:
    score, aggregation = aggregate("mean", [0.5, 1.0, 0.0], passed=1)
    assert score == 0.5 and (aggregation["min"], aggregation["max"]) == (0.0, 1.0)


def test_no_scored_trial_scores_zero() -> None:
    assert aggregate("mean", [], passed=0) == (0.0, {"strategy": "mean"})


@pytest.mark.parametrize(("scores", "lower"), [([1.0, 1.0], 1.0), ([0.0, 0.0], 0.0), ([0.2, 1.4], 0.0),
                                               ([-0.4, 0.4, 1.6, 2.4], 0.0)])
def test_confidence_interval_bounds_are_clamped_into_zero_to_one(scores: list[float], lower: float) -> None:
    score, aggregation = aggregate("confidence_interval", scores, passed=0)
    assert score == lower == aggregation["ci95_lower"]
    assert 0.0 <= aggregation["ci95_upper"] <= 1.0


def test_one_trial_s_interval_is_its_score_clamped() -> None:
    assert aggregate("confidence_interval", [0.7], passed=1)[1] == {
        "strategy": "confidence_interval", "mean": 0.7, "ci95_lower": 0.7, "ci95_upper": 0.7, "stddev": 0.0}
    assert aggregate("confidence_interval", [1.5], passed=1)[1]["ci95_upper"] == 1.0
    assert aggregate("confidence_interval", [-0.5], passed=0)[1]["ci95_lower"] == 0.0


@pytest.mark.parametrize("df", [0, -1])
def test_a_t_interval_needs_two_trials(df: int) -> None:
    with pytest.raises(ValueError, match="at least 2 trials"):
        t_critical(df)


def test_the_table_ends_at_30_and_the_series_takes_over_at_31() -> None:
    assert t_critical(30) == 2.042
    assert t_critical(31) == pytest.approx(2.0395, abs=2e-4)
    assert t_critical(1000) == pytest.approx(1.9623, abs=2e-4)


# ---------------------------------------------------------------- t against an independent computation


def _continued_fraction(a: float, b: float, x: float) -> float:
    """The incomplete beta function's continued fraction (modified Lentz), to double precision."""
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        for numerator in (m * (b - m) * x / ((a - 1 + 2 * m) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1 + 2 * m))):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-16:
            break
    return h


def _upper_tail(t: float, df: int) -> float:
    """P(T > t) for Student's t with `df` degrees of freedom: half the regularized I_x(df/2, 1/2)."""
    a, b, x = df / 2, 0.5, df / (df + t * t)
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x)
    if x < (a + 1) / (a + b + 2):
        return 0.5 * math.exp(log_front) * _continued_fraction(a, b, x) / a
    return 0.5 * (1 - math.exp(log_front) * _continued_fraction(b, a, 1 - x) / b)


def exact_t_975(df: int) -> float:
    low, high = 0.0, 100.0
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if _upper_tail(middle, df) > 0.025 else (low, middle)
    return low


@pytest.mark.parametrize("df", range(1, 31))
def test_every_table_entry_is_the_exact_quantile_to_three_decimals(df: int) -> None:
    assert abs(t_critical(df) - exact_t_975(df)) <= 0.0005


@pytest.mark.parametrize("df", [31, 32, 35, 45, 60, 100, 1000])
def test_past_the_table_the_series_is_within_two_millionths_of_the_exact_quantile(df: int) -> None:
    assert abs(t_critical(df) - exact_t_975(df)) <= 2e-6


# ---------------------------------------------------------------- the table every reader reads

STRATEGY_BRANCH = re.compile(r"""[=!]=\s*["'](pass_at_k|pass_hat_k|mean|confidence_interval)["']""")


def test_no_module_branches_on_a_strategy_name() -> None:
    """A rule of a strategy is a column of STRATEGIES, never an `if strategy == "pass_at_k"` somewhere."""
    package = Path(trial_strategies.__file__).parents[1]
    found = [f"{path.relative_to(package)}:{number}: {line.strip()}"
             for path in sorted(package.rglob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if STRATEGY_BRANCH.search(line)]
    assert not found, "\n".join(found)


def test_the_cli_offers_every_strategy_and_eval_files_name_agentvs_only() -> None:
    run = next(action for action in build_parser()._subparsers._group_actions[0].choices["run"]._actions  # type: ignore[union-attr]
               if action.dest == "trials_strategy")
    assert tuple(run.choices or ()) == tuple(STRATEGIES)
    assert get_args(TrialStrategy) == AGENTV_STRATEGIES == ("pass_at_k", "mean", "confidence_interval")
    with pytest.raises(ValidationError, match="Input should be 'pass_at_k', 'mean' or 'confidence_interval'"):
        TrialsConfig.model_validate({"count": 3, "strategy": "pass_hat_k"})


@pytest.mark.parametrize(("strategy", "stops", "verdict"), [
    ("pass_at_k", True, "any_pass"), ("mean", False, "score"), ("confidence_interval", False, "score"),
    ("pass_hat_k", False, "every_pass"),
])
def test_each_strategy_s_stop_and_verdict_rule(strategy: str, stops: bool, verdict: str) -> None:
    rule = STRATEGIES[strategy]
    assert (rule.stops_at_first_pass, rule.verdict) == (stops, verdict)
