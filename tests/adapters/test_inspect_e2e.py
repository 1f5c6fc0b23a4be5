"""End-to-end tests of the Inspect adapter with the real ``inspect eval`` and ``inspect score`` CLIs.

One ``inspect eval`` run (module fixture) executes every task of
``inspect_fixtures/kpass_fixture_task.py`` with ``mockllm`` models whose outputs are scripted per
problem (see that file), 4 epochs, and the epoch reducers ``pass_at_2,kpass/pass_at_2,pass_k_2,
kpass/pass_hat_2,kpass/cons_at_2`` given on the command line (``fixture_plain`` runs alone, without kpass). The tests then check the logs against the metric
core on the counts of the script, against Inspect's own reducers and clustered stderr on the same
log, and read the logs with kpass's reader and command.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from inspect_ai.log import read_eval_log, write_eval_log

import kpass
from kpass import metrics as core

FIXTURES = Path(__file__).resolve().parent / "inspect_fixtures"
sys.path.insert(0, str(FIXTURES))
import kpass_fixture_task as fx

pytestmark = pytest.mark.slow  # real framework runs: make test runs them, make check skips them

BIN = Path(sys.executable).parent
REDUCERS = "pass_at_2,kpass/pass_at_2,pass_k_2,kpass/pass_hat_2,kpass/cons_at_2"
CORRECT = {"C", "F", "M", "A"}
VERDICTS = {"C": [True] * 3, "A": [True] * 3, "F": [True, False, False], "M": [True, True, None]}


def _texts(notes):
    """Notes (``kpass.Note`` or their JSON records) as ``rows: text`` lines, to search in."""
    from kpass.notes import as_note

    return [str(as_note(note)) for note in notes]



def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INSPECT_")}
    env.pop("KPASS_LOAD_PLUGINS", None)
    env["COLUMNS"] = "1000"  # one console line per log record, so messages can be matched whole
    return env


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Run the fixture tasks once; return the logs by task name and model, and the CLI output.

    Two ``inspect eval`` processes run side by side: ``fixture_plain`` alone, with nothing of
    kpass (a log "made without kpass"), and every other task with kpass's reducers next to
    Inspect's on the command line.
    """
    log_dir = tmp_path_factory.mktemp("inspect_logs")
    common = ["--log-dir", str(log_dir), "--epochs", str(fx.EPOCHS), "--display", "plain"]
    plain = [str(BIN / "inspect"), "eval", "kpass_fixture_task.py@fixture_plain", *common]
    tasks = [f"kpass_fixture_task.py@{name}" for name in
             ("fixture_full", "fixture_full_b", "fixture_k_too_large", "fixture_k_too_large_preflight")]
    rest = [str(BIN / "inspect"), "eval", *tasks, *common, "--epochs-reducer", REDUCERS, "--max-tasks", "2"]
    processes = [subprocess.Popen(command, cwd=FIXTURES, env=_env(), stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True) for command in (plain, rest)]
    output = "".join(process.communicate(timeout=600)[0] for process in processes)
    logs = {}
    for path in sorted(log_dir.glob("*.eval")):
        header = read_eval_log(str(path), header_only=True)
        logs[(header.eval.task, header.eval.model)] = (path, header)
    assert len(logs) == 5, (output[-5000:], sorted(logs))
    return {"logs": logs, "output": output, "dir": log_dir}


def _log(run, task, model="mockllm/model"):
    return run["logs"][(task, model)]


def _scores(header, reducer=None):
    """Inspect's results of the log: ``{metric: value}`` of the EvalScore with this reducer."""
    out = {}
    for score in header.results.scores:
        if score.reducer == reducer:
            out.update({name: metric.value for name, metric in score.metrics.items()})
    return out


def _expected(draws: dict[str, list[str]]):
    """Per-problem counts, answer classes, finishing and CoT counts from the fixture's script."""
    ids = list(fx.PROBLEMS)
    n = np.array([len(draws[p]) for p in ids])
    c = np.array([sum(code in CORRECT for code in draws[p]) for p in ids])
    finished = np.array([sum(code != "T" for code in draws[p]) for p in ids])
    classes, invalid = [], []
    for p in ids:
        wrong = {}
        for code in draws[p]:
            if code.startswith("W"):
                wrong[code] = wrong.get(code, 0) + 1
        classes.append([int(sum(code in CORRECT for code in draws[p])), *sorted(wrong.values(), reverse=True)])
        invalid.append(sum(code in ("T", "X") for code in draws[p]))
    width = max(len(row) for row in classes)
    class_counts = np.array([row + [0] * (width - len(row)) for row in classes])
    rules = {}
    for rule in ("any", "majority", "all"):
        correct = np.array([[code in CORRECT for code in draws[p]] for p in ids])
        verdicts = np.array([[[np.nan if v is None else float(v) for v in VERDICTS.get(code, [np.nan] * 3)]
                              for code in draws[p]] for p in ids])
        rules[rule] = core.count_cot_correct(correct, verdicts, rule=rule)
    clusters = np.array([fx.PROBLEMS[p][0] for p in ids])
    return {"n": n, "c": c, "finished": finished, "classes": class_counts, "invalid": np.array(invalid),
            "cot": rules, "clusters": clusters}


