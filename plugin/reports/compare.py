"""Paired comparisons of models: ``model - baseline`` per metric and group over the same problems.

:func:`compute_comparison` matches each model's problems with the baseline's, asks each metric
family for per-problem values on the problems both have enough samples of, and aggregates the
differences with :func:`kpass.paired_difference`. Every problem left out is listed in the result's
``exclusions`` with the reason, as in :func:`kpass.compute_report`.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from kpass import metrics as core

from kpass.data.problems import problem_attribute
from kpass.data.reduction import ProblemStatistics
from kpass.data.table import SampleTable
from kpass.errors import DataError, UsageError
from kpass.host.specs import MetricSpec
from kpass.notes import Note, as_notes, warning_note
from kpass.reports.columns import judge_of
from kpass.reports.options import DEFAULT_N_RESAMPLES, interval_options
from kpass.reports.report import (
    Exclusion, Group, _check_requirements, _evaluate, _family_notes, _groups, _nan_to_none, _problem_labels,
    _resolve_specs, _table_notes, _TaskOfGroup, _too_few_samples, replaying_violations,
)
from kpass.reports.seeds import seed_for_call

if TYPE_CHECKING:  # pragma: no cover
    import pluggy

__all__ = ["Comparison", "ComparisonRow", "compute_comparison"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class ComparisonRow(_TaskOfGroup):
    """``model - baseline`` on one metric in one group, paired over the common problems.

    Built with keyword arguments only; a statistic the data cannot give stays ``None`` (and
    ``note`` says why).

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
    judge, judge_baseline : str or None
        The task metric that judged the model's and the baseline's samples (as
        :attr:`ReportRow.judge`); a difference between two judges mixes two scorings.
    """

    group: Group
    metric: str
    model: str
    baseline: str
    n_problems: int
    estimate: float | None = None
    low: float | None = None
    high: float | None = None
    standard_error: float | None = None
    p_value: float | None = None
    correlation: float | None = None
    estimate_model: float | None = None
    estimate_baseline: float | None = None
    n_clusters: int | None = None
    method: str | None = None
    n_excluded: int = 0
    note: str = ""
    result: Any = dataclasses.field(default=None, compare=False, repr=False)
    judge: str | None = None
    judge_baseline: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.group)
        for name in ("metric", "model", "baseline", "estimate", "low", "high", "standard_error", "p_value",
                     "correlation", "estimate_model", "estimate_baseline", "n_problems", "n_clusters", "method",
                     "n_excluded", "note"):
            out[name] = getattr(self, name)
        if self.judge is not None or self.judge_baseline is not None:
            out["judge"], out["judge_baseline"] = self.judge, self.judge_baseline
        return out


@dataclasses.dataclass
class Comparison:
    """What :func:`compute_comparison` returns (``rows``, ``exclusions``, ``notes`` as in :class:`Report`)."""

    rows: list[ComparisonRow]
    exclusions: list[Exclusion]
    notes: list[Note]
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
            "notes": [note.as_dict() for note in as_notes(self.notes)],
        }


@replaying_violations
def compute_comparison(table: SampleTable, metrics: str | Sequence[str] | Sequence[MetricSpec], *,
                       baseline: str, models: Sequence[str] | None = None, by: Sequence[str] = ("task",),
                       cluster_by: str | None = None, method: str | None = None, confidence_level: float = 0.95,
                       rng: int | np.random.Generator | None = None, n_resamples: int = DEFAULT_N_RESAMPLES,
                       intersect: bool = False,
                       plugin_manager: "pluggy.PluginManager | None" = None,
                       progress: Callable[[int, int], None] | None = None, cut_answers: str | None = None) -> Comparison:
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
    method : str, optional
        Interval method of :func:`kpass.paired_difference` (``PAIRED_INTERVAL_METHODS``);
        default: ``DEFAULT_PAIRED_METHOD``.
    cluster_by, confidence_level, rng, n_resamples, plugin_manager, progress, cut_answers
        As in :func:`compute_report` (fresh entropy once per call and 10,000 resamples by default).
    intersect : bool, default: False
        When a problem is present for one model only: ``False`` raises :class:`~kpass.DataError`
        naming such problems; ``True`` compares the common problems and lists the others.

    Returns
    -------
    Comparison

    Raises
    ------
    UsageError
        An unknown baseline or model, or a bad interval option (a ``ValueError``).
    DataError
        As :func:`compute_report`; problems present for one model only (without ``intersect``);
        a metric no problem can be compared on (k larger than every n of a model).
    """
    if not isinstance(table, (SampleTable, ProblemStatistics)):
        raise TypeError(f"`table` must be a kpass.SampleTable or kpass.ProblemStatistics; got {type(table).__name__}.")
    specs = _resolve_specs(metrics, plugin_manager, cut_answers)
    _refuse_extrapolated(specs)
    by = tuple(field for field in by if field != "model")
    options = interval_options(method=method, confidence_level=confidence_level, rng=seed_for_call(rng),
                               n_resamples=n_resamples, paired=True, clustered=cluster_by is not None)
    others = _compared_models(table, baseline, models)
    _check_requirements(table, specs)
    _check_enough_samples(table, specs, baseline, others)
    groups, group_of_problem = _groups(table, by)
    clusters = None if cluster_by is None else problem_attribute(table, cluster_by, "--cluster-by")
    index = table.problem_index
    # matching key of a problem across models: (group, task, problem_id)
    n_tasks = max(table.n_categories("task"), 1)
    n_ids = max(table.n_categories("problem_id"), 1)
    match_key = (group_of_problem * n_tasks + index.task_codes) * n_ids + index.problem_codes
    setup = _PairSetup(table, baseline, options, clusters, match_key, "task" not in by, intersect)
    out = _ComparisonParts([], [], [])
    total = len(groups) * len(specs) * len(others)
    done = 0
    all_models = table.categories("model")
    base_code = all_models.index(baseline)
    for g, group in enumerate(groups):
        in_group = group_of_problem == g
        base_problems = np.flatnonzero(in_group & (index.model_codes == base_code))
        base_labels = _problem_labels(table, base_problems, setup.with_task)
        for model in others:
            model_problems = np.flatnonzero(in_group & (index.model_codes == all_models.index(model)))
            if base_problems.size == 0 and model_problems.size == 0:
                continue
            pair = _pair_problems(setup, group, model, (base_problems, base_labels), model_problems)
            for spec in specs:
                _compare_metric(setup, pair, spec, out)
                done += 1
                if progress is not None:
                    progress(done, total)
    notes = _table_notes(table, (cluster_by, *by)) + out.warning_notes
    return Comparison(out.rows, out.exclusions, notes, specs, baseline, by, cluster_by, options["confidence_level"])


