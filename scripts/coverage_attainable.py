r"""The least coverage any valid interval can have in a paired 0/1 cell of the edge regimes (issue #16).

Issue #16 asks the default interval to cover 93-98% in every cell with N >= 30. Where the two models
score 0 or 1 on each problem (pass@1 from one sample, pass^4 from four) and the problems are
independent, the per-problem values (what kpass's interval functions receive) come down to the counts
of the four outcomes of a problem: both right
(:math:`n_{11}`), both wrong (:math:`n_{00}`), only A right (b) and only B right (c), multinomial with
probabilities :math:`(p_{11}, p_{00}, p_{10}, p_{01})`; the paired difference is
:math:`\theta = p_{10} - p_{01}`. An interval that is a deterministic function of the data and does
not depend on the order of the problems (every kpass interval, its bootstrap seeded) is a function of
those counts, and its coverage at a population is the probability of the counts whose interval holds
:math:`\theta`. (An interval of richer data, the correct counts out of 4 behind pass^4, could use them
as a coin; the bound is about intervals of the per-problem values.)

If such an interval covers at least :math:`1 - \alpha` at *every* population with the difference
:math:`\theta` (the cell's *slice*), then at the cell's own population it covers at least

.. math:: L = 1 - \max\{P(E) : E \text{ a set of counts with } Q(E) \le \alpha \text{ for every } Q
          \text{ of the slice}\},

E being the counts whose interval leaves :math:`\theta` out. :math:`L > 98\%` means no such interval
can be inside 93-98% in that cell: the band is out of reach there, whatever the method. The maximum is
a 0/1 multiple knapsack, solved by :func:`scipy.optimize.milp` (HiGHS); :func:`least_attainable_coverage`
returns its *dual* bound, a certified one. Checking only a finite grid of the slice, and leaving out
the counts whose probability at the cell is below :data:`DROPPED_PROBABILITY` (their total is
subtracted), can only lower :math:`L`, so the bound stays valid. Randomized procedures are not
covered: a coin can reach exactly :math:`1 - \alpha` anywhere (the linear relaxation of the knapsack).

Two classes of procedures (:data:`PROCEDURE_CLASSES`):

- ``"differences"``: intervals of the per-problem differences alone, functions of (b, c): the paired
  t, bootstrap and studentized intervals of :math:`d_j`, Bonett & Price's matched-pairs interval (the
  default for 0/1 values), sign tests. How the ties split between solved and failed carries no
  information about :math:`(p_{10}, p_{01})`: given (b, c) its distribution depends only on
  :math:`r = p_{11}/(p_{11} + p_{00})`, a parameter free of them. An interval can still read it as a
  coin of unknown bias, which the ``"counts"`` class allows. The slice is
  :math:`\{(p_{10}, p_{01}) = (t, t - \theta)\}`.
- ``"counts"``: any deterministic function of :math:`(n_{11}, n_{00}, b, c)` (MOVER of the two models
  reads the split); the slice adds every split :math:`r \in [0, 1]`. Such a procedure may use the split
  as a coin, which lowers :math:`L`; where :math:`L` still exceeds 98% no deterministic interval of the
  per-problem values reaches the band.

The cells' probabilities are exact up to quadrature (:func:`paired_binary_probabilities`: the
marginals in closed form, :math:`p_{11}` by Gauss-Hermite quadrature of the regimes' Gaussian copula),
so :math:`\theta` is the regime table's truth. ``scripts/coverage_study.py`` computes the table for the
paired 0/1 cells without clusters of its edge grid (:func:`attainable_cells`) and writes it after the
paired edge table.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from dataclasses import dataclass

import numpy as np
from scipy import special, stats
from scipy.optimize import Bounds, LinearConstraint, milp

from coverage_precision import COPULA_CORRELATION
from coverage_regimes import ASSESSED_PROBLEMS, BAND, REGIMES, RegimeCell, regime_table, regime_value

#: Validity levels of the bound: the nominal 95% and the band's lower edge (93%).
VALIDITY_LEVELS = (0.95, BAND[0])
#: The two classes of procedures (module docstring).
PROCEDURE_CLASSES = ("differences", "counts")
#: Counts whose probability at the cell is below this are taken as covered (their total is subtracted from the bound).
DROPPED_PROBABILITY = 1e-12
#: Gauss-Hermite nodes per dimension of the copula quadrature.
QUADRATURE_NODES = 200
#: Time limit of one knapsack (seconds), far above what the study's cells take (at most about 90 s on 2 cores), so
#: that the table does not depend on the machine; a search stopped by it still gives a valid (looser) bound.
SOLVER_SECONDS = 1800.0


def _success_probability(values: np.ndarray, n_samples: int):
    """``P(value = 1 | p)`` of a 0/1 per-problem value from ``n_samples`` samples: the binomial mass of the
    correct counts whose value is 1 (``values[c]`` for c = 0..n)."""
    ones = np.flatnonzero(values == 1.0)

    def probability(p):
        return stats.binom.pmf(ones[:, None], n_samples, np.atleast_1d(p)[None, :]).sum(axis=0)
    return probability


def is_binary_cell(metric: str, n_samples: int) -> bool:
    """Whether ``metric`` from ``n_samples`` samples takes only the values 0 and 1 (pass@1 at n = 1, pass^4 at n = 4)."""
    values = regime_table(metric, n_samples)
    return bool(np.isin(values, (0.0, 1.0)).all())


def _quantiles(p, z):
    """Beta(p) quantiles of the normal probabilities of ``z`` (a float p: that point mass). ``z`` is cut at
    +-8.5 (a normal tail of 1e-17): scipy's Beta quantile is NaN at some probabilities near 1e-198."""
    if not isinstance(p, tuple):
        return np.full(np.shape(z), float(p))
    return stats.beta.ppf(special.ndtr(np.clip(z, -8.5, 8.5)), *p)


