"""Tests of kpass.metrics.mean_ci, bootstrap_weights and wilson_interval."""

from __future__ import annotations

import doctest
import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy import stats

import kpass.metrics as km
from kpass.metrics import (
    DegenerateIntervalWarning,
    IntervalResult,
    bootstrap_weights,
    mean_ci,
    mean_ci_columns,
    pass_at_k,
    wilson_interval,
)
from kpass.metrics import _bootstrap, _intervals, _power, _ranks, _resampling, _result, _score_intervals, _warnings

ST13_Z = 1.959963984540  # docs/spec.md ST13

# hypothesis draws many tiny cluster sets and piles of equal values; the tests of those warnings
# (few clusters, score fallback) record them explicitly with pytest.warns / catch_warnings
pytestmark = pytest.mark.filterwarnings("ignore::kpass.metrics._warnings.IntervalMethodWarning")


# ---------------------------------------------------------------------------------------------
# reference values (docs/spec.md)
# ---------------------------------------------------------------------------------------------


def test_st1_standard_error():
    # docs/spec.md ST1: SE of 1,0,1,1,0,1,0,1,1,1
    result = mean_ci([1, 0, 1, 1, 0, 1, 0, 1, 1, 1], method="t")
    assert result.standard_error == pytest.approx(0.152752523165, abs=1e-12)
    assert result.estimate == pytest.approx(0.7)
    t = stats.t.ppf(0.975, 9)
    assert result.low == pytest.approx(0.7 - t * 0.152752523165, abs=1e-11)
    assert 0.7 + t * 0.152752523165 > 1.0  # the t interval leaves [0, 1] and is clipped
    assert result.high == 1.0 and result.details["clipped"]
    raw = mean_ci([1, 0, 1, 1, 0, 1, 0, 1, 1, 1], method="t", bounds=None)
    assert raw.high == pytest.approx(0.7 + t * 0.152752523165, abs=1e-11)
    assert result.details["df"] == 9


def test_st5_clustered_standard_error():
    # docs/spec.md ST5: clusters [1,1,1],[0,0],[1,0,1,1],[0]
    values = [1, 1, 1, 0, 0, 1, 0, 1, 1, 0]
    clusters = ["a", "a", "a", "b", "b", "c", "c", "c", "c", "d"]
    result = mean_ci(values, clusters=clusters, method="clustered-t")
    assert result.standard_error == pytest.approx(0.219089023002, abs=1e-12)
    assert result.n_clusters == 4 and result.details["df"] == 3


def test_st19_wilson():
    # docs/spec.md ST19: Wilson 8/10 with z = 1.96 exactly
    level = 2 * stats.norm.cdf(1.96) - 1
    low, high = wilson_interval(n_samples=10, n_correct=8, confidence_level=level)
    assert float(low) == pytest.approx(0.490156846721, abs=1e-12)
    assert float(high) == pytest.approx(0.943319052019, abs=1e-12)


def test_st13_wilson_uses_z_0975():
    # docs/spec.md ST13: z_0.975 = 1.959963984540; Wilson at the default level uses it
    low, high = wilson_interval([10, 10], [3, 8])
    for c, lo, hi in zip([3, 8], low, high):
        p, n, z = c / 10, 10, ST13_Z
        center = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        assert lo == pytest.approx(center - half, abs=1e-11)
        assert hi == pytest.approx(center + half, abs=1e-11)


def test_wilson_edges_and_errors():
    low, high = wilson_interval(n_samples=[5, 5, 4], n_correct=[0, 5, 2])
    assert low[0] == 0.0 and high[1] == 1.0
    assert np.all((0 <= low) & (low <= high) & (high <= 1))
    assert isinstance(wilson_interval(2, 1)[0], np.floating)
    with pytest.raises(ValueError, match="n_samples.*>= 1"):
        wilson_interval([0], [0])
    with pytest.raises(ValueError, match="exceeds"):
        wilson_interval([2], [3])
    with pytest.raises(ValueError, match="confidence_level"):
        wilson_interval([2], [1], confidence_level=1.0)


# ---------------------------------------------------------------------------------------------
# against Inspect AI itself
# ---------------------------------------------------------------------------------------------


def _inspect_scores(values, clusters=None):
    from inspect_ai.scorer import SampleScore, Score

    return [
        SampleScore(
            score=Score(value=float(v)),
            sample_id=i,
            sample_metadata=None if clusters is None else {"group": clusters[i]},
        )
        for i, v in enumerate(values)
    ]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clustered_se_equals_inspect(seed):
    from inspect_ai.scorer import ci, stderr

    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 9, size=17)  # unbalanced clusters
    clusters = [f"passage-{c}" for c, size in enumerate(sizes) for _ in range(size)]
    order = rng.permutation(len(clusters))  # clusters interleaved, not contiguous
    clusters = [clusters[i] for i in order]
    values = rng.random(len(clusters)).round(3)
    scores = _inspect_scores(values, clusters)
    inspect_se = stderr(cluster="group")(scores)
    ours = mean_ci(values, clusters=clusters, method="clustered-t")
    assert ours.standard_error == pytest.approx(inspect_se, abs=1e-12)
    inspect_ci = ci(method="t", cluster="group")(scores)
    assert ours.low == pytest.approx(inspect_ci["lower"], abs=1e-9)
    assert ours.high == pytest.approx(inspect_ci["upper"], abs=1e-9)