def _refuse_extrapolated(specs: Sequence[MetricSpec]) -> None:
    """Refuse a model-based (extrapolated) metric: it has no paired per-problem values."""
    extrapolated = [spec.name for spec in specs if spec.params.get("extrapolate")]
    if extrapolated:
        raise UsageError(f"{', '.join(extrapolated)}: an extrapolated (model-based) metric has no paired "
                         "per-problem values to compare; use `kpass report` for each model")


def _compared_models(table: SampleTable, baseline: str, models: Sequence[str] | None) -> list[str]:
    """The models compared with ``baseline`` (every other model by default), each checked against the table."""
    all_models = table.categories("model")
    if baseline not in all_models:
        raise UsageError(f"baseline model {baseline!r} is not in the table; models: {', '.join(all_models)}.")
    others = [m for m in all_models if m != baseline] if models is None else list(models)
    for model in others:
        if model not in all_models:
            raise UsageError(f"model {model!r} is not in the table; models: {', '.join(all_models)}.")
        if model == baseline:
            raise UsageError(f"model {model!r} is the baseline; compare it with another model.")
    if not others:
        raise UsageError(f"the table has only the baseline model {baseline!r}; nothing to compare.")
    return others


def _check_enough_samples(table: SampleTable, specs: Sequence[MetricSpec], baseline: str, others: list[str]) -> None:
    """Refuse a metric that needs more samples than the baseline's or the compared models' largest n."""
    index = table.problem_index
    all_models = table.categories("model")
    base_code = all_models.index(baseline)
    largest_base = int(index.n_samples[index.model_codes == base_code].max())
    largest_other, other = max((int(index.n_samples[index.model_codes == all_models.index(m)].max()), m)
                               for m in others)
    if largest_base < largest_other:
        limiting, largest = f"no problem of the baseline {baseline!r}", largest_base
    else:
        limiting = f"no problem of {other!r}" if len(others) == 1 else "no problem of any compared model"
        largest = largest_other
    for spec in specs:
        if spec.min_samples > largest:
            raise _too_few_samples(table, spec, largest, limiting)


@dataclasses.dataclass(frozen=True)
class _PairSetup:
    """What every (group, model, metric) of one comparison shares."""

    table: SampleTable
    baseline: str
    options: dict[str, Any]
    clusters: NDArray[np.int64] | None
    match_key: NDArray[np.int64]
    with_task: bool
    intersect: bool


@dataclasses.dataclass(frozen=True)
class _ComparisonParts:
    """The rows, exclusions and warning notes gathered so far."""

    rows: list[ComparisonRow]
    exclusions: list[Exclusion]
    warning_notes: list[Note]


@dataclasses.dataclass(frozen=True)
class _Pair:
    """One model's and the baseline's problems in one group, labelled, and those only one of them has."""

    group: Group
    model: str
    model_problems: NDArray[np.int64]
    model_labels: NDArray[np.object_]
    base_problems: NDArray[np.int64]
    base_labels: NDArray[np.object_]
    only_model: NDArray[np.bool_]
    only_base: NDArray[np.bool_]

    @property
    def label_group(self) -> Group:
        """The group with the model first, as exclusions and warnings name it."""
        return (("model", self.model), *self.group)


