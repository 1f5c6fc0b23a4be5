"""``kpass budget`` and ``kpass decompose`` after the review: the options of ``kpass report``, every
warning surfaced as a note, the reader's notes carried, and k larger than some n an exclusion."""

from __future__ import annotations

import json

import numpy as np
import pytest

import kpass

from .conftest import make_records


def ragged_records(seed=1, n_problems=20, models=("m",), n=lambda j: 6, subject=None):
    """Problem ids in sorted order of first appearance (``p00``, ``p01``, ...), so that the problem
    order of ``kpass budget`` (sorted ids) and ``kpass report`` (first appearance) coincide."""
    rng = np.random.default_rng(seed)
    records = []
    for model in models:
        for j in range(n_problems):
            p = rng.random()
            for s in range(n(j)):
                correct = bool(rng.random() < p)
                record = {"model": model, "task": "t", "problem_id": f"p{j:02d}", "sample_index": s,
                          "correct": correct, "finished": correct or bool(rng.random() < 0.8),
                          "output_tokens": int(rng.integers(10, 100))}
                if subject is not None:
                    record["subject"] = subject(j)
                records.append(record)
    return records


def run_json(run_cli, *args):
    code, out, err = run_cli(*args, "--format", "json")
    assert code == 0, err
    return json.loads(out), err


def test_budget_as_run_equals_report(run_cli, write_jsonl):
    # the same seed, resamples and method as kpass report: the as-run row is report's pass@1 and fin@1
    path = write_jsonl(ragged_records())
    data, _ = run_json(run_cli, "budget", path)
    (row,) = data["rows"]
    report, _ = run_json(run_cli, "report", path, "-m", "pass@1", "fin@1")
    passed, finished = report["rows"]
    assert (row["pass"], row["pass_low"], row["pass_high"]) == (passed["estimate"], passed["low"], passed["high"])
    assert (row["fin"], row["fin_low"], row["fin_high"]) == (finished["estimate"], finished["low"], finished["high"])
    assert row["method"] == kpass.metrics.DEFAULT_INTERVAL_METHOD and passed["method"] == "score-toward-end"  # report: the rule


def test_every_warning_becomes_a_note(run_cli, write_jsonl):
    path = write_jsonl(ragged_records(subject=lambda j: f"s{j % 4}"))
    data, err = run_json(run_cli, "budget", path, "--cluster-by", "subject", "--n-resamples", "200")
    assert any(note["kind"] == "few-clusters" and note["detail"].startswith("only 4 clusters")
               for note in data["notes"]), data["notes"]
    assert all(note["rows"] == ["m / t"] for note in data["notes"])
    code, out, _ = run_cli("budget", path, "--cluster-by", "subject", "--n-resamples", "200")
    assert code == 0 and "\nNotes:\n  [few-clusters] m / t: fewer than 10 clusters" in out
    code, out, err = run_cli("budget", path, "--cluster-by", "subject", "--n-resamples", "200", "--format", "csv")
    assert code == 0 and "kpass: note: [few-clusters] m / t: fewer than 10 clusters" in err  # a CSV has no room for notes
    two = write_jsonl(ragged_records(models=("a", "b"), subject=lambda j: f"s{j % 4}"), name="two.jsonl")
    data, _ = run_json(run_cli, "decompose", two, "--baseline", "a", "--model", "b", "--cluster-by", "subject",
                       "--n-resamples", "50")
    assert any(note["rows"] == ["t"] and "clusters" in note["text"] for note in data["notes"]), data["notes"]


def test_the_readers_notes_reach_budget_and_decompose(run_cli, write_jsonl, monkeypatch):
    from kpass.host import lookups as readers

    records = ragged_records(models=("a", "b"))
    path = write_jsonl(records)

    def read_with_notes(paths, reader=None, **kwargs):
        return kpass.SampleTable.from_records(records, source=str(path), notes=["run.eval: 2 epochs left out"])

    monkeypatch.setattr(readers, "read_samples", read_with_notes)
    data, _ = run_json(run_cli, "budget", path, "--n-resamples", "50")
    assert data["notes"][0] == {"kind": "reader", "rows": ["run.eval"], "text": "2 epochs left out",
                                "doc": "docs/notes.md#reader"}
    data, _ = run_json(run_cli, "decompose", path, "--baseline", "a", "--model", "b", "--n-resamples", "50")
    assert data["notes"][0] == {"kind": "reader", "rows": ["run.eval"], "text": "2 epochs left out",
                                "doc": "docs/notes.md#reader"}


def test_k_above_some_n_excludes_and_lists_those_problems(run_cli, write_jsonl):
    path = write_jsonl(ragged_records(n=lambda j: 4 if j in (3, 7) else 8))
    data, _ = run_json(run_cli, "budget", path, "-k", "1,6", "--n-resamples", "200")
    rows = {row["k"]: row for row in data["rows"]}
    assert rows[1]["n_problems"] == 20 and rows[6]["n_problems"] == 18
    assert data["exclusions"] == [{"model": "m", "task": "t", "metric": "k=6", "problem_ids": ["p03", "p07"],
                                   "n_problems": 2, "reason": "4 samples, k = 6 needs 6"}]
    # k = 6 on the 18 problems equals the core on them (k = 1 still uses all 20)
    records = ragged_records(n=lambda j: 4 if j in (3, 7) else 8)
    n = np.array([sum(r["problem_id"] == f"p{j:02d}" for r in records) for j in range(20)])
    c = np.array([sum(r["correct"] for r in records if r["problem_id"] == f"p{j:02d}") for j in range(20)])
    keep = n >= 6
    assert rows[6]["pass"] == pytest.approx(kpass.pass_at_k(n[keep], c[keep], 6).mean(), abs=1e-12)
    code, out, _ = run_cli("budget", path, "-k", "1,6", "--n-resamples", "200")
    assert code == 0 and "m / t / k=6: 2 problems (4 samples, k = 6 needs 6): p03, p07" in out
    # k above every n: nothing left to estimate, a data error naming the largest n
    code, out, err = run_cli("budget", path, "-k", "1,16")
    assert code == 1 and out == "" and "-k 16: k needs that many samples per problem" in err
    assert "Lower -k to at most 8" in err


def test_decompose_uses_the_seed_and_resamples_of_report(run_cli, write_jsonl):
    path = write_jsonl(ragged_records(models=("a", "b"), n_problems=12))
    data, _ = run_json(run_cli, "decompose", path, "--baseline", "a", "--model", "b")
    (row,) = data["rows"]
    assert row["n_resamples"] == 10_000


def test_budget_json_has_rows_exclusions_and_notes(run_cli, write_jsonl):
    path = write_jsonl(make_records(finished=True, output_tokens=10))
    data, _ = run_json(run_cli, "budget", path, "--n-resamples", "50")
    assert sorted(data) == ["exclusions", "notes", "rows"] and data["exclusions"] == []
    data, _ = run_json(run_cli, "decompose", write_jsonl(make_records(model="a", finished=True, output_tokens=10)
                                                         + make_records(model="b", finished=True, output_tokens=10),
                                                         name="two.jsonl"),
                       "--baseline", "a", "--model", "b", "--n-resamples", "50")
    assert sorted(data) == ["notes", "rows"]
