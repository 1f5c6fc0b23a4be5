"""Seeded coverage study of kpass's interval methods (``make coverage`` runs the full size).

What it measures
----------------
For simulated benchmarks whose per-problem success probabilities come from a Beta prior, the
share of simulated benchmarks whose interval contains the *population* value of the metric:

- priors Beta(0.4, 0.3) (U-shaped, as on agent and competition benchmarks) and Beta(2, 2);
- N in {10, 30, 100, 1000} problems, n in {1, 4, 16, 64} samples per problem;
- metrics pass@1, pass@8 and G-Pass@8_0.5, each for one model ("single") and for the paired
  difference of two correlated models ("paired"); cells with k > n are skipped and marked so;
- methods: every :data:`kpass.metrics.INTERVAL_METHODS` entry that applies without clusters
  ("auto", "t", "bootstrap", "bca"), for paired differences also "mover" (the default of
  :func:`kpass.metrics.paired_difference`; the table bolds each row's default), and the naive
  interval that treats the N*n samples
  as independent Bernoulli trials, ``est +- z * sqrt(est (1 - est) / (N n))`` (for a paired
  difference the unpaired sum of the two variances), to show what ignoring the problem as the
  unit costs.
- A second table does the same for clustered benchmarks (problems grouped in clusters that
  share difficulty), with the cluster versions of the methods, the problem-level "t" that
  ignores the clusters, and the naive interval.

Population values are exact: per-problem values are unbiased for ``E[g(p)]`` with
``g(p) = P(Binomial(8, p) >= m)`` (m = 1 for pass@8, 4 for G-Pass@8_0.5, and ``g(p) = p`` for
pass@1), and under a Beta(a, b) prior

    E[g(p)] = sum_{j=m..k} C(k, j) B(a + j, b + k - j) / B(a, b)

(closed-form Beta functions; the in-suite test checks them against numerical integration).

Two correlated models: a Gaussian copula with correlation 0.8 between the latent normals of
the two models' per-problem probabilities; model A's marginal is the cell's prior Beta(a, b),
model B's is Beta(1.5 a, b) (a stronger model). The population difference is the difference
of the two closed forms.

Clustered benchmarks: C clusters with sizes uniform on 1..9 problems; each cluster draws a
shared probability from the prior, and each problem takes the shared one with probability 0.6
or an independent draw from the prior otherwise, so every problem's marginal is still the
prior (population values unchanged) while problems of one cluster are strongly correlated.

Cost and resample counts
------------------------
Simulated benchmarks are stacked as the K columns of one ``(N, K)`` call of
:func:`kpass.metrics.mean_ci_columns` / :func:`kpass.metrics.paired_difference_columns` (blocks of
``--block`` simulations share one seed, each column resampled on its own in its canonical
order as every ``(N, K)`` call does; each block has its own seed). The full run uses 2,000 simulations per cell and 1,999
bootstrap resamples per interval (the library default is 10,000; 1,999 keeps the Monte Carlo
error of a 2.5% tail quantile small while the study fits in about 10 to 20 minutes on 2 cores).
The Monte Carlo standard error of a coverage near 95% with 2,000 simulations is 0.5 points.

Edge regimes (issue #16)
------------------------
A third table uses populations of its own near the ends of the range (``coverage_regimes.py``
next to this script describes them and runs them); this script is its command line. After the
paired cells it gives, for those with 0/1 values and no clusters, the least coverage any
deterministic interval valid over the cell's difference can have there (``coverage_attainable.py``:
where it exceeds 98%, no interval can be inside the band).

Run ``python scripts/coverage_study.py --full`` (or ``make coverage``, which writes
``docs/coverage.md``, ``docs/coverage-edges.md`` and ``docs/coverage-edges-paired.md`` with
``--output``/``--edges-output``, and the overview blocks of ``docs/intervals-edges.md`` with
``--summary-doc``, which is refused before any run for a subset, the quick profile, a page without its
blocks or the file the tables go to); without ``--full``
a small version (the regimes' quick profile: N = 30 and 100, n = 16) runs in a few minutes.
``--regimes-only --comparisons single`` runs the single-model regime cells alone (the run time is
the last line of ``docs/coverage-edges.md``).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import special, stats

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the study's helpers next to it, when loaded by path
from coverage_attainable import attainable_cells, attainable_markdown
from coverage_precision import (
    CLUSTER_SHARE,
    COPULA_CORRELATION,
    default_method,
    discreteness_table,
    doc_block_parts,
    parse_integers,
    parse_names,
    regime_overview_markdown,
    write_doc_block,
)
from coverage_regimes import (
    ASSESSED_PROBLEMS,
    BAND,
    CLUSTERED_REGIMES,
    PROBLEMS_PER_CLUSTER,
    QUICK_REGIME_GRID,
    RARE_SHARE,
    REGIME_METRICS,
    REGIME_N_PROBLEMS,
    REGIME_RESAMPLES,
    REGIME_SIMS,
    REGIMES,
    WIDTH_RULE,
    RegimeCell,
    format_regime_table,
    regime_sims,
    regime_summary,
    run_regimes,
)
from kpass.metrics import (
    DEFAULT_INTERVAL_METHOD,
    DEFAULT_PAIRED_METHOD,
    DegenerateIntervalWarning,
    IntervalMethodWarning,
    g_pass_at_k,
    mean_ci_columns,
    paired_difference_columns,
    pass_at_k,
)

PRIORS: dict[str, tuple[float, float]] = {"Beta(0.4,0.3)": (0.4, 0.3), "Beta(2,2)": (2.0, 2.0)}
N_PROBLEMS = (10, 30, 100, 1000)
N_SAMPLES = (1, 4, 16, 64)
#: name -> (k, m): per-problem value unbiased for P(Binomial(k, p) >= m)
METRICS: dict[str, tuple[int, int]] = {"pass@1": (1, 1), "pass@8": (8, 1), "G-Pass@8_0.5": (8, 4)}
METHODS = ("auto", "t", "bootstrap", "bca")
CLUSTER_METHODS = ("auto", "clustered-t", "bootstrap", "bca")
#: extra methods of paired differences only (combinations of the two models' intervals)
PAIRED_ONLY_METHODS = ("mover",)
MODEL_B_SHAPE_FACTOR = 1.5
CLUSTER_SIZE_MAX = 9
N_CLUSTERS = (10, 30, 100)
CLUSTER_N_SAMPLES = (1, 4, 16)


@dataclass(frozen=True)
class StudyConfig:
    """Size of a study run (the defaults are the full run)."""

    n_sims: int = 2000
    n_resamples: int = 1999
    block: int = 250
    seed: int = 20241101
    priors: Sequence[str] = tuple(PRIORS)
    n_problems: Sequence[int] = N_PROBLEMS
    n_samples: Sequence[int] = N_SAMPLES
    metrics: Sequence[str] = tuple(METRICS)
    comparisons: Sequence[str] = ("single", "paired")
    methods: Sequence[str] = METHODS
    paired_methods: Sequence[str] = PAIRED_ONLY_METHODS
    n_clusters: Sequence[int] = N_CLUSTERS
    cluster_n_samples: Sequence[int] = CLUSTER_N_SAMPLES
    cluster_methods: Sequence[str] = CLUSTER_METHODS
    clustered: bool = True


SMALL = StudyConfig(
    n_sims=200,
    n_resamples=999,
    block=200,
    n_problems=(10, 30, 100),
    n_samples=(1, 16),
    n_clusters=(30,),
    cluster_n_samples=(16,),
)


@dataclass
class Cell:
    """Coverage of every method in one cell of the grid."""

    design: str  # "independent" or "clustered"
    prior: str
    comparison: str  # "single" or "paired"
    metric: str
    n_problems: int  # problems (independent) or clusters (clustered)
    n_samples: int
    truth: float
    skipped: str | None = None
    coverage: dict[str, float] = field(default_factory=dict)
    mean_width: dict[str, float] = field(default_factory=dict)
    n_sims: int = 0


def population_value(metric: str, a: float, b: float) -> float:
    """``E[P(Binomial(k, p) >= m)]`` for ``p ~ Beta(a, b)``, in closed form."""
    k, m = METRICS[metric]
    log_terms = [
        math.log(math.comb(k, j)) + special.betaln(a + j, b + k - j) - special.betaln(a, b) for j in range(m, k + 1)
    ]
    return float(np.exp(log_terms).sum())


def per_problem_table(metric: str, n: int) -> np.ndarray:
    """Per-problem value for c = 0..n correct out of n, from kpass's own estimators."""
    k, m = METRICS[metric]
    counts = np.arange(n + 1)
    samples = np.full(n + 1, n)
    if m == 1:
        return pass_at_k(samples, counts, k)
    return g_pass_at_k(samples, counts, k, tau=m / k)