def test_t_se_equals_inspect_and_sd_over_sqrt_n():
    from inspect_ai.scorer import ci, stderr

    values = np.random.default_rng(5).beta(0.4, 0.3, size=57)
    ours = mean_ci(values, method="t")
    assert ours.standard_error == pytest.approx(np.std(values, ddof=1) / math.sqrt(57), abs=1e-15)
    scores = _inspect_scores(values)
    assert ours.standard_error == pytest.approx(stderr()(scores), abs=1e-12)
    inspect_ci = ci(method="t")(scores)
    assert (ours.low, ours.high) == pytest.approx((inspect_ci["lower"], inspect_ci["upper"]), abs=1e-9)


def _literal_clustered_se(values, clusters):
    """Inspect's definition written out: sum over pairs of problems in the same cluster."""
    values = list(map(float, values))
    n = len(values)
    mean = sum(values) / n
    labels = sorted(set(clusters), key=str)
    total = 0.0
    for label in labels:
        members = [i for i in range(n) if clusters[i] == label]
        for i in members:
            for j in members:
                total += (values[i] - mean) * (values[j] - mean)
    c = len(labels)
    return math.sqrt(c / (c - 1) * total) / n


@given(
    st.lists(st.tuples(st.floats(0, 1, allow_nan=False), st.integers(0, 6)), min_size=3, max_size=40),
)
def test_fast_clustered_formula_equals_literal_definition(rows):
    values = [v for v, _ in rows]
    clusters = [c for _, c in rows]
    assume(len(set(clusters)) >= 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateIntervalWarning)
        ours = mean_ci(values, clusters=clusters, method="clustered-t").standard_error
    assert ours == pytest.approx(_literal_clustered_se(values, clusters), rel=1e-9, abs=1e-14)


# ---------------------------------------------------------------------------------------------
# bootstrap methods against independent references
# ---------------------------------------------------------------------------------------------


def test_bca_and_percentile_match_scipy_bootstrap():
    values = np.random.default_rng(7).beta(0.5, 0.4, size=60)
    for ours_method, scipy_method in (("bca", "BCa"), ("bootstrap", "percentile")):
        ours = mean_ci(values, method=ours_method, n_resamples=40_000, rng=1)
        ref = stats.bootstrap((values,), np.mean, method=scipy_method, n_resamples=40_000, random_state=2)
        assert ours.low == pytest.approx(ref.confidence_interval.low, abs=0.004)
        assert ours.high == pytest.approx(ref.confidence_interval.high, abs=0.004)
        assert ours.standard_error == pytest.approx(ref.standard_error, rel=0.03)


def test_bca_acceleration_closed_form_equals_jackknife_loop():
    values = np.random.default_rng(8).gamma(0.5, size=25)
    result = mean_ci(values, method="bca", n_resamples=2000, rng=0, bounds=None)
    jack = np.array([np.delete(values, i).mean() for i in range(values.size)])
    d = jack.mean() - jack
    assert result.details["acceleration"] == pytest.approx((d**3).sum() / (6 * (d**2).sum() ** 1.5), rel=1e-9)
    clusters = np.arange(25) % 7
    clustered = mean_ci(values, clusters=clusters, method="bca", n_resamples=2000, rng=0, bounds=None)
    jack = np.array([values[clusters != c].mean() for c in range(7)])
    d = jack.mean() - jack
    assert clustered.details["acceleration"] == pytest.approx((d**3).sum() / (6 * (d**2).sum() ** 1.5), rel=1e-9)


def _literal_studentized(values, n_resamples, seed, level=0.95, clusters=None):
    """Bootstrap-t written as a loop over resamples (reference, slow)."""
    rng = np.random.default_rng(seed)
    values = np.asarray(values, dtype=float)
    n = values.size

    def mean_and_se(v, cl):
        if cl is None:
            return v.mean(), v.std(ddof=1) / math.sqrt(v.size)
        m = v.mean()
        labels = np.unique(cl)
        total = sum((v[cl == c] - m).sum() ** 2 for c in labels)
        return m, math.sqrt(len(labels) / (len(labels) - 1) * total) / v.size

    estimate, se = mean_and_se(values, clusters)
    t_star = []
    for _ in range(n_resamples):
        if clusters is None:
            idx = rng.integers(0, n, n)
            m, s = mean_and_se(values[idx], None)
        else:
            labels = np.unique(clusters)
            drawn = rng.integers(0, labels.size, labels.size)
            parts = [np.flatnonzero(clusters == labels[d]) for d in drawn]
            v = np.concatenate([values[p] for p in parts])
            cl = np.concatenate([np.full(p.size, k) for k, p in enumerate(parts)])
            m, s = mean_and_se(v, cl)
        t_star.append((m - estimate) / s)
    q_low, q_high = np.quantile(t_star, [(1 - level) / 2, 1 - (1 - level) / 2])
    return estimate - q_high * se, estimate - q_low * se


def test_studentized_matches_literal_loop():
    values = np.random.default_rng(9).beta(2, 0.5, size=40)
    ours = mean_ci(values, n_resamples=20_000, rng=3)
    low, high = _literal_studentized(values, 6000, seed=4)
    assert ours.method == "auto"
    assert ours.low == pytest.approx(low, abs=0.006)
    assert ours.high == pytest.approx(high, abs=0.006)
    assert ours.standard_error == pytest.approx(np.std(values, ddof=1) / math.sqrt(40))


