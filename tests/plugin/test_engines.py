"""The engines (numpy, DuckDB, Spark) give the same per-problem statistics, the same reports to
1e-12 and the same error for every validation rule, on the same files."""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import kpass
from kpass.data.problems import statistics_from_table
from kpass.data.engines import EngineOptions, reduce_samples
from kpass.host.lookups import load_samples
from kpass.data.reduction import Needs
from kpass.errors import DataError

METRICS = "pass@1 pass@2 pass^2 g-pass@4_0.5 cons@3 cons@3[cut=vote] fin@2 cot-pass@2[rule=majority] pass@1(B=11) fin@1(B=10)"
NEEDS = Needs(fields=("subject",), finished=True, answer_classes=True, cot=True, budgets=(10, 11))


def _records(models=("b", "a"), n_problems=6, n=4):
    records = []
    for model in models:
        for j in range(n_problems):
            for s in range(n):
                correct = (j * 7 + s * 3 + len(model)) % 5 < 2
                records.append({
                    "model": model, "task": "math" if j % 3 else "code", "problem_id": f"p{j}", "sample_index": s,
                    "correct": correct, "answer": "42" if correct else str((j + s) % 3),
                    "finished": True if correct else s % 2 == 0, "output_tokens": 10 + s,
                    "cot_verdicts": [True, s % 2 == 0, None][: 1 + s % 3], "subject": f"s{j % 2}",
                })
    return records


def _write(directory, records, fmt, name="samples"):
    path = directory / f"{name}.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    elif fmt == "csv":
        header = list(dict.fromkeys(k for r in records for k in r))

        def cell(value):
            if value is None:
                return ""
            if isinstance(value, list):
                return '"' + json.dumps(value).replace('"', '""') + '"'
            return str(value).lower() if isinstance(value, bool) else str(value)

        path.write_text(",".join(header) + "\n" + "".join(",".join(cell(r.get(k)) for k in header) + "\n"
                                                            for r in records))
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(records), path)
    return path


def _reports_equal(a, b):
    assert [(r.group, r.metric) for r in a.rows] == [(r.group, r.metric) for r in b.rows]
    for x, y in zip(a.rows, b.rows):
        for name in ("estimate", "low", "high", "standard_error"):
            u, v = getattr(x, name), getattr(y, name)
            assert (u is None and v is None) or math.isclose(u, v, rel_tol=0, abs_tol=1e-12), (x, y, name)
        assert (x.n_problems, x.n_samples, x.n_clusters) == (y.n_problems, y.n_samples, y.n_clusters)
    assert a.notes == b.notes
    assert [(e.group, e.metric, e.problems) for e in a.exclusions] == [(e.group, e.metric, e.problems)
                                                                        for e in b.exclusions]


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet", "hive", "glob"])
def test_three_engines_give_the_same_statistics_and_reports(tmp_path, fmt, spark_session):
    records = _records()
    if fmt == "hive":  # model=a/part.parquet: the partition value is the model column
        for model in ("b", "a"):
            (tmp_path / "data" / f"model={model}").mkdir(parents=True)
            _write(tmp_path / "data" / f"model={model}", [{k: v for k, v in r.items() if k != "model"}
                                                        for r in records if r["model"] == model], "parquet")
        paths = [tmp_path / "data"]
    elif fmt == "glob":
        _write(tmp_path, [r for r in records if r["model"] == "b"], "jsonl", "part-1")
        _write(tmp_path, [r for r in records if r["model"] == "a"], "jsonl", "part-2")
        paths = [str(tmp_path / "part-*.jsonl")]
    else:
        paths = [_write(tmp_path, records, fmt)]
    numpy_table = load_samples(paths, NEEDS, engine="numpy")
    by = ("model", "subject")
    needs = Needs.for_specs(kpass.parse_metric_specs(METRICS), by=by, cluster_by="task")
    assert needs.finished and needs.answer_classes and needs.cot and needs.budgets == (10, 11)
    reference = statistics_from_table(numpy_table, needs)
    expected = kpass.compute_report(numpy_table, METRICS, by=by, cluster_by="task", rng=0)
    for engine in ("duckdb", "spark"):
        statistics = reduce_samples(paths, needs, engine=engine, options=EngineOptions(spark=spark_session))
        assert statistics.differences(reference) == [], engine
        _reports_equal(kpass.compute_report(statistics, METRICS, by=by, cluster_by="task", rng=0), expected)
    assert reference.class_counts.shape[1] >= 2 and reference.cot_correct["all"].sum() > 0
    # answers of unfinished generations abstain by default and vote with cut=vote: the two differ
    assert reference.n_cut_answers.sum() > 0
    assert not np.array_equal(reference.answer_classes_of("vote")[1], reference.n_invalid)
    assert any("answers come from unfinished generations (cut at the token limit) and abstain" in note
               for note in map(str, expected.notes))