def paired_binary_probabilities(regime: str, metric: str, n_samples: int,
                                nodes: int = QUADRATURE_NODES) -> tuple[float, float, float, float]:
    r"""``(p11, p00, p10, p01)`` of a paired 0/1 cell: both right, both wrong, only A right, only B right.

    With :math:`f_A(p)` the probability that model A's value is 1 given its success probability p
    (:func:`_success_probability`), the marginals :math:`E f_A` and :math:`E f_B` are the regime's exact
    population values (:func:`coverage_regimes.regime_value`), and :math:`p_{11} = E[f_A(p_A) f_B(p_B)]`
    is integrated over each component's Gaussian copula (correlation
    :data:`coverage_precision.COPULA_CORRELATION`) by ``nodes`` x ``nodes`` Gauss-Hermite quadrature;
    then :math:`p_{10} = E f_A - p_{11}`, :math:`p_{01} = E f_B - p_{11}`, so that
    :math:`p_{10} - p_{01}` is the exact truth.
    """
    if not is_binary_cell(metric, n_samples):
        raise ValueError(f"{metric} from {n_samples} samples is not a 0/1 value")
    success = _success_probability(regime_table(metric, n_samples), n_samples)
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    w = w / w.sum()
    # model A's latent normal is the node x (rows), model B's joins it through the copula with an independent node (columns)
    z_b = COPULA_CORRELATION * x[:, None] + math.sqrt(1.0 - COPULA_CORRELATION**2) * x[None, :]
    weights = w[:, None] * w[None, :]
    both = 0.0
    for component in REGIMES[regime]:
        f_a = success(_quantiles(component.a, x)).reshape(-1, 1)
        f_b = success(_quantiles(component.b, z_b.ravel())).reshape(z_b.shape)
        both += component.share * float((weights * f_a * f_b).sum())
    mean_a, mean_b = regime_value(regime, metric), regime_value(regime, metric, "b")
    only_a, only_b = mean_a - both, mean_b - both
    return both, 1.0 - both - only_a - only_b, only_a, only_b


def _outcomes(n_problems: int, procedure: str) -> np.ndarray:
    """Every count vector, summing to N: ``(b, c, ties)`` for ``"differences"``, ``(n11, n00, b, c)`` for ``"counts"``."""
    b, c = np.meshgrid(np.arange(n_problems + 1), np.arange(n_problems + 1), indexing="ij")
    pairs = np.stack([b.ravel(), c.ravel()], axis=1)
    pairs = pairs[pairs.sum(axis=1) <= n_problems]
    ties = n_problems - pairs.sum(axis=1)
    if procedure == "differences":
        return np.column_stack([pairs, ties])
    rows = np.repeat(pairs, ties + 1, axis=0)
    first = np.repeat(np.cumsum(ties + 1) - (ties + 1), ties + 1)  # where each pair's run of n11 = 0..ties starts
    both = np.arange(rows.shape[0]) - first
    return np.column_stack([both, np.repeat(ties, ties + 1) - both, rows])


