"""Input validation shared by every kpass estimator (private module).

The estimators in :mod:`kpass.metrics` each have one ``_<name>_iv`` function that calls the
helpers below. Other core modules (cons@k, intervals, power) may import them too; every check of
an interval's inputs (values, clusters, confidence level, seed, resamples, method, problem ids)
lives here, so that :func:`~kpass.metrics.mean_ci`, :func:`~kpass.metrics.paired_difference`, the
token-budget curves and the decomposition check them alike. Every error
message names the parameter, the offending value(s) and, for per-problem arrays, the first
offending problems by index (at most :data:`MAX_REPORTED` of them), so that a user can find the
problem in their data.

Conventions
-----------
- ``TypeError`` for the wrong kind of object (strings, booleans where counts belong, complex
  numbers, nested ragged lists); ``ValueError`` for a wrong value (negative, non-integer, NaN,
  out of range, mismatched shapes, unknown option).
- Counts may be given as integer arrays or as float arrays holding whole numbers (``2.0`` is
  accepted, ``2.5`` is not). Boolean arrays are rejected as counts: a boolean array is almost
  always a per-sample outcome matrix passed where counts belong (use
  :func:`kpass.metrics.counts_from_matrix`).
"""

from __future__ import annotations

import math
import numbers
import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "MAX_REPORTED",
    "Design",
    "as_count_array",
    "check_bounds",
    "check_confidence_level",
    "check_counts",
    "check_design",
    "check_ids",
    "check_k",
    "check_max_chunk",
    "check_method",
    "check_n_resamples",
    "check_option",
    "check_positive_int",
    "MAX_N_RESAMPLES",
    "check_rng",
    "check_tau",
    "check_values",
    "check_within_bounds",
    "describe_offenders",
    "exact_threshold",
    "factorize_labels",
    "match_ids",
    "resolve_seed",
]

#: How many offending problems an error message lists.
MAX_REPORTED = 5


def describe_offenders(
    bad: NDArray[np.bool_], values: NDArray[Any] | None = None, *, value_name: str | None = None
) -> str:
    """Describe the first offending entries of a boolean mask for an error message.

    Parameters
    ----------
    bad : ndarray of bool
        ``True`` where the entry is invalid. 1-D masks are reported as problem indices, higher
        dimensional masks as index tuples.
    values : ndarray, optional
        Values to show beside each index (same shape as ``bad``).
    value_name : str, optional
        Name of the shown values, e.g. ``"n_samples"``.

    Returns
    -------
    str
        For example ``"3 problems; first: [0] (n_samples=2), [4] (n_samples=1), ..."``.
    """
    bad = np.asarray(bad, dtype=bool)
    if bad.ndim == 0:
        if values is None:
            return "the scalar value"
        return f"the scalar value ({value_name or 'value'}={_fmt(np.asarray(values).item())})"
    positions = np.argwhere(bad)
    total = len(positions)
    shown = []
    for pos in positions[:MAX_REPORTED]:
        index = tuple(int(p) for p in pos)
        label = f"[{index[0]}]" if len(index) == 1 else "[" + ", ".join(map(str, index)) + "]"
        if values is not None:
            label += f" ({value_name or 'value'}={_fmt(np.asarray(values)[index])})"
        shown.append(label)
    noun = "problem" if bad.ndim == 1 else "entry"
    plural = noun if total == 1 else ("problems" if noun == "problem" else "entries")
    more = ", ..." if total > MAX_REPORTED else ""
    return f"{total} {plural}; first: {', '.join(shown)}{more}"


def _fmt(value: Any) -> str:
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return repr(float(value))
    if isinstance(value, np.generic):
        return repr(value.item())
    return repr(value)


