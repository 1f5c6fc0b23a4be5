"""Per (task, metric) column of a report: the models with values, the problems they all have and
the model x problem value matrix, with the cluster of each problem; shared by the leaderboard
(rank intervals, comparisons) and the selection-bias estimate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kpass.errors import DataError

__all__ = ["judge_of"]


def judge_of(table: Any, problems: NDArray[np.int64]) -> str | None:
    """The task metric that judged the samples of ``problems`` (indices into the table's problem
    index), from the ``judge`` column readers set (lm-eval: ``exact_match``, ``math_verify``);
    several metrics are joined by ``", "`` in the order of their names. The same on a
    :class:`~kpass.SampleTable` and on an engine's per-problem statistics, which carry each
    problem's first and last judge name (:func:`kpass.data.problems.judge_range`). None when the
    table has no such column, or no problem is given."""
    from kpass.data.problems import judge_range
    from kpass.data.reduction import JUDGE_COLUMN, ProblemStatistics

    if not table.has_column(JUDGE_COLUMN) or len(problems) == 0:
        return None
    ends = table.judges[problems] if isinstance(table, ProblemStatistics) else judge_range(table, problems)
    named = ends[np.not_equal(ends, np.array(None, dtype=object))]
    return ", ".join(np.unique(named.astype(str)).tolist()) or None


def _problem_clusters(table: Any, cluster_by: str) -> dict[str, tuple[NDArray[np.str_], NDArray[np.str_]]]:
    """Per task: (sorted problem ids, their cluster labels); one cluster per problem id across models."""
    index = table.problem_index
    first_rows = index.order[index.starts]
    cluster_codes = np.asarray(table.codes(cluster_by), dtype=np.int64)[first_rows]
    triples = np.unique(np.stack([index.task_codes, index.problem_codes, cluster_codes], axis=1), axis=0)
    pairs, first, counts = np.unique(triples[:, :2], axis=0, return_index=True, return_counts=True)
    task_names = table.categories("task")
    ids = np.asarray(table.categories("problem_id"), dtype=str)
    labels = np.asarray(table.categories(cluster_by), dtype=str)
    if np.any(counts > 1):
        task_code, problem_code = pairs[np.flatnonzero(counts > 1)[0]].tolist()
        raise DataError(f"problem {ids[problem_code]!r} of task {task_names[task_code]!r} has different "
                        f"'{cluster_by}' values under different models; a paired comparison needs one "
                        f"cluster per problem", source=", ".join(table.sources), field=cluster_by)
    out = {}
    for task_code, task in enumerate(task_names):
        chosen = triples[first[pairs[:, 0] == task_code]]
        problem_ids = ids[chosen[:, 1]]
        order = np.argsort(problem_ids, kind="stable")
        out[task] = (problem_ids[order], labels[chosen[order, 2]])
    return out


def _clusters_for(cluster_map: Mapping[str, Any] | None, task: str,
                  problem_ids: NDArray[np.str_]) -> NDArray[np.str_] | None:
    if cluster_map is None:
        return None
    ids, labels = cluster_map[task]
    return labels[np.searchsorted(ids, problem_ids)]


def _column_matrix(report: Any, models: Sequence[str], task: str, metric: str):
    """Models with values, the problems they all have (sorted ids), the (M, N) value matrix, and
    the problems some model lacks."""
    present, labels, values = [], [], []
    for model in models:
        entry = report.per_problem.get(((("model", model), ("task", task)), metric))
        if entry is None or len(entry[0]) == 0:
            continue
        present.append(model)
        labels.append(np.asarray(entry[0], dtype=str))
        values.append(np.asarray(entry[1], dtype=np.float64))
    if not present:
        return [], np.zeros(0, dtype=str), np.zeros((0, 0)), np.zeros(0, dtype=str)
    common = labels[0]
    union = labels[0]
    for other in labels[1:]:
        common = np.intersect1d(common, other)
        union = np.union1d(union, other)
    common = np.unique(common)
    matrix = np.empty((len(present), common.size))
    for row, (ids, vals) in enumerate(zip(labels, values)):
        order = np.argsort(ids, kind="stable")
        matrix[row] = vals[order[np.searchsorted(ids[order], common)]]
    return present, common, matrix, np.setdiff1d(np.unique(union), common)
