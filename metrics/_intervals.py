r"""Confidence intervals for benchmark means, with the problem (or cluster) as the unit.

A benchmark score is the unweighted mean of per-problem values :math:`v_j` (pass@k, G-Pass@k,
cons@k, ... of problem :math:`j`). The samples of one problem are correlated, so the unit of
resampling and of the standard error is the problem, or a whole cluster of problems (passages,
subjects, templates) when ``clusters`` is given (Miller 2024 [1]_; docs/spec.md section 7).

Methods (``method=``)
---------------------
``"studentized"`` (default)
    Studentized (bootstrap-t) interval [3]_: resample problems (or clusters), compute
    :math:`t^* = (\hat\theta^* - \hat\theta) / \widehat{SE}^*` with the analytic standard error of
    each resample (the t standard error, or the clustered one), and invert the bootstrap
    distribution of :math:`t^*`:
    :math:`[\hat\theta - t^*_{1-\alpha/2}\,\widehat{SE},\ \hat\theta - t^*_{\alpha/2}\,\widehat{SE}]`.
    Chosen by the coverage study (``tests/coverage_study.py``, README "Intervals"): it corrects
    for the skewness of per-problem pass@k values piled up near 1, where the t interval and the
    percentile bootstrap cover about 83% at N = 30. A tail of :math:`t^*` can be degenerate; it
    is then replaced as described under "Degenerate bootstrap-t tails" below.

    *Values in a known range* (every value in [0, 1], the case of every kpass metric, or in an
    explicit ``bounds=(lo, hi)``) are studentized on the variance-stabilizing scale of a
    proportion (Efron & Tibshirani [3]_, section 12.6), :math:`g(\theta) = \arcsin\sqrt{p}` with
    :math:`p = (\theta - lo)/(hi - lo)` and the delta-method standard error
    :math:`g'(\hat\theta)\widehat{SE}`, :math:`g'(p) = 1/(2\sqrt{p(1-p)})`:

    .. math:: t^* = \frac{g(\hat\theta^*) - g(\hat\theta)}{g'(\hat\theta^*)\,\widehat{SE}^*}, \qquad
              [\,g^{-1}(g(\hat\theta) - t^*_{1-\alpha/2}\,g'(\hat\theta)\widehat{SE}),\
              g^{-1}(g(\hat\theta) - t^*_{\alpha/2}\,g'(\hat\theta)\widehat{SE})\,]

    so the interval stays inside the range without clipping. On the raw scale the standard error
    of near-0/1 values is a function of their mean (at most :math:`\sqrt{p(1-p)/N}`), so
    :math:`t^*` of a resample with more values at the near end is large only because its
    standard error shrinks; the raw bootstrap-t then over-covers (98.2% for pass@8 under a
    U-shaped difficulty prior at N = 30 and n = 64, 98.0% for binary values at N = 30) while the
    arcsine pivot does not depend on the mean (96.8-97.4% there, 93.9-95.1% in the hard
    Beta(2, 2) pass@8 cells at N = 30, 93.9-97.4% in every single-model cell with N >= 30). *0/1 values* (every value
    at an end of the range, e.g. pass@1 from one sample per problem) get the score interval of
    "Degenerate bootstrap-t tails" below on both sides, which for 0/1 values without clusters is
    Wilson's with N - 1 trials reduced for the t degrees of freedom (with clusters, the
    design-effect size :math:`\hat p(1-\hat p)/\widehat{SE}_{cl}^2`): their bootstrap
    distribution has only N + 1 atoms, and a quantile of it covers 95.7% or 98.6% by the luck
    of where the atoms fall (Brown, Cai & DasGupta [10]_ recommend Wilson's interval for a
    proportion). ``details["scale"]`` says which of "arcsine", "identity" (values without a
    known range: the raw bootstrap-t) or "score (0/1 values)" applied.
``"mover"`` (default of :func:`paired_difference`; paired differences only)
    The MOVER combination (Zou & Donner [7]_; Newcombe [8]_ for paired proportions) of the two
    models' limits :math:`[l_a, u_a]`, :math:`[l_b, u_b]` from their studentized pivots,
    computed from the same resamples, with the correlation :math:`r` of the two means:

    .. math:: L = \hat d - \sqrt{(\hat\theta_a - l_a)^2 + (u_b - \hat\theta_b)^2
              - 2r(\hat\theta_a - l_a)(u_b - \hat\theta_b)}, \quad
              U = \hat d + \sqrt{(u_a - \hat\theta_a)^2 + (\hat\theta_b - l_b)^2
              - 2r(u_a - \hat\theta_a)(\hat\theta_b - l_b)}

    with :math:`r = (SE_a^2 + SE_b^2 - SE_d^2)/(2\,SE_a SE_b)` from the same (t or clustered)
    standard errors, so that near the estimate the MOVER variance is the paired
    :math:`SE_d^2`. A model's limits are :math:`\hat\theta - t^*_{1-\alpha/2}\widehat{SE}` and
    :math:`\hat\theta - t^*_{\alpha/2}\widehat{SE}` with the quantiles of its (arcsine-scale, for
    values in [0, 1]) pivot, on the raw scale: not the interval mapped back through the arcsine,
    whose curvature is the model's own mean-variance relation, which the difference of two paired
    models does not share (its variance depends on where the two disagree); with it MOVER covered
    98.2% for U-shaped pass@8 at N = 30 in the full study (98.4-98.9% averaged over three more
    seeds). 0/1 values take their Wilson interval (Newcombe's
    method), and the degenerate-tail fallback applies per model as in ``"studentized"``. Each
    model's limits carry that model's skewness (a strong model's pass@8 piles up at 1 and its few
    failures decide the difference), which a bootstrap of the differences
    :math:`d_j = a_j - b_j` alone misses: in the coverage study the studentized bootstrap of
    :math:`d_j` covers 89.9-92.7% for paired pass@8 at N = 30 (and 92.5% at N = 100 when one
    model is near 1), MOVER 94.1-97.2% in every paired cell of independent problems with
    N >= 30 (93.9-96.0% with C >= 30 clusters). For two almost
    identical models its width does not shrink below the asymmetry of the per-model limits. The
    p-value inverts the interval in its level.
``"t"``
    :math:`\hat\theta \pm t_{N-1,\,1-\alpha/2}\, s/\sqrt{N}` with :math:`s` the standard deviation
    (``ddof=1``) of the per-problem values; what ``inspect_ai.scorer.ci(method="t")`` computes.
``"clustered-t"``
    :math:`\hat\theta \pm t_{C-1,\,1-\alpha/2}\,\widehat{SE}_{cl}` with Inspect's clustered
    standard error (Cameron & Miller [2]_ with the finite-cluster factor :math:`C/(C-1)`):

    .. math:: \widehat{SE}_{cl} = \frac{1}{N}\sqrt{\frac{C}{C-1}\sum_{c=1}^{C}
              \Big(\sum_{j \in c} (v_j - \bar v)\Big)^2}

``"bootstrap"``
    Percentile bootstrap: the :math:`\alpha/2` and :math:`1-\alpha/2` quantiles of the
    resampled means.
``"bca"``
    Bias-corrected and accelerated percentile bootstrap (Efron 1987 [4]_), with the bias
    correction :math:`z_0 = \Phi^{-1}(\#\{\hat\theta^* < \hat\theta\}/B)` (ties count one half)
    and the acceleration from the jackknife over problems (or clusters), computed in closed form.

Every bootstrap method resamples problems with replacement or, with clusters, whole clusters
carrying all their problems (the resampled mean is then the pooled mean of the drawn problems).
Resampling is vectorized: a resample is a vector of multiplicities, and its statistics are sums
of multiplicities times per-unit summaries (matrix products over chunks of bounded memory), never
a Python loop per resample. When the per-problem values take few distinct rows (every
pass@k-family value is a function of the counts ``(n, c)`` only, so n = 16 samples give at most
17 distinct rows), resampling N problems equals drawing multinomial counts over the G distinct
rows, which costs B x G instead of B x N; identical clusters are grouped the same way.

The order of the problems does not matter: before drawing, the problems are put in a canonical
order (their values sorted; for :func:`paired_difference` both models' values, model a's first)
and clusters likewise (by size, then by their sums), so that at a fixed seed permuting the
problems, or the clusters, gives exactly the same interval for every method.
:func:`bootstrap_weights` does the same with ``order_by`` and hands the weights back in the
caller's order. Each column of an ``(N, K)`` input is resampled on its own in this way (from
the same seed; for ``"mover"`` the two models' columns together), so that a column's interval
does not depend on the other columns: ``mean_ci(values)[j]`` equals ``mean_ci(values[:, j])``
up to rounding, and a paired comparison of many pairs at once equals the comparisons one by one.

P-values
--------
:func:`paired_difference` reports the two-sided p-value of "no difference" that the interval it
shows implies: one minus the largest confidence level whose interval (of the same method, data,
resamples and fallbacks) excludes 0, found by bisection, so that ``p < 1 - level`` exactly when the
interval at ``level`` excludes 0. For ``"t"`` and ``"clustered-t"`` that is the t test in closed
form.

Degenerate bootstrap-t tails
----------------------------
When per-problem values pile up at one value (pass@8 mostly 1, budget curves mostly 0), many
resamples contain no problem off the pile: their standard error is 0 (or nearly so), their
:math:`t^*` is infinite (or huge), and if they are more than :math:`\alpha/2` of the resamples
on one side the bootstrap-t bound on that side is infinite (37 of 40 pass@8 values at 1: 4% of
the resamples have no other value). A resample is *degenerate* when its standard error is below one
unit's worth of the observed one, :math:`\widehat{SE}^* \sqrt{U} \le \widehat{SE}` (U problems
or clusters), i.e. when a prior of one pseudo-problem with the observed variance would outweigh
the resample's own variance. When more than :math:`\alpha/2` of the resamples are degenerate on
the side that sets a bound, the bootstrap-t distribution says nothing about that bound, and:

- that bound comes from a **score interval** (Wilson [5]_) for the mean of values in [0, 1]
  (or in an explicit ``bounds=(lo, hi)`` range that holds every value) with the Bernoulli
  worst-case effective sample size

  .. math:: n_{\mathrm{eff}} = \min\Big(\frac{\hat p(1-\hat p)}{\widehat{SE}^2},\ n_B\Big),
            \qquad n^* = n_{\mathrm{eff}}\,\big(z_{1-\alpha/2} / t_{df,\,1-\alpha/2}\big)^2

  where :math:`n_B = N` (:math:`N^2/\sum_c N_c^2` with clusters) is the effective size if every
  value were 0 or 1. A variable in [0, 1] with mean :math:`p` has variance at most
  :math:`p(1-p)` and its sums are dominated in convex order by Bernoulli sums (Hoeffding [9]_),
  so the 0/1 case is the worst case; it is the right one here, because a degenerate bootstrap
  means that the observed spread rests on a handful of problems and cannot be trusted. The
  reduction of :math:`n_{\mathrm{eff}}` for the degrees of freedom (N - 1, or C - 1) is Korn &
  Graubard's [6]_. 0/1 values take this score interval on both sides without any bootstrap
  (see ``"studentized"``), with the design-effect size :math:`\min(\hat p(1-\hat p)/\widehat{SE}^2, N)`
  since their variance is the Bernoulli one: 39 of 40 at 1 gives [0.864, 0.996]
  (Clopper-Pearson [0.868, 0.999], Wilson [0.871, 0.996]), where the raw bootstrap-t bound was
  infinite;
- the other bound is the wider of the bootstrap-t and the score bound;
- values without a known range use the t (or clustered-t) bounds instead, and
  :func:`paired_difference` with ``method="studentized"`` uses the MOVER combination of the two
  models' score intervals;
- an :class:`~kpass.metrics.IntervalMethodWarning` says so, ``details["bound_methods"]``
  names the method of each bound, ``details["degenerate_tail"]`` and
  ``details["degenerate_share"]`` say which tail was degenerate and how many resamples were;
  the p-value of :func:`paired_difference` inverts the interval with its fallback bounds, so
  that it agrees with the interval shown (see "P-values").

With fewer than 10 clusters (:data:`FEW_CLUSTERS`) every cluster-robust interval is unreliable
(Cameron & Miller [2]_, section VI: the clustered SE and the cluster bootstrap are too narrow);
:func:`mean_ci` and :func:`paired_difference` then warn (``IntervalMethodWarning``) whatever the
method. The default studentized interval stays finite there (its resamples are then mostly
degenerate and its bounds come from the score interval with C - 1 degrees of freedom; at
C = 10 the coverage study has it at 94.5-96.7% where ``"clustered-t"`` covers 80.7-94.0%, and
below 10 clusters the score bounds are wider still).

Bounds
------
With ``bounds="auto"`` (default), an interval on values that all lie in [0, 1] is cut back to
[0, 1] (every kpass metric is a probability); for :func:`paired_difference` on values in [0, 1]
the range is [-1, 1]. ``details["clipped"]`` says whether that changed the interval. Clipping
can only move a bound towards the parameter's possible range, so it never lowers coverage.
Pass ``bounds=None`` to never clip, or ``(low, high)`` for another range.

References
----------
.. [1] E. Miller, "Adding Error Bars to Evals: A Statistical Approach to Language Model
   Evaluations", arXiv:2411.00640 (2024).
.. [2] A. C. Cameron and D. L. Miller, "A Practitioner's Guide to Cluster-Robust Inference",
   Journal of Human Resources 50(2), 317-372 (2015).
.. [3] B. Efron and R. J. Tibshirani, "An Introduction to the Bootstrap", Chapman & Hall (1993),
   ch. 12 (bootstrap-t) and ch. 14.
.. [4] B. Efron, "Better Bootstrap Confidence Intervals", Journal of the American Statistical
   Association 82(397), 171-185 (1987).
.. [5] E. B. Wilson, "Probable Inference, the Law of Succession, and Statistical Inference",
   Journal of the American Statistical Association 22(158), 209-212 (1927).
.. [6] E. L. Korn and B. I. Graubard, "Confidence Intervals for Proportions with Small Expected
   Number of Positive Counts Estimated from Survey Data", Survey Methodology 24(2), 193-201
   (1998).
.. [7] G. Y. Zou and A. Donner, "Construction of confidence limits about effect measures: A
   general approach", Statistics in Medicine 27(10), 1693-1702 (2008).
.. [8] R. G. Newcombe, "Improved confidence intervals for the difference between binomial
   proportions based on paired data", Statistics in Medicine 17(22), 2635-2650 (1998).
.. [9] W. Hoeffding, "Probability Inequalities for Sums of Bounded Random Variables", Journal
   of the American Statistical Association 58(301), 13-30 (1963).
.. [10] L. D. Brown, T. T. Cai and A. DasGupta, "Interval Estimation for a Binomial Proportion",
   Statistical Science 16(2), 101-133 (2001).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special, stats

from ._result import IntervalResult, PairedResult
from ._validation import MAX_REPORTED, check_counts, check_option, describe_offenders
from ._warnings import DegenerateIntervalWarning, IntervalMethodWarning

__all__ = [
    "DEFAULT_INTERVAL_METHOD",
    "DEFAULT_N_RESAMPLES",
    "DEFAULT_PAIRED_METHOD",
    "INTERVAL_METHODS",
    "PAIRED_INTERVAL_METHODS",
    "bootstrap_weights",
    "mean_ci",
    "paired_difference",
    "wilson_interval",
]

#: Interval methods understood by :func:`mean_ci` and :func:`paired_difference`.
INTERVAL_METHODS: tuple[str, ...] = ("studentized", "t", "clustered-t", "bootstrap", "bca")

#: The default method, chosen by the coverage study (tests/coverage_study.py; README "Intervals").
DEFAULT_INTERVAL_METHOD = "studentized"

#: Methods of :func:`paired_difference`: those of :func:`mean_ci` and "mover" (two models' intervals combined).
PAIRED_INTERVAL_METHODS: tuple[str, ...] = (*INTERVAL_METHODS, "mover")

#: The default method of :func:`paired_difference`, chosen by the coverage study.
DEFAULT_PAIRED_METHOD = "mover"

#: Bootstrap resamples of every kpass interval unless the caller asks for another number
#: (:func:`mean_ci`, :func:`paired_difference`, the token-budget curves and the decomposition).
DEFAULT_N_RESAMPLES = 10_000

#: Relative tolerance under which a bootstrap replicate counts as tied with the estimate (BCa bias
#: correction) or a resample's sum of squares as 0: rounding noise, not a difference.
_TIE_TOLERANCE = 1e-12

#: Default bound on the elements of one chunk of resampling weights (8 M float64 = 64 MiB).
DEFAULT_MAX_CHUNK_ELEMENTS = 1 << 23

#: Use multinomial counts over distinct rows when there are at most this fraction of them (numpy
#: draws a multinomial row of G cells in about the time of gathering 20 G units, measured).
_GROUPED_FRACTION = 0.05

#: Gather columns one at a time (np.take) up to this many summary columns; matrix products above.
_MAX_GATHER_COLUMNS = 4

#: Chunk size of the gather path: small chunks stay in cache and are faster than large ones.
_GATHER_CHUNK_ELEMENTS = 1 << 17


# ----------------------------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------------------------


def _confidence_iv(confidence_level: Any) -> float:
    if isinstance(confidence_level, (bool, np.bool_)) or not isinstance(confidence_level, numbers.Real):
        raise TypeError(f"`confidence_level` must be a number in (0, 1); got {confidence_level!r}.")
    level = float(confidence_level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"`confidence_level` must be in the open interval (0, 1); got {confidence_level!r}.")
    return level


def _values_iv(values: Any, name: str) -> tuple[NDArray[np.float64], bool]:
    """Per-problem values as a float64 ``(N, K)`` array and whether the input was 1-D."""
    if isinstance(values, (str, bytes)):
        raise TypeError(f"`{name}` must be a numeric array of per-problem values; got the string {values!r}.")
    try:
        arr = np.asarray(values)
    except (ValueError, TypeError) as exc:
        raise TypeError(f"`{name}` must be a rectangular numeric array; got {type(values).__name__} ({exc}).") from None
    if arr.dtype.kind == "O":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"`{name}` must hold numbers; got non-numeric entries (dtype object).") from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"`{name}` must hold numbers; got dtype {arr.dtype}.")
    if arr.ndim not in (1, 2):
        raise ValueError(f"`{name}` must be 1-D (N,) or 2-D (N, K); got an array of shape {arr.shape}.")
    if arr.shape[0] == 0:
        raise ValueError(f"`{name}` is empty (shape {arr.shape}); at least 2 problems are needed.")
    if arr.ndim == 2 and arr.shape[1] == 0:
        raise ValueError(f"`{name}` has no columns (shape {arr.shape}).")
    arr = arr.astype(np.float64, copy=False)
    finite = np.isfinite(arr)
    if not finite.all():
        raise ValueError(f"`{name}` must be finite; NaN or infinity at {describe_offenders(~finite, arr, value_name=name)}.")
    one_d = arr.ndim == 1
    return np.ascontiguousarray(arr.reshape(arr.shape[0], -1)), one_d


def _factorize(labels: Any, name: str, n_expected: int | None) -> tuple[NDArray[np.int64], list[Any]]:
    """Integer codes (0..C-1, in order of first appearance) and the distinct labels."""
    if isinstance(labels, (str, bytes)):
        raise TypeError(f"`{name}` must be a sequence with one label per problem; got the string {labels!r}.")
    try:
        arr = np.asarray(labels)
    except (ValueError, TypeError) as exc:
        raise TypeError(f"`{name}` must be a 1-D sequence of labels; got {type(labels).__name__} ({exc}).") from None
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D (one label per problem); got shape {arr.shape}.")
    if n_expected is not None and arr.shape[0] != n_expected:
        raise ValueError(f"`{name}` has {arr.shape[0]} entries but there are {n_expected} problems; give one label per problem.")
    if arr.dtype.kind == "O":
        missing = np.array([v is None or (isinstance(v, float) and v != v) for v in arr.tolist()], dtype=bool)
    elif arr.dtype.kind == "f":
        missing = np.isnan(arr)
    else:
        missing = np.zeros(arr.shape, dtype=bool)
    if missing.any():
        raise ValueError(f"`{name}` has missing labels (None or NaN) at {describe_offenders(missing)}.")
    try:
        _, first, inverse = np.unique(arr, return_index=True, return_inverse=True)
    except TypeError:  # mixed label types: fall back to a dict (not a hot path)
        table: dict[Any, int] = {}
        codes_list = [table.setdefault(v, len(table)) for v in arr.tolist()]
        return np.asarray(codes_list, dtype=np.int64), list(table)
    # renumber in order of first appearance so that results do not depend on label sorting
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    codes = rank[inverse.reshape(-1)].astype(np.int64)
    distinct = arr[first[order]].tolist()
    return codes, distinct


def _rng_iv(rng: Any) -> tuple[np.random.Generator, Any]:
    """A Generator and what to record as ``details["seed"]``."""
    if rng is None:
        seed = int(np.random.SeedSequence().entropy)  # fresh entropy, recorded for reproducibility
        return np.random.default_rng(seed), seed
    if isinstance(rng, np.random.Generator):
        return rng, "generator"
    if isinstance(rng, (bool, np.bool_)):
        raise TypeError(f"`rng` must be None, an int seed or a numpy.random.Generator; got {rng!r}.")
    if isinstance(rng, (numbers.Integral, np.integer)):
        if int(rng) < 0:
            raise ValueError(f"`rng` seed must be a non-negative integer; got {rng!r}.")
        return np.random.default_rng(int(rng)), int(rng)
    if isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng), int(rng.entropy) if isinstance(rng.entropy, int) else "seed-sequence"
    raise TypeError(f"`rng` must be None, an int seed or a numpy.random.Generator; got {type(rng).__name__}.")


def _positive_int_iv(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"`{name}` must be an integer >= {minimum}; got {value!r}.")
    if int(value) < minimum:
        raise ValueError(f"`{name}` must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def _bounds_iv(bounds: Any, default: tuple[float, float] | None) -> tuple[float, float] | None:
    if bounds is None:
        return None
    if isinstance(bounds, str):
        if bounds != "auto":
            raise ValueError(f"`bounds` must be 'auto', None or a (low, high) pair; got {bounds!r}.")
        return default
    try:
        low, high = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise TypeError(f"`bounds` must be 'auto', None or a (low, high) pair of numbers; got {bounds!r}.") from None
    if not low < high:
        raise ValueError(f"`bounds` must satisfy low < high; got {bounds!r}.")
    return (low, high)


def _n_resamples_iv(value: Any, minimum: int = 2) -> int:
    """The number of bootstrap resamples: an integer >= 2 for an interval (a standard deviation
    and two tails need two replicates), >= 1 for a bare stream of weights."""
    return _positive_int_iv(value, "n_resamples", minimum)


def _max_chunk_iv(value: Any) -> int:
    return _positive_int_iv(value, "max_chunk_elements", 1)


def _resolve_seed(rng: Any) -> tuple[Any, Any]:
    """``rng`` to hand on to several bootstrap calls, and what to record as ``details["seed"]``.

    An int seed (or a SeedSequence) is handed on unchanged, so that every call starts the same
    stream exactly as ``mean_ci(..., rng=seed)`` does and each number equals what
    :func:`mean_ci` / :func:`paired_difference` give for it alone; a Generator is handed on (the
    calls consume it in turn); ``None`` draws fresh entropy once and hands on that seed, which is
    recorded so that the result can be reproduced.
    """
    if rng is None:
        seed = int(np.random.SeedSequence().entropy)
        return seed, seed
    _, recorded = _rng_iv(rng)
    return rng, recorded


def _method_iv(method: Any, clustered: bool, paired: bool = False) -> str:
    if not paired and method == "mover":
        raise ValueError(
            "`method` 'mover' combines the intervals of two models and is only for paired_difference; "
            f"mean_ci takes one of {list(INTERVAL_METHODS)}."
        )
    method = check_option(method, "method", PAIRED_INTERVAL_METHODS if paired else INTERVAL_METHODS)
    if method == "clustered-t" and not clustered:
        raise ValueError("`method` 'clustered-t' needs `clusters` (one label per problem); got clusters=None.")
    if method == "t" and clustered:
        raise ValueError(
            "`method` 't' ignores `clusters` and would understate the uncertainty; use "
            "method='clustered-t' (Inspect's clustered standard error) or drop `clusters`."
        )
    return method


@dataclass(frozen=True)
class _Design:
    """The checked options of one :func:`mean_ci` / :func:`paired_difference` call."""

    level: float
    codes: NDArray[np.int64] | None
    n_clusters: int | None
    method: str
    n_resamples: int
    max_chunk_elements: int


def _design_iv(
    n: int, clusters: Any, method: Any, confidence_level: Any, n_resamples: Any, max_chunk_elements: Any,
    *, paired: bool, too_few: str,
) -> _Design:
    """The validation shared by :func:`mean_ci` and :func:`paired_difference` (in this order:
    number of problems, confidence level, clusters, method, resamples, chunk size)."""
    if n < 2:
        raise ValueError(too_few)
    level = _confidence_iv(confidence_level)
    codes, n_clusters = None, None
    if clusters is not None:
        codes, labels = _factorize(clusters, "clusters", n)
        n_clusters = len(labels)
        if n_clusters < 2:
            raise ValueError(f"`clusters` has a single cluster ({labels[0]!r}); clustered intervals need at least 2 clusters.")
    method = _method_iv(method, clusters is not None, paired=paired)
    return _Design(level, codes, n_clusters, method, _n_resamples_iv(n_resamples), _max_chunk_iv(max_chunk_elements))


# ----------------------------------------------------------------------------------------------
# canonical order of the resampling units
# ----------------------------------------------------------------------------------------------


def _canonical_order(keys: NDArray[Any]) -> NDArray[np.intp]:
    """The stable permutation that sorts the rows of ``keys`` (shape ``(U, M)``) lexicographically.

    Every bootstrap in kpass draws for its units (problems, or clusters) in this order, so that a
    result depends on the *set* of problems and not on the order in which they were given:
    permuting problems (or clusters) permutes the rows of ``keys``, the sorted rows are the same,
    and rows that tie are identical, so which of them comes first changes nothing.
    """
    if keys.shape[0] < 2:
        return np.arange(keys.shape[0], dtype=np.intp)
    if keys.shape[1] == 1:
        return np.argsort(keys[:, 0], kind="stable")
    return np.lexsort(keys.T[::-1])  # np.lexsort sorts by its last key first


def _cluster_sums(rows: NDArray[np.float64], codes: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Column sums ``(C, M)`` and sizes ``(C,)`` of the rows of each cluster (code order).

    Within a cluster the rows are summed in their given order; callers pass rows in canonical
    order (:func:`_canonical_order`), so that a cluster's sums depend on its problems only.
    """
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    sums = np.add.reduceat(rows[order], starts, axis=0)
    sizes = np.diff(np.r_[starts, rows.shape[0]]).astype(np.float64)
    return sums, sizes


