r"""Confidence intervals for benchmark means, with the problem (or cluster) as the unit.

A benchmark score is the unweighted mean of per-problem values :math:`v_j` (pass@k, G-Pass@k,
cons@k, ... of problem :math:`j`). The samples of one problem are correlated, so the unit of
resampling and of the standard error is the problem, or a whole cluster of problems (passages,
subjects, templates) when ``clusters`` is given (Miller 2024 [1]_; docs/spec.md section 7).

Methods (``method=``)
---------------------
``"auto"`` (default; ``"studentized"`` is its deprecated name, with the same numbers)
    A policy (:mod:`._interval_policy`, :func:`~._interval_policy.single_default`) that picks one rule per
    column and names it in ``IntervalResult.rule`` (docs/intervals.md, "Rules"). Its core is the
    studentized (bootstrap-t) interval [3]_: resample problems (or clusters), compute
    :math:`t^* = (\hat\theta^* - \hat\theta) / \widehat{SE}^*` with the analytic standard error of
    each resample (the t standard error, or the clustered one), and invert the bootstrap
    distribution of :math:`t^*`:
    :math:`[\hat\theta - t^*_{1-\alpha/2}\,\widehat{SE},\ \hat\theta - t^*_{\alpha/2}\,\widehat{SE}]`.
    Chosen by the coverage study (``scripts/coverage_study.py``, docs/intervals.md): it corrects
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
    proportion). With 10 or more clusters the other values in [0, 1] take the clustered score
    interval (:func:`~._single_score.apply_clustered_score`: Wilson's with the design-effect
    size of the clustered SE and C - 1 degrees of freedom); with 10 or more independent problems
    they take that bound (N - 1 degrees of freedom) on the side toward the nearer end and the wider
    of it and the arcsine bootstrap-t's on the other side, both sides the wider within 1.5
    problems' worth of the end (:func:`~._single_score.apply_problem_score`: the bootstrap-t's
    end-side bound over-covered near an end). ``details["scale"]`` says which of "arcsine",
    "identity" (values without a known range: the raw bootstrap-t), "score (0/1 values)", "score
    (effective size)" or "score (clustered)" applied.
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
    seeds). 0/1 values take their Wilson interval (Newcombe's method), and the degenerate-tail
    fallback applies per model as in ``"auto"``. Each model's limits carry that model's
    skewness (a strong model's pass@8 piles up at 1 and its few failures decide the difference),
    which the studentized bootstrap of the :math:`d_j = a_j - b_j` misses (89.9-92.7% for paired
    pass@8 at N = 30). For two almost identical models its width does not shrink below the asymmetry of the per-model limits, and two
    models near the same end have limits lopsided on the same side, which MOVER does not let cancel
    (2.5-5x the t width at pass@1 near the ceiling). So for values in [0, 1] (#16) MOVER of the
    models sets the interval only where the differences are *saturated* (half or more of the
    differing problems differ by less than 0.05: :func:`~._score_intervals.saturated_differences`;
    then also the near-end split bound, :func:`~._score_intervals.near_end_split_bounds`, without
    clusters) and, without clusters, the two models' means do not both lie within 10% of the same
    end (:func:`~._score_intervals.within_share_of_same_end`: there the studentized bootstrap of
    the :math:`d_j`, drawn from the same resamples, widened to their t interval, replaces MOVER,
    whose two limits lie on the same side of their means; ``details["studentized_of_differences"]``),
    or with 10 to 29 clusters, unless both models are near the same end
    (:func:`~._score_intervals.near_same_end`: their limits are then the lopsided score bounds of a
    few clusters' worth, 2.5-10.7x the clustered t width); elsewhere it is the paired t interval of
    the :math:`d_j`. With 30 or more clusters, where either model is within 3 problems' worth of an
    end, MOVER's per-model limits are the two models' clustered score intervals, the side away from the
    end capped (:func:`~._score_intervals.clustered_model_limits`), not their studentized legs. Every bound is widened to the split score interval of the gains
    :math:`\max(d_j, 0)` and losses :math:`\max(-d_j, 0)` where that is wider
    (:func:`~._score_intervals.split_score_bounds`). *0/1 values of both models* (pass@1 from one
    sample, pass^4 from four, any binary scorer; the differences are then a trinomial of gains,
    losses and ties) take Bonett & Price's [11]_ matched-pairs interval alone
    (:func:`~._score_intervals.matched_pairs_bounds`: one added to each discordant count and two to
    the pairs, with the design-effect size under clusters), chosen by its exact coverage over
    trinomials (at least 93.8% at N = 10-200, where Tango's score interval falls to 93.0%, Agresti
    & Min's to 90.8% and the paired t to 87.7%); the t interval widened to the split score was
    beyond 1.3x the narrowest covering method in 25 of the coverage study's 42 0/1 cells (N >= 30).
    ``details["paired_bound_methods"]`` names each bound's source (docs/intervals-edges.md). The
    few-cluster rule keeps the two models' score intervals alone. The p-value inverts the interval.
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
does not depend on the other columns: ``mean_ci_columns(values)[j]`` equals ``mean_ci(values[:, j])``
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
the resample's own variance. When more than :math:`\alpha/4` of the resamples are degenerate on
the side that sets a bound (:math:`\alpha/2` for MOVER's per-model limits; in between, the quantile
sits among near-degenerate resamples whose :math:`t^*` is huge but finite; ``THRESHOLDS.single_degenerate_fraction``),
the bootstrap-t distribution says nothing about that bound, and:

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
  (see ``"auto"``), with the design-effect size :math:`\min(\hat p(1-\hat p)/\widehat{SE}^2, N)`
  since their variance is the Bernoulli one: 39 of 40 at 1 gives [0.864, 0.996]
  (Clopper-Pearson [0.868, 0.999], Wilson [0.871, 0.996]), where the raw bootstrap-t bound was
  infinite;
- the other bound is the wider of the bootstrap-t and the score bound;
- values without a known range use the t (or clustered-t) bounds instead, and
  :func:`paired_difference` with ``method="auto"`` uses the MOVER combination of the two
  models' score intervals;
- ``details["bound_methods"]`` names the method of each bound, ``details["degenerate_tail"]`` and
  ``details["degenerate_share"]`` say which tail was degenerate and how many resamples were; an
  :class:`~kpass.metrics.IntervalMethodWarning` says so only for a method other than the
  function's default (the default's replaced tails are part of the interval the coverage study
  measures, and cover best; docs/intervals-edges.md, "Warnings");
  the p-value of :func:`paired_difference` inverts the interval with its fallback bounds, so
  that it agrees with the interval shown (see "P-values").

With fewer than 10 clusters (:data:`FEW_CLUSTERS`) every cluster-robust interval is unreliable
(Cameron & Miller [2]_, section VI: the clustered SE and the cluster bootstrap are too narrow);
:func:`mean_ci` and :func:`paired_difference` then warn (``IntervalMethodWarning``) whatever the
method. The default studentized interval stays finite there (its resamples are then mostly
degenerate and its bounds come from the score interval with C - 1 degrees of freedom; at
C = 10 the coverage study has the default at 94.5-98.5% where ``"clustered-t"`` covers 80.7-94.0%, and
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
.. [11] D. G. Bonett and R. M. Price, "Adjusted Wald Confidence Interval for a Difference of
   Binomial Proportions Based on Paired Data", Journal of Educational and Behavioral Statistics
   37(4), 479-488 (2012).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._interval_types import ColumnInterval
from ._interval_policy import PAIRED_RULES, SINGLE_RULES, THRESHOLDS, SingleFacts, differences_default, single_default
from ._bootstrap import DEFAULT_N_RESAMPLES
from ._interval_engine import CoreRequest, interval_core
from ._resampling import DEFAULT_MAX_CHUNK_ELEMENTS, bootstrap_weights, canonical_order
from ._interval_warnings import (
    columns_note,
    warn_degenerate,
    warn_few_differences,
    warn_few_off_end,
    warn_tiny_difference_share,
)
from ._result import IntervalResult, PairedResult
from ._score_intervals import (
    at_range_ends,
    FEW_CLUSTERS,
    paired_score_fallback,
    score_fallback,
    wilson_interval,
)
from ._single_score import apply_clustered_score, apply_near_end, apply_problem_score
from ._validation import check_bounds, check_design, check_values, check_within_bounds, match_ids
from ._warnings import DegenerateIntervalWarning, IntervalMethodWarning

__all__ = [
    "DEFAULT_INTERVAL_METHOD",
    "DEFAULT_MAX_CHUNK_ELEMENTS",
    "DEFAULT_N_RESAMPLES",
    "DEFAULT_PAIRED_METHOD",
    "FEW_CLUSTERS",
    "INTERVAL_METHODS",
    "PAIRED_INTERVAL_METHODS",
    "bootstrap_weights",
    "few_clusters_note",
    "mean_ci",
    "mean_ci_columns",
    "paired_difference",
    "paired_difference_columns",
    "wilson_interval",
]

#: Interval methods understood by :func:`mean_ci` and :func:`paired_difference`. ``"studentized"`` is the
#: deprecated name of ``"auto"`` (the same numbers; results say ``"auto"``).
INTERVAL_METHODS: tuple[str, ...] = ("auto", "t", "clustered-t", "bootstrap", "bca", "studentized")

#: The default method, chosen by the coverage study (scripts/coverage_study.py; docs/intervals.md): the
#: policy of :func:`~._interval_policy.single_default`, whose rule each result names (``IntervalResult.rule``).
DEFAULT_INTERVAL_METHOD = "auto"

#: Deprecated method names and the method they stand for.
DEPRECATED_METHODS: dict[str, str] = {"studentized": "auto"}

#: Methods of :func:`paired_difference`: those of :func:`mean_ci` and "mover" (two models' intervals combined).
PAIRED_INTERVAL_METHODS: tuple[str, ...] = (*INTERVAL_METHODS, "mover")

#: The default method of :func:`paired_difference`, chosen by the coverage study.
DEFAULT_PAIRED_METHOD = "mover"




def _warn_sparse_differences(differences, in_unit: bool = True, warn: bool = True) -> list[dict[str, Any]]:
    """Warn when a paired difference rests on a handful of problems or on tiny differences only.

    ``details["n_differing"]`` counts the problems where the two models differ and
    ``details["largest_difference"]`` is the largest :math:`|d_j|`. With ``warn`` (every method but
    the default on values in [0, 1]), ``details["sparse_differences"]`` is set and an
    ``IntervalMethodWarning`` says so when fewer than :attr:`~._interval_policy.IntervalThresholds.sparse_differences` problems (and under
    a quarter) differ, or, for values in [0, 1], when every difference is below
    :attr:`~._interval_policy.IntervalThresholds.tiny_difference` (``details["tiny_differences"]``). The default's own handling of such
    differences is in ``details["saturated_differences"]`` and ``details["paired_bound_methods"]``.
    """
    n = differences.shape[0]
    differing = (differences != 0.0).sum(axis=0)
    largest = np.abs(differences).max(axis=0)
    few = (differing > 0) & (differing < THRESHOLDS.sparse_differences) & (differing < 0.25 * n)
    tiny = (differing > 0) & (largest < THRESHOLDS.tiny_difference) & in_unit
    k = differences.shape[1]
    entries: list[dict[str, Any]] = [{"n_differing": int(differing[j]), "largest_difference": float(largest[j])}
                                     for j in range(k)]
    if not warn:
        return entries
    for j in range(k):
        if few[j] or tiny[j]:
            entries[j]["sparse_differences"] = True
        if tiny[j]:
            entries[j]["tiny_differences"] = True
    one = k == 1
    few_columns = np.flatnonzero(few).tolist()
    tiny_columns = np.flatnonzero(tiny & ~few).tolist()
    messages = []
    if few_columns:
        count = f"{int(differing[few_columns[0]])} of {n} problems" if one else f"fewer than {THRESHOLDS.sparse_differences} problems"
        messages.append((few_columns, f"the two models differ on only {count}", "the paired interval rests on those few "
                         "problems and can miss the true difference more often than its level says (the coverage study's "
                         "sparse-gain regime); treat it as rough, or compare on more problems."))
    if tiny_columns:
        size = f"{float(largest[tiny_columns[0]]):.3g}" if one else f"less than {THRESHOLDS.tiny_difference}"
        messages.append((tiny_columns, f"the two models' per-problem values differ by at most {size}", "the paired "
                         "interval is as narrow as those small differences and cannot see a larger difference on problems "
                         "outside the sample (a saturated metric such as pass@8 near 1 for both); treat it as rough."))
    for columns, head, tail in messages:
        warnings.warn(f"{head}{columns_note(columns, k)}: {tail}", IntervalMethodWarning, stacklevel=4)
    return entries


def few_clusters_note(n_clusters: int | None, method: str | None = None) -> str | None:
    """The note every kpass path attaches to an interval with fewer than :data:`FEW_CLUSTERS` clusters.

    One text for :func:`mean_ci` / :func:`paired_difference` (as an ``IntervalMethodWarning``),
    the CLI's notes, lm-eval's log and Inspect's metrics, so that every path says the same thing.

    Parameters
    ----------
    n_clusters : int or None
        Number of clusters (``None``: no clusters, no note).
    method : str, optional
        The interval method, or the rule a result names (``IntervalResult.rule``); ``None``, a default
        (``"auto"``, ``"mover"``) or one of the defaults' rules says that the few-cluster rule applied.

    Returns
    -------
    str or None
        The note, or ``None`` with no clusters or at least :data:`FEW_CLUSTERS` of them.

    Examples
    --------
    >>> from kpass.metrics import few_clusters_note
    >>> few_clusters_note(30) is None
    True
    >>> few_clusters_note(3)[:44]
    'only 3 clusters: with fewer than 10 clusters'
    """
    if n_clusters is None or n_clusters >= FEW_CLUSTERS:
        return None
    default = (DEFAULT_INTERVAL_METHOD, DEFAULT_PAIRED_METHOD, *SINGLE_RULES, *PAIRED_RULES)  # a row names its rule
    if method is None or DEPRECATED_METHODS.get(method, method) in default:
        how = ("kpass's default interval is then the few-cluster score interval (Wilson-type, with the "
               f"design-effect size and {n_clusters - 1} degrees of freedom; its standard error is never below "
               "that of as many independent 0/1 problems)")
    else:
        how = f"'{method}' is then usually too narrow (the default interval uses the few-cluster score interval)"
    return (f"only {n_clusters} clusters: with fewer than {FEW_CLUSTERS} clusters every cluster-robust interval "
            f"is unreliable (Cameron & Miller 2015); {how}. Treat the interval as rough, or report per-cluster results.")


def _warn_few_clusters(n_clusters: int | None, method: str) -> None:
    note = few_clusters_note(n_clusters, method)
    if note is not None:
        warnings.warn(note, IntervalMethodWarning, stacklevel=4)


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
) -> IntervalResult:
    r"""Mean of per-problem values with a confidence interval that treats the problem as the unit.

    .. math:: \hat\theta = \frac{1}{N}\sum_{j=1}^{N} v_j, \qquad
              \widehat{SE}_t = \frac{s_v}{\sqrt N}, \qquad
              \widehat{SE}_{cl} = \frac{1}{N}\sqrt{\frac{C}{C-1}\sum_c\Big(\sum_{j\in c}(v_j-\hat\theta)\Big)^2}

    The default ``"auto"`` interval (``"studentized"`` is its deprecated name) is
    :math:`[\hat\theta - t^*_{1-\alpha/2}\widehat{SE},\ \hat\theta - t^*_{\alpha/2}\widehat{SE}]`
    with :math:`t^*` the bootstrap distribution of
    :math:`(\hat\theta^* - \hat\theta)/\widehat{SE}^*` (see the module docstring for every method);
    values in [0, 1] (or in an explicit ``bounds`` range) are studentized on the arcsine scale
    :math:`\arcsin\sqrt{\theta}` and the interval is mapped back, and 0/1 values (also all 0 or
    all 1) get the Wilson score interval (``details["scale"]``). With 10 or more problems (or
    clusters) other values in [0, 1] take Wilson's bound with the design-effect size instead on
    the side toward the nearer end (both sides with clusters), and without clusters the wider of it
    and the bootstrap-t's on the other side (:func:`~._single_score.apply_problem_score`,
    :func:`~._single_score.apply_clustered_score`). A tail of :math:`t^*` made
    degenerate by values piled up at one value (e.g. 37 of 40 pass@8 values at 1) is replaced by
    a Wilson score bound with the Bernoulli worst-case effective sample size, with an
    :class:`~kpass.metrics.IntervalMethodWarning` (module docstring, "Degenerate bootstrap-t
    tails"): the interval is always finite and never [0, 1] by clipping an infinity.

    Parameters
    ----------
    values : array_like of float, shape (N,)
        Per-problem values (e.g. ``pass_at_k(n, c, k)``) of one metric, one per problem. For K
        metrics (or K simulated benchmarks) on the same problems at once, use
        :func:`mean_ci_columns`.
    clusters : array_like, shape (N,), optional
        Cluster label of each problem (passage, subject, template). With clusters the standard
        error is clustered and the bootstrap resamples whole clusters. At least 2 clusters.
    method : {"auto", "t", "clustered-t", "bootstrap", "bca"}, default: "auto"
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
        An explicit range must hold every value; a finite one is also the metric's range for the
        score rules and the near-end rule, even when every value lies in [0, 1], and one open on a
        side (``(0, inf)``) declares no range (the bootstrap-t on the raw scale).
    max_chunk_elements : int, default: 2**23
        Bound on the size of one chunk of resampling draws (``B_chunk * N``).

    Returns
    -------
    IntervalResult
        Always one result (:func:`mean_ci_columns` returns a list for 2-D values).

    Raises
    ------
    ValueError
        Empty input, 2-D values (use :func:`mean_ci_columns`), NaN or infinity, fewer than 2 problems, a single cluster, ``clusters`` of
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
        The mean lies within 30% of an end of its range and rests on 3 to 15 problems' worth off
        that end (``details["few_off_end"]``: such intervals missed about twice as often as the
        others of their coverage-study cell), or there are fewer than 10 clusters. A bound that
        came from the score fallback because the bootstrap-t tail was degenerate is recorded in
        ``details["bound_methods"]`` without a warning.

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
    >>> r.method, r.rule, r.low <= r.estimate <= r.high       # 8 problems: the arcsine bootstrap-t
    ('auto', 'bootstrap-t-arcsine', True)
    >>> r = mean_ci([1.0] * 39 + [0.0], rng=0)                 # 0/1 values: Wilson, 39 trials
    >>> round(r.low, 3), round(r.high, 3), r.rule, r.details["bound_methods"]
    (0.864, 0.996, 'wilson-deff', ('score', 'score'))
    """
    (result,) = _mean_ci(values, clusters=clusters, method=method, confidence_level=confidence_level, n_resamples=n_resamples,
                    rng=rng, bounds=bounds, max_chunk_elements=max_chunk_elements, one_column=True)
    return result


def mean_ci_columns(
    values: ArrayLike,
    *,
    clusters: ArrayLike | None = None,
    method: str = DEFAULT_INTERVAL_METHOD,
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    rng: int | np.random.Generator | None = None,
    bounds: str | tuple[float, float] | None = "auto",
    max_chunk_elements: int = DEFAULT_MAX_CHUNK_ELEMENTS,
) -> list[IntervalResult]:
    """:func:`mean_ci` of every column of ``values`` (shape ``(N, K)``, or ``(N,)`` as one column).

    Returns a list of K :class:`IntervalResult`, always a list. Each column is resampled on its own
    (its problems in its own canonical order, from the same seed), so ``mean_ci_columns(values)[j]``
    equals ``mean_ci(values[:, j])`` up to rounding; the resampling of all columns shares one
    pass, which is much faster than K calls. Parameters, errors and warnings as :func:`mean_ci`.

    Examples
    --------
    >>> from kpass.metrics import mean_ci_columns
    >>> [round(r.estimate, 2) for r in mean_ci_columns([[1.0, 0.5], [0.0, 0.5], [1.0, 1.0]], rng=0)]
    [0.67, 0.67]
    """
    return _mean_ci(values, clusters=clusters, method=method, confidence_level=confidence_level, n_resamples=n_resamples,
                    rng=rng, bounds=bounds, max_chunk_elements=max_chunk_elements, one_column=False)


def _mean_ci(values, *, clusters, method, confidence_level, n_resamples, rng, bounds, max_chunk_elements,
             one_column: bool) -> list[IntervalResult]:
    """The body of :func:`mean_ci` and :func:`mean_ci_columns` (a list of one result per column)."""
    arr, one_d = check_values(values, "values")
    if one_column and not one_d:
        raise ValueError(f"`values` has shape {np.shape(values)}: mean_ci takes the per-problem values of one "
                         "metric (shape (N,)); use mean_ci_columns for K columns at once (a list of K results).")
    n, k = arr.shape
    design = check_design(n, clusters, method, confidence_level, n_resamples, max_chunk_elements, paired=False, methods=INTERVAL_METHODS,
                        paired_methods=PAIRED_INTERVAL_METHODS, too_few=f"`values` has {n} problem; an interval needs at least 2 problems.")
    level, n_clusters = design.level, design.n_clusters
    method = DEPRECATED_METHODS.get(design.method, design.method)
    # canonical order of the problems: the result does not depend on the order they were given in
    order = canonical_order(arr)
    arr = arr[order]
    codes = None if design.codes is None else design.codes[order]
    in_unit = bool(((arr >= 0.0) & (arr <= 1.0)).all())
    bound_range = check_bounds(bounds, (0.0, 1.0) if in_unit else None)
    if bound_range is not None and not isinstance(bounds, str):  # #15: explicit bounds must hold the values
        check_within_bounds(arr, bound_range, order, "`values`", lambda given: f"problem {given}")
    # range of the metric for the score rules: an explicit finite range (it holds every value, checked above), else
    # [0, 1] when every value lies there; values in [0, 1] of a metric declared on [0, 10] are near its floor. A range
    # open on one side declares no range: the bootstrap-t on the raw scale, as for values outside [0, 1]
    if bound_range is not None and not isinstance(bounds, str):
        value_range = bound_range if bool(np.isfinite(bound_range[0]) and np.isfinite(bound_range[1])) else None
    else:
        value_range = (0.0, 1.0) if in_unit else None
    fallback = score_fallback(arr, codes, n_clusters, value_range) if method == "auto" else None
    request = CoreRequest(method, level, design.n_resamples, rng, bound_range, design.max_chunk_elements,
                          fallback=fallback, scale_range=value_range, few_clusters=few_clusters_note(n_clusters) is not None,
                          degenerate_fraction=THRESHOLDS.single_degenerate_fraction)
    results = interval_core(arr, codes, n_clusters, request)
    rules = np.full(k, method, dtype=object)
    if method == "auto":  # the policy's rule per column (_interval_policy.single_default)
        rules = _single_rules(arr, n_clusters, value_range)
        if value_range is not None:
            results = apply_clustered_score(results, rules == "clustered-score", arr, codes, n_clusters, value_range,
                                            level, bound_range)
            results = apply_problem_score(results, rules == "score-toward-end", arr, value_range, level, bound_range)
            near_end_rules = np.isin(rules, ("clustered-score", "score-toward-end", "bootstrap-t-arcsine"))
            results = apply_near_end(results, near_end_rules, arr, codes, n_clusters, value_range, level, bound_range)
    _warn_few_clusters(n_clusters, method)
    warn_degenerate(results, "value", replaced_tails=method != DEFAULT_INTERVAL_METHOD)
    warn_few_off_end(results)
    out = [
        IntervalResult(
            estimate=r.estimate,
            low=r.low,
            high=r.high,
            standard_error=r.standard_error,
            confidence_level=level,
            n_problems=n,
            n_clusters=n_clusters,
            method=method,
            rule=str(rules[j]),
            details=r.details,
        )
        for j, r in enumerate(results)
    ]
    return out


def _single_rules(arr, n_clusters: int | None, value_range: tuple[float, float] | None) -> NDArray[np.object_]:
    """The single-model default's rule of every column (:func:`~._interval_policy.single_default`)."""
    n, k = arr.shape
    constant = np.ptp(arr, axis=0) == 0
    at_ends = np.zeros(k, dtype=bool) if value_range is None else at_range_ends(arr, value_range)
    facts = [SingleFacts(n_problems=n, n_clusters=n_clusters, known_range=value_range is not None,
                         at_range_ends=bool(at_ends[j]), constant=bool(constant[j])) for j in range(k)]
    return np.array([single_default(f) for f in facts], dtype=object)


# ----------------------------------------------------------------------------------------------
# paired comparison
# ----------------------------------------------------------------------------------------------


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
) -> PairedResult:
    r"""Paired difference of two models on the same problems: ``mean(a) - mean(b)``.

    The standard error is that of the per-problem differences :math:`d_j = a_j - b_j`
    (clustered if ``clusters`` is given), so problem difficulty, shared by both models, cancels:

    .. math:: \widehat{SE}(\bar d) = \frac{s_d}{\sqrt N}, \qquad
              s_d^2 = s_a^2 + s_b^2 - 2 r_{ab} s_a s_b

    which is much smaller than the unpaired :math:`\sqrt{s_a^2/N + s_b^2/N}` when the
    correlation :math:`r_{ab}` of the two models' per-problem values is high (Miller 2024,
    section 4). The default interval, ``"mover"``, combines the two models' studentized limits
    (same resamples; with 30 or more clusters and a model near an end their clustered score limits;
    module docstring) with that correlation (Zou & Donner 2008):

    .. math:: L = \bar d - \sqrt{(\hat\theta_a - l_a)^2 + (u_b - \hat\theta_b)^2
              - 2r(\hat\theta_a - l_a)(u_b - \hat\theta_b)}

    and :math:`U` likewise, where the per-problem differences are saturated (most below 0.05) or
    there are 10 to 29 clusters (but for two models near the same end); elsewhere the paired t
    interval of the :math:`d_j`; saturated differences without clusters of two models whose means
    both lie within 10% of the same end take the studentized bootstrap of the :math:`d_j` (the same
    resamples) widened to that t interval; all widened to the split score interval of the gains and
    losses.
    When both models' values are 0 or 1 (pass@1 from one sample), the interval is Bonett & Price's
    matched-pairs interval of the discordant problems instead (module docstring, "mover"). Every
    other method (``"auto"``, ``"t"``, ...) is :func:`mean_ci` of the :math:`d_j`.

    Parameters
    ----------
    a, b : array_like of float, shape (N,)
        Per-problem values of model A and model B on one metric (K columns at once:
        :func:`paired_difference_columns`). Passing the same array twice (``a is b``) is a model
        compared with itself: exactly 0. Two different arrays that are equal on every problem are
        two models that agree everywhere: the "no difference seen on N problems" bound.
    problem_ids_a, problem_ids_b : sequence, optional
        Problem ids of the rows of ``a`` and ``b``. When given (both), rows are matched by id
        (``b`` is reordered to ``a``'s order); otherwise row j of ``a`` and of ``b`` must be the
        same problem and the lengths must agree.
    intersect : bool, default: False
        If the id sets differ: ``False`` raises a ``ValueError`` naming the unmatched ids,
        ``True`` compares on the common problems and reports the dropped ids in the result.
    clusters : array_like, shape (N,), optional
        Cluster label per row of ``a`` (aligned with ``problem_ids_a``).
    method : {"mover", "auto", "t", "clustered-t", "bootstrap", "bca"}, default: "mover"
        ``"mover"``: the two models' studentized limits combined (clustered score limits with 30 or
        more clusters and a model near an end; module docstring);
        the others: :func:`mean_ci` of the differences.
    confidence_level, n_resamples, rng, max_chunk_elements
        As in :func:`mean_ci`.
    bounds : "auto", None or (float, float), default: "auto"
        ``"auto"``: [-1, 1] when every value of ``a`` and ``b`` lies in [0, 1]. An explicit
        range must hold every difference ``a - b``; it only clips the interval.

    Returns
    -------
    PairedResult
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
        Fewer than 10 clusters, for every method. For the default on values in [0, 1]: half or
        more of :math:`\sum_j |d_j|` comes from per-problem differences below 0.05
        (:class:`TinyDifferencesWarning`; ``details["tiny_difference_share"]``,
        ``details["rests_on_tiny_differences"]``), or the two models differ on a single problem
        (:class:`FewDifferencesWarning`; ``details["n_differing"]``,
        ``details["rests_on_few_differences"]``); with them the default's warned intervals missed
        1.74x as often as the average interval of their coverage-study cell. For the
        other methods, and the default on values outside [0, 1]: a bound rests on a score fallback
        because a bootstrap-t tail was degenerate (values piled up at 0 or 1 but not all 0/1, see
        :func:`mean_ci`; the default: a t fallback), or few or only tiny differences
        (``details["sparse_differences"]``). 0/1 values take their score (Wilson)
        limits without a warning.

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
    >>> r.method, r.rule, r.low < r.estimate < r.high         # unsaturated differences: the paired t, widened
    ('mover', 't-split-score', True)
    >>> r.details["paired_bound_methods"]    # no loss on any of 8 problems: the lower bound is the score one
    ('split-score', 't')
    >>> r = paired_difference([0.5, 1.0, 0.0], [0.75, 0.25], problem_ids_a=["p1", "p2", "p3"],
    ...                       problem_ids_b=["p2", "p3"], intersect=True, method="t")
    >>> r.n_problems, r.unmatched_ids_a, r.estimate
    (2, ('p1',), 0.0)
    """
    (result,) = _paired_difference(a, b, _PairedOptions(
        problem_ids_a=problem_ids_a, problem_ids_b=problem_ids_b, intersect=intersect, clusters=clusters, method=method,
        confidence_level=confidence_level, n_resamples=n_resamples, rng=rng, bounds=bounds,
        max_chunk_elements=max_chunk_elements), one_column=True)
    return result


