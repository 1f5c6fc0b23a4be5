"""The winner's curse: kpass.metrics.selection_inflation."""

from __future__ import annotations

import numpy as np
import pytest

from kpass.metrics import selection_inflation


def test_eight_independent_equal_models_give_1_42_sigma():
    # E[max of 8 standard normals] = 1.4236 (Harter 1961, Table 1)
    values = np.random.default_rng(0).normal(size=(3000, 8))
    result = selection_inflation(values, rng=0)
    assert result.independent_in_sigma == pytest.approx(1.4236, abs=0.01)
    assert result.inflation_in_sigma == pytest.approx(1.4236, abs=0.03)
    assert abs(result.mean_correlation) < 0.05
    assert result.corrected_estimate == pytest.approx(result.best_estimate - result.inflation)


@pytest.mark.parametrize("m, expected", [(2, 0.5642), (4, 1.0294), (16, 1.7660)])
def test_expected_maximum_of_independent_normals(m, expected):
    # Harter 1961: E[max of m N(0, 1)]; 2: 1/sqrt(pi)
    result = selection_inflation(np.random.default_rng(1).normal(size=(50, m)), rng=0)
    assert result.independent_in_sigma == pytest.approx(expected, abs=0.01)


def test_simulation_with_known_truth():
    # 8 checkpoints, equally good (every problem's p is shared), 4 samples each: the realized
    # lead of the best measured pass@1 over the truth, averaged over 300 test sets, matches the
    # estimate made from a single test set
    rng = np.random.default_rng(2)
    n_sets, n_problems, m = 300, 200, 8
    p = rng.beta(1.0, 1.0, (n_sets, n_problems, 1))
    values = rng.binomial(4, np.broadcast_to(p, (n_sets, n_problems, m))) / 4
    truth = p[:, :, 0].mean(axis=1)
    realized = (values.mean(axis=1).max(axis=1) - truth).mean()
    estimates = [selection_inflation(values[s], n_draws=20_000, rng=s).inflation for s in range(20)]
    assert np.mean(estimates) == pytest.approx(realized, rel=0.15)


def test_correlation_lowers_the_inflation_and_identical_models_have_none():
    rng = np.random.default_rng(3)
    shared = rng.normal(size=(500, 1))
    correlated = shared + 0.3 * rng.normal(size=(500, 6))
    independent = rng.normal(size=(500, 6)) * correlated.std(axis=0)
    assert selection_inflation(correlated, rng=0).inflation < 0.5 * selection_inflation(independent, rng=0).inflation
    same = np.repeat(shared, 5, axis=1)
    assert selection_inflation(same, rng=0).inflation == pytest.approx(0.0, abs=1e-8)   # up to rounding


def test_clusters_use_the_clustered_covariance():
    rng = np.random.default_rng(4)
    cluster_effect = np.repeat(rng.normal(size=(20, 4)), 10, axis=0)   # model x cluster interaction
    values = cluster_effect + rng.normal(size=(200, 4))
    plain = selection_inflation(values, rng=0)
    clustered = selection_inflation(values, clusters=np.repeat(np.arange(20), 10), rng=0)
    assert clustered.n_clusters == 20 and clustered.inflation > 1.5 * plain.inflation


def test_selection_inflation_iv():
    with pytest.raises(ValueError, match="at least 2 models"):
        selection_inflation(np.zeros((5, 1)), rng=0)
    with pytest.raises(ValueError, match="at least 2 problems"):
        selection_inflation(np.zeros((1, 3)), rng=0)
    with pytest.raises(ValueError, match="must be 2-D"):
        selection_inflation(np.zeros(5), rng=0)
    with pytest.raises(ValueError, match="finite"):
        selection_inflation(np.array([[0.0, np.nan], [1.0, 1.0]]), rng=0)
    with pytest.raises(ValueError, match="single cluster"):
        selection_inflation(np.zeros((4, 2)), clusters=["a"] * 4, rng=0)
    with pytest.raises(ValueError, match="n_draws"):
        selection_inflation(np.zeros((4, 2)), n_draws=10, rng=0)
