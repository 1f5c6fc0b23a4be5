"""The columns of the sample table: the schema, and each input column turned into a typed array.

Every converter is vectorized wherever the input is already a typed array (numpy, Arrow) and
raises a :class:`~kpass.DataError` naming the source, the line and the field of the first bad
value; :class:`kpass.SampleTable` (:mod:`kpass.data.table`) calls them on every table it builds.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kpass.errors import DataError

__all__ = ["CATEGORICAL_COLUMNS", "Categorical", "OPTIONAL_COLUMNS", "REQUIRED_COLUMNS", "SCHEMA_COLUMNS"]

REQUIRED_COLUMNS = ("model", "task", "problem_id", "sample_index", "correct")
OPTIONAL_COLUMNS = (
    "answer", "gold", "finished", "output_tokens", "answer_token", "cot_verdicts", "cluster", "metadata",
)
SCHEMA_COLUMNS = REQUIRED_COLUMNS + OPTIONAL_COLUMNS
CATEGORICAL_COLUMNS = ("model", "task", "problem_id", "answer", "gold", "cluster")
_NULLABLE_BOOL_COLUMNS = ("finished",)
_NULLABLE_INT_COLUMNS = ("output_tokens", "answer_token")
_NULL = -1
#: ``None`` as a 0-d object array: ``np.equal(values, _NONE)`` is "is null" elementwise (typed, unlike a bare None).
_NONE = np.array(None, dtype=object)
#: Integers (sample_index, token counts) are int64: 2**63 and above (e.g. 1e30) is a data error.
_INT_LIMIT = 2**63

_TRUE_STRINGS = {"true": True, "false": False, "1": True, "0": False, "t": True, "f": False}


@dataclasses.dataclass(frozen=True)
class Categorical:
    """Pre-coded categorical column for :meth:`SampleTable.from_columns` (fast path).

    Attributes
    ----------
    codes : ndarray of int, shape (rows,)
        Index into ``categories`` per row; ``-1`` is null (only for nullable columns).
    categories : sequence of str
        Distinct values.
    """

    codes: Any
    categories: Sequence[Any]


# --------------------------------------------------------------------------------------------
# column conversion (vectorized wherever the input is already a typed array)


class _Context:
    """Where rows came from, to name the source and line in errors."""

    def __init__(self, source_names: list[str], source_codes: NDArray[np.int32], lines: NDArray[np.int64]):
        self.source_names = source_names
        self.source_codes = source_codes
        self.lines = lines

    def error(self, message: str, row: int | None = None, field: str | None = None) -> DataError:
        if row is None:
            return DataError(message, source=_describe_sources(self.source_names), field=field)
        return DataError(
            message, source=self.source_names[int(self.source_codes[row])], line=int(self.lines[row]), field=field
        )


def _describe_sources(names: Sequence[str]) -> str | None:
    """The sources of a table for a message about all of it: up to three names, else the first and a count."""
    if len(names) <= 3:
        return ", ".join(names) or None
    return f"{names[0]} (+{len(names) - 1} more files)"


def _unique_notes(notes: Iterable[str]) -> tuple[str, ...]:
    if isinstance(notes, str):
        raise TypeError(f"`notes` must be an iterable of strings; got the string {notes!r}.")
    notes = tuple(notes)
    for note in notes:
        if not isinstance(note, str):
            raise TypeError(f"`notes` must hold strings; got {type(note).__name__} {note!r}.")
    return tuple(dict.fromkeys(notes))


def _check_correct_implies_finished(correct: NDArray[np.bool_], finished: NDArray[np.int8], ctx: _Context) -> None:
    """A correct sample has emitted its final answer, so it finished (docs/spec.md section 6)."""
    contradiction = correct & (finished == 0)
    if contradiction.any():
        row = int(np.flatnonzero(contradiction)[0])
        raise ctx.error(
            "this sample is judged correct but `finished` is false; a sample finishes when its final answer "
            "is emitted within its token budget (docs/spec.md section 6), so a correct answer means it finished. "
            "Fix `finished` (or `correct`): kept as it is, pass@1 and pass@1(B) = fin@1(B) * pass@1(B | fin) "
            "would disagree", row, "finished")


def _stringify(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _to_categorical(values: Any, name: str, nullable: bool, ctx: _Context) -> tuple[NDArray[np.int32], list[str]]:
    if hasattr(values, "codes") and hasattr(values, "categories"):
        codes = np.asarray(values.codes)
        if codes.dtype.kind not in "iu":
            raise TypeError(f"`{name}` codes must be integers; got dtype {codes.dtype}.")
        categories = [_stringify(v) for v in values.categories]
        codes = codes.astype(np.int64, copy=False)
        bad = (codes < _NULL) | (codes >= len(categories))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ctx.error(f"code {int(codes[row])} is outside the {len(categories)} categories", row, name)
        if len(set(categories)) != len(categories):  # e.g. 1 and "1": merge
            unique: dict[str, int] = {}
            remap = np.array([unique.setdefault(c, len(unique)) for c in categories], dtype=np.int64)
            codes = np.where(codes >= 0, remap[np.maximum(codes, 0)], _NULL)
            categories = list(unique)
    else:
        array = values if isinstance(values, np.ndarray) else None
        if array is None:
            try:
                array = np.asarray(values)
            except (ValueError, TypeError):
                array = np.empty(len(values), dtype=object)
                array[:] = list(values)
            if array.ndim != 1:
                array = np.empty(len(values), dtype=object)
                array[:] = list(values)
        kind = array.dtype.kind
        if kind in "USiub":
            uniques, first, codes = np.unique(array, return_index=True, return_inverse=True)
            categories = [_stringify(u.item()) for u in uniques]
            codes = _renumber_by_first(codes.astype(np.int64).ravel(), first)
            categories = [categories[i] for i in np.argsort(first, kind="stable").tolist()]
        elif kind == "f":
            nan = np.isnan(array)
            uniques, first, codes = np.unique(np.where(nan, np.inf, array), return_index=True, return_inverse=True)
            categories = [_stringify(int(u)) if float(u).is_integer() else repr(float(u)) for u in uniques]
            codes = _renumber_by_first(codes.astype(np.int64).ravel(), first)
            categories = [categories[i] for i in np.argsort(first, kind="stable").tolist()]
            if nan.any():  # inf stood for NaN: drop that category, make it null
                nan_code = int(codes[np.flatnonzero(nan)[0]])
                codes = np.where(nan, _NULL, codes - (codes > nan_code))
                del categories[nan_code]
        else:
            codes, categories = _factorize_objects(array.tolist())
    if not nullable:
        null = codes < 0
        if null.any():
            row = int(np.flatnonzero(null)[0])
            raise ctx.error(f"`{name}` is required and may not be null or NaN", row, name)
    dtype = np.int32 if len(categories) < 2**31 - 1 else np.int64
    return codes.astype(dtype, copy=False), categories


def _factorize_objects(values: list[Any]) -> tuple[NDArray[np.int64], list[str]]:
    """Codes (first-appearance order, ``-1`` for None/NaN) of a list of Python objects.

    Strings (with None) and integers, what JSON and CSV give, go through C-level ``dict``/``map``
    calls; any other mix falls back to one Python step per row.
    """
    kinds = set(map(type, values))
    if kinds <= {str, type(None)} or kinds == {int}:
        if kinds == {int}:
            values = list(map(str, values))
        first_seen = dict.fromkeys(values)  # insertion order = first appearance
        null_seen = None in first_seen
        first_seen.pop(None, None)
        lookup = {value: code for code, value in enumerate(first_seen)}
        if null_seen:
            lookup[None] = _NULL
        codes = np.fromiter(map(lookup.__getitem__, values), dtype=np.int64, count=len(values))
        return codes, list(first_seen)
    mapping: dict[str, int] = {}
    codes = np.empty(len(values), dtype=np.int64)
    setdefault = mapping.setdefault
    for row, value in enumerate(values):
        if value is None or (value.__class__ is float and value != value):
            codes[row] = _NULL
        else:
            codes[row] = setdefault(value if value.__class__ is str else _stringify(value), len(mapping))
    return codes, list(mapping)


def _renumber_by_first(codes: NDArray[np.int64], first: NDArray[np.int64]) -> NDArray[np.int64]:
    """Renumber np.unique's sorted codes so that categories follow first appearance."""
    permutation = np.argsort(first, kind="stable")
    inverse = np.empty_like(permutation)
    inverse[permutation] = np.arange(len(permutation))
    return inverse[codes]