def test_cluster_studentized_matches_literal_loop():
    rng = np.random.default_rng(10)
    clusters = np.repeat(np.arange(15), rng.integers(1, 6, size=15))
    values = rng.beta(2, 0.5, size=clusters.size)
    # mean 0.80: 20% from the end, outside the reliability warning's 15% (near-end details only)
    ours = mean_ci(values, clusters=clusters, n_resamples=20_000, rng=3)
    assert "few_off_end" not in ours.details
    low, high = _literal_studentized(values, 3000, seed=4, clusters=clusters)
    assert ours.details["resampling"] == "clusters"
    # the bootstrap-t bounds are kept in the details; with 10 or more clusters the shown interval is
    # the clustered score interval (Wilson with n_eff = p(1-p)/SE_cl^2 and C - 1 = 14 degrees of
    # freedom), and at a mean of 0.80 over 15 clusters (Kish size 12.4: within 3 problems' worth of 1)
    # its lower bound the wider near-end score bound
    assert ours.details["studentized_bounds"] == pytest.approx((low, high), abs=0.012)
    assert ours.details["scale"] == "score (clustered)" and ours.details["near_end"]
    p, se = ours.estimate, ours.standard_error
    z, t = stats.norm.ppf(0.975), stats.t.ppf(0.975, 14)
    n_star = p * (1 - p) / se**2 * (z / t) ** 2
    wilson_high = (p + z**2 / (2 * n_star) + z * math.sqrt(p * (1 - p) / n_star + z**2 / (4 * n_star**2))) / (1 + z**2 / n_star)
    assert ours.high == pytest.approx(wilson_high, abs=1e-12)
    assert ours.details["bound_methods"] == ("score (near end)", "score (clustered)")


def test_grouped_and_gather_paths_agree(monkeypatch):
    # pass@k-like values: few distinct rows -> multinomial counts over groups
    rng = np.random.default_rng(11)
    counts = rng.binomial(16, rng.beta(0.4, 0.3, size=3000))
    values = np.column_stack([counts / 16, (counts >= 8).astype(float)])
    grouped = mean_ci_columns(values, method="bootstrap", n_resamples=20_000, rng=0)
    assert grouped[0].details["path"] == "grouped" and grouped[0].details["n_groups"] == 17
    monkeypatch.setattr(_resampling, "_GROUPED_FRACTION", 0.0)
    gathered = mean_ci_columns(values, method="bootstrap", n_resamples=20_000, rng=0)
    assert gathered[0].details["path"] == "gather"
    for g, h in zip(grouped, gathered):
        assert g.low == pytest.approx(h.low, abs=1.5e-3)
        assert g.high == pytest.approx(h.high, abs=1.5e-3)
        assert g.standard_error == pytest.approx(h.standard_error, rel=0.03)
        assert g.standard_error == pytest.approx(np.std(values[:, grouped.index(g)], ddof=1) / math.sqrt(3000), rel=0.03)


def test_studentized_gather_paths_agree(monkeypatch):
    values = np.random.default_rng(12).beta(2, 0.5, size=200)
    one = mean_ci(values, n_resamples=20_000, rng=0)
    monkeypatch.setattr(_resampling, "_MAX_GATHER_COLUMNS", 0)  # force the weight-matrix product
    other = mean_ci(values, n_resamples=20_000, rng=0)
    assert one.low == pytest.approx(other.low, abs=2e-3)
    assert one.high == pytest.approx(other.high, abs=2e-3)


# ---------------------------------------------------------------------------------------------
# properties (hypothesis)
# ---------------------------------------------------------------------------------------------

unit_values = st.lists(st.floats(0, 1, allow_nan=False), min_size=2, max_size=40)


@given(unit_values, st.sampled_from(["t", "studentized", "bootstrap", "bca"]))
def test_interval_contains_estimate(values, method):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateIntervalWarning)
        result = mean_ci(values, method=method, n_resamples=200, rng=0)
    assert result.low <= result.estimate <= result.high
    assert 0.0 <= result.low and result.high <= 1.0
    assert result.estimate == pytest.approx(float(np.mean(values)))


@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=5, max_size=30), st.sampled_from(["t", "studentized", "bootstrap", "bca"]))
def test_interval_shrinks_when_data_are_duplicated(values, method):
    assume(np.ptp(values) > 1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateIntervalWarning)
        once = mean_ci(values, method=method, n_resamples=2000, rng=0, bounds=None)
        four = mean_ci(np.tile(values, 4), method=method, n_resamples=2000, rng=0, bounds=None)
    assert four.estimate == pytest.approx(once.estimate)
    assert four.width < once.width


@given(
    st.lists(st.sampled_from([0.0, 0.25, 1.0]), min_size=40, max_size=80),
    st.randoms(use_true_random=False),
    st.sampled_from(["t", "studentized", "bootstrap", "bca"]),
)
def test_invariant_to_problem_order(values, random, method):
    # few distinct values -> the grouped path, which is exactly order invariant for a given seed
    assume(np.ptp(values) > 0)
    permuted = list(values)
    random.shuffle(permuted)
    a = mean_ci(values, method=method, n_resamples=500, rng=1)
    b = mean_ci(permuted, method=method, n_resamples=500, rng=1)
    assert (b.estimate, b.low, b.high, b.standard_error) == pytest.approx((a.estimate, a.low, a.high, a.standard_error), abs=1e-12)


