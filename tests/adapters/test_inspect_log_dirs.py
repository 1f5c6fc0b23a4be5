"""Inspect inputs as Inspect users give them: log directories, quoted globs, shards, chunked samples.

Real ``inspect eval`` runs (module fixture) of ``inspect_fixtures/kpass_logdir_task.py``: the task
for two mock models (3 epochs each), and model A's run again as two shards (``--sample-id``, the
way a shard launcher runs them; Inspect 0.3.285 reads shard sets but writes none itself). The
tree a user's ``--log-dir`` would hold is then laid out: model A's full run as the merged log with
its ``<name>.shards/0/`` (two attempts) and ``1/`` beside it, model B's log two directories deeper,
and files that are not logs. The chunked per-sample layout is made by Inspect 0.3.285's own
(hidden) ``inspect log convert-chunked``, the only writer of it in that version.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from inspect_ai.log import list_eval_logs, read_eval_log, read_eval_log_sample, read_eval_log_sample_summaries
from inspect_ai.log._file import without_merged_shards

import kpass
from kpass import DataError
from kpass.adapters.inspect_reader import InspectLogReader
from kpass.cli import main

FIXTURES = Path(__file__).resolve().parent / "inspect_fixtures"
sys.path.insert(0, str(FIXTURES))
import kpass_logdir_task as fx

BIN = Path(sys.executable).parent
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _texts(notes):
    """Notes (``kpass.Note`` or their JSON records) as ``rows: text`` lines, to search in."""
    from kpass.notes import as_note

    return [str(as_note(note)) for note in notes]



def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INSPECT_", "KPASS_"))}
    env["COLUMNS"] = "1000"
    return env


def _inspect(*argv: str, cwd: Path = FIXTURES) -> subprocess.Popen:
    return subprocess.Popen([str(BIN / "inspect"), *argv], cwd=cwd, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _only_log(directory: Path) -> Path:
    (log,) = directory.glob("*.eval")
    return log


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("inspect_log_dirs")
    common = ["--display", "plain"]
    runs = {
        "full": _inspect("eval", "kpass_logdir_task.py@logdir_a", "kpass_logdir_task.py@logdir_b", "--max-tasks", "2",
                         "--log-dir", str(work / "full"), *common),
        "shard0": _inspect("eval", "kpass_logdir_task.py@logdir_a", "--sample-id", ",".join(fx.IDS[:4]),
                           "--log-dir", str(work / "shard0"), *common),
        "shard1": _inspect("eval", "kpass_logdir_task.py@logdir_a", "--sample-id", ",".join(fx.IDS[4:]),
                           "--log-dir", str(work / "shard1"), *common),
    }
    output = {name: process.communicate(timeout=600)[0] for name, process in runs.items()}
    by_model = {read_eval_log(str(p), header_only=True).eval.model: p for p in (work / "full").glob("*.eval")}
    assert set(by_model) == {"mockllm/model-a", "mockllm/model-b"}, output
    root = work / "logs"
    merged = root / "nested" / "a" / by_model["mockllm/model-a"].name
    shards = merged.with_suffix(".shards")
    model_b = root / "deeper" / "x" / "y" / by_model["mockllm/model-b"].name
    shard0, shard1 = _only_log(work / "shard0"), _only_log(work / "shard1")
    earlier = shards / "0" / ("2000-01-01T00-00-00-00-00" + shard0.name[25:])  # an earlier attempt of shard 0
    for source, target in [(by_model["mockllm/model-a"], merged), (by_model["mockllm/model-b"], model_b),
                           (shard0, shards / "0" / shard0.name), (shard1, shards / "1" / shard1.name),
                           (shard0, earlier)]:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)
    (root / "README.txt").write_text("notes about these runs\n")
    (root / "logs.json").write_text("{}\n")
    now = time.time()
    for path in (shards / "0" / shard0.name, shards / "1" / shard1.name, earlier):
        os.utime(path, (now - 100, now - 100))
    os.utime(merged, (now, now))  # the merge was written after every shard
    for header in (read_eval_log(str(p), header_only=True) for p in (merged, model_b, shard0, shard1)):
        assert header.status == "success"
    return {"root": root, "merged": merged, "shards": shards, "b": model_b, "earlier": earlier,
            "attempts": [shards / "0" / shard0.name, shards / "1" / shard1.name]}


def _without_run(table) -> list[dict]:
    """Records sorted by model, problem and sample, without the ``run`` column (a log's name)."""
    records = [{k: v for k, v in record.items() if k != "run"} for record in table.to_records()]
    return sorted(records, key=lambda r: (r["model"], r["problem_id"], r["sample_index"]))


def _one_by_one(*logs: Path) -> list[dict]:
    records = [record for log in logs for record in _without_run(kpass.read_samples([log]))]
    return sorted(records, key=lambda r: (r["model"], r["problem_id"], r["sample_index"]))


def _expected_counts() -> dict[tuple[str, str], tuple[int, int]]:
    return {(f"mockllm/model-{variant}", pid): (fx.EPOCHS, sum(fx.correct(variant, p, e)
                                                              for e in range(1, fx.EPOCHS + 1)))
            for variant in "ab" for p, pid in enumerate(fx.IDS, start=1)}


def _counts(table) -> dict[tuple[str, str], tuple[int, int]]:
    n, c = Counter(), Counter()
    for record in table.to_records():
        key = (record["model"], record["problem_id"])
        n[key] += 1
        c[key] += record["correct"]
    return {key: (n[key], c[key]) for key in n}


def _local(name: str) -> str:
    return os.path.realpath(name.removeprefix("file://"))


# --------------------------------------------------------------------------- log directories


def test_a_directory_reads_the_logs_inspect_lists_each_sample_once(tree):
    table = kpass.read_samples([tree["root"]])
    assert _counts(table) == _expected_counts()  # 3 epochs per problem: no shard sample counted again
    assert _without_run(table) == _one_by_one(tree["merged"], tree["b"])
    notes = "\n".join(table.notes)
    assert f"{tree['merged']}: read this merged log, not the 2 shard log(s) in {tree['shards']}" in notes
    assert "1 file(s) that are not shard logs to read (earlier attempts" in notes and tree["earlier"].name in notes
    assert "left out 2 file(s) that Inspect's log listing does not show" in notes
    assert "README.txt" in notes and "logs.json" in notes
    # the same logs `inspect view --log-dir` shows: Inspect's listing with the merged shards hidden
    paths, _ = InspectLogReader().expand([str(tree["root"])])
    shown = without_merged_shards(list_eval_logs(str(tree["root"])))
    assert {_local(p) for p in paths} == {_local(info.name) for info in shown} == {
        _local(str(tree["merged"])), _local(str(tree["b"]))}


def test_shards_written_after_the_merged_log_are_read_instead_as_one_run(tree, tmp_path):
    root = tmp_path / "logs"
    shutil.copytree(tree["root"], root)
    merged = root / tree["merged"].relative_to(tree["root"])
    later = root / tree["attempts"][1].relative_to(tree["root"])
    os.utime(merged, (time.time() - 50, time.time() - 50))
    os.utime(later, (time.time(), time.time()))  # shard 1 ran again after the merge
    # Inspect's view then lists the merged log and the shards together; kpass reads one of them
    shown = {_local(info.name) for info in without_merged_shards(list_eval_logs(str(root)))}
    assert _local(str(merged)) in shown and _local(str(later)) in shown
    table = kpass.read_samples([root])
    assert _counts(table) == _expected_counts()
    assert _without_run(table) == _one_by_one(tree["merged"], tree["b"])
    assert set(table.column("run")) == {merged.with_suffix(".shards").name, tree["b"].name}
    (note,) = [note for note in table.notes if "as one run" in note]
    assert "read its 2 shard log(s) as one run, not the merged log" in note and "a shard was written after it" in note


def test_a_shards_directory_is_one_run_and_a_sample_in_two_shards_is_an_error(tree, tmp_path):
    table = kpass.read_samples([tree["shards"]])
    assert _without_run(table) == _one_by_one(tree["merged"])
    assert set(table.column("run")) == {tree["shards"].name}
    shards = tmp_path / tree["shards"].name
    shutil.copytree(tree["shards"], shards)
    (shards / "2").mkdir()
    shutil.copy(tree["attempts"][0], shards / "2" / tree["attempts"][0].name)
    with pytest.raises(DataError, match=r"sample id 'q01' epoch 1 appears twice: in 0/.*\.eval:samples/q01_epoch_1"
                                        r"\.json and in 2/.*\.eval:samples/q01_epoch_1\.json"):
        kpass.read_samples([shards])


def test_a_directory_without_any_inspect_log_is_refused_naming_what_it_holds(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("x")
    with pytest.raises(DataError, match="is a directory that no reader recognises"):
        kpass.read_samples([tmp_path / "empty"])


# ---------------------------------------------------------------------------------- globs and CLI


def _cli(capsys, *argv: str) -> tuple[int, dict | str]:
    code = main([*argv, "--format", "json", "--no-progress"])
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if code == 0 else captured.err)


def test_quoted_globs_read_what_the_directory_reads(tree, capsys):
    root = tree["root"]
    rows = {}
    for given in ([str(root)], [f"{root}/**/*.eval"], [str(tree["merged"]), str(tree["b"])]):
        code, out = _cli(capsys, "report", *given, "-m", "pass@1,2", "--n-resamples", "200")
        assert code == 0, out
        rows[given[0]] = sorted(out["rows"], key=lambda row: (row["model"], row["metric"]))
    assert rows[str(root)] == rows[f"{root}/**/*.eval"] == rows[str(tree["merged"])]
    code, out = _cli(capsys, "report", f"{root}/nested/a/*.eval", "-m", "pass@1", "--n-resamples", "200")
    assert code == 0 and {row["model"] for row in out["rows"]} == {"mockllm/model-a"}
    code, out = _cli(capsys, "report", f"{root}/nowhere/*.eval")
    assert code == 2 and "no file matches" in out


def test_report_compare_and_leaderboard_take_the_directory(tree, capsys):
    expected = _expected_counts()
    pass1 = {model: sum(c for (m, _), (n, c) in expected.items() if m == model) / (fx.N_PROBLEMS * fx.EPOCHS)
             for model in ("mockllm/model-a", "mockllm/model-b")}
    code, out = _cli(capsys, "report", str(tree["root"]), "-m", "pass@1", "--n-resamples", "200")
    assert code == 0, out
    assert {row["model"]: row["estimate"] for row in out["rows"]} == pytest.approx(pass1, abs=1e-12)
    assert any("read this merged log" in note for note in _texts(out["notes"]))
    code, out = _cli(capsys, "compare", str(tree["root"]), "--baseline", "mockllm/model-a", "-m", "pass@1",
                     "--n-resamples", "200")
    assert code == 0, out
    (row,) = out["rows"]
    assert row["estimate"] == pytest.approx(pass1["mockllm/model-b"] - pass1["mockllm/model-a"], abs=1e-12)
    assert row["n_problems"] == fx.N_PROBLEMS
    code, out = _cli(capsys, "leaderboard", str(tree["root"]), "-m", "pass@1", "--n-resamples", "200")
    assert code == 0, out
    assert json.dumps(out).count("mockllm/model-b") >= 1 and json.dumps(out).count("mockllm/model-a") >= 1


# --------------------------------------------------------------------------- the chunked layout


def test_the_chunked_sample_layout_is_read_as_the_monolith(tree, tmp_path):
    completed = subprocess.run([str(BIN / "inspect"), "log", "convert-chunked", str(tree["merged"]), "--output-dir",
                                str(tmp_path / "chunked")], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                               timeout=300)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    chunked = tmp_path / "chunked" / tree["merged"].name
    with zipfile.ZipFile(chunked) as archive:
        names = set(archive.namelist())
    assert {"samples/q01_epoch_1/sample.json", "samples/q01_epoch_1/metadata.json",
            "samples/q01_epoch_1/messages/0.json"} <= names
    assert not any(name.startswith("samples/") and name.count("/") == 1 for name in names)
    # Inspect 0.3.285 reads only the summaries of such a log; its sample readers look for monoliths
    with pytest.raises(IndexError):
        read_eval_log_sample(str(chunked), "q01", 1)
    summaries = {(s.id, s.epoch): s for s in read_eval_log_sample_summaries(str(chunked))}
    table = kpass.read_samples([chunked])
    assert table.to_records() == kpass.read_samples([tree["merged"]]).to_records()
    for record in table.to_records():
        summary = summaries[(record["problem_id"], record["metadata"]["epoch"])]
        assert record["correct"] == (summary.scores["match"].value == "C")
    assert _counts(kpass.read_samples([tmp_path / "chunked"])) == {
        key: value for key, value in _expected_counts().items() if key[0] == "mockllm/model-a"}


def test_an_unknown_sample_layout_is_refused_in_one_line(tree, tmp_path):
    source = tmp_path / "source"
    subprocess.run([str(BIN / "inspect"), "log", "convert-chunked", str(tree["merged"]), "--output-dir", str(source)],
                   cwd=tmp_path, env=_env(), capture_output=True, timeout=300, check=True)
    import zipfile_zstd  # noqa: F401  (Inspect's zstd members)

    edited = tmp_path / "future.eval"
    with zipfile.ZipFile(source / tree["merged"].name) as archive, zipfile.ZipFile(edited, "w") as out:
        for info in archive.infolist():
            name = info.filename.replace("/sample.json", "/shell.v2.json")
            out.writestr(name, archive.read(info))
    with pytest.raises(DataError) as raised:
        kpass.read_samples([edited])
    message = str(raised.value)
    assert "future.eval" in message and "layout kpass does not know" in message and "\n" not in message
    assert "samples/q01_epoch_1/shell.v2.json" in message
