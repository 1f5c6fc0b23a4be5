"""The seed trap caught where the run happens: the real ``inspect eval`` and ``kpass-lm-eval`` CLIs.

One fake OpenAI-compatible server on 127.0.0.1 (tests/adapters/fake_openai_server.py) that honours ``seed``:
the same question under the same seed always gets the same text, and ``temperature == 0`` is greedy.

Inspect (``inspect_fixtures/kpass_seed_task.py``, 10 questions, 4 epochs, Inspect's OpenAI-compatible
provider ``openai-api/fake/fake``): ``inspect eval --seed 42`` sends seed 42 with every epoch, so every
epoch of a question is one generation; kpass's metrics must say so in Inspect's results, in the log and once
on the console, for a kpass scorer (``seed_kpass``) and for Inspect's own ``match`` (``seed_plain``). The same
run without ``--seed`` must say nothing. What is identical is counted here from the log's own outputs.

lm-eval: copies of lm-eval 0.4.13's own ``aime24`` and ``minerva_math_algebra`` YAMLs (greedy: ``do_sample:
false``, ``temperature: 0``) with ``kpass-lm-eval --kpass-samples 8`` stop before the first request, in one
line naming the tasks, the setting and ``--kpass-allow-greedy``; with that flag the run goes on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspect_ai.log import read_eval_log

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "inspect_fixtures"
if str(HERE) not in sys.path:  # the shared helpers of the end-to-end modules (tests/ is not a package)
    sys.path.insert(0, str(HERE))
import lm_eval_runs as runs_module  # noqa: E402
import lm_eval_shipped_tasks as shipped  # noqa: E402

pytestmark = pytest.mark.slow  # real framework runs: make test runs them, make check skips them

fake_server = runs_module.load_fake_server()
BIN = Path(sys.executable).parent
EPOCHS = 4
N_QUESTIONS = 10
TRAP_KEY = "warning/identical_epochs"
CONSOLE = (f"kpass metrics: {N_QUESTIONS} of {N_QUESTIONS} problems got {EPOCHS} identical epochs: pass@k = pass@1; "
           "drop --seed or sample with temperature > 0 (full note in the log's kpass params, seed_trap; "
           "docs/notes.md#seed-trap)")  # one short line


@pytest.fixture(scope="module")
def server():
    with fake_server.running_server() as running:
        yield running


# ------------------------------------------------------------------------------------- Inspect


@pytest.fixture(scope="module")
def inspect_runs(server, tmp_path_factory) -> dict[str, dict]:
    """``inspect eval`` of both fixture tasks with ``--seed 42`` and without, side by side."""
    root = tmp_path_factory.mktemp("seed_trap_inspect")
    env = {k: v for k, v in os.environ.items() if not k.startswith("INSPECT_")}
    env.update(FAKE_BASE_URL=f"{server.base_url}", FAKE_API_KEY="unused", COLUMNS="1000")
    commands = {}
    for name, extra in (("seeded", ["--seed", "42"]), ("unseeded", [])):
        commands[name] = [str(BIN / "inspect"), "eval", "kpass_seed_task.py@seed_kpass", "kpass_seed_task.py@seed_plain",
                          "--model", "openai-api/fake/fake", "--log-dir", str(root / name), "--display", "plain",
                          "--max-tasks", "2", *extra]
    processes = {name: subprocess.Popen(command, cwd=FIXTURES, env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True) for name, command in commands.items()}
    out = {}
    for name, process in processes.items():
        console, _ = process.communicate(timeout=600)
        assert process.returncode == 0, console[-3000:]
        logs = {}
        for path in sorted((root / name).glob("*.eval")):
            log = read_eval_log(str(path))
            assert log.status == "success", (path, log.error)
            logs[log.eval.task] = log
        assert set(logs) == {"seed_kpass", "seed_plain"}, console[-3000:]
        out[name] = {"console": console, "logs": logs}
    return out


def _identical_questions(log) -> int:
    """Questions whose epochs all have one completion, counted from the log's outputs."""
    by_question: dict[str, set[str]] = {}
    for sample in log.samples:
        by_question.setdefault(str(sample.id), set()).add(sample.output.completion)
    assert len(by_question) == N_QUESTIONS and len(log.samples) == N_QUESTIONS * EPOCHS
    return sum(len(texts) == 1 for texts in by_question.values())


def _metrics(log) -> dict:
    (score,) = log.results.scores
    return score.metrics


