"""The least attainable coverage of the paired 0/1 edge cells (scripts/coverage_attainable.py, issue #16).

The knapsack's bound is checked against brute force over every set of counts on small benchmarks,
the cells' probabilities against Monte Carlo draws of the regimes' copula, and the one cell the docs
say no deterministic interval can bring inside 93-98% is pinned.
"""

from __future__ import annotations

import importlib
import itertools
import math
import pathlib
import sys

import numpy as np
import pytest
from scipy import special, stats

SCRIPTS = pathlib.Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))
attainable = importlib.import_module("coverage_attainable")
regimes = importlib.import_module("coverage_regimes")
DOCS = SCRIPTS.parent / "docs"


def _brute_force_least_coverage(probabilities, n_problems, validity, procedure):
    """1 - the largest P(E) over every set E of count vectors with Q(E) <= 1 - validity on the slice's grid."""
    outcomes = attainable._outcomes(n_problems, procedure)
    own = np.asarray(probabilities, dtype=float)
    rows = attainable._slice(probabilities, procedure)
    if procedure == "differences":  # (b, c, ties)
        own = np.r_[own[2:], own[:2].sum()]
    at_cell = np.exp(attainable._log_probabilities(outcomes, own))
    on_slice = np.exp(np.stack([attainable._log_probabilities(outcomes, row) for row in rows]))
    masks = np.array(list(itertools.product((0.0, 1.0), repeat=len(at_cell))))  # every set E
    allowed = (masks @ on_slice.T <= 1.0 - validity + 1e-12).all(axis=1)
    return 1.0 - float((masks @ at_cell)[allowed].max())


@pytest.mark.parametrize("procedure, n_problems", [("differences", 3), ("counts", 2)])
@pytest.mark.parametrize("probabilities", [(0.6, 0.2, 0.05, 0.15), (0.3, 0.3, 0.3, 0.1), (0.9, 0.05, 0.01, 0.04)])
@pytest.mark.parametrize("validity", [0.95, 0.93, 0.8])
def test_the_knapsack_bound_is_the_brute_force_optimum(procedure, n_problems, probabilities, validity):
    bound = attainable.least_attainable_coverage(probabilities, n_problems, validity, procedure)
    exact = _brute_force_least_coverage(probabilities, n_problems, validity, procedure)
    assert bound.optimal and bound.dropped == 0.0
    assert bound.lower == pytest.approx(exact, abs=1e-6)
    assert 1.0 - bound.excluded == pytest.approx(exact, abs=1e-6)


def _independent_least_coverage(probabilities, n_problems, validity, procedure, grid=200):
    """The same optimum written from scratch: scipy's multinomial, its own enumeration of the counts, and a
    fine grid of the slice (the share t on 4,000 points, or 200 times 41 values of the tie split) standing in for
    the continuum."""
    p11, p00, p10, p01 = probabilities
    theta = p10 - p01
    if procedure == "differences":
        outcomes = [(b, c, n_problems - b - c) for b in range(n_problems + 1) for c in range(n_problems + 1 - b)]
        own = (p10, p01, p11 + p00)
        shares = np.linspace(max(0.0, theta), (1.0 + theta) / 2.0, 4000)
        rows = [(t, t - theta, 1.0 - 2.0 * t + theta) for t in shares]
    else:
        outcomes = [(a, n_problems - a - b - c, b, c) for b in range(n_problems + 1) for c in range(n_problems + 1 - b)
                    for a in range(n_problems + 1 - b - c)]
        own = (p11, p00, p10, p01)
        rows = [((1 - 2 * t + theta) * r, (1 - 2 * t + theta) * (1 - r), t, t - theta)
                for t in np.linspace(max(0.0, theta), (1.0 + theta) / 2.0, grid) for r in np.linspace(0.0, 1.0, 41)]
    counts = np.array(outcomes)
    at_cell = stats.multinomial.pmf(counts, n_problems, own)
    on_slice = np.array([stats.multinomial.pmf(counts, n_problems, np.clip(row, 0.0, 1.0)) for row in rows])
    masks = np.array(list(itertools.product((0.0, 1.0), repeat=len(outcomes))))
    allowed = (masks @ on_slice.T <= 1.0 - validity + 1e-12).all(axis=1)
    return 1.0 - float((masks @ at_cell)[allowed].max())


