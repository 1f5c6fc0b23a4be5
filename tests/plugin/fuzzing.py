"""Shared pieces of the fuzz suite (issue #15): mutation strategy, settings and the one property."""

from __future__ import annotations

import contextlib
import os
import tempfile
import warnings
from datetime import timedelta

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import kpass

#: Bounded examples and a per-example deadline that only a hang exceeds (the machine is shared).
FUZZ = settings(max_examples=100, deadline=timedelta(seconds=20),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

#: Byte strings that make readers' edge cases: huge and odd numbers, quotes, brackets, BOM,
#: invalid UTF-8, NUL, duplicate keys, nesting.
TOKENS = [b"1e999", b"NaN", b"-Infinity", b"-1", b"1e30", b"100000000000000000000000000000", b"18446744073709551615",
          b'"', b"[", b"{", b"]", b"}", b"\xff", b"\x00", b"\n", b"\r", b",", b";", b"true", b"null", b"0.5",
          b'"model"', b'"correct": true, "correct": false', b"\xef\xbb\xbf", b"[" * 3000, b'"\\ud800"', b"=cmd"]


@st.composite
def mutated(draw, seed: bytes, max_edits: int = 6):
    """``seed`` with up to ``max_edits`` edits: a cut, a byte flip, a token inserted or
    overwritten, a span deleted or duplicated."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, max_edits))):
        position = draw(st.integers(0, max(len(data) - 1, 0)))
        operation = draw(st.sampled_from(["cut", "flip", "insert", "overwrite", "delete", "duplicate"]))
        if operation == "cut":
            del data[position:]
        elif operation == "flip" and data:
            data[position] ^= 1 << draw(st.integers(0, 7))
        elif operation in ("insert", "overwrite"):
            token = draw(st.sampled_from(TOKENS) | st.binary(min_size=1, max_size=4))
            end = position + (len(token) if operation == "overwrite" else 0)
            data[position:end] = token
        elif operation == "delete":
            del data[position:position + draw(st.integers(1, 40))]
        elif operation == "duplicate":
            data[position:position] = data[position:position + draw(st.integers(1, 200))]
    return bytes(data)


@contextlib.contextmanager
def write_temporary(data: bytes, suffix: str, name: str = "fuzz"):
    """A temporary file holding ``data``, removed afterwards."""
    directory = tempfile.mkdtemp(prefix="kpass-fuzz-")
    path = os.path.join(directory, name + suffix)
    with open(path, "wb") as handle:
        handle.write(data)
    try:
        yield path
    finally:
        os.unlink(path)
        os.rmdir(directory)


def assert_table_or_kpass_error(read, *args):
    """``read(*args)`` returns a SampleTable or raises a kpass error (a DataError: one line
    naming the file); any other exception fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            table = read(*args)
        except kpass.DataError as error:
            message = str(error)
            assert message and "Traceback" not in message
            return None
    assert isinstance(table, kpass.SampleTable)
    return table
