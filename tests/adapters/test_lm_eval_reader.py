"""The lm-eval ``--log_samples`` reader (kpass.adapters.lm_eval_reader), on files laid out as lm-eval 0.4.13
writes them (``results_<date>.json`` + ``samples_<task>_<date>.jsonl`` per model directory).

The end-to-end tests read real lm-eval output; these cover formats and failures on small files.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import kpass
from kpass.adapters.lm_eval_plugin import register_readers
from kpass.adapters.lm_eval_reader import LmEvalSamplesReader, read_lm_eval_output

DATE = "2026-11-29T11-21-55.902322"
REGEX = {"function": "regex", "regex_pattern": r"The answer is (\-?[0-9]+)"}
LOOSE_REGEX = {"function": "regex", "regex_pattern": r"answer is (\-?[0-9]+)"}  # another extraction: another pipeline
CONFIG = {
    "task": "arith",
    "output_type": "generate_until",
    "repeats": 4,
    "metric_list": [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": True,
                     "ignore_case": True}],
    "filter_list": [{"name": "strict-match", "filter": [REGEX, {"function": "take_first"}]},
                    {"name": "maj@4", "filter": [LOOSE_REGEX, {"function": "majority_vote"},
                                                 {"function": "take_first"}]}],
}
DOCS = [  # (doc, target, K generations)
    ({"id": "q0", "topic": "add"}, "33", [" The answer is 33.", " The answer is 32.", " Hmm.", " The answer is 33."]),
    ({"id": "q1", "topic": "sub"}, "22", [" The answer is 22."] * 4),
    ({"id": "q2", "topic": "add"}, "9", [" The answer is 8.", " The answer is 8.", " The answer is 9.", " No."]),
]


def _texts(notes):
    """Notes (``kpass.Note`` or their JSON records) as ``rows: text`` lines, to search in."""
    from kpass.notes import as_note

    return [str(as_note(note)) for note in notes]



def _first_answer(pipeline, generation):
    """What lm-eval's pipeline makes of generation 0 (regex step or raw text), for the logged score."""
    steps = [step for step in pipeline.get("filter", []) if step["function"] == "regex"]
    if not steps:
        return generation
    found = re.findall(steps[0]["regex_pattern"], generation)
    return found[0].strip() if found else "[invalid]"


def _sample_lines(config, docs):
    for pipeline in config.get("filter_list") or [{"name": "none"}]:
        for doc_id, (doc, target, resps) in enumerate(docs):
            first = _first_answer(pipeline, resps[0])
            yield {"doc_id": doc_id, "doc": doc, "target": target, "arguments": {"gen_args_0": {"arg_0": "Q"}},
                   "resps": [resps], "filtered_resps": [first], "filter": pipeline["name"],
                   "metrics": ["exact_match"], "doc_hash": "h", "prompt_hash": "p", "target_hash": "t",
                   "exact_match": float(first.lower() == target.lower())}


def write_run(directory: Path, tasks=None, *, model="fake", date=DATE) -> Path:
    """An lm-eval output directory for ``tasks`` = {name: (config, docs)}; returns the model dir."""
    tasks = {"arith": (CONFIG, DOCS)} if tasks is None else tasks
    model_dir = directory / model
    model_dir.mkdir(parents=True, exist_ok=True)
    results = {"results": {name: {"alias": name} for name in tasks}, "configs": {n: c for n, (c, _) in tasks.items()},
               "config": {"model": "local-completions", "model_args": {"model": model}}, "model_name": model,
               "lm_eval_version": "0.4.13"}
    (model_dir / f"results_{date}.json").write_text(json.dumps(results, indent=2))
    for name, (config, docs) in tasks.items():
        lines = "".join(json.dumps(line) + "\n" for line in _sample_lines(config, docs))
        (model_dir / f"samples_{name}_{date}.jsonl").write_text(lines)
    return model_dir