def _as_array(values: Any) -> np.ndarray:
    if isinstance(values, np.ndarray):
        return values
    try:
        array = np.asarray(values)
    except (ValueError, TypeError):
        array = None
    if array is None or array.ndim != 1:
        array = np.empty(len(values), dtype=object)
        array[:] = list(values)
    return array


def _to_bool(values: Any, name: str, nullable: bool, ctx: _Context) -> NDArray:
    """bool array (required) or int8 with -1 for null (nullable)."""
    array = _as_array(values)
    kind = array.dtype.kind
    what = "true/false (or 1/0)" + (" or null" if nullable else "")
    if kind == "b":
        return array.astype(np.int8) if nullable else array.astype(bool, copy=False)
    if kind in "iu":
        bad = (array != 0) & (array != 1)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ctx.error(f"`{name}` must be {what}; got {array[row].item()!r}", row, name)
        return array.astype(np.int8) if nullable else array.astype(bool)
    if kind == "f":
        nan = np.isnan(array)
        bad = ~nan & (array != 0) & (array != 1)
        if bad.any() or (nan.any() and not nullable):
            row = int(np.flatnonzero(bad | (nan if not nullable else False))[0])
            raise ctx.error(f"`{name}` must be {what}; got {array[row].item()!r}", row, name)
        if nullable:
            return np.where(nan, _NULL, array).astype(np.int8)
        return array.astype(bool)
    values = array.tolist()
    kinds = set(map(type, values))
    if kinds <= {bool, type(None)} and (nullable or type(None) not in kinds):  # JSON: true/false/null
        null = np.equal(array, _NONE)
        out = np.full(len(array), _NULL, dtype=np.int8)
        out[~null] = array[~null].astype(bool)
        return out if nullable else out.astype(bool)
    if kinds <= {str, type(None)}:  # CSV: every cell a string (None = empty cell)
        return _strings_to_bool(array, name, nullable, what, ctx)
    out = np.empty(len(array), dtype=np.int8)
    for row, value in enumerate(values):
        if value is True or value is False:
            out[row] = value
        elif isinstance(value, str) and value.strip().lower() in _TRUE_STRINGS:
            out[row] = _TRUE_STRINGS[value.strip().lower()]
        elif isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value in (0, 1):
            out[row] = value
        elif isinstance(value, float) and value in (0.0, 1.0):
            out[row] = int(value)
        elif nullable and (value is None or (isinstance(value, str) and value.strip().lower() in ("", "null", "none"))):
            out[row] = _NULL
        else:
            raise ctx.error(f"`{name}` must be {what}; got {value!r}", row, name)
    return out if nullable else out.astype(bool)


