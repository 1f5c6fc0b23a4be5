"""Tests of CoT-Pass@k and of the verdict aggregation rules (docs/spec.md section 5)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kpass.metrics import cot_pass_at_k, count_cot_correct, pass_at_k

TOL = 1e-12
YES, NO, INVALID = 1.0, 0.0, np.nan


def test_cot_pass_reference_value():
    # docs/spec.md CT2: CoT-Pass@2 with n = 8, D = 4 is 1 - C(4,2)/C(8,2) = 11/14
    assert abs(cot_pass_at_k([8], [4], 2)[0] - 11 / 14) < TOL


@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(0, n), st.integers(1, n))))
def test_cot_pass_is_pass_at_k_with_d_and_never_above_pass_at_k(case):
    n, c, d_raw, k = case
    d = min(d_raw, c)  # D <= c: CoT-correct samples are answer-correct
    expected = 1 - Fraction(math.comb(n - d, k), math.comb(n, k))  # Wen 2025 CoT-Pass@K, docs/spec.md section 5
    value = cot_pass_at_k([n], [d], k)[0]
    assert abs(value - float(expected)) < TOL
    assert value <= pass_at_k([n], [c], k)[0] + 1e-15


def test_cot_pass_shapes():
    assert cot_pass_at_k([8, 9], [4, 0], [1, 2, 8]).shape == (2, 3)
    assert np.ndim(cot_pass_at_k(8, 4, 2)) == 0


# ---------------------------------------------------------------- the rules, by hand
# one problem, six answer-correct samples, three verifier runs each
VERDICTS = [
    [YES, YES, YES],  # any, majority, all
    [YES, NO, INVALID],  # any only (majority: a 1-1 tie vetoes)
    [YES, INVALID, INVALID],  # any, majority (invalid abstains), not all (invalid vetoes)
    [NO, NO, YES],  # any only
    [INVALID, INVALID, INVALID],  # none
    [NO, NO, NO],  # none
]


@pytest.mark.parametrize(("rule", "expected"), [("any", 4), ("majority", 2), ("all", 1)])
def test_rules_by_hand(rule, expected):
    answer_correct = np.ones((1, 6), dtype=bool)
    assert count_cot_correct(answer_correct, [VERDICTS], rule=rule).tolist() == [expected]


@pytest.mark.parametrize("rule", ["any", "majority", "all"])
def test_wrong_answers_never_count(rule):
    answer_correct = np.zeros((1, 6), dtype=bool)
    assert count_cot_correct(answer_correct, [VERDICTS], rule=rule).tolist() == [0]


def test_invalid_spellings_are_equivalent():
    answer_correct = np.ones((1, 6), dtype=bool)
    as_nan = np.array([VERDICTS])
    as_minus_one = np.where(np.isnan(as_nan), -1, as_nan).astype(int)
    as_none = np.where(np.isnan(as_nan), None, as_nan.astype(object))
    for rule in ("any", "majority", "all"):
        expected = count_cot_correct(answer_correct, as_nan, rule=rule)
        assert count_cot_correct(answer_correct, as_minus_one, rule=rule).tolist() == expected.tolist()
        assert count_cot_correct(answer_correct, as_none, rule=rule).tolist() == expected.tolist()
    booleans = np.array([[[True, False], [True, True]]])
    assert count_cot_correct([[1, 1]], booleans, rule="all").tolist() == [1]


def test_default_rule_is_any_and_wrong_answers_may_hold_nan():
    answer_correct = [[1, 0]]
    verdicts = [[[NO, YES], [INVALID, INVALID]]]
    assert count_cot_correct(answer_correct, verdicts).tolist() == [1]


# ---------------------------------------------------------------- ragged data: masks
def test_sample_mask_and_slot_mask():
    answer_correct = np.array([[1, 1, 1], [1, 0, 1]])
    verdicts = np.array(
        [
            [[YES, NO, 7.0], [YES, YES, 7.0], [NO, NO, 7.0]],  # 7.0 = padding (two verdicts per sample)
            [[YES, YES, YES], [YES, YES, YES], [9.0, 9.0, 9.0]],  # sample 2 is padding
        ]
    )
    slot_mask = np.ones(verdicts.shape, dtype=bool)
    slot_mask[0, :, 2] = False
    slot_mask[1, 2, :] = False
    np.testing.assert_array_equal(count_cot_correct(answer_correct, verdicts, rule="all", mask=slot_mask), [1, 1])
    np.testing.assert_array_equal(count_cot_correct(answer_correct, verdicts, rule="majority", mask=slot_mask), [1, 1])
    np.testing.assert_array_equal(count_cot_correct(answer_correct, verdicts, rule="any", mask=slot_mask), [2, 1])
    sample_mask = np.array([[True, True, False], [True, True, False]])
    with pytest.raises(ValueError, match="other values at"):  # the 7.0 padding is real under a sample mask
        count_cot_correct(answer_correct, verdicts, mask=sample_mask)
    verdicts[0, :, 2] = YES  # now a real third verdict for every sample of problem 0
    np.testing.assert_array_equal(count_cot_correct(answer_correct, verdicts, rule="all", mask=sample_mask), [1, 1])
    np.testing.assert_array_equal(count_cot_correct(answer_correct, verdicts, rule="majority", mask=sample_mask), [2, 1])


def test_verdicts_of_wrong_answer_samples_are_ignored_whatever_they_hold():
    # module docstring: a sample whose answer is wrong never counts and its verdicts are not looked
    # at, so values that would be invalid for an answer-correct sample (0.5, 7) are not errors there
    answer_correct = np.array([[1, 0, 0], [0, 1, 1]])
    verdicts = np.array([[[YES, NO], [0.5, 7.0], [YES, YES]],
                         [[-3.0, 2.0], [YES, YES], [NO, INVALID]]])
    for rule, expected in (("any", [1, 1]), ("majority", [0, 1]), ("all", [0, 1])):
        np.testing.assert_array_equal(count_cot_correct(answer_correct, verdicts, rule=rule), expected)
    verdicts[1, 2, 0] = 0.5  # the same value on an answer-correct sample is an error naming it
    with pytest.raises(ValueError, match=r"for answer-correct samples; other values at 1 entry; first: \[1, 2, 0\] "
                       r"\(verdict=0.5\)"):
        count_cot_correct(answer_correct, verdicts)


def test_sample_without_verdicts_never_counts():
    verdicts = np.full((1, 2, 2), YES)
    mask = np.ones((1, 2, 2), dtype=bool)
    mask[0, 1] = False
    for rule in ("any", "majority", "all"):
        assert count_cot_correct([[1, 1]], verdicts, rule=rule, mask=mask).tolist() == [1]
    assert count_cot_correct(np.ones((1, 2)), np.zeros((1, 2, 0)), rule="all").tolist() == [0]


def reference_count(answer_correct, verdicts, slot_mask, rule):
    """Literal Python loop over problems, samples and verdicts (docs/spec.md section 5)."""
    counts = []
    for j in range(len(answer_correct)):
        total = 0
        for s in range(len(answer_correct[j])):
            real = [v for v, keep in zip(verdicts[j][s], slot_mask[j][s]) if keep]
            if not real or not answer_correct[j][s]:
                continue
            yes = sum(1 for v in real if v == 1)
            no = sum(1 for v in real if v == 0)
            if rule == "any":
                total += yes >= 1
            elif rule == "majority":
                total += yes > no
            else:
                total += yes == len(real)
        counts.append(total)
    return counts


@st.composite
def verdict_data(draw):
    n_problems = draw(st.integers(1, 5))
    n_samples = draw(st.integers(1, 6))
    n_verdicts = draw(st.integers(1, 5))
    shape = (n_problems, n_samples, n_verdicts)
    cells = n_problems * n_samples * n_verdicts
    values = draw(st.lists(st.sampled_from([1.0, 0.0, np.nan, -1.0]), min_size=cells, max_size=cells))
    keep = draw(st.lists(st.booleans(), min_size=cells, max_size=cells))
    correct = draw(st.lists(st.booleans(), min_size=n_problems * n_samples, max_size=n_problems * n_samples))
    return (
        np.array(correct).reshape(shape[:2]),
        np.array(values).reshape(shape),
        np.array(keep).reshape(shape),
    )


@given(verdict_data(), st.sampled_from(["any", "majority", "all"]))
def test_vectorized_rules_equal_the_literal_loop(data, rule):
    answer_correct, verdicts, slot_mask = data
    expected = reference_count(answer_correct.tolist(), verdicts.tolist(), slot_mask.tolist(), rule)
    assert count_cot_correct(answer_correct, verdicts, rule=rule, mask=slot_mask).tolist() == expected
    # the rules are nested: all <= majority <= any, and none exceeds the answer-correct count
    counts = {r: count_cot_correct(answer_correct, verdicts, rule=r, mask=slot_mask) for r in ("any", "majority", "all")}
    assert np.all(counts["all"] <= counts["majority"]) and np.all(counts["majority"] <= counts["any"])
    assert np.all(counts["any"] <= answer_correct.sum(axis=1))


@given(verdict_data(), st.randoms(use_true_random=False))
def test_permuting_problems_permutes_counts(data, random):
    answer_correct, verdicts, slot_mask = data
    order = list(range(len(answer_correct)))
    random.shuffle(order)
    np.testing.assert_array_equal(
        count_cot_correct(answer_correct[order], verdicts[order], rule="majority", mask=slot_mask[order]),
        count_cot_correct(answer_correct, verdicts, rule="majority", mask=slot_mask)[order],
    )


# ---------------------------------------------------------------- bad input
def test_count_cot_correct_iv():
    good_answers, good_verdicts = np.ones((2, 3), dtype=bool), np.ones((2, 3, 2))
    with pytest.raises(ValueError, match=r"`rule` must be one of \['any', 'majority', 'all'\]; got 'most'"):
        count_cot_correct(good_answers, good_verdicts, rule="most")
    with pytest.raises(ValueError, match=r"`verdicts` must be 3-D \(problems x samples x verdicts\); got an array of shape \(2, 3\)"):
        count_cot_correct(good_answers, np.ones((2, 3)))
    with pytest.raises(TypeError, match=r"`verdicts` must be a rectangular \(N, S, V\) array"):
        count_cot_correct(good_answers, [[[1], [1, 0]]])
    with pytest.raises(TypeError, match=r"`verdicts` must hold 1 \(yes\), 0 \(no\), or NaN/-1/None \(invalid\); got dtype <U3"):
        count_cot_correct(good_answers, np.full((2, 3, 2), "yes"))
    with pytest.raises(TypeError, match=r"`verdicts` must hold 1 \(yes\), 0 \(no\), or NaN/-1/None \(invalid\)\.$"):
        count_cot_correct(good_answers, np.full((2, 3, 2), "yes", dtype=object))
    bad = good_verdicts.copy()
    bad[1, 2, 0] = 0.5
    with pytest.raises(ValueError, match=r"other values at 1 entry; first: \[1, 2, 0\] \(verdict=0.5\) \(index: problem, sample, verdict\)"):
        count_cot_correct(good_answers, bad)
    with pytest.raises(ValueError, match=r"`answer_correct` must have shape \(N, S\) = \(2, 3\) to match `verdicts` of shape \(2, 3, 2\); got \(3, 2\)"):
        count_cot_correct(np.ones((3, 2), dtype=bool), good_verdicts)
    with pytest.raises(TypeError, match=r"`answer_correct` must be a rectangular \(N, S\) array"):
        count_cot_correct([[1, 1, 1], [1]], good_verdicts)
    with pytest.raises(ValueError, match=r"`answer_correct` must hold only 0/1 \(or booleans\); other values at 1 entry; first: \[0, 1\]"):
        count_cot_correct([[1, 2, 1], [1, 1, 1]], good_verdicts)
    with pytest.raises(ValueError, match=r"`mask` must have shape \(N, S\) = \(2, 3\) \(real samples\) or \(N, S, V\) = \(2, 3, 2\) \(real verdict slots\); got \(2,\)"):
        count_cot_correct(good_answers, good_verdicts, mask=[True, False])
    with pytest.raises(TypeError, match=r"`mask` must be a boolean array; got dtype float64"):
        count_cot_correct(good_answers, good_verdicts, mask=np.ones((2, 3)))