def test_reads_every_generation_of_every_pipeline(tmp_path):
    write_run(tmp_path)
    table = read_lm_eval_output(tmp_path)
    assert table.categories("task") == ["arith/strict-match", "arith/maj@4"]
    assert len(table) == 2 * 3 * 4
    records = [r for r in table.to_records() if r["task"] == "arith/strict-match"]
    assert [r["correct"] for r in records] == [True, False, False, True, True, True, True, True,
                                               False, False, True, False]
    assert [r["answer"] for r in records[:4]] == ["33", "32", None, "33"]
    assert {r["model"] for r in records} == {"fake"} and records[0]["doc.topic"] == "add"
    assert [r["problem_id"] for r in records[::4]] == ["0", "1", "2"]
    report = kpass.compute_report(table, "pass@1,4 cons@4", rng=0)
    n, c = np.array([4, 4, 4]), np.array([2, 4, 1])
    assert report.row("pass@4", task="arith/strict-match").estimate == pytest.approx(
        np.mean(kpass.pass_at_k(n, c, 4)))
    assert report.row("pass@1", task="arith/maj@4").estimate == pytest.approx(7 / 12)
    # majority vote over all 4: q0 wins (33 x2), q1 wins, q2 loses (8 x2)
    assert report.row("cons@4", task="arith/strict-match").estimate == pytest.approx(2 / 3)


def test_reads_a_results_file_or_a_samples_file(tmp_path):
    model_dir = write_run(tmp_path)
    by_results = read_lm_eval_output(model_dir / f"results_{DATE}.json")
    by_samples = read_lm_eval_output(model_dir / f"samples_arith_{DATE}.jsonl")
    assert by_results.to_records() == by_samples.to_records() == read_lm_eval_output(tmp_path).to_records()


def test_the_default_pipeline_scores_raw_generations(tmp_path):
    config = {**CONFIG, "filter_list": None, "metric_list": None}
    docs = [({"id": "a"}, "yes", ["yes", "no", "yes"])]
    write_run(tmp_path, {"plain": (config, docs)})
    table = read_lm_eval_output(tmp_path)
    assert table.categories("task") == ["plain"]
    assert [r["correct"] for r in table.to_records()] == [True, False, True]


def test_can_read_only_lm_eval_output(tmp_path):
    reader = LmEvalSamplesReader()
    model_dir = write_run(tmp_path / "out")
    assert reader.can_read(tmp_path / "out") and reader.can_read(model_dir / f"results_{DATE}.json")
    assert reader.can_read(model_dir / f"samples_arith_{DATE}.jsonl")
    own = tmp_path / "samples_mine_2026-01-01T00-00-00.1.jsonl"  # a kpass sample table with an lm-eval-like name
    own.write_text(json.dumps({"model": "m", "task": "t", "problem_id": "1", "sample_index": 0, "correct": 1}) + "\n")
    other = tmp_path / "results_x.json"
    other.write_text("[1, 2]")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert not any(reader.can_read(p) for p in (own, other, empty, tmp_path / "missing"))


def test_registered_through_the_kpass_plugin_hook(tmp_path):
    registered = {}
    register_readers(lambda name, reader: registered.setdefault(name, reader))
    assert isinstance(registered["lm_eval"], LmEvalSamplesReader)
    registry = kpass.get_registry()
    assert isinstance(registry.readers["lm_eval"], LmEvalSamplesReader)
    assert registry.owners[("reader", "lm_eval")] == "lm_eval"
    model_dir = write_run(tmp_path)
    samples = model_dir / f"samples_arith_{DATE}.jsonl"
    assert kpass.choose_reader(samples)[0] == "lm_eval"
    assert len(kpass.read_samples(samples)) == 24


def test_truncated_samples_line_names_file_and_line(tmp_path):
    model_dir = write_run(tmp_path)
    samples = model_dir / f"samples_arith_{DATE}.jsonl"
    text = samples.read_text()
    samples.write_text(text[: text.index("\n", text.index("\n") + 1) + 40])  # two lines, then half a line
    with pytest.raises(kpass.DataError, match=rf"samples_arith_{DATE}\.jsonl, line 3: invalid or truncated JSON line"):
        read_lm_eval_output(tmp_path)


def test_corrupt_results_json_names_the_file(tmp_path):
    model_dir = write_run(tmp_path)
    (model_dir / f"results_{DATE}.json").write_text('{"results": {}, "configs": {\n  "arith": ')
    with pytest.raises(kpass.DataError, match=r"results_.*\.json, line 2: invalid or truncated JSON"):
        read_lm_eval_output(model_dir / f"results_{DATE}.json")