@pytest.mark.parametrize("procedure, n_problems", [("differences", 3), ("differences", 4), ("counts", 2)])
@pytest.mark.parametrize("probabilities", [(0.6, 0.2, 0.05, 0.15), (0.3, 0.3, 0.3, 0.1), (0.9, 0.05, 0.01, 0.04)])
def test_the_bound_is_below_and_close_to_an_optimum_computed_from_scratch(procedure, n_problems, probabilities):
    # a valid lower bound: never above the optimum over (a fine stand-in for) the whole slice; a tight one: close to it
    for validity in (0.95, 0.9, 0.8):
        bound = attainable.least_attainable_coverage(probabilities, n_problems, validity, procedure).lower
        exact = _independent_least_coverage(probabilities, n_problems, validity, procedure)
        assert bound <= exact + 1e-9 and bound >= exact - 0.01, (validity, bound, exact)


def test_a_stopped_search_and_left_out_counts_only_lower_the_bound(monkeypatch):
    probabilities = attainable.paired_binary_probabilities("floor (rare easy problems)", "pass^4", 4)
    full = attainable.least_attainable_coverage(probabilities, 30, 0.93, "counts")
    stopped = attainable.least_attainable_coverage(probabilities, 30, 0.93, "counts", seconds=1e-3)
    assert not stopped.optimal and 0.93 <= stopped.lower <= full.lower + 1e-9
    # leaving out every count vector under 1% at the cell: the bound drops by at least their total, never rises
    monkeypatch.setattr(attainable, "DROPPED_PROBABILITY", 0.01)
    coarse = attainable.least_attainable_coverage(probabilities, 30, 0.95, "differences")
    assert coarse.dropped > 0.005
    monkeypatch.setattr(attainable, "DROPPED_PROBABILITY", 1e-12)
    fine = attainable.least_attainable_coverage(probabilities, 30, 0.95, "differences")
    assert 0.95 <= coarse.lower <= fine.lower + 1e-9
    with pytest.raises(ValueError, match="summing to 1"):
        attainable.least_attainable_coverage((0.5, 0.5, 0.1, 0.0), 30, 0.95)


def test_a_larger_class_or_a_looser_validity_never_raises_the_bound():
    probabilities = attainable.paired_binary_probabilities("ceiling (rare hard problems)", "pass@1", 1)
    bounds = {(p, v): attainable.least_attainable_coverage(probabilities, 30, v, p).lower
              for p in attainable.PROCEDURE_CLASSES for v in (0.95, 0.93)}
    for validity in (0.95, 0.93):
        assert bounds[("counts", validity)] <= bounds[("differences", validity)] + 1e-9
    for procedure in attainable.PROCEDURE_CLASSES:
        assert bounds[(procedure, 0.93)] <= bounds[(procedure, 0.95)] + 1e-9
        assert bounds[(procedure, 0.93)] >= 0.93 - 1e-9  # the cell is on its own slice


def test_no_deterministic_interval_valid_at_93_percent_reaches_the_band_at_the_floor_pass4_n30():
    # the docs' claim (docs/intervals-edges.md): floor pass^4 from 4 samples, N = 30, true difference -0.0018;
    # even a function of all four counts that covers 93% wherever the difference is -0.0018 covers > 98% here
    probabilities = attainable.paired_binary_probabilities("floor (rare easy problems)", "pass^4", 4)
    bound = attainable.least_attainable_coverage(probabilities, 30, 0.93, "counts")
    assert bound.optimal and bound.lower > 0.985
    # and 200 problems bring the band back within reach of the intervals of the differences
    assert attainable.least_attainable_coverage(probabilities, 200, 0.93, "differences").lower < 0.98


@pytest.mark.parametrize("regime, metric, n_samples", [("ceiling (rare hard problems)", "pass@1", 1),
                                                       ("floor (rare easy problems)", "pass^4", 4),
                                                       ("sparse paired gains", "pass^4", 4)])
def test_cell_probabilities_match_draws_of_the_copula(regime, metric, n_samples):
    p11, p00, p10, p01 = attainable.paired_binary_probabilities(regime, metric, n_samples)
    assert min(p11, p00, p10, p01) >= 0.0 and p11 + p00 + p10 + p01 == pytest.approx(1.0, abs=1e-12)
    truth = regimes.regime_value(regime, metric) - regimes.regime_value(regime, metric, "b")
    assert p10 - p01 == pytest.approx(truth, abs=1e-12)
    coarser = attainable.paired_binary_probabilities(regime, metric, n_samples, nodes=120)
    assert coarser == pytest.approx((p11, p00, p10, p01), abs=1e-6)  # the quadrature has converged
    rng = np.random.default_rng(5)
    draws = 400_000
    both = 0.0
    for component in regimes.REGIMES[regime]:
        z_a = rng.standard_normal(draws)
        z_b = 0.8 * z_a + math.sqrt(1 - 0.64) * rng.standard_normal(draws)
        p_a, p_b = (stats.beta.ppf(special.ndtr(z), *p) if isinstance(p, tuple) else np.full(draws, p)
                    for p, z in ((component.a, z_a), (component.b, z_b)))
        both += component.share * np.mean(p_a**n_samples * p_b**n_samples)  # 0/1 value: all n samples right
    assert p11 == pytest.approx(both, abs=4 * math.sqrt(p11 * (1 - p11) / draws) + 1e-9)


