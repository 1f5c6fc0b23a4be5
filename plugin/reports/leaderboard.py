"""Leaderboards: many models in one table, with intervals, rank intervals and paired comparisons.

A leaderboard that lists one number per model, sorted, suggests that every gap means something.
With 30 or 200 problems most neighbours are statistically tied. :func:`build_leaderboard` turns a
:class:`kpass.SampleTable` holding several models into a table that says what is and is not
known:

* every metric of every model with its interval, computed by the host's report machinery
  (:func:`kpass.compute_report`), so a leaderboard cell equals the ``kpass report`` number;
* a **rank interval** per model and metric from the paired (cluster) bootstrap: the problems (or
  whole clusters) are resampled once per replicate and the *same* multiplicities are applied to
  every model, so the models are compared on the same resampled benchmark
  (:func:`rank_intervals`);
* **pairwise paired comparisons** (:func:`kpass.metrics.paired_difference`) in the sort column
  with Holm-adjusted p-values (:func:`holm_adjust`): all pairs, neighbours in the sorted order,
  or every model against ``baseline``; the Holm family is exactly the comparisons listed;
* ``--extend``: the new columns joined onto an existing leaderboard file (CSV or Markdown), its
  rows and columns kept exactly as they were (:mod:`kpass.data.leaderboard_tables`).

Ranks and comparisons of a column use the problems that every model of the column has (a paired
resample needs the same problems); problems some model lacks are left out and listed in the notes.
Every metric is higher-is-better unless its family says otherwise (``higher_is_better = False``).

Outputs (:class:`Leaderboard`): the JSON form is the source of every other output. Its keys:
``columns`` (``key``, ``task``, ``metric``, ``higher_is_better``, ``rank_problems``, ..., and
``judge`` where the input names the task metric that judged the samples: lm-eval output),
``models`` in leaderboard order (each with ``metrics[key]`` = estimate, low, high,
standard_error, n_problems, ..., ``judge`` as the column's, and ``ranks[key]`` = rank, low, high,
probability_first, of),
``comparisons`` (model_a, model_b, difference, low, high, p_value, p_value_holm, correlation,
n_problems, note), ``comparison_family``, ``curves`` (pass@k against k), ``budget_curves``
(pass@1 and fin@1 against the token budget), ``exclusions`` and ``notes`` (records of
:class:`kpass.Note`). Markdown and CSV show the table (Markdown also the comparisons and notes;
:mod:`kpass.render.leaderboard_text`, which also joins a leaderboard onto an existing table:
:func:`~kpass.render.leaderboard_text.extend_leaderboard`); the HTML page
(:mod:`kpass.render.leaderboard_html`) shows all of it.

Ranks and ties
--------------
In one resample a model's rank is ``1 + (number of models strictly better)``, so tied models share
the best rank of their group (competition ranking, "1 2 2 4"). Equality is decided exactly where
it can be: models whose per-problem values are bitwise identical are merged before resampling and
therefore tie in every resample. Between other models a difference of resampled means no larger
than ``1e-10 * max|value|`` (floating-point rounding of the weighted sum, many orders of magnitude
below any difference one problem can make) counts as equal.

The rank interval ``[low, high]`` is the range of ranks the model takes in at least
``confidence_level`` of the resamples, cutting at most ``(1 - confidence_level) / 2`` of the
resamples from each end of the model's rank distribution:
``low = min{r : #(rank <= r) > alpha/2 * B}`` and ``high = min{r : #(rank <= r) >= (1 - alpha/2) * B}``
(computed in exact rational arithmetic).
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from kpass import __version__
from kpass.data.reduction import ProblemStatistics
from kpass.data.table import SampleTable
from kpass.errors import UsageError
from kpass.host.lookups import parse_metric_specs
from kpass.notes import Note, as_notes, warning_note
from kpass.metrics import (
    DegenerateIntervalWarning,
    FewDifferencesWarning,
    TinyDifferencesWarning,
    budget_counts,
    budget_curve,
    paired_difference_columns,
)
from kpass.metrics._ranks import (  # the rank and Holm statistics live in the metric core (issue #16)
    TIE_TOLERANCE,
    RankIntervals,
    check_confidence_level as _check_confidence_level,
    holm_adjust,
    rank_intervals,
    reconcile_rank_intervals,
)
from kpass.reports.columns import _clusters_for, _column_matrix, _problem_clusters
from kpass.reports.report import DEFAULT_N_RESAMPLES, compute_report, interval_options, replaying_violations
from kpass.reports.seeds import seed_for_call

__all__ = ["Leaderboard", "PAIRS", "RankIntervals", "TIE_TOLERANCE", "build_leaderboard", "holm_adjust", "rank_intervals"]

# --------------------------------------------------------------------------------------------
# Building a leaderboard from a sample table
# --------------------------------------------------------------------------------------------

#: Which pairs of models are compared when no baseline is given.
PAIRS = ("all", "adjacent")

#: Most budgets drawn per budget curve when the budgets are chosen automatically.
_MAX_AUTO_BUDGETS = 12


def _none_if_nan(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


@dataclass(frozen=True)
class Leaderboard:
    """A leaderboard: its JSON form plus the objects it was computed from.

    Attributes
    ----------
    data : dict
        The JSON form (what ``--format json`` writes); every renderer reads only this.
    report : kpass.Report
        The host report the cells come from (one row per model, task and metric).
    ranks : dict of str to RankIntervals
        Rank intervals of the rank bootstrap alone (:func:`kpass.metrics.rank_intervals`) per column
        key. The ranks in ``data`` of the sort column are these widened to overlap wherever the
        paired comparison shown holds 0 (:func:`kpass.metrics.reconcile_rank_intervals`).
    """

    data: dict[str, Any]
    report: Any
    ranks: dict[str, RankIntervals]

    def as_dict(self) -> dict[str, Any]:
        """A deep copy of the JSON form."""
        return json.loads(json.dumps(self.data, allow_nan=False))


def _cell_of(row: Any) -> dict[str, Any]:
    cell = {"estimate": _none_if_nan(row.estimate), "low": _none_if_nan(row.low),
            "high": _none_if_nan(row.high), "standard_error": _none_if_nan(row.standard_error),
            "n_problems": int(row.n_problems), "n_samples": int(row.n_samples),
            "n_clusters": row.n_clusters, "method": row.method, "n_excluded": int(row.n_excluded),
            "note": row.note}
    if row.judge is not None:  # the task metric that judged the samples (lm-eval output)
        cell["judge"] = row.judge
    return cell


#: Pairs compared per call of paired_difference (its 2-D form: one resampling for all of them).
_PAIRS_PER_CALL = 512


def _pair_note(result: Any) -> str:
    notes = []
    if result.standard_error == 0:
        notes.append("every per-problem difference is identical: the interval has width 0 and says "
                     "nothing about uncertainty")
    degenerate = result.details.get("degenerate") if result.details else None
    if degenerate and result.standard_error != 0:
        notes.append(f"degenerate interval ({degenerate})")
    if not math.isfinite(result.correlation) and result.standard_error != 0:
        notes.append("one model's per-problem values are constant: correlation undefined")
    if result.details and result.details.get("rests_on_tiny_differences"):
        notes.append(f"{result.details['tiny_difference_share']:.1%} of the difference comes from per-problem "
                     f"differences below 0.05: {TinyDifferencesWarning.CAVEAT}; treat it as rough")
    if result.details and result.details.get("rests_on_few_differences"):
        notes.append(f"the interval rests on the one problem of {result.n_problems} where the two models differ: "
                     f"{FewDifferencesWarning.CAVEAT}; treat it as rough")
    return "; ".join(notes)


def _compare_pairs(pairs: Sequence[tuple[str, str]], present: Sequence[str], matrix: NDArray[np.float64],
                   clusters: Any, *, column: str, method: str | None, confidence_level: float,
                   n_resamples: int | None, rng: int | np.random.Generator | None) -> tuple[list[dict[str, Any]], list[Note]]:
    """Paired differences ``a - b`` of the given pairs, Holm-adjusted over the whole family.

    Calls :func:`kpass.metrics.paired_difference` on blocks of pairs at once (its 2-D form, one
    column per pair): the same result as one call per pair, much faster for many pairs.
    """
    position = {model: i for i, model in enumerate(present)}
    # the options of kpass compare, built by the same function
    options = interval_options(method=method, confidence_level=confidence_level, rng=rng, n_resamples=n_resamples,
                               paired=True, clustered=clusters is not None)
    options["clusters"] = clusters
    comparisons = []
    other_warnings: list[Note] = []
    for start in range(0, len(pairs), _PAIRS_PER_CALL):
        block = pairs[start:start + _PAIRS_PER_CALL]
        a = matrix[[position[model_a] for model_a, _ in block]].T
        b = matrix[[position[model_b] for _, model_b in block]].T
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results = paired_difference_columns(a, b, **options)
        # the per-pair caveats (a degenerate interval, tiny or few differences) are each pair's note
        # (_pair_note); the 2-D call's warnings name its block's columns, which mean nothing here
        per_pair = (DegenerateIntervalWarning, TinyDifferencesWarning, FewDifferencesWarning)
        other_warnings += [warning_note(w, (f"{column} comparisons",)) for w in caught
                           if not issubclass(w.category, per_pair)]
        for (model_a, model_b), result in zip(block, results):
            comparisons.append({
                "column": column, "model_a": model_a, "model_b": model_b,
                "difference": _none_if_nan(result.estimate), "low": _none_if_nan(result.low),
                "high": _none_if_nan(result.high),
                "standard_error": _none_if_nan(result.standard_error),
                "p_value": _none_if_nan(result.p_value), "p_value_holm": None,
                "correlation": _none_if_nan(result.correlation),
                "estimate_a": _none_if_nan(result.estimate_a),
                "estimate_b": _none_if_nan(result.estimate_b),
                "n_problems": int(result.n_problems), "n_clusters": result.n_clusters,
                "method": result.rule or result.method, "note": _pair_note(result),
            })
    tested = [i for i, c in enumerate(comparisons) if c["p_value"] is not None]
    adjusted = holm_adjust([comparisons[i]["p_value"] for i in tested])
    for i, value in zip(tested, adjusted.tolist()):
        comparisons[i]["p_value_holm"] = value
    return comparisons, list(dict.fromkeys(other_warnings))


def _resolve_sort(sort: str | None, columns: Sequence[Mapping[str, Any]], plugin_manager: Any) -> str:
    keys = [column["key"] for column in columns]
    if sort is None:
        return keys[0]
    if sort in keys:
        return sort
    task, _, spec_text = sort.rpartition("/")
    try:
        names = [spec.name for spec in parse_metric_specs(spec_text, plugin_manager=plugin_manager)]
    except ValueError:
        names = []
    matches = [c["key"] for c in columns if c["metric"] in names and (not task or c["task"] == task)]
    if len(matches) == 1:
        return matches[0]
    raise ValueError(f"--sort {sort!r} names {'several' if matches else 'no'} leaderboard column(s); "
                     f"columns: {', '.join(keys)}.")


def _powers_of_two_up_to(limit: int) -> list[int]:
    ks = [2 ** i for i in range(int(math.log2(limit)) + 1)] if limit >= 1 else []
    if ks and ks[-1] != limit:
        ks.append(limit)
    return ks


def _pass_at_k_curves(table: Any, models: Sequence[str], tasks: Sequence[str], options: Mapping[str, Any],
                      plugin_manager: Any) -> tuple[dict[str, Any], list[Note]]:
    """pass@k against k per model: k = 1, 2, 4, ... up to the fewest samples of the model's problems,
    so that every point of a curve averages over the same problems."""
    index = table.problem_index
    groups = index.model_codes * len(tasks) + index.task_codes
    fewest = np.full(len(models) * len(tasks), np.iinfo(np.int64).max)
    np.minimum.at(fewest, groups, index.n_samples)
    present = fewest < np.iinfo(np.int64).max
    if not present.any() or int(fewest[present].max()) < 2:
        return {}, []
    ks = _powers_of_two_up_to(int(fewest[present].max()))
    report = compute_report(table, [f"pass@{k}" for k in ks], by=("model", "task"),
                            plugin_manager=plugin_manager, selection_bias=False, **options)
    curves: dict[str, Any] = {}
    for row in report.rows:
        if row.task not in tasks:  # a group row (lm-eval groups): curves are drawn per task
            continue
        group = models.index(row.model) * len(tasks) + tasks.index(row.task)
        if row.n_excluded or row.estimate is None or int(row.metric.split("@")[1]) > fewest[group]:
            continue
        key = "pass@k" if len(tasks) == 1 else f"{row.task}: pass@k"
        curves.setdefault(key, {}).setdefault(row.model, []).append(
            {"k": int(row.metric.split("@")[1]), "estimate": _none_if_nan(row.estimate),
             "low": _none_if_nan(row.low), "high": _none_if_nan(row.high), "n_problems": row.n_problems})
    notes = []
    for key, per_model in curves.items():
        short = sorted(model for model, points in per_model.items() if len(points) < 2)
        if short:
            notes.append(Note("curves", tuple(f"{model} / {key}" for model in short),
                              "curve drawn at k = 1 only (a problem has a single sample)."))
    return curves, notes


def _nullable_column(table: Any, name: str) -> NDArray[np.float64] | None:
    if not table.has_column(name):
        return None
    raw = np.asarray(table.column(name))
    return np.where(raw < 0, np.nan, raw.astype(np.float64))


def _auto_budgets(output_tokens, answer_token, finished) -> list[int]:
    """Powers of two between the shortest answer and the largest budget decidable from the run."""
    positions = []
    for values in (answer_token, output_tokens):
        if values is not None and np.isfinite(values).any():
            positions.append(values[np.isfinite(values)])
    if not positions:
        return []
    known = np.concatenate(positions)
    top = float(known.max())
    if finished is not None and output_tokens is not None:
        cut = (finished == 0) & np.isfinite(output_tokens)
        if cut.any():
            top = min(top, float(output_tokens[cut].min()))   # beyond this a truncated sample is undecided
    top = int(top)
    if top < 1:
        return []
    low = max(1, int(known[known > 0].min()) if (known > 0).any() else 1)
    grid = [2 ** i for i in range(max(0, math.ceil(math.log2(low))), int(math.log2(top)) + 1)]
    grid = grid[-(_MAX_AUTO_BUDGETS - 1):]
    if not grid or grid[-1] != top:
        grid.append(top)
    return grid


def _budget_curves(table: Any, models: Sequence[str], tasks: Sequence[str], cluster_map: Any,
                   budgets: Sequence[int] | None, options: Mapping[str, Any]) -> tuple[dict[str, Any], list[Note]]:
    """fin@1(B) and pass@1(B) per model, from the token-budget core (kpass.metrics.budget_curve)."""
    output_tokens = _nullable_column(table, "output_tokens")
    answer_token = _nullable_column(table, "answer_token")
    if output_tokens is None and answer_token is None:
        return {}, []
    finished = _nullable_column(table, "finished")
    correct = np.asarray(table.column("correct"))
    index = table.problem_index
    ids = np.asarray(table.categories("problem_id"), dtype=str)
    curves: dict[str, Any] = {}
    notes = []
    for task_code, task in enumerate(tasks):
        for model_code, model in enumerate(models):
            problems = np.flatnonzero((index.model_codes == model_code) & (index.task_codes == task_code))
            if problems.size < 2:
                continue
            rows, offsets = index.rows_of(problems)
            columns = {name: values[rows] for name, values in
                       (("finished", finished), ("output_tokens", output_tokens),
                        ("answer_token", answer_token)) if values is not None}
            grid = list(budgets) if budgets else _auto_budgets(
                columns.get("output_tokens"), columns.get("answer_token"), columns.get("finished"))
            label = f"{model}" + (f" / {task}" if len(tasks) > 1 else "")
            if not grid:
                notes.append(Note("budget", (label,), "no budget curve (no token positions recorded)."))
                continue
            try:
                counts = budget_counts(np.repeat(ids[index.problem_codes[problems]], np.diff(offsets)),
                                       correct[rows], grid, **columns)
                clusters = _clusters_for(cluster_map, task, np.asarray(counts.problem_ids, dtype=str))
                with warnings.catch_warnings(record=True):
                    warnings.simplefilter("always")
                    points = budget_curve(counts, k=1, clusters=clusters, **options)
            except ValueError as error:
                notes.append(Note("budget", (label,), f"no budget curve ({error})."))
                continue
            for name, attribute in (("pass@1", "pass_at_k"), ("fin@1", "fin_at_k")):
                key = name if len(tasks) == 1 else f"{task}: {name}"
                curves.setdefault(key, {})[model] = [
                    {"budget": None if p.budget is None else int(p.budget), "estimate": _none_if_nan(getattr(p, attribute).estimate),
                     "low": _none_if_nan(getattr(p, attribute).low),
                     "high": _none_if_nan(getattr(p, attribute).high), "n_problems": int(p.n_problems)}
                    for p in points]
    return curves, notes


@dataclass(frozen=True)
class _Resampling:
    """The interval options every bootstrap of one leaderboard shares."""

    method: str | None
    confidence_level: float
    n_resamples: int
    rng: int | np.random.Generator


@dataclass(frozen=True)
class _ColumnData:
    """One column's models, per-problem matrix and clusters, as its ranks and comparisons use them."""

    present: list[str]
    matrix: NDArray[np.float64]
    clusters: Any


