"""Fuzz suite, adapters (issue #15, item 6): mutated lm-eval output (results JSON, samples JSONL)
and mutated real Inspect logs (``.json`` and ``.eval`` from one real ``inspect eval`` run) give
a table or a kpass error, never another exception, never a hang; and Inspect usage data with
``output_tokens`` of 1e30 is a data error naming the file and field (item 4)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kpass
from kpass.host.lookups import read_samples

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugin"))
from fuzzing import FUZZ, assert_table_or_kpass_error, mutated

FIXTURES = Path(__file__).resolve().parent / "inspect_fixtures"
BIN = Path(sys.executable).parent
DATE = "2026-12-01T10-00-00.000000"
pytestmark = pytest.mark.timeout(600)


def lm_eval_run() -> tuple[bytes, bytes]:
    """(results JSON, samples JSONL) of one small lm-eval run of task ``arith`` (two docs, K=2)."""
    config = {"task": "arith", "output_type": "generate_until", "repeats": 2,
              "metric_list": [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": True}],
              "filter_list": [{"name": "strict", "filter": [{"function": "regex", "regex_pattern": r"is (\d+)"},
                                                            {"function": "take_first"}]}]}
    results = {"results": {"arith": {"alias": "arith"}}, "configs": {"arith": config},
               "config": {"model": "local-completions", "model_args": {"model": "m"}}, "model_name": "m",
               "lm_eval_version": "0.4.13"}
    lines = []
    for doc_id, (target, resps) in enumerate([("1", ["is 1", "is 2"]), ("2", ["no", "is 2"])]):
        first = "[invalid]" if doc_id == 1 else "1"
        lines.append({"doc_id": doc_id, "doc": {"q": doc_id}, "target": target, "arguments": {"gen_args_0": {}},
                      "resps": [resps], "filtered_resps": [first], "filter": "strict", "metrics": ["exact_match"],
                      "doc_hash": "h", "prompt_hash": "p", "target_hash": "t",
                      "exact_match": float(first == target)})
    return json.dumps(results).encode(), "".join(json.dumps(line) + "\n" for line in lines).encode()


RESULTS, SAMPLES = lm_eval_run()


def read_lm_eval(results: bytes, samples: bytes):
    directory = tempfile.mkdtemp(prefix="kpass-fuzz-")
    try:
        Path(directory, f"results_{DATE}.json").write_bytes(results)
        Path(directory, f"samples_arith_{DATE}.jsonl").write_bytes(samples)
        return read_samples(directory)
    finally:
        shutil.rmtree(directory)


def test_the_lm_eval_seed_is_valid():
    assert len(read_lm_eval(RESULTS, SAMPLES)) == 4


@FUZZ
@given(mutated(RESULTS))
def test_mutated_lm_eval_results(results):
    assert_table_or_kpass_error(read_lm_eval, results, SAMPLES)


@FUZZ
@given(mutated(SAMPLES))
def test_mutated_lm_eval_samples(samples):
    assert_table_or_kpass_error(read_lm_eval, RESULTS, samples)


@pytest.fixture(scope="module")
def inspect_logs(tmp_path_factory) -> dict[str, bytes]:
    """One real ``inspect eval`` of the budget fixture task, as ``.eval`` and (rewritten by Inspect's
    own ``write_eval_log``) as ``.json``."""
    from inspect_ai.log import read_eval_log, write_eval_log

    env = {k: v for k, v in os.environ.items() if not k.startswith("INSPECT_")}
    env.pop("KPASS_LOAD_PLUGINS", None)
    log_dir = tmp_path_factory.mktemp("inspect_logs")
    completed = subprocess.run([str(BIN / "inspect"), "eval", "kpass_budget_task.py@budget_plain",
                                "--log-dir", str(log_dir), "--display", "none", "--log-format", "eval"],
                               cwd=FIXTURES, env=env, capture_output=True, text=True, timeout=600)
    found = sorted(log_dir.glob("*.eval"))
    assert len(found) == 1, (completed.stdout[-2000:], completed.stderr[-2000:])
    json_path = log_dir / "log.json"
    write_eval_log(read_eval_log(str(found[0])), str(json_path), format="json")
    return {"eval": found[0].read_bytes(), "json": json_path.read_bytes()}


def read_log(data: bytes, suffix: str):
    directory = tempfile.mkdtemp(prefix="kpass-fuzz-")
    try:
        path = Path(directory, "log" + suffix)
        path.write_bytes(data)
        return read_samples(path)
    finally:
        shutil.rmtree(directory)


def test_inspect_usage_output_tokens_of_1e30_is_a_data_error(inspect_logs):
    log = json.loads(inspect_logs["json"])
    usage = next(sample for sample in log["samples"] if sample.get("output", {}).get("usage"))
    usage["output"]["usage"]["output_tokens"] = 10**30
    for sample in log["samples"]:  # the reader takes the final generation's usage
        for event in sample.get("events", []):
            if event.get("event") == "model" and event.get("output", {}).get("usage"):
                event["output"]["usage"]["output_tokens"] = 10**30
    with pytest.raises(kpass.DataError) as error:
        read_log(json.dumps(log).encode(), ".json")
    message = str(error.value)
    print(message)
    assert "log.json" in message and "field 'output_tokens'" in message and "at most" in message


def test_the_inspect_seeds_are_valid(inspect_logs):
    assert len(read_log(inspect_logs["json"], ".json")) == len(read_log(inspect_logs["eval"], ".eval")) > 0


@settings(FUZZ, max_examples=40)
@given(st.data())
def test_mutated_inspect_logs(inspect_logs, data):
    # edits to the first 8 KB of each real log (the header, the eval spec, the first samples of
    # the .json; the zip directory entries and first members of the .eval), the rest unchanged
    for suffix, seed in ((".json", inspect_logs["json"]), (".eval", inspect_logs["eval"])):
        edited = data.draw(mutated(seed[:8192], max_edits=3)) + seed[8192:]
        assert_table_or_kpass_error(read_log, edited, suffix)
