"""The DuckDB engine's fast path for regular JSON lines (kpass.data.duckdb_jsonl): it is taken for
regular logs and gives the numpy reduction exactly; everything else (irregular values, duplicate
keys, deep lines, wide indices) goes to the general relation with the same statistics or the
same error text as the numpy readers."""

from __future__ import annotations

import json

import pytest

import kpass
from kpass.data import duckdb_engine
from kpass.data.duckdb_jsonl import reduce_regular_jsonl
from kpass.data.engines import EngineOptions, reduce_samples
from kpass.data.problems import statistics_from_table
from kpass.data.reduction import Needs, Violation
from kpass.data.sources import InputFile
from kpass.errors import DataError

METRICS = "pass@1 pass@2 cons@3 fin@2 cot-pass@2[rule=all] pass@1(B=11) fin@1(B=12)"


def _regular(n_problems=5, n=4, models=("b", "a")):
    records = []
    for model in models:
        for j in range(n_problems):
            for s in range(n):
                correct = (j * 5 + s * 3 + len(model)) % 4 < 2
                record = {"model": model, "task": "t\u00e9" if j % 2 else "code", "problem_id": f"p{j}",
                          "sample_index": s, "correct": correct, "answer": ("42" if correct else [None, "1", "2"][s % 3]),
                          "finished": True if correct else s % 2 == 0, "output_tokens": 20 + s,
                          "cot_verdicts": [True, s % 2 == 0][: 1 + s % 2], "subject": f"s{j % 2}",
                          "metadata": {"seed": s, "note": "a:b"}, "prompt": "what is 6 * 7?"}
                if correct and s == 1:
                    record["answer_token"] = 5
                records.append(record)
    return records


def _write(path, records, extra_lines=()):
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + "".join(line + "\n" for line in extra_lines))
    return path


def _fast(path, needs):
    """The fast path's statistics (None: it handed the input to the general relation)."""
    files = [InputFile(str(path), "jsonl")]
    con = duckdb_engine.connect(EngineOptions())
    try:
        return reduce_regular_jsonl(con, files, needs, EngineOptions())
    finally:
        con.close()


def _needs(by=("model", "subject"), cluster_by="task"):
    return Needs.for_specs(kpass.parse_metric_specs(METRICS), by=by, cluster_by=cluster_by)


def test_regular_lines_take_the_fast_path_and_equal_numpy(tmp_path):
    path = _write(tmp_path / "s.jsonl", _regular())
    needs = _needs()
    fast = _fast(path, needs)
    assert fast is not None
    table = kpass.read_samples(path)
    assert fast.differences(statistics_from_table(table, needs)) == []
    assert fast.extra_columns == table.extra_columns == ("subject", "prompt")
    assert set(fast.columns_present) == set(table.columns)
    expected = kpass.compute_report(table, METRICS, by=("model", "subject"), cluster_by="task", rng=0)
    got = kpass.compute_report(fast, METRICS, by=("model", "subject"), cluster_by="task", rng=0)
    assert [(r.estimate, r.low, r.high) for r in got.rows] == [(r.estimate, r.low, r.high) for r in expected.rows]


@pytest.mark.parametrize("change", [
    {"sample_index": 2.0}, {"correct": "true"}, {"finished": 1}, {"output_tokens": "12"},
    {"cot_verdicts": [True, None]}, {"problem_id": 7}, {"sample_index": 2**53 - 1},
], ids=str)
def test_irregular_values_go_to_the_general_relation_with_the_same_result(tmp_path, change):
    records = _regular()
    records[2] = {**records[2], **change}
    path = _write(tmp_path / "s.jsonl", records)
    needs = _needs()
    assert _fast(path, needs) is None
    try:
        expected = statistics_from_table(kpass.read_samples(path), needs)
    except DataError as error:
        with pytest.raises(DataError) as caught:
            reduce_samples([path], needs, engine="duckdb")
        assert str(caught.value) == str(error)
        return
    assert reduce_samples([path], needs, engine="duckdb").differences(expected) == []


def test_wide_indices_and_null_keys(tmp_path):
    records = [{"model": "m", "task": "t", "problem_id": "p", "sample_index": s, "correct": s % 3 == 0,
                "finished": None} for s in range(300)]
    path = _write(tmp_path / "wide.jsonl", records)
    assert _fast(path, Needs()) is None  # an index >= 256: DISTINCT in the general relation
    assert reduce_samples([path], Needs()).differences(statistics_from_table(kpass.read_samples(path), Needs())) == []
    path = _write(tmp_path / "narrow.jsonl", records[:200])
    fast = _fast(path, Needs())
    assert fast is not None and "finished" in fast.columns_present  # a key present with null values only
    assert fast.differences(statistics_from_table(kpass.read_samples(path), Needs())) == []


@pytest.mark.parametrize("name", ["misspelt", "gap", "duplicate", "varies", "duplicate key", "deep", "escaped"])
def test_errors_on_regular_lines_are_the_numpy_errors(tmp_path, name):
    records = _regular(n_problems=3, models=("m",))
    extra: list[str] = []
    fast_expected: object = Violation
    if name == "misspelt":
        records[5]["finshed"] = None
    elif name == "gap":
        del records[6]
    elif name == "duplicate":
        records.append(dict(records[3]))
    elif name == "varies":
        records[1]["subject"] = "other"
    elif name == "duplicate key":
        extra = [json.dumps(records.pop())[:-1] + ', "sample_index": 3}']
        fast_expected = None
    elif name == "deep":
        extra = [json.dumps(records.pop())[:-1] + ', "metadata": ' + "[" * 600 + "]" * 600 + "}"]
        fast_expected = None
    else:  # "\u00700" is "p0": the same problem (no error; the fast path decodes it)
        records[0]["problem_id"] = "\\u00700"
        fast_expected = "same"
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r).replace("\\\\u0070", "\\u0070") + "\n" for r in records)
                    + "".join(line + "\n" for line in extra))
    needs = _needs(by=("model", "subject"), cluster_by=None)
    specs = kpass.parse_metric_specs(METRICS)

    def numpy():
        return kpass.compute_report(kpass.read_samples(path), specs, by=("model", "subject"), rng=0)

    def duckdb():
        return kpass.compute_report(reduce_samples([path], needs, engine="duckdb"), specs, by=("model", "subject"), rng=0)

    if fast_expected == "same":
        assert _fast(path, needs) is not None
        assert [r.estimate for r in duckdb().rows] == [r.estimate for r in numpy().rows]
        return
    with pytest.raises(DataError) as expected:
        numpy()
    with pytest.raises(DataError) as got:
        duckdb()
    assert str(got.value) == str(expected.value) and str(path) in str(got.value)
    if fast_expected is None:
        assert _fast(path, needs) is None
    elif name in ("misspelt",):
        with pytest.raises(Violation):
            _fast(path, needs)