def test_missing_samples_or_fields_are_named(tmp_path):
    model_dir = write_run(tmp_path)
    samples = model_dir / f"samples_arith_{DATE}.jsonl"
    lines = samples.read_text().splitlines()
    broken = json.loads(lines[1])
    del broken["resps"]
    samples.write_text("\n".join([lines[0], json.dumps(broken), *lines[2:]]) + "\n")
    with pytest.raises(kpass.DataError, match=r"line 2, field 'resps': missing field 'resps'"):
        read_lm_eval_output(tmp_path)
    samples.unlink()
    with pytest.raises(kpass.DataError, match=rf"samples file samples_arith_{DATE}\.jsonl of task 'arith' is missing"):
        read_lm_eval_output(tmp_path)


def test_resps_mixed_from_two_runs_are_refused(tmp_path):
    model_dir = write_run(tmp_path)
    samples = model_dir / f"samples_arith_{DATE}.jsonl"
    lines = samples.read_text().splitlines()
    changed = json.loads(lines[4])  # doc 1 under the second pipeline
    changed["resps"] = [[" The answer is 1."] * 4]
    lines[4] = json.dumps(changed)
    samples.write_text("\n".join(lines) + "\n")
    with pytest.raises(kpass.DataError, match="line 5, field 'resps': doc_id 1 has different 'resps' on lines 2 and 5"):
        read_lm_eval_output(tmp_path)


def test_two_runs_of_one_model_and_task_are_two_runs(tmp_path):
    """Reruns under one --output_path: each results file is a run, its model shown with its date (#33)."""
    write_run(tmp_path)
    write_run(tmp_path, date="2026-11-30T00-00-00.000001")
    table = read_lm_eval_output(tmp_path)
    assert table.categories("model") == [f"fake [{DATE}]", "fake [2026-11-30T00-00-00.000001]"]
    assert table.categories("run") == [DATE, "2026-11-30T00-00-00.000001"]
    assert any(f"2 runs of model 'fake' ({DATE}, 2026-11-30T00-00-00.000001)" in note for note in table.notes)
    comparison = kpass.compute_comparison(table, "pass@1", baseline=f"fake [{DATE}]", rng=0)
    assert all(row.estimate == 0 and row.n_problems > 0 for row in comparison.rows)  # the same samples, paired
    write_run(tmp_path / "other", model="other")
    assert set(read_lm_eval_output(tmp_path / "other").categories("model")) == {"other"}


def test_two_models_in_one_directory(tmp_path):
    write_run(tmp_path, model="a")
    write_run(tmp_path, model="b", date="2026-11-30T00-00-00.000001")
    table = read_lm_eval_output(tmp_path)
    assert table.categories("model") == ["a", "b"]
    comparison = kpass.compute_comparison(table, "pass@1", baseline="a", rng=0)
    assert all(row.estimate == 0 for row in comparison.rows)


def test_non_generation_tasks_are_skipped_with_a_warning(tmp_path):
    mc = {"task": "mc", "output_type": "multiple_choice", "metric_list": [{"metric": "acc"}]}
    write_run(tmp_path, {"arith": (CONFIG, DOCS), "mc": (mc, [({"id": 0}, "0", ["x"])])})
    with pytest.warns(UserWarning, match="skipping lm-eval task 'mc' \\(multiple_choice\\)"):
        table = read_lm_eval_output(tmp_path)
    assert table.categories("task") == ["arith/strict-match", "arith/maj@4"]
    # the skip is a note of the table, so every report on it says so (text and JSON)
    (note,) = [note for note in table.notes if "skipping" in note]
    assert "results_" in note and "skipping lm-eval task 'mc' (multiple_choice)" in note
    report = kpass.compute_report(table, "pass@1", rng=0)
    assert note in _texts(report.notes) and note in _texts(report.as_dict()["notes"])
    write_run(tmp_path / "only_mc", {"mc": (mc, [({"id": 0}, "0", ["x"])])})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(kpass.DataError, match="no generation task with logged samples found"):
            read_lm_eval_output(tmp_path / "only_mc")


