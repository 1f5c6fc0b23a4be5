r"""Equal-compute comparison: the Pareto frontier of score against compute (private module).

A configuration (a model with a metric such as pass@8, cons@16 or pass@1 at a token budget) is
a point :math:`(x, y)`: x its compute per problem (output tokens, FLOPs or dollars), y its score.
It is on the Pareto frontier when no other point has :math:`x' \le x` and :math:`y' \ge y` with one
inequality strict. At a compute level X each model is represented by its best configuration
within X,

.. math:: y_i(X) = \max\{y : (x, y) \text{ a configuration of model } i,\ x \le X\},

and the model with the largest :math:`y_i(X)` leads at X. Higher is better for every score.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["best_within_compute", "pareto_frontier"]


def _points_iv(compute: ArrayLike, score: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    x = np.asarray(compute, dtype=np.float64)
    y = np.asarray(score, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"`compute` and `score` must be 1-D of the same length; got shapes {x.shape} and {y.shape}.")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("`compute` and `score` must be finite; got NaN or infinity.")
    if (x < 0).any():
        raise ValueError(f"`compute` must be >= 0; got {float(x.min())!r}.")
    return x, y


def pareto_frontier(compute: ArrayLike, score: ArrayLike) -> NDArray[np.bool_]:
    r"""Which points are on the Pareto frontier (least compute, highest score).

    .. math:: (x_i, y_i) \text{ on the frontier} \iff \nexists j:\ x_j \le x_i,\ y_j \ge y_i,\
              (x_j, y_j) \ne (x_i, y_i)

    Parameters
    ----------
    compute, score : array_like of float, shape (P,)

    Returns
    -------
    ndarray of bool, shape (P,)
        Duplicated frontier points are all marked.

    Examples
    --------
    >>> pareto_frontier([1, 2, 3, 4], [0.5, 0.4, 0.7, 0.7]).tolist()
    [True, False, True, False]
    """
    x, y = _points_iv(compute, score)
    order = np.lexsort((-y, x))                       # by compute, then best score first
    xs, ys = x[order], y[order]
    best_before = np.maximum.accumulate(np.concatenate([[-np.inf], ys[:-1]]))
    # a point is dominated by an earlier one (less or equal compute) with a higher or equal score,
    # unless that one is a copy of the same point
    same_as_previous = np.concatenate([[False], (xs[1:] == xs[:-1]) & (ys[1:] == ys[:-1])])
    first_of_run = np.maximum.accumulate(np.where(same_as_previous, 0, np.arange(xs.size)))
    on = (ys > best_before)[first_of_run]          # a repeated point shares the first copy's status
    out = np.empty(x.size, dtype=bool)
    out[order] = on
    return out


def best_within_compute(levels: ArrayLike, compute: ArrayLike, score: ArrayLike, owner: ArrayLike,
                        n_owners: int) -> NDArray[np.int64]:
    r"""Index of each owner's best point within each compute level (-1: none affordable).

    .. math:: b_{li} = \arg\max\{y_p : \mathrm{owner}_p = i,\ x_p \le X_l\}

    (ties: the cheaper point, then the first).

    Parameters
    ----------
    levels : array_like of float, shape (L,)
    compute, score : array_like of float, shape (P,)
    owner : array_like of int, shape (P,)
        Model index of each point, in ``0..n_owners-1``.
    n_owners : int

    Returns
    -------
    ndarray of int, shape (L, n_owners)

    Examples
    --------
    >>> best_within_compute([1, 3], [1, 2, 3], [0.2, 0.5, 0.4], [0, 0, 1], 2).tolist()
    [[0, -1], [1, 2]]
    """
    x, y = _points_iv(compute, score)
    levels = np.asarray(levels, dtype=np.float64)
    owner = np.asarray(owner, dtype=np.int64)
    if owner.shape != x.shape or (owner < 0).any() or (owner >= n_owners).any():
        raise ValueError(f"`owner` must hold one index in 0..{n_owners - 1} per point.")
    affordable = x[None, :] <= levels[:, None]                                  # (L, P)
    mine = owner[None, :] == np.arange(n_owners)[:, None]                      # (M, P)
    mask = affordable[:, None, :] & mine[None, :, :]                            # (L, M, P)
    # rank points by score, then by lower compute, then by position
    rank = np.empty(x.size, dtype=np.int64)
    rank[np.lexsort((np.arange(x.size)[::-1], -x, y))] = np.arange(x.size)
    ranked = np.where(mask, rank[None, None, :], -1)
    best = ranked.argmax(axis=2)
    return np.where(mask.any(axis=2), best, -1)
