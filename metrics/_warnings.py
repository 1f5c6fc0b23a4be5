"""The warning classes of :mod:`kpass.metrics` (private module; the names are public).

Every warning kpass itself issues is a :class:`KpassWarning`, so that one filter shows or hides all
of them, and none of them is a ``RuntimeWarning``: numpy's own floating-point warnings are
silenced inside kpass with :func:`numpy.errstate` (never with a ``RuntimeWarning`` filter, which
would also swallow kpass's warnings). The subclasses say what kind of caveat a result carries:

- :class:`DegenerateIntervalWarning`: defined but carrying no information about uncertainty
  (every value identical, a standard error of 0, a correlation of a constant);
- :class:`IntervalMethodWarning`: usable, but (partly) from a fallback method, or resting on too
  few clusters; :class:`TinyDifferencesWarning` and :class:`FewDifferencesWarning`, two of them, for a
  paired difference that rests mostly on tiny per-problem differences or on a single differing problem;
- :class:`UndefinedBudgetMetricWarning`: a token-budget metric is undefined (reported as NaN);
- :class:`UndefinedDecompositionWarning`: a term of the pass@1 decomposition is undefined (NaN).

Examples
--------
>>> import warnings
>>> from kpass.metrics import KpassWarning, mean_ci
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     r = mean_ci([0.5, 0.5, 0.5])                 # every value identical
>>> [type(w.message).__name__ for w in caught], issubclass(caught[0].category, KpassWarning)
(['DegenerateIntervalWarning'], True)
"""

from __future__ import annotations

__all__ = [
    "DegenerateIntervalWarning",
    "FewDifferencesWarning",
    "IntervalMethodWarning",
    "KpassWarning",
    "TinyDifferencesWarning",
    "UndefinedBudgetMetricWarning",
    "UndefinedDecompositionWarning",
]


class KpassWarning(UserWarning):
    """Base class of every warning kpass issues.

    ``warnings.simplefilter("ignore", KpassWarning)`` silences them all;
    ``warnings.simplefilter("error", KpassWarning)`` turns them into errors (e.g. in CI).
    """


class DegenerateIntervalWarning(KpassWarning):
    """A result is defined but degenerate (zero variance, a constant input, an empty tail).

    Raised as a warning, never as an error: the returned numbers are mathematically what the
    method gives (for example an interval of width 0 when every per-problem value is equal), but
    they say nothing about the uncertainty of the benchmark and should not be read as "exact".
    Silence it with ``warnings.simplefilter("ignore", DegenerateIntervalWarning)``.
    """


class IntervalMethodWarning(KpassWarning):
    """An interval is finite and usable, but not (entirely) what the requested method gives.

    Issued when part of a studentized-bootstrap interval had to come from another method because
    the bootstrap-t distribution was degenerate on that side (values piled up at 0 or 1; the
    message and ``details["bound_methods"]`` name the method of each bound), and when the design
    makes every method unreliable (fewer than 10 clusters). Unlike
    :class:`DegenerateIntervalWarning` the numbers do carry information about the uncertainty;
    the warning says how to read them.
    """


class TinyDifferencesWarning(IntervalMethodWarning):
    r"""A paired difference of values in [0, 1] rests mostly on per-problem differences below 0.05.

    Issued by the paired default where half or more of :math:`\sum_j |d_j|` comes from such tiny
    differences (``details["tiny_difference_share"]``, ``details["rests_on_tiny_differences"]``): the
    true difference may rest on rare problems with a large difference that the benchmark did not draw.
    :attr:`CAVEAT` is the sentence every report gives with it.
    """

    CAVEAT = "the true difference may rest on rare problems with a large one that the benchmark did not draw"


class FewDifferencesWarning(IntervalMethodWarning):
    """A paired difference of values in [0, 1] rests on a single problem where the two models differ.

    Issued by the paired default where the two models differ on at most
    ``kpass.metrics._interval_warnings.WARN_FEW_DIFFERING_PROBLEMS`` (1) of the N problems
    (``details["n_differing"]``, ``details["rests_on_few_differences"]``): the interval's side away
    from that difference rests on no problem at all, and the benchmark may have drawn too few of the
    problems on which the models differ. :attr:`CAVEAT` is the sentence every report gives with it.
    """

    CAVEAT = ("one problem shows neither how often nor by how much the two models differ elsewhere, and such "
              "intervals missed the true difference about three times as often as the average interval of their "
              "coverage-study cell")


class UndefinedBudgetMetricWarning(KpassWarning):
    """A budget metric is undefined (for example pass@k(B | fin) when no sample finished)."""


class UndefinedDecompositionWarning(KpassWarning):
    """A decomposition term is undefined (e.g. matched reliability with no matched problem)."""
