"""Bootstrap building blocks shared by every interval of kpass (private module).

Quantiles of sorted replicates exactly as ``np.quantile`` (and ``np.nanquantile``), percentile and
BCa bounds (Efron 1987), the analytic (t or clustered) standard error and the resampled means and
standard errors of :class:`~._resampling.Units`, and :func:`bootstrap_of_sums`, the percentile/BCa
bootstrap of any statistic of weighted per-problem sums (the token-budget curves and the
decomposition use it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special

from ._resampling import Units, canonical_order, canonical_units, weights_generator
from ._validation import check_rng

__all__ = [
    "DEFAULT_N_RESAMPLES",
    "ROUNDING_TOLERANCE",
    "analytic_se",
    "bca_acceleration",
    "bca_bias_correction",
    "bca_bounds",
    "bca_levels",
    "bootstrap_of_sums",
    "leave_one_unit_out_means",
    "nan_std",
    "percentile_bounds",
    "quantile_of_sorted",
    "replicate_statistics",
]

#: Bootstrap resamples of every kpass interval unless the caller asks for another number
#: (:func:`mean_ci`, :func:`paired_difference`, the token-budget curves and the decomposition).
DEFAULT_N_RESAMPLES = 10_000

#: Relative tolerance under which a bootstrap replicate counts as tied with the estimate (BCa bias
#: correction) or a resample's sum of squares as 0: rounding noise, not a difference.
ROUNDING_TOLERANCE = 1e-12


def quantile_of_sorted(
    sorted_values: NDArray[np.float64], q: NDArray[np.float64], n_valid: NDArray[np.integer] | None = None
) -> NDArray[np.float64]:
    """Per-column quantile at levels ``q`` (M,) of column-sorted ``(B, M)`` replicates.

    Linear interpolation exactly as ``np.quantile``'s default (Hyndman & Fan type 7, with its
    floating-point steps: position ``(B - 1) q``, ``b - (b - a)(1 - g)`` for ``g >= 1/2``); with
    ``n_valid`` only the first ``n_valid[j]`` entries of column j count (NaN sorts last, so this
    is ``np.nanquantile``; NaN where no entry is valid). Infinite neighbours are returned as they
    are instead of interpolated into NaN.
    """
    b, m = sorted_values.shape
    q = np.minimum(np.maximum(np.asarray(q, dtype=np.float64), 0.0), 1.0)
    if q.ndim == 0:
        q = np.full(m, q)
    last = (b - 1) if n_valid is None else np.maximum(np.asarray(n_valid, dtype=np.intp) - 1, 0)
    position = last * q
    floor = np.floor(position)
    gamma = position - floor
    lower = floor.astype(np.intp)
    upper = np.minimum(lower + 1, last)
    columns = np.arange(m)
    a = sorted_values[lower, columns]
    c = sorted_values[upper, columns]
    with np.errstate(invalid="ignore"):
        difference = c - a
        out = np.where(gamma >= 0.5, c - difference * (1.0 - gamma), a + difference * gamma)
    finite = np.isfinite(a) & np.isfinite(c)
    if not finite.all():
        out = np.where(finite, out, np.where((gamma == 0) | (a == -np.inf), a, c))
    if n_valid is not None:
        out = np.where(np.asarray(n_valid) > 0, out, np.nan)
    return out


def percentile_bounds(sorted_replicates, level, n_valid=None):
    """Percentile bootstrap bounds: the (1 - level)/2 and (1 + level)/2 quantiles per column."""
    alpha = 1.0 - np.asarray(level, dtype=np.float64)
    return (quantile_of_sorted(sorted_replicates, alpha / 2.0, n_valid),
            quantile_of_sorted(sorted_replicates, 1.0 - alpha / 2.0, n_valid))


def bca_bias_correction(replicates: NDArray[np.float64], estimate: NDArray[np.float64]):
    r"""BCa bias correction :math:`z_0 = \Phi^{-1}(\#\{\hat\theta^* < \hat\theta\}/B)` per column.

    Ties count one half; a replicate within ``ROUNDING_TOLERANCE`` times the spread
    :math:`\max|\hat\theta^* - \hat\theta|` of the estimate is a tie (the same resample computed
    in another summation order). Non-finite replicates (undefined statistics) are left out of B.
    The share is kept within :math:`[1/(2B), 1 - 1/(2B)]` so that :math:`z_0` is finite.
    Returns ``(z0, share, clipped share)``.
    """
    valid = np.isfinite(replicates)
    n_valid = valid.sum(axis=0)
    with np.errstate(invalid="ignore"):
        deviation = np.where(valid, replicates - estimate, 0.0)
    tolerance = ROUNDING_TOLERANCE * np.abs(deviation).max(axis=0)
    below = (valid & (deviation < -tolerance)).sum(axis=0)
    ties = (valid & (np.abs(deviation) <= tolerance)).sum(axis=0)
    floor = 0.5 / np.maximum(n_valid, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = (below + 0.5 * ties) / n_valid
    clipped = np.clip(share, floor, 1.0 - floor)
    return special.ndtri(clipped), share, clipped


def bca_acceleration(jackknife: NDArray[np.float64]) -> NDArray[np.float64]:
    r"""BCa acceleration from leave-one-unit-out statistics (Efron 1987, Eq. 6.6):
    :math:`a = \sum_u d_u^3 / (6 (\sum_u d_u^2)^{3/2})`, :math:`d_u = \bar\theta_{(\cdot)} - \theta_{(u)}`,
    per column; undefined leave-one-out statistics (NaN) are left out, and ``a = 0`` when the
    jackknife has no spread."""
    valid = np.isfinite(jackknife)
    count = valid.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(valid, jackknife, 0.0).sum(axis=0) / count
        d = np.where(valid, mean - jackknife, 0.0)
        acceleration = (d**3).sum(axis=0) / (6.0 * (d**2).sum(axis=0) ** 1.5)
    return np.where(np.isfinite(acceleration), acceleration, 0.0)


def bca_levels(z0: NDArray[np.float64], acceleration: NDArray[np.float64], level) -> tuple[NDArray, NDArray]:
    r"""The BCa-adjusted quantile levels of the two bounds (Efron 1987, Eq. 2.3):
    :math:`\Phi\big(z_0 + (z_0 + z_\alpha)/(1 - a(z_0 + z_\alpha))\big)`; a bound whose
    denominator is not positive goes to the end of the bootstrap distribution."""
    alpha = 1.0 - np.asarray(level, dtype=np.float64)
    levels = []
    for tail, end in ((alpha / 2.0, 0.0), (1.0 - alpha / 2.0, 1.0)):
        z = z0 + special.ndtri(tail)
        denominator = 1.0 - acceleration * z
        with np.errstate(invalid="ignore", divide="ignore"):
            adjusted = special.ndtr(z0 + z / np.where(denominator > 0, denominator, 1.0))
        levels.append(np.where(denominator > 0, adjusted, end))
    return levels[0], levels[1]


def bca_bounds(sorted_replicates, z0, acceleration, level, n_valid=None):
    """BCa bounds per column from column-sorted replicates; returns ``(low, high, (low level, high level))``."""
    low_level, high_level = bca_levels(z0, acceleration, level)
    return (quantile_of_sorted(sorted_replicates, low_level, n_valid),
            quantile_of_sorted(sorted_replicates, high_level, n_valid), (low_level, high_level))


def nan_std(replicates: NDArray[np.float64]) -> NDArray[np.float64]:
    """Standard deviation (ddof=1) of the finite replicates of each column, NaN with fewer than 2
    (``np.nanstd``'s arithmetic, without its warnings)."""
    valid = np.isfinite(replicates)
    count = valid.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(valid, replicates, 0.0).sum(axis=0) / count
        deviation = np.where(valid, replicates - mean, 0.0)
        variance = (deviation * deviation).sum(axis=0) / (count - 1)
    return np.where(count > 1, np.sqrt(np.where(count > 1, variance, 0.0)), np.nan)


def bootstrap_of_sums(
    per_problem: NDArray[np.float64],
    statistic: Callable[[NDArray[np.float64], NDArray[np.float64]], NDArray[np.float64]],
    *,
    codes: NDArray[np.int64] | None,
    n_clusters: int | None,
    method: str,
    level: float,
    n_resamples: int,
    rng: Any,
    max_chunk_elements: int,
) -> dict[str, Any]:
    """Percentile or BCa bootstrap of a statistic of weighted per-problem sums (private).

    ``statistic(sums, total_weight)`` maps ``sums`` ``(B, M)`` (the columns of ``per_problem``
    summed with resample multiplicities) and ``total_weight`` ``(B,)`` to ``(B, ...)``. Problems,
    or clusters (``codes``), are resampled in canonical order, so the result does not depend on
    the order of the problems. The BCa acceleration comes from the jackknife over problems (or
    clusters). Returns ``estimate``, ``low``, ``high``, ``standard_error`` (of the finite
    replicates), ``n_undefined`` (non-finite replicates), each of the statistic's trailing shape,
    ``details`` (``bias_correction``, ``acceleration`` for BCa) and ``seed``.
    """
    n_problems = per_problem.shape[0]
    order = canonical_order(per_problem)
    rows = np.ascontiguousarray(per_problem[order])
    unit_codes = None if codes is None else codes[order]
    generator, seed = check_rng(rng)
    ones = np.ones((1, n_problems))
    estimate = statistic(ones @ rows, ones.sum(axis=1))[0]
    unit_rows, unit_sizes, unit_order = canonical_units(rows, unit_codes)
    position_of_unit = None
    if unit_codes is not None:
        position_of_unit = np.empty_like(unit_order)
        position_of_unit[unit_order] = np.arange(unit_order.size)
    chunks = [
        statistic(weights @ rows, weights.sum(axis=1))
        for weights in weights_generator(n_problems, unit_codes, n_clusters or 0, n_resamples, generator,
                                          max_chunk_elements, position_of_unit)
    ]
    replicates = np.concatenate(chunks, axis=0)
    shape = replicates.shape[1:]
    flat = replicates.reshape(n_resamples, -1)
    flat_estimate = np.asarray(estimate, dtype=np.float64).reshape(-1)
    sorted_replicates = np.sort(flat, axis=0)  # NaN last
    n_valid = np.isfinite(flat).sum(axis=0)
    details: dict[str, Any] = {}
    if method == "bootstrap":
        low, high = percentile_bounds(sorted_replicates, level, n_valid)
    else:
        # jackknife: leave one problem (or one cluster, in canonical order) out
        if unit_sizes is None:
            left_out, left_weight = rows, np.ones(n_problems)
        else:
            left_out, left_weight = unit_rows[unit_order], unit_sizes[unit_order]
        total = rows.sum(axis=0)
        step = max(1, max_chunk_elements // max(rows.shape[1], 1))
        jackknife = np.concatenate([
            statistic(total[None, :] - left_out[start : start + step], n_problems - left_weight[start : start + step])
            for start in range(0, left_out.shape[0], step)
        ], axis=0).reshape(left_out.shape[0], -1)
        z0, _, _ = bca_bias_correction(flat, flat_estimate)
        acceleration = bca_acceleration(jackknife)
        low, high, _ = bca_bounds(sorted_replicates, z0, acceleration, level, n_valid)
        details = {"bias_correction": z0.reshape(shape), "acceleration": acceleration.reshape(shape)}
    return {
        "estimate": np.asarray(estimate, dtype=np.float64).reshape(shape),
        "low": low.reshape(shape),
        "high": high.reshape(shape),
        "standard_error": nan_std(flat).reshape(shape),
        "n_undefined": (~np.isfinite(flat)).sum(axis=0).reshape(shape),
        "details": details,
        "seed": seed,
    }


def analytic_se(units: Units, n: int, constant: NDArray[np.bool_]) -> NDArray[np.float64]:
    """t standard error (no clusters) or Inspect's clustered standard error, per column."""
    totals = units.totals
    if not units.clustered:
        variance = (totals * totals).sum(axis=0) / (n - 1)
        se = np.sqrt(variance / n)
    else:
        c = units.n_units
        se = np.sqrt(c / (c - 1) * (totals * totals).sum(axis=0)) / n
    return np.where(constant, 0.0, se)


def replicate_statistics(units: Units, parts: dict[str, NDArray[np.float64]], n: int):
    """Resampled centered means (B, K) and, if needed, resampled standard errors (B, K)."""
    size = parts["n"] if units.clustered else float(n)
    mean = parts["T"] / size
    if not units.need_se:
        return mean, None
    if not units.clustered:
        # sum of squared deviations of the resample: sum w v'^2 - N mean'^2
        raw = parts["Q"]
        ss = raw - n * mean * mean
        ss = np.where(ss <= ROUNDING_TOLERANCE * raw, 0.0, ss)
        se = np.sqrt(ss / (n - 1) / n)
    else:
        c = units.n_units
        raw = parts["Q"] + mean * mean * parts["n2"]
        ss = parts["Q"] - 2.0 * mean * parts["nT"] + mean * mean * parts["n2"]
        ss = np.where(ss <= ROUNDING_TOLERANCE * raw, 0.0, ss)
        se = np.sqrt(c / (c - 1) * ss) / size
    return mean, se


def leave_one_unit_out_means(units: Units, n: int) -> NDArray[np.float64]:
    """The (centered) mean without each unit, in closed form from the unit totals, shape (U, K)."""
    totals = units.totals
    if units.sizes is not None:  # clustered
        remaining = n - units.sizes
        return np.where(remaining > 0, -totals / np.where(remaining > 0, remaining, 1.0), 0.0)
    return -totals / (n - 1)