def as_count_array(value: Any, name: str, *, ndim: int | tuple[int, ...] | None = (0, 1)) -> NDArray[np.int64]:
    """Convert ``value`` to a non-negative ``int64`` array of counts, or raise.

    Parameters
    ----------
    value : array_like of int
        Counts. Integer dtypes, or floats holding whole numbers (``2.0``), are accepted.
    name : str
        Parameter name used in error messages.
    ndim : int, tuple of int or None, default: (0, 1)
        Allowed numbers of dimensions (``None``: any).

    Returns
    -------
    ndarray of int64
        The counts, same shape as ``value``.

    Raises
    ------
    TypeError
        Booleans, strings, complex or other non-numeric input, ragged nested sequences.
    ValueError
        Wrong number of dimensions, NaN or infinity, non-integer values, negative values.
    """
    if isinstance(value, (str, bytes)):
        raise TypeError(f"`{name}` must be an array of integer counts; got the string {value!r}.")
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as exc:  # ragged nested lists
        raise TypeError(f"`{name}` must be a rectangular array of integer counts; got {_short(value)} ({exc}).") from None
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            want = " or ".join(f"{d}-D" for d in allowed)
            raise ValueError(f"`{name}` must be {want}; got an array of shape {arr.shape}.")
    kind = arr.dtype.kind
    if kind == "b":
        raise TypeError(
            f"`{name}` must hold integer counts, not booleans (got dtype bool); to count a per-sample "
            "0/1 outcome matrix use kpass.metrics.counts_from_matrix."
        )
    if kind == "O" and arr.size and all(
        isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in arr.flat
    ):
        try:
            arr = arr.astype(np.int64)
        except OverflowError:
            raise ValueError(f"`{name}` holds integers too large for int64; got {_short(value)}.") from None
        kind = "i"
    if kind == "O" and arr.size == 0:
        arr = arr.astype(np.int64)
        kind = "i"
    if kind not in "iuf":
        raise TypeError(f"`{name}` must be an array of integer counts; got dtype {arr.dtype} ({_short(value)}).")
    if kind == "f":
        finite = np.isfinite(arr)
        if not finite.all():
            raise ValueError(f"`{name}` must be finite integer counts; NaN or infinity at {describe_offenders(~finite, arr, value_name=name)}.")
        whole = arr == np.floor(arr)
        if not whole.all():
            raise ValueError(f"`{name}` must hold whole numbers; non-integer values at {describe_offenders(~whole, arr, value_name=name)}.")
        if np.any(np.abs(arr) > 2.0**53):
            raise ValueError(f"`{name}` holds floats beyond 2**53, which are not exact integers; pass an integer array.")
    negative = arr < 0
    if negative.any():
        raise ValueError(f"`{name}` must be non-negative; negative values at {describe_offenders(negative, arr, value_name=name)}.")
    if kind == "u" and arr.dtype.itemsize == 8 and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise ValueError(f"`{name}` holds integers too large for int64.")
    return arr.astype(np.int64, copy=False)


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_counts(
    n_samples: Any, n_correct: Any, *, correct_name: str = "n_correct"
) -> tuple[NDArray[np.int64], NDArray[np.int64], bool]:
    """Validate per-problem ``(n_samples, n_correct)`` counts.

    Both must be 0-D or 1-D integer counts with ``0 <= n_correct <= n_samples``. A 0-D array
    broadcasts against a 1-D one (one ``n`` for every problem); two 1-D arrays must have the same
    length.

    Parameters
    ----------
    n_samples, n_correct : array_like of int
        Samples drawn and samples with the property (correct, finished, ...) per problem.
    correct_name : str, default: "n_correct"
        Name of the second parameter in messages (``"n_cot_correct"``, ``"n_finished"``).

    Returns
    -------
    n, c : ndarray of int64, shape (N,)
    scalar_input : bool
        ``True`` when both inputs were 0-D; callers then drop the problem axis of the result.
    """
    n = as_count_array(n_samples, "n_samples")
    c = as_count_array(n_correct, correct_name)
    scalar_input = n.ndim == 0 and c.ndim == 0
    if n.ndim == 1 and c.ndim == 1 and n.shape != c.shape:
        raise ValueError(
            f"`n_samples` and `{correct_name}` must have the same length (one entry per problem); "
            f"got {n.shape[0]} and {c.shape[0]}."
        )
    n, c = np.broadcast_arrays(np.atleast_1d(n), np.atleast_1d(c))
    over = c > n
    if over.any():
        first = np.flatnonzero(over)[:MAX_REPORTED]
        pairs = ", ".join(f"[{i}] ({correct_name}={c[i]}, n_samples={n[i]})" for i in first)
        more = ", ..." if over.sum() > MAX_REPORTED else ""
        raise ValueError(
            f"`{correct_name}` exceeds `n_samples` for {int(over.sum())} problem"
            f"{'s' if over.sum() != 1 else ''}; first: {pairs}{more}."
        )
    return np.ascontiguousarray(n), np.ascontiguousarray(c), bool(scalar_input)


