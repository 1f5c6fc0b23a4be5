"""Seeded coverage study of the intervals of F, P and reach (and delta pass@1).

A population of problems with a base and an RL-like model: per problem a finishing probability
and a pass-given-finished probability for each model, a share of problems the base cannot solve
(some of which the model can), ragged n for the model. One simulated benchmark draws N problems
and, per problem, ``f ~ Binomial(n, phi)`` finished and ``c ~ Binomial(f, rho)`` correct samples per
model. Every term is a smooth function of means of per-problem vectors, so its population value
is that function at the population means; we compute those means from 2,000,000 simulated
problems (Monte Carlo error below 0.0005, against interval half-widths of 0.02 to 0.1 at N = 100).
Coverage is the share of simulated benchmarks whose interval contains the population value.

Run ``python scripts/budget_coverage.py`` for a quick table, ``--full`` for the full grid
(N in {30, 100, 300}, 2,000 simulations per cell; F and P with the percentile and BCa bootstrap,
reach with the score interval and the percentile bootstrap, and delta pass@1 with the interval
:func:`kpass.metrics.decompose_pass_change` reports for it by default, which is
:func:`kpass.metrics.paired_difference`'s default, ``"mover"``, the two models' studentized
limits combined (their clustered score limits with 30 or more clusters and a model near an end), exactly what ``kpass compare`` gives). The test suite runs a reduced version
(``tests/metrics/test_decomposition.py``).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from fractions import Fraction

import numpy as np

from kpass.metrics import DEFAULT_PAIRED_METHOD, decompose_pass_change
from kpass.metrics._decomposition import _S, _per_problem_matrix, _statistic

TERMS = ("finishing", "reliability", "reach", "delta")
_STAT_OF_TERM = {"finishing": "finishing_base", "reliability": "reliability_base", "reach": "reach", "delta": "delta"}


def draw_problems(rng: np.random.Generator, n_problems: int):
    """Per-problem counts ``(nb, fb, cb, nm, fm, cm)`` of one simulated benchmark."""
    phi_base = rng.beta(2.0, 2.0, n_problems)                        # base often runs out of tokens
    phi_model = 1.0 - (1.0 - phi_base) * rng.beta(1.0, 4.0, n_problems)  # the model finishes more
    rho_base = rng.beta(1.2, 1.0, n_problems)
    rho_model = np.clip(rho_base + rng.normal(-0.03, 0.1, n_problems), 0.0, 1.0)
    unsolvable = rng.random(n_problems) < 0.15                        # the base never gets these right
    rho_base = np.where(unsolvable, 0.0, rho_base)
    phi_base = np.where(unsolvable, rng.beta(8.0, 1.0, n_problems), phi_base)  # ...but often finishes them
    reached = unsolvable & (rng.random(n_problems) < 0.4)
    rho_model = np.where(unsolvable, np.where(reached, rng.beta(2.0, 2.0, n_problems), 0.0), rho_model)
    n_base = np.full(n_problems, 8)
    n_model = rng.choice([4, 8], n_problems)                          # ragged n
    f_base = rng.binomial(n_base, phi_base)
    c_base = rng.binomial(f_base, rho_base)
    f_model = rng.binomial(n_model, phi_model)
    c_model = rng.binomial(f_model, rho_model)
    return n_base, f_base, c_base, n_model, f_model, c_model


def population_values(seed: int = 1, n_problems: int = 2_000_000) -> dict[str, float]:
    """Population value of every term: the statistic at the population means."""
    rng = np.random.default_rng(seed)
    sums = np.zeros((1, 0))
    total = 0.0
    chunk = 200_000
    for start in range(0, n_problems, chunk):
        nb, fb, cb, nm, fm, cm = draw_problems(rng, min(chunk, n_problems - start))
        x = _per_problem_matrix(nb, fb[:, None], cb[:, None], nm, fm[:, None], cm[:, None], Fraction(7, 8), Fraction(1, 2))
        part = x.sum(axis=0, keepdims=True)
        sums = part if sums.size == 0 else sums + part
        total += x.shape[0]
    stats = _statistic(sums, np.array([total]), 1)[0, 0]
    return {term: float(stats[_S[_STAT_OF_TERM[term]]]) for term in TERMS}


def coverage_study(*, n_problems=(100,), n_simulations=400, n_resamples=999, methods=("bootstrap",),
                   reach_intervals=("score",), confidence_level=0.95, seed=0) -> list[dict]:
    """Coverage of the intervals of F, P, reach and delta (base attribution) per N and method.

    Returns one row per (N, interval, term); delta's interval is always the default
    ``linear_method``: :func:`kpass.metrics.paired_difference` with its default method
    (:data:`kpass.metrics.DEFAULT_PAIRED_METHOD`, ``"mover"``), as in ``kpass compare``.

    ``methods``: bootstrap interval methods of F, P and delta; ``reach_intervals``: interval kinds of
    reach ("score", the default of :func:`decompose_pass_change`, and/or "bootstrap", the
    percentile bootstrap).
    """
    truth = population_values()
    rng = np.random.default_rng(seed)
    rows = []
    for n in n_problems:
        cells = [(m, t) for m in methods for t in ("finishing", "reliability")]
        cells += [(DEFAULT_PAIRED_METHOD, "delta")]  # delta's interval is paired_difference's (linear_method)
        cells += [(r, "reach") for r in reach_intervals]
        hits = dict.fromkeys(cells, 0)
        widths = dict.fromkeys(cells, 0.0)
        started = time.perf_counter()
        for _ in range(n_simulations):
            counts = draw_problems(rng, n)
            boot_seed = int(rng.integers(2**63))
            calls = {(m, "score" if "score" in reach_intervals else "bootstrap") for m in methods}
            if "bootstrap" in reach_intervals:
                calls.add(("bootstrap", "bootstrap"))
            results = {}
            for method, reach_interval in sorted(calls):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    results[method, reach_interval] = decompose_pass_change(
                        *counts, method=method, reach_interval=reach_interval, rng=boot_seed,
                        n_resamples=n_resamples, confidence_level=confidence_level)
            for key, term in cells:
                if term == "reach":
                    d = results["bootstrap" if key == "bootstrap" else sorted(calls)[0][0], key]
                elif term == "delta":
                    d = next(iter(results.values()))
                else:
                    d = next(v for (m, _), v in results.items() if m == key)
                result = getattr(d, term)
                hits[key, term] += result.low <= truth[term] <= result.high
                widths[key, term] += result.high - result.low
        elapsed = time.perf_counter() - started
        for key, term in cells:
            rows.append({
                "n_problems": n, "method": key, "term": term, "truth": truth[term],
                "coverage": hits[key, term] / n_simulations,
                "mean_width": widths[key, term] / n_simulations,
                "n_simulations": n_simulations, "seconds": elapsed,
            })
    return rows


def format_table(rows: list[dict]) -> str:
    lines = ["| N | method | term | population value | coverage | mean width | simulations |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        method = {"bootstrap": "percentile bootstrap", "bca": "BCa bootstrap", "score": "score (MOVER-Wilson)",
                  "studentized": "studentized (paired_difference)",
                  "mover": "MOVER (paired_difference default)"}[r["method"]]
        lines.append(f"| {r['n_problems']} | {method} | {r['term']} | {r['truth']:+.4f} | {r['coverage']:.1%} | "
                     f"{r['mean_width']:.4f} | {r['n_simulations']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="N in {30, 100, 300}, 2000 simulations, both methods")
    parser.add_argument("--seed", type=int, default=20260101)
    args = parser.parse_args(argv)
    if args.full:
        rows = coverage_study(n_problems=(30, 100, 300), n_simulations=2000, n_resamples=1999,
                              methods=("bootstrap", "bca"), reach_intervals=("score", "bootstrap"), seed=args.seed)
    else:
        rows = coverage_study(n_problems=(100,), n_simulations=400, n_resamples=999,
                              methods=("bootstrap", "bca"), reach_intervals=("score", "bootstrap"), seed=args.seed)
    print(format_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