def _correlated_probabilities(rng, a, b, shape):
    """Per-problem probabilities of models A and B through a Gaussian copula."""
    z_a = rng.standard_normal(shape)
    z_b = COPULA_CORRELATION * z_a + math.sqrt(1.0 - COPULA_CORRELATION**2) * rng.standard_normal(shape)
    p_a = stats.beta.ppf(special.ndtr(z_a), a, b)
    p_b = stats.beta.ppf(special.ndtr(z_b), MODEL_B_SHAPE_FACTOR * a, b)
    return p_a, p_b


def _naive(estimate, variance_terms, n_trials, level):
    z = special.ndtri(1.0 - (1.0 - level) / 2.0)
    half = z * np.sqrt(variance_terms / n_trials)
    return estimate - half, estimate + half


def _collect(results, truth):
    low = np.array([r.low for r in results])
    high = np.array([r.high for r in results])
    return (low <= truth) & (truth <= high), high - low


def _seed(config: StudyConfig, *parts: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([config.seed, *parts]))


def run_independent(config: StudyConfig, *, progress=None) -> list[Cell]:
    """The main grid: independent problems."""
    cells: list[Cell] = []
    level = 0.95
    for prior_index, prior in enumerate(config.priors):
        a, b = PRIORS[prior]
        for n_index, n_problems in enumerate(config.n_problems):
            rng = _seed(config, 1, prior_index, n_index)
            p_a, p_b = _correlated_probabilities(rng, a, b, (n_problems, config.n_sims))
            for n_samples in config.n_samples:
                c_a = rng.binomial(n_samples, p_a)
                c_b = rng.binomial(n_samples, p_b)
                for metric in config.metrics:
                    k, _ = METRICS[metric]
                    for comparison in config.comparisons:
                        truth_a = population_value(metric, a, b)
                        truth = truth_a if comparison == "single" else truth_a - population_value(metric, MODEL_B_SHAPE_FACTOR * a, b)
                        cell = Cell("independent", prior, comparison, metric, n_problems, n_samples, truth)
                        cells.append(cell)
                        if k > n_samples:
                            cell.skipped = f"k = {k} > n = {n_samples}"
                            continue
                        table = per_problem_table(metric, n_samples)
                        v_a, v_b = table[c_a], table[c_b]
                        _run_cell(cell, config, v_a, v_b, None, n_samples, level, rng_parts=(2, prior_index, n_index, n_samples, k, len(metric), comparison == "paired"))
                        if progress:
                            progress(cell)
    return cells