def check_k(k: Any, n: NDArray[np.int64] | None = None, *, name: str = "k") -> tuple[NDArray[np.int64], bool]:
    """Validate ``k`` (an int or a 1-D sequence of ints, each >= 1 and <= every ``n``).

    Parameters
    ----------
    k : int or sequence of int
        Number of draws. Floats holding whole numbers are accepted.
    n : ndarray of int64, shape (N,), optional
        Samples per problem; when given, every ``k`` must satisfy ``k <= n`` for every problem
        (``k > n`` is undefined for a without-replacement estimator; see docs/spec.md section 1).
    name : str, default: "k"

    Returns
    -------
    k_values : ndarray of int64, shape (K,)
    k_is_scalar : bool
    """
    if isinstance(k, (bool, np.bool_)):
        raise TypeError(f"`{name}` must be an integer >= 1 or a 1-D sequence of them; got the boolean {k!r}.")
    if isinstance(k, (str, bytes)):
        raise TypeError(f"`{name}` must be an integer >= 1 or a 1-D sequence of them; got the string {k!r}.")
    try:
        arr = np.asarray(k)
    except (ValueError, TypeError):
        raise TypeError(f"`{name}` must be an integer >= 1 or a 1-D sequence of them; got {_short(k)}.") from None
    if arr.ndim > 1:
        raise ValueError(f"`{name}` must be an integer or a 1-D sequence; got an array of shape {arr.shape}.")
    if arr.ndim == 1 and arr.size == 0:
        raise ValueError(f"`{name}` must not be an empty sequence.")
    if arr.dtype.kind == "b":
        raise TypeError(f"`{name}` must hold integers, not booleans; got {_short(k)}.")
    if arr.dtype.kind == "O":
        if all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in arr.flat):
            arr = arr.astype(np.int64)
        else:
            raise TypeError(f"`{name}` must be an integer >= 1 or a 1-D sequence of them; got {_short(k)}.")
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"`{name}` must be an integer >= 1 or a 1-D sequence of them; got {_short(k)} (dtype {arr.dtype}).")
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all() or not (arr == np.floor(arr)).all():
            raise ValueError(f"`{name}` must be a whole number >= 1; got {_short(k)}.")
    if (arr < 1).any():
        raise ValueError(f"`{name}` must be >= 1; got {_short(k)}.")
    k_is_scalar = arr.ndim == 0
    k_values = np.atleast_1d(arr).astype(np.int64)
    if n is not None and n.size:
        k_max = int(k_values.max())
        too_small = n < k_max
        if too_small.any():
            raise ValueError(
                f"`{name}` = {k_max} exceeds `n_samples` (k > n is undefined for an unbiased "
                f"estimator) for {describe_offenders(too_small, n, value_name='n_samples')}; "
                f"draw more samples, lower `{name}`, or drop those problems."
            )
    return k_values, bool(k_is_scalar)