@given(
    st.lists(st.tuples(st.floats(0, 1, allow_nan=False), st.integers(0, 4)), min_size=4, max_size=30),
    st.randoms(use_true_random=False),
)
def test_clustered_t_invariant_to_problem_order_and_labels(rows, random):
    clusters = [c for _, c in rows]
    assume(len(set(clusters)) >= 2)
    values = [v for v, _ in rows]
    order = list(range(len(rows)))
    random.shuffle(order)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateIntervalWarning)
        a = mean_ci(values, clusters=clusters, method="clustered-t")
        b = mean_ci([values[i] for i in order], clusters=[f"c{clusters[i]}" for i in order], method="clustered-t")
    assert (b.low, b.high, b.standard_error) == pytest.approx((a.low, a.high, a.standard_error), abs=1e-12)


# ---------------------------------------------------------------------------------------------
# reproducibility, shapes, bounds, degenerate data
# ---------------------------------------------------------------------------------------------


def test_seeded_reproducibility():
    values = np.random.default_rng(13).random(300)
    for method in ("studentized", "bootstrap", "bca"):
        a = mean_ci(values, method=method, rng=42)
        b = mean_ci(values, method=method, rng=42)
        c = mean_ci(values, method=method, rng=np.random.default_rng(42))
        assert a == b
        assert (a.low, a.high) == (c.low, c.high)
        assert a.details["seed"] == 42 and c.details["seed"] == "generator"
    fresh = mean_ci(values, rng=None)
    again = mean_ci(values, rng=fresh.details["seed"])  # the recorded entropy reproduces it
    assert (fresh.low, fresh.high) == (again.low, again.high)


def test_two_dimensional_values_give_one_result_per_column():
    rng = np.random.default_rng(14)
    values = rng.random((50, 3))
    results = mean_ci_columns(values, method="t")
    assert isinstance(results, list) and len(results) == 3
    for j, result in enumerate(results):
        single = mean_ci(values[:, j], method="t")
        assert (result.low, result.high, result.standard_error) == pytest.approx((single.low, single.high, single.standard_error), abs=1e-15)
    boot = mean_ci_columns(values, n_resamples=1000, rng=0)
    assert all(r.details["n_resamples"] == 1000 for r in boot)


def test_result_is_frozen_and_complete():
    result = mean_ci([0.1, 0.5, 0.9, 0.4], method="t")
    assert isinstance(result, IntervalResult)
    with pytest.raises(AttributeError):
        result.low = 0  # type: ignore[misc]
    with pytest.raises(TypeError):
        result.details["df"] = 1  # type: ignore[index]
    assert result.interval == (result.low, result.high)
    assert result.n_problems == 4 and result.n_clusters is None and result.confidence_level == 0.95
    assert result.as_dict()["details"]["df"] == 3


def test_clipping_to_unit_interval_and_bounds_option():
    values = np.r_[np.ones(28), 0.0, 0.5]
    clipped = mean_ci(values, method="t")
    raw = mean_ci(values, method="t", bounds=None)
    assert raw.high > 1.0 and clipped.high == 1.0 and clipped.details["clipped"]
    assert clipped.low == raw.low
    custom = mean_ci(values * 100, method="t", bounds=(0, 100))
    assert custom.high == 100.0 and custom.details["bounds"] == (0.0, 100.0)
    unbounded = mean_ci(values * 100, method="t")  # values outside [0, 1]: auto does not clip
    assert unbounded.high > 100.0 and unbounded.details["bounds"] is None


def test_constant_values_warn_and_give_zero_width():
    for method in ("t", "studentized", "bootstrap", "bca"):
        with pytest.warns(DegenerateIntervalWarning, match="identical"):
            result = mean_ci([0.7] * 12, method=method, n_resamples=100, rng=0)
        assert (result.estimate, result.low, result.high, result.standard_error) == (0.7, 0.7, 0.7, 0.0)


def test_confidence_level_changes_width():
    values = np.random.default_rng(15).random(40)
    widths = [mean_ci(values, method="t", confidence_level=level).width for level in (0.5, 0.9, 0.99)]
    assert widths[0] < widths[1] < widths[2]


# ---------------------------------------------------------------------------------------------
# bootstrap_weights
# ---------------------------------------------------------------------------------------------


def test_bootstrap_weights_problems_and_clusters():
    chunks = list(bootstrap_weights(50, n_resamples=1000, rng=0, max_chunk_elements=50 * 300))
    assert [c.shape for c in chunks] == [(300, 50), (300, 50), (300, 50), (100, 50)]
    weights = np.vstack(chunks)
    assert np.all(weights.sum(axis=1) == 50) and weights.dtype == np.float64
    assert np.array_equal(weights, np.vstack(list(bootstrap_weights(50, n_resamples=1000, rng=0, max_chunk_elements=50 * 300))))
    clusters = np.repeat(["x", "y", "z", "w"], [1, 2, 3, 4])
    weights = np.vstack(list(bootstrap_weights(10, clusters=clusters, n_resamples=500, rng=1)))
    for label in "xyzw":
        members = weights[:, clusters == label]
        assert np.all(members == members[:, :1])
    sizes = np.array([1, 2, 3, 4])
    assert set(np.unique(weights.sum(axis=1))) <= set(range(4, 17))
    # each cluster is drawn on average once per resample
    assert weights[:, clusters == "w"][:, 0].mean() == pytest.approx(1.0, abs=0.12)
    assert sizes.sum() == 10


