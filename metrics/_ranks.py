r"""Ranks of several models on one benchmark: bootstrap rank intervals, Holm's adjustment, and
rank intervals made consistent with the paired comparisons shown next to them.

:func:`rank_intervals` ranks M models in each paired (cluster) bootstrap resample (the same
multiplicities for every model) and reports the equal-tailed range of ranks each model takes.
:func:`holm_adjust` adjusts the p-values of a family of paired comparisons. A leaderboard shows
both, and they must not contradict each other: two models whose paired interval holds 0 are not
known to differ, so their rank intervals must overlap. :func:`reconcile_rank_intervals` widens the
rank intervals until every such pair overlaps (with few clusters the cluster bootstrap of ranks is
too narrow, while the paired intervals follow the few-cluster rule; issue #16).

Ranks and ties
--------------
In one resample a model's rank is ``1 + (number of models strictly better)``, so tied models share
the best rank of their group (competition ranking, "1 2 2 4"). Models whose per-problem values are
bitwise identical are merged before resampling and therefore tie in every resample. Between other
models a difference of resampled means no larger than :data:`TIE_TOLERANCE` ``* max|value|``
counts as equal.

The rank interval ``[low, high]`` is the range of ranks the model takes in at least
``confidence_level`` of the resamples, cutting at most ``(1 - confidence_level) / 2`` of the
resamples from each end of the model's rank distribution (thresholds in exact rational arithmetic).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._bootstrap import DEFAULT_N_RESAMPLES
from ._resampling import bootstrap_weights
from ._validation import resolve_seed

__all__ = [
    "TIE_TOLERANCE",
    "RankIntervals",
    "canonical_problem_keys",
    "holm_adjust",
    "rank_intervals",
    "reconcile_rank_intervals",
]

#: Relative tolerance below which two resampled means count as equal (floating-point rounding).
TIE_TOLERANCE = 1e-10

#: Upper bound on the elements of the (resamples x models x models) comparison array per step.
_MAX_COMPARISON_ELEMENTS = 1 << 22




def holm_adjust(p_values: ArrayLike) -> NDArray[np.float64]:
    r"""Holm's step-down adjustment of a family of p-values (strong control of the FWER).

    With the ``m`` p-values sorted ascending, :math:`p_{(1)} \le \dots \le p_{(m)}`,

    .. math:: \tilde p_{(i)} = \min\Big(1, \max_{j \le i} (m - j + 1)\, p_{(j)}\Big)

    and each adjusted value is returned at the position of its p-value. Rejecting every hypothesis
    with :math:`\tilde p \le \alpha` controls the family-wise error rate at :math:`\alpha` under
    any dependence between the tests [1]_.

    Parameters
    ----------
    p_values : array_like of float, shape (m,)
        Unadjusted p-values in [0, 1]. An empty family gives an empty result.

    Returns
    -------
    ndarray of float, shape (m,)
        Adjusted p-values, each at least its unadjusted value and at most 1.

    Raises
    ------
    ValueError
        If ``p_values`` is not one-dimensional or holds values outside [0, 1] (NaN included).

    References
    ----------
    .. [1] S. Holm, "A Simple Sequentially Rejective Multiple Test Procedure",
       Scandinavian Journal of Statistics 6(2), 65-70 (1979).

    Examples
    --------
    >>> from kpass.metrics import holm_adjust
    >>> holm_adjust([0.01, 0.04, 0.03]).round(4)
    array([0.03, 0.06, 0.06])
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"`p_values` must be one-dimensional; got shape {p.shape}.")
    bad = np.flatnonzero(~((p >= 0.0) & (p <= 1.0)))
    if bad.size:
        raise ValueError(
            f"`p_values` must lie in [0, 1]; got {p[bad[:5]].tolist()} at positions {bad[:5].tolist()}."
        )
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = (m - np.arange(m)) * p[order]
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return adjusted


