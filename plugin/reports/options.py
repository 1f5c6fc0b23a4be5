"""The options every host path shares, checked once, and the one table of their names.

Each option is checked by the core (:func:`kpass.metrics.check_interval_options` for the interval
options), whose message names the parameter between backticks (```confidence_level```). The
Python API says the message with its own parameter names (:func:`api_names`: the core's
``clusters`` is the host's ``cluster_by``), and the ``kpass`` command with the flags that set them
(:func:`flag_names`: ``--confidence``, ``--cluster-by``). Both read :data:`PARAMETERS`, the one
table of these names; nothing else rewrites an option's message.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np

from kpass import metrics as core
from kpass.errors import UsageError

__all__ = ["DEFAULT_N_RESAMPLES", "DEFAULT_SEED", "PARAMETERS", "Parameter", "api_names", "flag_names",
           "interval_options"]

#: Seed of every bootstrap of the commands (``--seed``); the Python API's ``rng`` defaults to None
#: (:mod:`kpass.reports.seeds`), and ``rng=DEFAULT_SEED`` gives the numbers the commands print.
DEFAULT_SEED = 0

#: Bootstrap resamples of every interval of the host (the core's :func:`kpass.mean_ci` default).
DEFAULT_N_RESAMPLES = 10_000


@dataclasses.dataclass(frozen=True)
class Parameter:
    """One option under its three names.

    Attributes
    ----------
    api : str
        The parameter of the host's Python API (:func:`kpass.compute_report`, ...).
    flag : str
        The ``kpass`` flag that sets it.
    core : str
        The parameter of :mod:`kpass.metrics` it is handed to, when the core names it otherwise.
    """

    api: str
    flag: str
    core: str | None = None


#: Every option whose name an error message may quote, under its API name, flag and core name.
PARAMETERS = (
    Parameter("confidence_level", "--confidence"),
    Parameter("n_resamples", "--n-resamples"),
    Parameter("rng", "--seed"),
    Parameter("method", "--method"),
    Parameter("cluster_by", "--cluster-by", core="clusters"),
    Parameter("by", "--by"),
    Parameter("baseline", "--baseline"),
    Parameter("models", "--models"),
    Parameter("intersect", "--intersect"),
    Parameter("temp_directory", "--temp-dir"),
)


def _renamer(names: dict[str, str], flags: bool) -> Any:
    """A function saying ```old``` and ``old=`` (a parameter and its value) under the new names."""
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    pattern = re.compile(rf"`({alternatives})`|(?<![\w`-])({alternatives})=")

    def rename(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            new = names[match.group(1)]
            return new if flags else f"`{new}`"
        new = names[match.group(2)]
        return f"{new} " if flags else f"{new}="

    return lambda message: pattern.sub(rename, message)


_to_api = _renamer({p.core: p.api for p in PARAMETERS if p.core is not None}, flags=False)
_to_flags = _renamer({**{p.api: p.flag for p in PARAMETERS}, **{p.core: p.flag for p in PARAMETERS if p.core}},
                     flags=True)


def api_names(message: str) -> str:
    """``message`` of the core with its parameter names said as the Python API's (:data:`PARAMETERS`).

    Examples
    --------
    >>> api_names("`method` 'clustered-t' needs `clusters`; got clusters=None.")
    "`method` 'clustered-t' needs `cluster_by`; got cluster_by=None."
    """
    return _to_api(message)


def flag_names(message: str) -> str:
    """``message`` with every quoted parameter (```confidence_level```, ``cluster_by=None``) said as
    the flag that sets it (:data:`PARAMETERS`), for the ``kpass`` command's one-line error.

    Examples
    --------
    >>> flag_names("`confidence_level` must be in the open interval (0, 1); got 2.")
    '--confidence must be in the open interval (0, 1); got 2.'
    """
    return _to_flags(message)


def interval_options(*, method: str | None = None, confidence_level: float = 0.95,
                     rng: int | np.random.Generator | None = None,
                     n_resamples: int | None = DEFAULT_N_RESAMPLES, paired: bool = False,
                     clustered: bool = False) -> dict[str, Any]:
    """Checked keyword arguments of :func:`kpass.mean_ci` (or, with ``paired``, of
    :func:`kpass.paired_difference`): ``method``, ``confidence_level``, ``n_resamples``, ``rng``.

    Every host path (report, compare, budget, leaderboard) builds its interval options here, so
    one option gives one number everywhere, and the ``kpass`` commands call it on their flags
    before reading any file. The checks are the core's
    (:func:`kpass.metrics.check_interval_options`), made before any data is used; ``None`` for
    ``method`` or ``n_resamples`` means the default, ``rng=None`` draws fresh entropy (the core
    records the seed used in ``details["seed"]``).

    Raises
    ------
    UsageError
        A bad method, confidence level, number of resamples or ``rng``, naming the parameter
        (``confidence_level``, ``rng``, ...; :func:`api_names`); a ``kpass`` command names its
        flag instead (:func:`flag_names`).
    TypeError
        An option of the wrong type.
    """
    try:
        return core.check_interval_options(method=method, confidence_level=confidence_level, rng=rng,
                                           n_resamples=n_resamples, paired=paired, clustered=clustered)
    except ValueError as exc:
        raise UsageError(api_names(str(exc))) from None
    except TypeError as exc:
        raise TypeError(api_names(str(exc))) from None
