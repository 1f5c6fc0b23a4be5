"""kpass's live metrics in lm-eval's own results: ``results[task]["pass@8,none"]``, read back with lm-eval's code.

Two runs side by side against one fake OpenAI-compatible server on 127.0.0.1 (tests/adapters/fake_openai_server.py),
on the same tasks: copies of lm-eval 0.4.13's own ``aime24`` and ``minerva_math_algebra`` YAMLs through a local
group (:mod:`lm_eval_shipped_tasks`), and the fixture ``arith_gen`` (gsm8k-style ``strict-match`` and
``flexible-extract`` pipelines), all with ``--gen_kwargs temperature=0.7`` (lm-eval's API models send it
although the YAMLs keep ``do_sample: false``: so kpass-lm-eval must not call them greedy):

* ``plain``: ``lm_eval``;
* ``kpass``: ``kpass-lm-eval --kpass "pass@1,8 cons@8" --kpass-samples 8``.

lm-eval's own numbers of the two runs are equal (repeat 0 keeps lm-eval's seed, lm-eval's pipelines see it
alone), so every key the kpass run has beyond the plain run's is kpass's, and must be exactly the keys kpass
lists. The table is read back with ``lm_eval.utils.make_table`` on the results file, as lm-eval prints it.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import kpass
from kpass.adapters.lm_eval_reader import read_lm_eval_output
from kpass.adapters.lm_eval_results import RESULTS_KEYS_FIELD, add_kpass_metrics, pipeline_of_rows

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the shared helpers of the end-to-end modules (tests/ is not a package)
    sys.path.insert(0, str(HERE))
import lm_eval_runs as runs_module  # noqa: E402
import lm_eval_shipped_tasks as shipped  # noqa: E402

fake_server = runs_module.load_fake_server()
SPECS = "pass@1,8 cons@8"
METRICS = ("pass@1", "pass@8", "cons@8")
K = 8
TASKS = f"{shipped.GROUP},arith_gen"
#: kpass row task -> (lm-eval task or group, filter), as the runs name them
WHERE = {"aime24": ("aime24", "none"), "minerva_math_algebra": ("minerva_math_algebra", "none"),
         "arith_gen/strict-match": ("arith_gen", "strict-match"),
         "arith_gen/flexible-extract": ("arith_gen", "flexible-extract"),
         shipped.GROUP: (shipped.GROUP, "none")}


def _texts(notes):
    """Notes (``kpass.Note`` or their JSON records) as ``rows: text`` lines, to search in."""
    from kpass.notes import as_note

    return [str(as_note(note)) for note in notes]



@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, runs_module.Run]:
    root = tmp_path_factory.mktemp("lm_eval_results_keys")
    tasks = shipped.write_shipped_tasks(root)
    shutil.copy(HERE / "lm_eval_fixtures" / "arith_gen.yaml", tasks / "arith_gen.yaml")
    shutil.copy(HERE / "lm_eval_fixtures" / "arith.jsonl", tasks / "arith.jsonl")
    env = {**os.environ, "HF_HOME": str(root / "hf"), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "LMEVAL_LOG_LEVEL": "WARNING"}
    with fake_server.running_server() as server:
        common = ["--model", "local-completions",
                  "--model_args", f"base_url={server.base_url}/completions,model=fake,tokenizer_backend=None",
                  "--include_path", ".", "--tasks", TASKS, "--gen_kwargs", "temperature=0.7", "--log_samples"]
        commands = {"plain": [runs_module.console_script("lm_eval"), *common, "--output_path", str(root / "plain")],
                    "kpass": [runs_module.console_script("kpass-lm-eval"), *common, "--output_path",
                              str(root / "kpass"), "--kpass", SPECS, "--kpass-samples", str(K)]}
        processes = {}
        for name, command in commands.items():  # output to files: a full pipe would stall the other run
            with open(root / f"{name}.out", "w") as stdout, open(root / f"{name}.err", "w") as stderr:
                processes[name] = subprocess.Popen(command, cwd=tasks, env=env, stdout=stdout, stderr=stderr)
        out = {}
        for name, process in processes.items():
            code = process.wait(timeout=900)
            out[name] = runs_module.Run(code, (root / f"{name}.out").read_text(), (root / f"{name}.err").read_text(),
                                        root / name)
            assert code == 0, out[name].stderr[-3000:]
    return out


def _rows(results: dict) -> dict[tuple[str, str], dict]:
    return {(row["task"], row["metric"]): row for row in results["kpass"]["report"]["rows"]}


def test_every_kpass_estimate_is_in_lm_eval_results_under_its_key_convention(runs):
    results = runs["kpass"].results()
    rows = _rows(results)
    assert {task for task, _ in rows} == set(WHERE)
    expected_added: dict[str, list[str]] = {}
    for (row_task, metric), row in rows.items():
        task, pipeline = WHERE[row_task]
        holders = [results["results"][task]] + ([results["groups"][task]] if task in results.get("groups", {}) else [])
        for holder in holders:
            assert holder[f"{metric},{pipeline}"] == row["estimate"]
            assert holder[f"{metric}_stderr,{pipeline}"] == row["standard_error"]
        assert results["higher_is_better"][task][metric] is True
        expected_added.setdefault(task, []).extend([f"{metric},{pipeline}", f"{metric}_stderr,{pipeline}"])
    assert shipped.GROUP in results["groups"]  # the group row is in lm-eval's group table too
    recorded = results["kpass"][RESULTS_KEYS_FIELD]
    assert recorded["skipped"] == {}
    assert {task: sorted(keys) for task, keys in recorded["added"].items()} == {
        task: sorted(keys) for task, keys in expected_added.items()}
    # the numbers are real estimates: pass@8 >= pass@1 everywhere, and not all equal
    assert all(rows[(t, "pass@8")]["estimate"] >= rows[(t, "pass@1")]["estimate"] for t in WHERE)
    assert any(rows[(t, "pass@8")]["estimate"] > rows[(t, "pass@1")]["estimate"] for t in WHERE)


def test_nothing_lm_eval_computes_is_changed(runs):
    plain, live = runs["plain"].results(), runs["kpass"].results()
    added = live["kpass"][RESULTS_KEYS_FIELD]["added"]
    for section in ("results", "groups"):
        assert set(live[section]) == set(plain[section])
        for task, values in plain[section].items():
            extra = set(live[section][task]) - set(values)
            assert extra == set(added.get(task, ())), (section, task)
            assert {key: live[section][task][key] for key in values} == values, (section, task)
    for task, directions in plain["higher_is_better"].items():
        assert {m: live["higher_is_better"][task][m] for m in directions} == directions
    assert plain["n-samples"] == live["n-samples"] and plain["versions"] == live["versions"]


def _table_rows(table: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in table.splitlines()
            if line.startswith("|") and not set(line) <= set("|-: ")]


def test_lm_eval_table_shows_them_read_back_with_lm_eval_code(runs):
    from lm_eval.utils import make_table

    results = runs["kpass"].results()
    rows = _rows(results)
    table = make_table(results)
    found = {}
    task = None
    for cells in _table_rows(table)[1:]:
        name, _version, pipeline, _shot, metric, arrow, value, plus_minus, stderr = cells
        task = re.sub(r"^- ", "", name) or task
        found[(task, pipeline, metric)] = (arrow, value, plus_minus, stderr)
    for (row_task, metric), row in rows.items():
        task, pipeline = WHERE[row_task]
        assert found[(task, pipeline, metric)] == ("↑", f"{row['estimate']:.4f}", "±", f"{row['standard_error']:.4f}")
    assert ("aime24", "none", "exact_match") in found  # lm-eval's own row is still there
    group_table = make_table(results, "groups")
    assert any(cells[4] == "pass@8" for cells in _table_rows(group_table)[1:])
    # lm-eval prints the same table at the end of the run
    printed = rf"\|\s*pass@8\s*\|\s*↑\s*\|\s*{rows[('aime24', 'pass@8')]['estimate']:.4f}\s*\|\s*±"
    assert re.search(printed, runs["kpass"].stdout), runs["kpass"].stdout[-3000:]


def test_post_hoc_reader_does_not_take_the_added_keys_for_lm_eval_metrics(runs):
    live = runs["kpass"].results()
    table = read_lm_eval_output(runs["kpass"].output)
    report = kpass.compute_report(table, SPECS, rng=0)
    for (row_task, metric), row in _rows(live).items():
        assert report.row(metric, task=row_task).estimate == pytest.approx(row["estimate"], abs=1e-12)
    assert not any("pass@8," in note for note in _texts(report.notes))


# ---------------------------------------------------------------------------------------- rules


class _Spec:
    def __init__(self, name: str) -> None:
        self.name, self.implementation = name, None


class _Row:
    def __init__(self, task: str, metric: str, estimate, stderr) -> None:
        self.task, self.metric, self.estimate, self.standard_error = task, metric, estimate, stderr


class _Report:
    def __init__(self, rows) -> None:
        self.rows, self.metrics = rows, [_Spec(name) for name in {row.metric for row in rows}]


def test_existing_keys_nan_estimates_and_mixed_group_pipelines():
    results = {"results": {"t": {"alias": "t", "pass@8,none": 0.125, "pass@8_stderr,none": "N/A"},
                           "u": {"alias": "u"}, "g": {"alias": "g"}},
               "groups": {"g": {"alias": "g"}}, "higher_is_better": {"t": {"pass@8": True}, "u": {}}}
    report = _Report([_Row("t", "pass@8", 0.5, 0.1), _Row("t", "pass@1", float("nan"), None),
                      _Row("u/strict", "pass@1", 0.25, None), _Row("g", "pass@1", 0.3, 0.05)])
    where = pipeline_of_rows({"t": ["none"], "u": ["strict", "loose"]}, {"g": ["t", "u"]})
    assert where == {"t": ("t", "none"), "u/strict": ("u", "strict"), "u/loose": ("u", "loose"), "g": None}
    outcome = add_kpass_metrics(results, report, where)
    assert results["results"]["t"] == {"alias": "t", "pass@8,none": 0.125, "pass@8_stderr,none": "N/A"}  # lm-eval's
    assert results["results"]["u"] == {"alias": "u", "pass@1,strict": 0.25, "pass@1_stderr,strict": "N/A"}
    assert results["groups"]["g"] == {"alias": "g"} and results["results"]["g"] == {"alias": "g"}
    assert results["higher_is_better"] == {"t": {"pass@8": True}, "u": {"pass@1": True}}
    assert outcome["added"] == {"u": ["pass@1,strict", "pass@1_stderr,strict"]}
    assert set(outcome["skipped"]) == {"t", "g"} and "lm-eval reports this key itself" in outcome["skipped"]["t"]["pass@8,none"]
    assert not any(isinstance(v, float) and math.isnan(v) for v in results["results"]["t"].values())
    # a group whose subtasks share their first pipeline goes under it; nested groups are followed
    assert pipeline_of_rows({"a": ["strict", "x"], "b": ["strict"]}, {"g": ["h"], "h": ["a", "b"]})["g"] == ("g", "strict")
    json.dumps(results)  # still plain JSON
