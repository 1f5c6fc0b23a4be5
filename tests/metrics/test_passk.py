"""Tests of the hypergeometric family: pass@k, pass^k, G-Pass@k_tau, mG-Pass@k, the plug-in.

Reference values cite their id in docs/spec.md ("docs/spec.md PK3"); every other
expectation is computed here with exact ``fractions.Fraction`` arithmetic from the definitions.
"""

from __future__ import annotations

import math
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st
from scipy.stats import hypergeom

from kpass.metrics import (
    MeaninglessMetricWarning,
    biased_plugin_pass_at_k,
    g_pass_at_k,
    mg_pass_at_k,
    pass_at_k,
    pass_hat_k,
)
from kpass.metrics import _passk

TOL = 1e-12

# Property tests draw k = 1, where mG-Pass@k (published) warns that it is 0 by definition;
# test_mg_pass_k_one checks that warning.
pytestmark = pytest.mark.filterwarnings("ignore::kpass.metrics.MeaninglessMetricWarning")


# ---------------------------------------------------------------- exact references (Fraction)
def exact_pass_at_k(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))  # Chen 2021 Eq. 1


def exact_pass_hat_k(n: int, c: int, k: int) -> Fraction:
    return Fraction(math.comb(c, k), math.comb(n, k))  # Yao 2024


def exact_tail(n: int, c: int, k: int, m: int) -> Fraction:
    """P(X >= m), X ~ Hypergeom(n, c, k), summed from the pmf."""
    total = sum(math.comb(c, j) * math.comb(n - c, k - j) for j in range(max(m, 0), min(c, k) + 1))
    return Fraction(total, math.comb(n, k))


def exact_threshold(tau: Fraction, k: int) -> int:
    return max(math.ceil(tau * k), 1)  # docs/spec.md section 3


def exact_mg_published(n: int, c: int, k: int) -> Fraction:
    first = math.ceil(Fraction(k, 2)) + 1
    return Fraction(2, k) * sum((exact_tail(n, c, k, i) for i in range(first, k + 1)), Fraction(0))