def paired_difference_columns(
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
) -> list[PairedResult]:
    """:func:`paired_difference` of every column pair of ``a`` and ``b`` (shape ``(N, K)`` each).

    Returns a list of K :class:`PairedResult`, always a list; column j compares ``a[:, j]`` with
    ``b[:, j]`` and equals ``paired_difference(a[:, j], b[:, j])`` up to rounding (each pair is
    resampled on its own, all in one pass). Parameters, errors and warnings as
    :func:`paired_difference` (``a is b``, the same array, compares every model with itself: 0).
    """
    return _paired_difference(a, b, _PairedOptions(
        problem_ids_a=problem_ids_a, problem_ids_b=problem_ids_b, intersect=intersect, clusters=clusters, method=method,
        confidence_level=confidence_level, n_resamples=n_resamples, rng=rng, bounds=bounds,
        max_chunk_elements=max_chunk_elements), one_column=False)


@dataclasses.dataclass(frozen=True)
class _PairedOptions:
    """The keyword arguments of :func:`paired_difference` (and ``_columns``), as the caller gave them."""

    problem_ids_a: Sequence[Any] | None
    problem_ids_b: Sequence[Any] | None
    intersect: bool
    clusters: ArrayLike | None
    method: str
    confidence_level: float
    n_resamples: int
    rng: int | np.random.Generator | None
    bounds: str | tuple[float, float] | None
    max_chunk_elements: int