def test_only_paired_zero_one_cells_without_clusters_at_30_or_more_problems_are_bounded():
    assert attainable.is_binary_cell("pass@1", 1) and attainable.is_binary_cell("pass^4", 4)
    assert not attainable.is_binary_cell("pass@1", 4) and not attainable.is_binary_cell("pass@8", 16)

    def cell(regime, comparison, metric, n_problems, n_samples, clusters=None):
        c = regimes.RegimeCell(regime, comparison, metric, n_problems, n_samples, 0.0, n_clusters=clusters)
        c.coverage = {c.default: 0.99}
        return c
    cells = [cell("floor (rare easy problems)", "paired", "pass^4", 30, 4),
             cell("point masses at 0 and 1", "paired", "pass@1", 100, 1),
             cell("floor (rare easy problems)", "single", "pass^4", 30, 4),
             cell("floor (rare easy problems)", "paired", "pass^4", 10, 4),
             cell("floor (rare easy problems)", "paired", "pass@8", 30, 16),
             cell("clustered floor (10+ clusters)", "paired", "pass^4", 30, 4, clusters=10)]
    out = attainable.attainable_cells(cells)
    assert [(c.regime, c.n_problems) for c in out] == [("floor (rare easy problems)", 30), ("point masses at 0 and 1", 100)]
    floor, masses = out
    assert floor.out_of_reach("counts", 0.93) and floor.out_of_reach("differences", 0.95)
    # where the differences' bound stays under the band's edge, the counts' (no higher) is not sought
    assert not masses.out_of_reach("differences", 0.95) and masses.bounds[("counts", 0.95)] is None
    text = attainable.attainable_markdown(out)
    assert "| floor (rare easy problems) | pass^4 | 30 | 4 | -0.0018 |" in text and "| - |" in text
    assert text.splitlines()[-1] == (
        "Paired 0/1 cells without clusters at N >= 30: 2, the default above the band in 2. The band 93-98% is out of "
        "reach of every deterministic interval of the differences valid at 95% in 1 (1 of the 2), valid at 93% in 1 "
        "(1 of the 2); of every deterministic interval of the counts valid at 95% in 1 (1 of the 2), valid at 93% in 1 "
        "(1 of the 2).")


def test_the_docs_block_is_the_committed_paired_edge_tables():
    # docs/intervals-edges.md's block and docs/coverage-edges-paired.md come from the same full run (--summary-doc)
    table = (DOCS / "coverage-edges-paired.md").read_text(encoding="utf-8")
    page = (DOCS / "intervals-edges.md").read_text(encoding="utf-8")
    block = page.split("<!-- coverage-attainable-paired:start -->")[1].split("<!-- coverage-attainable-paired:end -->")[0]
    heading = "**The least coverage any valid interval can have (paired 0/1 cells without clusters)**"
    assert heading in block and heading in table
    section = table.split(heading)[1].split("**Discreteness")[0].strip()
    assert block.split(heading)[1].strip() == section
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| regime")]
    assert len(rows) == 24  # 4 regimes, pass@1 (n = 1) and pass^4 (n = 4), N = 30, 100, 200


def test_the_single_model_run_needs_no_attainable_block(tmp_path, monkeypatch):
    # only the paired run writes the attainable-coverage block (the paired refusal is in test_coverage.py)
    study = importlib.import_module("coverage_study")
    page = tmp_path / "page.md"
    page.write_text("<!-- coverage-edges-single:start -->\n<!-- coverage-edges-single:end -->\n", encoding="utf-8")
    monkeypatch.setattr(study, "run_regimes", lambda **_: [])
    monkeypatch.setattr(study, "regime_overview_markdown", lambda *_: "| overview |")
    assert study.main(["--full", "--regimes-only", "--comparisons", "single", "--summary-doc", str(page)]) == 0
    assert "| overview |" in page.read_text(encoding="utf-8")