def _check_arguments(table: Any, pairs: str, curves: bool, budget_curves: bool) -> None:
    """Refuse a table that is not one, budget curves the table cannot give and unknown ``pairs``."""
    if not isinstance(table, (SampleTable, ProblemStatistics)):
        raise TypeError(f"`table` must be a kpass.SampleTable or ProblemStatistics; got {type(table).__name__}.")
    if (curves and budget_curves and isinstance(table, ProblemStatistics)
            and (table.has_column("output_tokens") or table.has_column("answer_token"))):
        raise UsageError(f"the leaderboard's budget curves need every sample's token positions, which the "
                         f"{table.engine} engine reduces away; add --no-budget-curves (Python: budget_curves=False) or use --engine numpy")
    if pairs not in PAIRS:
        raise ValueError(f"`pairs` must be one of {PAIRS}; got {pairs!r}.")


def _leaderboard_columns(table: Any, report: Any, tasks: Sequence[str]) -> tuple[list[dict[str, Any]], dict[str, Any], bool]:
    """The columns (task and metric) of the board, the lm-eval task groups' clusters and whether it has several tasks."""
    from kpass.reports.task_groups import task_group_clusters

    group_clusters = task_group_clusters(table) if isinstance(table, SampleTable) else {}  # lm-eval groups
    column_tasks = [*tasks, *(name for name in group_clusters if any(row.task == name for row in report.rows))]
    multi_task = len(column_tasks) > 1
    columns = [{"key": f"{task}/{spec.name}" if multi_task else spec.name, "task": task,
                "metric": spec.name,
                "higher_is_better": bool(getattr(spec.implementation, "higher_is_better", True))}
               for task in column_tasks for spec in report.metrics]
    return columns, group_clusters, multi_task


