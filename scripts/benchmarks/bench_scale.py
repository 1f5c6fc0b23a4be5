"""Benchmark: kpass's engines from 10^5 to 10^8 rows, side by side with DuckDB's own GROUP BY.

Every case runs in a fresh interpreter (``python -c``) started by this script. Its peak memory is
the child's maximum resident set size as the kernel reports it to the parent (``os.wait4``:
``ru_maxrss`` of the child and of every process it waited for), never measured inside the case.
A Spark case waits for its JVM before it exits, so the JVM's peak reaches the parent too; the
case also reports the driver's and the JVM's peaks apart, and the table shows their sum.

Cases, each with ``kpass report DATA -m pass@1 --method t`` against ``SELECT model, task,
problem_id, count(*), sum(correct) ... GROUP BY`` of the same data in DuckDB:

1. ``jsonl-2m``: a 2M-row JSONL sample table (answer and output_tokens too). Targets: within 4x
   of the GROUP BY (without the interpreter start-up, measured too), peak < 1 GiB;
2. ``scaling``: hive-partitioned Parquet datasets of 10^5 .. 10^8 rows (one directory
   ``model=ckpt-NNNN`` per checkpoint, 15,625 problems x 32 samples each: 10^8 rows are 200
   checkpoints), read by the DuckDB engine and, up to ``--spark-max-rows``, by the Spark engine in
   local mode (``local[2]``); and one JSONL file of the same rows up to ``--jsonl-max-rows``.
   Target: 10^8 Parquet rows below 4 GiB peak, with the time printed.

Data goes to ``--data-dir`` (default ``$KPASS_BENCH_DIR`` or ``/tmp/kpass-bench``), never to the
repository; it is generated once (streamed one checkpoint at a time with pyarrow, so generation
stays in bounded memory) and reused. Disk: 38 MB for the 10^8 Parquet rows (their columns
compress well), 0.9 GB for the 10^7 JSONL rows. ``--generate-only`` writes the data and exits
(start it early, in the background).

``--write-doc docs/scale.md`` replaces the text between ``<!-- bench_scale:begin -->`` and
``<!-- bench_scale:end -->`` with the tables of this run (``make bench-scale`` does this), so the
measured numbers in the documentation are always those a run printed. ``--method t`` keeps the
interval's own cost (a bootstrap is independent of the engine) out of the comparison.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import numpy as np

GIB = 1024**3
SAMPLES = 32
PROBLEMS_PER_CHECKPOINT = 15_625  # x 32 samples = 500,000 rows per checkpoint

_MEASURE = r"""
import json, resource, sys, time
start = time.perf_counter()
exec(compile(sys.argv[1], "<case>", "exec"))
seconds = time.perf_counter() - start
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
self_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print("KPASS-BENCH " + json.dumps({"seconds": seconds, "self_peak": self_peak, "children_peak": children}))
"""


class CaseFailed(RuntimeError):
    """A case exited non-zero; ``summary`` is its one-line error (``kpass: ...``)."""

    def __init__(self, message: str, stderr: str, peak: int, wall: float):
        super().__init__(message)
        lines = [line for line in stderr.splitlines() if line.startswith("kpass:")] or stderr.splitlines()[-1:]
        text = lines[0] if lines else "no error text"
        if "Out of Memory Error" in text:
            text = "Out of Memory Error" + text.split("Out of Memory Error", 1)[1].split(")", 1)[0] + ")"
        self.summary = text.replace("|", "/")[:200]
        self.peak, self.wall = peak, wall


def _load() -> float:
    return os.getloadavg()[0]


def run_case(code: str, *, env: dict | None = None) -> dict:
    """Run ``code`` in a fresh interpreter.

    Returns its in-process ``seconds`` (after interpreter start-up), the ``wall`` time of the
    whole process, and ``peak``: the process tree's maximum RSS as ``os.wait4`` reports it to
    this (parent) process, or, where the case has children of its own (Spark's JVM), the sum
    of the driver's and the children's peaks, which that maximum bounds from below.
    """
    load = _load()
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen([sys.executable, "-c", _MEASURE, code], stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(process.pid, 0)  # this child's own rusage (not communicate's wait)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode != 0:
        raise CaseFailed(f"benchmark case failed (exit {process.returncode}):\n{code}\n{stderr[-3000:]}",
                         stderr, usage.ru_maxrss * 1024, wall)
    line = next(line for line in stdout.splitlines() if line.startswith("KPASS-BENCH "))
    reported = json.loads(line.split(" ", 1)[1])
    tree_max = usage.ru_maxrss * 1024
    peak = tree_max
    if reported["children_peak"] > 0:
        peak = max(tree_max, reported["self_peak"] + reported["children_peak"])
    return {"seconds": reported["seconds"], "wall": wall, "peak": peak, "load": load,
            "children_peak": reported["children_peak"]}


# ----------------------------------------------------------------------------------------------
# data


def _checkpoints(n_rows: int) -> tuple[int, int]:
    """``(checkpoints, problems per checkpoint)`` of a dataset of ``n_rows`` rows (32 samples each)."""
    checkpoints = max(n_rows // (PROBLEMS_PER_CHECKPOINT * SAMPLES), 1)
    problems = n_rows // checkpoints // SAMPLES
    if checkpoints * problems * SAMPLES != n_rows:
        raise ValueError(f"--rows: {n_rows} is not a whole number of checkpoints x problems x {SAMPLES} samples")
    return checkpoints, problems


def make_parquet(directory: pathlib.Path, n_rows: int) -> pathlib.Path:
    """A hive-partitioned Parquet dataset of ``n_rows`` rows: ``model=ckpt-NNNN/part-0.parquet``.

    Each checkpoint has its own problem difficulties (Beta(0.6, 0.6)) and one file of
    ``problems x 32`` rows (task, problem_id, sample_index, correct); one checkpoint is in
    memory at a time. A file is written under a temporary name and renamed, so an interrupted
    run resumes where it stopped.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    marker = directory / "_complete"
    if marker.exists():
        return directory
    checkpoints, problems = _checkpoints(n_rows)
    names = pa.array([f"p{i:06d}" for i in range(problems)])
    problem = np.repeat(np.arange(problems, dtype=np.int32), SAMPLES)
    sample_index = pa.array(np.tile(np.arange(SAMPLES, dtype=np.int64), problems))
    task = pa.DictionaryArray.from_arrays(np.zeros(problem.size, np.int32), ["math"])
    problem_id = pa.DictionaryArray.from_arrays(problem, names)
    for checkpoint in range(checkpoints):
        target = directory / f"model=ckpt-{checkpoint:04d}" / "part-0.parquet"
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng([17, checkpoint])
        difficulty = rng.beta(0.6, 0.6, problems).astype(np.float32)
        correct = rng.random(problem.size, dtype=np.float32) < difficulty[problem]
        table = pa.table({"task": task, "problem_id": problem_id, "sample_index": sample_index,
                          "correct": correct})
        partial = target.with_suffix(".partial")
        pq.write_table(table, partial)
        partial.rename(target)
    marker.write_text("")
    return directory


def make_jsonl(path: pathlib.Path, parquet: pathlib.Path) -> pathlib.Path:
    """One JSONL file of the rows of the Parquet dataset ``parquet`` (``model`` a field), written
    by DuckDB's streaming ``COPY``."""
    import duckdb

    if path.exists():
        return path
    partial = path.with_suffix(".partial")
    con = duckdb.connect(config={"memory_limit": "1GB", "preserve_insertion_order": False})
    con.execute(f"COPY (SELECT model, task, problem_id, sample_index, correct FROM "
                f"read_parquet('{parquet}/*/*.parquet', hive_partitioning = true)) TO '{partial}' (FORMAT JSON)")
    con.close()
    partial.rename(path)
    return path


def make_answer_jsonl(path: pathlib.Path, n_rows: int) -> pathlib.Path:
    """``n_rows`` samples (2 models, 32 samples a problem, an answer and output_tokens each)."""
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    per_model = n_rows // 2 // SAMPLES
    partial = path.with_suffix(".partial")
    with open(partial, "w") as handle:
        for model in range(2):
            difficulty = rng.beta(0.6, 0.6, per_model)
            for start in range(0, per_model, 20_000):
                stop = min(start + 20_000, per_model)
                problem = np.repeat(np.arange(start, stop), SAMPLES)
                index = np.tile(np.arange(SAMPLES), stop - start)
                correct = rng.random(problem.size) < difficulty[problem]
                answer = np.where(correct, 42, rng.integers(0, 4, problem.size))
                handle.writelines(
                    f'{{"model": "model-{model}", "task": "math", "problem_id": "p{p:07d}", "sample_index": {s}, '
                    f'"correct": {"true" if c else "false"}, "answer": "{a}", "output_tokens": {100 + s}}}\n'
                    for p, s, c, a in zip(problem.tolist(), index.tolist(), correct.tolist(), answer.tolist()))
    partial.rename(path)
    return path


def _du(path: pathlib.Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(item.stat().st_size for item in path.rglob("*") if item.is_file())


# ----------------------------------------------------------------------------------------------
# cases


def group_by_code(source: str) -> str:
    """DuckDB's own GROUP BY of ``source`` (a table function call), fetched to the client."""
    return (f"import duckdb; con = duckdb.connect(); con.execute('SET enable_progress_bar = false'); "
            f"rows = con.execute(\"SELECT model, task, problem_id, count(*), "
            f"sum(CAST(correct AS INTEGER)) FROM {source} GROUP BY ALL\").fetchall()")


def kpass_code(path: str, engine: str = "duckdb") -> str:
    argv = ["report", path, "-m", "pass@1", "--method", "t", "--engine", engine, "--no-progress",
            "--format", "json", "-o", "/dev/null"]
    code = f"from kpass.cli import main\ncode = main({argv!r})\nassert code == 0, code\n"
    if engine == "spark":  # local[2] with local_session's default 1 GiB heap (the executors write the problem
        # table to disk, nothing is collected into it); the JVM is waited for, so that its peak RSS reaches the parent
        code = ("from kpass.data.spark_engine import local_session\nsession = local_session(2)\n"
                + code + "gateway = session.sparkContext._gateway\nsession.stop()\n"
                "gateway.shutdown()\ngateway.proc.stdin.close()\ngateway.proc.wait()\n")
    return code


def _source(fmt: str, path: pathlib.Path) -> str:
    if fmt == "parquet":
        return f"read_parquet('{path}/*/*.parquet', hive_partitioning = true)"
    return f"read_json_auto('{path}')"


def _gib(value: float) -> str:
    return f"{value / GIB:.2f} GiB"


def _header() -> str:
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    return (f"Run {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC on {os.cpu_count()} cores "
            f"({platform.machine()}, Python {platform.python_version()}); `uptime` at the start: `{uptime}`")


def jsonl_target(data_dir: pathlib.Path) -> list[str]:
    """The 2M-row JSONL case; its table lines (markdown)."""
    path = make_answer_jsonl(data_dir / "samples-2m.jsonl", 2_000_000)
    startup = run_case("import kpass.cli")
    reference = run_case(group_by_code(f"read_json_auto('{path}')"))
    kpass = run_case(kpass_code(str(path)))
    ratio = kpass["seconds"] / reference["seconds"]
    without = (kpass["seconds"] - startup["seconds"]) / reference["seconds"]
    lines = ["| input | kpass report (duckdb) | peak | DuckDB GROUP BY | ratio | ratio without `import kpass.cli` | load |",
             "|---|---|---|---|---|---|---|",
             f"| 2M-row JSONL ({path.stat().st_size / 1024**2:.0f} MB; answer, output_tokens) | {kpass['seconds']:.2f} s "
             f"(wall {kpass['wall']:.2f} s) | {_gib(kpass['peak'])} | {reference['seconds']:.2f} s | {ratio:.1f}x | "
             f"{without:.1f}x (import {startup['seconds']:.2f} s) | {kpass['load']:.1f} |"]
    print("\n".join(lines), flush=True)
    return lines


def scaling(data_dir: pathlib.Path, sizes: list[int], *, jsonl_max: int, spark_max: int,
            on_line: Callable[[list[str]], None] = lambda lines: None, engines: tuple[str, ...] = ("duckdb", "spark"),
            ) -> tuple[list[str], dict[tuple[int, str, str], dict]]:
    """The scaling table (markdown lines) and its results by ``(rows, format, engine)``.

    The DuckDB engine runs over every size first, then the Spark engine (minutes per case on a
    loaded machine); each line is printed, and ``on_line`` gets the table so far, as measured.
    """
    results: dict[tuple[int, str, str], dict] = {}
    references: dict[tuple[int, str], dict] = {}
    lines = ["| rows | data | engine | kpass report | kpass wall | kpass peak | DuckDB GROUP BY | GROUP BY peak | ratio | load |",
             "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    print("\n".join(lines), flush=True)
    plan = [(rows, "parquet", "duckdb") for rows in sizes]
    plan += [(rows, "jsonl", "duckdb") for rows in sizes if rows <= jsonl_max]
    plan += [(rows, "parquet", "spark") for rows in sizes if rows <= spark_max]
    plan = [case for case in plan if case[2] in engines]
    for rows, fmt, engine in plan:
        parquet = make_parquet(data_dir / f"ckpt-parquet-{rows}", rows)
        path = parquet if fmt == "parquet" else make_jsonl(data_dir / f"ckpt-{rows}.jsonl", parquet)
        if (rows, fmt) not in references:
            references[rows, fmt] = run_case(group_by_code(_source(fmt, path)))
        reference = references[rows, fmt]
        checkpoints, problems = _checkpoints(rows)
        label = f"{fmt}, {checkpoints} x {problems:,} x {SAMPLES}, {_du(path) / 1024**2:,.1f} MB"
        name = "spark local[2]" if engine == "spark" else engine
        try:
            result = run_case(kpass_code(str(path), engine))
        except CaseFailed as failed:
            results[rows, fmt, engine] = {"failed": failed.summary, "peak": failed.peak, "wall": failed.wall}
            line = (f"| {rows:,} | {label} | {name} | failed after {failed.wall:.0f} s: {failed.summary} | | "
                    f"{_gib(failed.peak)} | {reference['seconds']:.2f} s | {_gib(reference['peak'])} | | {_load():.1f} |")
        else:
            results[rows, fmt, engine] = result
            peak = _gib(result["peak"]) + (f" (JVM {_gib(result['children_peak'])})" if engine == "spark" else "")
            line = (f"| {rows:,} | {label} | {name} | {result['seconds']:.2f} s | {result['wall']:.2f} s | {peak} | "
                    f"{reference['seconds']:.2f} s | {_gib(reference['peak'])} | "
                    f"{result['seconds'] / reference['seconds']:.1f}x | {result['load']:.1f} |")
        lines.append(line)
        print(line, flush=True)
        on_line(lines)
    return lines, results


def verdict(results: dict[tuple[int, str, str], dict]) -> str:
    """The 10^8-row target: the largest Parquet dataset the DuckDB engine read, its time and peak."""
    rows = max(n for n, fmt, engine in results if fmt == "parquet" and engine == "duckdb")
    result = results[rows, "parquet", "duckdb"]
    if "failed" in result:
        return (f"Target (10^8 Parquet rows below 4 GiB with the DuckDB engine) does not hold: {rows:,} rows failed "
                f"after {result['wall']:.0f} s at peak {_gib(result['peak'])}: {result['failed']}")
    holds = "holds" if rows >= 10**8 and result["peak"] < 4 * GIB else "does not hold"
    return (f"Target (10^8 Parquet rows below 4 GiB with the DuckDB engine) {holds}: {rows:,} rows read and "
            f"reported in {result['seconds']:.1f} s (wall {result['wall']:.1f} s), peak {_gib(result['peak'])}.")


def write_doc(path: pathlib.Path, text: str, block: str = "bench_scale") -> None:
    """Replace the measured block of ``path`` (between ``<!-- BLOCK:begin -->`` and
    ``<!-- BLOCK:end -->``) with ``text``."""
    DOC_BEGIN, DOC_END = f"<!-- {block}:begin -->", f"<!-- {block}:end -->"
    doc = path.read_text()
    if DOC_BEGIN not in doc or DOC_END not in doc:
        raise SystemExit(f"{path}: no {DOC_BEGIN} ... {DOC_END} block to write the tables into")
    head, rest = doc.split(DOC_BEGIN, 1)
    tail = rest.split(DOC_END, 1)[1]
    path.write_text(f"{head}{DOC_BEGIN}\n{text}\n{DOC_END}{tail}")


def _rows(text: str) -> int:
    value = float(text)
    if value != int(value) or value < 1:
        raise argparse.ArgumentTypeError(f"not a whole number of rows: {text}")
    return int(value)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-rows", type=_rows, default=10**7, help="largest Parquet dataset (default 1e7; 1e8 for the full table)")
    parser.add_argument("--min-rows", type=_rows, default=10**5)
    parser.add_argument("--jsonl-max-rows", type=_rows, default=10**7, help="largest JSONL file of the scaling table")
    parser.add_argument("--spark-max-rows", type=_rows, default=int(float(os.environ.get("KPASS_BENCH_SPARK_MAX", 1e7))),
                        help="largest dataset read by the Spark engine (default $KPASS_BENCH_SPARK_MAX or 1e7)")
    parser.add_argument("--data-dir", type=pathlib.Path,
                        default=pathlib.Path(os.environ.get("KPASS_BENCH_DIR", "/tmp/kpass-bench")))
    parser.add_argument("--scaling-only", action="store_true", help="skip the 2M-row JSONL case")
    parser.add_argument("--generate-only", action="store_true", help="write the datasets and exit")
    parser.add_argument("--write-doc", type=pathlib.Path, metavar="MD", help="write the tables into this page's bench_scale block")
    parser.add_argument("--engines", default="duckdb,spark", help="engines to measure (default duckdb,spark)")
    parser.add_argument("--doc-block", default="bench_scale",
                        help="the marked block of --write-doc to write (default bench_scale)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    sizes = []
    rows = args.min_rows
    while rows <= args.max_rows:
        sizes.append(rows)
        rows *= 10
    args.data_dir.mkdir(parents=True, exist_ok=True)
    if args.generate_only:
        for rows in sizes:
            started = time.perf_counter()
            parquet = make_parquet(args.data_dir / f"ckpt-parquet-{rows}", rows)
            if rows <= args.jsonl_max_rows:
                make_jsonl(args.data_dir / f"ckpt-{rows}.jsonl", parquet)
            print(f"{rows:,} rows: {parquet} ({_du(parquet) / 1024**2:,.0f} MB) in {time.perf_counter() - started:.0f} s", flush=True)
        return
    header = _header()
    print(header, flush=True)
    parts = [header, ""]
    if not args.scaling_only:
        parts += ["2M-row JSONL (`kpass report FILE -m pass@1 --method t`):", "", *jsonl_target(args.data_dir), ""]
    parts.append(f"Scaling (hive-partitioned Parquet, checkpoints x problems x samples; the same rows as one JSONL "
                 f"file up to {args.jsonl_max_rows:,}; Spark up to {args.spark_max_rows:,}):")

    def write(lines: list[str], tail: str = "") -> None:
        if not tail:  # the run goes on: the rows so far, and the 10^8 target once it is measured
            done = [row for row in lines if row.startswith(f"| {10**8:,} | parquet") and "| duckdb |" in row]
            tail = "(run in progress: the rows measured so far)" + (" The 10^8-row DuckDB row is in." if done else "")
        if args.write_doc:
            write_doc(args.write_doc, "\n".join([*parts, "", *lines, "", tail]), args.doc_block)

    lines, results = scaling(args.data_dir, sizes, jsonl_max=args.jsonl_max_rows, spark_max=args.spark_max_rows,
                             on_line=write, engines=tuple(args.engines.split(",")))
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    tail = f"{verdict(results)}\n\n`uptime` at the end: `{uptime}`" if "duckdb" in args.engines else f"`uptime` at the end: `{uptime}`"
    print(tail, flush=True)
    write(lines, tail)

if __name__ == "__main__":
    main()