def _run_cell(cell: Cell, config: StudyConfig, v_a, v_b, clusters, n_samples, level, rng_parts, methods=None):
    methods = tuple(methods or (config.methods if clusters is None else config.cluster_methods))
    if cell.comparison == "paired":
        methods = tuple(config.paired_methods) + methods
    hits: dict[str, list] = {m: [] for m in methods}
    widths: dict[str, list] = {m: [] for m in methods}
    extra = ["naive"] + (["t (ignores clusters)"] if clusters is not None else [])
    for name in extra:
        hits[name], widths[name] = [], []
    n_rows = v_a.shape[0]
    for block_index, start in enumerate(range(0, v_a.shape[1], config.block)):
        cols = slice(start, min(start + config.block, v_a.shape[1]))
        a_block, b_block = v_a[:, cols], v_b[:, cols]
        cl = None if clusters is None else clusters[block_index]
        for method_index, method in enumerate(methods):
            seed = np.random.SeedSequence([config.seed, *map(int, rng_parts), block_index, method_index])
            rng = np.random.default_rng(seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DegenerateIntervalWarning)
                warnings.simplefilter("ignore", IntervalMethodWarning)
                if cell.comparison == "single":
                    results = mean_ci_columns(a_block, clusters=cl, method=method, n_resamples=config.n_resamples, rng=rng)
                else:
                    results = paired_difference_columns(a_block, b_block, clusters=cl, method=method, n_resamples=config.n_resamples, rng=rng)
            hit, width = _collect(results, cell.truth)
            hits[method].append(hit)
            widths[method].append(width)
        if clusters is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DegenerateIntervalWarning)
                warnings.simplefilter("ignore", IntervalMethodWarning)
                if cell.comparison == "single":
                    results = mean_ci_columns(a_block, method="t")
                else:
                    results = paired_difference_columns(a_block, b_block, method="t")
            hit, width = _collect(results, cell.truth)
            hits["t (ignores clusters)"].append(hit)
            widths["t (ignores clusters)"].append(width)
        # naive: N*n samples as independent Bernoulli trials (unpaired for a difference)
        est_a = a_block.mean(axis=0)
        if cell.comparison == "single":
            low, high = _naive(est_a, est_a * (1 - est_a), n_rows * n_samples, level)
        else:
            est_b = b_block.mean(axis=0)
            low, high = _naive(est_a - est_b, est_a * (1 - est_a) + est_b * (1 - est_b), n_rows * n_samples, level)
        hits["naive"].append((low <= cell.truth) & (cell.truth <= high))
        widths["naive"].append(high - low)
    for name in hits:
        cell.coverage[name] = float(np.concatenate(hits[name]).mean())
        cell.mean_width[name] = float(np.concatenate(widths[name]).mean())
    cell.n_sims = v_a.shape[1]


