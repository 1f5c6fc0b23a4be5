"""Reports: every metric per (model, task) with an interval.

:func:`compute_report` reduces a :class:`~kpass.SampleTable` to per-problem counts, asks each
metric family for per-problem values on the problems with enough samples, and aggregates them
with :func:`kpass.mean_ci`; :func:`kpass.reports.compare.compute_comparison` does the same for two
models on the same problems with :func:`kpass.paired_difference`. Every problem left out of a metric
is listed in the result's ``exclusions`` with the reason; nothing is dropped silently.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from kpass import metrics as core

from kpass.data.problems import ProblemSet, problem_attribute
from kpass.errors import DataError, MetricSpecError, UsageError
from kpass.notes import Note, as_notes, warning_note
from kpass.data.reduction import ProblemStatistics, Violation, raise_violation
from kpass.host.lookups import parse_metric_specs
from kpass.host.specs import MetricSpec
from kpass.data.table import SampleTable
from kpass.reports.columns import judge_of
from kpass.reports.options import DEFAULT_N_RESAMPLES, DEFAULT_SEED, interval_options
from kpass.reports.seeds import seed_for_call
from kpass.reports.selection import SelectionBiasColumn, selection_bias_of_report

if TYPE_CHECKING:  # pragma: no cover
    import pluggy

__all__ = [
    "DEFAULT_N_RESAMPLES", "DEFAULT_SEED", "Exclusion", "Report", "ReportRow",
    "check_one_model_per_group", "compute_report", "interval_options", "problem_attribute",
]

Group = tuple[tuple[str, str], ...]


def _group_value(group: Group, field: str) -> str | None:
    for name, value in group:
        if name == field:
            return value
    return None


class _TaskOfGroup:
    """The ``task`` of a row's ``group`` (None when the group has no task)."""

    group: Group

    @property
    def task(self) -> str | None:
        return _group_value(self.group, "task")


class _ModelAndTaskOfGroup(_TaskOfGroup):
    """The ``model`` and ``task`` of a row's ``group`` (None when the group lacks one)."""

    @property
    def model(self) -> str | None:
        return _group_value(self.group, "model")


@dataclasses.dataclass(frozen=True)
class Exclusion(_ModelAndTaskOfGroup):
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

    def as_dict(self) -> dict[str, Any]:
        return {**dict(self.group), "metric": self.metric, "problem_ids": list(self.problem_ids),
                "n_problems": len(self.problem_ids), "reason": self.reason}


