"""``kpass frontier``: models compared at equal compute (output tokens, FLOPs or dollars per problem).

Every (model, metric) of a report is a configuration with a compute cost per problem:

* ``tokens``: :math:`k \\times \\bar t`, with :math:`\\bar t` the model's mean output tokens per
  sample on the task (for a token budget B, the mean of :math:`\\min(t, B)`: a sample stopped at B
  spent B tokens);
* ``flops``: tokens times :math:`2 N_{\\text{active}}` (Kaplan et al. 2020: a forward pass costs
  about 2 FLOPs per active parameter per token), ``N_active`` given per model;
* ``dollars``: tokens times the price per output token given per model.

At each compute level (every configuration's cost) each model is represented by its best
configuration within that compute (:func:`kpass.metrics.best_within_compute`); the leader and the
runner-up are compared with :func:`kpass.metrics.paired_difference` on their common problems.
The Pareto frontier (:func:`kpass.metrics.pareto_frontier`) marks the configurations no other
beats with less or equal compute. Scores and intervals are those of ``kpass report``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kpass import metrics as core

from kpass.errors import DataError, UsageError
from kpass.notes import Note, warning_note
from kpass.reports.report import DEFAULT_N_RESAMPLES, compute_report, interval_options, replaying_violations
from kpass.reports.seeds import seed_for_call
from kpass.host.lookups import parse_metric_specs
from kpass.data.reduction import ProblemStatistics
from kpass.data.table import SampleTable

__all__ = ["FrontierReport", "UNITS", "UNIT_LABELS", "compute_frontier"]

UNITS = ("tokens", "flops", "dollars")
UNIT_LABELS = {"tokens": "output tokens per problem", "flops": "FLOPs per problem", "dollars": "dollars per problem"}


@dataclasses.dataclass
class FrontierReport:
    """What :func:`compute_frontier` returns.

    Attributes
    ----------
    unit : str
    points : list of dict
        One per (task, model, metric): compute, estimate, low, high, on_frontier.
    leaders : list of dict
        One per (task, compute level): leader and runner-up with their configurations and the
        paired difference with its interval.
    notes : list of Note
    confidence_level : float
    """

    unit: str
    points: list[dict[str, Any]]
    leaders: list[dict[str, Any]]
    notes: list[Note]
    confidence_level: float

    @property
    def unit_label(self) -> str:
        """The compute axis in words (``"output tokens per problem"``)."""
        return UNIT_LABELS[self.unit]

    def as_dict(self) -> dict[str, Any]:
        return {"kind": "kpass.frontier", "unit": self.unit, "confidence_level": self.confidence_level,
                "points": self.points, "leaders": self.leaders,
                "notes": [note.as_dict() for note in self.notes]}


def _default_specs(table: SampleTable) -> str:
    smallest = int(table.problem_index.n_samples.min())
    ks = ",".join(str(1 << i) for i in range(int(math.log2(smallest)) + 1))
    return f"pass@{ks}" + (f" cons@{ks}" if table.has_column("answer") else "")


def _per_model_mapping(values: Mapping[str, float] | None, models: Sequence[str], what: str, option: str):
    if values is None:
        raise UsageError(f"--unit {what} needs {option} MODEL=VALUE for every model ({', '.join(models)})")
    missing = [m for m in models if m not in values]
    if missing:
        raise UsageError(f"{option} gives no value for {', '.join(missing)}; models: {', '.join(models)}")
    unknown = [m for m in values if m not in models]
    if unknown:
        raise UsageError(f"{option} names {', '.join(unknown)}, not a model in the input; models: {', '.join(models)}")
    return values


def _mean_tokens(table: SampleTable, budgets: Sequence[int | None]) -> dict[tuple[int, int, int | None], float]:
    """Mean output tokens per sample per (model code, task code, budget)."""
    if not table.has_column("output_tokens"):
        raise DataError("equal-compute comparison needs the output_tokens column (tokens generated per sample)",
                        **table.error_location(), field="output_tokens")
    index = table.problem_index
    if isinstance(table, ProblemStatistics):  # the engine summed the tokens per problem
        if table.tokens_null is None:
            raise RuntimeError("the engine's statistics hold no output-token sums (Needs(tokens=True))")
        table.check_rows(table.tokens_null > 0, "output_tokens null")
    else:
        tokens = table.raw_column("output_tokens")[index.order]
        null = tokens < 0
        if null.any():
            row = int(index.order[np.flatnonzero(null)[0]])
            raise DataError(f"{int(null.sum())} samples have no output_tokens; the compute of every sample is needed",
                            **table.error_location(row), field="output_tokens")
    group = index.model_codes * max(table.n_categories("task"), 1) + index.task_codes
    samples = np.bincount(group, weights=index.n_samples)
    out = {}
    for budget in budgets:
        if isinstance(table, ProblemStatistics):
            per_problem = table.tokens_spent[budget].astype(np.float64)
        else:
            spent = tokens if budget is None else np.minimum(tokens, budget)
            per_problem = np.add.reduceat(spent.astype(np.float64), index.starts) if spent.size else np.zeros(0)
        total = np.bincount(group, weights=per_problem, minlength=samples.size)
        for key in np.unique(group).tolist():
            model, task = divmod(key, max(table.n_categories("task"), 1))
            out[(model, task, budget)] = float(total[key] / samples[key])
    return out


@replaying_violations
def compute_frontier(table: SampleTable, metrics: str | Sequence[str] | None = None, *, unit: str = "tokens",
                     active_parameters: Mapping[str, float] | None = None,
                     prices: Mapping[str, float] | None = None, cluster_by: str | None = None,
                     method: str | None = None, confidence_level: float = 0.95,
                     rng: int | np.random.Generator | None = None,
                     n_resamples: int = DEFAULT_N_RESAMPLES) -> FrontierReport:
    """Scores against compute per problem, the leader at each compute level, the Pareto frontier.

    Parameters
    ----------
    table : SampleTable or ProblemStatistics
        Samples of the models, with ``output_tokens``, or an engine's per-problem statistics of
        them reduced with ``Needs(tokens=True)`` and the budgets of ``metrics``.
    metrics : str or sequence of str, optional
        Configurations (default: pass@k and, with answers, cons@k for k = 1, 2, 4, ... up to the
        smallest n); a token budget ``pass@1(B=4096)`` is charged ``min(tokens, B)`` per sample.
    unit : {"tokens", "flops", "dollars"}
    active_parameters : mapping model -> float
        Active parameters per token (``flops``).
    prices : mapping model -> float
        Price per output token (``dollars``).
    cluster_by, method, confidence_level, rng, n_resamples
        As in :func:`kpass.compute_report` (the paired differences use the paired defaults).

    Returns
    -------
    FrontierReport
    """
    if unit not in UNITS:
        raise UsageError(f"--unit must be one of {', '.join(UNITS)}; got {unit!r}")
    models = table.categories("model")
    if unit == "flops":
        factor = {m: 2.0 * v for m, v in _per_model_mapping(active_parameters, models, "flops",
                                                             "--active-params").items()}
    elif unit == "dollars":
        factor = dict(_per_model_mapping(prices, models, "dollars", "--price"))
    else:
        factor = {m: 1.0 for m in models}
    specs = parse_metric_specs(metrics if metrics is not None else _default_specs(table))
    extrapolated = [s.name for s in specs if s.params.get("extrapolate")]
    if extrapolated:
        raise UsageError(f"{', '.join(extrapolated)}: extrapolated metrics have no per-problem values to compare "
                         "at equal compute; use measured k")
    rng = seed_for_call(rng)
    paired = interval_options(method=None, confidence_level=confidence_level, rng=rng, n_resamples=n_resamples,
                              paired=True, clustered=cluster_by is not None)
    report = compute_report(table, specs, by=("model", "task"), cluster_by=cluster_by, method=method,
                            confidence_level=confidence_level, rng=rng, n_resamples=n_resamples, selection_bias=False)
    spec_of = {s.name: s for s in specs}
    tokens = _mean_tokens(table, sorted({s.budget for s in specs}, key=lambda b: (b is not None, b or 0)))
    tasks = table.categories("task")
    points: list[dict[str, Any]] = []
    for row in report.rows:
        if row.estimate is None:
            continue
        spec = spec_of[row.metric]
        mean_tokens = tokens[(models.index(row.model), tasks.index(row.task), spec.budget)]
        points.append({"task": row.task, "model": row.model, "metric": row.metric, "k": spec.k,
                       "budget": spec.budget, "tokens_per_sample": mean_tokens,
                       "compute": spec.k * mean_tokens * factor[row.model], "estimate": row.estimate,
                       "low": row.low, "high": row.high, "n_problems": row.n_problems})
    leaders: list[dict[str, Any]] = []
    notes = list(report.notes)
    for task in tasks:
        chosen = [p for p in points if p["task"] == task]
        if not chosen:
            continue
        compute = np.array([p["compute"] for p in chosen])
        score = np.array([p["estimate"] for p in chosen])
        for p, on in zip(chosen, core.pareto_frontier(compute, score).tolist()):
            p["on_frontier"] = bool(on)
        present = list(dict.fromkeys(p["model"] for p in chosen))
        owner = np.array([present.index(p["model"]) for p in chosen])
        levels = np.unique(compute)
        best = core.best_within_compute(levels, compute, score, owner, len(present))
        for level, picks in zip(levels.tolist(), best.tolist()):
            available = [i for i in picks if i >= 0]
            available.sort(key=lambda i: -score[i])
            entry: dict[str, Any] = {"task": task, "compute": level, "leader": None}
            if available:
                lead = chosen[available[0]]
                entry.update(leader=lead["model"], leader_metric=lead["metric"], leader_estimate=lead["estimate"])
            if len(available) >= 2:
                second = chosen[available[1]]
                entry.update(runner_up=second["model"], runner_up_metric=second["metric"],
                             runner_up_estimate=second["estimate"])
                entry.update(_paired(report, lead, second, paired, notes))
            leaders.append(entry)
    return FrontierReport(unit, points, leaders, notes, float(confidence_level))


def _paired(report, lead: dict[str, Any], second: dict[str, Any], options: dict[str, Any], notes: list[Note]):
    ids_a, a = report.per_problem[((("model", lead["model"]), ("task", lead["task"])), lead["metric"])]
    ids_b, b = report.per_problem[((("model", second["model"]), ("task", second["task"])), second["metric"])]
    import warnings

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = core.paired_difference(a, b, problem_ids_a=list(ids_a), problem_ids_b=list(ids_b),
                                            intersect=True, **options)
    except ValueError as exc:
        return {"difference": float(np.mean(a) - np.mean(b)), "low": None, "high": None,
                "note": f"no interval: {exc}"}
    for w in caught:
        note = warning_note(w, (f"{lead['task']} / {lead['model']} {lead['metric']} vs {second['model']} "
                                f"{second['metric']}",))
        if note not in notes:
            notes.append(note)
    return {"difference": float(result.estimate), "low": _none(result.low), "high": _none(result.high),
            "p_value": _none(result.p_value), "n_paired": int(result.n_problems)}


def _none(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)
