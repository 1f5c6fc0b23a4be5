r"""lm-eval's own reasoning tasks, post hoc and live: the real ``lm_eval`` CLI on lm-eval 0.4.13's shipped
``aime24``, ``minerva_math_algebra`` and ``gsm8k_cot_self_consistency`` configs.

The YAMLs (and the ``utils.py`` their ``!function`` tags name) are copied from the installed lm-eval at test
time; only the dataset is pointed at local JSONL files (``dataset_path: json`` + ``dataset_kwargs``, and
``dataset_name: null`` where the original names a Hub config). Every copy checks that the lines it replaces
are there, so a changed lm-eval fails here rather than testing something else.

Both runs name ``aime24`` and ``minerva_math_algebra`` through a local group YAML (:data:`GROUP`, written as
lm-eval's ``minerva_math`` group is: ``group``, ``task``, ``aggregate_metric_list`` with ``weight_by_size``), so
lm-eval records a group and its row, and kpass's group row (post hoc and live) is tested on the same runs.

Two runs against one fake OpenAI-compatible server (tests/adapters/fake_openai_server.py, which honours
``seed`` and words its ``\boxed{}`` answers differently), started side by side once for the module:

* ``plain``: ``lm_eval`` as users run it (aime24 and minerva greedy, one sample; gsm8k_cot_self_consistency
  with its own ``repeats: 64``, all sent with one seed);
* ``live``: ``kpass-lm-eval --kpass "pass@1,8 cons@8" --kpass-samples 8`` with sampling on.

Every expected number is counted here from lm-eval's samples file with the test's own regular expressions,
independently of kpass's code.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import kpass
from kpass.adapters.lm_eval_reader import read_lm_eval_output

HERE = Path(__file__).resolve().parent
K = 8
SPECS = "pass@1,8 cons@8"
LM_EVAL_SEED = 1234  # TemplateAPI's default request seed
PROBLEMS = [(22, "+", 11), (40, "-", 13), (7, "*", 6), (91, "+", 9), (15, "*", 4), (63, "-", 27), (18, "+", 49),
            (12, "*", 12)]
GSM8K_PROBLEMS = [(1200, "+", 345), (2000, "-", 760), (45, "*", 30), (999, "+", 1001), (1500, "+", 250),
                  (3000, "-", 1)]
TASKS = ("aime24", "minerva_math_algebra", "gsm8k_cot_self_consistency")
GROUP = "kpass_reasoning"
GROUP_TASKS = ("aime24", "minerva_math_algebra")
# The test's own reading of the fake model's answers (what each task's scoring compares):
ANSWER_OF = {
    "aime24": re.compile(r"\\boxed\{\s*(-?[0-9]+)\s*\}"),
    "minerva_math_algebra": re.compile(r"Final Answer: The final answer is \$?(?:x = )?(-?[0-9]+)\$?\. I hope"),
    "gsm8k_cot_self_consistency": re.compile(r"The answer is (-?[0-9][0-9,]*)"),
}
TABLE_TASK = {"aime24": "aime24", "minerva_math_algebra": "minerva_math_algebra",
              "gsm8k_cot_self_consistency": "gsm8k_cot_self_consistency/score-first"}


if str(HERE) not in sys.path:  # the shared helpers of the end-to-end modules (tests/ is not a package)
    sys.path.insert(0, str(HERE))
import lm_eval_runs as runs_module  # noqa: E402
import lm_eval_shipped_tasks as shipped_tasks  # noqa: E402
fake_server = runs_module.load_fake_server()
_console_script = runs_module.console_script


_solve = shipped_tasks.solve
_copy_task = shipped_tasks.copy_task


def _texts(notes):
    """Notes (``kpass.Note`` or their JSON records) as ``rows: text`` lines, to search in."""
    from kpass.notes import as_note

    return [str(as_note(note)) for note in notes]



def write_tasks(root: Path) -> Path:
    """Copies of lm-eval's own task configs over local JSONL data; returns the include path."""
    import lm_eval

    shipped = Path(lm_eval.__file__).parent / "tasks"
    tasks = root / "tasks"
    for folder in ("aime", "minerva_math", "gsm8k"):
        (tasks / folder).mkdir(parents=True)
    with open(root / "aime.jsonl", "w", encoding="utf-8") as handle:
        for i, (a, op, b) in enumerate(PROBLEMS):
            handle.write(json.dumps({"ID": f"2024-I-{i + 1}", "Problem": f"What is {a} {op} {b}? Put the final "
                                     "answer in \\boxed{}.", "Solution": "-", "Answer": _solve(a, op, b)}) + "\n")
    with open(root / "math.jsonl", "w", encoding="utf-8") as handle:
        for i, (a, op, b) in enumerate(PROBLEMS):
            handle.write(json.dumps({"problem": f"What is {a} {op} {b}? Put the final answer in \\boxed{{}}.",
                                     "solution": f"We compute: $\\boxed{{{_solve(a, op, b)}}}$.",
                                     "level": f"Level {1 + i % 5}", "type": "Algebra"}) + "\n")
    with open(root / "gsm8k.jsonl", "w", encoding="utf-8") as handle:
        for a, op, b in GSM8K_PROBLEMS:
            handle.write(json.dumps({"question": f"What is {a} {op} {b}?",
                                     "answer": f"Compute it.\n#### {_solve(a, op, b)}"}) + "\n")
    _copy_task(shipped / "aime/aime24.yaml", tasks / "aime/aime24.yaml", [
        ("dataset_path: Maxwell-Jia/AIME_2024\n",
         f"dataset_path: json\ndataset_kwargs:\n  data_files:\n    train: {root / 'aime.jsonl'}\n")])
    _copy_task(shipped / "minerva_math/minerva_math_algebra.yaml", tasks / "minerva_math/minerva_math_algebra.yaml", [
        ("dataset_path: EleutherAI/hendrycks_math\n",
         f"dataset_path: json\ndataset_kwargs:\n  data_files:\n    train: {root / 'math.jsonl'}\n"
         f"    test: {root / 'math.jsonl'}\n"),
        ("dataset_name: algebra\n", "dataset_name: null\n")])
    _copy_task(shipped / "gsm8k/gsm8k-cot.yaml", tasks / "gsm8k/gsm8k-cot.yaml", [])
    _copy_task(shipped / "gsm8k/gsm8k-cot-self-consistency.yaml", tasks / "gsm8k/gsm8k-cot-self-consistency.yaml", [
        ("include: gsm8k-cot.yaml\n",
         f"include: gsm8k-cot.yaml\ndataset_path: json\ndataset_name: null\ndataset_kwargs:\n  data_files:\n"
         f"    test: {root / 'gsm8k.jsonl'}\n")])
    for folder in ("aime", "minerva_math"):
        shutil.copy(shipped / folder / "utils.py", tasks / folder / "utils.py")
    (tasks / f"{GROUP}.yaml").write_text(
        f"group: {GROUP}\ntask:\n" + "".join(f"  - {task}\n" for task in GROUP_TASKS)
        + "aggregate_metric_list:\n  - metric: exact_match\n    aggregation: mean\n    weight_by_size: true\n"
        "metadata:\n  version: 1.0\n", encoding="utf-8")
    return tasks


