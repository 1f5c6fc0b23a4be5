r"""Where two pass@k curves cross, and which problems make the gap (private module).

Yue et al. (2025) report that an RL-tuned model beats its base model at small k and loses to it
at large k: the tuned model's pass@k curve crosses below the base's. This module finds that
crossing on paired per-problem counts and says what it is made of.

Per problem j the unbiased pass@k of each model (Chen et al. 2021) gives the curves

.. math:: \bar P_X(k) = \frac{1}{N}\sum_j \mathrm{pass@}k(n^X_j, c^X_j), \qquad
          d(k) = \bar P_{\text{model}}(k) - \bar P_{\text{base}}(k),

for :math:`k = 1..\min_j \min(n^{\text{base}}_j, n^{\text{model}}_j)`. The crossover *below* is the
smallest k with :math:`d(k) < 0` (the model's pass@k falls below the base's); the crossover
*above* the smallest k with :math:`d(k) > 0`. A (cluster) bootstrap over problems, with the
resampling weights of :func:`kpass.metrics.bootstrap_weights`, recomputes both on every
resample; the percentile interval of the resampled crossover is the interval of k (a resample
without a crossing counts as "beyond the largest k").

The gap :math:`g(k) = -d(k)` splits exactly, with no residual, into three groups of problems:

.. math:: g(k) = \underbrace{\tfrac{1}{N}\sum_{j\in L}\mathrm{pass@}k^{\text{base}}_j}_{\text{lost}}
          \;-\; \underbrace{\tfrac{1}{N}\sum_{j\in G}\mathrm{pass@}k^{\text{model}}_j}_{\text{gained}}
          \;+\; \underbrace{\tfrac{1}{N}\sum_{j\notin L\cup G}(\mathrm{pass@}k^{\text{base}}_j
          - \mathrm{pass@}k^{\text{model}}_j)}_{\text{shared}}

with L the problems *lost* (the base correct in at least one sample, the model in none) and G
the problems *gained* (the reverse), the coverage shift of Wu et al. (2025). A lone win (a lost
or gained problem) may be resampling noise: a problem solved once in 16 samples is missed in all
16 by a model of the same skill with probability :math:`(15/16)^{16} = 0.36`. Lone wins are
therefore also counted under the robust-reach rule of :func:`kpass.metrics.decompose_pass_change`:
the winner is correct in at least ``robust_fraction`` (default 1/2) of its samples.

Higher is better for every pass@k here; a positive gap means the base leads.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._bootstrap import DEFAULT_N_RESAMPLES, percentile_bounds
from ._decomposition import _as_fraction
from ._passk import pass_at_k
from ._patterns import CountPatterns, robust_wins
from ._resampling import bootstrap_weights
from ._validation import check_confidence_level, check_counts, check_n_resamples, factorize_labels, resolve_seed

__all__ = ["CoverageShift", "Crossover", "CrossoverResult", "pass_at_k_crossover"]


@dataclasses.dataclass(frozen=True)
class Crossover:
    """One crossing of two pass@k curves.

    Attributes
    ----------
    direction : {"model_below_base", "base_below_model"}
        Which curve falls below the other at ``k``.
    k : int or None
        The smallest k at which it does (``None``: not within ``1..k_max``).
    k_interpolated : float or None
        Where the straight line between ``d(k - 1)`` and ``d(k)`` crosses 0 (``None`` at ``k = 1``
        or without a crossing).
    low, high : int or None
        Percentile bootstrap interval of k; ``high`` is ``None`` when more than the upper tail of
        the resamples have no crossing within ``1..k_max`` (the interval is open to the right).
    share_without : float
        Share of the resamples with no crossing within ``1..k_max``.
    """

    direction: str
    k: int | None
    k_interpolated: float | None
    low: int | None
    high: int | None
    share_without: float

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class CoverageShift:
    """Problems lost and gained by the model, and each group's part of the gap at each k.

    Attributes
    ----------
    n_lost, n_gained : int
        Problems the base solved in >= 1 sample and the model in none (lost), and the reverse.
    n_robust_lost, n_robust_gained : int
        Of those, the ones the winner solved in at least ``robust_fraction`` of its samples.
    lost, gained, shared : ndarray, shape (K,)
        Contributions to the gap :math:`g(k)` (base minus model): ``lost >= 0``, ``gained <= 0``,
        ``lost + gained + shared == gap``.
    lost_low, lost_high, gained_low, gained_high : ndarray, shape (K,)
        Percentile bootstrap intervals of the two contributions.
    share_lost, share_gained : ndarray, shape (K,)
        ``lost / gap`` and ``gained / gap``; NaN where the share is undefined (see
        :attr:`share_undefined`).
    share_undefined : tuple of str or None, length K
        Why the shares at each k are undefined, or ``None`` where they are defined:
        ``"gap is 0"``, or ``"gap indistinguishable from 0"`` where the interval of the gap
        (``difference_low`` to ``difference_high`` of :class:`CrossoverResult`) holds 0. A share of
        a gap that may be 0 is a ratio with a denominator near 0: a tiny gap turns any lost part
        into a share of hundreds of percent of either sign, which says nothing about the gap.
    """

    n_lost: int
    n_gained: int
    n_robust_lost: int
    n_robust_gained: int
    lost: NDArray[np.float64]
    gained: NDArray[np.float64]
    shared: NDArray[np.float64]
    lost_low: NDArray[np.float64]
    lost_high: NDArray[np.float64]
    gained_low: NDArray[np.float64]
    gained_high: NDArray[np.float64]
    share_lost: NDArray[np.float64]
    share_gained: NDArray[np.float64]
    share_undefined: tuple[str | None, ...]


@dataclasses.dataclass(frozen=True)
class CrossoverResult:
    """What :func:`pass_at_k_crossover` returns.

    Attributes
    ----------
    ks : ndarray of int, shape (K,)
        ``1..k_max``.
    base, model : ndarray, shape (K,)
        Mean pass@k of each model over the paired problems.
    base_low, base_high, model_low, model_high : ndarray, shape (K,)
        Percentile bootstrap bands of the two curves (the same resamples).
    difference : ndarray, shape (K,)
        ``model - base``; ``difference_low``/``difference_high`` its percentile bootstrap interval.
    below, above : Crossover
        The smallest k at which the model falls below the base, and at which the base falls
        below the model.
    coverage : CoverageShift
    n_problems : int
    n_clusters : int or None
    confidence_level : float
    n_resamples : int
    seed : Any
        The seed used (drawn once when ``rng=None``), so that the result can be reproduced.
    robust_fraction : Fraction
    """

    ks: NDArray[np.int64]
    base: NDArray[np.float64]
    model: NDArray[np.float64]
    base_low: NDArray[np.float64]
    base_high: NDArray[np.float64]
    model_low: NDArray[np.float64]
    model_high: NDArray[np.float64]
    difference: NDArray[np.float64]
    difference_low: NDArray[np.float64]
    difference_high: NDArray[np.float64]
    below: Crossover
    above: Crossover
    coverage: CoverageShift
    n_problems: int
    n_clusters: int | None
    confidence_level: float
    n_resamples: int
    seed: Any
    robust_fraction: Fraction


#: The largest ``k_max`` of :func:`pass_at_k_crossover`: the curves hold every k from 1 to k_max.
MAX_CURVE_K = 1 << 16


def _first_crossing(differences: NDArray[np.float64], sign: int) -> NDArray[np.float64]:
    """Index (0-based) of the first column where ``sign * differences < 0``, per row; inf if none."""
    hit = (sign * differences) < 0
    first = np.argmax(hit, axis=-1).astype(np.float64)
    return np.where(hit.any(axis=-1), first, np.inf)


def _interpolated(difference: NDArray[np.float64], index: int) -> float | None:
    if index <= 0:
        return None
    before, after = difference[index - 1], difference[index]
    return float(index + before / (before - after))  # k = index + 1 at `after`, k = index at `before`


def _crossover(direction: str, sign: int, difference, replicate_first, k_max: int, level: float) -> Crossover:
    first = _first_crossing(difference[None, :], sign)[0]
    without = float(np.mean(np.isinf(replicate_first)))
    low, high = percentile_bounds(np.sort(replicate_first)[:, None], level)
    low_k = None if np.isinf(low[0]) else int(np.floor(low[0])) + 1
    high_k = None if np.isinf(high[0]) else int(np.ceil(high[0])) + 1
    if np.isinf(first):
        return Crossover(direction, None, None, low_k, high_k, without)
    index = int(first)
    return Crossover(direction, index + 1, _interpolated(difference, index), low_k, high_k, without)


def _checked_k_max(k_max: Any, smallest: int) -> int:
    """The largest k of the curves: ``k_max``, or the smallest number of samples of any problem and model."""
    if smallest < 1:
        raise ValueError("every problem needs at least one sample under each model; got n = 0.")
    if k_max is None and smallest > MAX_CURVE_K:
        raise ValueError(f"`k_max` defaults to the smallest number of samples ({smallest}), past the {MAX_CURVE_K} "
                         "points the pass@k curves can hold; give k_max <= " f"{MAX_CURVE_K}.")
    if k_max is None:
        return smallest
    if isinstance(k_max, (int, np.integer)) and not isinstance(k_max, (bool, np.bool_)) and k_max > MAX_CURVE_K:
        raise ValueError(f"`k_max` must be at most {MAX_CURVE_K} (the curves hold one value per k, per problem "
                         f"pattern and resample); got {k_max!r}.")
    if isinstance(k_max, (bool, np.bool_)) or not isinstance(k_max, (int, np.integer)) or k_max < 1:
        raise ValueError(f"`k_max` must be an integer >= 1; got {k_max!r}.")
    if k_max > smallest:
        raise ValueError(f"`k_max` ({k_max}) exceeds the smallest number of samples ({smallest}).")
    return int(k_max)


def pass_at_k_crossover(
    n_base: ArrayLike,
    c_base: ArrayLike,
    n_model: ArrayLike,
    c_model: ArrayLike,
    *,
    k_max: int | None = None,
    clusters: ArrayLike | None = None,
    confidence_level: float = 0.95,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    rng: int | np.random.Generator | None = None,
    robust_fraction: float | Fraction | str = Fraction(1, 2),
) -> CrossoverResult:
    r"""Crossover of two models' pass@k curves on the same problems, with bootstrap intervals.

    .. math:: k^{\downarrow} = \min\{k : \bar P_{\text{model}}(k) < \bar P_{\text{base}}(k)\}, \qquad
              k^{\uparrow} = \min\{k : \bar P_{\text{base}}(k) < \bar P_{\text{model}}(k)\}

    with :math:`\bar P` the mean unbiased pass@k [1]_ over the paired problems; see the module
    docstring for the coverage shift (problems lost and gained [3]_) that makes up the gap.

    Parameters
    ----------
    n_base, c_base : array_like of int, shape (N,)
        Samples and correct samples of the base model per problem.
    n_model, c_model : array_like of int, shape (N,)
        The same for the model, on the same problems in the same order.
    k_max : int, optional
        Largest k of the curves (default and upper limit: the smallest n of any problem and model).
    clusters : array_like, shape (N,), optional
        Cluster label of each problem; the bootstrap then resamples whole clusters.
    confidence_level : float, default: 0.95
    n_resamples : int, default: 10_000
    rng : int, numpy.random.Generator or None
        Seed of the bootstrap; ``None`` draws fresh entropy (recorded in ``seed``).
    robust_fraction : number in (0, 1], default: 1/2
        A lone win counts as robust when the winner is correct in at least this share of its
        samples (the robust-reach rule of :func:`kpass.metrics.decompose_pass_change`).

    Returns
    -------
    CrossoverResult

    Raises
    ------
    ValueError
        Mismatched lengths, bad counts, fewer than 2 problems, ``k_max`` above the smallest n.

    Notes
    -----
    The bootstrap sums the resampling weights of problems with identical counts
    :math:`(n^b, c^b, n^m, c^m)` before multiplying by the per-pattern pass@k curves, so its cost
    is :math:`B \cdot (N + P K)` for P distinct patterns.

    References
    ----------
    .. [1] M. Chen et al., "Evaluating Large Language Models Trained on Code", arXiv:2107.03374 (2021).
    .. [2] Y. Yue et al., "Does Reinforcement Learning Really Incentivize Reasoning Capacity in LLMs
       Beyond the Base Model?", arXiv:2504.13837 (2025).
    .. [3] F. Wu et al., "The Invisible Leash: Why RLVR May Not Escape Its Origin",
       arXiv:2507.14843 (2025).

    Examples
    --------
    >>> r = pass_at_k_crossover([1000, 1000], [500, 20], [1000, 1000], [950, 0], n_resamples=200, rng=0)
    >>> r.below.k, round(r.below.k_interpolated, 2)      # the issue's (0.5, 0.02) vs (0.95, 0)
    (4, 3.81)
    """
    nb, cb = check_counts(n_base, c_base, correct_name="c_base")[:2]
    nm, cm = check_counts(n_model, c_model, correct_name="c_model")[:2]
    if nb.shape != nm.shape:
        raise ValueError(f"the base has {nb.size} problems and the model {nm.size}; pair them on the same problems.")
    n_problems = int(nb.size)
    if n_problems < 2:
        raise ValueError(f"a crossover needs at least 2 paired problems; got {n_problems}.")
    k_max = _checked_k_max(k_max, int(min(nb.min(), nm.min())))
    level = check_confidence_level(confidence_level)
    n_resamples = check_n_resamples(n_resamples)
    robust = _as_fraction(robust_fraction, "robust_fraction")
    seed, used_seed = resolve_seed(rng)
    n_clusters = None
    if clusters is not None:
        n_clusters = len(factorize_labels(clusters, "clusters", n_problems)[1])

    ks = np.arange(1, int(k_max) + 1)
    grouped = CountPatterns.of(nb, cb, nm, cm)
    pn_b, pc_b, pn_m, pc_m = grouped.patterns.T
    curve_base = pass_at_k(pn_b, pc_b, ks)              # (P, K), Chen 2021 Eq. 1
    curve_model = pass_at_k(pn_m, pc_m, ks)
    pattern_count = grouped.count
    lost = (pc_b >= 1) & (pc_m == 0)
    gained = (pc_m >= 1) & (pc_b == 0)
    gap_rows = curve_base - curve_model                  # (P, K)
    lost_rows = np.where(lost[:, None], gap_rows, 0.0)
    gained_rows = np.where(gained[:, None], gap_rows, 0.0)

    def means(weight: NDArray[np.float64]):
        total = weight.sum(axis=-1, keepdims=True)
        return (weight @ gap_rows / total, weight @ lost_rows / total, weight @ gained_rows / total,
                weight @ curve_base / total)

    gap, lost_part, gained_part, base_curve = (part[0] for part in means(pattern_count[None, :]))
    difference = -gap

    replicates: list[tuple[NDArray[np.float64], ...]] = []
    for weights in bootstrap_weights(n_problems, clusters=clusters, n_resamples=n_resamples, rng=seed,
                                     order_by=grouped.rows()):
        replicates.append(means(grouped.weights(weights)))
    gap_star, lost_star, gained_star, base_star = (np.concatenate(part) for part in zip(*replicates))
    base_low, base_high = percentile_bounds(np.sort(base_star, axis=0), level)
    model_low, model_high = percentile_bounds(np.sort(base_star - gap_star, axis=0), level)
    diff_low, diff_high = percentile_bounds(np.sort(-gap_star, axis=0), level)
    lost_low, lost_high = percentile_bounds(np.sort(lost_star, axis=0), level)
    gained_low, gained_high = percentile_bounds(np.sort(gained_star, axis=0), level)

    below = _crossover("model_below_base", 1, difference, _first_crossing(-gap_star, 1), int(k_max), level)
    above = _crossover("base_below_model", -1, difference, _first_crossing(-gap_star, -1), int(k_max), level)
    undefined = tuple("gap is 0" if g == 0 else "gap indistinguishable from 0" if low <= 0 <= high else None
                      for g, low, high in zip(gap.tolist(), diff_low.tolist(), diff_high.tolist()))
    defined = np.array([reason is None for reason in undefined], dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        share_lost = np.where(defined, lost_part / np.where(defined, gap, 1.0), np.nan)
        share_gained = np.where(defined, gained_part / np.where(defined, gap, 1.0), np.nan)
    robust_lost = robust_wins(cb, nb, robust) & (cb >= 1) & (cm == 0)
    robust_gained = robust_wins(cm, nm, robust) & (cm >= 1) & (cb == 0)
    coverage = CoverageShift(
        n_lost=int(pattern_count[lost].sum()), n_gained=int(pattern_count[gained].sum()),
        n_robust_lost=int(robust_lost.sum()), n_robust_gained=int(robust_gained.sum()),
        lost=lost_part, gained=gained_part, shared=gap - lost_part - gained_part,
        lost_low=lost_low, lost_high=lost_high, gained_low=gained_low, gained_high=gained_high,
        share_lost=share_lost, share_gained=share_gained, share_undefined=undefined)
    return CrossoverResult(
        ks=ks, base=base_curve, model=base_curve - gap, base_low=base_low, base_high=base_high,
        model_low=model_low, model_high=model_high, difference=difference, difference_low=diff_low, difference_high=diff_high, below=below, above=above,
        coverage=coverage, n_problems=n_problems, n_clusters=n_clusters, confidence_level=level,
        n_resamples=n_resamples, seed=used_seed, robust_fraction=robust)
