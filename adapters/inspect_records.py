"""Inspect scores to kpass sample-table records (shared by the Inspect metrics and the log reader).

One record per (sample, epoch) with the columns of ``kpass.SampleTable``:

==============  =============================================================================
column          taken from
==============  =============================================================================
model           the log's ``eval.model`` (metrics: the constant ``"inspect"``)
task            the log's ``eval.task``, plus ``/<scorer>`` when a log holds several scorers
problem_id      the Inspect sample id, as a string
sample_index    0-based rank of the epoch among the sample's scored epochs
correct         the score value: ``value_to_float(value) >= 1.0`` (Inspect's ``pass_at`` rule)
answer          ``Score.metadata["kpass"]["answer"]`` (kpass scorers), else ``Score.answer``
gold            the sample target (a list of targets is kept as JSON)
finished        ``Score.metadata["kpass"]["finished"]`` (kpass scorers only)
output_tokens   ``Score.metadata["kpass"]["output_tokens"]``, else the sample's usage of the
                evaluated model
cot_verdicts    ``Score.metadata["kpass"]["cot_verdicts"]`` (:func:`cot_verifier` only)
cluster         the sample-metadata value under the cluster key
metadata        ``{"epoch": ..., "sample_metadata": {...}}`` (kept, never interpreted)
==============  =============================================================================

Correctness
-----------
kpass metrics are binary, and the adapter uses exactly the rule of Inspect's own ``pass_at_{k}``
and ``pass_k_{k}`` reducers, so that the numbers agree: a value is correct when
``inspect_ai.scorer.value_to_float()(value) >= 1.0``. Hence ``"C"``, ``True``, ``1``, ``1.0``,
``"yes"``, ``"true"`` are correct; ``"I"``, ``"N"`` (no answer), ``"P"`` (partial credit, 0.5),
``0``, ``0.5``, ``False``, ``"no"`` are incorrect. A NaN value is Inspect's "unscored" sentinel:
that epoch is left out (Inspect's metrics and reducers leave it out too) and the remaining epochs of
the sample are renumbered. A value kpass cannot read as a single correct/incorrect flag (a dict,
a list, an unrecognised string) is an error naming the sample, rather than Inspect's warning and 0.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

__all__ = [
    "KPASS_METADATA_KEY",
    "assign_sample_indices",
    "correct_from_value",
    "sample_record",
]

KPASS_METADATA_KEY = "kpass"
_CORRECT_STRINGS = {"c": True, "i": False, "p": False, "n": False,
                    "yes": True, "true": True, "no": False, "false": False}


def correct_from_value(value: Any, *, where: str) -> bool | None:
    """Map an Inspect score value to correct (``True``), incorrect (``False``) or unscored (``None``).

    Parameters
    ----------
    value : Value
        ``Score.value``.
    where : str
        Description of the sample for error messages (``"sample 7, epoch 2"``).

    Returns
    -------
    bool or None
        ``value_to_float(value) >= 1.0``; ``None`` for NaN (Inspect's unscored sentinel).

    Raises
    ------
    TypeError
        The value is a dict or a list (several values per sample).
    ValueError
        A string that is neither C/I/P/N, yes/no, true/false nor a number.

    Examples
    --------
    >>> [correct_from_value(v, where="x") for v in ("C", "I", "P", 1.0, 0, True)]
    [True, False, False, True, False, True]
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, numbers.Real):
        as_float = float(value)
        if math.isnan(as_float):
            return None
        return as_float >= 1.0
    if isinstance(value, str):
        key = value.strip().lower()
        if key in _CORRECT_STRINGS:
            return _CORRECT_STRINGS[key]
        try:
            as_float = float(key)
        except ValueError:
            raise ValueError(
                f"{where}: score value {value!r} is not a correct/incorrect value kpass can read "
                "(expected C/I/P/N, yes/no, true/false or a number; correct means >= 1.0)."
            ) from None
        if math.isnan(as_float):
            return None
        return as_float >= 1.0
    if isinstance(value, Mapping) or isinstance(value, (list, tuple)):
        raise TypeError(
            f"{where}: score value {value!r} holds several values; kpass needs one correct/incorrect "
            "value per sample. In a task, apply kpass metrics to one key with "
            "metrics={'<key>': [kpass_metrics(...)]}; for a log, score it with a scalar scorer."
        )
    raise TypeError(f"{where}: score value of type {type(value).__name__} is not a correct/incorrect value.")