def run_clustered(config: StudyConfig, *, progress=None) -> list[Cell]:
    """Clustered benchmarks: problems share difficulty within clusters."""
    cells: list[Cell] = []
    level = 0.95
    metrics = [m for m in config.metrics]
    for prior_index, prior in enumerate(config.priors):
        a, b = PRIORS[prior]
        for c_index, n_clusters in enumerate(config.n_clusters):
            rng = _seed(config, 3, prior_index, c_index)
            n_blocks = math.ceil(config.n_sims / config.block)
            # one cluster structure per block (blocks share resamples, so they share clusters)
            sizes_per_block = [rng.integers(1, CLUSTER_SIZE_MAX + 1, size=n_clusters) for _ in range(n_blocks)]
            blocks = []
            for block_index, sizes in enumerate(sizes_per_block):
                n_block = min(config.block, config.n_sims - block_index * config.block)
                labels = np.repeat(np.arange(n_clusters), sizes)
                rows = labels.size
                shared_a, shared_b = _correlated_probabilities(rng, a, b, (n_clusters, n_block))
                own_a, own_b = _correlated_probabilities(rng, a, b, (rows, n_block))
                use_shared = rng.random((rows, n_block)) < CLUSTER_SHARE
                p_a = np.where(use_shared, shared_a[labels], own_a)
                p_b = np.where(use_shared, shared_b[labels], own_b)
                blocks.append((labels, p_a, p_b))
            for n_samples in config.cluster_n_samples:
                counts = [(labels, rng.binomial(n_samples, p_a), rng.binomial(n_samples, p_b)) for labels, p_a, p_b in blocks]
                for metric in metrics:
                    k, _ = METRICS[metric]
                    for comparison in config.comparisons:
                        truth_a = population_value(metric, a, b)
                        truth = truth_a if comparison == "single" else truth_a - population_value(metric, MODEL_B_SHAPE_FACTOR * a, b)
                        cell = Cell("clustered", prior, comparison, metric, n_clusters, n_samples, truth)
                        cells.append(cell)
                        if k > n_samples:
                            cell.skipped = f"k = {k} > n = {n_samples}"
                            continue
                        table = per_problem_table(metric, n_samples)
                        merged: dict[str, list] = {}
                        widths: dict[str, list] = {}
                        total = 0
                        for block_index, (labels, c_a, c_b) in enumerate(counts):
                            sub = Cell("clustered", prior, comparison, metric, n_clusters, n_samples, truth)
                            sub_config = StudyConfig(**{**config.__dict__, "block": c_a.shape[1]})
                            _run_cell(
                                sub, sub_config, table[c_a], table[c_b], [labels], n_samples, level,
                                rng_parts=(4, prior_index, c_index, n_samples, k, len(metric), comparison == "paired", block_index),
                            )
                            for name, value in sub.coverage.items():
                                merged.setdefault(name, []).append(value * sub.n_sims)
                                widths.setdefault(name, []).append(sub.mean_width[name] * sub.n_sims)
                            total += sub.n_sims
                        cell.coverage = {name: sum(v) / total for name, v in merged.items()}
                        cell.mean_width = {name: sum(v) / total for name, v in widths.items()}
                        cell.n_sims = total
                        if progress:
                            progress(cell)
    return cells


