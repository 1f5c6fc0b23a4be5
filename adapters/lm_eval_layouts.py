"""lm-eval output layouts before 0.4.3, found and read for :mod:`kpass.adapters.lm_eval_reader`.

What each version wrote, read from the harness's own writer code at that version:

==============  ===================================================  =================================================
version         results (``--output_path``)                          per-sample outputs
==============  ===================================================  =================================================
0.3.x           the file given, any name: ``{"results", "versions",  ``--write_out --output_base_path DIR`` (default
(``main.py``,   "config"}`` (aggregates only; ``config.model`` and   ``.``): ``DIR/{task}_write_out_info.json``, a JSON
``evaluator``)  ``model_args`` name the model)                       array, one object per document: ``doc_id``,
                                                                     ``prompt_0``..., ``logit_0``... (a generation's
                                                                     text for ``greedy_until``), ``truth``, and each
                                                                     per-sample metric as ``str(value)``
0.4.0-0.4.2     ``DIR/results.json`` (or the ``.json`` file given):  ``--log_samples``: ``DIR/{model_args with "/" and
(``__main__``)  ``results``, ``configs``, ``versions``, ``config``   "=" replaced by "__"}_{task}.jsonl``, one JSON
                                                                     *array* (``indent=2``) despite the suffix; a record
                                                                     per document and filter, with no ``filter`` or
                                                                     ``metrics`` key: the filters follow each other in
                                                                     the order of the task's ``filter_list``
0.4.3 on        ``DIR/<model>/results_<date>.json``                  ``samples_<task>_<date>.jsonl`` (JSON Lines), read
                                                                     by :mod:`kpass.adapters.lm_eval_reader` itself
==============  ===================================================  =================================================

What is missing and said so: a 0.3 results file alone has no per-sample outputs, so it is refused in one
line that says what to give (``--write_out --output_base_path``); a 0.3 write-out file holds one greedy
generation per document (0.3 had no repeats), no answer extraction (``answer`` is null: cons@k is refused)
and no finish evidence, and its ``doc_id`` is the position in 0.3's shuffled document order (seeded, so
stable across runs of one task version and ``--limit``); its verdict is the logged per-sample metric, and
a note names it. A 0.3 write-out file names no model: the run's results file (which does) must lie beside
it. 0.4.0-0.4.2 records carry every field kpass needs once their filter is known from their position.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "LAYOUT_040",
    "LAYOUT_03",
    "legacy_job",
    "legacy_layout",
    "legacy_model_name",
    "legacy_records",
    "legacy_results_files",
    "legacy_samples_file",
    "legacy_write_out_orphans",
    "read_write_out_run",
    "write_out_tables",
    "write_out_tasks",
]

#: The two layouts before lm-eval 0.4.3, as :func:`legacy_layout` names them.
LAYOUT_03 = "lm-eval 0.3"
LAYOUT_040 = "lm-eval 0.4.0-0.4.2"
_WRITE_OUT_SUFFIX = "_write_out_info.json"
#: Keys of a 0.4.0-0.4.2 sample record that are not per-sample metric values.
_RECORD_FIELDS = frozenset({"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
                            "doc_hash", "prompt_hash", "target_hash"})
#: Keys of a 0.3 write-out record that are not per-sample metric values (besides ``prompt_i``/``logit_i``).
_WRITE_OUT_FIELDS = frozenset({"doc_id", "truth"})
_REQUEST_KEY = re.compile(r"^(prompt|logit)_\d+$")
#: Results files of 0.4.3 and later carry these (``EvaluationTracker``); 0.4.0-0.4.2 files do not.
_TRACKER_KEYS = ("model_name_sanitized", "task_hashes", "lm_eval_version")
_MAX_RESULTS_BYTES = 64 * 2**20
_DATED = re.compile(r"_\d{4}-\d{2}-\d{2}T[^_/]+?\.json$")
#: Model-argument keys that name the model, in the order lm-eval's own results name it.
_MODEL_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")


def _data_error(message: str, *, source: Any = None, line: int | None = None, field: str | None = None):
    from kpass import DataError

    return DataError(message, source=None if source is None else str(source), line=line, field=field)


def _read_json(path: Path) -> Any:
    """The file's JSON, parsed by :func:`kpass.data.validation.loads_json_strict` (a key twice in one object and
    nesting too deep are errors); any failure a ``DataError`` naming the file."""
    from kpass.data.validation import loads_json_strict

    try:
        return loads_json_strict(path.read_bytes())
    except UnicodeDecodeError as error:
        where = error.object[:error.start]
        column = error.start - where.rfind(b"\n")
        raise _data_error(f"not UTF-8 text: byte 0x{error.object[error.start]:02x} at column {column} "
                          f"({error.reason})", source=path, line=1 + where.count(b"\n")) from None
    except json.JSONDecodeError as error:
        raise _data_error(f"invalid or truncated JSON: {error.msg} (column {error.colno})", source=path,
                          line=error.lineno) from None
    except ValueError as error:  # a duplicate key, nesting too deep
        raise _data_error(f"invalid JSON: {error}", source=path, field=getattr(error, "key", None)) from None


def _results_object(path: Path) -> Mapping[str, Any] | None:
    """The top-level object of a candidate results file, None for anything else (cheap checks first)."""
    if path.suffix != ".json" or path.name.endswith(_WRITE_OUT_SUFFIX) or path.name.startswith("samples_"):
        return None
    try:
        if path.stat().st_size > _MAX_RESULTS_BYTES:
            return None
        with path.open("r", encoding="utf-8") as handle:
            head = handle.read(4096)
        if not head.lstrip().startswith("{") or '"results"' not in head:
            return None
    except (OSError, UnicodeDecodeError):
        return None
    from kpass.data.validation import loads_json_strict

    try:
        data = loads_json_strict(path.read_bytes())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    except ValueError as error:  # a duplicate key, nesting too deep: a results file that breaks a rule
        raise _data_error(f"invalid JSON: {error}", source=path, field=getattr(error, "key", None)) from None
    return data if isinstance(data, dict) and isinstance(data.get("results"), dict) else None


def legacy_layout(path: str | Path, data: Mapping[str, Any] | None = None) -> str | None:
    """:data:`LAYOUT_03` or :data:`LAYOUT_040` for a results file of those layouts, else None.

    A 0.3 results file has ``results`` and ``versions`` and no ``configs``; a 0.4.0-0.4.2 one has
    ``results`` and ``configs``, no date in its name and none of the keys 0.4.3's ``EvaluationTracker``
    added (a renamed results file of a later version is not taken for an old one).
    """
    path = Path(path)
    if data is None:
        if _DATED.search(path.name):
            return None
        data = _results_object(path)
        if data is None:
            return None
    if isinstance(data.get("configs"), dict):
        if _DATED.search(path.name) or any(key in data for key in _TRACKER_KEYS):
            return None
        return LAYOUT_040
    if isinstance(data.get("versions"), dict):
        return LAYOUT_03
    return None


def legacy_results_files(directory: Path) -> Iterator[Path]:
    """Results files of the 0.3 and 0.4.0-0.4.2 layouts under ``directory`` (recursively)."""
    for candidate in sorted(directory.rglob("*.json")):
        if candidate.is_file() and legacy_layout(candidate) is not None:
            yield candidate


def _model_args(results: Mapping[str, Any]) -> dict[str, str]:
    config = results.get("config")
    arguments = config.get("model_args") if isinstance(config, Mapping) else None
    if isinstance(arguments, Mapping):
        return {str(key): str(value) for key, value in arguments.items()}
    if not isinstance(arguments, str):
        return {}
    pairs = (part.partition("=") for part in arguments.split(","))
    return {key.strip(): value.strip() for key, sep, value in pairs if sep}


def legacy_model_name(results: Mapping[str, Any]) -> str | None:
    """The model an old results file names: a naming key of its ``config.model_args`` (a ``k=v,...``
    string before 0.4.3: ``pretrained=EleutherAI/pythia-160m``), else ``config.model``; None if neither.

    Examples
    --------
    >>> legacy_model_name({"config": {"model": "hf-causal", "model_args": "pretrained=org/m,dtype=float16"}})
    'org/m'
    >>> legacy_model_name({"config": {"model": "gpt3", "model_args": ""}})
    'gpt3'
    """
    arguments = _model_args(results)
    for key in _MODEL_KEYS:
        if arguments.get(key):
            return arguments[key]
    config = results.get("config")
    model = config.get("model") if isinstance(config, Mapping) else None
    return model if isinstance(model, str) and model else None


def _sanitised_model_args(results: Mapping[str, Any]) -> str | None:
    config = results.get("config")
    arguments = config.get("model_args") if isinstance(config, Mapping) else None
    if arguments is None:
        arguments = ""
    return re.sub("/|=", "__", arguments) if isinstance(arguments, str) else None


def legacy_samples_file(results_path: Path, results: Mapping[str, Any], task: str) -> Path | None:
    """The 0.4.0-0.4.2 samples file of ``task``: ``{model_args with "/", "=" -> "__"}_{task}.jsonl``
    beside the results file (``lm_eval/__main__.py`` of those versions); None when absent."""
    stem = _sanitised_model_args(results)
    if stem is None:
        return None
    candidate = results_path.with_name(f"{stem}_{task}.jsonl")
    return candidate if candidate.is_file() else None


def _filter_names(config: Mapping[str, Any]) -> list[str]:
    filters = config.get("filter_list")
    if not isinstance(filters, list) or not filters:
        return ["none"]
    return [str(entry.get("name")) for entry in filters if isinstance(entry, Mapping)]


def legacy_records(samples_path: Path, config: Mapping[str, Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(position, record)`` of a 0.4.0-0.4.2 samples file, each with the ``filter`` and ``metrics``
    keys later versions write.

    Those versions logged, for each filter of the task in ``filter_list`` order, one record per
    document, without naming the filter; the n-th record of a document is therefore the n-th
    filter's. A record's metric values are its keys beyond the sample fields.

    Raises
    ------
    kpass.DataError
        Not a JSON array of objects, or a document with more records than the task has filters.
    """
    records = _read_json(samples_path)
    if not isinstance(records, list):
        raise _data_error("expected one JSON array of sample records (lm-eval 0.4.0-0.4.2)", source=samples_path,
                          line=1)
    names = _filter_names(config)
    seen: dict[Any, int] = {}
    for position, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            raise _data_error("a sample record must be a JSON object", source=samples_path, line=position)
        if "filter" not in record:
            occurrence = seen.get(record.get("doc_id"), 0)
            seen[record.get("doc_id")] = occurrence + 1
            if occurrence >= len(names):
                raise _data_error(f"doc_id {record.get('doc_id')} has {occurrence + 1} records but the task has "
                                  f"{len(names)} filters ({', '.join(names)})", source=samples_path, line=position,
                                  field="doc_id")
            record = {**record, "filter": names[occurrence]}
        if "metrics" not in record:
            record = {**record, "metrics": [key for key in record if key not in _RECORD_FIELDS]}
        yield position, record


