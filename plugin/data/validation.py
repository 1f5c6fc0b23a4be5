"""Small reader rules every reader of kpass (built-in, adapter or engine) applies the same way.

Each function checks one thing about raw input and raises ``ValueError`` (the caller adds the
file and line to make a :class:`~kpass.errors.DataError`) or returns the checked value:

- :func:`loads_json_strict`: ``json.loads`` that refuses duplicate keys in any object (the
  standard library keeps the last value silently) and turns a nesting too deep for Python's
  recursion (``RecursionError``) into a ``ValueError``.
- :func:`empty_file_error`: the message for a file of zero bytes (or ``None``), so that every
  format says "empty" rather than "no reader recognises this file".
- :data:`TEXT_ENCODING`: ``utf-8-sig``: UTF-8 with or without a byte-order mark (Excel writes one
  at the start of a CSV; without this the first column is called ``'\\ufeffmodel'``).
"""

from __future__ import annotations

import json
import os
import re
from decimal import Decimal
from typing import Any

__all__ = ["TEXT_ENCODING", "DuplicateKeyError", "JsonNestingError", "duplicate_key_check", "empty_file_error", "loads_json_strict",
           "parse_byte_size"]

#: Encoding of every text input: UTF-8, a leading byte-order mark skipped.
TEXT_ENCODING = "utf-8-sig"


class JsonNestingError(ValueError):
    """JSON nested more deeply than Python can parse (``RecursionError`` in :mod:`json`)."""

    msg = "nested too deeply (thousands of levels of arrays or objects)"
    colno = 1


class DuplicateKeyError(ValueError):
    """A JSON object with one key twice; ``key`` names it."""

    def __init__(self, key: str) -> None:
        super().__init__(f"duplicate key {key!r} in a JSON object (which value is meant?)")
        self.key = key


def duplicate_key_check(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` for :mod:`json`: the object as a dict; ``ValueError`` naming a key
    that occurs twice."""
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    return result


_STRICT_DECODER = json.JSONDecoder(object_pairs_hook=duplicate_key_check)


def loads_json_strict(text: str | bytes) -> Any:
    """``json.loads(text)`` that refuses duplicate keys and deep nesting with a ``ValueError``
    (``json.JSONDecodeError`` for syntax, :class:`JsonNestingError` for nesting)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    try:
        return _STRICT_DECODER.decode(text)
    except RecursionError:
        raise JsonNestingError(JsonNestingError.msg) from None


def empty_file_error(path: str | os.PathLike) -> str | None:
    """``"the file is empty (0 bytes)"`` for an existing regular file of size 0, else ``None``."""
    try:
        return "the file is empty (0 bytes)" if os.path.isfile(path) and os.path.getsize(path) == 0 else None
    except OSError:
        return None


#: The largest size kpass takes (1 EiB): any real limit is far below it.
MAX_BYTE_SIZE = 2**60
_UNIT_BYTES = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
               "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}
_BYTE_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$")


def parse_byte_size(value: Any) -> int:
    """A size in bytes >= 1 from an integer or text such as ``"2GiB"``, ``"1500MiB"``, ``"4GB"``
    (units are binary: ``K``, ``M``, ``G``, ``T``, with or without ``B``/``iB``); ``ValueError``
    otherwise."""
    if isinstance(value, str) and (match := _BYTE_SIZE.match(value)) and match.group(2).lower() in _UNIT_BYTES:
        size = int(Decimal(match.group(1)) * _UNIT_BYTES[match.group(2).lower()])  # no float overflow
        if 1 <= size <= MAX_BYTE_SIZE:
            return size
    elif isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_BYTE_SIZE:
        return value
    raise ValueError(f"expected a size such as 2GiB, 1500MiB or a number of bytes, at most 1EiB; got {value!r}")


#: DuckDB's memory limits: KB, MB, GB, TB are powers of 1000, KiB, MiB, GiB, TiB of 1024 (DuckDB's own reading).
_MEMORY_UNITS = {"kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30,
                 "tib": 2**40}
_MEMORY_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-z]+)\s*", re.IGNORECASE | re.ASCII)
#: The smallest memory limit kpass gives DuckDB (its reduction needs a few buffers).
MIN_MEMORY_LIMIT = 16 * 2**20


def memory_limit(text: str) -> str:
    """A DuckDB memory limit (``--memory-limit``, ``KPASS_MEMORY_LIMIT``): a number and a unit
    (``4GB``, ``512MiB``, ``1.5 GB``) from 16 MiB to 1 EiB, returned as given; ``ValueError`` otherwise."""
    match = _MEMORY_SIZE.fullmatch(text)
    unit = _MEMORY_UNITS.get(match.group(2).lower()) if match else None
    if match is None or unit is None:
        raise ValueError(f"expected a size such as 4GB or 512MiB (units KB, MB, GB, TB, KiB, MiB, GiB, TiB); got {text!r}")
    if not MIN_MEMORY_LIMIT <= Decimal(match.group(1)) * unit <= MAX_BYTE_SIZE:
        raise ValueError(f"expected a size from 16MiB to 1EiB; got {text!r}")
    return text.strip()