# ---------------------------------------------------------------- strategies
@st.composite
def count_triples(draw, max_n: int = 2000):
    n = draw(st.one_of(st.integers(1, 60), st.integers(1, max_n), st.integers(max_n * 3 // 4, max_n)))
    c = draw(st.integers(0, n))
    k = draw(st.one_of(st.integers(1, min(n, 64)), st.integers(1, n)))
    return n, c, k


@st.composite
def problem_batches(draw, max_n: int = 300, max_problems: int = 8):
    """Ragged (n, c) for several problems and a k valid for all of them."""
    size = draw(st.integers(1, max_problems))
    n = draw(st.lists(st.integers(1, max_n), min_size=size, max_size=size))
    c = [draw(st.integers(0, nj)) for nj in n]
    k = draw(st.integers(1, min(n)))
    return np.array(n), np.array(c), k


two_decimal_taus = st.integers(0, 100).map(lambda t: Fraction(t, 100))
taus = st.one_of(two_decimal_taus, st.fractions(min_value=0, max_value=1, max_denominator=200))


# ---------------------------------------------------------------- docs/spec.md reference values
@pytest.mark.parametrize(
    ("ref_id", "n", "c", "k", "expected"),
    [
        ("PK1", 10, 3, 1, 0.3),  # docs/spec.md PK1
        ("PK3", 10, 3, 5, 11 / 12),  # docs/spec.md PK3
        ("PK5", 200, 10, 1, 0.05),  # docs/spec.md PK5
        ("PK6", 200, 10, 5, 0.228284460737),  # docs/spec.md PK6
        ("PK11", 5, 0, 1, 0.0),  # docs/spec.md PK11
    ],
)
def test_pass_at_k_reference_values(ref_id, n, c, k, expected):
    assert abs(pass_at_k([n], [c], k)[0] - expected) < TOL, ref_id
    assert abs(float(exact_pass_at_k(n, c, k)) - expected) < TOL, ref_id  # the table itself


def test_plugin_reference_value():
    # docs/spec.md PK3: plug-in 1 - (1 - 3/10)^5 = 0.83193, biased low against 11/12
    assert abs(biased_plugin_pass_at_k([10], [3], 5)[0] - 0.83193) < TOL
    assert biased_plugin_pass_at_k([10], [3], 5)[0] < pass_at_k([10], [3], 5)[0]


@pytest.mark.parametrize(
    ("ref_id", "n", "c", "k", "expected"),
    [
        ("PH2", 10, 3, 2, 1 / 15),  # docs/spec.md PH2
        ("PH3", 8, 6, 4, 3 / 14),  # docs/spec.md PH3
    ],
)
def test_pass_hat_k_reference_values(ref_id, n, c, k, expected):
    assert abs(pass_hat_k([n], [c], k)[0] - expected) < TOL, ref_id


@pytest.mark.parametrize(
    ("ref_id", "n", "c", "k", "tau", "expected"),
    [
        ("GP3", 48, 24, 16, 0.5, 0.619945418198),  # docs/spec.md GP3
        ("GP5", 48, 24, 16, 1.0, 1 / 3065857),  # docs/spec.md GP5
        ("GP10", 16, 8, 4, 0.5, 93 / 130),  # docs/spec.md GP10
    ],
)
def test_g_pass_at_k_reference_values(ref_id, n, c, k, tau, expected):
    assert abs(g_pass_at_k([n], [c], k, tau=tau)[0] - expected) < TOL, ref_id


@pytest.mark.parametrize(
    ("ref_id", "n", "c", "k", "expected"),
    [
        ("GP6", 48, 24, 16, 0.079963612132),  # docs/spec.md GP6
        ("GP13", 16, 8, 4, 21 / 130),  # docs/spec.md GP13
    ],
)
def test_mg_pass_at_k_reference_values(ref_id, n, c, k, expected):
    assert abs(mg_pass_at_k([n], [c], k)[0] - expected) < TOL, ref_id
    # even k: the exact integral equals the published sum (docs/spec.md section 3)
    assert mg_pass_at_k([n], [c], k, variant="integral")[0] == mg_pass_at_k([n], [c], k)[0]


# ---------------------------------------------------------------- agreement with Fraction
@given(count_triples(), taus)
@example((2000, 1000, 1000), Fraction(1, 2))
@example((2000, 1, 2000), Fraction(1))
@example((1999, 1998, 1000), Fraction(99, 100))
@example((2000, 7, 1500), Fraction(0))
def test_agrees_with_fraction_arithmetic(triple, tau):
    n, c, k = triple
    assert abs(pass_at_k([n], [c], k)[0] - float(exact_pass_at_k(n, c, k))) < TOL
    assert abs(pass_hat_k([n], [c], k)[0] - float(exact_pass_hat_k(n, c, k))) < TOL
    m = exact_threshold(tau, k)
    assert abs(g_pass_at_k([n], [c], k, tau=tau)[0] - float(exact_tail(n, c, k, m))) < TOL


@given(count_triples(max_n=400))
def test_mg_pass_agrees_with_fraction_arithmetic(triple):
    n, c, k = triple
    assume(k <= 80)
    assert abs(mg_pass_at_k([n], [c], k)[0] - float(exact_mg_published(n, c, k))) < TOL


@given(problem_batches())
def test_vectorized_equals_scalar_loop(batch):
    n, c, k = batch
    taus_grid = [0, 0.25, 0.5, 0.75, 1]
    vec = {
        "pass": pass_at_k(n, c, k),
        "hat": pass_hat_k(n, c, k),
        "g": g_pass_at_k(n, c, k, tau=taus_grid),
        "mg": mg_pass_at_k(n, c, k),
    }
    for j in range(len(n)):
        assert abs(vec["pass"][j] - pass_at_k(int(n[j]), int(c[j]), k)) <= 1e-13
        assert abs(vec["hat"][j] - pass_hat_k(int(n[j]), int(c[j]), k)) <= 1e-13
        np.testing.assert_allclose(vec["g"][j], g_pass_at_k([n[j]], [c[j]], k, tau=taus_grid)[0], rtol=0, atol=1e-15)
        assert abs(vec["mg"][j] - mg_pass_at_k(int(n[j]), int(c[j]), k)) <= 1e-15


def test_equals_scipy_hypergeom_on_a_grid():
    rng = np.random.default_rng(12345)
    n = rng.integers(20, 500, size=400)
    c = rng.integers(0, n + 1)
    for k in (1, 2, 5, 16, 20):
        for tau in ("0", "0.3", "0.5", "0.75", "1"):
            m = exact_threshold(Fraction(tau), k)
            expected = hypergeom.sf(m - 1, n, c, k)
            np.testing.assert_allclose(g_pass_at_k(n, c, k, tau=tau), expected, rtol=0, atol=TOL)


# ---------------------------------------------------------------- large n: no overflow, NaN, warning
@pytest.mark.parametrize(
    ("n", "c", "k"),
    [
        (100_000, 50_000, 50_000),
        (100_000, 1, 100_000),
        (100_000, 99_999, 100_000),
        (100_000, 5, 50_000),
        (100_000, 50_000, 1),
        (100_000, 0, 77_777),
        (100_000, 100_000, 3),
    ],
)
def test_large_n_is_finite_without_warnings(n, c, k):
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        values = [
            pass_at_k([n], [c], k),
            pass_hat_k([n], [c], k),
            g_pass_at_k([n], [c], k, tau=[0, 0.3, 0.5, 0.99, 1]),
            mg_pass_at_k([n], [c], k, variant="integral"),
            biased_plugin_pass_at_k([n], [c], k),
        ]
        if k > 1:  # k = 1 (published) warns that it is 0 by definition: test_mg_pass_k_one
            values.append(mg_pass_at_k([n], [c], k))
    for value in values:
        assert np.all(np.isfinite(value))
        assert np.all((value >= 0) & (value <= 1))


def test_large_n_known_values():
    # Exact by symmetry: X ~ Hypergeom(100000, 50000, 50000) is symmetric about 25000, so
    # P(X >= 25001) = (1 - P(X = 25000)) / 2; P(X = 25000) from scipy's log-pmf.
    n, c, k = 100_000, 50_000, 50_000
    p_mid = math.exp(hypergeom.logpmf(25_000, n, c, k))
    assert abs(g_pass_at_k(n, c, k, tau=Fraction(25_001, 50_000)) - (1 - p_mid) / 2) < 1e-10
    assert abs(g_pass_at_k(n, c, k, tau=0.5) - (1 + p_mid) / 2) < 1e-10
    # pass@k with c = 1 is exactly k/n
    assert abs(pass_at_k(n, 1, 77_777) - 0.77777) < TOL
    # pass^k with c = n - 1 is (n - k)/n
    assert abs(pass_hat_k(n, n - 1, 30_000) - 0.7) < TOL


# ---------------------------------------------------------------- properties
@given(count_triples(max_n=300))
def test_values_lie_in_unit_interval(triple):
    n, c, _ = triple
    ks = np.arange(1, n + 1)
    for values in (pass_at_k([n], [c], ks), pass_hat_k([n], [c], ks), mg_pass_at_k([n], [c], ks[:40])):
        assert np.all((values >= 0) & (values <= 1))


@given(count_triples(max_n=500))
def test_pass_at_k_non_decreasing_in_k_and_pass_hat_non_increasing(triple):
    n, c, _ = triple
    ks = np.arange(1, n + 1)
    curve = pass_at_k([n], [c], ks)[0]
    assert np.all(np.diff(curve) >= -1e-15)
    assert np.all(np.diff(pass_hat_k([n], [c], ks)[0]) <= 1e-15)
    assert abs(curve[0] - c / n) < 1e-15  # pass@1 = c/n
    assert curve[-1] == (1.0 if c > 0 else 0.0)  # k = n: any correct sample is drawn


@given(count_triples(max_n=1000), st.lists(taus, min_size=2, max_size=8))
def test_g_pass_non_increasing_in_tau(triple, tau_list):
    n, c, k = triple
    tau_sorted = sorted(tau_list)
    values = g_pass_at_k([n], [c], k, tau=tau_sorted)[0]
    assert np.all(np.diff(values) <= 1e-15)


@given(count_triples(max_n=1000), st.fractions(min_value=0, max_value=1))
def test_small_tau_gives_pass_at_k_and_tau_one_gives_pass_hat_k(triple, fraction):
    n, c, k = triple
    small_tau = fraction / k  # any tau <= 1/k
    assert g_pass_at_k([n], [c], k, tau=small_tau)[0] == pass_at_k([n], [c], k)[0]
    assert g_pass_at_k([n], [c], k, tau=0)[0] == pass_at_k([n], [c], k)[0]
    assert g_pass_at_k([n], [c], k, tau=1)[0] == pass_hat_k([n], [c], k)[0]


@given(problem_batches(), st.randoms(use_true_random=False))
def test_permuting_problems_permutes_outputs(batch, random):
    n, c, k = batch
    order = list(range(len(n)))
    random.shuffle(order)
    for fn in (pass_at_k, pass_hat_k, mg_pass_at_k, biased_plugin_pass_at_k):
        np.testing.assert_array_equal(fn(n[order], c[order], k), fn(n, c, k)[order])
    np.testing.assert_array_equal(g_pass_at_k(n[order], c[order], k, tau=[0.3, 0.6]), g_pass_at_k(n, c, k, tau=[0.3, 0.6])[order])


@given(count_triples(max_n=400))
def test_product_form_equals_hypergeometric_form(triple):
    # Chen 2021's product 1 - prod_{i=n-c+1..n} (1 - k/i) equals the binomial-ratio definition
    n, c, k = triple
    product = 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1))) if n - c >= k else 1.0
    assert abs(pass_at_k(n, c, k) - product) < TOL