# ----------------------------------------------------------------------------- which run a file belongs to


def _write_out_task(path: Path) -> str | None:
    return path.name[: -len(_WRITE_OUT_SUFFIX)] if path.name.endswith(_WRITE_OUT_SUFFIX) else None


def _runs_beside(path: Path, layout: str) -> list[tuple[Path, Mapping[str, Any]]]:
    out = []
    for candidate in sorted(path.parent.glob("*.json")):
        data = _results_object(candidate) if candidate != path else None
        if data is not None and legacy_layout(candidate, data) == layout:
            out.append((candidate, data))
    return out


def legacy_job(path: str | Path) -> tuple[Path, str | None] | None:
    """``(results file, only this task or None)`` for a file of an old layout given by name, else None.

    A results file stands for itself; a 0.4.0-0.4.2 samples file or a 0.3 write-out file for its
    task in the results file beside it that names it.

    Raises
    ------
    kpass.DataError
        An old samples or write-out file without the results file of its run beside it (or with
        several that claim it).
    """
    path = Path(path)
    if not path.is_file():
        return None
    if legacy_layout(path) is not None:
        return path, None
    task = _write_out_task(path)
    if task is not None:
        runs = [(results, data) for results, data in _runs_beside(path, LAYOUT_03) if task in data["versions"]]
        what = "lm-eval 0.3 --write_out file"
    elif path.suffix == ".jsonl" and _is_json_array(path):
        runs, task = [], None
        for results, data in _runs_beside(path, LAYOUT_040):
            stem = _sanitised_model_args(data)
            for name in data["configs"]:
                if stem is not None and path.name == f"{stem}_{name}.jsonl":
                    runs.append((results, data))
                    task = name
        what = "lm-eval 0.4.0-0.4.2 samples file"
        if not runs:
            return None  # not recognisably an lm-eval file: other readers may know it
    else:
        return None
    if len(runs) != 1:
        found = "none" if not runs else ", ".join(str(results) for results, _ in runs)
        raise _data_error(f"{what}: it names no model; kpass reads it with the results file (--output_path) of its "
                          f"run, which must lie beside it and list task {task!r} (found: {found})", source=path)
    return runs[0][0], task


