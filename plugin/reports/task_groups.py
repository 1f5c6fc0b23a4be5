"""Task groups: a row per group of tasks, its subtasks' problems pooled, each subtask one cluster.

lm-eval's ``--tasks <group>`` (a group YAML such as ``minerva_math``, or a local one) reports a row
per subtask and one for the group: the mean over every document of every subtask (its
``aggregate_metric_list`` with ``weight_by_size: true``). kpass gives the same row, with the
problems of the subtasks pooled and an interval *clustered by subtask* (the subtasks are the
units the group was built from: problems of one subtask share a source, a format and a
difficulty, so they are not independent draws from the group). With few subtasks the interval
comes from kpass's few-cluster rule and its note (:func:`kpass.metrics.few_clusters_note`).

The groups come from the data: :attr:`kpass.SampleTable.task_groups` (group name -> its subtasks),
set by the lm-eval reader from the results file and by ``kpass-lm-eval`` from the live run, so
both paths make the group rows here. Rules:

* each document once: a subtask scored through several filter pipelines (``strict-match``,
  ``flexible-extract``) joins the group through its first pipeline, as rows pooled over tasks do
  (:func:`kpass.reports.sample_checks.pooled_pipeline_rows`);
* nested groups (a group of groups) pool their leaf subtasks, each leaf once, each leaf one
  cluster; the subgroups get rows of their own (:func:`leaf_task_groups`);
* a group row per model (``by`` = model, task), only when the report is grouped by task (and by
  nothing but model and task: otherwise a note says that no group row is made);
* subtasks without samples in the table (log-likelihood tasks, skipped by the reader) are named
  in a note; a group none of whose subtasks has samples gets no row.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from kpass.notes import Note
from kpass.reports.sample_checks import PIPELINE_OF_COLUMN

if TYPE_CHECKING:  # pragma: no cover
    from kpass.data.table import SampleTable

__all__ = ["TaskGroupProblems", "group_row_note", "leaf_task_groups", "task_group_clusters", "task_group_problems"]

Group = tuple[tuple[str, str], ...]


def leaf_task_groups(group_map: Mapping[str, Sequence[str]]) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """Every group's leaf subtasks (subgroups expanded), and every nested group's subgroups.

    Parameters
    ----------
    group_map : mapping of str to sequence of str
        Group name -> its children (tasks or groups), as lm-eval records it (``group_subtasks``
        of the results file, ``group_map`` of the live task dict). Entries with no children are
        tasks (lm-eval 0.4.2 to 0.4.8 list every task that way) and are dropped.

    Returns
    -------
    (leaves, subgroups)
        ``leaves[group]``: the leaf subtasks, each once, in the order lm-eval lists them;
        ``subgroups[group]``: the children that are groups themselves (nested groups only). A
        cycle (a group listed under itself) stops at the repeated group.
    """
    groups = {str(name): [str(child) for child in children] for name, children in group_map.items() if children}

    def leaves(name: str, seen: frozenset[str]) -> list[str]:
        if name not in groups or name in seen:
            return [] if name in seen else [name]
        return [leaf for child in groups[name] for leaf in leaves(child, seen | {name})]

    expanded = {group: tuple(dict.fromkeys(leaves(group, frozenset()))) for group in groups}
    nested = {group: tuple(child for child in children if child in groups)
              for group, children in groups.items() if any(child in groups for child in children)}
    return {group: members for group, members in expanded.items() if members}, nested


@dataclasses.dataclass(frozen=True)
class TaskGroupProblems:
    """The problems of one group row.

    Attributes
    ----------
    group : tuple of (field, value)
        The row's group, in the report's ``by`` order (``(("model", m), ("task", name))``).
    name : str
        The task group's name.
    problems : ndarray of int64
        Problems pooled (indices into :attr:`kpass.SampleTable.problem_index`).
    clusters : ndarray of int64
        Each problem's subtask (a table ``task`` code): the cluster of the row's interval.
    members : tuple of str
        The table tasks pooled, in the group's order.
    """

    group: Group
    name: str
    problems: NDArray[np.int64]
    clusters: NDArray[np.int64]
    members: tuple[str, ...]


def group_row_note(name: str, members: Sequence[str]) -> Note:
    """What every report with the row of group ``name`` says about it."""
    return Note("task-groups", (name,), f"problems of {', '.join(members)} pooled, each subtask one cluster (as "
                "lm-eval's own group rows pool them)")


def _primary_tasks(table: "SampleTable") -> dict[str, int]:
    """Subtask name -> the table task code its problems join a group through (its first pipeline)."""
    index = table.problem_index
    tasks = table.category_values("task")
    if not table.has_column(PIPELINE_OF_COLUMN):
        return {str(name): code for code, name in enumerate(tasks.tolist())}
    owner_codes = table.codes(PIPELINE_OF_COLUMN)[index.order[index.starts]].astype(np.int64)
    owner_of_task = np.full(len(tasks), -1, dtype=np.int64)
    owner_of_task[index.task_codes] = owner_codes
    owners = table.category_values(PIPELINE_OF_COLUMN)
    primary: dict[str, int] = {}
    for code, owner in enumerate(owner_of_task.tolist()):  # one entry per task, not per problem
        primary.setdefault(str(tasks[code]) if owner < 0 else str(owners[owner]), code)
    return primary


def task_group_problems(table: "SampleTable", by: Sequence[str]) -> tuple[list[TaskGroupProblems], list[Note]]:
    """The group rows a report grouped by ``by`` adds, and the notes about them.

    Parameters
    ----------
    table : SampleTable
        With :attr:`~kpass.SampleTable.task_groups` (none: no group rows).
    by : sequence of str
        The report's grouping; group rows need ``task`` in it, and no field but ``model``.

    Returns
    -------
    (rows, notes)
        One :class:`TaskGroupProblems` per group and model, in the order the groups are listed;
        notes: one per group row made (:func:`group_row_note`), nested groups, subtasks without
        samples, groups left out and why.
    """
    groups = dict(getattr(table, "task_groups", None) or {})
    if not groups or "task" not in by:
        return [], []
    if set(by) - {"model", "task"}:
        return [], [Note("task-groups", tuple(groups), f"no group rows with --by {','.join(by)} (group rows need "
                         "--by model,task or task)")]
    leaves, nested = leaf_task_groups(groups)
    index = table.problem_index
    task_names = table.category_values("task")
    primary = _primary_tasks(table)
    models = table.category_values("model")
    rows: list[TaskGroupProblems] = []
    notes: list[Note] = []
    for name, subtasks in leaves.items():
        if name in primary:
            notes.append(Note("task-groups", (name,), "a task of the table has this name; no group row"))
            continue
        members = [primary[subtask] for subtask in subtasks if subtask in primary]
        missing = [subtask for subtask in subtasks if subtask not in primary]
        if not members:
            notes.append(Note("task-groups", (name,), f"none of its subtasks ({', '.join(subtasks)}) has samples "
                              "here; no group row"))
            continue
        member_names = tuple(str(task_names[code]) for code in members)
        notes.append(group_row_note(name, member_names))
        if name in nested:
            notes.append(Note("task-groups", (name,), f"a group of groups ({', '.join(nested[name])}); its row pools "
                              "their leaf subtasks, each document once, each leaf subtask one cluster"))
        if missing:
            notes.append(Note("task-groups", (name,), f"subtasks {', '.join(missing)} have no samples here (not "
                              "generation tasks, or not logged) and are not in its row"))
        in_group = np.isin(index.task_codes, np.asarray(members, dtype=np.int64))
        model_codes = np.unique(index.model_codes[in_group]) if "model" in by else np.zeros(1, dtype=np.int64)
        for model in model_codes.tolist():
            chosen = in_group & (index.model_codes == model) if "model" in by else in_group
            problems = np.flatnonzero(chosen).astype(np.int64)
            label = tuple((field, str(models[model]) if field == "model" else name) for field in by)
            rows.append(TaskGroupProblems(label, name, problems, index.task_codes[problems].astype(np.int64),
                                          member_names))
    return rows, notes


def task_group_clusters(table: "SampleTable", by: Sequence[str] = ("model", "task"),
                        ) -> dict[str, tuple[NDArray[np.str_], NDArray[np.str_]]]:
    """Per group row's task: (its sorted problem labels ``task/problem_id``, the subtask of each).

    The shape :func:`kpass.reports.columns._clusters_for` reads, so that rank intervals and paired
    comparisons of a group column resample whole subtasks, as the group row's interval does.
    """
    items, _ = task_group_problems(table, by)
    index = table.problem_index
    tasks = table.category_values("task")
    ids = table.category_values("problem_id")
    out: dict[str, tuple[NDArray[np.str_], NDArray[np.str_]]] = {}
    for name in dict.fromkeys(item.name for item in items):
        problems = np.concatenate([item.problems for item in items if item.name == name])
        labels = (tasks[index.task_codes[problems]] + "/" + ids[index.problem_codes[problems]]).astype(str)
        labels, first = np.unique(labels, return_index=True)
        out[name] = (labels, tasks[index.task_codes[problems[first]]].astype(str))
    return out