def _rank_column(column: dict[str, Any], report: Any, models: Sequence[str], cluster_source: Any,
                 resampling: _Resampling) -> tuple[RankIntervals | None, _ColumnData | None, list[Note]]:
    """Rank intervals of one column over the problems every model has (adds its rank_* counts to ``column``)."""
    notes = []
    present, common, matrix, dropped = _column_matrix(report, models, column["task"], column["metric"])
    column.update(rank_problems=int(common.size), rank_models=len(present),
                  rank_dropped_problems=int(dropped.size))
    if dropped.size:
        shown = ", ".join(dropped[:5].tolist()) + (", ..." if dropped.size > 5 else "")
        notes.append(Note("ranks", (column["key"],), f"rank intervals and comparisons use the {common.size} "
                          f"problems every model has; {dropped.size} problem(s) that some model lacks are left "
                          f"out ({shown})."))
    if not present:
        return None, None, notes
    clusters = _clusters_for(cluster_source, column["task"], common)
    if common.size < 2:
        notes.append(Note("ranks", (column["key"],), "no rank intervals (fewer than 2 problems shared by the models)."))
        return None, None, notes
    if clusters is not None and np.unique(clusters).size < 2:
        notes.append(Note("ranks", (column["key"],), "no rank intervals (the shared problems are in one cluster)."))
        return None, None, notes
    result = rank_intervals(
        matrix, models=present, clusters=clusters, confidence_level=resampling.confidence_level,
        n_resamples=resampling.n_resamples or DEFAULT_N_RESAMPLES, rng=resampling.rng,
        higher_is_better=column["higher_is_better"])
    return result, _ColumnData(present, matrix, clusters), notes


