"""Tests of the power analysis, design effect and ICC (kpass.metrics._power)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from kpass.metrics import (
    DegenerateIntervalWarning,
    PowerInputs,
    design_effect,
    icc,
    minimum_detectable_effect,
    paired_difference,
    power_inputs_from_pilot,
    required_problems,
)

ST13_Z = 1.959963984540  # docs/spec.md ST13: z_0.975


def test_required_problems_formula_with_st13():
    # docs/spec.md section 7 (Miller 2024): n = (z_{1-a/2} + z_{1-b})^2 (w2 + sA2/KA + sB2/KB) / delta^2
    # power = 0.5 makes z_{1-b} = 0, so only ST13's z is left.
    variance = 0.01 + 0.2 / 4 + 0.15 / 8
    expected = ST13_Z**2 * variance / 0.02**2
    n = required_problems(0.02, between_variance=0.01, within_variance_a=0.2, within_variance_b=0.15,
                          samples_per_problem_a=4, samples_per_problem_b=8, power=0.5)
    assert n == math.ceil(expected)
    z_power = stats.norm.ppf(0.8)
    expected = (ST13_Z + z_power) ** 2 * variance / 0.02**2
    assert required_problems(-0.02, between_variance=0.01, within_variance_a=0.2, within_variance_b=0.15,
                             samples_per_problem_a=4, samples_per_problem_b=8) == math.ceil(expected)


@given(
    st.floats(0.005, 0.3), st.floats(0.0, 0.1), st.floats(0.0, 0.25), st.integers(1, 64),
    st.floats(0.01, 0.2), st.floats(0.5, 0.99),
)
def test_mde_and_required_problems_are_inverse(delta, omega2, sigma2, k, alpha, power):
    kwargs = dict(between_variance=omega2 + 1e-4, within_variance_a=sigma2, within_variance_b=sigma2,
                  samples_per_problem_a=k, samples_per_problem_b=k, confidence_level=1 - alpha, power=power)
    n = required_problems(delta, **kwargs)
    assert minimum_detectable_effect(n, **kwargs) <= delta * (1 + 1e-9)
    if n > 1:
        assert minimum_detectable_effect(n - 1, **kwargs) > delta
    more_samples = dict(kwargs, samples_per_problem_a=2 * k, samples_per_problem_b=2 * k)
    assert required_problems(delta, **more_samples) <= n


def test_required_problems_achieves_the_power_in_simulation():
    # paired design: p_A ~ Beta(2, 2), p_B = p_A shifted; K = 4 samples per problem per model
    rng = np.random.default_rng(0)
    delta, k = 0.05, 4
    big = rng.beta(2, 2, size=200_000)
    shift = rng.normal(delta, 0.1, size=big.size)
    p_b = np.clip(big - shift, 0, 1)
    true_delta = float((big - p_b).mean())
    omega2 = float((big - p_b).var())
    sigma_a, sigma_b = float((big * (1 - big)).mean()), float((p_b * (1 - p_b)).mean())
    n = required_problems(true_delta, between_variance=omega2, within_variance_a=sigma_a, within_variance_b=sigma_b,
                          samples_per_problem_a=k, samples_per_problem_b=k)
    sims = 2000
    idx = rng.integers(0, big.size, size=(sims, n))
    mean_a = rng.binomial(k, big[idx]) / k
    mean_b = rng.binomial(k, p_b[idx]) / k
    d = mean_a - mean_b
    t = d.mean(axis=1) / (d.std(axis=1, ddof=1) / math.sqrt(n))
    rejected = np.abs(t) > stats.t.ppf(0.975, n - 1)
    assert rejected.mean() == pytest.approx(0.8, abs=0.035)


def test_power_iv():
    with pytest.raises(ValueError, match="`minimum_effect` must be non-zero"):
        required_problems(0, between_variance=0.1)
    with pytest.raises(ValueError, match="`between_variance` must be >= 0"):
        required_problems(0.1, between_variance=-0.1)
    with pytest.raises(ValueError, match="`samples_per_problem_a` must be > 0"):
        required_problems(0.1, between_variance=0.1, samples_per_problem_a=0)
    with pytest.raises(ValueError, match="`power` must be < 1"):
        required_problems(0.1, between_variance=0.1, power=1)
    with pytest.raises(ValueError, match="`confidence_level` must be < 1"):
        minimum_detectable_effect(100, between_variance=0.1, confidence_level=1)
    with pytest.raises(ValueError, match="variance of the per-problem difference is 0"):
        minimum_detectable_effect(100, between_variance=0.0)
    with pytest.raises(ValueError, match="`n_problems` must be > 0"):
        minimum_detectable_effect(0, between_variance=0.1)
    with pytest.raises(TypeError, match="`minimum_effect` must be a real number"):
        required_problems("0.1", between_variance=0.1)


# ---------------------------------------------------------------------------------------------
# ICC and design effect
# ---------------------------------------------------------------------------------------------


def _literal_icc(groups_of_values):
    """One-way ANOVA ICC(1) written out with loops (Shrout & Fleiss 1979; unbalanced k0)."""
    groups = [list(map(float, g)) for g in groups_of_values if len(g)]
    all_values = [x for g in groups for x in g]
    total = len(all_values)
    grand = sum(all_values) / total
    ss_between = sum(len(g) * (sum(g) / len(g) - grand) ** 2 for g in groups)
    ss_within = sum((x - sum(g) / len(g)) ** 2 for g in groups for x in g)
    ms_between = ss_between / (len(groups) - 1)
    ms_within = ss_within / (total - len(groups))
    k0 = (total - sum(len(g) ** 2 for g in groups) / total) / (len(groups) - 1)
    return (ms_between - ms_within) / (ms_between + (k0 - 1) * ms_within)


def test_icc_forms_agree_with_literal_anova():
    rng = np.random.default_rng(1)
    matrix = (rng.random((30, 6)) < rng.beta(1, 1, size=30)[:, None]).astype(int)
    expected = _literal_icc(matrix.tolist())
    assert icc(matrix) == pytest.approx(expected, rel=1e-10)
    assert icc(n_samples=np.full(30, 6), n_correct=matrix.sum(axis=1)) == pytest.approx(expected, rel=1e-10)
    # unbalanced, long format, non-binary scores
    sizes = rng.integers(1, 7, size=25)
    groups = np.repeat([f"q{i}" for i in range(25)], sizes)
    scores = rng.random(groups.size) + np.repeat(rng.normal(0, 0.5, 25), sizes)
    expected = _literal_icc([scores[groups == f"q{i}"] for i in range(25)])
    assert icc(scores, groups=groups) == pytest.approx(expected, rel=1e-10)
    # unbalanced counts
    n = rng.integers(2, 9, size=40)
    c = rng.binomial(n, rng.beta(2, 2, size=40))
    expected = _literal_icc([[1] * ci + [0] * (ni - ci) for ni, ci in zip(n, c)])
    assert icc(n_samples=n, n_correct=c) == pytest.approx(expected, rel=1e-10)


def test_icc_estimates_var_p_over_pbar_qbar():
    # docs/spec.md section 7: rho = Var(p_j) / (pbar (1 - pbar)); Beta(2, 2): (1/20) / (1/4) = 0.2
    rng = np.random.default_rng(2)
    p = rng.beta(2, 2, size=20_000)
    c = rng.binomial(10, p)
    assert icc(n_samples=np.full(p.size, 10), n_correct=c) == pytest.approx(0.2, abs=0.01)


def test_design_effect_matches_variance_inflation():
    # the variance of the pooled mean over N problems x m samples is deff times the binomial one
    rng = np.random.default_rng(3)
    m, n_problems, sims = 8, 200, 4000
    p = rng.beta(2, 2, size=(sims, n_problems))
    pooled = rng.binomial(m, p).sum(axis=1) / (m * n_problems)
    binomial_variance = 0.25 / (m * n_problems)
    deff = design_effect(m, 0.2)
    assert deff == pytest.approx(1 + 7 * 0.2)
    assert pooled.var() / binomial_variance == pytest.approx(deff, rel=0.06)
    assert np.allclose(design_effect([1, 4, 16], 0.5), [1.0, 2.5, 8.5])


def test_icc_and_design_effect_iv():
    with pytest.raises(ValueError, match="either `values`"):
        icc()
    with pytest.raises(ValueError, match="either `values`"):
        icc([[1, 0]], n_samples=[2], n_correct=[1])
    with pytest.raises(ValueError, match="at least 2 problems"):
        icc([[1, 0, 1]])
    with pytest.raises(ValueError, match="2 or more samples"):
        icc(n_samples=[1, 1], n_correct=[1, 0])
    with pytest.raises(ValueError, match="must be finite"):
        icc([[1, float("nan")], [0, 1]])
    with pytest.warns(DegenerateIntervalWarning, match="identical"):
        assert math.isnan(icc([[1, 1], [1, 1]]))
    with pytest.raises(ValueError, match="samples_per_problem"):
        design_effect(0, 0.1)
    with pytest.raises(ValueError, match="rho must be >= -1/\\(m - 1\\)"):
        design_effect(5, -0.5)


# ---------------------------------------------------------------------------------------------
# pilot estimates
# ---------------------------------------------------------------------------------------------


def test_power_inputs_from_pilot_recover_the_truth():
    rng = np.random.default_rng(4)
    n_problems, k = 40_000, 8
    p_a = rng.beta(2, 2, size=n_problems)
    p_b = np.clip(p_a + rng.normal(-0.05, 0.15, size=n_problems), 0, 1)
    a = rng.random((n_problems, k)) < p_a[:, None]
    b = rng.random((n_problems, 4)) < p_b[:, None]
    inputs = power_inputs_from_pilot(a, b)
    assert isinstance(inputs, PowerInputs)
    assert inputs.between_variance == pytest.approx((p_a - p_b).var(), rel=0.1)  # sampling SE about 3.5%
    assert inputs.within_variance_a == pytest.approx((p_a * (1 - p_a)).mean(), rel=0.03)
    assert inputs.within_variance_b == pytest.approx((p_b * (1 - p_b)).mean(), rel=0.03)
    assert (inputs.samples_per_problem_a, inputs.samples_per_problem_b, inputs.n_problems) == (8.0, 4.0, n_problems)
    assert inputs.mean_difference == pytest.approx((p_a - p_b).mean(), abs=0.01)
    from_counts = power_inputs_from_pilot(n_samples_a=np.full(n_problems, k), n_correct_a=a.sum(1),
                                          n_samples_b=np.full(n_problems, 4), n_correct_b=b.sum(1))
    assert from_counts.power_kwargs() == pytest.approx(inputs.power_kwargs())
    # the pilot's own paired SE agrees with the formula's variance at the pilot's K
    observed = paired_difference(a.mean(1), b.mean(1), method="t")
    variance = inputs.between_variance + inputs.within_variance_a / 8 + inputs.within_variance_b / 4
    assert observed.standard_error == pytest.approx(math.sqrt(variance / n_problems), rel=0.01)
    assert required_problems(0.02, **inputs.power_kwargs()) > 0


def test_power_inputs_truncation_warns():
    rng = np.random.default_rng(5)
    p = rng.beta(2, 2, size=50)
    a = rng.random((50, 2)) < p[:, None]
    b = rng.random((50, 2)) < p[:, None]  # identical models: omega^2 = 0, estimate often < 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inputs = power_inputs_from_pilot(a, b)
    assert inputs.between_variance >= 0
    if inputs.details["raw_between_variance"] < 0:
        assert inputs.details["truncated"] and inputs.between_variance == 0
        assert any(issubclass(w.category, DegenerateIntervalWarning) for w in caught)


def test_power_inputs_iv():
    with pytest.raises(ValueError, match="either `outcomes_a`"):
        power_inputs_from_pilot()
    with pytest.raises(ValueError, match="give both"):
        power_inputs_from_pilot([[1, 0]])
    with pytest.raises(ValueError, match="0/1 outcomes; other values"):
        power_inputs_from_pilot([[1, 2], [0, 1]], [[1, 0], [0, 1]])
    with pytest.raises(ValueError, match="same problems"):
        power_inputs_from_pilot([[1, 0], [0, 1]], [[1, 0], [0, 1], [1, 1]])
    with pytest.raises(ValueError, match="fewer than 2 samples"):
        power_inputs_from_pilot(n_samples_a=[1, 2], n_correct_a=[1, 0], n_samples_b=[2, 2], n_correct_b=[1, 1])
    with pytest.raises(ValueError, match="give all four"):
        power_inputs_from_pilot(n_samples_a=[2, 2], n_correct_a=[1, 0])


def test_ragged_pilot_uses_the_harmonic_mean_of_samples_per_problem():
    # review C11: with ragged n the within-problem term of the variance of a mean over problems is
    # sigma^2 * mean(1/n_j) = sigma^2 / harmonic_mean(n); the arithmetic mean (here 17 against 3.76)
    # would understate it, and with it the number of problems needed
    rng = np.random.default_rng(6)
    n_problems = 60_000
    p_a = rng.beta(2, 2, size=n_problems)
    p_b = np.clip(p_a + rng.normal(-0.05, 0.1, size=n_problems), 0, 1)
    n_a = rng.choice([2, 32], size=n_problems)
    n_b = np.full(n_problems, 4)
    c_a, c_b = rng.binomial(n_a, p_a), rng.binomial(n_b, p_b)
    inputs = power_inputs_from_pilot(n_samples_a=n_a, n_correct_a=c_a, n_samples_b=n_b, n_correct_b=c_b)
    harmonic = n_problems / (1.0 / n_a).sum()
    assert inputs.samples_per_problem_a == pytest.approx(harmonic, rel=1e-12) and 3.6 < harmonic < 3.9
    assert inputs.samples_per_problem_b == 4.0
    assert inputs.details["arithmetic_mean_samples_a"] == pytest.approx(n_a.mean(), rel=1e-12)
    # the formula at the pilot's own design reproduces the pilot's paired standard error
    observed = paired_difference(c_a / n_a, c_b / n_b, method="t")
    kwargs = inputs.power_kwargs()
    variance = (kwargs["between_variance"] + kwargs["within_variance_a"] / kwargs["samples_per_problem_a"]
                + kwargs["within_variance_b"] / kwargs["samples_per_problem_b"])
    assert observed.standard_error == pytest.approx(math.sqrt(variance / n_problems), rel=0.015)
    arithmetic = (kwargs["between_variance"] + kwargs["within_variance_a"] / n_a.mean()
                  + kwargs["within_variance_b"] / kwargs["samples_per_problem_b"])
    assert math.sqrt(arithmetic / n_problems) < 0.85 * observed.standard_error