def _paired_difference(a: ArrayLike, b: ArrayLike, options: _PairedOptions, one_column: bool) -> list[PairedResult]:
    """The body of :func:`paired_difference` and :func:`paired_difference_columns`."""
    problem_ids_a, problem_ids_b, clusters = options.problem_ids_a, options.problem_ids_b, options.clusters
    method, bounds, rng = options.method, options.bounds, options.rng
    self_comparison = a is b  # a model compared with itself: a difference of exactly 0
    arr_a, one_d_a = check_values(a, "a")
    arr_b, one_d_b = check_values(b, "b")
    if one_d_a != one_d_b or arr_a.shape[1] != arr_b.shape[1]:
        raise ValueError(f"`a` and `b` must have the same number of columns; got shapes {np.shape(a)} and {np.shape(b)}.")
    if one_column and not (one_d_a and one_d_b):
        raise ValueError(f"`a` and `b` have shapes {np.shape(a)} and {np.shape(b)}: paired_difference takes one "
                         "metric's per-problem values (shape (N,)); use paired_difference_columns for K columns "
                         "at once (a list of K results).")
    arr_a, arr_b, clusters, pos_a, only_a, only_b = _aligned(arr_a, arr_b, problem_ids_a, problem_ids_b,
                                                             options.intersect, clusters)
    n, k = arr_a.shape
    design = check_design(n, clusters, method, options.confidence_level, options.n_resamples,
                          options.max_chunk_elements, paired=True, methods=INTERVAL_METHODS,
                        paired_methods=PAIRED_INTERVAL_METHODS, too_few=f"only {n} problem(s) in common; a paired interval needs at least 2.")
    level, n_clusters = design.level, design.n_clusters
    method = DEPRECATED_METHODS.get(design.method, design.method)
    # canonical order of the problems, by both models' values (every method sees a and b)
    order = canonical_order(np.concatenate([arr_a, arr_b], axis=1))
    arr_a, arr_b = arr_a[order], arr_b[order]
    codes = None if design.codes is None else design.codes[order]
    in_unit = bool(((arr_a >= 0) & (arr_a <= 1)).all() and ((arr_b >= 0) & (arr_b <= 1)).all())
    bound_range = check_bounds(bounds, (-1.0, 1.0) if in_unit else None)
    differences = arr_a - arr_b
    if bound_range is not None and not isinstance(bounds, str):  # #15: explicit bounds must hold the differences
        check_within_bounds(differences, bound_range, order, "the differences `a - b`",
                            (lambda given: f"row {given}") if problem_ids_a is None
                            else (lambda given: f"problem id {problem_ids_a[int(pos_a[given])]!r}"))
    few = few_clusters_note(n_clusters) is not None
    fallback = (paired_score_fallback(arr_a, arr_b, codes, n_clusters, design_effect=few)
                if method == "auto" and in_unit else None)
    models = (arr_a, arr_b, (0.0, 1.0) if in_unit else None) if method == "mover" else None
    request = CoreRequest(method, level, design.n_resamples, rng, bound_range, design.max_chunk_elements, test_zero=True,
                          fallback=fallback, paired=models, few_clusters=few,
                          no_difference_range=(0.0, 1.0) if in_unit and not self_comparison else None)
    results = interval_core(differences, codes, n_clusters, request)
    _warn_few_clusters(n_clusters, method)
    warn_degenerate(results, "difference", replaced_tails=method != DEFAULT_PAIRED_METHOD)
    added = _warn_sparse_differences(differences, in_unit, warn=not (method == DEFAULT_PAIRED_METHOD and in_unit))
    if method == DEFAULT_PAIRED_METHOD and in_unit:  # (a model with itself: no difference, nothing recorded)
        tiny_shares = warn_tiny_difference_share(differences)
        few_differences = warn_few_differences(np.array([entry["n_differing"] for entry in added]), n)
        added = [{**entry, **tiny, **one} for entry, tiny, one in zip(added, tiny_shares, few_differences)]
    mean_a, mean_b, correlation = _means_and_correlation(arr_a, arr_b)
    return [PairedResult(estimate=r.estimate, low=r.low, high=r.high, standard_error=r.standard_error,
                         confidence_level=level, n_problems=n, n_clusters=n_clusters, method=method,
                         rule=_differences_rule(r, n_clusters, in_unit) if method == "auto" else r.rule,
                         details={**r.details, **added[j]}, estimate_a=float(mean_a[j]), estimate_b=float(mean_b[j]),
                         correlation=float(correlation[j]), p_value=r.p_value, n_unmatched=len(only_a) + len(only_b),
                         unmatched_ids_a=only_a, unmatched_ids_b=only_b) for j, r in enumerate(results)]


