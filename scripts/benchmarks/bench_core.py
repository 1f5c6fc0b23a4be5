"""Benchmark of the pass@k family against literal re-implementations of the reference code.

Run by ``make bench`` (scripts/benchmarks/run_benchmarks.py calls :func:`main`), or alone with
``python scripts/benchmarks/bench_core.py [n_problems]``. Not part of ``make test``.

References, re-implemented here from their published algorithms:

- openai/human-eval ``estimate_pass_at_k``: per problem ``1 - prod(1 - k / arange(n-c+1, n+1))``,
  1.0 when ``n - c < k``, one call per k (a Python loop over problems inside each call);
- GPassK / lighteval G-Pass: a Python loop over problems calling
  ``scipy.stats.hypergeom.sf(m - 1, n, c, k)`` with ``m = max(ceil(k * tau), 1)`` per problem and
  tau, returning 0 when ``m > min(c, k)``;
- the same loop for mG-Pass@k, ``(2/k) * sum_{i=ceil(k/2)+1..k} hypergeom.sf(i - 1, n, c, k)``;
- one vectorized call of ``scipy.stats.hypergeom.sf`` over all problems and taus (not a
  reference implementation; shown for scale).

The slow per-problem loops are timed on a subset of the problems and scaled linearly to the full
size (the loops do the same work per problem); the table says so. Agreement is checked on that
subset: the conventions of the references agree with kpass on these inputs (``k <= n``
everywhere, and the float ceil is exact for tau in {0, .25, .5, .75, 1} at k = 16).
"""

from __future__ import annotations

import gc
import math
import os
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.stats import hypergeom

from kpass.metrics import g_pass_at_k, mg_pass_at_k, pass_at_k

N_PROBLEMS = 100_000
SEED = 20250101


# ---------------------------------------------------------------- reference re-implementations
def human_eval_estimate_pass_at_k(num_samples: Any, num_correct: Any, k: int) -> np.ndarray:
    """openai/human-eval's estimator, written from its published algorithm (one k per call)."""

    def estimator(n: int, c: int, k: int) -> float:
        if n - c < k:
            return 1.0
        return 1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1))

    if isinstance(num_samples, int):
        num_samples_it = [num_samples] * len(num_correct)
    else:
        assert len(num_samples) == len(num_correct)
        num_samples_it = iter(num_samples)
    return np.array([estimator(int(n), int(c), k) for n, c in zip(num_samples_it, num_correct)])


def reference_g_pass_at_k(n: int, c: int, k: int, tau: float) -> float:
    """G-Pass@k_tau for one problem as the GPassK/lighteval code computes it (float ceil)."""
    m = max(int(np.ceil(k * tau)), 1)
    if m > min(c, k) or k > n or c < 0 or n <= 0:
        return 0.0
    return float(hypergeom.sf(m - 1, n, c, k))


def reference_mg_pass_at_k(n: int, c: int, k: int) -> float:
    """mG-Pass@k for one problem: (2/k) * sum_{i=ceil(k/2)+1..k} G-Pass with m = i."""
    low = int(np.ceil(k * 0.5)) + 1
    total = 0.0
    for i in range(low, k + 1):
        total += 0.0 if i > min(c, k) else float(hypergeom.sf(i - 1, n, c, k))
    return 2 * total / k


def reference_g_pass_grid(n: np.ndarray, c: np.ndarray, k: int, taus: list[float]) -> np.ndarray:
    """The per-problem loop of the reference harnesses over a tau grid."""
    out = np.empty((len(n), len(taus)))
    for j in range(len(n)):
        for t, tau in enumerate(taus):
            out[j, t] = reference_g_pass_at_k(int(n[j]), int(c[j]), k, tau)
    return out


# ---------------------------------------------------------------- measurement helpers
def _best_time(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    best, result = math.inf, None
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def _peak_mib(fn: Callable[[], Any]) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


def _row(name, kpass_s, ref_s, scale, kpass_mib, ref_mib, max_diff, target) -> list[str]:
    ratio = ref_s * scale / kpass_s
    verdict = "-" if target is None else ("PASS" if ratio >= target else "FAIL")
    reference = f"{ref_s * scale:.2f} s" + (f" ({ref_s:.3f} s x {scale:g})" if scale != 1 else "")
    return [
        name,
        f"{kpass_s * 1e3:.1f} ms",
        reference,
        f"{ratio:.1f}x" if ratio < 10 else f"{ratio:.0f}x",
        "-" if target is None else f">= {target}x",
        verdict,
        f"{kpass_mib:.1f}",
        f"{ref_mib:.1f}",
        f"{max_diff:.1e}",
    ]


_HEADER = ["case", "kpass", "reference (scaled)", "ratio", "target", "ok", "kpass MiB", "ref MiB", "max abs diff"]


def _print_table(rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in [_HEADER, *rows]) for i in range(len(_HEADER))]
    def line(cells):
        return "| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))) + " |"
    print(line(_HEADER))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print(line(row))