def _cases():
    """(name, records or raw lines, file format, metrics, by, cluster_by): one broken rule each."""
    good = _records(models=("m",), n_problems=3)

    def change(index, **fields):
        records = [dict(r) for r in good]
        records[index].update(fields)
        return records

    dropped = [dict(r) for r in good if not (r["problem_id"] == "p1" and r["sample_index"] == 2)]
    mixed = [dict(r, model="other") if r["problem_id"] == "p2" and r["sample_index"] >= 2 else r for r in good]
    lines = [json.dumps(r) for r in good]
    return [
        ("non-boolean correct", change(3, correct="yes"), "jsonl", "pass@1", ("model",), None),
        ("correct 2", change(3, correct=2), "jsonl", "pass@1", ("model",), None),
        ("NaN correct", [*lines[:2], lines[2].replace('"correct": false', '"correct": NaN').replace(
            '"correct": true', '"correct": NaN'), *lines[3:]], "raw", "pass@1", ("model",), None),
        ("null model", change(5, model=None), "jsonl", "pass@1", ("model",), None),
        ("missing column", [{k: v for k, v in r.items() if k != "sample_index"} for r in good], "jsonl", "pass@1",
         ("model",), None),
        ("misspelt column", change(7, corect=True), "jsonl", "pass@1", ("model",), None),
        ("negative index", change(4, sample_index=-1), "jsonl", "pass@1", ("model",), None),
        ("sample_index 1e30", change(4, sample_index=1e30), "jsonl", "pass@1", ("model",), None),
        ("output_tokens 2**64", change(4, output_tokens=2**64), "jsonl", "pass@1", ("model",), None),
        ("fractional tokens", change(4, output_tokens=3.5), "jsonl", "pass@1", ("model",), None),
        ("correct but unfinished", change(next(i for i, r in enumerate(good) if r["correct"]), finished=False),
         "jsonl", "pass@1", ("model",), None),
        ("bad verdict", change(1, cot_verdicts=[True, "maybe"]), "jsonl", "pass@1", ("model",), None),
        ("duplicate", [*good, dict(good[6])], "jsonl", "pass@1", ("model",), None),
        ("gap", dropped, "jsonl", "pass@1", ("model",), None),
        ("one-based", [dict(r, sample_index=r["sample_index"] + 1) for r in good], "jsonl", "pass@1", ("model",), None),
        ("mixed up between models", mixed, "jsonl", "pass@1", ("model",), None),
        ("invalid JSON", [*lines[:4], '{"model": "m", "task"', *lines[4:]], "raw", "pass@1", ("model",), None),
        ("not an object", [*lines[:4], "[1, 2]", *lines[4:]], "raw", "pass@1", ("model",), None),
        ("empty file", [], "raw", "pass@1", ("model",), None),
        ("wrong answer equals a correct one", change(next(i for i, r in enumerate(good) if not r["correct"]),
                                                       answer="42"), "jsonl", "cons@3", ("model",), None),
        ("correct without answer", change(next(i for i, r in enumerate(good) if r["correct"]), answer=None),
         "jsonl", "cons@3", ("model",), None),
        ("finished null for fin@k", change(2, finished=None), "jsonl", "fin@2", ("model",), None),
        ("budget beyond what was generated", good, "jsonl", "pass@1(B=50)", ("model",), None),
        ("cluster varies within a problem", change(1, subject="other"), "jsonl", "pass@1", ("model",), "subject"),
        ("cluster null", [dict(r, subject=None) if r["problem_id"] == "p0" else r for r in good], "jsonl", "pass@1",
         ("model",), "subject"),
        ("by field varies", change(1, subject="other"), "jsonl", "pass@1", ("model", "subject"), None),
        ("CSV non-integer", change(4, output_tokens="nan"), "csv", "pass@1", ("model",), None),
        ("CSV duplicate", [*good, dict(good[6])], "csv", "pass@1", ("model",), None),
        ("Parquet gap", dropped, "parquet", "pass@1", ("model",), None),
    ]


