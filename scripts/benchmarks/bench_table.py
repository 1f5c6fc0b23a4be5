"""Benchmark: reduce a 10-million-row sample table to per-problem counts (and a report) within 4 GB.

The table has 4 models x 2 tasks x 78,125 problems x 16 samples = 10,000,000 rows, built with
:meth:`kpass.SampleTable.from_columns` (categorical columns as codes, rows shuffled so nothing
relies on input order). Measured separately, each with its own tracemalloc peak (numpy reports
its buffers to tracemalloc) on top of the inputs already held:

1. ``from_columns``: conversion, key validation (duplicates, 0..n-1 indices) and the per-problem
   index (one argsort of an int64 key; counts by cumulative sums, no Python loop over rows);
2. ``compute_report`` with pass@1 and pass@8 (t intervals) on the 625,000 problems;

and the process's peak resident set size (ru_maxrss) over the whole run. The acceptance bound is
4 GB peak. Run with ``make bench`` (or ``python scripts/benchmarks/bench_table.py``).
"""

from __future__ import annotations

import resource
import sys
import time
import tracemalloc

import numpy as np

LIMIT_BYTES = 4 * 1024**3
N_MODELS, N_TASKS, N_PROBLEMS, N_SAMPLES = 4, 2, 78_125, 16


def _columns(seed: int = 0):
    import kpass

    rng = np.random.default_rng(seed)
    n_rows = N_MODELS * N_TASKS * N_PROBLEMS * N_SAMPLES
    row = rng.permutation(n_rows)
    sample_index = (row % N_SAMPLES).astype(np.int64)
    problem_global = row // N_SAMPLES                     # (model, task, problem) flattened
    problem = (problem_global % N_PROBLEMS).astype(np.int32)
    task = ((problem_global // N_PROBLEMS) % N_TASKS).astype(np.int32)
    model = (problem_global // (N_PROBLEMS * N_TASKS)).astype(np.int32)
    del row, problem_global
    difficulty = rng.beta(0.6, 0.6, size=N_PROBLEMS).astype(np.float32)
    correct = rng.random(n_rows, dtype=np.float32) < difficulty[problem]
    columns = {
        "model": kpass.Categorical(model, [f"model-{i}" for i in range(N_MODELS)]),
        "task": kpass.Categorical(task, [f"task-{i}" for i in range(N_TASKS)]),
        "problem_id": kpass.Categorical(problem, [f"p{i:06d}" for i in range(N_PROBLEMS)]),
        "sample_index": sample_index,
        "correct": correct,
    }
    return columns, n_rows


def _measure(label: str, function):
    tracemalloc.start()
    tracemalloc.reset_peak()
    start = time.perf_counter()
    result = function()
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"{label:<44} {seconds:8.2f} s   tracemalloc peak {peak / 1024**3:6.3f} GiB", flush=True)
    return result, peak


def main() -> None:
    import kpass

    columns, n_rows = _columns()
    input_bytes = sum((v.codes.nbytes if isinstance(v, kpass.Categorical) else v.nbytes) for v in columns.values())
    print(f"rows: {n_rows:,}  problems: {N_MODELS * N_TASKS * N_PROBLEMS:,}  input columns: "
          f"{input_bytes / 1024**3:.3f} GiB", flush=True)
    table, build_peak = _measure("from_columns (validate + per-problem index)",
                                 lambda: kpass.SampleTable.from_columns(columns, source="bench"))
    index = table.problem_index
    assert index.n_problems == N_MODELS * N_TASKS * N_PROBLEMS
    assert int(index.n_samples.sum()) == n_rows and int(index.n_correct.sum()) == int(columns["correct"].sum())
    pm = kpass.make_plugin_manager(load_entry_points=False)
    report, report_peak = _measure(
        "compute_report pass@1,8 (t intervals)",
        lambda: kpass.compute_report(table, "pass@1,8", method="t", plugin_manager=pm))
    assert len(report.rows) == N_MODELS * N_TASKS * 2 and not report.exclusions
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB
    print(f"{'peak resident set size (whole process)':<44} {'':>10}   {rss / 1024**3:.3f} GiB "
          f"(limit {LIMIT_BYTES / 1024**3:.0f} GiB)", flush=True)
    worst = max(rss, input_bytes + build_peak, input_bytes + report_peak)
    if worst >= LIMIT_BYTES:
        print("FAIL: peak memory above 4 GiB", flush=True)
        sys.exit(1)
    print("ok: under 4 GiB", flush=True)


if __name__ == "__main__":
    main()
