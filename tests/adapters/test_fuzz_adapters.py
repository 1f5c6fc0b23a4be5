"""Fuzz suite, adapters (issue #15, item 6; issue #34, point 6): mutated real lm-eval output and
mutated real Inspect logs give a table or a kpass error, never another exception, never a hang,
both read in-process and through ``kpass report`` at the command line (the one-line-error
contract of docs/bad-input.md: exit 0, 1 or 2, no traceback, a failure one line on stderr naming
the file); and Inspect usage data with ``output_tokens`` of 1e30 is a data error naming the file
and field (item 4).

Seeds, all real files:

- lm-eval: every layout kpass reads, from ``lm_eval_fixtures``: 0.3 ``--write_out`` (results and
  ``*_write_out_info.json``), a 0.3 results file alone, 0.4.0-0.4.2 (``results.json`` and a
  samples array), and ``fuzz_v0.4.13/``: the output of a real ``lm_eval`` 0.4.13 run
  (``local-completions`` against ``fake_openai_server.py``, task ``arith_gen`` with ``repeats: 4``,
  ``--limit 3 --log_samples``), plus a small synthetic 0.4.13 run; one file of a layout is mutated
  per example, the others left as they are;
- Inspect: ``inspect_fixtures/fuzz_seed/budget_plain.eval``, the log of a real ``inspect eval
  kpass_budget_task.py@budget_plain --log-format eval`` run (mockllm, zstd members), and the same
  log as ``.json`` written by Inspect's own ``write_eval_log``; byte mutations of both, and
  zip-level mutations of the ``.eval`` (:func:`fuzzing.zip_mutated`: a member's JSON mutated and
  written back stored, deflated or zstd; a member repeated; member sizes and compression methods
  overwritten; the central directory truncated; the end record's counts and offsets changed).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kpass
from kpass.host.lookups import read_samples

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugin"))
from fuzzing import (FUZZ, FUZZ_CLI, assert_one_line_contract, assert_table_or_kpass_error, json_mutated, mutated,
                     run_kpass, zip_mutated)

HERE = Path(__file__).resolve().parent
INSPECT_SEED = HERE / "inspect_fixtures" / "fuzz_seed" / "budget_plain.eval"
LM_EVAL_FIXTURES = HERE / "lm_eval_fixtures"
DATE = "2026-12-01T10-00-00.000000"
pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]  # slow: make test runs it, make check skips it


@pytest.fixture(scope="module", autouse=True)
def shipped_plugins_only():
    """The adapters' own entry points (lm_eval, inspect_ai) and no other installed plugin."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KPASS_LOAD_PLUGINS", "lm_eval,inspect_ai")
        kpass.reset_plugin_manager()
        yield
    kpass.reset_plugin_manager()


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
    """The real log of ``inspect eval kpass_budget_task.py@budget_plain`` as ``.eval`` and (written
    again by Inspect's own ``write_eval_log``) as ``.json``."""
    from inspect_ai.log import read_eval_log, write_eval_log

    json_path = tmp_path_factory.mktemp("inspect_logs") / "log.json"
    write_eval_log(read_eval_log(str(INSPECT_SEED)), str(json_path), format="json")
    return {"eval": INSPECT_SEED.read_bytes(), "json": json_path.read_bytes()}


@contextlib.contextmanager
def write_log(data: bytes, suffix: str):
    """A temporary ``log{suffix}`` holding ``data`` (in a ``kpass-fuzz-`` directory), removed afterwards."""
    directory = tempfile.mkdtemp(prefix="kpass-fuzz-")
    try:
        path = Path(directory, "log" + suffix)
        path.write_bytes(data)
        yield str(path)
    finally:
        shutil.rmtree(directory)


def read_log(data: bytes, suffix: str):
    with write_log(data, suffix) as path:
        return read_samples(path)


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


@settings(FUZZ, max_examples=40)
@given(json_mutated(SAMPLES))
def test_json_mutations_of_lm_eval_samples(samples):
    # typed edits (2.7 or true where a count belongs, a list where a string belongs, `resps`
    # nested deeper, a key repeated) of the small 0.4.13 run above
    assert_table_or_kpass_error(read_lm_eval, RESULTS, samples)


