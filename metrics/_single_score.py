r"""The single-model default's score rules: which interval a mean of values in a known range shows (private module).

With 10 or more problems (:func:`apply_problem_score`) or clusters (:func:`apply_clustered_score`)
the default interval of :func:`~kpass.metrics.mean_ci` is Wilson's with a design-effect size
(Korn & Graubard 1998), and the near-end rule (:func:`apply_near_end`) bounds the side away from a
near end; the reliability warning marks means that rest on a few problems off an end. The bounds
themselves are in :mod:`._score_intervals`; docs/intervals-edges.md gives the coverage that chose
each rule.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ._interval_policy import THRESHOLDS
from ._interval_types import ColumnInterval
from ._score_intervals import end_share, near_end_score, score_fallback

__all__ = [
    "CLUSTERED_SCORE",
    "PROBLEM_SCORE",
    "apply_clustered_score",
    "apply_near_end",
    "apply_problem_score",
    "near_end_bounds",
]




def near_end_bounds(values: NDArray[np.float64], codes, n_clusters, value_range: tuple[float, float],
                    level: float) -> tuple[NDArray[np.bool_], NDArray[np.bool_], NDArray[np.float64], NDArray[np.float64],
                                       NDArray[np.float64]]:
    r"""The interior-side score bound of a single-model mean near an end of its range.

    With the values rescaled to [0, 1], :math:`\hat p` their mean and :math:`n_B` the Bernoulli
    worst-case size (N without clusters; Kish's :math:`N^2/\sum_c N_c^2` with clusters, what N
    problems weigh when every problem of a cluster is alike), a column is *near the end* when
    :math:`n_B \min(\hat p, 1 - \hat p) <` :attr:`~._interval_policy.IntervalThresholds.near_end_problems`. Its bound on the
    side away from that end (the lower bound near 1, the upper bound near 0) is the Wilson bound
    (Wilson 1927) with the design-effect size capped at :attr:`~._interval_policy.IntervalThresholds.near_end_size_factor` :math:`n_B`,

    .. math:: n_{\mathrm{eff}} = \min\Big(\frac{\hat p(1-\hat p)}{\widehat{SE}^2},\ 2 n_B\Big),
              \qquad n^* = n_{\mathrm{eff}}\,(z_{1-\alpha/2}/t_{df,\,1-\alpha/2})^2

    (Korn & Graubard 1998 for the degrees of freedom), so that a sample whose few off-end problems
    happen to agree is not treated as more informative than :math:`2 n_B` problems near the end
    (the standard error is the clustered one with clusters). Measured in the coverage study
    (``docs/coverage-edges.md``): in units of N instead of :math:`n_B`, clustered pass@1 near the
    ceiling covered 84.5% at N = 200 (66 clusters); with :math:`n_B` 98.5%.

    Returns
    -------
    near_end, at_top : ndarray of bool, shape (K,)
        Which columns are near an end, and whether that end is the top of the range.
    low, high : ndarray of float64, shape (K,)
        The Wilson bounds (on the scale of ``value_range``); only the interior side is used.
    off_end : ndarray of float64, shape (K,)
        :math:`n_B \min(\hat p, 1 - \hat p)`, the problems' worth off the nearer end.
    """
    near_end, at_top, off_end, bounds = near_end_score(values, codes, n_clusters, value_range, THRESHOLDS.near_end_size_factor)
    low, high = bounds(np.full(values.shape[1], level))
    return near_end, at_top, low, high, off_end


#: The scale name of the single-model default's interval with 10 or more clusters (``details["scale"]``).
CLUSTERED_SCORE = "score (clustered)"


def _score_bounds(arr: NDArray[np.float64], codes, n_clusters, value_range: tuple[float, float], level: float,
                  bound_range: tuple[float, float] | None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Wilson's bounds with the (clustered) design-effect size not cut at N, at ``level``, inside ``bound_range``."""
    score = score_fallback(arr, codes, n_clusters, value_range, cut_at_n=False)
    assert score is not None  # value_range is known
    low, high = score.bounds(np.full(arr.shape[1], level))
    if bound_range is not None:
        low, high = np.maximum(low, bound_range[0]), np.minimum(high, bound_range[1])
    return low, high


