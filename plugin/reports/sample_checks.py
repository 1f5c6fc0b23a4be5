"""Checks every report makes on its samples: the seed trap, and pipelines pooled once.

* **The seed trap** (:func:`identical_samples_notes`). K samples of a problem that are K copies of
  one generation (temperature 0; an API that sends one ``seed`` with every repeat to a server that
  honours it, lm-eval's default) make pass@k equal pass@1 and cons@k meaningless, without any
  error. A table whose samples carry their generation text (``metadata["output"]``, or
  ``metadata["completion"]``: the lm-eval and Inspect readers, ``kpass-lm-eval``'s sample table), or a
  digest of it (``metadata["output_digest"]``: kpass's Inspect metrics, which see scores, not
  generations) gets a note for every ``(model, task)`` where most problems with two or more samples
  have all-identical texts (:func:`identical_sample_groups` gives the counts behind each note).
* **Pipelines pooled once** (:func:`pooled_pipeline_rows`). One lm-eval task scored through
  several filter pipelines (``strict-match``, ``flexible-extract``) appears as several tasks over
  the same documents; a row pooled over tasks (``--by model``) must count each document once.
  Rows tagged with :data:`PIPELINE_OF_COLUMN` (the task the pipeline belongs to) keep, in pooled
  rows, only the first pipeline of each such task, and a note names it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import NDArray

from kpass.notes import Note

if TYPE_CHECKING:  # pragma: no cover
    from kpass.data.table import SampleTable

__all__ = ["IDENTICAL_SHARE_THRESHOLD", "PIPELINE_OF_COLUMN", "IdenticalSamples", "identical_sample_groups",
           "identical_samples_notes", "pooled_pipeline_rows"]

#: Share of problems with all-identical samples above which a report warns.
IDENTICAL_SHARE_THRESHOLD = 0.5
#: Extra column naming the task whose filter pipeline scored a row (lm-eval adapters set it).
PIPELINE_OF_COLUMN = "pipeline_of"


class IdenticalSamples(NamedTuple):
    """A ``(model, task)`` where most problems' samples are identical generations (the seed trap)."""

    model: str
    task: str
    n_identical: int  #: problems whose samples all have one text
    n_problems: int  #: problems with two or more samples
    k: int  #: their (median) number of samples


def _output_codes(table: SampleTable) -> NDArray[np.int64] | None:
    """One integer per row naming its generation text (-1: none), or None without texts (also for
    an engine's per-problem statistics, which hold no generation texts)."""
    if not table.has_column("metadata") or not hasattr(table, "raw_column"):
        return None
    texts = [entry.get("output", entry.get("completion", entry.get("output_digest"))) if isinstance(entry, dict)
             else None for entry in table.raw_column("metadata")]
    present = np.fromiter((isinstance(text, str) for text in texts), dtype=bool, count=len(texts))
    if not present.any():
        return None
    codes = np.full(len(texts), -1, dtype=np.int64)
    values = np.empty(int(present.sum()), dtype=object)
    values[:] = [text for text, keep in zip(texts, present.tolist()) if keep]
    _, inverse = np.unique(values, return_inverse=True)
    codes[present] = inverse.ravel()
    return codes


def identical_samples_notes(table: SampleTable) -> list[Note]:
    """A ``seed-trap`` note per ``(model, task)`` where most problems' samples are identical
    generations (:func:`identical_sample_groups`); the counts are in the row label."""
    return [Note("seed-trap", (f"{found.model} / {found.task} ({found.n_identical} of {found.n_problems} problems, "
                               f"{found.k} identical samples)",),
                 "most problems' samples are identical generations (temperature 0, or one seed sent with every repeat "
                 "to a server that honours it?): their k-sample metrics say no more than one sample (pass@k = "
                 "pass@1). Sample with temperature > 0 and a seed per repeat (kpass-lm-eval varies it; Inspect's "
                 "--seed is one seed for every epoch)")
            for found in identical_sample_groups(table)]


def identical_sample_groups(table: SampleTable) -> list[IdenticalSamples]:
    """Every ``(model, task)`` where most problems' samples are identical generations.

    A problem counts when it has at least two samples, every one with a text, all equal; a group is
    returned when more than :data:`IDENTICAL_SHARE_THRESHOLD` of its problems with two or more
    samples count.
    """
    codes = _output_codes(table)
    if codes is None:
        return []
    index = table.problem_index
    multi = index.n_samples >= 2
    if not multi.any():
        return []
    ordered = codes[index.order]
    low = np.minimum.reduceat(ordered, index.starts)
    high = np.maximum.reduceat(ordered, index.starts)
    identical = multi & (low == high) & (low >= 0)
    pair = index.model_codes * max(table.n_categories("task"), 1) + index.task_codes
    keys, group = np.unique(pair, return_inverse=True)
    group = group.ravel()
    eligible = np.bincount(group, weights=multi, minlength=len(keys))
    same = np.bincount(group, weights=identical, minlength=len(keys))
    found = []
    models, tasks = table.category_values("model"), table.category_values("task")
    for g in np.flatnonzero(same > IDENTICAL_SHARE_THRESHOLD * eligible).tolist():
        first = int(np.flatnonzero(group == g)[0])
        k = int(np.median(index.n_samples[(group == g) & multi]))
        found.append(IdenticalSamples(str(models[index.model_codes[first]]), str(tasks[index.task_codes[first]]),
                                      int(same[g]), int(eligible[g]), k))
    return found


def pooled_pipeline_rows(table: SampleTable, by: Sequence[str]) -> tuple[NDArray[np.bool_] | None, list[Note]]:
    """Problems to keep in rows pooled over tasks, so each document counts once, and notes.

    Returns ``(keep, notes)``: ``keep`` is a boolean per problem (:attr:`SampleTable.problem_index`
    order), or None when nothing is left out (``task`` in ``by``, or no row tagged with
    :data:`PIPELINE_OF_COLUMN`, or one pipeline per task).
    """
    if "task" in by or PIPELINE_OF_COLUMN in by or not table.has_column(PIPELINE_OF_COLUMN):
        return None, []
    index = table.problem_index
    first_rows = index.order[index.starts]
    owner = table.codes(PIPELINE_OF_COLUMN)[first_rows].astype(np.int64)
    task = index.task_codes
    tagged = owner >= 0
    if not tagged.any():
        return None, []
    primary = np.full(table.n_categories(PIPELINE_OF_COLUMN), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(primary, owner[tagged], task[tagged])  # task codes follow first appearance: the first pipeline
    keep = ~tagged | (task == primary[np.maximum(owner, 0)])
    if keep.all():
        return None, []
    notes = []
    tasks, owners = table.category_values("task"), table.category_values(PIPELINE_OF_COLUMN)
    for code in np.unique(owner[~keep]).tolist():
        dropped = sorted({tasks[t] for t in task[(owner == code) & ~keep].tolist()})
        notes.append(Note("pooled", (), f"rows pooled over tasks count each document of {owners[code]} once, scored "
                          f"through {tasks[primary[code]]} (left out of them: {', '.join(dropped)})"))
    return keep, notes