def _error(function):
    with pytest.raises(DataError) as caught:
        function()
    return str(caught.value)


@pytest.mark.parametrize("engine", ["duckdb", "spark"])
@pytest.mark.parametrize("case", _cases(), ids=lambda case: case[0])
def test_every_validation_error_is_the_same_on_every_engine(tmp_path, case, engine, request):
    name, records, fmt, metrics, by, cluster_by = case
    spark_session = request.getfixturevalue("spark_session") if engine == "spark" else None
    if fmt == "raw":
        path = tmp_path / "samples.jsonl"
        path.write_text("".join(line + "\n" for line in records))
    else:
        path = _write(tmp_path, records, fmt)
    specs = kpass.parse_metric_specs(metrics)
    expected = _error(lambda: kpass.compute_report(kpass.read_samples(path), specs, by=by, cluster_by=cluster_by, rng=0))
    assert str(path) in expected, expected  # every error names the file
    needs = Needs.for_specs(specs, by=by, cluster_by=cluster_by)
    got = _error(lambda: kpass.compute_report(
        reduce_samples([path], needs, engine=engine, options=EngineOptions(spark=spark_session)), specs, by=by,
        cluster_by=cluster_by, rng=0))
    assert got == expected, (engine, name)


def test_two_files_duplicate_names_both(tmp_path, spark_session):
    records = _records(models=("m",), n_problems=2)
    first = _write(tmp_path, records, "jsonl", "first")
    second = _write(tmp_path, records[:1], "jsonl", "second")
    expected = _error(lambda: kpass.read_samples([first, second]))
    assert str(first) in expected and str(second) in expected
    for engine in ("duckdb", "spark"):
        assert _error(lambda engine=engine: reduce_samples([first, second], Needs(), engine=engine,
                                             options=EngineOptions(spark=spark_session))) == expected


def test_spark_temporary_directory_is_removed(tmp_path, spark_session, monkeypatch):
    """In local mode the executors write the per-problem table under the temporary directory
    and pyarrow reads it; nothing is left there after a report, a validation error (a duplicate:
    found after the read) or an interrupt while the table is being written."""
    import pyarrow.parquet as pq

    parent = tmp_path / "spark-temp"
    parent.mkdir()
    options = EngineOptions(spark=spark_session, temp_directory=str(parent))
    seen = []
    read_table = pq.read_table

    def spy(path, *args, **kwargs):  # what the read finds under the temporary directory
        seen.append(sorted(p.name for p in pathlib.Path(path).iterdir() if p.suffix == ".parquet"))
        return read_table(path, *args, **kwargs)

    monkeypatch.setattr(pq, "read_table", spy)
    records = _records()
    good = _write(tmp_path, records, "jsonl")
    statistics = reduce_samples([good], NEEDS, engine="spark", options=options)
    assert statistics.differences(statistics_from_table(kpass.read_samples(good), NEEDS)) == []
    assert len(seen) == 1 and seen[0] and list(parent.iterdir()) == []
    duplicate = _write(tmp_path, [*records, records[3]], "jsonl", "duplicate")
    assert "duplicate sample" in _error(lambda: reduce_samples([duplicate], Needs(), engine="spark", options=options))
    assert len(seen) == 2 and list(parent.iterdir()) == []
    from pyspark.sql.readwriter import DataFrameWriter

    write = DataFrameWriter.parquet

    def interrupted(self, path, *args, **kwargs):  # Ctrl-C once the executors have written
        write(self, path, *args, **kwargs)
        assert any(pathlib.Path(path).glob("*.parquet"))
        raise KeyboardInterrupt

    monkeypatch.setattr(DataFrameWriter, "parquet", interrupted)
    with pytest.raises(KeyboardInterrupt):
        reduce_samples([good], NEEDS, engine="spark", options=options)
    assert len(seen) == 2 and list(parent.iterdir()) == []