def test_bootstrap_weights_reproduce_mean_ci_distribution():
    values = np.random.default_rng(16).beta(0.4, 0.3, size=400)
    means = np.concatenate([w @ values / 400 for w in bootstrap_weights(400, n_resamples=20_000, rng=5)])
    result = mean_ci(values, method="bootstrap", n_resamples=20_000, rng=6)
    assert means.std(ddof=1) == pytest.approx(result.standard_error, rel=0.03)
    assert np.quantile(means, 0.025) == pytest.approx(result.low, abs=2e-3)


# ---------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"values": []}, ValueError, "`values` is empty"),
        ({"values": [0.5]}, ValueError, "at least 2 problems"),
        ({"values": [0.5, float("nan"), 0.2]}, ValueError, r"`values` must be finite; NaN or infinity at 1 problem; first: \[1\]"),
        ({"values": [[[0.1]]]}, ValueError, "1-D .* or 2-D"),
        ({"values": "abc"}, TypeError, "string"),
        ({"values": [0.1, 0.2], "clusters": ["a", "a"]}, ValueError, "single cluster"),
        ({"values": [0.1, 0.2, 0.3], "clusters": ["a", "b"]}, ValueError, "`clusters` has 2 entries but there are 3 problems"),
        ({"values": [0.1, 0.2, 0.3], "clusters": ["a", None, "b"]}, ValueError, "missing labels"),
        ({"values": [0.1, 0.2], "confidence_level": 1.0}, ValueError, r"`confidence_level` must be in the open interval \(0, 1\); got 1.0"),
        ({"values": [0.1, 0.2], "confidence_level": 0}, ValueError, "confidence_level"),
        ({"values": [0.1, 0.2], "method": "wald"}, ValueError, r"`method` must be one of .*'wald'"),
        ({"values": [0.1, 0.2], "method": "clustered-t"}, ValueError, "needs `clusters`"),
        ({"values": [0.1, 0.2, 0.3], "clusters": [1, 2, 2], "method": "t"}, ValueError, "use method='clustered-t'"),
        ({"values": [0.1, 0.2], "n_resamples": 1}, ValueError, "`n_resamples` must be an integer >= 2"),
        ({"values": [0.1, 0.2], "rng": "seed"}, TypeError, "`rng`"),
        ({"values": [0.1, 0.2], "bounds": (1, 0)}, ValueError, "low < high"),
    ],
)
def test_mean_ci_iv(kwargs, error, match):
    with pytest.raises(error, match=match):
        mean_ci(**kwargs)


def test_bootstrap_weights_iv():
    with pytest.raises(ValueError, match="n_problems"):
        bootstrap_weights(1, n_resamples=10, rng=0)
    with pytest.raises(ValueError, match="single cluster"):
        bootstrap_weights(3, clusters=["a", "a", "a"], n_resamples=10, rng=0)
    with pytest.raises(ValueError, match="`clusters` has 2 entries"):
        bootstrap_weights(3, clusters=["a", "b"], n_resamples=10, rng=0)
    with pytest.raises(TypeError, match="n_resamples"):
        bootstrap_weights(3, n_resamples=2.5, rng=0)


# ---------------------------------------------------------------------------------------------
# public surface and doctests
# ---------------------------------------------------------------------------------------------


def test_public_names_exported():
    for name in ("IntervalResult", "PairedResult", "PowerInputs", "DegenerateIntervalWarning", "mean_ci",
                 "paired_difference", "wilson_interval", "bootstrap_weights", "design_effect", "icc",
                 "required_problems", "minimum_detectable_effect", "power_inputs_from_pilot"):
        assert name in km.__all__, name


@pytest.mark.parametrize("module", [_intervals, _power, _result, _warnings, _resampling, _score_intervals, _ranks])
def test_doctests(module):
    failures, tried = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert tried > 0 or module is _result
    assert failures == 0


# ---------------------------------------------------------------------------------------------
# the order of the problems does not matter (review C4c)
# ---------------------------------------------------------------------------------------------


def _fields(result):
    return (result.estimate, result.low, result.high, result.standard_error)


@given(
    st.lists(st.tuples(st.floats(0, 1, allow_nan=False), st.integers(0, 7)), min_size=4, max_size=40),
    st.randoms(use_true_random=False),
    st.sampled_from(["studentized", "t", "bootstrap", "bca", "clustered-t"]),
    st.booleans(),
)
def test_every_method_is_identical_for_permuted_problems_and_clusters(rows, random, method, grouped):
    # exact equality at a fixed seed, for the gather path (many distinct values) and the grouped
    # path (few distinct values), with and without clusters; a permutation also reorders clusters
    values = np.array([round(v, 1) if grouped else v for v, _ in rows])
    labels = np.array([f"c{c}" for _, c in rows])
    clustered = method == "clustered-t" or (method != "t" and random.random() < 0.5)
    assume(not clustered or len(set(labels)) >= 2)
    order = list(range(len(rows)))
    random.shuffle(order)
    options = {"method": method, "n_resamples": 300, "rng": 3}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateIntervalWarning)
        a = mean_ci(values, clusters=labels if clustered else None, **options)
        b = mean_ci(values[order], clusters=labels[order] if clustered else None, **options)
        two = np.column_stack([values, values[::-1]])
        c = mean_ci_columns(two, clusters=labels if clustered else None, **options)
        d = mean_ci_columns(two[order], clusters=labels[order] if clustered else None, **options)
    assert _fields(a) == _fields(b)
    assert [_fields(r) for r in c] == [_fields(r) for r in d]