def apply_clustered_score(results: list[ColumnInterval], chosen: NDArray[np.bool_], arr: NDArray[np.float64], codes,
                          n_clusters, value_range: tuple[float, float], level: float,
                          bound_range: tuple[float, float] | None) -> list[ColumnInterval]:
    r"""The single-model default with :data:`FEW_CLUSTERS` or more clusters: the clustered score interval.

    Returns the results with the ``chosen`` columns (rule ``clustered-score``) replaced.

    Every column of values in ``value_range`` with spread (other than 0/1 values, which keep their
    score interval, and degenerate columns) takes Wilson's interval (Wilson 1927) with Korn &
    Graubard's (1998) design-effect size from the clustered standard error and C - 1 degrees of
    freedom,

    .. math:: n_{\mathrm{eff}} = \frac{\hat p(1-\hat p)}{\widehat{SE}_{cl}^2}, \qquad
              n^* = n_{\mathrm{eff}}\,(z_{1-\alpha/2}/t_{C-1,\,1-\alpha/2})^2,

    on both sides, instead of the studentized cluster bootstrap; :func:`apply_near_end` then bounds
    the side away from a near end as it does without clusters. :math:`n_{\mathrm{eff}}` is not cut
    at N: pass@k and the like from n samples per problem vary less than 0/1 values of the same mean,
    and the cut (Korn & Graubard's, for 0/1 values) widened mid-range intervals by 20-30% and
    over-covered (99.2-100% for Beta(2, 2) pass@1 with n = 16 at 30 and 100 clusters, scratch run of
    500 simulations per cell). A column whose clustered standard error is 0 gets Kish's size
    :math:`n_B = N^2/\sum_c N_c^2`. Measured in the coverage study (1,000 simulated benchmarks per
    cell, docs/intervals-edges.md): in the 135 clustered ceiling, floor and point-mass cells with
    10-66 clusters the studentized cluster bootstrap (with the near-end rule) had 60 cells in
    93-98%, 71 above and 4 below, at 1.0x; this interval 109, 25 (98.1-98.9%) and 1 (91.5%), at
    0.95x the width on average (0.53x at 66 clusters near an end). The bootstrap's bounds stay in
    ``details["studentized_bounds"]`` and which of its tails was degenerate in
    ``details["studentized_degenerate_tail"]``.
    """
    low, high = _score_bounds(arr, codes, n_clusters, value_range, level, bound_range)
    return [r if not chosen[j] else r.with_bounds(
        float(low[j]), float(high[j]), studentized_bounds=(r.low, r.high),
        studentized_degenerate_tail=r.details.get("degenerate_tail", (False, False)),
        degenerate_tail=(False, False),  # the interval shown replaced no bootstrap-t tail
        scale=CLUSTERED_SCORE, bound_methods=(CLUSTERED_SCORE, CLUSTERED_SCORE)) for j, r in enumerate(results)]


#: The scale name of the single-model default's interval with 10 or more independent problems
#: (``details["scale"]``; :func:`apply_problem_score`).
PROBLEM_SCORE = "score (effective size)"




def apply_problem_score(results: list[ColumnInterval], chosen: NDArray[np.bool_], arr: NDArray[np.float64],
                        value_range: tuple[float, float], level: float,
                        bound_range: tuple[float, float] | None) -> list[ColumnInterval]:
    r"""The single-model default with 10 or more independent problems: the score bound toward the end.

    Returns the results with the ``chosen`` columns (rule ``score-toward-end``) replaced.

    Every column of values in ``value_range`` with spread (other than 0/1 values, which keep their
    score interval, and degenerate columns) takes, on the side toward the nearer end of the range
    (the upper bound when :math:`\hat p > 1/2` on [0, 1]; at exactly 1/2 neither side is), Wilson's bound (Wilson 1927) with Korn &
    Graubard's (1998) design-effect size and N - 1 degrees of freedom, not cut at N,

    .. math:: n_{\mathrm{eff}} = \frac{\hat p(1-\hat p)}{\widehat{SE}^2}, \qquad
              n^* = n_{\mathrm{eff}}\,(z_{1-\alpha/2}/t_{N-1,\,1-\alpha/2})^2,

    the clustered score interval of :func:`apply_clustered_score` with every problem its own
    cluster; on the side away from that end it takes the wider of that bound and the studentized
    (arcsine bootstrap-t) bound, and so does the end side when the mean is within
    :attr:`~._interval_policy.IntervalThresholds.very_near_end_problems` problems' worth of its end. :func:`apply_near_end` then bounds
    the interior side near an end as before.

    Why each side: near an end the bootstrap-t's end-side bound over-covers, because resamples
    with more values at the end have small standard errors and long t tails (the median upper t
    quantile was 4.5 for Beta(2, 2) pass@8 at N = 30, n = 16), while its interior bound follows the
    skew that a mean carried by a few problems has; the score bound on the interior side alone
    missed 6.1% below the truth in the floor regime's G-Pass@8 at N = 100, n = 64. Measured on the
    study's edge benchmarks (180 single-model cells at N >= 30 without clusters, 1,000 each; below
    93% / in band / above 98%, scratch recomputation with 499 resamples): the studentized interval
    1 / 144 / 35, the score interval on both sides 5 / 172 / 3, the wider bound on the interior side
    only 1 / 176 / 3 (ceiling pass@8, N = 30, n = 16: 91.6%, its misses on the end side), this rule
    0 / 175 / 5; with the end-side threshold at 1, 2 or 3 problems' worth 1 / 176 / 3, 0 / 172 / 8,
    0 / 159 / 21. On the main grid's populations (48 cells at N >= 30, other seeds) the studentized
    interval had 4 / 44 / 0, the wider bound on both sides 0 / 47 / 1, the others 0 / 48 / 0
    (docs/intervals-edges.md, "Independent problems: the score interval toward the end"). The
    studentized bounds stay in ``details["studentized_bounds"]``.
    """
    low, high = _score_bounds(arr, None, None, value_range, level, bound_range)
    p = end_share(arr.mean(axis=0), value_range)
    at_top, at_bottom = p > 0.5, p < 0.5  # at exactly 1/2 both sides are "away from the end": mirror-symmetric
    very_near = arr.shape[0] * np.minimum(p, 1.0 - p) < THRESHOLDS.very_near_end_problems
    out = []
    for j, r in enumerate(results):
        if not chosen[j]:
            out.append(r)
            continue
        tail = r.details.get("degenerate_tail", (False, False))
        methods = r.details.get("bound_methods", ("studentized", "studentized"))
        # the studentized bound is kept where it is the wider on the interior side, and on both sides very near an end
        keep_low = bool(r.low <= low[j] and (not at_bottom[j] or very_near[j]))
        keep_high = bool(r.high >= high[j] and (not at_top[j] or very_near[j]))
        out.append(r.with_bounds(
            r.low if keep_low else float(low[j]), r.high if keep_high else float(high[j]),
            studentized_bounds=(r.low, r.high), studentized_degenerate_tail=tail,
            degenerate_tail=(bool(tail[0]) and keep_low, bool(tail[1]) and keep_high), scale=PROBLEM_SCORE,
            bound_methods=(methods[0] if keep_low else PROBLEM_SCORE, methods[1] if keep_high else PROBLEM_SCORE)))
    return out


