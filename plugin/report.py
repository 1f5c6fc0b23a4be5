"""Reports: every metric per (model, task) with an interval, and paired comparisons of models.

:func:`compute_report` reduces a :class:`~kpass.SampleTable` to per-problem counts, asks each
metric family for per-problem values on the problems with enough samples, and aggregates them
with :func:`kpass.mean_ci`; :func:`compute_comparison` does the same for two models on the same
problems with :func:`kpass.paired_difference`. Every problem left out of a metric is listed in the
result's ``exclusions`` with the reason; nothing is dropped silently.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from kpass import metrics as core

from .errors import DataError, MetricSpecError
from .problems import ProblemSet
from .specs import MetricSpec, parse_metric_specs
from .table import SampleTable

if TYPE_CHECKING:  # pragma: no cover
    import pluggy

__all__ = [
    "Comparison", "ComparisonRow", "Exclusion", "Report", "ReportRow", "compute_comparison", "compute_report",
]

Group = tuple[tuple[str, str], ...]


def _group_value(group: Group, field: str) -> str | None:
    for name, value in group:
        if name == field:
            return value
    return None


@dataclasses.dataclass(frozen=True)
class Exclusion:
    """Problems left out of one metric in one group, and why.

    Attributes
    ----------
    group : tuple of (field, value)
        The report group, e.g. ``(("model", "m"), ("task", "t"))``.
    metric : str
        Canonical metric name.
    problem_ids : tuple of str
        The problems excluded (for ``by`` without ``task``, written ``task/problem_id``).
    reason : str
        Why, e.g. ``"4 samples, pass@8 needs 8"``.
    """

    group: Group
    metric: str
    problem_ids: tuple[str, ...]
    reason: str

    @property
    def model(self) -> str | None:
        return _group_value(self.group, "model")

    @property
    def task(self) -> str | None:
        return _group_value(self.group, "task")

    def as_dict(self) -> dict[str, Any]:
        return {**dict(self.group), "metric": self.metric, "problem_ids": list(self.problem_ids),
                "n_problems": len(self.problem_ids), "reason": self.reason}


@dataclasses.dataclass(frozen=True)
class ReportRow:
    """One metric in one group: the estimate, its interval and what it rests on.

    Attributes
    ----------
    group : tuple of (field, value)
        Report group (``model`` and ``task`` by default; see :attr:`model`, :attr:`task`).
    metric : str
        Canonical metric name (``"pass@8"``).
    estimate, low, high, standard_error : float or None
        Mean of the per-problem values and its interval; ``None`` when no problem qualified
        (the interval alone is ``None`` when it is undefined, e.g. for a single problem).
    n_problems : int
        Problems the estimate averages over.
    n_samples : int
        Samples of those problems.
    n_clusters : int or None
        Clusters (with ``cluster_by``).
    method : str or None
        Interval method (see :func:`kpass.mean_ci`).
    n_excluded : int
        Problems of the group left out (listed in :attr:`Report.exclusions`).
    note : str
        Why the estimate or interval is missing, if it is.
    """

    group: Group
    metric: str
    estimate: float | None
    low: float | None
    high: float | None
    standard_error: float | None
    n_problems: int
    n_samples: int
    n_clusters: int | None
    method: str | None
    n_excluded: int = 0
    note: str = ""
    interval: Any = dataclasses.field(default=None, compare=False, repr=False)

    @property
    def model(self) -> str | None:
        return _group_value(self.group, "model")

    @property
    def task(self) -> str | None:
        return _group_value(self.group, "task")

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.group)
        for name in ("metric", "estimate", "low", "high", "standard_error", "n_problems", "n_samples",
                     "n_clusters", "method", "n_excluded", "note"):
            out[name] = getattr(self, name)
        return out


@dataclasses.dataclass
class Report:
    """What :func:`compute_report` returns.

    Attributes
    ----------
    rows : list of ReportRow
        One per (group, metric), groups in order of first appearance, metrics in spec order.
    exclusions : list of Exclusion
        Every problem left out of a metric, with the reason.
    notes : list of str
        Facts about the data a reader should know (ragged n, extra columns kept as metadata).
    metrics : list of MetricSpec
    by : tuple of str
    cluster_by : str or None
    confidence_level : float
    per_problem : dict
        ``(group, metric) -> (problem_ids, values)`` of the problems each estimate averages.
    """

    rows: list[ReportRow]
    exclusions: list[Exclusion]
    notes: list[str]
    metrics: list[MetricSpec]
    by: tuple[str, ...]
    cluster_by: str | None
    confidence_level: float
    per_problem: dict[tuple[Group, str], tuple[tuple[str, ...], NDArray[np.float64]]] = dataclasses.field(
        default_factory=dict, repr=False)

    def row(self, metric: str, **group: str) -> ReportRow:
        """The row of ``metric`` whose group matches ``group`` (e.g. ``model="m"``)."""
        for row in self.rows:
            if row.metric == metric and all(_group_value(row.group, k) == v for k, v in group.items()):
                return row
        raise KeyError(f"no row for metric {metric!r} and group {group}; metrics: "
                       f"{sorted({r.metric for r in self.rows})}")

    def as_dict(self) -> dict[str, Any]:
        return {
            "by": list(self.by), "cluster_by": self.cluster_by, "confidence_level": self.confidence_level,
            "metrics": [spec.name for spec in self.metrics],
            "rows": [row.as_dict() for row in self.rows],
            "exclusions": [exclusion.as_dict() for exclusion in self.exclusions],
            "notes": list(self.notes),
        }


@dataclasses.dataclass(frozen=True)
class ComparisonRow:
    """``model - baseline`` on one metric in one group, paired over the common problems.

    Attributes
    ----------
    group : tuple of (field, value)
        Group without the model (``task`` by default).
    metric, model, baseline : str
    estimate, low, high, standard_error : float
        The paired difference and its interval.
    p_value, correlation : float
        Two-sided p-value of "no difference"; correlation of the per-problem values.
    estimate_model, estimate_baseline : float
        Each model's mean on the common problems.
    n_problems : int
    n_clusters : int or None
    method : str
    n_excluded : int
    """

    group: Group
    metric: str
    model: str
    baseline: str
    estimate: float | None
    low: float | None
    high: float | None
    standard_error: float | None
    p_value: float | None
    correlation: float | None
    estimate_model: float | None
    estimate_baseline: float | None
    n_problems: int
    n_clusters: int | None
    method: str | None
    n_excluded: int = 0
    note: str = ""
    result: Any = dataclasses.field(default=None, compare=False, repr=False)

    @property
    def task(self) -> str | None:
        return _group_value(self.group, "task")

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.group)
        for name in ("metric", "model", "baseline", "estimate", "low", "high", "standard_error", "p_value",
                     "correlation", "estimate_model", "estimate_baseline", "n_problems", "n_clusters", "method",
                     "n_excluded", "note"):
            out[name] = getattr(self, name)
        return out


@dataclasses.dataclass
class Comparison:
    """What :func:`compute_comparison` returns (``rows``, ``exclusions``, ``notes`` as in :class:`Report`)."""

    rows: list[ComparisonRow]
    exclusions: list[Exclusion]
    notes: list[str]
    metrics: list[MetricSpec]
    baseline: str
    by: tuple[str, ...]
    cluster_by: str | None
    confidence_level: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline, "by": list(self.by), "cluster_by": self.cluster_by,
            "confidence_level": self.confidence_level, "metrics": [spec.name for spec in self.metrics],
            "rows": [row.as_dict() for row in self.rows],
            "exclusions": [exclusion.as_dict() for exclusion in self.exclusions],
            "notes": list(self.notes),
        }


# ----------------------------------------------------------------------------------------------
# shared machinery


def _resolve_specs(metrics, plugin_manager) -> list[MetricSpec]:
    if isinstance(metrics, MetricSpec):
        return [metrics]
    if isinstance(metrics, str):
        return parse_metric_specs(metrics, plugin_manager=plugin_manager)
    items = list(metrics)
    if items and all(isinstance(item, MetricSpec) for item in items):
        return items
    return parse_metric_specs([item.name if isinstance(item, MetricSpec) else item for item in items],
                              plugin_manager=plugin_manager)


def _problem_attribute(table: SampleTable, field: str, purpose: str) -> NDArray[np.int64]:
    """Per-problem code of a categorical column that must be constant within each problem."""
    index = table.problem_index
    if field == "model":
        return index.model_codes
    if field == "task":
        return index.task_codes
    if field == "problem_id":
        return index.problem_codes
    if not table.has_column(field):
        raise DataError(f"{purpose} names the field '{field}', which the table does not have; fields: "
                        f"{', '.join(table.columns)}", **table.error_location(), field=field)
    if not table.is_categorical(field):
        raise DataError(f"{purpose} needs a categorical (string) field; '{field}' is not one",
                        **table.error_location(), field=field)
    codes = table.codes(field).astype(np.int64)[index.order]
    starts = index.starts
    low = np.minimum.reduceat(codes, starts)
    high = np.maximum.reduceat(codes, starts)
    varying = low != high
    if varying.any():
        problem = int(np.flatnonzero(varying)[0])
        row = int(index.order[starts[problem]])
        source, line = table.location(row)
        raise DataError(f"{purpose} '{field}' must be the same for every sample of a problem; problem "
                        f"({table._describe_problem(row)}) has several values", source=source, line=line, field=field)
    return low


def _groups(table: SampleTable, by: Sequence[str]) -> tuple[list[Group], NDArray[np.int64]]:
    index = table.problem_index
    if not by:
        return [()], np.zeros(index.n_problems, dtype=np.int64)
    columns = [_problem_attribute(table, field, "--by") for field in by]
    stacked = np.stack(columns, axis=1)
    keys, group_of_problem = np.unique(stacked, axis=0, return_inverse=True)
    group_of_problem = group_of_problem.ravel()
    groups = []
    for key in keys.tolist():
        groups.append(tuple((field, "(null)" if code < 0 else table._categories[field][code])
                            for field, code in zip(by, key)))
    return groups, group_of_problem


def _problem_labels(table: SampleTable, problems: NDArray[np.int64], with_task: bool) -> tuple[str, ...]:
    index = table.problem_index
    ids = table._categories["problem_id"]
    if not with_task:
        return tuple(ids[c] for c in index.problem_codes[problems].tolist())
    tasks = table._categories["task"]
    return tuple(f"{tasks[t]}/{ids[p]}" for t, p in zip(index.task_codes[problems].tolist(),
                                                         index.problem_codes[problems].tolist()))


def _check_requirements(table: SampleTable, specs: Sequence[MetricSpec]) -> None:
    for spec in specs:
        needed = spec.requires
        if spec.budget is not None:  # a budget is read from answer_token / output_tokens / finished
            needed = tuple(name for name in needed if name != "finished")
        for column in needed:
            if not table.has_column(column):
                raise DataError(
                    f"{spec.name} needs the `{column}` column, which the table does not have"
                    + (" (binary correct/incorrect data cannot determine cons@k: which wrong answers agree "
                       "decides the vote)" if column == "answer" else ""),
                    **table.error_location(), field=column)


def _evaluate(table: SampleTable, spec: MetricSpec, problems: NDArray[np.int64],
              ) -> tuple[NDArray[np.int64], NDArray[np.float64], list[tuple[str, NDArray[np.int64]]]]:
    """``(eligible problems, their values, [(reason, excluded problems)])`` of one metric."""
    index = table.problem_index
    need = spec.min_samples
    n = index.n_samples[problems]
    short = n < need
    exclusions = []
    if short.any():
        for value in np.unique(n[short]).tolist():
            exclusions.append((f"{value} sample{'s' if value != 1 else ''}, {spec.name} needs {need}",
                               problems[n == value]))
    eligible = problems[~short]
    if eligible.size == 0:
        return eligible, np.zeros(0), exclusions
    family = spec.implementation
    try:
        values = family.compute(ProblemSet(table, eligible, budget=spec.budget), spec)
    except DataError:
        raise
    except ValueError as exc:
        raise DataError(f"{spec.name}: {exc}", **table.error_location()) from exc
    values = np.asarray(values, dtype=np.float64)
    if values.shape != (eligible.size,):
        raise ValueError(f"metric family {type(family).__name__} ({spec.name}) returned shape {values.shape}; "
                         f"expected ({eligible.size},), one value per problem.")
    if not np.isfinite(values).all():
        bad = np.flatnonzero(~np.isfinite(values))[:5].tolist()
        raise ValueError(f"metric family {type(family).__name__} ({spec.name}) returned non-finite values for "
                         f"problems {list(_problem_labels(table, eligible[bad], True))}.")
    return eligible, values, exclusions


def _interval(values: NDArray[np.float64], clusters: NDArray[np.int64] | None, method: str | None,
              confidence_level: float, seed: Any, n_resamples: int | None):
    options: dict[str, Any] = {"confidence_level": confidence_level, "rng": seed}
    if method is not None:
        options["method"] = method
    elif clusters is not None:
        pass  # the core's default method handles clusters
    if n_resamples is not None:
        options["n_resamples"] = n_resamples
    if clusters is not None:
        options["clusters"] = clusters
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = core.mean_ci(values, **options)
    return result, [str(w.message) for w in caught]


def _mixed_n_notes(table: SampleTable, groups: list[Group], group_of_problem: NDArray[np.int64]) -> list[str]:
    index = table.problem_index
    notes = []
    low = np.full(len(groups), np.iinfo(np.int64).max)
    high = np.zeros(len(groups), dtype=np.int64)
    np.minimum.at(low, group_of_problem, index.n_samples)
    np.maximum.at(high, group_of_problem, index.n_samples)
    for g in np.flatnonzero(low != high).tolist():
        label = ", ".join(f"{k}={v}" for k, v in groups[g]) or "all"
        notes.append(f"{label}: samples per problem vary from {low[g]} to {high[g]}; each problem's estimate "
                     "uses its own n (unbiased for every n >= k)")
    return notes


def _table_notes(table: SampleTable) -> list[str]:
    notes = []
    if table.extra_columns:
        notes.append(f"columns outside the schema kept as metadata (not interpreted): {', '.join(table.extra_columns)}")
    return notes


def _nan_to_none(value: float) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


# ----------------------------------------------------------------------------------------------


def compute_report(table: SampleTable, metrics: str | Sequence[str] | Sequence[MetricSpec], *,
                   by: Sequence[str] = ("model", "task"), cluster_by: str | None = None,
                   method: str | None = None, confidence_level: float = 0.95, seed: Any = None,
                   n_resamples: int | None = None, plugin_manager: "pluggy.PluginManager | None" = None,
                   progress: Callable[[int, int], None] | None = None) -> Report:
    """Estimate every metric per group with an interval, listing every excluded problem.

    Parameters
    ----------
    table : SampleTable
        The samples (see :func:`kpass.read_samples`).
    metrics : str, sequence of str, or sequence of MetricSpec
        Metric specs, e.g. ``"pass@1,8 cons@16"`` (see :func:`kpass.parse_metric_specs`).
    by : sequence of str, default: ("model", "task")
        Categorical fields to group by; each must be constant within a problem.
    cluster_by : str, optional
        Field holding each problem's cluster (``"cluster"`` or a metadata column); intervals
        then resample or cluster by it.
    method : str, optional
        Interval method for :func:`kpass.mean_ci`; default: its default.
    confidence_level : float, default: 0.95
    seed : int or numpy.random.Generator, optional
        Seed of the bootstrap (reproducible reports).
    n_resamples : int, optional
        Bootstrap resamples (default: :func:`kpass.mean_ci`'s).
    plugin_manager : pluggy.PluginManager, optional
        Host whose metric families are used.
    progress : callable ``(done, total)``, optional
        Called after each (group, metric).

    Returns
    -------
    Report

    Raises
    ------
    MetricSpecError
        Bad specs (listing the valid ones).
    DataError
        A metric needs a column the table lacks, ``by``/``cluster_by`` fields that vary within a
        problem, or data a metric cannot use (naming file, line and field).
    """
    if not isinstance(table, SampleTable):
        raise TypeError(f"`table` must be a kpass.SampleTable; got {type(table).__name__}.")
    specs = _resolve_specs(metrics, plugin_manager)
    by = tuple(by)
    _check_requirements(table, specs)
    groups, group_of_problem = _groups(table, by)
    clusters = None if cluster_by is None else _problem_attribute(table, cluster_by, "--cluster-by")
    if clusters is not None and (clusters < 0).any():
        problem = int(np.flatnonzero(clusters < 0)[0])
        row = int(table.problem_index.order[table.problem_index.starts[problem]])
        source, line = table.location(row)
        raise DataError(f"--cluster-by '{cluster_by}' is null for problem ({table._describe_problem(row)}); every "
                        "problem needs a cluster", source=source, line=line, field=cluster_by)
    with_task = "task" not in by
    rows: list[ReportRow] = []
    exclusions: list[Exclusion] = []
    per_problem = {}
    order = np.argsort(group_of_problem, kind="stable")
    boundaries = np.searchsorted(group_of_problem[order], np.arange(len(groups) + 1))
    total = len(groups) * len(specs)
    done = 0
    warning_notes: list[str] = []
    for g, group in enumerate(groups):
        problems = order[boundaries[g]:boundaries[g + 1]]
        for spec in specs:
            eligible, values, excluded = _evaluate(table, spec, problems)
            n_excluded = 0
            for reason, members in excluded:
                exclusions.append(Exclusion(group, spec.name, _problem_labels(table, members, with_task), reason))
                n_excluded += len(members)
            n_samples = int(table.problem_index.n_samples[eligible].sum())
            per_problem[(group, spec.name)] = (_problem_labels(table, eligible, with_task), values)
            row_clusters = None if clusters is None else clusters[eligible]
            n_clusters = None if row_clusters is None else int(np.unique(row_clusters).size)
            if eligible.size == 0:
                rows.append(ReportRow(group, spec.name, None, None, None, None, 0, 0, n_clusters, None, n_excluded,
                                      "no problem has enough samples"))
            else:
                try:
                    result, caught = _interval(values, row_clusters, method, confidence_level, seed, n_resamples)
                except ValueError as exc:
                    if method is not None and "method" in str(exc):
                        raise MetricSpecError(f"--method {method}: {exc}") from exc
                    rows.append(ReportRow(group, spec.name, float(values.mean()), None, None, None, int(eligible.size),
                                          n_samples, n_clusters, None, n_excluded, f"no interval: {exc}"))
                else:
                    label = " / ".join(value for _, value in group)
                    warning_notes.extend(f"{label + ' / ' if label else ''}{spec.name}: {message}" for message in caught)
                    rows.append(ReportRow(group, spec.name, float(result.estimate), _nan_to_none(result.low),
                                          _nan_to_none(result.high), _nan_to_none(result.standard_error),
                                          int(eligible.size), n_samples, result.n_clusters, result.method,
                                          n_excluded, "", result))
            done += 1
            if progress is not None:
                progress(done, total)
    notes = _table_notes(table) + _mixed_n_notes(table, groups, group_of_problem) + warning_notes
    return Report(rows, exclusions, notes, specs, by, cluster_by, confidence_level, per_problem)


def compute_comparison(table: SampleTable, metrics: str | Sequence[str] | Sequence[MetricSpec], *,
                       baseline: str, models: Sequence[str] | None = None, by: Sequence[str] = ("task",),
                       cluster_by: str | None = None, method: str | None = None, confidence_level: float = 0.95,
                       seed: Any = None, n_resamples: int | None = None, intersect: bool = False,
                       plugin_manager: "pluggy.PluginManager | None" = None,
                       progress: Callable[[int, int], None] | None = None) -> Comparison:
    """Paired differences ``model - baseline`` per metric and group, over the same problems.

    Problems are matched by ``(task, problem_id)``. A problem is compared only when both models
    have enough samples for the metric; the others are listed in ``exclusions``.

    Parameters
    ----------
    table : SampleTable
    metrics : str, sequence of str, or sequence of MetricSpec
    baseline : str
        The reference model.
    models : sequence of str, optional
        Models to compare with the baseline (default: every other model in the table).
    by : sequence of str, default: ("task",)
        Grouping fields besides the model.
    cluster_by, method, confidence_level, seed, n_resamples, plugin_manager, progress
        As in :func:`compute_report`.
    intersect : bool, default: False
        When a problem is present for one model only: ``False`` raises :class:`~kpass.DataError`
        naming such problems; ``True`` compares the common problems and lists the others.

    Returns
    -------
    Comparison
    """
    if not isinstance(table, SampleTable):
        raise TypeError(f"`table` must be a kpass.SampleTable; got {type(table).__name__}.")
    specs = _resolve_specs(metrics, plugin_manager)
    by = tuple(field for field in by if field != "model")
    all_models = table.categories("model")
    if baseline not in all_models:
        raise ValueError(f"baseline model {baseline!r} is not in the table; models: {', '.join(all_models)}.")
    others = [m for m in all_models if m != baseline] if models is None else list(models)
    for model in others:
        if model not in all_models:
            raise ValueError(f"model {model!r} is not in the table; models: {', '.join(all_models)}.")
        if model == baseline:
            raise ValueError(f"model {model!r} is the baseline; compare it with another model.")
    if not others:
        raise ValueError(f"the table has only the baseline model {baseline!r}; nothing to compare.")
    _check_requirements(table, specs)
    index = table.problem_index
    groups, group_of_problem = _groups(table, by)
    clusters = None if cluster_by is None else _problem_attribute(table, cluster_by, "--cluster-by")
    base_code = all_models.index(baseline)
    # matching key of a problem across models: (group, task, problem_id)
    n_tasks = max(len(table._categories["task"]), 1)
    n_ids = max(len(table._categories["problem_id"]), 1)
    match_key = (group_of_problem * n_tasks + index.task_codes) * n_ids + index.problem_codes
    rows: list[ComparisonRow] = []
    exclusions: list[Exclusion] = []
    with_task = "task" not in by
    total = len(groups) * len(specs) * len(others)
    done = 0
    warning_notes: list[str] = []
    for g, group in enumerate(groups):
        in_group = group_of_problem == g
        base_problems = np.flatnonzero(in_group & (index.model_codes == base_code))
        for model in others:
            model_problems = np.flatnonzero(in_group & (index.model_codes == all_models.index(model)))
            if base_problems.size == 0 and model_problems.size == 0:
                continue
            label_group = (("model", model), *group)
            only_model = model_problems[~np.isin(match_key[model_problems], match_key[base_problems])]
            only_base = base_problems[~np.isin(match_key[base_problems], match_key[model_problems])]
            if (only_model.size or only_base.size) and not intersect:
                shown = list(_problem_labels(table, only_model[:5], True)) + list(
                    _problem_labels(table, only_base[:5], True))
                raise DataError(
                    f"models {model!r} and {baseline!r} do not have the same problems: {only_model.size} only under "
                    f"{model!r}, {only_base.size} only under {baseline!r} (e.g. {', '.join(shown)}); a paired "
                    "comparison needs the same problems (use --intersection to compare the common ones and list "
                    "the others)",
                    **table.error_location(int(index.order[index.starts[(only_model if only_model.size else only_base)[0]]])),
                    field="problem_id")
            for spec in specs:
                base_ok, base_values, base_excluded = _evaluate(table, spec, base_problems)
                model_ok, model_values, model_excluded = _evaluate(table, spec, model_problems)
                for who, problems_only in ((model, only_model), (baseline, only_base)):
                    if problems_only.size:
                        other = baseline if who == model else model
                        exclusions.append(Exclusion(label_group, spec.name,
                                                    _problem_labels(table, problems_only, with_task),
                                                    f"only under {who!r}, not under {other!r}"))
                for who, excluded in ((model, model_excluded), (baseline, base_excluded)):
                    for reason, members in excluded:  # the partner's samples of these problems are unused too
                        exclusions.append(Exclusion(label_group, spec.name, _problem_labels(table, members, with_task),
                                                    f"{who}: {reason}"))
                common, at_model, at_base = np.intersect1d(match_key[model_ok], match_key[base_ok],
                                                           return_indices=True)
                n_excluded = int(np.union1d(match_key[model_problems], match_key[base_problems]).size - common.size)
                a = model_values[at_model]
                b = base_values[at_base]
                row_clusters = None if clusters is None else clusters[model_ok[at_model]]
                if common.size == 0:
                    rows.append(ComparisonRow(group, spec.name, model, baseline, None, None, None, None, None, None,
                                              None, None, 0, None, None, n_excluded, "no common problem qualifies"))
                else:
                    options: dict[str, Any] = {"confidence_level": confidence_level, "rng": seed}
                    if method is not None:
                        options["method"] = method
                    if n_resamples is not None:
                        options["n_resamples"] = n_resamples
                    if row_clusters is not None:
                        options["clusters"] = row_clusters
                    try:
                        with warnings.catch_warnings(record=True) as caught:
                            warnings.simplefilter("always")
                            result = core.paired_difference(a, b, **options)
                        label = " / ".join(value for _, value in label_group)
                        warning_notes.extend(f"{label} / {spec.name} vs {baseline}: {w.message}" for w in caught)
                    except ValueError as exc:
                        if method is not None and "method" in str(exc):
                            raise MetricSpecError(f"--method {method}: {exc}") from exc
                        rows.append(ComparisonRow(group, spec.name, model, baseline, float(a.mean() - b.mean()), None,
                                                  None, None, None, None, float(a.mean()), float(b.mean()),
                                                  int(common.size), None, None, n_excluded, f"no interval: {exc}"))
                    else:
                        rows.append(ComparisonRow(
                            group, spec.name, model, baseline, float(result.estimate), _nan_to_none(result.low),
                            _nan_to_none(result.high), _nan_to_none(result.standard_error),
                            _nan_to_none(result.p_value), _nan_to_none(result.correlation),
                            float(result.estimate_a), float(result.estimate_b), int(common.size), result.n_clusters,
                            result.method, n_excluded, "", result))
                done += 1
                if progress is not None:
                    progress(done, total)
    notes = _table_notes(table) + warning_notes
    return Comparison(rows, exclusions, notes, specs, baseline, by, cluster_by, confidence_level)