def format_table(cells: list[Cell], methods: Sequence[str], *, title: str, paired_methods: Sequence[str] = PAIRED_ONLY_METHODS) -> str:
    """A markdown table: one row per cell, coverage (%) per method; the cell's default in bold."""
    extra = ["naive"] + (["t (ignores clusters)"] if cells and cells[0].design == "clustered" else [])
    has_paired = any(cell.comparison == "paired" for cell in cells)
    names = list(methods[:1]) + (list(paired_methods) if has_paired else []) + list(methods[1:]) + extra
    unit = "C" if cells and cells[0].design == "clustered" else "N"
    labels = {DEFAULT_INTERVAL_METHOD: f"**{DEFAULT_INTERVAL_METHOD}** (default)"}
    if has_paired:
        labels = {DEFAULT_INTERVAL_METHOD: f"**{DEFAULT_INTERVAL_METHOD}** (default, single)",
                  DEFAULT_PAIRED_METHOD: f"**{DEFAULT_PAIRED_METHOD}** (default, paired)"}
    header = f"| prior | comparison | metric | {unit} | n | " + " | ".join(labels.get(m, m) for m in names) + " | width of the default |"
    lines = [f"**{title}**", "", header, "|" + "---|" * (6 + len(names))]
    for cell in cells:
        lead = f"| {cell.prior} | {cell.comparison} | {cell.metric} | {cell.n_problems} | {cell.n_samples} |"
        if cell.skipped:
            lines.append(lead + f" skipped ({cell.skipped}) |" + " |" * len(names))
            continue
        default = default_method(cell.comparison)
        values = []
        for m in names:
            if m not in cell.coverage:
                values.append("")
                continue
            text = f"{100 * cell.coverage[m]:.1f}"
            values.append(f"**{text}**" if m == default else text)
        lines.append(lead + " " + " | ".join(values) + f" | {cell.mean_width[default]:.3f} |")
    return "\n".join(lines)