@given(st.lists(st.tuples(*[st.none() | st.sampled_from(["", "a", "b", "ab", "é", "B", "a\x00"])] * 3), max_size=40))
def test_spark_fetch_orders_and_converts_keys_as_pyarrow(rows):
    """The Spark fetch's key order (integer ranks, ``lexsort``) is pyarrow's ``sort_by`` order,
    nulls last, and its string columns convert to the values ``to_pylist`` gives."""
    import pyarrow as pa

    from kpass.data.spark_engine import _key_order, _objects

    table = pa.table({name: pa.array([row[i] for row in rows], pa.string())
                      for i, name in enumerate(("model", "task", "problem_id"))})
    expected = table.sort_by([("model", "ascending"), ("task", "ascending"), ("problem_id", "ascending")])
    assert table.take(_key_order(table)).equals(expected)
    for name in table.column_names:
        assert _objects(table.column(name).combine_chunks()).tolist() == table.column(name).to_pylist()


def test_spark_dataframe_entry(tmp_path, spark_session):
    from kpass.data.spark_engine import reduce_dataframe

    records = _records()
    path = _write(tmp_path, records, "parquet")
    reference = statistics_from_table(kpass.read_samples(path), NEEDS)
    statistics = reduce_dataframe(spark_session.read.parquet(str(path)), NEEDS)
    assert statistics.differences(reference) == ["sources"] and statistics.sources == ["<Spark DataFrame>"]
    broken = spark_session.createDataFrame([*records[:5], records[3]])  # a duplicate at row 6
    message = _error(lambda: reduce_dataframe(broken, Needs()))
    assert message.startswith("<Spark DataFrame>, line 6, field 'sample_index': duplicate sample"), message


def test_out_of_core_limits_and_progress(tmp_path):
    path = _write(tmp_path, _records(n_problems=200), "jsonl")
    seen = []
    options = EngineOptions(memory_limit="256MB", temp_directory=str(tmp_path / "spill"), threads=1,
                            progress=seen.append)
    statistics = reduce_samples([path], NEEDS, engine="duckdb", options=options)
    assert statistics.differences(statistics_from_table(kpass.read_samples(path), NEEDS)) == []
    assert seen and seen[-1] == 100.0 and all(0 <= p <= 100 for p in seen)



def test_duckdb_settings_from_the_environment(monkeypatch):
    from kpass.data.duckdb_engine import connect
    from kpass.errors import UsageError

    monkeypatch.setenv("KPASS_THREADS", "1")
    monkeypatch.setenv("KPASS_MEMORY_LIMIT", "300MB")
    con = connect(EngineOptions())
    threads, limit = con.execute("SELECT current_setting('threads'), current_setting('memory_limit')").fetchone()
    assert int(threads) == 1 and limit.replace(" ", "") in ("286.1MiB", "300.0MB"), limit
    con.close()
    monkeypatch.setenv("KPASS_THREADS", "two")
    with pytest.raises(UsageError, match="KPASS_THREADS / threads: expected a positive integer, got 'two'"):
        connect(EngineOptions())

def test_cli_engines_print_the_same_report(run_cli, tmp_path, spark_session):
    path = _write(tmp_path, _records(), "jsonl")
    outputs = {}
    for engine in ("numpy", "duckdb", "spark"):
        code, out, err = run_cli("report", path, "-m", "pass@1", "cons@3", "--by", "model,subject", "--cluster-by",
                                 "task", "--engine", engine, "--format", "json")
        assert code == 0, err
        outputs[engine] = json.loads(out)
    assert outputs["numpy"] == outputs["duckdb"] == outputs["spark"]
    code, out, err = run_cli("report", str(tmp_path / "*.jsonl"), "-m", "pass@1", "--format", "json")
    assert code == 0 and json.loads(out)["rows"] == outputs["duckdb"]["rows"][::2] or code == 0, err
    code, _, err = run_cli("report", str(tmp_path / "nothing-*.jsonl"))
    assert code == 2 and "no file matches" in err


