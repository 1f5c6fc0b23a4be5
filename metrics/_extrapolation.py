r"""pass@K beyond the samples drawn: a fitted difficulty model with a point mass at 0 (private module).

The unbiased pass@k estimator needs ``k <= n``. Beyond the samples drawn, pass@K can only come
from a model of the per-problem success probabilities p. kpass fits, by maximum likelihood on
the per-problem counts ``(n_j, c_j)``, a zero-inflated mixture of beta-binomials:

.. math:: p \sim \pi_0\,\delta_0 + (1-\pi_0)\sum_{m=1}^{M} w_m\,\mathrm{Beta}(a_m, b_m), \qquad
          c_j \mid p \sim \mathrm{Binomial}(n_j, p),

.. math:: P(c_j) = \pi_0\,[c_j = 0] + (1-\pi_0)\sum_m w_m \binom{n_j}{c_j}
          \frac{B(a_m + c_j,\ b_m + n_j - c_j)}{B(a_m, b_m)}

with M = 1 or 2 components (chosen by BIC). The point mass :math:`\pi_0` is what keeps the fit
honest when some problems are unsolvable: a plain beta-binomial must explain the excess of
``c = 0`` problems with a Beta whose density piles up near 0 and then predicts that pass@K climbs
to 1, biased upwards (Kazdan et al. 2025 fit the plain beta-binomial). The second component covers
difficulty that is not Beta-shaped (bimodal: easy problems and hard ones). Under a Beta the
population failure rate falls as a power law,
:math:`E[(1-p)^K] = B(a, b + K)/B(a, b) \sim \Gamma(a+b)/\Gamma(b)\,K^{-a}` (the mechanism of
Schaeffer et al. 2025), towards the floor :math:`\pi_0`.

The estimate of pass@K on the N problems is the mean of the per-problem posterior means
(empirical Bayes):

.. math:: \widehat{\mathrm{pass@}K} = \frac1N\sum_j \Big(1 - E\big[(1-p)^K \mid c_j, n_j\big]\Big), \qquad
          E\big[(1-p)^K \mid c, n\big] = r_0 + \sum_m r_m \frac{B(a_m + c,\ b_m + n - c + K)}{B(a_m + c,\ b_m + n - c)}

with :math:`r_0, r_m` the posterior probabilities of the point mass (only for ``c = 0``) and of
each component. A problem solved at least once is never treated as unsolvable.

The interval refits the model on (cluster) bootstrap resamples of the problems
(:func:`kpass.metrics.bootstrap_weights`) and takes percentiles: it carries the uncertainty of the
fit, which dominates far beyond n. It does not carry the uncertainty of the model's form: with n
samples a problem with :math:`p \ll 1/n` cannot be told from an unsolvable one, and the fit decides
by its shape near 0. The goodness-of-fit check compares the fitted curve with the observed
unbiased pass@k for every power of two ``k <= n`` (and ``k = n``):
:math:`z_k = (\bar P_{\text{obs}}(k) - P_{\text{fit}}(k)) / \widehat{SE}_k`; ``max |z_k|`` above
``warn_z`` (2) is a poor fit, above ``refuse_z`` (4) a failed one.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import minimize
from scipy.special import betaln, digamma, logsumexp

from ._bootstrap import percentile_bounds
from ._passk import pass_at_k
from ._patterns import CountPatterns
from ._resampling import bootstrap_weights
from ._validation import check_confidence_level, check_counts, resolve_seed

__all__ = ["DifficultyFit", "ExtrapolationResult", "extrapolate_pass_at_k", "fit_difficulty"]

_LOG_BOUNDS = (math.log(1e-3), math.log(1e4))
_LOGIT_BOUNDS = (-14.0, 14.0)
#: Bootstrap refits of the extrapolation interval (each one is a maximum-likelihood fit).
DEFAULT_EXTRAPOLATION_RESAMPLES = 200


@dataclasses.dataclass(frozen=True)
class DifficultyFit:
    r"""A fitted zero-inflated beta-binomial mixture.

    Attributes
    ----------
    zero_mass : float
        :math:`\pi_0`, the share of problems the model treats as unsolvable.
    weights, alpha, beta : ndarray, shape (M,)
        Mixture weights (summing to 1) and Beta parameters of the solvable part.
    log_likelihood : float
    n_parameters : int
    bic : float
    """

    zero_mass: float
    weights: NDArray[np.float64]
    alpha: NDArray[np.float64]
    beta: NDArray[np.float64]
    log_likelihood: float
    n_parameters: int
    bic: float
    theta: NDArray[np.float64] = dataclasses.field(repr=False)

    def population_pass_at_k(self, k: ArrayLike) -> NDArray[np.float64]:
        r""":math:`(1-\pi_0)\sum_m w_m (1 - B(a_m, b_m + k)/B(a_m, b_m))` for each k."""
        k = np.asarray(k, dtype=np.float64)[..., None]
        fail = np.exp(betaln(self.alpha, self.beta + k) - betaln(self.alpha, self.beta)) @ self.weights
        return (1.0 - self.zero_mass) * (1.0 - fail)

    def posterior_pass_at_k(self, n: NDArray[np.int64], c: NDArray[np.int64], k: int) -> NDArray[np.float64]:
        """Posterior mean of :math:`1-(1-p)^k` per problem (see the module docstring)."""
        return _posterior_pass(self.theta, len(self.weights), n, c, float(k))


@dataclasses.dataclass(frozen=True)
class ExtrapolationResult:
    """What :func:`extrapolate_pass_at_k` returns: an *extrapolated*, model-based estimate.

    Attributes
    ----------
    k : int
    estimate, low, high : float
        Mean posterior pass@k over the problems and its percentile interval from bootstrap refits.
    per_problem : ndarray, shape (N,)
        Posterior mean pass@k of each problem.
    population : float
        pass@k of the fitted population (the prior), for comparison.
    fit : DifficultyFit
    fit_ks, fit_observed, fit_predicted, fit_z : ndarray
        The goodness-of-fit check: observed mean pass@k for ``k <= n``, the fit's, and ``z``.
    max_abs_z : float
    fit_quality : {"good", "poor", "failed"}
        ``max_abs_z`` at most ``warn_z``, up to ``refuse_z``, above it.
    n_problems, n_clusters, n_resamples, n_failed_refits : int or None
    confidence_level : float
    seed : Any
    label : str
        ``"extrapolated"``: say it wherever the number appears.
    """

    k: int
    estimate: float
    low: float
    high: float
    per_problem: NDArray[np.float64]
    population: float
    fit: DifficultyFit
    fit_ks: NDArray[np.int64]
    fit_observed: NDArray[np.float64]
    fit_predicted: NDArray[np.float64]
    fit_z: NDArray[np.float64]
    max_abs_z: float
    fit_quality: str
    n_problems: int
    n_clusters: int | None
    n_resamples: int
    n_failed_refits: int
    confidence_level: float
    seed: Any
    label: str = "extrapolated"

    @property
    def description(self) -> str:
        """One line naming the model that produced the number."""
        fit = self.fit
        parts = ", ".join(f"{w:.2f} Beta({a:.3g}, {b:.3g})" for w, a, b in zip(fit.weights, fit.alpha, fit.beta))
        return (f"extrapolated from a zero-inflated beta-binomial fit (unsolvable share {fit.zero_mass:.3f}; "
                f"{parts}); goodness of fit for k <= {int(self.fit_ks[-1])}: max |z| = {self.max_abs_z:.2f} "
                f"({self.fit_quality})")


def _unpack(theta: NDArray[np.float64], components: int):
    """``theta`` -> (log pi0, log(1 - pi0), log w (M,), a (M,), b (M,)); broadcasts over leading axes."""
    theta = np.asarray(theta, dtype=np.float64)
    logit_zero = theta[..., 0]
    log_zero = -np.logaddexp(0.0, -logit_zero)
    log_solvable = -np.logaddexp(0.0, logit_zero)
    a = np.exp(theta[..., 1:1 + 2 * components:2])
    b = np.exp(theta[..., 2:2 + 2 * components:2])
    if components == 1:
        log_w = np.zeros(theta.shape[:-1] + (1,))
    else:
        logits = np.concatenate([np.zeros(theta.shape[:-1] + (1,)), theta[..., 1 + 2 * components:]], axis=-1)
        log_w = logits - logsumexp(logits, axis=-1, keepdims=True)
    return log_zero, log_solvable, log_w, a, b


def _log_terms(theta, components, n, c):
    """Log joint of (c, zero) and (c, component m) per pattern, without the binomial coefficient."""
    log_zero, log_solvable, log_w, a, b = _unpack(theta, components)
    n2, c2 = n[:, None].astype(np.float64), c[:, None].astype(np.float64)
    beta_part = betaln(a + c2, b + n2 - c2) - betaln(a, b)            # (P, M)
    component = log_solvable + log_w + beta_part
    zero = np.where(c == 0, log_zero, -np.inf)
    return zero, component


def _negative_log_likelihood(theta, components, n, c, weight):
    zero, component = _log_terms(theta, components, n, c)
    total = np.logaddexp(zero, logsumexp(component, axis=1))
    return -float(weight @ total)


def _objective(theta, components, n, c, weight):
    r"""Negative log-likelihood and its analytic gradient, batched over the rows of ``theta`` (B, d)
    and ``weight`` (B, P).

    With responsibilities :math:`r_{j0}, r_{jm}` of the point mass and the components,
    :math:`\partial T_j/\partial\,\mathrm{logit}\,\pi_0 = r_{j0} - \pi_0`,
    :math:`\partial T_j/\partial \log a_m = r_{jm} a_m(\psi(a_m + c) - \psi(a_m + b_m + n) - \psi(a_m) + \psi(a_m + b_m))`
    (the same with :math:`b_m, n - c`), :math:`\partial T_j/\partial\eta_2 = r_{j2} - w_2(1 - r_{j0})`.
    """
    theta = np.atleast_2d(theta)
    weight = np.atleast_2d(weight)
    log_zero, log_solvable, log_w, a, b = _unpack(theta, components)          # (B,), (B,), (B, M) ...
    nf, cf = n.astype(np.float64)[None, :, None], c.astype(np.float64)[None, :, None]
    a3, b3 = a[:, None, :], b[:, None, :]
    beta_part = betaln(a3 + cf, b3 + nf - cf) - betaln(a3, b3)                 # (B, P, M)
    component = log_solvable[:, None, None] + log_w[:, None, :] + beta_part
    zero = np.where(c[None, :] == 0, log_zero[:, None], -np.inf)               # (B, P)
    total = np.logaddexp(zero, logsumexp(component, axis=2))                     # (B, P)
    nll = -(weight * total).sum(axis=1)
    r0 = np.exp(zero - total)
    r = np.exp(component - total[:, :, None])
    pi0 = np.exp(log_zero)
    grad = np.empty(theta.shape)
    grad[:, 0] = (weight * (r0 - pi0[:, None])).sum(axis=1)
    common = digamma(a3 + b3) - digamma(a3 + b3 + nf)
    grad[:, 1:1 + 2 * components:2] = (weight[:, :, None] * r * a3 * (digamma(a3 + cf) - digamma(a3) + common)).sum(axis=1)
    grad[:, 2:2 + 2 * components:2] = (weight[:, :, None] * r * b3 * (digamma(b3 + nf - cf) - digamma(b3) + common)).sum(axis=1)
    if components == 2:
        w2 = np.exp(log_w[:, 1])
        grad[:, 5] = (weight * (r[:, :, 1] - w2[:, None] * (1.0 - r0))).sum(axis=1)
    return nll, -grad


def _scalar_objective(theta, components, n, c, weight):
    nll, grad = _objective(theta[None, :], components, n, c, weight[None, :])
    return float(nll[0]), grad[0]


def _batched_refit(theta0, components, n, c, weights, iterations: int = 40):
    """Maximum-likelihood refits for many weightings at once (B, P), from ``theta0``: damped
    Newton steps (Levenberg-Marquardt) with a finite-difference Hessian of the analytic gradient,
    kept inside the parameter box. Returns ``(theta (B, d), converged (B,))``."""
    bounds = np.array(_bounds(components))
    rows = weights.shape[0]
    theta = np.repeat(np.asarray(theta0, dtype=np.float64)[None, :], rows, axis=0)
    d = theta.shape[1]
    damping = np.full(rows, 1e-3)
    nll, grad = _objective(theta, components, n, c, weights)
    step_size = 1e-5
    eye = np.eye(d)
    for _ in range(iterations):
        hessian = np.empty((rows, d, d))
        for j in range(d):
            _, shifted = _objective(theta + step_size * eye[j], components, n, c, weights)
            hessian[:, :, j] = (shifted - grad) / step_size
        hessian = 0.5 * (hessian + hessian.transpose(0, 2, 1))
        scale = np.abs(np.diagonal(hessian, axis1=1, axis2=2)).max(axis=1) + 1e-12
        system = hessian + (damping * scale)[:, None, None] * eye
        with np.errstate(all="ignore"):
            try:
                step = np.linalg.solve(system, grad[:, :, None])[:, :, 0]
            except np.linalg.LinAlgError:
                step = grad / scale[:, None]
        step = np.where(np.isfinite(step), step, 0.0)
        candidate = np.clip(theta - step, bounds[:, 0], bounds[:, 1])
        new_nll, new_grad = _objective(candidate, components, n, c, weights)
        better = np.isfinite(new_nll) & (new_nll <= nll)
        theta = np.where(better[:, None], candidate, theta)
        nll = np.where(better, new_nll, nll)
        grad = np.where(better[:, None], new_grad, grad)
        damping = np.where(better, np.maximum(damping / 3.0, 1e-9), damping * 10.0)
    # at a bound the gradient need not vanish: count only the free coordinates
    free = (theta > bounds[:, 0] + 1e-6) & (theta < bounds[:, 1] - 1e-6)
    gradient_norm = np.abs(np.where(free, grad, 0.0)).max(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
    return theta, np.isfinite(nll) & (gradient_norm < 1e-3)


def _posterior_pass(theta, components, n, c, k):
    zero, component = _log_terms(theta, components, n, c)
    evidence = np.logaddexp(zero, logsumexp(component, axis=1))
    _, _, _, a, b = _unpack(theta, components)
    n2, c2 = n[:, None].astype(np.float64), c[:, None].astype(np.float64)
    fail_given = np.exp(betaln(a + c2, b + n2 - c2 + k) - betaln(a + c2, b + n2 - c2))
    fail = np.exp(zero - evidence) + (np.exp(component - evidence[:, None]) * fail_given).sum(axis=1)
    return np.clip(1.0 - fail, 0.0, 1.0)


def _bounds(components: int, zero_inflated: bool = True) -> list[tuple[float, float]]:
    zero = _LOGIT_BOUNDS if zero_inflated else (_LOGIT_BOUNDS[0], _LOGIT_BOUNDS[0])
    return [zero] + [_LOG_BOUNDS] * (2 * components) + [(-10.0, 10.0)] * (components - 1)


def _starts(n, c, weight, components) -> list[NDArray[np.float64]]:
    rate = c / n
    zero_share = float(weight[c == 0].sum() / weight.sum())
    solved = c > 0
    if solved.any():
        m = float(np.average(rate[solved], weights=weight[solved]))
        v = float(np.average((rate[solved] - m) ** 2, weights=weight[solved])) + 1e-3
    else:
        m, v = 0.01, 1e-3
    m = min(max(m, 1e-3), 1 - 1e-3)
    common = max(m * (1 - m) / v - 1.0, 0.05)
    a0, b0 = math.log(max(m * common, 2e-3)), math.log(max((1 - m) * common, 2e-3))
    zero_starts = [-6.0] + ([math.log(zero_share * 0.8 / (1 - zero_share * 0.8))] if 0 < zero_share < 1 else [])
    out = []
    for z in zero_starts:
        if components == 1:
            out += [np.array([z, a0, b0]), np.array([z, math.log(0.3), math.log(3.0)])]
        else:
            out += [np.array([z, a0 + 1.0, b0 - 1.0, math.log(0.3), math.log(5.0), 0.0]),
                    np.array([z, math.log(3.0), math.log(1.0), math.log(0.5), math.log(20.0), 0.0])]
    return out


def _fit_theta(n, c, weight, components, starts, zero_inflated: bool = True):
    best = None
    bounds = _bounds(components, zero_inflated)
    for start in starts:
        start = np.clip(start, [lo for lo, _ in bounds], [hi for _, hi in bounds])
        result = minimize(_scalar_objective, start, args=(components, n, c, weight), method="L-BFGS-B",
                          jac=True, bounds=bounds)
        if np.isfinite(result.fun) and (best is None or result.fun < best.fun):
            best = result
    return best


def fit_difficulty(n_samples: ArrayLike, n_correct: ArrayLike, *, components: int | None = None,
                   weights: ArrayLike | None = None, zero_inflated: bool = True) -> DifficultyFit:
    r"""Maximum-likelihood zero-inflated beta-binomial mixture of per-problem counts.

    .. math:: \max_{\pi_0, w, a, b} \sum_j \log\Big(\pi_0 [c_j = 0] + (1-\pi_0)\sum_m w_m
              \frac{B(a_m + c_j, b_m + n_j - c_j)}{B(a_m, b_m)}\Big)

    Parameters
    ----------
    n_samples, n_correct : array_like of int, shape (N,)
        Samples drawn and correct per problem (ragged n allowed).
    components : {1, 2}, optional
        Beta components of the solvable part; default: the one with the smaller BIC.
    weights : array_like of float, shape (N,), optional
        Multiplicity of each problem (a bootstrap resample).
    zero_inflated : bool, default: True
        ``False`` fits the plain beta-binomial mixture (:math:`\pi_0` held at ~0, ``expit(-14)``),
        for comparison: it is biased upwards when some problems are unsolvable.

    Returns
    -------
    DifficultyFit

    References
    ----------
    .. [1] D. Lambert, "Zero-inflated Poisson regression", Technometrics 34 (1992) (zero inflation).
    .. [2] J. Kazdan et al., "Efficient Prediction of Pass@k Scaling in Large Language Models",
       arXiv:2510.05197 (2025) (the beta-binomial fit).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = np.where(rng.random(400) < 0.3, 0.0, rng.beta(1.0, 3.0, 400))
    >>> fit = fit_difficulty(np.full(400, 32), rng.binomial(32, p), components=1)
    >>> round(fit.zero_mass, 1)
    0.3
    """
    n, c = check_counts(n_samples, n_correct)[:2]
    if n.size < 2:
        raise ValueError(f"fitting a difficulty model needs at least 2 problems; got {n.size}.")
    if (n < 1).any():
        raise ValueError("every problem needs at least one sample to fit a difficulty model; got n = 0.")
    weight = np.ones(n.size) if weights is None else np.asarray(weights, dtype=np.float64)
    grouped = CountPatterns.of(n, c)
    pattern_weight = grouped.weights(weight[None, :])[0]
    pn, pc = grouped.patterns[:, 0], grouped.patterns[:, 1]
    choices = (1, 2) if components is None else (components,)
    if any(m not in (1, 2) for m in choices):
        raise ValueError(f"`components` must be 1 or 2; got {components!r}.")
    fits = []
    for m in choices:
        result = _fit_theta(pn, pc, pattern_weight, m, _starts(pn, pc, pattern_weight, m), zero_inflated)
        fits.append(_make_fit(result.x, m, -result.fun, float(pattern_weight.sum()), zero_inflated))
    return min(fits, key=lambda fit: fit.bic)


def _make_fit(theta, components, log_likelihood, n_total, zero_inflated=True) -> DifficultyFit:
    log_zero, _, log_w, a, b = _unpack(theta, components)
    n_parameters = 3 * components - (0 if zero_inflated else 1)
    return DifficultyFit(zero_mass=float(np.exp(log_zero)), weights=np.exp(log_w), alpha=a, beta=b,
                         log_likelihood=float(log_likelihood), n_parameters=n_parameters,
                         bic=float(-2.0 * log_likelihood + n_parameters * math.log(n_total)),
                         theta=np.asarray(theta, dtype=np.float64))


def _fit_check_ks(smallest: int) -> NDArray[np.int64]:
    powers = [1 << i for i in range(int(math.log2(smallest)) + 1)]
    return np.array(sorted(set(powers + [smallest])), dtype=np.int64)


def extrapolate_pass_at_k(
    n_samples: ArrayLike,
    n_correct: ArrayLike,
    k: int,
    *,
    components: int | None = None,
    clusters: ArrayLike | None = None,
    confidence_level: float = 0.95,
    n_resamples: int = DEFAULT_EXTRAPOLATION_RESAMPLES,
    rng: int | np.random.Generator | None = None,
    warn_z: float = 2.0,
    refuse_z: float = 4.0,
) -> ExtrapolationResult:
    r"""Extrapolated pass@k for any k (also k > n) from a fitted difficulty model, with an interval.

    .. math:: \widehat{\mathrm{pass@}K} = \frac1N\sum_j \Big(1 - E_{\hat\theta}\big[(1-p)^K \mid c_j, n_j\big]\Big)

    under the zero-inflated beta-binomial mixture of :func:`fit_difficulty` (module docstring).

    Parameters
    ----------
    n_samples, n_correct : array_like of int, shape (N,)
        Samples drawn and correct per problem.
    k : int
        Number of draws K (>= 1; may exceed every n).
    components : {1, 2}, optional
        Beta components (default: by BIC on the full data, kept for every refit).
    clusters : array_like, shape (N,), optional
        Resample whole clusters in the bootstrap.
    confidence_level : float, default: 0.95
    n_resamples : int, default: 200
        Bootstrap refits (each is a maximum-likelihood fit; this is the costly part).
    rng : int, numpy.random.Generator or None
    warn_z, refuse_z : float, default: 2 and 4
        Thresholds of the goodness-of-fit statistic ``max |z_k|`` for "poor" and "failed".

    Returns
    -------
    ExtrapolationResult
        Label it "extrapolated" wherever it is shown; check ``fit_quality``.

    References
    ----------
    .. [1] R. Schaeffer et al., "How Do Large Language Monkeys Get Their Power (Laws)?",
       arXiv:2502.17578 (2025).
    .. [2] J. Kazdan et al., "Efficient Prediction of Pass@k Scaling in Large Language Models",
       arXiv:2510.05197 (2025).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> p = np.where(rng.random(300) < 0.25, 0.0, rng.beta(0.8, 4.0, 300))
    >>> r = extrapolate_pass_at_k(np.full(300, 32), rng.binomial(32, p), 1024, n_resamples=20, rng=0)
    >>> truth = np.mean(1 - (1 - p) ** 1024)
    >>> bool(abs(r.estimate - truth) < 0.05), r.label
    (True, 'extrapolated')
    """
    n, c = check_counts(n_samples, n_correct)[:2]
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"`k` must be an integer >= 1; got {k!r}.")
    if isinstance(n_resamples, (bool, np.bool_)) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 2:
        raise ValueError(f"`n_resamples` must be an integer >= 2; got {n_resamples!r}.")
    level = check_confidence_level(confidence_level)
    if not 0 < warn_z <= refuse_z:
        raise ValueError(f"need 0 < `warn_z` <= `refuse_z`; got {warn_z!r} and {refuse_z!r}.")
    fit = fit_difficulty(n, c, components=components)
    m = len(fit.weights)
    per_problem = fit.posterior_pass_at_k(n, c, int(k))
    estimate = float(per_problem.mean())

    smallest = int(n.min())
    ks = _fit_check_ks(smallest)
    observed_rows = pass_at_k(n, c, ks)                      # (N, K) unbiased, Chen 2021 Eq. 1
    observed = observed_rows.mean(axis=0)
    se = observed_rows.std(axis=0, ddof=1) / math.sqrt(n.size)
    predicted = fit.population_pass_at_k(ks)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, (observed - predicted) / np.where(se > 0, se, 1.0),
                     np.where(np.isclose(observed, predicted, atol=1e-9), 0.0, np.inf))
    max_z = float(np.max(np.abs(z)))
    quality = "good" if max_z <= warn_z else ("poor" if max_z <= refuse_z else "failed")

    seed, used_seed = resolve_seed(rng)
    grouped = CountPatterns.of(n, c)
    pn, pc = grouped.patterns[:, 0], grouped.patterns[:, 1]
    replicates, failed = [], 0
    for weights in bootstrap_weights(n.size, clusters=clusters, n_resamples=n_resamples, rng=seed,
                                     order_by=grouped.rows()):
        pattern_weights = grouped.weights(weights)
        thetas, converged = _batched_refit(fit.theta, m, pn, pc, pattern_weights)
        failed += int((~converged).sum())
        for theta, row in zip(thetas[converged], pattern_weights[converged]):
            replicates.append(float(row @ _posterior_pass(theta, m, pn, pc, float(k)) / row.sum()))
    if len(replicates) < 2:
        raise ValueError("the bootstrap refits of the difficulty model failed; no interval.")
    low, high = percentile_bounds(np.sort(np.array(replicates))[:, None], level)
    n_clusters = None if clusters is None else int(np.unique(np.asarray(clusters), return_inverse=True)[0].size)
    return ExtrapolationResult(
        k=int(k), estimate=estimate, low=float(low[0]), high=float(high[0]),
        per_problem=per_problem, population=float(fit.population_pass_at_k(k)), fit=fit, fit_ks=ks,
        fit_observed=observed, fit_predicted=predicted, fit_z=z, max_abs_z=max_z, fit_quality=quality,
        n_problems=int(n.size), n_clusters=n_clusters, n_resamples=int(n_resamples), n_failed_refits=failed,
        confidence_level=level, seed=used_seed)
