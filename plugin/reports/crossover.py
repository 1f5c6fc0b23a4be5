"""``kpass crossover``: where a model's pass@k curve crosses its base model's, and why.

The maths is :func:`kpass.metrics.pass_at_k_crossover`; this module pairs the two models'
problems per task and names every problem left out; :mod:`kpass.render.crossover_text` renders the
result as a table, Markdown, CSV or JSON (whose ``crossovers`` list holds one object per task and
direction).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from kpass import metrics as core

from kpass.errors import DataError
from kpass.notes import Note
from kpass.reports.report import DEFAULT_N_RESAMPLES, _table_notes, problem_attribute, replaying_violations
from kpass.reports.seeds import seed_for_call
from kpass.data.table import SampleTable
from kpass.reports._pairs import paired_counts, unmatched_notes

__all__ = ["CrossoverReport", "compute_crossover"]


@dataclasses.dataclass
class CrossoverReport:
    """What :func:`compute_crossover` returns: one core result per task, and the notes."""

    base: str
    model: str
    results: dict[str, core.CrossoverResult]
    notes: list[Note]
    confidence_level: float

    def crossovers(self) -> list[dict[str, Any]]:
        """One object per task and direction: task, base, model, direction, k, low, high, ..."""
        out = []
        for task, result in self.results.items():
            for crossing in (result.below, result.above):
                out.append({"task": task, "base": self.base, "model": self.model, **crossing.as_dict(),
                            "k_max": int(result.ks[-1]), "n_problems": result.n_problems,
                            "confidence_level": result.confidence_level})
        return out

    def as_dict(self) -> dict[str, Any]:
        curves, coverage = [], []
        for task, r in self.results.items():
            cov = r.coverage
            coverage.append({"task": task, "n_lost": cov.n_lost, "n_gained": cov.n_gained,
                             "n_robust_lost": cov.n_robust_lost, "n_robust_gained": cov.n_robust_gained,
                             "robust_fraction": str(r.robust_fraction), "n_problems": r.n_problems})
            for i, k in enumerate(r.ks.tolist()):
                curves.append({
                    "task": task, "k": k, "base": _f(r.base[i]), "base_low": _f(r.base_low[i]),
                    "base_high": _f(r.base_high[i]), "model": _f(r.model[i]), "model_low": _f(r.model_low[i]),
                    "model_high": _f(r.model_high[i]), "difference": _f(r.difference[i]),
                    "difference_low": _f(r.difference_low[i]), "difference_high": _f(r.difference_high[i]),
                    "gap_lost": _f(cov.lost[i]), "gap_lost_low": _f(cov.lost_low[i]),
                    "gap_lost_high": _f(cov.lost_high[i]), "gap_gained": _f(cov.gained[i]),
                    "gap_gained_low": _f(cov.gained_low[i]), "gap_gained_high": _f(cov.gained_high[i]),
                    "gap_shared": _f(cov.shared[i]), "share_lost": _f(cov.share_lost[i]),
                    "share_gained": _f(cov.share_gained[i]), "share_undefined": cov.share_undefined[i]})
        return {"kind": "kpass.crossover", "base": self.base, "model": self.model,
                "confidence_level": self.confidence_level, "crossovers": self.crossovers(),
                "coverage": coverage, "curves": curves, "notes": [note.as_dict() for note in self.notes]}


def _f(value: Any) -> float | None:
    value = float(value)
    return None if math.isnan(value) else value


@replaying_violations
def compute_crossover(table: SampleTable, *, base: str, model: str, cluster_by: str | None = None,
                      confidence_level: float = 0.95, rng: int | np.random.Generator | None = None,
                      n_resamples: int = DEFAULT_N_RESAMPLES, robust_fraction: Any = "1/2") -> CrossoverReport:
    """The crossover of ``model`` against ``base`` per task, over the problems both answered.

    Parameters
    ----------
    table : SampleTable or ProblemStatistics
        Samples of (at least) the two models, or an engine's per-problem statistics of them
        (the curves are functions of each problem's ``(n, c)``).
    base, model : str
        The base model and the model compared with it.
    cluster_by : str, optional
        Field holding each problem's cluster; the bootstrap then resamples whole clusters.
    confidence_level, rng, n_resamples
        Of the bootstrap, as in :func:`kpass.compute_report` (``rng=None``: one fresh seed for every task).
    robust_fraction : number or str, default: "1/2"
        The robust-reach rule for lone wins.

    Returns
    -------
    CrossoverReport

    Raises
    ------
    UsageError
        Unknown or equal models.
    DataError
        A task without a common problem, a task with fewer than 2 paired problems, or a null cluster.
    """
    notes = _table_notes(table)
    rng = seed_for_call(rng)
    clusters = None if cluster_by is None else problem_attribute(table, cluster_by, "--cluster-by")
    results = {}
    for pairs in paired_counts(table, base, model):
        notes += unmatched_notes(pairs, base, model)
        try:
            results[pairs.task] = core.pass_at_k_crossover(
                pairs.n_base, pairs.c_base, pairs.n_model, pairs.c_model,
                clusters=None if clusters is None else clusters[pairs.base_rows],
                confidence_level=confidence_level, n_resamples=n_resamples, rng=rng,
                robust_fraction=robust_fraction)
        except ValueError as exc:
            raise DataError(f"task {pairs.task!r}: {exc}", **table.error_location()) from exc
        ragged = {int(v) for v in np.concatenate([pairs.n_base, pairs.n_model]).tolist()}
        if len(ragged) > 1:
            notes.append(Note("mixed-samples", (f"{pairs.task} ({min(ragged)} to {max(ragged)})",), "samples per "
                              f"problem vary; the curves stop at k = {min(ragged)}"))
    return CrossoverReport(base, model, results, notes, float(confidence_level))
