r"""``lm_eval --predict_only --log_samples`` output scored post hoc with each task's own scoring, as live.

The real CLIs against tests/adapters/fake_openai_server.py (which honours ``seed``), on the repo's
``arith_gen.yaml`` (a ``metric_list`` + filters task) and copies of lm-eval 0.4.13's own ``aime24`` and
``minerva_math_algebra`` (scored by their ``process_results``) and ``gsm8k_cot_self_consistency`` (regex
filters, ``exact_match`` with options, ``repeats: 64``), only the dataset pointed at local files
(:func:`test_lm_eval_reasoning.write_tasks`). Four runs on the same prompts with a fixed seed policy, so each
pair makes the same generations:

* ``plain`` / ``plain_predict``: ``lm_eval`` as users run it (lm-eval's one seed for every request), without and
  with ``--predict_only``;
* ``k8`` / ``k8_predict``: ``kpass-lm-eval --kpass-samples 8`` (repeat r gets ``repeat_seed(1234, task, r)``,
  so 8 different samples per problem), without and with ``--predict_only``.

``kpass report`` must give identical per-problem counts and metrics on each pair, and the counts must equal the
test's own reading of the generations (so the equality is not that of two empty tables).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import kpass
from kpass.adapters.lm_eval_reader import read_lm_eval_output

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the shared helpers of the end-to-end modules (tests/ is not a package)
    sys.path.insert(0, str(HERE))
import lm_eval_runs as runs_module  # noqa: E402

fake_server = runs_module.load_fake_server()
reasoning = runs_module.load_by_path("kpass_tests_lm_eval_reasoning", HERE / "test_lm_eval_reasoning.py")
FIXTURES = HERE / "lm_eval_fixtures"
PLAIN_TASKS = "arith_gen,aime24,minerva_math_algebra,gsm8k_cot_self_consistency"
K8_TASKS = "arith_gen,aime24,minerva_math_algebra"
K = 8
SPECS = "pass@1,8 cons@8"
AIME_ANSWER = re.compile(r"\\boxed\{\s*(-?[0-9]+)\s*\}")


def _texts(notes):
    """Notes (``kpass.Note`` or their JSON records) as ``rows: text`` lines, to search in."""
    from kpass.notes import as_note

    return [str(as_note(note)) for note in notes]



@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lm_eval_predict_only")
    tasks = reasoning.write_tasks(root)
    shutil.copy(FIXTURES / "arith_gen.yaml", tasks / "arith_gen.yaml")
    shutil.copy(FIXTURES / "arith.jsonl", root / "arith.jsonl")  # data_files: arith.jsonl, relative to the cwd
    return root


@pytest.fixture(scope="module")
def runs(workspace) -> dict[str, Path]:
    env = {**os.environ, "HF_HOME": str(workspace / "hf"), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "LMEVAL_LOG_LEVEL": "WARNING"}
    with fake_server.running_server() as server:
        common = ["--model", "local-completions",
                  "--model_args", f"base_url={server.base_url}/completions,model=fake,tokenizer_backend=None",
                  "--include_path", "tasks", "--log_samples"]
        plain = [runs_module.console_script("lm_eval"), *common, "--tasks", PLAIN_TASKS]
        # cons@8 too: under --predict_only lm-eval drops process_results before kpass-lm-eval's pre-run check,
        # which must not then refuse aime24 for want of an answer extractor (kpass computes nothing live)
        k8 = [runs_module.console_script("kpass-lm-eval"), *common, "--tasks", K8_TASKS, "--kpass", SPECS,
              "--kpass-samples", str(K), "--gen_kwargs", "do_sample=True,temperature=0.7"]
        commands = {"plain": plain, "plain_predict": [*plain, "--predict_only"],
                    "k8": k8, "k8_predict": [*k8, "--predict_only"]}
        for pair in (("plain", "plain_predict"), ("k8", "k8_predict")):  # two at a time: two cores
            processes = {}
            for name in pair:
                with open(workspace / f"{name}.out", "w") as stdout, open(workspace / f"{name}.err", "w") as stderr:
                    processes[name] = subprocess.Popen([*commands[name], "--output_path", str(workspace / name)],
                                                       cwd=workspace, env=env, stdout=stdout, stderr=stderr)
            for name, process in processes.items():
                process.wait(timeout=600)
                assert process.returncode == 0, (name, (workspace / f"{name}.err").read_text()[-3000:])
    return {name: workspace / name for name in commands}


def _results(output: Path) -> dict:
    (path,) = (output / "fake").glob("results_*.json")
    return json.loads(path.read_text())


def _report(output: Path, specs: str, include_path: Path) -> dict:
    script = runs_module.console_script("kpass")
    completed = subprocess.run([script, "report", str(output), "-m", specs, "--include-path", str(include_path),
                                "--format", "json"], capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def _per_problem(output: Path, include_path: Path) -> dict[tuple[str, str], tuple[int, int, list]]:
    """(task, problem) -> (samples, correct samples, recorded answers), from the table kpass reads."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = read_lm_eval_output(output, include_path=[include_path])
    out: dict[tuple[str, str], tuple[int, int, list]] = {}
    for record in table.to_records():
        n, c, answers = out.get((record["task"], record["problem_id"]), (0, 0, []))
        out[(record["task"], record["problem_id"])] = (n + 1, c + bool(record["correct"]), [*answers, record["answer"]])
    return out