@dataclass(frozen=True)
class RankIntervals:
    """Bootstrap rank intervals of several models on one metric.

    Attributes
    ----------
    models : tuple of str
        Model names, in the order of the input rows.
    rank : ndarray of int, shape (M,)
        Rank on the observed data: 1 + number of models strictly better.
    low, high : ndarray of int, shape (M,)
        Rank interval: ranks taken in at least ``confidence_level`` of the resamples.
    rank_counts : ndarray of int, shape (M, M)
        ``rank_counts[m, r - 1]`` is the number of resamples in which model ``m`` has rank ``r``.
    confidence_level : float
        Nominal coverage of ``[low, high]``.
    n_resamples : int
        Bootstrap resamples drawn.
    n_problems : int
        Problems every model was compared on.
    n_clusters : int or None
        Clusters resampled (None: problems were resampled individually).
    higher_is_better : bool
        Direction of the metric.
    seed : int, str or None
        The seed of the resampling (with ``rng=None``, the entropy drawn, so that the result can
        be reproduced; ``"generator"`` for a Generator; None when not recorded).
    """

    models: tuple[str, ...]
    rank: NDArray[np.int64]
    low: NDArray[np.int64]
    high: NDArray[np.int64]
    rank_counts: NDArray[np.int64]
    confidence_level: float
    n_resamples: int
    n_problems: int
    n_clusters: int | None
    higher_is_better: bool
    seed: int | str | None = None

    @property
    def probability_first(self) -> NDArray[np.float64]:
        """Fraction of resamples in which each model ranks first (possibly tied)."""
        return self.rank_counts[:, 0] / self.n_resamples