def _rank_columns(columns: Sequence[dict[str, Any]], report: Any, models: Sequence[str], group_clusters: Any,
                  cluster_map: Any, resampling: _Resampling
                  ) -> tuple[dict[str, RankIntervals], dict[str, _ColumnData], list[Note]]:
    """Rank intervals and per-problem data of every column that has them, with the notes on the others."""
    ranks: dict[str, RankIntervals] = {}
    matrices: dict[str, _ColumnData] = {}
    notes: list[Note] = []
    for column in columns:
        cluster_source = group_clusters if column["task"] in group_clusters else cluster_map
        result, data, column_notes = _rank_column(column, report, models, cluster_source, resampling)
        notes += column_notes
        if result is not None and data is not None:
            ranks[column["key"]] = result
            matrices[column["key"]] = data
    return ranks, matrices, notes


def _selection_bias_of(columns: Sequence[Mapping[str, Any]], matrices: Mapping[str, _ColumnData],
                       selected_on_this_set: Sequence[str], models: Sequence[str], rows: Mapping[Any, Any],
                       rng: Any) -> tuple[list[Any], list[Note]]:
    """The expected selection bias of every ranked column (:func:`kpass.reports.selection.selection_bias`)."""
    from kpass.reports.selection import check_selected, selection_bias

    return selection_bias(
        [(key, column["task"], column["metric"], data.present, data.matrix, data.clusters)
         for column in columns for key in [column["key"]] if key in matrices
         for data in [matrices[key]]],
        selected=check_selected(selected_on_this_set, models),
        estimates={key: row.estimate for key, row in rows.items() if row.estimate is not None},
        rng=rng)


