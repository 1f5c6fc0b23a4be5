"""Fuzz suite (issue #15, item 6; issue #34, point 6): random and mutated inputs to every built-in
reader (JSONL, CSV, Parquet) and the metric-spec parser give a table or a kpass error, never
another exception, never a hang; the same mutated files reduced by the numpy path and by the
default DuckDB engine (:func:`kpass.data.engines.reduce_samples`) give per-problem statistics
or a one-line DataError naming the file (Spark on a handful of examples, on the test session's
shared SparkSession); ``test_fuzz_cli.py`` runs the commands on the same mutations.

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
from kpass.data.engines import EngineOptions, reduce_samples
from kpass.data.reduction import Needs, ProblemStatistics
from kpass.host.lookups import read_samples

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzzing import (FUZZ, VALID_CSV, VALID_JSONL, assert_table_or_kpass_error, mutated, parquet_bytes,
                     write_temporary)

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]  # slow: make test runs it, make check skips it


def read_bytes(data: bytes, suffix: str):
    with write_temporary(data, suffix) as path:
        return read_samples(path)


def test_the_seeds_are_valid():
    assert len(read_bytes(VALID_JSONL, ".jsonl")) == len(read_bytes(VALID_CSV, ".csv")) == 12
    assert len(read_bytes(parquet_bytes(), ".parquet")) == 12


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
@given(mutated(parquet_bytes(), max_edits=3))
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


# ----------------------------------------------------------------------------------------------
# every engine on the same mutated files (issue #34, point 6)

#: every per-problem statistic an engine reduces: finish, answer classes, chain-of-thought
#: verdicts, a cluster field, token budgets and sums.
ENGINE_NEEDS = Needs(fields=("cluster",), finished=True, answer_classes=True, cot=True, budgets=(15,), tokens=True)


def _engine_outcome(path: str, engine: str, options: EngineOptions | None = None) -> str | None:
    """None if ``engine`` reduces ``path`` to per-problem statistics; the error's text if it
    raises a kpass.DataError, which must be one line naming the file. Any other exception
    fails the test."""
    try:
        statistics = reduce_samples([path], ENGINE_NEEDS, engine=engine, options=options or EngineOptions())
    except kpass.DataError as error:
        message = str(error)
        assert "\n" not in message.strip() and "Traceback" not in message, message
        assert "internal error" not in message, message
        assert "fuzz" in message, f"{engine}: the error names no file: {message}"
        return message
    assert isinstance(statistics, ProblemStatistics)
    return None


def assert_every_engine_keeps_the_contract(data: bytes, suffix: str, engines=("numpy", "duckdb"),
                                           options: EngineOptions | None = None) -> None:
    """Every engine in ``engines`` reduces ``data`` to statistics or raises a one-line DataError
    naming the file. (Whether they refuse the same files is asserted where the refusal is made,
    at the command line, ``test_fuzz_cli.py``: the DuckDB engine leaves a missing column to the
    metric that needs it.)"""
    with write_temporary(data, suffix) as path:
        for engine in engines:
            _engine_outcome(path, engine, options)


def test_the_seeds_are_valid_on_every_engine():
    for data, suffix in ((VALID_JSONL, ".jsonl"), (VALID_CSV, ".csv"), (parquet_bytes(), ".parquet")):
        with write_temporary(data, suffix) as path:
            for engine in ("numpy", "duckdb"):
                assert _engine_outcome(path, engine) is None, (engine, suffix)


@settings(FUZZ, max_examples=40)
@given(mutated(VALID_JSONL))
def test_mutated_jsonl_on_every_engine(data):
    assert_every_engine_keeps_the_contract(data, ".jsonl")


@settings(FUZZ, max_examples=40)
@given(mutated(VALID_CSV))
def test_mutated_csv_on_every_engine(data):
    assert_every_engine_keeps_the_contract(data, ".csv")


@settings(FUZZ, max_examples=30)
@given(mutated(parquet_bytes(), max_edits=3))
def test_mutated_parquet_on_every_engine(data):
    assert_every_engine_keeps_the_contract(data, ".parquet")


@settings(FUZZ, max_examples=2, deadline=None)
@given(st.sampled_from([".jsonl", ".csv"]), st.data())
def test_mutated_tables_on_spark(spark_session, suffix, data):
    # a handful only: each example is a Spark job on the test session's shared SparkSession (the
    # first job warms the JVM up for tens of seconds: no deadline, the module's timeout catches a hang)
    seed = VALID_JSONL if suffix == ".jsonl" else VALID_CSV
    assert_every_engine_keeps_the_contract(data.draw(mutated(seed, max_edits=2)), suffix, engines=("spark",),
                                           options=EngineOptions(spark=spark_session))
