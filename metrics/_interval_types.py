"""The engine's typed result of one column (private module).

:func:`~._interval_engine.interval_core` returns one :class:`ColumnInterval` per column; the
single-model rules of :mod:`._single_score` return new records (never rewrite one), and
:func:`~kpass.metrics.mean_ci` / :func:`~kpass.metrics.paired_difference` turn the last record of
each column into the public :class:`~kpass.metrics.IntervalResult` / ``PairedResult``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

__all__ = ["ColumnInterval"]


@dataclass(frozen=True)
class ColumnInterval:
    """One column's interval as the engine computed it.

    Attributes
    ----------
    estimate, low, high, standard_error, p_value : float
        As in the public result (``p_value`` is NaN for a single mean).
    constant : bool
        Every value is the same and the interval is pinned to it.
    constant_at_end : bool
        Every value is the same at an end of its range (the interval is the rule's, not pinned).
    no_difference : bool
        Two different models that agree on every problem (the "no difference seen" bound).
    rule : str
        The rule the engine applied (the method's name for a method other than the default).
    details : Mapping[str, Any]
        What the public ``details`` holds so far; :meth:`with_details` returns a record with more.
    """

    estimate: float
    low: float
    high: float
    standard_error: float
    p_value: float
    constant: bool
    constant_at_end: bool
    no_difference: bool
    rule: str
    details: Mapping[str, Any]

    def with_details(self, **entries: Any) -> ColumnInterval:
        """A copy with ``entries`` added to (or replacing those of) ``details``."""
        return replace(self, details={**self.details, **entries})

    def with_bounds(self, low: float, high: float, **entries: Any) -> ColumnInterval:
        """A copy with new bounds and ``entries`` added to ``details``."""
        return replace(self, low=low, high=high, details={**self.details, **entries})