@pytest.mark.parametrize("change, message", [
    ({"process_results": "def process_results(doc, results):\n    return {}\n"}, "scores with its own process_results"),
    ({"doc_to_choice": "{{choices}}"}, "maps targets through doc_to_choice"),
    ({"metric_list": [{"metric": "def my_metric(references, predictions):\n    return 1\n"}]},
     "has no registered lm-eval metric kpass can call per sample"),
])
def test_tasks_that_cannot_be_rescored_post_hoc_are_named(tmp_path, change, message):
    write_run(tmp_path, {"arith": ({**CONFIG, **change}, DOCS)})
    with pytest.raises(kpass.DataError, match=message):
        read_lm_eval_output(tmp_path)


def test_scoring_that_disagrees_with_lm_eval_is_an_error(tmp_path):
    """A task lm-eval scored otherwise (here: as if it had several valid targets) is not re-scored silently."""
    model_dir = write_run(tmp_path)
    samples = model_dir / f"samples_arith_{DATE}.jsonl"
    lines = samples.read_text().splitlines()
    logged = json.loads(lines[2])  # doc 2, strict-match: first generation "8", target "9"
    logged["exact_match"] = 1.0
    lines[2] = json.dumps(logged)
    samples.write_text("\n".join(lines) + "\n")
    with pytest.raises(kpass.DataError, match=r"line 3, field 'exact_match': task 'arith', pipeline "
                                              r"'strict-match', doc_id 2: lm-eval logged exact_match=1.0"):
        read_lm_eval_output(tmp_path)


def test_a_task_scored_only_by_kpass_metrics_is_judged_like_them(tmp_path):
    config = {**CONFIG, "metric_list": [
        {"metric": "kpass", "metrics": "pass@1,4", "ignore_case": True},
        {"metric": "def kpass_g_pass_at_k(references=None, predictions=None, **kwargs):\n    ...\n", "k": 4,
         "tau": 0.5}],
        "filter_list": [{"name": "all", "filter": [REGEX, {"function": "kpass_cluster", "field": "topic"}]}]}
    write_run(tmp_path, {"arith": (config, DOCS)})
    table = read_lm_eval_output(tmp_path)
    records = table.to_records()
    assert [r["cluster"] for r in records[::4]] == ["add", "sub", "add"]
    assert sum(r["correct"] for r in records) == 7


def test_not_lm_eval_output(tmp_path):
    with pytest.raises(kpass.DataError, match=r"no lm-eval results file \(results_<date>.json or <name>_<date>.json\) in this directory"):
        read_lm_eval_output(tmp_path)
    other = tmp_path / "x.csv"
    other.write_text("a,b\n")
    with pytest.raises(kpass.DataError, match="not an lm-eval output directory"):
        read_lm_eval_output(other)
    lonely = tmp_path / f"samples_t_{DATE}.jsonl"
    lonely.write_text("{}\n")
    with pytest.raises(kpass.DataError, match=f"the results file of this run \\(results_{DATE}.json, or <name>_{DATE}.json\\) is missing"):
        read_lm_eval_output(lonely)


def test_plugin_modules_import_without_lm_eval():
    """The ``kpass`` entry point must load even where lm-eval is not installed."""
    import subprocess
    import sys

    probe = (
        "import sys; sys.modules['lm_eval'] = None\n"  # any `import lm_eval...` now fails
        "import kpass.adapters.lm_eval_plugin, kpass.adapters.lm_eval_reader, kpass.adapters.lm_eval_samples\n"
        "import kpass.adapters.lm_eval_cli, kpass\n"
        "assert 'lm_eval' in kpass.get_registry().readers\n"
        "try:\n"
        "    import kpass.adapters.lm_eval_metrics\n"
        "except ImportError:\n"
        "    print('ok')\n"
    )
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "ok"


# ---------------------------------------------------------------------------------------------- layouts


def _records(table):
    return [{k: v for k, v in r.items()} for r in table.to_records()]