def _log_probabilities(outcomes: np.ndarray, probabilities) -> np.ndarray:
    """Multinomial log-probabilities of ``outcomes`` (rows of counts) under ``probabilities`` (same order)."""
    counts = outcomes.astype(float)
    total = counts.sum(axis=1)
    log_p = special.gammaln(total + 1) - special.gammaln(counts + 1).sum(axis=1)
    return log_p + special.xlogy(counts, np.asarray(probabilities, dtype=float)[None, :]).sum(axis=1)


def _slice(probabilities, procedure: str) -> np.ndarray:
    """Populations with the cell's difference (rows in the outcome order of ``procedure``): a grid of the
    share t of problems only A solves (dense near its lower end), times a grid of the tie split r for ``"counts"``;
    the cell's own population is among them."""
    both, neither, only_a, only_b = probabilities
    theta = only_a - only_b
    low, high = max(0.0, theta), (1.0 + theta) / 2.0
    shares = np.concatenate([np.linspace(low, high, 201), low + np.geomspace(1e-6, high - low, 200), [only_a]])
    shares = np.unique(np.clip(shares, low, high))
    if procedure == "differences":  # (p10, p01, ties), the order of _outcomes
        return np.column_stack([shares, shares - theta, np.maximum(1.0 - 2.0 * shares + theta, 0.0)])  # 0, not -1e-17, at the top
    # "counts": the slice is two-dimensional, every fourth share times a grid of the tie split (the cell's own among them)
    split = both / (both + neither) if both + neither > 0 else 0.5  # no ties at the cell: any split
    splits = np.unique(np.concatenate([np.linspace(0.0, 1.0, 21), np.geomspace(1e-4, 0.2, 12), 1.0 - np.geomspace(1e-4, 0.2, 12),
                                       [split]]))
    shares = np.unique(np.concatenate([shares[::4], [only_a]]))
    t, r = np.meshgrid(shares, splits, indexing="ij")
    t, r = t.ravel(), r.ravel()
    ties = np.maximum(1.0 - 2.0 * t + theta, 0.0)
    return np.column_stack([ties * r, ties * (1.0 - r), t, t - theta])


@dataclass(frozen=True)
class AttainableBound:
    """The certified least coverage (``lower``) of one cell, class and validity level, and how it was reached."""

    lower: float  # 1 - (the knapsack's dual bound) - dropped
    excluded: float  # the knapsack's best solution: P(E) of a set E found (only on the grid of the slice)
    optimal: bool  # the search closed its gap (else lower is the looser bound at the time limit)
    n_outcomes: int  # count vectors in the knapsack
    dropped: float  # the cell's probability of the count vectors left out