def exact_fraction(value: Any, name: str, interval: str, kinds: str = "") -> Fraction:
    """``value`` as an exact :class:`~fractions.Fraction` (the range is the caller's to check).

    A float goes through its shortest decimal (``0.28`` is exactly 7/25), a string is parsed
    (``"0.28"``, ``"7/25"``), an integer, Fraction, Decimal or other rational is taken exactly.
    ``interval`` (e.g. ``"[0, 1]"``) and ``kinds`` (what else ``name`` may be, e.g. ``" (or a 1-D
    sequence of them)"``) word the messages.

    Raises
    ------
    TypeError
        A boolean, or a value of no numeric kind.
    ValueError
        NaN, an infinity, or a string that is no number.
    """
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"`{name}` must be a number in {interval}; got the boolean {value!r}.")
    try:
        if isinstance(value, Fraction):
            frac = value
        elif isinstance(value, (numbers.Integral, np.integer)):
            frac = Fraction(int(value))
        elif isinstance(value, Decimal):
            frac = Fraction(value)
        elif isinstance(value, (float, np.floating)):
            if not math.isfinite(float(value)):
                raise ValueError
            # str() gives the shortest decimal that round-trips: 0.28 -> "0.28" -> 7/25 exactly,
            # whereas Fraction(0.28) is the binary float 0.28000000000000002665...
            frac = Fraction(str(value))
        elif isinstance(value, str):
            frac = Fraction(value.strip())
        elif isinstance(value, numbers.Rational):
            frac = Fraction(int(value.numerator), int(value.denominator))
        else:
            raise TypeError(
                f"`{name}` must be a float, str, Fraction or Decimal in {interval}{kinds}; "
                f"got {_short(value)} of type {type(value).__name__}."
            )
    except (ValueError, ArithmeticError, ZeroDivisionError):
        raise ValueError(f"`{name}` must be a finite number in {interval}; got {value!r}.") from None
    return frac


def _tau_to_fraction(value: Any) -> Fraction:
    frac = exact_fraction(value, "tau", "[0, 1]", " (or a 1-D sequence of them)")
    if not 0 <= frac <= 1:
        raise ValueError(f"`tau` must be in [0, 1]; got {value!r}.")
    return frac


def check_tau(tau: Any) -> tuple[list[Fraction], bool]:
    """Validate ``tau`` (a number in [0, 1] or a 1-D sequence of them) as exact fractions.

    Floats are converted through their shortest decimal representation (``Fraction(str(tau))``),
    so ``0.28`` means exactly 7/25; strings (``"0.28"``, ``"7/25"``), :class:`~fractions.Fraction`
    and :class:`~decimal.Decimal` are taken exactly.

    Returns
    -------
    taus : list of Fraction
    tau_is_scalar : bool
    """
    if isinstance(tau, (str, bytes, Fraction, Decimal, numbers.Number)) or (
        isinstance(tau, np.ndarray) and tau.ndim == 0
    ):
        scalar = tau.item() if isinstance(tau, np.ndarray) else tau
        if isinstance(scalar, bytes):
            raise TypeError(f"`tau` must be a number in [0, 1]; got the bytes {scalar!r}.")
        return [_tau_to_fraction(scalar)], True
    if isinstance(tau, np.ndarray):
        if tau.ndim != 1:
            raise ValueError(f"`tau` must be a number or a 1-D sequence; got an array of shape {tau.shape}.")
        values = list(tau)
    elif isinstance(tau, Iterable):
        values = list(tau)
    else:
        raise TypeError(f"`tau` must be a number in [0, 1] or a 1-D sequence of them; got {_short(tau)}.")
    if not values:
        raise ValueError("`tau` must not be an empty sequence.")
    for v in values:
        if isinstance(v, (list, tuple, np.ndarray)) and not (isinstance(v, np.ndarray) and v.ndim == 0):
            raise ValueError(f"`tau` must be a number or a 1-D sequence; got the nested {_short(tau)}.")
    return [_tau_to_fraction(v.item() if isinstance(v, np.ndarray) else v) for v in values], False


