"""The interval options of :func:`mean_ci` / :func:`paired_difference`, checked without any data.

A host that must reject a bad option before it reads a file calls :func:`check_interval_options`
and gets exactly the error :func:`mean_ci` would raise later: one check per option, here in the
core, naming the core's parameter (``confidence_level``, ``n_resamples``, ``rng``, ``method``,
``clusters``). A command line translates those names into its flags.
"""

from __future__ import annotations

from typing import Any

from ._intervals import (
    DEFAULT_INTERVAL_METHOD,
    DEFAULT_N_RESAMPLES,
    DEFAULT_PAIRED_METHOD,
    INTERVAL_METHODS,
    PAIRED_INTERVAL_METHODS,
)
from ._validation import check_confidence_level, check_method, check_n_resamples, check_rng

__all__ = ["check_interval_options"]


def check_interval_options(*, method: str | None = None, confidence_level: float = 0.95,
                           n_resamples: int | None = DEFAULT_N_RESAMPLES, rng: Any = None,
                           paired: bool = False, clustered: bool = False) -> dict[str, Any]:
    """Checked keyword arguments ``method``, ``confidence_level``, ``n_resamples``, ``rng``.

    Parameters
    ----------
    method : str, optional
        ``None`` gives :data:`DEFAULT_INTERVAL_METHOD` (or, with ``paired``, :data:`DEFAULT_PAIRED_METHOD`).
    confidence_level : float
        In (0, 1).
    n_resamples : int, optional
        At least 2; ``None`` gives :data:`DEFAULT_N_RESAMPLES`.
    rng : None, int, numpy.random.Generator or numpy.random.SeedSequence
        Returned unchanged (checked as :func:`mean_ci` checks it; a Generator is not drawn from).
    paired : bool
        Options of :func:`paired_difference` rather than :func:`mean_ci`.
    clustered : bool
        Whether ``clusters`` will be given (``clustered-t`` needs them; ``t`` refuses them).

    Raises
    ------
    ValueError, TypeError
        The message names the parameter, as :func:`mean_ci` does.

    Examples
    --------
    >>> check_interval_options(confidence_level=0.9, rng=3)["method"]
    'auto'
    """
    if method is None:
        method = DEFAULT_PAIRED_METHOD if paired else DEFAULT_INTERVAL_METHOD
    method = check_method(method, clustered=clustered, paired=paired, methods=INTERVAL_METHODS,
                          paired_methods=PAIRED_INTERVAL_METHODS)
    level = check_confidence_level(confidence_level)
    count = check_n_resamples(DEFAULT_N_RESAMPLES if n_resamples is None else n_resamples)
    if rng is not None:
        check_rng(rng)
    return {"method": method, "confidence_level": level, "n_resamples": count, "rng": rng}