def acceptance(cells: list[Cell], *, low: float = 0.93, high: float = 0.98, min_problems: int = 30) -> list[str]:
    """Cells (N >= min_problems, not skipped) where the default method is outside [low, high]."""
    failures = []
    for cell in cells:
        if cell.skipped or cell.n_problems < min_problems or cell.design != "independent":
            continue
        coverage = cell.coverage[default_method(cell.comparison)]
        if not low <= coverage <= high:
            failures.append(
                f"{cell.prior} {cell.comparison} {cell.metric} N={cell.n_problems} n={cell.n_samples}: {100 * coverage:.1f}%"
            )
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="full size (2,000 simulations per cell); also KPASS_COVERAGE_FULL=1")
    parser.add_argument("--sims", type=int, help="simulations per cell (overrides the size)")
    parser.add_argument("--resamples", type=int, help="bootstrap resamples per interval")
    parser.add_argument("--no-clustered", action="store_true", help="skip the clustered table")
    parser.add_argument("--output", help="also write the markdown tables to this file")
    parser.add_argument("--edges-output", help="write the edge-regime table to this file (else it joins --output)")
    parser.add_argument("--regimes-only", action="store_true", help="only the edge-regime table (issue #16)")
    parser.add_argument("--no-regimes", action="store_true", help="skip the edge-regime table")
    parser.add_argument("--comparisons", default="single,paired", help="edge regimes: single, paired or both (comma-separated)")
    parser.add_argument("--regime-sims", type=int, help=f"edge regimes: simulations per cell (full: {REGIME_SIMS})")
    parser.add_argument("--paired-only", action="store_true", help="edge regimes: only the paired cells (--comparisons paired)")
    parser.add_argument("--regimes", help="edge regimes: only these regimes (comma-separated; a name or a part of one)")
    parser.add_argument("--metrics", help="edge regimes: only these metrics (comma-separated, e.g. pass@1,cons@5)")
    parser.add_argument("--n-problems", help="edge regimes: only these N (comma-separated)")
    parser.add_argument("--n-samples", help="edge regimes: only these n (comma-separated)")
    parser.add_argument("--summary-doc", help="edge regimes (full profile, whole grid): also write the per-regime "
                        "overview of each comparison into this page's <!-- coverage-edges-COMPARISON:start/end --> block")
    args = parser.parse_args(argv)
    if args.summary_doc is not None and args.no_regimes:
        parser.error("--summary-doc writes the edge regimes' overview: not with --no-regimes")
    full = args.full or os.environ.get("KPASS_COVERAGE_FULL") == "1"
    comparisons = ("paired",) if args.paired_only else tuple(dict.fromkeys(
        c.strip() for c in args.comparisons.split(",") if c.strip()))
    filters = regime_filters(args, parser)
    if args.summary_doc is not None:  # every refusal before any run: a page without its blocks fails now
        if not full or filters or args.regime_sims or args.resamples:
            parser.error("--summary-doc writes the docs' overview: only with the full profile's whole edge grid "
                         "(no --regimes, --metrics, --n-problems, --n-samples, --regime-sims or --resamples)")
        tables = [p for p in (args.output, args.edges_output) if p]
        if os.path.exists(args.summary_doc) and any(os.path.exists(p) and os.path.samefile(p, args.summary_doc) for p in tables):
            parser.error("--summary-doc names the file the tables are written to (--output/--edges-output): "
                         "the page would be overwritten; give the docs page and a separate table file")
        try:
            for comparison in comparisons:
                doc_block_parts(args.summary_doc, f"coverage-edges-{comparison}")
            if "paired" in comparisons:
                doc_block_parts(args.summary_doc, "coverage-attainable-paired")
        except (OSError, ValueError) as error:
            parser.error(f"--summary-doc: {error}")
    config = StudyConfig() if full else SMALL
    overrides = {}
    if args.sims:
        overrides["n_sims"] = args.sims
        overrides["block"] = min(config.block, args.sims)
    if args.resamples:
        overrides["n_resamples"] = args.resamples
    if args.no_clustered:
        overrides["clustered"] = False
    if overrides:
        config = StudyConfig(**{**config.__dict__, **overrides})
    started = time.perf_counter()

    def progress(cell: Cell) -> None:
        print(
            f"[{time.perf_counter() - started:7.1f}s] {cell.design} {cell.prior} {cell.comparison} {cell.metric} "
            f"{'C' if cell.design == 'clustered' else 'N'}={cell.n_problems} n={cell.n_samples}: "
            + " ".join(f"{m}={100 * v:.1f}" for m, v in cell.coverage.items()),
            file=sys.stderr,
            flush=True,
        )

    failures: list[str] = []
    if not args.regimes_only:
        cells = run_independent(config, progress=progress)
        parts = [
            f"Coverage (%) of nominal 95% intervals; {config.n_sims} simulated benchmarks per cell, "
            f"{config.n_resamples} bootstrap resamples per interval, seed {config.seed}.",
            "",
            format_table(cells, config.methods, title="Independent problems", paired_methods=config.paired_methods),
        ]
        if config.clustered:
            clustered = run_clustered(config, progress=progress)
            parts += ["", format_table(clustered, config.cluster_methods, title="Clustered problems (C clusters of 1-9 problems)",
                                       paired_methods=config.paired_methods)]
        failures = acceptance(cells)
        parts += [
            "",
            f"Default methods: {DEFAULT_INTERVAL_METHOD} (single), {DEFAULT_PAIRED_METHOD} (paired). "
            "Cells with N >= 30 and k <= n outside 93-98%: " + (", ".join(failures) if failures else "none") + ".",
            f"Run time: {time.perf_counter() - started:.0f} s.",
        ]
        _emit("\n".join(parts), args.output)
    if not args.no_regimes:
        regime_started = time.perf_counter()
        n_sims = args.regime_sims or (REGIME_SIMS if full else config.n_sims)
        n_resamples = args.resamples or (REGIME_RESAMPLES if full else config.n_resamples)
        grid = {**({} if full else QUICK_REGIME_GRID), **filters}
        regime_cells = run_regimes(n_sims=n_sims, n_resamples=n_resamples, seed=config.seed, comparisons=comparisons,
                                   **grid, progress=_regime_progress(started))
        attainable = attainable_cells(regime_cells)  # the paired 0/1 cells without clusters at N >= 30, if any
        attainable_text = attainable_markdown(attainable) if attainable else ""
        text = "\n".join([
            f"Edge regimes: {n_sims} simulated benchmarks per cell at N >= {ASSESSED_PROBLEMS} "
            f"({regime_sims(n_sims, 10, 1)} at N = 10), {n_resamples} resamples, seed {config.seed}; "
            f"comparisons: {', '.join(comparisons)}. Written by `scripts/coverage_study.py` "
            f"({'full' if full else 'quick'} profile).", "",
            format_regime_table(regime_cells), "", regime_summary(regime_cells), "",
            *([attainable_text, ""] if attainable_text else []),
            discreteness_table(REGIME_N_PROBLEMS, PROBLEMS_PER_CLUSTER, RARE_SHARE, ASSESSED_PROBLEMS), "",
            f"Run time: {time.perf_counter() - regime_started:.0f} s."])
        target = args.edges_output or args.output
        if args.output and not args.edges_output and not args.regimes_only:
            with open(args.output, encoding="utf-8") as handle:  # one file: the main tables, then the regimes
                text = handle.read() + "\n" + text
        _emit(text, target)
        if args.summary_doc is not None:
            source = f" that wrote [{os.path.basename(target)}]({os.path.basename(target)})" if target else ""
            for comparison in comparisons:
                overview = regime_overview_markdown(regime_cells, (*REGIMES, *CLUSTERED_REGIMES), BAND, ASSESSED_PROBLEMS,
                                                    comparison)
                caption = (f"Written by the full run of `scripts/coverage_study.py`{source} ({comparison}, the cells at "
                           f"N >= {ASSESSED_PROBLEMS}, {n_sims} simulated benchmarks each, band "
                           f"{100 * BAND[0]:g}-{100 * BAND[1]:g}%, width rule {WIDTH_RULE}x).")
                blocks = [(f"coverage-edges-{comparison}", caption + "\n\n" + overview)]
                if comparison == "paired":
                    blocks.append(("coverage-attainable-paired", f"Written by the same run{source}.\n\n" + attainable_text))
                try:
                    for name, block in blocks:
                        write_doc_block(args.summary_doc, name, block)
                except (OSError, ValueError) as error:
                    print(f"coverage_study.py: --summary-doc: {error}", file=sys.stderr)
                    return 2
    return 1 if (failures and full) else 0