def _leaderboard_order(models: Sequence[str], rows: Mapping[Any, Any], sort_column: Mapping[str, Any]) -> list[str]:
    """The models best first in the sort column, those without a value last, ties by name."""
    def order_key(model: str):
        row = rows.get((model, sort_column["task"], sort_column["metric"]))
        if row is None or row.estimate is None:
            return (1, 0.0, model)
        return (0, -row.estimate if sort_column["higher_is_better"] else row.estimate, model)

    return sorted(models, key=order_key)


def _pairs_to_compare(in_order: Sequence[str], present: Sequence[str], baseline: str | None, pairs: str,
                      sort_key: str) -> list[tuple[str, str]]:
    """The comparison family: every model against ``baseline``, neighbours or all pairs."""
    if baseline is not None:
        if baseline not in present:
            raise ValueError(f"baseline model {baseline!r} has no values in column {sort_key!r}.")
        return [(m, baseline) for m in in_order if m != baseline]
    if pairs == "adjacent":
        return list(zip(in_order[:-1], in_order[1:]))
    return [(a, b) for i, a in enumerate(in_order) for b in in_order[i + 1:]]


def _reconciled_ranks(result: RankIntervals, comparisons: Sequence[Mapping[str, Any]],
                      sort_key: str) -> tuple[RankIntervals, list[Note]]:
    """The sort column's rank intervals widened to overlap where the paired interval shown holds 0."""
    # ranks must not order two models that the paired comparison shown cannot tell apart
    not_distinguished = [(c["model_a"], c["model_b"]) for c in comparisons
                         if c["low"] is not None and c["high"] is not None and c["low"] <= 0.0 <= c["high"]]
    reconciled, widened = reconcile_rank_intervals(result, not_distinguished)
    notes = []
    if widened:
        shown = ", ".join(f"{a} / {b}" for a, b in widened[:10]) + (", ..." if len(widened) > 10 else "")
        notes.append(Note("ranks", (sort_key,), f"rank intervals widened to overlap where the paired "
                          f"interval holds 0 ({len(widened)} pair(s): {shown}); the rank bootstrap alone had "
                          "ordered them."))
    return reconciled, notes


