"""The sample table after the review: correct implies finished, errors at the right place, public
accessors instead of privates, a streaming JSONL reader, vectorized column conversion."""

from __future__ import annotations

import json
import pathlib
import re

import numpy as np
import pytest

import kpass

from .conftest import make_records

PLUGIN = pathlib.Path(kpass.__file__).resolve().parent


# ------------------------------------------------------------------------------------------
# C5: correct and unfinished is a contradiction


def test_correct_but_unfinished_is_a_data_error_naming_file_line_and_field(run_cli, write_jsonl, tmp_path):
    records = make_records(finished=True, output_tokens=100)
    records[5].update(correct=True, finished=False)
    with pytest.raises(kpass.DataError, match=r"^mem, line 6, field 'finished': this sample is judged correct but "
                                              r"`finished` is false"):
        kpass.SampleTable.from_records(records, source="mem")
    path = write_jsonl(records)
    code, out, err = run_cli("report", path, "-m", "pass@1", "pass@1(B=100)")
    assert code == 1 and out == ""
    assert f"{path}, line 6, field 'finished': this sample is judged correct" in err
    csv_path = tmp_path / "samples.csv"
    csv_path.write_text("model,task,problem_id,sample_index,correct,finished\nm,t,p,0,true,true\nm,t,p,1,1,false\n")
    code, _, err = run_cli("report", csv_path)
    assert code == 1 and f"{csv_path}, line 3, field 'finished'" in err
    # correct with an unknown finish, and wrong and unfinished, are fine
    records[5]["finished"] = None
    records[6].update(correct=False, finished=False)
    assert len(kpass.SampleTable.from_records(records, source="mem")) == 16


# ------------------------------------------------------------------------------------------
# C8: where errors point


def test_budget_beyond_the_data_names_lines_and_problem_ids(run_cli, write_jsonl):
    # samples with sample_index 3 stop unfinished at 200 output tokens
    records = make_records(correct=lambda j, s: s == 0, finished=lambda j, s: s != 3,
                           output_tokens=lambda j, s: 200 if s == 3 else 50)
    path = write_jsonl(records)
    code, _, err = run_cli("report", path, "-m", "pass@1(B=99999)")
    assert code == 1
    message = " ".join(err.split())
    assert f"{path}, field 'output_tokens': budget B=99999:" in message
    assert "line 1," not in message  # a whole-table error has no line of its own
    assert f"{path} line 4, {path} line 8, {path} line 12, {path} line 16" in message  # the samples' lines
    assert "'p0', 'p1', 'p2', 'p3'" in message and "positions" not in message


def test_problem_ids_name_problems_in_budget_errors_across_tasks():
    # two tasks with the same problem ids in one group (by=model): labels stay apart
    records = (make_records(task="t1", finished=True, output_tokens=10)
               + make_records(task="t2", finished=lambda j, s: s != 1, output_tokens=lambda j, s: 10 if s != 1 else 20,
                              correct=lambda j, s: s == 0))
    table = kpass.SampleTable.from_records(records, source="mem")
    pm = kpass.make_plugin_manager(load_entry_points=False)
    report = kpass.compute_report(table, "fin@1(B=15) fin@1(B=5)", by=("model",), plugin_manager=pm, method="t", rng=0)
    assert report.row("fin@1(B=15)").estimate == pytest.approx((4 * 1.0 + 4 * 0.75) / 8)
    assert report.row("fin@1(B=5)").estimate == 0.0
    with pytest.raises(kpass.DataError, match=r"'t2/p0', 't2/p1'"):
        kpass.compute_report(table, "fin@1(B=25)", by=("model",), plugin_manager=pm, rng=0)


