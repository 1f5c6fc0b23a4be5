"""Inputs of the power formula from a pilot: problems needed for an effect, or the detectable effect.

The formulas are the core's (:func:`kpass.required_problems`, :func:`kpass.minimum_detectable_effect`,
Miller 2024); this module gathers their inputs, either from explicit variances or from a
pilot sample table with two models on the same problems (:func:`power_inputs_from_table`, which
calls :func:`kpass.power_inputs_from_pilot` on per-problem counts of pass@1).
"""

from __future__ import annotations

import warnings

import numpy as np

from kpass import metrics as core

from kpass.errors import DataError
from kpass.notes import Note, as_notes, warning_note
from kpass.data.table import SampleTable
from kpass.reports.report import replaying_violations

__all__ = ["power_inputs_from_table"]


@replaying_violations
def power_inputs_from_table(table: SampleTable, *, model: str, baseline: str, task: str | None = None):
    """Pilot inputs of the power formula for ``model`` (A) against ``baseline`` (B).

    Problems are matched by ``(task, problem_id)``; problems present for one model only are
    left out and counted in the returned notes. Without ``task``, the problems of every task are
    pooled into one pilot; when there are several tasks a note says so (their variances may
    differ: give ``task`` to plan for one).

    Returns
    -------
    tuple of (PowerInputs, list of str)
        The core's :class:`~kpass.PowerInputs` and notes on what was left out.

    Raises
    ------
    DataError
        A model or task not in the table, no common problems, or a problem with fewer than two
        samples (the within-problem variance needs two).
    """
    models = table.categories("model")
    for name in (model, baseline):
        if name not in models:
            raise DataError(f"model {name!r} is not in the pilot; models: {', '.join(models)}",
                            **table.error_location(), field="model")
    index = table.problem_index
    keep = np.ones(index.n_problems, dtype=bool)
    if task is not None:
        tasks = table.categories("task")
        if task not in tasks:
            raise DataError(f"task {task!r} is not in the pilot; tasks: {', '.join(tasks)}",
                            **table.error_location(), field="task")
        keep &= index.task_codes == tasks.index(task)
    notes: list[Note] = []
    pilot_models = np.isin(index.model_codes, [models.index(model), models.index(baseline)])
    pooled = table.category_values("task")[np.unique(index.task_codes[keep & pilot_models])]
    if task is None and pooled.size > 1:
        notes.append(Note("power", tuple(pooled.tolist()), f"the pilot pools the problems of {pooled.size} tasks "
                          "as one benchmark; their variances may differ, so to plan a benchmark of one task give "
                          "--task (Python: task=...)"))
    n_ids = max(len(table.categories("problem_id")), 1)
    key = index.task_codes * n_ids + index.problem_codes
    a = np.flatnonzero(keep & (index.model_codes == models.index(model)))
    b = np.flatnonzero(keep & (index.model_codes == models.index(baseline)))
    common, at_a, at_b = np.intersect1d(key[a], key[b], return_indices=True)
    if len(a) - len(common) or len(b) - len(common):
        notes.append(Note("unmatched", (f"{model} vs {baseline}",), f"left out: {len(a) - len(common)} problems "
                          f"only under {model!r}, {len(b) - len(common)} only under {baseline!r}"))
    if common.size < 2:
        raise DataError(f"the pilot needs at least 2 problems shared by {model!r} and {baseline!r}; found "
                        f"{common.size}", **table.error_location(), field="problem_id")
    a, b = a[at_a], b[at_b]
    for name, problems in ((model, a), (baseline, b)):
        few = index.n_samples[problems] < 2
        if few.any():
            row = int(index.order[index.starts[problems[few][0]]])
            source, line = table.location(row)
            raise DataError(f"a pilot needs at least 2 samples per problem (the within-problem variance); model "
                            f"{name!r} has {int(few.sum())} problem(s) with 1 sample", source=source, line=line,
                            field="sample_index")
    with warnings.catch_warnings(record=True) as caught:  # reported as notes, never lost
        warnings.simplefilter("always")
        try:
            inputs = core.power_inputs_from_pilot(
                n_samples_a=index.n_samples[a], n_correct_a=index.n_correct[a],
                n_samples_b=index.n_samples[b], n_correct_b=index.n_correct[b])
        except ValueError as exc:  # the pilot's counts cannot give the inputs
            raise DataError(f"pilot {model!r} vs {baseline!r}: {exc}", **table.error_location()) from exc
    notes.extend(warning_note(w, (f"{model} vs {baseline}",)) for w in caught)
    return inputs, [*as_notes(table.notes), *notes]