def test_gather_path_was_order_dependent_and_is_not_any_more():
    # the reviewer's case: same data, same seed, rows permuted gave [0.3792, 0.6146] vs [0.3772, 0.6149]
    values = np.random.default_rng(21).beta(0.5, 0.5, size=60)
    order = np.random.default_rng(22).permutation(60)
    for method in ("studentized", "bootstrap", "bca"):
        a = mean_ci(values, method=method, rng=0)
        assert a.details["path"] == "gather"
        assert _fields(a) == _fields(mean_ci(values[order], method=method, rng=0))
        clusters = np.arange(60) % 15
        a = mean_ci(values, clusters=clusters, method=method, rng=0)
        assert _fields(a) == _fields(mean_ci(values[order], clusters=clusters[order], method=method, rng=0))


def test_bootstrap_weights_with_order_by_follow_the_problems_not_their_order():
    rng = np.random.default_rng(23)
    values = np.column_stack([rng.random(30), rng.integers(0, 3, 30)])
    clusters = rng.integers(0, 6, 30)
    order = rng.permutation(30)
    for cl in (None, clusters):
        w = np.vstack(list(bootstrap_weights(30, clusters=cl, n_resamples=50, rng=4, order_by=values)))
        v = np.vstack(list(bootstrap_weights(30, clusters=None if cl is None else cl[order], n_resamples=50, rng=4,
                                             order_by=values[order])))
        # the same multiplicity for the same problem, whatever its position
        assert np.array_equal(w[:, order], v)
        if cl is not None:
            for c in range(6):
                members = w[:, cl == c]
                assert np.all(members == members[:, :1])
    # without order_by the draws follow the given order (documented)
    plain = np.vstack(list(bootstrap_weights(30, n_resamples=50, rng=4)))
    assert plain.sum(axis=1).tolist() == [30.0] * 50
    with pytest.raises(ValueError, match="`order_by` has 29 rows but there are 30 problems"):
        next(bootstrap_weights(30, n_resamples=5, rng=0, order_by=values[:29]))


# ---------------------------------------------------------------------------------------------
# one implementation of each interval building block (review D2/D3): the shared helpers give the
# numbers of the code they replaced, written out here literally
# ---------------------------------------------------------------------------------------------


def _old_decomposition_bca(replicates, estimate, jackknife, alpha):
    """The decomposition's BCa before the merge (exact ties, np.quantile per column)."""
    valid = np.isfinite(replicates)
    n_valid = valid.sum(axis=0)
    below = np.where(valid, replicates < estimate, False).sum(axis=0)
    equal = np.where(valid, replicates == estimate, False).sum(axis=0)
    proportion = np.clip((below + 0.5 * equal) / n_valid, 0.5 / n_valid, 1 - 0.5 / n_valid)
    z0 = stats.norm.ppf(proportion)
    d = np.nanmean(jackknife, axis=0) - jackknife
    acceleration = np.nansum(d**3, axis=0) / (6.0 * np.nansum(d**2, axis=0) ** 1.5)
    bounds = []
    for z_alpha in (stats.norm.ppf(alpha / 2), stats.norm.ppf(1 - alpha / 2)):
        level = stats.norm.cdf(z0 + (z0 + z_alpha) / (1 - acceleration * (z0 + z_alpha)))
        bounds.append(np.array([np.quantile(replicates[valid[:, j], j], level[j]) for j in range(replicates.shape[1])]))
    return bounds[0], bounds[1], z0, acceleration


def test_shared_quantile_equals_numpy_quantile_and_nanquantile_bit_for_bit():
    rng = np.random.default_rng(24)
    for _ in range(300):
        b = int(rng.integers(1, 80))
        replicates = np.round(rng.normal(size=(b, 4)), int(rng.integers(0, 3))) + 0.3
        replicates[rng.random((b, 4)) < 0.2] = np.nan
        q = rng.random(4)
        n_valid = np.isfinite(replicates).sum(axis=0)
        ours = _bootstrap.quantile_of_sorted(np.sort(replicates, axis=0), q, n_valid)
        for j in range(4):
            if n_valid[j] == 0:
                assert math.isnan(ours[j])
            else:
                assert ours[j] == np.quantile(replicates[np.isfinite(replicates[:, j]), j], q[j])
    low, high = _bootstrap.percentile_bounds(np.sort(replicates, axis=0), 0.9, n_valid)
    finite = n_valid > 0
    alpha = 1 - 0.9  # what the decomposition's percentile interval passed to np.nanquantile
    assert np.array_equal(low[finite], np.nanquantile(replicates, alpha / 2, axis=0)[finite])
    assert np.array_equal(high[finite], np.nanquantile(replicates, 1 - alpha / 2, axis=0)[finite])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_shared_bca_equals_the_decomposition_bca_it_replaced(seed):
    rng = np.random.default_rng(seed)
    replicates = rng.gamma(2.0, size=(700, 5)) / 3
    replicates[rng.random((700, 5)) < 0.05] = np.nan  # undefined resamples of a ratio
    estimate = np.nanmedian(replicates, axis=0) + 0.01
    jackknife = rng.normal(0.5, 0.1, size=(40, 5)) ** 3
    low, high, z0, acceleration = _old_decomposition_bca(replicates, estimate, jackknife, 1 - 0.95)
    new_z0, _, _ = _bootstrap.bca_bias_correction(replicates, estimate)
    new_a = _bootstrap.bca_acceleration(jackknife)
    assert np.array_equal(new_z0, z0) and np.array_equal(new_a, acceleration)
    new_low, new_high, _ = _bootstrap.bca_bounds(np.sort(replicates, axis=0), new_z0, new_a, 0.95,
                                                   np.isfinite(replicates).sum(axis=0))
    np.testing.assert_allclose(new_low, low, rtol=0, atol=1e-15)
    np.testing.assert_allclose(new_high, high, rtol=0, atol=1e-15)