@settings(FUZZ, max_examples=40)
@given(st.data())
def test_json_mutations_of_an_inspect_json_log(inspect_logs, data):
    assert_table_or_kpass_error(read_log, data.draw(json_mutated(inspect_logs["json"])), ".json")


@settings(FUZZ, max_examples=60)
@given(st.data())
def test_zip_level_mutations_of_an_eval_log(data):
    assert_table_or_kpass_error(read_log, data.draw(zip_mutated(INSPECT_SEED.read_bytes())), ".eval")


# ----------------------------------------------------------------------------------------------
# every lm-eval layout, from real files (issue #34, point 6)


def _layout(*parts: str) -> dict[str, bytes]:
    directory = LM_EVAL_FIXTURES.joinpath(*parts)
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir()) if path.is_file()}


#: name -> the files of one lm-eval output directory, as each version lays it out
LM_EVAL_LAYOUTS = {
    "0.3 write_out": _layout("layouts", "v0.3", "write_out"),
    "0.3 results only": _layout("layouts", "v0.3", "results_only"),
    "0.4.0-0.4.2": _layout("layouts", "v0.4.2"),
    "0.4.13": _layout("fuzz_v0.4.13"),
}


def with_lm_eval_layout(files: dict[str, bytes], action):
    """``action(directory)`` on a temporary directory holding ``files``."""
    directory = tempfile.mkdtemp(prefix="kpass-fuzz-")
    try:
        for name, content in files.items():
            Path(directory, name).write_bytes(content)
        return action(directory)
    finally:
        shutil.rmtree(directory)


def test_the_lm_eval_layouts_are_valid_seeds():
    counts = {name: with_lm_eval_layout(files, lambda d: len(read_samples(d))) if name != "0.3 results only" else 0
              for name, files in LM_EVAL_LAYOUTS.items()}
    assert counts == {"0.3 write_out": 8, "0.3 results only": 0, "0.4.0-0.4.2": 128, "0.4.13": 24}
    with pytest.raises(kpass.DataError, match="aggregate metrics only"):  # refused in one line, by design
        with_lm_eval_layout(LM_EVAL_LAYOUTS["0.3 results only"], read_samples)


@st.composite
def mutated_layout(draw):
    """One lm-eval layout with one of its files mutated, as bytes or as JSON."""
    files = dict(LM_EVAL_LAYOUTS[draw(st.sampled_from(sorted(LM_EVAL_LAYOUTS)))])
    name = draw(st.sampled_from(sorted(files)))
    files[name] = draw(json_mutated(files[name]) if draw(st.booleans()) else mutated(files[name], max_edits=3))
    return files


@settings(FUZZ, max_examples=100)
@given(mutated_layout())
def test_mutated_lm_eval_layouts(files):
    with_lm_eval_layout(files, lambda directory: assert_table_or_kpass_error(read_samples, directory))


# ----------------------------------------------------------------------------------------------
# the same mutations through `kpass report` (issue #34, point 6)


def report_keeps_the_contract(path: str) -> None:
    assert_one_line_contract(run_kpass("report", path, "--n-resamples", "50", "--no-progress"), "kpass-fuzz-")


@settings(FUZZ_CLI, max_examples=40)
@given(mutated_layout())
def test_kpass_report_on_mutated_lm_eval_layouts(files):
    with_lm_eval_layout(files, report_keeps_the_contract)


@settings(FUZZ_CLI, max_examples=50)
@given(st.sampled_from(["bytes .json", "json .json", "bytes .eval", "zip .eval"]), st.data())
def test_kpass_report_on_mutated_inspect_logs(inspect_logs, kind, data):
    if kind == "zip .eval":
        edited, suffix = data.draw(zip_mutated(inspect_logs["eval"])), ".eval"
    elif kind == "json .json":
        edited, suffix = data.draw(json_mutated(inspect_logs["json"])), ".json"
    else:
        suffix = kind[-5:]
        seed = inspect_logs[suffix[1:]]
        edited = data.draw(mutated(seed[:8192], max_edits=3)) + seed[8192:]
    with write_log(edited, suffix) as path:
        report_keeps_the_contract(path)