def _is_json_array(path: Path) -> bool:
    try:
        with path.open("r", encoding="utf-8") as handle:
            return handle.read(256).lstrip().startswith("[")
    except (OSError, UnicodeDecodeError):
        return False


# ----------------------------------------------------------------------------- 0.3 write-out files


def _binary(text: Any) -> bool | None:
    """A 0.3 per-sample metric value (``str(value)``) as a verdict; None when it is not 0/1."""
    if isinstance(text, bool):
        return text
    if text in ("True", "False"):
        return text == "True"
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    if math.isnan(value) or value not in (0.0, 1.0):
        return None
    return value == 1.0


def _write_out_table(task: str, records: list[Any], path: Path, results: Mapping[str, Any]):
    """``(columns, lines, metric, notes)`` of one 0.3 write-out file, or ``(None, None, None, notes)``
    when the task has no generations (a log-likelihood task)."""
    from .lm_eval_samples import SamplePipeline, ScoredDocuments, sample_columns

    if not records:
        raise _data_error("no samples: the write-out file is empty", source=path)
    for position, record in enumerate(records, start=1):
        if not isinstance(record, dict) or "doc_id" not in record or "logit_0" not in record:
            raise _data_error("expected lm-eval 0.3 write-out records with 'doc_id', 'prompt_0', 'logit_0'",
                              source=path, line=position, field="logit_0")
    logits = [[record[key] for key in record if key.startswith("logit_")] for record in records]
    if not all(isinstance(value, str) for values in logits for value in values):
        return None, None, None, [f"{path}: skipping lm-eval 0.3 task {task!r}: its requests are log-likelihoods, "
                                  "not generations (only greedy_until tasks have samples to score)"]
    if any(len(values) != 1 for values in logits):
        return None, None, None, [f"{path}: skipping lm-eval 0.3 task {task!r}: a document makes several "
                                  "generation requests (different prompts, not samples of one)"]
    names = [key for key in records[0] if key not in _WRITE_OUT_FIELDS and not _REQUEST_KEY.match(key)]
    metric: str | None = None
    verdicts: list[bool] | None = None
    for name in names:
        parsed = [_binary(record.get(name)) for record in records]
        if all(value is not None for value in parsed):
            metric, verdicts = name, [bool(value) for value in parsed]
            break
    if metric is None or verdicts is None:
        raise _data_error(f"lm-eval 0.3 task {task!r}: no per-sample metric with 0/1 values to take as the verdict "
                          f"(metrics: {names})", source=path, field="metrics")
    aggregate = (results.get("results") or {}).get(task, {}).get(metric)
    if isinstance(aggregate, (int, float)) and not isinstance(aggregate, bool):
        share = sum(verdicts) / len(verdicts)
        if abs(share - aggregate) > 1e-9:
            raise _data_error(f"lm-eval 0.3 task {task!r}: the write-out file's {metric} averages {share:.6g} but the "
                              f"results file reports {aggregate:.6g}: the files come from different runs",
                              source=path, field=metric)
    ids = [record["doc_id"] for record in records]
    if len(set(map(str, ids))) != len(ids):
        raise _data_error(f"lm-eval 0.3 task {task!r}: a doc_id appears twice (two runs in one file?)", source=path,
                          field="doc_id")
    columns, lines = sample_columns(
        model="?", task=task, pipeline=SamplePipeline("none", (), ("take_first",), frozenset()), extractor=(None, None),
        scored=ScoredDocuments(doc_ids=ids, docs=[{} for _ in records], targets=[record.get("truth") for record in records],
                               answers=[[None] for _ in records], verdicts=[[bool(v)] for v in verdicts]))
    note = (f"{path}: lm-eval 0.3 write-out output: one greedy generation per document (k = 1 only), each verdict "
            f"is the logged {metric}; no answer extraction (cons@k refused) and no finish evidence; doc_id is the "
            "position in lm-eval 0.3's shuffled document order")
    return columns, lines, metric, [note]


