"""pass@k crossover and the coverage shift (kpass.metrics.pass_at_k_crossover)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kpass.metrics import pass_at_k, pass_at_k_crossover


def population_curve(p: np.ndarray, ks: np.ndarray) -> np.ndarray:
    return np.mean(1.0 - (1.0 - p[:, None]) ** ks[None, :], axis=0)


def test_issue_example_crosses_between_3_and_4():
    # issue #18: base success (0.5, 0.02), tuned (0.95, 0) cross between k = 3 and k = 4
    ks = np.arange(1, 9)
    d = population_curve(np.array([0.95, 0.0]), ks) - population_curve(np.array([0.5, 0.02]), ks)
    assert d[2] > 0 > d[3]                      # exact population values: k = 3 above, k = 4 below
    # the same from counts: c/n equal to those probabilities, n = 1000 samples
    r = pass_at_k_crossover([1000, 1000], [500, 20], [1000, 1000], [950, 0], k_max=64, n_resamples=200, rng=0)
    assert r.below.k == 4 and 3 < r.below.k_interpolated < 4
    assert r.above.k == 1 and r.above.k_interpolated is None   # the tuned model leads from k = 1
    assert r.coverage.n_lost == 1 and r.coverage.n_gained == 0
    assert r.coverage.n_robust_lost == 0                         # 20/1000 < 1/2: not a robust loss


def test_curves_are_the_unbiased_pass_at_k_and_the_gap_splits_exactly():
    rng = np.random.default_rng(3)
    nb, nm = np.full(60, 12), rng.integers(12, 20, 60)
    cb, cm = rng.binomial(nb, 0.3), rng.binomial(nm, rng.beta(0.5, 0.5, 60))
    r = pass_at_k_crossover(nb, cb, nm, cm, n_resamples=300, rng=1)
    ks = np.arange(1, 13)
    pb, pm = pass_at_k(nb, cb, ks), pass_at_k(nm, cm, ks)
    np.testing.assert_allclose(r.base, pb.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(r.model, pm.mean(axis=0), atol=1e-12)
    lost = (cb >= 1) & (cm == 0)
    gained = (cm >= 1) & (cb == 0)
    np.testing.assert_allclose(r.coverage.lost, (pb * lost[:, None]).sum(axis=0) / 60, atol=1e-12)
    np.testing.assert_allclose(r.coverage.gained, -(pm * gained[:, None]).sum(axis=0) / 60, atol=1e-12)
    np.testing.assert_allclose(r.coverage.lost + r.coverage.gained + r.coverage.shared, -r.difference, atol=1e-12)
    assert r.coverage.n_lost == lost.sum() and r.coverage.n_gained == gained.sum()
    assert r.coverage.n_robust_gained == (gained & (2 * cm >= nm)).sum()   # robust-reach rule, 1/2
    assert (r.difference_low <= r.difference + 1e-12).all() and (r.difference <= r.difference_high + 1e-12).all()


def test_simulation_with_known_crossover():
    # known truth: a base and a sharpened model (RL-like: solved problems become easier, the
    # hardest become unsolvable); the true crossover of the population curves is at k = 9
    rng = np.random.default_rng(0)
    p_base = rng.beta(0.6, 1.5, 400)
    p_model = np.where(p_base > 0.08, p_base ** 0.3, 0.0)
    ks = np.arange(1, 33)
    truth = int(ks[np.argmax(population_curve(p_model, ks) < population_curve(p_base, ks))])
    n = np.full(400, 32)
    r = pass_at_k_crossover(n, rng.binomial(32, p_base), n, rng.binomial(32, p_model), n_resamples=1000, rng=0)
    assert abs(r.below.k - truth) <= 2
    assert r.below.low <= truth <= r.below.high
    assert r.coverage.n_lost > 10 * max(r.coverage.n_gained, 1) / 2   # the coverage shrinks


def test_order_of_problems_does_not_matter():
    rng = np.random.default_rng(5)
    nb = np.full(40, 8)
    cb, cm = rng.binomial(8, 0.4, 40), rng.binomial(8, 0.6, 40)
    order = rng.permutation(40)
    a = pass_at_k_crossover(nb, cb, nb, cm, n_resamples=200, rng=7)
    b = pass_at_k_crossover(nb[order], cb[order], nb[order], cm[order], n_resamples=200, rng=7)
    assert a.below == b.below and a.above == b.above
    np.testing.assert_allclose(a.difference_low, b.difference_low, atol=1e-12)


def test_clusters_resample_whole_clusters():
    rng = np.random.default_rng(2)
    n = np.full(30, 8)
    r = pass_at_k_crossover(n, rng.binomial(8, 0.5, 30), n, rng.binomial(8, 0.5, 30),
                            clusters=np.repeat(np.arange(10), 3), n_resamples=100, rng=0)
    assert r.n_clusters == 10


@settings(max_examples=40)
@given(st.integers(2, 12), st.data())
def test_properties(n_problems, data):
    n = data.draw(st.lists(st.integers(1, 10), min_size=n_problems, max_size=n_problems))
    cb = [data.draw(st.integers(0, v)) for v in n]
    cm = [data.draw(st.integers(0, v)) for v in n]
    r = pass_at_k_crossover(n, cb, n, cm, n_resamples=20, rng=0)
    assert r.ks[-1] == min(n)
    assert (r.coverage.lost >= -1e-12).all() and (r.coverage.gained <= 1e-12).all()
    np.testing.assert_allclose(r.coverage.lost + r.coverage.gained + r.coverage.shared, -r.difference, atol=1e-12)
    for crossing, sign in ((r.below, 1), (r.above, -1)):
        if crossing.k is not None:
            assert sign * r.difference[crossing.k - 1] < 0
            assert (sign * r.difference[:crossing.k - 1] >= 0).all()
        else:
            assert (sign * r.difference >= 0).all()


def test_pass_at_k_crossover_iv():
    with pytest.raises(ValueError, match="pair them on the same problems"):
        pass_at_k_crossover([4, 4], [1, 2], [4], [1])
    with pytest.raises(ValueError, match="at least 2 paired problems"):
        pass_at_k_crossover([4], [1], [4], [1])
    with pytest.raises(ValueError, match="exceeds the smallest number of samples"):
        pass_at_k_crossover([4, 4], [1, 2], [4, 4], [1, 0], k_max=5)
    with pytest.raises(ValueError, match="`k_max` must be an integer"):
        pass_at_k_crossover([4, 4], [1, 2], [4, 4], [1, 0], k_max=0)
    with pytest.raises(ValueError, match="`c_model` exceeds `n_samples`"):
        pass_at_k_crossover([4, 4], [1, 2], [4, 4], [1, 5])
    with pytest.raises(ValueError, match="robust_fraction"):
        pass_at_k_crossover([4, 4], [1, 2], [4, 4], [1, 0], robust_fraction=2)


def test_shares_of_a_gap_indistinguishable_from_zero_are_undefined():
    # near the crossing the gap is close to 0 while the lost part is not: lost / gap was hundreds of percent
    rng = np.random.default_rng(0)
    p_base = rng.beta(0.6, 1.5, 400)
    p_model = np.where(p_base > 0.08, p_base ** 0.3, 0.0)
    n = np.full(400, 32)
    r = pass_at_k_crossover(n, rng.binomial(32, p_base), n, rng.binomial(32, p_model), n_resamples=300, rng=0)
    cov = r.coverage
    gap = -r.difference
    holds_zero = (r.difference_low <= 0) & (0 <= r.difference_high)
    assert len(cov.share_undefined) == r.ks.size
    for i in range(r.ks.size):
        if holds_zero[i]:
            assert cov.share_undefined[i] == "gap indistinguishable from 0"
            assert np.isnan(cov.share_lost[i]) and np.isnan(cov.share_gained[i])
        else:
            assert cov.share_undefined[i] is None
            assert cov.share_lost[i] == pytest.approx(cov.lost[i] / gap[i])
            assert cov.share_gained[i] == pytest.approx(cov.gained[i] / gap[i])
    crossing = r.below.k - 1
    assert holds_zero[crossing] and abs(cov.lost[crossing] / gap[crossing]) > 3  # what the old share printed
    assert not holds_zero[0] and not holds_zero[-1]  # far from the crossing the shares stay
    # identical models: the gap is exactly 0 at every k
    same = pass_at_k_crossover([8, 8], [3, 5], [8, 8], [3, 5], n_resamples=50, rng=0)
    assert set(same.coverage.share_undefined) == {"gap is 0"} and np.isnan(same.coverage.share_lost).all()