def _aligned(arr_a, arr_b, problem_ids_a, problem_ids_b, intersect, clusters):
    """Rows of ``a`` and ``b`` matched by problem id (or by position), with the clusters of ``a``'s rows;
    returns ``(a, b, clusters, positions in a or None, ids only in a, ids only in b)``."""
    if not isinstance(intersect, (bool, np.bool_)):
        raise TypeError(f"`intersect` must be True or False; got {intersect!r}.")
    if (problem_ids_a is None) != (problem_ids_b is None):
        raise ValueError("give both `problem_ids_a` and `problem_ids_b`, or neither (then rows are matched by position).")
    if problem_ids_a is None:
        if arr_a.shape[0] != arr_b.shape[0]:
            raise ValueError(
                f"`a` has {arr_a.shape[0]} problems and `b` has {arr_b.shape[0]}; without problem ids the rows must be "
                "the same problems. Pass problem_ids_a/problem_ids_b (and intersect=True to drop unmatched ones).")
        return arr_a, arr_b, clusters, None, (), ()
    pos_a, pos_b, only_a, only_b = match_ids(problem_ids_a, problem_ids_b, arr_a.shape[0], arr_b.shape[0], bool(intersect))
    if clusters is not None:
        clusters_arr = np.asarray(clusters, dtype=object)
        if clusters_arr.ndim != 1 or clusters_arr.shape[0] != arr_a.shape[0]:
            raise ValueError(f"`clusters` must have one label per row of `a` ({arr_a.shape[0]}); got shape {clusters_arr.shape}.")
        clusters = clusters_arr[pos_a]
    return arr_a[pos_a], arr_b[pos_b], clusters, pos_a, only_a, only_b