_NULL_STRINGS = ("", "null", "none")


def _normalized_strings(array: np.ndarray) -> np.ndarray:
    """Stripped, lower-cased text of an object array of str/None (None becomes ``""``)."""
    text = np.where(np.equal(array, _NONE), "", array).astype(str)
    return np.char.lower(np.char.strip(text))


def _strings_to_bool(array: np.ndarray, name: str, nullable: bool, what: str, ctx: _Context) -> NDArray:
    text = _normalized_strings(array)
    is_true = np.isin(text, [key for key, value in _TRUE_STRINGS.items() if value])
    is_false = np.isin(text, [key for key, value in _TRUE_STRINGS.items() if not value])
    is_null = np.isin(text, _NULL_STRINGS) if nullable else np.zeros(len(text), dtype=bool)
    bad = ~(is_true | is_false | is_null)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ctx.error(f"`{name}` must be {what}; got {array[row]!r}", row, name)
    if not nullable:
        return is_true
    return np.where(is_null, _NULL, is_true).astype(np.int8)


#: Largest count or index a sample table holds: the largest integer a float64 (and JSON
#: readers in other languages) holds exactly. Larger values are a DataError, never a wrap-around.
MAX_INTEGER = 2**53 - 1


def _beyond_max_integer(array: np.ndarray, name: str, what: str, ctx: _Context) -> None:
    """A DataError naming the first row whose (numeric or Python-int) value exceeds MAX_INTEGER."""
    with np.errstate(invalid="ignore"):
        big = np.greater(array, MAX_INTEGER) if array.dtype.kind != "O" else np.array(
            [isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and v > MAX_INTEGER
             for v in array.tolist()], dtype=bool)
    if big.any():
        row = int(np.flatnonzero(big)[0])
        value = array[row]
        shown = f"{value:.6g}" if isinstance(value, (float, np.floating)) else f"{int(value):.6g}"
        raise ctx.error(f"`{name}` must be {what} and at most {MAX_INTEGER} (2**53 - 1); got {shown}", row, name)


