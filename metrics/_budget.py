r"""Token-budget metrics (higher-is-better): fin@k, the finishing rate under a token budget.

A sample finishes within budget B when its final answer is emitted within its first B output
tokens; a generation stopped by ``max_tokens`` without an answer has not finished
(docs/spec.md section 6). ``fin@k(B)`` is the pass@k estimator with ``c := f``, the number of
finished samples, so that ``pass@k(B) = fin@k(B) * pass@k(B | fin)``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._passk import _count_k_iv, _finish, _pass_curve

__all__ = ["fin_at_k"]


def fin_at_k(n_samples: ArrayLike, n_finished: ArrayLike, k: int | ArrayLike) -> NDArray[np.float64]:
    r"""Unbiased fin@k per problem: the probability that at least one of k samples finished.

    .. math::

        \mathrm{fin@}k = 1 - \binom{n-f}{k} \Big/ \binom{n}{k}

    where :math:`f` counts the samples that emitted a final answer within the token budget:
    the pass@k estimator of [1]_ with :math:`c := f` (docs/spec.md section 6). With ``k = 1``
    it is the finishing rate :math:`f/n`.

    Parameters
    ----------
    n_samples : array_like of int, shape (N,)
        Samples drawn per problem; every ``n >= k``.
    n_finished : array_like of int, shape (N,)
        Samples that finished within the budget, ``0 <= f <= n``.
    k : int or 1-D sequence of int
        Number of draws, ``1 <= k <= n``.

    Returns
    -------
    ndarray of float64, shape (N,) or (N, len(k))

    Raises
    ------
    ValueError, TypeError
        As :func:`pass_at_k` (messages name ``n_finished``).

    References
    ----------
    .. [1] M. Chen et al., "Evaluating Large Language Models Trained on Code",
       arXiv:2107.03374 (2021), Eq. 1.

    Examples
    --------
    >>> from kpass.metrics import fin_at_k
    >>> fin_at_k([10, 10], [3, 10], k=[1, 5]).round(6)
    array([[0.3     , 0.916667],
           [1.      , 1.      ]])
    """
    n, f, k_values, scalar_input, k_is_scalar = _count_k_iv(n_samples, n_finished, k, "n_finished")
    result = _pass_curve(n, f, k_values)  # Chen 2021 Eq. 1 with c := f
    return _finish(result, scalar_input, k_is_scalar)
