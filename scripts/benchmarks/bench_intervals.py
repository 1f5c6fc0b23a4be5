"""Benchmark: kpass bootstrap intervals against Inspect's and lm-eval's real bootstrap code.

(a) 10,000 resamples over 10,000 problems (n = 16 samples each) for 8 pass@k-family metrics
    computed from the same counts, versus ``inspect_ai.scorer.bootstrap_stderr`` with 10,000
    resamples on one of them; (a2) the same with 1,000 clusters of 10 problems, versus Inspect's
    cluster bootstrap ``inspect_ai.scorer.ci(method="bootstrap", cluster=...)``.
(b) 100,000 resamples on 5,000 per-problem 0/1 values (exact_match), versus
    ``lm_eval.api.metrics.bootstrap_stderr`` (mean aggregation; it uses a multiprocessing pool).
(c) Arbitrary float values with no structure (2,000 problems, 10,000 resamples), versus a plain
    numpy gather bootstrap ``values[rng.integers(0, N, (B, N))].mean(axis=1)``.

Each row checks that the two implementations agree (bootstrap standard errors within a few
percent) and prints times, the speed-up and kpass's peak traced memory. Timings on a shared CPU
are noisy: the best of a few repeats is shown for the fast side.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import time
import tracemalloc
import warnings

import numpy as np


def _best_time(fn, repeats: int = 3):
    best, result = math.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def _peak_mib(fn) -> float:
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


def _counts(n_problems: int, n_samples: int, seed: int):
    rng = np.random.default_rng(seed)
    p = rng.beta(0.4, 0.3, size=n_problems)
    return np.full(n_problems, n_samples), rng.binomial(n_samples, p)


def _eight_metrics(n, c):
    from kpass.metrics import g_pass_at_k, mg_pass_at_k, pass_at_k, pass_hat_k

    return np.column_stack(
        [
            pass_at_k(n, c, [1, 4, 8, 16]),
            pass_hat_k(n, c, [2, 4]),
            g_pass_at_k(n, c, 8, tau=0.5),
            mg_pass_at_k(n, c, 8),
        ]
    )


def _sample_scores(values, clusters=None):
    from inspect_ai.scorer import Score, SampleScore

    return [
        SampleScore(
            score=Score(value=float(v)),
            sample_id=i,
            sample_metadata=None if clusters is None else {"group": int(clusters[i])},
        )
        for i, v in enumerate(values)
    ]


def bench_a(rows: list) -> None:
    from inspect_ai.scorer import bootstrap_stderr

    from kpass.metrics import mean_ci_columns

    n, c = _counts(10_000, 16, seed=1)
    scores = _sample_scores(_eight_metrics(n, c)[:, 2])  # pass@8

    def kpass_run():
        return mean_ci_columns(_eight_metrics(n, c), n_resamples=10_000, rng=0)

    def kpass_percentile():
        return mean_ci_columns(_eight_metrics(n, c), method="bootstrap", n_resamples=10_000, rng=0)

    kpass_time, results = _best_time(kpass_run)
    percentile_time, percentile = _best_time(kpass_percentile)
    np.random.seed(0)
    start = time.perf_counter()
    inspect_se = bootstrap_stderr(num_samples=10_000)(scores)
    inspect_time = time.perf_counter() - start
    kpass_se = percentile[2].standard_error
    _check("a", kpass_se, inspect_se)
    rows.append(("(a) 8 metrics x 10k resamples, 10k problems, n=16 (studentized)", kpass_time, "inspect bootstrap_stderr, 1 metric", inspect_time, _peak_mib(kpass_run), f"SE {kpass_se:.5f} vs {inspect_se:.5f}"))
    rows.append(("(a) same, percentile bootstrap", percentile_time, "inspect bootstrap_stderr, 1 metric", inspect_time, _peak_mib(kpass_percentile), f"path {results[2].details['path']}, G={results[2].details['n_groups']}"))


def bench_a2(rows: list) -> None:
    from inspect_ai.scorer import ci

    from kpass.metrics import mean_ci, mean_ci_columns

    n, c = _counts(10_000, 16, seed=2)
    clusters = np.repeat(np.arange(1_000), 10)
    values = _eight_metrics(n, c)
    scores = _sample_scores(values[:, 2], clusters)

    def kpass_run():
        return mean_ci_columns(_eight_metrics(n, c), clusters=clusters, n_resamples=10_000, rng=0)

    kpass_time, results = _best_time(kpass_run)
    np.random.seed(0)
    start = time.perf_counter()
    inspect_ci = ci(method="bootstrap", num_samples=10_000, cluster="group")(scores)
    inspect_time = time.perf_counter() - start
    percentile = mean_ci(values[:, 2], clusters=clusters, method="bootstrap", n_resamples=10_000, rng=0)
    _check("a2 low", percentile.low, inspect_ci["lower"], tolerance=0.005, relative=False)
    _check("a2 high", percentile.high, inspect_ci["upper"], tolerance=0.005, relative=False)
    rows.append(("(a2) same with 1,000 clusters of 10 problems", kpass_time, "inspect ci(bootstrap, cluster), 1 metric", inspect_time, _peak_mib(kpass_run), f"[{percentile.low:.4f}, {percentile.high:.4f}] vs [{inspect_ci['lower']:.4f}, {inspect_ci['upper']:.4f}]"))


def bench_b(rows: list) -> None:
    from lm_eval.api.metrics import bootstrap_stderr, mean

    from kpass.metrics import mean_ci

    rng = np.random.default_rng(3)
    xs = (rng.random(5_000) < 0.62).astype(float).tolist()

    def kpass_run():
        return mean_ci(xs, n_resamples=100_000, rng=0)

    def kpass_percentile():
        return mean_ci(xs, method="bootstrap", n_resamples=100_000, rng=0)

    kpass_time, _ = _best_time(kpass_run)
    percentile_time, percentile = _best_time(kpass_percentile)
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        lm_eval_se = bootstrap_stderr(mean, xs, iters=100_000)
    lm_eval_time = time.perf_counter() - start
    _check("b", percentile.standard_error, lm_eval_se)
    rows.append(("(b) 100k resamples, 5k 0/1 values (studentized)", kpass_time, f"lm-eval bootstrap_stderr ({os.cpu_count()} procs)", lm_eval_time, _peak_mib(kpass_run), f"SE {percentile.standard_error:.5f} vs {lm_eval_se:.5f}"))
    rows.append(("(b) same, percentile bootstrap", percentile_time, "lm-eval bootstrap_stderr", lm_eval_time, _peak_mib(kpass_percentile), ""))


def bench_c(rows: list) -> None:
    from kpass.metrics import mean_ci

    rng = np.random.default_rng(4)
    values = rng.gamma(0.7, 2.0, size=2_000)
    n_resamples = 10_000

    def plain_numpy():
        generator = np.random.default_rng(0)
        idx = generator.integers(0, values.size, size=(n_resamples, values.size))
        means = values[idx].mean(axis=1)
        return np.quantile(means, [0.025, 0.975]), means.std(ddof=1)

    def kpass_percentile():
        return mean_ci(values, method="bootstrap", n_resamples=n_resamples, rng=0)

    def kpass_default():
        return mean_ci(values, n_resamples=n_resamples, rng=0)

    plain_time, (plain_q, plain_se) = _best_time(plain_numpy)
    percentile_time, percentile = _best_time(kpass_percentile)
    default_time, _ = _best_time(kpass_default)
    _check("c", percentile.standard_error, plain_se)
    plain_peak = _peak_mib(plain_numpy)
    rows.append(("(c) 10k resamples, 2k float values, percentile", percentile_time, "plain numpy gather bootstrap", plain_time, _peak_mib(kpass_percentile), f"numpy peak {plain_peak:.0f} MiB"))
    rows.append(("(c) same, studentized (mean and SE per resample)", default_time, "plain numpy gather bootstrap (mean only)", plain_time, _peak_mib(kpass_default), ""))


def _check(label, ours, theirs, tolerance=0.05, relative=True):
    gap = abs(ours - theirs) / abs(theirs) if relative else abs(ours - theirs)
    if gap > tolerance:
        raise AssertionError(f"bench {label}: kpass {ours} and the reference {theirs} disagree by {gap:.3g}")


def main() -> None:
    warnings.simplefilter("ignore", DeprecationWarning)
    rows: list = []
    for bench in (bench_a, bench_a2, bench_b, bench_c):
        bench(rows)
    header = f"{'case':<62} {'kpass s':>9} {'reference':<42} {'ref s':>8} {'speed-up':>9} {'kpass peak MiB':>14}  check"
    print(header)
    print("-" * len(header))
    for case, ours, reference, theirs, peak, note in rows:
        print(f"{case:<62} {ours:>9.4f} {reference:<42} {theirs:>8.3f} {theirs / ours:>8.1f}x {peak:>14.1f}  {note}")


if __name__ == "__main__":
    main()
