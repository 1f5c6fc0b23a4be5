"""Inspect logs end to end: truncation and fin@1 on every path, re-scoring, metric names, reader rules.

One real ``inspect eval`` run (module fixture) of ``inspect_fixtures/kpass_truncation_task.py``
(20 problems x 4 epochs, 16 generations cut at ``max_tokens``, one of them correct): the same
generations scored through ``kpass_scorer`` and by plain ``match``. fin@1 must be the finished
fraction of the script on both logs, in Inspect's results, ``kpass report``, ``kpass budget`` and
``inspect score``. The reader's integrity rules are checked on copies of the plain log edited
one way each; ``with_kpass_metrics`` on the real ``inspect_evals`` gsm8k task with a local dataset.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from fractions import Fraction
from pathlib import Path

import pytest

from inspect_ai.log import read_eval_log, write_eval_log

import kpass
from kpass import DataError
from kpass.cli import main

FIXTURES = Path(__file__).resolve().parent / "inspect_fixtures"
sys.path.insert(0, str(FIXTURES))
import kpass_truncation_task as fx

BIN = Path(sys.executable).parent


def _texts(notes):
    """Notes (``kpass.Note`` or their JSON records) as ``rows: text`` lines, to search in."""
    from kpass.notes import as_note

    return [str(as_note(note)) for note in notes]



def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INSPECT_", "KPASS_"))}
    env["COLUMNS"] = "1000"
    return env


def _expected_fraction(rule) -> float:
    """Mean over problems of the fraction of epochs for which ``rule(problem, epoch)`` holds."""
    per_problem = [Fraction(sum(rule(p, e) for e in range(1, fx.EPOCHS + 1)), fx.EPOCHS)
                   for p in range(fx.N_PROBLEMS)]
    return float(sum(per_problem) / len(per_problem))


FIN = _expected_fraction(fx.finished)        # 65/80: 16 cut at the limit, one of them correct
PASS = _expected_fraction(fx.correct)


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict:
    log_dir = tmp_path_factory.mktemp("inspect_truncation_logs")
    tasks = [f"kpass_truncation_task.py@{name}" for name in ("trunc_kpass", "trunc_plain", "trunc_k_too_large")]
    completed = subprocess.run([str(BIN / "inspect"), "eval", *tasks, "--log-dir", str(log_dir),
                                "--display", "plain", "--max-tasks", "3"],
                               cwd=FIXTURES, env=_env(), capture_output=True, text=True, timeout=600)
    found = {}
    for path in sorted(log_dir.glob("*.eval")):
        found[read_eval_log(str(path), header_only=True).eval.task] = path
    assert set(found) == {"trunc_kpass", "trunc_plain", "trunc_k_too_large"}, completed.stdout[-4000:]
    return {**found, "output": completed.stdout + completed.stderr}


def _metrics(path: Path) -> dict[str, float]:
    header = read_eval_log(str(path), header_only=True)
    return {name: metric.value for score in header.results.scores for name, metric in score.metrics.items()}


def _report(capsys, *argv: str) -> dict[str, float]:
    code = main(["report", *argv, "--format", "json", "--n-resamples", "200", "--no-progress"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return {row["metric"]: row["estimate"] for row in json.loads(captured.out)["rows"]}


def test_script_has_truncations_and_one_correct_cut(logs):
    cut = sum(fx.truncated(p, e) for p in range(fx.N_PROBLEMS) for e in range(1, fx.EPOCHS + 1))
    assert cut == 16 and FIN == pytest.approx(65 / 80)
    header = read_eval_log(str(logs["trunc_kpass"]))
    stops = [s.output.stop_reason for s in header.samples]
    assert stops.count("max_tokens") == 16 and header.status == "success"


# ---------------------------------------------------------------------- 1. fin@1 on every path


def test_fin_at_1_is_the_finished_fraction_in_inspect_results_report_and_budget(logs, capsys):
    results = _metrics(logs["trunc_kpass"])
    assert results["fin@1"] == pytest.approx(FIN, abs=1e-12)
    assert results["pass@1"] == pytest.approx(PASS, abs=1e-12)
    for log in (logs["trunc_kpass"], logs["trunc_plain"]):
        assert _report(capsys, str(log), "-m", "fin@1", "pass@1") == pytest.approx({"fin@1": FIN, "pass@1": PASS})
        code = main(["budget", str(log), "--format", "json", "--n-resamples", "100"])
        captured = capsys.readouterr()
        assert code == 0, captured.err
        (row,) = json.loads(captured.out)["rows"]
        assert row["fin"] == pytest.approx(FIN, abs=1e-12) and row["pass"] == pytest.approx(PASS, abs=1e-12)


def test_inspect_score_gives_fin_at_1_on_a_plain_log_through_kpass_scorer(logs, tmp_path):
    plain = tmp_path / "plain.eval"
    shutil.copy(logs["trunc_plain"], plain)
    # the metric alone cannot see stop reasons: one clear message saying what to run
    failed = subprocess.run([str(BIN / "inspect"), "score", str(plain), "--metric", "kpass/fin_at_k",
                             "--action", "append", "--overwrite"], cwd=tmp_path, env=_env(),
                            capture_output=True, text=True, timeout=300)
    said = " ".join((failed.stdout + failed.stderr).split())
    assert "fin@1 needs each epoch's stop reason" in said and "--scorer kpass/kpass_scorer" in said
    completed = subprocess.run([str(BIN / "inspect"), "score", str(plain), "--scorer", "kpass/kpass_scorer",
                                "-S", "scorer=match", "-S", "scorer_args={numeric: true}",
                                "--metric", "kpass/fin_at_k", "--action", "append", "--overwrite"],
                               cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert _metrics(plain)["fin@1"] == pytest.approx(FIN, abs=1e-12)


# ---------------------------------------------------------------- 2. re-scoring a kpass log


def test_inspect_score_re_scores_a_kpass_log_without_the_task_file(logs, tmp_path):
    log = tmp_path / "kpass.eval"
    shutil.copy(logs["trunc_kpass"], log)
    before = _metrics(log)
    completed = subprocess.run([str(BIN / "inspect"), "score", str(log), "--action", "overwrite", "--overwrite"],
                               cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    header = read_eval_log(str(log), header_only=True)
    assert {score.name for score in header.results.scores} == {"kpass_scorer"}
    assert _metrics(log) == pytest.approx(before)
    sample = read_eval_log(str(log)).samples[0]
    assert sample.scores["kpass_scorer"].metadata["kpass"]["stop_reason"] in ("stop", "max_tokens")


# ------------------------------------------------------------- 3./4. metric names and metadata


def test_metric_keys_never_collide_and_say_what_the_interval_rests_on(logs):
    header = read_eval_log(str(logs["trunc_kpass"]), header_only=True)
    keys = set(_metrics(logs["trunc_kpass"]))
    assert {"pass@1", "flat/pass@1", "kpass_metrics/pass@1", "fin@1", "flat/fin@1"} <= keys
    assert not [key for key in keys if re.fullmatch(r"(pass|fin)@1\d+(_.*)?", key)]  # Inspect's pass@12
    clustered = header.results.scores[0].metrics["pass@1"].params["kpass"]
    assert clustered["cluster"] == "subject"
    assert clustered["intervals"]["pass@1"]["n_clusters"] == len(fx.SUBJECTS)
    assert clustered["intervals"]["pass@1"]["n_problems"] == fx.N_PROBLEMS
    assert clustered["intervals"]["pass@1"]["method"]
    assert any("clusters" in note for note in _texts(clustered["notes"]))  # 5 clusters: the interval is rough
    flat = header.results.scores[0].metrics["flat/pass@1"].params["kpass"]
    assert flat["cluster"] is None and flat["intervals"]["flat/pass@1"]["n_clusters"] is None


def test_prefix_is_checked_when_the_metric_is_made():
    from kpass.adapters.inspect_metrics import kpass_metrics

    with pytest.raises(ValueError, match="`prefix` must be a non-empty string without '/'"):
        kpass_metrics("pass@1", prefix="a/b")


# ------------------------------------------------------------------------ 10. k > epochs


def test_k_above_epochs_is_refused_before_any_model_call_without_noise(logs):
    header = read_eval_log(str(logs["trunc_k_too_large"]))
    assert header.status == "error" and "needs more samples per problem than this eval runs epochs (4)" in \
        header.error.message
    assert header.samples in (None, [])
    output = " ".join(logs["output"].split())
    assert "Exception calling hook" not in output and "eval-retry" not in output


# ------------------------------------------------------------------ 6. the reader's rules


def _as_json(logs, tmp_path) -> tuple[Path, dict]:
    path = tmp_path / "plain.json"
    write_eval_log(read_eval_log(str(logs["trunc_plain"])), str(path))
    return path, json.loads(path.read_text())


def _write(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_reader_duplicate_sample_and_epoch_is_an_error_naming_both(logs, tmp_path):
    path, data = _as_json(logs, tmp_path)
    data["samples"].append(data["samples"][3])
    last = len(data["samples"]) - 1
    with pytest.raises(DataError, match=rf"sample id 'p\d\d' epoch \d appears twice: in samples\[3\] and in samples\[{last}\]"):
        kpass.read_samples([_write(path, data)])


def test_reader_int_and_str_ids_that_print_alike_are_an_error(logs, tmp_path):
    path, data = _as_json(logs, tmp_path)
    for sample in data["samples"]:
        if sample["id"] == "p00":
            sample["id"] = 1
        elif sample["id"] == "p01":
            sample["id"] = "1"
    with pytest.raises(DataError, match=r"sample ids 1 \(int, samples\[\d+\]\) and '1' \(str, samples\[\d+\]\)"):
        kpass.read_samples([_write(path, data)])


def test_reader_names_the_members_missing_against_the_header(logs, tmp_path):
    source = logs["trunc_plain"]
    edited = tmp_path / "missing.eval"
    with zipfile.ZipFile(source) as archive, zipfile.ZipFile(edited, "w") as out:
        for info in archive.infolist():
            if info.filename != "samples/p07_epoch_3.json":
                out.writestr(info, _raw(archive, info))
    with pytest.warns(UserWarning, match="missing"):
        table = kpass.read_samples([edited])
    assert len(table) == 79
    (note,) = [note for note in table.notes if "missing" in note]
    assert "80 sample(s) (20 x 4 epochs) and the log holds 79; missing: id 'p07' epoch 3" in note


def _raw(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    import zipfile_zstd  # noqa: F401  (Inspect's zstd members; what the reader uses too)

    return archive.read(info)


def test_reader_fractional_score_is_an_error_unless_binarised(logs, tmp_path, monkeypatch):
    path, data = _as_json(logs, tmp_path)
    target = data["samples"][5]
    target["scores"]["match"]["value"] = 0.65
    _write(path, data)
    with pytest.raises(DataError, match=rf"sample '{target['id']}', epoch {target['epoch']}.*score value 0.65 is "
                                        "between incorrect and correct"):
        kpass.read_samples([path])
    monkeypatch.setenv("KPASS_INSPECT_SCORE_THRESHOLD", "0.5")
    with pytest.warns(UserWarning, match="binarised"):
        table = kpass.read_samples([path])
    assert any("1 fractional score(s) binarised at the threshold 0.5" in note for note in table.notes)
    rows = [r for r in table.to_records() if r["problem_id"] == target["id"] and r["metadata"]["epoch"] == target["epoch"]]
    assert rows[0]["correct"] is True
    monkeypatch.setenv("KPASS_INSPECT_SCORE_THRESHOLD", "0.7")
    assert kpass.read_samples([path]).to_records() != table.to_records()  # 0.65 < 0.7: incorrect


def test_fast_reader_equals_inspects_own_reading_of_a_zstd_log(logs):
    from inspect_ai.scorer import value_to_float

    path = logs["trunc_kpass"]
    with zipfile.ZipFile(path) as archive:
        assert {info.compress_type for info in archive.infolist()} == {93}  # Inspect 0.3.285 writes zstd
    table = kpass.read_samples([path])
    by_key = {(r["problem_id"], r["metadata"]["epoch"]): r for r in table.to_records()}
    log = read_eval_log(str(path))
    assert len(by_key) == len(log.samples) == 80
    for sample in log.samples:
        record = by_key[(sample.id, sample.epoch)]
        score = sample.scores["kpass_scorer"]
        assert record["correct"] == (value_to_float()(score.value) >= 1.0)
        assert record["finished"] == fx.finished(int(sample.id[1:]), sample.epoch)
        assert record["output_tokens"] == sample.output.usage.output_tokens
        assert record["metadata"]["output"] == sample.output.completion
        assert record["cluster"] == sample.metadata["subject"]


# --------------------------------------------------------- 8. kpass on an inspect_evals task


GSM8K_RECORDS = [{"question": f"Tom has {i} apples and buys {i} more. How many apples?",
                  "answer": f"{i} + {i} = {2 * i}.\n#### {2 * i}"} for i in range(1, 7)]


def test_with_kpass_metrics_on_the_real_inspect_evals_gsm8k_task(monkeypatch, tmp_path):
    from inspect_ai import eval as inspect_eval
    from inspect_ai import task_with
    from inspect_ai.dataset import MemoryDataset
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from kpass.adapters.inspect_metrics import kpass_metrics
    from kpass.adapters.inspect_tasks import with_kpass_metrics

    gsm8k_module = importlib.import_module("inspect_evals.gsm8k.gsm8k")

    def local_dataset(path, split, sample_fields, **kwargs):  # in place of the hub download
        return MemoryDataset([sample_fields(record) for record in GSM8K_RECORDS], name=path)

    monkeypatch.setattr(gsm8k_module, "hf_dataset", local_dataset)
    calls: dict[str, int] = {}

    def outputs(input, tools, tool_choice, config):
        question = input[-1].text
        i = int(re.search(r"Tom has (\d+)", question).group(1))
        epoch = calls[question] = calls.get(question, 0) + 1
        cut = (i + epoch) % 3 == 0
        text = "Tom had some, 3 + 4 = 7 and" if cut else f"{i} + {i}\nANSWER: {2 * i + (epoch == 2)}"
        output = ModelOutput.from_content(model="m", content=text, stop_reason="max_tokens" if cut else "stop")
        output.usage = ModelUsage(input_tokens=20, output_tokens=16, total_tokens=36)
        return output

    # the natural way does not show kpass metrics (Inspect keeps the scorer's own)
    plain = task_with(gsm8k_module.gsm8k(fewshot=0), metrics=[kpass_metrics("pass@1")])
    task = with_kpass_metrics(gsm8k_module.gsm8k(fewshot=0), "pass@1,2", "fin@1")
    model = get_model("mockllm/model", custom_outputs=outputs, memoize=False)
    log = inspect_eval(task, model=model, epochs=2, display="none", log_dir=str(tmp_path))[0]
    assert log.status == "success", log.error
    metrics = {name: m.value for score in log.results.scores for name, m in score.metrics.items()}
    cut = [(i + e) % 3 == 0 for i in range(1, 7) for e in (1, 2)]
    right = [not c and e == 1 for c, (i, e) in zip(cut, [(i, e) for i in range(1, 7) for e in (1, 2)])]
    assert metrics["accuracy"] == pytest.approx(sum(right) / 12)        # gsm8k's own metric kept
    assert metrics["pass@1"] == pytest.approx(sum(right) / 12)
    assert metrics["fin@1"] == pytest.approx(1 - sum(cut) / 12)        # 4 of 12 cut at the limit
    assert {score.name for score in log.results.scores} == {"kpass_scorer"}
    calls.clear()
    plain_log = inspect_eval(plain, model=model, epochs=2, display="none", log_dir=str(tmp_path))[0]
    assert "pass@1" not in {name for score in plain_log.results.scores for name in score.metrics}


# ------------------------------------------------- 5. the cluster the log recorded; 7. runs


def test_report_uses_the_cluster_the_log_recorded_and_says_so(logs, capsys):
    log = str(logs["trunc_kpass"])
    code = main(["report", log, "-m", "pass@1", "--format", "json", "--no-progress"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    (row,) = out["rows"]
    assert row["n_clusters"] == len(fx.SUBJECTS)
    assert any("clustered by 'subject', the cluster the log's kpass metrics recorded" in n for n in _texts(out["notes"]))
    # the same interval as the log's own clustered kpass metric (same method, seed and resamples)
    logged = _metrics(logs["trunc_kpass"])
    assert (row["low"], row["high"]) == pytest.approx((logged["pass@1_lower"], logged["pass@1_upper"]), abs=1e-12)
    # --cluster-by overrides it
    code = main(["report", log, "-m", "pass@1", "--format", "json", "--no-progress", "--cluster-by", "problem_id"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["rows"][0]["n_clusters"] == fx.N_PROBLEMS
    assert not any("the log's kpass metrics recorded" in n for n in _texts(out["notes"]))
    # a plain log recorded no cluster
    assert kpass.read_samples([logs["trunc_plain"]]).recorded_cluster_by is None


def _rerun(logs, tmp_path) -> Path:
    """A second run of trunc_plain (another eval id), in which the first 30 samples are correct."""
    log = read_eval_log(str(logs["trunc_plain"]))
    log.eval.eval_id = "rerunAAAAAAAAAAAAAAAAA"
    for sample in log.samples[:30]:
        sample.scores["match"].value = "C"
    path = tmp_path / "rerun.eval"
    write_eval_log(log, str(path))
    return path


def test_two_runs_of_one_model_and_task_are_reported_side_by_side_and_compared(logs, tmp_path, capsys):
    first, rerun = logs["trunc_plain"], _rerun(logs, tmp_path)
    table = kpass.read_samples([first, rerun])
    labels = [f"mockllm/model [{first.name}]", "mockllm/model [rerun.eval]"]
    assert table.categories("model") == labels
    assert set(table.column("run")) == {first.name, "rerun.eval"}
    assert any("2 runs of model 'mockllm/model' on task 'trunc_plain'" in note for note in table.notes)
    report = kpass.compute_report(table, "pass@1", rng=0)
    assert report.row("pass@1", model=labels[0], task="trunc_plain").estimate == pytest.approx(PASS)
    # the two files, no --baseline: the first run is the baseline, paired on the shared problems
    code = main(["compare", str(first), str(rerun), "-m", "pass@1", "--format", "json", "--no-progress",
                 "--n-resamples", "200"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    (row,) = out["rows"]
    assert row["baseline"] == labels[0] and row["model"] == labels[1] and row["n_problems"] == fx.N_PROBLEMS
    assert row["estimate"] > 0


def test_labels_name_inspect_runs(logs, tmp_path, capsys):
    """--label NAME=PATH on Inspect logs (#33 point 4): the names replace the file names, paired as before."""
    first, rerun = logs["trunc_plain"], _rerun(logs, tmp_path)
    code = main(["compare", str(first), str(rerun), "-m", "pass@1", "--format", "json", "--no-progress",
                 "--n-resamples", "200", "--label", f"before={first}", "--label", f"after={rerun}"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    (row,) = out["rows"]
    assert (row["baseline"], row["model"], row["n_problems"]) == (
        "mockllm/model [before]", "mockllm/model [after]", fx.N_PROBLEMS)
    assert row["estimate"] > 0
    code = main(["report", str(first), str(rerun), "-m", "pass@1", "--format", "json", "--no-progress",
                 "--label", f"after={rerun}", "--by", "model,task,run"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and {(r["model"], r["run"]) for r in out["rows"]} == {
        ("mockllm/model", first.name), ("mockllm/model [after]", "after")}
    assert not any(note["kind"] == "extra-columns" and "run" in note["rows"] for note in out["notes"])


def test_the_same_run_twice_is_an_error_before_any_sample_is_read(logs, tmp_path, monkeypatch):
    from kpass.adapters import inspect_reader

    copy = tmp_path / "copy.eval"
    shutil.copy(logs["trunc_plain"], copy)

    def never(*args, **kwargs):
        raise AssertionError("samples were read")

    monkeypatch.setattr(inspect_reader, "records_from_log", never)
    with pytest.raises(DataError, match=rf"copy.eval: is the same run \(eval id \w+\) as .*{logs['trunc_plain'].name}"):
        kpass.read_samples([logs["trunc_plain"], copy])
