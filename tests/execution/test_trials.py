"""The trial strategies' arithmetic: AgentV's aggregates, and the t interval the gate reads."""

from __future__ import annotations

import math

import pytest

from agentv_gate.execution.trials import aggregate, t_critical


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
