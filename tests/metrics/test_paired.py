"""Tests of kpass.metrics.paired_difference."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy import stats

from kpass.metrics import DegenerateIntervalWarning, PairedResult, mean_ci, paired_difference

METHODS = ["t", "studentized", "bootstrap", "bca"]


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
    for method in ("studentized", "bootstrap", "bca"):
        different = paired_difference(a, b, method=method, n_resamples=4000, rng=0)
        assert different.p_value < 0.01, method
        assert not different.contains(0.0)
        rng = np.random.default_rng(5)
        noise = a + rng.normal(0, 0.05, a.size)
        same = paired_difference(a, np.clip(noise - (noise - a).mean(), 0, 1), method=method, n_resamples=4000, rng=0)
        assert same.p_value > 0.2, method
        assert same.contains(0.0)


@given(st.integers(0, 10_000), st.sampled_from(["studentized", "bootstrap", "bca"]))
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
    results = paired_difference(a, b, rng=7, n_resamples=2000)
    assert len(results) == 3
    again = paired_difference(a, b, rng=7, n_resamples=2000)
    assert results == again
    for j in range(3):
        single = paired_difference(a[:, j], b[:, j], method="t")
        assert paired_difference(a, b, method="t")[j].standard_error == pytest.approx(single.standard_error, abs=1e-15)