_ROW_FIELDS = ("estimate", "low", "high", "standard_error", "n_problems", "n_samples", "n_clusters", "method")


def _rows(report: dict) -> dict[tuple[str, str], dict]:
    return {(row["task"], row["metric"]): {field: row.get(field) for field in _ROW_FIELDS} for row in report["rows"]}


def test_the_predict_only_runs_really_have_no_scoring(runs):
    for name in ("plain_predict", "k8_predict"):
        results = _results(runs[name])
        for task, config in results["configs"].items():
            assert config["metric_list"] == [{"metric": "bypass"}], (name, task)
        assert results["configs"]["aime24"]["process_results"] == "process_results"  # a name, no code
    assert _results(runs["k8_predict"])["configs"]["arith_gen"]["repeats"] == K


@pytest.mark.parametrize(("scored", "predicted", "specs"), [("plain", "plain_predict", "pass@1"),
                                                            ("k8", "k8_predict", SPECS)])
def test_predict_only_scored_post_hoc_equals_the_scored_run(runs, workspace, scored, predicted, specs):
    include_path = workspace / "tasks"
    live, post = _per_problem(runs[scored], include_path), _per_problem(runs[predicted], include_path)
    assert live == post
    assert _rows(_report(runs[scored], specs, include_path)) == _rows(_report(runs[predicted], specs, include_path))
    # what the counts are, by the test's own reading: aime24's boxed answers against the targets
    samples = [json.loads(line) for line in next((runs[predicted] / "fake").glob("samples_aime24_*.jsonl"))
               .read_text().splitlines() if line.strip()]
    for line in samples:
        answers = [AIME_ANSWER.search(text) for text in line["resps"][0]]
        correct = sum(match is not None and int(match.group(1)) == int(line["target"]) for match in answers)
        assert post[("aime24", str(line["doc_id"]))][:2] == (len(line["resps"][0]), correct)
    tasks = {task for task, _ in post}
    assert {"arith_gen/strict-match", "aime24", "minerva_math_algebra"} <= tasks
    pass_1 = {task: sum(c for (t, _), (_, c, _) in post.items() if t == task)
              / sum(n for (t, _), (n, _, _) in post.items() if t == task) for task in tasks}
    assert all(0 < value < 1 for value in pass_1.values()), pass_1


def test_plain_predict_only_equals_lm_eval_own_scores(runs, workspace):
    """On the plain pair, the post-hoc pass@1 of the predict_only run is lm-eval's own number of the scored run."""
    results = _results(runs["plain"])["results"]
    rows = _rows(_report(runs["plain_predict"], "pass@1", workspace / "tasks"))
    assert rows[("aime24", "pass@1")]["estimate"] == results["aime24"]["exact_match,none"]
    assert rows[("minerva_math_algebra", "pass@1")]["estimate"] == results["minerva_math_algebra"]["exact_match,none"]
    assert rows[("arith_gen/strict-match", "pass@1")]["estimate"] == results["arith_gen"]["exact_match,strict-match"]
    assert rows[("gsm8k_cot_self_consistency/score-first", "pass@1")]["estimate"] == pytest.approx(
        results["gsm8k_cot_self_consistency"]["exact_match,score-first"], abs=1e-12)


def test_predict_only_post_hoc_says_where_the_scoring_came_from(runs, workspace):
    report = _report(runs["k8_predict"], SPECS, workspace / "tasks")
    notes = "\n".join(_texts(report["notes"]))
    assert "task 'aime24' was run with --predict_only; scored post hoc with its process_results from " \
           f"{(workspace / 'tasks' / 'aime' / 'aime24.yaml').resolve()}" in notes
    assert "task 'arith_gen' was run with --predict_only; scored post hoc with metric_list exact_match from" in notes


def test_predict_only_task_kpass_cannot_rebuild_is_refused_in_one_line(runs, workspace, tmp_path):
    # without the include path, arith_gen's YAML (a local task) cannot be found
    with pytest.raises(kpass.DataError, match=r"task 'arith_gen' was run with --predict_only \(no scoring in the "
                                              r"files\) and kpass cannot rebuild its scoring: no YAML") as caught:
        read_lm_eval_output(runs["plain_predict"])
    assert "\n" not in str(caught.value) and "--include-path DIR" in str(caught.value)
    script = runs_module.console_script("kpass")
    completed = subprocess.run([script, "report", str(runs["plain_predict"])], capture_output=True, text=True,
                               check=False, cwd=tmp_path)
    assert completed.returncode != 0 and "Traceback" not in completed.stderr
    assert "task 'arith_gen' was run with --predict_only" in completed.stderr
    # a YAML of that name that is another task (another prompt) is never used to score it
    other = tmp_path / "other"
    other.mkdir()
    text = (FIXTURES / "arith_gen.yaml").read_text().replace('doc_to_text: "Question: {{question}}\\nAnswer:"',
                                                              'doc_to_text: "Q: {{question}}\\nA:"')
    assert "Q: {{question}}" in text
    (other / "arith_gen.yaml").write_text(text)
    with pytest.raises(kpass.DataError, match=r"arith_gen\.yaml differs from the run in doc_to_text"):
        read_lm_eval_output(runs["plain_predict"], include_path=[other])