def test_output_path_json_layout_reads(tmp_path):
    """``--output_path results/run.json``: lm-eval writes ``run_<date>.json`` beside the samples files
    (``EvaluationTracker.save_results_aggregated``; the real CLI run is in test_lm_eval_reasoning)."""
    model_dir = write_run(tmp_path)
    expected = _records(read_lm_eval_output(tmp_path))
    (model_dir / f"results_{DATE}.json").rename(model_dir / f"run_{DATE}.json")
    reader = LmEvalSamplesReader()
    assert reader.can_read(model_dir / f"run_{DATE}.json") and reader.can_read(tmp_path)
    for path in (tmp_path, model_dir / f"run_{DATE}.json", model_dir / f"samples_arith_{DATE}.jsonl"):
        assert _records(read_lm_eval_output(path)) == expected
    assert kpass.choose_reader(model_dir / f"run_{DATE}.json")[0] == "lm_eval"


def test_lm_eval_0_4_0_samples_json_and_pre_0_4_greedy_until(tmp_path):
    """0.4.0-0.4.2 wrote ``samples_<task>_<date>.json`` (one indented JSON array); before 0.4.0 the
    generation type was ``greedy_until``, and its ``.jsonl`` samples (an indented array too) are not
    claimed by kpass's JSON Lines reader."""
    model_dir = write_run(tmp_path)
    expected = _records(read_lm_eval_output(tmp_path))
    samples = model_dir / f"samples_arith_{DATE}.jsonl"
    records = [json.loads(line) for line in samples.read_text().splitlines()]
    samples.unlink()
    old = model_dir / f"samples_arith_{DATE}.json"
    old.write_text(json.dumps(records, indent=2))
    assert LmEvalSamplesReader().can_read(old)
    assert _records(read_lm_eval_output(tmp_path)) == expected
    assert _records(read_lm_eval_output(old)) == expected

    legacy = tmp_path / "legacy"
    legacy_dir = write_run(legacy, {"arith": ({**CONFIG, "output_type": "greedy_until"}, DOCS)})
    legacy_samples = legacy_dir / f"samples_arith_{DATE}.jsonl"
    legacy_samples.write_text(json.dumps([json.loads(line) for line in legacy_samples.read_text().splitlines()],
                                         indent=2))
    assert kpass.choose_reader(legacy_samples)[0] == "lm_eval"
    assert _records(kpass.read_samples(legacy)) == expected
    assert _records(kpass.read_samples(legacy_samples)) == expected


def test_a_directory_with_an_incomplete_run_reads_the_complete_ones(tmp_path):
    write_run(tmp_path, model="done")
    broken = write_run(tmp_path, model="cut", date="2026-11-30T00-00-00.000001")
    (broken / "samples_arith_2026-11-30T00-00-00.000001.jsonl").unlink()
    orphan = tmp_path / "crashed" / "samples_arith_2026-11-28T00-00-00.1.jsonl"
    orphan.parent.mkdir()
    orphan.write_text((tmp_path / "done" / f"samples_arith_{DATE}.jsonl").read_text())
    with pytest.warns(UserWarning, match="incomplete lm-eval run left out"):
        table = read_lm_eval_output(tmp_path)
    assert table.categories("model") == ["done"]
    assert any("results_2026-11-30T00-00-00.000001.json: incomplete lm-eval run left out" in note
               and "samples_arith_2026-11-30T00-00-00.000001.jsonl of task 'arith' is missing" in note
               for note in table.notes)
    assert any(str(orphan) in note and "without their run's results file" in note for note in table.notes)
    # a truncated samples file is an incomplete run too; alone it is the error it was
    (broken / "samples_arith_2026-11-30T00-00-00.000001.jsonl").write_text('{"doc_id": 0, "doc"')
    with pytest.warns(UserWarning):
        assert read_lm_eval_output(tmp_path).categories("model") == ["done"]
    with pytest.raises(kpass.DataError, match="invalid or truncated JSON line"):
        read_lm_eval_output(broken / "results_2026-11-30T00-00-00.000001.json")


def test_fewer_documents_than_the_results_file_counts_get_a_note(tmp_path):
    model_dir = write_run(tmp_path)
    results_path = model_dir / f"results_{DATE}.json"
    results = json.loads(results_path.read_text())
    results["n-samples"] = {"arith": {"original": 100, "effective": 100}}
    results_path.write_text(json.dumps(results))
    table = read_lm_eval_output(tmp_path)
    (note,) = [note for note in table.notes if "n-samples" in note]
    assert "holds 3 of the 100 documents" in note and "task 'arith'" in note
    assert note in _texts(kpass.compute_report(table, "pass@1", rng=0).notes)