def _sort_column_comparisons(sort_key: str, ordered: Sequence[str], matrices: Mapping[str, _ColumnData],
                             ranks: Mapping[str, RankIntervals], baseline: str | None, pairs: str,
                             resampling: _Resampling
                             ) -> tuple[list[dict[str, Any]], dict[str, RankIntervals], list[Note]]:
    """The sort column's paired comparisons and the rank intervals shown (the sort column's reconciled)."""
    comparisons: list[dict[str, Any]] = []
    shown_ranks = dict(ranks)  # the bootstrap's rank intervals, the sort column's reconciled below
    notes: list[Note] = []
    if sort_key in matrices:
        data = matrices[sort_key]
        in_order = [m for m in ordered if m in data.present]
        pair_list = _pairs_to_compare(in_order, data.present, baseline, pairs, sort_key)
        comparisons, comparison_notes = _compare_pairs(
            pair_list, data.present, data.matrix, data.clusters, column=sort_key, method=resampling.method,
            confidence_level=resampling.confidence_level, n_resamples=resampling.n_resamples, rng=resampling.rng)
        notes += comparison_notes
        if sort_key in ranks:
            shown_ranks[sort_key], reconcile_notes = _reconciled_ranks(ranks[sort_key], comparisons, sort_key)
            notes += reconcile_notes
    return comparisons, shown_ranks, notes


def _rank_cell(result: RankIntervals | None, model: str) -> dict[str, float] | None:
    """A model's rank, rank interval and probability of being first in one column (None without one)."""
    if result is None or model not in result.models:
        return None
    i = result.models.index(model)
    return {"rank": int(result.rank[i]), "low": int(result.low[i]), "high": int(result.high[i]),
            "probability_first": float(result.probability_first[i]), "of": len(result.models)}


def _model_entries(table: Any, models: Sequence[str], ordered: Sequence[str], columns: Sequence[Mapping[str, Any]],
                   rows: Mapping[Any, Any], shown_ranks: Mapping[str, RankIntervals]
                   ) -> tuple[list[dict[str, Any]], list[Note]]:
    """One entry per model in leaderboard order: its counts, cells and ranks, with the cells' notes."""
    index = table.problem_index
    problems_per_model = np.bincount(index.model_codes, minlength=len(models))
    samples_per_model = np.bincount(index.model_codes, weights=index.n_samples, minlength=len(models))
    entries: list[dict[str, Any]] = []
    notes: list[Note] = []
    for model in ordered:
        code = models.index(model)
        metrics_of_model: dict[str, Any] = {}
        ranks_of_model: dict[str, dict[str, float] | None] = {}
        for column in columns:
            row = rows.get((model, column["task"], column["metric"]))
            metrics_of_model[column["key"]] = None if row is None else _cell_of(row)
            if row is not None and row.note:
                notes.append(Note("metric", (f"{model} / {column['key']}",), f"{row.note}."))
            ranks_of_model[column["key"]] = _rank_cell(shown_ranks.get(column["key"]), model)
        entries.append({"model": model, "n_problems": int(problems_per_model[code]),
                        "n_samples": int(samples_per_model[code]), "metrics": metrics_of_model,
                        "ranks": ranks_of_model})
    return entries, notes


def _note_judges(columns: Sequence[dict[str, Any]], entries: Sequence[Mapping[str, Any]]) -> list[Note]:
    """Name each column's judges (when the input names them); a note where the models' judges differ."""
    notes = []
    for column in columns:
        judges = sorted({name for entry in entries for cell in [entry["metrics"][column["key"]]]
                         if cell is not None and "judge" in cell for name in cell["judge"].split(", ")})
        if judges:
            column["judge"] = ", ".join(judges)
        cell_judges = {cell.get("judge") for entry in entries for cell in [entry["metrics"][column["key"]]] if cell}
        if len(cell_judges) > 1:
            named = ", ".join(sorted(judge or "none named" for judge in cell_judges))
            notes.append(Note("ranks", (column["key"],), f"the models' samples were judged by different metrics "
                              f"({named}): their ranks and comparisons set one scoring against another."))
    return notes