# ------------------------------------------------------------------------------------------- runs


def test_runs_succeed_and_k_larger_than_epochs_fails_naming_metric_and_epochs(run):
    for task, model in [("fixture_plain", "mockllm/model"), ("fixture_full", "mockllm/model"),
                        ("fixture_full", "mockllm/model-b")]:
        assert _log(run, task, model)[1].status == "success"
    message = "kpass metric 'pass@8' (needs 8) needs more samples per problem than this eval runs epochs (4)"
    # with kpass_preflight(): stopped when the task starts, before any model call
    path, header = _log(run, "fixture_k_too_large_preflight")
    assert header.status == "error" and message in header.error.message
    assert read_eval_log(str(path)).samples in (None, [])
    assert header.stats.model_usage == {} or all(u.output_tokens == 0 for u in header.stats.model_usage.values())
    # without it: kpass's task-start hook refuses the task too, before any model call (it raises
    # the one exception Inspect lets through hooks), with no hook warning and no eval-retry advice
    path, header = _log(run, "fixture_k_too_large")
    assert header.status == "error" and message in header.error.message
    assert read_eval_log(str(path)).samples in (None, [])
    output = " ".join(run["output"].split())
    assert "Exception calling hook" not in output and "eval-retry" not in output


# ------------------------------------------------------------------------------------------- metrics


@pytest.mark.parametrize("model, draws", [("mockllm/model", fx.DRAWS_A), ("mockllm/model-b", fx.DRAWS_B)])
def test_kpass_metrics_in_the_log_equal_the_core_on_the_same_counts(run, model, draws):
    e = _expected(draws)
    n, c = e["n"], e["c"]
    kp = _scores(_log(run, "fixture_full", model)[1])
    per_problem = {
        "pass@1": core.pass_at_k(n, c, 1), "pass@2": core.pass_at_k(n, c, 2), "pass@4": core.pass_at_k(n, c, 4),
        "pass^2": core.pass_hat_k(n, c, 2), "G-Pass@4_0.5": core.g_pass_at_k(n, c, 4, tau=0.5),
        "mG-Pass@4": core.mg_pass_at_k(n, c, 4),
        "cons@1": core.cons_at_k(e["classes"], 1, n_invalid=e["invalid"]),
        "cons@2": core.cons_at_k(e["classes"], 2, n_invalid=e["invalid"]),
        "cons@4": core.cons_at_k(e["classes"], 4, n_invalid=e["invalid"]),
        "fin@1": core.fin_at_k(n, e["finished"], 1),
        "CoT-Pass@2": core.cot_pass_at_k(n, e["cot"]["any"], 2),
        "CoT-Pass@2[rule=majority]": core.cot_pass_at_k(n, e["cot"]["majority"], 2),
        "CoT-Pass@2[rule=all]": core.cot_pass_at_k(n, e["cot"]["all"], 2),
    }
    for name, values in per_problem.items():
        assert kp[name] == pytest.approx(float(values.mean()), abs=1e-12), name
        if np.ptp(values) > 0:
            interval = core.mean_ci(values, clusters=e["clusters"], method="clustered-t")
            assert kp[f"{name}_stderr"] == pytest.approx(interval.standard_error, abs=1e-12), name
            assert kp[f"{name}_lower"] == pytest.approx(interval.low, abs=1e-12), name
            assert kp[f"{name}_upper"] == pytest.approx(interval.high, abs=1e-12), name
    assert not any(key.endswith("_excluded") for key in kp)


def test_pass_at_k_and_clustered_se_equal_inspect_reducers_on_the_same_log(run):
    header = _log(run, "fixture_full")[1]
    kp = _scores(header)
    for inspect_reducer, kpass_reducer, name in [("pass_at_2", "kpass/pass_at_2", "pass@2"),
                                                 ("pass_k_2", "kpass/pass_hat_2", "pass^2")]:
        inspect_view = _scores(header, inspect_reducer)
        # Inspect: reducer per sample, then mean() and stderr(cluster="subject") over samples
        assert kp[name] == pytest.approx(inspect_view["mean"], abs=1e-12)
        assert kp[f"{name}_stderr"] == pytest.approx(inspect_view["stderr"], abs=1e-12)
        assert inspect_view["stderr"] > 0.001  # unbalanced clusters: not a degenerate 0 == 0
        # kpass's reducer (--epochs-reducer kpass/...) equals Inspect's
        kpass_view = _scores(header, kpass_reducer)
        assert kpass_view == pytest.approx(inspect_view, abs=1e-12)