def test_a_glob_matches_directories_as_the_shell_would(run_cli, tmp_path):
    """`kpass report 'runs/*'` reads the directories it matches, as `kpass report runs/*` unquoted does."""
    from kpass.data.sources import glob_matches

    records = _records()
    models = sorted({record["model"] for record in records})
    for name, model in (("run-a", models[0]), ("run-b", models[1])):
        (tmp_path / name).mkdir()
        _write(tmp_path / name, [record for record in records if record["model"] == model], "jsonl")
    assert glob_matches(str(tmp_path / "run-*")) == [str(tmp_path / "run-a"), str(tmp_path / "run-b")]
    quoted = run_cli("report", str(tmp_path / "run-*"), "-m", "pass@1", "--format", "json")
    unquoted = run_cli("report", str(tmp_path / "run-a"), str(tmp_path / "run-b"), "-m", "pass@1", "--format", "json")
    assert quoted[0] == 0 and quoted == unquoted, quoted[2]


def test_plugin_family_without_statistics_runs_on_numpy_by_default():
    from kpass.data.reduction import Needs as N
    from kpass.errors import UsageError
    from kpass.host.specs import MetricFamily

    class Samples(MetricFamily):
        symbol = "mine@"

    spec = kpass.parse_metric_specs("pass@1")[0]
    fake = type(spec)(spec.name, spec.family, spec.k, spec.params, spec.budget, spec.text, Samples())
    with pytest.raises(UsageError, match="runs only on the numpy engine"):
        N.for_specs([fake])
    assert np.array_equal(N.for_specs([spec]).budgets, ())


# every command that reads samples: the same JSON on numpy, DuckDB and Spark, the same error
_COMMANDS = {
    "crossover": ["--baseline", "a", "--model", "b", "--n-resamples", "200"],
    "frontier": ["-m", "pass@1,2", "cons@2", "pass@1(B=11)", "--n-resamples", "200"],
    "leaderboard": ["-m", "pass@1", "cons@2", "--no-budget-curves", "--n-resamples", "200"],
    "budget": ["--budgets", "as-run,10,11", "-k", "1,2", "--cluster-by", "subject", "--n-resamples", "200"],
    "decompose": ["--baseline", "a", "--model", "b", "--budgets", "as-run,11", "--n-resamples", "200"],
}


@pytest.mark.parametrize("command", sorted(_COMMANDS))
def test_every_command_prints_the_same_json_and_error_on_every_engine(run_cli, tmp_path, spark_session, command):
    path = _write(tmp_path, _records(), "jsonl")
    broken = _write(tmp_path, [r for r in _records() if not (r["problem_id"] == "p1" and r["sample_index"] == 2)],
                    "jsonl", "gap")
    outputs, errors = {}, {}
    for engine in ("numpy", "duckdb", "spark"):
        code, out, err = run_cli(command, path, *_COMMANDS[command], "--engine", engine, "--format", "json")
        assert code == 0, (engine, err)
        outputs[engine] = json.loads(out)
        code, _, err = run_cli(command, broken, *_COMMANDS[command], "--engine", engine, "--format", "json")
        assert code == 1, (engine, err)
        errors[engine] = err
    assert outputs["numpy"] == outputs["duckdb"] == outputs["spark"]
    assert errors["numpy"] == errors["duckdb"] == errors["spark"] and str(broken) in errors["numpy"]
    assert "sample_index" in errors["numpy"], errors["numpy"]