def test_identical_pipelines_are_one_task_and_pooled_rows_count_documents_once(tmp_path):
    """gsm8k_cot_self_consistency's three pipelines are one once take_first/majority_vote/take_first_k go."""
    three = {**CONFIG, "filter_list": [
        {"name": "score-first", "filter": [REGEX, {"function": "take_first"}]},
        {"name": "maj@64", "filter": [REGEX, {"function": "majority_vote"}, {"function": "take_first"}]},
        {"name": "maj@8", "filter": [{"function": "take_first_k", "k": 8}, REGEX, {"function": "majority_vote"},
                                     {"function": "take_first"}]}]}
    write_run(tmp_path, {"sc": (three, DOCS), "arith": (CONFIG, DOCS)})
    table = read_lm_eval_output(tmp_path)
    assert table.categories("task") == ["sc/score-first", "arith/strict-match", "arith/maj@4"]
    assert any("pipelines maj@64, maj@8 score every sample as 'score-first'" in note for note in table.notes)
    pooled = kpass.compute_report(table, "pass@1", by=("model",), rng=0)
    (row,) = pooled.rows
    assert row.n_problems == 6  # 3 documents of sc + 3 of arith, not 9
    assert any("count each document of arith once, scored through arith/strict-match (left out of them: "
               "arith/maj@4)" in note.text and note.kind == "pooled" for note in pooled.notes)
    per_task = kpass.compute_report(table, "pass@1", rng=0)
    assert [r.n_problems for r in per_task.rows] == [3, 3, 3]


def test_cons_at_k_is_refused_where_no_answer_extractor_is_known(tmp_path):
    """The default pipeline hands over raw generations: cons@k names the option instead of voting over them."""
    config = {**CONFIG, "filter_list": None}
    docs = [({"id": "q0"}, "33", ["33", "so 32", "32", "33"])]
    write_run(tmp_path, {"plain": (config, docs)})
    table = read_lm_eval_output(tmp_path)
    assert kpass.compute_report(table, "pass@1", rng=0).rows[0].estimate == 0.5
    with pytest.raises(kpass.DataError, match=r"no answer extractor is known for task 'plain'.*--answer-extractor"):
        kpass.compute_report(table, "cons@4", rng=0)
    from kpass import apply_answer_extractor

    extracted = apply_answer_extractor(table, r"regex:(-?[0-9]+)")
    assert [r["answer"] for r in extracted.to_records()] == ["33", "32", "32", "33"]
    # "so 32" and "32" are one vote: a 2-2 tie with the gold answer (a raw-text vote would give 1.0)
    assert kpass.compute_report(extracted, "cons@4", rng=0).rows[0].estimate == pytest.approx(0.5)


AIME_DOCS = [  # (doc, target, generations): the same value worded three ways, and a $...$-only answer
    ({"Problem": "p0", "Answer": 33}, "33",
     [" so $\\boxed{33}$.", " \\boxed{ 32 } then", " $x = \\boxed{32}$", " we get $32$ here"]),
    ({"Problem": "p1", "Answer": 7}, "7", [" \\boxed{7}", " \\boxed{7}", " no idea", " \\boxed{ 8 }"]),
]


