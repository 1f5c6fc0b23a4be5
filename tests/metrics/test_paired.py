"""Tests of kpass.metrics.paired_difference."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy import stats

from kpass.metrics import (
    DEFAULT_PAIRED_METHOD,
    PAIRED_INTERVAL_METHODS,
    DegenerateIntervalWarning,
    IntervalMethodWarning,
    PairedResult,
    mean_ci,
    paired_difference,
    paired_difference_columns,
    pass_at_k,
)

METHODS = ["t", "studentized", "bootstrap", "bca", "mover"]


def _two_models(seed=0, n=80):
    rng = np.random.default_rng(seed)
    difficulty = rng.beta(0.6, 0.5, size=n)
    a = np.clip(difficulty + rng.normal(0.05, 0.1, n), 0, 1)
    b = np.clip(difficulty + rng.normal(0.0, 0.1, n), 0, 1)
    return a, b


@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=2, max_size=50), st.sampled_from(METHODS))
def test_model_with_itself_is_exactly_zero(values, method):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = paired_difference(values, values, method=method, n_resamples=200, rng=0)
    assert result.estimate == 0.0 and result.standard_error == 0.0
    assert result.low == 0.0 and result.high == 0.0
    assert result.p_value == 1.0
    assert any(issubclass(w.category, DegenerateIntervalWarning) for w in caught)


def test_equals_mean_ci_of_differences_and_ttest_rel():
    a, b = _two_models()
    result = paired_difference(a, b, method="t")
    diff = mean_ci(a - b, method="t", bounds=(-1, 1))
    assert (result.estimate, result.low, result.high, result.standard_error) == pytest.approx(
        (diff.estimate, diff.low, diff.high, diff.standard_error), abs=1e-15
    )
    reference = stats.ttest_rel(a, b)
    assert result.p_value == pytest.approx(reference.pvalue, rel=1e-10)
    assert result.estimate == pytest.approx(result.estimate_a - result.estimate_b, abs=1e-15)
    assert result.correlation == pytest.approx(np.corrcoef(a, b)[0, 1], abs=1e-12)
    # s_d^2 = s_a^2 + s_b^2 - 2 r s_a s_b (Miller 2024, section 4)
    sa, sb = np.std(a, ddof=1), np.std(b, ddof=1)
    expected = math.sqrt((sa**2 + sb**2 - 2 * result.correlation * sa * sb) / a.size)
    assert result.standard_error == pytest.approx(expected, rel=1e-10)
    unpaired = math.sqrt((sa**2 + sb**2) / a.size)
    assert result.standard_error < unpaired / 2  # pairing removes the shared difficulty


def test_clustered_paired_equals_clustered_mean_of_differences():
    a, b = _two_models(1, 60)
    clusters = np.arange(60) // 4
    result = paired_difference(a, b, clusters=clusters, method="clustered-t")
    diff = mean_ci(a - b, clusters=clusters, method="clustered-t", bounds=(-1, 1))
    assert result.standard_error == pytest.approx(diff.standard_error, abs=1e-15)
    assert result.n_clusters == 15 and result.details["df"] == 14
    t_obs = result.estimate / result.standard_error
    assert result.p_value == pytest.approx(2 * stats.t.sf(abs(t_obs), 14), rel=1e-10)


def test_problem_ids_reorder_b():
    a, b = _two_models(2, 30)
    ids = [f"p{i}" for i in range(30)]
    order = np.random.default_rng(3).permutation(30)
    aligned = paired_difference(a, b, method="t")
    keyed = paired_difference(a, b[order], problem_ids_a=ids, problem_ids_b=[ids[i] for i in order], method="t")
    assert (keyed.estimate, keyed.low, keyed.high) == pytest.approx((aligned.estimate, aligned.low, aligned.high), abs=1e-15)
    assert keyed.n_unmatched == 0 and keyed.unmatched_ids_a == () and keyed.unmatched_ids_b == ()


def test_unmatched_ids_raise_naming_them():
    with pytest.raises(ValueError, match=r"only in `problem_ids_a`: \['q3'\].*only in `problem_ids_b`: \['q9'\].*intersect=True"):
        paired_difference([0.1, 0.2, 0.3], [0.3, 0.2, 0.1], problem_ids_a=["q1", "q2", "q3"], problem_ids_b=["q1", "q2", "q9"])


def test_intersection_is_reported():
    result = paired_difference(
        [0.1, 0.2, 0.3, 0.9], [0.25, 0.0, 0.4, 0.5],
        problem_ids_a=["q1", "q2", "q3", "q4"], problem_ids_b=["q2", "q1", "q9", "q4"],
        intersect=True, method="t",
    )
    assert isinstance(result, PairedResult)
    assert result.n_problems == 3 and result.n_unmatched == 2
    assert result.unmatched_ids_a == ("q3",) and result.unmatched_ids_b == ("q9",)
    # q1: 0.1 - 0.0, q2: 0.2 - 0.25, q4: 0.9 - 0.5
    assert result.estimate == pytest.approx((0.1 + (0.2 - 0.25) + 0.4) / 3)


@pytest.mark.filterwarnings("ignore:only [0-9]+ clusters")
def test_clusters_follow_the_intersection():
    result = paired_difference(
        [0.1, 0.2, 0.3, 0.9, 0.4], [0.0, 0.25, 0.5, 0.6, 0.1],
        problem_ids_a=[1, 2, 3, 4, 5], problem_ids_b=[1, 2, 4, 5, 6],
        intersect=True, clusters=["x", "x", "y", "y", "z"], method="clustered-t",
    )
    assert result.n_problems == 4 and result.n_clusters == 3


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"a": [0.1, 0.2], "b": [0.1, 0.2, 0.3]}, "`a` has 2 problems and `b` has 3"),
        ({"a": [0.1, 0.2], "b": [0.1, 0.2], "problem_ids_a": [1, 2]}, "give both"),
        ({"a": [0.1, 0.2], "b": [0.1, 0.2], "problem_ids_a": [1, 1], "problem_ids_b": [1, 2]}, "duplicated ids: \\[1\\]"),
        ({"a": [0.1, 0.2], "b": [0.1, 0.2], "problem_ids_a": [1, 2, 3], "problem_ids_b": [1, 2]}, "one id per problem"),
        ({"a": [0.1, 0.2], "b": [0.1, 0.2], "problem_ids_a": [1, 2], "problem_ids_b": [2, 3], "intersect": True}, "only 1 problem"),
        ({"a": [[0.1, 0.2]] * 3, "b": [0.1, 0.2, 0.3]}, "same number of columns"),
        ({"a": [0.1, float("nan")], "b": [0.1, 0.2]}, "`a` must be finite"),
        ({"a": [0.1, 0.2], "b": [0.1, 0.2], "method": "z"}, "`method` must be one of"),
    ],
)
def test_paired_difference_iv(kwargs, match):
    with pytest.raises(ValueError, match=match):
        paired_difference(**kwargs)


def test_p_values_of_bootstrap_methods():
    a, b = _two_models(4, 300)
    for method in ("studentized", "bootstrap", "bca", "mover"):
        different = paired_difference(a, b, method=method, n_resamples=4000, rng=0)
        assert different.p_value < 0.01, method
        assert not different.contains(0.0)
        rng = np.random.default_rng(5)
        noise = a + rng.normal(0, 0.05, a.size)
        same = paired_difference(a, np.clip(noise - (noise - a).mean(), 0, 1), method=method, n_resamples=4000, rng=0)
        assert same.p_value > 0.2, method
        assert same.contains(0.0)


@pytest.mark.slow
@given(st.integers(0, 10_000), st.sampled_from(["studentized", "bootstrap", "bca", "mover"]))
def test_p_value_agrees_with_interval(seed, method):
    rng = np.random.default_rng(seed)
    a = rng.random(25)
    b = np.clip(a + rng.normal(rng.normal(0, 0.05), 0.1, 25), 0, 1)
    assume(np.ptp(a - b) > 0)
    result = paired_difference(a, b, method=method, n_resamples=999, rng=seed)
    if not result.contains(0.0):
        assert result.p_value <= 0.05 + 2 / 1000
    elif result.low < -0.01 and result.high > 0.01:
        assert result.p_value >= 0.05 - 2 / 1000


def test_constant_model_correlation_is_nan_with_warning():
    with pytest.warns(DegenerateIntervalWarning, match="correlation is undefined"):
        result = paired_difference([1.0, 1.0, 1.0, 1.0], [0.5, 0.75, 1.0, 0.25], method="t")
    assert math.isnan(result.correlation)
    assert result.estimate == pytest.approx(0.375)


def test_two_dimensional_inputs_and_reproducibility():
    rng = np.random.default_rng(6)
    a = rng.random((40, 3))
    b = np.clip(a + rng.normal(0, 0.1, (40, 3)), 0, 1)
    results = paired_difference_columns(a, b, rng=7, n_resamples=2000)
    assert len(results) == 3
    again = paired_difference_columns(a, b, rng=7, n_resamples=2000)
    assert results == again
    for j in range(3):
        single = paired_difference(a[:, j], b[:, j], method="t")
        assert paired_difference_columns(a, b, method="t")[j].standard_error == pytest.approx(single.standard_error, abs=1e-15)


# ---------------------------------------------------------------------------------------------
# the default "mover" interval and degenerate paired data
# ---------------------------------------------------------------------------------------------


def test_default_is_mover_of_the_two_studentized_intervals():
    assert DEFAULT_PAIRED_METHOD == "mover" and "mover" in PAIRED_INTERVAL_METHODS
    a, b = _two_models(7, 60)
    result = paired_difference(a, b, rng=3, n_resamples=3000)
    assert result.method == "mover"
    # the per-model limits come from the studentized pivots of mean_ci (same resamples of the
    # problems: model a's pivot is mean_ci's of a, drawn in a's canonical order, and with the roles
    # swapped model b's is mean_ci's of b), with raw-scale legs estimate - t*_q SE: the arcsine
    # pivot's quantiles, not mapped back through the arcsine
    per_model = [mean_ci(a, rng=3, n_resamples=3000), mean_ci(b, rng=3, n_resamples=3000)]

    def raw_legs(r):
        q_low, q_high = r.details["t_quantiles"]
        return r.estimate - q_high * r.standard_error, r.estimate - q_low * r.standard_error

    # (mean_ci's own interval of 60 problems is the score rule's; its bootstrap-t pivot stays in the details)
    assert per_model[0].details["scale"] == "score (effective size)"
    assert per_model[0].details["studentized_degenerate_tail"] == (False, False)
    assert result.details["interval_a"] == pytest.approx(raw_legs(per_model[0]), abs=1e-12)
    swapped = paired_difference(b, a, rng=3, n_resamples=3000)
    assert swapped.details["interval_a"] == pytest.approx(raw_legs(per_model[1]), abs=1e-12)
    assert result.details["interval_b"] == pytest.approx(swapped.details["interval_a"], abs=0.01)
    # Zou & Donner (2008) with r the correlation of the two means (Pearson's r without clusters)
    r = np.corrcoef(a, b)[0, 1]
    assert result.details["correlation_of_means"] == pytest.approx(r, abs=1e-12)
    (la, ua), (lb, ub) = result.details["interval_a"], result.details["interval_b"]
    ma, mb = a.mean(), b.mean()
    d = ma - mb
    low = d - math.sqrt((ma - la) ** 2 + (ub - mb) ** 2 - 2 * r * (ma - la) * (ub - mb))
    high = d + math.sqrt((ua - ma) ** 2 + (mb - lb) ** 2 - 2 * r * (ua - ma) * (mb - lb))
    assert result.details["mover_of_models"] == pytest.approx((low, high), abs=1e-12)
    # differences that are not saturated (#16): the paired t interval, each bound widened to the
    # split score interval's where that is wider; MOVER of the models stays in the details
    assert not result.details["saturated_differences"]
    t_result = paired_difference(a, b, method="t")
    assert result.details["t_of_differences"] == pytest.approx(t_result.interval, abs=1e-12)
    split_low, split_high = result.details["split_score_interval"]
    (t_low, t_high) = t_result.interval
    assert (result.low, result.high) == pytest.approx((min(t_low, split_low), max(t_high, split_high)), abs=1e-12)
    assert result.details["paired_bound_methods"] == ("split-score" if split_low < t_low else "t",
                                                       "split-score" if split_high > t_high else "t")
    assert result.standard_error == pytest.approx(paired_difference(a, b, method="t").standard_error, abs=1e-15)
    # near the estimate the MOVER is about as wide as the paired t interval, far narrower than unpaired
    t_width = paired_difference(a, b, method="t").width
    assert 0.8 * t_width < result.width < 1.3 * t_width


def _wilson(p, n, z):
    # Wilson (1927), written out: (p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)
    center = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(center - half, 0.0), min(center + half, 1.0)


def test_split_score_interval_of_gains_and_losses_by_hand():
    # 40 problems: 34 ties, gains of 0.5 and 0.25 on 2, losses of 1, 0.5, 0.5, 0.25 on 4
    from scipy import stats

    d = np.array([0.0] * 34 + [0.5, 0.25, -1.0, -0.5, -0.5, -0.25])
    b = np.full(40, 0.5) - np.minimum(d, 0) * 0.5
    a = b + d
    result = paired_difference(a, b, rng=0, n_resamples=999)
    n, z, t = 40, stats.norm.ppf(0.975), stats.t.ppf(0.975, 39)
    gains, losses = np.maximum(d, 0) / 1.0, np.maximum(-d, 0) / 1.0  # M = max |d| = 1
    parts = []
    for part in (gains, losses):
        p, se = part.mean(), part.std(ddof=1) / math.sqrt(n)
        n_star = p * (1 - p) / se**2 * (z / t) ** 2  # design-effect size, reduced for 39 df
        low, high = _wilson(p, n_star, z)
        parts.append((p, se, min(low, p), max(high, p)))
    (pg, sg, lg, ug), (pl, sl, ll, ul) = parts
    sd = d.std(ddof=1) / math.sqrt(n)
    r = (sg**2 + sl**2 - sd**2) / (2 * sg * sl)
    low = (pg - pl) - math.sqrt((pg - lg) ** 2 + (ul - pl) ** 2 - 2 * r * (pg - lg) * (ul - pl))
    high = (pg - pl) + math.sqrt((ug - pg) ** 2 + (pl - ll) ** 2 - 2 * r * (ug - pg) * (pl - ll))
    assert result.details["split_score_interval"] == pytest.approx((low, high), abs=1e-12)
    assert result.low <= low and result.high >= high
    # losses on 4 problems, gains on 2: the t interval is shorter on the side of the losses
    t_low, _ = paired_difference(a, b, method="t").interval
    assert low < t_low


def test_mover_with_clusters_uses_clustered_standard_errors():
    a, b = _two_models(8, 60)
    clusters = np.arange(60) // 4
    result = paired_difference(a, b, clusters=clusters, rng=0, n_resamples=2000)
    se = {name: mean_ci(v, clusters=clusters, method="clustered-t").standard_error for name, v in (("a", a), ("b", b), ("d", a - b))}
    r = (se["a"] ** 2 + se["b"] ** 2 - se["d"] ** 2) / (2 * se["a"] * se["b"])
    assert result.details["correlation_of_means"] == pytest.approx(r, abs=1e-12)
    assert result.details["resampling"] == "clusters" and result.n_clusters == 15
    per_model = mean_ci(a, clusters=clusters, rng=0, n_resamples=2000)
    q_low, q_high = per_model.details["t_quantiles"]
    se_a = per_model.standard_error
    # the single-model default shows the clustered score interval there (15 clusters); MOVER combines
    # the studentized cluster bootstrap's legs, which mean_ci keeps in its details
    assert per_model.details["scale"] == "score (clustered)"
    assert result.details["interval_a"] == pytest.approx((a.mean() - q_high * se_a, a.mean() - q_low * se_a), abs=1e-12)


def test_mover_is_only_for_paired_differences():
    with pytest.raises(ValueError, match="only for paired_difference"):
        mean_ci([0.1, 0.5, 0.9], method="mover")


@pytest.mark.parametrize("method", ["mover", "studentized"])
def test_two_strong_models_that_differ_on_two_problems(method):
    # d = a - b is 0 on 38 problems and 1 on 2: 13% of the resamples are all zeros, so the
    # studentized bootstrap of d had t* = -inf and an upper bound of +inf clipped to 1: [0.0006, 1.0]
    a = np.r_[np.ones(39), 0.0]
    b = np.r_[np.ones(37), 0.0, 0.0, 0.0]
    if method == "studentized":
        with pytest.warns(IntervalMethodWarning, match="cannot give"):
            result = paired_difference(a, b, method=method, rng=0)
    else:  # 0/1 values: each model's interval is Wilson's (Newcombe 1998); the difference rests
        # on 2 discordant problems: both bounds are the matched-pairs (Bonett & Price) interval's
        # (2 gains, no loss), and the default does not warn about few differing problems (its miss
        # rate does not depend on them)
        with warnings.catch_warnings():
            warnings.simplefilter("error", IntervalMethodWarning)
            result = paired_difference(a, b, method=method, rng=0)
        assert result.details["model_scales"] == ("score (0/1 values)", "score (0/1 values)")
        assert result.details["n_differing"] == 2 and not result.details["saturated_differences"]
        assert result.details["paired_bound_methods"] == ("matched-pairs score", "matched-pairs score")
        # (2 + 1)/42 and (0 + 1)/42: 2/42 -+ z sqrt((4/42 - (2/42)^2)/42), written out
        half = stats.norm.ppf(0.975) * math.sqrt((4 / 42 - (2 / 42) ** 2) / 42)
        assert result.interval == pytest.approx((2 / 42 - half, 2 / 42 + half), abs=1e-12)
        with pytest.warns(IntervalMethodWarning, match="differ on only 2 of 40 problems"):
            paired_difference(a, b, method="t")
    assert result.estimate == pytest.approx(0.05)
    assert math.isfinite(result.low) and math.isfinite(result.high)
    # two discordant problems, both for A: no evidence of a difference (exact sign test p = 0.5)
    assert result.contains(0.0) and result.p_value > 0.1
    assert -0.1 < result.low < 0.0 and 0.12 < result.high < 0.25
    if method == "studentized":
        assert result.details["bound_methods"] == ("mover-score", "mover-score")
    else:
        assert "score" in {m for pair in result.details["model_bound_methods"] for m in pair}


def test_pass8_of_two_strong_models():
    # pass@8 from n = 16 samples near 1 for both models
    a = pass_at_k(np.full(40, 16), np.r_[np.full(36, 12), 8, 3, 2, 0], 8)
    b = pass_at_k(np.full(40, 16), np.r_[np.full(36, 12), 12, 6, 1, 1], 8)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        result = paired_difference(a, b, rng=0)
    assert math.isfinite(result.low) and math.isfinite(result.high)
    assert result.low < result.estimate < result.high and result.contains(0.0)
    assert -0.2 < result.low and result.high < 0.2


def test_a_model_that_solves_everything_is_not_known_exactly():
    # a = 40/40, b = 37/40: treating a's mean as exact gave [0.006, 0.206] with p = 0 ("significant"),
    # although the 3 discordant problems give an exact sign-test p of 0.25
    a = np.ones(40)
    b = np.r_[np.ones(37), 0.0, 0.0, 0.0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = paired_difference(a, b, rng=0)
    assert any(issubclass(w.category, DegenerateIntervalWarning) for w in caught)  # correlation undefined
    low_a, high_a = result.details["interval_a"]
    wilson_low, _ = stats.binomtest(40, 40).proportion_ci(method="wilson")  # 0.912
    assert high_a == 1.0 and abs(low_a - wilson_low) < 0.01
    assert result.details["model_bound_methods"][0] == ("score", "score")
    assert result.contains(0.0) and 0.1 < result.p_value < 0.5


def test_one_model_solves_everything_and_the_other_nothing():
    # d = 1 on every problem: not [1, 1] with p = 0, but the MOVER of the two Wilson intervals
    a, b = np.ones(30), np.zeros(30)
    with pytest.warns(DegenerateIntervalWarning, match="same end of its range"):
        result = paired_difference(a, b, rng=0)
    with pytest.warns(DegenerateIntervalWarning, match="same end of its range"):
        wilson_low = mean_ci(a, rng=0).low  # Wilson for 30 of 30 (Korn & Graubard df), 0.878
    assert result.high == 1.0 and result.low == pytest.approx(1.0 - math.hypot(1.0 - wilson_low, 1.0 - wilson_low), abs=1e-12)
    assert 0.0 < result.p_value < 1e-6
    with pytest.warns(DegenerateIntervalWarning):
        swapped = paired_difference(b, a, rng=0)
    assert (swapped.low, swapped.high) == pytest.approx((-result.high, -result.low), abs=1e-12)
    # a model compared with itself stays exactly 0, even when it solves everything
    with pytest.warns(DegenerateIntervalWarning):
        itself = paired_difference(a, a, rng=0)
    assert (itself.low, itself.high, itself.standard_error, itself.p_value) == (0.0, 0.0, 0.0, 1.0)


def test_a_model_constant_inside_the_range_has_limits_of_width_zero():
    # as in mean_ci: only values all at an end of the range take the score interval
    b = np.random.default_rng(4).random(30)
    with pytest.warns(DegenerateIntervalWarning, match="correlation is undefined"):
        result = paired_difference(np.full(30, 0.5), b, rng=0)
    assert result.details["interval_a"] == (0.5, 0.5)
    assert result.details["model_bound_methods"][0] == ("studentized", "studentized")


# ---------------------------------------------------------------------------------------------
# the p-value is the one of the interval shown (review C10)
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@given(st.integers(0, 10_000), st.sampled_from(METHODS + ["clustered-t"]), st.booleans())
def test_p_value_inverts_the_shown_interval_at_every_level(seed, method, clustered):
    # p < 1 - level exactly when the interval at that level excludes 0, for every paired method,
    # with and without clusters (including fallback bounds)
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 40))
    a = np.round(rng.random(n), 1)
    b = np.clip(a + np.round(rng.normal(rng.normal(0, 0.1), 0.2, n), 1), 0, 1)
    assume(np.ptp(a - b) > 0)
    clusters = (np.arange(n) % int(rng.integers(2, 8))) if clustered or method == "clustered-t" else None
    if method == "t" and clusters is not None:
        method = "clustered-t"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p_value = paired_difference(a, b, clusters=clusters, method=method, n_resamples=400, rng=seed).p_value
        for level in (0.5, 0.8, 0.9, 0.95, 0.99):
            if abs(p_value - (1 - level)) < 1e-9:
                continue
            result = paired_difference(a, b, clusters=clusters, method=method, n_resamples=400, rng=seed,
                                       confidence_level=level, bounds=None)
            assert (p_value < 1 - level) == (not result.contains(0.0)), (level, p_value, result.interval)


def test_same_interval_same_p_value_with_few_clusters():
    # the reviewer's case: with 4 clusters the studentized interval of the differences rests on the
    # MOVER score fallback on both sides and equals the MOVER interval, but its p-value was the larger
    # of a bootstrap-t p-value and the fallback's (0.85 against 0.54)
    rng = np.random.default_rng(27)
    clusters = np.repeat(["algebra", "counting", "geometry", "number-theory"], 6)
    a = np.clip(rng.beta(2, 3, 24) + 0.05, 0, 1).round(2)
    b = np.clip(a + rng.normal(-0.05, 0.25, 24), 0, 1).round(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        studentized = paired_difference(a, b, clusters=clusters, method="studentized", rng=0)
        mover = paired_difference(a, b, clusters=clusters, method="mover", rng=0)
    assert studentized.details["bound_methods"] == ("mover-score", "mover-score")
    assert studentized.interval == pytest.approx(mover.interval, abs=1e-12)
    assert studentized.p_value == pytest.approx(mover.p_value, abs=1e-9)


# ---------------------------------------------------------------------------------------------
# two different models that agree on every problem (issue #16): no collapsed interval
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_two_models_that_agree_everywhere_get_the_no_difference_bound(method):
    # the case: 30 binary values, 20 solved by both, 10 by neither
    a = np.r_[np.ones(20), np.zeros(10)]
    b = a.copy()  # another model's values, equal on every problem
    with pytest.warns(DegenerateIntervalWarning, match="agree on every problem"):
        result = paired_difference(a, b, method=method, rng=0)
    with pytest.warns(DegenerateIntervalWarning, match="same end of its range"):
        all_solved = mean_ci(np.ones(30), rng=0)   # the single-model all-same bound: 30 of 30
    assert (result.low, result.high) != (0.0, 0.0)
    assert result.high == pytest.approx(1.0 - all_solved.low, abs=1e-12)   # 0.122
    assert result.low == -result.high and result.estimate == 0.0 and result.p_value == 1.0
    assert result.details["degenerate"] == "no difference on any problem"
    assert result.details["no_difference_bound"] == result.high
    # one problem changed: an ordinary interval, which the no-difference bound does not undercut
    b[0] = 0.0
    changed = paired_difference(a, b, method=method, rng=0)
    assert changed.low < changed.estimate < changed.high


def test_no_difference_bound_shrinks_with_n_and_widens_with_few_clusters():
    widths = []
    for n in (10, 30, 100, 1000):
        a = np.r_[np.ones(n // 2), np.zeros(n - n // 2)]
        with pytest.warns(DegenerateIntervalWarning):
            widths.append(paired_difference(a, a.copy(), rng=0).high)
    assert widths == sorted(widths, reverse=True) and widths[-1] < 0.005
    a = np.r_[np.ones(15), np.zeros(15)]
    with pytest.warns(DegenerateIntervalWarning):
        clustered = paired_difference(a, a.copy(), clusters=np.arange(30) // 3, rng=0)
    assert clustered.high > widths[1]   # 10 clusters of 3 tell less than 30 independent problems


def test_model_with_itself_stays_zero_when_the_same_array_is_passed():
    a = np.r_[np.ones(20), np.zeros(10)]
    with pytest.warns(DegenerateIntervalWarning, match="identical"):
        itself = paired_difference(a, a, rng=0)
    assert (itself.low, itself.high, itself.standard_error, itself.p_value) == (0.0, 0.0, 0.0, 1.0)


def test_tiny_differences_everywhere_are_flagged():
    # pass@8 from 16 samples of two strong models: 1 - C(16 - c, 8) / C(16, 8) differs by 8 / 12870 between
    # c = 7 and c = 8 (and by 1 / 12870 between 8 and 9); the rare outright failure is not in the sample
    from math import comb

    value = {c: 1 - comb(16 - c, 8) / comb(16, 8) for c in range(17)}
    a = np.array([value[16]] * 30 + [value[8]] * 6 + [value[7]] * 4)
    b = np.array([value[16]] * 30 + [value[9]] * 6 + [value[8]] * 4)
    with pytest.warns(IntervalMethodWarning, match="differ by at most 0.000622"):
        result = paired_difference(a, b, method="studentized", rng=0, n_resamples=999)
    # 10 of 40 problems differ: not fewer than a quarter, so only the tiny-difference flag applies
    assert result.details["tiny_differences"] and result.details["sparse_differences"]
    assert result.details["n_differing"] == 10 and result.details["largest_difference"] == pytest.approx(8 / 12870)
    # the default takes the near-end bound for such saturated differences instead of the flag
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        default = paired_difference(a, b, rng=0, n_resamples=999)
    assert default.details["saturated_differences"] and "sparse_differences" not in default.details
    assert not any("differ by at most" in str(w.message) for w in caught)
    # differences of 0.25 on 40 of 60 problems: neither flag
    rng = np.random.default_rng(1)
    a = rng.integers(0, 5, 60) / 4
    b = np.clip(a - rng.choice([0.0, 0.25, -0.25], 60, p=[1 / 3, 1 / 2, 1 / 6]), 0, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IntervalMethodWarning)
        plain = paired_difference(a, b, method="studentized", rng=0, n_resamples=999)
    assert "sparse_differences" not in plain.details and "tiny_differences" not in plain.details


def test_saturated_differences_near_the_same_end_take_their_own_studentized_bootstrap_and_the_near_end_split_bound():
    # pass@8 of two strong models (the tiny-difference case above): every difference is below 0.05,
    # so the differences are saturated (#16) and, without clusters and with both means within 10% of the
    # ceiling, the default is the differences' own studentized bootstrap widened to their t interval, each bound widened to the split score
    # bound and to the near-end split bound of the gains and losses on [0, 1] (Wilson with at most
    # 5 n_B = 200 problems' worth, reduced for 39 df); MOVER of the models is kept in details only
    from math import comb

    from scipy import stats

    value = {c: 1 - comb(16 - c, 8) / comb(16, 8) for c in range(17)}
    a = np.array([value[16]] * 30 + [value[8]] * 6 + [value[7]] * 4)
    b = np.array([value[16]] * 30 + [value[9]] * 6 + [value[8]] * 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IntervalMethodWarning)  # the models' degenerate bootstrap tails
        result = paired_difference(a, b, rng=0, n_resamples=999)
    assert result.details["saturated_differences"]
    n, z, t = 40, stats.norm.ppf(0.975), stats.t.ppf(0.975, 39)
    d = a - b
    loss = np.maximum(-d, 0)
    p_loss, se_loss = loss.mean(), loss.std(ddof=1) / math.sqrt(n)
    assert n * p_loss < 3  # near 0: the sample is no more informative than 5 n_B problems
    size = min(p_loss * (1 - p_loss) / se_loss**2, 5 * n) * (z / t) ** 2
    assert size == pytest.approx(5 * n * (z / t) ** 2)
    low_loss, high_loss = _wilson(p_loss, size, z)
    _, high_gain = _wilson(0.0, 5 * n * (z / t) ** 2, z)  # no gain at all: 0 of 200
    # MOVER of the two parts; the gains have no spread, so r = 0
    near_low = d.mean() - math.sqrt(0.0 + (high_loss - p_loss) ** 2)
    near_high = d.mean() + math.sqrt(high_gain**2 + (p_loss - max(low_loss, 0.0)) ** 2)
    assert result.details["near_end_split_interval"] == pytest.approx((near_low, near_high), abs=1e-12)
    own_low, own_high = result.details["studentized_of_differences"]
    t_low, t_high = result.details["t_of_differences"]
    split_low, split_high = result.details["split_score_interval"]
    assert result.low == pytest.approx(min(own_low, t_low, split_low, near_low), abs=1e-12)
    assert result.high == pytest.approx(max(own_high, t_high, split_high, near_high), abs=1e-12)
    assert "mover" not in result.details["paired_bound_methods"] and result.details["mover_of_models"] is not None
    # the tiny differences seen (at most 8 / 12870) do not make the interval tiny
    assert result.low < -0.015 and result.high > 0.015
    # the p-value inverts the interval shown: 0 is inside it
    assert result.p_value > 0.05


@pytest.mark.parametrize(
    ("losses", "cap_factor"),
    [
        # pass@1 from 64 samples near the ceiling: 25 problems lost by 1 of 64, 15 by 2 of 64; the part
        # rests on about 36 problems (participation ratio), so its cap is 15 n_B (#16)
        ([1 / 64] * 25 + [2 / 64] * 15, 15),
        # the same problems' worth (55/64, a mean of 0.0043 on 200) on 5 problems lost by 11 of 64: 5 n_B
        ([11 / 64] * 5, 5),
        # six equal losses rest on exactly 6 problems (their ratio rounds to 5.999999999999999): 15 n_B
        ([1 / 100] * 6, 15),
    ],
)
def test_near_end_split_bound_caps_a_part_by_how_many_problems_carry_it(losses, cap_factor):
    from scipy import stats

    from kpass.metrics._score_intervals import contributing_problems, near_end_split_bounds

    n = 200
    d = -np.array(losses + [0.0] * (n - len(losses)))
    loss = np.maximum(-d, 0)
    participation = loss.sum() ** 2 / (loss**2).sum()
    assert contributing_problems(loss[:, None])[0] == pytest.approx(participation)
    assert (participation >= 6 * (1 - 1e-12)) == (cap_factor == 15)
    p_loss, se_loss = loss.mean(), loss.std(ddof=1) / math.sqrt(n)
    assert n * p_loss < 3  # the loss part is near 0: within 3 problems' worth
    z, t = stats.norm.ppf(0.975), stats.t.ppf(0.975, n - 1)
    observed = p_loss * (1 - p_loss) / se_loss**2
    assert observed > cap_factor * n  # the cap binds
    low_loss, high_loss = _wilson(p_loss, cap_factor * n * (z / t) ** 2, z)
    _, high_gain = _wilson(0.0, 5 * n * (z / t) ** 2, z)  # no gain at all: 0 of 5 n_B
    expected = (d.mean() - (high_loss - p_loss), d.mean() + math.sqrt(high_gain**2 + (p_loss - low_loss) ** 2))
    low, high = near_end_split_bounds(d[:, None], None, None)(np.array([0.95]))
    assert (low[0], high[0]) == pytest.approx(expected, abs=1e-12)


def test_contributing_problems_counts_equal_values_and_gives_zero_without_any():
    from kpass.metrics._score_intervals import contributing_problems

    parts = np.zeros((10, 4))
    parts[:7, 0] = 0.3  # 7 equal values: 7 problems
    parts[0, 1] = 0.9  # one value: 1 problem
    parts[:2, 2] = (1.0, 1.0 / 3.0)  # (4/3)^2 / (10/9) = 1.6
    assert contributing_problems(parts) == pytest.approx([7.0, 1.0, 1.6, 0.0])


def test_saturated_differences_on_nearly_every_problem_take_no_near_end_split_bound():
    # every one of 40 problems differs by a few thousandths (pass@8 from 16 samples, c = 7..9): the
    # near-end split bound applies only where under 75% of the problems differ (it over-covered the
    # main grid's pass@8 from n = 64 samples, where nearly every problem differs: 99.1%)
    from math import comb

    value = {c: 1 - comb(16 - c, 8) / comb(16, 8) for c in range(17)}
    a = np.array([value[8]] * 25 + [value[7]] * 15)
    b = np.array([value[9]] * 25 + [value[8]] * 10 + [value[6]] * 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IntervalMethodWarning)
        result = paired_difference(a, b, rng=0, n_resamples=999)
    assert result.details["saturated_differences"] and result.details["n_differing"] == 40
    own_low, own_high = result.details["studentized_of_differences"]
    t_low, t_high = result.details["t_of_differences"]
    split_low, split_high = result.details["split_score_interval"]
    assert (result.low, result.high) == pytest.approx((min(own_low, t_low, split_low), max(own_high, t_high, split_high)), abs=1e-12)
    assert "split-score (near end)" not in result.details["paired_bound_methods"]
    near_low, near_high = result.details["near_end_split_interval"]
    assert near_low < 20 * result.low and near_high > 20 * result.high  # which would have been far wider


def test_the_differences_own_studentized_bootstrap_is_the_one_method_studentized_gives():
    # the default draws the differences' resamples together with the two models' (the same problems),
    # so its bootstrap-t of the differences is method "studentized" up to the resamples drawn
    from math import comb

    value = {c: 1 - comb(16 - c, 8) / comb(16, 8) for c in range(17)}
    rng = np.random.default_rng(11)
    a = np.array([value[c] for c in rng.integers(6, 12, 60)])
    b = np.array([value[c] for c in rng.integers(6, 12, 60)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IntervalMethodWarning)
        default = paired_difference(a, b, rng=1, n_resamples=20_000)
        plain = paired_difference(a, b, method="studentized", rng=2, n_resamples=20_000)
    assert default.details["saturated_differences"]
    own_low, own_high = default.details["studentized_of_differences"]
    width = plain.high - plain.low
    assert abs(own_low - plain.low) < 0.05 * width and abs(own_high - plain.high) < 0.05 * width
    # its tails, and the fallback that replaces a degenerate one, are named as method "studentized" names them
    assert set(default.details["paired_bound_methods"]) <= {"studentized", "mover-score", "t", "split-score",
                                                             "split-score (near end)"}
    # with clusters the differences are not resampled on their own: MOVER of the models stays
    clustered = paired_difference(a, b, clusters=np.arange(60) % 30, rng=1, n_resamples=999)
    assert clustered.details["studentized_of_differences"] is None


def test_a_replaced_tail_of_the_differences_own_bootstrap_is_named_and_recorded():
    # pass@8 (n = 64) of two models at the ceiling on 200 problems, 3% of them rare hard ones: the
    # bootstrap-t of the differences piles up on one side and the paired score fallback ("mover-score")
    # replaces that bound; details name and record it as method "studentized" does, and the default does
    # not warn about it (the score fallback is part of the interval the coverage study measures)
    rng = np.random.default_rng(0)
    p = np.where(rng.random(200) < 0.03, rng.beta(1, 1.5, 200), rng.beta(20, 0.2, 200))
    a = pass_at_k(np.full(200, 64), rng.binomial(64, p), 8)
    b = pass_at_k(np.full(200, 64), rng.binomial(64, np.clip(p + 0.01, 0, 1)), 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IntervalMethodWarning)
        default = paired_difference(a, b, rng=0, n_resamples=999)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IntervalMethodWarning)
        plain = paired_difference(a, b, method="studentized", rng=0, n_resamples=999)
    assert default.details["studentized_of_differences"] is not None
    assert default.details["degenerate_tail"] == plain.details["degenerate_tail"] == (False, True)
    assert default.details["paired_bound_methods"][1] == plain.details["bound_methods"][1] == "mover-score"


def test_saturated_differences_of_models_not_near_the_same_end_keep_mover_of_the_models():
    from kpass.metrics._score_intervals import within_share_of_same_end

    # the README's example: pass@8 means of 0.92 and 0.80 on 21 problems, saturated differences; the
    # differences' own bootstrap-t applies only where both means lie within 10% of the same end
    from math import comb

    value = {c: 1 - comb(16 - c, 8) / comb(16, 8) for c in range(17)}
    a = np.array([value[16]] * 10 + [value[9]] * 6 + [value[1]] * 5)
    b = np.array([value[16]] * 10 + [value[8]] * 6 + [value[0]] * 5)
    assert 0.75 < b.mean() < 0.9 and 0.75 < a.mean() < 0.9
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IntervalMethodWarning)
        result = paired_difference(a, b, rng=0, n_resamples=999)
    assert result.details["saturated_differences"] and result.details["studentized_of_differences"] is None
    mover_low, mover_high = result.details["mover_of_models"]
    split_low, split_high = result.details["split_score_interval"]
    near_low, near_high = result.details["near_end_split_interval"]
    assert result.low == pytest.approx(min(mover_low, split_low, near_low), abs=1e-12)
    assert result.high == pytest.approx(max(mover_high, split_high, near_high), abs=1e-12)
    assert not within_share_of_same_end(np.column_stack([a, b]), (0.0, 1.0))[0]
    # columns (a, b): means 0.96 and 0.955, both within 10% of the ceiling; 0.05 and 0.15 of the floor: not both
    assert within_share_of_same_end(np.array([[0.95, 0.93], [0.97, 0.98]]), (0.0, 1.0))[0]
    assert not within_share_of_same_end(np.array([[0.0, 0.2], [0.1, 0.1]]), (0.0, 1.0))[0]


def test_parts_that_do_not_apply_are_none_so_equal_results_compare_equal():
    # a part of the paired default that does not apply is None in details, never a NaN pair
    # (NaN != NaN made two identical results unequal)
    rng = np.random.default_rng(5)
    a, b = rng.uniform(0.2, 0.8, 40), rng.uniform(0.2, 0.8, 40)
    clusters = np.arange(40) % 12  # 10-29 clusters: MOVER of the models, no near-end split bound
    first, second = (paired_difference(a, b, clusters=clusters, rng=3, n_resamples=199) for _ in range(2))
    assert first.details["near_end_split_interval"] is None
    assert first == second


def test_the_default_warns_where_tiny_differences_carry_half_the_difference_or_more():
    # ten problems lost by 1/64 and one gained by 5/64: 10/64 of the 15/64 of sum |d_j| is tiny (#16, point 6)
    a = np.r_[np.ones(20), np.full(10, 1 - 1 / 64)]

    def with_gain(gain):
        return np.r_[np.ones(19), 1 - gain, np.ones(10)]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = paired_difference(a, with_gain(5 / 64), rng=0, n_resamples=199)
    assert result.details["tiny_difference_share"] == pytest.approx(2 / 3)
    assert result.details["rests_on_tiny_differences"]
    messages = [str(w.message) for w in caught if issubclass(w.category, IntervalMethodWarning)]
    assert any(m.startswith("66.7% of the paired difference comes from per-problem differences below 0.05")
               for m in messages)
    from kpass.metrics import TinyDifferencesWarning

    assert issubclass(TinyDifferencesWarning, IntervalMethodWarning)
    assert [w.category for w in caught if "per-problem differences below" in str(w.message)] == [TinyDifferencesWarning]
    # a gain of 10/64: exactly half (dyadic values, no rounding), still warned; 15/64: 0.4, not warned
    for gain, share, warned in ((10 / 64, 0.5, True), (15 / 64, 0.4, False)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = paired_difference(a, with_gain(gain), rng=0, n_resamples=199)
        assert result.details["tiny_difference_share"] == share
        assert bool(result.details.get("rests_on_tiny_differences")) is warned
        assert any("per-problem differences below" in str(w.message) for w in caught) is warned
    # several columns: one warning naming the flagged ones
    stacked_b = np.stack([with_gain(5 / 64), with_gain(15 / 64), with_gain(10 / 64)], axis=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        paired_difference_columns(np.stack([a] * 3, axis=1), stacked_b, rng=0, n_resamples=199)
    tiny = [str(w.message) for w in caught if "per-problem differences below" in str(w.message)]
    assert tiny == [tiny[0]] and tiny[0].startswith("50% or more of the paired difference (columns [0, 2])")
    # values outside [0, 1] (no known range) and other methods: no such warning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        unbounded = paired_difference(10 * a, 10 * with_gain(5 / 64), rng=0, n_resamples=199)
        other = paired_difference(a, with_gain(5 / 64), method="t")
    assert "tiny_difference_share" not in unbounded.details and "tiny_difference_share" not in other.details
    assert not any("per-problem differences below" in str(w.message) for w in caught)


def test_the_default_warns_where_the_models_differ_on_one_problem_only():
    # one of 30 problems differs: the interval's other side rests on no problem (#16, point 6)
    from kpass.metrics import FewDifferencesWarning

    a = np.r_[np.ones(20), np.zeros(10)]
    one, two = a.copy(), a.copy()
    one[3] = 0.4
    two[[3, 25]] = (0.4, 0.3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = paired_difference(a, one, rng=0, n_resamples=199)
    assert result.details["n_differing"] == 1 and result.details["rests_on_few_differences"]
    few = [w for w in caught if issubclass(w.category, FewDifferencesWarning)]
    assert len(few) == 1 and str(few[0].message).startswith("the paired interval rests on the one problem of 30 where")
    assert issubclass(FewDifferencesWarning, IntervalMethodWarning) and few[0].filename == __file__
    # two differing problems, every difference 0, values outside [0, 1] and other methods: no such warning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = [paired_difference(a, two, rng=0, n_resamples=199), paired_difference(a, a.copy(), rng=0),
                   paired_difference(10 * a, 10 * one, rng=0, n_resamples=199), paired_difference(a, one, method="t")]
    assert not any(issubclass(w.category, FewDifferencesWarning) for w in caught)
    assert not any(r.details.get("rests_on_few_differences") for r in results)
    # several columns: one warning naming the flagged ones
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        paired_difference_columns(np.stack([a] * 3, axis=1), np.stack([two, one, one], axis=1), rng=0, n_resamples=199)
    few = [str(w.message) for w in caught if issubclass(w.category, FewDifferencesWarning)]
    assert few == ["the paired interval (columns [1, 2]) rests on the one problem of 30 where the two models differ "
                   f"(details['n_differing']): {FewDifferencesWarning.CAVEAT} (docs/intervals-edges.md); treat it as rough."]


def _pass8(counts):
    from math import comb

    return np.array([1 - comb(16 - c, 8) / comb(16, 8) for c in counts])


def test_mover_with_thirty_or_more_clusters_near_an_end_combines_the_models_clustered_score_limits():
    """#16: with 30 or more clusters and a model near an end, MOVER's legs are each model's clustered score
    interval (capped near the end), not its studentized cluster bootstrap, whose legs under-covered the
    clustered ceiling and floor cells; mid-range pairs keep the bootstrap's legs."""
    from kpass.metrics._interval_policy import THRESHOLDS

    rng = np.random.default_rng(5)
    clusters = np.repeat(np.arange(30), 3)  # 90 problems, 30 clusters of 3: Kish's n_B = 30
    z, t = stats.norm.ppf(0.975), stats.t.ppf(0.975, 29)

    def clustered_se(v):
        totals = np.bincount(clusters, weights=v - v.mean())
        return math.sqrt(30 / 29 * (totals**2).sum()) / v.size

    # mid-range models with saturated differences (pass@8 from 16 samples: most differences below 0.05)
    counts_a = np.where(np.arange(90) % 3 == 0, 0, rng.binomial(16, rng.beta(3, 3, 90)))  # a third never solved
    counts_b = np.where(counts_a >= 6, counts_a - rng.binomial(1, 0.5, 90), counts_a)
    a, b = _pass8(counts_a), _pass8(counts_b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IntervalMethodWarning)
        result = paired_difference(a, b, clusters=clusters, rng=0, n_resamples=999)
    assert result.details["saturated_differences"] and result.n_clusters == 30
    assert "score (clustered)" not in result.details["model_scales"]
    assert result.details["model_bound_methods"][0] == ("studentized", "studentized")

    # near the ceiling (fewer than 3 problems' worth off it): the lower leg is the wider of that and
    # Wilson's with the size capped at 12 n_B; the single-model default caps at 2 n_B, so it is wider still
    counts_a = np.full(90, 16)
    counts_a[[0, 3, 6]] = 3, 5, 7  # three problems off the ceiling, in three clusters
    counts_b = counts_a.copy()
    counts_b[[0, 3, 6]] -= 1  # pass@8 lower by 0.133, 0.025 and 0.003: saturated
    a, b = _pass8(counts_a), _pass8(counts_b)
    p = a.mean()
    assert 30 * (1 - p) < 3 and np.ptp(a) > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IntervalMethodWarning)
        result = paired_difference(a, b, clusters=clusters, rng=0, n_resamples=999)
        single = mean_ci(a, clusters=clusters, rng=0, n_resamples=999)
    assert result.details["saturated_differences"]
    n_eff = p * (1 - p) / clustered_se(a) ** 2
    score_low, score_high = _wilson(p, n_eff * (z / t) ** 2, z)
    capped_low, _ = _wilson(p, min(n_eff, THRESHOLDS.mover_near_end_size_factor * 30) * (z / t) ** 2, z)
    assert capped_low < score_low  # the cap binds in this sample
    assert result.details["interval_a"] == pytest.approx((capped_low, score_high), abs=1e-12)
    assert result.details["model_bound_methods"][0] == ("score (clustered, near end)", "score (clustered)")
    assert result.details["model_scales"] == ("score (clustered)", "score (clustered)")
    assert result.details["degenerate_tail"] == (False, False)
    # MOVER (Zou & Donner 2008) of the two legs, widened to the split score interval where that is wider
    (la, ua), (lb, ub) = result.details["interval_a"], result.details["interval_b"]
    r, ma, mb = result.details["correlation_of_means"], a.mean(), b.mean()
    q = b.mean()
    n_eff_b = q * (1 - q) / clustered_se(b) ** 2
    assert (lb, ub) == pytest.approx((_wilson(q, min(n_eff_b, THRESHOLDS.mover_near_end_size_factor * 30) * (z / t) ** 2, z)[0],
                                      _wilson(q, n_eff_b * (z / t) ** 2, z)[1]), abs=1e-12)
    low = ma - mb - math.sqrt((ma - la) ** 2 + (ub - mb) ** 2 - 2 * r * (ma - la) * (ub - mb))
    high = ma - mb + math.sqrt((ua - ma) ** 2 + (mb - lb) ** 2 - 2 * r * (ua - ma) * (mb - lb))
    assert result.details["mover_of_models"] == pytest.approx((low, high), abs=1e-12)
    assert result.low == pytest.approx(min(low, result.details["split_score_interval"][0]), abs=1e-12)
    assert single.details["near_end"] and single.low < capped_low
    # the floor mirror (1 - a, 1 - b) beside it in one call: the upper leg is capped there, column by column
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IntervalMethodWarning)
        both = paired_difference_columns(np.column_stack([a, 1 - a]), np.column_stack([b, 1 - b]), clusters=clusters,
                                         rng=0, n_resamples=999)
    assert both[0].details["interval_a"] == pytest.approx(result.details["interval_a"], abs=1e-12)
    assert both[1].details["interval_a"] == pytest.approx((1 - score_high, 1 - capped_low), abs=1e-12)
    assert both[1].details["model_bound_methods"][0] == ("score (clustered)", "score (clustered, near end)")
    assert (both[1].low, both[1].high) == pytest.approx((-result.high, -result.low), abs=1e-12)
    # the p-value inverts the interval with these legs: below 5% exactly when 0 lies outside the 95% interval
    assert (result.p_value < 0.05) == (not result.low <= 0.0 <= result.high)
    # 10 to 29 clusters keep the studentized legs (test_mover_with_clusters_uses_clustered_standard_errors)
    fewer = paired_difference(a, b, clusters=np.repeat(np.arange(15), 6), rng=0, n_resamples=999)
    assert "score (clustered)" not in fewer.details["model_scales"]