@dataclasses.dataclass(frozen=True)
class ReportRow(_ModelAndTaskOfGroup):
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
        The interval's rule, ``IntervalResult.rule`` (docs/intervals.md "Rules"; see :func:`kpass.mean_ci`).
    n_excluded : int
        Problems of the group left out (listed in :attr:`Report.exclusions`).
    note : str
        Why the estimate or interval is missing, if it is.
    judge : str or None
        The task metric that judged the samples (the table's ``judge`` column, set by the lm-eval
        reader; :func:`kpass.reports.columns.judge_of`); None when the table does not say.
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
    judge: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.group)
        for name in ("metric", "estimate", "low", "high", "standard_error", "n_problems", "n_samples",
                     "n_clusters", "method", "n_excluded", "note"):
            out[name] = getattr(self, name)
        if self.judge is not None:
            out["judge"] = self.judge
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
    notes : list of Note
        Facts about the data a reader should know (:class:`kpass.Note`: kind, rows, text, doc):
        the table's own notes first (:attr:`SampleTable.notes`, e.g. epochs a reader left out),
        extra columns kept as metadata, ragged n, and every warning of the interval core.
    metrics : list of MetricSpec
    by : tuple of str
    cluster_by : str or None
    confidence_level : float
    per_problem : dict
        ``(group, metric) -> (problem_ids, values)`` of the problems each estimate averages.
    selection_bias : list of SelectionBiasColumn
        With several models: the expected inflation of the best one per (task, metric), and the
        corrected score of each model selected on this set
        (:func:`kpass.reports.selection.selection_bias_of_report`).
    """

    rows: list[ReportRow]
    exclusions: list[Exclusion]
    notes: list[Note]
    metrics: list[MetricSpec]
    by: tuple[str, ...]
    cluster_by: str | None
    confidence_level: float
    per_problem: dict[tuple[Group, str], tuple[tuple[str, ...], NDArray[np.float64]]] = dataclasses.field(
        default_factory=dict, repr=False)
    selection_bias: list[SelectionBiasColumn] = dataclasses.field(default_factory=list, repr=False)

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
            "notes": [note.as_dict() for note in as_notes(self.notes)],
            **({"selection_bias": [entry.as_dict() for entry in self.selection_bias]} if self.selection_bias else {}),
        }


# ----------------------------------------------------------------------------------------------
# shared machinery


def _resolve_specs(metrics, plugin_manager, cut_answers: str | None = None) -> list[MetricSpec]:
    if cut_answers is not None:  # every cons@k spec that does not say otherwise gets cut=<rule>
        from kpass.data.problems import CUT_ANSWER_RULES
        from kpass.host.manager import metric_registry
        from kpass.host.specs import with_option_default

        if cut_answers not in CUT_ANSWER_RULES:
            raise UsageError(f"`cut_answers` must be one of {', '.join(CUT_ANSWER_RULES)}; got {cut_answers!r}")
        items = [metrics] if isinstance(metrics, (str, MetricSpec)) else list(metrics)
        texts = [item.name if isinstance(item, MetricSpec) else item for item in items]
        metrics = with_option_default(texts, "cons@k", "cut", cut_answers, metric_registry(plugin_manager))
    if isinstance(metrics, MetricSpec):
        return [metrics]
    if isinstance(metrics, str):
        return parse_metric_specs(metrics, plugin_manager=plugin_manager)
    items = list(metrics)
    if items and len(specs := [item for item in items if isinstance(item, MetricSpec)]) == len(items):
        return specs
    return parse_metric_specs([item.name if isinstance(item, MetricSpec) else item for item in items],
                              plugin_manager=plugin_manager)


def _groups(table: SampleTable, by: Sequence[str]) -> tuple[list[Group], NDArray[np.int64]]:
    index = table.problem_index
    if not by:
        return [()], np.zeros(index.n_problems, dtype=np.int64)
    columns = [problem_attribute(table, field, "--by", allow_null=True) for field in by]
    stacked = np.stack(columns, axis=1)
    keys, group_of_problem = np.unique(stacked, axis=0, return_inverse=True)
    group_of_problem = group_of_problem.ravel()
    groups = []
    for key in keys.tolist():
        groups.append(tuple((field, "(null)" if code < 0 else table.category_values(field)[code])
                            for field, code in zip(by, key)))
    return groups, group_of_problem


def check_one_model_per_group(table: SampleTable, group_of_problem: NDArray[np.int64], groups: Sequence[Group],
                              by: Sequence[str]) -> None:
    """Refuse a grouping under which one group holds the problems of several models.

    Such a group would average different models together and count the same problem once per
    model, as if the copies were independent problems (understating the standard error).

    Parameters
    ----------
    table : SampleTable
    group_of_problem : ndarray of int, shape (n_problems,)
        Group of every problem of ``table.problem_index``.
    groups : sequence of Group
        Label of every group (``(field, value)`` pairs; ``()`` for everything).
    by : sequence of str
        The grouping fields, for the message.

    Raises
    ------
    UsageError
        Naming the group, its models and the ``--by`` to use instead.
    """
    models = table.problem_index.model_codes
    n_groups = len(groups)
    low = np.full(n_groups, np.iinfo(np.int64).max)
    high = np.full(n_groups, -1, dtype=np.int64)
    np.minimum.at(low, group_of_problem, models)
    np.maximum.at(high, group_of_problem, models)
    mixed = np.flatnonzero(high > low)
    if mixed.size == 0:
        return
    group = int(mixed[0])
    present = np.unique(models[group_of_problem == group])
    names = ", ".join(repr(name) for name in table.category_values("model")[present[:3]]) + (
        ", ..." if present.size > 3 else "")
    where = ", ".join(f"{field}={value}" for field, value in groups[group]) or "the whole table"
    fields = [field for field in by if field != "model"]
    raise UsageError(
        f"--by {','.join(by) if by else repr('')} puts the problems of {present.size} models ({names}) into one "
        f"group ({where}): their estimates would be averaged together and each model's copy of a problem "
        f"counted as a separate problem. Include model in --by (e.g. --by {','.join(['model', *fields])})")


def _problem_labels(table: SampleTable, problems: NDArray[np.int64], with_task: bool) -> NDArray[np.object_]:
    """Problem ids (``task/problem_id`` when ``with_task``) of ``problems``, as an object array."""
    index = table.problem_index
    ids = table.category_values("problem_id")[index.problem_codes[problems]]
    if not with_task:
        return ids
    return table.category_values("task")[index.task_codes[problems]] + "/" + ids


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


def _too_few_samples(table: SampleTable, spec: MetricSpec, largest: int, who: str = "") -> DataError:
    need = spec.min_samples
    symbol = getattr(spec.implementation, "symbol", "")
    example = f" (e.g. {symbol}{largest})" if symbol and not getattr(spec.implementation, "parameter", None) else ""
    return DataError(
        f"{spec.name} needs {need} samples per problem, but {who or 'no problem'} has more than {largest} "
        f"(the largest n{' there' if who else ''}), so every problem would be excluded from it. Lower k to at "
        f"most {largest}{example}, or draw more samples"
        + (f" (or write {getattr(spec.implementation, 'symbol', '')}{spec.k}[extrapolate] for a model-based estimate)"
           if "extrapolate" in getattr(spec.implementation, "flags", ()) else ""),
        **table.error_location(), field="sample_index")


def _evaluate(table: SampleTable, spec: MetricSpec, problems: NDArray[np.int64],
              ) -> tuple[NDArray[np.bool_], NDArray[np.float64], list[tuple[str, NDArray[np.bool_]]]]:
    """``(eligible, values of the eligible problems, [(reason, excluded)])`` of one metric on
    ``problems``; ``eligible`` and ``excluded`` are masks over ``problems``."""
    index = table.problem_index
    need = spec.min_samples
    n = index.n_samples[problems]
    short = n < need
    exclusions = []
    if short.any():
        for value in np.unique(n[short]).tolist():
            exclusions.append((f"{value} sample{'s' if value != 1 else ''}, {spec.name} needs {need}", n == value))
    eligible = ~short
    chosen = problems[eligible]
    if chosen.size == 0:
        return eligible, np.zeros(0), exclusions
    family = spec.implementation
    if family is None:
        raise TypeError(f"metric {spec.name!r} has no implementation: build specs with kpass.parse_metric_specs")
    try:
        values = family.compute(ProblemSet(table, chosen, budget=spec.budget), spec)
    except (DataError, UsageError, MetricSpecError):
        raise
    except ValueError as exc:  # the core rejected the data of these problems
        raise DataError(f"{spec.name}: {exc}", **table.error_location()) from exc
    values = np.asarray(values, dtype=np.float64)
    if values.shape != (chosen.size,):
        raise ValueError(f"metric family {type(family).__name__} ({spec.name}) returned shape {values.shape}; "
                         f"expected ({chosen.size},), one value per problem.")
    if not np.isfinite(values).all():
        bad = np.flatnonzero(~np.isfinite(values))[:5]
        raise ValueError(f"metric family {type(family).__name__} ({spec.name}) returned non-finite values for "
                         f"problems {_problem_labels(table, chosen[bad], True).tolist()}.")
    return eligible, values, exclusions


def _family_notes(table: SampleTable, spec: MetricSpec, chosen: NDArray[np.int64], label: str) -> list[Note]:
    """What a family says about the problems a row rests on (``MetricFamily.notes``, e.g. cons@k's
    count of abstaining answers of unfinished generations), prefixed by the row's group."""
    notes = getattr(spec.implementation, "notes", None)
    if notes is None or chosen.size == 0:
        return []
    row = (f"{label} / " if label else "") + spec.name
    return [Note("metric", (row,), note) for note in notes(ProblemSet(table, chosen, budget=spec.budget), spec)]


