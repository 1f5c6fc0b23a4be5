"""Per-problem counts of two models paired by (task, problem_id), shared by the analyses."""

from __future__ import annotations

import dataclasses

import numpy as np
from numpy.typing import NDArray

from kpass.errors import DataError, UsageError
from kpass.notes import Note
from kpass.data.table import SampleTable

__all__ = ["PairedCounts", "check_models", "paired_counts"]

_SHOWN = 10


@dataclasses.dataclass(frozen=True)
class PairedCounts:
    """Counts of the problems both models answered in one task (rows of ``problem_index``)."""

    task: str
    problem_ids: NDArray[np.object_]
    base_rows: NDArray[np.int64]
    model_rows: NDArray[np.int64]
    n_base: NDArray[np.int64]
    c_base: NDArray[np.int64]
    n_model: NDArray[np.int64]
    c_model: NDArray[np.int64]
    only_base: tuple[str, ...]
    only_model: tuple[str, ...]


def check_models(table: SampleTable, *names: str | None, option: str = "--model") -> None:
    """A :class:`UsageError` naming the models present when one of ``names`` is not."""
    models = table.categories("model")
    for name in names:
        if name is not None and name not in models:
            raise UsageError(f"model {name!r} is not in the input; models: {', '.join(models)}")


def paired_counts(table: SampleTable, base: str, model: str) -> list[PairedCounts]:
    """One :class:`PairedCounts` per task that both models have, over their common problems.

    Problems that only one model has are listed in ``only_base`` / ``only_model`` (and so can
    be named in the notes); a task without a common problem is a :class:`DataError`.
    """
    if base == model:
        raise UsageError(f"--baseline and --model are the same model ({base!r}); compare two models")
    check_models(table, base, model)
    index = table.problem_index
    models = table.categories("model")
    ids = table.category_values("problem_id")
    out = []
    for task_code, task in enumerate(table.categories("task")):
        in_task = index.task_codes == task_code
        base_rows = np.flatnonzero(in_task & (index.model_codes == models.index(base)))
        model_rows = np.flatnonzero(in_task & (index.model_codes == models.index(model)))
        if base_rows.size == 0 and model_rows.size == 0:
            continue
        common, at_base, at_model = np.intersect1d(index.problem_codes[base_rows], index.problem_codes[model_rows],
                                                   return_indices=True)
        only_base = np.setdiff1d(index.problem_codes[base_rows], common)
        only_model = np.setdiff1d(index.problem_codes[model_rows], common)
        if common.size == 0:
            raise DataError(f"task {task!r}: models {base!r} and {model!r} have no problem in common "
                            f"({base_rows.size} and {model_rows.size} problems)", **table.error_location(),
                            field="problem_id")
        b, m = base_rows[at_base], model_rows[at_model]
        out.append(PairedCounts(task, ids[index.problem_codes[b]], b, m, index.n_samples[b], index.n_correct[b],
                                index.n_samples[m], index.n_correct[m], tuple(ids[only_base].tolist()),
                                tuple(ids[only_model].tolist())))
    return out


def unmatched_notes(pairs: PairedCounts, base: str, model: str) -> list[Note]:
    """Notes naming the problems left out because only one model has them."""
    notes = []
    for who, only in ((base, pairs.only_base), (model, pairs.only_model)):
        if only:
            shown = ", ".join(only[:_SHOWN]) + (f", ... and {len(only) - _SHOWN} more" if len(only) > _SHOWN else "")
            notes.append(Note("unmatched", (pairs.task,), f"{len(only)} problem{'s' if len(only) != 1 else ''} only "
                              f"under {who!r} left out (not paired): {shown}"))
    return notes
