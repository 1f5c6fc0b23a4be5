"""What the engines read: sample files, glob patterns and (hive-partitioned) directories.

:func:`expand_inputs` turns paths into :class:`InputFile` items (file, format, partition
values); :class:`EngineOptions` carries the engines' memory limit, spill directory and progress
callback; :func:`locate_rows` reads the rows of given problems back through the numpy readers, so
that an engine's error names the file, line and field exactly as the numpy path does.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import pathlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kpass.errors import DataError

from .reduction import JUDGE_COLUMN, NothingLocated

if TYPE_CHECKING:  # pragma: no cover
    from kpass.data.table import SampleTable

__all__ = ["JUDGE_COLUMN", "RUN_COLUMN", "EngineOptions", "InputFile", "expand_globs", "expand_inputs", "file_labels",
           "format_of", "glob_matches", "label_run", "locate_rows"]

#: Columns readers set themselves, outside the schema but not the user's metadata: the run each row
#: comes from (an Inspect log's file name, an lm-eval run's directory or date, a ``--label`` name)
#: and the task metric that judged it (lm-eval's ``exact_match``, ``math_verify``).
RUN_COLUMN = "run"
# JUDGE_COLUMN ("judge") lives in kpass.data.reduction: every engine carries it per problem

_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".jsonl.gz": "jsonl", ".ndjson.gz": "jsonl",
            ".csv": "csv", ".csv.gz": "csv", ".parquet": "parquet", ".pq": "parquet"}
_GLOB_CHARACTERS = set("*?[")


@dataclasses.dataclass(frozen=True)
class InputFile:
    """One sample file an engine reads: its path (as errors name it), format, and the hive
    partition values of its directories (``{"model": "a"}`` for ``.../model=a/part.parquet``)."""

    path: str
    format: str
    partitions: tuple[tuple[str, str], ...] = ()


@dataclasses.dataclass(frozen=True)
class EngineOptions:
    """Options of the out-of-core engines.

    Attributes
    ----------
    memory_limit : str, optional
        DuckDB's memory limit (``"2GB"``); default ``$KPASS_MEMORY_LIMIT`` or ``"2GB"``. Past it
        DuckDB spills to ``temp_directory``.
    temp_directory : str, optional
        Where DuckDB spills, and where a local-mode Spark engine writes its per-problem table for
        the driver to read (a directory removed after the read); default
        ``$KPASS_TEMP_DIRECTORY`` or the system temporary directory.
    threads : int, optional
        DuckDB threads (default: ``$KPASS_THREADS`` or every core).
    progress : callable ``(percent)``, optional
        Called while the reduction runs (the CLI draws a bar on stderr when it is a terminal).
    spark : pyspark.sql.SparkSession, optional
        The session of the Spark engine (default: the active one, or a new local one).
    """

    memory_limit: str | None = None
    temp_directory: str | None = None
    threads: int | None = None
    progress: Callable[[float], None] | None = None
    spark: Any = None


def format_of(path: str) -> str | None:
    """``jsonl``, ``csv`` or ``parquet`` by the file's suffix; None for any other file."""
    name = path.lower()
    for suffix, kind in _FORMATS.items():
        if name.endswith(suffix):
            return kind
    return None


#: Schema columns a hive partition directory may name (categorical): ``model=a/``, ``task=b/``.
#: A partition of any other schema column (``correct=true/``) is refused: its value is a string.
_PARTITION_SCHEMA_COLUMNS = ("model", "task", "problem_id")


def _partitions(path: pathlib.Path, root: pathlib.Path) -> tuple[tuple[str, str], ...]:
    """The ``key=value`` directories between ``root`` and ``path``.

    Raises
    ------
    DataError
        A key twice on the path (``model=a/model=b/``: which is meant?), or a key naming a
        non-categorical schema column.
    """
    from kpass.data.columns import SCHEMA_COLUMNS

    parts = path.relative_to(root).parts[:-1]
    pairs = tuple((key, value) for key, _, value in (part.partition("=") for part in parts if "=" in part))
    keys = [key for key, _ in pairs]
    for key in keys:
        if keys.count(key) > 1:
            values = ", ".join(f"{key}={value}" for other, value in pairs if other == key)
            raise DataError(f"the hive partition key '{key}' repeats in the path ({values}); which value is meant?",
                            source=str(path), field=key)
        if key in SCHEMA_COLUMNS and key not in _PARTITION_SCHEMA_COLUMNS:
            raise DataError(f"a hive partition directory names the column '{key}', which is not categorical "
                            f"(partitions may name {', '.join(_PARTITION_SCHEMA_COLUMNS)} or other fields)",
                            source=str(path), field=key)
    return pairs


