"""Selection bias (the winner's curse) for reports and leaderboards of several models.

When a report or leaderboard holds m >= 3 models on the same problems (m >= 2 with
``--selected-on-this-set``), the best measured one is
expected to be inflated by :func:`kpass.metrics.selection_inflation` (``E[max]`` of the models'
correlated noise, assuming they are equally good: the bound a reader should subtract). A model
the user says was chosen on this set (``--selected-on-this-set MODEL``) gets its score with that
inflation removed. One :class:`SelectionBiasColumn` per (task, metric) column; entries and notes
go into the output (:attr:`kpass.Report.selection_bias`, the leaderboard's JSON).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from kpass import metrics as core

from kpass.errors import UsageError
from kpass.notes import Note
from kpass.reports.columns import _clusters_for, _column_matrix, _problem_clusters
from kpass.reports.seeds import seed_for_call

__all__ = ["AUTOMATIC_FROM", "SelectedModel", "SelectionBiasColumn", "check_selected", "selection_bias",
           "selection_bias_of_report"]

#: Columns with at least this many models always get the estimate; with fewer (two models, which
#: ``kpass compare`` compares directly) only when a model was selected on this set.
AUTOMATIC_FROM = 3


@dataclasses.dataclass(frozen=True)
class SelectedModel:
    """A model chosen on this set (``--selected-on-this-set``): its score and the score less the
    expected inflation of the best of the column's models."""

    model: str
    estimate: float
    corrected: float


@dataclasses.dataclass(frozen=True)
class SelectionBiasColumn:
    """The expected inflation of the best model of one (task, metric) column
    (:func:`kpass.metrics.selection_inflation`, the winner's curse).

    Attributes
    ----------
    column, task, metric : str
        The column's key (``task/metric`` with several tasks), its task and metric.
    models : tuple of str
        The models of the column, on the problems they all have.
    n_models, n_problems : int
    best : str
        The best measured model.
    inflation, sigma : float
        Expected inflation of the best score, and the noise (standard error) it is measured in.
    inflation_in_sigma, mean_correlation : float or None
        The inflation in units of ``sigma`` and the mean correlation of the models' per-problem
        values (None when undefined).
    independent_in_sigma : float
        The inflation, in ``sigma``, that independent models would have.
    selected : tuple of SelectedModel
        The column's models chosen on this set, with their corrected scores.
    """

    column: str
    task: str
    metric: str
    models: tuple[str, ...]
    n_models: int
    n_problems: int
    best: str
    inflation: float
    sigma: float
    inflation_in_sigma: float | None
    independent_in_sigma: float
    mean_correlation: float | None
    selected: tuple[SelectedModel, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The JSON-ready record (``models`` and ``selected`` as lists)."""
        return {**{field.name: getattr(self, field.name) for field in dataclasses.fields(self)},
                "models": list(self.models), "selected": [dataclasses.asdict(model) for model in self.selected]}


def check_selected(selected: Sequence[str], models: Sequence[str]) -> list[str]:
    """The models named by ``--selected-on-this-set``, each checked against the input."""
    out = []
    for name in selected or ():
        if name not in models:
            raise UsageError(f"--selected-on-this-set {name!r} is not a model in the input; models: "
                             f"{', '.join(models)}")
        out.append(name)
    return out


def selection_bias(columns: Sequence[tuple[str, str, str, Sequence[str], Any, Any]], *,
                   selected: Sequence[str] = (), estimates: dict[tuple[str, str, str], float] | None = None,
                   rng: int | np.random.Generator | None = None) -> tuple[list[SelectionBiasColumn], list[Note]]:
    """Entries and notes for each column ``(key, task, metric, models, values (M, N), clusters)``.

    ``estimates[(model, task, metric)]`` is the score shown for a model (default: the mean of
    its values on the common problems).
    """
    rng = seed_for_call(rng)  # one seed for every column
    entries: list[SelectionBiasColumn] = []
    notes: list[Note] = []
    for key, task, metric, models, matrix, clusters in columns:
        if len(models) < (2 if selected else AUTOMATIC_FROM) or matrix.shape[1] < 2:
            continue
        try:
            result = core.selection_inflation(matrix.T, clusters=clusters, rng=rng)
        except ValueError as exc:
            notes.append(Note("selection-bias", (key,), f"no selection-bias estimate ({exc})"))
            continue
        best = models[result.best]
        shown = (estimates or {}).get((best, task, metric), result.best_estimate)
        in_sigma = (f"{result.inflation_in_sigma:.2f} sigma; {result.independent_in_sigma:.2f} for {result.n_models} "
                    f"independent models, correlation {result.mean_correlation:.2f}" if result.sigma > 0 else
                    "no noise")
        notes.append(Note("selection-bias", (key,), f"the best of {result.n_models} models on these "
                          f"{result.n_problems} problems ({best}, {shown:.4f}) is expected to be inflated by about "
                          f"{result.inflation:.4f} ({in_sigma}) if they are equally good; use a fresh test set to "
                          "confirm a winner"))
        chosen = []
        for model in selected:
            if model not in models:
                continue
            score = (estimates or {}).get((model, task, metric), float(matrix[list(models).index(model)].mean()))
            chosen.append(SelectedModel(model, score, score - result.inflation))
            notes.append(Note("selection-bias", (key,), f"{model} was selected on this set: its {metric} "
                              f"{score:.4f} is expected to be about {result.inflation:.4f} too high (best of "
                              f"{result.n_models}); corrected about {score - result.inflation:.4f}"))
        entries.append(SelectionBiasColumn(
            column=key, task=task, metric=metric, models=tuple(models), n_models=result.n_models,
            n_problems=result.n_problems, best=best, inflation=result.inflation, sigma=result.sigma,
            inflation_in_sigma=_finite(result.inflation_in_sigma), independent_in_sigma=result.independent_in_sigma,
            mean_correlation=_finite(result.mean_correlation), selected=tuple(chosen)))
    return entries, notes


def _finite(value: float) -> float | None:
    return None if value != value else float(value)


def selection_bias_of_report(table: Any, report: Any, *, selected: Sequence[str] = (),
                             rng: int | np.random.Generator | None = None) -> tuple[list[SelectionBiasColumn], list[Note]]:
    """:func:`selection_bias` of every (task, metric) of a report grouped by model and task, on
    the problems every model has (clustered when the report is)."""
    if "model" not in report.by or "task" not in report.by or len(report.by) != 2:
        return [], []
    models = table.categories("model")
    selected = check_selected(selected, models)
    if len(models) < 2:
        if selected:
            return [], [Note("selection-bias", tuple(selected), "selected on this set, but the input holds no other "
                             "model to estimate the selection bias from")]
        return [], []
    cluster_map = _problem_clusters(table, report.cluster_by) if report.cluster_by is not None else None
    estimates = {(row.model, row.task, row.metric): row.estimate for row in report.rows if row.estimate is not None}
    tasks = table.categories("task")
    columns = []
    for task in tasks:
        for spec in report.metrics:
            if spec.params.get("extrapolate"):
                continue
            present, common, matrix, _ = _column_matrix(report, models, task, spec.name)
            if len(present) < 2:
                continue
            key = f"{task}/{spec.name}" if len(tasks) > 1 else spec.name
            columns.append((key, task, spec.name, present, matrix, _clusters_for(cluster_map, task, common)))
    return selection_bias(columns, selected=selected, estimates=estimates, rng=rng)
