"""Problems with identical counts, grouped once so that a bootstrap multiplies patterns, not problems,
and the robust-reach rule on counts (private module; used by :mod:`kpass.metrics._crossover`,
:mod:`kpass.metrics._extrapolation` and :mod:`kpass.metrics._decomposition`)."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

__all__ = ["CountPatterns", "robust_wins"]


@dataclasses.dataclass(frozen=True)
class CountPatterns:
    """The distinct rows of an ``(N, C)`` count matrix and how the N problems map onto them.

    Attributes
    ----------
    patterns : ndarray of int, shape (P, C)
        Distinct rows (sorted).
    inverse : ndarray of int, shape (N,)
        Pattern of each problem.
    order, starts : ndarray of int
        Problems sorted by pattern, and where each pattern's run starts in that order.
    count : ndarray of float, shape (P,)
        Problems per pattern.
    """

    patterns: NDArray[np.int64]
    inverse: NDArray[np.intp]
    order: NDArray[np.intp]
    starts: NDArray[np.intp]
    count: NDArray[np.float64]

    @classmethod
    def of(cls, *columns: NDArray[np.int64]) -> "CountPatterns":
        patterns, inverse = np.unique(np.column_stack(columns), axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        order = np.argsort(inverse, kind="stable")
        starts = np.searchsorted(inverse[order], np.arange(len(patterns)))
        return cls(patterns, inverse, order, starts,
                   np.bincount(inverse, minlength=len(patterns)).astype(np.float64))

    def weights(self, problem_weights: NDArray[np.float64]) -> NDArray[np.float64]:
        """Sum ``(B, N)`` resampling weights of each pattern's problems: ``(B, P)``."""
        return np.add.reduceat(problem_weights[:, self.order], self.starts, axis=1)

    def rows(self) -> NDArray[np.float64]:
        """Each problem's counts as float (the ``order_by`` of :func:`kpass.metrics.bootstrap_weights`)."""
        return self.patterns[self.inverse].astype(np.float64)


def robust_wins(n_correct: NDArray[np.int64], n_samples: NDArray[np.int64], fraction: Fraction) -> NDArray[np.bool_]:
    """The robust-reach rule, exactly: correct in at least ``fraction`` of the samples,
    ``c * q >= p * n`` for ``fraction = p/q`` (robust reach in :func:`kpass.metrics.decompose_pass_change`,
    robust lone wins in :func:`kpass.metrics.pass_at_k_crossover`)."""
    return n_correct * fraction.denominator >= fraction.numerator * n_samples