def exact_threshold(tau: Fraction, k: int) -> int:
    """Return ``m = max(ceil(tau * k), 1)`` computed exactly (docs/spec.md section 3).

    >>> exact_threshold(Fraction("0.28"), 25)   # float: math.ceil(0.28 * 25) == 8
    7
    """
    return max(math.ceil(tau * k), 1)


def check_option(value: Any, name: str, allowed: Sequence[str]) -> str:
    """Return ``value`` if it is one of ``allowed``, else raise naming the choices."""
    if not isinstance(value, str):
        raise TypeError(f"`{name}` must be one of {list(allowed)}; got {value!r} of type {type(value).__name__}.")
    if value not in allowed:
        raise ValueError(f"`{name}` must be one of {list(allowed)}; got {value!r}.")
    return value


# ----------------------------------------------------------------------------------------------
# interval inputs (mean_ci, paired_difference, bootstrap_weights, budgets, decomposition)
# ----------------------------------------------------------------------------------------------


def check_confidence_level(confidence_level: Any) -> float:
    if isinstance(confidence_level, (bool, np.bool_)) or not isinstance(confidence_level, numbers.Real):
        raise TypeError(f"`confidence_level` must be a number in (0, 1); got {confidence_level!r}.")
    level = float(confidence_level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"`confidence_level` must be in the open interval (0, 1); got {confidence_level!r}.")
    return level


def check_values(values: Any, name: str) -> tuple[NDArray[np.float64], bool]:
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


def factorize_labels(labels: Any, name: str, n_expected: int | None) -> tuple[NDArray[np.int64], list[Any]]:
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


def _fresh_seed() -> int:
    """Fresh 128-bit entropy as an int seed (what ``np.random.SeedSequence()`` draws), recorded
    so that a result can be reproduced."""
    return secrets.randbits(128)


def check_rng(rng: Any) -> tuple[np.random.Generator, Any]:
    """A Generator and what to record as ``details["seed"]``."""
    if rng is None:
        seed = _fresh_seed()
        return np.random.default_rng(seed), seed
    if isinstance(rng, np.random.Generator):
        return rng, "generator"
    if isinstance(rng, (bool, np.bool_)):
        raise TypeError(f"`rng` must be None, an int seed or a numpy.random.Generator; got {rng!r}.")
    if isinstance(rng, (numbers.Integral, np.integer)):
        if int(rng) < 0:
            raise ValueError(f"`rng` must be a non-negative integer seed; got {rng!r}.")
        return np.random.default_rng(int(rng)), int(rng)
    if isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng), int(rng.entropy) if isinstance(rng.entropy, int) else "seed-sequence"
    raise TypeError(f"`rng` must be None, an int seed or a numpy.random.Generator; got {type(rng).__name__}.")


