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


# --------------------------------------------------------------------------- issue #34: JSON, resps, budget


def test_duplicate_key_in_a_sample_line_is_refused_naming_line_and_key(tmp_path):
    write_results(tmp_path / "m", [{"function": "regex", "regex_pattern": r"(\d+)"}], ["1", "2"], logged=1.0)
    samples = next((tmp_path / "m").glob("samples_*.jsonl"))
    line = samples.read_text()
    samples.write_text(line.replace('"exact_match": 1.0', '"exact_match": 0, "exact_match": 1.0'))
    with pytest.raises(kpass.DataError) as error:
        read_lm_eval_output(tmp_path / "m")
    message = str(error.value)
    assert str(samples) in message and "line 1" in message and "field 'exact_match'" in message
    assert "duplicate key 'exact_match'" in message


def test_duplicate_key_in_a_results_file_is_refused(tmp_path):
    path = write_results(tmp_path / "m", [{"function": "regex", "regex_pattern": r"(\d+)"}], ["1", "2"])
    path.write_text(path.read_text().replace('"repeats": 2', '"repeats": 1, "repeats": 2'))
    with pytest.raises(kpass.DataError, match="duplicate key 'repeats'") as error:
        read_lm_eval_output(tmp_path / "m")
    assert str(path) in str(error.value)


def test_resps_nested_one_level_deeper_is_refused_naming_line_and_field(tmp_path):
    write_results(tmp_path / "m", [{"function": "regex", "regex_pattern": r"(\d+)"}], ["1", "2"])
    samples = next((tmp_path / "m").glob("samples_*.jsonl"))
    record = json.loads(samples.read_text())
    record["resps"] = [[["1", "2"]]]
    samples.write_text(json.dumps(record) + "\n")
    with pytest.raises(kpass.DataError) as error:
        read_lm_eval_output(tmp_path / "m")
    message = str(error.value)
    assert str(samples) in message and "line 1" in message and "field 'resps'" in message
    assert "generation 1 is list" in message


def test_bytes_that_are_not_utf8_are_named_with_file_and_line(tmp_path):
    write_results(tmp_path / "m", [{"function": "regex", "regex_pattern": r"(\d+)"}], ["1", "2"])
    samples = next((tmp_path / "m").glob("samples_*.jsonl"))
    record = json.loads(samples.read_text())
    second = dict(record, doc_id=1)
    samples.write_bytes((json.dumps(record) + "\n").encode() + json.dumps(second).encode().replace(b'"Q"', b'"\xff"')
                        + b"\n")
    with pytest.raises(kpass.DataError) as error:
        read_lm_eval_output(tmp_path / "m")
    message = str(error.value)
    assert str(samples) in message and "line 2" in message and "not UTF-8 text: byte 0xff at column" in message


@pytest.mark.timeout(120)
def test_a_pattern_slow_on_every_generation_stops_at_the_run_budget(tmp_path):
    # 0.1 s per generation, well under the 2 s per call: only a budget for the whole run stops it
    path = write_results(tmp_path / "m", [{"function": "regex", "regex_pattern": "(?:x|xx)+y"}], ["x" * 24] * 40)
    started = time.monotonic()
    with patterns.regex_budget(0.5), pytest.raises(kpass.DataError) as error:
        read_lm_eval_output(tmp_path / "m")
    assert time.monotonic() - started < 3  # not 40 x 0.1 s
    message = str(error.value)
    assert str(path) in message and "'(?:x|xx)+y'" in message
    assert "time budget" in message and "0.5 s" in message and "--regex-budget" in message
    assert "KPASS_REGEX_BUDGET" in message


def test_the_run_budget_is_an_option_of_every_reading_command(tmp_path, capsys, monkeypatch):
    from kpass.cli import main

    monkeypatch.setattr(patterns, "_PROCESS_BUDGET", None)  # the run's budget starts here, and is restored
    path = write_results(tmp_path / "m", [{"function": "regex", "regex_pattern": "(?:x|xx)+y"}], ["x" * 24] * 40)
    code = main(["report", str(tmp_path / "m"), "--no-progress", "--regex-budget", "0.5"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert f"kpass: data error: {path}" in err and "(0.5 s, --regex-budget 0.5)" in err
    assert main(["report", str(tmp_path / "m"), "--regex-budget", "0"]) == 2
    assert "argument --regex-budget: the regular-expression time budget is a number of seconds > 0; got '0'" in \
        capsys.readouterr().err


def test_bytes_that_are_not_utf8_in_a_results_file_are_named_not_taken_for_another_file(tmp_path, capsys):
    from kpass.cli import main

    path = write_results(tmp_path / "m", [{"function": "regex", "regex_pattern": r"(\d+)"}], ["1", "2"])
    path.write_bytes(path.read_bytes().replace(b'"arith"', b'"ar\xffith"', 1))
    for given in (tmp_path / "m", path):
        assert main(["report", str(given), "--no-progress"]) == 1
        err = capsys.readouterr().err
        assert f"kpass: data error: {path}, line 1: not UTF-8 text: byte 0xff at column 17 (invalid start byte)" in err