def least_attainable_coverage(probabilities, n_problems: int, validity: float, procedure: str = "differences",
                              seconds: float = SOLVER_SECONDS) -> AttainableBound:
    r"""The least coverage of a deterministic interval at a paired 0/1 cell, given its coverage over the slice.

    .. math:: L = 1 - \max_{y \in \{0, 1\}^O} \Big\{\sum_o P(o)\, y_o :
              \sum_o Q_s(o)\, y_o \le 1 - \mathrm{validity} \text{ for every } s\Big\}

    over the count vectors o of ``procedure`` (``y_o = 1``: the interval of o leaves the difference out), P
    the cell's multinomial and :math:`Q_s` the populations of the slice's grid (:func:`_slice`). The
    knapsack is solved by HiGHS (:func:`scipy.optimize.milp`); its dual bound, the grid and the count vectors
    left out (probability below :data:`DROPPED_PROBABILITY` at the cell, their total subtracted) each only
    lower L, so ``lower`` bounds every such interval's coverage from below. It is never below ``validity``:
    the cell's own population is one of the slice's.

    Parameters
    ----------
    probabilities : sequence of 4 floats
        ``(p11, p00, p10, p01)`` of the cell (:func:`paired_binary_probabilities`), summing to 1.
    n_problems : int
        N, the benchmark's independent problems.
    validity : float
        The coverage the interval keeps at every population of the slice (0.95, or the band's 0.93).
    procedure : {"differences", "counts"}
        The class of intervals (:data:`PROCEDURE_CLASSES`).
    seconds : float
        HiGHS's time limit; a search stopped by it gives its looser dual bound (``optimal`` False), or
        ``validity`` when it has none.

    Returns
    -------
    AttainableBound
    """
    if procedure not in PROCEDURE_CLASSES:
        raise ValueError(f"procedure {procedure!r}: one of {PROCEDURE_CLASSES}")
    if not 0.0 < validity < 1.0:
        raise ValueError(f"validity {validity!r}: a level in (0, 1)")
    probabilities = _checked_probabilities(probabilities)
    outcomes = _outcomes(n_problems, procedure)
    own = probabilities if procedure == "counts" else np.r_[probabilities[2:], probabilities[:2].sum()]
    at_cell = np.exp(_log_probabilities(outcomes, own))
    kept = at_cell >= DROPPED_PROBABILITY
    dropped = float(at_cell[~kept].sum())
    outcomes, at_cell = outcomes[kept], at_cell[kept]
    rows = _slice(probabilities, procedure)
    slice_probabilities = np.exp(np.stack([_log_probabilities(outcomes, row) for row in rows]))
    with _quiet_native_stdout():  # HiGHS prints a debug line of its own to the C stdout
        result = milp(-at_cell, constraints=LinearConstraint(slice_probabilities, ub=1.0 - validity),
                      integrality=np.ones(at_cell.size), bounds=Bounds(0.0, 1.0),
                      options={"time_limit": seconds, "mip_rel_gap": 1e-6})
    dual = getattr(result, "mip_dual_bound", None)
    lower = validity if dual is None or not np.isfinite(dual) else max(validity, 1.0 + float(dual) - dropped)
    excluded = 0.0 if result.x is None else -float(result.fun)
    return AttainableBound(lower=lower, excluded=excluded, optimal=result.status == 0, n_outcomes=int(at_cell.size),
                           dropped=dropped)


def _checked_probabilities(probabilities) -> np.ndarray:
    """``(p11, p00, p10, p01)`` as an array: four values in [0, 1] (quadrature's -1e-12 taken as 0) summing to 1."""
    out = np.asarray(probabilities, dtype=float)
    if out.shape != (4,) or not np.isfinite(out).all() or (out < -1e-9).any() or abs(out.sum() - 1.0) > 1e-9:
        raise ValueError(f"probabilities {tuple(np.atleast_1d(out))!r}: four values (p11, p00, p10, p01) in [0, 1] summing to 1")
    return np.clip(out, 0.0, 1.0)


@contextlib.contextmanager
def _quiet_native_stdout():
    """File descriptor 1 sent to the null device for the block (what native code prints; Python's own output is flushed first)."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no descriptor 1 (an embedded interpreter): nothing to quiet
        yield
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            try:
                yield
            finally:
                os.dup2(saved, 1)
    finally:
        os.close(saved)


@dataclass
class AttainableCell:
    """One paired 0/1 cell without clusters: its probabilities, the bounds per (class, validity) and the default's coverage."""

    regime: str
    metric: str
    n_problems: int
    n_samples: int
    probabilities: tuple[float, float, float, float]
    bounds: dict[tuple[str, float], AttainableBound | None]  # None: not sought (no higher than the differences', at most the band's edge)
    coverage: float | None = None  # the default's simulated coverage, when the run has the cell

    @property
    def truth(self) -> float:
        return self.probabilities[2] - self.probabilities[3]

    def out_of_reach(self, procedure: str, validity: float, band_high: float = BAND[1]) -> bool:
        """No deterministic ``procedure``-class interval valid at ``validity`` on the slice covers at most ``band_high`` here."""
        bound = self.bounds[(procedure, validity)]
        return bound is not None and bound.lower > band_high