class Run(runs_module.Run):
    def samples(self, task: str) -> list[dict]:
        """The lines of the task's first filter pipeline (one per document), in doc_id order."""
        lines = super().samples(task)
        first_filter = lines[0]["filter"]
        return sorted((line for line in lines if line["filter"] == first_filter), key=lambda line: line["doc_id"])


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lm_eval_reasoning")
    write_tasks(root)
    return root


@pytest.fixture(scope="module")
def server():
    with fake_server.running_server() as running:
        yield running


@pytest.fixture(scope="module")
def runs(workspace, server) -> dict[str, Run]:
    """The plain and the live run, started side by side (each lm_eval start-up takes most of the time)."""
    env = {**os.environ, "HF_HOME": str(workspace / "hf"), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "LMEVAL_LOG_LEVEL": "WARNING"}
    common = ["--model", "local-completions",
              "--model_args", f"base_url={server.base_url}/completions,model=fake,tokenizer_backend=None",
              "--include_path", "tasks", "--tasks", f"{GROUP},gsm8k_cot_self_consistency", "--log_samples"]
    commands = {
        "plain": [_console_script("lm_eval"), *common, "--output_path", str(workspace / "plain")],
        "live": [_console_script("kpass-lm-eval"), *common, "--output_path", str(workspace / "live"),
                 "--kpass", SPECS, "--kpass-samples", str(K), "--gen_kwargs", "do_sample=True,temperature=0.7"],
    }
    processes = {}
    for name, command in commands.items():  # output to files: a full pipe would stall the other run
        with open(workspace / f"{name}.out", "w") as stdout, open(workspace / f"{name}.err", "w") as stderr:
            processes[name] = subprocess.Popen(command, cwd=workspace, env=env, stdout=stdout, stderr=stderr)
    out = {}
    for name, process in processes.items():
        process.wait(timeout=600)
        stdout, stderr = ((workspace / f"{name}.{part}").read_text() for part in ("out", "err"))
        out[name] = Run(process.returncode, stdout, stderr, workspace / name)
        assert process.returncode == 0, (name, stderr[-3000:])
    return out


