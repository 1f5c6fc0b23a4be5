"""Shared pieces of the fuzz suite (issue #15): mutation strategy, settings and the one property."""

from __future__ import annotations

import contextlib
import copy
import io
import json
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
#: invalid UTF-8, NUL, duplicate keys, nesting, odd whitespace and separators.
TOKENS = [b"1e999", b"NaN", b"-Infinity", b"-1", b"1e30", b"100000000000000000000000000000", b"18446744073709551615",
          b'"', b"[", b"{", b"]", b"}", b"\xff", b"\x00", b"\n", b"\r", b",", b";", b"true", b"null", b"0.5",
          b'"model"', b'"correct": true, "correct": false', b"\xef\xbb\xbf", b"[" * 3000, b'"\\ud800"', b"=cmd",
          # issue #34: NBSP, a vertical tab, a UTF-8-encoded lone surrogate, an unquoted thousands
          # separator, empty and trailing fields, a tab
          b"\xc2\xa0", b"\x0b", b"\xed\xa0\x80", b"1,000", b",,", b",\n", b"\t"]


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


# ----------------------------------------------------------------------------------------------
# seed sample tables: real kpass files every engine reads


def valid_records() -> list[dict]:
    """Twelve valid samples (two models, three problems, two samples each) with every column a
    metric reads; each problem's answers are consistent with its verdicts."""
    return [{"model": m, "task": "t", "problem_id": f"p{j}", "sample_index": s, "correct": (j + s) % 2 == 0,
             "answer": "right" if (j + s) % 2 == 0 else f"wrong{j % 2}", "finished": True,
             "output_tokens": 10 * s + j, "cot_verdicts": [True, None], "cluster": f"c{j % 2}", "metadata": {"k": [1, 2]}}
            for m in ("a", "b") for j in range(3) for s in range(2)]


VALID_JSONL = "".join(json.dumps(r) + "\n" for r in valid_records()).encode()


