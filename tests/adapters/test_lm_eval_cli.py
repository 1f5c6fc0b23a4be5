"""``kpass-lm-eval`` pieces that need no full run: flags, per-repeat API seeds, cache guards.

The end-to-end behaviour (real ``lm_eval`` runs through the command) is in test_lm_eval_e2e.py.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from lm_eval.api.filter import FilterEnsemble
from lm_eval.api.instance import Instance
from lm_eval.api.model import CachingLM
from lm_eval.filters import build_filter_ensemble
from lm_eval.models.openai_completions import LocalCompletionsAPI

import kpass
from kpass.adapters import lm_eval_cli as cli

HERE = Path(__file__).resolve().parent


def _texts(notes):
    """Notes (``kpass.Note`` or their JSON records) as ``rows: text`` lines, to search in."""
    from kpass.notes import as_note

    return [str(as_note(note)) for note in notes]



def _load_fake_server():
    name = "kpass_tests_fake_openai_server"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE / "fake_openai_server.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


fake_server = _load_fake_server()
SAMPLING = {"until": ["\n\n"], "do_sample": True, "temperature": 0.7, "max_gen_toks": 32}


@pytest.fixture(scope="module")
def server():
    with fake_server.running_server() as running:
        yield running


# ------------------------------------------------------------------------------------ flags


def test_kpass_flags_are_taken_out_and_everything_else_kept_in_order():
    options, rest = cli.parse_kpass_args([
        "--tasks", "gsm8k", "--kpass", "pass@1,8 cons@8", "--model", "hf", "--kpass-samples=8",
        "--kpass-cluster-by", "subject", "--gen_kwargs", "temperature=0.7", "--kpass", "g-pass@8_0.5",
        "--kpass-tasks", "gsm8k,math", "--kpass-filter=strict-match", "--kpass-metric", "exact_match",
        "--kpass-method", "t", "--kpass-confidence-level", "0.9", "--kpass-seed", "3", "--log_samples"])
    assert rest == ["--tasks", "gsm8k", "--model", "hf", "--gen_kwargs", "temperature=0.7", "--log_samples"]
    assert options == cli.KpassOptions(metrics="pass@1,8 cons@8 g-pass@8_0.5", samples=8, cluster_by="subject",
                                       tasks=["gsm8k", "math"], metric="exact_match", filters=["strict-match"],
                                       method="t", confidence_level=0.9, seed=3)


def test_no_kpass_flag_passes_everything_through():
    options, rest = cli.parse_kpass_args(["--tasks", "x", "--cache_requests", "true"])
    assert options.metrics is None and rest == ["--tasks", "x", "--cache_requests", "true"]


@pytest.mark.parametrize("argv, message", [
    (["--kpass", "pass@1", "--kpass-sample", "8"], r"unknown kpass flag\(s\) --kpass-sample; kpass flags: "),
    (["--kpass-samples", "8"], "--kpass-samples need --kpass SPECS"),
    (["--kpass", "pass@1", "--kpass-samples", "0"], "invalid kpass flag value"),
    (["--kpass", "pass@1", "--kpass-confidence-level", "1.5"], r"must be in \(0, 1\)"),
    (["--kpass"], "--kpass needs a value"),
    (["--kpass", "pass@1", "--cache_requests", "true"],
     "--cache_requests true reuses requests built by an earlier run"),
    (["--kpass", "pass@1", "--cache_requests"], "--cache_requests true reuses"),
    (["--kpass", "pass@1", "--cache_requests=true"], "--cache_requests true reuses"),
])
def test_bad_kpass_flags_are_usage_errors(argv, message, capsys):
    with pytest.raises(cli.KpassUsageError, match=message) as error:
        cli.parse_kpass_args(argv)
    assert error.value.code == 2
    assert cli.main([*argv, "--tasks", "x"]) == 2
    assert "kpass-lm-eval: error:" in capsys.readouterr().err


def test_cache_requests_refresh_is_allowed():
    _, rest = cli.parse_kpass_args(["--kpass", "pass@1", "--cache_requests", "refresh"])
    assert rest == ["--cache_requests", "refresh"]


def test_bad_metric_spec_is_a_usage_error(capsys):
    assert cli.main(["--kpass", "pas@1", "--tasks", "x"]) == 2
    assert "invalid metric spec 'pas@1'" in capsys.readouterr().err


# ------------------------------------------------------------------------------------ seeds


def _instance(question: str, doc_id: int, repeats: int) -> Instance:
    return Instance(request_type="generate_until", doc={"q": question},
                    arguments=(f"Question: {question}\nAnswer:", dict(SAMPLING)), idx=0,
                    metadata=("arith", doc_id, repeats))


def _model(server, **kwargs) -> LocalCompletionsAPI:
    return LocalCompletionsAPI(base_url=f"{server.base_url}/completions", model="fake", tokenizer_backend=None,
                               **kwargs)


def test_lm_eval_sends_one_seed_for_all_repeats_without_kpass(server):
    model = _model(server)
    request = _instance("What is 5 - 38?", 0, 4)
    before = len(server.requests)
    texts = model.generate_until([request] * 4, disable_tqdm=True)
    assert [r["seed"] for r in server.requests[before:]] == [1234] * 4
    assert len(set(texts)) == 1  # the trap: 4 "samples", one generation


def test_repeat_r_is_sent_with_a_seed_from_a_seed_sequence(server):
    model = _model(server)
    cli._vary_api_seeds(model)
    cli._vary_api_seeds(model)  # idempotent
    request = _instance("What is 5 - 38?", 0, 6)
    before = len(server.requests)
    texts = model.generate_until([request] * 6, disable_tqdm=True)
    assert [r["seed"] for r in server.requests[before:]] == [cli.repeat_seed(1234, "arith", r) for r in range(6)]
    assert server.requests[before]["seed"] == 1234  # repeat 0 keeps lm-eval's seed
    assert len(set(texts)) > 1
    assert request.args[1] == SAMPLING  # the task's instance is untouched
    # the same seeds again give the same samples (reproducible), in the order of the repeats
    again = model.generate_until([request] * 6, disable_tqdm=True)
    assert again == texts
    assert texts[0] == _model(server).generate_until([request], disable_tqdm=True)[0]


def test_batches_never_mix_repeats_so_one_seed_per_batch_is_right(server):
    model = _model(server, batch_size=2)
    cli._vary_api_seeds(model)
    requests = [_instance("What is 5 - 38?", 0, 3), _instance("What is 10 - 20?", 1, 3)]
    before = len(server.requests)
    model.generate_until([requests[0]] * 3 + [requests[1]] * 3, disable_tqdm=True)
    sent = server.requests[before:]
    assert sorted(r["seed"] for r in sent) == sorted(cli.repeat_seed(1234, "arith", r) for r in range(3))
    assert all(len(r["prompts"]) == 2 and len(set(r["prompts"])) == 2 for r in sent)


def test_a_seed_in_the_task_gen_kwargs_is_varied_too(server):
    model = _model(server)
    cli._vary_api_seeds(model)
    request = _instance("What is 5 - 38?", 0, 3)
    request.arguments[1]["seed"] = 7
    before = len(server.requests)
    model.generate_until([request] * 3, disable_tqdm=True)
    assert [r["seed"] for r in server.requests[before:]] == [7, cli.repeat_seed(7, "arith", 1),
                                                              cli.repeat_seed(7, "arith", 2)]


def test_repeat_seeds_of_runs_with_different_seeds_do_not_overlap():
    """``seed + r`` made runs with seeds 7 and 8 share 7 of 8 samples on every problem."""
    seven = {cli.repeat_seed(7, "arith", r) for r in range(64)}
    eight = {cli.repeat_seed(8, "arith", r) for r in range(64)}
    assert len(seven) == len(eight) == 64 and seven & eight == set()
    assert {cli.repeat_seed(7, "other", r) for r in range(1, 64)} & seven == set()
    assert all(0 <= seed < 2**31 for seed in seven | eight)


# ------------------------------------------------------------------------------------ guards


def _task(repeats=1, do_sample=False, filters=None, filter_list=None, process_results=None):
    config = SimpleNamespace(repeats=repeats, generation_kwargs={"do_sample": do_sample, "temperature": 0.0},
                             filter_list=filter_list, process_results=process_results,
                             metric_list=[{"metric": "exact_match", "ignore_case": True}])

    def set_config(key, value):
        setattr(config, key, value)

    return SimpleNamespace(OUTPUT_TYPE="generate_until", config=config, set_config=set_config,
                           eval_docs=[{"id": 0, "topic": "a"}],
                           _filters=filters or [build_filter_ensemble("none", [["take_first", None]])])


def _state(specs="pass@1,4", **options):
    options.setdefault("allow_greedy", True)  # _task() decodes greedily; the greedy stop has tests of its own
    return cli._RunState(options=cli.KpassOptions(metrics=specs, **options),
                         specs=kpass.parse_metric_specs(specs) if specs else [])


def test_use_cache_is_refused_when_the_repeats_would_share_one_cached_generation(server, tmp_path):
    cached = CachingLM(_model(server), str(tmp_path / "cache.db"))
    with pytest.raises(cli.KpassUsageError, match=r"--use_cache with tasks \['greedy'\], which do not sample"):
        cli._prepare(_state(), cached, {"tasks": {"greedy": _task()}}, None)
    state = _state()
    cli._prepare(state, cached, {"tasks": {"sampled": _task(do_sample=True)}}, None)
    assert [(t.name, t.repeats, t.original_repeats) for t in state.tasks] == [("sampled", 4, 1)]


def test_prepare_sets_repeats_and_lets_the_task_pipelines_see_the_first_responses(server):
    task, other = _task(), SimpleNamespace(OUTPUT_TYPE="multiple_choice")
    state = _state("pass@1,8", samples=None)
    cli._prepare(state, _model(server), {"tasks": {"gen": task, "mc": other}}, None)
    assert task.config.repeats == 8 and [t.name for t in state.tasks] == ["gen"]
    (ensemble,) = task._filters
    assert isinstance(ensemble, FilterEnsemble) and len(ensemble.filters) == 2
    holder = SimpleNamespace(resps=["first", "second"], doc={}, filtered_resps={})
    ensemble.apply([holder])
    assert holder.filtered_resps["none"] == "first"


def test_prepare_checks_task_names_and_the_cluster_field(server):
    with pytest.raises(cli.KpassUsageError, match=r"--kpass-tasks names \['nope'\]"):
        cli._prepare(_state(tasks=["nope"]), _model(server), {"tasks": {"gen": _task()}}, None)
    with pytest.raises(cli.KpassUsageError, match=r"--kpass-tasks \['mc'\]: only generate_until tasks"):
        cli._prepare(_state(tasks=["mc"]), _model(server),
                     {"tasks": {"mc": SimpleNamespace(OUTPUT_TYPE="multiple_choice")}}, None)
    with pytest.raises(cli.KpassUsageError, match=r"--kpass-cluster-by 'passage': documents of task gen have no "
                                                  r"such field; fields: \['id', 'topic'\]"):
        cli._prepare(_state(cluster_by="passage"), _model(server), {"tasks": {"gen": _task()}}, None)


def test_without_kpass_only_tasks_that_repeat_themselves_are_watched(server):
    single, repeated = _task(), _task(repeats=4, do_sample=True)
    state = _state(None)
    cli._prepare(state, _model(server), {"tasks": {"single": single, "repeated": repeated}}, None)
    assert [(t.name, t.repeats) for t in state.tasks] == [("repeated", 4)]
    assert single.config.repeats == 1 and repeated.config.repeats == 4


# ------------------------------------------------------------------------------------ outputs


def test_the_generation_limit_comes_from_the_task_then_the_model_then_lm_eval(server, tmp_path):
    task = _task()
    task.config.generation_kwargs["max_gen_toks"] = 48
    assert cli._max_gen_toks(task, _model(server), "gen") == 48
    del task.config.generation_kwargs["max_gen_toks"]
    model = _model(server)
    assert cli._max_gen_toks(task, model, "gen") == model._max_gen_toks == 256   # TemplateAPI's default
    model._max_gen_toks = 100   # what model_args max_gen_toks=100 sets
    assert cli._max_gen_toks(task, CachingLM(model, str(tmp_path / "cache.db")), "gen") == 100
    assert cli._max_gen_toks(task, SimpleNamespace(), "gen") == 256
    task.config.generation_kwargs["max_gen_toks"] = "many"
    with pytest.raises(kpass.DataError, match=r"task 'gen': max_gen_toks in generation_kwargs is 'many'"):
        cli._max_gen_toks(task, model, "gen")


def _tracker(directory):
    return SimpleNamespace(output_path=str(directory), date_id="2025-01-01T00-00-00.0",
                           general_config_tracker=SimpleNamespace(model_name_sanitized="fake"))


def test_kpass_files_are_written_through_a_unique_temporary_file(tmp_path):
    table = kpass.SampleTable.from_records(
        [{"model": "m", "task": "t", "problem_id": "p", "sample_index": i, "correct": i == 0} for i in range(2)],
        source="x")
    state = _state("pass@1")
    state.results, state.table = {"metrics": ["pass@1"]}, table
    model_dir = tmp_path / "fake"
    model_dir.mkdir()
    # something already sits where a fixed ".tmp" name would go (another run writing, a stale file)
    (model_dir / "kpass_2025-01-01T00-00-00.0.json.tmp").mkdir()
    (model_dir / "kpass_samples_2025-01-01T00-00-00.0.jsonl.tmp").write_text("another writer's data")
    written = cli._write_files(state, _tracker(tmp_path))
    assert [path.name for path in written] == ["kpass_2025-01-01T00-00-00.0.json",
                                               "kpass_samples_2025-01-01T00-00-00.0.jsonl"]
    assert json.loads(written[0].read_text()) == {"metrics": ["pass@1"]}
    assert kpass.read_samples([written[1]]).to_records() == table.to_records()
    assert (model_dir / "kpass_samples_2025-01-01T00-00-00.0.jsonl.tmp").read_text() == "another writer's data"
    assert sorted(p.name for p in model_dir.iterdir() if p.name.startswith(".kpass-")) == []  # no leftovers


REGEX_STEP = {"function": "regex", "regex_pattern": r"The answer is (\-?[0-9]+)"}
PIPELINES = [{"name": "strict-match", "filter": [REGEX_STEP, {"function": "take_first"}]},
             {"name": "flexible-extract", "filter": [{"function": "regex", "regex_pattern": r"(-?[0-9]+)",
                                                     "group_select": -1}, {"function": "take_first"}]}]


@pytest.mark.parametrize("options, specs, message", [
    ({"filters": ["nope"]}, "pass@1", r"--kpass-filter nope: no task of this run has that pipeline"),
    ({"filters": ["gen:nope"]}, "pass@1", r"--kpass-filter gen:nope: task gen has pipelines \['strict-match', "),
    ({"filters": ["other:strict-match"]}, "pass@1", r"--kpass-filter other:strict-match: no generation task 'other'"),
    ({"filters": ["strict-match"]}, "pass@1", r"task raw has none of them .*name its own with raw:PIPELINE"),
    ({"metric": "f1"}, "pass@1", r"--kpass-metric f1: task gen scores with \['exact_match'\]"),
    ({"samples": 4}, "pass@1,8", r"--kpass-samples 4 is fewer than pass@8 needs \(8 per problem\)"),
    ({}, "cons@4", r"cons@4 vote over each sample's final answer, and no answer extractor is known for task raw "
                   r"\(pipeline none: raw generations\); name one with --kpass-answer"),
])
def test_flags_are_checked_before_the_first_request(server, options, specs, message):
    tasks = {"gen": _task(filter_list=PIPELINES), "raw": _task()}
    before = len(server.requests)
    with pytest.raises(cli.KpassUsageError, match=message):
        cli._prepare(_state(specs, **options), _model(server), {"tasks": tasks}, None)
    assert len(server.requests) == before and tasks["gen"].config.repeats == 1


def test_per_task_filters_answer_extractors_and_the_moved_maj_note(server):
    from kpass import resolve_answer_extractor

    sc = _task(repeats=4, do_sample=True, filter_list=[
        {"name": "score-first", "filter": [REGEX_STEP, {"function": "take_first"}]},
        {"name": "maj@4", "filter": [REGEX_STEP, {"function": "majority_vote"}, {"function": "take_first"}]}])
    tasks = {"gen": _task(filter_list=PIPELINES), "raw": _task(), "sc": sc}
    state = _state("pass@1 cons@4", filters=["gen:flexible-extract", "raw:none", "sc:score-first", "sc:maj@4"])
    state.answer = resolve_answer_extractor("regex:(-?[0-9]+)")
    cli._prepare(state, _model(server), {"tasks": tasks}, None)
    runs = {run.name: run for run in state.tasks}
    assert [p.name for p in runs["gen"].pipelines] == ["flexible-extract"]
    assert [p.name for p in runs["sc"].pipelines] == ["score-first"]  # maj@4 is score-first without selection
    assert runs["raw"].extractors["none"][0] == "regex:(-?[0-9]+)"
    assert any("pipelines maj@4 score every sample as 'score-first'" in w for w in state.warnings)
    assert any("lm-eval's own numbers for task sc (pipelines maj@4: majority_vote over its 4 repeats)" in w
               for w in state.warnings)
    # without --kpass-answer, a regex pipeline votes over its own normalised answers
    state = _state("cons@4")
    cli._prepare(state, _model(server), {"tasks": {"gen": _task(filter_list=PIPELINES)}}, None)
    assert state.tasks[0].extractors["strict-match"][0] == "filter:strict-match+exact_match"
    assert state.tasks[0].extractors["strict-match"][1](" The answer is 7.", "AbC") == "abc"  # ignore_case


def test_group_rows_pool_subtasks_with_the_subtask_as_cluster():
    from kpass.adapters.lm_eval_samples import ScoredDocuments, sample_columns, sample_pipelines

    (pipeline,) = sample_pipelines(None)
    tables = []
    for name, verdicts in (("a", [[True, False], [True, True]]), ("b", [[False, False], [True, False]]),
                           ("c", [[True, True]])):
        columns, _ = sample_columns(model="m", task=name, pipeline=pipeline, doc_fields=False,
                                    scored=ScoredDocuments(doc_ids=list(range(len(verdicts))), docs=[{}] * len(verdicts), targets=["x"] * len(verdicts),
                                                           answers=[["x", "y"]] * len(verdicts), verdicts=verdicts))
        tables.append(kpass.SampleTable.from_columns(columns, source=name))
    table = kpass.SampleTable.concat(tables)
    table.task_groups = cli._group_map({"group_map": {"grp": ["a", "b", "c"], "other": ["zzz"]}})
    report = kpass.compute_report(table, "pass@1", rng=0)
    row = report.row("pass@1", task="grp")
    assert row.n_problems == 5 and row.n_clusters == 3
    assert row.estimate == pytest.approx((0.5 + 1 + 0 + 0.5 + 1) / 5)
    assert any(note.kind == "task-groups" and note.rows == ("grp",)
               and note.text.startswith("problems of a, b, c pooled, each subtask one cluster") for note in report.notes)
    assert "other: none of its subtasks (zzz) has samples here; no group row" in _texts(report.notes)
    assert [r.task for r in report.rows] == ["a", "b", "c", "grp"]