def test_bca_ties_within_rounding_count_one_half():
    # a resample that is the original set summed in another order is a tie, not "below"
    estimate = np.array([0.1 + 0.2])
    replicates = np.array([[0.3], [0.1 + 0.2], [0.2], [0.4]])  # 0.3 != 0.1 + 0.2 in floating point
    z0, share, _ = _bootstrap.bca_bias_correction(replicates, estimate)
    assert share[0] == pytest.approx((1 + 0.5 * 2) / 4)


def test_shared_wilson_equals_each_formula_it_replaced():
    rng = np.random.default_rng(25)
    p = np.r_[0.0, 1.0, rng.random(200)]
    n = np.r_[5.0, 5.0, rng.uniform(1.5, 500.0, 200)]
    z = np.r_[1.96, 1.96, rng.uniform(1.0, 3.5, 200)]
    low, high = _score_intervals.wilson_score_bounds(p, n, z)
    # wilson_interval's and the studentized fallback's form
    z2n = z * z / n
    center = (p + z2n / 2) / (1 + z2n)
    half = z * np.sqrt(p * (1 - p) / n + z2n / (4 * n)) / (1 + z2n)
    assert np.array_equal(low[2:], np.clip(center - half, 0, 1)[2:]) and np.array_equal(high[2:], np.clip(center + half, 0, 1)[2:])
    assert (low[0], high[1]) == (0.0, 1.0)
    # the decomposition's form (z^2 / (4 n^2)): the same to rounding
    half_decomposition = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    center_decomposition = (p + z * z / (2 * n)) / (1 + z * z / n)
    np.testing.assert_allclose(low[1:], np.maximum(center_decomposition - half_decomposition, 0)[1:], rtol=0, atol=2e-16)
    np.testing.assert_allclose(high[:1], np.minimum(center_decomposition + half_decomposition, 1)[:1], rtol=0, atol=2e-16)


def test_shared_mover_is_zou_and_donners_formula():
    rng = np.random.default_rng(26)
    down_a, up_a, down_b, up_b = rng.random((4, 50))
    r = rng.uniform(-1, 1, 50)
    d = rng.normal(size=50)
    low, high = _score_intervals.mover_bounds(d, down_a, up_a, down_b, up_b, r)
    assert np.allclose(low, d - np.sqrt(np.maximum(down_a**2 + up_b**2 - 2 * r * down_a * up_b, 0)), rtol=0, atol=0)
    assert np.allclose(high, d + np.sqrt(np.maximum(up_a**2 + down_b**2 - 2 * r * up_a * down_b, 0)), rtol=0, atol=0)


def test_decomposition_and_token_budget_use_the_shared_helpers():
    from kpass.metrics import _decomposition, _token_budget

    for old_copy in ("_bca_interval", "_percentile_interval", "_bootstrap_sums", "_summarize"):
        assert not hasattr(_decomposition, old_copy)
    assert _decomposition.bootstrap_of_sums is _bootstrap.bootstrap_of_sums is _token_budget.bootstrap_of_sums
    assert _decomposition.wilson_score_bounds is _score_intervals.wilson_score_bounds
    assert _decomposition.mover_bounds is _score_intervals.mover_bounds
    for dead in ("_zero_variance_tolerance", "_sorted_quantile", "_one_sided_counts", "_jackknife_acceleration"):
        assert not hasattr(_intervals, dead)


# ---------------------------------------------------------------------------------------------
# one check per interval option (review D5/D6)
# ---------------------------------------------------------------------------------------------


def test_interval_options_are_checked_alike_everywhere():
    from kpass.metrics import budget_counts, budget_curve, decompose_pass_change

    counts = budget_counts(["a", "a", "b", "b"], [True, False, True, True], [None], finished=[True] * 4)
    calls = [
        lambda **kw: mean_ci([0.1, 0.5, 0.7], **kw),
        lambda **kw: km.paired_difference([0.1, 0.5, 0.7], [0.2, 0.1, 0.9], **kw),
        lambda **kw: decompose_pass_change([4, 4], [2, 4], [1, 0], [4, 4], [4, 4], [3, 2], **kw),
        lambda **kw: budget_curve(counts, **kw),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=r"`confidence_level` must be in the open interval \(0, 1\); got 1.5"):
            call(confidence_level=1.5)
        with pytest.raises(ValueError, match="`n_resamples` must be an integer >= 2; got 1"):
            call(n_resamples=1)
        with pytest.raises(TypeError, match="`n_resamples` must be an integer >= 2; got 2.5"):
            call(n_resamples=2.5)
        with pytest.raises(TypeError, match="`rng` must be None, an int seed or a numpy.random.Generator"):
            call(rng="seed")


# ---------------------------------------------------------------------------------------------
# warnings (review D11) and exports (review C10)
# ---------------------------------------------------------------------------------------------


