"""Benchmark: exact cons@k (kpass) against a vectorized Monte Carlo estimate of the same numbers.

Workload (issue 2): 10,000 problems, n = 64 samples each, 1 to 16 answer classes per problem
plus samples with no extractable answer, k in {1, 2, 4, 8, 16, 32, 64}, all four variants
(ties fractional/strict x invalid abstain/vote).

Monte Carlo baseline: per problem, 10,000 uniformly random orderings of its 64 sample labels
(``Generator.permuted``, Fisher-Yates in C); the first k labels of an ordering are a uniform
k-subset for every k at once, so one ordering serves all seven k and all four variants (a
deliberately favourable baseline). Class counts of the prefixes come from one ``bincount`` per
k segment. Its standard error is at most 0.5/sqrt(10,000) = 0.005 per problem.

Agreement check: for every problem, k and variant, ``|MC - exact|`` within a Bernstein bound
(failure probability 3e-11 per value, using the exact value ``v`` for the variance bound
``v (1 - v)``; a normal z-score is wrong for ``v`` within 1/S of 0 or 1); values of exactly 0
or 1 must be matched exactly; benchmark means over problems must agree within 6 standard errors. Run through ``scripts/benchmarks/run_benchmarks.py`` (``make bench``).
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

from kpass.metrics import cons_at_k

K_VALUES = (1, 2, 4, 8, 16, 32, 64)
VARIANTS = (("fractional", "abstain"), ("fractional", "vote"), ("strict", "abstain"), ("strict", "vote"))
N_SAMPLES = 64
MAX_CLASSES = 16
MEAN_Z_LIMIT = 6.0  # benchmark means (over problems) of exact and Monte Carlo
BERNSTEIN_LOG = 25.0  # per-value failure probability 2 exp(-25) = 3e-11


def make_problems(n_problems: int, seed: int = 20_240_601) -> tuple[np.ndarray, np.ndarray]:
    """Seeded class counts ``(N, 16)`` (gold in column 0) and invalid counts ``(N,)``, n = 64.

    Each problem has 1..16 answer classes with Dirichlet(0.6) probabilities; the gold answer is
    the most probable class for 60% of problems and a random class otherwise; 0-15% of the
    probability goes to "no extractable answer".
    """
    rng = np.random.default_rng(seed)
    n_classes = rng.integers(1, MAX_CLASSES + 1, n_problems)
    weights = rng.gamma(0.6, size=(n_problems, MAX_CLASSES)) * (np.arange(MAX_CLASSES) < n_classes[:, None])
    gold_index = np.where(
        rng.random(n_problems) < 0.6, weights.argmax(axis=1), rng.integers(0, n_classes)
    )
    rows = np.arange(n_problems)
    weights[rows, 0], weights[rows, gold_index] = weights[rows, gold_index], weights[rows, 0]
    invalid_share = rng.uniform(0.0, 0.15, n_problems)
    probabilities = np.concatenate(
        [weights / weights.sum(axis=1, keepdims=True) * (1 - invalid_share)[:, None], invalid_share[:, None]],
        axis=1,
    )
    draws = rng.multinomial(N_SAMPLES, probabilities)
    return draws[:, :MAX_CLASSES], draws[:, MAX_CLASSES]


def exact_all(class_counts, n_invalid) -> dict[tuple[str, str], tuple[np.ndarray, float]]:
    results = {}
    for ties, invalid in VARIANTS:
        start = time.perf_counter()
        values = cons_at_k(class_counts, K_VALUES, n_invalid=n_invalid, ties=ties, invalid=invalid)
        results[(ties, invalid)] = (values, time.perf_counter() - start)
    return results


def monte_carlo_all(class_counts, n_invalid, n_subsets, *, seed=7, chunk_problems=16, max_chunks=None):
    """Monte Carlo cons@k for every k and variant: ``{variant: (N, len(K_VALUES)) array}``."""
    rng = np.random.default_rng(seed)
    n_problems, n_answer_classes = class_counts.shape
    n_labels = n_answer_classes + 1  # the last label marks an invalid sample
    all_counts = np.concatenate([class_counts, n_invalid[:, None]], axis=1)
    labels = np.repeat(np.tile(np.arange(n_labels, dtype=np.int8), n_problems), all_counts.ravel())
    labels = labels.reshape(n_problems, N_SAMPLES)
    estimates = {variant: np.zeros((n_problems, len(K_VALUES))) for variant in VARIANTS}
    starts = range(0, n_problems, chunk_problems)
    if max_chunks is not None:
        starts = list(starts)[:max_chunks]
    for start in starts:
        stop = min(start + chunk_problems, n_problems)
        orderings = np.repeat(labels[start:stop, None, :], n_subsets, axis=1)
        rng.permuted(orderings, axis=2, out=orderings)
        n_rows = (stop - start) * n_subsets
        orderings = orderings.reshape(n_rows, N_SAMPLES)
        row_offset = (np.arange(n_rows, dtype=np.int64) * n_labels)[:, None]
        prefix_counts = np.zeros((n_rows, n_labels), dtype=np.int8)  # k <= 64 fits in int8
        previous_k = 0
        for column, k in enumerate(K_VALUES):
            segment = orderings[:, previous_k:k]
            prefix_counts += np.bincount(
                (row_offset + segment).ravel(), minlength=n_rows * n_labels
            ).reshape(n_rows, n_labels).astype(np.int8)
            previous_k = k
            answers, n_bad = prefix_counts[:, :-1], prefix_counts[:, -1]
            gold = answers[:, 0]
            top = answers.max(axis=1)  # top answer count (invalid samples abstain)
            n_top = np.count_nonzero(answers == top[:, None], axis=1)
            wins = {"abstain": (gold == top) & (gold > 0)}
            wins["vote"] = wins["abstain"] & (n_bad <= gold)  # invalid votes as one more class
            n_tied = {"abstain": n_top, "vote": n_top + (n_bad == gold)}
            for ties, invalid in VARIANTS:
                won, tied = wins[invalid], n_tied[invalid]
                score = won / tied if ties == "fractional" else won & (tied == 1)
                estimates[(ties, invalid)][start:stop, column] = (
                    score.reshape(stop - start, n_subsets).mean(axis=1)
                )
    return estimates


def _peak_mb(function, *args, **kwargs) -> float:
    tracemalloc.start()
    try:
        function(*args, **kwargs)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def _bernstein_bound(value: np.ndarray, n_subsets: int) -> np.ndarray:
    """Half-width t with P(|MC - value| >= t) <= 2 exp(-BERNSTEIN_LOG) for a mean of scores in [0, 1].

    Bernstein: P(|mean - mu| >= t) <= 2 exp(-S t^2 / (2 var + 2t/3)), var <= value (1 - value).
    Unlike a normal z-score it stays valid for values within 1/S of 0 or 1, where the Monte
    Carlo sees rare events (one failure in 10,000 draws when the exact value is 0.999997).
    """
    log_term = BERNSTEIN_LOG
    variance = value * (1 - value)
    linear = 2 * log_term / 3
    return (linear + np.sqrt(linear**2 + 8 * n_subsets * log_term * variance)) / (2 * n_subsets)


def check_agreement(exact, estimates, n_subsets) -> list[str]:
    lines = []
    for variant in VARIANTS:
        value = exact[variant][0]
        mc = estimates[variant]
        deviation = np.abs(mc - value)
        degenerate = (value * (1 - value)) < 1e-15  # exactly 0 or 1: every subset scores the same
        if np.any(deviation[degenerate] > 1e-9):
            raise AssertionError(f"{variant}: Monte Carlo differs where the exact value is 0 or 1")
        ratio = deviation / _bernstein_bound(value, n_subsets)
        mean_se = np.sqrt((value * (1 - value)).sum(axis=0)) / (value.shape[0] * np.sqrt(n_subsets))
        mean_z = np.abs(mc.mean(axis=0) - value.mean(axis=0)) / np.maximum(mean_se, 1e-300)
        if ratio.max() > 1 or mean_z.max() > MEAN_Z_LIMIT:
            raise AssertionError(
                f"{variant}: exact and Monte Carlo disagree (max deviation / Bernstein bound "
                f"{ratio.max():.2f}, max benchmark-mean z {mean_z.max():.2f}, limit {MEAN_Z_LIMIT})"
            )
        lines.append(
            f"  {variant[0]:>10}/{variant[1]:<7}  max|diff| {deviation.max():.4f}  "
            f"max diff/bound {ratio.max():.2f}  benchmark-mean max z {mean_z.max():.2f}  "
            f"means exact {np.array2string(value.mean(axis=0), precision=4)}"
        )
    return lines


def main(n_problems: int = 10_000, n_subsets: int = 10_000) -> None:
    class_counts, n_invalid = make_problems(n_problems)
    print(
        f"cons@k: {n_problems:,} problems, n = {N_SAMPLES}, 1-{MAX_CLASSES} answer classes + invalid "
        f"(mean {n_invalid.mean():.1f} invalid/problem), k in {list(K_VALUES)}, 4 variants",
        flush=True,
    )
    exact = exact_all(class_counts, n_invalid)
    exact_time = sum(seconds for _, seconds in exact.values())
    exact_peak = _peak_mb(cons_at_k, class_counts, K_VALUES, n_invalid=n_invalid)

    start = time.perf_counter()
    estimates = monte_carlo_all(class_counts, n_invalid, n_subsets)
    mc_time = time.perf_counter() - start
    mc_peak = _peak_mb(monte_carlo_all, class_counts, n_invalid, n_subsets, max_chunks=2)

    print(f"{'method':<44}{'time [s]':>10}{'peak [MB]':>11}")
    for (ties, invalid), (_, seconds) in exact.items():
        peak = f"{exact_peak:>11.1f}" if (ties, invalid) == VARIANTS[0] else ""
        print(f"{'kpass cons_at_k exact, ' + ties + '/' + invalid:<44}{seconds:>10.2f}{peak}")
    print(f"{'kpass exact, all 4 variants':<44}{exact_time:>10.2f}")
    print(f"{f'Monte Carlo, {n_subsets:,} subsets, all 4 variants':<44}{mc_time:>10.2f}{mc_peak:>11.1f}")
    ratio = mc_time / exact_time
    print(f"Monte Carlo / exact time: {ratio:.1f}x  ({'exact faster: PASS' if ratio > 1 else 'exact SLOWER: FAIL'})")
    print("agreement (exact vs Monte Carlo):")
    for line in check_agreement(exact, estimates, n_subsets):
        print(line)


if __name__ == "__main__":
    main()
