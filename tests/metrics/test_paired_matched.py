"""The paired default on 0/1 values (Bonett & Price's matched-pairs interval) and with 10-29 clusters."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from kpass.metrics import paired_difference, paired_difference_columns
from kpass.metrics._score_intervals import matched_pairs_bounds, near_same_end, no_difference_bound, split_score_bounds

Z = stats.norm.ppf(0.975)


def _bonett_price(gains: int, losses: int, n: float, z: float = Z) -> tuple[float, float]:
    # Bonett & Price (2012), written out: one added to each discordant count, two to the pairs
    p_gain, p_loss = (gains + 1) / (n + 2), (losses + 1) / (n + 2)
    center = p_gain - p_loss
    half = z * math.sqrt((p_gain + p_loss - center**2) / (n + 2))
    return max(center - half, -1.0), min(center + half, 1.0)


def _pair(gains: int, losses: int, both: int, neither: int) -> tuple[np.ndarray, np.ndarray]:
    a = np.r_[np.ones(gains), np.zeros(losses), np.ones(both), np.zeros(neither)]
    b = np.r_[np.zeros(gains), np.ones(losses), np.ones(both), np.zeros(neither)]
    return a, b


@pytest.mark.parametrize(("gains", "losses", "both", "neither"), [(5, 2, 15, 8), (1, 0, 20, 9), (0, 3, 40, 57), (12, 12, 1, 0)])
def test_zero_one_values_take_the_bonett_price_interval(gains, losses, both, neither):
    a, b = _pair(gains, losses, both, neither)
    n = a.size
    result = paired_difference(a, b, rng=0, n_resamples=500)
    assert result.interval == pytest.approx(_bonett_price(gains, losses, n), abs=1e-12)
    assert result.details["paired_bound_methods"] == ("matched-pairs score", "matched-pairs score")
    assert result.details["matched_pairs_interval"] == pytest.approx(result.interval, abs=1e-12)
    assert result.estimate == pytest.approx((gains - losses) / n, abs=1e-15)
    # the p-value inverts the interval shown: below 0.05 exactly when it excludes 0
    assert (result.p_value < 0.05) == (not result.contains(0.0))


def test_an_example_by_hand():
    # 30 pairs, 5 gains and 2 losses: (6/32 - 3/32) -+ 1.96 sqrt((9/32 - (3/32)^2) / 32)
    a, b = _pair(5, 2, 15, 8)
    result = paired_difference(a, b, rng=0, n_resamples=500)
    assert result.low == pytest.approx(3 / 32 - Z * math.sqrt((9 / 32 - (3 / 32) ** 2) / 32), abs=1e-12)
    assert (round(result.low, 4), round(result.high, 4)) == (-0.0871, 0.2746)


def test_exact_coverage_over_trinomials_at_30_pairs():
    # every (gains, losses) of 30 pairs at once, and the exact coverage of the interval for
    # trinomial populations (discordance 1-50%, every tenth of it gains): at least 94% on the grid,
    # where the paired t interval falls to 92.1% (discordance 10%, three tenths of it gains)
    n = 30
    gains, losses = (g.ravel() for g in np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij"))
    keep = gains + losses <= n
    gains, losses = gains[keep], losses[keep]
    columns = [_pair(int(g), int(c), 0, n - int(g) - int(c)) for g, c in zip(gains, losses)]
    a = np.column_stack([x for x, _ in columns])
    b = np.column_stack([y for _, y in columns])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        default = paired_difference_columns(a, b, rng=0, n_resamples=200)
        t_interval = paired_difference_columns(a, b, method="t")
    low = np.array([r.low for r in default])
    high = np.array([r.high for r in default])
    t_low = np.array([r.low for r in t_interval])
    t_high = np.array([r.high for r in t_interval])
    worst, worst_t = 1.0, 1.0
    for discordant in (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5):
        for share in np.linspace(0.0, 1.0, 11):
            p_gain, p_loss = discordant * share, discordant * (1.0 - share)
            log_p = (special.gammaln(n + 1) - special.gammaln(gains + 1) - special.gammaln(losses + 1)
                     - special.gammaln(n - gains - losses + 1) + special.xlogy(gains, p_gain)
                     + special.xlogy(losses, p_loss) + special.xlogy(n - gains - losses, 1.0 - discordant))
            probability = np.exp(log_p)
            delta = p_gain - p_loss
            worst = min(worst, probability[(low <= delta + 1e-12) & (delta - 1e-12 <= high)].sum())
            worst_t = min(worst_t, probability[(t_low <= delta + 1e-12) & (delta - 1e-12 <= t_high)].sum())
    assert worst >= 0.94
    assert worst_t < 0.93


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=5, max_size=60))
def test_properties_on_zero_one_values(pairs):
    a = np.array([x for x, _ in pairs], dtype=float)
    b = np.array([y for _, y in pairs], dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = [paired_difference(a, b, confidence_level=level, rng=0, n_resamples=200) for level in (0.8, 0.9, 0.95, 0.99)]
        swapped = paired_difference(b, a, rng=0, n_resamples=200)
    for r in results:
        assert -1.0 <= r.low <= r.estimate <= r.high <= 1.0
    # nested in the level
    for narrow, wide in zip(results, results[1:]):
        assert wide.low <= narrow.low + 1e-12 and narrow.high <= wide.high + 1e-12
    # a - b mirrors b - a
    assert (swapped.low, swapped.high) == pytest.approx((-results[2].high, -results[2].low), abs=1e-12)


def test_matched_pairs_with_clusters_uses_the_design_effect_size():
    rng = np.random.default_rng(3)
    labels = np.repeat(np.arange(12), 5)
    shared = rng.random(12)[labels]
    a = (rng.random(60) < 0.2 + 0.6 * shared).astype(float)
    b = (rng.random(60) < 0.1 + 0.6 * shared).astype(float)
    result = paired_difference(a, b, clusters=labels, rng=0, n_resamples=500)
    d = a - b
    gain, loss = (d > 0).mean(), (d < 0).mean()
    totals = np.bincount(labels, weights=d - d.mean())
    se = math.sqrt(12 / 11 * (totals**2).sum()) / 60
    size = min((gain + loss - (gain - loss) ** 2) / se**2, 60)
    assert result.interval == pytest.approx(_bonett_price(gain * size, loss * size, size), abs=1e-12)
    direct = matched_pairs_bounds(d[:, None], labels, 12)(np.array([0.95]))
    assert (float(direct[0][0]), float(direct[1][0])) == pytest.approx(result.interval, abs=1e-12)


def test_constant_differences_keep_their_own_rules():
    # no difference anywhere: the "no difference seen on N problems" bound, not Bonett & Price's
    a, b = _pair(0, 0, 20, 10)
    with pytest.warns(Warning):
        agree = paired_difference(a, b.copy(), rng=0)
    bound = no_difference_bound(30, None, 0.95, (0.0, 1.0))
    assert agree.interval == pytest.approx((-bound, bound), abs=1e-12)
    assert agree.details["matched_pairs_interval"] is None


def test_values_off_the_ends_do_not_take_the_matched_pairs_interval():
    a, b = _pair(5, 2, 15, 8)
    a[-1] = 0.5  # one value of a inside (0, 1): not 0/1 values
    result = paired_difference(a, b, rng=0, n_resamples=500)
    assert "matched-pairs score" not in result.details["paired_bound_methods"]
    assert result.details["matched_pairs_interval"] is None


def _ceiling_pair_in_ten_clusters(seed: int):
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(10), 3)
    a = np.ones(30)
    b = np.ones(30)
    a[[2, 17]] = 0.75  # a few quarters off the ceiling: pass@1 from 4 samples
    b[[5, 17, 26]] = (0.75, 0.5, 0.75)
    order = rng.permutation(30)
    return a[order], b[order], labels[order]


def test_ten_clusters_near_the_same_end_take_the_clustered_t_and_split_score():
    a, b, labels = _ceiling_pair_in_ten_clusters(0)
    assert near_same_end(np.column_stack([a, b]), None, None, (0.0, 1.0)).tolist() == [True]
    result = paired_difference(a, b, clusters=labels, rng=0, n_resamples=999)
    assert not result.details["saturated_differences"]
    t_low, t_high = result.details["t_of_differences"]
    split_low, split_high = result.details["split_score_interval"]
    assert result.interval == pytest.approx((min(t_low, split_low), max(t_high, split_high)), abs=1e-12)
    assert set(result.details["paired_bound_methods"]) <= {"t", "split-score"}
    clustered_t = paired_difference(a, b, clusters=labels, method="clustered-t")
    assert (t_low, t_high) == pytest.approx(clustered_t.interval, abs=1e-12)
    # MOVER of the models would be several times wider here
    mover_low, mover_high = result.details["mover_of_models"]
    assert mover_high - mover_low > 2.0 * (result.high - result.low)


def test_ten_clusters_near_the_same_end_widen_without_a_second_df_reduction():
    # the clustered t interval carries t_9 already: the split score interval that widens it takes z
    a, b, labels = _ceiling_pair_in_ten_clusters(0)
    result = paired_difference(a, b, clusters=labels, rng=0, n_resamples=999)
    differences = (a - b)[:, None]
    level = np.array([0.95])
    plain = split_score_bounds(differences, labels, 10, reduce_for_df=False)(level)
    reduced = split_score_bounds(differences, labels, 10)(level)
    assert result.details["split_score_interval"] == pytest.approx((plain[0][0], plain[1][0]), abs=1e-12)
    assert reduced[0][0] < plain[0][0] and plain[1][0] < reduced[1][0]
    # with 30 or more clusters, and on MOVER's path, the split score keeps its df reduction
    many = np.arange(30)
    wide = paired_difference(a, b, clusters=many, rng=0, n_resamples=999)
    own = split_score_bounds(differences, many, 30)(level)
    assert wide.details["split_score_interval"] == pytest.approx((own[0][0], own[1][0]), abs=1e-12)
    # one call with a column on the path and one off it (mid-range, MOVER of the models): each is what it
    # gives alone, interval, p-value and split score interval, and only the first takes the unreduced one
    rng = np.random.default_rng(5)
    level_of_cluster = rng.random(10)[labels]
    mid_a = np.clip(level_of_cluster + rng.normal(0.05, 0.2, 30), 0, 1).round(2)
    mid_b = np.clip(level_of_cluster + rng.normal(0.0, 0.2, 30), 0, 1).round(2)
    assert not near_same_end(np.column_stack([mid_a, mid_b]), labels, 10, (0.0, 1.0))[0]
    together = paired_difference_columns(np.column_stack([a, mid_a]), np.column_stack([b, mid_b]), clusters=labels,
                                         rng=3, n_resamples=400)
    for column, (x, y) in enumerate(((a, b), (mid_a, mid_b))):
        alone = paired_difference(x, y, clusters=labels, rng=3, n_resamples=400)
        assert together[column].interval == pytest.approx(alone.interval, abs=1e-12)
        assert together[column].p_value == pytest.approx(alone.p_value, abs=1e-12)
        assert together[column].details["split_score_interval"] == pytest.approx(alone.details["split_score_interval"], abs=1e-12)
    mid_reduced = split_score_bounds((mid_a - mid_b)[:, None], labels, 10)(level)
    assert together[1].details["split_score_interval"] == pytest.approx((mid_reduced[0][0], mid_reduced[1][0]), abs=1e-12)


def test_ten_clusters_in_the_middle_keep_mover_of_the_models():
    rng = np.random.default_rng(5)
    labels = np.repeat(np.arange(10), 3)
    level = rng.random(10)[labels]
    a = np.clip(level + rng.normal(0.05, 0.2, 30), 0, 1).round(2)
    b = np.clip(level + rng.normal(0.0, 0.2, 30), 0, 1).round(2)
    result = paired_difference(a, b, clusters=labels, rng=0, n_resamples=999)
    assert not near_same_end(np.column_stack([a, b]), labels, 10, (0.0, 1.0))[0]
    assert "t" not in result.details["paired_bound_methods"]


def test_columns_of_mixed_kinds_equal_the_comparisons_one_by_one():
    # a 0/1 column, a quarters column and a 10-cluster column near the ceiling, in one call
    binary_a, binary_b = _pair(5, 2, 15, 8)
    quarters_a, quarters_b, labels = _ceiling_pair_in_ten_clusters(1)
    a = np.column_stack([binary_a, quarters_a])
    b = np.column_stack([binary_b, quarters_b])
    for clusters in (None, labels):
        together = paired_difference_columns(a, b, clusters=clusters, rng=7, n_resamples=400)
        for j, result in enumerate(together):
            alone = paired_difference(a[:, j], b[:, j], clusters=clusters, rng=7, n_resamples=400)
            assert result.interval == pytest.approx(alone.interval, abs=1e-12)
            assert result.details["paired_bound_methods"] == alone.details["paired_bound_methods"]
