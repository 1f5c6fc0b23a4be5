"""No traceback at run time (#34 point 5) and bounded work (point 4): Ctrl-C, closed or full
stdout, a broken pipe, FIFO and device inputs, Spark without Java, hostile option values, and
the core's allocations bounded in k and n. The CLI cases run the real ``kpass`` in a subprocess."""

from __future__ import annotations

import json
import os
import pathlib
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import kpass.metrics as core

KPASS = [sys.executable, "-m", "kpass.cli"]
EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "sample_tables" / "two_models.jsonl"


def _env(**extra):
    return {**os.environ, "KPASS_LOAD_PLUGINS": "", **extra}


def _run(*args, timeout=120, **kwargs):
    return subprocess.run([*KPASS, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=_env(),
                          **kwargs)


def _one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def _big_jsonl(path: pathlib.Path, n_problems: int) -> pathlib.Path:
    rng = random.Random(0)
    with path.open("w") as handle:
        for model in ("a", "b"):
            for j in range(n_problems):
                handle.write("".join(json.dumps({"model": model, "task": "t", "problem_id": f"p{j}", "sample_index": s,
                                                 "correct": rng.random() < 0.5}) + "\n" for s in range(8)))
    return path


@pytest.mark.slow
def test_ctrl_c_during_the_duckdb_reduction_is_one_line_exit_130_and_leaves_no_temporaries(tmp_path):
    data = _big_jsonl(tmp_path / "big.jsonl", 150_000)  # 2.4M lines: the reduction runs for seconds
    spill = tmp_path / "spill"
    outputs = tmp_path / "out"
    outputs.mkdir()
    process = subprocess.Popen([*KPASS, "report", str(data), "--engine", "duckdb", "--memory-limit", "64MB",
                                "--temp-dir", str(spill), "-m", "pass@1,8", "-o", str(outputs / "report.md")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(4)  # past the imports and the argument checks: DuckDB is reading
    assert process.poll() is None, "the run ended before the interrupt: make the input bigger"
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert _one_line(err) == "kpass: interrupted"
    assert list(outputs.iterdir()) == []  # neither the report nor its temporary file
    assert not spill.exists() or list(spill.iterdir()) == []  # DuckDB's spill files removed with the connection


@pytest.mark.parametrize("shell", ["{kpass} report {data} >&-", "{kpass} report {data} > /dev/full"])
def test_closed_or_full_stdout_is_one_line_exit_1(shell):
    command = shell.format(kpass=" ".join(KPASS), data=EXAMPLE)
    result = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120, env=_env())
    assert result.returncode == 1, result.stderr
    line = _one_line(result.stderr)
    assert line.startswith("kpass report: error: cannot write") and "stdout" in line, line


def test_a_reader_that_goes_away_ends_the_run_quietly():
    """``kpass report x | head -1``: the reader is gone when kpass writes (here it never reads),
    so every write meets a broken pipe: exit 141 (128 + SIGPIPE) and nothing on stderr."""
    process = subprocess.Popen([*KPASS, "report", str(EXAMPLE)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=_env())
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 141 and err == "", err


def test_fifo_device_and_socket_inputs_are_refused_before_anything_is_opened(tmp_path):
    fifo = tmp_path / "samples.jsonl"
    os.mkfifo(fifo)
    result = _run("report", fifo, timeout=30)  # opened twice (sniff, then read) it blocked for ever
    assert result.returncode == 2
    assert _one_line(result.stderr) == (f"kpass report: error: input {fifo} is a named pipe (FIFO), not a regular "
                                        "file: kpass opens an input more than once and reads it whole; save it to a "
                                        "file first")
    zero = tmp_path / "zero.jsonl"
    zero.symlink_to("/dev/zero")  # read for ever before
    result = _run("report", zero, timeout=30)
    assert result.returncode == 2 and "is a character device, not a regular file" in _one_line(result.stderr)
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "a.jsonl").write_text(EXAMPLE.read_text())
    os.mkfifo(folder / "b.jsonl")
    result = _run("report", folder, timeout=30)
    assert result.returncode == 2 and f"({folder / 'b.jsonl'}) is a named pipe" in _one_line(result.stderr)


def test_spark_without_java_is_one_line_exit_1(tmp_path):
    result = subprocess.run([*KPASS, "report", str(EXAMPLE), "--engine", "spark", "--temp-dir", str(tmp_path / "t")],
                            capture_output=True, text=True, timeout=120,
                            env={k: v for k, v in _env(PATH=str(tmp_path)).items() if k != "JAVA_HOME"})
    assert result.returncode == 1
    assert _one_line(result.stderr) == ("kpass: engine error: the spark engine needs Java 17 or later: no java on PATH "
                                        "and JAVA_HOME is not set (or use --engine duckdb)")
    assert not (tmp_path / "t").exists() or list((tmp_path / "t").iterdir()) == []


@pytest.mark.parametrize("args, message", [
    (["report", EXAMPLE, "--memory-limit", "abc"], "argument --memory-limit: expected a size such as 4GB"),
    (["report", EXAMPLE, "--memory-limit", "0"], "argument --memory-limit: expected a size such as 4GB"),
    (["report", EXAMPLE, "--memory-limit", "1KB"], "argument --memory-limit: expected a size from 16MiB"),
    (["report", EXAMPLE, "--memory-limit", "99999999999TB"], "argument --memory-limit: expected a size from 16MiB"),
    (["report", EXAMPLE, "--n-resamples", str(10**12)], "--n-resamples must be at most 10000000 (every replicate is kept)"),
    (["leaderboard", EXAMPLE, "--n-resamples", "9" * 30], "--n-resamples must be at most 10000000 (every replicate"),
    (["leaderboard", EXAMPLE, "--n-resamples", "9" * 31], "argument --n-resamples: expected an integer of at most 30"),
    (["power", "--between-variance", "0.1", "--effect", "1e-300"], "`minimum_effect` 1e-300 is too small to plan"),
    (["power", "--between-variance", "1e308", "--effect", "0.1"], "argument --between-variance: a variance of a "
                                                                    "difference of two probabilities"),
    (["power", "--between-variance", "0.1", "--within-variance-a", "0.3", "--effect", "0.1"],
     "argument --within-variance-a: a variance of a 0/1 outcome, p(1-p), lies in [0, 0.25]; got '0.3'"),
    (["power", "--between-variance", "nan", "--effect", "0.1"], "argument --between-variance: expected a variance"),
    (["power", "--between-variance", "0.1", "--samples-a", "1e-300", "--effect", "0.1"], "argument --samples-a"),
    (["power", "--between-variance", "0.1", "--problems", "1" + "0" * 400], "argument --problems: expected a positive "
                                                                           "integer of at most 9007199254740991"),
])
def test_hostile_option_values_are_one_line_exit_2(run_cli, args, message):
    code, out, err = run_cli(*args)
    assert code == 2 and out == "", err
    assert "Traceback" not in err and message in err.splitlines()[-1], err


@pytest.mark.slow
def test_every_option_of_every_subcommand_survives_hostile_values(run_cli):
    """The audit of #34: each option of each subcommand given each hostile value is a result or
    one error line (exit 1 or 2), never an exception out of ``main``."""
    import argparse

    from kpass.cli.main import build_parser

    inputs = {"report": [EXAMPLE], "compare": [EXAMPLE], "power": ["--between-variance", "0.02", "--effect", "0.1"],
              "decompose": [EXAMPLE, "--baseline", "base"], "crossover": [EXAMPLE, "--baseline", "base"]}
    skip = {"help", "output", "plot", "temp_dir", "include_path", "extend", "tokenizer", "approximate_tokenizer",
            "n_resamples", "effect", "problems"}  # paths are test_bad_input_outputs'; huge resamples run long
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    tried = 0
    for name, base in inputs.items():
        for action in subparsers.choices[name]._actions:
            if not action.option_strings or action.nargs == 0 or action.dest in skip:
                continue
            for value in ("", "0", "-1", "nan", "inf", "1e309", "99999999999999999999999", "\ud800"):
                code, _, err = run_cli(name, *base, action.option_strings[-1], value)
                assert code in (0, 1, 2) and "Traceback" not in err, (name, action.option_strings, value, err)
                assert code == 0 or any(line.startswith("kpass") for line in err.splitlines()), (name, action.option_strings, value, code, err)
                tried += 1
    assert tried > 150


def test_core_allocations_are_bounded_in_k_and_n():
    """Counts of 10^9 samples: G-Pass@k in constant memory, the others refuse with the bound."""
    import resource

    limit = resource.getrlimit(resource.RLIMIT_AS)
    # with 1 GiB of address space above what is mapped now, an O(k) buffer of 8 GB cannot hide
    mapped = int(open("/proc/self/statm").read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (mapped + (1 << 30), limit[1]))
    try:
        assert core.g_pass_at_k([10**9], [5 * 10**8], 10**9, tau=0.5)[0] == 1.0  # X = c exactly when k = n
        half = core.g_pass_at_k([2 * 10**9], [10**9], 10**8, tau=[0.3, 0.5, 0.7])[0]
        assert half[0] == 1.0 and half[2] == 0.0 and 0.5 < half[1] < 0.5001
        assert core.cons_at_k([[10**9, 10**9]], 3)[0] == pytest.approx(0.5, abs=1e-12)  # two equal classes: a coin
        with pytest.raises(ValueError, match=r"`k` must be at most 1048576 for mG-Pass@k"):
            core.mg_pass_at_k([10**9], [5 * 10**8], 10**9)
        with pytest.raises(ValueError, match=r"`k` must be at most 65536 for cons@k"):
            core.cons_at_k([[10**9, 10**9]], 10**9)
        with pytest.raises(ValueError, match=r"`k_max` defaults to the smallest number of samples \(1000000000\)"):
            core.pass_at_k_crossover([10**9] * 3, [5, 1, 2], [10**9] * 3, [3, 3, 4], n_resamples=10)
        with pytest.raises(ValueError, match=r"`n_resamples` must be at most 10000000"):
            core.mean_ci([0.1, 0.5, 0.3, 0.9], n_resamples=10**12, method="bootstrap")
    finally:
        resource.setrlimit(resource.RLIMIT_AS, limit)


def test_stirling_remainders_on_demand_equal_the_table():
    from kpass.metrics import _consensus

    table = _consensus._stirling_remainders(5000)
    counts = np.array([0, 1, 9, 10, 11, 4999, 5000])
    assert np.array_equal(_consensus._RemaindersOnDemand()[counts], table[counts])
    small = core.cons_at_k([[7, 5, 3], [2, 2, 0]], [1, 3])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_consensus, "_TABLE_MAX", 0)
        assert np.array_equal(core.cons_at_k([[7, 5, 3], [2, 2, 0]], [1, 3]), small)


def test_power_core_refuses_what_overflows():
    with pytest.raises(ValueError, match="too small to plan for"):
        core.required_problems(1e-300, between_variance=0.1)
    with pytest.raises(ValueError, match="overflows"):
        core.required_problems(0.1, between_variance=1e308, within_variance_a=1e308)
    with pytest.raises(ValueError, match="`n_problems` must be finite"):
        core.minimum_detectable_effect(10**400, between_variance=0.1)
    assert core.required_problems(0.03, between_variance=0.02) == 175  # unchanged


def test_a_lone_surrogate_in_a_name_with_plot_is_drawn_escaped(run_cli, tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps({"model": "a\ud800b", "task": "t", "problem_id": f"p{j}", "sample_index": s,
                                        "correct": (j + s) % 2 == 0}) + "\n" for j in range(3) for s in range(2)))
    code, out, err = run_cli("report", path, "--plot", tmp_path / "p.svg", "-f", "csv")
    assert code == 0 and "Traceback" not in err, err
    assert "a\\ud800b" in out and "a\\ud800b" in (tmp_path / "p.svg").read_text()


