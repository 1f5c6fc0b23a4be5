"""lm-eval output layouts before 0.4.3 (kpass.adapters.lm_eval_layouts), on files laid out as those versions'
writer code lays them out (tests/adapters/lm_eval_fixtures/layouts/, README.md there says which code each
follows): 0.3.x ``--output_path`` results with ``--write_out`` files, a 0.3.x results file alone (the 2023 layout
of the harness's own ``results/`` folder), and 0.4.0-0.4.2 ``results.json`` with ``<model_args>_<task>.jsonl``
sample arrays. Every expected number is counted here from the fixture files with the test's own rules.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import kpass
from kpass.adapters.lm_eval_layouts import LAYOUT_03, LAYOUT_040, legacy_layout
from kpass.adapters.lm_eval_reader import LmEvalSamplesReader, read_lm_eval_output

LAYOUTS = Path(__file__).resolve().parent / "lm_eval_fixtures" / "layouts"
V042 = LAYOUTS / "v0.4.2"
V042_SAMPLES = "pretrained__fake_arith_gen.jsonl"
V03 = LAYOUTS / "v0.3" / "write_out"
V03_RESULTS_ONLY = LAYOUTS / "v0.3" / "results_only" / "pythia-160m_gsm8k_8-shot.json"
PIPELINES = {"strict-match": r"The answer is (\-?[0-9]+)", "flexible-extract": r"(-?[0-9]+)"}


def _read(path, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_lm_eval_output(path, **options)


def _kpass_cli(*args: str) -> subprocess.CompletedProcess:
    script = Path(sys.executable).parent / "kpass"
    return subprocess.run([str(script), *args], capture_output=True, text=True, check=False)


# ------------------------------------------------------------------------------ 0.4.0-0.4.2


def _v042_hand_counts() -> dict[str, dict[str, int]]:
    """Correct generations per document and pipeline, by the pipelines' regexes (first match for strict-match,
    last for flexible-extract, as their ``group_select``) and exact_match with ignore_case."""
    records = json.loads((V042 / V042_SAMPLES).read_text())
    counts: dict[str, dict[str, int]] = {name: {} for name in PIPELINES}
    for record in records[: len(records) // 2]:  # each document once (the first filter's records)
        for name, pattern in PIPELINES.items():
            found = [re.findall(pattern, text) for text in record["resps"][0]]
            answers = [(f[0] if name == "strict-match" else f[-1]) if f else None for f in found]
            counts[name][str(record["doc_id"])] = sum(a == str(record["target"]) for a in answers)
    return counts


def _per_problem(table: kpass.SampleTable) -> dict[str, dict[str, int]]:
    records = table.to_records()
    out: dict[str, dict[str, int]] = {}
    for record in records:
        pipeline = record["task"].split("/", 1)[1]
        out.setdefault(pipeline, {}).setdefault(record["problem_id"], 0)
        out[pipeline][record["problem_id"]] += bool(record["correct"])
    return out


def test_v042_layout_is_detected_by_its_writer_s_names_and_keys():
    assert legacy_layout(V042 / "results.json") == LAYOUT_040
    assert legacy_layout(V03 / "pythia-160m_0-shot.json") == LAYOUT_03
    assert legacy_layout(V03_RESULTS_ONLY) == LAYOUT_03
    reader = LmEvalSamplesReader()
    for path in (V042, V042 / "results.json", V042 / V042_SAMPLES, V03, V03 / "gsm8k_write_out_info.json",
                 V03_RESULTS_ONLY):
        assert reader.can_read(path), path
    # the samples "jsonl" is one indented JSON array: kpass's own JSON Lines reader does not claim it
    from kpass.data.readers import JsonlReader

    assert not JsonlReader().can_read(V042 / V042_SAMPLES)


def test_v042_every_generation_judged_per_pipeline_as_counted_by_hand():
    table = _read(V042)
    hand = _v042_hand_counts()
    assert _per_problem(table) == hand
    assert set(table.categories("model")) == {"fake"}  # pretrained=fake in the run's model_args string
    report = kpass.compute_report(table, "pass@1,4", rng=0)
    k = 4
    for name, counts in hand.items():
        values = np.array(list(counts.values()))
        row = report.row("pass@1", task=f"arith_gen/{name}")
        assert row.estimate == pytest.approx(values.mean() / k, abs=1e-12)
        assert (row.n_problems, row.n_samples) == (16, 64)
        assert report.row("pass@4", task=f"arith_gen/{name}").estimate == pytest.approx((values > 0).mean(), abs=1e-12)
    assert 0 < report.row("pass@1", task="arith_gen/strict-match").estimate < 1
    # the file's own first-sample scores agree with the first generation's verdicts (lm-eval's exact_match)
    records = json.loads((V042 / V042_SAMPLES).read_text())
    logged = np.mean([r["exact_match"] for r in records[:16]])
    first = [r for r in table.to_records() if r["task"] == "arith_gen/strict-match" and r["sample_index"] == 0]
    assert np.mean([r["correct"] for r in first]) == pytest.approx(logged, abs=1e-12)


def test_v042_results_file_or_samples_file_or_output_path_json_give_the_same_rows(tmp_path):
    expected = _read(V042).to_records()
    for path in (V042 / "results.json", V042 / V042_SAMPLES):
        assert [{k: v for k, v in r.items() if k != "run"} for r in _read(path).to_records()] == \
            [{k: v for k, v in r.items() if k != "run"} for r in expected]
    # --output_path DIR/run.json: 0.4.0-0.4.2 wrote the results to that file, the samples beside it
    copy = tmp_path / "out"
    shutil.copytree(V042, copy)
    (copy / "results.json").rename(copy / "run.json")
    rows = _read(copy).to_records()
    assert [r["correct"] for r in rows] == [r["correct"] for r in expected]


def test_v042_records_are_matched_to_filters_by_their_position(tmp_path):
    """0.4.0-0.4.2 records do not name their filter: the n-th record of a document is the n-th filter's, so a
    logged score that contradicts the re-scored first generation of *that* filter is caught (file and line)."""
    copy = tmp_path / "out"
    shutil.copytree(V042, copy)
    records = json.loads((copy / V042_SAMPLES).read_text())
    flexible = next(i for i, r in enumerate(records) if i >= 16 and r["doc_id"] == 0)
    records[flexible]["exact_match"] = 1.0 - records[flexible]["exact_match"]
    (copy / V042_SAMPLES).write_text(json.dumps(records, indent=2))
    with pytest.raises(kpass.DataError, match="pipeline 'flexible-extract', doc_id 0") as caught:
        _read(copy)
    assert caught.value.line == flexible + 1
    # a renamed results file of a later version (with EvaluationTracker's keys) is not taken for 0.4.0-0.4.2
    modern = {**json.loads((V042 / "results.json").read_text()), "model_name_sanitized": "fake"}
    (tmp_path / "results.json").write_text(json.dumps(modern))
    assert legacy_layout(tmp_path / "results.json") is None


def test_v042_missing_samples_file_is_named(tmp_path):
    copy = tmp_path / "out"
    shutil.copytree(V042, copy)
    (copy / V042_SAMPLES).unlink()
    with pytest.raises(kpass.DataError, match=r"<model_args>_arith_gen.jsonl of task 'arith_gen'.*--log_samples"):
        _read(copy)


# ------------------------------------------------------------------------------ 0.3.x


def test_v03_write_out_reads_one_greedy_sample_per_document_judged_by_the_logged_metric():
    table = _read(V03)
    records = json.loads((V03 / "gsm8k_write_out_info.json").read_text())
    results = json.loads((V03 / "pythia-160m_0-shot.json").read_text())
    hand = {str(r["doc_id"]): r["acc"] == "True" for r in records}
    assert {r["problem_id"]: r["correct"] for r in table.to_records()} == hand
    assert set(table.categories("model")) == {"EleutherAI/pythia-160m"}
    assert table.categories("task") == ["gsm8k"]  # lambada_openai: log-likelihoods, skipped
    row = kpass.compute_report(table, "pass@1", rng=0).row("pass@1", task="gsm8k")
    assert row.estimate == pytest.approx(sum(hand.values()) / len(hand), abs=1e-12)
    assert row.estimate == pytest.approx(results["results"]["gsm8k"]["acc"], abs=1e-12)
    assert (row.n_problems, row.n_samples) == (8, 8)
    assert any("one greedy generation per document (k = 1 only), each verdict is the logged acc" in note
               for note in table.notes)
    assert any("skipping lm-eval 0.3 task 'lambada_openai': its requests are log-likelihoods" in note
               for note in table.notes)
    # what 0.3 lacks is refused, not guessed: no answer classes for cons@k, one sample for pass@2
    with pytest.raises((ValueError, kpass.DataError)):
        kpass.compute_report(table, "cons@1", rng=0)
    with pytest.raises((ValueError, kpass.DataError)):
        kpass.compute_report(table, "pass@2", rng=0)
    # the write-out file given by name reads the same rows through the results file beside it
    assert [r["correct"] for r in _read(V03 / "gsm8k_write_out_info.json").to_records()] == \
        [r["correct"] for r in table.to_records()]


def test_v03_results_file_alone_is_refused_in_one_line():
    with pytest.raises(kpass.DataError, match="aggregate metrics only; k-sample metrics need the run's per-sample "
                                              "outputs") as caught:
        _read(V03_RESULTS_ONLY)
    assert "\n" not in str(caught.value) and "--write_out --output_base_path" in str(caught.value)
    completed = _kpass_cli("report", str(V03_RESULTS_ONLY))
    assert completed.returncode != 0
    assert "Traceback" not in completed.stderr and "missing required field" not in completed.stderr
    assert "aggregate metrics only" in completed.stderr


def test_v03_write_out_without_its_results_file_is_refused(tmp_path):
    shutil.copy(V03 / "gsm8k_write_out_info.json", tmp_path)
    for path in (tmp_path, tmp_path / "gsm8k_write_out_info.json"):
        with pytest.raises(kpass.DataError, match="name[s]? no model"):
            _read(path)


def test_v03_write_out_and_results_from_different_runs_are_refused(tmp_path):
    shutil.copytree(V03, tmp_path / "run")
    path = tmp_path / "run" / "gsm8k_write_out_info.json"
    records = json.loads(path.read_text())
    records[0]["acc"] = "False" if records[0]["acc"] == "True" else "True"
    path.write_text(json.dumps(records, indent=4))
    with pytest.raises(kpass.DataError, match="the files come from different runs"):
        _read(tmp_path / "run")


def test_a_tree_of_every_layout_reads_each_run_and_notes_the_one_without_samples():
    table = _read(LAYOUTS)
    assert sorted(table.categories("task")) == ["arith_gen/flexible-extract", "arith_gen/strict-match", "gsm8k"]
    assert any("pythia-160m_gsm8k_8-shot.json: incomplete lm-eval run left out" in note and
               "aggregate metrics only" in note for note in table.notes)
    completed = _kpass_cli("report", str(V042), "-m", "pass@1", "--format", "json")
    assert completed.returncode == 0, completed.stderr
    rows = {row["task"]: row for row in json.loads(completed.stdout)["rows"]}
    hand = _v042_hand_counts()
    assert rows["arith_gen/strict-match"]["estimate"] == pytest.approx(
        np.mean(list(hand["strict-match"].values())) / 4, abs=1e-12)
