"""The interval of every method for every column of per-problem values (private module).

:func:`interval_core` computes what :func:`~kpass.metrics.mean_ci` and
:func:`~kpass.metrics.paired_difference` return (estimate, bounds, standard error, p-value,
details) for "t", "clustered-t", the percentile and BCa bootstraps, the studentized bootstrap
(:class:`Studentized`, on the arcsine scale for values in a known range) and MOVER
(:func:`mover_interval`); the module docstring of :mod:`._intervals` describes each method.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from ._interval_types import ColumnInterval
from ._interval_policy import THRESHOLDS, PairedFacts, paired_default
from ._bootstrap import (
    ROUNDING_TOLERANCE,
    analytic_se,
    bca_acceleration,
    bca_bias_correction,
    bca_bounds,
    bca_levels,
    leave_one_unit_out_means,
    percentile_bounds,
    quantile_of_sorted,
    replicate_statistics,
)
from ._resampling import Streams, Units, resampled_sums
from ._score_intervals import (
    Fallback,
    LevelBounds,
    at_range_ends,
    clustered_model_limits,
    matched_pairs_bounds,
    mover_bounds,
    near_end_split_bounds,
    no_difference_bound,
    p_value_by_inversion,
    near_same_end,
    paired_score_fallback,
    score_fallback,
    saturated_differences,
    score_standard_error,
    split_score_bounds,
    t_bounds,
    within_share_of_same_end,
)

__all__ = ["Columns", "CoreRequest", "ModelLimits", "PairResamples", "PairedPieces", "Shown", "Studentized",
           "bootstrap_interval", "interval_core", "model_limits", "mover_interval", "paired_pieces", "paired_rules",
           "resample_pair", "t_interval"]


class Studentized:
    r"""The bootstrap-t distribution of every column and its interval at any level.

    Without ``scale_range`` the pivot is :math:`t^* = (\hat\theta^* - \hat\theta)/\widehat{SE}^*`
    and the interval :math:`\hat\theta - t^*_{q}\widehat{SE}`. With ``scale_range = (lo, hi)``
    (values known to lie in it) the pivot is taken on the variance-stabilized scale
    :math:`g(\theta) = \arcsin\sqrt{(\theta - lo)/(hi - lo)}` with the delta-method standard
    error :math:`g'(\theta)\,\widehat{SE}`, and the interval is mapped back with :math:`g^{-1}`
    (module docstring, "studentized"). Columns flagged ``two_point`` (every value at ``lo`` or
    ``hi``, also all at the same end) take both bounds from ``fallback`` (the score interval).
    ``interval(level)`` inverts
    the distribution of the pivot and replaces a degenerate tail (more than
    ``degenerate_fraction`` :math:`\times\,\alpha/2` of the resamples with less than one unit's
    worth of the observed variance on that side; :attr:`~._interval_policy.IntervalThresholds.single_degenerate_fraction` for a single
    mean, 1 for MOVER's per-model limits) by ``fallback``; the other bound is then the wider of the two.
    """

    def __init__(self, observed: tuple[NDArray[np.float64], NDArray[np.float64]],
                 replicates: tuple[NDArray[np.float64], NDArray[np.float64]], n_units: int, constant, tol,
                 fallback: Fallback, scale_range: tuple[float, float] | None = None, two_point=None,
                 few_clusters: bool = False, degenerate_fraction: float = 1.0):
        estimate, se = observed  # the estimates and their (t or clustered) standard errors
        boot_mean, boot_se = replicates  # the resamples' mean deviations and standard errors
        pile = np.where(np.abs(boot_mean) <= tol, 0.0, np.copysign(np.inf, boot_mean))
        if scale_range is None:
            with np.errstate(divide="ignore", invalid="ignore"):
                t_star = boot_mean / boot_se
            self.t_star = np.where(boot_se > 0, t_star, pile)
            self.center, self.scale_se, self.back = estimate, se, None
        else:
            lo, hi = scale_range
            width = hi - lo
            p = np.clip((estimate - lo) / width, 0.0, 1.0)
            p_star = np.clip((estimate + boot_mean - lo) / width, 0.0, 1.0)
            spread_star = p_star * (1.0 - p_star)
            with np.errstate(divide="ignore", invalid="ignore"):
                # (g(p*) - g(p)) / (g'(p*) SE*), g'(p) = 1 / (2 sqrt(p (1 - p)))
                t_star = (np.arcsin(np.sqrt(p_star)) - np.arcsin(np.sqrt(p))) * 2.0 * np.sqrt(spread_star) / (boot_se / width)
                self.scale_se = np.where(p * (1.0 - p) > 0, se / width / (2.0 * np.sqrt(p * (1.0 - p))), 0.0)
            self.t_star = np.where((boot_se > 0) & (spread_star > 0), t_star, pile)
            self.center = np.arcsin(np.sqrt(p))

            def back(y):
                return lo + width * np.sin(np.clip(y, 0.0, np.pi / 2.0)) ** 2

            self.back = back
        self.t_sorted = np.sort(self.t_star, axis=0)
        # degenerate resamples: less than one unit's worth of the observed variance
        degenerate = boot_se * np.sqrt(n_units) <= se
        self.share_above = np.mean(degenerate & (boot_mean > tol), axis=0)  # drive the lower bound
        self.share_below = np.mean(degenerate & (boot_mean < -tol), axis=0)  # drive the upper bound
        self.infinite_share = np.mean(~np.isfinite(self.t_star), axis=0)
        self.estimate, self.se, self.constant, self.fallback = estimate, se, constant, fallback
        # 0/1 values, including a column with every value at the same end of the range
        self.two_point = np.zeros(estimate.shape, dtype=bool) if two_point is None else np.asarray(two_point)
        # columns whose both bounds come from the score interval: 0/1 values, and every column
        # with fewer than FEW_CLUSTERS clusters (the few-cluster rule)
        self.few_clusters = bool(few_clusters) and fallback.name in ("score", "mover-score")
        self.score_only = self.two_point | (self.few_clusters & ~constant)
        self.degenerate_fraction = degenerate_fraction

    def interval(self, level: NDArray[np.float64], sources: bool = True, raw_legs: bool = False) -> dict[str, NDArray[Any]]:
        r"""Bounds at ``level`` (per column) and, with ``sources``, the method of each bound.

        ``raw_legs``: the quantiles of the (possibly arcsine-scale) pivot times the raw standard
        error, :math:`\hat\theta - t^*_q \widehat{SE}`, without mapping back through
        :math:`g^{-1}` (the legs that :func:`mover_interval` combines).
        """
        alpha = 1.0 - np.asarray(level, dtype=np.float64)
        q_low = quantile_of_sorted(self.t_sorted, alpha / 2.0)
        q_high = quantile_of_sorted(self.t_sorted, 1.0 - alpha / 2.0)
        with np.errstate(invalid="ignore"):
            if raw_legs or self.back is None:
                low = self.estimate - q_high * self.se
                high = self.estimate - q_low * self.se
            else:
                low = self.back(self.center - q_high * self.scale_se)
                high = self.back(self.center - q_low * self.scale_se)
        two_point = self.score_only
        limit = self.degenerate_fraction * alpha / 2.0
        replace_low = ((self.share_above > limit) | ~np.isfinite(q_high)) & ~self.constant & ~two_point
        replace_high = ((self.share_below > limit) | ~np.isfinite(q_low)) & ~self.constant & ~two_point
        replaced = replace_low | replace_high
        low_source: NDArray[np.object_] | None = None
        high_source: NDArray[np.object_] | None = None
        if sources:
            low_source = np.full(low.shape, "studentized", dtype=object)
            high_source = low_source.copy()
        if replaced.any() or two_point.any():
            fallback_low, fallback_high = self.fallback.bounds(level)
            # degenerate side: the fallback; other side: the wider of the two; 0/1 values: the fallback
            low = np.where(replace_low | two_point, fallback_low, np.where(replaced, np.minimum(low, fallback_low), low))
            high = np.where(replace_high | two_point, fallback_high, np.where(replaced, np.maximum(high, fallback_high), high))
            if low_source is not None and high_source is not None:
                low_source[(replaced | two_point) & (low == fallback_low)] = self.fallback.name
                high_source[(replaced | two_point) & (high == fallback_high)] = self.fallback.name
        return {"low": low, "high": high, "q_low": q_low, "q_high": q_high, "replace_low": replace_low,
                "replace_high": replace_high, "replaced": replaced, "low_source": low_source, "high_source": high_source}

    def bounds(self, level: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        out = self.interval(level, sources=False)
        return out["low"], out["high"]

    def scale_name(self) -> NDArray[Any]:
        """Per column: the scale of the pivot, or "score" for 0/1 values."""
        name = "identity" if self.back is None else "arcsine"
        scale = np.where(self.score_only, "score (few clusters)", name)
        return np.where(self.two_point, "score (0/1 values)", scale)


@dataclass(frozen=True)
class CoreRequest:
    """What :func:`interval_core` is asked for: the method, its options and the default's inputs.

    ``fallback`` gives the bounds that replace a degenerate tail of the studentized bootstrap
    (module docstring of :mod:`._intervals`); ``None`` uses the t (or clustered-t) bounds. ``paired``
    is ``(a, b, range of a and b)`` for ``method="mover"`` (the values are then ``a - b``).
    ``scale_range`` (values known to lie in it) puts the studentized pivot on the arcsine scale and
    gives 0/1 values the score interval. With ``test_zero`` the p-value of "0" inverts the interval
    the method shows in its level (the t test for ``"t"``/``"clustered-t"``).
    ``no_difference_range`` (paired differences of two different models, each model's values in
    this range) gives a column of differences all 0 the bound of "no difference seen on N problems"
    (:func:`no_difference_bound`) instead of [0, 0]. ``few_clusters`` (fewer than
    :data:`FEW_CLUSTERS` clusters) applies the few-cluster rule of the defaults: both bounds from the
    score interval. ``degenerate_fraction`` (``"auto"`` only): a tail is degenerate when more than this
    fraction of alpha/2 of the resamples are degenerate on its side
    (:attr:`~._interval_policy.IntervalThresholds.single_degenerate_fraction` for a single mean, 1 otherwise).
    """

    method: str
    level: float
    n_resamples: int
    rng: Any
    bounds: tuple[float, float] | None
    max_chunk_elements: int
    test_zero: bool = False
    fallback: Fallback | None = None
    paired: tuple[NDArray[np.float64], NDArray[np.float64], tuple[float, float] | None] | None = None
    scale_range: tuple[float, float] | None = None
    no_difference_range: tuple[float, float] | None = None
    few_clusters: bool = False
    degenerate_fraction: float = 1.0


@dataclass(frozen=True)
class Columns:
    """The columns of per-problem values (canonical row order) and what every method needs of them."""

    values: NDArray[np.float64]
    codes: NDArray[np.int64] | None
    n_clusters: int | None
    estimate: NDArray[np.float64]
    constant: NDArray[np.bool_]
    centered: NDArray[np.float64]
    units: Units
    se: NDArray[np.float64]

    @classmethod
    def of(cls, values: NDArray[np.float64], codes: NDArray[np.int64] | None, n_clusters: int | None,
           need_se: bool) -> Columns:
        """Means, constant columns, centered values, resampling units and the t (or clustered) standard errors."""
        estimate = values.mean(axis=0)
        constant = np.ptp(values, axis=0) == 0
        centered = values - estimate
        centered[:, constant] = 0.0
        estimate = np.where(constant, values[0], estimate)
        units = Units(centered, codes, need_se=need_se)
        return cls(values, codes, n_clusters, estimate, constant, centered, units, analytic_se(units, values.shape[0], constant))


@dataclass(frozen=True)
class Shown:
    """The bounds a method shows for every column, its standard errors and p-values (NaN without a test)."""

    low: NDArray[np.float64]
    high: NDArray[np.float64]
    standard_error: NDArray[np.float64]
    p_values: NDArray[np.float64]
    two_point: NDArray[np.bool_] | None = None
    rules: NDArray[np.object_] | None = None


def interval_core(values: NDArray[np.float64], codes: NDArray[np.int64] | None, n_clusters: int | None,
                  request: CoreRequest) -> list[ColumnInterval]:
    """Compute the interval of ``request.method`` for every column of ``values`` (and ``codes``, in
    canonical row order: :func:`canonical_order`); one :class:`ColumnInterval` per column."""
    columns = Columns.of(values, codes, n_clusters, need_se=request.method == "auto")
    details: list[dict[str, Any]] = [{"resampling": "clusters" if codes is not None else "problems"}
                                     for _ in range(values.shape[1])]
    if request.method in ("t", "clustered-t"):
        shown = t_interval(columns, request, details)
    elif request.method == "mover":
        shown = mover_interval(columns, request, details)
    else:
        shown = bootstrap_interval(columns, request, details)
    return _column_results(columns, request, shown, details)


def t_interval(columns: Columns, request: CoreRequest, details: list[dict[str, Any]]) -> Shown:
    r"""``"t"`` and ``"clustered-t"``: :math:`\hat\theta \pm t_{df,\,1-\alpha/2}\,\widehat{SE}` with df N - 1 or
    C - 1; with ``test_zero`` the p-value of the t test of 0."""
    n = columns.values.shape[0]
    if request.method == "t":
        df = n - 1
    elif columns.n_clusters is not None:
        df = columns.n_clusters - 1
    else:
        raise ValueError("method 'clustered-t' needs `clusters`.")
    estimate, se = columns.estimate, columns.se
    critical = float(stats.t.ppf(1.0 - (1.0 - request.level) / 2.0, df))
    for d in details:
        d.update(df=int(df), critical_value=critical, standard_error_kind="clustered" if request.method == "clustered-t" else "t")
    p_values = np.full(estimate.shape, np.nan)
    if request.test_zero:
        with np.errstate(divide="ignore", invalid="ignore"):
            t_obs = estimate / se
        p_values = np.where(se > 0, 2.0 * stats.t.sf(np.abs(t_obs), df), np.where(estimate == 0, 1.0, 0.0))
    return Shown(estimate - critical * se, estimate + critical * se, se, p_values)


def bootstrap_interval(columns: Columns, request: CoreRequest, details: list[dict[str, Any]]) -> Shown:
    """``"auto"`` (the studentized bootstrap and its fallbacks), ``"bootstrap"`` and ``"bca"``: resample the units
    once and invert the method's bootstrap distribution (with ``test_zero``, the p-value by inversion)."""
    n, k = columns.values.shape
    streams = Streams(request.rng)
    parts, draw_info = resampled_sums(columns.units, request.n_resamples, streams, request.max_chunk_elements)
    boot_mean, boot_se = replicate_statistics(columns.units, parts, n)
    for d, info in zip(details, draw_info):
        d.update(n_resamples=request.n_resamples, seed=streams.seed, **info)
    two_point = None
    shown_interval: LevelBounds
    if request.method == "auto":
        studentized, standard_error, two_point, (low, high) = _studentized(columns, request, boot_mean, boot_se, details)
        shown_interval = studentized.bounds
    else:
        shown_interval = _percentile(columns, request.method, boot_mean, request.level, details)
        standard_error = boot_mean.std(axis=0, ddof=1)
        low, high = shown_interval(np.full(k, request.level))
    p_values = p_value_by_inversion(shown_interval, columns.estimate, k) if request.test_zero else np.full(k, np.nan)
    return Shown(low, high, standard_error, p_values, two_point=two_point)


def _studentized(columns: Columns, request: CoreRequest, boot_mean: NDArray[np.float64], boot_se: NDArray[np.float64],
                 details: list[dict[str, Any]]) -> tuple[Studentized, NDArray[np.float64], NDArray[np.bool_] | None,
                                                         tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """The bootstrap-t of every column (arcsine scale with a known range), its standard error, the 0/1
    columns and the bounds at ``request.level``."""
    n, k = columns.values.shape
    estimate, se, scale_range = columns.estimate, columns.se, request.scale_range
    fallback = request.fallback
    if fallback is None:
        fallback = Fallback(t_bounds(estimate, se, columns.units.n_units - 1),
                            "clustered-t" if columns.codes is not None else "t")
    tol = ROUNDING_TOLERANCE * np.maximum(np.abs(columns.centered).max(axis=0), 1e-300)
    two_point = None if scale_range is None else at_range_ends(columns.values, scale_range)
    studentized = Studentized((estimate, se), (boot_mean, boot_se), columns.units.n_units, columns.constant, tol, fallback,
                              scale_range, two_point, request.few_clusters, degenerate_fraction=request.degenerate_fraction)
    scales = studentized.scale_name()
    out = studentized.interval(np.full(k, request.level))
    standard_error = se
    if studentized.few_clusters and scale_range is not None and request.paired is None:
        standard_error = score_standard_error(estimate, se, n, scale_range)
    for j, d in enumerate(details):
        d.update(
            standard_error_kind="clustered" if columns.codes is not None else "t",
            t_quantiles=(float(out["q_low"][j]), float(out["q_high"][j])),
            share_infinite_t=float(studentized.infinite_share[j]),
            degenerate_share=(float(studentized.share_below[j]), float(studentized.share_above[j])),
            bound_methods=(out["low_source"][j], out["high_source"][j]),
            degenerate_tail=(bool(out["replace_low"][j]), bool(out["replace_high"][j])),
            scale=str(scales[j]),
        )
    return studentized, standard_error, two_point, (out["low"], out["high"])


def _percentile(columns: Columns, method: str, boot_mean: NDArray[np.float64], level: float,
                details: list[dict[str, Any]]) -> LevelBounds:
    """The percentile (``"bootstrap"``) or BCa (Efron 1987 Eqs. 2.3 and 6.6) bounds at any level."""
    k = boot_mean.shape[1]
    estimate = columns.estimate
    sorted_mean = np.sort(boot_mean, axis=0)
    if method == "bootstrap":

        def percentile(level_k):
            low_k, high_k = percentile_bounds(sorted_mean, level_k)
            return estimate + low_k, estimate + high_k

        for d in details:
            d.update(standard_error_kind="bootstrap")
        return percentile
    z0, share, share_clipped = bca_bias_correction(boot_mean, np.zeros(k))
    acceleration = bca_acceleration(leave_one_unit_out_means(columns.units, columns.values.shape[0]))

    def bca(level_k):
        low_k, high_k, _ = bca_bounds(sorted_mean, z0, acceleration, level_k)
        return estimate + low_k, estimate + high_k

    adjusted = bca_levels(z0, acceleration, np.full(k, level))
    for j, d in enumerate(details):
        d.update(bias_correction=float(z0[j]), acceleration=float(acceleration[j]),
                 adjusted_levels=(float(adjusted[0][j]), float(adjusted[1][j])),
                 bias_share_clipped=bool(share[j] != share_clipped[j]), standard_error_kind="bootstrap")
    return bca


def _constant_columns(columns: Columns, request: CoreRequest, shown: Shown,
                      details: list[dict[str, Any]]) -> tuple[Shown, NDArray[np.bool_], NDArray[np.bool_], NDArray[np.bool_]]:
    """Constant columns: pinned to their value, except every value at one end of a known range (all 0 or
    all 1: the default keeps its score interval; MOVER of one model all at the top and the other all at
    the bottom keeps its interval) and differences all 0 of two different models (the no-difference bound).
    Returns the shown bounds and the masks ``pinned``, ``end_constant``, ``no_difference``."""
    constant, estimate, k = columns.constant, columns.estimate, columns.values.shape[1]
    end_constant = constant & (False if shown.two_point is None else shown.two_point)
    mover_range = request.paired[2] if request.method == "mover" and request.paired is not None else None
    if mover_range is not None:
        end_constant = constant & (np.abs(estimate) == mover_range[1] - mover_range[0])
    no_difference = np.zeros(k, dtype=bool)
    if request.no_difference_range is not None:
        no_difference = constant & (estimate == 0.0)
        end_constant = end_constant | no_difference
    pinned = constant & ~end_constant
    low = np.where(pinned, estimate, shown.low)
    high = np.where(pinned, estimate, shown.high)
    if request.no_difference_range is not None and no_difference.any():
        n = columns.values.shape[0]
        bound = no_difference_bound(n, columns.codes, request.level, request.no_difference_range)
        low = np.where(no_difference, -bound, low)
        high = np.where(no_difference, bound, high)
        for j in np.flatnonzero(no_difference).tolist():
            details[j].update(bound_methods=("score", "score"), no_difference_bound=float(bound), n_problems_seen=n)
    p_values = shown.p_values
    if request.test_zero:
        p_values = np.where(pinned, np.where(estimate == 0, 1.0, 0.0), p_values)
        p_values = np.where(no_difference, 1.0, p_values)
    if request.method != "mover":
        rules = np.full(k, request.method, dtype=object)
    else:  # the paired default names what the engine did with a constant difference
        assert shown.rules is not None  # mover_interval names every column's rule
        rules = np.where(pinned, "constant", np.where(no_difference, "no-difference-bound", shown.rules))
    standard_error = np.where(constant, 0.0, shown.standard_error)
    return Shown(low, high, standard_error, p_values, shown.two_point, rules), pinned, end_constant, no_difference


def _column_results(columns: Columns, request: CoreRequest, shown: Shown,
                    details: list[dict[str, Any]]) -> list[ColumnInterval]:
    """One :class:`ColumnInterval` per column: constant columns resolved, bounds clipped to ``request.bounds``."""
    shown, pinned, end_constant, no_difference = _constant_columns(columns, request, shown, details)
    rules = np.full(len(details), "", dtype=object) if shown.rules is None else shown.rules
    bounds = request.bounds
    results = []
    for j, d in enumerate(details):
        lo, hi = float(shown.low[j]), float(shown.high[j])
        if not (np.isfinite(lo) and np.isfinite(hi)):
            d["degenerate"] = "infinite bound"
        clipped = False
        if bounds is not None:
            new_lo, new_hi = max(lo, bounds[0]), min(hi, bounds[1])
            clipped = (new_lo != lo) or (new_hi != hi)
            lo, hi = new_lo, new_hi
        d.update(bounds=bounds, clipped=clipped)
        if no_difference[j]:
            d["degenerate"] = "no difference on any problem"
        elif columns.constant[j]:
            d["degenerate"] = "constant values at an end of the range" if end_constant[j] else "constant values"
        est = float(columns.estimate[j])
        if not lo <= est <= hi:
            d["estimate_outside"] = True
        results.append(ColumnInterval(
            estimate=est, low=lo, high=hi, standard_error=float(shown.standard_error[j]), p_value=float(shown.p_values[j]),
            constant=bool(pinned[j]), constant_at_end=bool(end_constant[j] and not no_difference[j]),
            no_difference=bool(no_difference[j]), rule=str(rules[j]), details=d))
    return results


def paired_rules(stacked, differences, saturated, codes, n_clusters, model_range, few_clusters):
    """The paired default's rule of every column (:func:`~._interval_policy.paired_default`); with 30 or
    more clusters and values in a known range the clustered score limits of the models
    (:func:`clustered_model_limits`: ``(bounds, uncapped bounds, near an end)``), else ``None``; and with
    10 to 29 clusters whether both models are near the same end (:func:`near_same_end`)."""
    n, k = differences.shape
    zeros = np.zeros(k, dtype=bool)
    within = zeros if model_range is None else within_share_of_same_end(stacked, model_range)
    both_at_ends, near_same, model_near_end = zeros, zeros, zeros
    clustered_limits = None
    if model_range is not None:
        at_ends = at_range_ends(stacked, model_range)
        both_at_ends = at_ends[:k] & at_ends[k:]
        if codes is not None and not few_clusters:
            if (n_clusters or 0) >= THRESHOLDS.paired_t_min_clusters:
                clustered_limits = clustered_model_limits(stacked, codes, n_clusters, model_range)
                constant_model = np.ptp(stacked, axis=0) == 0
                clustered = ~constant_model & ~at_ends & np.tile(clustered_limits[2][:k] | clustered_limits[2][k:], 2)
                model_near_end = clustered[:k] | clustered[k:]
            else:
                near_same = near_same_end(stacked, codes, n_clusters, model_range)
    constant = np.ptp(differences, axis=0) == 0
    facts = [PairedFacts(n_problems=n, n_clusters=n_clusters, known_range=model_range is not None,
                         both_at_range_ends=bool(both_at_ends[j]), constant_difference=bool(constant[j]),
                         saturated=bool(saturated[j]), within_share_of_same_end=bool(within[j]),
                         near_same_end=bool(near_same[j]), model_near_end=bool(model_near_end[j])) for j in range(k)]
    return np.array([paired_default(f) for f in facts], dtype=object), clustered_limits, near_same


@dataclass(frozen=True)
class PairResamples:
    """Both models' columns (and, for the ``bootstrap-t-differences`` columns, their differences)
    resampled together: each model's bootstrap-t, the differences' own, and the correlation of the means."""

    per_model: Studentized
    own: Studentized | None
    own_columns: NDArray[np.intp]
    stacked: NDArray[np.float64]
    model_estimate: NDArray[np.float64]
    model_se: NDArray[np.float64]
    model_constant: NDArray[np.bool_]
    two_point: NDArray[np.bool_] | None
    correlation: NDArray[np.float64]
    n_units: int
    seed: Any
    draw_info: list[dict[str, Any]]


def resample_pair(columns: Columns, request: CoreRequest, own_columns: NDArray[np.intp]) -> PairResamples:
    """Resample model a's column j, model b's (and their difference for ``own_columns``) with the same
    draws, as a call with that column alone would; every model's bootstrap-t on the raw-legs scale."""
    assert request.paired is not None
    arr_a, arr_b, model_range = request.paired
    codes, n_clusters, (n, k) = columns.codes, columns.n_clusters, arr_a.shape
    stacked = np.concatenate([arr_a, arr_b], axis=1)
    resampled = np.concatenate([stacked, columns.values[:, own_columns]], axis=1)
    resampled_constant = np.ptp(resampled, axis=0) == 0
    resampled_estimate = resampled.mean(axis=0)
    centered = np.where(resampled_constant, 0.0, resampled - resampled_estimate)
    model_constant = resampled_constant[: 2 * k]
    model_estimate = np.where(model_constant, stacked[0], resampled_estimate[: 2 * k])
    own_position = dict(zip(own_columns.tolist(), range(2 * k, 2 * k + own_columns.size)))
    groups = [[j, k + j] + ([own_position[j]] if j in own_position else []) for j in range(k)]
    units = Units(centered, codes, need_se=True, groups=groups)
    model_se = analytic_se(units, n, resampled_constant)[: 2 * k]
    streams = Streams(request.rng)
    parts, draw_info = resampled_sums(units, request.n_resamples, streams, request.max_chunk_elements)
    all_boot_mean, all_boot_se = replicate_statistics(units, parts, n)
    all_tol = ROUNDING_TOLERANCE * np.maximum(np.abs(centered).max(axis=0), 1e-300)
    own = None
    if own_columns.size:  # the differences' bootstrap-t as method "auto" gives it (the paired score fallback)
        own = Studentized((columns.estimate[own_columns], columns.se[own_columns]),
                          (all_boot_mean[:, 2 * k:], all_boot_se[:, 2 * k:]), units.n_units, resampled_constant[2 * k:], all_tol[2 * k:],
                          paired_score_fallback(arr_a[:, own_columns], arr_b[:, own_columns], codes, n_clusters),
                          None, None, False)
    model_fallback = score_fallback(stacked, codes, n_clusters, model_range, design_effect=request.few_clusters)
    if model_fallback is None:
        model_fallback = Fallback(t_bounds(model_estimate, model_se, units.n_units - 1),
                                  "clustered-t" if codes is not None else "t")
    two_point = None if model_range is None else at_range_ends(stacked, model_range)
    per_model = Studentized((model_estimate, model_se), (all_boot_mean[:, : 2 * k], all_boot_se[:, : 2 * k]), units.n_units,
                            model_constant, all_tol[: 2 * k], model_fallback, model_range, two_point, request.few_clusters)
    se_a, se_b = model_se[:k], model_se[k:]
    with np.errstate(divide="ignore", invalid="ignore"):
        correlation = np.where((se_a > 0) & (se_b > 0), (se_a**2 + se_b**2 - columns.se**2) / (2.0 * se_a * se_b), 0.0)
    return PairResamples(per_model, own, own_columns, stacked, model_estimate, model_se, model_constant, two_point,
                         np.clip(correlation, -1.0, 1.0), units.n_units, streams.seed, draw_info)


@dataclass(frozen=True)
class ModelLimits:
    """Each model's limits at any level: its bootstrap-t legs on the raw scale (score limits for 0/1 values
    and a degenerate tail) or, with 30 or more clusters and a model of the pair near an end (#16), its
    clustered score interval capped near the end (:func:`clustered_model_limits`), clipped to the range."""

    per_model: Studentized
    model_range: tuple[float, float] | None
    clustered_models: NDArray[np.bool_]
    model_score: LevelBounds | None = None
    model_uncapped: LevelBounds | None = None

    def at(self, levels_2k: NDArray[np.float64], sources: bool = True) -> dict[str, NDArray[Any]]:
        out = self.per_model.interval(levels_2k, sources, raw_legs=True)
        clustered = self.clustered_models
        if self.model_score is not None and self.model_uncapped is not None and clustered.any():
            score_low, score_high = self.model_score(levels_2k)
            out["low"] = np.where(clustered, score_low, out["low"])
            out["high"] = np.where(clustered, score_high, out["high"])
            out["replace_low"] = out["replace_low"] & ~clustered  # no bootstrap-t tail was replaced
            out["replace_high"] = out["replace_high"] & ~clustered
            if sources:  # "near end" where the cap set the bound (it is wider than the clustered score bound)
                uncapped_low, uncapped_high = self.model_uncapped(levels_2k)
                for side, capped in (("low_source", score_low < uncapped_low), ("high_source", score_high > uncapped_high)):
                    name = np.where(capped, "score (clustered, near end)", "score (clustered)")
                    out[side] = np.where(clustered, name, out[side]).astype(object)
        if self.model_range is not None:
            low_end, high_end = self.model_range
            out["low"] = np.minimum(np.maximum(out["low"], low_end), high_end)
            out["high"] = np.minimum(np.maximum(out["high"], low_end), high_end)
        return out


def model_limits(resamples: PairResamples, model_range: tuple[float, float] | None,
                 clustered_limits: tuple[LevelBounds, LevelBounds, NDArray[np.bool_]] | None) -> tuple[ModelLimits, NDArray[Any]]:
    """The models' limits and scales (``"score (clustered)"`` where the clustered score limits replace the legs:
    constant columns and 0/1 values keep their score interval of n_B trials, mid-range pairs the bootstrap's)."""
    k2 = resamples.model_estimate.shape[0]
    scales = resamples.per_model.scale_name()
    if clustered_limits is None:
        return ModelLimits(resamples.per_model, model_range, np.zeros(k2, dtype=bool)), scales
    model_score, model_uncapped, model_near_end = clustered_limits
    k = k2 // 2
    two_point = np.zeros(k2, dtype=bool) if resamples.two_point is None else resamples.two_point
    clustered = ~resamples.model_constant & ~two_point & np.tile(model_near_end[:k] | model_near_end[k:], 2)
    scales = np.where(clustered, "score (clustered)", scales).astype(object)
    return ModelLimits(resamples.per_model, model_range, clustered, model_score, model_uncapped), scales


def _scaled(bounds: LevelBounds, width: float) -> LevelBounds:
    def scaled(level_k: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        low_k, high_k = bounds(level_k)
        return low_k * width, high_k * width

    return scaled


@dataclass(frozen=True)
class PairedPieces:
    """The parts the paired default combines per column, at any level (docs/intervals.md "Rules"): MOVER of the
    models, the t interval of the differences, their own bootstrap-t, the split score interval of the gains and
    losses, its near-end bound and the matched-pairs interval; :meth:`shown` applies each column's rule."""

    limits: ModelLimits
    estimate: NDArray[np.float64]
    resamples: PairResamples
    t_of_differences: LevelBounds
    of_differences: NDArray[np.bool_]
    of_studentized: NDArray[np.bool_]
    binary: NDArray[np.bool_]
    near_end_columns: NDArray[np.bool_]
    split: LevelBounds | None = None
    near_end: LevelBounds | None = None
    matched: LevelBounds | None = None

    def mover(self, level_k: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """MOVER (Zou & Donner 2008) of the two models' limits with the correlation of their means."""
        k, model_estimate = level_k.shape[0], self.resamples.model_estimate
        out = self.limits.at(np.concatenate([level_k, level_k]), sources=False)
        down = np.maximum(model_estimate - out["low"], 0.0)
        up = np.maximum(out["high"] - model_estimate, 0.0)
        return mover_bounds(self.estimate, down[:k], up[:k], down[k:], up[k:], self.resamples.correlation)

    def at(self, level_k: NDArray[np.float64]) -> dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]]:
        """Every part at ``level_k`` (MOVER first: a tie of bounds keeps its name)."""
        out = {"mover": self.mover(level_k)}
        if self.split is None:
            return out
        out["split-score"] = self.split(level_k)
        out["t"] = self.t_of_differences(level_k)
        own, own_columns = self.resamples.own, self.resamples.own_columns
        if own is not None:
            own_low, own_high = np.full(level_k.shape[0], np.nan), np.full(level_k.shape[0], np.nan)
            own_low[own_columns], own_high[own_columns] = own.bounds(level_k[own_columns])
            out["studentized"] = own_low, own_high
        if self.near_end is not None:
            out["split-score (near end)"] = self.near_end(level_k)
        if self.matched is not None:
            out["matched-pairs score"] = self.matched(level_k)
        return out

    def shown(self, pieces: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]]
              ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The interval each column's rule shows from the parts."""
        low_k, high_k = pieces["mover"]
        if self.split is None:
            return low_k, high_k
        split_low, split_high = pieces["split-score"]
        t_low, t_high = pieces["t"]
        low_k = np.where(self.of_differences, t_low, low_k)
        high_k = np.where(self.of_differences, t_high, high_k)
        if "studentized" in pieces:
            own_low, own_high = pieces["studentized"]
            low_k = np.where(self.of_studentized, np.fmin(own_low, t_low), low_k)
            high_k = np.where(self.of_studentized, np.fmax(own_high, t_high), high_k)
        if self.near_end is not None:
            near_low, near_high = pieces["split-score (near end)"]
            low_k = np.where(self.near_end_columns, np.fmin(low_k, near_low), low_k)
            high_k = np.where(self.near_end_columns, np.fmax(high_k, near_high), high_k)
        low_k, high_k = np.fmin(low_k, split_low), np.fmax(high_k, split_high)
        if "matched-pairs score" in pieces:
            matched_low, matched_high = pieces["matched-pairs score"]
            low_k = np.where(self.binary, matched_low, low_k)
            high_k = np.where(self.binary, matched_high, high_k)
        return low_k, high_k

    def bounds(self, level_k: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return self.shown(self.at(level_k))


def paired_pieces(columns: Columns, request: CoreRequest, rules: NDArray[np.object_], saturated: NDArray[np.bool_],
                  near_same: NDArray[np.bool_], resamples: PairResamples, limits: ModelLimits) -> PairedPieces:
    """The parts of every column and the masks of their rules. Values in [0, 1] (#16) are widened to the split
    score interval (with 10-29 clusters of two models near the same end without its df reduction, which the
    clustered t quantile already carries); saturated ones without clusters also to the near-end split bound
    where under 75% of the problems differ. Under the few-cluster rule only MOVER of the score intervals."""
    differences, codes, n_clusters = columns.values, columns.codes, columns.n_clusters
    model_range = request.paired[2] if request.paired is not None else None
    base = PairedPieces(limits, columns.estimate, resamples, t_bounds(columns.estimate, columns.se, resamples.n_units - 1),
                        of_differences=rules == "t-split-score", of_studentized=rules == "bootstrap-t-differences",
                        binary=np.zeros(differences.shape[1], dtype=bool),
                        near_end_columns=saturated & ((differences != 0.0).mean(axis=0)
                                                      < THRESHOLDS.paired_near_end_differing_share))
    if model_range is None or resamples.per_model.few_clusters:
        return base
    shared_end_t = ~saturated & near_same  # (near_same: 10 to 29 clusters only)
    split = split_score_bounds(differences, codes, n_clusters, reduce_for_df=~shared_end_t)
    near_end = near_end_split_bounds(differences, None, None) if codes is None else None
    binary = rules == "matched-pairs"
    matched = None
    if binary.any():
        width = model_range[1] - model_range[0]
        matched = _scaled(matched_pairs_bounds(differences / width, codes, n_clusters), width)
    return replace(base, binary=binary, split=split, near_end=near_end, matched=matched)


def mover_interval(columns: Columns, request: CoreRequest, details: list[dict[str, Any]]) -> Shown:
    r"""MOVER interval of ``mean(a) - mean(b)`` and the rest of the paired default (method "mover").

    Both models are resampled with the same resamples (:func:`resample_pair`); each model's limits
    (:class:`ModelLimits`) and the correlation of the two means,
    :math:`r = (SE_a^2 + SE_b^2 - SE_d^2) / (2 SE_a SE_b)`, give
    :math:`L = \hat d - \sqrt{(\hat\theta_a - l_a)^2 + (u_b - \hat\theta_b)^2 - 2r(\hat\theta_a - l_a)(u_b - \hat\theta_b)}`
    and :math:`U` likewise (Zou & Donner 2008). For values in [0, 1] the interval shown follows each
    column's rule (:func:`~._interval_policy.paired_default`; :class:`PairedPieces`). The p-value inverts
    the interval shown in its level.
    """
    assert request.paired is not None
    arr_a, arr_b, model_range = request.paired
    n, k = arr_a.shape
    stacked = np.concatenate([arr_a, arr_b], axis=1)
    saturated = saturated_differences(columns.values)
    rules, clustered_limits, near_same = paired_rules(stacked, columns.values, saturated, columns.codes, columns.n_clusters,
                                                      model_range, request.few_clusters)
    resamples = resample_pair(columns, request, np.flatnonzero(rules == "bootstrap-t-differences"))
    limits, scales = model_limits(resamples, model_range, clustered_limits)
    pieces = paired_pieces(columns, request, rules, saturated, near_same, resamples, limits)
    levels = np.full(k, request.level)
    parts = pieces.at(levels)
    low, high = pieces.shown(parts)
    _mover_details(pieces, parts, (low, high), scales, saturated, columns, request, details)
    p_values = p_value_by_inversion(pieces.bounds, columns.estimate, k) if request.test_zero else np.full(k, np.nan)
    se = columns.se
    if resamples.per_model.few_clusters and model_range is not None:
        # the standard error the two score intervals imply, combined as MOVER combines them
        effective = score_standard_error(resamples.model_estimate, resamples.model_se, n, model_range)
        ea, eb = effective[:k], effective[k:]
        se = np.sqrt(np.maximum(ea**2 + eb**2 - 2.0 * resamples.correlation * ea * eb, 0.0))
    return Shown(low, high, se, p_values, rules=rules)


def _part(pair: tuple[NDArray[np.float64], NDArray[np.float64]] | None, j: int) -> tuple[float, float] | None:
    """Column j of a part, or None where it does not apply (never a NaN pair in ``details``)."""
    if pair is None:
        return None
    lo, hi = float(pair[0][j]), float(pair[1][j])
    return None if np.isnan(lo) or np.isnan(hi) else (lo, hi)


def _bound_source(parts, shown, own_shown, own_index, j: int, side: int) -> str:
    """The part that set bound ``side`` of column j (the differences' own bootstrap-t names its fallback)."""
    value = shown[side][j]
    for name, pair in parts.items():  # mover first: a tie keeps the name of the method
        if pair[side][j] == value:
            if name == "studentized" and own_shown is not None:  # or its fallback (e.g. "mover-score")
                return str(own_shown[("low_source", "high_source")[side]][own_index[j]])
            return name
    return "mover"


def _tails(pieces: PairedPieces, models, own_shown, own_index, j: int) -> tuple[tuple[bool, bool], tuple[float, float]]:
    """Replaced tails and degenerate shares of the interval column j rests on: the differences' own bootstrap-t,
    or MOVER of the models (a - b's lower bound rests on a's lower and b's upper bound)."""
    own, per_model, k = pieces.resamples.own, pieces.resamples.per_model, pieces.estimate.shape[0]
    if pieces.of_studentized[j]:  # only candidates, which have ``own`` and ``own_shown``
        assert own is not None and own_shown is not None
        i = own_index[j]
        return ((bool(own_shown["replace_low"][i]), bool(own_shown["replace_high"][i])),
                (float(own.share_below[i]), float(own.share_above[i])))
    not_mover = pieces.of_differences[j] or pieces.of_studentized[j] or pieces.binary[j]
    return ((bool(models["replace_low"][j] or models["replace_high"][k + j]) and not not_mover,
             bool(models["replace_high"][j] or models["replace_low"][k + j]) and not not_mover),
            (float(max(per_model.share_below[j], per_model.share_above[k + j])),
             float(max(per_model.share_above[j], per_model.share_below[k + j]))))


def _mover_details(pieces: PairedPieces, parts, shown, scales, saturated, columns: Columns, request: CoreRequest,
                   details: list[dict[str, Any]]) -> None:
    """What the paired default's ``details`` say of every column: each model's limits, the parts, the source of each bound."""
    k = pieces.estimate.shape[0]
    levels = np.full(k, request.level)
    resamples, own_columns = pieces.resamples, pieces.resamples.own_columns
    own_shown = None if resamples.own is None else resamples.own.interval(levels[own_columns])
    own_index = {int(j): i for i, j in enumerate(own_columns)}
    models = pieces.limits.at(np.concatenate([levels, levels]))
    for j, d in enumerate(details):
        degenerate_tail, degenerate_share = _tails(pieces, models, own_shown, own_index, j)
        d.update(
            n_resamples=request.n_resamples, seed=resamples.seed, **resamples.draw_info[j],
            standard_error_kind="clustered" if columns.codes is not None else "t",
            correlation_of_means=float(resamples.correlation[j]),
            interval_a=(float(models["low"][j]), float(models["high"][j])),
            interval_b=(float(models["low"][k + j]), float(models["high"][k + j])),
            model_bound_methods=((models["low_source"][j], models["high_source"][j]),
                                 (models["low_source"][k + j], models["high_source"][k + j])),
            degenerate_tail=degenerate_tail, degenerate_share=degenerate_share,
            model_scales=(str(scales[j]), str(scales[k + j])),
            mover_of_models=(float(parts["mover"][0][j]), float(parts["mover"][1][j])),
            split_score_interval=_part(parts.get("split-score"), j),
            t_of_differences=_part(parts.get("t"), j),
            studentized_of_differences=_part(parts.get("studentized"), j),
            near_end_split_interval=_part(parts.get("split-score (near end)"), j),
            matched_pairs_interval=_part(parts.get("matched-pairs score"), j) if pieces.binary[j] else None,
            saturated_differences=bool(pieces.split is not None and saturated[j]),
            paired_bound_methods=(_bound_source(parts, shown, own_shown, own_index, j, 0),
                                  _bound_source(parts, shown, own_shown, own_index, j, 1)),
        )
