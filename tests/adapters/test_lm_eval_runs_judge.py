r"""Reruns of one served model compared, and the judge of a live run carried post hoc (issue #33, points 4 and 5).

Real ``kpass-lm-eval`` runs (the ``lm_eval`` CLI inside) against one fake OpenAI-compatible server on 127.0.0.1
(tests/adapters/fake_openai_server.py), started side by side once for the module:

* ``seed1`` and ``seed2``: the plain generation task ``arith_gen`` (tests/adapters/lm_eval_fixtures) of the same
  served model name ``fake`` with two request seeds (``--model_args ...,seed=S``), K = 4 samples, each in its
  own ``--output_path`` (``out1``, ``out2``): two runs of one model that the old reader refused as
  "duplicate sample";
* ``math``: a copy of lm-eval 0.4.13's own ``minerva_math_algebra`` YAML (and its ``utils.py``) with only the
  dataset pointed at a local JSONL file, run with ``--kpass-metric math_verify``. Half the problems box their
  gold answer with a leading zero (``\boxed{033}``): math_verify accepts ``33`` for it, minerva's exact_match
  does not, so the two judges give different numbers.

Every expected number is counted here from lm-eval's samples files with the test's own regular expressions.
"""

from __future__ import annotations

import json
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

HERE = Path(__file__).resolve().parent
K = 4
ARITH_ANSWER = re.compile(r"The answer is (\-?[0-9]+)")
MINERVA_ANSWER = re.compile(r"Final Answer: The final answer is \$?(?:x = )?(-?[0-9]+)\$?\. I hope")
MATH_PROBLEMS = [(22, "+", 11), (40, "-", 13), (7, "*", 6), (91, "+", 9), (15, "*", 4), (63, "-", 27),
                 (18, "+", 49), (12, "*", 12)]

if str(HERE) not in sys.path:  # the shared helpers of the end-to-end modules (tests/ is not a package)
    sys.path.insert(0, str(HERE))
import lm_eval_runs as runs_module  # noqa: E402
fake_server = runs_module.load_fake_server()
_console_script = runs_module.console_script


def _texts(notes):
    """Notes (``kpass.Note`` or their JSON records) as ``rows: text`` lines, to search in."""
    from kpass.notes import as_note

    return [str(as_note(note)) for note in notes]



def _gold_text(i: int, value: int) -> str:
    """The boxed gold of math problem i: every other one with a leading zero (``033``)."""
    return f"0{value}" if i % 2 == 0 else str(value)


def _write_minerva(root: Path) -> Path:
    """lm-eval's own minerva_math_algebra YAML and utils.py over local data; returns the include path."""
    import lm_eval

    shipped = Path(lm_eval.__file__).parent / "tasks" / "minerva_math"
    tasks = root / "math_tasks"
    tasks.mkdir(parents=True)
    data = root / "math.jsonl"
    with open(data, "w", encoding="utf-8") as handle:
        for i, (a, op, b) in enumerate(MATH_PROBLEMS):
            value = {"+": a + b, "-": a - b, "*": a * b}[op]
            handle.write(json.dumps({"problem": f"What is {a} {op} {b}? Put the final answer in \\boxed{{}}.",
                                     "solution": f"We compute: $\\boxed{{{_gold_text(i, value)}}}$.",
                                     "level": "Level 1", "type": "Algebra"}) + "\n")
    text = (shipped / "minerva_math_algebra.yaml").read_text(encoding="utf-8")
    for old, new in (("dataset_path: EleutherAI/hendrycks_math\n",
                      f"dataset_path: json\ndataset_kwargs:\n  data_files:\n    train: {data}\n    test: {data}\n"),
                     ("dataset_name: algebra\n", "dataset_name: null\n")):
        assert old in text, f"lm-eval's minerva_math_algebra.yaml no longer has {old!r}"
        text = text.replace(old, new)
    (tasks / "minerva_math_algebra.yaml").write_text(text, encoding="utf-8")
    shutil.copy(shipped / "utils.py", tasks / "utils.py")
    return tasks


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lm_eval_runs_judge")
    shutil.copytree(HERE / "lm_eval_fixtures", root / "tasks")
    _write_minerva(root)
    return root


