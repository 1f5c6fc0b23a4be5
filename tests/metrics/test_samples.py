"""Tests of counts_from_matrix: per-sample 0/1 outcomes (optionally ragged) to (n, c) counts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kpass.metrics import counts_from_matrix, pass_at_k


def test_counts_from_matrix_by_hand():
    outcomes = np.array([[1, 0, 1, 1], [0, 0, 0, np.nan]])  # NaN is padding, masked out
    mask = np.array([[1, 1, 1, 1], [1, 1, 1, 0]], dtype=bool)
    n, c = counts_from_matrix(outcomes, mask)
    assert n.tolist() == [4, 3] and c.tolist() == [3, 0]
    assert n.dtype == np.int64 and c.dtype == np.int64
    counts = counts_from_matrix([[True, False]])
    assert counts.n_samples.tolist() == [2] and counts.n_correct.tolist() == [1]
    n, c = counts_from_matrix(np.zeros((0, 3)))
    assert n.shape == (0,) and c.shape == (0,)


def test_sample_counts_is_public():
    # counts_from_matrix returns SampleCounts, so kpass.metrics (and kpass) export it
    import kpass
    import kpass.metrics

    assert "SampleCounts" in kpass.metrics.__all__ and kpass.SampleCounts is kpass.metrics.SampleCounts
    counts = counts_from_matrix([[1, 0, 1]])
    assert isinstance(counts, kpass.metrics.SampleCounts)
    assert counts._fields == ("n_samples", "n_correct")


@st.composite
def ragged_outcomes(draw):
    rows = draw(st.lists(st.lists(st.booleans(), min_size=0, max_size=12), min_size=1, max_size=8))
    width = max(len(r) for r in rows)
    return rows, width


@given(ragged_outcomes(), st.sampled_from([0, 1, -7, np.nan]))
def test_padded_matrix_equals_row_by_row_counts(data, pad_value):
    rows, width = data
    outcomes = np.full((len(rows), width), pad_value, dtype=float)
    mask = np.zeros((len(rows), width), dtype=bool)
    for j, row in enumerate(rows):
        outcomes[j, : len(row)] = row
        mask[j, : len(row)] = True
    n, c = counts_from_matrix(outcomes, mask)
    assert n.tolist() == [len(r) for r in rows]
    assert c.tolist() == [sum(r) for r in rows]


def test_counts_feed_the_estimators():
    outcomes = [[1, 0, 0, 0, 1, 0, 0, 0, 0, 1]]  # n = 10, c = 3
    n, c = counts_from_matrix(outcomes)
    assert abs(pass_at_k(n, c, 5)[0] - 11 / 12) < 1e-12  # docs/spec.md PK3


def test_counts_from_matrix_iv():
    with pytest.raises(ValueError, match=r"`outcomes` must be 2-D \(problems x samples\); got an array of shape \(3,\)"):
        counts_from_matrix([1, 0, 1])
    with pytest.raises(TypeError, match=r"`outcomes` must be a rectangular 2-D array of 0/1 outcomes \(pad ragged rows and pass `mask`\)"):
        counts_from_matrix([[1, 0], [1]])
    with pytest.raises(ValueError, match=r"`outcomes` must hold only 0/1 \(or booleans\); other values at 2 entries; first: \[0, 1\] \(outcomes=2\.0\), \[1, 0\] \(outcomes=nan\)"):
        counts_from_matrix([[1, 2], [np.nan, 0]])
    with pytest.raises(TypeError, match=r"`outcomes` must hold 0/1 outcomes or booleans; got dtype <U3"):
        counts_from_matrix([["yes", "no"]])
    with pytest.raises(ValueError, match=r"`mask` must have shape \(1, 2\) \(the same as the data\); got \(2,\)"):
        counts_from_matrix([[1, 0]], mask=[True, False])
    with pytest.raises(ValueError, match=r"`mask` must be boolean \(or 0/1\); other values at 1 entry; first: \[0, 1\] \(mask=2\)"):
        counts_from_matrix([[1, 0]], mask=[[1, 2]])
    with pytest.raises(TypeError, match=r"`mask` must be a boolean array; got dtype float64"):
        counts_from_matrix([[1, 0]], mask=[[1.0, 0.0]])
    with pytest.raises(TypeError, match=r"`mask` must be a rectangular boolean array of shape \(1, 2\)"):
        counts_from_matrix([[1, 0]], mask=[[True], [True, False]])


def test_binary_matrix_and_mask_helpers_messages():
    # shared by count_cot_correct; messages not reachable through counts_from_matrix
    from kpass.metrics._samples import as_binary_matrix, as_mask

    with pytest.raises(TypeError, match=r"`answer_correct` must be a rectangular 2-D array of 0/1 outcomes"):
        as_binary_matrix([[1, 0], [1]], "answer_correct")
    with pytest.raises(ValueError, match=r"`answer_correct` must be 2-D; got an array of shape \(2,\)"):
        as_binary_matrix([1, 0], "answer_correct")
    with pytest.raises(TypeError, match=r"`mask` must be a rectangular boolean array of shape \(2, 1\)"):
        as_mask([[True], [True, False]], (2, 1))
    assert as_binary_matrix([[1.0, np.nan]], "x", where=np.array([[True, False]])).tolist() == [[True, False]]
    assert as_mask([[1, 0]], (1, 2)).dtype == bool
