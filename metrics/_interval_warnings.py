"""The default intervals' warnings about degenerate columns, replaced tails, means resting on a few
problems off an end and paired differences resting on tiny ones (private module of
:mod:`kpass.metrics._intervals`).

Which intervals warn is chosen by the coverage study: a warning should mark intervals that miss more
often than the others of their cell (docs/intervals-edges.md, "Warnings").
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._interval_policy import THRESHOLDS
from ._interval_types import ColumnInterval
from ._validation import MAX_REPORTED
from ._warnings import DegenerateIntervalWarning, FewDifferencesWarning, IntervalMethodWarning, TinyDifferencesWarning

__all__ = ["T_FALLBACKS", "columns_note",
           "replaced_tail_warns", "warn_degenerate", "warn_few_differences", "warn_few_off_end",
           "warn_tiny_difference_share"]


#: Fallback names of a replaced bootstrap-t tail that the default warns about (values without a known range).
T_FALLBACKS = ("t", "clustered-t")


def columns_note(flagged: list[int], n_columns: int) -> str:
    """`` (columns [0, 3])`` naming at most :data:`MAX_REPORTED` flagged columns; empty for one column."""
    if n_columns == 1:
        return ""
    return f" (columns {list(flagged[:MAX_REPORTED])}{' ...' if len(flagged) > MAX_REPORTED else ''})"


def _bound_methods(details: Mapping[str, Any]) -> list[str]:
    """The method of every bound: a single mean's two, or MOVER's four per-model limits."""
    if "model_bound_methods" in details:
        return [m for pair in details["model_bound_methods"] for m in pair]
    return list(details.get("bound_methods", ()))


def replaced_tail_warns(details: Mapping[str, Any], default_method: bool) -> bool:
    """Whether a column's replaced bootstrap-t tail is warned about: always for a method other than the
    function's default, for the default only when a bound came from a t fallback (no known range)."""
    return any(details.get("degenerate_tail", ())) and (not default_method or any(m in T_FALLBACKS for m in _bound_methods(details)))


def warn_degenerate(results: list[ColumnInterval], what: str, replaced_tails: bool = True) -> None:
    """Warn (never silently) about constant columns, infinite bounds and, with ``replaced_tails``, replaced
    bootstrap-t tails.

    A default method's tail replaced by its score bound (the studentized interval of :func:`mean_ci`,
    the per-model limits of MOVER) is part of the interval the coverage study measures and is not
    warned about (the t fallback of values without a known range still is): such
    intervals missed least in the study (1.1% of the single-model edge intervals against 4.0% for the
    rest), so the warning, on 29% of them, pointed at the intervals that needed it least
    (docs/intervals-edges.md, "Warnings");
    ``details["degenerate_tail"]`` and ``details["bound_methods"]`` still record it.
    """
    def columns(js: list[int]) -> str:
        return columns_note(js, len(results))

    def degenerate(flagged: list[int], message: str) -> None:
        if flagged:  # stacklevel: this helper, warn_degenerate, the body, the public function, its caller
            warnings.warn(message, DegenerateIntervalWarning, stacklevel=5)

    constant = [j for j, r in enumerate(results) if r.constant]
    degenerate(constant, f"every per-problem {what} is identical{columns(constant)}: the interval has width 0 and the "
               "standard error is 0, which says nothing about the uncertainty of the benchmark.")
    no_difference = [j for j, r in enumerate(results) if r.no_difference]
    if no_difference:
        seen = results[no_difference[0]].details.get("n_problems_seen", "these")
        degenerate(no_difference, f"every per-problem {what} is 0{columns(no_difference)}: the two models agree on every "
                   "problem, which is not a proof that they are equal; the interval is the score bound of no difference "
                   f"seen on {seen} problems (details['no_difference_bound']; compare a model with itself by passing the "
                   "same array twice).")
    at_end = [j for j, r in enumerate(results) if r.constant_at_end]
    degenerate(at_end, f"every per-problem {what} is at the same end of its range{columns(at_end)} (e.g. every problem "
               "solved): the standard error is 0, so the interval rests on the score (Wilson) interval of that many "
               "problems all at that end, which is what so few problems can rule out (details['bound_methods']).")

    replaced = [j for j, r in enumerate(results) if replaced_tail_warns(r.details, default_method=not replaced_tails)]
    if replaced:
        first = results[replaced[0]].details
        sources = sorted({m for j in replaced for m in _bound_methods(results[j].details)} - {"studentized"})
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
            stacklevel=4,
        )
    infinite = [j for j, r in enumerate(results) if r.details.get("degenerate") == "infinite bound"]
    clipped = any(results[j].details.get("clipped") for j in infinite)
    degenerate(infinite, f"the interval has an infinite bound{columns(infinite)}"
               + (", clipped to the range of the values" if clipped else "") + ": it says nothing about the uncertainty on that side.")


