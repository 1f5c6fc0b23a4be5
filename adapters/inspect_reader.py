"""Read Inspect AI logs (``.eval`` and ``.json``) into a kpass sample table.

Registered through the kpass plugin hook (:mod:`kpass.adapters.inspect_plugin`), so that
``kpass report logs/*.eval`` and ``kpass compare`` work on any Inspect log, including logs of
runs made without kpass. Inspect is imported only when a log is actually read.

One row per scored (sample, epoch); the columns are described in
:mod:`kpass.adapters.inspect_records`. In addition:

- ``model`` is the log's ``eval.model`` and ``task`` its ``eval.task``; when a log holds several
  scorers, the scorers written by :func:`~kpass.adapters.inspect_scorers.kpass_scorer` /
  :func:`~kpass.adapters.inspect_scorers.cot_verifier` are used if present, otherwise every scorer
  gives its own task ``<task>/<scorer>``.
- ``cluster``: the ``cluster=`` key of a kpass metric declared in the log header, else the sample
  metadata key ``"cluster"`` when every sample has one; no cluster column otherwise.
- every scalar sample-metadata field also becomes a column of its own (so ``--cluster-by subject``
  and ``--by subject`` work), except fields named like a schema column, which stay in ``metadata``.
- ``metadata["output"]``: the completion text of the epoch's final generation, where
  ``kpass budget --tokenizer`` finds it; ``finished`` from its stop reason where no kpass scorer
  recorded it (conservative: a wrong answer cut off by the token limit is not finished, see
  :mod:`kpass.adapters.inspect_records`); ``output_tokens`` from its usage.
- The log is read in one pass with Inspect's ``read_eval_log``, skipping the transcripts
  (messages, events, attachments, store), so full scores and outputs cost one parse of each
  sample and nothing is read twice.
- Unscored epochs (NaN) and errored samples without a score are left out, with a note that
  counts them; a log whose status is not "success" is read with a note. Notes go to the table's
  :attr:`~kpass.SampleTable.notes` (so ``kpass report`` prints them and ``--format json`` keeps
  them) and are also issued as ``UserWarning``.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import warnings
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["InspectLogReader", "records_from_log"]

_JSON_HEAD = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')


class InspectLogReader:
    """kpass reader for Inspect logs: ``can_read(path)`` and ``read(path) -> SampleTable``."""

    name = "inspect"
    description = "Inspect AI eval logs (.eval, .json)"

    def can_read(self, path: str | Path) -> bool:
        """True for an Inspect ``.eval`` archive or ``.json`` log (checked by content)."""
        path = Path(path)
        if not path.is_file():
            return False
        suffix = path.suffix.lower()
        if suffix == ".eval":
            try:
                with zipfile.ZipFile(path) as archive:
                    names = set(archive.namelist())
            except (zipfile.BadZipFile, OSError):
                # a damaged .eval is still ours: read() reports what is wrong with it
                return True
            return "header.json" in names or "_journal/start.json" in names
        if suffix == ".json":
            try:
                with path.open("rb") as handle:
                    head = handle.read(4096)
            except OSError:
                return False
            return bool(_JSON_HEAD.match(head))
        return False

    def read(self, path: str | Path):
        """Read one Inspect log into a :class:`kpass.SampleTable`.

        Raises
        ------
        kpass.DataError
            Unreadable or truncated log, or a score kpass cannot interpret, naming the file
            (and the sample).
        """
        from kpass import SampleTable

        notes: list[str] = []
        records = records_from_log(path, notes=notes)
        return SampleTable.from_records(records, source=str(path), notes=notes)


def _data_error(message: str, path: str, field: str | None = None):
    from kpass import DataError

    return DataError(message, source=path, field=field)


def _kpass_cluster_key(header: Any) -> str | None:
    """The ``cluster=`` key of the first kpass metric declared in the log header, if any."""
    from .inspect_records import kpass_metric_definitions

    for definition in kpass_metric_definitions(header.eval):
        cluster = (getattr(definition, "options", None) or {}).get("cluster")
        if isinstance(cluster, str) and cluster:
            return cluster
    return None


def _schema_columns() -> tuple[str, ...]:
    from kpass import SCHEMA_COLUMNS

    return tuple(SCHEMA_COLUMNS)


def _metadata_columns(samples: list[Any], reserved: set[str]) -> list[str]:
    schema = _schema_columns()
    names: dict[str, None] = {}
    for sample in samples:
        for key, value in (sample.metadata or {}).items():
            if isinstance(value, (str, int, bool)) or (isinstance(value, float) and math.isfinite(value)):
                names.setdefault(key, None)
    out = []
    for key in names:
        if not isinstance(key, str) or not key or key in reserved:
            continue
        lowered = key.lower()
        if lowered in schema or difflib.get_close_matches(lowered, schema, n=1, cutoff=0.8):
            continue
        out.append(key)
    return out


#: EvalSample fields the reader never needs (transcripts, sandboxes, stores): skipped while the
#: log is parsed. Fields Inspect requires (``input``, ``target``) cannot be skipped.
_SKIPPED_FIELDS = frozenset({
    "messages", "events", "events_data", "timelines", "store", "attachments", "sandbox", "files",
    "setup", "error_retries", "role_usage", "model_fallbacks", "invalidation",
})


def _has_hidden_reasoning(output: Any) -> bool:
    """True when the final generation produced tokens that its completion text does not show."""
    usage = getattr(output, "usage", None)
    if usage is not None and (getattr(usage, "reasoning_tokens", None) or 0) > 0:
        return True
    for choice in getattr(output, "choices", None) or []:
        content = getattr(choice.message, "content", None)
        if isinstance(content, list) and any(getattr(part, "type", None) == "reasoning" for part in content):
            return True
    return False


def _generation(sample: Any, model: str) -> tuple[str | None, Mapping[str, str] | None, int | None]:
    """``(stop_reason, output text, output tokens)`` of a sample's final generation.

    The text goes under ``"output"`` (or ``"completion"`` when reasoning is hidden from it, see
    :mod:`kpass.adapters.inspect_records`); output tokens are the final generation's usage, else
    the sample's usage of the evaluated model.
    """
    output = sample.output
    tokens = None
    usage = getattr(output, "usage", None) if output is not None else None
    if usage is not None and usage.output_tokens is not None:
        tokens = int(usage.output_tokens)
    else:
        total = (sample.model_usage or {}).get(model)
        if total is not None and total.output_tokens is not None:
            tokens = int(total.output_tokens)
    if output is None or not output.choices:
        return None, None, tokens
    text = output.completion
    key = "completion" if _has_hidden_reasoning(output) else "output"
    return output.stop_reason, {key: text}, tokens


def records_from_log(path: str | Path, *, notes: list[str] | None = None) -> list[dict[str, Any]]:
    """Sample-table records (one per scored sample and epoch) of one Inspect log.

    The log is read once, with Inspect's ``read_eval_log`` skipping the transcripts (messages,
    events, attachments, store), which are most of a log's size. Each record carries its epoch's
    final generation: the completion text in ``metadata["output"]``, the stop reason as
    ``finished`` when no kpass scorer recorded it, and the output tokens of its usage (see
    :mod:`kpass.adapters.inspect_records`).

    Parameters
    ----------
    path : str or Path
        An Inspect ``.eval`` or ``.json`` log.
    notes : list of str, optional
        Receives what was left out or is doubtful (unscored epochs, a log whose status is not
        "success"), one sentence each naming the file, for :attr:`kpass.SampleTable.notes`; each
        is also issued as a ``UserWarning``.

    Returns
    -------
    list of dict
        Records for :meth:`kpass.SampleTable.from_records`.

    Raises
    ------
    kpass.DataError
        The log cannot be read, holds no scored sample, or holds a score value kpass cannot read.
    """
    from inspect_ai.log import read_eval_log

    from .inspect_records import assign_sample_indices, sample_record

    location = str(path)
    try:
        log = read_eval_log(location, exclude_fields=set(_SKIPPED_FIELDS))
    except Exception as exc:
        raise _data_error(f"cannot read this Inspect log ({type(exc).__name__}: {exc}); is it complete?",
                          location) from exc
    samples = list(log.samples or [])
    collected = notes if notes is not None else []

    def note(message: str) -> None:
        collected.append(message)
        warnings.warn(message, stacklevel=3)

    if log.status != "success":
        note(f"{location}: Inspect log status is {log.status!r}; reading the {len(samples)} sample(s) it holds")
    model = log.eval.model
    task = log.eval.task
    cluster = _kpass_cluster_key(log)
    if cluster is None and samples and all("cluster" in (s.metadata or {}) for s in samples):
        cluster = "cluster"

    scorer_names: dict[str, None] = {}
    kpass_scorers: dict[str, None] = {}
    for sample in samples:
        for name, score in (sample.scores or {}).items():
            scorer_names.setdefault(name, None)
            if "kpass" in (score.metadata or {}):
                kpass_scorers.setdefault(name, None)
    chosen = list(kpass_scorers) or list(scorer_names)
    if not chosen:
        raise _data_error("the log holds no scored sample (were the samples scored? "
                          "try `inspect score` first)", location, field="correct")
    metadata_columns = _metadata_columns(samples, reserved=set())

    records: list[dict[str, Any]] = []
    epochs: list[int | None] = []
    unscored = 0
    for sample in samples:
        scores = sample.scores or {}
        stop_reason, output_text, tokens = _generation(sample, model)
        for scorer in chosen:
            score = scores.get(scorer)
            if score is None:
                unscored += 1
                continue
            where = f"sample {sample.id!r}, epoch {sample.epoch}, scorer {scorer!r}"
            try:
                record = sample_record(
                    sample_id=sample.id, epoch=sample.epoch, score=score,
                    sample_metadata=sample.metadata, cluster=cluster, where=where,
                    usage_output_tokens=tokens, decide_finished=True, stop_reason=stop_reason,
                    output_text=output_text,
                )
            except (TypeError, ValueError) as exc:
                raise _data_error(str(exc), location, field="cluster" if "cluster key" in str(exc) else "correct") from exc
            if record is None:
                unscored += 1
                continue
            record["model"] = model
            record["task"] = task if len(chosen) == 1 else f"{task}/{scorer}"
            target = sample.target
            record["gold"] = (target if isinstance(target, str)
                              else target[0] if len(target) == 1 else json.dumps(list(target)))
            sample_metadata = dict(sample.metadata or {})
            for key in metadata_columns:
                value = sample_metadata.get(key)
                record[key] = None if value is None else str(value)
            record["metadata"]["sample_metadata"] = sample_metadata
            records.append(record)
            epochs.append(sample.epoch)
    if unscored:
        note(f"{location}: left out {unscored} unscored epoch(s) (NaN score or no score); the remaining "
             "epochs of those samples are kept")
    if not records:
        raise _data_error("the log holds no scored sample", location, field="correct")
    assign_sample_indices(records, epochs)
    return records