def _ranks_of_scores(scores: NDArray[np.float64], multiplicity: NDArray[np.int64],
                     tolerance: float) -> NDArray[np.int64]:
    """Competition ranks ``1 + #(strictly better)`` of each column of ``scores`` (higher is better).

    ``scores`` has shape (B, U): U distinct models, each standing for ``multiplicity[u]`` models.
    Loops over bounded chunks of rows only.
    """
    n_rows, n_distinct = scores.shape
    ranks = np.empty((n_rows, n_distinct), dtype=np.int64)
    step = max(1, _MAX_COMPARISON_ELEMENTS // max(1, n_distinct * n_distinct))
    for start in range(0, n_rows, step):
        block = scores[start:start + step]
        # better[b, u, v]: model v beats model u in resample b by more than rounding
        better = (block[:, None, :] - block[:, :, None]) > tolerance
        ranks[start:start + step] = 1 + better.astype(np.int64) @ multiplicity
    return ranks


def _interval_from_counts(rank_counts: NDArray[np.int64], n_resamples: int,
                          confidence_level: float) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Equal-tailed rank interval from per-model rank histograms, thresholds in exact arithmetic."""
    tail = (1 - Fraction(str(confidence_level))) / 2
    cumulative = np.cumsum(rank_counts, axis=1)
    below = tail * n_resamples                   # at most this many resamples cut from each end
    above = (1 - tail) * n_resamples
    # low: first r with cum(r) > below ; high: first r with cum(r) >= above (cum is integer)
    low = np.argmax(cumulative > math.floor(below), axis=1) + 1
    high = np.argmax(cumulative >= math.ceil(above), axis=1) + 1
    return low.astype(np.int64), high.astype(np.int64)


def check_confidence_level(confidence_level: float) -> float:
    """``confidence_level`` as a float in (0, 1), or a ``ValueError`` naming it."""
    if not (isinstance(confidence_level, numbers.Real) and 0.0 < float(confidence_level) < 1.0):
        raise ValueError(f"`confidence_level` must be in (0, 1); got {confidence_level!r}.")
    return float(confidence_level)


def canonical_problem_keys(values: np.ndarray) -> np.ndarray:
    """Per-problem keys, shape (n_problems, n_models), that order the bootstrap draws.

    Passed as ``order_by`` to :func:`kpass.metrics.bootstrap_weights`: the draws are made for the
    problems sorted by these keys. Each key is the problem's values sorted across models, so the
    draws do not depend on the order in which the models are listed, nor on the order of the
    problems, except among problems whose sorted values coincide while the models' values differ
    (such problems keep their input order).
    """
    return np.sort(values, axis=0).T


def rank_intervals(values: ArrayLike, *, models: Sequence[str] | None = None,
                   clusters: ArrayLike | None = None, confidence_level: float = 0.95,
                   n_resamples: int = DEFAULT_N_RESAMPLES, rng: int | np.random.Generator | None = None,
                   higher_is_better: bool = True,
                   max_chunk_elements: int | None = None) -> RankIntervals:
    r"""Rank intervals of M models from the paired (cluster) bootstrap over problems.

    Each resample draws problems (or, with ``clusters``, whole clusters carrying their problems)
    with replacement through :func:`kpass.metrics.bootstrap_weights`; the same multiplicity row
    :math:`w^{(b)}` is applied to every model, so the comparison stays paired. Model m's score in
    resample b is the weighted mean :math:`\bar v^{(b)}_m = \sum_j w^{(b)}_j v_{mj} / \sum_j w^{(b)}_j`
    and its rank

    .. math:: r^{(b)}_m = 1 + \#\{m' : \bar v^{(b)}_{m'} > \bar v^{(b)}_m\}

    (ties share the best rank; see the module docstring for the equality rule). The interval is
    the equal-tailed range of ranks holding at least ``confidence_level`` of the resamples, as
    in the "ranking uncertainty" intervals of Hall and Miller [1]_.

    Parameters
    ----------
    values : array_like of float, shape (M, N)
        Per-problem values of M models on the same N problems (row m = model m).
    models : sequence of str, optional
        Names of the M models; default ``"0"``, ``"1"``, ...
    clusters : array_like, shape (N,), optional
        Cluster label of each problem; whole clusters are resampled.
    confidence_level : float, default: 0.95
        Share of resamples the rank interval must hold.
    n_resamples : int, default: 10_000
        Bootstrap resamples.
    rng : int, numpy.random.Generator or None, default: None
        Seed or generator of the resampling (SciPy SPEC 7; ``None``: fresh entropy, recorded as
        ``seed``).
    higher_is_better : bool, default: True
        Direction of the metric (lower-is-better metrics rank the smallest value first).
    max_chunk_elements : int, optional
        Memory bound on one chunk of the weight matrix (passed to ``bootstrap_weights``; default:
        its default).

    Returns
    -------
    RankIntervals

    Raises
    ------
    ValueError
        On a non-2-D or non-finite ``values``, fewer than one problem, mismatched ``models`` or
        ``clusters``, or a bad ``n_resamples``/``confidence_level``.

    References
    ----------
    .. [1] P. Hall and H. Miller, "Using the bootstrap to quantify the authority of an empirical
       ranking", Annals of Statistics 37(6B), 3929-3959 (2009).

    Examples
    --------
    >>> from kpass.metrics import rank_intervals
    >>> result = rank_intervals([[1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]], n_resamples=200, rng=0)
    >>> result.low.tolist(), result.high.tolist()
    ([1, 2, 2], [1, 2, 2])
    """
    matrix = np.asarray(values, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"`values` must have shape (n_models, n_problems); got shape {matrix.shape}.")
    n_models, n_problems = matrix.shape
    if n_models < 1 or n_problems < 2:
        raise ValueError(f"`values` needs at least one model and two problems (a bootstrap over one "
                         f"problem says nothing); got shape {matrix.shape}.")
    bad = np.argwhere(~np.isfinite(matrix))
    if bad.size:
        raise ValueError(f"`values` must be finite; got non-finite values at (model, problem) "
                         f"{[tuple(x) for x in bad[:5].tolist()]}.")
    names = tuple(str(i) for i in range(n_models)) if models is None else tuple(models)
    if len(names) != n_models:
        raise ValueError(f"`models` has {len(names)} names for {n_models} rows of `values`.")
    if not (isinstance(n_resamples, numbers.Integral) and n_resamples >= 1):
        raise ValueError(f"`n_resamples` must be an integer >= 1; got {n_resamples!r}.")
    confidence_level = check_confidence_level(confidence_level)
    cluster_labels = None
    n_clusters = None
    if clusters is not None:
        cluster_labels = np.asarray(clusters)
        if cluster_labels.shape != (n_problems,):
            raise ValueError(f"`clusters` must have shape ({n_problems},) like the problems of "
                             f"`values`; got shape {cluster_labels.shape}.")
        n_clusters = int(np.unique(cluster_labels).size)

    oriented = (matrix if higher_is_better else -matrix) + 0.0      # + 0.0 turns -0.0 into 0.0
    # Exact-equality rule: bitwise identical models become one distinct row, so they always tie.
    distinct, inverse, multiplicity = np.unique(oriented, axis=0, return_inverse=True,
                                                return_counts=True)
    inverse = np.asarray(inverse).reshape(-1)
    scale = float(np.max(np.abs(distinct)))
    tolerance = TIE_TOLERANCE * scale
    multiplicity = multiplicity.astype(np.int64)

    observed = _ranks_of_scores(distinct.mean(axis=1)[None, :], multiplicity, tolerance)[0]

    counts = np.zeros((distinct.shape[0], n_models), dtype=np.int64)
    rows = np.arange(distinct.shape[0])
    drawn = 0
    chunking = {} if max_chunk_elements is None else {"max_chunk_elements": max_chunk_elements}
    rng, seed = resolve_seed(rng)
    for weights in bootstrap_weights(n_problems, clusters=cluster_labels, n_resamples=int(n_resamples),
                                     rng=rng, order_by=canonical_problem_keys(matrix), **chunking):
        weights = np.asarray(weights, dtype=np.float64)
        scores = (weights @ distinct.T) / weights.sum(axis=1)[:, None]
        ranks = _ranks_of_scores(scores, multiplicity, tolerance)
        flat = (rows[None, :] * n_models + (ranks - 1)).ravel()
        counts += np.bincount(flat, minlength=counts.size).reshape(counts.shape)
        drawn += weights.shape[0]
    if drawn != n_resamples:  # pragma: no cover - guards the bootstrap_weights contract
        raise RuntimeError(f"bootstrap_weights yielded {drawn} resamples instead of {n_resamples}.")

    rank_counts = counts[inverse]
    low, high = _interval_from_counts(rank_counts, int(n_resamples), confidence_level)
    return RankIntervals(models=names, rank=observed[inverse].astype(np.int64), low=low, high=high,
                         rank_counts=rank_counts, confidence_level=confidence_level,
                         n_resamples=int(n_resamples), n_problems=n_problems,
                         n_clusters=n_clusters, higher_is_better=bool(higher_is_better), seed=seed)


def reconcile_rank_intervals(result: RankIntervals, not_distinguished: Iterable[tuple[str, str]]
                             ) -> tuple[RankIntervals, list[tuple[str, str]]]:
    r"""Widen rank intervals so that models a paired comparison cannot tell apart share a rank.

    A paired interval of :math:`\theta_a - \theta_b` that holds 0 says the data do not order a
    and b; disjoint rank intervals say they do. For every such pair whose intervals are disjoint,
    say :math:`h_a < l_b`, both are widened to meet: :math:`h_a \leftarrow l_b`,
    :math:`l_b \leftarrow h_a` (each now holds the ranks between them). Widening one pair can
    touch another, so this repeats until no pair is left disjoint (at most M rounds: every round
    widens some interval within [1, M]). Pairs that do overlap are left alone, and a pair whose
    comparison excludes 0 never narrows anything.

    Parameters
    ----------
    result : RankIntervals
        From :func:`rank_intervals`.
    not_distinguished : iterable of (str, str)
        Model pairs whose paired interval holds 0 (names of ``result.models``).

    Returns
    -------
    reconciled : RankIntervals
        ``result`` with ``low`` / ``high`` widened (``rank`` and ``rank_counts`` unchanged).
    widened : list of (str, str)
        The pairs that were disjoint before, in the order given.

    Examples
    --------
    >>> import numpy as np
    >>> from kpass.metrics import RankIntervals, reconcile_rank_intervals
    >>> r = RankIntervals(("a", "b", "c"), np.array([1, 2, 3]), np.array([1, 2, 3]), np.array([1, 2, 3]),
    ...                   np.eye(3, dtype=np.int64), 0.95, 1, 10, None, True)
    >>> fixed, widened = reconcile_rank_intervals(r, [("a", "b")])
    >>> fixed.low.tolist(), fixed.high.tolist(), widened
    ([1, 1, 3], [2, 2, 3], [('a', 'b')])
    """
    index = {name: i for i, name in enumerate(result.models)}
    pairs = []
    for a, b in not_distinguished:
        if a not in index or b not in index:
            raise ValueError(f"pair ({a!r}, {b!r}) names a model that is not ranked; models: {list(result.models)}.")
        pairs.append((a, b, index[a], index[b]))
    low, high = result.low.copy(), result.high.copy()
    widened: list[tuple[str, str]] = []
    for _ in range(len(result.models) + 1):
        changed = False
        for a, b, i, j in pairs:
            first, second = (i, j) if low[i] <= low[j] else (j, i)
            if high[first] < low[second]:
                high[first], low[second] = low[second], high[first]
                changed = True
                if (a, b) not in widened:
                    widened.append((a, b))
        if not changed:
            break
    return replace(result, low=low, high=high), widened