def csv_bytes() -> bytes:
    """:func:`valid_records` as CSV (``cot_verdicts`` as JSON text, no ``metadata``)."""
    import csv

    buffer = io.StringIO()
    fields = ["model", "task", "problem_id", "sample_index", "correct", "answer", "finished", "output_tokens",
              "cot_verdicts", "cluster"]
    writer = csv.DictWriter(buffer, fields, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for record in valid_records():
        writer.writerow({**record, "cot_verdicts": json.dumps(record["cot_verdicts"])})
    return buffer.getvalue().encode()


VALID_CSV = csv_bytes()


def parquet_bytes() -> bytes:
    """:func:`valid_records` as Parquet (no ``metadata``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    records = valid_records()
    table = pa.table({name: [r[name] for r in records] for name in
                      ("model", "task", "problem_id", "sample_index", "correct", "answer", "finished",
                       "output_tokens", "cot_verdicts", "cluster")})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


# ----------------------------------------------------------------------------------------------
# zip-level mutations of an Inspect ``.eval`` archive (issue #34, point 6)

#: zip compression methods: stored, deflate, deflate64, bzip2, lzma, zstd, xz, jpeg, AE-x, and nonsense.
ZIP_METHODS = [0, 8, 9, 12, 14, 93, 95, 96, 99, 0xFFFF]
#: size fields worth trying: empty, one byte, the 32-bit limit, the zip64 marker, a 3 GiB claim.
ZIP_SIZES = [0, 1, 2**31 - 1, 0xFFFFFFFF, 3 * 2**30]


def _zip_records(data: bytes) -> tuple[int, list[int]]:
    """(offset of the end-of-central-directory record, offsets of the central directory entries)."""
    end = data.rfind(b"PK\x05\x06")
    entries, position = [], data.find(b"PK\x01\x02")
    while position != -1 and position < end:
        entries.append(position)
        position = data.find(b"PK\x01\x02", position + 46)
    return end, entries


def _rewrite_members(seed: bytes, replace) -> bytes:
    """``seed``'s members written again in order (zstd members need ``zipfile_zstd``), each through
    ``replace(name, data) -> [(name, data, method), ...]``."""
    import zipfile

    import zipfile_zstd  # noqa: F401  - registers method 93 (zstd), as Inspect writes it

    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(seed)) as source, zipfile.ZipFile(out, "w") as target, \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a duplicate name is one of the mutations
        for info in source.infolist():
            for name, data, method in replace(info.filename, source.read(info)):
                target.writestr(zipfile.ZipInfo(name, date_time=info.date_time), data, compress_type=method)
    return out.getvalue()


@st.composite
def zip_mutated(draw, seed: bytes):
    """``seed`` (a zip archive) with one structural edit: a member's JSON mutated (:func:`mutated`
    or :func:`json_mutated`) and written back stored, deflated or zstd; a member repeated; a size or compression method
    field of the central directory or a local header overwritten; the central directory or the
    end record truncated or its counts and offsets changed."""
    import struct
    import zipfile

    import zipfile_zstd  # noqa: F401  - registers method 93 (zstd), as Inspect writes it

    end, entries = _zip_records(seed)
    operation = draw(st.sampled_from(["member", "member", "duplicate", "size", "method", "truncate", "end-record"]))
    if operation in ("member", "duplicate"):
        names = [info.filename for info in zipfile.ZipFile(io.BytesIO(seed)).infolist()]
        chosen = draw(st.sampled_from(names))
        method = draw(st.sampled_from([0, 8, 93]))
        if operation == "member":
            original = zipfile.ZipFile(io.BytesIO(seed)).read(chosen)
            edited = (draw(json_mutated(original)) if draw(st.booleans())
                      else draw(mutated(original[:4096], max_edits=3)) + original[4096:])
            return _rewrite_members(seed, lambda name, data: [(name, edited if name == chosen else data,
                                                               method if name == chosen else 93)])
        return _rewrite_members(seed, lambda name, data: [(name, data, 93)] + ([(name, data, method)]
                                                                              if name == chosen else []))
    data = bytearray(seed)
    if operation in ("size", "method"):
        entry = draw(st.sampled_from(entries))
        (local,) = struct.unpack_from("<I", data, entry + 42)
        where = draw(st.sampled_from(["central", "local", "both"]))
        if operation == "size":
            offsets = draw(st.sampled_from([(20, 18), (24, 22)]))  # compressed, uncompressed size
            original = struct.unpack_from("<I", data, entry + offsets[0])[0]
            value = draw(st.sampled_from(ZIP_SIZES + [max(original - 1, 0), original + 1])) & 0xFFFFFFFF
            fields, size = offsets, "<I"
        else:
            value, fields, size = draw(st.sampled_from(ZIP_METHODS)), (10, 8), "<H"
        if where in ("central", "both"):
            struct.pack_into(size, data, entry + fields[0], value)
        if where in ("local", "both") and local + 30 <= len(data):
            struct.pack_into(size, data, local + fields[1], value)
        return bytes(data)
    if operation == "truncate":
        start = entries[0] if entries else end
        return bytes(data[:draw(st.integers(start, len(data) - 1))])
    field = draw(st.sampled_from([(8, "<H"), (10, "<H"), (12, "<I"), (16, "<I")]))  # counts, size, offset
    value = draw(st.sampled_from([0, 1, 0xFFFF, 0xFFFFFFFF, 10**6]))
    struct.pack_into(field[1], data, end + field[0], value & (0xFFFF if field[1] == "<H" else 0xFFFFFFFF))
    return bytes(data)


# ----------------------------------------------------------------------------------------------
# the one-line-error contract at the command line (issue #34, point 6)

#: The CLI fuzz tests: fewer examples (each one runs a whole command) and a deadline per example
#: that only a hang exceeds.
FUZZ_CLI = settings(FUZZ, max_examples=25, deadline=timedelta(seconds=15))


def run_kpass(*args: object) -> tuple[int, str, str]:
    """``kpass ARGS`` in this process (:func:`kpass.cli.main`) with stdout and stderr captured:
    ``(exit code, stdout, stderr)``. An exception that escapes ``main`` is a traceback the user
    would see: it propagates and fails the test."""
    from kpass import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = cli.main([str(arg) for arg in args])
    return code, out.getvalue(), err.getvalue()


def assert_one_line_contract(result: tuple[int, str, str], *names: str) -> None:
    """The CLI's contract on bad input: exit 0, 1 (data) or 2 (usage); never a traceback or an
    "internal error"; a failure is exactly one non-empty line on stderr naming one of ``names``
    (the input file, or the directory or archive it is in)."""
    code, out, err = result
    assert code in (0, 1, 2), (code, err[-2000:])
    assert "Traceback" not in out + err and "internal error" not in err, err[-2000:]
    if code != 0:
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1, err[-2000:]
        assert any(name in lines[0] for name in names), (names, lines[0])


# ----------------------------------------------------------------------------------------------
# structure-aware mutations of JSON and JSON Lines (issue #34, point 6)

#: values put in place of a node: nulls, booleans, odd numbers (2.7 where a count belongs, 1e30,
#: 1e308), empty and lone-surrogate strings, empty and nested containers.
JSON_VALUES = [None, True, False, 0, -1, 2.7, 10**30, 1e308, "", "x", "\ud800", [], {}, [[1]], {"a": {"b": 1}}]


class _Pairs(list):
    """A JSON object as its (key, value) pairs (``json.loads``'s ``object_pairs_hook``), written
    in order with repeated keys kept; a path indexes its pairs."""


def _encode(value) -> str:
    if isinstance(value, _Pairs):
        return "{" + ", ".join(json.dumps(key) + ": " + _encode(item) for key, item in value) + "}"
    if isinstance(value, dict):
        return _encode(_Pairs(value.items()))
    if isinstance(value, list):
        return "[" + ", ".join(_encode(item) for item in value) + "]"
    return json.dumps(value)


def _children(value) -> list:
    return list(range(len(value))) if isinstance(value, list) else []


def _child(value, key):
    return value[key][1] if isinstance(value, _Pairs) else value[key]


def _paths(document, limit: int = 4000) -> list[tuple]:
    """Paths (tuples of indices) of the first ``limit`` nodes, root excluded, depth first."""
    paths: list[tuple] = []
    stack: list[tuple[tuple, object]] = [((), document)]
    while stack and len(paths) < limit:
        path, value = stack.pop()
        for key in reversed(_children(value)):
            stack.append(((*path, key), _child(value, key)))
        if path:
            paths.append(path)
    return paths


def _edit(document, path: tuple, operation: str, replacement):
    parent = document
    for key in path[:-1]:
        parent = _child(parent, key)
    key = path[-1]
    if operation == "delete":
        del parent[key]
    elif operation == "replace":
        if isinstance(parent, _Pairs):
            parent[key] = (parent[key][0], replacement)
        else:
            parent[key] = replacement
    return document


@st.composite
def json_mutated(draw, seed: bytes, max_edits: int = 3):
    """``seed`` (one JSON document, or JSON Lines: then one line is edited) parsed and written back
    with up to ``max_edits`` edits of its structure: a node replaced by a value of
    :data:`JSON_VALUES` or wrapped in a list or an object, a node deleted, a key of an object
    repeated with another value. Text that is not JSON is returned as it is."""
    text = seed.decode("utf-8")
    try:
        lines, index = [text], 0
        document = json.loads(text, object_pairs_hook=_Pairs)
    except ValueError:
        lines = text.splitlines(keepends=True)
        candidates = [i for i, line in enumerate(lines) if line.strip()]
        if not candidates:
            return seed
        index = draw(st.sampled_from(candidates))
        try:
            document = json.loads(lines[index], object_pairs_hook=_Pairs)
        except ValueError:
            return seed
    for _ in range(draw(st.integers(1, max_edits))):
        paths = _paths(document)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        operation = draw(st.sampled_from(["replace", "replace", "wrap", "delete", "repeat-key"]))
        if operation == "replace":
            document = _edit(document, path, "replace", copy.deepcopy(draw(st.sampled_from(JSON_VALUES))))
        elif operation == "wrap":
            parent = document
            for key in path:
                parent = _child(parent, key)
            wrapped = [parent] if draw(st.booleans()) else {"value": parent}
            document = _edit(document, path, "replace", wrapped)
        elif operation == "delete":
            document = _edit(document, path, "delete", None)
        else:  # the object holding the node gets the node's key again, with another value
            holder = document
            for key in path[:-1]:
                holder = _child(holder, key)
            if isinstance(holder, _Pairs):
                holder.append((holder[path[-1]][0], copy.deepcopy(draw(st.sampled_from(JSON_VALUES)))))
    newline = "\n" if lines[index].endswith("\n") else ""
    lines[index] = _encode(document) + newline
    return "".join(lines).encode("utf-8", "surrogatepass")
