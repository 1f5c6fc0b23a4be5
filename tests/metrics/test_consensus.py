"""Tests of kpass.metrics._consensus: cons@k, class counts from answers, the first-k vote.

References: kpass docs/spec.md section 4 and its table (MJ*); brute-force enumeration of every
k-subset with exact ``fractions.Fraction`` arithmetic; an independent exact integer programme
over count vectors for larger n; lm-evaluation-harness 0.4.13's own filters for the first-k vote.
"""

from __future__ import annotations

import doctest
import itertools
import warnings
from fractions import Fraction
from functools import lru_cache
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kpass.metrics._consensus as consensus_module
from kpass.metrics import (
    InconsistentAnswersError,
    class_counts_from_answers,
    class_counts_from_codes,
    cons_at_k,
    first_k_majority_vote,
)

VARIANTS = [(ties, invalid) for ties in ("fractional", "strict") for invalid in ("abstain", "vote")]


# ----------------------------------------------------------------------------------------------
# references
# ----------------------------------------------------------------------------------------------


def _score(sizes: dict[int, int], ties: str) -> Fraction:
    """Vote score of one subset: label 0 is gold; ``sizes`` holds the voting classes only."""
    gold = sizes.get(0, 0)
    if gold == 0 or gold < max(sizes.values()):
        return Fraction(0)
    tied = sum(1 for size in sizes.values() if size == gold)
    if ties == "fractional":
        return Fraction(1, tied)
    return Fraction(int(tied == 1))


@lru_cache(maxsize=None)
def brute_force(gold: int, wrong: tuple[int, ...], n_invalid: int) -> dict:
    """``{(k, ties, invalid): Fraction}`` by enumerating every k-subset of the labelled samples."""
    labels = [0] * gold + [j + 1 for j, size in enumerate(wrong) for _ in range(size)] + [-1] * n_invalid
    n = len(labels)
    totals = {(k, ties, invalid): Fraction(0) for k in range(1, n + 1) for ties, invalid in VARIANTS}
    for k in range(1, n + 1):
        for subset in itertools.combinations(labels, k):
            sizes: dict[int, int] = {}
            for label in subset:
                sizes[label] = sizes.get(label, 0) + 1
            voting = {label: size for label, size in sizes.items() if label != -1}
            for ties, invalid in VARIANTS:
                by_policy = sizes if invalid == "vote" else voting
                if by_policy:
                    totals[(k, ties, invalid)] += _score(by_policy, ties)
    return {key: value / comb(n, key[0]) for key, value in totals.items()}


def exact_by_count_vectors(gold: int, wrong: list[int], n_invalid: int, k: int, ties: str, invalid: str) -> Fraction:
    """Exact cons@k from count vectors with Python integers (no subsets, no quadrature).

    Dynamic programme over the competing classes with state (draws, top count, classes at top),
    weights ``prod C(c_j, x_j)``; then gold draws g and abstaining invalid draws fill k.
    """
    competitors = list(wrong) + ([n_invalid] if invalid == "vote" else [])
    abstaining = n_invalid if invalid == "abstain" else 0
    states = {(0, 0, 0): 1}
    for size in competitors:
        updated: dict[tuple[int, int, int], int] = {}
        for (drawn, top, at_top), weight in states.items():
            for x in range(0, min(size, k - drawn) + 1):
                if x > top:
                    key = (drawn + x, x, 1)
                elif x == top and x > 0:
                    key = (drawn + x, top, at_top + 1)
                else:
                    key = (drawn + x, top, at_top)
                updated[key] = updated.get(key, 0) + weight * comb(size, x)
        states = updated
    total = Fraction(0)
    for (drawn, top, at_top), weight in states.items():
        for g in range(1, min(gold, k - drawn) + 1):
            rest = k - drawn - g
            if rest > abstaining or g < top:
                continue
            if g > top:
                share = Fraction(1)
            elif ties == "fractional":
                share = Fraction(1, at_top + 1)
            else:
                continue
            total += share * weight * comb(gold, g) * comb(abstaining, rest)
    return total / comb(gold + sum(wrong) + n_invalid, k)


def padded(rows: list[list[int]]) -> np.ndarray:
    width = max(len(row) for row in rows)
    return np.array([row + [0] * (width - len(row)) for row in rows], dtype=np.int64)