def write_out_tasks(results_path: Path, results: Mapping[str, Any]) -> list[str]:
    """The tasks of a 0.3 results file whose ``{task}_write_out_info.json`` lies beside it."""
    return [task for task in results.get("versions") or {}
            if results_path.with_name(f"{task}{_WRITE_OUT_SUFFIX}").is_file()]


def read_write_out_run(results_path: Path, results: Mapping[str, Any], only_task: str | None
                       ) -> Iterator[tuple[str, dict[str, list[Any]] | None, list[int] | None, str | None, Path,
                                           list[str]]]:
    """The tasks of a 0.3 run: ``(task, columns, lines, metric, write-out file, notes)`` each.

    ``columns`` is None for a task whose write-out file is absent or holds no generations (its
    ``notes`` say which). The ``model`` column is a placeholder the caller fills in.

    Raises
    ------
    kpass.DataError
        No write-out file for any task of the run (a results file alone holds aggregates only).
    """
    tasks = [only_task] if only_task is not None else list(results.get("versions") or {})
    found = {task: results_path.with_name(f"{task}{_WRITE_OUT_SUFFIX}") for task in tasks}
    present = {task: path for task, path in found.items() if path.is_file()}
    if not present:
        raise _data_error("an lm-eval 0.3 results file holds aggregate metrics only; k-sample metrics need the run's "
                          "per-sample outputs: put the {task}_write_out_info.json files of lm-eval 0.3's --write_out "
                          "--output_base_path beside it (or rerun with lm-eval 0.4+ --log_samples)", source=results_path)
    for task in tasks:
        if task not in present:
            yield task, None, None, None, found[task], [
                f"{results_path}: lm-eval 0.3 task {task!r} left out: no {found[task].name} beside the results file"]
            continue
        records = _read_json(present[task])
        if not isinstance(records, list):
            raise _data_error("expected a JSON array of lm-eval 0.3 write-out records", source=present[task], line=1)
        columns, lines, metric, notes = _write_out_table(task, records, present[task], results)
        yield task, columns, lines, metric, present[task], notes


