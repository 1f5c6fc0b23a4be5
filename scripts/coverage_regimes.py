"""The edge regimes of the coverage study (issue #16): populations near the ends of the range.

The third table of ``scripts/coverage_study.py`` (:func:`run_regimes`) uses populations of its own, mixtures of problem kinds with
exact population values (:data:`REGIMES`: rare hard problems at the ceiling, rare easy ones at the
floor, point masses at 0 and 1, a bell-shaped population near 0.98, sparse paired gains; and
:data:`CLUSTERED_REGIMES`, the first three in N/3 clusters), metrics :data:`REGIME_METRICS`
(pass@1, pass@8, pass^4, G-Pass@8_0.5, mG-Pass@8, cons@5), N in :data:`REGIME_N_PROBLEMS` and n in
:data:`REGIME_N_SAMPLES`, :data:`REGIME_SIMS` (1,000) simulations per cell at N >= 30, 30% of that at
N = 10 (:func:`regime_sims`). Per cell: the default's coverage and its Monte Carlo standard error,
misses below and above, mean width, the narrowest method covering >= 94% and the 1.3x width rule,
the warned share of misses and of all; per regime and in total, the cells outside 93-98% plainly
and beyond 2 Monte Carlo standard errors (:meth:`RegimeCell.beyond_mc_error`), and the exact
binomial coverage of the rare-kind count (``coverage_precision.discreteness_table``). The simulated benchmarks of
a (regime, N, n) are drawn once for all its metrics (:func:`simulate_regime`), single-model cells
skip model B's Beta quantiles, and the study's ``--regimes/--metrics/--n-problems/--n-samples`` run a subset.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import special, stats

from coverage_precision import (
    CLUSTER_SHARE,
    COPULA_CORRELATION,
    default_method,
    monte_carlo_se,
    regime_summary_lines,
    regime_table_markdown,
)
from kpass.metrics import (
    DEFAULT_INTERVAL_METHOD,
    DEFAULT_PAIRED_METHOD,
    FEW_CLUSTERS,
    DegenerateIntervalWarning,
    IntervalMethodWarning,
    MeaninglessMetricWarning,
    PairedResult,
    cons_at_k,
    g_pass_at_k,
    mean_ci_columns,
    mg_pass_at_k,
    paired_difference_columns,
    pass_at_k,
)
from kpass.metrics._interval_warnings import replaced_tail_warns

#: Metrics of the regime table: name -> (k, m), value unbiased for P(Binomial(k, p) >= m).
REGIME_METRICS: dict[str, tuple[int, int]] = {"pass@1": (1, 1), "pass@8": (8, 1), "pass^4": (4, 4),
                                              "G-Pass@8_0.5": (8, 4), "mG-Pass@8": (8, 5), "cons@5": (5, 3)}
#: Population value of each regime metric as a weighted sum of ``P(Binomial(k, p) >= m)`` terms:
#: mG-Pass@8 (published) is ``(2/8) sum_{i=5..8} P(X >= i)``; cons@5 with one wrong answer class is
#: the majority of 5 votes, ``P(X >= 3)``. fin@k(B) is pass@k of the "finished within B" indicator
#: (the same function of the counts), so the pass@8 rows are its rows.
REGIME_VALUE_TERMS: dict[str, tuple[tuple[int, int, float], ...]] = {
    **{name: ((k, m, 1.0),) for name, (k, m) in REGIME_METRICS.items() if name != "mG-Pass@8"},
    "mG-Pass@8": tuple((8, i, 0.25) for i in range(5, 9)),
}


@dataclass(frozen=True)
class Component:
    """One kind of problem: its share, and each model's success probability on it.

    ``a`` and ``b`` are a Beta(alpha, beta) pair or a float (a point mass at that probability);
    within a component the two models' probabilities are joined by the Gaussian copula of the
    main grid (correlation 0.8), so the paired comparison stays paired.
    """

    share: float
    a: tuple[float, float] | float
    b: tuple[float, float] | float


#: The regimes of issue #16, each a mixture of problem kinds (exact population values below).
REGIMES: dict[str, tuple[Component, ...]] = {
    # an easy benchmark with a few rare hard problems: pass@8 about 0.99, carried by 3% of problems
    "ceiling (rare hard problems)": (Component(0.97, (20.0, 0.2), (25.0, 0.2)), Component(0.03, (1.0, 1.5), (1.5, 1.5))),
    # a hard benchmark with a few rare easy problems: pass^4 near 0.002-0.01
    "floor (rare easy problems)": (Component(0.97, (0.2, 20.0), (0.2, 15.0)), Component(0.03, (1.5, 1.0), (2.0, 1.0))),
    # point masses at 0 and 1 (problems always or never solved) around a mid-range bulk
    "point masses at 0 and 1": (Component(0.35, 0.0, 0.0), Component(0.35, 1.0, 1.0), Component(0.30, (2.0, 2.0), (3.0, 2.0))),
    # a bell-shaped population near the ceiling: Beta(3.5, 2.5), pass@8 = 0.9836
    "bell-shaped near 0.98": (Component(1.0, (3.5, 2.5), (4.0, 2.5)),),
    # a paired gain that lives on 10% of the problems, the rest stuck at 0 or 1 for both models
    "sparse paired gains": (Component(0.45, 0.0, 0.0), Component(0.45, 1.0, 1.0), Component(0.10, (2.0, 3.0), (4.0, 2.0))),
}

#: Clustered designs: the regime's problems in clusters of about PROBLEMS_PER_CLUSTER (N = 30 gives
#: 10 clusters); each cluster draws a kind and a probability, each problem takes the cluster's with
#: probability CLUSTER_SHARE or its own draw of the cluster's kind, so every problem's marginal
#: (and the population value) is the regime's.
CLUSTERED_REGIMES: dict[str, str] = {
    "clustered ceiling (10+ clusters)": "ceiling (rare hard problems)",
    "clustered floor (10+ clusters)": "floor (rare easy problems)",
    "clustered point masses (10+ clusters)": "point masses at 0 and 1",
}
PROBLEMS_PER_CLUSTER = 3

REGIME_N_PROBLEMS = (10, 30, 100, 200)
REGIME_N_SAMPLES = (1, 4, 16, 64)
#: Methods of the regime table (the default first); the width rule compares the default with them.
REGIME_METHODS = {"single": ("auto", "t", "bootstrap", "bca"), "paired": ("mover", "auto", "t", "bootstrap")}
CLUSTERED_REGIME_METHODS = {"single": ("auto", "clustered-t", "bootstrap", "bca"),
                            "paired": ("mover", "auto", "clustered-t", "bootstrap")}
#: The band (93-98%) is judged at N >= ASSESSED_PROBLEMS; the N = 10 cells get SMALL_N_SIM_SHARE of
#: the simulations (they are shown for the record).
ASSESSED_PROBLEMS = 30
SMALL_N_SIM_SHARE = 0.3
BAND = (0.93, 0.98)
#: The default must be no wider than this times the narrowest method that covers >= 94% in the cell.
WIDTH_RULE = 1.3


def _tail_value(k: int, m: int, p: tuple[float, float] | float) -> float:
    """``E[P(Binomial(k, p) >= m)]`` for ``p ~ Beta`` (closed form) or a point mass."""
    if isinstance(p, tuple):
        log_terms = [math.log(math.comb(k, j)) + special.betaln(p[0] + j, p[1] + k - j) - special.betaln(*p)
                     for j in range(m, k + 1)]
        return float(np.exp(log_terms).sum())
    return float(stats.binom.sf(m - 1, k, p))


def _component_value(metric: str, p: tuple[float, float] | float) -> float:
    """The population value of ``metric`` on one component (:data:`REGIME_VALUE_TERMS`)."""
    return sum(weight * _tail_value(k, m, p) for k, m, weight in REGIME_VALUE_TERMS[metric])


def base_regime(regime: str) -> str:
    """The mixture a (possibly clustered) regime draws its problems from."""
    return CLUSTERED_REGIMES.get(regime, regime)


def regime_value(regime: str, metric: str, model: str = "a") -> float:
    """The population value of ``metric`` for model ``"a"`` or ``"b"`` in ``regime`` (exact)."""
    return sum(c.share * _component_value(metric, c.a if model == "a" else c.b) for c in REGIMES[base_regime(regime)])


def regime_table(metric: str, n: int) -> np.ndarray:
    """Per-problem value of ``metric`` for c = 0..n correct of n, from kpass's own estimators."""
    counts = np.arange(n + 1)
    samples = np.full(n + 1, n)
    k, m = REGIME_METRICS[metric]
    if metric == "mG-Pass@8":
        return mg_pass_at_k(samples, counts, k)
    if metric == "cons@5":  # gold answer vs one wrong answer class
        return cons_at_k(np.stack([counts, n - counts], axis=1), k)
    return pass_at_k(samples, counts, k) if m == 1 else g_pass_at_k(samples, counts, k, tau=m / k)


