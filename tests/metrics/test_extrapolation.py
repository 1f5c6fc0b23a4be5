"""pass@K beyond the samples drawn: kpass.metrics.fit_difficulty and extrapolate_pass_at_k.

A quick version of scripts/extrapolation_study.py (which writes its table into docs/analyses.md):
fit on n = 16 samples, compare with the truth at K = 256 on populations with unsolvable problems
and with difficulty that is not Beta-shaped.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import betaln, comb

from kpass.metrics import extrapolate_pass_at_k, fit_difficulty, pass_at_k
from kpass.metrics._extrapolation import _negative_log_likelihood, _objective


def truth_at(p: np.ndarray, k: int) -> float:
    return float(np.mean(1.0 - (1.0 - p) ** k))


def test_likelihood_equals_the_zero_inflated_beta_binomial_pmf():
    # P(c) = pi0 [c = 0] + (1 - pi0) C(n, c) B(a + c, b + n - c) / B(a, b), written out term by term
    pi0, a, b, n = 0.2, 0.7, 2.5, 9
    theta = np.array([np.log(pi0 / (1 - pi0)), np.log(a), np.log(b)])
    c = np.arange(n + 1)
    pmf = pi0 * (c == 0) + (1 - pi0) * comb(n, c) * np.exp(betaln(a + c, b + n - c) - betaln(a, b))
    assert pmf.sum() == pytest.approx(1.0)
    weights = np.arange(1.0, n + 2)
    expected = -(weights * np.log(pmf / comb(n, c))).sum()      # the binomial coefficient is a constant
    assert _negative_log_likelihood(theta, 1, np.full(n + 1, n), c, weights) == pytest.approx(expected)
    nll, _ = _objective(theta[None, :], 1, np.full(n + 1, n), c, weights[None, :])
    assert nll[0] == pytest.approx(expected)


def test_analytic_gradient_equals_finite_differences():
    rng = np.random.default_rng(0)
    n, c = np.full(30, 16), rng.integers(0, 17, 30)
    theta = np.array([-0.5, 0.1, 1.0, 0.3, 2.0, 0.4])
    _, grad = _objective(theta[None, :], 2, n, c, np.ones((1, 30)))
    step = 1e-6
    numeric = [(_negative_log_likelihood(theta + step * e, 2, n, c, np.ones(30))
                - _negative_log_likelihood(theta - step * e, 2, n, c, np.ones(30))) / (2 * step) for e in np.eye(6)]
    np.testing.assert_allclose(grad[0], numeric, rtol=1e-5, atol=1e-5)


def test_point_mass_keeps_the_extrapolation_honest_with_unsolvable_problems():
    # 30% unsolvable, the rest Beta(1, 3): the plain beta-binomial fit is biased upwards at K = 256
    rng = np.random.default_rng(1)
    p = np.where(rng.random(400) < 0.3, 0.0, rng.beta(1.0, 3.0, 400))
    n, c = np.full(400, 16), rng.binomial(16, p)
    truth = truth_at(p, 256)
    result = extrapolate_pass_at_k(n, c, 256, n_resamples=30, rng=0)
    plain = fit_difficulty(n, c, zero_inflated=False, components=1)
    plain_estimate = float(plain.posterior_pass_at_k(n, c, 256).mean())
    assert abs(result.estimate - truth) < 0.04
    assert result.low <= truth <= result.high
    assert plain_estimate - truth > 0.08            # the bias the point mass removes
    assert result.fit.zero_mass == pytest.approx(0.3, abs=0.08)
    assert result.label == "extrapolated" and result.fit_quality == "good"


def test_difficulty_that_is_not_beta_shaped():
    # easy and hard problems (p = 0.9 or 0.05, half each): one Beta cannot fit it, two can
    rng = np.random.default_rng(2)
    p = rng.choice([0.05, 0.9], 600)
    n, c = np.full(600, 16), rng.binomial(16, p)
    result = extrapolate_pass_at_k(n, c, 256, n_resamples=20, rng=0)
    assert len(result.fit.weights) == 2
    assert abs(result.estimate - truth_at(p, 256)) < 0.03


def test_within_the_samples_it_agrees_with_the_unbiased_estimator():
    rng = np.random.default_rng(3)
    p = np.where(rng.random(300) < 0.2, 0.0, rng.beta(0.8, 2.0, 300))
    n, c = np.full(300, 16), rng.binomial(16, p)
    result = extrapolate_pass_at_k(n, c, 8, n_resamples=20, rng=0)
    unbiased = pass_at_k(n, c, 8)
    assert abs(result.estimate - unbiased.mean()) < 2 * unbiased.std(ddof=1) / np.sqrt(300)


def test_a_poor_fit_is_refused():
    # two sharp difficulty levels and a single Beta: the fit cannot reproduce the pass@k curve
    rng = np.random.default_rng(0)
    p = rng.choice([0.05, 0.95], 1500)
    result = extrapolate_pass_at_k(np.full(1500, 32), rng.binomial(32, p), 256, components=1, n_resamples=2, rng=0)
    assert result.fit_quality == "failed" and result.max_abs_z > 4


def test_problems_solved_once_are_never_unsolvable():
    fit = fit_difficulty(np.full(6, 10), [0, 0, 0, 0, 1, 5], components=1)
    post = fit.posterior_pass_at_k(np.full(6, 10), np.array([0, 0, 0, 0, 1, 5]), 10_000)
    assert post[4] > 0.99 and post[5] > 0.99 and post[0] < post[4]


def test_extrapolate_iv():
    with pytest.raises(ValueError, match="`k` must be an integer"):
        extrapolate_pass_at_k([4, 4], [1, 2], 0)
    with pytest.raises(ValueError, match="at least 2 problems"):
        fit_difficulty([4], [1])
    with pytest.raises(ValueError, match="`components` must be 1 or 2"):
        fit_difficulty([4, 4], [1, 2], components=3)
    with pytest.raises(ValueError, match="n_resamples"):
        extrapolate_pass_at_k([4, 4], [1, 2], 8, n_resamples=1)
    with pytest.raises(ValueError, match="warn_z"):
        extrapolate_pass_at_k([4, 4], [1, 2], 8, warn_z=5, refuse_z=4)


def test_the_study_script_runs_and_writes_its_table(tmp_path):
    # scripts/extrapolation_study.py, one population and one test set (the full run is in the docs)
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "extrapolation_study.py"
    spec = importlib.util.spec_from_file_location("extrapolation_study", path)
    study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study)
    name = "30% unsolvable + Beta(1, 3)"
    rows = study.run_study({name: study.POPULATIONS[name]}, ns=(16,), ks=(256,), reps=1, n_resamples=5)
    assert rows[0]["plain_bias"] > rows[0]["kpass_bias"]
    doc = tmp_path / "doc.md"
    doc.write_text(f"before\n{study.START}\nold\n{study.END}\nafter\n")
    study.write_table(study.markdown_table(rows, 1, 5, 2025), doc)
    text = doc.read_text()
    assert "old" not in text and f"| {name} | 16 | 256 |" in text and text.endswith("after\n")
