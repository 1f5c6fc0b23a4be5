"""Benchmark: ``kpass report`` of a 2M-row JSONL sample table against DuckDB's own GROUP BY of it.

Side by side, alternating, ``--repeats`` times (default 3): the reference
``SELECT model, task, problem_id, count(*), sum(correct) FROM read_json_auto(FILE) GROUP BY ALL``
and ``kpass report FILE -m pass@1 --method t --engine duckdb`` (the default engine, every
validation rule on), each in a fresh interpreter so that its peak RSS (``ru_maxrss``) is its
own. Printed: the median seconds of each (in process, after imports), the interpreter start-up
with ``import kpass.cli``, the ratio, and kpass's peak. Targets (issue #17): ratio <= 4 (start-up
excluded), peak < 1 GiB.

The file (2 models x 31,250 problems x 32 samples, an answer and output_tokens each) is written
once under ``$KPASS_BENCH_DIR`` (default ``/tmp/kpass-bench``), never in the repository.
Run ``python scripts/benchmarks/bench_jsonl.py [--repeats N]``; ``make bench`` runs it with the others.
"""

from __future__ import annotations

import json
import os
import pathlib
import statistics
import subprocess
import sys

import numpy as np

BENCH_DIR = pathlib.Path(os.environ.get("KPASS_BENCH_DIR", "/tmp/kpass-bench"))
ROWS = 2_000_000
SAMPLES = 32
GIB = 1024**3

_MEASURE = r"""
import json, resource, sys, time
setup, work = sys.argv[1], sys.argv[2]
exec(setup)
start = time.perf_counter()
exec(work)
seconds = time.perf_counter() - start
print("KPASS-BENCH " + json.dumps({"seconds": seconds,
                                   "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def write_samples(path: pathlib.Path) -> None:
    """The 2M-row sample table (seeded): one JSON object a line, as json.dumps writes it."""
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(17)
    per_model = ROWS // 2 // SAMPLES
    partial = path.with_suffix(".partial")
    with open(partial, "w") as handle:
        for model in range(2):
            difficulty = rng.beta(0.6, 0.6, per_model)
            problem = np.repeat(np.arange(per_model), SAMPLES)
            index = np.tile(np.arange(SAMPLES), per_model)
            correct = rng.random(problem.size) < difficulty[problem]
            answer = np.where(correct, 42, rng.integers(0, 4, problem.size))
            tokens = rng.integers(50, 4000, problem.size)
            handle.writelines(
                json.dumps({"model": f"model-{model}", "task": "math", "problem_id": f"p{p:07d}", "sample_index": s,
                            "correct": c, "answer": str(a), "output_tokens": t}) + "\n"
                for p, s, c, a, t in zip(problem.tolist(), index.tolist(), correct.tolist(), answer.tolist(),
                                         tokens.tolist()))
    partial.rename(path)


def _case(setup: str, work: str) -> dict:
    done = subprocess.run([sys.executable, "-c", _MEASURE, setup, work], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"benchmark case failed:\n{work}\n{done.stderr[-3000:]}")
    line = next(line for line in done.stdout.splitlines() if "KPASS-BENCH " in line)
    return json.loads(line.split("KPASS-BENCH ", 1)[1])


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    repeats = int(argv[argv.index("--repeats") + 1]) if "--repeats" in argv else 3
    path = BENCH_DIR / "samples-2m-i17.jsonl"
    write_samples(path)
    group_by = ("import duckdb", "con = duckdb.connect(); con.execute('SET enable_progress_bar = false'); "
                f"con.execute(\"SELECT model, task, problem_id, count(*), "
                f"sum(CAST(correct AS INTEGER)) FROM read_json_auto('{path}') GROUP BY ALL\").fetchall()")
    argv_kpass = ["report", str(path), "-m", "pass@1", "--method", "t", "--engine", "duckdb", "--no-progress",
                  "--format", "json", "-o", os.devnull]
    kpass = ("from kpass.cli import main", f"assert main({argv_kpass!r}) == 0")
    startup = statistics.median(_case("", "import kpass.cli")["seconds"] for _ in range(repeats))
    reference, ours = [], []
    for _ in range(repeats):
        reference.append(_case(*group_by))
        ours.append(_case(*kpass))
    ref_seconds = statistics.median(r["seconds"] for r in reference)
    our_seconds = statistics.median(r["seconds"] for r in ours)
    peak = max(r["peak"] for r in ours)
    print(f"2M-row JSONL ({path.stat().st_size / 1024**2:.0f} MB), median of {repeats}, side by side:")
    print(f"  DuckDB GROUP BY (read_json_auto)      {ref_seconds:7.2f} s   peak "
          f"{max(r['peak'] for r in reference) / GIB:.3f} GiB")
    print(f"  kpass report -m pass@1 --method t     {our_seconds:7.2f} s   peak {peak / GIB:.3f} GiB")
    print(f"  interpreter + import kpass.cli        {startup:7.2f} s (not in the times above)")
    print(f"  ratio {our_seconds / ref_seconds:.2f}x (target <= 4x); peak {peak / GIB:.3f} GiB (target < 1 GiB)",
          flush=True)


if __name__ == "__main__":
    main()
