r"""The hypergeometric family of k-sample estimators: pass@k, pass^k, G-Pass@k_tau, mG-Pass@k.

Every estimator here is higher-is-better and is computed per problem from counts: ``n`` samples
drawn for the problem and ``c`` of them correct. Each is the exact expectation, over all
k-subsets of the ``n`` samples drawn without replacement, of an indicator (a U-statistic), so the
benchmark score is the unweighted mean of the per-problem values (docs/spec.md sections 1-3).

Shapes
------
``n_samples`` and ``n_correct`` are 1-D arrays of shape ``(N,)`` (one entry per problem); a 0-D
value broadcasts against a 1-D one, and two 0-D values give a result without the problem axis.
``k`` is an int (result ``(N,)``) or a 1-D sequence (result ``(N, len(k))``, one column per k).
:func:`g_pass_at_k` also takes ``tau`` as a number or a 1-D sequence: scalar ``k`` and sequence
``tau`` give ``(N, len(tau))``; sequence ``k`` and scalar ``tau`` give ``(N, len(k))``; both
sequences give ``(N, len(k), len(tau))``.

Numerics
--------
No binomial coefficient is ever formed. ``C(n-c, k) / C(n, k)`` is the product
``prod_{i<k} (n-c-i)/(n-i)`` (or the equal product of ``c`` factors
``prod_{j<c} (n-k-j)/(n-j)``, whichever is shorter), evaluated as one running product over a
chunk of problems, which yields the whole curve k = 1..kmax at once. G-Pass uses the
hypergeometric probabilities built by their ratio recurrence outwards from the mode (where the
largest term is set to 1) and normalised by their sum, so nothing overflows or underflows
harmfully for any ``n``; results agree with exact rational arithmetic to about 1e-15 for
``n <= 2000`` (tests require 1e-12) and stay finite and in [0, 1] for ``n`` of 10^5 and beyond.
Problems are processed in chunks, so memory beyond the result stays bounded. Results with a
k (or tau) axis are the transpose of a k-major buffer (Fortran-ordered); call
``np.ascontiguousarray`` if C order matters.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import hypergeom

from ._validation import check_counts, check_k, check_option, check_tau, describe_offenders, exact_threshold
from ._warnings import KpassWarning

__all__ = [
    "MeaninglessMetricWarning", "biased_plugin_pass_at_k", "g_pass_at_k", "mg_pass_at_k", "pass_at_k", "pass_hat_k",
]

#: Float64 elements per chunk of problems in G-Pass (a (k+1, rows) working set that stays in
#: cache), raised to _WIDE_ROWS rows when that needs at most _MAX_CHUNK_ELEMENTS per array.
_CHUNK_ELEMENTS = 1 << 16
_WIDE_ROWS = 2048
_MAX_CHUNK_ELEMENTS = 1 << 20

_MG_VARIANTS = ("published", "integral")


class MeaninglessMetricWarning(KpassWarning):
    """A metric that is defined but says nothing for these inputs (STYLE section 4).

    Raised by :func:`mg_pass_at_k` for ``k = 1`` with ``variant="published"``, which is 0 for
    every problem by definition.
    """


def _row_slices(n_rows: int, n_cols: int, max_elements: int = _CHUNK_ELEMENTS) -> Iterator[slice]:
    rows = max(1, max_elements // max(n_cols, 1))
    for start in range(0, n_rows, rows):
        yield slice(start, min(start + rows, n_rows))


# The kernels fill "k-major" buffers of shape (len(ks), N) and return the transposed view, shape
# (N, len(ks)). Running products over i are taken in blocks of consecutive i, carrying the
# product from block to block. With many problems a block is a single i: a loop over k of vector
# operations over a chunk of problems that stays in cache (much faster than numpy's cumulative
# product along a short axis). With few problems (and possibly huge k) a block is a
# (block, rows) matrix of about _BLOCK_ELEMENTS factors reduced by one cumulative product.
# Memory stays O(_CHUNK_ROWS + _BLOCK_ELEMENTS) besides the output.
_CHUNK_ROWS = 1 << 15
_BLOCK_ELEMENTS = 1 << 16
_LOOP_MIN_ROWS = 256


def _block_starts(length: int, rows: int) -> Iterator[tuple[int, int]]:
    block = 1 if rows >= _LOOP_MIN_ROWS else max(1, _BLOCK_ELEMENTS // max(rows, 1))
    for start in range(0, length, block):
        yield start, min(start + block, length)


def _accumulate_rows(ufunc: np.ufunc, matrix: NDArray[np.float64]) -> None:
    """In place ``matrix[r] = ufunc(matrix[r-1], matrix[r])`` down axis 0 (cumprod/cumsum).

    Row by row for wide matrices (vector operations), ``ufunc.accumulate`` for narrow ones.
    """
    if matrix.shape[1] >= _LOOP_MIN_ROWS:
        for r in range(1, matrix.shape[0]):
            ufunc(matrix[r - 1], matrix[r], out=matrix[r])
    else:
        ufunc.accumulate(matrix, axis=0, out=matrix)


def _miss_probability(n: NDArray[np.int64], marked: NDArray[np.int64], ks: NDArray[np.int64]) -> NDArray[np.float64]:
    """``C(n - marked, k) / C(n, k)`` per problem and per k: the probability that k draws
    without replacement from ``n`` items miss all ``marked`` ones. Shape ``(N, len(ks))``.

    Requires ``1 <= k <= n`` and ``0 <= marked <= n`` (validated by the callers).
    """
    n_rows = n.shape[0]
    out_t = np.empty((ks.shape[0], n_rows), dtype=np.float64)
    if n_rows == 0:
        return out_t.T
    k_max = int(ks.max())
    with np.errstate(under="ignore"):  # tiny products underflowing to 0 are exact enough
        for start in range(0, n_rows, _CHUNK_ROWS):
            rows = slice(start, min(start + _CHUNK_ROWS, n_rows))
            n_r = n[rows].astype(np.float64)
            m_r = marked[rows].astype(np.float64)
            # Path A: prod_{i<k} (n-m-i)/(n-i); one running product gives every k <= k_max.
            # Factors past max(n - m) are all zero, so the product never needs to be longer.
            length_a = min(k_max, int((n_r - m_r).max()) + 1)
            # Path B: the same ratio as prod_{j<m} (n-k-j)/(n-j): m factors per requested k.
            m_max = int(m_r.max())
            if length_a <= m_max * ks.shape[0]:
                _miss_by_draws(n_r, m_r, ks, length_a, out_t[:, rows])
            else:
                _miss_by_marked(n_r, m_r, ks, m_max, out_t[:, rows])
    return out_t.T


def _miss_by_draws(n: NDArray[np.float64], m: NDArray[np.float64], ks: NDArray[np.int64], length: int, out_t) -> None:
    """``out_t[col] = prod_{i < ks[col]} max((n-m-i)/(n-i), 0)`` (0 for ``ks[col] > length``)."""
    unmarked = n - m
    running = np.ones(n.shape[0], dtype=np.float64)
    for start, stop in _block_starts(length, n.shape[0]):
        i = np.arange(start, stop, dtype=np.float64)[:, None]
        factors = unmarked - i
        factors /= n - i  # n - i >= 1 because i < k <= n
        np.maximum(factors, 0.0, out=factors)  # a zero factor (n - m - i == 0) zeroes every later k
        if stop - start > 1:
            np.cumprod(factors, axis=0, out=factors)
        factors *= running  # factors[i - start] = prod_{i' <= i} (n-m-i')/(n-i') = C(n-m, i+1)/C(n, i+1)
        wanted = (ks > start) & (ks <= stop)
        if wanted.any():
            out_t[wanted] = factors[ks[wanted] - 1 - start]
        running = factors[-1]
    out_t[ks > length] = 0.0


def _miss_by_marked(n: NDArray[np.float64], m: NDArray[np.float64], ks: NDArray[np.int64], m_max: int, out_t) -> None:
    """``out_t[col] = prod_{j < m} max((n-k-j)/(n-j), 0)`` with ``k = ks[col]``."""
    for col, k in enumerate(ks.tolist()):
        running = np.ones(n.shape[0], dtype=np.float64)
        for start, stop in _block_starts(m_max, n.shape[0]):
            j = np.arange(start, stop, dtype=np.float64)[:, None]
            factors = (n - k) - j
            factors /= np.maximum(n - j, 1.0)  # n - j < 1 only where j >= m (set to 1 below)
            np.maximum(factors, 0.0, out=factors)
            factors[j >= m] = 1.0  # each problem multiplies only its own m factors
            running *= factors[0] if stop - start == 1 else np.prod(factors, axis=0)
        out_t[col] = running


def _pass_curve(n: NDArray[np.int64], c: NDArray[np.int64], ks: NDArray[np.int64]) -> NDArray[np.float64]:
    """``1 - C(n-c, k)/C(n, k)`` per problem and per k (Chen 2021 Eq. 1), shape ``(N, len(ks))``.

    Columns with ``k = 1`` are ``c / n`` exactly (rather than ``1 - (n-c)/n``), so that pass@1,
    pass^1 and G-Pass@1 are the same float.
    """
    result = _miss_probability(n, c, ks)
    np.subtract(1.0, result, out=result)
    if (ks == 1).any() and n.size:
        result[:, ks == 1] = (c / n)[:, None]
    return result


def _upper_tails(n: NDArray[np.int64], c: NDArray[np.int64], k: int, thresholds: NDArray[np.int64]) -> NDArray[np.float64]:
    """``P(X >= m)`` for ``X ~ Hypergeom(n, c, k)`` per problem and per threshold ``m``.

    The probabilities ``w(x)`` for ``x = 0..k`` are built from the ratio
    ``w(x+1)/w(x) = (c-x)(k-x) / ((x+1)(n-c-k+x+1))`` outwards from the mode
    ``floor((k+1)(c+1)/(n+2))``, where ``w`` is set to 1, then normalised by their sum. Every
    ``w`` lies in [0, 1], so nothing overflows; far tails underflow to 0 harmlessly.
    Shape ``(N, len(thresholds))``; requires ``0 <= m <= k + 1``.
    """
    n_rows = n.shape[0]
    out_t = np.empty((thresholds.shape[0], n_rows), dtype=np.float64)
    if n_rows == 0:
        return out_t.T
    with np.errstate(under="ignore"):  # far tails underflowing to 0 are harmless
        # Rows per chunk: a cache-sized (k+1, rows) working set, but wide enough (up to
        # _WIDE_ROWS, within _MAX_CHUNK_ELEMENTS) that the row-by-row loops stay vectorized.
        cache_rows = _CHUNK_ELEMENTS // (k + 1)
        wide_rows = min(_WIDE_ROWS, _MAX_CHUNK_ELEMENTS // (k + 1))
        chunk_rows = min(_CHUNK_ROWS, max(1, cache_rows, wide_rows))
        for rows in _row_slices(n_rows, 1, chunk_rows):
            out_t[:, rows] = _upper_tails_chunk(n[rows], c[rows], k, thresholds)
    np.clip(out_t, 0.0, 1.0, out=out_t)
    return out_t.T


def _upper_tails_chunk(n, c, k: int, thresholds) -> NDArray[np.float64]:
    y = np.arange(k, dtype=np.float64)[:, None]  # ratio index: w(y+1)/w(y), y = 0..k-1
    nf = n.astype(np.float64)
    cf = c.astype(np.float64)
    mode = np.floor((k + 1) * (cf + 1) / (nf + 2))  # mode of Hypergeom(n, c, k)
    num = cf - y
    num *= k - y  # (c-y)(k-y): <= 0 exactly for y >= min(c, k), so w is 0 past the support
    den = (nf - cf - k + 1) + y
    den *= y + 1  # (y+1)(n-c-k+y+1): <= 0 exactly for y < max(0, k-(n-c)) - 1
    below_mode = y < mode
    # Upward from the mode: U(x) = prod_{mode <= y < x} r(y) (den > 0 there, as mode >= lo).
    up = np.divide(num, den, out=np.ones_like(num), where=~below_mode)
    np.maximum(up, 0.0, out=up)
    _accumulate_rows(np.multiply, up)
    # Downward from the mode: D(x) = prod_{x <= y < mode} 1/r(y) (num > 0 there, as mode <= hi).
    down = np.divide(den, num, out=np.ones_like(num), where=below_mode)
    np.maximum(down, 0.0, out=down)
    _accumulate_rows(np.multiply, down[::-1])
    weights = np.empty((k + 1, n.shape[0]), dtype=np.float64)  # w(x) = U(x) D(x), w(mode) = 1
    weights[0] = down[0]
    np.multiply(up[:-1], down[1:], out=weights[1:k])
    weights[k] = up[k - 1]
    tails = np.zeros((k + 2, n.shape[0]), dtype=np.float64)
    tails[: k + 1] = weights
    _accumulate_rows(np.add, tails[k::-1])  # tails[m] = sum_{x >= m} w(x)
    return tails[thresholds] / tails[0]


#: Largest k for which the ratio recurrence (:func:`_upper_tails`) builds all ``k + 1``
#: probabilities (a few (k + 1)-row buffers); past it G-Pass@k takes ``hypergeom.sf`` (constant
#: memory, one tail per threshold) and mG-Pass@k, which needs every tail, refuses.
MAX_TAIL_DRAWS = 1 << 20

#: Most thresholds per k, and largest k, for which :func:`_g_pass_tails` uses ``hypergeom.sf``.
_SF_MAX_THRESHOLDS = 2
_SF_MAX_K = 64


def _g_pass_tails(n: NDArray[np.int64], c: NDArray[np.int64], k: int, thresholds: NDArray[np.int64]) -> NDArray[np.float64]:
    """``P(X >= m)`` for ``X ~ Hypergeom(n, c, k)``, shape ``(N, len(thresholds))``, by the faster route.

    ``scipy.stats.hypergeom.sf(m - 1, n, c, k)`` costs one tail sum per threshold; the ratio
    recurrence (:func:`_upper_tails`) builds all ``k + 1`` probabilities once and reads every
    threshold off them. Measured side by side (N = 10^5 problems of n = 64, best of three):
    ``sf`` is several times faster for one threshold at k = 16 and about even at three, the
    recurrence 2.5x faster at nine thresholds and 2x faster at n = 1000, k = 100. Both agree with
    exact rational arithmetic to a few ulp (``tests/metrics/test_passk.py``).
    """
    if (thresholds.shape[0] <= _SF_MAX_THRESHOLDS and k <= _SF_MAX_K) or k > MAX_TAIL_DRAWS:  # sf: no O(k) memory
        tails = hypergeom.sf(thresholds[None, :] - 1, n[:, None], c[:, None], k)
        return np.clip(np.asarray(tails, dtype=np.float64), 0.0, 1.0)
    return _upper_tails(n, c, k, thresholds)


def _finish(result: NDArray[np.float64], scalar_input: bool, k_is_scalar: bool) -> NDArray[np.float64]:
    if k_is_scalar:
        result = result[:, 0]
    if scalar_input:
        result = result[0]
    return result


def _count_k_iv(n_samples: Any, n_correct: Any, k: Any, correct_name: str = "n_correct"):
    """Validate ``(n_samples, <correct_name>, k)`` for the estimators built on one count per problem.

    pass@k, pass^k, fin@k and CoT-Pass@k share it; ``correct_name`` names the count in messages
    (``"n_correct"``, ``"n_finished"``, ``"n_cot_correct"``).

    Returns
    -------
    n, c : ndarray of int64, shape (N,)
    k_values : ndarray of int64, shape (K,)
    scalar_input, k_is_scalar : bool
        Whether the counts (both 0-D) and ``k`` were scalars; see :func:`_finish`.
    """
    n, c, scalar_input = check_counts(n_samples, n_correct, correct_name=correct_name)
    k_values, k_is_scalar = check_k(k, n)
    return n, c, k_values, scalar_input, k_is_scalar


def pass_at_k(n_samples: ArrayLike, n_correct: ArrayLike, k: int | ArrayLike) -> NDArray[np.float64]:
    r"""Unbiased pass@k per problem: the probability that at least one of k samples is correct.

    .. math::

        \mathrm{pass@}k = 1 - \binom{n-c}{k} \Big/ \binom{n}{k}
                        = 1 - \prod_{i=0}^{k-1} \frac{n-c-i}{n-i}

    which is exactly 1 when :math:`n - c < k`. This is the minimum-variance unbiased estimator
    of :math:`1-(1-p)^k` from :math:`n \ge k` samples [1]_.

    Parameters
    ----------
    n_samples : array_like of int, shape (N,)
        Samples drawn per problem (ragged ``n`` allowed); every ``n >= k``.
    n_correct : array_like of int, shape (N,)
        Correct samples per problem, ``0 <= c <= n``.
    k : int or 1-D sequence of int
        Number of draws, ``1 <= k <= n`` for every problem.

    Returns
    -------
    ndarray of float64, shape (N,) or (N, len(k))
        Per-problem estimates in [0, 1]; the benchmark score is their mean.

    Raises
    ------
    ValueError
        ``k > n`` for some problem (undefined; the message names the problems), ``c > n``,
        negative or non-integer counts, NaN, mismatched lengths.
    TypeError
        Non-numeric or boolean input.

    Notes
    -----
    Published code disagrees at ``k > n``: openai/human-eval returns 1.0 (even for ``c = 0``)
    and other code returns 0.0 or NaN; kpass raises (docs/spec.md section 1). The biased plug-in
    :math:`1-(1-c/n)^k` is :func:`biased_plugin_pass_at_k`. For a sequence of ``k`` the whole
    curve comes from one cumulative product over ``i < max(k)``.

    References
    ----------
    .. [1] M. Chen et al., "Evaluating Large Language Models Trained on Code",
       arXiv:2107.03374 (2021), Eq. 1 and its numerically stable product form.

    Examples
    --------
    >>> from kpass.metrics import pass_at_k
    >>> pass_at_k([10, 200], [3, 10], k=5).round(6)
    array([0.916667, 0.228284])
    >>> pass_at_k([10], [3], k=[1, 5, 10])
    array([[0.3       , 0.91666667, 1.        ]])
    """
    n, c, k_values, scalar_input, k_is_scalar = _count_k_iv(n_samples, n_correct, k)
    result = _pass_curve(n, c, k_values)  # Chen 2021 Eq. 1 (product form)
    return _finish(result, scalar_input, k_is_scalar)


def pass_hat_k(n_samples: ArrayLike, n_correct: ArrayLike, k: int | ArrayLike) -> NDArray[np.float64]:
    r"""Unbiased pass^k per problem: the probability that all k of k samples are correct.

    .. math::

        \mathrm{pass}^k = \binom{c}{k} \Big/ \binom{n}{k} = \prod_{i=0}^{k-1} \frac{c-i}{n-i}

    which is 0 when :math:`c < k`; the unbiased estimator of :math:`p^k` [1]_.

    Parameters
    ----------
    n_samples : array_like of int, shape (N,)
        Samples drawn per problem; every ``n >= k``.
    n_correct : array_like of int, shape (N,)
        Correct samples per problem, ``0 <= c <= n``.
    k : int or 1-D sequence of int
        Number of draws, ``1 <= k <= n``.

    Returns
    -------
    ndarray of float64, shape (N,) or (N, len(k))

    Raises
    ------
    ValueError, TypeError
        As :func:`pass_at_k`.

    Notes
    -----
    Equals :func:`g_pass_at_k` with ``tau = 1``.

    References
    ----------
    .. [1] S. Yao et al., "tau-bench: A Benchmark for Tool-Agent-User Interaction in Real-World
       Domains", arXiv:2406.12045 (2024) (the pass^k metric).

    Examples
    --------
    >>> from kpass.metrics import pass_hat_k
    >>> pass_hat_k([10, 8], [3, 6], k=[2, 4]).round(6)
    array([[0.066667, 0.      ],
           [0.535714, 0.214286]])
    """
    n, c, k_values, scalar_input, k_is_scalar = _count_k_iv(n_samples, n_correct, k)
    # C(c, k)/C(n, k) is the probability that k draws miss all n - c incorrect samples.
    result = _miss_probability(n, n - c, k_values)
    return _finish(result, scalar_input, k_is_scalar)


def _biased_plugin_pass_at_k_iv(n_samples: Any, n_correct: Any, k: Any):
    n, c, scalar_input = check_counts(n_samples, n_correct)
    k_values, k_is_scalar = check_k(k)
    empty = n == 0
    if empty.any():
        raise ValueError(f"`n_samples` must be >= 1 for the plug-in estimate; zero at {describe_offenders(empty)}.")
    return n, c, k_values, scalar_input, k_is_scalar


def biased_plugin_pass_at_k(n_samples: ArrayLike, n_correct: ArrayLike, k: int | ArrayLike) -> NDArray[np.float64]:
    r"""The plug-in 1 - (1 - c/n)^k, which is biased low as an estimate of pass@k.

    .. math::

        \widehat{\mathrm{pass@}k}_{\text{plug-in}} = 1 - \left(1 - \frac{c}{n}\right)^k

    Offered only to reproduce code that reports it; use :func:`pass_at_k` for an unbiased
    estimate [1]_. Defined for any ``k >= 1`` (also ``k > n``) and ``n >= 1``.

    Parameters
    ----------
    n_samples : array_like of int, shape (N,)
    n_correct : array_like of int, shape (N,)
    k : int or 1-D sequence of int

    Returns
    -------
    ndarray of float64, shape (N,) or (N, len(k))

    References
    ----------
    .. [1] M. Chen et al., "Evaluating Large Language Models Trained on Code",
       arXiv:2107.03374 (2021), where the plug-in is shown to be biased.

    Examples
    --------
    >>> from kpass.metrics import biased_plugin_pass_at_k
    >>> biased_plugin_pass_at_k([10], [3], k=5).round(5)
    array([0.83193])
    """
    n, c, k_values, scalar_input, k_is_scalar = _biased_plugin_pass_at_k_iv(n_samples, n_correct, k)
    miss = (n - c).astype(np.float64) / n.astype(np.float64)
    with np.errstate(under="ignore"):  # (1 - c/n)^k underflowing to 0 is exact enough
        result = 1.0 - np.power(miss[:, None], k_values[None, :].astype(np.float64))
    return _finish(result, scalar_input, k_is_scalar)


def _g_pass_at_k_iv(n_samples: Any, n_correct: Any, k: Any, tau: Any):
    n, c, k_values, scalar_input, k_is_scalar = _count_k_iv(n_samples, n_correct, k)
    taus, tau_is_scalar = check_tau(tau)
    return n, c, k_values, taus, scalar_input, k_is_scalar, tau_is_scalar


def g_pass_at_k(
    n_samples: ArrayLike, n_correct: ArrayLike, k: int | ArrayLike, *, tau: float | str | Fraction | Any
) -> NDArray[np.float64]:
    r"""G-Pass@k_tau per problem: the probability that at least ``m`` of k samples are correct.

    .. math::

        \mathrm{G\text{-}Pass@}k_\tau = P(X \ge m)
            = \sum_{j=m}^{\min(c,k)} \binom{c}{j}\binom{n-c}{k-j} \Big/ \binom{n}{k},
        \qquad m = \max(\lceil \tau k \rceil, 1),

    with :math:`X \sim \mathrm{Hypergeom}(n, c, k)` [1]_. ``tau <= 1/k`` (including 0) gives
    :func:`pass_at_k` and ``tau = 1`` gives :func:`pass_hat_k` (both returned exactly by those
    functions' algorithms).

    Parameters
    ----------
    n_samples : array_like of int, shape (N,)
        Samples drawn per problem; every ``n >= k``.
    n_correct : array_like of int, shape (N,)
        Correct samples per problem, ``0 <= c <= n``.
    k : int or 1-D sequence of int
        Number of draws, ``1 <= k <= n``.
    tau : float, str, Fraction, Decimal, or a 1-D sequence of them
        Required fraction of correct draws, in [0, 1]. Taken exactly: a float through its
        shortest decimal form (``0.28`` is 7/25), so ``m`` never suffers float rounding.

    Returns
    -------
    ndarray of float64
        ``(N,)`` for scalar ``k`` and ``tau``; ``(N, len(tau))`` for scalar ``k`` and a
        sequence ``tau``; ``(N, len(k))`` for a sequence ``k`` and scalar ``tau``;
        ``(N, len(k), len(tau))`` when both are sequences.

    Raises
    ------
    ValueError
        ``tau`` outside [0, 1] or NaN, and every error of :func:`pass_at_k`.
    TypeError
        ``tau`` of an unsupported type (e.g. a boolean), non-numeric counts.

    Notes
    -----
    The reference implementation computes ``m`` as ``np.ceil(k * tau)`` in floating point,
    which is one too high for 13 (tau, k) pairs with two-decimal tau and ``k <= 128`` (e.g.
    ``tau = 0.28, k = 25`` gives 8 instead of 7); kpass follows the definition
    (docs/spec.md section 3). Computed as ``scipy.stats.hypergeom.sf(m - 1, n, c, k)`` for one or
    two thresholds per k with ``k <= 64``, else by the vectorized ratio recurrence around the
    mode, which gives every threshold at once (see :func:`_g_pass_tails`).

    References
    ----------
    .. [1] J. Liu et al., "Are Your LLMs Capable of Stable Reasoning?", arXiv:2412.13147 (2024),
       definition of G-Pass@k_tau (docs/spec.md section 3).

    Examples
    --------
    >>> from kpass.metrics import g_pass_at_k
    >>> g_pass_at_k([48, 16], [24, 8], k=4, tau=0.5).round(6)
    array([0.695745, 0.715385])
    >>> g_pass_at_k([16], [8], k=4, tau=[0, 0.5, 1]).round(6)
    array([[0.961538, 0.715385, 0.038462]])
    """
    n, c, k_values, taus, scalar_input, k_is_scalar, tau_is_scalar = _g_pass_at_k_iv(n_samples, n_correct, k, tau)
    result = np.empty((n.shape[0], k_values.shape[0], len(taus)), dtype=np.float64)
    for k_index, k_value in enumerate(k_values.tolist()):
        thresholds = np.array([exact_threshold(t, k_value) for t in taus], dtype=np.int64)
        general = (thresholds > 1) & (thresholds < k_value)
        if general.any():
            result[:, k_index, general] = _g_pass_tails(n, c, k_value, thresholds[general])
        ks = np.array([k_value], dtype=np.int64)
        if (thresholds == 1).any():  # m = 1: pass@k (Liu 2024's G-Pass with tau <= 1/k)
            result[:, k_index, thresholds == 1] = _pass_curve(n, c, ks)
        if ((thresholds == k_value) & (thresholds > 1)).any():  # m = k: pass^k
            result[:, k_index, (thresholds == k_value) & (thresholds > 1)] = _miss_probability(n, n - c, ks)
    if tau_is_scalar:
        result = result[:, :, 0]
    elif k_is_scalar:
        result = result[:, 0, :]
    if k_is_scalar and tau_is_scalar:
        result = result[:, 0]
    if scalar_input:
        result = result[0]
    return result


def _mg_pass_at_k_iv(n_samples: Any, n_correct: Any, k: Any, variant: Any):
    n, c, k_values, scalar_input, k_is_scalar = _count_k_iv(n_samples, n_correct, k)
    variant = check_option(variant, "variant", _MG_VARIANTS)
    if int(k_values.max()) > MAX_TAIL_DRAWS:
        raise ValueError(f"`k` must be at most {MAX_TAIL_DRAWS} for mG-Pass@k (it builds the k + 1 probabilities of "
                         f"every problem); got {int(k_values.max())}.")
    if variant == "published" and (k_values == 1).any():
        warnings.warn(
            "mG-Pass@k with k = 1 is 0 for every problem by definition (variant='published': the sum over "
            "i = ceil(k/2)+1..k is empty); pass variant='integral' (which gives c/n) or use k >= 2.",
            MeaninglessMetricWarning, stacklevel=3)
    return n, c, k_values, variant, scalar_input, k_is_scalar


def mg_pass_at_k(
    n_samples: ArrayLike, n_correct: ArrayLike, k: int | ArrayLike, *, variant: str = "published"
) -> NDArray[np.float64]:
    r"""mG-Pass@k per problem: G-Pass@k_tau averaged over tau in [0.5, 1].

    As published and as leaderboards report it (``variant="published"``) [1]_:

    .. math::

        \mathrm{mG\text{-}Pass@}k = \frac{2}{k} \sum_{i=\lceil k/2 \rceil + 1}^{k} P(X \ge i),
        \qquad X \sim \mathrm{Hypergeom}(n, c, k).

    ``variant="integral"`` gives :math:`2\int_{0.5}^{1} \mathrm{G\text{-}Pass@}k_\tau\,d\tau`
    exactly. The two are identical for even k; for odd k the published sum drops the half step
    :math:`\frac{1}{k} P(X \ge (k+1)/2)`, so k = 1 gives 0 (published) versus c/n (integral).

    Parameters
    ----------
    n_samples : array_like of int, shape (N,)
        Samples drawn per problem; every ``n >= k``.
    n_correct : array_like of int, shape (N,)
        Correct samples per problem.
    k : int or 1-D sequence of int
        Number of draws, ``1 <= k <= n``.
    variant : {"published", "integral"}, default: "published"
        Keyword-only.

    Returns
    -------
    ndarray of float64, shape (N,) or (N, len(k))

    Raises
    ------
    ValueError
        Unknown ``variant``, and every error of :func:`pass_at_k`.

    Warns
    -----
    MeaninglessMetricWarning
        ``k = 1`` with ``variant="published"``: the published sum is empty, so the value is 0 for
        every problem whatever the samples say (``variant="integral"`` gives ``c/n``).

    References
    ----------
    .. [1] J. Liu et al., "Are Your LLMs Capable of Stable Reasoning?", arXiv:2412.13147 (2024),
       definition of mG-Pass@k (docs/spec.md section 3).

    Examples
    --------
    >>> from kpass.metrics import mg_pass_at_k
    >>> mg_pass_at_k([16], [8], k=4).round(6)   # 21/130
    array([0.161538])
    >>> mg_pass_at_k([16], [8], k=[1, 3], variant="integral").round(6)
    array([[0.5     , 0.233333]])
    """
    n, c, k_values, variant, scalar_input, k_is_scalar = _mg_pass_at_k_iv(n_samples, n_correct, k, variant)
    result = np.zeros((n.shape[0], k_values.shape[0]), dtype=np.float64)
    for k_index, k_value in enumerate(k_values.tolist()):
        first = -(-k_value // 2) + 1  # ceil(k/2) + 1, the published mG-Pass sum (docs/spec.md section 3)
        thresholds = list(range(first, k_value + 1))
        half_step = variant == "integral" and k_value % 2 == 1
        if half_step:
            thresholds.append((k_value + 1) // 2)
        if not thresholds:
            continue
        tails = _upper_tails(n, c, k_value, np.array(thresholds, dtype=np.int64))
        total = tails[:, : k_value + 1 - first].sum(axis=1)
        if half_step:
            total += 0.5 * tails[:, -1]  # the partial step ((k-1)/(2k), (k+1)/(2k)] ∩ [1/2, 1]
        result[:, k_index] = (2.0 / k_value) * total
    np.clip(result, 0.0, 1.0, out=result)
    return _finish(result, scalar_input, k_is_scalar)