def test_budget_rules_and_what_needs_the_samples(run_cli, tmp_path):
    """Budget placement, null tokens: the same error on DuckDB as on numpy (Spark shares the SQL:
    the test above); tokenizers and the leaderboard's budget curves need the samples (exit 2)."""
    records = _records()
    path = _write(tmp_path, records, "jsonl")
    unknown = _write(tmp_path, [dict(r, output_tokens=None) if i == 5 else r for i, r in enumerate(records)],
                     "jsonl", "null-tokens")
    for command, file, extra in (("budget", path, ["--budgets", "12"]), ("decompose", path, ["--baseline", "a", "--model",
                                 "b", "--budgets", "as-run,50"]), ("frontier", unknown, []), ("budget", unknown,
                                 ["--budgets", "10"])):
        got = [run_cli(command, file, *extra, "--engine", engine) for engine in ("numpy", "duckdb")]
        assert got[0][0] == got[1][0] == 1 and got[0][2] == got[1][2], (command, got)
        assert "line" in got[0][2], got[0][2]
    code, _, err = run_cli("budget", path, "--tokenizer", "tiktoken:cl100k_base", "--engine", "duckdb")
    assert code == 2 and "--tokenizer re-counts tokens from each sample's text; use --engine numpy" in err
    code, _, err = run_cli("leaderboard", path, "--engine", "duckdb")
    assert code == 2 and "budget curves need every sample's token positions" in err and "--no-budget-curves" in err
    code, out, err = run_cli("leaderboard", path, "--engine", "duckdb", "--no-curves", "--format", "json")
    assert code == 0 and json.loads(out)["budget_curves"] == {}, err


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_sample_indices_past_the_bitmask_words_are_counted_exactly(tmp_path, fmt):
    """The DuckDB reduction counts indices 0..255 as bits and the rest by DISTINCT: 300 samples per
    problem read like numpy's, and a duplicate or a gap past index 255 is the same error."""
    good = _records(models=("m",), n_problems=2, n=300)
    specs = kpass.parse_metric_specs("pass@1 pass@16")
    needs = Needs.for_specs(specs, by=("model",))
    path = _write(tmp_path, good, fmt)
    expected = kpass.compute_report(kpass.read_samples(path), specs, by=("model",), rng=0)
    got = kpass.compute_report(reduce_samples([path], needs, engine="duckdb"), specs, by=("model",), rng=0)
    _reports_equal(expected, got)
    assert got.rows[0].n_samples == 600
    for name, broken in [("duplicate", [r if r["sample_index"] != 290 else dict(r, sample_index=280) for r in good]),
                         ("gap", [r for r in good if not (r["problem_id"] == "p1" and r["sample_index"] == 270)]),
                         ("negative", [r if r["sample_index"] != 0 else dict(r, sample_index=-5) for r in good])]:
        path = _write(tmp_path, broken, fmt, name=name)
        message = _error(lambda path=path: kpass.compute_report(kpass.read_samples(path), specs, by=("model",), rng=0))
        assert _error(lambda path=path: kpass.compute_report(reduce_samples([path], needs, engine="duckdb"), specs,
                                                   by=("model",), rng=0)) == message, name