@st.composite
def small_problems(draw, max_n: int = 12):
    """1-3 problems with n <= max_n: gold count, ragged wrong classes, invalid samples."""
    problems = []
    for _ in range(draw(st.integers(1, 3))):
        gold = draw(st.integers(0, 6))
        wrong = draw(st.lists(st.integers(0, 5), max_size=4))
        n_invalid = draw(st.integers(0, 3))
        total = gold + sum(wrong) + n_invalid
        if total == 0 or total > max_n:
            gold, wrong, n_invalid = 1 + gold % 4, [w % 3 for w in wrong[:3]], n_invalid % 2
        problems.append((gold, wrong, n_invalid))
    return problems


# ----------------------------------------------------------------------------------------------
# reference values
# ----------------------------------------------------------------------------------------------


def test_reference_values_from_metrics_md():
    # docs/spec.md MJ1: n=10, c=6 gold, the 4 others one wrong class, k=3 -> 2/3
    assert cons_at_k([[6, 4]], 3)[0] == pytest.approx(2 / 3, abs=1e-12)
    # docs/spec.md MJ17: answers 7,5,5,7,7,3,5,5, gold 7, k=2, fractional -> 3/8
    counts, n_invalid = class_counts_from_answers([["7", "5", "5", "7", "7", "3", "5", "5"]], ["7"])
    assert counts.tolist() == [[3, 4, 1]] and n_invalid.tolist() == [0]
    assert cons_at_k(counts, 2, n_invalid=n_invalid)[0] == pytest.approx(3 / 8, abs=1e-12)
    # docs/spec.md MJ16: the same, strict ties -> 3/28
    assert cons_at_k(counts, 2, ties="strict")[0] == pytest.approx(3 / 28, abs=1e-12)


def test_all_k_drawn_invalid_abstain_scores_zero():
    # 1 gold, 2 invalid, k=2: P(both invalid) = 1/3 scores 0; otherwise gold is drawn and
    # (abstain) wins alone -> 2/3; (vote) ties with invalid 1-1 -> 1/2 * 2/3 (fractional), 0 (strict)
    assert cons_at_k([[1]], 2, n_invalid=[2])[0] == pytest.approx(2 / 3, abs=1e-15)
    assert cons_at_k([[1]], 2, n_invalid=[2], invalid="vote")[0] == pytest.approx(1 / 3, abs=1e-15)
    assert cons_at_k([[1]], 2, n_invalid=[2], invalid="vote", ties="strict")[0] == 0.0
    assert cons_at_k([[0, 0]], 2, n_invalid=[3])[0] == 0.0


# ----------------------------------------------------------------------------------------------
# exactness against enumeration and exact arithmetic
# ----------------------------------------------------------------------------------------------


@pytest.mark.slow
@settings(max_examples=150)
@given(small_problems())
def test_equals_brute_force_over_all_k_subsets(problems):
    counts = padded([[gold, *wrong] for gold, wrong, _ in problems])
    n_invalid = np.array([inv for _, _, inv in problems])
    n_min = int((counts.sum(axis=1) + n_invalid).min())
    k_values = list(range(1, n_min + 1))
    for ties, invalid in VARIANTS:
        got = cons_at_k(counts, k_values, n_invalid=n_invalid, ties=ties, invalid=invalid)
        assert got.shape == (len(problems), len(k_values))
        for row, (gold, wrong, inv) in enumerate(problems):
            expected = brute_force(gold, tuple(wrong), inv)
            for column, k in enumerate(k_values):
                assert abs(got[row, column] - float(expected[(k, ties, invalid)])) <= 1e-12, (
                    gold, wrong, inv, k, ties, invalid
                )
        for gold, wrong, inv in problems:  # every k up to each problem's own n
            n = gold + sum(wrong) + inv
            alone = cons_at_k([[gold, *wrong]], range(1, n + 1), n_invalid=[inv], ties=ties, invalid=invalid)[0]
            expected = brute_force(gold, tuple(wrong), inv)
            reference = [float(expected[(k, ties, invalid)]) for k in range(1, n + 1)]
            np.testing.assert_allclose(alone, reference, rtol=0, atol=1e-12)