def apply_near_end(results: list[ColumnInterval], chosen: NDArray[np.bool_], arr: NDArray[np.float64], codes, n_clusters,
                   value_range: tuple[float, float], level: float,
                   bound_range: tuple[float, float] | None) -> list[ColumnInterval]:
    r"""The near-end rule of the default single-model interval (:func:`near_end_bounds`); returns the new results.

    A column whose mean lies within :attr:`~._interval_policy.IntervalThresholds.near_end_problems` problems' worth of an end of its
    range (other than 0/1 values and constant columns, whose score interval already counts N
    trials) gets, on the side away from that end, the wider of the studentized bound and the
    Wilson bound with at most twice the Bernoulli worst-case size; ``details["near_end"]`` says
    so, ``details["studentized_bounds"]`` keeps the bootstrap-t bounds (before the rule, and before
    :func:`apply_clustered_score` with clusters) and
    ``details["bound_methods"]`` names "score (near end)" when the score bound was the wider.
    Every such column records ``details["off_end_problems"]`` (:math:`n_B \min(\hat p, 1-\hat p)`);
    ``details["few_off_end"]`` marks those within :attr:`~._interval_policy.IntervalThresholds.warn_end_share` of an end and
    :attr:`~._interval_policy.IntervalThresholds.warn_off_end_problems` to :attr:`~._interval_policy.IntervalThresholds.warn_max_off_end_problems` problems' worth from it, which
    :func:`~kpass.metrics.mean_ci` warns about.
    """
    near_end, at_top, low, high, off_end = near_end_bounds(arr, codes, n_clusters, value_range, level)
    p = end_share(arr.mean(axis=0), value_range)
    close = np.minimum(p, 1.0 - p) < THRESHOLDS.warn_end_share
    out = []
    for j, r in enumerate(results):
        if not chosen[j]:
            out.append(r)
            continue
        entries: dict = {"off_end_problems": float(off_end[j])}
        if close[j] and THRESHOLDS.warn_off_end_problems <= off_end[j] < THRESHOLDS.warn_max_off_end_problems:
            entries["few_off_end"] = True
        if not near_end[j]:
            out.append(r.with_details(**entries))
            continue
        entries.update(near_end=True, studentized_bounds=r.details.get("studentized_bounds", (r.low, r.high)))
        methods = list(r.details.get("bound_methods", ("studentized", "studentized")))
        low_j, high_j = r.low, r.high
        if at_top[j] and low[j] < r.low:
            low_j = float(low[j] if bound_range is None else max(low[j], bound_range[0]))
            methods[0] = "score (near end)"
        elif not at_top[j] and high[j] > r.high:
            high_j = float(high[j] if bound_range is None else min(high[j], bound_range[1]))
            methods[1] = "score (near end)"
        out.append(r.with_bounds(low_j, high_j, **entries, bound_methods=tuple(methods)))
    return out