def test_cons_at_reducer_equals_the_kpass_metric_and_the_report_on_the_same_log(run):
    # --epochs-reducer kpass/cons_at_2 (per sample, then Inspect's mean), kpass_metrics("cons@2")
    # and `kpass report` on the log: one class counting (kpass.metrics.class_counts_from_codes)
    path, header = _log(run, "fixture_full")
    kp = _scores(header)
    reducer_mean = _scores(header, "kpass/cons_at_2")["mean"]
    assert reducer_mean == pytest.approx(kp["cons@2"], abs=1e-12)
    report = kpass.compute_report(kpass.read_samples([path]), "cons@2", rng=0)
    assert report.row("cons@2").estimate == pytest.approx(kp["cons@2"], abs=1e-12)


def test_cons_uses_extracted_answers_fin_uses_stop_reasons_cot_rules_differ(run):
    kp = _scores(_log(run, "fixture_full")[1])
    e = _expected(fx.DRAWS_A)
    # cons@k: the wrong answers' classes matter; pooling every wrong answer into one class
    # (what binary data would force) gives a different value
    pooled = np.stack([e["classes"][:, 0], e["classes"][:, 1:].sum(axis=1)], axis=1)
    assert kp["cons@4"] != pytest.approx(float(core.cons_at_k(pooled, 4, n_invalid=e["invalid"]).mean()), abs=1e-6)
    # fin@1: only the draws cut off by max_tokens before an answer are unfinished; the draw cut
    # off after its answer ("A") and the draw that stopped without one ("X") are finished
    assert kp["fin@1"] == pytest.approx(1 - 7 / 48, abs=1e-12)
    # CoT-Pass@2 under the three rules, as docs/spec.md section 5 specifies: any > majority > all
    assert kp["CoT-Pass@2"] > kp["CoT-Pass@2[rule=majority]"] > kp["CoT-Pass@2[rule=all]"]
    assert kp["CoT-Pass@2"] == pytest.approx(kp["pass@2"], abs=1e-12)   # every correct draw has one yes