def _exact_reference_batch(n, c, ks, k_tail, taus_tail, k_mg):
    passes = np.array([[float(exact_pass_at_k(int(a), int(b), int(k))) for k in ks] for a, b in zip(n, c)])
    thresholds = [exact_threshold(Fraction(t), k_tail) for t in taus_tail]
    tails = np.array([[float(exact_tail(int(a), int(b), k_tail, m)) for m in thresholds] for a, b in zip(n, c)])
    mg = np.array([float(exact_mg_published(int(a), int(b), k_mg)) for a, b in zip(n, c)])
    return passes, tails, mg


@pytest.mark.parametrize(
    "settings",
    [
        {},  # defaults
        {"_LOOP_MIN_ROWS": 1},  # always the row-by-row loop
        {"_LOOP_MIN_ROWS": 10**9, "_BLOCK_ELEMENTS": 256},  # always blocks, many carried blocks
        {"_LOOP_MIN_ROWS": 10**9, "_BLOCK_ELEMENTS": 1},  # blocks of a single i
        {"_CHUNK_ROWS": 7, "_CHUNK_ELEMENTS": 40},  # many small chunks of problems
    ],
)
def test_kernel_paths_and_chunking_agree_with_fractions(monkeypatch, settings):
    rng = np.random.default_rng(7)
    n = rng.integers(30, 120, size=300)
    c = np.where(rng.random(300) < 0.3, rng.integers(0, 4, size=300), rng.integers(0, n + 1))
    ks = np.array([1, 3, 10, 30, 2])
    taus_tail = ["0.2", "0.5", "0.9"]
    expected = _exact_reference_batch(n, c, ks, 12, taus_tail, 11)
    for name, value in settings.items():
        monkeypatch.setattr(_passk, name, value)
    got = pass_at_k(n, c, ks), g_pass_at_k(n, c, 12, tau=taus_tail), mg_pass_at_k(n, c, 11)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=0, atol=TOL)
    np.testing.assert_allclose(pass_hat_k(n, c, ks), [[float(exact_pass_hat_k(int(a), int(b), int(k))) for k in ks] for a, b in zip(n, c)], rtol=0, atol=TOL)
    # both product forms (over the k draws, over the m marked samples) on the same inputs
    by_draws = np.empty((len(ks), len(n)))
    by_marked = np.empty((len(ks), len(n)))
    _passk._miss_by_draws(n.astype(float), c.astype(float), ks, int(ks.max()), by_draws)
    _passk._miss_by_marked(n.astype(float), c.astype(float), ks, int(c.max()), by_marked)
    np.testing.assert_allclose(by_draws, by_marked, rtol=0, atol=TOL)