def expand_inputs(paths: Sequence[str | os.PathLike]) -> list[InputFile] | None:
    """The sample files behind ``paths`` (files, globs, directories), or None when some path is
    not a JSONL/CSV/Parquet file (it is then a plugin's format: the numpy engine reads it).

    Raises
    ------
    FileNotFoundError
        A path that does not exist, or a glob or directory without any sample file.
    """
    files: list[InputFile] = []
    for text in expand_globs(paths):
        if os.path.isdir(text):
            root = pathlib.Path(text)
            found = sorted((p, kind) for p in root.rglob("*") if p.is_file() and (kind := format_of(p.name))
                           and not any(part.startswith((".", "_")) for part in p.relative_to(root).parts))
            if not found:
                return None  # e.g. an lm-eval output directory: a plugin reader's
            files += [InputFile(str(p), kind, _partitions(p, root)) for p, kind in found]
        elif os.path.exists(text):
            kind = format_of(text)
            if kind is None:
                return None
            files.append(InputFile(str(pathlib.Path(text)), kind))
    return files


def file_labels(paths: Sequence[str | os.PathLike], labels: Mapping[str, str]) -> dict[str, str]:
    """The label of every sample file behind the labelled ``paths`` (a labelled glob or directory
    labels each of its files), keyed as :func:`expand_inputs` names the files.

    Raises
    ------
    DataError
        A labelled hive-partitioned directory (its partition values are columns the files lack:
        label its partitions' files, or drop the label).
    """
    out: dict[str, str] = {}
    for given in paths:
        label = labels.get(os.fspath(given))
        if label is None:
            continue
        for item in expand_inputs([given]) or [InputFile(os.fspath(given), "")]:
            if item.partitions:
                raise DataError("a label names a hive-partitioned directory; label files without partition "
                                "directories, or drop the label", source=os.fspath(given))
            out[item.path] = label
    return out


def label_run(table: "SampleTable", label: str) -> "SampleTable":
    """The rows of one input named by the user (``--label NAME=PATH``): every model shown as
    ``"<model> [<label>]"`` and the ``run`` column set to ``label``; keys and every other column
    are shared, not copied.

    Raises
    ------
    ValueError
        An empty label.
    """
    if not isinstance(label, str) or not label.strip():
        raise ValueError(f"a run label must be a non-empty string; got {label!r}.")
    relabelled = table.with_categorical_columns({RUN_COLUMN: np.full(len(table), label, dtype=object)})
    # the models' categories renamed in place of the rows' codes: the problem index stays valid
    relabelled._categories["model"] = [f"{model} [{label}]" for model in table.categories("model")]
    return relabelled


def glob_matches(pattern: str) -> list[str]:
    """The files and directories a glob pattern matches, sorted (``**`` spans directories; a
    directory is read as when given by name): the one expansion rule of every input kind (sample
    tables here, plugin formats in :func:`expand_globs`, the output check of the command line).

    Raises
    ------
    FileNotFoundError
        Nothing matches.
    """
    matches = [match for match in sorted(glob.glob(pattern, recursive=True)) if os.path.exists(match)]
    if not matches:
        raise FileNotFoundError(f"no file matches: {pattern}")
    return [str(pathlib.Path(match)) for match in matches]


def expand_globs(paths: Sequence[str | os.PathLike]) -> list[str]:
    """``paths`` with every glob pattern (``logs/*.eval``, ``logs/**/*.eval``, quoted so that
    kpass, not the shell, expands it) replaced by its matches (:func:`glob_matches`); an existing
    path is kept as given, even when its name holds ``*``, ``?`` or ``[``.

    Raises
    ------
    FileNotFoundError
        A path that does not exist, or a pattern no file matches.
    """
    expanded: list[str] = []
    for given in paths:
        text = os.fspath(given)
        if os.path.exists(text):
            expanded.append(text)
        elif _GLOB_CHARACTERS & set(text):
            expanded += glob_matches(text)
        else:
            raise FileNotFoundError(f"no such file: {text}")
    return expanded


def locate_rows(files: Sequence[InputFile], keys: list[tuple[str, str]] | None) -> "SampleTable":
    """The rows of the problems ``keys`` (``(task, problem_id)``) read by the numpy readers, one
    table per file then concatenated, so that every per-row and key error is raised with the
    text, file and line of the numpy path. ``None`` keeps every row; ``[]`` keeps none (after
    converting every row, which raises the first per-row error).

    Memory: one chunk of rows at a time (JSONL, Parquet) plus the rows kept.
    """
    from kpass.data.table import SampleTable

    wanted = None if keys is None else {(str(task), str(problem)) for task, problem in keys}
    tables = []
    for item in files:
        parts = [part for part in _converted_chunks(item) if len(part)]
        kept = parts if wanted is None else [rows for part in parts if (rows := _keep(part, wanted)) is not None]
        if kept:
            tables.append(SampleTable._concat(kept))
    if not tables:
        if keys is None:  # every file read and none holds a row
            raise DataError("no samples in the input", source=str(files[0].path) if files else None)
        raise NothingLocated(keys)
    return SampleTable.concat(tables)