def _pair_problems(setup: _PairSetup, group: Group, model: str,
                   base: tuple[NDArray[np.int64], NDArray[np.object_]], model_problems: NDArray[np.int64]) -> _Pair:
    """Match ``model``'s problems of ``group`` with the baseline's; without ``intersect``, refuse a mismatch."""
    table, match_key, baseline = setup.table, setup.match_key, setup.baseline
    base_problems, base_labels = base
    model_labels = _problem_labels(table, model_problems, setup.with_task)
    only_model = ~np.isin(match_key[model_problems], match_key[base_problems])
    only_base = ~np.isin(match_key[base_problems], match_key[model_problems])
    if (only_model.any() or only_base.any()) and not setup.intersect:
        index = table.problem_index
        shown = (_problem_labels(table, model_problems[only_model][:5], True).tolist()
                 + _problem_labels(table, base_problems[only_base][:5], True).tolist())
        first = (model_problems[only_model] if only_model.any() else base_problems[only_base])[0]
        raise DataError(
            f"models {model!r} and {baseline!r} do not have the same problems: {int(only_model.sum())} only "
            f"under {model!r}, {int(only_base.sum())} only under {baseline!r} (e.g. {', '.join(shown)}); a "
            "paired comparison needs the same problems (use --intersect to compare the common ones and list "
            "the others)",
            **table.error_location(int(index.order[index.starts[first]])), field="problem_id")
    return _Pair(group, model, model_problems, model_labels, base_problems, base_labels, only_model, only_base)


def _compare_metric(setup: _PairSetup, pair: _Pair, spec: MetricSpec, out: _ComparisonParts) -> None:
    """The row of one metric for one model against the baseline, with its exclusions and notes."""
    table, baseline, model, match_key = setup.table, setup.baseline, pair.model, setup.match_key
    base_ok, base_values, base_excluded = _evaluate(table, spec, pair.base_problems)
    model_ok, model_values, model_excluded = _evaluate(table, spec, pair.model_problems)
    for who, only, labels in ((model, pair.only_model, pair.model_labels), (baseline, pair.only_base, pair.base_labels)):
        if only.any():
            partner = baseline if who == model else model
            out.exclusions.append(Exclusion(pair.label_group, spec.name, tuple(labels[only].tolist()),
                                            f"only under {who!r}, not under {partner!r}"))
    for who, excluded, labels in ((model, model_excluded, pair.model_labels),
                                  (baseline, base_excluded, pair.base_labels)):
        for reason, members in excluded:  # the partner's samples of these problems are unused too
            out.exclusions.append(Exclusion(pair.label_group, spec.name, tuple(labels[members].tolist()),
                                            f"{who}: {reason}"))
    model_chosen, base_chosen = pair.model_problems[model_ok], pair.base_problems[base_ok]
    for who, chosen in ((model, model_chosen), (baseline, base_chosen)):
        out.warning_notes.extend(_family_notes(table, spec, chosen, " / ".join(
            value for _, value in (("model", who), *pair.group))))
    common, at_model, at_base = np.intersect1d(match_key[model_chosen], match_key[base_chosen], return_indices=True)
    n_excluded = int(np.union1d(match_key[pair.model_problems], match_key[pair.base_problems]).size - common.size)
    row_clusters = None if setup.clusters is None else setup.clusters[model_chosen[at_model]]
    pair_row = functools.partial(ComparisonRow, group=pair.group, metric=spec.name, model=model,
                                 baseline=baseline, n_excluded=n_excluded,
                                 judge=judge_of(table, pair.model_problems),
                                 judge_baseline=judge_of(table, pair.base_problems))
    if common.size == 0:
        out.rows.append(pair_row(n_problems=0, note="no common problem qualifies"))
        return
    label = " / ".join(value for _, value in pair.label_group)
    out.rows.append(_paired_difference_row(pair_row, (model_values[at_model], base_values[at_base]), row_clusters,
                                           setup.options, (f"{label} / {spec.name} vs {baseline}",),
                                           out.warning_notes))


def _paired_difference_row(pair_row: Callable[..., ComparisonRow], values: tuple[NDArray[np.float64], NDArray[np.float64]],
                           clusters: NDArray[np.int64] | None, options: dict[str, Any], row_label: tuple[str],
                           warning_notes: list[Note]) -> ComparisonRow:
    """The row of :func:`kpass.paired_difference` on the common problems' values (``model``, ``baseline``)."""
    a, b = values
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = core.paired_difference(a, b, clusters=clusters, **options)
        assert isinstance(result, core.PairedResult)  # 1-D a and b: one result
    except ValueError as exc:  # options were checked: the data cannot give an interval
        return pair_row(n_problems=int(a.size), estimate=float(a.mean() - b.mean()),
                        estimate_model=float(a.mean()), estimate_baseline=float(b.mean()),
                        note=f"no interval: {exc}")
    warning_notes.extend(warning_note(w, row_label) for w in caught)
    return pair_row(
        n_problems=int(a.size), estimate=float(result.estimate),
        low=_nan_to_none(result.low), high=_nan_to_none(result.high),
        standard_error=_nan_to_none(result.standard_error),
        p_value=_nan_to_none(result.p_value), correlation=_nan_to_none(result.correlation),
        estimate_model=float(result.estimate_a), estimate_baseline=float(result.estimate_b),
        n_clusters=result.n_clusters, method=result.rule or result.method, result=result)