def _exclusion_records(report: Any, multi_task: bool) -> list[dict[str, Any]]:
    """The report's exclusions as JSON records, each naming its leaderboard column."""
    exclusions = []
    for exclusion in report.exclusions:
        key = f"{exclusion.task}/{exclusion.metric}" if multi_task else exclusion.metric
        exclusions.append({"model": exclusion.model, "task": exclusion.task, "column": key,
                           "metric": exclusion.metric, "n_problems": len(exclusion.problem_ids),
                           "problem_ids": list(exclusion.problem_ids[:20]), "reason": exclusion.reason})
    return exclusions


def _all_curves(table: Any, models: Sequence[str], tasks: Sequence[str], options: Mapping[str, Any],
                plugin_manager: Any, cluster_map: Any, budgets: Sequence[int] | None, budget_curves: bool,
                resampling: _Resampling) -> tuple[dict[str, Any], dict[str, Any], list[Note]]:
    """The pass@k curves and, with ``budget_curves``, the fin@1 and pass@1 curves against the token budget."""
    budget_data: dict[str, Any] = {}
    curve_data, curve_notes = _pass_at_k_curves(table, models, tasks, options, plugin_manager)
    budget_options = interval_options(method=resampling.method, confidence_level=resampling.confidence_level,
                                      rng=resampling.rng, n_resamples=resampling.n_resamples,
                                      clustered=cluster_map is not None)
    if budget_curves:
        budget_data, budget_notes = _budget_curves(table, models, tasks, cluster_map, budgets, budget_options)
        curve_notes += budget_notes
    return curve_data, budget_data, curve_notes


