"""The statistics of the paired comparison against textbook values (pure Python, no scipy)."""

from __future__ import annotations

import math

import pytest

from agentv_gate.report.baseline import stats
from agentv_gate.report.baseline.stats import (
    benjamini_hochberg,
    drop_weighted,
    fisher_two_sided,
    normal_quantile,
    paired_interval,
    sign_flip_p,
    t_quantile,
)


@pytest.mark.parametrize(("a", "n_a", "b", "n_b", "expected"), [
    (3, 3, 0, 3, 0.1),  # the smallest trial count where a case cannot reach 0.05: 2 / C(6, 3)
    (0, 3, 3, 3, 0.1),
    (3, 4, 1, 4, 34 / 70),  # Fisher's tea tasting, two-sided: (1 + 16 + 16 + 1) / 70
    (1, 10, 11, 14, 0.002759),  # Wikipedia's worked example (R: fisher.test(matrix(c(1,9,11,3),2)))
    (8, 8, 0, 8, 2 / 12870),  # 2 / C(16, 8)
    (2, 3, 2, 3, 1.0),
    (3, 5, 1, 5, 110 / 210),  # R: fisher.test(matrix(c(3,2,1,4),2)); the 100/210 table is more likely, left out
    (0, 0, 2, 3, 1.0),  # one side ran nothing: no evidence either way
    (2, 3, 0, 0, 1.0),
    (0, 0, 0, 0, 1.0),
])
def test_fisher_two_sided_matches_textbook_values(a: int, n_a: int, b: int, n_b: int, expected: float) -> None:
    assert fisher_two_sided(a, n_a, b, n_b) == pytest.approx(expected, rel=1e-3)


def test_fisher_refuses_counts_that_are_not_counts() -> None:
    with pytest.raises(ValueError, match="not counts"):
        fisher_two_sided(4, 3, 0, 3)


def test_benjamini_hochberg_matches_r_p_adjust() -> None:
    # R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "BH") == c(0.02, 0.04, 0.04, 0.02)
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    # monotone in p, capped at 1
    assert benjamini_hochberg([0.9, 0.8]) == pytest.approx([0.9, 0.9])
    assert benjamini_hochberg([]) == []


def test_sign_flip_is_exact_on_small_sets() -> None:
    assert sign_flip_p([-1, -1, -1]) == pytest.approx(1 / 8)  # only "all negative" is as low
    assert sign_flip_p([-1, -1, 1]) == pytest.approx(4 / 8)  # at most one of three positive
    assert sign_flip_p([-2, 1]) == pytest.approx(2 / 4)  # -3 and -1 are <= -1
    assert sign_flip_p([0, 0]) == 1.0  # nothing moved
    assert sign_flip_p([1, 1, 1]) == 1.0  # one-sided: a rise is no drop
    assert sign_flip_p([-0.5, -0.25, 0.0]) == pytest.approx(1 / 4)  # floats: the same, to 9 decimals


def test_sign_flip_enumerates_exactly_up_to_the_limit() -> None:
    """Five values seen 4 times and one seen 63 times: (4+1)^5 * (63+1) = 200,000 partial sums,
    exactly the limit: still enumerated, so "all negative" gets its exact 2^-83, far below what
    20,000 draws could show."""
    assert 5**5 * 64 == stats.EXACT_LIMIT
    values = [-v for v in (1, 2, 3, 4, 5) for _ in range(4)] + [-6] * 63
    assert sign_flip_p(values) == pytest.approx(2.0**-83)


def test_sign_flip_falls_back_to_a_seeded_monte_carlo_past_the_exact_limit() -> None:
    values = [-(1 + i / 100) for i in range(30)]  # 30 distinct values: 2^30 sums, past EXACT_LIMIT
    p = sign_flip_p(values)
    assert p == pytest.approx(1 / (stats.DRAWS + 1))  # only the observed assignment is as low
    assert sign_flip_p(values) == p  # the same rows give the same p: a gate must be reproducible
    mixed = [(-1) ** i * (1 + i / 100) for i in range(30)]
    assert 0.3 < sign_flip_p(mixed) < 0.7  # signs alternate: nothing to see


def test_drop_weighting_makes_a_full_drop_outweigh_a_one_trial_wobble() -> None:
    assert drop_weighted(-1.0) == -1.0
    assert drop_weighted(-1 / 3) == pytest.approx(-1 / 27)
    assert drop_weighted(0.5) == 0.125


def test_quantiles_refuse_what_is_not_a_probability() -> None:
    for p in (0.0, 1.0):
        with pytest.raises(ValueError, match="not a probability"):
            normal_quantile(p)


def test_quantiles_match_the_tables() -> None:
    assert normal_quantile(0.975) == pytest.approx(1.959964, abs=1e-6)
    assert normal_quantile(0.05) == pytest.approx(-1.644854, abs=1e-6)
    assert t_quantile(0.975, 30) == pytest.approx(2.042, abs=2e-3)
    assert t_quantile(0.95, 10) == pytest.approx(1.812, abs=5e-3)
    assert t_quantile(0.975, 4) == pytest.approx(2.776, abs=0.03)


def test_paired_interval_is_the_mean_difference_with_its_clustered_standard_error() -> None:
    interval = paired_interval([1, 2, 3, 4, 5], alpha=0.05)
    assert interval is not None
    assert interval.mean == 3
    assert interval.se == pytest.approx(math.sqrt(2.5 / 5))
    assert interval.low == pytest.approx(3 - 2.776 * interval.se, abs=0.03)
    assert interval.high == pytest.approx(3 + 2.776 * interval.se, abs=0.03)
    assert interval.describe(100, " points").startswith("+300.0 points (95% CI")
    assert paired_interval([0.5], 0.05) is None


def test_drop_weights_are_exact_integers_over_the_common_denominator() -> None:
    from agentv_gate.report.baseline.stats import drop_weights

    assert drop_weights([(3, 3, 0, 3), (3, 3, 2, 3)]) == [-27, -1]  # -1 and -1/3, cubed, times 3^3
    assert drop_weights([(2, 4, 1, 2), (0, 4, 2, 2)]) == [0, 4**3]  # 1/2 -> 1/2; 0 -> 1, over lcm(4, 2)
    assert sign_flip_p(drop_weights([(3, 3, 0, 3)] * 3)) == 1 / 8