def test_whole_table_errors_name_no_line(run_cli, write_jsonl):
    path = write_jsonl(make_records())
    code, _, err = run_cli("report", path, "--cluster-by", "nosuch")
    assert code == 1 and f"kpass: data error: {path}, field 'nosuch': --cluster-by names the field 'nosuch'" in err
    table = kpass.SampleTable.from_records(make_records(), source="x.jsonl")
    assert table.error_location() == {"source": "x.jsonl", "line": None}
    assert table.error_location(3) == {"source": "x.jsonl", "line": 4}
    with pytest.raises(kpass.DataError, match=r"^cols, field 'correct': missing required column"):
        kpass.SampleTable.from_columns({"model": ["m"], "task": ["t"], "problem_id": ["p"], "sample_index": [0]},
                                       source="cols")


def test_a_gap_in_sample_index_is_reported_where_it_shows(run_cli, write_jsonl):
    records = [r for r in make_records() if not (r["problem_id"] == "p2" and r["sample_index"] == 1)]
    path = write_jsonl(records)
    line = next(i for i, r in enumerate(records, start=1) if r["problem_id"] == "p2" and r["sample_index"] == 2)
    code, _, err = run_cli("report", path)
    assert code == 1 and f"{path}, line {line}, field 'sample_index': samples of problem ('m', 't', 'p2')" in err


# ------------------------------------------------------------------------------------------
# Section 2: public accessors; no plugin module reaches into table privates


def test_public_accessors():
    records = make_records(n_problems=3, n=2, answer=lambda j, s: None if s else f"a{j}", finished=True)
    table = kpass.SampleTable.from_records(records, source="mem")
    assert table.n_categories("answer") == 3 and table.n_categories("problem_id") == 3
    values = table.category_values("problem_id")
    assert values.dtype == object and values.tolist() == ["p0", "p1", "p2"] and not values.flags.writeable
    assert table.category_values("problem_id")[np.array([2, 0])].tolist() == ["p2", "p0"]
    assert table.raw_column("answer").tolist() == [0, -1, 1, -1, 2, -1]
    assert table.raw_column("finished").dtype == np.int8 and table.raw_column("correct").dtype == bool
    assert table.describe_problem(3) == "'m', 't', 'p1'"
    with pytest.raises(KeyError, match="not categorical"):
        table.n_categories("correct")
    with pytest.raises(KeyError, match="verdicts"):
        kpass.SampleTable.from_records(make_records(cot_verdicts=[True]), source="m").raw_column("cot_verdicts")


def test_plugin_modules_use_no_sample_table_privates():
    private = re.compile(r"\.(_columns|_categories|_describe_problem|_lines|_source_codes|_verdict_offsets)\b")
    offenders = {}
    for path in sorted(PLUGIN.glob("*.py")):
        if path.name == "table.py":
            continue
        found = [n for n, line in enumerate(path.read_text().splitlines(), start=1) if private.search(line)]
        if found:
            offenders[path.name] = found
    assert offenders == {}


# ------------------------------------------------------------------------------------------
# Section 3: the JSONL reader streams; conversion is vectorized


def test_jsonl_reader_streams_chunks_and_checks_keys_across_them(monkeypatch, write_jsonl):
    from kpass.data import readers

    pm = kpass.make_plugin_manager(load_entry_points=False)
    records = make_records(n_problems=5, n=3, answer=lambda j, s: str(s), extra=lambda j, s: f"e{j}")
    lines = [json.dumps(r) for r in records]
    lines.insert(4, "")  # blank lines are skipped but counted
    path = write_jsonl(lines)
    chunks = []
    original = kpass.SampleTable._records_to_columns.__func__

    def spy(cls, chunk, **kwargs):
        chunks.append(len(chunk))
        return original(cls, chunk, **kwargs)

    monkeypatch.setattr(readers, "JSONL_CHUNK_LINES", 4)
    monkeypatch.setattr(kpass.SampleTable, "_records_to_columns", classmethod(spy))
    table = kpass.read_samples(path, plugin_manager=pm)
    assert chunks == [4, 4, 4, 3]  # a problem's samples span chunks: keys are checked on the whole table
    assert table.to_records() == kpass.SampleTable.from_records(records, source="mem").to_records()
    assert table.location(len(table) - 1) == (str(path), 16)
    # errors in a later chunk name their line; duplicates across chunks name both lines
    bad = lines[:12] + [lines[12].replace('"correct": true', '"correct": "maybe"').replace(
        '"correct": false', '"correct": "maybe"')] + lines[13:]
    with pytest.raises(kpass.DataError, match=r", line 13, field 'correct'"):
        kpass.read_samples(write_jsonl(bad, name="bad.jsonl"), plugin_manager=pm)
    duplicate = lines + [lines[1]]
    with pytest.raises(kpass.DataError, match=r"line 17, field 'sample_index': duplicate sample.*line 2"):
        kpass.read_samples(write_jsonl(duplicate, name="dup.jsonl"), plugin_manager=pm)