def _aime_config():
    import inspect

    import lm_eval.tasks.aime.utils as aime

    return {"task": "aime24", "output_type": "generate_until", "repeats": 4,
            "process_results": inspect.getsource(aime.process_results),
            "metric_list": [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": True}]}


def _aime_lines(config, docs):
    import lm_eval.tasks.aime.utils as aime

    for doc_id, (doc, target, resps) in enumerate(docs):
        yield {"doc_id": doc_id, "doc": doc, "target": target, "arguments": {}, "resps": [resps],
               "filtered_resps": [resps[0]], "filter": "none", "metrics": ["exact_match"],
               "exact_match": aime.process_results(doc, [resps[0]])["exact_match"]}


def test_process_results_tasks_are_rescored_with_installed_code(tmp_path, monkeypatch):
    model_dir = write_run(tmp_path, {"aime24": (_aime_config(), AIME_DOCS)})
    (model_dir / f"samples_aime24_{DATE}.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in _aime_lines(_aime_config(), AIME_DOCS)))
    table = read_lm_eval_output(tmp_path)
    records = table.to_records()
    assert [r["correct"] for r in records] == [True, False, False, False, True, True, False, False]
    # answer classes: aime's own normalisation, so "\boxed{ 32 }", "$x = \boxed{32}$" and "$32$" are one vote
    assert [r["answer"] for r in records] == ["33", "32", "32", "32", "7", "7", None, "8"]
    assert {r["answer_extractor"] for r in records} == {"lm_eval_aime"}
    report = kpass.compute_report(table, "cons@4", rng=0)
    assert report.row("cons@4", task="aime24").estimate == pytest.approx(0.5)  # p0: 32 wins 3-1; p1: 7 wins
    assert any("re-scored sample by sample with its own process_results (lm_eval.tasks.aime.utils" in note
               for note in table.notes)
    # a source no installed code has: one error naming the task and the option
    changed = {**_aime_config(), "process_results": "def process_results(doc, results):\n    return {}\n"}
    write_run(tmp_path / "local", {"my_task": (changed, AIME_DOCS)})
    with pytest.raises(kpass.DataError, match=r"task 'my_task' scores with its own process_results.*--include-path"):
        read_lm_eval_output(tmp_path / "local")


def test_one_sample_per_problem_takes_lm_eval_logged_verdict(tmp_path):
    config = {**_aime_config(), "process_results": "def process_results(doc, results):\n    return {}\n",
              "repeats": 1}
    docs = [(doc, target, resps[:1]) for doc, target, resps in AIME_DOCS]
    model_dir = write_run(tmp_path, {"mine": (config, docs)})
    lines = list(_aime_lines(config, docs))
    lines[1]["exact_match"] = 0  # what lm-eval logged is the verdict, whatever kpass would compute
    (model_dir / f"samples_mine_{DATE}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    table = read_lm_eval_output(tmp_path)
    assert [r["correct"] for r in table.to_records()] == [True, False]
    assert any("one sample per problem: each verdict is lm-eval's own logged exact_match" in note
               for note in table.notes)


# ------------------------------------------------------------------------------ lm-eval groups post hoc

GROUP_DOCS = {"arith_a": DOCS, "arith_b": DOCS[:2], "arith_c": DOCS[1:]}
NESTED = {"outer": ["inner", "arith_c"], "inner": ["arith_a", "arith_b"]}
GROUP_LAYOUTS = {  # what the results file says about groups, by lm-eval version
    "0.4.13": ({"group_subtasks": NESTED}, {}),
    "0.4.2": ({"group_subtasks": {"arith_a": [], "arith_b": [], "arith_c": [], **NESTED}}, {}),  # tasks listed too
    # no group_subtasks: each task config names its group; only groups with results count (not the tag)
    "0.4.0": ({"groups": {"inner": {"alias": "inner"}}},
              {"arith_a": {"group": ["inner", "a_tag"]}, "arith_b": {"group": "inner"}}),
}


def _grouped_run(directory: Path, layout: str) -> Path:
    extra, configs = GROUP_LAYOUTS[layout]
    model_dir = write_run(directory, {name: ({**CONFIG, "task": name, **configs.get(name, {})}, docs)
                                      for name, docs in GROUP_DOCS.items()})
    path = model_dir / f"results_{DATE}.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **extra}))
    return model_dir


@pytest.mark.parametrize("layout", list(GROUP_LAYOUTS))
def test_group_rows_pool_subtasks_once_each_subtask_a_cluster(tmp_path, layout):
    _grouped_run(tmp_path, layout)
    report = kpass.compute_report(read_lm_eval_output(tmp_path), "pass@1", rng=0)
    subtask = {name: report.row("pass@1", task=f"{name}/strict-match") for name in GROUP_DOCS}
    inner = report.row("pass@1", task="inner")
    # each document once, through the first pipeline (strict-match), the subtask as the cluster
    assert (inner.n_problems, inner.n_samples, inner.n_clusters) == (5, 20, 2)
    assert inner.estimate == pytest.approx((3 * subtask["arith_a"].estimate + 2 * subtask["arith_b"].estimate) / 5)
    assert subtask["arith_a"].n_clusters is None
    assert kpass.Note("task-groups", ("inner",), "problems of arith_a/strict-match, arith_b/strict-match pooled, "
                      "each subtask one cluster (as lm-eval's own group rows pool them)") in report.notes
    assert any(note.rows == ("fake / inner / pass@1",) and note.detail.startswith("only 2 clusters")
               for note in report.notes)
    assert "a_tag" not in {row.task for row in report.rows}
    if layout == "0.4.0":  # those files do not record groups of groups
        assert "outer" not in {row.task for row in report.rows}
        return
    outer = report.row("pass@1", task="outer")
    assert (outer.n_problems, outer.n_clusters) == (7, 3)
    assert outer.estimate == pytest.approx(sum(len(GROUP_DOCS[name]) * row.estimate for name, row in subtask.items())
                                           / 7)
    assert any(note.startswith("outer: a group of groups (inner); its row pools their leaf subtasks, each "
                               "document once") for note in _texts(report.notes))
    # pooled over tasks there is no group row, and each document counts once
    (pooled,) = kpass.compute_report(read_lm_eval_output(tmp_path), "pass@1", by=("model",), rng=0).rows
    assert pooled.n_problems == 7


def test_group_rows_in_leaderboard_and_budget_and_not_for_one_samples_file(tmp_path, capsys):
    from kpass.cli.main import main
    from kpass.reports.leaderboard import build_leaderboard

    model_dir = _grouped_run(tmp_path, "0.4.13")
    board = build_leaderboard(read_lm_eval_output(tmp_path), "pass@1", rng=0, n_resamples=200)
    columns = [column["key"] for column in board.data["columns"]]
    assert columns[-2:] == ["outer/pass@1", "inner/pass@1"]  # in the order the results file lists the groups
    cell = board.data["models"][0]["metrics"]["inner/pass@1"]
    assert cell["estimate"] == pytest.approx(kpass.compute_report(read_lm_eval_output(tmp_path), "pass@1", rng=0)
                                             .row("pass@1", task="inner").estimate)
    assert main(["budget", str(tmp_path), "--budgets", "8", "-k", "1", "--tokenizer", "tiktoken:cl100k_base",
                 "--format", "json", "--n-resamples", "200"]) == 0
    rows = {row["task"]: row for row in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["inner"]["n_problems"] == 5 and rows["outer"]["n_problems"] == 7
    single = kpass.compute_report(read_lm_eval_output(model_dir / f"samples_arith_a_{DATE}.jsonl"), "pass@1", rng=0)
    assert {row.task for row in single.rows} == {"arith_a/strict-match", "arith_a/maj@4"}


def test_leaf_task_groups_expand_nesting_once_and_stop_at_cycles():
    from kpass.reports.task_groups import leaf_task_groups

    leaves, nested = leaf_task_groups({"top": ["mid", "t1", "t2"], "mid": ["t1", "t3"], "loop": ["loop", "t4"],
                                       "task_only": []})
    assert leaves == {"top": ("t1", "t3", "t2"), "mid": ("t1", "t3"), "loop": ("t4",)}
    assert nested == {"top": ("mid",), "loop": ("loop",)}


#: At most this many note lines in a 5-model leaderboard over lm-eval runs (issue #35: it was 152).
LEADERBOARD_NOTE_BUDGET = 30


def test_a_five_model_leaderboard_over_lm_eval_runs_keeps_its_notes_short(tmp_path, capsys):
    from kpass.cli import main

    for i in range(5):
        write_run(tmp_path, model=f"m{i}")
    assert main(["leaderboard", str(tmp_path), "-m", "pass@1,4", "--n-resamples", "200", "--no-progress"]) == 0
    out = capsys.readouterr().out
    notes = [line for line in out.splitlines() if line.startswith("- **")]
    assert 0 < len(notes) <= LEADERBOARD_NOTE_BUDGET, "\n".join(notes)
    # the reader's notes of the five runs are one line each, naming the five files
    (judged,) = [line for line in notes if "samples judged by exact_match" in line]
    assert judged.startswith("- **reader** ") and all(f"m{i}/results_" in judged for i in range(5))
    assert not re.search(r"&(amp|lt|gt|quot|#\d+);", out) and not re.search(r"\\x[0-9a-f]{2}", out)