def _means_and_correlation(arr_a, arr_b):
    """Both models' means and the correlation of their per-problem values (NaN, with a warning, for a constant model)."""
    mean_a, mean_b = arr_a.mean(axis=0), arr_b.mean(axis=0)
    constant_model = (np.ptp(arr_a, axis=0) == 0) | (np.ptp(arr_b, axis=0) == 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        covariance = ((arr_a - mean_a) * (arr_b - mean_b)).mean(axis=0)
        correlation = np.where(constant_model, np.nan, np.clip(covariance / (arr_a.std(axis=0) * arr_b.std(axis=0)), -1.0, 1.0))
    if constant_model.any():  # stacklevel: this helper, the body, the public function, its caller
        warnings.warn("one model's per-problem values are constant"
                      + columns_note(np.flatnonzero(constant_model).tolist(), arr_a.shape[1])
                      + ": their correlation is undefined and is reported as NaN.", DegenerateIntervalWarning, stacklevel=4)
    return mean_a, mean_b, correlation


def _differences_rule(result: ColumnInterval, n_clusters: int | None, in_unit: bool) -> str:
    """The rule of :func:`paired_difference` with ``method="auto"`` (:func:`~._interval_policy.differences_default`)."""
    if result.no_difference:
        return "no-difference-bound"
    return differences_default(n_clusters=n_clusters, known_range=in_unit, constant=result.constant)
