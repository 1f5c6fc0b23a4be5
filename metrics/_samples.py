"""From per-sample outcomes to per-problem counts (private module; higher-is-better metrics).

:func:`counts_from_matrix` turns an ``(N, S)`` matrix of 0/1 outcomes (one row per problem, one
column per sample) into the ``(n_samples, n_correct)`` counts every estimator takes. Ragged
numbers of samples are written as a padded matrix plus a boolean ``mask``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import describe_offenders

__all__ = ["SampleCounts", "counts_from_matrix"]


class SampleCounts(NamedTuple):
    """Per-problem counts; unpacks as ``n_samples, n_correct = counts_from_matrix(...)``."""

    n_samples: NDArray[np.int64]
    """Samples per problem (real, unmasked entries), shape (N,)."""
    n_correct: NDArray[np.int64]
    """Samples with outcome 1 per problem, shape (N,)."""


def as_binary_matrix(value: Any, name: str, *, ndim: int = 2, where: NDArray[np.bool_] | None = None) -> NDArray[np.bool_]:
    """Convert a 0/1 (or boolean) array to bool, or raise naming the offending entries.

    Entries where ``where`` is False are padding: they are ignored (may hold anything numeric,
    including NaN) and returned as False.
    """
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError):
        raise TypeError(f"`{name}` must be a rectangular {ndim}-D array of 0/1 outcomes.") from None
    if arr.ndim != ndim:
        raise ValueError(f"`{name}` must be {ndim}-D; got an array of shape {arr.shape}.")
    if arr.dtype.kind == "b":
        result = arr.copy()
    elif arr.dtype.kind in "iuf":
        real = np.ones(arr.shape, dtype=bool) if where is None else where
        bad = real & ~((arr == 0) | (arr == 1))
        if bad.any():
            raise ValueError(f"`{name}` must hold only 0/1 (or booleans); other values at {describe_offenders(bad, arr, value_name=name)}.")
        result = arr == 1
    else:
        raise TypeError(f"`{name}` must hold 0/1 outcomes or booleans; got dtype {arr.dtype}.")
    if where is not None:
        result &= where
    return result


def as_mask(mask: Any, shape: tuple[int, ...], name: str = "mask") -> NDArray[np.bool_]:
    """Validate a boolean mask of exactly ``shape`` (integer 0/1 also accepted)."""
    try:
        arr = np.asarray(mask)
    except (ValueError, TypeError):
        raise TypeError(f"`{name}` must be a rectangular boolean array of shape {shape}.") from None
    if arr.shape != shape:
        raise ValueError(f"`{name}` must have shape {shape} (the same as the data); got {arr.shape}.")
    if arr.dtype.kind == "b":
        return arr
    if arr.dtype.kind in "iu":
        bad = (arr != 0) & (arr != 1)
        if bad.any():
            raise ValueError(f"`{name}` must be boolean (or 0/1); other values at {describe_offenders(bad, arr, value_name=name)}.")
        return arr.astype(bool)
    raise TypeError(f"`{name}` must be a boolean array; got dtype {arr.dtype}.")


def _counts_from_matrix_iv(outcomes: Any, mask: Any):
    try:
        shape = np.shape(outcomes)
    except (ValueError, TypeError):
        raise TypeError("`outcomes` must be a rectangular 2-D array of 0/1 outcomes (pad ragged rows and pass `mask`).") from None
    if len(shape) != 2:
        raise ValueError(f"`outcomes` must be 2-D (problems x samples); got an array of shape {shape}.")
    real = None if mask is None else as_mask(mask, shape)
    correct = as_binary_matrix(outcomes, "outcomes", where=real)
    return correct, real


def counts_from_matrix(outcomes: ArrayLike, mask: ArrayLike | None = None) -> SampleCounts:
    r"""Per-problem ``(n_samples, n_correct)`` from a per-sample 0/1 outcome matrix.

    .. math::

        n_j = \sum_s \mathrm{mask}_{js}, \qquad c_j = \sum_s \mathrm{mask}_{js}\, y_{js}

    Parameters
    ----------
    outcomes : array_like of bool or 0/1, shape (N, S)
        ``outcomes[j, s]`` is 1 when sample ``s`` of problem ``j`` is correct.
    mask : array_like of bool, shape (N, S), optional
        ``True`` for real samples, ``False`` for padding (ragged numbers of samples). Padded
        entries are ignored and may hold anything numeric, including NaN. Default: all real.

    Returns
    -------
    SampleCounts
        Named tuple ``(n_samples, n_correct)`` of int64 arrays of shape (N,), ready for
        :func:`pass_at_k` and the other estimators.

    Raises
    ------
    ValueError
        ``outcomes`` not 2-D, values other than 0/1 (or NaN) in real entries (naming them),
        ``mask`` of another shape.
    TypeError
        Non-numeric outcomes or mask.

    Examples
    --------
    >>> from kpass.metrics import counts_from_matrix, pass_at_k
    >>> outcomes = [[1, 0, 1, 0], [0, 0, 1, 0]]
    >>> mask = [[True, True, True, True], [True, True, True, False]]
    >>> n, c = counts_from_matrix(outcomes, mask)
    >>> n, c
    (array([4, 3]), array([2, 1]))
    >>> pass_at_k(n, c, k=2).round(4)
    array([0.8333, 0.6667])
    """
    correct, real = _counts_from_matrix_iv(outcomes, mask)
    n_rows, n_cols = correct.shape
    n_samples = np.full(n_rows, n_cols, dtype=np.int64) if real is None else real.sum(axis=1, dtype=np.int64)
    n_correct = correct.sum(axis=1, dtype=np.int64)
    return SampleCounts(n_samples, n_correct)
