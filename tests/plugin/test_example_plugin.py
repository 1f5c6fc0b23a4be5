"""The worked plugin example of docs/plugins.md, really installed: ``pip install`` of the distribution in
``kpass_example_plugin/`` into a temporary directory, then the real ``kpass`` command with that
directory on PYTHONPATH discovers it through its ``kpass`` entry point."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from kpass import metrics as core

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
KPASS = pathlib.Path(sys.executable).with_name("kpass")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    target = tmp_path_factory.mktemp("site")
    build = tmp_path_factory.mktemp("build")
    source = build / "kpass_example_plugin"
    # build from a copy so that no build/ or egg-info lands in the repository
    subprocess.run(["cp", "-r", str(HERE / "kpass_example_plugin"), str(source)], check=True)
    completed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "--target", str(target), str(source)],
        capture_output=True, text=True, timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    assert (target / "kpass_example_plugin" / "__init__.py").is_file()
    (dist_info,) = target.glob("kpass_example_plugin-*.dist-info")
    assert "example = kpass_example_plugin" in (dist_info / "entry_points.txt").read_text()
    return target


def run(installed, *args, pinned=None):
    env = {k: v for k, v in os.environ.items() if k not in ("KPASS_LOAD_PLUGINS", "PYTHONPATH")}
    env["PYTHONPATH"] = str(installed)
    if pinned is not None:
        env["KPASS_LOAD_PLUGINS"] = pinned
    return subprocess.run([str(KPASS), *map(str, args)], capture_output=True, text=True, env=env, timeout=120)


def write_tsv(path, rows):
    header = ["model", "task", "problem_id", "sample_index", "correct"]
    path.write_text("\t".join(header) + "\n" + "".join("\t".join(map(str, row)) + "\n" for row in rows))


def test_plugin_metric_and_reader_work_in_specs_and_reports(installed, tmp_path):
    rows = []
    n = {"p0": 2, "p1": 3, "p2": 1}  # ragged; pass-wr@k needs only one sample
    c = {"p0": 1, "p1": 0, "p2": 1}
    for pid in n:
        for s in range(n[pid]):
            rows.append(("m", "t", pid, s, "true" if s < c[pid] else "false"))
    path = tmp_path / "samples.tsv"
    write_tsv(path, rows)
    completed = run(installed, "report", path, "-m", "PASS-WR@1,4", "pass@2", "--method", "t", "-f", "json")
    assert completed.returncode == 0, completed.stderr
    data = json.loads(completed.stdout)
    rows_by_metric = {row["metric"]: row for row in data["rows"]}
    expected = core.biased_plugin_pass_at_k([2, 3, 1], [1, 0, 1], 4)
    assert rows_by_metric["pass-wr@4"]["estimate"] == pytest.approx(expected.mean(), abs=1e-12)
    assert rows_by_metric["pass-wr@4"]["n_problems"] == 3
    assert rows_by_metric["pass@2"]["n_problems"] == 2  # the built-in still excludes p2 (n = 1 < 2)
    assert data["exclusions"][0]["problem_ids"] == ["p2"]

    listed = run(installed, "metrics", pinned="example")
    assert listed.returncode == 0 and "pass-wr@k" in listed.stdout and "[example]" in listed.stdout
    plugins = run(installed, "plugins", pinned="kpass-example-plugin")  # pinned by distribution name
    assert "example: metric pass-wr@k, reader tsv" in plugins.stdout


def test_plugin_not_loaded_when_pinned_out(installed, tmp_path):
    path = tmp_path / "samples.tsv"
    write_tsv(path, [("m", "t", "p0", 0, "true")])
    completed = run(installed, "report", path, "-m", "pass@1", pinned="")
    assert completed.returncode == 1 and "no reader recognises this file" in completed.stderr
    jsonl = tmp_path / "samples.jsonl"
    jsonl.write_text(json.dumps({"model": "m", "task": "t", "problem_id": "p", "sample_index": 0, "correct": True}) + "\n")
    completed = run(installed, "report", jsonl, "-m", "pass-wr@1", pinned="")
    assert completed.returncode == 2 and "unknown metric 'pass-wr@'" in completed.stderr


def test_plugin_reader_errors_name_file_and_line(installed, tmp_path):
    path = tmp_path / "bad.tsv"
    write_tsv(path, [("m", "t", "p0", 0, "true"), ("m", "t", "p0", 1, "perhaps")])
    completed = run(installed, "report", path)
    assert completed.returncode == 1
    assert f"{path}, line 3, field 'correct': `correct` must be true/false" in completed.stderr


def test_duplicate_name_from_an_installed_plugin_names_both(installed, tmp_path):
    # a second distribution registering the same metric name as the example plugin
    clash = tmp_path / "kpass_clash"
    (clash / "kpass_clash").mkdir(parents=True)
    (clash / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "kpass-clash"\nversion = "0.1.0"\n'
        '[project.entry-points.kpass]\nclash = "kpass_clash"\n[tool.setuptools]\npackages = ["kpass_clash"]\n')
    (clash / "kpass_clash" / "__init__.py").write_text(
        "import kpass\n\n"
        "class Copy(kpass.MetricFamily):\n    symbol = 'copy@'\n\n"
        "@kpass.hookimpl\ndef register_metrics(register):\n    register('pass-wr@k', Copy())\n")
    target = tmp_path / "site2"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "--target", str(target), str(clash)], check=True, capture_output=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k != "KPASS_LOAD_PLUGINS"}
    env["PYTHONPATH"] = os.pathsep.join([str(installed), str(target)])
    env["KPASS_LOAD_PLUGINS"] = "example,clash"
    completed = subprocess.run([str(KPASS), "metrics"], capture_output=True, text=True, env=env, timeout=120)
    assert completed.returncode == 1
    message = completed.stderr
    assert "metric name 'pass-wr@k' is registered by two plugins" in message
    assert "'example'" in message and "'clash'" in message


def test_example_plugin_source_is_the_readme_example():
    readme = (REPO / "docs" / "plugins.md").read_text()
    source = (HERE / "kpass_example_plugin" / "kpass_example_plugin" / "__init__.py").read_text()
    start = source.index("class PassWithReplacement")
    assert source[start:].strip() in readme
    assert np.isfinite(core.biased_plugin_pass_at_k([1], [1], 4)).all()