def test_inspect_score_with_kpass_metrics_on_a_log_made_without_kpass(run, tmp_path):
    path, header = _log(run, "fixture_plain")
    # made without kpass: Inspect's scorer, metrics and reducers only, no kpass data in the scores
    assert header.eval.config.epochs_reducer == ["pass_at_2"]
    assert [s.name for s in header.eval.scorers] == ["pattern"]
    assert not any("kpass" in json.dumps(s.metadata or {}) for s in read_eval_log(str(path)).samples[0].scores.values())
    scored = tmp_path / "scored.eval"
    result = subprocess.run(
        [str(BIN / "inspect"), "score", str(path), "--metric", "kpass/pass_at_k", "--metric", "kpass/cons_at_k",
         "--action", "overwrite", "--output-file", str(scored), "--display", "none"],
        env=_env(), capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    new = read_eval_log(str(scored), header_only=True)
    assert new.status == "success"
    values = _scores(new)
    e = _expected(fx.DRAWS_A)
    for k in (1, 2, 4):
        assert values[f"pass@{k}"] == pytest.approx(float(core.pass_at_k(e["n"], e["c"], k).mean()), abs=1e-12)
        cons = core.cons_at_k(e["classes"], k, n_invalid=e["invalid"])
        assert values[f"cons@{k}"] == pytest.approx(float(cons.mean()), abs=1e-12)
    assert values["pass@2"] == pytest.approx(_scores(header, "pass_at_2")["mean"], abs=1e-12)


# ------------------------------------------------------------------------------------------- reader


def test_reader_and_report_on_logs_of_several_models_and_tasks(run, tmp_path):
    full_a, full_b, plain = (_log(run, "fixture_full")[0], _log(run, "fixture_full", "mockllm/model-b")[0],
                             _log(run, "fixture_plain")[0])
    # a .json copy of the plain log reads the same as the .eval
    as_json = tmp_path / "plain.json"
    write_eval_log(read_eval_log(str(plain)), str(as_json))
    table = kpass.read_samples([full_a, full_b, plain])
    assert table.categories("model") == ["mockllm/model", "mockllm/model-b"]
    assert sorted(table.categories("task")) == ["fixture_full", "fixture_plain"]
    assert len(table) == 3 * 12 * 4
    report = kpass.compute_report(table, "pass@1,2 cons@2", rng=0)
    e_a, e_b = _expected(fx.DRAWS_A), _expected(fx.DRAWS_B)
    for model, task, e in [("mockllm/model", "fixture_full", e_a), ("mockllm/model-b", "fixture_full", e_b),
                           ("mockllm/model", "fixture_plain", e_a)]:
        row = report.row("pass@2", model=model, task=task)
        assert row.estimate == pytest.approx(float(core.pass_at_k(e["n"], e["c"], 2).mean()), abs=1e-12)
        cons = core.cons_at_k(e["classes"], 2, n_invalid=e["invalid"])
        assert report.row("cons@2", model=model, task=task).estimate == pytest.approx(float(cons.mean()), abs=1e-12)
    json_table = kpass.read_samples([as_json])

    def without_run(records):  # `run` is the log's file name
        return [{key: value for key, value in record.items() if key != "run"} for record in records]

    assert without_run(json_table.to_records()) == without_run(kpass.read_samples([plain]).to_records())
    assert set(json_table.column("run")) == {"plain.json"}
    # kpass logs carry finished / output tokens / verdicts and the metric's cluster; plain ones carry
    # output tokens and finished from the stop reasons (test_inspect_budget.py checks the values)
    full = kpass.read_samples([full_a])
    assert full.has_column("finished") and full.has_column("cot_verdicts") and full.has_column("cluster")
    fin = kpass.compute_report(full, "fin@1 cot-pass@2[rule=all]", cluster_by="cluster", method="clustered-t", rng=0)
    assert fin.row("fin@1").estimate == pytest.approx(1 - 7 / 48, abs=1e-12)
    plain_table = kpass.read_samples([plain])
    assert not plain_table.has_column("cot_verdicts") and plain_table.has_column("subject")
    assert plain_table.has_column("output_tokens")
    # stop reasons: T (cut off, wrong) unfinished; A (cut off, correct) and X (stopped) finished
    plain_fin = kpass.compute_report(plain_table, "fin@1", rng=0).row("fin@1").estimate
    assert plain_fin == pytest.approx(1 - 7 / 48, abs=1e-12)


def test_reader_notes_what_it_leaves_out(run, tmp_path):
    # an unscored epoch (NaN) is left out: the table says so in its notes, and so does the report
    log = read_eval_log(str(_log(run, "fixture_plain")[0]))
    first = log.samples[0]
    (name,) = first.scores
    first.scores[name] = first.scores[name].model_copy(update={"value": float("nan")})
    edited = tmp_path / "unscored.json"
    write_eval_log(log, str(edited))
    with pytest.warns(UserWarning, match="left out 1 unscored epoch"):
        table = kpass.read_samples([edited])
    (note,) = [note for note in table.notes if "unscored" in note]
    assert note.startswith(str(edited)) and "left out 1 unscored epoch(s)" in note
    with pytest.warns(UserWarning):
        report = kpass.compute_report(kpass.read_samples([edited]), "pass@1", rng=0)
    assert note in _texts(report.notes)
    assert note in _texts(report.as_dict()["notes"])


def test_kpass_report_and_compare_commands_on_inspect_logs(run, tmp_path, capsys):
    from kpass.cli import main

    full_a, full_b = _log(run, "fixture_full")[0], _log(run, "fixture_full", "mockllm/model-b")[0]
    plot = tmp_path / "compare.png"
    code = main(["compare", str(full_a), str(full_b), "--baseline", "mockllm/model", "--metrics", "pass@1",
                 "fin@1", "--format", "json", "--plot", str(plot), "--no-progress"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    rows = {row["metric"]: row for row in json.loads(captured.out)["rows"]}
    e_a, e_b = _expected(fx.DRAWS_A), _expected(fx.DRAWS_B)
    diff = core.pass_at_k(e_b["n"], e_b["c"], 1) - core.pass_at_k(e_a["n"], e_a["c"], 1)
    assert rows["pass@1"]["estimate"] == pytest.approx(float(diff.mean()), abs=1e-12)
    assert rows["fin@1"]["estimate"] == pytest.approx(7 / 48, abs=1e-12)   # B never runs out of tokens
    assert plot.stat().st_size > 0
    outputs = []
    for field in ("subject", "cluster"):  # the metric's cluster key, as itself and as `cluster`
        code = main(["report", str(full_a), "--metrics", "pass@1,4", "--cluster-by", field, "--method",
                     "clustered-t", "--format", "json", "--no-progress"])
        captured = capsys.readouterr()
        assert code == 0, captured.err
        outputs.append(json.loads(captured.out)["rows"])
    assert outputs[0] == outputs[1] and outputs[0][0]["n_clusters"] == 3


def test_truncated_log_is_a_data_error_naming_the_file(run, tmp_path):
    path = _log(run, "fixture_plain")[0]
    broken = tmp_path / "broken.eval"
    data = path.read_bytes()
    broken.write_bytes(data[: len(data) // 2])
    with pytest.raises(kpass.DataError, match=r"broken\.eval: cannot read this Inspect log"):
        kpass.read_samples([broken])
    shutil.rmtree(tmp_path, ignore_errors=True)