# ---------------------------------------------------------------- the exact threshold m
# The 13 (tau, k) pairs with two-decimal tau and k <= 128 where float np.ceil(k * tau) is one too
# high (docs/spec.md section 3), listed as (tau, k, exact m, float m).
FLOAT_CEIL_PAIRS = [
    (0.07, 100, 7, 8), (0.14, 50, 7, 8), (0.14, 100, 14, 15), (0.28, 25, 7, 8),
    (0.28, 50, 14, 15), (0.28, 75, 21, 22), (0.28, 100, 28, 29), (0.55, 100, 55, 56),
    (0.56, 25, 14, 15), (0.56, 50, 28, 29), (0.56, 75, 42, 43), (0.56, 100, 56, 57),
    (0.68, 75, 51, 52),
]  # fmt: skip


def test_float_ceil_pairs_are_exactly_the_thirteen_of_the_spec():
    found = []
    for t in range(101):
        tau = t / 100
        for k in range(1, 129):
            exact = exact_threshold(Fraction(t, 100), k)
            floating = max(int(np.ceil(k * tau)), 1)
            if exact != floating:
                found.append((tau, k, exact, floating))
    assert found == FLOAT_CEIL_PAIRS


@pytest.mark.parametrize(("tau", "k", "m_exact", "m_float"), FLOAT_CEIL_PAIRS)
def test_g_pass_uses_the_exact_threshold(tau, k, m_exact, m_float):
    n, c = 2 * k, 2 * m_exact  # X has mean m_exact, so the two thresholds differ clearly
    expected = float(exact_tail(n, c, k, m_exact))
    wrong = float(exact_tail(n, c, k, m_float))
    assert abs(expected - wrong) > 1e-6
    for spelling in (tau, str(tau), Fraction(str(tau)), Decimal(str(tau)), np.float64(tau)):
        assert abs(g_pass_at_k([n], [c], k, tau=spelling)[0] - expected) < TOL


