"""Pareto frontier and best configuration within a compute level (kpass.metrics._frontier)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kpass.metrics import best_within_compute, pareto_frontier

points = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=12)


@settings(max_examples=100)
@given(points)
def test_pareto_frontier_equals_the_definition(pts):
    x = np.array([p[0] for p in pts], dtype=float)
    y = np.array([p[1] for p in pts], dtype=float)
    expected = [not any(x[j] <= x[i] and y[j] >= y[i] and (x[j], y[j]) != (x[i], y[i]) for j in range(len(x)))
                for i in range(len(x))]
    assert pareto_frontier(x, y).tolist() == expected


@settings(max_examples=100)
@given(points, st.lists(st.integers(0, 7), min_size=1, max_size=4))
def test_best_within_compute_equals_a_loop(pts, levels):
    x = np.array([p[0] for p in pts], dtype=float)
    y = np.array([p[1] for p in pts], dtype=float)
    owner = np.arange(len(pts)) % 3
    got = best_within_compute(levels, x, y, owner, 3)
    for li, level in enumerate(levels):
        for o in range(3):
            mine = [i for i in range(len(pts)) if owner[i] == o and x[i] <= level]
            if not mine:
                assert got[li, o] == -1
            else:
                best = max(y[i] for i in mine)
                cheapest = min(x[i] for i in mine if y[i] == best)
                assert got[li, o] == min(i for i in mine if y[i] == best and x[i] == cheapest)


def test_frontier_iv():
    with pytest.raises(ValueError, match="same length"):
        pareto_frontier([1, 2], [0.5])
    with pytest.raises(ValueError, match="finite"):
        pareto_frontier([1, np.nan], [0.5, 0.2])
    with pytest.raises(ValueError, match=">= 0"):
        pareto_frontier([-1, 2], [0.5, 0.2])
    with pytest.raises(ValueError, match="`owner`"):
        best_within_compute([1], [1, 2], [0.1, 0.2], [0, 5], 2)
