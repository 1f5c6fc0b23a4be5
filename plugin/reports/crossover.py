"""``kpass crossover``: where a model's pass@k curve crosses its base model's, and why.

The maths is :func:`kpass.metrics.pass_at_k_crossover`; this module pairs the two models'
problems per task, names every problem left out, and renders the result as a table, Markdown,
CSV or JSON (whose ``crossovers`` list holds one object per task and direction) and a plot.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from kpass import metrics as core

from kpass.errors import DataError
from kpass.render.formatting import json_if_asked
from kpass.render.numbers import format_interval, format_level, format_number
from kpass.render.tables import render_table
from kpass.reports.report import DEFAULT_N_RESAMPLES, _table_notes, problem_attribute, replaying_violations
from kpass.reports.seeds import seed_for_call
from kpass.data.table import SampleTable
from kpass.reports._pairs import paired_counts, unmatched_notes

__all__ = ["CrossoverReport", "compute_crossover", "format_crossover"]


@dataclasses.dataclass
class CrossoverReport:
    """What :func:`compute_crossover` returns: one core result per task, and the notes."""

    base: str
    model: str
    results: dict[str, core.CrossoverResult]
    notes: list[str]
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
                "coverage": coverage, "curves": curves, "notes": list(self.notes)}


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
            notes.append(f"{pairs.task}: samples per problem vary from {min(ragged)} to {max(ragged)}; the curves stop "
                         f"at k = {min(ragged)}")
    return CrossoverReport(base, model, results, notes, float(confidence_level))


def _k(value: int | None, k_max: int) -> str:
    return f"> {k_max}" if value is None else str(value)


def _shown_ks(result: core.CrossoverResult) -> list[int]:
    """Powers of two, k_max, and the k on either side of each crossing."""
    k_max = int(result.ks[-1])
    shown = {1 << i for i in range(int(math.log2(k_max)) + 1)} | {k_max}
    for crossing in (result.below, result.above):
        if crossing.k is not None:
            shown |= {max(crossing.k - 1, 1), crossing.k}
    return sorted(shown)


def _percent(value: float, undefined: str | None = None) -> str:
    if undefined is not None:
        return "undefined"
    return format_number(None) if math.isnan(value) else f"{100 * value + 0.0:.0f}%"  # + 0.0: never "-0%"


def _undefined_share_line(result: core.CrossoverResult, shown: list[int], level: str) -> str:
    """Why the lost / gained shares of the shown ks are undefined (empty when every one is defined)."""
    reasons: dict[str, list[int]] = {}
    for k in shown:
        reason = result.coverage.share_undefined[k - 1]
        if reason is not None:
            reasons.setdefault(reason, []).append(k)
    return "; ".join(f"lost / gained share undefined at k = {', '.join(map(str, ks))}: {reason}"
                     + (f" (its {level} interval holds 0)" if reason != "gap is 0" else "") for reason, ks in
                     reasons.items())


def format_crossover(report: CrossoverReport, fmt: str = "table") -> str:
    """Render a :class:`CrossoverReport` (``fmt`` in ``table``, ``markdown``, ``csv``, ``json``)."""
    text = json_if_asked(report, fmt)
    if text is not None:
        return text
    if fmt == "csv":
        rows = report.as_dict()["curves"]
        header = list(rows[0]) if rows else ["task", "k"]
        return render_table(header, [["" if row[h] is None else row[h] for h in header] for row in rows], "csv")
    level = format_level(report.confidence_level)
    parts = []
    for task, r in report.results.items():
        k_max = int(r.ks[-1])
        lines = [f"{task}: {report.model} vs base {report.base}, {r.n_problems} paired problems, k = 1..{k_max}"]
        for crossing, words in ((r.below, f"{report.model} falls below {report.base}"),
                                (r.above, f"{report.base} falls below {report.model}")):
            interval = f"{level} interval: k in [{_k(crossing.low, k_max)}, {_k(crossing.high, k_max)}]"
            if crossing.k is None:
                lines.append(f"  {words}: not within k <= {k_max} ({interval}; "
                             f"{crossing.share_without:.0%} of resamples never cross)")
            elif crossing.k == 1:
                lines.append(f"  {words.replace(' falls below ', ' is below ')} already at k = 1; {interval}")
            else:
                lines.append(f"  {words} at k = {crossing.k}, between k = {crossing.k - 1} and {crossing.k} "
                             f"(linear: {crossing.k_interpolated:.2f}); {interval}")
        cov = r.coverage
        lines.append(f"  coverage: {cov.n_lost} problems lost (base >= 1 correct, model none; {cov.n_robust_lost} "
                     f"robust), {cov.n_gained} gained ({cov.n_robust_gained} robust); robust = the winner correct in "
                     f">= {r.robust_fraction} of its samples")
        header = ["k", "base", "model", "model - base", f"{level} CI", "lost", "gained", "shared", "lost share",
                  "gained share"]
        rows = []
        shown = _shown_ks(r)
        for k in shown:
            i = k - 1
            undefined = cov.share_undefined[i]
            rows.append([str(k), format_number(r.base[i]), format_number(r.model[i]),
                         format_number(r.difference[i], signed=True),
                         format_interval(r.difference_low[i], r.difference_high[i], signed=True),
                         format_number(cov.lost[i], signed=True), format_number(cov.gained[i] + 0.0, signed=True),
                         format_number(cov.shared[i], signed=True), _percent(cov.share_lost[i], undefined),
                         _percent(cov.share_gained[i], undefined)])
        table = render_table(header, rows, fmt, right=range(len(header)))
        why = _undefined_share_line(r, shown, level)
        parts.append("\n".join(lines) + "\n\n" + table + (f"\n{why}" if why else ""))
    text = "\n\n".join(parts) + "\n"
    text += ("\nlost / gained / shared: parts of the base's lead (base - model) from the problems the model lost, "
             "gained, and the rest; they add up to it exactly.\n")
    if report.notes:
        bullet = "- " if fmt == "markdown" else "  "
        text += "\nNotes:\n" + "\n".join(bullet + note for note in report.notes) + "\n"
    return text
