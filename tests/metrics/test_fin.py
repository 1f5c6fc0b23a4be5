"""Tests of fin@k, the finishing rate under a token budget (docs/spec.md section 6)."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kpass.metrics import fin_at_k, pass_at_k

TOL = 1e-12


@st.composite
def finished_batches(draw):
    size = draw(st.integers(1, 6))
    n = draw(st.lists(st.integers(1, 500), min_size=size, max_size=size))
    f = [draw(st.integers(0, nj)) for nj in n]
    k = draw(st.integers(1, min(n)))
    return np.array(n), np.array(f), k


@given(finished_batches())
def test_fin_at_k_is_pass_at_k_with_c_equal_to_f(batch):
    n, f, k = batch
    # docs/spec.md section 6: fin@k(B) = the pass@k estimator with c := f
    np.testing.assert_array_equal(fin_at_k(n, f, k), pass_at_k(n, f, k))
    for j in range(len(n)):
        exact = 1 - Fraction(math.comb(int(n[j] - f[j]), k), math.comb(int(n[j]), k))
        assert abs(fin_at_k(n, f, k)[j] - float(exact)) < TOL


def test_fin_at_one_is_the_finishing_rate():
    np.testing.assert_array_equal(fin_at_k([10, 8, 5], [3, 8, 0], 1), [0.3, 1.0, 0.0])
    assert abs(fin_at_k([10], [3], 5)[0] - 11 / 12) < TOL  # same numbers as docs/spec.md PK3


def test_fin_at_k_shapes_and_large_n():
    assert fin_at_k([10, 12], [3, 12], [1, 2, 10]).shape == (2, 3)
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        value = fin_at_k([100_000], [50_000], 50_000)
    assert value[0] == 1.0


def test_fin_at_k_iv():
    with pytest.raises(ValueError, match=r"`n_finished` exceeds `n_samples` for 1 problem; first: \[0\] \(n_finished=11, n_samples=10\)"):
        fin_at_k([10], [11], 1)
    with pytest.raises(ValueError, match=r"`k` = 3 exceeds `n_samples`"):
        fin_at_k([2], [1], 3)
    with pytest.raises(TypeError, match=r"`n_finished` must hold integer counts, not booleans"):
        fin_at_k([2], [True], 1)
