"""``kpass leaderboard`` and ``kpass budget`` say which task metric judged the samples (the
``judge`` column lm-eval output carries, #33 point 5) in every output format, the same on the
numpy and DuckDB engines; an input without a judge gives the outputs it always gave, and the
numbers never change."""

from __future__ import annotations

import csv
import io
import json
import random

import pytest

JUDGES = {("a", "gsm"): "exact_match", ("b", "gsm"): "exact_match", ("c", "gsm"): "llm_judge",
          ("a", "math"): "math_verify", ("b", "math"): "math_verify", ("c", "math"): "math_verify"}


def _records(judged: bool) -> list[dict]:
    records = []
    for (model, task), judge in JUDGES.items():
        for j in range(6):
            for s in range(4):
                record = {"model": model, "task": task, "problem_id": f"p{j}", "sample_index": s,
                          "correct": random.Random(f"{model} {task} {j} {s}").random() < 0.5, "finished": True,
                          "output_tokens": 10 + s}
                records.append(dict(record, judge=judge) if judged else record)
    return records


@pytest.fixture
def inputs(write_jsonl):
    return write_jsonl(_records(True), "judged.jsonl"), write_jsonl(_records(False), "plain.jsonl")


def _without_judges(value):
    """``value`` (parsed JSON) with every ``judge`` key left out."""
    if isinstance(value, dict):
        return {key: _without_judges(item) for key, item in value.items() if key != "judge"}
    if isinstance(value, list):
        return [_without_judges(item) for item in value]
    return value


def _run(run_cli, *args):
    code, out, err = run_cli(*args)
    assert code == 0, err
    return out


LEADERBOARD = ("-m", "pass@1", "--no-curves", "--n-resamples", "200")
MIXED_NOTE = {"kind": "ranks", "rows": ["gsm/pass@1"], "doc": "docs/notes.md#ranks",
              "text": "the models' samples were judged by different metrics (exact_match, llm_judge): their "
                      "ranks and comparisons set one scoring against another."}


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_leaderboard_names_the_judge_in_every_output(run_cli, inputs, engine):
    judged, plain = inputs
    outputs = {fmt: _run(run_cli, "leaderboard", judged, *LEADERBOARD, "--engine", engine, "--format", fmt)
               for fmt in ("markdown", "csv", "json")}
    data = json.loads(outputs["json"])
    assert [column.get("judge") for column in data["columns"]] == ["exact_match, llm_judge", "math_verify"]
    assert {(entry["model"], key.split("/")[0]): cell["judge"] for entry in data["models"]
            for key, cell in entry["metrics"].items()} == JUDGES
    assert MIXED_NOTE in data["notes"]
    # Markdown: a column judged by one metric says so in its header, a mixed one in each cell
    markdown = outputs["markdown"].splitlines()
    assert "| gsm/pass@1 (95% CI) | math/pass@1 (95% CI, judged by math_verify) |" in markdown[0]
    rows = {line.split("|")[2].strip(): line for line in markdown[2:5]}
    assert "(judged by exact_match)" in rows["a"] and "(judged by llm_judge)" in rows["c"]
    assert "math_verify" not in "".join(rows.values())
    assert f"- **ranks** gsm/pass@1: {MIXED_NOTE['text']} (`docs/notes.md#ranks`)" in markdown
    table = list(csv.DictReader(io.StringIO(outputs["csv"])))
    assert {(row["model"], row["gsm/pass@1 judge"], row["math/pass@1 judge"]) for row in table} == {
        ("a", "exact_match", "math_verify"), ("b", "exact_match", "math_verify"), ("c", "llm_judge", "math_verify")}
    # the numbers are those of the same samples without a judge, whose outputs name none
    bare = {fmt: _run(run_cli, "leaderboard", plain, *LEADERBOARD, "--engine", engine, "--format", fmt)
            for fmt in ("markdown", "csv", "json")}
    assert not any("judge" in text for text in bare.values())
    expected = json.loads(bare["json"])
    data["notes"].remove(MIXED_NOTE)
    assert _without_judges(data) == expected
    assert [{key: value for key, value in row.items() if not key.endswith(" judge")} for row in table] == list(
        csv.DictReader(io.StringIO(bare["csv"])))


def test_leaderboard_json_is_the_same_on_numpy_and_duckdb(run_cli, inputs):
    judged, _ = inputs
    numpy, duckdb = (_run(run_cli, "leaderboard", judged, *LEADERBOARD, "--engine", engine, "--format", "json")
                     for engine in ("numpy", "duckdb"))
    assert json.loads(numpy) == json.loads(duckdb)


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_budget_names_the_judge_in_every_output(run_cli, inputs, engine):
    judged, plain = inputs
    budget = ("budget", "--budgets", "as-run,11", "--n-resamples", "200", "--engine", engine)
    outputs = {fmt: _run(run_cli, *budget[:1], judged, *budget[1:], "--format", fmt)
               for fmt in ("table", "markdown", "csv", "json")}
    data = json.loads(outputs["json"])
    assert {(row["model"], row["task"]): row["judge"] for row in data["rows"]} == JUDGES
    assert list(data["rows"][0])[:3] == ["model", "task", "judge"]
    table = outputs["table"].splitlines()
    assert table[1].split()[:4] == ["model", "task", "judge", "budget"]
    assert table[3].split()[:4] == ["a", "gsm", "exact_match", "as-run"]
    assert "| model | task | judge | budget |" in outputs["markdown"]
    rows = list(csv.DictReader(io.StringIO(outputs["csv"])))
    assert {(row["model"], row["task"]): row["judge"] for row in rows} == JUDGES
    pooled = json.loads(_run(run_cli, *budget[:1], judged, *budget[1:], "--by", "model", "--format", "json"))
    assert {row["model"]: row["judge"] for row in pooled["rows"]} == {
        "a": "exact_match, math_verify", "b": "exact_match, math_verify", "c": "llm_judge, math_verify"}
    bare = {fmt: _run(run_cli, *budget[:1], plain, *budget[1:], "--format", fmt)
            for fmt in ("table", "markdown", "csv", "json")}
    assert not any("judge" in text for text in bare.values())
    assert _without_judges(data) == json.loads(bare["json"])
    assert [{key: value for key, value in row.items() if key != "judge"} for row in rows] == list(
        csv.DictReader(io.StringIO(bare["csv"])))


def test_budget_json_is_the_same_on_numpy_and_duckdb(run_cli, inputs):
    judged, _ = inputs
    numpy, duckdb = (_run(run_cli, "budget", judged, "--budgets", "as-run,11", "--n-resamples", "200", "--engine",
                          engine, "--format", "json") for engine in ("numpy", "duckdb"))
    assert json.loads(numpy) == json.loads(duckdb)