def test_every_kpass_warning_is_a_kpass_warning_and_none_is_a_runtime_warning():
    for name in ("DegenerateIntervalWarning", "IntervalMethodWarning", "TinyDifferencesWarning", "FewDifferencesWarning",
                 "UndefinedBudgetMetricWarning", "UndefinedDecompositionWarning"):
        category = getattr(km, name)
        assert issubclass(category, km.KpassWarning) and issubclass(category, UserWarning), name
        assert not issubclass(category, RuntimeWarning), name  # a RuntimeWarning filter must not swallow them
    assert _warnings.IntervalMethodWarning is km.IntervalMethodWarning  # defined once, in _warnings


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_undefined_budget_metrics_warn_without_numpy_runtime_warnings():
    from kpass.metrics import budget_counts, budget_curve, decompose_budget_counts

    counts = budget_counts(["a", "a", "b", "b"], [False] * 4, [5, 50], finished=[True] * 4, output_tokens=[10, 20, 10, 20])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("error", RuntimeWarning)
        budget_curve(counts, rng=0, n_resamples=50, ratio_method="bca")
        decompose_budget_counts(counts, counts, rng=0, n_resamples=50, method="bca")
    categories = {w.category for w in caught}
    assert km.UndefinedBudgetMetricWarning in categories and km.UndefinedDecompositionWarning in categories
    assert all(issubclass(c, km.KpassWarning) for c in categories)


def test_interval_names_are_exported_from_kpass_metrics():
    for name in ("IntervalMethodWarning", "DEFAULT_PAIRED_METHOD", "PAIRED_INTERVAL_METHODS", "KpassWarning",
                 "DEFAULT_N_RESAMPLES", "DEFAULT_INTERVAL_METHOD", "INTERVAL_METHODS"):
        assert name in km.__all__, name
    assert km.DEFAULT_PAIRED_METHOD == "mover" and km.PAIRED_INTERVAL_METHODS == (*km.INTERVAL_METHODS, "mover")
    assert km.DEFAULT_N_RESAMPLES == 10_000


def test_every_citation_in_the_interval_module_has_its_reference():
    import re

    doc = _intervals.__doc__
    cited = set(re.findall(r"\[(\d+)\]_", doc))
    listed = set(re.findall(r"^\.\. \[(\d+)\]", doc, flags=re.MULTILINE))
    assert cited <= listed and {"5", "6", "7", "8"} <= listed
    assert "Korn and Graubard" in doc or "E. L. Korn and B. I. Graubard" in doc
    assert "Statistics in Medicine 27(10), 1693-1702" in doc and "Statistics in Medicine 17(22), 2635-2650" in doc


@pytest.mark.parametrize("method", ["studentized", "bootstrap", "bca"])
@pytest.mark.parametrize("clustered", [False, True])
def test_a_column_of_a_two_dimensional_call_is_the_call_with_that_column_alone(method, clustered):
    # every column is resampled in its own canonical order (grouped or gathered on its own), so the
    # other columns do not change its interval (kpass leaderboard's 2-D comparisons equal kpass compare)
    rng = np.random.default_rng(28)
    counts = rng.binomial(16, rng.beta(0.4, 0.3, size=300))
    values = np.column_stack([counts / 16, rng.beta(2, 2, 300), pass_at_k(np.full(300, 16), counts, 8)])
    clusters = np.arange(300) % 40 if clustered else None
    together = mean_ci_columns(values, clusters=clusters, method=method, n_resamples=2000, rng=4)
    for j in range(3):
        alone = mean_ci(values[:, j], clusters=clusters, method=method, n_resamples=2000, rng=4)
        assert _fields(together[j]) == pytest.approx(_fields(alone), abs=1e-12)
        assert together[j].details["path"] == alone.details["path"]
    assert {r.details["path"] for r in together} == ({"gather"} if clustered else {"grouped", "gather"})
    # a third pair near the ceiling with saturated differences: without clusters the default resamples
    # that pair's differences with its two models (their own bootstrap-t), the other pairs' draws unchanged
    near = pass_at_k(np.full(300, 64), np.minimum(64, rng.binomial(64, 0.9, 300)), 8)
    near_b = pass_at_k(np.full(300, 64), np.minimum(64, rng.binomial(64, 0.88, 300)), 8)
    for paired_method in ("mover", method):
        both = km.paired_difference_columns(np.column_stack([values[:, :2], near]), np.column_stack([values[:, 1:], near_b]),
                                            clusters=clusters, method=paired_method, n_resamples=2000, rng=4)
        if paired_method == "mover":
            assert (both[2].details["studentized_of_differences"] is None) == clustered
        for j in range(2):
            alone = km.paired_difference(values[:, j], values[:, j + 1], clusters=clusters, method=paired_method,
                                         n_resamples=2000, rng=4)
            assert _fields(both[j]) + (both[j].p_value,) == pytest.approx(_fields(alone) + (alone.p_value,), abs=1e-12)
        alone = km.paired_difference(near, near_b, clusters=clusters, method=paired_method, n_resamples=2000, rng=4)
        assert _fields(both[2]) == pytest.approx(_fields(alone), abs=1e-12)
        # its p-value inverts the interval by bisection in the level: with clusters the one-product gather of
        # many columns and the per-column gathers differ by rounding (metrics/_resampling.py), which can move
        # one bisection step where a bound crosses 0 (2**-31 here)
        assert both[2].p_value == pytest.approx(alone.p_value, abs=1e-8)