@pytest.mark.parametrize(
    ("name", "values", "expected"),
    [
        ("correct", [True, False, True], [True, False, True]),
        ("correct", ["true", " FALSE ", "1", "0", "t", "f"], [True, False, True, False, True, False]),
        ("correct", [1, 0, True], [True, False, True]),
        ("finished", [True, None, False], [1, -1, 0]),
        ("finished", ["true", "", "null", "None", "0"], [1, -1, -1, -1, 0]),
        ("sample_index", [0, 1, 2], [0, 1, 2]),
        ("sample_index", ["0", " 1 ", "2"], [0, 1, 2]),
        ("output_tokens", [5, None, 7], [5, -1, 7]),
        ("output_tokens", ["5", "", "null", "7"], [5, -1, -1, 7]),
        ("output_tokens", [5.0, None, 7], [5, -1, 7]),
        ("problem_id", ["b", "a", "b", None], None),
        ("problem_id", [3, 1, 3, 1], None),
    ],
)
def test_column_conversion_of_json_and_csv_values(name, values, expected):
    from kpass.data.columns import _Context, _to_bool, _to_categorical, _to_int

    n = len(values)
    array = np.empty(n, dtype=object)
    array[:] = values
    ctx = _Context(["mem"], np.zeros(n, dtype=np.int32), np.arange(1, n + 1))
    if name == "problem_id":
        codes, categories = _to_categorical(array, name, True, ctx)
        decoded = [None if c < 0 else categories[c] for c in codes.tolist()]
        assert decoded == [None if v is None else str(v) for v in values]
        assert categories == list(dict.fromkeys(str(v) for v in values if v is not None))  # first appearance
        return
    convert = _to_bool if name in ("correct", "finished") else _to_int
    out = convert(array, name, name in ("finished", "output_tokens"), ctx)
    assert out.tolist() == expected


@pytest.mark.parametrize(
    ("name", "values", "row", "shown"),
    [
        ("correct", [True, "yes", False], 2, "'yes'"),
        ("correct", [True, None, False], 2, "None"),
        ("correct", ["true", "", "false"], 2, "''"),
        ("correct", [True, 2, False], 2, "2"),
        ("sample_index", [0, -1, 2], 2, "-1"),
        ("sample_index", ["0", "²", "2"], 2, "'²'"),
        ("sample_index", ["0", "1.5", "2"], 2, "'1.5'"),
        ("sample_index", [0, None, 2], 2, "None"),
        ("output_tokens", [5, True, 7], 2, "True"),
        ("finished", [True, float("nan"), False], 2, "nan"),
    ],
)
def test_bad_values_name_their_line(name, values, row, shown):
    from kpass.data.columns import _Context, _to_bool, _to_int

    n = len(values)
    array = np.empty(n, dtype=object)
    array[:] = values
    ctx = _Context(["mem"], np.zeros(n, dtype=np.int32), np.arange(1, n + 1))
    convert = _to_bool if name in ("correct", "finished") else _to_int
    with pytest.raises(kpass.DataError, match=rf"^mem, line {row}, field '{name}': .*got {re.escape(shown)}$"):
        convert(array, name, name in ("finished", "output_tokens"), ctx)
