"""Tests of kpass.metrics.mean_ci at the edges: values piled up at 0 or 1, the near-end score
bound, binary columns, few clusters (split from test_intervals.py)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy import stats

from kpass.metrics import DegenerateIntervalWarning, bootstrap_weights, mean_ci, mean_ci_columns, paired_difference, pass_at_k
from kpass.metrics._warnings import IntervalMethodWarning

pytestmark = pytest.mark.filterwarnings("ignore::kpass.metrics._warnings.IntervalMethodWarning")

# ---------------------------------------------------------------------------------------------
# degenerate bootstrap-t tails (values piled up at 0 or 1): regression tests of the reported cases
# ---------------------------------------------------------------------------------------------


def _studentized_with_replaced_tail(values, side, **kwargs):
    """The default interval of ``values`` whose ``side`` ("lower", "upper") tail was degenerate and replaced:
    recorded in the details, not warned about (the default's fallback is part of the measured interval)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = mean_ci(values, **kwargs)
    assert not any("cannot give" in str(w.message) for w in caught)
    assert result.details["degenerate_tail"][0 if side == "lower" else 1]
    assert math.isfinite(result.low) and math.isfinite(result.high)
    return result


def _korn_graubard_wilson_low(p, n_eff, df, level=0.95):
    """Wilson lower bound with n* = n_eff (z / t_df)^2 trials, written out independently."""
    z = stats.norm.ppf(1 - (1 - level) / 2)
    n_star = n_eff * (z / stats.t.ppf(1 - (1 - level) / 2, df)) ** 2
    center = (p + z * z / (2 * n_star)) / (1 + z * z / n_star)
    half = z * math.sqrt(p * (1 - p) / n_star + z * z / (4 * n_star**2)) / (1 + z * z / n_star)
    return center - half, center + half


def _no_interval_method_warning(values, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error", IntervalMethodWarning)
        return mean_ci(values, **kwargs)


def _wilson_lower_by_hand(mean, se, n_cap, df, level=0.95):
    # Wilson (1927) with n* = min(p(1-p)/SE^2, n_cap) (z/t_df)^2 trials, written out term by term
    z = stats.norm.ppf(1 - (1 - level) / 2)
    t = stats.t.ppf(1 - (1 - level) / 2, df)
    n_star = min(mean * (1 - mean) / se**2, n_cap) * (z / t) ** 2
    center = (mean + z * z / (2 * n_star)) / (1 + z * z / n_star)
    half = z / (1 + z * z / n_star) * math.sqrt(mean * (1 - mean) / n_star + z * z / (4 * n_star**2))
    return center - half


def test_near_the_ceiling_the_lower_bound_is_the_wilson_bound_with_twice_n_trials():
    # 30 values: 25 at 1, five at 0.9 (mean 0.9833, half a failure's worth); the bootstrap-t lower
    # bound alone is 0.962 (a sample without a hard problem looks certain), its tail not degenerate
    # (0.4% of the resamples lack all five)
    values = np.r_[np.ones(25), np.full(5, 0.9)]
    # half a problem's worth off the end: the score bound makes the interval conservative (the coverage
    # study: 97-100% in such cells), so it carries no warning, only the details
    result = _no_interval_method_warning(values, rng=0)
    assert result.details["off_end_problems"] == pytest.approx(30 * (1 - values.mean()))
    assert "few_off_end" not in result.details
    se = values.std(ddof=1) / math.sqrt(30)
    assert result.details["near_end"] and result.details["bound_methods"][0] == "score (near end)"
    assert result.low == pytest.approx(_wilson_lower_by_hand(values.mean(), se, 2 * 30, 29), abs=1e-12)
    assert result.low < result.details["studentized_bounds"][0]
    assert result.high == result.details["studentized_bounds"][1]  # the side at the end is untouched
    # the floor mirrors it: 1 - values gives 1 - the bounds
    mirrored = _no_interval_method_warning(1 - values, rng=0)
    assert mirrored.high == pytest.approx(1 - result.low, abs=1e-12)
    assert mirrored.details["bound_methods"][1] == "score (near end)"


def test_the_near_end_rule_leaves_mid_range_and_binary_columns_alone():
    rng = np.random.default_rng(5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IntervalMethodWarning)
        middle = mean_ci(rng.beta(2, 2, size=40), rng=0)           # 40 x 0.5 = 20 problems from either end
        binary = mean_ci(np.r_[np.ones(39), 0.0], rng=0)           # 0/1 values: Wilson with N trials already
    assert "near_end" not in middle.details and "near_end" not in binary.details
    # 3.5 failures' worth out of 100 problems: not near the end (the threshold is 3), but within 30% of
    # it and 3 to 15 problems' worth from it: the reliability warning
    values = np.r_[np.ones(93), np.full(7, 0.5)]
    with pytest.warns(IntervalMethodWarning, match="within 30% of an end of its range"):
        result = mean_ci(values, rng=0)
    assert "near_end" not in result.details and result.details["few_off_end"]
    assert result.details["off_end_problems"] == pytest.approx(3.5)


@pytest.mark.parametrize("n_problems, off_end, warned", [
    (100, 2.9, False),   # near the end: the score bound makes it conservative, no warning
    (100, 3.1, True),
    (100, 14.9, True),   # 14.9 problems' worth off the end
    (100, 15.1, False),  # more: the bootstrap's tails are well fed
    (40, 11.9, True),    # 29.75% of 40 problems from the end
    (40, 12.1, False),   # 30.25%: not near an end
    (24, 2.0, False),    # 8% of 24 problems, but under 3 problems' worth: the near-end bound
    (24, 4.0, True),
])
def test_the_reliability_warning_marks_means_near_an_end_but_off_it(n_problems, off_end, warned):
    # N values: N - m at 1 and m at 1 - off_end / m, so that N (1 - mean) = off_end exactly
    m = n_problems // 2
    values = np.r_[np.ones(n_problems - m), np.full(m, 1 - off_end / m)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = mean_ci(values, rng=0)
        floor = mean_ci(1 - values, rng=0)  # the floor mirrors the ceiling
    assert result.details["off_end_problems"] == pytest.approx(off_end)
    assert bool(result.details.get("few_off_end")) is warned and bool(floor.details.get("few_off_end")) is warned
    messages = [str(w.message) for w in caught if issubclass(w.category, IntervalMethodWarning)]
    assert any("of an end of its range" in m for m in messages) is warned


def test_39_of_40_binary_values_give_the_wilson_interval():
    # before: 36% of the resamples are all ones, t* = +inf, the lower bound -inf clipped to 0: [0, 1];
    # 0/1 values now take the score interval on both sides, without a warning (nothing failed)
    values = np.r_[np.ones(39), 0.0]
    result = _no_interval_method_warning(values, rng=0)
    assert result.details["bound_methods"] == ("score", "score")
    assert result.details["scale"] == "score (0/1 values)"
    assert result.details["degenerate_tail"] == (False, False)
    assert result.details["degenerate_share"][1] == pytest.approx(0.975**40, abs=0.015)  # P(all ones)
    # Wilson with n_eff = min(p(1-p)/SE^2, N) = N - 1 = 39 trials and the t_39 reduction
    expected_low, expected_high = _korn_graubard_wilson_low(0.975, 39, 39)
    assert (result.low, result.high) == pytest.approx((expected_low, expected_high), abs=1e-12)
    exact = stats.binomtest(39, 40).proportion_ci(method="exact")  # Clopper-Pearson [0.868, 0.999]
    wilson = stats.binomtest(39, 40).proportion_ci(method="wilson")  # [0.871, 0.996]
    assert abs(result.low - exact.low) < 0.01 and abs(result.low - wilson.low) < 0.01
    assert result.low < mean_ci(values, method="t").low - 0.05  # the t interval ([0.924, 1]) is too narrow
    assert 0.99 < result.high <= 1.0
    assert mean_ci(values, rng=0) == mean_ci(values, rng=0)  # seeded, reproducible
    # another seed gives the same interval: the score interval does not depend on the resamples
    other_seed = mean_ci(values, rng=5)
    assert (other_seed.low, other_seed.high) == (result.low, result.high)


def test_binary_values_are_wilson_at_any_level_and_every_problem_solved_is_not_width_zero():
    values = np.r_[np.ones(21), np.zeros(9)]
    for level in (0.5, 0.9, 0.99):
        result = _no_interval_method_warning(values, rng=0, confidence_level=level)
        expected = _korn_graubard_wilson_low(0.7, 29, 29, level)  # p(1-p)/SE^2 = N - 1 = 29
        assert (result.low, result.high) == pytest.approx(expected, abs=1e-12)
    # 30 of 30 solved: before [1, 1] with SE 0; the score interval of 30 successes in 30 (n_B = N)
    with pytest.warns(DegenerateIntervalWarning, match="same end of its range"):
        solved = mean_ci(np.ones(30), rng=0)
    assert solved.standard_error == 0.0 and solved.high == 1.0
    assert solved.low == pytest.approx(_korn_graubard_wilson_low(1.0, 30, 29)[0], abs=1e-12)
    assert solved.details["bound_methods"] == ("score", "score")
    assert solved.details["degenerate"] == "constant values at an end of the range"
    with pytest.warns(DegenerateIntervalWarning, match="same end of its range"):
        unsolved = mean_ci(np.zeros(30), rng=0)
    assert unsolved.low == 0.0 and unsolved.high == pytest.approx(1.0 - solved.low, abs=1e-12)
    # other methods keep the width-0 interval (and its warning)
    with pytest.warns(DegenerateIntervalWarning, match="identical"):
        assert mean_ci(np.ones(30), method="t").width == 0.0


def test_values_in_the_range_use_the_arcsine_scale_and_others_the_raw_one():
    values = np.random.default_rng(3).beta(0.5, 0.3, 50)
    result = mean_ci(values, rng=0)
    # the bootstrap-t of the default is on the arcsine scale; with 10 or more problems its bounds are
    # kept in the details and the interval shown is the score rule's (next test)
    low, high = result.details["studentized_bounds"]
    # the arcsine pivot, written out: g(p) = asin(sqrt(p)), t* = (g(m*) - g(m)) / (g'(m*) SE*)
    n = values.size
    weights = np.vstack(list(bootstrap_weights(n, n_resamples=10_000, rng=0, order_by=values)))
    means = weights @ values / n
    ses = np.sqrt((weights @ values**2 - n * means**2) / (n - 1) / n)
    m, se = values.mean(), values.std(ddof=1) / np.sqrt(n)
    def g(x):
        return np.arcsin(np.sqrt(x))

    def slope(x):
        return 1 / (2 * np.sqrt(x * (1 - x)))

    t_star = (g(means) - g(m)) / (slope(means) * ses)
    q_low, q_high = np.quantile(t_star, [0.025, 0.975])
    by_hand = [np.sin(g(m) - q * slope(m) * se) ** 2 for q in (q_high, q_low)]
    assert (low, high) == pytest.approx(by_hand, abs=2e-3)
    assert result.details["t_quantiles"] == pytest.approx((q_low, q_high), abs=0.05)
    nine = mean_ci(values[:9], rng=0)  # fewer than 10 problems: the arcsine bootstrap-t is the interval
    assert nine.details["scale"] == "arcsine" and "studentized_bounds" not in nine.details
    shifted = mean_ci(values + 5.0, rng=0)  # no known range: the raw bootstrap-t
    assert shifted.details["scale"] == "identity"
    in_range = mean_ci(values * 10, rng=0, bounds=(0, 10))  # an explicit range: the same interval, scaled
    assert in_range.details["scale"] == result.details["scale"] == "score (effective size)"
    assert (in_range.low, in_range.high) == pytest.approx((10 * result.low, 10 * result.high), rel=1e-9)


def test_an_explicit_range_is_the_metrics_range_even_when_every_value_lies_in_zero_one():
    # values near 0.9 of a metric declared on [0, 10] lie near its floor, not its ceiling: the score
    # rules see the declared range, so the interval is ten times that of the values / 10 on [0, 1]
    values = np.r_[np.ones(28), np.linspace(0.2, 0.9, 12)]
    declared = mean_ci(values, rng=0, bounds=(0, 10))
    tenth = mean_ci(values / 10, rng=0)
    assert (declared.low, declared.high) == pytest.approx((10 * tenth.low, 10 * tenth.high), rel=1e-9)
    assert declared.details["bound_methods"] == tenth.details["bound_methods"]
    assert declared.details["off_end_problems"] == pytest.approx(tenth.details["off_end_problems"], rel=1e-9)
    # read on [0, 1] the same values sit 3.3 problems' worth below the ceiling, another interval
    unit = mean_ci(values, rng=0)
    assert unit.details["off_end_problems"] == pytest.approx(40 * (1 - values.mean()), rel=1e-9)
    assert (unit.low, unit.high) != pytest.approx((declared.low, declared.high), rel=1e-3)
    # a range open on one side declares no range: the raw bootstrap-t, finite, as without a known range
    for open_range in ((0, np.inf), (-np.inf, np.inf)):
        unbounded = mean_ci(values, rng=0, bounds=open_range)
        assert unbounded.details["scale"] == "identity" and np.isfinite([unbounded.low, unbounded.high]).all()
        assert (unbounded.low, unbounded.high) == pytest.approx((mean_ci(values + 5.0, rng=0, bounds=None).low - 5.0,
                                                                 mean_ci(values + 5.0, rng=0, bounds=None).high - 5.0), abs=1e-9)


def test_independent_problems_take_the_score_bound_toward_the_end_and_the_wider_one_away_from_it():
    # 40 pass@8-like values near the ceiling: 30 at 1, ten spread below (mean 0.9, 4 problems' worth
    # off the end: neither near nor very near it)
    values = np.r_[np.ones(30), [0.2, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.5, 0.0]]
    result = mean_ci(values, rng=0)
    n, mean = values.size, values.mean()
    se = values.std(ddof=1) / math.sqrt(n)
    wilson = _korn_graubard_wilson_low(mean, mean * (1 - mean) / se**2, n - 1)  # size not cut at N
    assert result.details["scale"] == "score (effective size)"
    assert "near_end" not in result.details
    # the end side (upper, the mean is above 1/2) is the Wilson bound, whatever the bootstrap-t gave
    assert result.high == pytest.approx(wilson[1], abs=1e-12)
    assert result.details["bound_methods"][1] == "score (effective size)"
    # the interior side is the wider of the two
    studentized_low = result.details["studentized_bounds"][0]
    assert result.low == pytest.approx(min(studentized_low, wilson[0]), abs=1e-12)
    # the floor mirrors it
    mirrored = mean_ci(1 - values, rng=0)
    assert mirrored.low == pytest.approx(1 - wilson[1], abs=1e-12)
    assert mirrored.high == pytest.approx(max(mirrored.details["studentized_bounds"][1], 1 - wilson[0]), abs=1e-12)
    # within 1.5 problems' worth of the end the end side keeps the bootstrap-t bound where it is the wider
    near = np.r_[np.ones(36), [0.9, 0.7, 0.6, 0.8]]  # 1.0 problem's worth off the end
    very_near = mean_ci(near, rng=0)
    assert very_near.high == pytest.approx(max(very_near.details["studentized_bounds"][1],
                                               _korn_graubard_wilson_low(near.mean(), near.mean() * (1 - near.mean())
                                                                         / (near.std(ddof=1) ** 2 / 40), 39)[1]), abs=1e-12)
    assert all(type(tail) is bool for tail in very_near.details["degenerate_tail"])  # plain bools: JSON-ready
    # 2.1 problems' worth off the end (between 1.5 and 3): the end side is the Wilson bound although the
    # bootstrap-t's is higher
    two = np.r_[np.ones(22), np.random.default_rng(2).uniform(0.6, 0.95, 8)]
    assert 30 * (1 - two.mean()) == pytest.approx(2.14, abs=0.01)
    between = mean_ci(two, rng=0)
    se_two = two.std(ddof=1) / math.sqrt(30)
    wilson_two = _korn_graubard_wilson_low(two.mean(), two.mean() * (1 - two.mean()) / se_two**2, 29)
    assert between.details["studentized_bounds"][1] > wilson_two[1] + 1e-3
    assert between.high == pytest.approx(wilson_two[1], abs=1e-12)
    # a mean of exactly 1/2 has no nearer end: both sides are the wider of the two
    half = np.r_[[0.4] * 30, [0.75] * 8, 0.95, 0.95]
    half = half + 0.5 - half.mean()
    centred = mean_ci(half, rng=0)
    se_half = half.std(ddof=1) / math.sqrt(40)
    wilson_half = _korn_graubard_wilson_low(0.5, 0.25 / se_half**2, 39)
    stud_low, stud_high = centred.details["studentized_bounds"]
    assert centred.low == pytest.approx(min(stud_low, wilson_half[0]), abs=1e-12)
    assert centred.high == pytest.approx(max(stud_high, wilson_half[1]), abs=1e-12)
    assert centred.details["bound_methods"][1] == "studentized"
    mirror = mean_ci(1 - half, rng=0)  # its bootstrap-t lower bound is the lower one: kept, as the upper is above
    assert mirror.details["bound_methods"] == ("studentized", "score (effective size)")
    assert mirror.low == pytest.approx(mirror.details["studentized_bounds"][0], abs=1e-12) and mirror.low < wilson_half[0]
    # from 10 problems; 9 keep the bootstrap-t
    ten = np.r_[np.ones(6), [0.8, 0.9, 0.7, 0.6]]
    assert mean_ci(ten, rng=0).details["scale"] == "score (effective size)"
    assert mean_ci(ten[1:], rng=0).details["scale"] == "arcsine"
    # 0/1 values keep Wilson's interval with N - 1 trials
    assert mean_ci(np.r_[np.ones(35), np.zeros(5)], rng=0).details["scale"] == "score (0/1 values)"


def test_pass16_binary_values_28_of_30():
    # pass@16 with n = 16 is 0/1 per problem; before: [0.0000, 0.97]
    values = pass_at_k(np.full(30, 16), np.r_[np.full(28, 5), 0, 0], 16)
    assert set(np.unique(values)) == {0.0, 1.0}
    result = _no_interval_method_warning(values, rng=1)
    exact = stats.binomtest(28, 30).proportion_ci(method="exact")  # [0.779, 0.992]
    assert abs(result.low - exact.low) < 0.015
    assert result.high >= exact.high - 0.02


def test_pass8_mostly_one_with_a_few_lower_values():
    # pass@8 from n = 16 samples: c >= 9 gives exactly 1; estimate 0.979, before [0.000, 0.998]
    values = pass_at_k(np.full(40, 16), np.r_[np.full(37, 12), 1, 2, 3], 8)
    result = _studentized_with_replaced_tail(values, "lower", rng=0)
    t_interval = mean_ci(values, method="t")  # [0.951, 1.0]
    assert result.estimate == pytest.approx(0.9791666666666666)
    assert 0.85 < result.low < t_interval.low
    assert result.details["bound_methods"][0] == "score"
    # values near 1 but not exactly 1 (c = 8 gives 1 - 1/12870): the same degenerate tail
    values = pass_at_k(np.full(40, 16), np.r_[np.full(30, 12), np.full(7, 8), 0, 2, 3], 8)
    result = _studentized_with_replaced_tail(values, "lower", rng=0)
    assert 0.8 < result.low < mean_ci(values, method="t").low


def test_budget_curve_with_nearly_every_value_zero():
    # before: [0, 1] (all-zero resamples give t* = -inf, the upper bound +inf clipped to 1)
    result = _studentized_with_replaced_tail(np.r_[np.zeros(39), 0.3], "upper", rng=0)
    assert 0.0 <= result.low < 0.001 and 0.05 < result.high < 0.15
    assert result.details["bound_methods"] == ("studentized", "score")
    one = _no_interval_method_warning(np.r_[np.zeros(39), 1.0], rng=0)
    exact = stats.binomtest(1, 40).proportion_ci(method="exact")  # [0.0006, 0.132]
    assert abs(one.high - exact.high) < 0.01


@pytest.mark.parametrize(
    ("values", "clusters"),
    [
        (np.r_[np.ones(4), [1, 1, 0.5, 0.5], [1, 0.5, 0, 0.5]], np.repeat([0, 1, 2], 4)),  # 0.75, 3 clusters
        (np.r_[np.ones(20), [0.0, 0.5, 1, 0.0], np.ones(4), [0.0, 0.5, 1.0, 0.0]], np.repeat(np.arange(8), 4)),
    ],
)
def test_few_clusters_warn_and_stay_finite(values, clusters):
    # before: [0, 1] or [0.0000, 0.9884] (clipped infinities), silently
    with pytest.warns(IntervalMethodWarning) as caught:
        result = mean_ci(values, clusters=clusters, rng=0)
    messages = [str(w.message) for w in caught]
    n_clusters = len(np.unique(clusters))
    assert any(f"only {n_clusters} clusters" in m for m in messages)
    # issue #16: below 10 clusters both bounds come from the few-cluster score interval by rule
    # (the few-cluster note says so), no longer through a degenerate bootstrap-t tail
    assert result.details["scale"] == "score (few clusters)"
    assert math.isfinite(result.low) and 0.0 < result.low < result.estimate <= result.high <= 1.0
    assert "score" in result.details["bound_methods"]
    with pytest.warns(IntervalMethodWarning, match=f"only {n_clusters} clusters"):
        mean_ci(values, clusters=clusters, method="clustered-t")


def test_clustered_binary_values_use_the_design_effect_not_the_kish_worst_case():
    # 12 clusters of 3 identical 0/1 values (11 clusters all 1): 0/1 values take the score interval
    # with n_eff = min(p(1-p)/SE_cl^2, N) (Korn & Graubard's design-effect size), here about 11
    values = np.repeat(np.r_[np.ones(11), 0.0], 3)
    clusters = np.repeat(np.arange(12), 3)
    result = _no_interval_method_warning(values, clusters=clusters, rng=0)
    assert result.details["bound_methods"] == ("score", "score")
    p = 11 / 12
    se = mean_ci(values, clusters=clusters, method="clustered-t").standard_error
    n_eff = min(p * (1 - p) / se**2, 36.0)
    expected = _korn_graubard_wilson_low(p, n_eff, 11)
    assert (result.low, result.high) == pytest.approx(expected, abs=1e-12)
    # 1,000 values in 50 clusters of 20: the Kish worst case (n_B = 50) made the interval about 5x
    # as wide as clustered-t's; the design-effect size gives about the same width
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(50), 20)
    binary = (rng.random(1000) < rng.beta(3, 2, 50)[labels]).astype(float)
    default = _no_interval_method_warning(binary, clusters=labels, rng=0)
    clustered_t = mean_ci(binary, clusters=labels, method="clustered-t")
    assert default.details["scale"] == "score (0/1 values)"
    assert 0.9 < default.width / clustered_t.width < 1.1
    # every cluster at 1: no spread to measure, so the worst case (Kish's 12) stays
    with pytest.warns(DegenerateIntervalWarning, match="same end of its range"):
        solved = mean_ci(np.ones(36), clusters=clusters, rng=0)
    assert solved.low == pytest.approx(_korn_graubard_wilson_low(1.0, 12, 11)[0], abs=1e-12)


def test_values_without_a_range_fall_back_to_t_and_an_explicit_range_to_score():
    values = np.r_[np.full(39, 5.0), 3.0]
    # no known range: the t fallback is not what the coverage study measures, so it is warned about
    with pytest.warns(IntervalMethodWarning, match="from the t interval"):
        result = mean_ci(values, rng=0)
    t_interval = mean_ci(values, method="t")
    assert (result.low, result.high) == pytest.approx((t_interval.low, t_interval.high), abs=1e-12)
    assert result.details["bound_methods"] == ("t", "t")
    unit = mean_ci(np.r_[np.ones(39), 0.0], rng=0)
    scaled = _no_interval_method_warning(100 * np.r_[np.ones(39), 0.0], rng=0, bounds=(0, 100))
    assert scaled.low == pytest.approx(100 * unit.low, rel=1e-12)


@given(
    st.lists(st.sampled_from([0.0, 1.0, 0.9999223, 0.5, 0.9]), min_size=2, max_size=60),
    st.integers(0, 2**32 - 1),
)
def test_studentized_is_never_infinite_and_never_silently_degenerate(values, seed):
    # a replaced tail is named in the details (its score bound is part of the measured default: no warning)
    assume(np.ptp(values) > 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = mean_ci(values, n_resamples=300, rng=seed, bounds=None)  # no clipping to hide an infinity
    assert math.isfinite(result.low) and math.isfinite(result.high)
    assert result.low <= result.estimate <= result.high
    if any(result.details["degenerate_tail"]):
        assert "score" in result.details["bound_methods"]
        assert not any("cannot give" in str(w.message) for w in caught)


def test_two_dimensional_values_report_each_replaced_column():
    values = np.column_stack([np.r_[np.ones(38), 0.999, 0.0], np.linspace(0, 1, 40)])
    first, second = mean_ci_columns(values, rng=0)
    assert first.details["degenerate_tail"][0] and not any(second.details["degenerate_tail"])
    # without a known range the t fallback warns, naming the column
    with pytest.warns(IntervalMethodWarning, match=r"\(columns \[0\]\)"):
        mean_ci_columns(np.column_stack([5 * values[:, 0] + 3, 5 * values[:, 1] + 3]), rng=0)
    assert first.details["bound_methods"][0] == "score"
    # the second column's interior side is the wider of its bootstrap-t and score bounds (neither a replaced tail)
    assert second.details["studentized_degenerate_tail"] == (False, False)


def test_a_tail_with_more_than_a_quarter_of_alpha_degenerate_takes_the_score_bound():
    # 96 values at 1 and 4 at 0.2: a resample without any of the four (0.96^100 = 1.7% of them) has no
    # spread; between alpha/4 and alpha/2 degenerate the bootstrap-t quantile sits among near-degenerate
    # resamples, so the single-model default takes the score bound there (THRESHOLDS.single_degenerate_fraction)
    from kpass.metrics._interval_policy import THRESHOLDS

    values = np.r_[np.ones(96), np.full(4, 0.2)]
    result = mean_ci(values, rng=0)
    share = result.details["degenerate_share"][1]  # resamples above the estimate: they set the lower bound
    assert THRESHOLDS.single_degenerate_fraction * 0.025 < share < 0.025
    assert result.details["degenerate_tail"] == (True, False) and result.details["bound_methods"][0] == "score"
    se = values.std(ddof=1) / math.sqrt(100)
    assert result.low == pytest.approx(_wilson_lower_by_hand(values.mean(), se, 100, 99), abs=1e-12)
    # MOVER's per-model limits keep the alpha/2 rule (the paired helper's area): model a's lower limit
    # stays the studentized one
    paired = paired_difference(values, np.r_[np.ones(96), np.full(4, 0.1)], rng=0)
    assert paired.details["model_bound_methods"][0][0] == "studentized"