def check_positive_int(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"`{name}` must be an integer >= {minimum}; got {value!r}.")
    if int(value) < minimum:
        raise ValueError(f"`{name}` must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def check_bounds(bounds: Any, default: tuple[float, float] | None) -> tuple[float, float] | None:
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


def check_within_bounds(values: NDArray[np.float64], bound_range: tuple[float, float], order: NDArray[np.intp], name: str,
                        where: Callable[[int], str]) -> None:
    """``ValueError`` when a value of ``values`` (rows in the canonical ``order``, shape ``(N, K)``) lies outside an
    explicit ``bound_range``, naming the first such problem as given (``where(row as given)``) and its value."""
    outside = (values < bound_range[0]) | (values > bound_range[1])
    if not outside.any():
        return
    rows = np.flatnonzero(outside.any(axis=1))
    row = int(rows[np.argmin(order[rows])])
    raise ValueError(f"{name} must lie within `bounds` {bound_range}; {where(int(order[row]))} has "
                     f"{float(values[row][outside[row]][0])!r}.")


#: The most bootstrap resamples: every replicate is kept (8 bytes per statistic each), and the
#: run takes time in proportion; 10^7 is a thousand times the default of 10,000.
MAX_N_RESAMPLES = 10_000_000


def check_n_resamples(value: Any, minimum: int = 2) -> int:
    """The number of bootstrap resamples: an integer >= 2 for an interval (a standard deviation
    and two tails need two replicates), >= 1 for a bare stream of weights; at most
    :data:`MAX_N_RESAMPLES`."""
    n = check_positive_int(value, "n_resamples", minimum)
    if n > MAX_N_RESAMPLES:
        raise ValueError(f"`n_resamples` must be at most {MAX_N_RESAMPLES} (every replicate is kept); got {value!r}.")
    return n


def check_max_chunk(value: Any) -> int:
    return check_positive_int(value, "max_chunk_elements", 1)


def resolve_seed(rng: Any) -> tuple[Any, Any]:
    """``rng`` to hand on to several bootstrap calls, and what to record as ``details["seed"]``.

    An int seed (or a SeedSequence) is handed on unchanged, so that every call starts the same
    stream exactly as ``mean_ci(..., rng=seed)`` does and each number equals what
    :func:`mean_ci` / :func:`paired_difference` give for it alone; a Generator is handed on (the
    calls consume it in turn); ``None`` draws fresh entropy once and hands on that seed, which is
    recorded so that the result can be reproduced.
    """
    if rng is None:
        seed = _fresh_seed()
        return seed, seed
    _, recorded = check_rng(rng)
    return rng, recorded


def check_method(method: Any, clustered: bool, paired: bool = False, *,
                 methods: Sequence[str], paired_methods: Sequence[str]) -> str:
    """The checked interval method: one of ``methods`` (``paired_methods`` for a paired difference)."""
    if not paired and method == "mover":
        raise ValueError(
            "`method` 'mover' combines the intervals of two models and is only for paired_difference; "
            f"mean_ci takes one of {list(methods)}."
        )
    method = check_option(method, "method", paired_methods if paired else methods)
    if method == "clustered-t" and not clustered:
        raise ValueError("`method` 'clustered-t' needs `clusters` (one label per problem); got clusters=None.")
    if method == "t" and clustered:
        raise ValueError(
            "`method` 't' ignores `clusters` and would understate the uncertainty; use "
            "method='clustered-t' (Inspect's clustered standard error) or drop `clusters`."
        )
    return method


@dataclass(frozen=True)
class Design:
    """The checked options of one :func:`mean_ci` / :func:`paired_difference` call."""

    level: float
    codes: NDArray[np.int64] | None
    n_clusters: int | None
    method: str
    n_resamples: int
    max_chunk_elements: int


def check_design(
    n: int, clusters: Any, method: Any, confidence_level: Any, n_resamples: Any, max_chunk_elements: Any,
    *, paired: bool, too_few: str, methods: Sequence[str], paired_methods: Sequence[str],
) -> Design:
    """The validation shared by :func:`mean_ci` and :func:`paired_difference` (in this order:
    number of problems, confidence level, clusters, method, resamples, chunk size)."""
    if n < 2:
        raise ValueError(too_few)
    level = check_confidence_level(confidence_level)
    codes, n_clusters = None, None
    if clusters is not None:
        codes, labels = factorize_labels(clusters, "clusters", n)
        n_clusters = len(labels)
        if n_clusters < 2:
            raise ValueError(f"`clusters` has a single cluster ({labels[0]!r}); clustered intervals need at least 2 clusters.")
    method = check_method(method, clusters is not None, paired=paired, methods=methods, paired_methods=paired_methods)
    return Design(level, codes, n_clusters, method, check_n_resamples(n_resamples), check_max_chunk(max_chunk_elements))


def match_ids(ids_a: Any, ids_b: Any, n_a: int, n_b: int, intersect: bool):
    """Positions in a and b of the common ids (in a's order) and the unmatched ids."""
    codes_a_raw = check_ids(ids_a, "problem_ids_a", n_a)
    codes_b_raw = check_ids(ids_b, "problem_ids_b", n_b)
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


def check_ids(ids: Any, name: str, n: int) -> list[Any]:
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