# ------------------------------------------------------------------------------ counted by hand


def _answers(task: str, line: dict) -> list[int | None]:
    """Each generation's final answer as a number, read by the test's own pattern (None: none)."""
    out = []
    for text in line["resps"][0]:
        match = ANSWER_OF[task].search(text)
        out.append(None if match is None else int(match.group(1).replace(",", "")))
    return out


def _gold(line: dict) -> int:
    return int(str(line["target"]).replace(",", ""))


def _hand_counts(task: str, samples: list[dict]) -> dict[str, float]:
    """pass@1, pass@8 (8 samples: some sample correct) and cons@8 (8 samples: the majority vote over the
    answers, ties split evenly, no-answer samples abstaining), counted per problem by hand."""
    pass_1, pass_8, cons_8 = [], [], []
    for line in samples:
        answers, gold = _answers(task, line), _gold(line)
        assert len(answers) == K
        correct = sum(answer == gold for answer in answers)
        pass_1.append(correct / K)
        pass_8.append(float(correct > 0))
        votes = Counter(answer for answer in answers if answer is not None)
        top = max(votes.values(), default=0)
        winners = [answer for answer, count in votes.items() if count == top]
        cons_8.append(1 / len(winners) if gold in winners else 0.0)
    return {"pass@1": float(np.mean(pass_1)), "pass@8": float(np.mean(pass_8)), "cons@8": float(np.mean(cons_8))}


def _raw_text_vote(samples: list[dict]) -> float:
    """What a vote over raw generations gives (the bug this guards against): wrong answers never agree."""
    values = []
    for line in samples:
        texts = line["resps"][0]
        correct = [text for text in texts if str(_gold(line)) in text.replace(",", "")]
        votes = Counter(texts)
        top = max(votes.values())
        winners = [text for text, count in votes.items() if count == top]
        values.append(sum(1 for w in winners if w in correct) / len(winners))
    return float(np.mean(values))


def _rows(report: kpass.Report) -> dict[tuple[str, str], float]:
    return {(row.task, row.metric): row.estimate for row in report.rows}


# ------------------------------------------------------------------------------ post hoc, plain run


def test_post_hoc_on_plain_runs_equals_lm_eval_own_exact_match(runs):
    plain = runs["plain"]
    results = plain.results()["results"]
    table = read_lm_eval_output(plain.output)
    report = kpass.compute_report(table, "pass@1", rng=0)
    rows = _rows(report)
    assert rows[("aime24", "pass@1")] == results["aime24"]["exact_match,none"]
    assert rows[("minerva_math_algebra", "pass@1")] == results["minerva_math_algebra"]["exact_match,none"]
    # gsm8k_cot_self_consistency: 64 copies of one sample; pass@1 is lm-eval's score-first number
    assert rows[("gsm8k_cot_self_consistency/score-first", "pass@1")] == pytest.approx(
        results["gsm8k_cot_self_consistency"]["exact_match,score-first"], abs=1e-12)
    assert 0 < rows[("aime24", "pass@1")] < 1
    # one sample per problem: the verdicts are lm-eval's own, and the report says so
    assert any("task 'aime24' has one sample per problem: each verdict is lm-eval's own logged exact_match" in note
               for note in _texts(report.notes))