def _clean_answer(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    text = str(value).strip()
    return text or None


def kpass_data(score: Any) -> Mapping[str, Any] | None:
    """The ``Score.metadata["kpass"]`` dictionary written by the kpass scorers, if any."""
    metadata = getattr(score, "metadata", None) or {}
    data = metadata.get(KPASS_METADATA_KEY)
    return data if isinstance(data, Mapping) else None


def sample_record(
    *,
    sample_id: Any,
    epoch: int | None,
    score: Any,
    sample_metadata: Mapping[str, Any] | None,
    cluster: str | None,
    where: str,
    usage_output_tokens: int | None = None,
) -> dict[str, Any] | None:
    """One sample-table record (without model, task and sample_index) from one epoch's score.

    Parameters
    ----------
    sample_id : int or str
        Inspect sample id (``None`` is an error: kpass needs ids to group epochs).
    epoch : int or None
        1-based epoch, kept in the metadata.
    score : Score
        The epoch's score.
    sample_metadata : Mapping or None
        The sample's metadata (for the cluster).
    cluster : str or None
        Sample-metadata key of the cluster; a sample without it is an error.
    where : str
        Description of the sample for error messages.
    usage_output_tokens : int, optional
        Output tokens from Inspect's usage data, used when the score has no kpass data.

    Returns
    -------
    dict or None
        ``None`` when the epoch is unscored (NaN value).
    """
    if sample_id is None:
        raise ValueError(f"{where}: the sample has no id; kpass groups epochs by sample id.")
    correct = correct_from_value(score.value, where=where)
    if correct is None:
        return None
    data = kpass_data(score)
    record: dict[str, Any] = {"problem_id": str(sample_id), "correct": correct}
    if data is not None:
        record["answer"] = _clean_answer(data.get("answer"))
        for key in ("finished", "output_tokens"):
            if data.get(key) is not None:
                record[key] = data[key]
        if "cot_verdicts" in data:  # written by cot_verifier (None: wrong answer, never verified)
            verdicts = data["cot_verdicts"]
            record["cot_verdicts"] = list(verdicts) if verdicts is not None else []
    else:
        answer = _clean_answer(getattr(score, "answer", None))
        if answer is not None:
            record["answer"] = answer
        if usage_output_tokens is not None:
            record["output_tokens"] = int(usage_output_tokens)
    if cluster is not None:
        value = (sample_metadata or {}).get(cluster)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            raise ValueError(
                f"{where}: the sample has no metadata value for the cluster key {cluster!r}; every "
                f"sample needs one (as for Inspect's stderr(cluster={cluster!r}))."
            )
        record["cluster"] = str(value)
    record["metadata"] = {"epoch": epoch}
    return record


def assign_sample_indices(records: list[dict[str, Any]], epochs: list[int | None]) -> None:
    """Set ``sample_index`` to the 0-based rank of each record's epoch within its
    ``(model, task, problem_id)``, in place (epochs may have gaps after unscored epochs)."""
    order = sorted(
        range(len(records)),
        key=lambda i: (records[i].get("model", ""), records[i].get("task", ""),
                       records[i]["problem_id"], epochs[i] if epochs[i] is not None else i),
    )
    previous = None
    rank = 0
    for i in order:
        key = (records[i].get("model", ""), records[i].get("task", ""), records[i]["problem_id"])
        rank = rank + 1 if key == previous else 0
        previous = key
        records[i]["sample_index"] = rank