@pytest.fixture(scope="module")
def runs(workspace) -> dict[str, runs_module.Run]:
    """The three runs, started side by side (each lm_eval start-up takes most of the time)."""
    env = {**os.environ, "HF_HOME": str(workspace / "hf"), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "LMEVAL_LOG_LEVEL": "WARNING"}
    with fake_server.running_server() as server:
        def model_args(seed: int) -> str:
            return f"base_url={server.base_url}/completions,model=fake,tokenizer_backend=None,seed={seed}"

        common = [_console_script("kpass-lm-eval"), "--model", "local-completions", "--log_samples",
                  "--kpass", f"pass@1,{K}", "--kpass-samples", str(K)]
        commands = {
            "seed1": [*common, "--model_args", model_args(1), "--include_path", ".", "--tasks", "arith_gen",
                      "--output_path", str(workspace / "out1")],
            "seed2": [*common, "--model_args", model_args(2), "--include_path", ".", "--tasks", "arith_gen",
                      "--output_path", str(workspace / "out2")],
            "math": [*common, "--model_args", model_args(1234), "--include_path", "math_tasks",
                     "--tasks", "minerva_math_algebra", "--kpass-metric", "math_verify",
                     "--gen_kwargs", "do_sample=True,temperature=0.7", "--output_path", str(workspace / "mathout")],
        }
        processes = {}
        for name, command in commands.items():  # output to files: a full pipe would stall the other runs
            with open(workspace / f"{name}.out", "w") as stdout, open(workspace / f"{name}.err", "w") as stderr:
                cwd = workspace if name == "math" else workspace / "tasks"  # arith_gen's data path is relative
                processes[name] = subprocess.Popen(command, cwd=cwd, env=env, stdout=stdout, stderr=stderr)
        out = {}
        for name, process in processes.items():
            process.wait(timeout=900)
            stdout, stderr = ((workspace / f"{name}.{part}").read_text() for part in ("out", "err"))
            output = workspace / {"seed1": "out1", "seed2": "out2", "math": "mathout"}[name]
            out[name] = runs_module.Run(process.returncode, stdout, stderr, output)
            assert process.returncode == 0, (name, stderr[-3000:])
    return out


