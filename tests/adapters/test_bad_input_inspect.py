"""Hostile and damaged Inspect logs (issue #34): one line naming the file, the member or sample and
the field, exit 1 (bad data) or 2 (a bad option), never a traceback, a silent guess or a hang.

One real ``inspect eval`` run of the budget fixture task (6 samples x 4 epochs, ``mockllm`` with
``usage=ModelUsage(...)``) gives the ``.eval`` (zstd members, as Inspect 0.3.285 writes them) and,
through Inspect's own ``write_eval_log``, the ``.json`` log; every test edits a copy one way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

import kpass
from kpass.adapters.inspect_reader import records_from_log
from kpass.cli import main

FIXTURES = Path(__file__).resolve().parent / "inspect_fixtures"
BIN = Path(sys.executable).parent
ZSTD = 93  # zip method of Inspect's members
EDITED = "samples/b2_epoch_3.json"


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, Path]:
    from inspect_ai.log import read_eval_log, write_eval_log

    env = {k: v for k, v in os.environ.items() if not k.startswith(("INSPECT_", "KPASS_"))}
    log_dir = tmp_path_factory.mktemp("inspect_bad_input")
    completed = subprocess.run([str(BIN / "inspect"), "eval", "kpass_budget_task.py@budget_plain",
                                "--log-dir", str(log_dir), "--display", "none", "--log-format", "eval"],
                               cwd=FIXTURES, env=env, capture_output=True, text=True, timeout=600)
    (found,) = sorted(log_dir.glob("*.eval")) or [None]
    assert found is not None, (completed.stdout[-2000:], completed.stderr[-2000:])
    json_path = log_dir / "log.json"
    write_eval_log(read_eval_log(str(found)), str(json_path), format="json")
    return {"eval": found, "json": json_path}


def rewrite(source: Path, target: Path, edit: Callable[[str, bytes], bytes] | None = None,
            method: Callable[[int, str], int] | None = None) -> Path:
    """A copy of an ``.eval`` with each member's bytes passed through ``edit`` and compressed with
    ``method(position, name)`` (default: as in the source)."""
    import zipfile_zstd  # noqa: F401  (Inspect's zstd members)

    with zipfile.ZipFile(source) as archive, zipfile.ZipFile(target, "w") as out:
        for position, info in enumerate(archive.infolist()):
            data = archive.read(info)
            data = edit(info.filename, data) if edit else data
            out.writestr(info.filename, data, compress_type=method(position, info.filename) if method else info.compress_type)
    return target


def edit_json(member: str, change: Callable[[dict], None]) -> Callable[[str, bytes], bytes]:
    def edit(name: str, data: bytes) -> bytes:
        if name != member:
            return data
        value = json.loads(data)
        change(value)
        return json.dumps(value).encode()

    return edit


def one_line_data_error(capsys, path: Path, *extra: str) -> str:
    code = main(["report", str(path), "--no-progress", "--n-resamples", "50", *extra])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"kpass: data error: {path}"), err
    return err


def report_json(path: Path, env: dict[str, str] | None = None) -> dict:
    """``kpass report --format json`` in a fresh interpreter (no zstd module imported by a test)."""
    completed = subprocess.run([str(BIN / "kpass"), "report", str(path), "--format", "json", "--no-progress",
                                "--n-resamples", "50", "--seed", "1"], capture_output=True, text=True, timeout=300,
                               env={**{k: v for k, v in os.environ.items() if not k.startswith("KPASS_")},
                                    **(env or {})})
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


# ------------------------------------------------------------------------------ duplicate JSON keys


def test_a_duplicate_key_in_an_eval_score_is_refused_naming_the_member(logs, tmp_path, capsys):
    def twice(name: str, data: bytes) -> bytes:
        if name != EDITED:
            return data
        text = data.decode()
        at = text.index('"value":')
        return (text[:at] + '"value": "I", ' + text[at:]).encode()

    err = one_line_data_error(capsys, rewrite(logs["eval"], tmp_path / "dup.eval", twice))
    assert f"member {EDITED}: invalid JSON: duplicate key 'value'" in err and "field 'value'" in err


def test_a_duplicate_key_in_the_header_is_refused(logs, tmp_path, capsys):
    def twice(name: str, data: bytes) -> bytes:
        return data.replace(b'"status":', b'"status": "error", "status":', 1) if name == "header.json" else data

    err = one_line_data_error(capsys, rewrite(logs["eval"], tmp_path / "dup.eval", twice))
    assert "member header.json: invalid JSON: duplicate key 'status'" in err


def test_a_duplicate_key_in_a_json_log_is_refused(logs, tmp_path, capsys):
    text = logs["json"].read_text()
    at = text.index('"value":', text.index('"samples":'))
    path = tmp_path / "dup.json"
    path.write_text(text[:at] + '"value": "I", ' + text[at:])
    err = one_line_data_error(capsys, path)
    assert "the log: invalid JSON: duplicate key 'value'" in err


# ------------------------------------------------------------------------------ field types


@pytest.mark.parametrize("value, shown", [(2.7, "a number 2.7"), (True, "a boolean True"), (-3, "a number -3"),
                                          ("12", "a string '12'")])
def test_token_counts_are_integers(logs, tmp_path, capsys, value, shown):
    path = rewrite(logs["eval"], tmp_path / "tokens.eval",
                   edit_json(EDITED, lambda s: s["output"]["usage"].__setitem__("output_tokens", value)))
    err = one_line_data_error(capsys, path)
    assert f"field 'output.usage.output_tokens': sample id 'b2' epoch 3 ({EDITED}): {shown} where Inspect writes an " \
           "integer >= 0" in err


def test_a_whole_float_token_count_is_read_as_inspect_reads_it(logs, tmp_path):
    original = {(r["problem_id"], r["sample_index"]): r["output_tokens"] for r in kpass.read_samples([logs["eval"]]).to_records()}
    path = rewrite(logs["eval"], tmp_path / "float.eval", edit_json(
        EDITED, lambda s: s["output"]["usage"].__setitem__("output_tokens", float(s["output"]["usage"]["output_tokens"]))))
    assert {(r["problem_id"], r["sample_index"]): r["output_tokens"]
            for r in kpass.read_samples([path]).to_records()} == original


@pytest.mark.parametrize("field, value, shown", [
    ("model", ["a"], "an array ['a'] where Inspect writes a non-empty string"),
    ("task", {"a": 1}, "an object {'a': 1} where Inspect writes a non-empty string"),
    ("eval_id", [1], "an array [1] where Inspect writes a string"),
    ("config", "x", "a string 'x' where Inspect writes an object"),
])
def test_header_fields_of_the_wrong_type_are_one_line(logs, tmp_path, capsys, field, value, shown):
    path = rewrite(logs["eval"], tmp_path / "header.eval", edit_json("header.json", lambda h: h["eval"].__setitem__(field, value)))
    err = one_line_data_error(capsys, path)
    assert f"field 'eval.{field}': header.json: {shown}" in err


def test_a_status_of_the_wrong_type_in_a_json_log_is_one_line(logs, tmp_path, capsys):
    data = json.loads(logs["json"].read_text())
    data["status"] = {"done": True}
    path = tmp_path / "status.json"
    path.write_text(json.dumps(data))
    err = one_line_data_error(capsys, path)
    assert "field 'status': the log: an object {'done': True} where Inspect writes a string" in err


@pytest.mark.parametrize("change, field, shown", [
    (lambda s: s.__setitem__("epoch", "3"), "epoch", "a string '3'"),
    (lambda s: s.__setitem__("scores", [1]), "scores", "an array [1]"),
    (lambda s: s["scores"].__setitem__("match", 1), "scores.match", "a number 1"),
    (lambda s: s.__setitem__("metadata", "m"), "metadata", "a string 'm'"),
    (lambda s: s.__setitem__("target", 5), "target", "a number 5"),
    (lambda s: s.__setitem__("output", []), "output", "an array []"),
    (lambda s: s["output"].__setitem__("choices", {}), "output.choices", "an object {}"),
    (lambda s: s["output"]["choices"][0].__setitem__("stop_reason", 7), "output.choices[0].stop_reason", "a number 7"),
    (lambda s: s["output"].__setitem__("completion", ["x"]), "output.completion", "an array ['x']"),
])
def test_sample_fields_of_the_wrong_type_name_the_sample_and_the_field(logs, tmp_path, capsys, change, field, shown):
    err = one_line_data_error(capsys, rewrite(logs["eval"], tmp_path / "sample.eval", edit_json(EDITED, change)))
    assert f"field '{field}': sample id 'b2' epoch " in err and f"({EDITED}): {shown} where Inspect writes" in err


def test_a_sample_id_of_the_wrong_type_names_the_sample_by_its_place(logs, tmp_path, capsys):
    data = json.loads(logs["json"].read_text())
    data["samples"][2]["id"] = {"x": 1}
    path = tmp_path / "id.json"
    path.write_text(json.dumps(data))
    err = one_line_data_error(capsys, path)
    assert "field 'id': sample samples[2]: an object {'x': 1} where Inspect writes a string or an integer" in err


# ------------------------------------------------------------------------------ compression and sizes


def test_an_eval_with_deflated_and_zstd_members_is_read(logs, tmp_path):
    mixed = rewrite(logs["eval"], tmp_path / "mixed.eval", method=lambda position, _: zipfile.ZIP_DEFLATED
                    if position == 0 else ZSTD)
    with zipfile.ZipFile(mixed) as archive:
        assert [info.compress_type for info in archive.infolist()][:2] == [zipfile.ZIP_DEFLATED, ZSTD]
    assert report_json(mixed)["rows"] == report_json(logs["eval"])["rows"]


def test_a_member_larger_than_the_limit_is_refused_before_it_is_decompressed(logs, tmp_path, capsys, monkeypatch):
    def padded(name: str, data: bytes) -> bytes:  # 8 MiB of blanks: a few KiB compressed
        return data[:-1] + b" " * (8 << 20) + data[-1:] if name == EDITED else data

    path = rewrite(logs["eval"], tmp_path / "bomb.eval", padded)
    assert path.stat().st_size < 200_000
    monkeypatch.setenv("KPASS_MAX_MEMBER_SIZE", "4MiB")
    err = one_line_data_error(capsys, path)
    assert (f"member {EDITED} holds more than 4 MiB once decompressed, the largest member kpass reads; if the log is "
            "trusted, raise the limit: --max-member-size SIZE or KPASS_MAX_MEMBER_SIZE=SIZE") in err
    monkeypatch.setenv("KPASS_MAX_MEMBER_SIZE", "16MiB")
    assert len(kpass.read_samples([path])) == 24
    with pytest.raises(kpass.DataError, match="holds more than 1 MiB"):
        records_from_log(path, max_member_size="1MiB")
    assert len(records_from_log(path, max_member_size=16 << 20)) == 24


@pytest.mark.parametrize("value", ["lots", "0", "-1GiB", "2XB"])
def test_a_bad_member_limit_is_a_usage_error(logs, monkeypatch, capsys, value):
    monkeypatch.setenv("KPASS_MAX_MEMBER_SIZE", value)
    code = main(["report", str(logs["eval"]), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "KPASS_MAX_MEMBER_SIZE: the largest member of an Inspect .eval log to read: expected a size" in err
    assert "Traceback" not in err


def test_bytes_that_are_not_utf8_name_the_member(logs, tmp_path, capsys):
    def broken(name: str, data: bytes) -> bytes:
        return data.replace(b'"b2"', b'"b\xff"', 1) if name == EDITED else data

    err = one_line_data_error(capsys, rewrite(logs["eval"], tmp_path / "utf8.eval", broken))
    assert f"member {EDITED}: not UTF-8 text: byte 0xff at line 1, column " in err and "(invalid start byte)" in err


# ------------------------------------------------------------------------------ declared counts


@pytest.mark.timeout(60)
@pytest.mark.parametrize("change, announced", [
    (lambda h: h["eval"]["config"].__setitem__("epochs", 10**12), "6000000000000 sample(s) (6 x 1000000000000 epochs)"),
    (lambda h: (h["eval"]["dataset"].pop("sample_ids"), h["eval"]["dataset"].__setitem__("samples", 10**12)),
     "4000000000000 sample(s) (1000000000000 x 4 epochs)"),
])
def test_declared_counts_far_above_what_the_log_holds_cost_nothing(logs, tmp_path, change, announced):
    path = rewrite(logs["eval"], tmp_path / "claims.eval", edit_json("header.json", change))
    started = time.monotonic()
    with pytest.warns(UserWarning, match="announces"):
        table = kpass.read_samples([path])
    assert time.monotonic() - started < 10
    assert len(table) == 24
    (note,) = [note for note in table.notes if "announces" in note]
    assert f"the header announces {announced} and the log holds 24" in note


@pytest.mark.parametrize("epochs", [2.5, True, 0, "4"])
def test_declared_epochs_of_the_wrong_type_are_refused(logs, tmp_path, capsys, epochs):
    path = rewrite(logs["eval"], tmp_path / "epochs.eval",
                   edit_json("header.json", lambda h: h["eval"]["config"].__setitem__("epochs", epochs)))
    err = one_line_data_error(capsys, path)
    assert "field 'eval.config.epochs': header.json:" in err and "where Inspect writes an integer >= 1" in err


def test_the_member_limit_is_an_option(logs, tmp_path, capsys):
    def padded(name: str, data: bytes) -> bytes:
        return data[:-1] + b" " * (8 << 20) + data[-1:] if name == EDITED else data

    path = rewrite(logs["eval"], tmp_path / "bomb.eval", padded)
    err = one_line_data_error(capsys, path, "--max-member-size", "4MiB")
    assert f"member {EDITED} holds more than 4 MiB once decompressed" in err
    assert main(["report", str(path), "--no-progress", "--n-resamples", "50", "--max-member-size", "16MiB"]) == 0
    capsys.readouterr()
    assert main(["report", str(path), "--max-member-size", "lots"]) == 2
    assert "argument --max-member-size: expected a size such as 2GiB" in capsys.readouterr().err


def test_bytes_that_are_not_utf8_in_a_json_log_name_the_file_and_line(logs, tmp_path, capsys):
    text = json.dumps(json.loads(logs["json"].read_text()), indent=1).encode()
    path = tmp_path / "utf8.json"
    path.write_bytes(text.replace(b'"b3"', b'"b\xff"', 1))
    line = text[:text.index(b'"b3"')].count(b"\n") + 1
    err = one_line_data_error(capsys, path)
    assert f"the log: not UTF-8 text: byte 0xff at line {line}, column " in err