# ---------------------------------------------------------------- mG-Pass variants
@given(count_triples(max_n=200))
def test_mg_pass_variants(triple):
    n, c, k = triple
    assume(k <= 40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MeaninglessMetricWarning)  # k = 1: see test_mg_pass_k_one
        published = mg_pass_at_k([n], [c], k)[0]
    integral = mg_pass_at_k([n], [c], k, variant="integral")[0]
    if k % 2 == 0:
        assert integral == published
    else:  # odd k: the published sum drops the half step (1/k) P(X >= (k+1)/2)
        half_step = float(Fraction(1, k) * exact_tail(n, c, k, (k + 1) // 2))
        assert abs(integral - published - half_step) < TOL
    # independent check of the integral: 2 * mean of G-Pass over midpoints of a grid aligned with
    # every step i/k of tau in [1/2, 1] is exact for the step function
    cells = 4 * k
    midpoints = [Fraction(1, 2) + Fraction(2 * i + 1, 4 * cells) for i in range(cells)]
    average = float(np.mean(g_pass_at_k([n], [c], k, tau=midpoints)[0]))
    assert abs(integral - average) < 1e-12


def test_mg_pass_k_one():
    # k = 1: the published sum is empty (0); the integral is pass@1 = c/n (docs/spec.md section 3).
    # Defined but meaningless, so it warns (STYLE section 4) rather than giving a silent 0.
    with pytest.warns(MeaninglessMetricWarning, match=r"k = 1 is 0 for every problem by definition"):
        assert mg_pass_at_k([10], [3], 1)[0] == 0.0
    from kpass.metrics import KpassWarning

    assert issubclass(MeaninglessMetricWarning, KpassWarning)  # one filter silences every kpass warning
    with pytest.warns(MeaninglessMetricWarning):  # any k = 1 in a list of k
        assert mg_pass_at_k([10], [3], [1, 4])[0, 0] == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # neither the integral nor k >= 2 warns
        assert abs(mg_pass_at_k([10], [3], 1, variant="integral")[0] - 0.3) < TOL
        mg_pass_at_k([10], [3], [2, 3])


# ---------------------------------------------------------------- shapes
def test_output_shapes():
    n, c = np.array([10, 12, 14]), np.array([3, 0, 14])
    assert pass_at_k(n, c, 2).shape == (3,)
    assert pass_at_k(n, c, [1, 2, 5, 10]).shape == (3, 4)
    assert pass_hat_k(n, c, np.array([2, 3])).shape == (3, 2)
    assert g_pass_at_k(n, c, 4, tau=0.5).shape == (3,)
    assert g_pass_at_k(n, c, 4, tau=[0, 0.5, 1]).shape == (3, 3)
    assert g_pass_at_k(n, c, [2, 4], tau=0.5).shape == (3, 2)
    assert g_pass_at_k(n, c, [2, 4, 8, 10], tau=[0, 0.5, 1]).shape == (3, 4, 3)
    assert mg_pass_at_k(n, c, [2, 3]).shape == (3, 2)
    assert np.ndim(pass_at_k(10, 3, 5)) == 0 and abs(pass_at_k(10, 3, 5) - 11 / 12) < TOL
    assert pass_at_k(10, [3, 4], 5).shape == (2,)  # a 0-D n broadcasts over problems
    assert pass_at_k([], [], 3).shape == (0,)
    assert g_pass_at_k([], [], [2, 3], tau=[0.1, 0.2]).shape == (0, 2, 2)


def test_grid_columns_equal_single_calls():
    n, c = np.array([20, 30, 40]), np.array([5, 15, 39])
    grid = g_pass_at_k(n, c, [3, 7, 20], tau=[0, 0.4, 1])
    for i, k in enumerate([3, 7, 20]):
        for j, tau in enumerate([0, 0.4, 1]):
            np.testing.assert_array_equal(grid[:, i, j], g_pass_at_k(n, c, k, tau=tau))
    curve = pass_at_k(n, c, [20, 1, 7])  # any order of k
    for i, k in enumerate([20, 1, 7]):
        np.testing.assert_allclose(curve[:, i], pass_at_k(n, c, k), rtol=0, atol=1e-15)