@replaying_violations
def build_leaderboard(table: Any, metrics: str | Sequence[str] | Sequence[Any] = "pass@1", *,
                      sort: str | None = None, baseline: str | None = None, pairs: str = "all",
                      cluster_by: str | None = None, method: str | None = None,
                      confidence_level: float = 0.95, rng: int | np.random.Generator | None = None,
                      n_resamples: int = DEFAULT_N_RESAMPLES, curves: bool = True,
                      budgets: Sequence[int] | None = None, plugin_manager: Any = None,
                      selected_on_this_set: Sequence[str] = (), budget_curves: bool = True) -> Leaderboard:
    """Build a leaderboard from a sample table holding several models.

    Every cell (estimate, interval, standard error, problem counts) comes from
    :func:`kpass.compute_report` grouped by model and task, so it equals ``kpass report``. Each
    column (a metric, or a task and metric when the table has several tasks) then gets

    * rank intervals (:func:`rank_intervals`) from the paired (cluster) bootstrap over the
      problems every model of the column has;
    * for the sort column, paired differences (:func:`kpass.metrics.paired_difference`) of all
      pairs, of neighbours in the sorted order (``pairs="adjacent"``), or of every model against
      ``baseline``, with Holm-adjusted p-values over that family (:func:`holm_adjust`).

    Parameters
    ----------
    table : kpass.SampleTable or ProblemStatistics
        Samples of every model (see :func:`kpass.read_samples`), or an engine's per-problem
        statistics of them (:func:`kpass.host.lookups.load_samples`): every column, rank interval,
        comparison and pass@k curve is a function of per-problem values. The budget curves need
        every sample's token positions (their automatic grid and their per-sample checks), so on
        statistics whose input has token columns they need ``budget_curves=False`` (or
        ``curves=False``).
    metrics : str or sequence, default: "pass@1"
        Metric specs (see :func:`kpass.parse_metric_specs`).
    sort : str, optional
        Column to sort by and to rank and compare in; a column key or a metric spec (default:
        the first column).
    baseline : str, optional
        Compare every model with this one instead of all pairs.
    pairs : {"all", "adjacent"}, default: "all"
        Without a baseline: every pair (M(M-1)/2 comparisons) or neighbours in the sorted order.
    cluster_by : str, optional
        Problem field whose clusters are resampled whole (intervals, ranks and comparisons).
    method : str, optional
        Interval method of :func:`kpass.mean_ci` (default: the core's).
    confidence_level : float, default: 0.95
        Of the intervals, the rank intervals and the comparison intervals.
    rng : int, numpy.random.Generator or None, default: None
        Seed or generator of every bootstrap (SciPy SPEC 7; ``kpass leaderboard --seed``, 0 by
        default). ``None`` draws fresh entropy once for the whole board. The output records the
        seed as ``"seed"``.
    n_resamples : int, default: 10_000
        Bootstrap resamples of the intervals, ranks, comparisons and curves
        (:data:`kpass.reports.report.DEFAULT_N_RESAMPLES`, as ``kpass report``).
    curves : bool, default: True
        Also compute pass@k against k and, when the table has token counts, fin@1 and pass@1
        against the token budget (for the HTML page and the JSON).
    budgets : sequence of int, optional
        Budgets of the budget curves (default: powers of two up to the largest budget each
        model's run decides).
    budget_curves : bool, default: True
        With ``curves``, also the fin@1 and pass@1 curves against the token budget.
    plugin_manager : pluggy.PluginManager, optional
        Host whose metric families are used.
    selected_on_this_set : sequence of str, default: ()
        Models chosen on these problems: their scores are shown with the expected selection
        bias removed (``selection_bias`` in the JSON; every column also gets the expected
        inflation of its best model, :func:`kpass.reports.selection.selection_bias`).

    Returns
    -------
    Leaderboard

    Raises
    ------
    ValueError
        Unknown ``baseline``, ``sort`` or ``pairs``; fewer than two problems shared by the models.
    kpass.DataError
        What :func:`kpass.compute_report` raises, and clusters that differ between models.
    kpass.UsageError
        Budget curves asked of an engine's statistics whose input has token columns.
    """
    _check_arguments(table, pairs, curves, budget_curves)
    confidence_level = _check_confidence_level(confidence_level)
    models = table.categories("model")
    tasks = table.categories("task")
    if baseline is not None and baseline not in models:
        raise ValueError(f"baseline model {baseline!r} is not in the table; models: {', '.join(models)}.")
    rng = seed_for_call(rng)
    resampling = _Resampling(method=method, confidence_level=confidence_level, n_resamples=n_resamples, rng=rng)
    options = {"cluster_by": cluster_by, "method": method, "confidence_level": confidence_level,
               "rng": rng, "n_resamples": n_resamples}
    report = compute_report(table, metrics, by=("model", "task"), plugin_manager=plugin_manager,
                            selection_bias=False, **options)  # the leaderboard's own, over its columns
    columns, group_clusters, multi_task = _leaderboard_columns(table, report, tasks)
    sort_key = _resolve_sort(sort, columns, plugin_manager)
    cluster_map = _problem_clusters(table, cluster_by) if cluster_by is not None else None
    rows = {(row.model, row.task, row.metric): row for row in report.rows}
    notes = list(report.notes)

    ranks, matrices, rank_notes = _rank_columns(columns, report, models, group_clusters, cluster_map, resampling)
    notes += rank_notes
    selection_entries, selection_notes = _selection_bias_of(columns, matrices, selected_on_this_set, models, rows, rng)
    notes += selection_notes
    ordered = _leaderboard_order(models, rows, next(c for c in columns if c["key"] == sort_key))
    comparisons, shown_ranks, comparison_notes = _sort_column_comparisons(
        sort_key, ordered, matrices, ranks, baseline, pairs, resampling)
    notes += comparison_notes
    entries, entry_notes = _model_entries(table, models, ordered, columns, rows, shown_ranks)
    notes += entry_notes
    notes += _note_judges(columns, entries)
    exclusions = _exclusion_records(report, multi_task)

    curve_data: dict[str, Any] = {}
    budget_data: dict[str, Any] = {}
    if curves:
        curve_data, budget_data, curve_notes = _all_curves(table, models, tasks, options, plugin_manager, cluster_map,
                                                           budgets, budget_curves, resampling)
        notes += curve_notes

    data = {
        "kind": "kpass.leaderboard",
        "kpass_version": __version__,
        "confidence_level": confidence_level,
        "n_resamples": int(n_resamples or DEFAULT_N_RESAMPLES),
        "seed": rng if isinstance(rng, (int, type(None))) else str(rng),
        "method": method,
        "cluster_by": cluster_by,
        "sort": sort_key,
        "baseline": baseline,
        "tie_rule": ("rank = 1 + number of models with a strictly larger resampled mean; models with "
                     "identical per-problem values always tie"),
        "columns": columns,
        "models": entries,
        "comparisons": comparisons,
        "comparison_family": {"column": sort_key, "baseline": baseline,
                              "pairs": "baseline" if baseline else pairs,
                              "adjustment": "holm", "size": sum(c["p_value"] is not None
                                                               for c in comparisons)},
        "selection_bias": [entry.as_dict() for entry in selection_entries],
        "curves": curve_data,
        "budget_curves": budget_data,
        "exclusions": exclusions,
        "notes": [note.as_dict() for note in as_notes(notes)],
    }
    return Leaderboard(data=data, report=report, ranks=ranks)
