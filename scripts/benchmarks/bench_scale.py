"""Benchmark: kpass's engines side by side with DuckDB's own GROUP BY of the same files.

Every case runs in a fresh subprocess that prints its wall time and its peak resident set size
(``resource.getrusage(...).ru_maxrss``; for Spark the JVM's too, a child of the driver), so the
numbers of one case never include another's memory:

1. a 2M-row JSONL sample table: ``kpass report FILE -m pass@1 --method t`` (DuckDB engine, the
   default) against ``SELECT model, task, problem_id, count(*), sum(correct) ... GROUP BY`` of the
   same file in DuckDB; the ratio is printed with and without the interpreter start-up (the
   time of ``python -c "import kpass.cli"``, measured too). Targets: ratio <= 4, peak < 1 GiB;
2. a scaling table over Parquet datasets of 10^5 .. 10^8 rows (directories of part files,
   generated under ``$KPASS_BENCH_DIR``, default ``/tmp/kpass-bench``, never in the repository):
   kpass (DuckDB), DuckDB's GROUP BY, and kpass with ``--engine spark`` in local mode
   (``local[2]``) up to ``$KPASS_BENCH_SPARK_MAX`` rows (default 10^7). Target: 10^8 rows below
   4 GiB peak.

``--method t`` keeps the interval's own cost (a bootstrap is independent of the engine) out of
the comparison. Run ``python tests/benchmarks/bench_scale.py [--max-rows N]``; ``make bench``
runs it with the others. The 10^8 case takes minutes: run it once, in the background.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np

BENCH_DIR = pathlib.Path(os.environ.get("KPASS_BENCH_DIR", "/tmp/kpass-bench"))
SAMPLES = 32
PART_ROWS = 2_000_000
GIB = 1024**3

_MEASURE = r"""
import json, resource, sys, time
start = time.perf_counter()
exec(compile(sys.argv[1], "<case>", "exec"))
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
print("KPASS-BENCH " + json.dumps({"seconds": seconds, "peak": peak, "children_peak": children}))
"""


def _run(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; its in-process seconds, the wall time including
    start-up, and the peak RSS of the process (and of its children, e.g. Spark's JVM)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _MEASURE, code], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"benchmark case failed:\n{code}\n{done.stderr[-3000:]}")
    line = next(line for line in done.stdout.splitlines() if "KPASS-BENCH " in line)
    result = json.loads(line.split("KPASS-BENCH ", 1)[1])
    result["wall"] = wall
    return result


def _group_by_code(source: str) -> str:
    return (f"import duckdb; con = duckdb.connect(); con.execute('SET enable_progress_bar = false'); "
            f"con.execute(\"SELECT model, task, problem_id, count(*), "
            f"sum(CAST(correct AS INTEGER)) FROM {source} GROUP BY ALL\").fetchall()")


def _kpass_code(path: str, engine: str = "duckdb") -> str:
    argv = ["report", path, "-m", "pass@1", "--method", "t", "--engine", engine, "--no-progress",
            "--format", "json", "-o", "/dev/null"]
    return f"from kpass.cli import main\ncode = main({argv!r})\nassert code == 0, code"


def make_jsonl(path: pathlib.Path, n_rows: int) -> None:
    """``n_rows`` samples (2 models, 32 samples a problem, an answer and output_tokens each)."""
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    per_model = n_rows // 2 // SAMPLES
    temporary = path.with_suffix(".partial")
    with open(temporary, "w") as handle:
        for model in range(2):
            difficulty = rng.beta(0.6, 0.6, per_model)
            for start in range(0, per_model, 20_000):
                stop = min(start + 20_000, per_model)
                problem = np.repeat(np.arange(start, stop), SAMPLES)
                index = np.tile(np.arange(SAMPLES), stop - start)
                correct = rng.random(problem.size) < difficulty[problem]
                answer = np.where(correct, 42, rng.integers(0, 4, problem.size))
                lines = [f'{{"model": "model-{model}", "task": "math", "problem_id": "p{p:07d}", "sample_index": {s}, '
                         f'"correct": {"true" if c else "false"}, "answer": "{a}", "output_tokens": {100 + s}}}\n'
                         for p, s, c, a in zip(problem.tolist(), index.tolist(), correct.tolist(), answer.tolist())]
                handle.writelines(lines)
    temporary.rename(path)


def make_parquet(directory: pathlib.Path, n_rows: int) -> None:
    """A directory of Parquet parts of ``PART_ROWS`` rows: 4 models, 32 samples a problem."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    marker = directory / "_complete"
    if marker.exists():
        return
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    n_models = 4
    per_model = max(n_rows // n_models // SAMPLES, 1)
    problems_per_part = max(PART_ROWS // SAMPLES, 1)
    part = 0
    names = pa.array([f"p{i:08d}" for i in range(per_model)])
    for model in range(n_models):
        difficulty = rng.beta(0.6, 0.6, per_model).astype(np.float32)
        for start in range(0, per_model, problems_per_part):
            stop = min(start + problems_per_part, per_model)
            problem = np.repeat(np.arange(start, stop, dtype=np.int32), SAMPLES)
            table = pa.table({
                "model": pa.DictionaryArray.from_arrays(np.zeros(problem.size, np.int32), [f"model-{model}"]),
                "task": pa.DictionaryArray.from_arrays(np.zeros(problem.size, np.int32), ["math"]),
                "problem_id": pa.DictionaryArray.from_arrays(problem, names),
                "sample_index": np.tile(np.arange(SAMPLES, dtype=np.int64), stop - start),
                "correct": rng.random(problem.size, dtype=np.float32) < difficulty[problem],
            })
            pq.write_table(table, directory / f"part-{part:05d}.parquet")
            part += 1
    marker.write_text("")


def _row(label: str, result: dict, reference: dict | None = None) -> str:
    ratio = f"{result['seconds'] / reference['seconds']:7.2f}x" if reference else "        "
    peak = max(result["peak"], result.get("children_peak", 0))
    return (f"{label:<34} {result['seconds']:8.2f} s  (wall {result['wall']:7.2f} s) {ratio}  "
            f"peak {peak / GIB:6.3f} GiB")


def jsonl_case() -> None:
    path = BENCH_DIR / "samples-2m.jsonl"
    make_jsonl(path, 2_000_000)
    startup = _run("import kpass.cli")
    reference = _run(_group_by_code(f"read_json_auto('{path}')"))
    kpass = _run(_kpass_code(str(path)))
    print(f"2M-row JSONL ({path.stat().st_size / 1024**2:.0f} MB), kpass report -m pass@1 --method t:")
    print(_row("DuckDB GROUP BY (reference)", reference))
    print(_row("kpass report (duckdb engine)", kpass, reference))
    ratio = (kpass["seconds"] - startup["seconds"]) / reference["seconds"]
    print(f"  interpreter + import kpass.cli: {startup['seconds']:.2f} s; ratio without it {ratio:.2f}x "
          f"(target <= 4x); peak {kpass['peak'] / GIB:.3f} GiB (target < 1 GiB)", flush=True)


def scaling_case(max_rows: int, spark_max: int) -> None:
    print("\nscaling (Parquet directory, 4 models x 32 samples a problem), kpass report -m pass@1 --method t:")
    print(f"{'rows':>12} {'case':<22} {'seconds':>9} {'wall':>9} {'vs GROUP BY':>12} {'peak GiB':>9}")
    rows = int(float(os.environ.get("KPASS_BENCH_MIN_ROWS", 10**5)))
    while rows <= max_rows:
        directory = BENCH_DIR / f"parquet-{rows}"
        make_parquet(directory, rows)
        reference = _run(_group_by_code(f"read_parquet('{directory}/*.parquet')"))
        cases = [("DuckDB GROUP BY", reference), ("kpass duckdb", _run(_kpass_code(str(directory))))]
        if rows <= spark_max:
            spark = ("from kpass.data.spark_engine import local_session\nlocal_session(2)\n" + _kpass_code(
                str(directory), "spark") + "\nfrom pyspark.sql import SparkSession\nSparkSession.getActiveSession().stop()")
            cases.append(("kpass spark local[2]", _run(spark)))
        for label, result in cases:
            peak = max(result["peak"], result.get("children_peak", 0))
            print(f"{rows:>12,} {label:<22} {result['seconds']:9.2f} {result['wall']:9.2f} "
                  f"{result['seconds'] / reference['seconds']:11.2f}x {peak / GIB:9.3f}", flush=True)
        rows *= 10


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    max_rows = int(float(argv[argv.index("--max-rows") + 1])) if "--max-rows" in argv else 10**7
    spark_max = int(float(os.environ.get("KPASS_BENCH_SPARK_MAX", 10**7)))
    if "--scaling-only" not in argv:
        jsonl_case()
    scaling_case(max_rows, spark_max)


if __name__ == "__main__":
    main()