def regime_sims(n_sims: int, n_problems: int, n_samples: int) -> int:
    """Simulations of one cell: ``n_sims`` at N >= :data:`ASSESSED_PROBLEMS` (the cells the band is
    judged on), a :data:`SMALL_N_SIM_SHARE` of it below (N = 10: shown, not judged). ``n_samples``
    does not matter (kept for the signature)."""
    return n_sims if n_problems >= ASSESSED_PROBLEMS else max(int(n_sims * SMALL_N_SIM_SHARE), 1)


def _draw_component(rng, p_a, p_b, shape, chosen=None, need_b=True):
    """Both models' probabilities on one component through the copula of the main grid.

    The standard normals are drawn for the full ``shape`` (the random stream does not depend on
    ``chosen`` or ``need_b``); the Beta quantile, the costly part, is taken only where ``chosen``
    (every entry when ``None``) and, without ``need_b``, only for model A (model B is NaN).
    """
    z_a = rng.standard_normal(shape)
    z_b = COPULA_CORRELATION * z_a + math.sqrt(1.0 - COPULA_CORRELATION**2) * rng.standard_normal(shape)
    mask = np.ones(shape, dtype=bool) if chosen is None else chosen
    out = []
    for p, z, needed in ((p_a, z_a, True), (p_b, z_b, need_b)):
        values = np.full(shape, np.nan)
        if needed:
            values[mask] = stats.beta.ppf(special.ndtr(z[mask]), *p) if isinstance(p, tuple) else float(p)
        out.append(values)
    return out


