"""The sample table and its readers: schema checks, JSONL/CSV/Parquet, and every bad input of the
issue with its message and exit code (through the CLI)."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

import kpass
from kpass.data.table import Categorical

from .conftest import make_records

# ------------------------------------------------------------------------------------------
# construction


def test_from_records_columns_and_counts():
    records = make_records(n_problems=3, n=4, answer=lambda j, s: str(s % 2), extra_field="x")
    table = kpass.SampleTable.from_records(records, source="mem")
    assert len(table) == 12
    assert table.columns == ("model", "task", "problem_id", "sample_index", "correct", "answer", "extra_field")
    assert table.extra_columns == ("extra_field",)
    assert table.categories("problem_id") == ["p0", "p1", "p2"]  # order of first appearance
    index = table.problem_index
    assert index.n_samples.tolist() == [4, 4, 4]
    assert index.n_correct.tolist() == [2, 2, 2]
    assert table.to_records()[0] == records[0]


def test_from_columns_fast_path_and_from_records_agree():
    rng = np.random.default_rng(1)
    n_problems, n = 50, 6
    correct = rng.random(n_problems * n) < 0.4
    order = rng.permutation(n_problems * n)  # rows in any order
    problem = np.repeat(np.arange(n_problems), n)[order]
    sample = np.tile(np.arange(n), n_problems)[order]
    columns = {
        "model": Categorical(np.zeros(len(order), dtype=np.int32), ["m"]),
        "task": np.array(["t"] * len(order)),
        "problem_id": Categorical(problem, [f"q{j}" for j in range(n_problems)]),
        "sample_index": sample,
        "correct": correct[order],
    }
    fast = kpass.SampleTable.from_columns(columns, source="cols")
    slow = kpass.SampleTable.from_records(
        [{"model": "m", "task": "t", "problem_id": f"q{p}", "sample_index": int(s), "correct": bool(c)}
         for p, s, c in zip(problem, sample, correct[order])], source="recs")
    for table in (fast, slow):
        ids = table.categories("problem_id")
        index = table.problem_index
        got = dict(zip([ids[c] for c in index.problem_codes], index.n_correct.tolist()))
        expected = {f"q{j}": int(correct[j * n:(j + 1) * n].sum()) for j in range(n_problems)}
        assert got == expected


def test_integer_problem_ids_become_strings_and_nullable_columns():
    records = [{"model": "m", "task": "t", "problem_id": 7, "sample_index": s, "correct": s == 0,
                "finished": [True, None][s], "output_tokens": [12, None][s], "cot_verdicts": [[True, None], None][s]}
               for s in range(2)]
    table = kpass.SampleTable.from_records(records, source="mem")
    assert table.categories("problem_id") == ["7"]
    assert table.column("finished").tolist() == [1, -1]
    assert table.column("output_tokens").tolist() == [12, -1]
    assert table.to_records()[0]["cot_verdicts"] == [True, None]
    assert table.to_records()[1]["cot_verdicts"] == []


def test_concat_merges_categories_and_checks_keys_across_files():
    a = kpass.SampleTable.from_records(make_records(model="a"), source="a.jsonl")
    b = kpass.SampleTable.from_records(make_records(model="b"), source="b.jsonl")
    both = kpass.SampleTable.concat([a, b])
    assert both.categories("model") == ["a", "b"] and len(both) == 32
    assert both.sources == ["a.jsonl", "b.jsonl"]
    again = kpass.SampleTable.from_records(make_records(model="a"), source="a2.jsonl")
    with pytest.raises(kpass.DataError, match=r"a2.jsonl, line 1, field 'sample_index': duplicate sample.*first at a.jsonl line 1"):
        kpass.SampleTable.concat([a, again])


def test_bad_constructor_arguments():
    with pytest.raises(TypeError, match="mapping"):
        kpass.SampleTable.from_columns([1, 2], source="x")
    with pytest.raises(kpass.DataError, match="different lengths"):
        kpass.SampleTable.from_columns({"model": ["m"], "task": ["t", "t"]}, source="x")
    with pytest.raises(kpass.DataError, match="x, line 2: a sample must be an object"):
        kpass.SampleTable.from_records([make_records()[0], [1, 2]], source="x")
    with pytest.raises(kpass.DataError, match="no samples"):
        kpass.SampleTable.from_records([], source="x")


# ------------------------------------------------------------------------------------------
# readers


def test_jsonl_csv_and_parquet_readers_give_the_same_table(tmp_path, write_jsonl):
    import pyarrow as pa  # extra `dev`, installed in CI: Parquet is tested, never skipped
    import pyarrow.parquet as pq

    # sample 2 never finished (so it has no answer and is wrong: correct implies finished)
    records = make_records(n_problems=5, n=3, answer=lambda j, s: None if s == 2 else str(j),
                           correct=lambda j, s: (j + s) % 2 == 0 and s != 2, finished=lambda j, s: s != 2, output_tokens=lambda j, s: 100 + s,
                           cot_verdicts=lambda j, s: [True, None] if s == 0 else None, cluster=lambda j, s: f"c{j % 2}")
    jsonl = write_jsonl(records)
    csv_path = tmp_path / "samples.csv"
    with open(csv_path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(records[0]))
        writer.writeheader()
        for record in records:
            row = {k: ("" if v is None else json.dumps(v) if isinstance(v, list) else
                       str(v).lower() if isinstance(v, bool) else v) for k, v in record.items()}
            writer.writerow(row)
    parquet_path = tmp_path / "samples.parquet"
    pq.write_table(pa.Table.from_pylist(records), parquet_path)
    tables = [kpass.read_samples(path, plugin_manager=kpass.make_plugin_manager(load_entry_points=False))
              for path in (jsonl, csv_path, parquet_path)]
    expected = kpass.SampleTable.from_records(records, source="mem").to_records()
    for table in tables:
        assert table.to_records() == expected


def test_reader_choice(tmp_path, write_jsonl):
    pm = kpass.make_plugin_manager(load_entry_points=False)
    path = write_jsonl(make_records())
    assert kpass.choose_reader(path, plugin_manager=pm)[0] == "jsonl"
    assert kpass.choose_reader(path, reader="csv", plugin_manager=pm)[0] == "csv"
    with pytest.raises(ValueError, match="unknown reader 'nope'; registered readers: jsonl, csv, parquet"):
        kpass.choose_reader(path, reader="nope", plugin_manager=pm)
    other = tmp_path / "samples.txt"
    other.write_text("x")
    with pytest.raises(kpass.DataError, match="no reader recognises this file; registered readers: jsonl"):
        kpass.choose_reader(other, plugin_manager=pm)
    foreign = write_jsonl([{"doc_id": 0, "resps": []}], name="foreign.jsonl")
    # not a kpass table: the jsonl reader declines, then reports what is missing
    with pytest.raises(kpass.DataError, match="foreign.jsonl, line 1, field 'model': missing required field"):
        kpass.read_samples(foreign, plugin_manager=pm)


# ------------------------------------------------------------------------------------------
# bad input, through the command line: message and exit code


def test_empty_files(run_cli, tmp_path):
    for name in ("empty.jsonl", "empty.csv"):
        path = tmp_path / name
        path.write_text("")
        code, out, err = run_cli("report", path)
        assert code == 1 and out == ""
        assert f"kpass: data error: {path}, line 1: the file is empty" in err
    header_only = tmp_path / "header.csv"
    header_only.write_text("model,task,problem_id,sample_index,correct\n")
    code, _, err = run_cli("report", header_only)
    assert code == 1 and f"{header_only}, line 2: the file has a header but no samples" in err


def test_truncated_last_line(run_cli, tmp_path, write_jsonl):
    lines = [json.dumps(r) for r in make_records()]
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:25])
    code, _, err = run_cli("report", path)
    assert code == 1
    assert f"{path}, line {len(lines)}: truncated last line" in err
    broken_middle = write_jsonl(lines[:3] + ['{"model": "m",'] + lines[3:], name="middle.jsonl")
    code, _, err = run_cli("report", broken_middle)
    assert code == 1 and f"{broken_middle}, line 4: invalid JSON" in err
    csv_path = tmp_path / "cut.csv"
    csv_path.write_text("model,task,problem_id,sample_index,correct\nm,t,p0,0,true\nm,t,p0,1")
    code, _, err = run_cli("report", csv_path)
    assert code == 1
    assert f"{csv_path}, line 3, field 'correct': expected 5 fields as in the header, got 4 (truncated last line" in err


@pytest.mark.parametrize("value", ["yes", 2, 0.5, None, [True]])
def test_non_boolean_correct(run_cli, write_jsonl, value):
    records = make_records()
    records[5]["correct"] = value
    path = write_jsonl(records)
    code, _, err = run_cli("report", path)
    assert code == 1
    assert f"{path}, line 6, field 'correct':" in err
    assert "must be true/false (or 1/0)" in err or "may not be null" in err


def test_nan_is_an_error_wherever_a_number_is_needed(run_cli, tmp_path):
    records = make_records(output_tokens=10)
    lines = [json.dumps(r) for r in records]
    lines[2] = lines[2].replace('"correct": false', '"correct": NaN').replace('"correct": true', '"correct": NaN')
    path = tmp_path / "nan.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, _, err = run_cli("report", path)
    assert code == 1 and f"{path}, line 3, field 'correct': `correct` must be true/false (or 1/0); got nan" in err
    lines = [json.dumps(r) for r in records]
    lines[4] = lines[4].replace('"sample_index": 0', '"sample_index": NaN')
    path.write_text("\n".join(lines) + "\n")
    code, _, err = run_cli("report", path)
    assert code == 1 and f"{path}, line 5, field 'sample_index': `sample_index` must be an integer >= 0; got nan" in err
    csv_path = tmp_path / "nan.csv"
    csv_path.write_text("model,task,problem_id,sample_index,correct,output_tokens\nm,t,p,0,1,nan\n")
    code, _, err = run_cli("report", csv_path)
    assert code == 1 and f"{csv_path}, line 2, field 'output_tokens'" in err


def test_duplicate_problem_and_sample_index(run_cli, write_jsonl):
    records = make_records()
    records.append(dict(records[6]))
    path = write_jsonl(records)
    code, _, err = run_cli("report", path)
    assert code == 1
    assert (f"{path}, line {len(records)}, field 'sample_index': duplicate sample: (model, task, problem_id, "
            f"sample_index) = ('m', 't', 'p1', 2) appears again here; first at {path} line 7") in err


def test_problem_with_samples_mixed_up_between_two_models(run_cli, write_jsonl):
    # samples 0-3 of p1 under model a, samples 4-7 under model b: one run split across two labels
    records = make_records(model="a", n=8) + make_records(model="b", n=8)
    records = [r for r in records if not (r["problem_id"] == "p1" and (r["model"], r["sample_index"] >= 4) in
                                          (("a", True), ("b", False)))]
    path = write_jsonl(records)
    code, _, err = run_cli("report", path)
    assert code == 1
    assert "field 'sample_index': samples of problem ('b', 't', 'p1') have sample_index 4, 5, 6, 7; expected 0..3" in err
    assert "appear under model(s) 'a': this problem's samples look mixed up between models" in err


def test_gaps_and_one_based_indices_are_errors(run_cli, write_jsonl):
    records = [r for r in make_records() if not (r["problem_id"] == "p2" and r["sample_index"] == 1)]
    path = write_jsonl(records)
    code, _, err = run_cli("report", path)
    assert code == 1 and "have sample_index 0, 2, 3; expected 0..2" in err and "missing" in err
    records = make_records()
    for r in records:
        r["sample_index"] += 1
    path = write_jsonl(records, name="one_based.jsonl")
    code, _, err = run_cli("report", path)
    assert code == 1 and "If the indices are 1-based epochs, subtract 1" in err


def test_mixed_n_per_problem_is_allowed_and_reported(run_cli, write_jsonl):
    records = [r for r in make_records(n=8) if not (r["problem_id"] == "p3" and r["sample_index"] >= 5)]
    path = write_jsonl(records)
    code, out, err = run_cli("report", path, "-m", "pass@1")
    assert code == 0, err
    assert "\n  [mixed-samples] m / t (5 to 8): samples per problem vary; each problem's estimate uses its own n" in out
    assert "No problem was excluded." in out


def test_k_larger_than_some_problems_n_excludes_and_reports(run_cli, write_jsonl):
    records = [r for r in make_records(n=8, n_problems=6) if not (r["problem_id"] in ("p1", "p4") and r["sample_index"] >= 5)]
    path = write_jsonl(records)
    code, out, _ = run_cli("report", path, "-m", "pass@1,8", "--format", "json")
    assert code == 0
    data = json.loads(out)
    rows = {row["metric"]: row for row in data["rows"]}
    assert rows["pass@1"]["n_problems"] == 6 and rows["pass@1"]["n_excluded"] == 0
    assert rows["pass@8"]["n_problems"] == 4 and rows["pass@8"]["n_excluded"] == 2
    assert data["exclusions"] == [{"model": "m", "task": "t", "metric": "pass@8", "problem_ids": ["p1", "p4"],
                                   "n_problems": 2, "reason": "5 samples, pass@8 needs 8"}]
    code, out, _ = run_cli("report", path, "-m", "pass@8")
    assert "m / t / pass@8: 2 problems (5 samples, pass@8 needs 8): p1, p4" in out


def test_missing_answers_when_cons_is_asked_for(run_cli, write_jsonl):
    path = write_jsonl(make_records())
    code, _, err = run_cli("report", path, "-m", "cons@3")
    assert code == 1
    assert f"{path}, field 'answer': cons@3 needs the `answer` column" in err  # the whole table: no line
    assert "binary correct/incorrect data cannot determine cons@k" in err
    records = make_records(answer=lambda j, s: "42" if (j + s) % 2 == 0 else "7")
    records[9]["answer"] = None  # p2, sample 1: correct (2+1 odd? no) -> choose a correct one below
    correct_row = next(i for i, r in enumerate(records) if r["correct"] and i > 9)
    records[correct_row]["answer"] = None
    path = write_jsonl(records, name="null_answer.jsonl")
    code, _, err = run_cli("report", path, "-m", "cons@3")
    assert code == 1
    assert (f"{path}, line {correct_row + 1}, field 'answer': this sample is judged correct but has no answer" in err)
    records = make_records(answer="42")  # wrong samples share the right answer string
    path = write_jsonl(records, name="clash.jsonl")
    code, _, err = run_cli("report", path, "-m", "maj@2")
    assert code == 1 and "judged incorrect but its answer equals the answer of a sample" in err


def test_unknown_columns_are_kept_and_misspelt_ones_are_errors(run_cli, write_jsonl):
    path = write_jsonl(make_records(subject=lambda j, s: f"s{j % 2}", temperature=0.7))
    code, out, err = run_cli("report", path, "--cluster-by", "subject")
    assert code == 0, err
    # subject is the cluster: interpreted, so only temperature is listed
    assert ("\n  [extra-columns] temperature: columns outside the schema, kept as metadata (usable with --by and "
            "--cluster-by) (docs/notes.md#extra-columns)\n") in out
    path = write_jsonl(make_records(answers=lambda j, s: "1"), name="typo.jsonl")
    code, _, err = run_cli("report", path)
    assert code == 1
    assert (f"{path}, line 1, field 'answers': unknown column 'answers' looks like a misspelling of the schema "
            "column 'answer'") in err
    records = make_records()
    for r in records:
        r["corect"] = r.pop("correct")
    path = write_jsonl(records, name="typo2.jsonl")
    code, _, err = run_cli("report", path)
    assert code == 1 and "line 1, field 'correct': missing required field 'correct' (misspelt? 'corect' -> 'correct')" in err


def test_cluster_and_by_fields_must_be_constant_within_a_problem(run_cli, write_jsonl):
    path = write_jsonl(make_records(cluster=lambda j, s: f"c{s}"))
    code, _, err = run_cli("report", path, "--cluster-by", "cluster")
    assert code == 1 and "field 'cluster': --cluster-by 'cluster' must be the same for every sample of a problem" in err
    code, _, err = run_cli("report", path, "--cluster-by", "nope")
    assert code == 1 and "--cluster-by names the field 'nope', which the table does not have" in err
    path = write_jsonl(make_records(cluster=lambda j, s: None if j == 0 else "c"), name="null_cluster.jsonl")
    code, _, err = run_cli("report", path, "--cluster-by", "cluster")
    assert code == 1 and "is null for problem" in err


def test_fin_needs_finished(run_cli, write_jsonl):
    path = write_jsonl(make_records())
    code, _, err = run_cli("report", path, "-m", "fin@1")
    assert code == 1 and "fin@1 needs the `finished` column" in err
    records = make_records(finished=True)
    records[3]["finished"] = None
    path = write_jsonl(records, name="null_finished.jsonl")
    code, _, err = run_cli("report", path, "-m", "fin@1")
    assert code == 1 and f"{path}, line 4, field 'finished': whether 1 sample finished is unknown" in err
    assert "`finished` is null" in err
    assert "give the model's tokenizer (--tokenizer" in err and len(err.strip().splitlines()) == 1


def test_nothing_is_silently_dropped_in_counts():
    # every sample of the table is counted in exactly one problem
    rng = np.random.default_rng(3)
    n = rng.integers(1, 9, size=40)
    records = [{"model": f"m{j % 2}", "task": f"t{j % 3}", "problem_id": f"p{j}", "sample_index": s,
                "correct": bool(rng.random() < 0.5)} for j in range(40) for s in range(n[j])]
    table = kpass.SampleTable.from_records(records, source="mem")
    index = table.problem_index
    assert index.n_samples.sum() == len(records)
    assert index.n_correct.sum() == sum(r["correct"] for r in records)
    assert not math.isnan(index.n_correct.mean())


def test_from_columns_accepts_a_data_frame_like_object():
    class Frame:  # the part of the pandas.DataFrame interface from_columns uses
        def __init__(self, data):
            self.data = data
            self.columns = list(data)

        def __getitem__(self, name):
            return self.data[name]

    frame = Frame({"model": ["m"] * 4, "task": ["t"] * 4, "problem_id": [1, 1, 2, 2], "sample_index": [0, 1, 0, 1],
                   "correct": [True, False, True, True]})
    table = kpass.SampleTable.from_columns(frame, source="frame")
    assert table.categories("problem_id") == ["1", "2"] and table.problem_index.n_correct.tolist() == [1, 2]