def regime_filters(args, parser) -> dict:
    """``run_regimes`` keywords from ``--regimes/--metrics/--n-problems/--n-samples`` (a usage error, exit 2,
    names an unknown regime or metric or a bad number)."""
    out: dict = {}
    try:
        if args.regimes:
            out["regimes"] = parse_names(args.regimes, (*REGIMES, *CLUSTERED_REGIMES), "--regimes", partial=True)
        if args.metrics:
            out["metrics"] = parse_names(args.metrics, tuple(REGIME_METRICS), "--metrics")
        for flag in ("n_problems", "n_samples"):
            if getattr(args, flag):
                out[flag] = parse_integers(getattr(args, flag), "--" + flag.replace("_", "-"))
    except ValueError as error:
        parser.error(str(error))
    return out


def _emit(text: str, path: str | None) -> None:
    print(text)
    if path:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")


def _regime_progress(started: float):
    def progress(cell: RegimeCell) -> None:
        print(f"[{time.perf_counter() - started:7.1f}s] {cell.regime} {cell.comparison} {cell.metric} N={cell.n_problems} "
              f"n={cell.n_samples}: " + " ".join(f"{m}={100 * v:.1f}" for m, v in cell.coverage.items())
              + f" width {cell.width[cell.default]:.3f}", file=sys.stderr, flush=True)
    return progress


if __name__ == "__main__":
    raise SystemExit(main())