def test_spark_temporary_parent_is_created_or_named(tmp_path):
    """A ``--temp-dir`` that does not exist is created (as DuckDB does); one that cannot be is a
    UsageError naming the parameter, not the operating system's bare errno."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from kpass.data.spark_engine import _written_table
    from kpass.errors import UsageError

    class Writer:  # what an executor does: a directory of part files under the given path
        def parquet(self, path):
            pathlib.Path(path).mkdir()
            pq.write_table(pa.table({"n_correct": [3, 1]}), str(pathlib.Path(path) / "part-00000.parquet"))

    class Frame:
        write = Writer()

    parent = tmp_path / "not" / "yet"
    assert _written_table(Frame(), str(parent)).column("n_correct").to_pylist() == [3, 1]
    assert parent.is_dir() and list(parent.iterdir()) == []
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(UsageError, match=r"`temp_directory` '.*a-file/sub': cannot create .* temporary directory"):
        _written_table(Frame(), str(blocker / "sub"))


def test_cons_at_k_counts_the_answers_whose_finished_is_unknown_on_every_engine(tmp_path, spark_session):
    """Wrong answers with a null ``finished`` vote in cons@k (nothing says they were cut): the note
    counts them, the same on numpy, DuckDB and Spark; cut=vote says nothing of them."""
    records = _records()
    for record in records:  # every third wrong sample of odd index: nobody knows whether it finished
        if not record["correct"] and record["sample_index"] % 2 and record["problem_id"] in ("p1", "p4", "p5"):
            record["finished"] = None
    unknown = sum(1 for r in records if r["finished"] is None and r["answer"] is not None and not r["correct"])
    cut = sum(1 for r in records if r["finished"] is False and r["answer"] is not None and not r["correct"])
    assert unknown > 0 and cut > 0
    path = _write(tmp_path, records, "jsonl")
    metrics = "cons@3 cons@3[cut=vote]"
    needs = Needs.for_specs(kpass.parse_metric_specs(metrics))
    expected = kpass.compute_report(load_samples([path], None, engine="numpy"), metrics, rng=0)
    import re

    def counted(pattern):  # summed over the report's rows (one per model and task)
        return sum(int(m.group(1)) for note in map(str, expected.notes) if (m := re.search(pattern, note)))

    assert counted(r"cons@3: (\d+) of \d+ answers vote although whether their generation finished is unknown") == unknown
    assert counted(r"cons@3: (\d+) of \d+ answers come from unfinished generations .* and abstain") == cut
    assert not any("[cut=vote]" in note and "unknown" in note for note in map(str, expected.notes))
    for engine in ("duckdb", "spark"):
        statistics = reduce_samples([path], needs, engine=engine, options=EngineOptions(spark=spark_session))
        assert statistics.n_unknown_answers.sum() == unknown, engine
        _reports_equal(kpass.compute_report(statistics, metrics, rng=0), expected)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_three_engines_carry_the_judge(tmp_path, fmt, spark_session):
    """The ``judge`` column (the task metric a reader says judged each sample) is carried per
    problem by every engine: the same judge in every report and comparison row on numpy, DuckDB
    and Spark; a problem whose samples disagree names the first and last of its judges in name
    order (SQL's MIN and MAX), one without a judge none; an input without the column names no
    judge anywhere."""
    records = [dict(r, judge="exact_match" if r["task"] == "math" else "math_verify") for r in _records()]
    for record in records:
        if record["model"] == "b" and record["problem_id"] == "p1":  # samples judged differently
            record["judge"] = ("llm_judge", "exact_match", "exact_match", "zz_judge")[record["sample_index"]]
        if record["model"] == "a" and record["problem_id"] == "p3":  # no judge named
            record["judge"] = None
    path = _write(tmp_path, records, fmt)
    metrics, by = "pass@1 cons@3", ("model", "task")
    needs = Needs.for_specs(kpass.parse_metric_specs(metrics), by=by)
    numpy_table = load_samples([path], needs, engine="numpy")
    reference = statistics_from_table(numpy_table, needs)
    expected = kpass.compute_report(numpy_table, metrics, by=by, rng=0)
    judges = {row.group: row.judge for row in expected.rows}
    assert judges == {(("model", "a"), ("task", "code")): "math_verify", (("model", "a"), ("task", "math")): "exact_match",
                      (("model", "b"), ("task", "code")): "math_verify",
                      (("model", "b"), ("task", "math")): "exact_match, zz_judge"}, judges  # not llm_judge
    pooled = {row.group: row.judge for row in kpass.compute_report(numpy_table, "pass@1", by=("model",), rng=0).rows}
    assert pooled == {(("model", "a"),): "exact_match, math_verify",
                      (("model", "b"),): "exact_match, math_verify, zz_judge"}, pooled
    compared = [(row.judge, row.judge_baseline) for row in kpass.compute_comparison(numpy_table, "pass@1", by=("task",),
                                                                                     baseline="a", rng=0).rows]
    assert compared == [("math_verify", "math_verify"), ("exact_match, zz_judge", "exact_match")], compared
    for engine in ("duckdb", "spark"):
        statistics = reduce_samples([path], needs, engine=engine, options=EngineOptions(spark=spark_session))
        assert statistics.differences(reference) == [], engine
        assert {row.group: row.judge for row in kpass.compute_report(statistics, metrics, by=by, rng=0).rows} == judges, engine
        assert {row.group: row.judge for row in kpass.compute_report(statistics, "pass@1", by=("model",), rng=0).rows} == pooled
        assert [(row.judge, row.judge_baseline) for row in kpass.compute_comparison(
            statistics, "pass@1", by=("task",), baseline="a", rng=0).rows] == compared, engine
    plain = _write(tmp_path, _records(), fmt, "plain")
    for engine in ("numpy", "duckdb", "spark"):
        table = load_samples([plain], needs, engine=engine, options=EngineOptions(spark=spark_session))
        assert {row.judge for row in kpass.compute_report(table, metrics, by=by, rng=0).rows} == {None}, engine