def _kpass(workspace: Path, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([_console_script("kpass"), *arguments], cwd=workspace, capture_output=True, text=True,
                          timeout=600, check=False)


def _json(workspace: Path, *arguments: str) -> dict:
    completed = _kpass(workspace, *arguments, "--format", "json")
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def _arith_pass_1(run: runs_module.Run) -> dict[int, float]:
    """Per doc_id: share of the K generations whose "The answer is N" equals the target (strict-match)."""
    lines = [line for line in run.samples("arith_gen") if line["filter"] == "strict-match"]
    out = {}
    for line in lines:
        answers = [match.group(1) if (match := ARITH_ANSWER.search(text)) else None for text in line["resps"][0]]
        assert len(answers) == K
        out[line["doc_id"]] = sum(answer == str(line["target"]) for answer in answers) / K
    return out


# ------------------------------------------------------------------------------ point 4: runs


def test_reruns_of_one_model_side_by_side_and_paired(workspace, runs):
    first, second = _arith_pass_1(runs["seed1"]), _arith_pass_1(runs["seed2"])
    assert first != second  # other seeds, other samples: two different runs of `fake`
    report = _json(workspace, "report", "out1", "out2", "-m", "pass@1")
    rows = {(row["model"], row["task"]): row for row in report["rows"]}
    assert rows[("fake [out1]", "arith_gen/strict-match")]["estimate"] == pytest.approx(np.mean(list(first.values())))
    assert rows[("fake [out2]", "arith_gen/strict-match")]["estimate"] == pytest.approx(np.mean(list(second.values())))
    assert any("2 runs of model 'fake' on task 'arith_gen' (out1, out2)" in note for note in _texts(report["notes"]))
    (extra,) = [note for note in report["notes"] if note["kind"] == "extra-columns"]
    assert not {"run", "judge"} & set(extra["rows"])  # kpass's own columns, not metadata
    # compare pairs the two runs problem by problem: the correlation is that of the per-doc values matched by doc_id
    comparison = _json(workspace, "compare", "out1", "out2", "-m", "pass@1")
    (row,) = [row for row in comparison["rows"] if row["task"] == "arith_gen/strict-match"]
    assert (row["model"], row["baseline"], row["n_problems"]) == ("fake [out2]", "fake [out1]", 16)
    ids = sorted(first)
    a, b = np.array([second[i] for i in ids]), np.array([first[i] for i in ids])
    assert row["estimate"] == pytest.approx(a.mean() - b.mean())
    assert row["correlation"] == pytest.approx(np.corrcoef(a, b)[0, 1])
    # the old refusal is gone on the grouped path too
    by_run = _json(workspace, "report", "out1", "out2", "-m", "pass@1", "--by", "model,task,run")
    assert {(row["model"], row["run"]) for row in by_run["rows"]} == {("fake [out1]", "out1"), ("fake [out2]", "out2")}


def test_labels_name_the_runs_on_every_reader(workspace, runs):
    report = _json(workspace, "report", "out1", "out2/", "-m", "pass@1", "--label", "cold=out1",
                   "--label", "hot=out2", "--by", "model,task,run")
    assert {(row["model"], row["run"]) for row in report["rows"]} == {("fake [cold]", "cold"), ("fake [hot]", "hot")}
    printed = _kpass(workspace, "compare", "out1", "out2", "-m", "pass@1", "--label", "cold=out1", "--label", "hot=out2")
    assert printed.returncode == 0, printed.stderr
    assert "fake [hot]  fake [cold]" in printed.stdout and "[out1]" not in printed.stdout
    # kpass's own sample tables of the same runs (written by kpass-lm-eval), labelled: the same pairing and numbers
    (table1,) = (workspace / "out1" / "fake").glob("kpass_samples_*.jsonl")
    (table2,) = (workspace / "out2" / "fake").glob("kpass_samples_*.jsonl")
    from_tables = _json(workspace, "compare", str(table1), str(table2), "-m", "pass@1", "--label", f"cold={table1}",
                        "--label", f"hot={table2}")
    from_dirs = _json(workspace, "compare", "out1", "out2", "-m", "pass@1", "--label", "cold=out1", "--label", "hot=out2")
    assert [(r["model"], r["baseline"], r["estimate"], r["correlation"]) for r in from_tables["rows"]] == [
        (r["model"], r["baseline"], r["estimate"], r["correlation"]) for r in from_dirs["rows"]]
    assert all(row["judge"] == row["judge_baseline"] == "exact_match" for row in from_tables["rows"])
    # the Python API: read_samples(labels=...)
    table = kpass.read_samples([str(workspace / "out1"), str(workspace / "out2")],
                               labels={str(workspace / "out2"): "hot"})
    assert set(table.categories("model")) == {"fake", "fake [hot]"}
    # a label must name an input; one input, one name
    bad = _kpass(workspace, "report", "out1", "--label", "x=out3")
    assert bad.returncode == 2 and "--label x=out3: out3 is not one of the inputs (out1)" in bad.stderr
    bad = _kpass(workspace, "report", "out1", "--label", "x=out1", "--label", "y=out1")
    assert bad.returncode == 2 and "input out1 is given two names, 'x' and 'y'" in bad.stderr
    bad = _kpass(workspace, "report", "out1", "--label", "out1")
    assert bad.returncode == 2 and "give NAME=PATH" in bad.stderr


def test_reruns_in_one_output_directory(workspace, runs):
    """lm_eval run twice with one --output_path: two results files side by side, told apart by their dates."""
    both = workspace / "both" / "fake"
    both.mkdir(parents=True)
    for run in ("out1", "out2"):
        for path in (workspace / run / "fake").iterdir():
            shutil.copy(path, both / path.name)
    dates = sorted(re.match(r"results_(.+)\.json$", path.name).group(1) for path in both.glob("results_*.json"))
    table = read_lm_eval_output(workspace / "both")
    assert set(table.categories("model")) == {f"fake [{date}]" for date in dates}
    assert set(table.categories("run")) == set(dates)
    assert any(f"2 runs of model 'fake' ({dates[0]}, {dates[1]})" in note for note in table.notes)
    report = kpass.compute_report(table, "pass@1", rng=0)
    (earlier,) = [row for row in report.rows if row.model == f"fake [{dates[0]}]" and row.task == "arith_gen/strict-match"]
    estimates = {np.mean(list(_arith_pass_1(runs[name]).values())) for name in ("seed1", "seed2")}
    assert any(earlier.estimate == pytest.approx(value) for value in estimates)
    # the same run given twice (a directory and its results file) is refused before reading
    (results,) = (workspace / "out1" / "fake").glob("results_*.json")
    completed = _kpass(workspace, "report", "out1", str(results.relative_to(workspace)))
    assert completed.returncode == 1 and "is the same run" in completed.stderr


# ------------------------------------------------------------------------------ point 5: the judge travels


def _minerva_counts(run: runs_module.Run) -> dict[str, float]:
    """pass@1 under each judge, counted by hand: exact_match compares the answer text with the gold text
    (``033`` is not ``33``), math_verify compares the numbers."""
    gold_texts = {}
    for i, (a, op, b) in enumerate(MATH_PROBLEMS):
        gold_texts[f"What is {a} {op} {b}?"] = _gold_text(i, {"+": a + b, "-": a - b, "*": a * b}[op])
    lines = run.samples("minerva_math_algebra")
    lines = [line for line in lines if line["filter"] == lines[0]["filter"]]
    assert len(lines) == len(MATH_PROBLEMS)
    exact, verified = [], []
    for line in lines:
        gold = next(text for question, text in gold_texts.items() if question in line["doc"]["problem"])
        answers = [match.group(1) if (match := MINERVA_ANSWER.search(t)) else None for t in line["resps"][0]]
        assert len(answers) == K
        exact.append(sum(answer == gold for answer in answers) / K)
        verified.append(sum(answer is not None and int(answer) == int(gold) for answer in answers) / K)
    return {"exact_match": float(np.mean(exact)), "math_verify": float(np.mean(verified))}


def test_post_hoc_judges_with_the_metric_the_live_run_recorded(workspace, runs):
    math_run = runs["math"]
    hand = _minerva_counts(math_run)
    assert hand["math_verify"] > hand["exact_match"]  # the two judges differ on these data
    # the live run: its printed table names the judge, its results record it
    assert re.search(r"\| fake \| minerva_math_algebra \| pass@1 \| math_verify \| " + f"{hand['math_verify']:.4f}",
                     math_run.stdout), math_run.stdout[-2000:]
    results = math_run.results()
    assert results["kpass"]["tasks"]["minerva_math_algebra"]["judged_by"] == {"none": "math_verify"}
    # post hoc on the same directory: the same judge and the same number, said in every format
    report = _json(workspace, "report", "mathout", "-m", "pass@1", "--include-path", "math_tasks")
    (row,) = report["rows"]
    assert (row["judge"], row["estimate"]) == ("math_verify", pytest.approx(hand["math_verify"]))
    assert any("samples judged by math_verify (minerva_math_algebra: as the kpass-lm-eval run recorded)" in note
               for note in _texts(report["notes"]))
    printed = _kpass(workspace, "report", "mathout", "-m", "pass@1", "--include-path", "math_tasks")
    assert re.search(rf"minerva_math_algebra\s+pass@1\s+math_verify\s+{hand['math_verify']:.4f}", printed.stdout)
    csv = _kpass(workspace, "report", "mathout", "-m", "pass@1", "--include-path", "math_tasks", "-f", "csv")
    assert csv.stdout.splitlines()[0].startswith("model,task,metric,judge,estimate")
    # --judge switches visibly to exact_match, with exact_match's own number
    switched = _json(workspace, "report", "mathout", "-m", "pass@1", "--include-path", "math_tasks",
                     "--judge", "exact_match")
    (row,) = switched["rows"]
    assert (row["judge"], row["estimate"]) == ("exact_match", pytest.approx(hand["exact_match"]))
    assert any("exact_match (minerva_math_algebra: --judge; the kpass-lm-eval run judged by math_verify)" in note
               for note in _texts(switched["notes"]))
    # the Python API says the same
    table = read_lm_eval_output(math_run.output, include_path=[workspace / "math_tasks"], judge="exact_match")
    assert table.categories("judge") == ["exact_match"]
    # a judge the task does not compute: one line naming it and the task's metrics
    bad = _kpass(workspace, "report", "mathout", "--include-path", "math_tasks", "--judge", "acc")
    assert bad.returncode == 1 and "task 'minerva_math_algebra' has no metric 'acc'" in bad.stderr
    assert "Traceback" not in bad.stderr
