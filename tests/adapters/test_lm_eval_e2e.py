"""End-to-end: the real ``lm_eval`` CLI, plain and through ``kpass-lm-eval``, against a local server.

Two runs of the same three tasks share one fake OpenAI-compatible server on 127.0.0.1 (module
fixtures, so every test reads the same runs):

* ``plain``: ``lm_eval`` as users run it today;
* ``kpass``: ``kpass-lm-eval`` with ``--kpass "pass@1,8 cons@8 g-pass@8_0.5" --kpass-samples 8
  --kpass-cluster-by topic`` on the two generation tasks that know nothing of kpass.

Tasks (``tests/adapters/lm_eval_fixtures``, 16 arithmetic problems): ``arith_gen`` (sampled,
gsm8k-style ``strict-match``/``flexible-extract`` pipelines, ``exact_match``), ``arith_greedy`` (the
same at temperature 0) and ``arith_kpass_metrics`` (``repeats: 8`` and kpass metrics in its YAML).
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

import numpy as np
import pytest

import kpass
from kpass.adapters.lm_eval_reader import read_lm_eval_output
from kpass.data.reduction import Needs, ProblemStatistics
from kpass.host.lookups import load_samples

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "lm_eval_fixtures"
TASKS = "arith_gen,arith_greedy,arith_kpass_metrics"
SPECS = "pass@1,8 cons@8 g-pass@8_0.5"
K = 8
N_PROBLEMS = 16
LM_EVAL_SEED = 1234  # TemplateAPI's default request seed
ANSWER = re.compile(r"The answer is (\-?[0-9]+)")


if str(HERE) not in sys.path:  # the shared helpers of the end-to-end modules (tests/ is not a package)
    sys.path.insert(0, str(HERE))
import lm_eval_runs as runs_module  # noqa: E402

pytestmark = pytest.mark.slow  # real framework runs: make test runs them, make check skips them
fake_server = runs_module.load_fake_server()
Run = runs_module.Run
_console_script = runs_module.console_script


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lm_eval_e2e")
    shutil.copytree(FIXTURES, root / "tasks")
    return root


@pytest.fixture(scope="module")
def server():
    with fake_server.running_server() as running:
        yield running


def _run(command: list[str], workspace: Path, server, name: str, *extra: str) -> Run:
    output = workspace / name
    env = {**os.environ, "HF_HOME": str(workspace / "hf"), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "LMEVAL_LOG_LEVEL": "WARNING"}
    before = len(server.requests)
    completed = subprocess.run(
        [*command, "--model", "local-completions",
         "--model_args", f"base_url={server.base_url}/completions,model=fake,tokenizer_backend=None",
         "--include_path", ".", "--log_samples", "--output_path", str(output), *extra],
        cwd=workspace / "tasks", env=env, capture_output=True, text=True, timeout=600, check=False)
    return Run(completed.returncode, completed.stdout, completed.stderr, output, list(server.requests[before:]))


@pytest.fixture(scope="module")
def plain_run(workspace, server) -> Run:
    run = _run([_console_script("lm_eval")], workspace, server, "plain", "--tasks", TASKS)
    assert run.returncode == 0, run.stderr[-3000:]
    return run


@pytest.fixture(scope="module")
def kpass_run(workspace, server, plain_run) -> Run:
    run = _run([_console_script("kpass-lm-eval")], workspace, server, "kpass", "--tasks", TASKS,
               "--kpass", SPECS, "--kpass-samples", str(K), "--kpass-tasks", "arith_gen,arith_greedy",
               "--kpass-cluster-by", "topic", "--kpass-allow-greedy")  # arith_greedy: the warning after the run
    assert run.returncode == 0, run.stderr[-3000:]
    return run


def _prompt_seeds(run: Run, task_prompt_marker: str = "Question:") -> dict[str, set]:
    seeds: dict[str, set] = {}
    for request in run.requests:
        for prompt in request["prompts"]:
            if task_prompt_marker in prompt:
                seeds.setdefault(prompt, set()).add(request["seed"])
    return seeds


def _identical_share(samples: list[dict]) -> float:
    lines = [s for s in samples if s["filter"] == samples[0]["filter"]]
    return sum(len(set(s["resps"][0])) == 1 for s in lines) / len(lines)


# ----------------------------------------------------------------------------------------------


def test_k_samples_differ_because_the_seed_varies_per_repeat(plain_run, kpass_run):
    samples = kpass_run.samples("arith_gen")
    first_pipeline = [s for s in samples if s["filter"] == "strict-match"]
    assert len(first_pipeline) == N_PROBLEMS
    assert all(len(s["resps"][0]) == K for s in first_pipeline)
    assert _identical_share(samples) < 0.5
    # the server saw repeat r of every prompt with its own seed (repeat 0: lm-eval's), one seed in the plain run
    from kpass.adapters.lm_eval_cli import repeat_seed

    kpass_seeds = {frozenset(seeds) for seeds in _prompt_seeds(kpass_run).values()}
    tasks = ("arith_gen", "arith_greedy", "arith_kpass_metrics")  # the three tasks send the same prompts
    per_task = {task: frozenset(repeat_seed(LM_EVAL_SEED, task, r) for r in range(K)) for task in tasks}
    assert all(len(seeds) == K for seeds in per_task.values())
    assert per_task["arith_gen"] & per_task["arith_greedy"] == {LM_EVAL_SEED}
    every = frozenset().union(*per_task.values())
    assert all(per_task["arith_gen"] <= seeds <= every for seeds in kpass_seeds)
    assert {frozenset(seeds) for seeds in _prompt_seeds(plain_run).values()} == {frozenset({LM_EVAL_SEED})}
    # the trap kpass removes: a task with `repeats: 8` under plain lm_eval gets 8 copies of one sample
    assert _identical_share(plain_run.samples("arith_kpass_metrics")) == 1.0
    assert _identical_share(kpass_run.samples("arith_kpass_metrics")) < 0.5
    # ... and the task's own kpass metrics say so in lm-eval's results (the seed trap under plain lm_eval)
    assert plain_run.results()["results"]["arith_kpass_metrics"]["kpass_identical_samples,all"] > 0.5
    assert kpass_run.results()["results"]["arith_kpass_metrics"]["kpass_identical_samples,all"] < 0.5


def _flag_rows(run: Run) -> dict[tuple[str, str], dict]:
    report = run.results()["kpass"]["report"]
    return {(row["task"], row["metric"]): row for row in report["rows"]}


def _same_rows(expected: dict[tuple[str, str], dict], report: kpass.Report) -> None:
    got = {(row.task, row.metric): row.as_dict() for row in report.rows if (row.task, row.metric) in expected}
    assert set(got) == set(expected)
    for key, row in expected.items():
        for field in ("estimate", "low", "high", "standard_error", "n_problems", "n_samples", "n_clusters"):
            assert got[key][field] == row[field], (key, field)


def _core_estimates(samples: list[dict]) -> dict[str, float]:
    """The metrics from kpass's core on counts taken straight from lm-eval's samples file."""
    lines = sorted((s for s in samples if s["filter"] == "strict-match"), key=lambda s: s["doc_id"])
    answers = []
    for line in lines:
        found = [ANSWER.findall(text) for text in line["resps"][0]]
        answers.append([match[0] if match else None for match in found])
    gold = [line["target"] for line in lines]
    n = np.array([len(row) for row in answers])
    c = np.array([sum(answer == g for answer in row) for row, g in zip(answers, gold)])
    class_counts, n_invalid = kpass.metrics.class_counts_from_answers(answers, gold)
    return {
        "pass@1": float(np.mean(kpass.metrics.pass_at_k(n, c, 1))),
        "pass@8": float(np.mean(kpass.metrics.pass_at_k(n, c, 8))),
        "G-Pass@8_0.5": float(np.mean(kpass.metrics.g_pass_at_k(n, c, 8, tau="0.5"))),
        "cons@8": float(np.mean(kpass.metrics.cons_at_k(class_counts, 8, n_invalid=n_invalid))),
    }


def test_flag_reader_and_core_give_identical_numbers(kpass_run):
    flag = _flag_rows(kpass_run)
    tasks = {"arith_gen/strict-match", "arith_gen/flexible-extract", "arith_greedy/strict-match",
             "arith_greedy/flexible-extract"}
    assert {task for task, _ in flag} == tasks
    assert {metric for _, metric in flag} == {"pass@1", "pass@8", "cons@8", "G-Pass@8_0.5"}
    assert all(row["n_problems"] == N_PROBLEMS and row["n_samples"] == N_PROBLEMS * K for row in flag.values())
    assert all(row["n_clusters"] == 3 for row in flag.values())

    # the post-hoc reader on the --log_samples output (doc.topic is the cluster field there)
    table = read_lm_eval_output(kpass_run.output)
    _same_rows(flag, kpass.compute_report(table, SPECS, cluster_by="doc.topic", rng=0))
    # the reader found through the kpass plugin host, on the samples file alone
    (samples_file,) = kpass_run.model_dir.glob("samples_arith_gen_*.jsonl")
    assert kpass.choose_reader(samples_file)[0] == "lm_eval"
    _same_rows({key: row for key, row in flag.items() if key[0].startswith("arith_gen/")},
               kpass.compute_report(kpass.read_samples(samples_file), SPECS, cluster_by="doc.topic", rng=0))
    # the sample table the flag wrote next to lm-eval's files
    (own_samples,) = kpass_run.model_dir.glob("kpass_samples_*.jsonl")
    _same_rows(flag, kpass.compute_report(kpass.read_samples(own_samples), SPECS, cluster_by="cluster", rng=0))
    # ... reduced by the default engine (DuckDB): the same numbers, and the judge the run used
    needs = Needs.for_specs(kpass.parse_metric_specs(SPECS), cluster_by="cluster")
    reduced = load_samples([own_samples], needs)
    assert isinstance(reduced, ProblemStatistics) and reduced.engine == "duckdb"
    on_engine = kpass.compute_report(reduced, SPECS, cluster_by="cluster", rng=0)
    _same_rows(flag, on_engine)
    assert {row.judge for row in on_engine.rows} == {"exact_match"}

    # the core on counts read straight from the raw generations
    core = _core_estimates(kpass_run.samples("arith_gen"))
    for metric, value in core.items():
        assert flag[("arith_gen/strict-match", metric)]["estimate"] == pytest.approx(value, rel=1e-12, abs=1e-15)
        assert flag[("arith_gen/flexible-extract", metric)]["estimate"] == flag[("arith_gen/strict-match", metric)][
            "estimate"]
    assert 0 < core["pass@1"] < core["pass@8"] < 1


def test_flag_leaves_lm_eval_metrics_and_files_as_without_it(plain_run, kpass_run):
    plain, flagged = plain_run.results(), kpass_run.results()
    assert set(flagged) - set(plain) == {"kpass"}
    assert set(plain) - set(flagged) == set()
    added = flagged["kpass"]["lm_eval_results_keys"]["added"]  # kpass's estimates in lm-eval's own results
    for task in ("arith_gen", "arith_greedy"):
        assert set(flagged["results"][task]) - set(plain["results"][task]) == set(added[task])
        assert {key: flagged["results"][task][key] for key in plain["results"][task]} == plain["results"][task]
        assert flagged["n-samples"][task] == plain["n-samples"][task]
        assert flagged["task_hashes"][task] == plain["task_hashes"][task]
        plain_config, flagged_config = dict(plain["configs"][task]), dict(flagged["configs"][task])
        assert (plain_config.pop("repeats"), flagged_config.pop("repeats")) == (1, K)
        assert flagged_config == plain_config
        for before, after in zip(plain_run.samples(task), kpass_run.samples(task), strict=True):
            assert len(before["resps"][0]) == 1 and len(after["resps"][0]) == K
            assert after["resps"][0][0] == before["resps"][0][0]  # repeat 0 is the sample a plain run gets
            assert {**after, "resps": None} == {**before, "resps": None}
    # lm-eval's own table rows are printed unchanged (cells: kpass's rows widen the columns)
    def cells(stdout):
        return {tuple(cell.strip() for cell in line.split("|")[3:]) for line in stdout.splitlines()
                if line.startswith("|") and "exact_match" in line}
    assert cells(plain_run.stdout) and cells(plain_run.stdout) <= cells(kpass_run.stdout)


def test_kpass_table_warnings_and_files(kpass_run):
    out = kpass_run.stdout
    lm_eval_table = out.index("|arith_gen")
    kpass_table = out.index("kpass (pass@1, pass@8, cons@8, G-Pass@8_0.5; samples per problem: arith_gen=8, "
                            "arith_greedy=8; clusters: topic)")
    assert lm_eval_table < kpass_table
    assert re.search(r"\| fake \| arith_gen/strict-match \| pass@8 \| exact_match \| 0\.\d{4} \| \[0\.\d{4}, [01]\.\d{4}\] \|",
                     out[kpass_table:])
    # temperature 0: every problem's 8 samples are identical, and kpass says so
    assert "task arith_greedy: 100% of problems got 8 identical samples" in kpass_run.stderr
    assert "task arith_gen:" not in kpass_run.stderr
    (own,) = kpass_run.model_dir.glob("kpass_2*.json")
    assert json.loads(own.read_text()) == kpass_run.results()["kpass"]
    assert kpass_run.results()["kpass"]["tasks"]["arith_greedy"]["identical_sample_share"] == 1.0
    assert kpass_run.results()["kpass"]["tasks"]["arith_gen"]["judged_by"] == {
        "strict-match": "exact_match", "flexible-extract": "exact_match"}


def test_yaml_kpass_metrics_have_a_numeric_stderr_in_lm_eval_output(plain_run, kpass_run):
    for run in (plain_run, kpass_run):  # plain lm_eval imports kpass through the YAML's !function
        metrics = run.results()["results"]["arith_kpass_metrics"]
        for name in ("pass@1", "pass@8", "cons@8", "G-Pass@8_0.5"):
            stderr = metrics[f"{name}_stderr,all"]
            assert isinstance(stderr, float) and math.isfinite(stderr), (name, stderr)
            assert re.search(rf"\|all\s*\|\s*0\|{re.escape(name)}\s*\|↑\s*\|\s*[01]\.\d{{4}}\|±\s*\|\s*0\.\d+\|",
                             run.stdout), name
    # lm-eval's numbers for these metrics are kpass's: estimate and the default interval's SE over the
    # same samples (issue #16: 3 clusters, so the few-cluster rule's SE, as `kpass report` shows it)
    metrics = kpass_run.results()["results"]["arith_kpass_metrics"]
    table = read_lm_eval_output(kpass_run.model_dir / next(kpass_run.model_dir.glob(
        "samples_arith_kpass_metrics_*.jsonl")).name)
    report = kpass.compute_report(table, SPECS, cluster_by="cluster", rng=0, n_resamples=100_000)
    for row in report.rows:
        assert metrics[f"{row.metric},all"] == row.estimate
        assert metrics[f"{row.metric}_stderr,all"] == row.standard_error
        assert row.n_clusters == 3


def test_kpass_cli_reads_an_lm_eval_output_directory(kpass_run, plain_run):
    """``kpass report OUTPUT_DIR`` on --log_samples output equals the flag's numbers."""
    report_json = kpass_run.output / "report.json"
    completed = subprocess.run(
        [_console_script("kpass"), "report", str(kpass_run.output), "--metrics", SPECS,
         "--cluster-by", "doc.topic", "--seed", "0", "--format", "json", "--output", str(report_json)],
        capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr
    rows = json.loads(report_json.read_text())["rows"]
    from_cli = {(row["task"], row["metric"]): row for row in rows if row["task"].startswith(("arith_gen/", "arith_greedy/"))}
    flag = _flag_rows(kpass_run)
    assert set(from_cli) == set(flag)
    for key, row in flag.items():
        for field in ("estimate", "low", "high", "standard_error", "n_problems", "n_samples"):
            assert from_cli[key][field] == row[field], (key, field)

    # The plain run (one sample per problem, no kpass in it) reads as it is.
    completed = subprocess.run(
        [_console_script("kpass"), "report", str(plain_run.output), "--metrics", "pass@1"],
        capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr
    assert "arith_gen/strict-match" in completed.stdout