def _probabilities_of_kind(rng, components, kind, need_b=True):
    p_a, p_b = np.empty(kind.shape), np.empty(kind.shape)
    for index, component in enumerate(components):
        chosen = kind == index
        a, b = _draw_component(rng, component.a, component.b, kind.shape, chosen, need_b)
        p_a[chosen], p_b[chosen] = a[chosen], b[chosen]
    return p_a, p_b


def regime_probabilities(rng, regime: str, shape: tuple[int, int], need_b: bool = True):
    """Per-problem probabilities of models A and B, shape ``(N, sims)``, and the cluster labels.

    Each problem's kind is drawn by share; in a clustered regime each of the ``N //``
    :data:`PROBLEMS_PER_CLUSTER` clusters draws a kind and a probability pair, and each of its
    problems keeps the pair with probability :data:`CLUSTER_SHARE` or draws its own of that kind.
    The labels are ``None`` without clusters. Without ``need_b`` model B's probabilities are NaN
    (single-model cells; model A's are the same either way, from the same random stream).
    """
    components = REGIMES[base_regime(regime)]
    shares = [c.share for c in components]
    if regime not in CLUSTERED_REGIMES:
        kind = rng.choice(len(components), size=shape, p=shares)
        return (*_probabilities_of_kind(rng, components, kind, need_b), None)
    n_problems, n_sims = shape
    n_clusters = max(n_problems // PROBLEMS_PER_CLUSTER, 2)
    labels = np.arange(n_problems) % n_clusters
    cluster_kind = rng.choice(len(components), size=(n_clusters, n_sims), p=shares)
    shared_a, shared_b = _probabilities_of_kind(rng, components, cluster_kind, need_b)
    own_a, own_b = _probabilities_of_kind(rng, components, cluster_kind[labels], need_b)
    use_shared = rng.random(shape) < CLUSTER_SHARE
    return np.where(use_shared, shared_a[labels], own_a), np.where(use_shared, shared_b[labels], own_b), labels


#: Share of the rare kind in the ceiling and floor regimes (:data:`REGIMES`).
RARE_SHARE = 0.03


def _warned(result) -> bool:
    """Whether kpass warns about this column's interval: a degenerate column, a replaced bootstrap-t tail that
    kpass warns about (``replaced_tail_warns``: a non-default method's, or a t fallback), sparse differences,
    fewer than 10 clusters (whatever the method), a single-model mean resting on a few problems off an end
    (``details["few_off_end"]``), a paired difference resting mostly on tiny ones
    (``details["rests_on_tiny_differences"]``) or on one differing problem (``details["rests_on_few_differences"]``).
    ``tests/metrics/test_coverage.py`` checks it against the
    warnings kpass gives."""
    details = result.details
    default = result.method == (DEFAULT_PAIRED_METHOD if isinstance(result, PairedResult) else DEFAULT_INTERVAL_METHOD)
    return bool(replaced_tail_warns(details, default) or "degenerate" in details or details.get("sparse_differences")
                or details.get("few_off_end") or details.get("rests_on_tiny_differences")
                or details.get("rests_on_few_differences")
                or (result.n_clusters is not None and result.n_clusters < FEW_CLUSTERS))


@dataclass
class RegimeCell:
    """One cell of the regime table: per method coverage, one-sided misses and mean width."""

    regime: str
    comparison: str
    metric: str
    n_problems: int
    n_samples: int
    truth: float
    coverage: dict[str, float] = field(default_factory=dict)
    miss_low: dict[str, float] = field(default_factory=dict)   # truth below the interval
    miss_high: dict[str, float] = field(default_factory=dict)  # truth above the interval
    width: dict[str, float] = field(default_factory=dict)
    warned_share_of_misses: float = float("nan")  # of the default's misses, the share kpass warned about
    warned_share: float = 0.0  # of all the default's intervals
    n_sims: int = 0
    n_clusters: int | None = None

    @property
    def default(self) -> str:
        return default_method(self.comparison)

    def narrowest_covering(self, floor: float = 0.94) -> float | None:
        widths = [self.width[m] for m in self.coverage if self.coverage[m] >= floor]
        return min(widths) if widths else None

    def in_band(self, low: float = BAND[0], high: float = BAND[1]) -> bool:
        return low <= self.coverage[self.default] <= high

    @property
    def mc_se(self) -> float:
        """Monte Carlo standard error of the default's coverage (:func:`monte_carlo_se`)."""
        return monte_carlo_se(self.coverage[self.default], self.n_sims)

    def beyond_mc_error(self, low: float = BAND[0], high: float = BAND[1]) -> bool:
        """Out of band by more than 2 Monte Carlo standard errors of a method whose true coverage is at
        the band's nearer edge: ``c < low - 2 sqrt(low (1 - low) / S)`` or ``c > high + 2 sqrt(high (1 - high) / S)``
        (a method exactly at the edge lands there about 2.3% of the time)."""
        c = self.coverage[self.default]
        return c < low - 2.0 * monte_carlo_se(low, self.n_sims) or c > high + 2.0 * monte_carlo_se(high, self.n_sims)

    def within_width_rule(self) -> bool:
        narrowest = self.narrowest_covering()
        return narrowest is None or self.width[self.default] <= WIDTH_RULE * narrowest + 1e-12


def simulate_regime(regime: str, n_problems: int, n_samples: int, n_sims: int, seed: int, need_b: bool = True):
    """Correct counts of models A and B (B ``None`` without ``need_b``), shape ``(N, sims)``, and the labels.

    Seeded by ``(seed, regime's index, N, n)``, so every metric and comparison of a cell sees the
    same simulated benchmarks; model A's counts do not depend on ``need_b``. :func:`run_regimes`
    computes them once per ``(regime, N, n)`` and reuses them for every metric.
    """
    regime_index = list(REGIMES).index(regime) if regime in REGIMES else len(REGIMES) + list(CLUSTERED_REGIMES).index(regime)
    rng = np.random.default_rng(np.random.SeedSequence([seed, regime_index, n_problems, n_samples]))
    p_a, p_b, labels = regime_probabilities(rng, regime, (n_problems, n_sims), need_b)
    c_a = rng.binomial(n_samples, p_a)
    c_b = rng.binomial(n_samples, p_b) if need_b else None
    return c_a, c_b, labels


def run_regime_cell(regime: str, comparison: str, metric: str, n_problems: int, n_samples: int, *,
                    n_sims: int, n_resamples: int, seed: int, methods: Sequence[str] | None = None,
                    counts=None) -> RegimeCell:
    """Simulate ``n_sims`` benchmarks of one regime cell and interval them with every method (seeded).

    ``counts`` is :func:`simulate_regime`'s result for this cell when the caller has it already.
    """
    truth = regime_value(regime, metric) - (regime_value(regime, metric, "b") if comparison == "paired" else 0.0)
    cell = RegimeCell(regime, comparison, metric, n_problems, n_samples, truth)
    if counts is None:
        counts = simulate_regime(regime, n_problems, n_samples, n_sims, seed, need_b=comparison == "paired")
    c_a, c_b, labels = counts
    table = regime_table(metric, n_samples)
    v_a = table[c_a]
    v_b = None if c_b is None else table[c_b]
    cell.n_clusters = None if labels is None else int(labels.max() + 1)
    methods = tuple(methods or (REGIME_METHODS if labels is None else CLUSTERED_REGIME_METHODS)[comparison])
    for index, method in enumerate(methods):
        generator = np.random.default_rng(np.random.SeedSequence([seed, 99, index, n_problems, n_samples]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateIntervalWarning)
            warnings.simplefilter("ignore", IntervalMethodWarning)
            warnings.simplefilter("ignore", MeaninglessMetricWarning)
            if comparison == "single":
                results = mean_ci_columns(v_a, clusters=labels, method=method, n_resamples=n_resamples, rng=generator)
            else:
                results = paired_difference_columns(v_a, v_b, clusters=labels, method=method, n_resamples=n_resamples,
                                                    rng=generator)
        low = np.array([r.low for r in results])
        high = np.array([r.high for r in results])
        cell.coverage[method] = float(((low <= truth) & (truth <= high)).mean())
        cell.miss_low[method] = float((truth < low).mean())
        cell.miss_high[method] = float((truth > high).mean())
        cell.width[method] = float((high - low).mean())
        if method == cell.default:
            warned = np.array([_warned(r) for r in results])
            missed = ~((low <= truth) & (truth <= high))
            cell.warned_share = float(warned.mean())
            cell.warned_share_of_misses = float(warned[missed].mean()) if missed.any() else float("nan")
    cell.n_sims = v_a.shape[1]
    return cell


def regime_cell_keys(*, n_problems=REGIME_N_PROBLEMS, n_samples=REGIME_N_SAMPLES, regimes=(*REGIMES, *CLUSTERED_REGIMES),
                     metrics=tuple(REGIME_METRICS), comparisons=("single", "paired")) -> list[tuple[str, str, str, int, int]]:
    """The ``(regime, comparison, metric, N, n)`` of every cell of the regime grid, in table order."""
    keys = []
    for regime in regimes:
        for comparison in comparisons:
            if regime == "sparse paired gains" and comparison == "single":
                continue  # its single-model cells are the point-mass regime's
            if regime == "bell-shaped near 0.98" and comparison == "paired":
                continue  # a single-model regime
            for metric in metrics:
                k, _ = REGIME_METRICS[metric]
                keys += [(regime, comparison, metric, big_n, n) for n in n_samples if k <= n for big_n in n_problems]
    return keys


def run_regimes(*, n_sims: int, n_resamples: int, seed: int, n_problems=REGIME_N_PROBLEMS,
                n_samples=REGIME_N_SAMPLES, regimes=(*REGIMES, *CLUSTERED_REGIMES), metrics=tuple(REGIME_METRICS),
                comparisons=("single", "paired"), progress=None) -> list[RegimeCell]:
    """Every cell of the regime grid (cells with k > n are left out; N < 30 cells get fewer simulations).

    The simulated benchmarks of a ``(regime, comparison, N, n)`` are drawn once and shared by its
    metrics (:func:`simulate_regime`); the cells come back in table order (:func:`regime_cell_keys`).
    """
    keys = regime_cell_keys(n_problems=n_problems, n_samples=n_samples, regimes=regimes, metrics=metrics,
                            comparisons=comparisons)
    by_design: dict[tuple, list] = {}
    for key in keys:
        regime, comparison, _, big_n, n = key
        by_design.setdefault((regime, comparison, big_n, n), []).append(key)
    done = {}
    for (regime, comparison, big_n, n), group in by_design.items():
        sims = regime_sims(n_sims, big_n, n)
        counts = simulate_regime(regime, big_n, n, sims, seed, need_b=comparison == "paired")
        for key in group:
            cell = run_regime_cell(*key, n_sims=sims, n_resamples=n_resamples, seed=seed, counts=counts)
            done[key] = cell
            if progress:
                progress(cell)
    return [done[key] for key in keys]


def format_regime_table(cells: list[RegimeCell]) -> str:
    """Markdown: the default's coverage and MC SE, one-sided misses, width, the width rule and the warned shares."""
    return regime_table_markdown(cells, BAND, ASSESSED_PROBLEMS)


def out_of_band(cells: list[RegimeCell], comparison: str | None = None, beyond_mc_error: bool = False) -> list[RegimeCell]:
    """Cells with N >= 30 whose default is outside 93-98% (of one comparison, or of both); with
    ``beyond_mc_error`` only those out by more than 2 Monte Carlo standard errors (:meth:`RegimeCell.beyond_mc_error`)."""
    return [c for c in cells if c.n_problems >= ASSESSED_PROBLEMS and not c.in_band() and comparison in (None, c.comparison)
            and (c.beyond_mc_error() or not beyond_mc_error)]


def regime_summary(cells: list[RegimeCell]) -> str:
    """Per regime and comparison, then in total: the default's coverage range at N >= 30, the cells out of band
    (plainly and beyond 2 Monte Carlo SE), the width rule and the warned shares (:func:`regime_summary_lines`)."""
    return regime_summary_lines(cells, (*REGIMES, *CLUSTERED_REGIMES), BAND, ASSESSED_PROBLEMS, WIDTH_RULE)


#: Size of the full edge-regime run (``make coverage``): simulations per cell at N >= 30 (fewer at N = 10,
#: :func:`regime_sims`) and bootstrap resamples per interval. 1,000 simulations: a method that covers
#: exactly 95% shows outside 93-98% in about 0.3% of the cells (binomial SE 0.69 points).
REGIME_SIMS = 1000
REGIME_RESAMPLES = 499
#: The quick profile (any run without ``--full``, as in CI): the cells at N = 30 and 100, n = 16.
QUICK_REGIME_GRID = {"n_problems": (30, 100), "n_samples": (16,)}