def test_count_vector_reference_agrees_with_brute_force():
    # the larger-n reference is itself checked against enumeration
    for gold, wrong, inv in [(3, [4, 1], 0), (2, [2, 2, 1], 2), (4, [3, 3], 1), (0, [2], 1)]:
        expected = brute_force(gold, tuple(wrong), inv)
        for k in range(1, gold + sum(wrong) + inv + 1):
            for ties, invalid in VARIANTS:
                assert exact_by_count_vectors(gold, wrong, inv, k, ties, invalid) == expected[(k, ties, invalid)]


@pytest.mark.parametrize(
    ("gold", "wrong", "n_invalid", "k_values"),
    [
        (20, [18, 9, 7, 5, 3, 1, 1], 0, [2, 5, 12, 31, 64]),  # n = 64, many ties possible
        (9, [9, 9, 9, 8, 8, 6, 2], 4, [3, 8, 16, 27]),  # near-uniform classes
        (70, [60, 40, 20, 5], 5, [4, 9, 20]),  # n = 200
        (800, [700, 400, 80], 20, [3, 10, 15]),  # n = 2,000
    ],
)
def test_equals_exact_integer_arithmetic_for_larger_n(gold, wrong, n_invalid, k_values):
    for ties, invalid in VARIANTS:
        got = cons_at_k([[gold, *wrong]], k_values, n_invalid=[n_invalid], ties=ties, invalid=invalid)[0]
        expected = [float(exact_by_count_vectors(gold, wrong, n_invalid, k, ties, invalid)) for k in k_values]
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_large_n_is_finite_warning_free_and_exact():
    gold, wrong, n_invalid = 40_000, [35_000, 20_000, 1_000], 4_000  # n = 100,000
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = cons_at_k([[gold, *wrong]], [1, 6, 11], n_invalid=[n_invalid], invalid="vote")[0]
        wide = cons_at_k([[50_000, 50_000]], [2, 201])[0]
    assert np.all(np.isfinite(got)) and np.all(np.isfinite(wide))
    expected = [float(exact_by_count_vectors(gold, wrong, n_invalid, k, "fractional", "vote")) for k in (1, 6, 11)]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    # two equal classes: by symmetry gold wins half of the time at every k
    np.testing.assert_allclose(wide, [0.5, 0.5], rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------------------------
# properties
# ----------------------------------------------------------------------------------------------


@given(small_problems(max_n=30))
def test_k_one_is_gold_share_and_k_n_is_the_plain_vote(problems):
    for gold, wrong, n_invalid in problems:
        n = gold + sum(wrong) + n_invalid
        for ties, invalid in VARIANTS:
            options = dict(n_invalid=[n_invalid], ties=ties, invalid=invalid)
            # k = 1: the one draw is gold with probability c_gold / n (n counts invalid samples)
            # under both policies: an invalid draw abstains (nobody wins) or wins as "[invalid]".
            assert cons_at_k([[gold, *wrong]], 1, **options)[0] == pytest.approx(gold / n, abs=1e-13)
            voters = list(wrong) + ([n_invalid] if invalid == "vote" else [])
            top = max(voters, default=0)
            if gold == 0 or gold < top:
                plain = 0.0
            else:
                tied = 1 + voters.count(gold)
                plain = 1.0 / tied if ties == "fractional" else float(tied == 1)
            assert cons_at_k([[gold, *wrong]], n, **options)[0] == pytest.approx(plain, abs=1e-12)


@settings(max_examples=100)
@given(small_problems(max_n=40), st.randoms(use_true_random=False))
def test_permutations_padding_and_bounds(problems, rnd):
    counts = padded([[gold, *wrong] for gold, wrong, _ in problems])
    n_invalid = np.array([inv for _, _, inv in problems])
    k = int((counts.sum(axis=1) + n_invalid).min())
    k_values = sorted({1, max(1, k // 3), max(1, k // 2), k})
    for ties, invalid in VARIANTS:
        options = dict(ties=ties, invalid=invalid)
        base = cons_at_k(counts, k_values, n_invalid=n_invalid, **options)
        assert np.all((base >= 0) & (base <= 1))
        order = list(range(len(problems)))
        rnd.shuffle(order)
        np.testing.assert_allclose(
            cons_at_k(counts[order], k_values, n_invalid=n_invalid[order], **options), base[order], rtol=0, atol=1e-14
        )
        shuffled = counts.copy()
        for row in shuffled:
            tail = list(row[1:])
            rnd.shuffle(tail)
            row[1:] = tail
        extra = np.hstack([shuffled, np.zeros((len(problems), 2), dtype=np.int64)])
        np.testing.assert_allclose(
            cons_at_k(extra, k_values, n_invalid=n_invalid, **options), base, rtol=1e-13, atol=1e-14
        )
        for column, k_value in enumerate(k_values):
            np.testing.assert_array_equal(cons_at_k(counts, k_value, n_invalid=n_invalid, **options), base[:, column])
    strict = cons_at_k(counts, k_values, n_invalid=n_invalid, ties="strict")
    fractional = cons_at_k(counts, k_values, n_invalid=n_invalid, ties="fractional")
    assert np.all(strict <= fractional + 1e-14)
    voting = cons_at_k(counts, k_values, n_invalid=n_invalid, invalid="vote")
    assert np.all(voting <= fractional + 1e-14)  # an extra competitor never helps gold


def test_vectorized_matches_one_problem_at_a_time():
    rng = np.random.default_rng(5)
    counts = rng.integers(0, 9, size=(300, 7))
    n_invalid = rng.integers(0, 4, size=300)
    k_values = [1, 2, 5, 9, 16]
    counts[:, 0] += 16  # every problem has n >= 16
    together = cons_at_k(counts, k_values, n_invalid=n_invalid)
    for row in range(0, 300, 37):
        alone = cons_at_k(counts[row : row + 1], k_values, n_invalid=n_invalid[row : row + 1])
        np.testing.assert_allclose(alone[0], together[row], rtol=1e-13, atol=1e-15)


def test_empty_input_and_float_counts():
    assert cons_at_k(np.zeros((0, 3), dtype=int), 2).shape == (0,)
    assert cons_at_k(np.zeros((0, 3), dtype=int), [1, 2]).shape == (0, 2)
    assert cons_at_k([[6.0, 4.0]], np.int64(3))[0] == pytest.approx(2 / 3, abs=1e-12)


# ----------------------------------------------------------------------------------------------
# input validation
# ----------------------------------------------------------------------------------------------


def test_cons_at_k_iv():
    # messages come from kpass.metrics._validation (shared by every estimator) and from _consensus
    with pytest.raises(ValueError, match=r"`class_counts` must be non-negative; .*first: \[1, 1\] \(class_counts=-1\)"):
        cons_at_k([[3, 1], [2, -1]], 1)
    with pytest.raises(ValueError, match=r"`class_counts` must hold whole numbers; .*\[0, 0\] \(class_counts=2.5\)"):
        cons_at_k([[2.5, 1]], 1)
    with pytest.raises(TypeError, match=r"`class_counts` must be an array of integer counts; got dtype <U1"):
        cons_at_k([["a", "b"]], 1)
    with pytest.raises(TypeError, match=r"`class_counts` must hold integer counts, not booleans"):
        cons_at_k([[True, False]], 1)
    with pytest.raises(TypeError, match=r"`class_counts` must be a rectangular array of integer counts"):
        cons_at_k([[1, 2], [3]], 1)
    with pytest.raises(ValueError, match=r"`class_counts` must be 2-D; got an array of shape \(3,\)"):
        cons_at_k([3, 1, 1], 1)
    with pytest.raises(ValueError, match=r"`class_counts` must have at least one column"):
        cons_at_k(np.zeros((2, 0), dtype=int), 1)
    with pytest.raises(ValueError, match=r"`n_invalid` must have shape \(2,\) to match `class_counts` \(2, 2\); got shape \(3,\)"):
        cons_at_k([[3, 1], [2, 1]], 1, n_invalid=[0, 0, 0])
    with pytest.raises(ValueError, match=r"`n_invalid` must be non-negative; .*first: \[0\] \(n_invalid=-2\)"):
        cons_at_k([[3, 1]], 1, n_invalid=[-2])
    with pytest.raises(
        ValueError, match=r"`k` = 5 exceeds `n_samples` .* 2 problems; first: \[1\] \(n_samples=4\), \[2\] \(n_samples=3\)"
    ):
        cons_at_k([[3, 2], [3, 1], [1, 1]], [2, 5], n_invalid=[0, 0, 1])  # n counts invalid samples
    with pytest.raises(ValueError, match=r"`k` must be >= 1; got 0"):
        cons_at_k([[3, 1]], 0)
    with pytest.raises(ValueError, match=r"`k` must be a whole number >= 1; got 2.5"):
        cons_at_k([[3, 1]], 2.5)
    with pytest.raises(TypeError, match=r"`k` must be an integer >= 1 or a 1-D sequence of them; got the boolean True"):
        cons_at_k([[3, 1]], True)
    with pytest.raises(ValueError, match=r"`k` must be an integer or a 1-D sequence; got an array of shape \(1, 2\)"):
        cons_at_k([[3, 1]], [[1, 2]])
    with pytest.raises(ValueError, match=r"`ties` must be one of \['fractional', 'strict'\]; got 'loose'"):
        cons_at_k([[3, 1]], 1, ties="loose")
    with pytest.raises(ValueError, match=r"`invalid` must be one of \['abstain', 'vote'\]; got 'drop'"):
        cons_at_k([[3, 1]], 1, invalid="drop")


# ----------------------------------------------------------------------------------------------
# class counts from answers
# ----------------------------------------------------------------------------------------------


def test_class_counts_from_answers_exact_strings():
    answers = [["7", "5", "5", "7", None, "3", "5"], ["a", "a"], [], [None, None], ["x", "y", "z", "y"]]
    counts, n_invalid = class_counts_from_answers(answers, ["7", "b", "q", "q", "z"])
    assert counts.tolist() == [[2, 3, 1], [0, 2, 0], [0, 0, 0], [0, 0, 0], [1, 2, 1]]
    assert n_invalid.tolist() == [1, 0, 0, 2, 0]
    # no normalisation at all: " 7" and "7.0" are their own classes
    counts, _ = class_counts_from_answers([["7", " 7", "7.0", "7"]], ["7"])
    assert counts.tolist() == [[2, 1, 1]]
    # strings are shared across problems without leaking classes between them
    counts, _ = class_counts_from_answers([["1", "2"], ["2", "2", "1"]], ["2", "1"])
    assert counts.tolist() == [[1, 1], [1, 2]]
    counts, n_invalid = class_counts_from_answers([], [])
    assert counts.shape == (0, 1) and n_invalid.shape == (0,)


def test_class_counts_with_an_equivalence_function():
    calls = []

    def same_number(answer, representative):
        calls.append((answer, representative))
        return float(answer) == float(representative)

    answers = [["7.0", "5", "07", "5.00", None, "7"], ["1", "2", "2.0"]]
    counts, n_invalid = class_counts_from_answers(answers, ["7", "3"], equivalent=same_number)
    assert counts.tolist() == [[3, 2, 0], [0, 2, 1]]  # zero-padded to a common width
    assert n_invalid.tolist() == [1, 0]
    assert ("5", "7") in calls and ("7", "7") not in calls  # equal strings need no call
    # non-transitive relation: resolved by trying gold first, then classes in order of appearance
    def close(a, b):
        return abs(int(a) - int(b)) <= 1

    counts, _ = class_counts_from_answers([["2", "3", "1", "4"]], ["2"], equivalent=close)
    assert counts.tolist() == [[3, 1]]  # "2","3","1" join gold; "4" is not close to "2"


def test_class_counts_from_answers_iv():
    with pytest.raises(ValueError, match=r"`answers` has 2 problems but `gold` has 1"):
        class_counts_from_answers([["1"], ["2"]], ["1"])
    with pytest.raises(TypeError, match=r"`answers` must hold one sequence of answers per problem; problems \[1\] hold str"):
        class_counts_from_answers([["1"], "22"], ["1", "2"])
    with pytest.raises(TypeError, match=r"`answers` must hold str \(or None for no extractable answer\); got 5 for problems \[1\]"):
        class_counts_from_answers([["1"], ["2", 5]], ["1", "2"])
    with pytest.raises(TypeError, match=r"`gold` must hold one str per problem; got None for problems \[0\]"):
        class_counts_from_answers([["1"]], [None])
    with pytest.raises(TypeError, match=r"`answers` must be a sequence \(one entry per problem\)"):
        class_counts_from_answers("1", ["1"])
    with pytest.raises(TypeError, match=r"`gold` must be a sequence of gold answers \(str\); got str"):
        class_counts_from_answers([["1"]], "1")
    with pytest.raises(TypeError, match=r"`equivalent` must be a callable"):
        class_counts_from_answers([["1"]], ["1"], equivalent="numeric")


# ----------------------------------------------------------------------------------------------
# class counts from answer codes (the one implementation every path uses)
# ----------------------------------------------------------------------------------------------


def test_class_counts_from_codes_hand_worked():
    # docs/spec.md MJ17: answers 7,5,5,7,7,3,5,5 with gold 7, coded 7 -> 0, 5 -> 1, 3 -> 2, in problem 1;
    # problem 0 has no sample; problem 2: one gold, one invalid, sparse and negative-free codes
    problem = [1] * 8 + [2, 2, 2]
    codes = [0, 1, 1, 0, 0, 2, 1, 1, 10**12, -1, 5]
    gold = [c == 0 for c in codes[:8]] + [True, False, False]
    counts, n_invalid = class_counts_from_codes(problem, codes, gold, 3)
    assert counts.tolist() == [[0, 0, 0], [3, 4, 1], [1, 1, 0]]
    assert n_invalid.tolist() == [0, 0, 1]
    assert counts.dtype == np.int64 and n_invalid.dtype == np.int64
    assert cons_at_k(counts[1:2], 2)[0] == pytest.approx(3 / 8, abs=1e-15)  # docs/spec.md MJ17
    # the same code in two problems is two classes, one per problem
    counts, _ = class_counts_from_codes([0, 0, 1, 1, 1], [3, 3, 3, 4, 4], [False] * 5, 2)
    assert counts.tolist() == [[0, 2, 0], [0, 2, 1]]
    # codes of gold samples need not agree: the gold flag decides the gold class
    counts, _ = class_counts_from_codes([0, 0, 0], [1, 2, 3], [True, True, False], 1)
    assert counts.tolist() == [[2, 1]]
    counts, n_invalid = class_counts_from_codes([], [], [], 0)
    assert counts.shape == (0, 1) and n_invalid.shape == (0,)


def test_class_counts_from_codes_rejects_contradictions():
    # a gold (correct) sample without an answer: the verdict and the answer disagree
    with pytest.raises(InconsistentAnswersError, match=r"a gold sample has answer code -1\): 2 samples "
                       r"\(positions 1, 4\) in 2 problems; first: \[0\], \[2\]") as info:
        class_counts_from_codes([0, 0, 1, 2, 2], [0, -1, 1, 1, -1], [True, True, False, False, True], 3)
    assert info.value.samples.tolist() == [1, 4]
    assert info.value.reason.startswith("this sample is judged correct but has no answer")
    assert isinstance(info.value, ValueError)
    # a wrong sample whose answer equals a gold sample's answer in the same problem
    with pytest.raises(InconsistentAnswersError, match=r"has the code of a gold sample of its problem\): 1 sample "
                       r"\(positions 2\) in 1 problem; first: \[0\]") as info:
        class_counts_from_codes([0, 0, 0, 1], [7, 8, 7, 7], [True, False, False, False], 2)
    assert info.value.samples.tolist() == [2]
    assert "judged incorrect but its answer equals the answer of a sample" in info.value.reason
    # the same code in another problem is no contradiction
    counts, _ = class_counts_from_codes([0, 1], [7, 7], [True, False], 2)
    assert counts.tolist() == [[1, 0], [0, 1]]


def test_class_counts_from_codes_iv():
    with pytest.raises(ValueError, match=r"one entry per sample each; got lengths 2, 1 and 2"):
        class_counts_from_codes([0, 0], [1], [True, False], 1)
    with pytest.raises(ValueError, match=r"`problem` must be in 0..n_problems-1 = 0..1; out of range at 1 problem; "
                       r"first: \[1\] \(problem=2\)"):
        class_counts_from_codes([0, 2], [1, 1], [True, False], 2)
    with pytest.raises(ValueError, match=r"`answer_codes` must be >= 0 \(an answer\) or -1"):
        class_counts_from_codes([0], [-2], [False], 1)
    with pytest.raises(TypeError, match=r"`answer_codes` must hold integers; got dtype float64"):
        class_counts_from_codes([0], [1.5], [False], 1)
    with pytest.raises(TypeError, match=r"`is_gold` must hold booleans \(or 0/1\)"):
        class_counts_from_codes([0], [1], [2], 1)
    with pytest.raises(ValueError, match=r"`problem` must be 1-D"):
        class_counts_from_codes([[0]], [1], [True], 1)
    with pytest.raises(TypeError, match=r"`n_problems` must be an integer >= 0; got 1.0"):
        class_counts_from_codes([0], [1], [True], 1.0)


@given(
    st.lists(st.lists(st.one_of(st.none(), st.sampled_from("abcd")), max_size=9), min_size=1, max_size=4),
    st.data(),
)
def test_class_counts_from_codes_equals_a_python_count(answers, data):
    gold = [data.draw(st.sampled_from("abcd")) for _ in answers]
    problem = [i for i, row in enumerate(answers) for _ in row]
    codes = ["abcd".index(a) if a is not None else -1 for row in answers for a in row]
    is_gold = [a == gold[i] for i, row in enumerate(answers) for a in row]
    counts, n_invalid = class_counts_from_codes(problem, codes, is_gold, len(answers))
    expected_counts, expected_invalid = class_counts_from_answers(answers, gold)
    np.testing.assert_array_equal(counts, expected_counts)
    np.testing.assert_array_equal(n_invalid, expected_invalid)
    for row, samples in enumerate(answers):  # an independent count with Python's Counter
        from collections import Counter

        wrong = Counter(a for a in samples if a is not None and a != gold[row])
        assert counts[row, 0] == sum(a == gold[row] for a in samples)
        assert sorted(counts[row, 1:][counts[row, 1:] > 0].tolist(), reverse=True) == sorted(wrong.values(), reverse=True)
        assert counts[row, 1:].tolist() == sorted(counts[row, 1:].tolist(), reverse=True)  # largest first


@given(
    st.lists(st.lists(st.one_of(st.none(), st.sampled_from("abcd")), max_size=9), min_size=1, max_size=4),
    st.data(),
)
def test_class_counts_round_trip_with_brute_force(answers, data):
    gold = [data.draw(st.sampled_from("abcd")) for _ in answers]
    counts, n_invalid = class_counts_from_answers(answers, gold)
    same, _ = class_counts_from_answers(answers, gold, equivalent=lambda a, b: a == b)
    np.testing.assert_array_equal(counts[:, 0], same[:, 0])
    for row, (samples, gold_answer) in enumerate(zip(answers, gold)):
        valid = [a for a in samples if a is not None]
        assert counts[row, 0] == valid.count(gold_answer)
        assert sorted(counts[row, 1:][counts[row, 1:] > 0].tolist()) == sorted(
            valid.count(a) for a in set(valid) - {gold_answer}
        )
        assert sorted(same[row, 1:][same[row, 1:] > 0].tolist()) == sorted(counts[row, 1:][counts[row, 1:] > 0].tolist())
        assert n_invalid[row] == samples.count(None)
    # cons@k at k = 1 is the share of gold answers
    n = counts.sum(axis=1) + n_invalid
    nonempty = n > 0
    if nonempty.any():
        got = cons_at_k(counts[nonempty], 1, n_invalid=n_invalid[nonempty])
        np.testing.assert_allclose(got, counts[nonempty, 0] / n[nonempty], atol=1e-14)


# ----------------------------------------------------------------------------------------------
# the harnesses' first-k vote
# ----------------------------------------------------------------------------------------------


def test_first_k_majority_vote_hand_worked():
    answers = [
        ["5", "7", "7", "5", "7"],  # k=4: 2-2 tie, "5" seen first -> wrong; k=5: "7" has 3 -> right
        ["7", None, None, "3", None],  # k=4 abstain: "7" vs "3" tie, "7" first -> right; vote: None has 2 -> wrong
        [None, None, None, None, "7"],  # k=4 abstain: nobody votes -> 0; k=5: "7" alone -> right
        ["3", "3", "7", "7", "7"],  # k=4: tie, "3" first -> wrong
    ]
    gold = ["7", "7", "7", "7"]
    np.testing.assert_array_equal(
        first_k_majority_vote(answers, gold, [4, 5], invalid="abstain"), [[0, 1], [1, 1], [0, 1], [0, 1]]
    )
    voting = [[0, 1], [0, 0], [0, 0], [0, 1]]
    np.testing.assert_array_equal(first_k_majority_vote(answers, gold, [4, 5], invalid="vote"), voting)
    # the default reproduces lm-eval, where the "[invalid]" fallback votes
    np.testing.assert_array_equal(first_k_majority_vote(answers, gold, [4, 5]), voting)
    assert first_k_majority_vote(answers, gold, 1, invalid="abstain").tolist() == [0.0, 1.0, 0.0, 0.0]


def _lm_eval_vote(answers, gold, k):
    from lm_eval.filters.selection import MajorityVoteFilter, TakeKFilter

    first_k = list(TakeKFilter(k=k).apply(answers, None))
    voted = [resps[0] for resps in MajorityVoteFilter().apply(first_k, None)]
    return np.array([float(v == g) for v, g in zip(voted, gold)])


@settings(max_examples=100)
@given(st.integers(1, 12), st.data())
def test_first_k_majority_vote_matches_lm_eval_filters(n, data):
    answers = data.draw(
        st.lists(st.lists(st.one_of(st.none(), st.sampled_from("0123")), min_size=n, max_size=n), min_size=1, max_size=6)
    )
    gold = data.draw(st.lists(st.sampled_from("0123"), min_size=len(answers), max_size=len(answers)))
    k = data.draw(st.integers(1, n))
    # lm-eval: regex fallback "[invalid]" is an ordinary string that can win -> invalid="vote"
    harness_view = [["[invalid]" if a is None else a for a in row] for row in answers]
    lm_eval = _lm_eval_vote(harness_view, gold, k)
    np.testing.assert_array_equal(first_k_majority_vote(answers, gold, k, invalid="vote"), lm_eval)
    np.testing.assert_array_equal(first_k_majority_vote(answers, gold, k), lm_eval)  # the default is lm-eval's
    # invalid="abstain" is the same filter applied to the valid answers among the first k
    kept = [[a for a in row[:k] if a is not None] for row in answers]
    expected = np.array(
        [_lm_eval_vote([row], [g], len(row))[0] if row else 0.0 for row, g in zip(kept, gold)]
    )
    np.testing.assert_array_equal(first_k_majority_vote(answers, gold, k, invalid="abstain"), expected)


def test_first_k_vote_averaged_over_all_orders_is_fractional_cons_at_k():
    # docs/spec.md s. 4: "fractional" is the expectation of the harnesses' first-seen tie-break
    # under a random sample order. Exact check over all 8! orders of MJ17's answers.
    answers = ["7", "5", "5", "7", "7", "3", "5", "5"]  # docs/spec.md MJ17
    rows = [[answers[i] for i in order] for order in itertools.permutations(range(8))]
    votes = first_k_majority_vote(rows, ["7"] * len(rows), [2, 3, 5, 8]).mean(axis=0)
    np.testing.assert_allclose(votes, cons_at_k([[3, 4, 1]], [2, 3, 5, 8])[0], rtol=0, atol=1e-12)
    assert votes[0] == pytest.approx(3 / 8, abs=1e-15)


def test_first_k_majority_vote_iv():
    with pytest.raises(ValueError, match=r"`k` = 3 exceeds the number of answers for 1 problem; first: \[1\] \(answers=2\)"):
        first_k_majority_vote([["1", "1", "2"], ["1", "2"]], ["1", "1"], 3)
    with pytest.raises(ValueError, match=r"`invalid` must be one of \['abstain', 'vote'\]; got 'skip'"):
        first_k_majority_vote([["1"]], ["1"], 1, invalid="skip")
    with pytest.raises(TypeError, match=r"`answers` must hold str \(or None for no extractable answer\); got 3"):
        first_k_majority_vote([["1", 3]], ["1"], 1)


def test_doctests():
    failures, tried = doctest.testmod(consensus_module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert tried >= 6 and failures == 0