def test_spark_whose_jvm_is_killed_mid_run_is_one_kpass_line_exit_1_and_leaves_no_temporaries(tmp_path):
    data = _big_jsonl(tmp_path / "big.jsonl", 25_000)
    scratch = tmp_path / "scratch"
    process = subprocess.Popen([*KPASS, "report", str(data), "--engine", "spark", "--temp-dir", str(scratch)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    deadline = time.monotonic() + 120
    java = None
    while java is None and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
        for child in pathlib.Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split():
            if "java" in pathlib.Path(f"/proc/{child}/cmdline").read_text():
                java = int(child)
    assert java is not None, "no JVM started"
    while not list(scratch.glob("kpass-spark-local-*/blockmgr-*")) and time.monotonic() < deadline:
        time.sleep(0.2)  # the session is up: Spark has made its block manager's directory
    os.kill(java, signal.SIGKILL)
    _, err = process.communicate(timeout=180)
    assert process.returncode == 1, err
    # the JVM's own stderr goes to jvm.log in the scratch directory: the terminal gets kpass's line only
    assert _one_line(err).startswith("kpass: engine error: Spark stopped "), err  # while starting or reducing
    assert list(scratch.iterdir()) == []  # Spark's scratch files and kpass's Parquet directory removed


def test_a_data_error_on_spark_is_one_line_without_the_jvm_notices(tmp_path):
    line = {"model": "a", "task": "t", "problem_id": "p", "sample_index": 0, "correct": True, "answer": "x"}
    data = tmp_path / "dup.jsonl"
    data.write_text(json.dumps(line) + "\n" + json.dumps(line) + "\n")  # a sample twice
    result = _run("report", data, "--engine", "spark", "--temp-dir", tmp_path / "scratch", timeout=300)
    assert result.returncode == 1, result.stderr
    assert _one_line(result.stderr).startswith(f"kpass: data error: {data}, line 2, field 'sample_index': duplicate"), \
        result.stderr  # no "Using Spark's default log4j profile", no WARN lines, no PySpark FutureWarning
    assert list((tmp_path / "scratch").iterdir()) == []