def main(n_problems: int = N_PROBLEMS) -> None:
    rng = np.random.default_rng(SEED)
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"bench_core: {n_problems:,} problems, seed {SEED}; load average {load[0]:.2f} on {os.cpu_count()} CPUs "
          "(shared machine: timings are noisy; kpass times are the best of 3 runs)")
    rows: list[list[str]] = []
    notes: list[str] = []

    # 1. full pass@k curve k = 1..64, n = 64 -----------------------------------------------
    n_samples = 64
    n = np.full(n_problems, n_samples)
    c = rng.binomial(n_samples, rng.beta(0.5, 0.8, size=n_problems))
    ks = np.arange(1, 65)
    kpass_s, curve = _best_time(lambda: pass_at_k(n, c, ks), repeats=3)
    kpass_mib = _peak_mib(lambda: pass_at_k(n, c, ks))
    subset = min(n_problems, 5_000)
    start = time.perf_counter()
    ref_curve = np.column_stack([human_eval_estimate_pass_at_k(n_samples, c[:subset], int(k)) for k in ks])
    ref_s = time.perf_counter() - start
    ref_mib = _peak_mib(lambda: [human_eval_estimate_pass_at_k(n_samples, c[:500], int(k)) for k in ks])
    diff = float(np.max(np.abs(curve[:subset] - ref_curve)))
    rows.append(_row("pass@k, k=1..64, n=64 vs human-eval loop", kpass_s, ref_s, n_problems / subset, kpass_mib, ref_mib, diff, 100))
    notes.append(f"human-eval loop timed on {subset:,} problems x 64 calls, scaled x{n_problems / subset:g}; "
                 "ref MiB measured on 500 problems")

    # 2. G-Pass grid tau in {0, .25, .5, .75, 1}, k = 16, n = 48 --------------------------------
    n_samples, k = 48, 16
    taus = [0.0, 0.25, 0.5, 0.75, 1.0]
    n = np.full(n_problems, n_samples)
    c = rng.binomial(n_samples, rng.beta(0.7, 0.7, size=n_problems))
    kpass_s, grid = _best_time(lambda: g_pass_at_k(n, c, k, tau=taus), repeats=3)
    kpass_mib = _peak_mib(lambda: g_pass_at_k(n, c, k, tau=taus))
    subset = min(n_problems, 1_000)
    start = time.perf_counter()
    ref_grid = reference_g_pass_grid(n[:subset], c[:subset], k, taus)
    ref_s = time.perf_counter() - start
    ref_mib = _peak_mib(lambda: reference_g_pass_grid(n[:200], c[:200], k, taus))
    diff = float(np.max(np.abs(grid[:subset] - ref_grid)))
    rows.append(_row("G-Pass@16, 5 taus, n=48 vs per-problem scipy", kpass_s, ref_s, n_problems / subset, kpass_mib, ref_mib, diff, 20))
    notes.append(f"per-problem hypergeom.sf loop timed on {subset:,} problems x 5 taus, scaled x{n_problems / subset:g}")

    # 2b. the same grid with one vectorized scipy call per tau (for scale, no target)
    m = np.array([max(math.ceil(tau * k), 1) for tau in taus])

    def scipy_vectorized():
        return hypergeom.sf(m[None, :] - 1, n[:, None], c[:, None], k)

    scipy_s, scipy_grid = _best_time(scipy_vectorized, repeats=1)
    scipy_mib = _peak_mib(scipy_vectorized)
    diff = float(np.max(np.abs(grid - scipy_grid)))
    rows.append(_row("G-Pass@16, 5 taus vs vectorized scipy.sf", kpass_s, scipy_s, 1, kpass_mib, scipy_mib, diff, None))

    # 3. mG-Pass@16, n = 48 ---------------------------------------------------------------------
    kpass_s, mg = _best_time(lambda: mg_pass_at_k(n, c, k), repeats=3)
    kpass_mib = _peak_mib(lambda: mg_pass_at_k(n, c, k))
    subset = min(n_problems, 250)
    start = time.perf_counter()
    ref_mg = np.array([reference_mg_pass_at_k(int(n[j]), int(c[j]), k) for j in range(subset)])
    ref_s = time.perf_counter() - start
    ref_mib = _peak_mib(lambda: [reference_mg_pass_at_k(int(n[j]), int(c[j]), k) for j in range(50)])
    diff = float(np.max(np.abs(mg[:subset] - ref_mg)))
    rows.append(_row("mG-Pass@16, n=48 vs per-problem scipy", kpass_s, ref_s, n_problems / subset, kpass_mib, ref_mib, diff, None))
    notes.append(f"mG-Pass loop timed on {subset:,} problems x 8 sf calls, scaled x{n_problems / subset:g}")

    _print_table(rows)
    for note in notes:
        print(f"  note: {note}")
    print("  ratio = reference time (scaled to the full size) / kpass time; max abs diff on the timed subset;"
          " MiB = peak traced allocations (tracemalloc)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else N_PROBLEMS)