def warn_few_off_end(results: list[ColumnInterval]) -> None:
    """Warn when a single-model mean rests on a few problems off an end of its range (``details["few_off_end"]``).

    A mean within :attr:`~._interval_policy.IntervalThresholds.warn_end_share` of an end and :attr:`~._interval_policy.IntervalThresholds.warn_off_end_problems` to
    :attr:`~._interval_policy.IntervalThresholds.warn_max_off_end_problems` problems' worth from it, chosen by how much more often such
    intervals miss than the others of the same coverage-study cell (about twice as often); closer
    to the end the near-end rule (:func:`~._single_score.apply_near_end`) makes the interval
    conservative, further from it the bootstrap's tails are well fed.
    """
    flagged = [j for j, r in enumerate(results) if r.details.get("few_off_end")]
    if not flagged:
        return
    shown = columns_note(flagged, len(results))
    warnings.warn(
        f"the mean lies within {100 * THRESHOLDS.warn_end_share:g}% of an end of its range{shown} (near the ceiling or the "
        f"floor) and rests on {THRESHOLDS.warn_off_end_problems:g} to {THRESHOLDS.warn_max_off_end_problems:g} problems' worth off that end "
        "(details['off_end_problems']): such intervals miss about twice as often as others in the coverage study, "
        "as they hang on how many of those problems this benchmark happened to draw (docs/intervals-edges.md).",
        IntervalMethodWarning,
        stacklevel=4,
    )




def warn_tiny_difference_share(differences: NDArray[np.float64]) -> list[dict[str, Any]]:
    r"""Warn when a paired difference of values in [0, 1] rests mostly on tiny per-problem differences.

    Records :math:`s = \sum_{|d_j| < 0.05} |d_j| \,/\, \sum_j |d_j|` as
    ``details["tiny_difference_share"]`` for every column with a difference; where
    :math:`s \ge` :attr:`~._interval_policy.IntervalThresholds.warn_tiny_difference_share` ``details["rests_on_tiny_differences"]`` is set and a
    :class:`~kpass.metrics.TinyDifferencesWarning` (an ``IntervalMethodWarning``) says so. Such a difference is built of small per-problem differences (a
    saturated metric of two strong models, or pass@1 of two models near an end), while the true
    difference may rest on rare problems with a large one that the benchmark did not draw: in the
    coverage study the paired default's warned intervals missed more often than the average
    interval of their cell (1.74x in the full run, every warning of the default together; 2.8x for this one alone, on the previous default, in a
    scratch recomputation).
    """
    magnitude = np.abs(differences)
    total = magnitude.sum(axis=0)
    tiny = np.where(magnitude < THRESHOLDS.tiny_difference, magnitude, 0.0).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(total > 0, tiny / total, np.nan)
    k = differences.shape[1]
    entries: list[dict[str, Any]] = [{} for _ in range(k)]
    flagged = []
    for j in range(k):
        if np.isnan(share[j]):
            continue
        entries[j]["tiny_difference_share"] = float(share[j])
        if share[j] >= THRESHOLDS.warn_tiny_difference_share:
            entries[j]["rests_on_tiny_differences"] = True
            flagged.append(j)
    if not flagged:
        return entries
    shown = columns_note(flagged, k)
    amount = f"{share[flagged[0]]:.1%}" if k == 1 else f"{THRESHOLDS.warn_tiny_difference_share:.0%} or more"
    warnings.warn(
        f"{amount} of the paired difference{shown} comes from per-problem differences below {THRESHOLDS.tiny_difference:g} "
        f"(details['tiny_difference_share']): {TinyDifferencesWarning.CAVEAT}, and the paired default's warned "
        "intervals missed 1.7 times as often as the average interval of their coverage-study cell "
        "(docs/intervals-edges.md); treat it as rough.",
        TinyDifferencesWarning,
        stacklevel=4,
    )
    return entries




def warn_few_differences(n_differing: NDArray[np.int64], n_problems: int) -> list[dict[str, Any]]:
    r"""Warn when a paired difference of values in [0, 1] rests on the one problem where the models differ.

    Where :math:`\#\{j : d_j \ne 0\}` is between 1 and :attr:`~._interval_policy.IntervalThresholds.warn_few_differing_problems`,
    ``details["rests_on_few_differences"]`` is set and a :class:`~kpass.metrics.FewDifferencesWarning`
    (an ``IntervalMethodWarning``) says so, from the count ``details["n_differing"]`` that every column
    of the paired difference records.
    The side of the interval away from that difference rests on no problem at all: a benchmark that
    drew one of the problems where the two models differ says little of how often they differ.
    """
    k = n_differing.shape[0]
    flagged = [j for j in range(k) if 0 < n_differing[j] <= THRESHOLDS.warn_few_differing_problems]
    entries: list[dict[str, Any]] = [{"rests_on_few_differences": True} if j in flagged else {} for j in range(k)]
    if not flagged:
        return entries
    shown = columns_note(flagged, k)
    warnings.warn(
        f"the paired interval{shown} rests on the one problem of {n_problems} where the two models differ "
        f"(details['n_differing']): {FewDifferencesWarning.CAVEAT} (docs/intervals-edges.md); treat it as rough.",
        FewDifferencesWarning,
        stacklevel=4,
    )
    return entries
