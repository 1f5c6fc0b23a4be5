r"""Design effect, intraclass correlation and power analysis for paired model comparisons.

How many problems does a benchmark need to detect a difference ``delta`` between two models,
and what is the smallest difference a benchmark of N problems can detect? Following Miller
(2024) [1]_ (docs/spec.md section 7), with K_A and K_B samples per problem for models A and B:

.. math::

    n = \frac{(z_{1-\alpha/2} + z_{1-\beta})^2\,
              \big(\omega^2 + \sigma_A^2/K_A + \sigma_B^2/K_B\big)}{\delta^2},
    \qquad
    \delta_{\min}(n) = (z_{1-\alpha/2} + z_{1-\beta})
              \sqrt{\frac{\omega^2 + \sigma_A^2/K_A + \sigma_B^2/K_B}{n}}

where :math:`\omega^2 = \mathrm{Var}_j(p^A_j - p^B_j)` is the between-problem variance of the
paired difference of the per-problem success probabilities and
:math:`\sigma^2 = E_j[\mathrm{Var}(\text{score} \mid j)]` the mean within-problem variance of a
single sample's score (for 0/1 outcomes :math:`E_j[p_j(1-p_j)]`). Resampling more samples per
problem (larger K) shrinks only the within-problem part; the between-problem part needs more
problems.

The design effect of n samples per problem, :math:`1 + (n-1)\rho`, is the factor by which the
variance of a mean over N*n samples exceeds that of N*n independent samples, with
:math:`\rho = \mathrm{Var}(p_j) / (\bar p(1-\bar p))` the intraclass correlation of the samples
of one problem (ICC(1), estimated by one-way ANOVA [2]_).

References
----------
.. [1] E. Miller, "Adding Error Bars to Evals: A Statistical Approach to Language Model
   Evaluations", arXiv:2411.00640 (2024), section 5 (power analysis).
.. [2] P. E. Shrout and J. L. Fleiss, "Intraclass Correlations: Uses in Assessing Rater
   Reliability", Psychological Bulletin 86(2), 420-428 (1979), ICC(1,1); K. O. McGraw and
   S. P. Wong, Psychological Methods 1(1), 30-46 (1996).
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from ._result import PowerInputs
from ._warnings import DegenerateIntervalWarning
from ._validation import check_counts, describe_offenders

__all__ = [
    "design_effect",
    "icc",
    "minimum_detectable_effect",
    "power_inputs_from_pilot",
    "required_problems",
]


#: The most problems :func:`required_problems` answers with: 2**53 - 1, the largest integer a
#: float64 holds exactly (no benchmark comes near it; past it the answer is float noise).
_MAX_PROBLEMS = 2**53 - 1


def _real_iv(value: Any, name: str, *, low: float | None = None, high: float | None = None,
             low_open: bool = False, high_open: bool = False) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"`{name}` must be a real number; got {value!r}.")
    try:
        x = float(value)
    except OverflowError:  # an int past 1.8e308
        raise ValueError(f"`{name}` must be finite; got an integer of {len(str(value))} digits.") from None
    if not math.isfinite(x):
        raise ValueError(f"`{name}` must be finite; got {value!r}.")
    if low is not None and (x < low or (low_open and x == low)):
        raise ValueError(f"`{name}` must be {'>' if low_open else '>='} {low}; got {value!r}.")
    if high is not None and (x > high or (high_open and x == high)):
        raise ValueError(f"`{name}` must be {'<' if high_open else '<='} {high}; got {value!r}.")
    return x


def _z_sum(confidence_level: float, power: float) -> float:
    """:math:`z_{1-\\alpha/2} + z_{1-\\beta}` with :math:`1 - \\alpha` the confidence level."""
    level = _real_iv(confidence_level, "confidence_level", low=0.0, high=1.0, low_open=True, high_open=True)
    beta_power = _real_iv(power, "power", low=0.0, high=1.0, low_open=True, high_open=True)
    # (1 + level) / 2 is the double 1 - alpha / 2 was for the usual levels (0.9, 0.95, 0.99, ...)
    return float(special.ndtri((1.0 + level) / 2.0) + special.ndtri(beta_power))


def _variance_of_difference(between_variance, within_variance_a, within_variance_b,
                            samples_per_problem_a, samples_per_problem_b) -> float:
    omega2 = _real_iv(between_variance, "between_variance", low=0.0)
    s2a = _real_iv(within_variance_a, "within_variance_a", low=0.0)
    s2b = _real_iv(within_variance_b, "within_variance_b", low=0.0)
    ka = _real_iv(samples_per_problem_a, "samples_per_problem_a", low=0.0, low_open=True)
    kb = _real_iv(samples_per_problem_b, "samples_per_problem_b", low=0.0, low_open=True)
    total = omega2 + s2a / ka + s2b / kb
    if not math.isfinite(total):
        raise ValueError(f"the variance of the per-problem difference overflows ({omega2!r} + {s2a!r}/{ka!r} + "
                         f"{s2b!r}/{kb!r}); check `between_variance`, `within_variance_a/b` and "
                         "`samples_per_problem_a/b` (variances of 0/1 outcomes are at most 1).")
    if total == 0:
        raise ValueError(
            "the variance of the per-problem difference is 0 (between_variance = 0 and both "
            "within variances 0): any difference is detected with one problem; check the inputs."
        )
    return total


def required_problems(
    minimum_effect: float,
    *,
    between_variance: float,
    within_variance_a: float = 0.0,
    within_variance_b: float = 0.0,
    samples_per_problem_a: float = 1.0,
    samples_per_problem_b: float = 1.0,
    confidence_level: float = 0.95,
    power: float = 0.8,
) -> int:
    r"""Problems needed to detect a paired difference ``minimum_effect`` (Miller 2024).

    .. math::

        n = \left\lceil \frac{(z_{1-\alpha/2} + z_{1-\beta})^2
            (\omega^2 + \sigma_A^2/K_A + \sigma_B^2/K_B)}{\delta^2} \right\rceil

    Parameters
    ----------
    minimum_effect : float
        :math:`\delta`, the smallest difference in mean score worth detecting (non-zero; its
        sign is ignored).
    between_variance : float
        :math:`\omega^2`, between-problem variance of the paired difference of per-problem
        success probabilities (>= 0).
    within_variance_a, within_variance_b : float, default: 0.0
        :math:`\sigma_A^2, \sigma_B^2`, mean within-problem variance of one sample's score.
    samples_per_problem_a, samples_per_problem_b : float, default: 1.0
        :math:`K_A, K_B`, samples drawn per problem for each model (> 0).
    confidence_level : float, default: 0.95
        :math:`1 - \alpha`, with :math:`\alpha` the two-sided significance level (0.95 tests at
        :math:`\alpha = 0.05`), as ``confidence_level`` everywhere in kpass.
    power : float, default: 0.8
        :math:`1 - \beta`.

    Returns
    -------
    int
        The number of problems (rounded up).

    Raises
    ------
    ValueError
        ``minimum_effect`` of 0, negative variances, non-positive K, ``confidence_level`` or
        ``power`` outside (0, 1), or a total variance of 0.

    See Also
    --------
    power_inputs_from_pilot : estimates the variances and K from a pilot comparison.

    References
    ----------
    .. [1] E. Miller, arXiv:2411.00640 (2024), section 5.

    Examples
    --------
    >>> from kpass.metrics import required_problems
    >>> required_problems(0.03, between_variance=0.02, within_variance_a=0.2,
    ...                   within_variance_b=0.2, samples_per_problem_a=4, samples_per_problem_b=4)
    1047
    >>> required_problems(0.03, between_variance=0.02)   # K -> infinity: only omega^2 is left
    175
    """
    delta = _real_iv(minimum_effect, "minimum_effect")
    if delta == 0:
        raise ValueError("`minimum_effect` must be non-zero; got 0.")
    variance = _variance_of_difference(between_variance, within_variance_a, within_variance_b,
                                       samples_per_problem_a, samples_per_problem_b)
    z = _z_sum(confidence_level, power)
    n = z * z * variance / (delta * delta) if abs(delta) > 1e-150 else math.inf  # delta**2 underflows below
    if not n <= _MAX_PROBLEMS:
        raise ValueError(f"`minimum_effect` {minimum_effect!r} is too small to plan for: it needs more than "
                         f"{_MAX_PROBLEMS:.0e} problems (z^2 * variance / effect^2 = {n:.3g}).")
    return int(math.ceil(n - 1e-9 * n))  # tolerate float noise just above an integer


def minimum_detectable_effect(
    n_problems: float,
    *,
    between_variance: float,
    within_variance_a: float = 0.0,
    within_variance_b: float = 0.0,
    samples_per_problem_a: float = 1.0,
    samples_per_problem_b: float = 1.0,
    confidence_level: float = 0.95,
    power: float = 0.8,
) -> float:
    r"""Smallest paired difference a benchmark of ``n_problems`` detects (Miller 2024).

    .. math::

        \delta_{\min} = (z_{1-\alpha/2} + z_{1-\beta})
        \sqrt{\frac{\omega^2 + \sigma_A^2/K_A + \sigma_B^2/K_B}{n}}

    Parameters
    ----------
    n_problems : float
        Number of problems n (> 0).
    between_variance, within_variance_a, within_variance_b, samples_per_problem_a, \