def _canonical_units(rows: NDArray[np.float64], codes: NDArray[np.int64] | None):
    """Per-unit sums, sizes and the canonical order of the units of canonically ordered ``rows``.

    Without clusters the units are the rows themselves (already in canonical order: the order is
    the identity). With clusters a unit is a cluster, keyed by its size and column sums, which
    is all a statistic of weighted sums can see of it.
    """
    if codes is None:
        return rows, None, np.arange(rows.shape[0], dtype=np.intp)
    sums, sizes = _cluster_sums(rows, codes)
    return sums, sizes, _canonical_order(np.column_stack([sizes, sums]))


# ----------------------------------------------------------------------------------------------
# resampling
# ----------------------------------------------------------------------------------------------


def _chunk_rows(n_resamples: int, n_units: int, max_chunk_elements: int) -> Iterator[int]:
    rows = max(1, max_chunk_elements // max(n_units, 1))
    done = 0
    while done < n_resamples:
        b = min(rows, n_resamples - done)
        yield b
        done += b


def _index_dtype(n_units: int) -> type:
    return np.int32 if n_units < 2**31 - 1 else np.int64


def _multiplicities(indices: NDArray[np.integer], n_units: int) -> NDArray[np.float64]:
    """Turn a (b, n_draws) matrix of drawn unit indices into (b, n_units) multiplicities."""
    b = indices.shape[0]
    offsets = (np.arange(b, dtype=np.int64) * n_units)[:, None]
    flat = np.bincount((indices + offsets).ravel(), minlength=b * n_units)
    return flat.reshape(b, n_units).astype(np.float64)


def bootstrap_weights(
    n_problems: int,
    *,
    clusters: ArrayLike | None = None,
    n_resamples: int,
    rng: int | np.random.Generator | None = None,
    max_chunk_elements: int = DEFAULT_MAX_CHUNK_ELEMENTS,
    order_by: ArrayLike | None = None,
) -> Iterator[NDArray[np.float64]]:
    r"""Bootstrap resampling weights: how often each problem appears in each resample.

    Yields ``(B_chunk, N)`` float matrices whose rows are resample multiplicities, with the
    same resampling scheme as :func:`mean_ci`: N problems drawn with replacement, or, with
    ``clusters``, C clusters drawn with replacement, each carrying all its problems (then every
    problem of a drawn cluster gets the cluster's multiplicity). Any vectorized statistic can be
    bootstrapped with it, e.g. a ratio of means:

    .. math:: \hat\theta^*_b = \frac{\sum_j w_{bj} x_j}{\sum_j w_{bj} y_j}

    Parameters
    ----------
    n_problems : int
        N, the number of problems (>= 2).
    clusters : array_like, shape (N,), optional
        Cluster label of each problem (at least 2 distinct labels).
    n_resamples : int
        B, the total number of resamples over all chunks (>= 1).
    rng : int, numpy.random.Generator or None
        Seed or generator; ``None`` draws fresh entropy.
    max_chunk_elements : int, default: 2**23
        Upper bound on ``B_chunk * N`` (memory of one chunk: 8 bytes per element).
    order_by : array_like of float, shape (N,) or (N, M), optional
        The per-problem values the statistic is computed from (every column it uses). The draws
        are then made for the problems (or clusters) in a canonical order, rows sorted
        lexicographically (clusters by size and column sums), and handed back in the caller's
        order, so that at a fixed seed the resampled statistic does not depend on the order of
        the problems (or clusters). Without it the draws follow the given order.

    Yields
    ------
    ndarray of float64, shape (B_chunk, N)
        Multiplicities, columns in the caller's problem order; each row sums to N without
        clusters, and to the number of problems in the drawn clusters with them.

    Notes
    -----
    The draws follow the same distribution as :func:`mean_ci`'s resampling but not the same
    random stream: :func:`mean_ci` draws multinomial counts over groups of identical problems
    when it can, which is much faster and distributionally identical.

    Examples
    --------
    >>> import numpy as np
    >>> from kpass.metrics import bootstrap_weights
    >>> x = np.array([1.0, 0.0, 1.0, 1.0]); y = np.array([2.0, 1.0, 2.0, 1.0])
    >>> ratios = np.concatenate([w @ x / (w @ y) for w in bootstrap_weights(4, n_resamples=1000, rng=0)])
    >>> ratios.shape
    (1000,)
    >>> chunk = next(bootstrap_weights(4, clusters=["a", "a", "b", "c"], n_resamples=3, rng=1))
    >>> bool((chunk[:, 0] == chunk[:, 1]).all())   # problems of one cluster move together
    True
    >>> xy = np.column_stack([x, y]); order = [2, 0, 3, 1]      # the same problems, reordered
    >>> w = next(bootstrap_weights(4, n_resamples=5, rng=0, order_by=xy))
    >>> v = next(bootstrap_weights(4, n_resamples=5, rng=0, order_by=xy[order]))
    >>> bool(np.array_equal(w @ x, v @ x[order]))
    True
    """
    n = _positive_int_iv(n_problems, "n_problems", 2)
    n_resamples = _n_resamples_iv(n_resamples, minimum=1)
    max_chunk_elements = _max_chunk_iv(max_chunk_elements)
    generator, _ = _rng_iv(rng)
    if clusters is not None:
        codes, labels = _factorize(clusters, "clusters", n)
        if len(labels) < 2:
            raise ValueError(f"`clusters` has a single cluster ({labels[0]!r}); a cluster bootstrap needs at least 2.")
    else:
        codes, labels = None, []
    position_of_unit = None
    if order_by is not None:
        keys, _ = _values_iv(order_by, "order_by")
        if keys.shape[0] != n:
            raise ValueError(f"`order_by` has {keys.shape[0]} rows but there are {n} problems; give one row per problem.")
        row_order = _canonical_order(keys)
        _, _, unit_order = _canonical_units(keys[row_order], None if codes is None else codes[row_order])
        if codes is None:
            unit_order = row_order[unit_order]
        position_of_unit = np.empty_like(unit_order)
        position_of_unit[unit_order] = np.arange(unit_order.size)
    return _weights_generator(n, codes, len(labels), n_resamples, generator, max_chunk_elements, position_of_unit)


def _weights_generator(n, codes, n_clusters, n_resamples, generator, max_chunk_elements, position_of_unit=None):
    """Multiplicities per problem; ``position_of_unit[u]`` is the draw position of unit ``u``."""
    units = n if codes is None else n_clusters
    dtype = _index_dtype(units)
    columns = None
    if position_of_unit is not None:
        columns = position_of_unit if codes is None else position_of_unit[codes]
    elif codes is not None:
        columns = codes
    for b in _chunk_rows(n_resamples, n, max_chunk_elements):
        drawn = generator.integers(0, units, size=(b, units), dtype=dtype)
        counts = _multiplicities(drawn, units)
        yield counts if columns is None else counts[:, columns]


class _Streams:
    """Where each independently resampled column group gets its random numbers.

    An int seed (a SeedSequence, or the entropy drawn once for ``rng=None``) gives every request
    a fresh ``default_rng(seed)``: a column of an ``(N, K)`` call then draws exactly what a call
    with that column alone draws, so its interval does not depend on the other columns (up to
    rounding). A Generator is handed out itself and consumed in turn.
    """

    def __init__(self, rng: Any):
        generator, self.seed = _rng_iv(rng)
        if isinstance(rng, np.random.Generator):
            self._fresh = None
            self._generator = generator
        else:
            self._fresh = rng if rng is not None else self.seed

    def new(self) -> np.random.Generator:
        return self._generator if self._fresh is None else np.random.default_rng(self._fresh)


class _Units:
    """Per-unit summaries (problems, or clusters) of centered values for resampling.

    ``centered`` is ``values - estimate`` (exactly 0 for constant columns), ``(N, K)``, rows in
    canonical order (:func:`_canonical_order`). The K columns fall into *column groups* that are
    resampled together (``groups``; default: each column alone; the MOVER pairs model a's column j
    with model b's). Each group puts the units in its own canonical order (rows of its summaries
    sorted; clusters by size and totals) and is resampled on its own, so that a column's result
    is what a call with that column (group) alone gives. ``totals`` and ``sizes`` are ``(U, K)``,
    each column in its group's order. Summary columns of a group: ``T`` unit totals of centered
    values; with clusters also ``n``; when standard errors are needed ``Q = T**2`` and, with
    clusters, ``nT`` and ``n**2``.
    """

    def __init__(self, centered: NDArray[np.float64], codes: NDArray[np.int64] | None, need_se: bool,
                 groups: Sequence[Sequence[int]] | None = None):
        self.k = centered.shape[1]
        self.clustered = codes is not None
        self.need_se = need_se
        self.groups = [list(g) for g in groups] if groups is not None else [[j] for j in range(self.k)]
        if codes is None:
            totals, unit_sizes = centered, None
        else:
            totals, unit_sizes = _cluster_sums(centered, codes)
        self.n_units = totals.shape[0]
        self.unit_sizes = unit_sizes
        self.totals = np.empty_like(totals)
        self.sizes = None if unit_sizes is None else np.empty(totals.shape)
        self.summaries = []
        for columns in self.groups:
            group_totals = totals[:, columns]
            if unit_sizes is None:
                order = _canonical_order(group_totals)
            else:
                order = _canonical_order(np.column_stack([unit_sizes, group_totals]))
            group_totals = group_totals[order]
            self.totals[:, columns] = group_totals
            parts = [group_totals]
            if unit_sizes is not None:
                group_sizes = unit_sizes[order]
                self.sizes[:, columns] = group_sizes[:, None]
                parts.append(group_sizes[:, None])
            if need_se:
                parts.append(group_totals * group_totals)
                if unit_sizes is not None:
                    parts.append(group_sizes[:, None] * group_totals)
                    parts.append((group_sizes * group_sizes)[:, None])
            self.summaries.append(np.ascontiguousarray(np.concatenate(parts, axis=1)))

    def split(self, columns: list[int], sums: NDArray[np.float64], out: dict[str, NDArray[np.float64]], rows: slice) -> None:
        """Write one group's resampled summary sums ``(b, m)`` into the per-column arrays of ``out``."""
        width = len(columns)
        out["T"][rows, columns] = sums[:, :width]
        pos = width
        if self.clustered:
            out["n"][rows, columns] = sums[:, pos : pos + 1]
            pos += 1
        if self.need_se:
            out["Q"][rows, columns] = sums[:, pos : pos + width]
            pos += width
            if self.clustered:
                out["nT"][rows, columns] = sums[:, pos : pos + width]
                out["n2"][rows, columns] = sums[:, pos + width : pos + width + 1]


def _resampled_sums(units: _Units, n_resamples: int, streams: _Streams, max_chunk_elements: int):
    """Per-column sums over each resample of the unit summaries (``T``, and as needed ``n``,
    ``Q``, ``nT``, ``n2``; each ``(B, K)``) and, per column, how they were drawn.

    A column group whose units take few distinct summary rows draws multinomial counts over them
    (resampling U units == multinomial counts over the G groups of identical units, B x G instead
    of B x U) from its own stream; groups with the same group sizes (in the order of their sorted
    rows) share those draws, which are the ones each would draw alone. The other groups share
    drawn unit positions (0..U-1, each group mapping them through its own canonical order) from
    one stream.
    """
    b_total, k, n_units = n_resamples, units.k, units.n_units
    names = ["T"] + (["n"] if units.clustered else []) + (["Q"] + (["nT", "n2"] if units.clustered else []) if units.need_se else [])
    out = {name: np.empty((b_total, k)) for name in names}
    info: list[dict[str, Any]] = [{} for _ in range(k)]
    partitions: dict[bytes, tuple[NDArray[np.float64], list]] = {}
    gathered_groups = []
    for columns, summaries in zip(units.groups, units.summaries):
        distinct, group_sizes = np.unique(summaries, axis=0, return_counts=True)
        n_groups = distinct.shape[0]
        grouped = n_groups <= max(1, int(_GROUPED_FRACTION * n_units))
        for j in columns:
            info[j] = {"path": "grouped" if grouped else "gather", "n_groups": int(n_groups)}
        if grouped:
            # the draws depend only on the group sizes (in the order of the sorted rows)
            key = np.ascontiguousarray(group_sizes, dtype=np.int64).tobytes()
            partitions.setdefault(key, (group_sizes / n_units, []))[1].append((columns, distinct))
        else:
            gathered_groups.append((columns, summaries))
    for probabilities, members in partitions.values():
        generator = streams.new()
        n_groups = probabilities.shape[0]
        start = 0
        for b in _chunk_rows(n_resamples, n_groups, max_chunk_elements):
            counts = generator.multinomial(n_units, probabilities, size=b).astype(np.float64)
            for columns, distinct in members:
                units.split(columns, counts @ distinct, out, slice(start, start + b))
            start += b
    if not gathered_groups:
        return out, info
    # a few summary columns: one gather each; more: one matrix product for all of them (row p of
    # the stacked summaries holds each group's unit at its position p); the two differ by rounding
    if sum(s.shape[1] for _, s in gathered_groups) <= _MAX_GATHER_COLUMNS:
        narrow, wide = gathered_groups, []
    else:
        narrow, wide = [], gathered_groups
    stacked = np.ascontiguousarray(np.concatenate([s for _, s in wide], axis=1)) if wide else None
    generator = streams.new()
    chunk_elements = max_chunk_elements if wide else min(max_chunk_elements, _GATHER_CHUNK_ELEMENTS)
    start = 0
    for b in _chunk_rows(n_resamples, n_units, chunk_elements):
        # np.intp indices: np.take converts anything else to intp first
        drawn = generator.integers(0, n_units, size=(b, n_units), dtype=np.intp)
        rows = slice(start, start + b)
        for columns, summaries in narrow:
            m = summaries.shape[1]
            sums = np.empty((b, m))
            if not units.clustered and units.need_se:
                # one gather per value column; squares from the gathered values
                width = len(columns)
                for c in range(width):
                    gathered = np.take(summaries[:, c], drawn)
                    sums[:, c] = gathered.sum(axis=1)
                    sums[:, width + c] = np.einsum("ij,ij->i", gathered, gathered)
            else:
                for c in range(m):
                    sums[:, c] = np.take(summaries[:, c], drawn).sum(axis=1)
            units.split(columns, sums, out, rows)
        if wide:
            all_sums = _multiplicities(drawn, n_units) @ stacked
            position = 0
            for columns, summaries in wide:
                m = summaries.shape[1]
                units.split(columns, all_sums[:, position : position + m], out, rows)
                position += m
        start += b
    return out, info


# ----------------------------------------------------------------------------------------------
# interval building blocks shared by every bootstrap in kpass (also _decomposition, _token_budget)
# ----------------------------------------------------------------------------------------------


def _quantile_of_sorted(
    sorted_values: NDArray[np.float64], q: NDArray[np.float64], n_valid: NDArray[np.integer] | None = None
) -> NDArray[np.float64]:
    """Per-column quantile at levels ``q`` (M,) of column-sorted ``(B, M)`` replicates.

    Linear interpolation exactly as ``np.quantile``'s default (Hyndman & Fan type 7, with its
    floating-point steps: position ``(B - 1) q``, ``b - (b - a)(1 - g)`` for ``g >= 1/2``); with
    ``n_valid`` only the first ``n_valid[j]`` entries of column j count (NaN sorts last, so this
    is ``np.nanquantile``; NaN where no entry is valid). Infinite neighbours are returned as they
    are instead of interpolated into NaN.
    """
    b, m = sorted_values.shape
    q = np.minimum(np.maximum(np.asarray(q, dtype=np.float64), 0.0), 1.0)
    if q.ndim == 0:
        q = np.full(m, q)
    last = (b - 1) if n_valid is None else np.maximum(np.asarray(n_valid, dtype=np.intp) - 1, 0)
    position = last * q
    floor = np.floor(position)
    gamma = position - floor
    lower = floor.astype(np.intp)
    upper = np.minimum(lower + 1, last)
    columns = np.arange(m)
    a = sorted_values[lower, columns]
    c = sorted_values[upper, columns]
    with np.errstate(invalid="ignore"):
        difference = c - a
        out = np.where(gamma >= 0.5, c - difference * (1.0 - gamma), a + difference * gamma)
    finite = np.isfinite(a) & np.isfinite(c)
    if not finite.all():
        out = np.where(finite, out, np.where((gamma == 0) | (a == -np.inf), a, c))
    if n_valid is not None:
        out = np.where(np.asarray(n_valid) > 0, out, np.nan)
    return out


def _percentile_bounds(sorted_replicates, level, n_valid=None):
    """Percentile bootstrap bounds: the (1 - level)/2 and (1 + level)/2 quantiles per column."""
    alpha = 1.0 - np.asarray(level, dtype=np.float64)
    return (_quantile_of_sorted(sorted_replicates, alpha / 2.0, n_valid),
            _quantile_of_sorted(sorted_replicates, 1.0 - alpha / 2.0, n_valid))


def _bca_bias_correction(replicates: NDArray[np.float64], estimate: NDArray[np.float64]):
    r"""BCa bias correction :math:`z_0 = \Phi^{-1}(\#\{\hat\theta^* < \hat\theta\}/B)` per column.

    Ties count one half; a replicate within ``_TIE_TOLERANCE`` times the spread
    :math:`\max|\hat\theta^* - \hat\theta|` of the estimate is a tie (the same resample computed
    in another summation order). Non-finite replicates (undefined statistics) are left out of B.
    The share is kept within :math:`[1/(2B), 1 - 1/(2B)]` so that :math:`z_0` is finite.
    Returns ``(z0, share, clipped share)``.
    """
    valid = np.isfinite(replicates)
    n_valid = valid.sum(axis=0)
    with np.errstate(invalid="ignore"):
        deviation = np.where(valid, replicates - estimate, 0.0)
    tolerance = _TIE_TOLERANCE * np.abs(deviation).max(axis=0)
    below = (valid & (deviation < -tolerance)).sum(axis=0)
    ties = (valid & (np.abs(deviation) <= tolerance)).sum(axis=0)
    floor = 0.5 / np.maximum(n_valid, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = (below + 0.5 * ties) / n_valid
    clipped = np.clip(share, floor, 1.0 - floor)
    return special.ndtri(clipped), share, clipped


def _bca_acceleration(jackknife: NDArray[np.float64]) -> NDArray[np.float64]:
    r"""BCa acceleration from leave-one-unit-out statistics (Efron 1987, Eq. 6.6):
    :math:`a = \sum_u d_u^3 / (6 (\sum_u d_u^2)^{3/2})`, :math:`d_u = \bar\theta_{(\cdot)} - \theta_{(u)}`,
    per column; undefined leave-one-out statistics (NaN) are left out, and ``a = 0`` when the
    jackknife has no spread."""
    valid = np.isfinite(jackknife)
    count = valid.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(valid, jackknife, 0.0).sum(axis=0) / count
        d = np.where(valid, mean - jackknife, 0.0)
        acceleration = (d**3).sum(axis=0) / (6.0 * (d**2).sum(axis=0) ** 1.5)
    return np.where(np.isfinite(acceleration), acceleration, 0.0)


def _bca_levels(z0: NDArray[np.float64], acceleration: NDArray[np.float64], level) -> tuple[NDArray, NDArray]:
    r"""The BCa-adjusted quantile levels of the two bounds (Efron 1987, Eq. 2.3):
    :math:`\Phi\big(z_0 + (z_0 + z_\alpha)/(1 - a(z_0 + z_\alpha))\big)`; a bound whose
    denominator is not positive goes to the end of the bootstrap distribution."""
    alpha = 1.0 - np.asarray(level, dtype=np.float64)
    levels = []
    for tail, end in ((alpha / 2.0, 0.0), (1.0 - alpha / 2.0, 1.0)):
        z = z0 + special.ndtri(tail)
        denominator = 1.0 - acceleration * z
        with np.errstate(invalid="ignore", divide="ignore"):
            adjusted = special.ndtr(z0 + z / np.where(denominator > 0, denominator, 1.0))
        levels.append(np.where(denominator > 0, adjusted, end))
    return levels[0], levels[1]


def _bca_bounds(sorted_replicates, z0, acceleration, level, n_valid=None):
    """BCa bounds per column from column-sorted replicates; returns ``(low, high, (low level, high level))``."""
    low_level, high_level = _bca_levels(z0, acceleration, level)
    return (_quantile_of_sorted(sorted_replicates, low_level, n_valid),
            _quantile_of_sorted(sorted_replicates, high_level, n_valid), (low_level, high_level))


def _nan_std(replicates: NDArray[np.float64]) -> NDArray[np.float64]:
    """Standard deviation (ddof=1) of the finite replicates of each column, NaN with fewer than 2
    (``np.nanstd``'s arithmetic, without its warnings)."""
    valid = np.isfinite(replicates)
    count = valid.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(valid, replicates, 0.0).sum(axis=0) / count
        deviation = np.where(valid, replicates - mean, 0.0)
        variance = (deviation * deviation).sum(axis=0) / (count - 1)
    return np.where(count > 1, np.sqrt(np.where(count > 1, variance, 0.0)), np.nan)


def _wilson_score_bounds(p: ArrayLike, n_trials: ArrayLike, z: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Wilson's score interval [Wilson 1927] for a proportion ``p`` of ``n_trials`` with critical value ``z``:

    .. math:: \frac{p + \frac{z^2}{2n}}{1 + \frac{z^2}{n}} \pm
              \frac{z}{1 + \frac{z^2}{n}}\sqrt{\frac{p(1-p)}{n} + \frac{z^2}{4n^2}}

    vectorized, within [0, 1], exactly 0 (1) at ``p = 0`` (``p = 1``). ``n_trials`` may be a
    non-integer effective size. The one implementation behind :func:`wilson_interval`, the
    score fallback of the studentized interval and the decomposition's score intervals.
    """
    p = np.asarray(p, dtype=np.float64)
    n = np.asarray(n_trials, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        z2n = z * z / n
        denominator = 1.0 + z2n
        center = (p + z2n / 2.0) / denominator
        half = z * np.sqrt(np.maximum(p * (1.0 - p) / n + z2n / (4.0 * n), 0.0)) / denominator
    low = np.where(p <= 0.0, 0.0, np.clip(center - half, 0.0, 1.0))
    high = np.where(p >= 1.0, 1.0, np.clip(center + half, 0.0, 1.0))
    return low, high


def _mover_bounds(difference, down_a, up_a, down_b, up_b, correlation) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""MOVER interval of :math:`\theta_a - \theta_b` from each one's distances to its bounds
    (Zou & Donner 2008; Newcombe 1998 for paired proportions), with :math:`r` the correlation
    of the two estimates:

    .. math:: L = \hat d - \sqrt{d_a^2 + u_b^2 - 2 r\, d_a u_b}, \qquad
              U = \hat d + \sqrt{u_a^2 + d_b^2 - 2 r\, u_a d_b}

    where :math:`d = \hat\theta - l` and :math:`u = u - \hat\theta` of each interval. The one
    implementation behind ``method="mover"``, the paired score fallback and the
    decomposition's score interval of reach.
    """
    below = np.sqrt(np.maximum(down_a**2 + up_b**2 - 2.0 * correlation * down_a * up_b, 0.0))
    above = np.sqrt(np.maximum(up_a**2 + down_b**2 - 2.0 * correlation * up_a * down_b, 0.0))
    return difference - below, difference + above


def _bootstrap_of_sums(
    per_problem: NDArray[np.float64],
    statistic: Callable[[NDArray[np.float64], NDArray[np.float64]], NDArray[np.float64]],
    *,
    codes: NDArray[np.int64] | None,
    n_clusters: int | None,
    method: str,
    level: float,
    n_resamples: int,
    rng: Any,
    max_chunk_elements: int,
) -> dict[str, Any]:
    """Percentile or BCa bootstrap of a statistic of weighted per-problem sums (private).

    ``statistic(sums, total_weight)`` maps ``sums`` ``(B, M)`` (the columns of ``per_problem``
    summed with resample multiplicities) and ``total_weight`` ``(B,)`` to ``(B, ...)``. Problems,
    or clusters (``codes``), are resampled in canonical order, so the result does not depend on
    the order of the problems. The BCa acceleration comes from the jackknife over problems (or
    clusters). Returns ``estimate``, ``low``, ``high``, ``standard_error`` (of the finite
    replicates), ``n_undefined`` (non-finite replicates), each of the statistic's trailing shape,
    ``details`` (``bias_correction``, ``acceleration`` for BCa) and ``seed``.
    """
    n_problems = per_problem.shape[0]
    order = _canonical_order(per_problem)
    rows = np.ascontiguousarray(per_problem[order])
    unit_codes = None if codes is None else codes[order]
    generator, seed = _rng_iv(rng)
    ones = np.ones((1, n_problems))
    estimate = statistic(ones @ rows, ones.sum(axis=1))[0]
    unit_rows, unit_sizes, unit_order = _canonical_units(rows, unit_codes)
    position_of_unit = None
    if unit_codes is not None:
        position_of_unit = np.empty_like(unit_order)
        position_of_unit[unit_order] = np.arange(unit_order.size)
    chunks = [
        statistic(weights @ rows, weights.sum(axis=1))
        for weights in _weights_generator(n_problems, unit_codes, n_clusters or 0, n_resamples, generator,
                                          max_chunk_elements, position_of_unit)
    ]
    replicates = np.concatenate(chunks, axis=0)
    shape = replicates.shape[1:]
    flat = replicates.reshape(n_resamples, -1)
    flat_estimate = np.asarray(estimate, dtype=np.float64).reshape(-1)
    sorted_replicates = np.sort(flat, axis=0)  # NaN last
    n_valid = np.isfinite(flat).sum(axis=0)
    details: dict[str, Any] = {}
    if method == "bootstrap":
        low, high = _percentile_bounds(sorted_replicates, level, n_valid)
    else:
        # jackknife: leave one problem (or one cluster, in canonical order) out
        if unit_sizes is None:
            left_out, left_weight = rows, np.ones(n_problems)
        else:
            left_out, left_weight = unit_rows[unit_order], unit_sizes[unit_order]
        total = rows.sum(axis=0)
        step = max(1, max_chunk_elements // max(rows.shape[1], 1))
        jackknife = np.concatenate([
            statistic(total[None, :] - left_out[start : start + step], n_problems - left_weight[start : start + step])
            for start in range(0, left_out.shape[0], step)
        ], axis=0).reshape(left_out.shape[0], -1)
        z0, _, _ = _bca_bias_correction(flat, flat_estimate)
        acceleration = _bca_acceleration(jackknife)
        low, high, _ = _bca_bounds(sorted_replicates, z0, acceleration, level, n_valid)
        details = {"bias_correction": z0.reshape(shape), "acceleration": acceleration.reshape(shape)}
    return {
        "estimate": np.asarray(estimate, dtype=np.float64).reshape(shape),
        "low": low.reshape(shape),
        "high": high.reshape(shape),
        "standard_error": _nan_std(flat).reshape(shape),
        "n_undefined": (~np.isfinite(flat)).sum(axis=0).reshape(shape),
        "details": details,
        "seed": seed,
    }


def _analytic_se(units: _Units, n: int, constant: NDArray[np.bool_]) -> NDArray[np.float64]:
    """t standard error (no clusters) or Inspect's clustered standard error, per column."""
    totals = units.totals
    if not units.clustered:
        variance = (totals * totals).sum(axis=0) / (n - 1)
        se = np.sqrt(variance / n)
    else:
        c = units.n_units
        se = np.sqrt(c / (c - 1) * (totals * totals).sum(axis=0)) / n
    return np.where(constant, 0.0, se)


def _replicate_statistics(units: _Units, parts: dict[str, NDArray[np.float64]], n: int):
    """Resampled centered means (B, K) and, if needed, resampled standard errors (B, K)."""
    size = parts["n"] if units.clustered else float(n)
    mean = parts["T"] / size
    if not units.need_se:
        return mean, None
    if not units.clustered:
        # sum of squared deviations of the resample: sum w v'^2 - N mean'^2
        raw = parts["Q"]
        ss = raw - n * mean * mean
        ss = np.where(ss <= _TIE_TOLERANCE * raw, 0.0, ss)
        se = np.sqrt(ss / (n - 1) / n)
    else:
        c = units.n_units
        raw = parts["Q"] + mean * mean * parts["n2"]
        ss = parts["Q"] - 2.0 * mean * parts["nT"] + mean * mean * parts["n2"]
        ss = np.where(ss <= _TIE_TOLERANCE * raw, 0.0, ss)
        se = np.sqrt(c / (c - 1) * ss) / size
    return mean, se


def _leave_one_unit_out_means(units: _Units, n: int) -> NDArray[np.float64]:
    """The (centered) mean without each unit, in closed form from the unit totals, shape (U, K)."""
    totals = units.totals
    if units.clustered:
        remaining = n - units.sizes
        return np.where(remaining > 0, -totals / np.where(remaining > 0, remaining, 1.0), 0.0)
    return -totals / (n - 1)


# ----------------------------------------------------------------------------------------------
# score-type bounds for degenerate bootstrap-t tails
# ----------------------------------------------------------------------------------------------

#: Fewer clusters than this: cluster-robust intervals are unreliable (Cameron & Miller 2015, VI).
FEW_CLUSTERS = 10

#: Bisection steps when a p-value is found by inverting an interval in its level (2**-48 precision).
_LEVEL_BISECTION_STEPS = 48

_LevelBounds = Callable[[NDArray[np.float64]], tuple[NDArray[np.float64], NDArray[np.float64]]]


def _wilson_effective(
    mean: NDArray[np.float64],
    se: NDArray[np.float64],
    n_bernoulli: float | NDArray[np.float64],
    df: int,
    value_range: tuple[float, float],
) -> _LevelBounds:
    r"""Wilson score bounds on a mean of values in ``value_range`` with the Bernoulli worst-case
    effective sample size, as a function of the (two-sided) level.

    With the values rescaled to [0, 1], mean :math:`\hat p` and standard error :math:`\widehat{SE}`
    (t or clustered), the effective number of trials is

    .. math:: n_{\mathrm{eff}} = \min\Big(\frac{\hat p (1 - \hat p)}{\widehat{SE}^2},\ n_B\Big),
              \qquad n^* = n_{\mathrm{eff}} \Big(\frac{z_{1-\alpha/2}}{t_{df,\,1-\alpha/2}}\Big)^2

    where :math:`n_B` is the effective size if every value were 0 or 1 (the largest variance a
    [0, 1] variable with mean :math:`p` can have, :math:`p(1-p)`): N without clusters and Kish's
    :math:`N^2 / \sum_c N_c^2` with clusters of :math:`N_c` problems each (every problem of a
    cluster equal). The bounds are Wilson's (Wilson 1927, module reference [5]) with :math:`n^*`
    trials (:func:`_wilson_score_bounds`); the reduction for the degrees of freedom is Korn &
    Graubard's (1998, module reference [6]). For 0/1 values without clusters
    :math:`n_{\mathrm{eff}} = N - 1`.
    """
    lo, hi = value_range
    width = hi - lo
    p = np.clip((mean - lo) / width, 0.0, 1.0)
    se_p = se / width
    spread = p * (1.0 - p)
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = np.where((se_p > 0) & (spread > 0), spread / (se_p * se_p), np.inf)
    n_eff = np.minimum(observed, np.asarray(n_bernoulli, dtype=np.float64))

    def bounds(level: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        tail = 1.0 - (1.0 - np.asarray(level, dtype=np.float64)) / 2.0
        z = special.ndtri(tail)
        t = stats.t.ppf(tail, df)
        with np.errstate(divide="ignore", invalid="ignore"):
            n_star = n_eff * np.where(t > 0, (z / t) ** 2, 1.0)
        low, high = _wilson_score_bounds(p, n_star, z)
        return lo + width * np.minimum(low, p), lo + width * np.maximum(high, p)

    return bounds


def _mover_difference(
    bounds_a: _LevelBounds,
    bounds_b: _LevelBounds,
    mean_a: NDArray[np.float64],
    mean_b: NDArray[np.float64],
    correlation: NDArray[np.float64],
) -> _LevelBounds:
    r"""MOVER interval of :math:`\theta_a - \theta_b` from one interval per model as a function of
    the level (:func:`_mover_bounds`; Zou & Donner 2008, with Wilson intervals Newcombe 1998)."""
    difference = mean_a - mean_b

    def bounds(level: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        low_a, high_a = bounds_a(level)
        low_b, high_b = bounds_b(level)
        return _mover_bounds(difference, mean_a - low_a, high_a - mean_a, mean_b - low_b, high_b - mean_b, correlation)

    return bounds


def _t_bounds(estimate: NDArray[np.float64], se: NDArray[np.float64], df: int) -> _LevelBounds:
    """The t interval ``estimate +- t_{df} se`` as a function of the level."""

    def bounds(level: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        critical = stats.t.ppf(1.0 - (1.0 - np.asarray(level, dtype=np.float64)) / 2.0, df)
        return estimate - critical * se, estimate + critical * se

    return bounds


def _p_value_by_inversion(bounds: _LevelBounds, estimate: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """Two-sided p-value of "0" as one minus the largest level whose interval excludes 0.

    ``bounds(level)`` is the interval the method shows, at any level; the p-value is therefore
    below ``1 - level`` exactly when that interval excludes 0 (to the 2**-48 of the bisection).
    """
    excluded_level = np.zeros(k)
    included_level = np.ones(k)
    for _ in range(_LEVEL_BISECTION_STEPS):
        middle = (excluded_level + included_level) / 2.0
        low, high = bounds(middle)
        excluded = (low > 0.0) | (high < 0.0)
        excluded_level = np.where(excluded, middle, excluded_level)
        included_level = np.where(excluded, included_level, middle)
    return np.where(estimate == 0.0, 1.0, 1.0 - excluded_level)


@dataclass(frozen=True)
class _Fallback:
    """Bounds that replace a degenerate bootstrap-t tail: a function of the level and its name."""

    bounds: _LevelBounds
    name: str


def _mean_and_se(values: NDArray[np.float64], codes, n_clusters):
    """Column means, analytic standard errors (t or clustered), Bernoulli worst-case effective
    size (N, or Kish's N^2 / sum N_c^2 with clusters) and t degrees of freedom."""
    n = values.shape[0]
    mean = values.mean(axis=0)
    constant = np.ptp(values, axis=0) == 0
    units = _Units(np.where(constant, 0.0, values - mean), codes, need_se=False)
    se = _analytic_se(units, n, constant)
    n_bernoulli = float(n) if codes is None else float(n) ** 2 / float((units.unit_sizes**2).sum())
    return mean, se, n_bernoulli, units.n_units - 1


def _score_fallback(values: NDArray[np.float64], codes, n_clusters, value_range) -> _Fallback | None:
    r"""Wilson-type bounds on the mean of values in ``value_range`` (``None``: no known range).

    The cap :math:`n_B` of the effective size is the worst case (Kish's size with clusters) for
    a degenerate tail; for 0/1 values with spread (:func:`_two_point`) the observed variance is
    the Bernoulli one, so their effective size is the design-effect one,
    :math:`\min(\hat p(1-\hat p)/\widehat{SE}^2, N)` (Korn & Graubard 1998): without clusters
    :math:`N - 1` either way, with clusters not the Kish worst case. A column all at one end has
    no spread to measure and keeps :math:`n_B`.
    """
    if value_range is None:
        return None
    mean, se, n_bernoulli, df = _mean_and_se(values, codes, n_clusters)
    cap = np.where(_two_point(values, value_range) & (se > 0), float(values.shape[0]), n_bernoulli)
    return _Fallback(_wilson_effective(mean, se, cap, df, value_range), "score")


def _paired_score_fallback(a: NDArray[np.float64], b: NDArray[np.float64], codes, n_clusters) -> _Fallback:
    """MOVER bounds on ``mean(a) - mean(b)`` from each model's Wilson-type bounds (values in [0, 1]).

    The correlation of the two means comes from the same standard errors as the interval,
    :math:`r = (SE_a^2 + SE_b^2 - SE_d^2) / (2 SE_a SE_b)`, so that the MOVER variance equals
    :math:`SE_d^2` near the estimate (Pearson's r of the per-problem values without clusters).
    """
    mean_a, se_a, n_bernoulli, df = _mean_and_se(a, codes, n_clusters)
    mean_b, se_b, _, _ = _mean_and_se(b, codes, n_clusters)
    _, se_d, _, _ = _mean_and_se(a - b, codes, n_clusters)
    with np.errstate(divide="ignore", invalid="ignore"):
        correlation = np.where((se_a > 0) & (se_b > 0), (se_a**2 + se_b**2 - se_d**2) / (2.0 * se_a * se_b), 0.0)
    correlation = np.clip(correlation, -1.0, 1.0)
    bounds_a = _wilson_effective(mean_a, se_a, n_bernoulli, df, (0.0, 1.0))
    bounds_b = _wilson_effective(mean_b, se_b, n_bernoulli, df, (0.0, 1.0))
    return _Fallback(_mover_difference(bounds_a, bounds_b, mean_a, mean_b, correlation), "mover-score")


class _Studentized:
    r"""The bootstrap-t distribution of every column and its interval at any level.

    Without ``scale_range`` the pivot is :math:`t^* = (\hat\theta^* - \hat\theta)/\widehat{SE}^*`
    and the interval :math:`\hat\theta - t^*_{q}\widehat{SE}`. With ``scale_range = (lo, hi)``
    (values known to lie in it) the pivot is taken on the variance-stabilized scale
    :math:`g(\theta) = \arcsin\sqrt{(\theta - lo)/(hi - lo)}` with the delta-method standard
    error :math:`g'(\theta)\,\widehat{SE}`, and the interval is mapped back with :math:`g^{-1}`
    (module docstring, "studentized"). Columns flagged ``two_point`` (every value at ``lo`` or
    ``hi``, also all at the same end) take both bounds from ``fallback`` (the score interval).
    ``interval(level)`` inverts
    the distribution of the pivot and replaces a degenerate tail (more than :math:`\alpha/2` of
    the resamples with less than one unit's worth of the observed variance on that side) by
    ``fallback``; the other bound is then the wider of the two.
    """

    def __init__(self, estimate, se, boot_mean, boot_se, n_units: int, constant, tol, fallback: _Fallback,
                 scale_range: tuple[float, float] | None = None, two_point=None):
        pile = np.where(np.abs(boot_mean) <= tol, 0.0, np.copysign(np.inf, boot_mean))
        if scale_range is None:
            with np.errstate(divide="ignore", invalid="ignore"):
                t_star = boot_mean / boot_se
            self.t_star = np.where(boot_se > 0, t_star, pile)
            self.center, self.scale_se, self.back = estimate, se, None
        else:
            lo, hi = scale_range
            width = hi - lo
            p = np.clip((estimate - lo) / width, 0.0, 1.0)
            p_star = np.clip((estimate + boot_mean - lo) / width, 0.0, 1.0)
            spread_star = p_star * (1.0 - p_star)
            with np.errstate(divide="ignore", invalid="ignore"):
                # (g(p*) - g(p)) / (g'(p*) SE*), g'(p) = 1 / (2 sqrt(p (1 - p)))
                t_star = (np.arcsin(np.sqrt(p_star)) - np.arcsin(np.sqrt(p))) * 2.0 * np.sqrt(spread_star) / (boot_se / width)
                self.scale_se = np.where(p * (1.0 - p) > 0, se / width / (2.0 * np.sqrt(p * (1.0 - p))), 0.0)
            self.t_star = np.where((boot_se > 0) & (spread_star > 0), t_star, pile)
            self.center = np.arcsin(np.sqrt(p))

            def back(y):
                return lo + width * np.sin(np.clip(y, 0.0, np.pi / 2.0)) ** 2

            self.back = back
        self.t_sorted = np.sort(self.t_star, axis=0)
        # degenerate resamples: less than one unit's worth of the observed variance
        degenerate = boot_se * np.sqrt(n_units) <= se
        self.share_above = np.mean(degenerate & (boot_mean > tol), axis=0)  # drive the lower bound
        self.share_below = np.mean(degenerate & (boot_mean < -tol), axis=0)  # drive the upper bound
        self.infinite_share = np.mean(~np.isfinite(self.t_star), axis=0)
        self.estimate, self.se, self.constant, self.fallback = estimate, se, constant, fallback
        # 0/1 values, including a column with every value at the same end of the range
        self.two_point = np.zeros(estimate.shape, dtype=bool) if two_point is None else np.asarray(two_point)

    def interval(self, level: NDArray[np.float64], sources: bool = True, raw_legs: bool = False) -> dict[str, NDArray[Any]]:
        r"""Bounds at ``level`` (per column) and, with ``sources``, the method of each bound.

        ``raw_legs``: the quantiles of the (possibly arcsine-scale) pivot times the raw standard
        error, :math:`\hat\theta - t^*_q \widehat{SE}`, without mapping back through
        :math:`g^{-1}` (the legs that :func:`_mover_interval` combines).
        """
        alpha = 1.0 - np.asarray(level, dtype=np.float64)
        q_low = _quantile_of_sorted(self.t_sorted, alpha / 2.0)
        q_high = _quantile_of_sorted(self.t_sorted, 1.0 - alpha / 2.0)
        with np.errstate(invalid="ignore"):
            if raw_legs or self.back is None:
                low = self.estimate - q_high * self.se
                high = self.estimate - q_low * self.se
            else:
                low = self.back(self.center - q_high * self.scale_se)
                high = self.back(self.center - q_low * self.scale_se)
        two_point = self.two_point
        replace_low = ((self.share_above > alpha / 2.0) | ~np.isfinite(q_high)) & ~self.constant & ~two_point
        replace_high = ((self.share_below > alpha / 2.0) | ~np.isfinite(q_low)) & ~self.constant & ~two_point
        replaced = replace_low | replace_high
        low_source = high_source = None
        if sources:
            low_source = np.full(low.shape, "studentized", dtype=object)
            high_source = low_source.copy()
        if replaced.any() or two_point.any():
            fallback_low, fallback_high = self.fallback.bounds(level)
            # degenerate side: the fallback; other side: the wider of the two; 0/1 values: the fallback
            low = np.where(replace_low | two_point, fallback_low, np.where(replaced, np.minimum(low, fallback_low), low))
            high = np.where(replace_high | two_point, fallback_high, np.where(replaced, np.maximum(high, fallback_high), high))
            if sources:
                low_source[(replaced | two_point) & (low == fallback_low)] = self.fallback.name
                high_source[(replaced | two_point) & (high == fallback_high)] = self.fallback.name
        return {"low": low, "high": high, "q_low": q_low, "q_high": q_high, "replace_low": replace_low,
                "replace_high": replace_high, "replaced": replaced, "low_source": low_source, "high_source": high_source}

    def bounds(self, level: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        out = self.interval(level, sources=False)
        return out["low"], out["high"]

    def scale_name(self) -> NDArray[Any]:
        """Per column: the scale of the pivot, or "score" for 0/1 values."""
        name = "identity" if self.back is None else "arcsine"
        return np.where(self.two_point, "score (0/1 values)", name)


def _two_point(values: NDArray[np.float64], value_range: tuple[float, float]) -> NDArray[np.bool_]:
    """Per column: every value at one of the two ends of ``value_range`` (0/1 values in [0, 1])."""
    lo, hi = value_range
    return ((values == lo) | (values == hi)).all(axis=0)


def _interval_core(
    values: NDArray[np.float64],
    codes: NDArray[np.int64] | None,
    n_clusters: int | None,
    method: str,
    level: float,
    n_resamples: int,
    rng: Any,
    bounds: tuple[float, float] | None,
    max_chunk_elements: int,
    test_zero: bool,
    fallback: _Fallback | None = None,
    paired: tuple[NDArray[np.float64], NDArray[np.float64], tuple[float, float] | None] | None = None,
    scale_range: tuple[float, float] | None = None,
) -> list[dict[str, Any]]:
    """Compute the interval for every column of ``values``; returns one dict per column.

    ``values`` (and ``codes``) come in canonical row order (:func:`_canonical_order`).
    ``fallback`` gives the bounds that replace a degenerate tail of the studentized bootstrap
    (see the module docstring); ``None`` uses the t (or clustered-t) bounds. ``paired`` is
    ``(a, b, range of a and b)`` for ``method="mover"`` (``values`` is then ``a - b``).
    ``scale_range`` (values known to lie in it) puts the studentized pivot on the arcsine scale
    and gives 0/1 values (every value at an end of the range) the score interval. With
    ``test_zero`` the p-value of "0" inverts the interval the method shows in its level (the
    t test for ``"t"``/``"clustered-t"``, which is the same thing in closed form).
    """
    n, k = values.shape
    alpha = 1.0 - level
    estimate = values.mean(axis=0)
    constant = np.ptp(values, axis=0) == 0
    centered = values - estimate
    centered[:, constant] = 0.0
    estimate = np.where(constant, values[0], estimate)
    units = _Units(centered, codes, need_se=method == "studentized")
    se = _analytic_se(units, n, constant)
    common: dict[str, Any] = {"resampling": "clusters" if codes is not None else "problems"}
    two_point = None
    details = [dict(common) for _ in range(k)]
    p_values = np.full(k, np.nan)

    if method in ("t", "clustered-t"):
        df = n - 1 if method == "t" else n_clusters - 1
        critical = float(stats.t.ppf(1.0 - alpha / 2.0, df))
        low = estimate - critical * se
        high = estimate + critical * se
        standard_error = se
        for d in details:
            d.update(df=int(df), critical_value=critical, standard_error_kind="clustered" if method == "clustered-t" else "t")
        if test_zero:
            with np.errstate(divide="ignore", invalid="ignore"):
                t_obs = estimate / se
            p_values = np.where(se > 0, 2.0 * stats.t.sf(np.abs(t_obs), df), np.where(estimate == 0, 1.0, 0.0))
    elif method == "mover":
        low, high, standard_error, p_values = _mover_interval(
            paired, estimate, se, codes, n_clusters, level, n_resamples, rng, max_chunk_elements, details, test_zero
        )
    else:
        streams = _Streams(rng)
        parts, draw_info = _resampled_sums(units, n_resamples, streams, max_chunk_elements)
        boot_mean, boot_se = _replicate_statistics(units, parts, n)
        for d, info in zip(details, draw_info):
            d.update(n_resamples=n_resamples, seed=streams.seed, **info)
        if method == "studentized":
            if fallback is None:
                fallback = _Fallback(_t_bounds(estimate, se, units.n_units - 1), "clustered-t" if codes is not None else "t")
            tol = _TIE_TOLERANCE * np.maximum(np.abs(centered).max(axis=0), 1e-300)
            two_point = None if scale_range is None else _two_point(values, scale_range)
            studentized = _Studentized(estimate, se, boot_mean, boot_se, units.n_units, constant, tol, fallback,
                                       scale_range, two_point)
            scales = studentized.scale_name()
            out = studentized.interval(np.full(k, level))
            low, high = out["low"], out["high"]
            standard_error = se
            shown_interval = studentized.bounds
            for j, d in enumerate(details):
                d.update(
                    standard_error_kind="clustered" if codes is not None else "t",
                    t_quantiles=(float(out["q_low"][j]), float(out["q_high"][j])),
                    share_infinite_t=float(studentized.infinite_share[j]),
                    degenerate_share=(float(studentized.share_below[j]), float(studentized.share_above[j])),
                    bound_methods=(out["low_source"][j], out["high_source"][j]),
                    degenerate_tail=(bool(out["replace_low"][j]), bool(out["replace_high"][j])),
                    scale=str(scales[j]),
                )
        else:
            sorted_mean = np.sort(boot_mean, axis=0)
            standard_error = boot_mean.std(axis=0, ddof=1)
            if method == "bootstrap":

                def shown_interval(level_k):
                    low_k, high_k = _percentile_bounds(sorted_mean, level_k)
                    return estimate + low_k, estimate + high_k

            else:  # bca, Efron 1987 Eqs. 2.3 and 6.6
                z0, share, share_clipped = _bca_bias_correction(boot_mean, np.zeros(k))
                acceleration = _bca_acceleration(_leave_one_unit_out_means(units, n))

                def shown_interval(level_k):
                    low_k, high_k, _ = _bca_bounds(sorted_mean, z0, acceleration, level_k)
                    return estimate + low_k, estimate + high_k

                adjusted = _bca_levels(z0, acceleration, np.full(k, level))
                for j, d in enumerate(details):
                    d.update(
                        bias_correction=float(z0[j]),
                        acceleration=float(acceleration[j]),
                        adjusted_levels=(float(adjusted[0][j]), float(adjusted[1][j])),
                        bias_share_clipped=bool(share[j] != share_clipped[j]),
                    )
            low, high = shown_interval(np.full(k, level))
            for d in details:
                d.update(standard_error_kind="bootstrap")
        if test_zero:
            p_values = _p_value_by_inversion(shown_interval, estimate, k)

    # every value at one end of a known range (all 0 or all 1): the default keeps its score
    # interval; for MOVER, one model all at the top and the other all at the bottom (d = +-1)
    # keeps the MOVER of their score intervals. Every other constant column is pinned.
    end_constant = constant & (False if two_point is None else two_point)
    if method == "mover" and paired[2] is not None:
        end_constant = constant & (np.abs(estimate) == paired[2][1] - paired[2][0])
    pinned = constant & ~end_constant
    low = np.where(pinned, estimate, low)
    high = np.where(pinned, estimate, high)
    standard_error = np.where(constant, 0.0, standard_error)
    if test_zero:
        p_values = np.where(pinned, np.where(estimate == 0, 1.0, 0.0), p_values)
    results = []
    for j in range(k):
        lo, hi = float(low[j]), float(high[j])
        if not (np.isfinite(lo) and np.isfinite(hi)):
            details[j]["degenerate"] = "infinite bound"
        clipped = False
        if bounds is not None:
            new_lo, new_hi = max(lo, bounds[0]), min(hi, bounds[1])
            clipped = (new_lo != lo) or (new_hi != hi)
            lo, hi = new_lo, new_hi
        details[j].update(bounds=bounds, clipped=clipped)
        if constant[j]:
            details[j]["degenerate"] = "constant values at an end of the range" if end_constant[j] else "constant values"
        est = float(estimate[j])
        if not lo <= est <= hi:
            details[j]["estimate_outside"] = True
        results.append(
            {
                "estimate": est,
                "low": lo,
                "high": hi,
                "standard_error": float(standard_error[j]),
                "details": details[j],
                "p_value": float(p_values[j]),
                "constant": bool(pinned[j]),
                "constant_at_end": bool(end_constant[j]),
            }
        )
    return results


def _mover_interval(paired, estimate, se, codes, n_clusters, level, n_resamples, rng, max_chunk_elements, details, test_zero):
    r"""MOVER interval of ``mean(a) - mean(b)`` from each model's studentized limits (method "mover").

    Both models are resampled with the same resamples (problems or clusters); each model's
    limits :math:`[l, u] = [\hat\theta - t^*_{1-\alpha/2}\widehat{SE},\ \hat\theta - t^*_{\alpha/2}\widehat{SE}]`
    from its (arcsine-scale) pivot, on the raw scale (score limits for 0/1 values and for a
    degenerate tail), and the correlation of the
    two means, :math:`r = (SE_a^2 + SE_b^2 - SE_d^2) / (2 SE_a SE_b)`, give
    :math:`L = \hat d - \sqrt{(\hat\theta_a - l_a)^2 + (u_b - \hat\theta_b)^2 - 2r(\hat\theta_a - l_a)(u_b - \hat\theta_b)}`
    and :math:`U` likewise (Zou & Donner 2008). The p-value inverts the interval in its level.
    """
    arr_a, arr_b, model_range = paired
    n, k = arr_a.shape
    stacked = np.concatenate([arr_a, arr_b], axis=1)
    model_estimate = stacked.mean(axis=0)
    model_constant = np.ptp(stacked, axis=0) == 0
    centered = np.where(model_constant, 0.0, stacked - model_estimate)
    model_estimate = np.where(model_constant, stacked[0], model_estimate)
    # model a's column j and model b's are resampled together (the same problems)
    units = _Units(centered, codes, need_se=True, groups=[[j, k + j] for j in range(k)])
    model_se = _analytic_se(units, n, model_constant)
    streams = _Streams(rng)
    parts, draw_info = _resampled_sums(units, n_resamples, streams, max_chunk_elements)
    boot_mean, boot_se = _replicate_statistics(units, parts, n)
    tol = _TIE_TOLERANCE * np.maximum(np.abs(centered).max(axis=0), 1e-300)
    model_fallback = _score_fallback(stacked, codes, n_clusters, model_range)
    if model_fallback is None:
        model_fallback = _Fallback(_t_bounds(model_estimate, model_se, units.n_units - 1), "clustered-t" if codes is not None else "t")
    two_point = None if model_range is None else _two_point(stacked, model_range)
    per_model = _Studentized(model_estimate, model_se, boot_mean, boot_se, units.n_units, model_constant, tol, model_fallback,
                             model_range, two_point)
    scales = per_model.scale_name()
    se_a, se_b = model_se[:k], model_se[k:]
    with np.errstate(divide="ignore", invalid="ignore"):
        correlation = np.where((se_a > 0) & (se_b > 0), (se_a**2 + se_b**2 - se**2) / (2.0 * se_a * se_b), 0.0)
    correlation = np.clip(correlation, -1.0, 1.0)

    # a model with every value at one end (e.g. every problem solved) is not known exactly: as
    # 0/1 values (two_point) its limits are the score interval with n_B trials (Wilson, N of N)

    def model_bounds(levels_2k: NDArray[np.float64], sources: bool = True) -> dict[str, NDArray[Any]]:
        out = per_model.interval(levels_2k, sources, raw_legs=True)
        if model_range is not None:
            low_end, high_end = model_range
            out["low"] = np.minimum(np.maximum(out["low"], low_end), high_end)
            out["high"] = np.minimum(np.maximum(out["high"], low_end), high_end)
        return out

    def bounds(level_k: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        out = model_bounds(np.concatenate([level_k, level_k]), sources=False)
        low_ab, high_ab = out["low"], out["high"]
        down = np.maximum(model_estimate - low_ab, 0.0)
        up = np.maximum(high_ab - model_estimate, 0.0)
        return _mover_bounds(estimate, down[:k], up[:k], down[k:], up[k:], correlation)

    levels = np.full(k, level)
    low, high = bounds(levels)
    models = model_bounds(np.concatenate([levels, levels]))
    for j, d in enumerate(details):
        d.update(
            n_resamples=n_resamples, seed=streams.seed, **draw_info[j],
            standard_error_kind="clustered" if codes is not None else "t",
            correlation_of_means=float(correlation[j]),
            interval_a=(float(models["low"][j]), float(models["high"][j])),
            interval_b=(float(models["low"][k + j]), float(models["high"][k + j])),
            model_bound_methods=((models["low_source"][j], models["high_source"][j]),
                                 (models["low_source"][k + j], models["high_source"][k + j])),
            # the lower bound of a - b rests on a's lower and b's upper bound, and vice versa
            degenerate_tail=(bool(models["replace_low"][j] or models["replace_high"][k + j]),
                             bool(models["replace_high"][j] or models["replace_low"][k + j])),
            degenerate_share=(float(max(per_model.share_below[j], per_model.share_above[k + j])),
                              float(max(per_model.share_above[j], per_model.share_below[k + j]))),
            model_scales=(str(scales[j]), str(scales[k + j])),
        )
    p_values = _p_value_by_inversion(bounds, estimate, k) if test_zero else np.full(k, np.nan)
    return low, high, se, p_values


def _warn_degenerate(results: list[dict[str, Any]], what: str) -> None:
    """Warn (never silently) about constant columns, replaced bootstrap-t tails and infinite bounds."""
    columns = (lambda js: "" if len(results) == 1 else f" (columns {js[:MAX_REPORTED]}{' ...' if len(js) > MAX_REPORTED else ''})")
    constant = [j for j, r in enumerate(results) if r["constant"]]
    if constant:
        warnings.warn(
            f"every per-problem {what} is identical{columns(constant)}: the interval has width 0 and the "
            "standard error is 0, which says nothing about the uncertainty of the benchmark.",
            DegenerateIntervalWarning,
            stacklevel=3,
        )
    at_end = [j for j, r in enumerate(results) if r.get("constant_at_end")]
    if at_end:
        warnings.warn(
            f"every per-problem {what} is at the same end of its range{columns(at_end)} (e.g. every problem "
            "solved): the standard error is 0, so the interval rests on the score (Wilson) interval of that many "
            "problems all at that end, which is what so few problems can rule out (details['bound_methods']).",
            DegenerateIntervalWarning,
            stacklevel=3,
        )
    replaced = [j for j, r in enumerate(results) if any(r["details"].get("degenerate_tail", ()))]
    if replaced:
        first = results[replaced[0]]["details"]

        def bound_methods(d):
            return [m for pair in d["model_bound_methods"] for m in pair] if "model_bound_methods" in d else d["bound_methods"]

        sources = sorted({m for j in replaced for m in bound_methods(results[j]["details"])} - {"studentized"})
        if len(results) == 1:
            low_tail, high_tail = first["degenerate_tail"]
            bound = "both bounds" if (low_tail and high_tail) else ("the lower bound" if low_tail else "the upper bound")
            share = f"{max(first['degenerate_share']):.0%} of the resamples have"
        else:
            bound, share = "a bound", "too many resamples have"
        mover = "model_bound_methods" in first
        key = "model_bound_methods" if mover else "bound_methods"
        warnings.warn(
            f"the studentized bootstrap{' of a model' if mover else ''} cannot give {bound}{columns(replaced)}: "
            f"{share} (almost) no spread (per-problem {'value' if mover else what}s piled up at a few values such "
            "as 0 or 1), which makes the bootstrap-t bound infinite or meaningless; it comes from the "
            f"{' / '.join(sources) or 'studentized'} interval instead (details['{key}'] names the method of each bound).",
            IntervalMethodWarning,
            stacklevel=3,
        )
    infinite = [j for j, r in enumerate(results) if r["details"].get("degenerate") == "infinite bound"]
    if infinite:
        warnings.warn(
            f"the interval has an infinite bound{columns(infinite)}"
            + (", clipped to the range of the values" if any(results[j]["details"].get("clipped") for j in infinite) else "")
            + ": it says nothing about the uncertainty on that side.",
            DegenerateIntervalWarning,
            stacklevel=3,
        )


def _warn_few_clusters(n_clusters: int | None) -> None:
    if n_clusters is not None and n_clusters < FEW_CLUSTERS:
        warnings.warn(
            f"only {n_clusters} clusters: with fewer than {FEW_CLUSTERS} clusters every cluster-robust interval "
            "is unreliable (Cameron & Miller 2015): 'clustered-t' and the cluster bootstrap are usually too "
            "narrow, and the default interval then mostly rests on its wide score fallback; treat the interval "
            "as rough, or report per-cluster results.",
            IntervalMethodWarning,
            stacklevel=3,
        )


def mean_ci(
    values: ArrayLike,
    *,
    clusters: ArrayLike | None = None,
    method: str = DEFAULT_INTERVAL_METHOD,
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    rng: int | np.random.Generator | None = None,
    bounds: str | tuple[float, float] | None = "auto",
    max_chunk_elements: int = DEFAULT_MAX_CHUNK_ELEMENTS,
) -> IntervalResult | list[IntervalResult]:
    r"""Mean of per-problem values with a confidence interval that treats the problem as the unit.

    .. math:: \hat\theta = \frac{1}{N}\sum_{j=1}^{N} v_j, \qquad
              \widehat{SE}_t = \frac{s_v}{\sqrt N}, \qquad
              \widehat{SE}_{cl} = \frac{1}{N}\sqrt{\frac{C}{C-1}\sum_c\Big(\sum_{j\in c}(v_j-\hat\theta)\Big)^2}

    The default ``"studentized"`` interval is
    :math:`[\hat\theta - t^*_{1-\alpha/2}\widehat{SE},\ \hat\theta - t^*_{\alpha/2}\widehat{SE}]`
    with :math:`t^*` the bootstrap distribution of
    :math:`(\hat\theta^* - \hat\theta)/\widehat{SE}^*` (see the module docstring for every method);
    values in [0, 1] (or in an explicit ``bounds`` range) are studentized on the arcsine scale
    :math:`\arcsin\sqrt{\theta}` and the interval is mapped back, and 0/1 values (also all 0 or
    all 1) get the Wilson score interval (``details["scale"]``). A tail of :math:`t^*` made
    degenerate by values piled up at one value (e.g. 37 of 40 pass@8 values at 1) is replaced by
    a Wilson score bound with the Bernoulli worst-case effective sample size, with an
    :class:`~kpass.metrics.IntervalMethodWarning` (module docstring, "Degenerate bootstrap-t
    tails"): the interval is always finite and never [0, 1] by clipping an infinity.

    Parameters
    ----------
    values : array_like of float, shape (N,) or (N, K)
        Per-problem values (e.g. ``pass_at_k(n, c, k)``), one row per problem; K columns are K
        metrics on the same problems. Each column is resampled on its own (its problems in its
        own canonical order, from the same seed), so a column's interval is what a call with
        that column alone gives, up to rounding.
    clusters : array_like, shape (N,), optional
        Cluster label of each problem (passage, subject, template). With clusters the standard
        error is clustered and the bootstrap resamples whole clusters. At least 2 clusters.
    method : {"studentized", "t", "clustered-t", "bootstrap", "bca"}, default: "studentized"
        Interval method. ``"t"`` refuses ``clusters`` (use ``"clustered-t"``).
    confidence_level : float, default: 0.95
        In the open interval (0, 1).
    n_resamples : int, default: 10_000
        Bootstrap resamples B (ignored by ``"t"`` and ``"clustered-t"``).
    rng : int, numpy.random.Generator or None
        Seed or generator for the bootstrap; ``None`` draws fresh entropy and records it in
        ``details["seed"]`` so that the result can be reproduced.
    bounds : "auto", None or (float, float), default: "auto"
        Range to clip the interval to. ``"auto"``: [0, 1] when every value lies in [0, 1],
        else no clipping. ``details["clipped"]`` reports whether clipping changed the interval.
        An explicit range that holds every value is also the range of the score fallback.
    max_chunk_elements : int, default: 2**23
        Bound on the size of one chunk of resampling draws (``B_chunk * N``).

    Returns
    -------
    IntervalResult or list of IntervalResult
        One result for 1-D ``values``, a list of K results for 2-D ``values``.

    Raises
    ------
    ValueError
        Empty input, NaN or infinity, fewer than 2 problems, a single cluster, ``clusters`` of
        the wrong length or with missing labels, ``confidence_level`` outside (0, 1), an unknown
        ``method``, ``"t"`` with clusters or ``"clustered-t"`` without.
    TypeError
        Non-numeric values, an ``rng`` that is not a seed or Generator.

    Warns
    -----
    DegenerateIntervalWarning
        Every value of a column is identical (interval of width 0, standard error 0; under the
        default, values all at one end of their range, e.g. every problem solved, give the score
        interval of that many problems instead), or a bound is infinite (only possible for values
        without a known range and a standard error of 0).
    IntervalMethodWarning
        A bound of the studentized interval came from its score (or t) fallback because the
        bootstrap-t tail was degenerate (``details["bound_methods"]``), or there are fewer
        than 10 clusters.

    Notes
    -----
    The clustered standard error equals ``inspect_ai.scorer.stderr(cluster=...)`` and the
    ``"t"`` standard error equals ``sd(ddof=1)/sqrt(N)`` (Miller 2024, arXiv:2411.00640: the SE
    of problem-level means already contains the within-problem sampling noise). Samples of a
    problem must be reduced to one value per problem first; never pass per-sample 0/1 outcomes
    of several samples per problem as separate rows (that is the "naive" interval, which covers
    far less than its nominal level; see the README coverage table).

    References
    ----------
    .. [1] E. Miller, arXiv:2411.00640 (2024).
    .. [2] A. C. Cameron and D. L. Miller, J. Human Resources 50(2) (2015).
    .. [3] B. Efron, JASA 82(397), 171-185 (1987).

    Examples
    --------
    >>> from kpass.metrics import mean_ci
    >>> r = mean_ci([1, 0, 1, 1, 0, 1, 0, 1, 1, 1], method="t")   # docs/spec.md ST1
    >>> round(r.estimate, 3), round(r.standard_error, 12)
    (0.7, 0.152752523165)
    >>> r = mean_ci([1, 1, 1, 0, 0, 1, 0, 1, 1, 0], clusters=[0, 0, 0, 1, 1, 2, 2, 2, 2, 3],
    ...             method="clustered-t")                         # docs/spec.md ST5
    >>> round(r.standard_error, 12), r.n_clusters, r.details["df"]
    (0.219089023002, 4, 3)
    >>> r = mean_ci([0.2, 0.9, 1.0, 1.0, 0.6, 1.0, 0.95, 0.3], rng=0)
    >>> r.method, r.low <= r.estimate <= r.high
    ('studentized', True)
    >>> r = mean_ci([1.0] * 39 + [0.0], rng=0)                 # 0/1 values: Wilson, 39 trials
    >>> round(r.low, 3), round(r.high, 3), r.details["bound_methods"]
    (0.864, 0.996, ('score', 'score'))
    """
    arr, one_d = _values_iv(values, "values")
    n, k = arr.shape
    design = _design_iv(n, clusters, method, confidence_level, n_resamples, max_chunk_elements, paired=False,
                        too_few=f"`values` has {n} problem; an interval needs at least 2 problems.")
    level, method, n_clusters = design.level, design.method, design.n_clusters
    # canonical order of the problems: the result does not depend on the order they were given in
    order = _canonical_order(arr)
    arr = arr[order]
    codes = None if design.codes is None else design.codes[order]
    in_unit = bool(((arr >= 0.0) & (arr <= 1.0)).all())
    bound_range = _bounds_iv(bounds, (0.0, 1.0) if in_unit else None)
    if bound_range is not None and not isinstance(bounds, str):  # #15: explicit bounds must hold the values
        outside = (arr < bound_range[0]) | (arr > bound_range[1])
        if outside.any():
            row = int(np.flatnonzero(outside.any(axis=1))[0])
            raise ValueError(f"`values` must lie within `bounds` {bound_range}; problem {int(order[row])} has "
                             f"{float(arr[row][outside[row]][0])!r}.")
    # range of the metric for the score-type fallback: [0, 1], or an explicit range holding every value
    value_range = (0.0, 1.0) if in_unit else None
    if value_range is None and bound_range is not None and not isinstance(bounds, str):
        if bool(((arr >= bound_range[0]) & (arr <= bound_range[1])).all()):
            value_range = bound_range
    fallback = _score_fallback(arr, codes, n_clusters, value_range) if method == "studentized" else None
    results = _interval_core(arr, codes, n_clusters, method, level, design.n_resamples, rng, bound_range,
                             design.max_chunk_elements, False, fallback, scale_range=value_range)
    _warn_few_clusters(n_clusters)
    _warn_degenerate(results, "value")
    out = [
        IntervalResult(
            estimate=r["estimate"],
            low=r["low"],
            high=r["high"],
            standard_error=r["standard_error"],
            confidence_level=level,
            n_problems=n,
            n_clusters=n_clusters,
            method=method,
            details=r["details"],
        )
        for r in results
    ]
    return out[0] if one_d else out


# ----------------------------------------------------------------------------------------------
# paired comparison
# ----------------------------------------------------------------------------------------------


def _match_ids(ids_a: Any, ids_b: Any, n_a: int, n_b: int, intersect: bool):
    """Positions in a and b of the common ids (in a's order) and the unmatched ids."""
    codes_a_raw = _ids_iv(ids_a, "problem_ids_a", n_a)
    codes_b_raw = _ids_iv(ids_b, "problem_ids_b", n_b)
    index_b = {v: i for i, v in enumerate(codes_b_raw)}
    set_a = set(codes_a_raw)
    pos_a = [i for i, v in enumerate(codes_a_raw) if v in index_b]
    pos_b = [index_b[codes_a_raw[i]] for i in pos_a]
    only_a = tuple(v for v in codes_a_raw if v not in index_b)
    only_b = tuple(v for v in codes_b_raw if v not in set_a)
    if (only_a or only_b) and not intersect:
        parts = []
        if only_a:
            parts.append(f"{len(only_a)} id(s) only in `problem_ids_a`: {list(only_a[:MAX_REPORTED])}{' ...' if len(only_a) > MAX_REPORTED else ''}")
        if only_b:
            parts.append(f"{len(only_b)} id(s) only in `problem_ids_b`: {list(only_b[:MAX_REPORTED])}{' ...' if len(only_b) > MAX_REPORTED else ''}")
        raise ValueError(
            "the two models were not run on the same problems; " + "; ".join(parts)
            + ". Pass intersect=True to compare on the common problems (the result reports the dropped ids)."
        )
    return np.asarray(pos_a, dtype=np.int64), np.asarray(pos_b, dtype=np.int64), only_a, only_b


def _ids_iv(ids: Any, name: str, n: int) -> list[Any]:
    if isinstance(ids, (str, bytes)):
        raise TypeError(f"`{name}` must be a sequence of problem ids; got the string {ids!r}.")
    arr = np.asarray(ids, dtype=object)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"`{name}` must have one id per problem ({n}); got shape {arr.shape}.")
    id_list = [v.item() if isinstance(v, np.generic) else v for v in arr.tolist()]
    seen: dict[Any, int] = {}
    duplicates = []
    for v in id_list:
        if v in seen:
            duplicates.append(v)
        seen[v] = 1
    if duplicates:
        raise ValueError(f"`{name}` has duplicated ids: {duplicates[:MAX_REPORTED]}; each problem must appear once.")
    return id_list


def paired_difference(
    a: ArrayLike,
    b: ArrayLike,
    *,
    problem_ids_a: Sequence[Any] | None = None,
    problem_ids_b: Sequence[Any] | None = None,
    intersect: bool = False,
    clusters: ArrayLike | None = None,
    method: str = DEFAULT_PAIRED_METHOD,
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    rng: int | np.random.Generator | None = None,
    bounds: str | tuple[float, float] | None = "auto",
    max_chunk_elements: int = DEFAULT_MAX_CHUNK_ELEMENTS,
) -> PairedResult | list[PairedResult]:
    r"""Paired difference of two models on the same problems: ``mean(a) - mean(b)``.

    The standard error is that of the per-problem differences :math:`d_j = a_j - b_j`
    (clustered if ``clusters`` is given), so problem difficulty, shared by both models, cancels:

    .. math:: \widehat{SE}(\bar d) = \frac{s_d}{\sqrt N}, \qquad
              s_d^2 = s_a^2 + s_b^2 - 2 r_{ab} s_a s_b

    which is much smaller than the unpaired :math:`\sqrt{s_a^2/N + s_b^2/N}` when the
    correlation :math:`r_{ab}` of the two models' per-problem values is high (Miller 2024,
    section 4). The default interval, ``"mover"``, combines the two models' studentized limits
    (same resamples; module docstring) with that correlation (Zou & Donner 2008):

    .. math:: L = \bar d - \sqrt{(\hat\theta_a - l_a)^2 + (u_b - \hat\theta_b)^2
              - 2r(\hat\theta_a - l_a)(u_b - \hat\theta_b)}

    and :math:`U` likewise; in the coverage study it covers 94.1-97.2% in every paired cell of
    independent problems with N >= 30 (93.9-96.0% with C >= 30 clusters), where the studentized
    bootstrap of the :math:`d_j` covers 89.9-96.1% (below 93% for paired pass@8 at N = 30).
    Every other method
    (``"studentized"``, ``"t"``, ...) is :func:`mean_ci` of the :math:`d_j`.

    Parameters
    ----------
    a, b : array_like of float, shape (N,) or (N, K)
        Per-problem values of model A and model B (K metrics at once for 2-D input).
    problem_ids_a, problem_ids_b : sequence, optional
        Problem ids of the rows of ``a`` and ``b``. When given (both), rows are matched by id
        (``b`` is reordered to ``a``'s order); otherwise row j of ``a`` and of ``b`` must be the
        same problem and the lengths must agree.
    intersect : bool, default: False
        If the id sets differ: ``False`` raises a ``ValueError`` naming the unmatched ids,
        ``True`` compares on the common problems and reports the dropped ids in the result.
    clusters : array_like, shape (N,), optional
        Cluster label per row of ``a`` (aligned with ``problem_ids_a``).
    method : {"mover", "studentized", "t", "clustered-t", "bootstrap", "bca"}, default: "mover"
        ``"mover"``: the two models' studentized limits combined (module docstring);
        the others: :func:`mean_ci` of the differences.
    confidence_level, n_resamples, rng, max_chunk_elements
        As in :func:`mean_ci`.
    bounds : "auto", None or (float, float), default: "auto"
        ``"auto"``: [-1, 1] when every value of ``a`` and ``b`` lies in [0, 1].

    Returns
    -------
    PairedResult or list of PairedResult
        Estimate, interval, standard error, correlation, two-sided p-value of "no difference"
        (the one the interval shown implies: one minus the largest level whose interval of the
        same method excludes 0; the t test for ``"t"``/``"clustered-t"``), the means of both
        models and what was dropped. For
        ``"mover"``, ``details`` also holds ``interval_a``, ``interval_b`` and
        ``correlation_of_means``.

    Raises
    ------
    ValueError
        Unmatched ids without ``intersect=True``, duplicated ids, mismatched lengths or column
        counts, and every error of :func:`mean_ci`.

    Warns
    -----
    DegenerateIntervalWarning
        All differences identical (e.g. a model compared with itself: estimate 0, SE 0,
        p-value 1; under ``"mover"`` one model all 1 and the other all 0 keeps the MOVER of
        their score intervals), or a constant model (correlation undefined, reported as NaN).
    IntervalMethodWarning
        A bound rests on a score fallback because a bootstrap-t tail was degenerate (values
        piled up at 0 or 1 but not all 0/1, see :func:`mean_ci`), or there are fewer than 10
        clusters. 0/1 values take their score (Wilson) limits without a warning.

    Examples
    --------
    >>> from kpass.metrics import paired_difference
    >>> a = [0.9, 0.5, 0.7, 0.2, 1.0, 0.4, 0.8, 0.6]
    >>> b = [0.8, 0.4, 0.7, 0.1, 0.9, 0.2, 0.8, 0.5]
    >>> r = paired_difference(a, b, method="t")
    >>> round(r.estimate, 4), round(r.standard_error, 4), round(r.correlation, 3)
    (0.0875, 0.0227, 0.98)
    >>> r.p_value < 0.01
    True
    >>> r = paired_difference(a, b, rng=0)                     # default: MOVER
    >>> r.method, r.low < r.estimate < r.high, r.p_value < 0.05
    ('mover', True, True)
    >>> r = paired_difference([0.5, 1.0, 0.0], [0.75, 0.25], problem_ids_a=["p1", "p2", "p3"],
    ...                       problem_ids_b=["p2", "p3"], intersect=True, method="t")
    >>> r.n_problems, r.unmatched_ids_a, r.estimate
    (2, ('p1',), 0.0)
    """
    arr_a, one_d_a = _values_iv(a, "a")
    arr_b, one_d_b = _values_iv(b, "b")
    if one_d_a != one_d_b or arr_a.shape[1] != arr_b.shape[1]:
        raise ValueError(f"`a` and `b` must have the same number of columns; got shapes {np.shape(a)} and {np.shape(b)}.")
    if not isinstance(intersect, (bool, np.bool_)):
        raise TypeError(f"`intersect` must be True or False; got {intersect!r}.")
    only_a: tuple[Any, ...] = ()
    only_b: tuple[Any, ...] = ()
    if (problem_ids_a is None) != (problem_ids_b is None):
        raise ValueError("give both `problem_ids_a` and `problem_ids_b`, or neither (then rows are matched by position).")
    if problem_ids_a is not None:
        pos_a, pos_b, only_a, only_b = _match_ids(problem_ids_a, problem_ids_b, arr_a.shape[0], arr_b.shape[0], bool(intersect))
        if clusters is not None:
            clusters_arr = np.asarray(clusters, dtype=object)
            if clusters_arr.ndim != 1 or clusters_arr.shape[0] != arr_a.shape[0]:
                raise ValueError(f"`clusters` must have one label per row of `a` ({arr_a.shape[0]}); got shape {clusters_arr.shape}.")
            clusters = clusters_arr[pos_a]
        arr_a, arr_b = arr_a[pos_a], arr_b[pos_b]
    elif arr_a.shape[0] != arr_b.shape[0]:
        raise ValueError(
            f"`a` has {arr_a.shape[0]} problems and `b` has {arr_b.shape[0]}; without problem ids the rows must be "
            "the same problems. Pass problem_ids_a/problem_ids_b (and intersect=True to drop unmatched ones)."
        )
    n, k = arr_a.shape
    design = _design_iv(n, clusters, method, confidence_level, n_resamples, max_chunk_elements, paired=True,
                        too_few=f"only {n} problem(s) in common; a paired interval needs at least 2.")
    level, method, n_clusters = design.level, design.method, design.n_clusters
    # canonical order of the problems, by both models' values (every method sees a and b)
    order = _canonical_order(np.concatenate([arr_a, arr_b], axis=1))
    arr_a, arr_b = arr_a[order], arr_b[order]
    codes = None if design.codes is None else design.codes[order]
    in_unit = bool(((arr_a >= 0) & (arr_a <= 1)).all() and ((arr_b >= 0) & (arr_b <= 1)).all())
    bound_range = _bounds_iv(bounds, (-1.0, 1.0) if in_unit else None)
    differences = arr_a - arr_b
    fallback = _paired_score_fallback(arr_a, arr_b, codes, n_clusters) if method == "studentized" and in_unit else None
    models = (arr_a, arr_b, (0.0, 1.0) if in_unit else None) if method == "mover" else None
    results = _interval_core(
        differences, codes, n_clusters, method, level, design.n_resamples, rng, bound_range, design.max_chunk_elements,
        True, fallback, models
    )
    _warn_few_clusters(n_clusters)
    _warn_degenerate(results, "difference")
    mean_a = arr_a.mean(axis=0)
    mean_b = arr_b.mean(axis=0)
    sd_a = arr_a.std(axis=0)
    sd_b = arr_b.std(axis=0)
    constant_model = (np.ptp(arr_a, axis=0) == 0) | (np.ptp(arr_b, axis=0) == 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        covariance = ((arr_a - mean_a) * (arr_b - mean_b)).mean(axis=0)
        correlation = np.where(constant_model, np.nan, np.clip(covariance / (sd_a * sd_b), -1.0, 1.0))
    if constant_model.any():
        warnings.warn(
            "one model's per-problem values are constant"
            + ("" if k == 1 else f" (columns {np.flatnonzero(constant_model)[:MAX_REPORTED].tolist()})")
            + ": their correlation is undefined and is reported as NaN.",
            DegenerateIntervalWarning,
            stacklevel=2,
        )
    out = []
    for j, r in enumerate(results):
        out.append(
            PairedResult(
                estimate=r["estimate"],
                low=r["low"],
                high=r["high"],
                standard_error=r["standard_error"],
                confidence_level=level,
                n_problems=n,
                n_clusters=n_clusters,
                method=method,
                details=r["details"],
                estimate_a=float(mean_a[j]),
                estimate_b=float(mean_b[j]),
                correlation=float(correlation[j]),
                p_value=r["p_value"],
                n_unmatched=len(only_a) + len(only_b),
                unmatched_ids_a=only_a,
                unmatched_ids_b=only_b,
            )
        )
    return out[0] if one_d_a else out


# ----------------------------------------------------------------------------------------------
# Wilson
# ----------------------------------------------------------------------------------------------


def wilson_interval(
    n_correct: ArrayLike, n_samples: ArrayLike, *, confidence_level: float = 0.95
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Wilson score interval for each problem's success rate :math:`c/n` (Wilson 1927).

    .. math::

        \frac{\hat p + \frac{z^2}{2n}}{1 + \frac{z^2}{n}} \pm
        \frac{z}{1 + \frac{z^2}{n}}\sqrt{\frac{\hat p(1-\hat p)}{n} + \frac{z^2}{4n^2}},
        \qquad \hat p = c/n,\ z = \Phi^{-1}\big(1 - \tfrac{1-\text{level}}{2}\big)

    Parameters
    ----------
    n_correct : array_like of int, shape (N,)
        Correct samples per problem, ``0 <= c <= n``.
    n_samples : array_like of int, shape (N,)
        Samples per problem, ``n >= 1``.
    confidence_level : float, default: 0.95
        In the open interval (0, 1).

    Returns
    -------
    low, high : ndarray of float64, shape (N,) (0-D for scalar input)
        Bounds, always within [0, 1].

    Notes
    -----
    This is an interval for one problem's own success probability from its ``n`` samples, which
    are independent given the problem. It is not an interval for a benchmark mean: use
    :func:`mean_ci` on per-problem values for that.

    References
    ----------
    .. [1] E. B. Wilson, JASA 22(158), 209-212 (1927).

    Examples
    --------
    >>> from scipy.stats import norm
    >>> from kpass.metrics import wilson_interval
    >>> low, high = wilson_interval(8, 10, confidence_level=2 * norm.cdf(1.96) - 1)  # z = 1.96
    >>> round(float(low), 12), round(float(high), 12)                                   # docs/spec.md ST19
    (0.490156846721, 0.943319052019)
    >>> wilson_interval([0, 5], [10, 5])[1].round(4)
    array([0.2775, 1.    ])
    """
    n, c, scalar_input = check_counts(n_samples, n_correct)
    zero = n == 0
    if zero.any():
        raise ValueError(f"`n_samples` must be >= 1 for a Wilson interval; zero at {describe_offenders(zero, n, value_name='n_samples')}.")
    level = _confidence_iv(confidence_level)
    z = float(special.ndtri(1.0 - (1.0 - level) / 2.0))
    nf = n.astype(np.float64)
    low, high = _wilson_score_bounds(c / nf, nf, z)  # exactly 0 at c = 0 and 1 at c = n
    if scalar_input:
        return np.float64(low[0]), np.float64(high[0])
    return low, high