def test_seed_trap_and_pipelines_post_hoc(runs):
    plain = runs["plain"]
    completed = subprocess.run([_console_script("kpass"), "report", str(plain.output), "-m", "pass@1,64",
                                "--format", "json"], capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout)
    notes = _texts(report["notes"])
    # 64 identical samples per problem under one seed: said in the JSON notes (and so in every format)
    assert any(note["kind"] == "seed-trap" and note["rows"] == [
        "fake / gsm8k_cot_self_consistency/score-first (6 of 6 problems, 64 identical samples)"]
        for note in report["notes"]), report["notes"]
    # three pipelines that are one once their selection steps go: one set of problems
    tasks = {row["task"] for row in report["rows"]}
    assert {task for task in tasks if task.startswith("gsm8k")} == {"gsm8k_cot_self_consistency/score-first"}
    assert any("pipelines maj@64, maj@8 score every sample as 'score-first'" in note for note in notes)
    # pooled over tasks, every document counts once: 8 + 8 + 6 problems
    pooled = kpass.compute_report(read_lm_eval_output(plain.output), "pass@1", by=("model",), rng=0)
    assert pooled.rows[0].n_problems == len(PROBLEMS) * 2 + len(GSM8K_PROBLEMS)


# ------------------------------------------------------------------------------ live, and post hoc on it


def test_live_numbers_equal_the_hand_count_and_the_post_hoc_reader(runs):
    live = runs["live"]
    flag = {(row["task"], row["metric"]): row for row in live.results()["kpass"]["report"]["rows"]}
    post_hoc = _rows(kpass.compute_report(read_lm_eval_output(live.output), SPECS, rng=0))
    raw_votes_differ = []
    for task in TASKS:
        samples = live.samples(task)
        expected = _hand_counts(task, samples)
        for metric, value in expected.items():
            key = (TABLE_TASK[task], metric)
            assert flag[key]["estimate"] == pytest.approx(value, abs=1e-12), key
            assert post_hoc[key] == flag[key]["estimate"], key
            assert flag[key]["n_problems"] == len(samples) and flag[key]["n_samples"] == len(samples) * K
        assert 0 < expected["pass@1"] < expected["pass@8"]
        raw_votes_differ.append(_raw_text_vote(samples) != pytest.approx(expected["cons@8"], abs=1e-12))
    # the data can tell a vote over answer classes from a vote over raw texts
    assert all(raw_votes_differ[:2])
    details = live.results()["kpass"]["tasks"]
    assert details["aime24"]["pipelines"]["none"]["answer_extractor"] == "lm_eval_aime"
    assert details["minerva_math_algebra"]["pipelines"]["none"]["answer_extractor"] == "lm_eval_minerva_math"
    assert details["gsm8k_cot_self_consistency"]["pipelines"]["score-first"]["answer_extractor"] == \
        "filter:score-first+exact_match"