def _to_int(values: Any, name: str, nullable: bool, ctx: _Context) -> NDArray[np.int64]:
    """int64 >= 0 and <= MAX_INTEGER, with -1 for null when nullable."""
    array = _as_array(values)
    kind = array.dtype.kind
    what = "an integer >= 0" + (" or null" if nullable else "")
    if kind in "iu":
        _beyond_max_integer(array, name, what, ctx)
        out = array.astype(np.int64, copy=False)
    elif kind == "f":
        nan = np.isnan(array)
        _beyond_max_integer(np.where(nan, 0, array), name, what, ctx)
        bad = ~nan & ((array != np.floor(array)) | ~np.isfinite(array))
        if bad.any() or (nan.any() and not nullable):
            row = int(np.flatnonzero(bad | (nan if not nullable else False))[0])
            raise ctx.error(f"`{name}` must be {what}; got {array[row].item()!r}", row, name)
        out = np.where(nan, _NULL, array).astype(np.int64)
        nan_rows = nan
        negative = ~nan_rows & (out < 0)
        if negative.any():
            row = int(np.flatnonzero(negative)[0])
            raise ctx.error(f"`{name}` must be {what}; got {array[row].item()!r}", row, name)
        return out
    else:
        return _objects_to_int(array, name, nullable, what, ctx)
    negative = out < 0
    if negative.any():
        row = int(np.flatnonzero(negative)[0])
        raise ctx.error(f"`{name}` must be {what}; got {int(out[row])}", row, name)
    return out


def _objects_to_int(array: np.ndarray, name: str, nullable: bool, what: str, ctx: _Context) -> NDArray[np.int64]:
    values = array.tolist()
    kinds = set(map(type, values))
    if kinds <= {int, type(None)} and (nullable or type(None) not in kinds):  # JSON integers (and null)
        null = np.equal(array, _NONE)
        _beyond_max_integer(np.where(null, 0, array), name, what, ctx)
        out = np.full(len(array), _NULL, dtype=np.int64)
        out[~null] = array[~null].astype(np.int64)
        negative = ~null & (out < 0)
        if negative.any():
            row = int(np.flatnonzero(negative)[0])
            raise ctx.error(f"`{name}` must be {what}; got {values[row]!r}", row, name)
        return out
    if kinds <= {str, type(None)}:  # CSV: digits, or empty/null for a nullable column
        text = _normalized_strings(array)
        digits = np.char.isdecimal(text)  # what int() parses; not isdigit, which accepts '²'
        digits &= np.char.str_len(np.char.lstrip(text, "0")) <= 18  # below 2**63
        null = np.isin(text, _NULL_STRINGS) if nullable else np.zeros(len(text), dtype=bool)
        bad = ~(digits | null)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ctx.error(f"`{name}` must be {what}; got {values[row]!r}", row, name)
        long = digits & (np.char.str_len(text) > 15)
        if long.any():  # only these can exceed MAX_INTEGER (or int64)
            candidates = np.zeros(len(text), dtype=object)
            candidates[long] = [int(t) for t in text[long].tolist()]
            _beyond_max_integer(candidates, name, what, ctx)
        out = np.full(len(text), _NULL, dtype=np.int64)
        out[digits] = text[digits].astype(np.int64)
        return out
    out = np.empty(len(array), dtype=np.int64)
    _beyond_max_integer(array, name, what, ctx)
    # anything else (floats, numpy scalars, mixtures): one step per row
    for row, value in enumerate(values):
        if isinstance(value, (bool, np.bool_)):
            raise ctx.error(f"`{name}` must be {what}; got {value!r}", row, name)
        if isinstance(value, (int, np.integer)):
            if value < 0 or value >= _INT_LIMIT:
                raise ctx.error(f"`{name}` must be {what}; got {value!r}", row, name)
            out[row] = value
            continue
        if isinstance(value, float) and value.is_integer() and 0 <= value < _INT_LIMIT:
            out[row] = int(value)
            continue
        if isinstance(value, str) and value.strip().isdecimal() and int(value.strip()) < _INT_LIMIT:
            out[row] = int(value.strip())
            continue
        if nullable and (value is None or (isinstance(value, str) and value.strip().lower() in ("", "null", "none"))):
            out[row] = _NULL
            continue
        raise ctx.error(f"`{name}` must be {what}; got {value!r}", row, name)
    return out