def _keep(part: "SampleTable", wanted: set[tuple[str, str]]) -> "SampleTable | None":
    """Rows of ``part`` whose (task, problem_id) is wanted, as a table (per-row checks passed)."""
    if not wanted:
        return None
    ids = {problem for _, problem in wanted}
    candidates = [code for code, value in enumerate(part.categories("problem_id")) if value in ids]
    rows = np.flatnonzero(np.isin(part.codes("problem_id"), candidates))
    if rows.size == 0:
        return None
    tasks = part.category_values("task")[part.codes("task")[rows]]
    problems = part.category_values("problem_id")[part.codes("problem_id")[rows]]
    exact = np.array([(t, p) in wanted for t, p in zip(tasks.tolist(), problems.tolist())], dtype=bool)
    return _subset(part, rows[exact]) if exact.any() else None


def _subset(table: "SampleTable", rows: np.ndarray) -> "SampleTable":
    """Rows of a converted table (keys not yet checked), with their sources and lines."""
    from kpass.data.table import SampleTable

    out = SampleTable()
    out.sources = list(table.sources)
    out._source_codes = table._source_codes[rows]
    out._lines = table._lines[rows]
    out.notes = table.notes
    out.extra_columns = table.extra_columns
    for name, values in table._columns.items():
        if name == "cot_verdicts":
            _, offsets = table.verdicts()
            lengths = offsets[rows + 1] - offsets[rows]
            starts = offsets[rows]
            new_offsets = np.zeros(len(rows) + 1, dtype=np.int64)
            np.cumsum(lengths, out=new_offsets[1:])
            within = np.arange(new_offsets[-1]) - np.repeat(new_offsets[:-1], lengths)
            out._columns[name] = values[np.repeat(starts, lengths) + within]
            out._verdict_offsets = new_offsets
        else:
            out._columns[name] = values[rows]
    out._categories = {name: list(categories) for name, categories in table._categories.items()}
    return out


def _converted_chunks(item: InputFile):
    """Typed, per-row-checked chunks of one file (keys not checked), as the numpy readers make them."""
    from kpass.data.readers import CsvReader, JsonlReader, ParquetReader, check_partition_values
    from kpass.data.table import SampleTable

    source = item.path
    extra = dict(item.partitions)
    if item.format == "jsonl":
        with JsonlReader.open(pathlib.Path(source)) as handle:
            for records, lines in JsonlReader._chunks(handle, source, None):
                if extra:
                    records = _with_partition_values(records, lines, extra, source)
                columns, numbers = SampleTable._records_to_columns(records, source=source, lines=lines)
                yield SampleTable._convert_columns(columns, source=source, lines=numbers)
    elif item.format == "csv":
        table = CsvReader().read(source)
        if extra:
            check_partition_values(table, extra)
            table = _with_partitions(table, extra)
        yield table
    else:
        yield from ParquetReader.chunks(pathlib.Path(source), extra)


def _with_partition_values(records: list[dict], lines: Sequence[int], extra: Mapping[str, str],
                           source: str) -> list[dict]:
    """JSON records with the hive partition values filled in where a record has none; a record
    whose own value differs is refused (:func:`~kpass.data.readers.partition_contradiction`)."""
    from kpass.data.columns import _stringify
    from kpass.data.readers import partition_contradiction

    merged = []
    for record, line in zip(records, lines):
        if not isinstance(record, dict):  # not an object: the conversion names it
            merged.append(record)
            continue
        filled = dict(record)
        for key, value in extra.items():
            own = record.get(key)
            if own is None or (isinstance(own, float) and own != own):  # null or NaN: the partition's
                filled[key] = value
            elif (text := _stringify(own)) != value:
                raise partition_contradiction(key, value, text, source=source, line=line)
        merged.append(filled)
    return merged


def _with_partitions(table: "SampleTable", extra: dict[str, str]) -> "SampleTable":
    from kpass.data.table import SampleTable

    records = table.to_records()
    lines = table._lines.tolist()
    return SampleTable.from_records([{**record, **{key: value for key, value in extra.items() if record.get(key) is None}}
                                     for record in records], source=table.sources[0], lines=lines)