def legacy_write_out_orphans(directory: Path, results_files: Sequence[Path]) -> list[str]:
    """Notes naming 0.3 write-out files under ``directory`` that no 0.3 results file beside them lists."""
    claimed: set[Path] = set()
    for results in results_files:
        data = _results_object(results)
        if data is not None and legacy_layout(results, data) == LAYOUT_03:
            claimed.update(results.with_name(f"{task}{_WRITE_OUT_SUFFIX}") for task in data["versions"])
    return [f"{path}: lm-eval 0.3 write-out file left out: no results file of its run (which names the model) "
            "beside it" for path in sorted(directory.rglob(f"*{_WRITE_OUT_SUFFIX}")) if path not in claimed]


def write_out_tables(results_path: Path, results: Mapping[str, Any], only_task: str | None, *, model: str,
                     run_name: str) -> Iterator[tuple[tuple[str, str], Any]]:
    """``((model, task), SampleTable)`` of each generation task of a 0.3 run (:func:`read_write_out_run`),
    with the ``run`` and ``judge`` columns the reader gives every table; every table carries the run's notes."""
    from kpass import SampleTable

    from .lm_eval_provenance import JUDGE_COLUMN, RUN_COLUMN

    read = list(read_write_out_run(results_path, results, only_task))
    notes = [note for *_, task_notes in read for note in task_notes]
    built = []
    for task, columns, lines, metric, path, _ in read:
        if columns is None or lines is None:
            continue
        rows = len(columns["model"])
        columns.update({"model": [model] * rows, RUN_COLUMN: [run_name] * rows, JUDGE_COLUMN: [metric] * rows})
        built.append(((model, task), SampleTable.from_columns(columns, source=str(path), lines=lines, notes=notes)))
    if not built:
        raise _data_error(f"no greedy_until task with a write-out file in this lm-eval 0.3 run ({'; '.join(notes)})",
                          source=results_path)
    yield from built
