"""Hostile lm-eval results files (issue #15): a filter regex that would hang the reader is refused
or stopped, and a custom filter_fn stored as text is one clear error naming the task."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import kpass
from kpass.adapters.lm_eval_reader import read_lm_eval_output
from kpass.data import patterns

DATE = "2026-12-01T10-00-00.000000"


def write_results(directory: Path, steps: list[dict], generations: list[str], logged: float = 0.0) -> Path:
    """One lm-eval run of task ``arith`` whose only pipeline ``hostile`` runs ``steps``."""
    config = {"task": "arith", "output_type": "generate_until", "repeats": len(generations),
              "metric_list": [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": True}],
              "filter_list": [{"name": "hostile", "filter": [*steps, {"function": "take_first"}]}]}
    results = {"results": {"arith": {"alias": "arith"}}, "configs": {"arith": config},
               "config": {"model": "local-completions", "model_args": {"model": "m"}}, "model_name": "m",
               "lm_eval_version": "0.4.13"}
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"results_{DATE}.json"
    path.write_text(json.dumps(results))
    line = {"doc_id": 0, "doc": {"q": 1}, "target": "1", "arguments": {"gen_args_0": {"arg_0": "Q"}},
            "resps": [generations], "filtered_resps": ["[invalid]"], "filter": "hostile",
            "metrics": ["exact_match"], "doc_hash": "h", "prompt_hash": "p", "target_hash": "t", "exact_match": logged}
    (directory / f"samples_arith_{DATE}.jsonl").write_text(json.dumps(line) + "\n")
    return path


@pytest.mark.timeout(120)  # the old reader ran it for ever
def test_nested_quantifier_in_a_results_file_is_refused_before_it_runs(tmp_path):
    path = write_results(tmp_path / "m", [{"function": "regex", "regex_pattern": "(a+)+$"}], ["a" * 40 + "!"] * 2)
    started = time.monotonic()
    with pytest.raises(kpass.DataError) as error:
        read_lm_eval_output(tmp_path / "m")
    assert time.monotonic() - started < 60
    message = str(error.value)
    assert str(path) in message and "'(a+)+$'" in message and "task 'arith'" in message
    assert "nests unbounded quantifiers" in message


def test_a_slow_pattern_the_static_check_lets_through_is_stopped(tmp_path, monkeypatch):
    monkeypatch.setattr(patterns, "MATCH_TIMEOUT_SECONDS", 0.2)
    path = write_results(tmp_path / "m", [{"function": "regex", "regex_pattern": "(?:x|xx)+y"}], ["x" * 5000] * 2)
    with pytest.raises(kpass.DataError) as error:
        read_lm_eval_output(tmp_path / "m")
    message = str(error.value)
    assert str(path) in message and "'(?:x|xx)+y'" in message and "ran longer than 0.2 s" in message


def test_invalid_filter_pattern_names_file_and_pattern(tmp_path):
    path = write_results(tmp_path / "m", [{"function": "regex", "regex_pattern": "([0-9]"}], ["1"] * 2)
    with pytest.raises(kpass.DataError, match=r"invalid regular expression '\(\[0-9\]'") as error:
        read_lm_eval_output(tmp_path / "m")
    assert str(path) in str(error.value)


def test_custom_filter_fn_stored_as_text_names_the_task(tmp_path):
    path = write_results(tmp_path / "m", [{"function": "custom", "filter_fn": "<function my_filter at 0x7f>"}],
                         ["1"] * 2)
    with pytest.raises(kpass.DataError) as error:
        read_lm_eval_output(tmp_path / "m")
    message = str(error.value)
    assert str(path) in message and "task 'arith'" in message and "filter_fn" in message
    assert "not callable" not in message


def test_shipped_style_patterns_still_extract(tmp_path):
    write_results(tmp_path / "m", [{"function": "regex", "regex_pattern": r"#### (\-?[0-9\.\,]+)"}],
                  ["so #### 1", "#### 2"], logged=1.0)
    table = read_lm_eval_output(tmp_path / "m")
    assert table.column("correct").tolist() == [True, False]