def test_seeded_run_warns_in_results_log_and_once_on_the_console(inspect_runs):
    run = inspect_runs["seeded"]
    for task, log in run["logs"].items():
        assert log.eval.model_generate_config.seed == 42
        assert _identical_questions(log) == N_QUESTIONS  # the trap really happened
        metrics = _metrics(log)
        assert metrics[TRAP_KEY].value == 1.0, task
        assert metrics["pass@4"].value == metrics["pass@1"].value  # what the warning is about
        details = metrics["pass@1"].params["kpass"]
        trap = dict(details["seed_trap"])
        warning = trap.pop("warning")
        assert trap == {"problems_identical": N_QUESTIONS, "problems": N_QUESTIONS, "epochs": EPOCHS}
        assert "Drop --seed" in warning and warning not in run["console"]  # the full text is in the log
        # kpass report's note (the same rule) is in the log's notes too
        assert any(note["kind"] == "seed-trap"
                   and note["rows"] == [f"({N_QUESTIONS} of {N_QUESTIONS} problems, {EPOCHS} identical samples)"]
                   for note in details["notes"]), details["notes"]
    assert "cons@4" in _metrics(run["logs"]["seed_kpass"])  # the key is added once, not instead of a metric
    assert run["console"].count(CONSOLE) == 2, run["console"][-3000:]  # once per task, not per live update


def test_unseeded_run_says_nothing(inspect_runs):
    run = inspect_runs["unseeded"]
    for log in run["logs"].values():
        assert log.eval.model_generate_config.seed is None
        assert _identical_questions(log) <= N_QUESTIONS // 2  # the epochs really differ
        metrics = _metrics(log)
        assert TRAP_KEY not in metrics
        assert "seed_trap" not in metrics["pass@1"].params["kpass"]
        assert not any("identical" in note for note in metrics["pass@1"].params["kpass"]["notes"])
    assert "identical epochs" not in run["console"]


def test_kpass_report_on_the_seeded_log_applies_the_same_rule(inspect_runs, tmp_path):
    log = inspect_runs["seeded"]["logs"]["seed_plain"]
    completed = subprocess.run([str(BIN / "kpass"), "report", log.location, "-m", "pass@1,4", "--format", "json"],
                               capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-2000:]
    (note,) = [note for note in json.loads(completed.stdout)["notes"] if note["kind"] == "seed-trap"]
    assert note["rows"][0].endswith(f"({N_QUESTIONS} of {N_QUESTIONS} problems, {EPOCHS} identical samples)")
    assert note["text"].startswith("most problems' samples are identical generations")


def test_the_metric_is_quiet_on_partial_scores_and_warns_once(monkeypatch, caplog):
    """Inspect's live display calls metrics with partial scores: no key, no console line until every epoch ran."""
    import contextvars

    contextvars.copy_context().run(_quiet_then_once, monkeypatch, caplog)  # the task-start hook sets a ContextVar


def _quiet_then_once(monkeypatch, caplog):
    import logging

    from inspect_ai.scorer import SampleScore, Score

    from kpass.adapters import inspect_metrics as im
    from kpass.adapters import inspect_warnings

    def scores(n_questions):
        return [SampleScore(score=Score(value="C" if q % 2 else "I", metadata={"kpass": {
                    "answer": str(q), "epoch": e, "output_digest": f"digest-{q}"}}), sample_id=f"q{q}")
                for q in range(n_questions) for e in range(1, EPOCHS + 1)]

    monkeypatch.setattr(im, "_RUNNING_TASKS", {"eval-1": (EPOCHS, frozenset(f"q{q}" for q in range(6)))})
    monkeypatch.setattr(inspect_warnings, "_PROGRESS", {})
    inspect_warnings.task_started("eval-1", 6 * EPOCHS)
    metric = im.kpass_metrics("pass@1,4")
    assert metric([]) == {}
    with caplog.at_level(logging.WARNING, logger=im.__name__):
        assert TRAP_KEY not in metric(scores(3))                      # 3 of 6 questions scored
        assert metric(scores(6))[TRAP_KEY] == 1.0                     # all scored
        assert metric(scores(6))[TRAP_KEY] == 1.0                     # the final call: same again
    assert sum("identical epochs" in record.getMessage() for record in caplog.records) == 1
    inspect_warnings.task_ended("eval-1")
    monkeypatch.setattr(im, "_RUNNING_TASKS", {})
    varied = [SampleScore(score=Score(value="C", metadata={"kpass": {"answer": "1", "epoch": e,
                                                                     "output_digest": f"d{q}-{e % 2}"}}),
                          sample_id=f"q{q}") for q in range(6) for e in range(1, EPOCHS + 1)]
    assert TRAP_KEY not in metric(varied)                             # outside a run: at once, and here no trap


# ------------------------------------------------------------------------------------- lm-eval


def _kpass_lm_eval(server, root: Path, name: str, *extra: str) -> runs_module.Run:
    env = {**os.environ, "HF_HOME": str(root / "hf"), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "LMEVAL_LOG_LEVEL": "WARNING"}
    before = len(server.requests)
    completed = subprocess.run(
        [runs_module.console_script("kpass-lm-eval"), "--model", "local-completions",
         "--model_args", f"base_url={server.base_url}/completions,model=fake,tokenizer_backend=None",
         "--include_path", ".", "--tasks", ",".join(shipped.TASKS), "--kpass", "pass@1,8", "--kpass-samples", "8",
         "--log_samples", "--output_path", str(root / name), *extra],
        cwd=root / "tasks", env=env, capture_output=True, text=True, timeout=900, check=False)
    return runs_module.Run(completed.returncode, completed.stdout, completed.stderr, root / name,
                           list(server.requests[before:]))


