r"""Score-type intervals: Wilson's interval, MOVER combinations, effective sample sizes (private module).

Wilson's score interval (Wilson 1927) with a Korn & Graubard (1998) effective size
:math:`n_{\mathrm{eff}} = \min(\hat p(1-\hat p)/\widehat{SE}^2, n_B)` reduced for the t degrees of
freedom, the MOVER combination of two intervals into one for a difference (Zou & Donner 2008;
Newcombe 1998), the t interval and the p-value that inverts an interval in its level. They
replace degenerate bootstrap-t tails, give 0/1 values their interval, carry the few-cluster
rule (fewer than :data:`FEW_CLUSTERS` clusters) and the "no difference seen on N problems" bound
of two models that agree everywhere, and are the single-model default with 10 or more problems or
clusters (:mod:`._single_score`). :func:`wilson_interval` is the public per-problem interval.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special, stats

from ._interval_policy import THRESHOLDS
from ._bootstrap import analytic_se
from ._resampling import Units
from ._validation import check_confidence_level, check_counts, describe_offenders

__all__ = [
    "FEW_CLUSTERS",
    "Fallback",
    "LevelBounds",
    "matched_pairs_bounds",
    "at_range_ends",
    "mean_and_se",
    "mover_bounds",
    "mover_difference",
    "contributing_problems",
    "near_end_split_bounds",
    "near_same_end",
    "within_share_of_same_end",
    "no_difference_bound",
    "p_value_by_inversion",
    "paired_score_fallback",
    "score_fallback",
    "saturated_differences",
    "score_standard_error",
    "split_score_bounds",
    "t_bounds",
    "wilson_effective",
    "wilson_interval",
    "wilson_score_bounds",
]

def wilson_score_bounds(p: ArrayLike, n_trials: ArrayLike, z: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Wilson's score interval [Wilson 1927] for a proportion ``p`` of ``n_trials`` with critical value ``z``:

    .. math:: \frac{p + \frac{z^2}{2n}}{1 + \frac{z^2}{n}} \pm
              \frac{z}{1 + \frac{z^2}{n}}\sqrt{\frac{p(1-p)}{n} + \frac{z^2}{4n^2}}

    vectorized, within [0, 1], exactly 0 (1) at ``p = 0`` (``p = 1``). ``n_trials`` may be a
    non-integer effective size. The one implementation behind :func:`wilson_interval`, the
    score fallback of the studentized interval and the decomposition's score intervals.
    """
    p = np.asarray(p, dtype=np.float64)
    n = np.asarray(n_trials, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        z2n = z * z / n
        denominator = 1.0 + z2n
        center = (p + z2n / 2.0) / denominator
        half = z * np.sqrt(np.maximum(p * (1.0 - p) / n + z2n / (4.0 * n), 0.0)) / denominator
    low = np.where(p <= 0.0, 0.0, np.clip(center - half, 0.0, 1.0))
    high = np.where(p >= 1.0, 1.0, np.clip(center + half, 0.0, 1.0))
    return low, high


def mover_bounds(difference, down_a, up_a, down_b, up_b, correlation) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""MOVER interval of :math:`\theta_a - \theta_b` from each one's distances to its bounds
    (Zou & Donner 2008; Newcombe 1998 for paired proportions), with :math:`r` the correlation
    of the two estimates:

    .. math:: L = \hat d - \sqrt{d_a^2 + u_b^2 - 2 r\, d_a u_b}, \qquad
              U = \hat d + \sqrt{u_a^2 + d_b^2 - 2 r\, u_a d_b}

    where :math:`d = \hat\theta - l` and :math:`u = u - \hat\theta` of each interval. The one
    implementation behind ``method="mover"``, the paired score fallback and the
    decomposition's score interval of reach.
    """
    below = np.sqrt(np.maximum(down_a**2 + up_b**2 - 2.0 * correlation * down_a * up_b, 0.0))
    above = np.sqrt(np.maximum(up_a**2 + down_b**2 - 2.0 * correlation * up_a * down_b, 0.0))
    return difference - below, difference + above


#: Fewer clusters than this: cluster-robust intervals are unreliable (Cameron & Miller 2015, VI); the public
#: name of :attr:`~._interval_policy.IntervalThresholds.few_clusters`.
FEW_CLUSTERS = THRESHOLDS.few_clusters

#: Bisection steps when a p-value is found by inverting an interval in its level (2**-48 precision).
_LEVEL_BISECTION_STEPS = 48

LevelBounds = Callable[[NDArray[np.float64]], tuple[NDArray[np.float64], NDArray[np.float64]]]


def wilson_effective(
    mean: NDArray[np.float64],
    se: NDArray[np.float64],
    n_bernoulli: float | NDArray[np.float64],
    df: float | NDArray[np.float64],
    value_range: tuple[float, float],
) -> LevelBounds:
    r"""Wilson score bounds on a mean of values in ``value_range`` with the Bernoulli worst-case
    effective sample size, as a function of the (two-sided) level.

    With the values rescaled to [0, 1], mean :math:`\hat p` and standard error :math:`\widehat{SE}`
    (t or clustered), the effective number of trials is

    .. math:: n_{\mathrm{eff}} = \min\Big(\frac{\hat p (1 - \hat p)}{\widehat{SE}^2},\ n_B\Big),
              \qquad n^* = n_{\mathrm{eff}} \Big(\frac{z_{1-\alpha/2}}{t_{df,\,1-\alpha/2}}\Big)^2

    where :math:`n_B` is the effective size if every value were 0 or 1 (the largest variance a
    [0, 1] variable with mean :math:`p` can have, :math:`p(1-p)`): N without clusters and Kish's
    :math:`N^2 / \sum_c N_c^2` with clusters of :math:`N_c` problems each (every problem of a
    cluster equal). The bounds are Wilson's (Wilson 1927, module reference [5]) with :math:`n^*`
    trials (:func:`wilson_score_bounds`); the reduction for the degrees of freedom is Korn &
    Graubard's (1998, module reference [6]). For 0/1 values without clusters
    :math:`n_{\mathrm{eff}} = N - 1`.
    """
    lo, hi = value_range
    width = hi - lo
    p = np.clip((mean - lo) / width, 0.0, 1.0)
    se_p = se / width
    spread = p * (1.0 - p)
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = np.where((se_p > 0) & (spread > 0), spread / (se_p * se_p), np.inf)
    n_eff = np.minimum(observed, np.asarray(n_bernoulli, dtype=np.float64))

    def bounds(level: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        tail = 1.0 - (1.0 - np.asarray(level, dtype=np.float64)) / 2.0
        z = special.ndtri(tail)
        t = stats.t.ppf(tail, df)
        with np.errstate(divide="ignore", invalid="ignore"):
            n_star = n_eff * np.where(t > 0, (z / t) ** 2, 1.0)
        low, high = wilson_score_bounds(p, n_star, z)
        return lo + width * np.minimum(low, p), lo + width * np.maximum(high, p)

    return bounds


def mover_difference(
    bounds_a: LevelBounds,
    bounds_b: LevelBounds,
    mean_a: NDArray[np.float64],
    mean_b: NDArray[np.float64],
    correlation: NDArray[np.float64],
) -> LevelBounds:
    r"""MOVER interval of :math:`\theta_a - \theta_b` from one interval per model as a function of
    the level (:func:`mover_bounds`; Zou & Donner 2008, with Wilson intervals Newcombe 1998)."""
    difference = mean_a - mean_b

    def bounds(level: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        low_a, high_a = bounds_a(level)
        low_b, high_b = bounds_b(level)
        return mover_bounds(difference, mean_a - low_a, high_a - mean_a, mean_b - low_b, high_b - mean_b, correlation)

    return bounds


def t_bounds(estimate: NDArray[np.float64], se: NDArray[np.float64], df: int) -> LevelBounds:
    """The t interval ``estimate +- t_{df} se`` as a function of the level."""

    def bounds(level: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        critical = stats.t.ppf(1.0 - (1.0 - np.asarray(level, dtype=np.float64)) / 2.0, df)
        return estimate - critical * se, estimate + critical * se

    return bounds


def p_value_by_inversion(bounds: LevelBounds, estimate: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """Two-sided p-value of "0" as one minus the largest level whose interval excludes 0.

    ``bounds(level)`` is the interval the method shows, at any level; the p-value is therefore
    below ``1 - level`` exactly when that interval excludes 0 (to the 2**-48 of the bisection).
    """
    excluded_level = np.zeros(k)
    included_level = np.ones(k)
    for _ in range(_LEVEL_BISECTION_STEPS):
        middle = (excluded_level + included_level) / 2.0
        low, high = bounds(middle)
        excluded = (low > 0.0) | (high < 0.0)
        excluded_level = np.where(excluded, middle, excluded_level)
        included_level = np.where(excluded, included_level, middle)
    return np.where(estimate == 0.0, 1.0, 1.0 - excluded_level)


@dataclass(frozen=True)
class Fallback:
    """Bounds that replace a degenerate bootstrap-t tail: a function of the level and its name."""

    bounds: LevelBounds
    name: str


def mean_and_se(values: NDArray[np.float64], codes, n_clusters):
    """Column means, analytic standard errors (t or clustered), Bernoulli worst-case effective
    size (N, or Kish's N^2 / sum N_c^2 with clusters) and t degrees of freedom."""
    n = values.shape[0]
    mean = values.mean(axis=0)
    constant = np.ptp(values, axis=0) == 0
    units = Units(np.where(constant, 0.0, values - mean), codes, need_se=False)
    se = analytic_se(units, n, constant)
    sizes = units.unit_sizes  # None without clusters
    n_bernoulli = float(n) if sizes is None else float(n) ** 2 / float((sizes**2).sum())
    return mean, se, n_bernoulli, units.n_units - 1


def score_fallback(values: NDArray[np.float64], codes, n_clusters, value_range,
                    design_effect: bool = True, cut_at_n: bool = True) -> Fallback | None:
    r"""Wilson-type bounds on the mean of values in ``value_range`` (``None``: no known range).

    The effective size is the design-effect one, :math:`\min(\hat p(1-\hat p)/\widehat{SE}^2, N)`
    (Korn & Graubard 1998; without clusters :math:`N - 1` for 0/1 values), for every column with
    spread; a column all at one end has no spread to measure and keeps the worst case :math:`n_B`
    (Kish's size with clusters). With ``design_effect=False`` (the per-model limits of MOVER
    with 10 or more clusters) the cap is :math:`n_B` for every column but 0/1 values: there the
    design-effect cap covered 92.4-93.0% for a paired pass@8 near 1 with 20-30 clusters. Without
    ``cut_at_n`` the design-effect size is not cut at N (the clustered score interval of
    :func:`apply_clustered_score`).
    """
    if value_range is None:
        return None
    mean, se, n_bernoulli, df = mean_and_se(values, codes, n_clusters)
    spread = at_range_ends(values, value_range) if not design_effect else np.ones(values.shape[1], dtype=bool)
    cap = np.where(spread & (se > 0), float(values.shape[0]) if cut_at_n else np.inf, n_bernoulli)
    return Fallback(wilson_effective(mean, se, cap, df, value_range), "score")


def paired_score_fallback(a: NDArray[np.float64], b: NDArray[np.float64], codes, n_clusters,
                           design_effect: bool = False) -> Fallback:
    """MOVER bounds on ``mean(a) - mean(b)`` from each model's Wilson-type bounds (values in [0, 1]).

    The correlation of the two means comes from the same standard errors as the interval,
    :math:`r = (SE_a^2 + SE_b^2 - SE_d^2) / (2 SE_a SE_b)`, so that the MOVER variance equals
    :math:`SE_d^2` near the estimate (Pearson's r of the per-problem values without clusters).
    """
    mean_a, se_a, n_bernoulli, df = mean_and_se(a, codes, n_clusters)
    mean_b, se_b, _, _ = mean_and_se(b, codes, n_clusters)
    _, se_d, _, _ = mean_and_se(a - b, codes, n_clusters)
    with np.errstate(divide="ignore", invalid="ignore"):
        correlation = np.where((se_a > 0) & (se_b > 0), (se_a**2 + se_b**2 - se_d**2) / (2.0 * se_a * se_b), 0.0)
    correlation = np.clip(correlation, -1.0, 1.0)
    n = float(a.shape[0]) if design_effect else n_bernoulli  # design-effect size under the few-cluster rule
    bounds_a = wilson_effective(mean_a, se_a, np.where(se_a > 0, n, n_bernoulli), df, (0.0, 1.0))
    bounds_b = wilson_effective(mean_b, se_b, np.where(se_b > 0, n, n_bernoulli), df, (0.0, 1.0))
    return Fallback(mover_difference(bounds_a, bounds_b, mean_a, mean_b, correlation), "mover-score")


def _gains_and_losses(differences: NDArray[np.float64], codes, n_clusters, scale: NDArray[np.float64]):
    r"""Means and standard errors of the gains :math:`\max(d_j, 0)/s` and losses :math:`\max(-d_j, 0)/s`,
    the Bernoulli worst-case size :math:`n_B`, the degrees of freedom and the correlation of the two
    means, :math:`r = (SE_+^2 + SE_-^2 - SE_d^2)/(2 SE_+ SE_-)` (the paired :math:`SE_d^2` near the estimate)."""
    with np.errstate(invalid="ignore"):
        gains = np.nan_to_num(np.maximum(differences, 0.0) / scale)
        losses = np.nan_to_num(np.maximum(-differences, 0.0) / scale)
    mean_gain, se_gain, n_bernoulli, df = mean_and_se(gains, codes, n_clusters)
    mean_loss, se_loss, _, _ = mean_and_se(losses, codes, n_clusters)
    _, se_d, _, _ = mean_and_se(gains - losses, codes, n_clusters)
    with np.errstate(divide="ignore", invalid="ignore"):
        correlation = np.where((se_gain > 0) & (se_loss > 0),
                               (se_gain**2 + se_loss**2 - se_d**2) / (2.0 * se_gain * se_loss), 0.0)
    return mean_gain, se_gain, mean_loss, se_loss, n_bernoulli, df, np.clip(correlation, -1.0, 1.0)


def split_score_bounds(differences: NDArray[np.float64], codes, n_clusters,
                       reduce_for_df: bool | NDArray[np.bool_] = True) -> LevelBounds:
    r"""Score bounds on a mean paired difference from its gains and its losses (values in [-1, 1]).

    Each difference splits into a gain and a loss, :math:`d_j = d_j^+ - d_j^-` with
    :math:`d_j^\pm = \max(\pm d_j, 0)`; on a benchmark where the two models agree on most
    problems both are mostly 0, the case of a proportion near 0, and a t interval of :math:`\bar d`
    is too short on the side of the rarer sign (its standard error is small exactly when few
    problems differ). Each part, scaled by the largest :math:`|d_j|` (:math:`M`), gets
    Wilson's interval with the design-effect size :math:`n_{\mathrm{eff}} = \hat p(1-\hat p)/\widehat{SE}^2`
    (no cap, Korn & Graubard 1998, reduced for the t degrees of freedom; :func:`wilson_effective`),
    whose skewness correction near 0 is about :math:`z^2\widehat{SE}^2/\hat p` on the raw scale, the
    Poisson-type correction of a rare count; a part with no problem at all gets the bound of
    0 of :math:`n_B` (N, or Kish's size with clusters) times :math:`M`. The two intervals are combined
    by MOVER (:func:`mover_bounds`) with :math:`r = (SE_+^2 + SE_-^2 - SE_d^2)/(2 SE_+ SE_-)`
    from the same (t or clustered) standard errors, so that near the estimate the variance is the
    paired :math:`SE_d^2`. Columns with every difference 0 get NaN (the caller's
    "no difference seen" bound applies there). Where ``reduce_for_df`` is false (one flag, or one per
    column) the sizes are not reduced for the degrees of freedom (:math:`z` throughout): the widening
    of a clustered t interval,
    which already carries the :math:`t_{C-1}` quantile (10 to 29 clusters, two models near the
    same end; docs/intervals-edges.md, "0/1 values and 10-29 clusters").
    """
    magnitude = np.abs(differences).max(axis=0)
    scale = np.where(magnitude > 0, magnitude, np.nan)
    mean_gain, se_gain, mean_loss, se_loss, n_bernoulli, df, correlation = _gains_and_losses(differences, codes, n_clusters, scale)
    df_of_sizes = np.where(reduce_for_df, float(df), np.inf)
    gain_bounds = wilson_effective(mean_gain, se_gain, np.where(se_gain > 0, np.inf, n_bernoulli), df_of_sizes, (0.0, 1.0))
    loss_bounds = wilson_effective(mean_loss, se_loss, np.where(se_loss > 0, np.inf, n_bernoulli), df_of_sizes, (0.0, 1.0))
    scaled = mover_difference(gain_bounds, loss_bounds, mean_gain, mean_loss, correlation)

    def bounds(level: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        low, high = scaled(level)
        return low * scale, high * scale

    return bounds


def matched_pairs_bounds(differences: NDArray[np.float64], codes, n_clusters) -> LevelBounds:
    r"""Bonett & Price's adjusted Wald interval for a difference of paired proportions (0/1 values).

    When both models' values are 0 or 1 (pass@1 from one sample per problem, pass^4 from four,
    any binary scorer), the per-problem differences :math:`d_j \in \{-1, 0, 1\}` are a trinomial:
    with :math:`\hat p_+` and :math:`\hat p_-` the shares of gains (:math:`d_j = 1`) and losses
    (:math:`d_j = -1`) among :math:`n` problems (the discordant pairs of a 2x2 table of the two
    models), the interval of :math:`\Delta = p_+ - p_-` adds one to each discordant count and two
    to the number of pairs (Bonett & Price 2012):

    .. math:: \tilde p_\pm = \frac{n \hat p_\pm + 1}{n + 2}, \qquad
              \tilde\Delta = \tilde p_+ - \tilde p_-, \qquad
              \tilde\Delta \pm z_{1-\alpha/2}\sqrt{\frac{\tilde p_+ + \tilde p_- - \tilde\Delta^2}{n + 2}}

    cut to [-1, 1] and widened to hold :math:`\hat\Delta` (it always does for :math:`n \ge 1`
    but for rounding). Without clusters :math:`n = N`; with clusters the design-effect size
    :math:`n = \min\big((\hat p_+ + \hat p_- - \hat\Delta^2)/\widehat{SE}_{cl}^2,\ N\big)`
    (Korn & Graubard 1998's effective size for the trinomial variance; :math:`n_B`, Kish's size,
    where the clustered standard error is 0), never more informative than N independent pairs.

    Chosen by exact coverage over trinomials (discordance 0.01-0.5, every split of it into gains and
    losses, N = 10, 30, 100, 200; with the "no difference seen" bound where no pair differs): at
    least 93.8% everywhere, where Tango's (1998) score interval falls to 93.0%, Agresti & Min's
    (2005) Wald+2 to 90.8%, and the paired t interval to 87.7% (N = 100, all discordance one-sided);
    and in the coverage study's 0/1 paired cells at N >= 30 (pass@1 at n = 1, pass^4 at n = 4) it
    covered 95.8-100% within 1.3x the narrowest covering method in 38 of 42 cells (at most 1.36x),
    where the t interval widened to the split score interval (:func:`split_score_bounds`, the MOVER of
    two Wilson intervals, which gives the unseen sign a whole "0 of N" bound) was beyond 1.3x in 25
    (up to 1.82x; docs/intervals-edges.md).

    References
    ----------
    D. G. Bonett and R. M. Price, Journal of Educational and Behavioral Statistics 37(4), 479-488
    (2012); T. Tango, Statistics in Medicine 17(8), 891-908 (1998); A. Agresti and Y. Min,
    Statistics in Medicine 24(5), 729-740 (2005).
    """
    n = differences.shape[0]
    gain = (differences > 0).mean(axis=0)
    loss = (differences < 0).mean(axis=0)
    estimate = gain - loss
    _, se, n_bernoulli, _ = mean_and_se(differences, codes, n_clusters)
    if codes is None:
        size = np.full(differences.shape[1], float(n))
    else:
        spread = gain + loss - estimate * estimate
        with np.errstate(divide="ignore", invalid="ignore"):
            size = np.where(se > 0, np.minimum(spread / (se * se), float(n)), n_bernoulli)
    shrunk_gain = (size * gain + 1.0) / (size + 2.0)
    shrunk_loss = (size * loss + 1.0) / (size + 2.0)
    center = shrunk_gain - shrunk_loss
    spread_shrunk = np.sqrt(np.maximum(shrunk_gain + shrunk_loss - center * center, 0.0) / (size + 2.0))

    def bounds(level: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        z = special.ndtri(1.0 - (1.0 - np.asarray(level, dtype=np.float64)) / 2.0)
        low = np.clip(center - z * spread_shrunk, -1.0, 1.0)
        high = np.clip(center + z * spread_shrunk, -1.0, 1.0)
        return np.minimum(low, estimate), np.maximum(high, estimate)

    return bounds










def end_share(mean: NDArray[np.float64], value_range: tuple[float, float]) -> NDArray[np.float64]:
    """A mean's position in its range, rescaled to [0, 1] (the share the near-end rules measure)."""
    lo, hi = value_range
    return np.clip((mean - lo) / (hi - lo), 0.0, 1.0)


def _both_models_at(top: NDArray[np.bool_], bottom: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """Per pair of columns ``(j, K + j)``: both models near the top end, or both near the bottom end."""
    k = top.shape[0] // 2
    return (top[:k] & top[k:]) | (bottom[:k] & bottom[k:])


def near_same_end(stacked: NDArray[np.float64], codes, n_clusters, value_range: tuple[float, float]) -> NDArray[np.bool_]:
    r"""Per pair of columns ``(j, K + j)`` of ``stacked`` (model a's, then model b's): both means near the same end.

    *Near an end* is the single-model rule (:attr:`~._interval_policy.IntervalThresholds.near_end_problems`): :math:`n_B \min(\hat p, 1-\hat p) < 3`
    with :math:`n_B` Kish's size. With 10 to 29 clusters, unsaturated differences of such a pair take the
    clustered t interval widened to the split score interval instead of MOVER of the models: each model's
    studentized cluster bootstrap there is degenerate on its interior side, its limit is the score bound of
    :math:`n_B` problems near the end (about 0.3 from the mean at 10 clusters), and the two limits are
    lopsided on the same side, which MOVER does not let cancel (the reason the default left MOVER without
    clusters). Measured in the coverage study at N = 30 in 10 clusters (1,000 simulated benchmarks per cell,
    docs/intervals-edges.md): MOVER was 2.5-10.7x the clustered t interval at the ceiling and floor (pass@1
    n = 4, 16; pass^4 n = 16, 64; pass@8 n = 16, 64), where that covered 94.0-97.1%; with the rule (first form) the 26
    ceiling and floor cells (n = 4-64) cover 94.1-100% at most 1.45x the narrowest method that covers, and
    the 13 point-mass cells 93.6-98.1% (MOVER 94.5-98.5%). Saturated differences keep MOVER: with the rule
    clustered ceiling cons@5 (n = 16) fell to 37%. The widening takes the split score interval without its
    reduction for the degrees of freedom (:func:`split_score_bounds` with ``reduce_for_df=False``): the
    five cells beyond the width rule at 10 clusters (1.37-1.45x the clustered t interval) came inside it,
    206 of the 315 paired edge cells are in 93-98% instead of 204, and the point-mass cells cover 93.4-97.9%.
    """
    _, _, n_bernoulli, _ = mean_and_se(stacked, codes, n_clusters)
    p = end_share(stacked.mean(axis=0), value_range)
    return _both_models_at(n_bernoulli * (1.0 - p) < THRESHOLDS.near_end_problems, n_bernoulli * p < THRESHOLDS.near_end_problems)




def within_share_of_same_end(stacked: NDArray[np.float64], value_range: tuple[float, float],
                             share: float = THRESHOLDS.paired_own_bootstrap_end_share) -> NDArray[np.bool_]:
    r"""Per pair of columns ``(j, K + j)`` of ``stacked``: both means within ``share`` of the same end.

    With :math:`\hat p` each mean's position in the range (:func:`end_share`): :math:`\hat p_a, \hat p_b > 1 - s`
    or :math:`\hat p_a, \hat p_b < s`. Two such models' MOVER limits are lopsided on the same side.
    """
    p = end_share(stacked.mean(axis=0), value_range)
    return _both_models_at(p > 1.0 - share, p < share)


def saturated_differences(differences: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Per column: at least :attr:`~._interval_policy.IntervalThresholds.saturated_share` of the nonzero differences are below :attr:`~._interval_policy.IntervalThresholds.tiny_difference`."""
    differing = differences != 0.0
    tiny = differing & (np.abs(differences) < THRESHOLDS.tiny_difference)
    count = differing.sum(axis=0)
    return (count > 0) & (tiny.sum(axis=0) >= THRESHOLDS.saturated_share * count)


def contributing_problems(parts: NDArray[np.float64]) -> NDArray[np.float64]:
    r"""Per column of nonnegative values: on how many problems their sum rests, :math:`(\sum_j x_j)^2 / \sum_j x_j^2`.

    The participation ratio (Kish's effective size with the values as weights): m for m equal values
    and zeros elsewhere, near 1 when one value carries the sum; 0 for a column of zeros.
    """
    total = parts.sum(axis=0)
    squares = (parts * parts).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(squares > 0, total * total / squares, 0.0)


def near_end_split_bounds(differences: NDArray[np.float64], codes, n_clusters) -> LevelBounds:
    r"""The split score bounds with the near-end rule of a single mean applied to each part.

    The gains :math:`\max(d_j, 0)` and losses :math:`\max(-d_j, 0)` are taken on their own range
    [0, 1] (not scaled by the largest :math:`|d_j|`); a part whose mean :math:`\hat p` is within
    :attr:`~._interval_policy.IntervalThresholds.near_end_problems` problems' worth of 0 (:math:`n_B \hat p <` 3) gets Wilson's interval
    with the effective size capped at :attr:`~._interval_policy.IntervalThresholds.paired_near_end_size_factor` :math:`n_B`,
    :math:`n_{\mathrm{eff}} = \min(\hat p(1-\hat p)/\widehat{SE}^2,\ 5 n_B)` (a part with no problem
    at all: :math:`5 n_B`), reduced for the degrees of freedom (Korn & Graubard 1998); the other parts
    keep the design-effect size. Combined by MOVER as in :func:`split_score_bounds`. Where the
    differences are saturated (:func:`saturated_differences`), the tiny differences seen say little
    about the rare large ones the sample lacks, and this bounds how informative the sample may be,
    as :func:`near_end_bounds` does for one model near an end. A part near its end that rests on
    :attr:`~._interval_policy.IntervalThresholds.paired_near_end_contributing` or more problems (:func:`contributing_problems`) is capped at
    :attr:`~._interval_policy.IntervalThresholds.paired_near_end_spread_size_factor` :math:`n_B` (15) instead: the sample sees how it is
    spread, and only the few large differences it may lack are left to bound.
    """
    ones = np.ones(differences.shape[1])
    mean_gain, se_gain, mean_loss, se_loss, n_bernoulli, df, correlation = _gains_and_losses(differences, codes, n_clusters, ones)

    def size(mean, se, part):
        near_end = n_bernoulli * mean < THRESHOLDS.near_end_problems
        # (a rounding margin: six equal values' ratio can come out as 5.999999999999999)
        spread = contributing_problems(part) >= THRESHOLDS.paired_near_end_contributing * (1.0 - 1e-12)
        factor = np.where(spread, THRESHOLDS.paired_near_end_spread_size_factor, THRESHOLDS.paired_near_end_size_factor)
        return np.where(near_end, factor * n_bernoulli, np.where(se > 0, np.inf, n_bernoulli))

    gains, losses = np.maximum(differences, 0.0), np.maximum(-differences, 0.0)
    gain_bounds = wilson_effective(mean_gain, se_gain, size(mean_gain, se_gain, gains), df, (0.0, 1.0))
    loss_bounds = wilson_effective(mean_loss, se_loss, size(mean_loss, se_loss, losses), df, (0.0, 1.0))
    return mover_difference(gain_bounds, loss_bounds, mean_gain, mean_loss, correlation)


def at_range_ends(values: NDArray[np.float64], value_range: tuple[float, float]) -> NDArray[np.bool_]:
    """Per column: every value at one of the two ends of ``value_range`` (0/1 values in [0, 1])."""
    lo, hi = value_range
    return ((values == lo) | (values == hi)).all(axis=0)


def score_standard_error(estimate: NDArray[np.float64], se: NDArray[np.float64], n: int,
                          value_range: tuple[float, float]) -> NDArray[np.float64]:
    r"""The standard error behind the few-cluster score interval: :math:`\sqrt{\hat p(1-\hat p)/n_{\mathrm{eff}}}`
    with :math:`n_{\mathrm{eff}} = \min(\hat p(1-\hat p)/\widehat{SE}_{cl}^2, N)`, i.e.
    :math:`\max(\widehat{SE}_{cl}, \sqrt{\hat p(1-\hat p)/N})` on the scale of ``value_range``.

    A handful of clusters can agree by chance, which makes the clustered standard error small;
    the score interval never treats the benchmark as more informative than N independent 0/1
    problems with the same mean. This is the standard error every path reports under the
    few-cluster rule (the CLI's SE column, lm-eval's stderr, Inspect's ``_stderr``).
    """
    lo, hi = value_range
    width = hi - lo
    p = np.clip((estimate - lo) / width, 0.0, 1.0)
    return np.where(se > 0, np.maximum(se, width * np.sqrt(p * (1.0 - p) / n)), se)


def no_difference_bound(n: int, codes: NDArray[np.int64] | None, level: float,
                         value_range: tuple[float, float]) -> float:
    r"""Half-width of the interval of a paired difference when every per-problem difference is 0.

    Two different models that agree on every one of N problems have not been seen to differ,
    which is not the same as having been shown equal. With each model's values in
    ``value_range`` (width :math:`w`), each :math:`|d_j|/w` lies in [0, 1] and was 0 on every problem, so the
    bound is the one the single-model all-same case gets (every value at one end: "0 of N"):
    the upper Wilson bound of 0 successes with :math:`n_B` trials (N, or Kish's
    :math:`N^2/\sum_c N_c^2` with clusters) reduced for the t degrees of freedom (Korn &
    Graubard 1998), :math:`u = w\,z^2/(n^* + z^2)` with :math:`n^* = n_B (z/t_{df})^2`. The
    interval is :math:`[-u, u]`: 30 problems give :math:`\pm 0.122`, the complement of the
    Wilson lower bound of 30 of 30.
    """
    lo, hi = value_range
    width = hi - lo  # |d_j| <= hi - lo for two models' values in [lo, hi]
    zeros = np.zeros((n, 1))
    _, _, n_bernoulli, df = mean_and_se(zeros, codes, None)
    bounds = wilson_effective(np.zeros(1), np.zeros(1), n_bernoulli, df, (0.0, 1.0))
    _, high = bounds(np.array([level]))
    return float(width * high[0])


def wilson_interval(
    n_samples: ArrayLike, n_correct: ArrayLike, *, confidence_level: float = 0.95
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Wilson score interval for each problem's success rate :math:`c/n` (Wilson 1927).

    .. math::

        \frac{\hat p + \frac{z^2}{2n}}{1 + \frac{z^2}{n}} \pm
        \frac{z}{1 + \frac{z^2}{n}}\sqrt{\frac{\hat p(1-\hat p)}{n} + \frac{z^2}{4n^2}},
        \qquad \hat p = c/n,\ z = \Phi^{-1}\big(1 - \tfrac{1-\text{level}}{2}\big)

    Parameters
    ----------
    n_samples : array_like of int, shape (N,)
        Samples per problem, ``n >= 1``.
    n_correct : array_like of int, shape (N,)
        Correct samples per problem, ``0 <= c <= n``. The order ``(n, c)`` is that of every
        estimator (``pass_at_k(n, c, k)``); pass them by name when in doubt.
    confidence_level : float, default: 0.95
        In the open interval (0, 1).

    Returns
    -------
    low, high : ndarray of float64, shape (N,) (0-D for scalar input)
        Bounds, always within [0, 1].

    Notes
    -----
    This is an interval for one problem's own success probability from its ``n`` samples, which
    are independent given the problem. It is not an interval for a benchmark mean: use
    :func:`mean_ci` on per-problem values for that.

    References
    ----------
    .. [1] E. B. Wilson, JASA 22(158), 209-212 (1927).

    Examples
    --------
    >>> from scipy.stats import norm
    >>> from kpass.metrics import wilson_interval
    >>> low, high = wilson_interval(10, 8, confidence_level=2 * norm.cdf(1.96) - 1)  # z = 1.96
    >>> round(float(low), 12), round(float(high), 12)                                   # docs/spec.md ST19
    (0.490156846721, 0.943319052019)
    >>> wilson_interval(n_samples=[10, 5], n_correct=[0, 5])[1].round(4)
    array([0.2775, 1.    ])
    """
    n, c, scalar_input = check_counts(n_samples, n_correct)
    zero = n == 0
    if zero.any():
        raise ValueError(f"`n_samples` must be >= 1 for a Wilson interval; zero at {describe_offenders(zero, n, value_name='n_samples')}.")
    level = check_confidence_level(confidence_level)
    z = float(special.ndtri(1.0 - (1.0 - level) / 2.0))
    nf = n.astype(np.float64)
    low, high = wilson_score_bounds(c / nf, nf, z)  # exactly 0 at c = 0 and 1 at c = n
    if scalar_input:
        return np.float64(low[0]), np.float64(high[0])
    return low, high







def near_end_score(values: NDArray[np.float64], codes, n_clusters, value_range: tuple[float, float],
                   size_factor: float) -> tuple[NDArray[np.bool_], NDArray[np.bool_], NDArray[np.float64], LevelBounds]:
    r"""The near-end test and its capped Wilson bounds, shared by the single-model rule and MOVER's limits.

    With :math:`\hat p` the mean rescaled to [0, 1] and :math:`n_B` the Bernoulli worst-case size (N, or
    Kish's with clusters), returns which columns are near an end
    (:math:`n_B \min(\hat p, 1-\hat p) <` :attr:`~._interval_policy.IntervalThresholds.near_end_problems`), whether that end is the top,
    :math:`n_B \min(\hat p, 1-\hat p)` itself and the Wilson bounds (:func:`wilson_effective`) with the
    design-effect size capped at ``size_factor`` :math:`n_B`, as a function of the level.
    """
    mean, se, n_bernoulli, df = mean_and_se(values, codes, n_clusters)
    p = end_share(mean, value_range)
    off_end = n_bernoulli * np.minimum(p, 1.0 - p)
    capped = wilson_effective(mean, se, size_factor * n_bernoulli, df, value_range)
    return off_end < THRESHOLDS.near_end_problems, p > 0.5, off_end, capped


def clustered_model_limits(values: NDArray[np.float64], codes, n_clusters,
                           value_range: tuple[float, float]) -> tuple[LevelBounds, LevelBounds, NDArray[np.bool_]]:
    r"""Per-model limits of MOVER with 30 or more clusters: the clustered score interval with a near-end cap.

    Used where either model of a pair is near an end (:func:`~kpass.metrics._interval_engine.mover_interval`).
    Each column (one model) takes the clustered score interval of the single-model default
    (:func:`apply_clustered_score`: Wilson's interval with Korn & Graubard's design-effect size
    :math:`n_{\mathrm{eff}} = \hat p(1-\hat p)/\widehat{SE}_{cl}^2`, not cut at N, and C - 1 degrees of
    freedom). A column within :attr:`~._interval_policy.IntervalThresholds.near_end_problems` problems' worth of an end
    (:math:`n_B \min(\hat p, 1-\hat p) < 3`, Kish's :math:`n_B`) has its bound on the side away from
    that end widened to the Wilson bound with the size capped at :attr:`~._interval_policy.IntervalThresholds.mover_near_end_size_factor`
    :math:`n_B`, as the single-model near-end rule does with 2 :math:`n_B`: a difference of two means is
    told apart by the problems where the models differ, so its legs need less of that protection than
    one mean does (with the cap of 2, 30 of the 51 clustered edge cells it applies to covered more than 98%). The studentized
    cluster bootstrap's legs they replace were long in some benchmarks and short in others: 91.2-93.4%
    coverage, mostly missing below a negative truth, at 1.3-2.1x the width (docs/intervals-edges.md).

    Returns
    -------
    bounds, clustered : callable
        The (low, high) limits of every column at a (two-sided) level per column, and the clustered
        score interval alone (where ``bounds`` is wider, the near-end cap set the bound).
    near_end : ndarray of bool, shape (K,)
        The columns within :attr:`~._interval_policy.IntervalThresholds.near_end_problems` problems' worth of an end.
    """
    clustered = score_fallback(values, codes, n_clusters, value_range, cut_at_n=False)
    assert clustered is not None  # value_range is known
    near_end, at_top, _, capped = near_end_score(values, codes, n_clusters, value_range, THRESHOLDS.mover_near_end_size_factor)

    def bounds(level: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        low, high = clustered.bounds(level)
        capped_low, capped_high = capped(level)
        return (np.where(near_end & at_top, np.minimum(low, capped_low), low),
                np.where(near_end & ~at_top, np.maximum(high, capped_high), high))

    return bounds, clustered.bounds, near_end
