"""Numeric, type and nesting edges of the input (issue #15, item 4): each one is a data error (or
a usage error for an option) naming the file, the line and the field; never a traceback."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

import kpass
from kpass.cli import main
from kpass.host.lookups import read_samples
from kpass.data.columns import MAX_INTEGER

REPOSITORY = Path(__file__).resolve().parents[2]
FIELDS = ["model", "task", "problem_id", "sample_index", "correct", "output_tokens"]


def records(n_problems=3, n_samples=2):
    return [{"model": "m", "task": "t", "problem_id": f"p{j}", "sample_index": s, "correct": s == 0,
             "output_tokens": 10 + s} for j in range(n_problems) for s in range(n_samples)]


def write_jsonl(path: Path, rows, raw_line: str | None = None, at: int = 3) -> Path:
    lines = [json.dumps(row) for row in rows]
    if raw_line is not None:
        lines[at] = raw_line
    path.write_text("\n".join(lines) + "\n")
    return path


def write_csv(path: Path, rows) -> Path:
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    return path


def cli_error(capsys, *argv) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err  # usage errors too
    return code, err.strip()


@pytest.mark.parametrize("field", ["output_tokens", "sample_index"])
@pytest.mark.parametrize("value", ["1e30", str(10**30), str(2**63), str(2**64 + 5), str(MAX_INTEGER + 1)])
@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_huge_integers_name_file_line_and_field(tmp_path, capsys, field, value, fmt):
    rows = records()
    rows[3][field] = int(value) if "e" not in value else float(value)
    path = write_jsonl(tmp_path / "s.jsonl", rows) if fmt == "jsonl" else write_csv(tmp_path / "s.csv", rows)
    code, line = cli_error(capsys, "report", path)
    assert code == 1
    assert f"{path}, line {5 if fmt == 'csv' else 4}, field '{field}'" in line
    # JSON numbers beyond 2**53 - 1 name the bound; CSV text that is no int64 is "not an integer"
    assert "at most" in line or (fmt == "csv" and "must be an integer >= 0" in line)


def test_the_largest_integer_is_read(tmp_path):
    rows = records()
    rows[3]["output_tokens"] = MAX_INTEGER
    assert read_samples(write_jsonl(tmp_path / "s.jsonl", rows)).column("output_tokens").max() == MAX_INTEGER


def test_parquet_uint64_beyond_int64_is_not_wrapped(tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = records()
    columns = {name: [row[name] for row in rows] for name in FIELDS}
    columns["output_tokens"][4] = 2**64 - 1
    table = pa.table({**{k: v for k, v in columns.items() if k != "output_tokens"},
                      "output_tokens": pa.array(columns["output_tokens"], type=pa.uint64())})
    pq.write_table(table, tmp_path / "s.parquet")
    code, line = cli_error(capsys, "report", tmp_path / "s.parquet")
    assert code == 1 and "line 5, field 'output_tokens'" in line and "1.84467e+19" in line


def test_deeply_nested_metadata_is_a_data_error(tmp_path, capsys):
    row = json.dumps(records()[3])[:-1] + ', "metadata": ' + "[" * 200_000 + "]" * 200_000 + "}"
    path = write_jsonl(tmp_path / "s.jsonl", records(), raw_line=row)
    code, line = cli_error(capsys, "report", path)
    assert code == 1 and f"{path}, line 4" in line and "nested too deeply" in line


def test_duplicate_json_keys_are_an_error(tmp_path, capsys):
    row = json.dumps(records()[3])[:-1] + ', "correct": true}'
    path = write_jsonl(tmp_path / "s.jsonl", records(), raw_line=row)
    code, line = cli_error(capsys, "report", path)
    assert code == 1 and f"{path}, line 4, field 'correct'" in line and "duplicate key 'correct'" in line


def test_csv_with_a_byte_order_mark(tmp_path):
    path = write_csv(tmp_path / "s.csv", records())
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    table = read_samples(path)
    assert table.categories("model") == ["m"] and len(table) == 6


def test_jsonl_with_a_byte_order_mark(tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", records())
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert len(read_samples(path)) == 6


@pytest.mark.parametrize("name", ["e.json", "e.jsonl", "e.csv", "e.eval", "e.parquet"])
def test_an_empty_file_says_empty(tmp_path, capsys, name):
    (tmp_path / name).write_bytes(b"")
    code, line = cli_error(capsys, "report", tmp_path / name)
    assert code == 1 and "empty" in line and str(tmp_path / name) in line


def test_csv_with_an_unterminated_quote_is_refused(tmp_path, capsys):
    path = tmp_path / "s.csv"
    path.write_text("model,task,problem_id,sample_index,correct\nm,t,\"p0,0,1\nm,t,p1,0,1\n")
    code, line = cli_error(capsys, "report", path)
    assert code == 1 and str(path) in line and "unexpected end of data" in line


def test_extend_csv_with_an_unterminated_quote_is_refused(tmp_path, capsys):
    samples = write_jsonl(tmp_path / "s.jsonl", records())
    existing = tmp_path / "board.csv"
    existing.write_text('model,score\nm,"1\nother,2\n')
    code, line = cli_error(capsys, "leaderboard", samples, "--extend", existing, "--no-curves",
                           "--n-resamples", "50", "-o", tmp_path / "out.csv")
    assert code == 1 and str(existing) in line and "unterminated quote" in line
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("spec, message", [
    ("cons@16[ties=strict", "'[' at position 7 is never closed (add ']')"),
    ("fin@4(B=10", "'(' at position 5 is never closed (add ')')"),
    ("cons@16[ties=[strict]]", "'[' at position 13 opens inside '['"),
])
def test_unclosed_bracket_in_a_metric_spec(spec, message):
    with pytest.raises(kpass.MetricSpecError) as error:
        kpass.parse_metric_specs([spec])
    assert message in str(error.value) and "expected NAME@K" not in str(error.value)


@pytest.mark.parametrize("effect", ["1.5", "1", "0", "-0.1", "nan"])
def test_power_effect_outside_zero_one_is_refused(capsys, effect):
    code, line = cli_error(capsys, "power", "--effect", effect, "--between-variance", "0.1",
                           "--within-variance-a", "0.1", "--within-variance-b", "0.1",
                           "--samples-a", "4", "--samples-b", "4")
    assert code == 2 and "--effect" in line and "(0, 1)" in line


def test_mean_ci_values_outside_explicit_bounds():
    with pytest.raises(ValueError, match=r"`values` must lie within `bounds` \(0.0, 1.0\); problem 3 has 8.0"):
        kpass.metrics.mean_ci([0.2, 0.3, 0.5, 8], bounds=(0, 1))
    with pytest.raises(ValueError, match="must lie within `bounds`"):
        kpass.metrics.mean_ci([2, 3, 5, 8], bounds=(0, 1))
    assert kpass.metrics.mean_ci([2, 3, 5, 8], bounds=(0, 10), method="t").estimate == 4.5


def test_paired_difference_differences_outside_explicit_bounds():
    # an explicit range only clips the interval, so one that does not hold the differences would cut it silently
    a, b = [1.0, 1.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match=r"`a - b` must lie within `bounds` \(0.1, 0.2\); row 0 has 0.0"):
        kpass.metrics.paired_difference(a, b, bounds=(0.1, 0.2))
    with pytest.raises(ValueError, match=r"problem id 'q3' has 1.0"):
        kpass.metrics.paired_difference([0.0, 0.0, 1.0], [0.0, 0.0, 0.0], bounds=(-0.5, 0.5), problem_ids_a=["q1", "q2", "q3"],
                                        problem_ids_b=["q1", "q2", "q3"])
    assert kpass.metrics.paired_difference(a, b, bounds=(-10, 10), method="t").estimate == 0.5


def test_demo_help_prints_help_and_deletes_nothing(tmp_path):
    output = REPOSITORY / "demo-output"
    marker = output / "kpass-test-marker"
    existed = output.exists()
    output.mkdir(exist_ok=True)
    marker.write_text("keep me")
    try:
        finished = subprocess.run([sys.executable, str(REPOSITORY / "examples/demo/run_demo.py"), "--help"],
                                  capture_output=True, text=True, timeout=60)
        assert finished.returncode == 0 and "usage:" in finished.stdout
        assert "inspect eval" not in finished.stdout and marker.read_text() == "keep me"
    finally:
        marker.unlink(missing_ok=True)
        if not existed:
            output.rmdir()