@pytest.fixture(scope="module")
def lm_eval_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("seed_trap_lm_eval")
    shipped.write_shipped_tasks(root)
    return root


def test_greedy_shipped_yamls_stop_before_the_first_request(server, lm_eval_root):
    run = _kpass_lm_eval(server, lm_eval_root, "refused")
    assert run.returncode == 2, run.stderr[-3000:]
    assert run.requests == []
    assert not run.output.exists()
    (line,) = [line for line in run.stderr.splitlines() if "kpass-lm-eval: error:" in line]
    assert "task aime24 (temperature 0.0; K=8); minerva_math_algebra (temperature 0.0; K=8) decodes greedily" in line
    assert "--kpass-allow-greedy" in line and "--gen_kwargs temperature=" in line


def test_allow_greedy_flag_sends_them_and_the_identical_samples_are_named_after(server, lm_eval_root):
    run = _kpass_lm_eval(server, lm_eval_root, "allowed", "--kpass-allow-greedy")
    assert run.returncode == 0, run.stderr[-3000:]
    prompts = [prompt for request in run.requests for prompt in request["prompts"]]
    assert len(prompts) == len(shipped.TASKS) * len(shipped.PROBLEMS) * 8
    assert {request["temperature"] for request in run.requests} == {0.0}
    for task in shipped.TASKS:
        assert f"kpass: task {task}: 100% of problems got 8 identical samples" in run.stderr


def test_greedy_setting_follows_how_lm_eval_sends_the_config():
    from lm_eval.models.utils import normalize_gen_kwargs

    from kpass.adapters.lm_eval_guards import greedy_setting

    cases = [{"do_sample": False, "temperature": 0.0}, {"do_sample": False, "temperature": 0.7},
             {"do_sample": True, "temperature": 0.7}, {"do_sample": True, "temperature": 0}, {"temperature": 0.6},
             {"temperature": 0}, {"until": ["\n"], "temperature": "0.5"}, {"do_sample": False}]
    for kwargs in cases:  # HF, vLLM...: the temperature normalize_gen_kwargs hands them
        sent_temperature = float(normalize_gen_kwargs(dict(kwargs))["temperature"])
        for backend in ("hf", "other"):
            assert (greedy_setting(kwargs, backend=backend) is not None) == (sent_temperature == 0), (kwargs, backend)
    for kwargs in [*cases, {}, {"do_sample": True}]:  # TemplateAPI: the temperature, 0 when absent
        api_temperature = float(kwargs.get("temperature", 0))
        assert (greedy_setting(kwargs, backend="api") is not None) == (api_temperature == 0), kwargs
    # neither set: HF's temperature defaults to 0 (greedy); vLLM's own default samples
    assert normalize_gen_kwargs({"do_sample": True}).get("temperature") is None
    assert greedy_setting({"do_sample": True}, backend="hf") == "no temperature (0)"
    assert greedy_setting({}, backend="other") is None
    assert greedy_setting({"do_sample": False, "temperature": 0.7}, backend="hf") == "do_sample false, temperature 0.7"


def test_a_task_repeating_itself_greedily_is_stopped_too_without_kpass(server, tmp_path):
    """K from the task's own ``repeats`` (no --kpass): the same stop, before any request, also behind --use_cache."""
    from types import SimpleNamespace

    from lm_eval.api.model import CachingLM
    from lm_eval.models.openai_completions import LocalCompletionsAPI

    from kpass.adapters import lm_eval_cli as cli

    def task(**generation_kwargs):
        config = SimpleNamespace(repeats=4, generation_kwargs=generation_kwargs, filter_list=None,
                                 process_results=None, metric_list=[])
        return SimpleNamespace(OUTPUT_TYPE="generate_until", config=config, eval_docs=[{}],
                               set_config=lambda key, value: setattr(config, key, value), _filters=[])

    model = LocalCompletionsAPI(base_url=f"{server.base_url}/completions", model="fake", tokenizer_backend=None)
    before = len(server.requests)
    for lm in (model, CachingLM(model, str(tmp_path / "cache.db"))):
        state = cli._RunState(options=cli.KpassOptions(), specs=[])
        with pytest.raises(cli.KpassUsageError, match=r"task sc \(temperature 0; K=4\) decodes greedily.*--kpass-allow-greedy"):
            cli._prepare(state, lm, {"tasks": {"sc": task(do_sample=False, temperature=0)}}, None)
    state = cli._RunState(options=cli.KpassOptions(allow_greedy=True), specs=[])
    cli._prepare(state, model, {"tasks": {"sc": task(do_sample=False, temperature=0)}}, None)
    assert [run.name for run in state.tasks] == ["sc"]
    state = cli._RunState(options=cli.KpassOptions(), specs=[])
    cli._prepare(state, model, {"tasks": {"sc": task(do_sample=False, temperature=0.2)}}, None)  # the API sends 0.2
    assert len(server.requests) == before