def attainable_cells(cells: list[RegimeCell], seconds: float = SOLVER_SECONDS) -> list[AttainableCell]:
    """The bounds of every paired 0/1 cell without clusters at N >= 30 among ``cells`` (the run's regime cells)."""
    out = []
    for cell in cells:
        if (cell.comparison != "paired" or cell.regime not in REGIMES  # a clustered regime is not in REGIMES
                or cell.n_problems < ASSESSED_PROBLEMS or not is_binary_cell(cell.metric, cell.n_samples)):
            continue
        probabilities = paired_binary_probabilities(cell.regime, cell.metric, cell.n_samples)
        bounds: dict[tuple[str, float], AttainableBound | None] = {}
        for validity in VALIDITY_LEVELS:
            of_differences = least_attainable_coverage(probabilities, cell.n_problems, validity, "differences", seconds)
            bounds[("differences", validity)] = of_differences
            # the counts hold the differences: their bound is no higher, so it is sought only where it could pass the band
            bounds[("counts", validity)] = (least_attainable_coverage(probabilities, cell.n_problems, validity, "counts", seconds)
                                            if of_differences.lower > BAND[1] else None)
        out.append(AttainableCell(cell.regime, cell.metric, cell.n_problems, cell.n_samples, probabilities, bounds,
                                  cell.coverage[cell.default]))
    return out


def _percent(bound: AttainableBound | None) -> str:
    if bound is None:
        return "-"
    text = f"{math.floor(10000 * bound.lower) / 100:.2f}"  # rounded down: a lower bound stays one
    return text if bound.optimal else text + " (time limit)"


def attainable_markdown(cells: list[AttainableCell]) -> str:
    """The table and its summary line: per cell the certified least coverage of each class and validity level."""
    low, high = BAND
    levels = " | ".join(f"{procedure}, {100 * v:g}% valid" for procedure in PROCEDURE_CLASSES for v in VALIDITY_LEVELS)
    lines = ["**The least coverage any valid interval can have (paired 0/1 cells without clusters)**", "",
             "Certified lower bounds (%) on the coverage at the cell's population of every deterministic interval of the "
             "class that covers at least 95% (or 93%) at every population of paired 0/1 values with the cell's "
             f"difference (`scripts/coverage_attainable.py`). Above {100 * high:g}% (bold): the band is out of reach in that cell. "
             "\"-\": not sought, as the counts' bound is no higher than the differences', which is at most "
             f"{100 * high:g}% there.", "",
             f"| regime | metric | N | n | truth | p10 / p01 | default's coverage % | {levels} |",
             "|---|---|---|---|---|---|---|" + "---|" * (2 * len(VALIDITY_LEVELS))]
    for cell in cells:
        values = " | ".join(
            (f"**{_percent(cell.bounds[(p, v)])}**" if cell.out_of_reach(p, v) else _percent(cell.bounds[(p, v)]))
            for p in PROCEDURE_CLASSES for v in VALIDITY_LEVELS)
        coverage = "" if cell.coverage is None else f"{100 * cell.coverage:.1f}"
        lines.append(f"| {cell.regime} | {cell.metric} | {cell.n_problems} | {cell.n_samples} | {cell.truth:.4f} | "
                     f"{cell.probabilities[2]:.4f} / {cell.probabilities[3]:.4f} | {coverage} | {values} |")
    lines += ["", attainable_summary_line(cells, low, high)]
    return "\n".join(lines)


def attainable_summary_line(cells: list[AttainableCell], low: float = BAND[0], high: float = BAND[1]) -> str:
    """How many of the cells are out of reach of each class at each validity level, and how many of those the
    default covers more than ``high`` in."""
    above = [c for c in cells if c.coverage is not None and c.coverage > high]
    parts = []
    for procedure in PROCEDURE_CLASSES:
        levels = []
        for validity in VALIDITY_LEVELS:
            reach = [c for c in cells if c.out_of_reach(procedure, validity)]
            levels.append(f"valid at {100 * validity:g}% in {len(reach)} ({sum(c in above for c in reach)} of the {len(above)})")
        parts.append(f"of every deterministic interval of the {procedure} " + ", ".join(levels))
    return (f"Paired 0/1 cells without clusters at N >= {ASSESSED_PROBLEMS}: {len(cells)}, the default above the band in "
            f"{len(above)}. The band {100 * low:g}-{100 * high:g}% is out of reach " + "; ".join(parts) + ".")