def _to_verdicts(values: Any, name: str, ctx: _Context) -> tuple[NDArray[np.int8], NDArray[np.int64]]:
    """Ragged verdict lists as flat int8 (1 yes, 0 no, -1 invalid) plus row offsets."""
    flat: list[int] = []
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    for row, value in enumerate(values):
        if isinstance(value, str):
            text = value.strip()
            if text in ("", "null", "None"):
                value = None
            else:
                try:
                    value = json.loads(text)
                except json.JSONDecodeError:
                    raise ctx.error(
                        f"`{name}` must be a list of true/false/null (in CSV: a JSON list); got {value!r}", row, name
                    ) from None
        if value is None or (isinstance(value, float) and math.isnan(value)):
            offsets[row + 1] = len(flat)
            continue
        if isinstance(value, np.ndarray):
            value = value.tolist()
        if not isinstance(value, (list, tuple)):
            raise ctx.error(f"`{name}` must be a list of true/false/null; got {value!r}", row, name)
        for verdict in value:
            if verdict is None:
                flat.append(_NULL)
            elif verdict is True or verdict is False or (isinstance(verdict, (int, np.integer, np.bool_)) and verdict in (0, 1)):
                flat.append(int(verdict))
            else:
                raise ctx.error(f"`{name}` verdicts must be true, false or null; got {verdict!r}", row, name)
        offsets[row + 1] = len(flat)
    return np.asarray(flat, dtype=np.int8), offsets


def _close_schema_name(name: str) -> str | None:
    close = difflib.get_close_matches(name.lower(), SCHEMA_COLUMNS, n=1, cutoff=0.8)
    return close[0] if close and close[0] != name else None


def _missing_hint(missing: Sequence[str], present: Iterable[str]) -> str:
    hints = []
    for name in present:
        close = difflib.get_close_matches(name.lower(), missing, n=1, cutoff=0.8)
        if close and close[0] != name:
            hints.append(f"'{name}' -> '{close[0]}'")
    return f" (misspelt? {', '.join(hints)})" if hints else ""


def _check_extra_name(name: str, values: Any, ctx: _Context) -> None:
    close = _close_schema_name(name)
    if close:
        row = 0
        if isinstance(values, np.ndarray) and values.dtype == object:
            present = np.flatnonzero(np.not_equal(values, _NONE))
            row = int(present[0]) if present.size else 0
        raise ctx.error(
            f"unknown column '{name}' looks like a misspelling of the schema column '{close}'; "
            f"rename it (or, to keep it as free metadata, nest it under 'metadata'). "
            f"Schema columns: {', '.join(SCHEMA_COLUMNS)}.",
            row,
            name,
        )


#: Extra column naming the extractor behind each sample's ``answer`` (null: none known).
EXTRACTOR_COLUMN = "answer_extractor"
#: How a user names an extractor, for messages (``kpass report`` / ``kpass-lm-eval``).
ANSWER_EXTRACTOR_OPTIONS = ("--answer-extractor NAME|regex:PATTERN (kpass report) or "
                            "--kpass-answer NAME|regex:PATTERN (kpass-lm-eval)")
