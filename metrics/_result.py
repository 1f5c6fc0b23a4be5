"""Result objects of the interval and power functions (private module).

:class:`IntervalResult` is what :func:`kpass.metrics.mean_ci` returns for one benchmark number,
:class:`PairedResult` what :func:`kpass.metrics.paired_difference` returns for the difference
between two models on the same problems, and :class:`PowerInputs` what
:func:`kpass.metrics.power_inputs_from_pilot` estimates from a pilot comparison. All three are
immutable; ``details`` is a read-only mapping with whatever the method needs to explain itself
(degrees of freedom, number of resamples, seed, whether the interval was clipped, ...).

The warning classes :class:`DegenerateIntervalWarning` (results that are defined but carry no
information about uncertainty, so that such a result is never a silent 0) and
:class:`IntervalMethodWarning` (intervals that are usable but partly come from a fallback method,
or that rest on too few clusters) live in :mod:`kpass.metrics._warnings` with their base class
:class:`~kpass.metrics.KpassWarning`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = ["IntervalResult", "PairedResult", "PowerInputs"]


def _freeze(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True, kw_only=True)
class IntervalResult:
    """A benchmark mean with its confidence interval.

    Attributes
    ----------
    estimate : float
        The point estimate: the unweighted mean of the per-problem values (with clusters, the
        mean over all problems, i.e. the pooled mean, as Inspect computes it).
    low, high : float
        Interval bounds, ``low <= estimate <= high`` for every method kpass offers except in
        pathological bootstrap cases (then ``details["estimate_outside"]`` is ``True``).
    standard_error : float
        The standard error the method works with: the t / clustered standard error for ``"t"``,
        ``"clustered-t"`` and ``"studentized"``; the standard deviation of the bootstrap
        replicates for ``"bootstrap"`` and ``"bca"`` (``details["standard_error_kind"]`` says which).
    confidence_level : float
        Nominal coverage, e.g. ``0.95``.
    n_problems : int
        Number of problems (rows of ``values``).
    n_clusters : int or None
        Number of clusters, ``None`` when problems were resampled individually.
    method : str
        ``"auto"`` (the default; ``"studentized"`` is its deprecated name), ``"t"``, ``"clustered-t"``,
        ``"bootstrap"``, ``"bca"`` or, for a :class:`PairedResult`, ``"mover"``.
    rule : str
        The rule that made this interval: for the defaults (``"auto"``, ``"mover"``) the policy's choice for
        this column (``"wilson-deff"``, ``"score-toward-end"``, ``"bootstrap-t-arcsine"``, ``"t-split-score"``,
        ``"matched-pairs"``, ``"mover"``, ...; :func:`~kpass.metrics._interval_policy.single_default`,
        :func:`~kpass.metrics._interval_policy.paired_default`, docs/intervals.md "Rules"), for any other
        method the method's name.
    details : Mapping[str, Any]
        Read-only; what the method needs to explain itself, e.g. ``df``, ``critical_value``,
        ``n_resamples``, ``seed``, ``resampling`` (``"problems"`` or ``"clusters"``),
        ``bounds`` and ``clipped`` (whether the raw interval left the range of the metric and
        was cut back to it), ``bias_correction`` and ``acceleration`` for BCa; for
        ``"auto"`` also ``scale`` (``"arcsine"``, ``"identity"``, ``"score (0/1 values)"``,
        ``"score (effective size)"`` or ``"score (clustered)"``), ``studentized_bounds`` (the
        bootstrap-t's bounds where a score rule set the interval), ``t_quantiles`` and ``bound_methods`` (the method of each
        bound) and, for ``"mover"``, ``interval_a``/``interval_b`` (the per-model limits it
        combined), ``model_scales`` (``"score (clustered)"`` where they are the clustered score
        limits of 30 or more clusters) and ``correlation_of_means``.
    """

    estimate: float
    low: float
    high: float
    standard_error: float
    confidence_level: float
    n_problems: int
    n_clusters: int | None
    method: str
    rule: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "details", _freeze(self.details))

    @property
    def interval(self) -> tuple[float, float]:
        """The interval as a ``(low, high)`` tuple."""
        return (self.low, self.high)

    @property
    def width(self) -> float:
        """``high - low``."""
        return self.high - self.low

    def contains(self, value: float) -> bool:
        """Whether ``low <= value <= high``."""
        return bool(self.low <= value <= self.high)

    def as_dict(self) -> dict[str, Any]:
        """A plain ``dict`` of the fields (``details`` copied to a ``dict``)."""
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        out["details"] = dict(self.details)
        return out


@dataclass(frozen=True, kw_only=True)
class PairedResult(IntervalResult):
    """The difference ``a - b`` between two models on the same problems, with its interval.

    Attributes
    ----------
    estimate, low, high, standard_error, confidence_level, n_problems, n_clusters, method, details
        As in :class:`IntervalResult`, for the per-problem differences ``a_j - b_j`` on the
        matched problems.
    estimate_a, estimate_b : float
        Mean of each model on the matched problems (``estimate == estimate_a - estimate_b``
        up to rounding).
    correlation : float
        Pearson correlation of the per-problem values of the two models (NaN, with a
        :class:`DegenerateIntervalWarning`, when one of them is constant).
    p_value : float
        Two-sided p-value of "no difference" that the interval shown implies: one minus the
        largest confidence level whose interval (same method, resamples and fallbacks) excludes
        0, so ``p_value < 1 - confidence_level`` exactly when ``0`` is outside ``[low, high]``
        (for ``"t"``/``"clustered-t"`` the t test, which is the same thing in closed form).
    n_unmatched : int
        Problems dropped because only one model had them (only non-zero with ``intersect=True``).
    unmatched_ids_a, unmatched_ids_b : tuple
        The ids dropped from ``a`` and from ``b``.
    """

    estimate_a: float = math.nan
    estimate_b: float = math.nan
    correlation: float = math.nan
    p_value: float = math.nan
    n_unmatched: int = 0
    unmatched_ids_a: tuple[Any, ...] = ()
    unmatched_ids_b: tuple[Any, ...] = ()


@dataclass(frozen=True, kw_only=True)
class PowerInputs:
    """Inputs of the Miller (2024) power formula, estimated from a pilot comparison.

    Attributes
    ----------
    between_variance : float
        :math:`\\omega^2`, the between-problem variance of the paired difference of the
        per-problem success probabilities, ``Var_j(p_j^A - p_j^B)``.
    within_variance_a, within_variance_b : float
        :math:`\\sigma_A^2, \\sigma_B^2`, the mean within-problem variance of one sample's score
        (for 0/1 outcomes ``E_j[p_j (1 - p_j)]``).
    samples_per_problem_a, samples_per_problem_b : float
        :math:`K_A, K_B` in the pilot: the harmonic mean of the samples per problem, which is
        what the within-problem term :math:`\\sigma^2/K` of the variance of a mean over
        problems needs when ``n`` is ragged (see :func:`kpass.metrics.power_inputs_from_pilot`;
        equal to ``n`` when every problem has ``n`` samples).
    n_problems : int
        Problems in the pilot.
    mean_difference : float
        Observed mean difference ``A - B`` in the pilot (not an input of the formula; a pilot
        is too small to set the effect size from, but it is reported).
    details : Mapping[str, Any]
        Read-only; e.g. whether ``between_variance`` was truncated at 0.
    """

    between_variance: float
    within_variance_a: float
    within_variance_b: float
    samples_per_problem_a: float
    samples_per_problem_b: float
    n_problems: int
    mean_difference: float
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "details", _freeze(self.details))

    def power_kwargs(self) -> dict[str, float]:
        """Keyword arguments for :func:`required_problems` / :func:`minimum_detectable_effect`.

        ``samples_per_problem_a``/``_b`` default to the pilot's; pass others to plan a design
        with more or fewer samples per problem.
        """
        return {
            "between_variance": self.between_variance,
            "within_variance_a": self.within_variance_a,
            "within_variance_b": self.within_variance_b,
            "samples_per_problem_a": self.samples_per_problem_a,
            "samples_per_problem_b": self.samples_per_problem_b,
        }