def _summarize(table: SampleTable, spec: MetricSpec, chosen: NDArray[np.int64],
               clusters: NDArray[np.int64] | None, options: dict[str, Any]) -> Any:
    """A model-based family's own ``(IntervalResult or None, notes)`` (see
    :meth:`MetricFamily.summarize`), or ``None`` for the mean of the per-problem values."""
    summarize = getattr(spec.implementation, "summarize", None)
    if summarize is None:
        return None
    try:
        return summarize(ProblemSet(table, chosen, budget=spec.budget), spec, clusters=clusters, options=options)
    except (DataError, UsageError, MetricSpecError):
        raise
    except ValueError as exc:  # the core rejected the data of these problems
        raise DataError(f"{spec.name}: {exc}", **table.error_location()) from exc


def _interval(values: NDArray[np.float64], clusters: NDArray[np.int64] | None,
              options: dict[str, Any]) -> tuple[Any, list[Any]]:
    """:func:`kpass.mean_ci` with checked ``options``; every warning it gives comes back (caught)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = core.mean_ci(values, clusters=clusters, **options)
    return result, list(caught)


def _mixed_n_notes(table: SampleTable, groups: list[Group], group_of_problem: NDArray[np.int64]) -> list[Note]:
    index = table.problem_index
    notes = []
    low = np.full(len(groups), np.iinfo(np.int64).max)
    high = np.zeros(len(groups), dtype=np.int64)
    np.minimum.at(low, group_of_problem, index.n_samples)
    np.maximum.at(high, group_of_problem, index.n_samples)
    for g in np.flatnonzero(low != high).tolist():
        label = " / ".join(v for _, v in groups[g]) or "all"
        notes.append(Note("mixed-samples", (f"{label} ({low[g]} to {high[g]})",), "samples per problem vary; each "
                          "problem's estimate uses its own n (unbiased for every n >= k)"))
    return notes


def _table_notes(table: SampleTable, interpreted: Sequence[str | None] = ()) -> list[Note]:
    """The reader's notes on the table (:attr:`SampleTable.notes`), then the host's (extra columns
    kpass does not interpret, besides the ``interpreted`` ones (``by``, ``cluster_by``); the seed trap, :func:`kpass.reports.sample_checks.identical_samples_notes`)."""
    from kpass.data.sources import JUDGE_COLUMN, RUN_COLUMN
    from kpass.host.extractors import EXTRACTOR_COLUMN
    from kpass.reports.sample_checks import PIPELINE_OF_COLUMN, identical_samples_notes

    notes = as_notes(table.notes)
    uninterpreted = [name for name in table.extra_columns
                     if name not in (EXTRACTOR_COLUMN, PIPELINE_OF_COLUMN, RUN_COLUMN, JUDGE_COLUMN, *interpreted)]
    if uninterpreted:
        notes.append(Note("extra-columns", tuple(uninterpreted), "columns outside the schema, kept as metadata "
                          "(usable with --by and --cluster-by)"))
    return notes + identical_samples_notes(table)


def _nan_to_none(value: float) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


# ----------------------------------------------------------------------------------------------


def replaying_violations(function: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``function(table, ...)``; when an engine's statistics show a broken rule
    (:class:`~kpass.data.reduction.Violation`), raise the numpy path's error for it
    (:func:`~kpass.data.reduction.raise_violation`: the offending rows read again, ``function``
    run on them)."""

    @functools.wraps(function)
    def run(table: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return function(table, *args, **kwargs)
        except Violation as violation:
            if not isinstance(table, ProblemStatistics):
                raise
            raise_violation(violation, table, lambda samples: function(samples, *args, **kwargs))

    return run


@replaying_violations
def compute_report(table: SampleTable, metrics: str | Sequence[str] | Sequence[MetricSpec], *,
                   by: Sequence[str] = ("model", "task"), cluster_by: str | None = None,
                   method: str | None = None, confidence_level: float = 0.95,
                   rng: int | np.random.Generator | None = None,
                   n_resamples: int = DEFAULT_N_RESAMPLES, plugin_manager: "pluggy.PluginManager | None" = None,
                   progress: Callable[[int, int], None] | None = None, cut_answers: str | None = None,
                   selected_on_this_set: Sequence[str] = (), selection_bias: bool = True) -> Report:
    """Estimate every metric per group with an interval, listing every excluded problem.

    Parameters
    ----------
    table : SampleTable
        The samples (see :func:`kpass.read_samples`).
    metrics : str, sequence of str, or sequence of MetricSpec
        Metric specs, e.g. ``"pass@1,8 cons@16"`` (see :func:`kpass.parse_metric_specs`).
    by : sequence of str, default: ("model", "task")
        Categorical fields to group by; each must be constant within a problem, and a group may
        hold one model only (``by`` must include ``model`` when the table has several).
    cluster_by : str, optional
        Field holding each problem's cluster (``"cluster"`` or a metadata column); intervals
        then resample or cluster by it.
    method : str, optional
        Interval method of :func:`kpass.mean_ci`, one of :data:`kpass.metrics.INTERVAL_METHODS`;
        default: ``kpass.metrics.DEFAULT_INTERVAL_METHOD``.
    confidence_level : float, default: 0.95
    rng : int, numpy.random.Generator or None, default: None
        Seed or generator of the bootstrap (SciPy SPEC 7; ``kpass report --seed``): ``None`` draws
        fresh entropy once per call, recorded in each row; ``rng=0`` gives what ``kpass report`` prints.
    n_resamples : int, default: 10_000
        Bootstrap resamples (:data:`DEFAULT_N_RESAMPLES`).
    plugin_manager : pluggy.PluginManager, optional
        Host whose metric families are used.
    progress : callable ``(done, total)``, optional
        Called after each (group, metric).
    cut_answers : {"abstain", "vote"}, optional
        What cons@k does with the answer of an unfinished generation, for every cons@k spec that
        does not say (``cons@8[cut=vote]``): it abstains (the default, counted in a note) or votes.
    selected_on_this_set : sequence of str, default: ()
        Models chosen on these problems (``kpass report --selected-on-this-set``): each gets its
        score less the expected selection bias (:attr:`Report.selection_bias`, and a note).
    selection_bias : bool, default: True
        Estimate the selection bias of the best model of each (task, metric) when the report is
        grouped by model and task and holds 3 or more models (2 with ``selected_on_this_set``), as
        ``kpass report`` does (:func:`kpass.reports.selection.selection_bias_of_report`); False
        leaves :attr:`Report.selection_bias` empty.

    Returns
    -------
    Report
        What ``kpass report`` prints. Its ``notes`` start with the table's own
        (:attr:`SampleTable.notes`, from the reader).

    Raises
    ------
    MetricSpecError
        Bad specs (listing the valid ones).
    UsageError
        A bad interval option (method, confidence level, resamples, ``rng``), a ``by`` under
        which one group holds several models, or a ``selected_on_this_set`` model not in the table.
    DataError
        A metric needs a column the table lacks, ``by``/``cluster_by`` fields that vary within a
        problem (or a null cluster), a metric that no problem has enough samples for (k larger
        than every n), or data a metric cannot use (naming file, line and field).
    """
    if not isinstance(table, (SampleTable, ProblemStatistics)):
        raise TypeError(f"`table` must be a kpass.SampleTable or kpass.ProblemStatistics; got {type(table).__name__}.")
    specs = _resolve_specs(metrics, plugin_manager, cut_answers)
    by = tuple(by)
    options = interval_options(method=method, confidence_level=confidence_level, rng=seed_for_call(rng),
                               n_resamples=n_resamples, clustered=cluster_by is not None)
    if isinstance(selected_on_this_set, str):  # one model's name, not a sequence of letters
        selected_on_this_set = (selected_on_this_set,)
    if selection_bias and selected_on_this_set:  # a name not in the input, before any work
        from kpass.reports.selection import check_selected

        check_selected(selected_on_this_set, table.category_values("model").tolist())
    _check_requirements(table, specs)
    largest = int(table.problem_index.n_samples.max())
    for spec in specs:
        if spec.min_samples > largest:
            raise _too_few_samples(table, spec, largest)
    groups, group_of_problem = _groups(table, by)
    check_one_model_per_group(table, group_of_problem, groups, by)
    clusters = None if cluster_by is None else problem_attribute(table, cluster_by, "--cluster-by")
    with_task = "task" not in by
    from kpass.reports.sample_checks import pooled_pipeline_rows
    from kpass.reports.task_groups import task_group_problems

    keep, pooled_notes = pooled_pipeline_rows(table, by)
    task_groups, group_notes = task_group_problems(table, by) if isinstance(table, SampleTable) else ([], [])
    parts = _ReportParts(table, specs, progress, (len(groups) + len(task_groups)) * len(specs))
    order = np.argsort(group_of_problem, kind="stable")
    boundaries = np.searchsorted(group_of_problem[order], np.arange(len(groups) + 1))
    for g, group in enumerate(groups):
        problems = order[boundaries[g]:boundaries[g + 1]]
        if keep is not None:  # pooled over tasks: each document once, through its task's first pipeline
            problems = problems[keep[problems]]
        _add_group_rows(parts, _GroupProblems(group, problems, _problem_labels(table, problems, with_task),
                                              None if clusters is None else clusters[problems]), options)
    if task_groups and cluster_by is None:  # lm-eval groups: the subtasks' problems pooled, each subtask one cluster
        try:
            group_options = interval_options(method=method, confidence_level=confidence_level, rng=options["rng"],
                                             n_resamples=n_resamples, clustered=True)
        except UsageError as exc:  # a method that takes no clusters
            group_notes.append(Note("task-groups", (), f"no group rows: {exc}"))
            task_groups = []
    for item in task_groups:
        _add_group_rows(parts, _GroupProblems(item.group, item.problems, _problem_labels(table, item.problems, True),
                                              item.clusters), group_options if cluster_by is None else options)
    notes = (_table_notes(table, (cluster_by, *by)) + pooled_notes + group_notes + _mixed_n_notes(table, groups, group_of_problem)
             + parts.warning_notes)
    report = Report(parts.rows, parts.exclusions, notes, specs, by, cluster_by, options["confidence_level"],
                    parts.per_problem)
    if selection_bias:  # the winner's curse of several models on the same problems
        report.selection_bias, bias_notes = selection_bias_of_report(table, report, selected=selected_on_this_set,
                                                                     rng=options["rng"])
        report.notes.extend(bias_notes)
    return report


@dataclasses.dataclass
class _ReportParts:
    """What a report gathers group by group: rows, exclusions, per-problem values, notes and progress."""

    table: SampleTable
    specs: list[MetricSpec]
    progress: Callable[[int, int], None] | None
    total: int
    done: int = 0
    rows: list[ReportRow] = dataclasses.field(default_factory=list)
    exclusions: list[Exclusion] = dataclasses.field(default_factory=list)
    per_problem: dict[tuple[Group, str], tuple[tuple[str, ...], NDArray[np.float64]]] = dataclasses.field(
        default_factory=dict)
    warning_notes: list[Note] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class _GroupProblems:
    """One report group: its label, its problems, their labels and clusters."""

    group: Group
    problems: NDArray[np.int64]
    labels: NDArray[np.object_]
    clusters: NDArray[np.int64] | None

    @property
    def label(self) -> str:
        """The group's values joined by `` / `` (empty for the whole table)."""
        return " / ".join(value for _, value in self.group)


def _add_group_rows(parts: _ReportParts, group: _GroupProblems, options: dict[str, Any]) -> None:
    """The rows of every metric on one group's problems, their exclusions and notes."""
    first_row, judge = len(parts.rows), judge_of(parts.table, group.problems)
    for spec in parts.specs:
        parts.rows.append(_metric_row(parts, group, spec, options))
        parts.done += 1
        if parts.progress is not None:
            parts.progress(parts.done, parts.total)
    if judge is not None:
        parts.rows[first_row:] = [dataclasses.replace(row, judge=judge) for row in parts.rows[first_row:]]


def _metric_row(parts: _ReportParts, group: _GroupProblems, spec: MetricSpec, options: dict[str, Any]) -> ReportRow:
    """The row of one metric in one group; its exclusions, per-problem values and notes go to ``parts``."""
    table, problems, labels = parts.table, group.problems, group.labels
    eligible, values, excluded = _evaluate(table, spec, problems)
    parts.warning_notes.extend(_family_notes(table, spec, problems[eligible], group.label))
    n_excluded = 0
    for reason, members in excluded:
        parts.exclusions.append(Exclusion(group.group, spec.name, tuple(labels[members].tolist()), reason))
        n_excluded += int(members.sum())
    chosen = problems[eligible]
    n_samples = int(table.problem_index.n_samples[chosen].sum())
    parts.per_problem[(group.group, spec.name)] = (tuple(labels[eligible].tolist()), values)
    row_clusters = None if group.clusters is None else group.clusters[eligible]
    n_clusters = None if row_clusters is None else int(np.unique(row_clusters).size)
    summary = None if chosen.size == 0 else _summarize(table, spec, chosen, row_clusters, options)
    row = functools.partial(ReportRow, group.group, spec.name)
    row_label = ((f"{group.label} / " if group.label else "") + spec.name,)
    if chosen.size == 0:
        return row(None, None, None, None, 0, 0, n_clusters, None, n_excluded, "no problem has enough samples")
    if summary is not None:  # a model-based metric (pass@K[extrapolate]) gives its own number
        result, summary_notes = summary
        parts.warning_notes.extend(Note("model-based", row_label, message) for message in summary_notes)
        if result is None:
            return row(None, None, None, None, int(chosen.size), n_samples, n_clusters, None, n_excluded,
                       summary_notes[-1])
        return _interval_row(row, result, (int(chosen.size), n_samples, n_excluded))
    try:
        result, caught = _interval(values, row_clusters, options)
    except ValueError as exc:  # options were checked: the data cannot give an interval
        return row(float(values.mean()), None, None, None, int(chosen.size), n_samples, n_clusters, None,
                   n_excluded, f"no interval: {exc}")
    parts.warning_notes.extend(warning_note(w, row_label) for w in caught)
    return _interval_row(row, result, (int(chosen.size), n_samples, n_excluded))


def _interval_row(row: Callable[..., ReportRow], result: Any, counts: tuple[int, int, int]) -> ReportRow:
    """A row from an interval result, given ``(n_problems, n_samples, n_excluded)``."""
    n_problems, n_samples, n_excluded = counts
    return row(float(result.estimate), _nan_to_none(result.low), _nan_to_none(result.high),
               _nan_to_none(result.standard_error), n_problems, n_samples, result.n_clusters,
               result.rule or result.method, n_excluded, "", result)
