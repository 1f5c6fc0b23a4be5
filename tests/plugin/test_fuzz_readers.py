"""Fuzz suite (issue #15, item 6): random and mutated inputs to every built-in reader (JSONL, CSV,
Parquet) and the metric-spec parser give a table or a kpass error, never another exception,
never a hang.

Hypothesis runs with the suite's deterministic profile (``derandomize=True``, no database), a
bounded number of examples per reader and a generous per-example deadline that only a hang
exceeds; the lm-eval and Inspect readers are fuzzed in ``tests/adapters/test_fuzz_adapters.py``.
Shared mutation strategies live in :mod:`fuzzing` next to this file.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kpass
from kpass.host.lookups import read_samples

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzzing import FUZZ, assert_table_or_kpass_error, mutated, write_temporary

pytestmark = pytest.mark.timeout(300)


def valid_records():
    return [{"model": m, "task": "t", "problem_id": f"p{j}", "sample_index": s, "correct": (j + s) % 2 == 0,
             "answer": str(j % 3), "finished": True, "output_tokens": 10 * s + j, "cot_verdicts": [True, None],
             "cluster": f"c{j % 2}", "metadata": {"k": [1, 2]}}
            for m in ("a", "b") for j in range(3) for s in range(2)]


VALID_JSONL = "".join(json.dumps(r) + "\n" for r in valid_records()).encode()


def _csv_bytes() -> bytes:
    import csv

    buffer = io.StringIO()
    fields = ["model", "task", "problem_id", "sample_index", "correct", "answer", "finished", "output_tokens",
              "cot_verdicts", "cluster"]
    writer = csv.DictWriter(buffer, fields, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for record in valid_records():
        writer.writerow({**record, "cot_verdicts": json.dumps(record["cot_verdicts"])})
    return buffer.getvalue().encode()


VALID_CSV = _csv_bytes()


def _parquet_bytes() -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    records = valid_records()
    table = pa.table({name: [r[name] for r in records] for name in
                      ("model", "task", "problem_id", "sample_index", "correct", "output_tokens")})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def read_bytes(data: bytes, suffix: str):
    with write_temporary(data, suffix) as path:
        return read_samples(path)


def test_the_seeds_are_valid():
    assert len(read_bytes(VALID_JSONL, ".jsonl")) == len(read_bytes(VALID_CSV, ".csv")) == 12
    assert len(read_bytes(_parquet_bytes(), ".parquet")) == 12


@FUZZ
@given(mutated(VALID_JSONL))
def test_mutated_jsonl(data):
    assert_table_or_kpass_error(read_bytes, data, ".jsonl")


@FUZZ
@given(st.binary(max_size=400))
def test_random_bytes_as_jsonl_and_csv(data):
    assert_table_or_kpass_error(read_bytes, data, ".jsonl")
    assert_table_or_kpass_error(read_bytes, data, ".csv")


@FUZZ
@given(st.lists(st.dictionaries(st.sampled_from(["model", "task", "problem_id", "sample_index", "correct",
                                                 "answer", "finished", "output_tokens", "answer_token",
                                                 "cot_verdicts", "cluster", "metadata", "extra"]),
                                st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                                             lambda inner: st.lists(inner, max_size=3)
                                             | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                                             max_leaves=6)),
                min_size=1, max_size=6))
def test_jsonl_of_random_records(rows):
    data = "".join(json.dumps(row) + "\n" for row in rows).encode()
    assert_table_or_kpass_error(read_bytes, data, ".jsonl")


@FUZZ
@given(mutated(VALID_CSV))
def test_mutated_csv(data):
    assert_table_or_kpass_error(read_bytes, data, ".csv")


@settings(FUZZ, max_examples=40)
@given(mutated(_parquet_bytes(), max_edits=3))
def test_mutated_parquet(data):
    assert_table_or_kpass_error(read_bytes, data, ".parquet")


_COLUMN_TYPES = ["int64", "uint64", "float64", "bool_", "string", "int8", "null"]


@settings(FUZZ, max_examples=40)
@given(st.dictionaries(st.sampled_from(["model", "task", "problem_id", "sample_index", "correct", "output_tokens",
                                        "finished"]),
                       st.tuples(st.sampled_from(_COLUMN_TYPES),
                                 st.lists(st.one_of(st.none(), st.integers(-2**70, 2**70), st.floats(),
                                                    st.text(max_size=4), st.booleans()), min_size=3, max_size=3)),
                       min_size=1))
def test_parquet_of_random_columns(columns):
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrays = {}
    for name, (kind, values) in columns.items():
        try:
            arrays[name] = pa.array(values, type=getattr(pa, kind)() if kind != "string" else pa.string())
        except (pa.ArrowException, OverflowError, TypeError, ValueError):
            arrays[name] = pa.array([None] * 3, type=pa.null())
    buffer = io.BytesIO()
    pq.write_table(pa.table(arrays), buffer)
    assert_table_or_kpass_error(read_bytes, buffer.getvalue(), ".parquet")


_SPEC_ALPHABET = st.sampled_from(list("pass@cons^fingG-Pk_[](),=0123456789.B ") + ["ties=strict", "B=4096",
                                                                                      "pass@", "cot-pass@"])


@settings(FUZZ, max_examples=400)
@given(st.lists(st.lists(_SPEC_ALPHABET, max_size=12).map("".join), min_size=1, max_size=3)
       | st.lists(st.text(max_size=15), min_size=1, max_size=2))
def test_metric_specs(specs):
    try:
        parsed = kpass.parse_metric_specs(specs)
    except kpass.MetricSpecError as error:
        assert str(error).startswith("invalid metric spec") or "metric" in str(error)
    else:
        assert all(isinstance(spec, kpass.MetricSpec) for spec in parsed)