samples_per_problem_b, confidence_level, power
        As in :func:`required_problems`.

    Returns
    -------
    float
        :math:`\delta_{\min}` in units of the mean score.

    Examples
    --------
    >>> from kpass.metrics import minimum_detectable_effect
    >>> round(minimum_detectable_effect(500, between_variance=0.02, within_variance_a=0.2,
    ...                                 within_variance_b=0.2, samples_per_problem_a=4,
    ...                                 samples_per_problem_b=4), 4)
    0.0434
    """
    n = _real_iv(n_problems, "n_problems", low=0.0, low_open=True)
    variance = _variance_of_difference(between_variance, within_variance_a, within_variance_b,
                                       samples_per_problem_a, samples_per_problem_b)
    return float(_z_sum(confidence_level, power) * math.sqrt(variance / n))


def design_effect(samples_per_problem: ArrayLike, intraclass_correlation: ArrayLike) -> NDArray[np.float64] | float:
    r"""Design effect of ``m`` correlated samples per problem: :math:`1 + (m - 1)\rho`.

    The variance of a mean over N problems x m samples is this factor times the variance of a
    mean over N*m independent samples; N*m / design effect is the effective sample size.

    Parameters
    ----------
    samples_per_problem : array_like of float
        m >= 1 (the mean cluster size when it varies).
    intraclass_correlation : array_like of float
        :math:`\rho` in [-1/(m-1), 1], e.g. from :func:`icc`; broadcasts with m.

    Returns
    -------
    float or ndarray of float
        The design effect (a float for scalar input).

    References
    ----------
    .. [1] L. Kish, "Survey Sampling", Wiley (1965), section 5.4.

    Examples
    --------
    >>> from kpass.metrics import design_effect
    >>> float(design_effect(16, 0.5))
    8.5
    """
    m = np.asarray(samples_per_problem, dtype=np.float64)
    rho = np.asarray(intraclass_correlation, dtype=np.float64)
    if not np.isfinite(m).all() or (m < 1).any():
        raise ValueError(f"`samples_per_problem` must be finite and >= 1; got {samples_per_problem!r}.")
    if not np.isfinite(rho).all() or (rho > 1).any():
        raise ValueError(f"`intraclass_correlation` must be finite and <= 1; got {intraclass_correlation!r}.")
    result = 1.0 + (m - 1.0) * rho
    if (result < 0).any():
        raise ValueError(
            f"1 + (m - 1) * rho is negative for samples_per_problem={samples_per_problem!r}, "
            f"intraclass_correlation={intraclass_correlation!r}: rho must be >= -1/(m - 1)."
        )
    return float(result) if result.ndim == 0 else result


def icc(
    values: ArrayLike | None = None,
    *,
    groups: ArrayLike | None = None,
    n_samples: ArrayLike | None = None,
    n_correct: ArrayLike | None = None,
) -> float:
    r"""ICC(1): intraclass correlation of the samples of one problem, by one-way ANOVA.

    .. math::

        \hat\rho = \frac{MS_B - MS_W}{MS_B + (k_0 - 1) MS_W}, \qquad
        k_0 = \frac{1}{g - 1}\Big(M - \frac{\sum_j m_j^2}{M}\Big)

    with g problems, :math:`m_j` samples of problem j, :math:`M = \sum m_j`, and the between-
    and within-problem mean squares :math:`MS_B, MS_W` (:math:`k_0 = m` when balanced).
    For 0/1 outcomes it estimates :math:`\mathrm{Var}(p_j) / (\bar p(1 - \bar p))`.

    Give exactly one of: ``values`` as an ``(N, m)`` matrix (one row per problem, balanced),
    ``values`` with ``groups`` (long format, one label per sample), or the counts
    ``n_samples`` and ``n_correct`` of 0/1 outcomes per problem (ragged allowed).

    Parameters
    ----------
    values : array_like of float, shape (N, m) or (M,), optional
        Per-sample scores.
    groups : array_like, shape (M,), optional
        Problem label of each sample, with 1-D ``values``.
    n_samples, n_correct : array_like of int, shape (N,), optional
        Counts of 0/1 outcomes per problem (keyword-only).

    Returns
    -------
    float
        :math:`\hat\rho`; can be negative (down to :math:`-1/(k_0 - 1)`) by sampling noise.

    Raises
    ------
    ValueError
        Fewer than 2 problems, no problem with 2 or more samples, NaN, mismatched lengths, or
        not exactly one input form.

    Warns
    -----
    DegenerateIntervalWarning
        Every score is identical (ICC undefined; NaN is returned).

    References
    ----------
    .. [1] Shrout and Fleiss (1979), ICC(1,1); McGraw and Wong (1996), Case 1.

    Examples
    --------
    >>> from kpass.metrics import icc
    >>> round(icc([[1, 1, 1, 1], [0, 0, 0, 1], [1, 0, 1, 1], [0, 0, 0, 0]]), 4)
    0.5862
    >>> round(icc(n_samples=[4, 4, 4, 4], n_correct=[4, 1, 3, 0]), 4)
    0.5862
    """
    given_values = values is not None
    given_counts = n_samples is not None or n_correct is not None
    if given_values == given_counts:
        raise ValueError("give either `values` (with `groups` for 1-D values) or both `n_samples` and `n_correct`.")
    if given_counts:
        if n_samples is None or n_correct is None:
            raise ValueError("give both `n_samples` and `n_correct`.")
        if groups is not None:
            raise ValueError("`groups` goes with 1-D `values`, not with counts.")
        n, c, _ = check_counts(n_samples, n_correct)
        sizes = n.astype(np.float64)
        sums = c.astype(np.float64)
        sums_of_squares = sums  # 0/1 outcomes: x^2 = x
    else:
        arr = np.asarray(values, dtype=np.float64)
        if not np.isfinite(arr).all():
            raise ValueError(f"`values` must be finite; NaN or infinity at {describe_offenders(~np.isfinite(arr))}.")
        if groups is None:
            if arr.ndim != 2:
                raise ValueError(f"`values` must be an (N, m) matrix, or 1-D with `groups`; got shape {arr.shape}.")
            sizes = np.full(arr.shape[0], float(arr.shape[1]))
            sums = arr.sum(axis=1)
            sums_of_squares = (arr * arr).sum(axis=1)
        else:
            from ._validation import factorize_labels

            if arr.ndim != 1:
                raise ValueError(f"`values` must be 1-D with `groups`; got shape {arr.shape}.")
            codes, labels = factorize_labels(groups, "groups", arr.shape[0])
            sizes = np.bincount(codes, minlength=len(labels)).astype(np.float64)
            # weighted counts are float64 (numpy's stubs type every bincount as intp)
            sums = np.asarray(np.bincount(codes, weights=arr, minlength=len(labels)), dtype=np.float64)
            sums_of_squares = np.asarray(np.bincount(codes, weights=arr * arr, minlength=len(labels)), dtype=np.float64)
    keep = sizes > 0
    sizes, sums, sums_of_squares = sizes[keep], sums[keep], sums_of_squares[keep]
    g = sizes.size
    total = sizes.sum()
    if g < 2:
        raise ValueError(f"ICC needs at least 2 problems with samples; got {g}.")
    if total - g < 1:
        raise ValueError("ICC needs at least one problem with 2 or more samples (within-problem variance).")
    grand_mean = sums.sum() / total
    ss_between = float((sums * sums / sizes).sum() - total * grand_mean**2)
    ss_within = float(sums_of_squares.sum() - (sums * sums / sizes).sum())
    ss_between, ss_within = max(ss_between, 0.0), max(ss_within, 0.0)
    ms_between = ss_between / (g - 1)
    ms_within = ss_within / (total - g)
    k0 = (total - (sizes * sizes).sum() / total) / (g - 1)
    denominator = ms_between + (k0 - 1.0) * ms_within
    if denominator <= 0:
        warnings.warn("every score is identical: the intraclass correlation is undefined (NaN).",
                      DegenerateIntervalWarning, stacklevel=2)
        return math.nan
    return float((ms_between - ms_within) / denominator)


def _outcomes_to_counts(outcomes: Any, name: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    arr = np.asarray(outcomes)
    if arr.ndim != 2:
        raise ValueError(f"`{name}` must be an (N, K) matrix of per-sample 0/1 outcomes; got shape {arr.shape}.")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"`{name}` must hold 0/1 outcomes; got dtype {arr.dtype}.")
    arr = arr.astype(np.float64)
    bad = ~((arr == 0) | (arr == 1))
    if bad.any():
        raise ValueError(f"`{name}` must hold 0/1 outcomes; other values at {describe_offenders(bad, arr, value_name=name)}.")
    return arr.sum(axis=1), np.full(arr.shape[0], float(arr.shape[1]))


def power_inputs_from_pilot(
    outcomes_a: ArrayLike | None = None,
    outcomes_b: ArrayLike | None = None,
    *,
    n_samples_a: ArrayLike | None = None,
    n_correct_a: ArrayLike | None = None,
    n_samples_b: ArrayLike | None = None,
    n_correct_b: ArrayLike | None = None,
) -> PowerInputs:
    r"""Estimate the inputs of :func:`required_problems` from a pilot comparison of two models.

    From 0/1 outcomes of both models on the same N problems (``(N, K)`` matrices, or counts),
    with :math:`\hat p_j = c_j / n_j`:

    .. math::

        \hat\sigma^2 = \frac{1}{N}\sum_j \frac{c_j (n_j - c_j)}{n_j (n_j - 1)}, \qquad
        \hat\omega^2 = \max\Big(0,\ s^2_{\hat p^A - \hat p^B}
            - \frac{1}{N}\sum_j \frac{\hat\sigma^2_{A,j}}{n^A_j}
            - \frac{1}{N}\sum_j \frac{\hat\sigma^2_{B,j}}{n^B_j}\Big)

    :math:`\hat\sigma^2_j = c_j(n_j - c_j)/(n_j(n_j-1))` is the unbiased within-problem variance
    of one sample, so :math:`E[s^2_{\hat p^A - \hat p^B}] = \omega^2 + E[\sigma_A^2/n_A] +
    E[\sigma_B^2/n_B]` and the subtraction removes the sampling noise of the pilot's own
    per-problem means (Miller 2024, section 5; the two models' samples are independent given
    the problem).

    Samples per problem. The within-problem part of the variance of a mean over N problems is
    :math:`\frac{1}{N^2}\sum_j \sigma_j^2 / n_j`; when the number of samples does not depend on
    the problem's difficulty this is :math:`\frac{\sigma^2}{N}\cdot\frac{1}{N}\sum_j 1/n_j =
    \frac{\sigma^2}{N K}` with

    .. math:: K = \Big(\frac{1}{N}\sum_j \frac{1}{n_j}\Big)^{-1},

    the *harmonic* mean of the :math:`n_j`. That is the K reported (equal to n when every problem
    has n samples): with it the formula's variance at the pilot's own design equals the pilot's
    paired variance. The arithmetic mean is larger (by Jensen's inequality) and would understate
    the within-problem variance, hence the number of problems needed; it is kept in
    ``details["arithmetic_mean_samples_a"]`` / ``["arithmetic_mean_samples_b"]``.

    Parameters
    ----------
    outcomes_a, outcomes_b : array_like of 0/1, shape (N, K_A) and (N, K_B), optional
        Per-sample outcomes of the two models, rows = the same problems.
    n_samples_a, n_correct_a, n_samples_b, n_correct_b : array_like of int, shape (N,), optional
        The same as counts, samples first as everywhere in kpass (ragged ``n`` allowed); every
        ``n >= 2``. Keyword-only, so a call never depends on their order.

    Returns
    -------
    PowerInputs
        ``between_variance``, ``within_variance_a/_b``, ``samples_per_problem_a/_b`` (the
        harmonic mean of n, see above),
        ``n_problems``, ``mean_difference``; ``power_kwargs()`` feeds :func:`required_problems`.

    Raises
    ------
    ValueError
        Not exactly one input form, different numbers of problems, fewer than 2 problems, a
        problem with fewer than 2 samples (within variance undefined), non-0/1 outcomes.

    Warns
    -----
    DegenerateIntervalWarning
        The estimate of :math:`\omega^2` was negative and is truncated at 0.

    Examples
    --------
    >>> import numpy as np
    >>> from kpass.metrics import power_inputs_from_pilot, required_problems
    >>> rng = np.random.default_rng(0)
    >>> p = rng.beta(2, 2, size=200)
    >>> a = rng.random((200, 8)) < p[:, None]
    >>> p_b = np.clip(p + rng.normal(0.05, 0.2, size=200), 0, 1)   # omega^2 ~ 0.04
    >>> b = rng.random((200, 8)) < p_b[:, None]
    >>> inputs = power_inputs_from_pilot(a, b)
    >>> inputs.n_problems, inputs.samples_per_problem_a, inputs.between_variance > 0.01
    (200, 8.0, True)
    >>> required_problems(0.05, **inputs.power_kwargs()) > 0
    True
    """
    matrices = outcomes_a is not None or outcomes_b is not None
    counts = any(x is not None for x in (n_samples_a, n_correct_a, n_samples_b, n_correct_b))
    if matrices == counts:
        raise ValueError("give either `outcomes_a` and `outcomes_b`, or the four count arrays (n_samples_a, n_correct_a, n_samples_b, n_correct_b).")
    if matrices:
        if outcomes_a is None or outcomes_b is None:
            raise ValueError("give both `outcomes_a` and `outcomes_b`.")
        c_a, n_a = _outcomes_to_counts(outcomes_a, "outcomes_a")
        c_b, n_b = _outcomes_to_counts(outcomes_b, "outcomes_b")
    else:
        if any(x is None for x in (n_samples_a, n_correct_a, n_samples_b, n_correct_b)):
            raise ValueError("give all four of n_samples_a, n_correct_a, n_samples_b, n_correct_b.")
        na, ca, _ = check_counts(n_samples_a, n_correct_a, correct_name="n_correct_a")
        nb, cb, _ = check_counts(n_samples_b, n_correct_b, correct_name="n_correct_b")
        c_a, n_a, c_b, n_b = ca.astype(float), na.astype(float), cb.astype(float), nb.astype(float)
    if c_a.shape != c_b.shape:
        raise ValueError(f"the two models must be on the same problems; got {c_a.shape[0]} and {c_b.shape[0]} problems.")
    n_problems = c_a.shape[0]
    if n_problems < 2:
        raise ValueError(f"a pilot needs at least 2 problems; got {n_problems}.")
    for name, n in (("a", n_a), ("b", n_b)):
        few = n < 2
        if few.any():
            raise ValueError(
                f"model {name.upper()} has fewer than 2 samples for {describe_offenders(few, n, value_name='n_samples')}; "
                "the within-problem variance needs at least 2 samples per problem."
            )
    within_a_j = c_a * (n_a - c_a) / (n_a * (n_a - 1.0))
    within_b_j = c_b * (n_b - c_b) / (n_b * (n_b - 1.0))
    difference = c_a / n_a - c_b / n_b
    raw_between = float(difference.var(ddof=1) - (within_a_j / n_a).mean() - (within_b_j / n_b).mean())
    truncated = raw_between < 0
    if truncated:
        warnings.warn(
            f"the pilot's between-problem variance estimate is negative ({raw_between:.3g}) and is set to 0; "
            "the pilot is too small or the models differ by sampling noise only.",
            DegenerateIntervalWarning,
            stacklevel=2,
        )
    return PowerInputs(
        between_variance=max(raw_between, 0.0),
        within_variance_a=float(within_a_j.mean()),
        within_variance_b=float(within_b_j.mean()),
        samples_per_problem_a=_harmonic_mean(n_a),
        samples_per_problem_b=_harmonic_mean(n_b),
        n_problems=int(n_problems),
        mean_difference=float(difference.mean()),
        details={"raw_between_variance": raw_between, "truncated": truncated,
                 "arithmetic_mean_samples_a": float(n_a.mean()), "arithmetic_mean_samples_b": float(n_b.mean())},
    )


def _harmonic_mean(n: NDArray[np.float64]) -> float:
    """``N / sum(1/n_j)``, exactly ``n`` when every entry is ``n``."""
    if (n == n[0]).all():
        return float(n[0])
    return float(n.size / (1.0 / n).sum())