def test_post_hoc_rescoring_calls_the_installed_process_results(runs, workspace):
    live = runs["live"]
    table = read_lm_eval_output(live.output, include_path=[workspace / "tasks"])
    aime = [note for note in table.notes if "task 'aime24' re-scored sample by sample" in note]
    assert aime and "lm_eval.tasks.aime.utils.process_results" in aime[0]
    # kpass report --answer-extractor re-extracts from the kept texts: lm-eval's aime extractor by name agrees
    completed = subprocess.run([_console_script("kpass"), "report", str(live.model_dir / next(
        live.model_dir.glob("samples_aime24_*.jsonl")).name), "-m", "cons@8", "--answer-extractor", "lm_eval_aime",
        "--format", "json"], capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr
    (row,) = json.loads(completed.stdout)["rows"]
    assert row["estimate"] == pytest.approx(_hand_counts("aime24", live.samples("aime24"))["cons@8"], abs=1e-12)


def _repeat_seed(seed: int, task: str, repeat: int) -> int:
    """The seed rule, written out again here: SeedSequence((seed, sha256(task)[:8], repeat)), 31 bits."""
    import hashlib

    if repeat == 0:
        return seed
    key = int.from_bytes(hashlib.sha256(task.encode()).digest()[:8], "little")
    return int(np.random.SeedSequence([seed, key, repeat]).generate_state(1, dtype=np.uint32)[0] >> 1)


def test_live_run_seeds_each_repeat_and_says_lm_eval_numbers_moved(runs):
    live, plain = runs["live"], runs["plain"]
    assert "lm-eval's own numbers for task gsm8k_cot_self_consistency (pipelines maj@64, maj@8" in live.stderr
    # repeat 0 keeps lm-eval's seed: the first sample is the one the plain run got (aime24 is greedy there,
    # so compare gsm8k, sampled in both runs)
    for before, after in zip(plain.samples("gsm8k_cot_self_consistency"), live.samples("gsm8k_cot_self_consistency"),
                             strict=True):
        assert after["resps"][0][0] == before["resps"][0][0]
        assert len(set(before["resps"][0])) == 1 and len(before["resps"][0]) == 64  # the trap, plainly
    seeds = {_repeat_seed(LM_EVAL_SEED, "aime24", r) for r in range(K)}
    assert len(seeds) == K and LM_EVAL_SEED in seeds
    # two runs with seeds 7 and 8 share no sample seed (seed + r shared 7 of 8)
    assert not {_repeat_seed(7, "aime24", r) for r in range(K)} & {_repeat_seed(8, "aime24", r) for r in range(K)}
    from kpass.adapters.lm_eval_cli import repeat_seed

    assert [repeat_seed(LM_EVAL_SEED, "aime24", r) for r in range(K)] == [
        _repeat_seed(LM_EVAL_SEED, "aime24", r) for r in range(K)]


# ------------------------------------------------------------------------------ lm-eval groups, post hoc and live


def _pooled_hand_counts(run: Run) -> dict[str, float]:
    """The group's numbers by hand: every problem of every subtask once, each with the same weight."""
    per_task = {task: (len(run.samples(task)), _hand_counts(task, run.samples(task))) for task in GROUP_TASKS}
    total = sum(n for n, _ in per_task.values())
    return {metric: sum(n * counts[metric] for n, counts in per_task.values()) / total
            for metric in ("pass@1", "pass@8", "cons@8")}


def test_group_row_post_hoc_equals_lm_eval_own_group_row(runs):
    plain = runs["plain"]
    results = plain.results()
    assert results["group_subtasks"][GROUP] == list(GROUP_TASKS)  # what lm-eval 0.4.13 records
    row = kpass.compute_report(read_lm_eval_output(plain.output), "pass@1", rng=0).row("pass@1", task=GROUP)
    assert row.estimate == pytest.approx(results["groups"][GROUP]["exact_match,none"], abs=1e-12)
    assert (row.n_problems, row.n_clusters) == (len(PROBLEMS) * len(GROUP_TASKS), len(GROUP_TASKS))


def test_group_row_post_hoc_pools_the_subtasks_clustered_by_subtask_as_live(runs):
    live = runs["live"]
    completed = subprocess.run([_console_script("kpass"), "report", str(live.output), "-m", SPECS, "--format", "json"],
                               capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr
    post_hoc = json.loads(completed.stdout)
    rows = {(row["task"], row["metric"]): row for row in post_hoc["rows"]}
    flag = {(row["task"], row["metric"]): row for row in live.results()["kpass"]["report"]["rows"]}
    expected = _pooled_hand_counts(live)
    n_problems = sum(len(live.samples(task)) for task in GROUP_TASKS)
    for metric, value in expected.items():
        row = rows[(GROUP, metric)]
        assert row["estimate"] == pytest.approx(value, abs=1e-12), metric
        assert (row["n_problems"], row["n_samples"], row["n_clusters"]) == (n_problems, n_problems * K, 2), metric
        live_row = flag[(GROUP, metric)]
        for field in ("estimate", "low", "high"):
            assert row[field] == pytest.approx(live_row[field], abs=1e-12), (metric, field)
        for field in ("n_problems", "n_samples", "n_clusters", "method"):
            assert row[field] == live_row[field], (metric, field)
    assert rows[(GROUP, "pass@1")]["low"] < expected["pass@1"] < rows[(GROUP, "pass@1")]["high"]
    for records in (post_hoc["notes"], live.results()["kpass"]["report"]["notes"]):
        notes = _texts(records)
        assert f"{GROUP}: problems of aime24, minerva_math_algebra pooled, each subtask one cluster (as " \
               "lm-eval's own group rows pool them)" in notes
        assert any(record["rows"] == [f"fake / {GROUP} / pass@1"] and record["kind"] == "few-clusters"
                   and record["detail"].startswith("only 2 clusters: with fewer than 10 clusters")
                   for record in records), records
    # the subtask rows are unchanged by the group: each subtask's own problems, unclustered
    assert rows[("aime24", "pass@1")]["n_clusters"] is None
