"""The sample table: one row per sample, columnar numpy, categorical columns as integer codes.

Every reader and adapter produces a :class:`SampleTable`; every report starts from one. The
schema (columns, types, which are required) is written once, for users, in ``docs/sample-table.md``;
in code it is :data:`kpass.data.columns.SCHEMA_COLUMNS`.

Rules checked when a table is built (each violation is a :class:`~kpass.DataError` naming the
source, the line and the field):

- the required columns are present and never null; ``correct`` is boolean (``true``/``false``,
  ``1``/``0``, also as strings); numbers are finite (NaN is an error, never a silent null);
- a sample judged ``correct`` has ``finished`` true (or null): it emitted its final answer within
  its budget (docs/spec.md section 6); ``correct=true, finished=false`` is a contradiction that would
  make pass@1 and pass@1(B) disagree;
- ``(model, task, problem_id, sample_index)`` is unique (a duplicate names both lines);
- a problem's samples under one model are indexed ``0..n-1`` without gaps. This is how a problem
  whose samples were *mixed up between two models* is caught: if model A holds samples 0-3 of a
  problem and model B holds 4-7, B's indices do not start at 0 and the error names both models.
  It also catches a silently dropped sample (a gap, reported at the first sample after it) and
  1-based epochs;
- a column that is not in the schema is kept as a metadata column (usable with ``--by`` and
  ``--cluster-by``) and listed in :attr:`SampleTable.extra_columns`; a column name that looks like a
  misspelt schema column (``corect``, ``answers``) is an error, because keeping it would silently
  ignore the data the user meant to give.

Different ``n`` per problem is allowed (a report lists it); problems with fewer samples than a
metric needs are excluded from that metric and listed with the reason.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kpass.data.columns import (
    _NULL,
    _NULLABLE_BOOL_COLUMNS,
    _NULLABLE_INT_COLUMNS,
    CATEGORICAL_COLUMNS,
    OPTIONAL_COLUMNS,
    REQUIRED_COLUMNS,
    SCHEMA_COLUMNS,
    Categorical,
    _check_correct_implies_finished,
    _check_extra_name,
    _Context,
    _describe_sources,
    _missing_hint,
    _to_bool,
    _to_categorical,
    _to_int,
    _to_verdicts,
    _unique_notes,
)
from kpass.errors import DataError

__all__ = [
    "CATEGORICAL_COLUMNS",
    "Categorical",
    "OPTIONAL_COLUMNS",
    "REQUIRED_COLUMNS",
    "SCHEMA_COLUMNS",
    "SampleTable",
]


class SampleTable:
    """One row per sample; columns are numpy arrays, categorical columns integer codes.

    Build with :meth:`from_records`, :meth:`from_columns` or :meth:`concat`; do not call the
    constructor. A built table has passed every check listed in the module docstring.

    Attributes
    ----------
    sources : list of str
        Files (or labels) the rows came from.
    extra_columns : tuple of str
        Columns outside the schema, kept as string metadata columns.
    notes : tuple of str
        What a reader wants every report on this table to say: samples, epochs or tasks it left
        out, and why (e.g. ``"run.eval: 3 unscored epochs left out"``). Give them with
        ``notes=`` when building the table; :meth:`concat` keeps the notes of every input (each
        once), and :func:`kpass.compute_report`, :func:`kpass.compute_comparison` and ``kpass
        budget`` copy them into their notes and JSON output. A note should name its file.
    task_groups : dict of str to tuple of str
        Groups of tasks the data defines (lm-eval's ``--tasks <group>``: group name -> its
        children, subtasks or groups; a subtask is a ``task`` name or a
        :data:`~kpass.reports.sample_checks.PIPELINE_OF_COLUMN` name of the rows). Reports grouped
        by task add one row per group, its leaf subtasks' problems pooled with the subtask as the
        cluster (:mod:`kpass.reports.task_groups`). A reader sets it; :meth:`concat` merges the
        inputs' groups (children of one name joined, each once).
    """

    __slots__ = (
        "_columns", "_categories", "_verdict_offsets", "_source_codes", "_lines", "sources",
        "extra_columns", "notes", "_index", "_category_arrays", "recorded_cluster_by", "task_groups",
    )

    def __init__(self) -> None:  # use the classmethods
        self._columns: dict[str, np.ndarray] = {}
        self._categories: dict[str, list[str]] = {}
        self._verdict_offsets: NDArray[np.int64] | None = None
        self._source_codes: NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._lines: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.sources: list[str] = []
        self.extra_columns: tuple[str, ...] = ()
        self.notes: tuple[str, ...] = ()
        #: Field the data says its problems are clustered by (a reader sets it, e.g. from the
        #: ``cluster=`` an Inspect log's kpass metrics recorded); reports use it when no
        #: ``--cluster-by`` is given. Kept by ``concat`` only when every input agrees.
        self.recorded_cluster_by: str | None = None
        self.task_groups: dict[str, tuple[str, ...]] = {}
        self._index: _ProblemIndex | None = None
        self._category_arrays: dict[str, np.ndarray] = {}

    # ---------------------------------------------------------------- construction

    @classmethod
    def from_columns(cls, columns: Mapping[str, Any], *, source: str,
                     lines: Sequence[int] | NDArray | None = None, notes: Iterable[str] = ()) -> "SampleTable":
        """Build a table from column arrays (the fast path for large data).

        Parameters
        ----------
        columns : Mapping[str, array_like] or pandas.DataFrame
            Column name -> values, all of one length. Categorical columns may be given as
            :class:`Categorical` (codes and categories) to skip factorizing strings.
        source : str
            File name or label, used in error messages.
        lines : sequence of int, optional
            1-based line (or row) number of each row in ``source``; default ``1..rows``.
        notes : iterable of str, optional
            What every report on this table should say (see :attr:`notes`).

        Raises
        ------
        DataError
            Any violation of the schema rules (module docstring), naming source, line and field.
        """
        table = cls._convert_columns(columns, source=source, lines=lines, notes=notes)
        table._validate_keys(table._context())
        return table

    @classmethod
    def _convert_columns(cls, columns: Mapping[str, Any], *, source: str, lines: Sequence[int] | NDArray | None,
                         notes: Iterable[str] = ()) -> "SampleTable":
        """Typed columns and every per-row check; the keys (duplicates, gaps) are checked by the caller."""
        if not isinstance(columns, Mapping) and hasattr(columns, "columns") and hasattr(columns, "__getitem__"):
            columns = {name: np.asarray(columns[name]) for name in columns.columns}  # a pandas DataFrame
        if not isinstance(columns, Mapping):
            raise TypeError(f"`columns` must be a mapping of column name -> values; got {type(columns).__name__}.")
        lengths = {name: len(values.codes) if isinstance(values, Categorical) else len(values)
                   for name, values in columns.items()}
        n_rows = next(iter(lengths.values()), 0)
        if n_rows == 0:
            raise DataError("no samples: the input is empty", source=source)
        if len(set(lengths.values())) > 1:
            raise DataError(f"columns have different lengths: {lengths}", source=source)
        line_numbers = (np.arange(1, n_rows + 1, dtype=np.int64) if lines is None
                        else np.asarray(lines, dtype=np.int64))
        if line_numbers.shape != (n_rows,):
            raise ValueError(f"`lines` must have one entry per row ({n_rows}); got shape {line_numbers.shape}.")
        ctx = _Context([source], np.zeros(n_rows, dtype=np.int32), line_numbers)
        missing = [name for name in REQUIRED_COLUMNS if name not in columns]
        if missing:
            raise DataError(
                f"missing required column(s) {', '.join(missing)}; a sample table needs "
                f"{', '.join(REQUIRED_COLUMNS)} (optional: {', '.join(OPTIONAL_COLUMNS)})"
                f"{_missing_hint(missing, columns)}",
                source=source, field=missing[0],
            )
        table = cls()
        table.notes = _unique_notes(notes)
        table.sources = [source]
        table._source_codes = ctx.source_codes
        table._lines = line_numbers
        extras = []
        for name, values in columns.items():
            if not isinstance(name, str):
                raise TypeError(f"column names must be strings; got {name!r}.")
            if name in CATEGORICAL_COLUMNS:
                table._columns[name], table._categories[name] = _to_categorical(
                    values, name, name not in REQUIRED_COLUMNS, ctx)
            elif name == "sample_index":
                table._columns[name] = _to_int(values, name, False, ctx)
            elif name == "correct":
                table._columns[name] = _to_bool(values, name, False, ctx)
            elif name in _NULLABLE_BOOL_COLUMNS:
                table._columns[name] = _to_bool(values, name, True, ctx)
            elif name in _NULLABLE_INT_COLUMNS:
                table._columns[name] = _to_int(values, name, True, ctx)
            elif name == "cot_verdicts":
                table._columns[name], table._verdict_offsets = _to_verdicts(values, name, ctx)
            elif name == "metadata":
                table._columns[name] = _as_object_array(values)
            else:
                _check_extra_name(name, values, ctx)
                table._columns[name], table._categories[name] = _to_categorical(values, name, True, ctx)
                extras.append(name)
        table.extra_columns = tuple(extras)
        if "finished" in table._columns:
            _check_correct_implies_finished(table._columns["correct"], table._columns["finished"], ctx)
        return table

    def _context(self) -> _Context:
        return _Context(self.sources, self._source_codes, self._lines)

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]], *, source: str,
                     lines: Sequence[int] | None = None, notes: Iterable[str] = ()) -> "SampleTable":
        """Build a table from one mapping per sample (JSON objects, adapter output).

        Parameters
        ----------
        records : iterable of Mapping[str, Any]
            One mapping per sample with the schema columns (and any extra columns).
        source : str
            File name or label, used in error messages.
        lines : sequence of int, optional
            1-based line of each record in ``source``; default ``1..len(records)``.
        notes : iterable of str, optional
            What every report on this table should say (see :attr:`notes`).

        Raises
        ------
        DataError
            A record that is not a mapping, or any schema violation (see :meth:`from_columns`).
        """
        columns, line_numbers = cls._records_to_columns(records, source=source, lines=lines)
        return cls.from_columns(columns, source=source, lines=line_numbers, notes=notes)

    @classmethod
    def from_record_chunks(cls, chunks: Iterable[tuple[Sequence[Mapping[str, Any]], Sequence[int]]], *,
                           source: str, notes: Iterable[str] = ()) -> "SampleTable":
        """Build a table from successive chunks of records, for readers that stream a large file.

        Each chunk ``(records, lines)`` is converted to typed columns (and its per-row checks
        run) before the next one is read, so only one chunk of Python objects is alive at a time;
        the keys (duplicates, ``0..n-1`` indices) are checked once over the whole table, so a
        problem's samples may span chunks.

        Parameters
        ----------
        chunks : iterable of (sequence of Mapping, sequence of int)
            Records and their 1-based lines in ``source``; empty chunks are skipped.
        source : str
            File name or label, used in error messages.
        notes : iterable of str, optional
            What every report on this table should say (see :attr:`notes`).

        Raises
        ------
        DataError
            As :meth:`from_records`; ``"no samples"`` when every chunk is empty.
        """
        parts = []
        for records, lines in chunks:
            if len(records) == 0:
                continue
            columns, line_numbers = cls._records_to_columns(records, source=source, lines=lines)
            parts.append(cls._convert_columns(columns, source=source, lines=line_numbers))
            del columns
        if not parts:
            raise DataError("no samples: the input is empty", source=source)
        return cls._concat(parts, notes=notes)

    @classmethod
    def _records_to_columns(cls, records: Iterable[Mapping[str, Any]], *, source: str,
                            lines: Sequence[int] | None) -> tuple[dict[str, np.ndarray], list[int]]:
        records = list(records)
        if not records:
            raise DataError("no samples: the input is empty", source=source)
        line_numbers = list(range(1, len(records) + 1)) if lines is None else list(lines)
        if len(line_numbers) != len(records):
            raise ValueError(f"`lines` must have one entry per record ({len(records)}); got {len(line_numbers)}.")
        names: dict[str, None] = {}
        for row, record in enumerate(records):
            if not isinstance(record, Mapping):
                raise DataError(f"a sample must be an object/mapping; got {type(record).__name__}",
                                source=source, line=line_numbers[row])
            if row == 0 or len(record) != len(names) or any(key not in names for key in record):
                for key in record:
                    names.setdefault(key, None)
        columns: dict[str, Any] = {}
        for name in names:
            if name in REQUIRED_COLUMNS:
                column = []
                for row, record in enumerate(records):
                    if name not in record:
                        raise DataError(f"missing required field '{name}'{_missing_hint([name], record)}",
                                        source=source, line=line_numbers[row], field=name)
                    column.append(record[name])
            else:
                column = [record.get(name) for record in records]
            array = np.empty(len(column), dtype=object)
            array[:] = column
            columns[name] = array
        for name in REQUIRED_COLUMNS:
            if name not in columns:
                raise DataError(f"missing required field '{name}'{_missing_hint([name], names)}",
                                source=source, line=line_numbers[0], field=name)
        return columns, line_numbers

    @classmethod
    def concat(cls, tables: Iterable["SampleTable"]) -> "SampleTable":
        """Stack tables (several files) into one, merging categories and checking keys again.

        Raises
        ------
        DataError
            The same ``(model, task, problem_id, sample_index)`` in two inputs (both named), or a
            problem whose samples are split between inputs so that indices are not ``0..n-1``.
        """
        tables = list(tables)
        if not tables:
            raise ValueError("`tables` is empty; nothing to concatenate.")
        for table in tables:
            if not isinstance(table, SampleTable):
                raise TypeError(f"`tables` must contain SampleTable objects; got {type(table).__name__}.")
        return cls._concat(tables)

    @classmethod
    def _concat(cls, tables: list["SampleTable"], notes: Iterable[str] = ()) -> "SampleTable":
        """Stack tables, keep every note once, and check the keys of the result."""
        notes = _unique_notes([*(note for table in tables for note in table.notes), *notes])
        if len(tables) == 1 and tables[0]._index is not None and notes == tables[0].notes:
            return tables[0]
        if len(tables) == 1:
            out = tables[0]
            out.notes = notes
            if out._index is None:
                out._validate_keys(out._context())
            return out
        out = cls()
        out.notes = notes
        recorded = {table.recorded_cluster_by for table in tables}
        out.recorded_cluster_by = recorded.pop() if len(recorded) == 1 else None
        groups: dict[str, dict[str, None]] = {}
        for table in tables:
            for group, members in table.task_groups.items():
                groups.setdefault(group, {}).update(dict.fromkeys(members))
        out.task_groups = {group: tuple(members) for group, members in groups.items()}
        sources: list[str] = []
        source_codes = []
        for table in tables:
            remap = np.array([_index_of(sources, name) for name in table.sources], dtype=np.int32)
            source_codes.append(remap[table._source_codes])
        out.sources = sources
        out._source_codes = np.concatenate(source_codes)
        out._lines = np.concatenate([t._lines for t in tables])
        names: dict[str, None] = {}
        for table in tables:
            for name in table._columns:
                names.setdefault(name, None)
        extras = []
        for name in names:
            if name in CATEGORICAL_COLUMNS or name in {e for t in tables for e in t.extra_columns}:
                merged: list[str] = []
                lookup: dict[str, int] = {}
                parts = []
                for table in tables:
                    if name in table._columns:
                        remap = np.array([lookup.setdefault(c, len(lookup)) for c in table._categories[name]]
                                         + [_NULL], dtype=np.int64)
                        codes = table._columns[name]
                        parts.append(remap[codes].astype(np.int32) if remap.size else codes)  # -1 -> last
                    else:
                        parts.append(np.full(len(table), _NULL, dtype=np.int32))
                merged = list(lookup)
                out._columns[name] = np.concatenate(parts)
                out._categories[name] = merged
                if name not in CATEGORICAL_COLUMNS:
                    extras.append(name)
            elif name == "cot_verdicts":
                flats, offsets, shift = [], [np.zeros(1, dtype=np.int64)], 0
                for table in tables:
                    if name in table._columns:
                        flat, table_offsets = table.verdicts()
                        flats.append(flat)
                        offsets.append(table_offsets[1:] + shift)
                        shift += len(flat)
                    else:
                        offsets.append(np.full(len(table), shift, dtype=np.int64))
                out._columns[name] = np.concatenate(flats) if flats else np.zeros(0, dtype=np.int8)
                out._verdict_offsets = np.concatenate(offsets)
            elif name == "metadata":
                parts = [t._columns[name] if name in t._columns else np.full(len(t), None, dtype=object)
                         for t in tables]
                out._columns[name] = np.concatenate(parts)
            else:  # numeric nullable columns; correct/sample_index always present
                fill = {"finished": np.int8}.get(name, np.int64)
                parts = [t._columns[name] if name in t._columns else np.full(len(t), _NULL, dtype=fill)
                         for t in tables]
                out._columns[name] = np.concatenate(parts)
        out.extra_columns = tuple(extras)
        out._validate_keys(out._context())
        return out

    # ---------------------------------------------------------------- validation and index

    def _validate_keys(self, ctx: _Context) -> None:
        index = _ProblemIndex.build(self)
        n_rows = len(self)
        order = index.order
        sample_index = self._columns["sample_index"][order]
        problem_of_row = np.repeat(np.arange(index.n_problems), index.n_samples)
        same_problem = problem_of_row[1:] == problem_of_row[:-1]
        duplicate = same_problem & (sample_index[1:] == sample_index[:-1])
        if duplicate.any():
            position = int(np.flatnonzero(duplicate)[0])
            first, second = sorted((int(order[position]), int(order[position + 1])))
            where_first = f"{self.sources[int(self._source_codes[first])]} line {int(self._lines[first])}"
            raise ctx.error(
                f"duplicate sample: (model, task, problem_id, sample_index) = "
                f"({self.describe_problem(first)}, {int(self._columns['sample_index'][first])}) appears "
                f"again here; first at {where_first}. Each sample must appear once (were two runs "
                f"concatenated? give them different model names)",
                second, "sample_index",
            )
        rank = np.arange(n_rows, dtype=np.int64) - np.repeat(index.starts, index.n_samples)
        misplaced = sample_index != rank
        if misplaced.any():
            position = int(np.flatnonzero(misplaced)[0])  # where the numbering first goes wrong
            problem = int(problem_of_row[position])
            row = int(order[position])
            indices = sample_index[index.starts[problem]: index.starts[problem] + index.n_samples[problem]]
            got = _describe_indices(indices)
            message = (f"samples of problem ({self.describe_problem(row)}) have sample_index {got}; "
                       f"expected 0..{int(index.n_samples[problem]) - 1} (0-based, no gaps)")
            others = self._same_problem_other_models(index, problem)
            if others:
                message += (f". The missing indices appear under model(s) {', '.join(map(repr, others))}: "
                            "this problem's samples look mixed up between models (a problem's samples "
                            "under one model must be numbered 0..n-1)")
            elif indices[0] == 1 and int(indices[-1]) == len(indices):
                message += ". If the indices are 1-based epochs, subtract 1"
            else:
                message += (". Some samples seem to be missing (dropped upstream?); kpass does not guess "
                            "which, so re-run them or renumber the samples you have")
            raise ctx.error(message, row, "sample_index")
        self._index = index

    def describe_problem(self, row: int) -> str:
        """``'model', 'task', 'problem_id'`` of the problem a row belongs to (for messages)."""
        return ", ".join(repr(self._categories[name][int(self._columns[name][row])])
                         for name in ("model", "task", "problem_id"))

    def _same_problem_other_models(self, index: "_ProblemIndex", problem: int) -> list[str]:
        """Models holding the same (task, problem_id) with sample indices disjoint from this one's."""
        same = ((index.task_codes == index.task_codes[problem]) & (index.problem_codes == index.problem_codes[problem])
                & (index.model_codes != index.model_codes[problem]))
        here = set(self._problem_sample_indices(index, problem))
        return [self._categories["model"][int(index.model_codes[other])] for other in np.flatnonzero(same).tolist()
                if not here & set(self._problem_sample_indices(index, other))]

    def _problem_sample_indices(self, index: "_ProblemIndex", problem: int) -> list[int]:
        rows = index.order[index.starts[problem]: index.starts[problem] + index.n_samples[problem]]
        return self._columns["sample_index"][rows].tolist()

    # ---------------------------------------------------------------- access

    def __len__(self) -> int:
        return len(self._lines)

    def __repr__(self) -> str:
        index = self._index
        return (f"<SampleTable {len(self)} samples, {index.n_problems if index else '?'} problems, "
                f"models={self.categories('model')[:5]}, columns={self.columns}>")

    @property
    def columns(self) -> tuple[str, ...]:
        """Names of the columns present (schema columns first, then extra columns)."""
        return tuple(name for name in (*SCHEMA_COLUMNS, *self.extra_columns) if name in self._columns)

    def has_column(self, name: str) -> bool:
        """Whether ``name`` is present (optional schema columns may be absent)."""
        return name in self._columns

    def is_categorical(self, name: str) -> bool:
        """Whether ``name`` is stored as codes plus categories."""
        return name in self._categories

    def codes(self, name: str) -> NDArray[np.integer]:
        """Integer codes of a categorical column (``-1`` = null)."""
        self._require(name)
        self._require_categorical(name)
        return self._columns[name]

    def categories(self, name: str) -> list[str]:
        """Category values of a categorical column, in order of first appearance."""
        self._require(name)
        self._require_categorical(name)
        return list(self._categories[name])

    def n_categories(self, name: str) -> int:
        """Number of distinct values of a categorical column (nulls not counted)."""
        self._require(name)
        self._require_categorical(name)
        return len(self._categories[name])

    def category_values(self, name: str) -> NDArray[np.object_]:
        """Category values of a categorical column as a read-only object array, so that
        ``table.category_values("problem_id")[codes]`` decodes many codes at once."""
        self._require(name)
        self._require_categorical(name)
        values = self._category_arrays.get(name)
        if values is None:
            values = np.empty(len(self._categories[name]), dtype=object)
            values[:] = self._categories[name]
            values.setflags(write=False)
            self._category_arrays[name] = values
        return values

    def raw_column(self, name: str) -> np.ndarray:
        """A column as stored, without decoding: integer codes (``-1`` null) for categorical
        columns, bool for ``correct``, int8 (``-1`` null) for ``finished``, int64 (``-1`` null)
        for ``sample_index``, ``output_tokens`` and ``answer_token``, objects for ``metadata``.
        Index it with table rows (e.g. ``problem_index.order``). For ``cot_verdicts`` use
        :meth:`verdicts`."""
        self._require(name)
        if name == "cot_verdicts":
            raise KeyError("'cot_verdicts' is stored flat with offsets; use SampleTable.verdicts()")
        return self._columns[name]

    def _require_categorical(self, name: str) -> None:
        if name not in self._categories:
            raise KeyError(f"column '{name}' is not categorical; categorical columns: {sorted(self._categories)}")

    def column(self, name: str) -> np.ndarray:
        """Values of a column; categorical ones decoded to an object array (``None`` = null).

        Nullable booleans are int8 and nullable integers int64 with ``-1`` for null. For
        ``cot_verdicts`` see :meth:`verdicts`.
        """
        self._require(name)
        if name in self._categories:
            lookup = np.array(self._categories[name] + [None], dtype=object)
            return lookup[self._columns[name]]
        if name == "cot_verdicts":
            flat, offsets = self.verdicts()
            return np.array([flat[offsets[i]:offsets[i + 1]].tolist() for i in range(len(self))], dtype=object)
        return self._columns[name]

    def verdicts(self) -> tuple[NDArray[np.int8], NDArray[np.int64]]:
        """CoT verdicts as ``(flat, offsets)``: row i's verdicts are ``flat[offsets[i]:offsets[i+1]]``
        with 1 = yes, 0 = no, -1 = invalid."""
        self._require("cot_verdicts")
        assert self._verdict_offsets is not None, "cot_verdicts without offsets"  # set with the column
        return self._columns["cot_verdicts"], self._verdict_offsets

    def error_location(self, row: int | None = None) -> dict[str, Any]:
        """``source=`` and ``line=`` keywords for a :class:`~kpass.DataError` about ``row``, or
        about the whole table (its sources, no line: no single line is at fault)."""
        if row is None:
            return {"source": _describe_sources(self.sources), "line": None}
        source, line = self.location(row)
        return {"source": source, "line": line}

    def location(self, row: int) -> tuple[str, int]:
        """``(source, line)`` of a row, for error messages."""
        return self.sources[int(self._source_codes[row])], int(self._lines[row])

    def to_records(self) -> list[dict[str, Any]]:
        """Rows as dicts (for small tables and tests); nulls as ``None``."""
        decoded = {}
        for name in self.columns:
            column = self.column(name)
            values: list[Any]
            if name in _NULLABLE_BOOL_COLUMNS:
                values = [None if v < 0 else bool(v) for v in column.tolist()]
            elif name in _NULLABLE_INT_COLUMNS:
                values = [None if v < 0 else v for v in column.tolist()]
            elif name == "cot_verdicts":
                values = [[None if x < 0 else bool(x) for x in row] for row in column]
            else:
                values = column.tolist()
            decoded[name] = values
        return [{name: decoded[name][i] for name in decoded} for i in range(len(self))]

    def with_categorical_columns(self, columns: Mapping[str, Any]) -> "SampleTable":
        """A copy with nullable string columns replaced or added (``answer``, ``gold``,
        ``cluster`` or extra columns); the keys and every other column are shared, not copied.

        Raises
        ------
        ValueError
            A column of another length, or a required or non-categorical schema column.
        """
        out = SampleTable()
        for slot in SampleTable.__slots__:
            setattr(out, slot, getattr(self, slot))
        out._columns = dict(self._columns)
        out._categories = dict(self._categories)
        out._category_arrays = {}
        extras = list(self.extra_columns)
        ctx = self._context()
        for name, values in columns.items():
            if name in REQUIRED_COLUMNS or (name in SCHEMA_COLUMNS and name not in CATEGORICAL_COLUMNS):
                raise ValueError(f"column {name!r} is not a nullable string column; it cannot be replaced.")
            if len(values) != len(self):
                raise ValueError(f"column {name!r} has {len(values)} values for {len(self)} rows.")
            if name not in SCHEMA_COLUMNS and name not in extras:
                _check_extra_name(name, values, ctx)
                extras.append(name)
            out._columns[name], out._categories[name] = _to_categorical(values, name, True, ctx)
        out.extra_columns = tuple(extras)
        return out

    def _require(self, name: str) -> None:
        if name not in self._columns:
            raise KeyError(f"the table has no column '{name}'; columns: {', '.join(self.columns)}")

    @property
    def problem_index(self) -> "_ProblemIndex":
        """Rows grouped by problem (model, task, problem_id), sorted by sample_index."""
        assert self._index is not None
        return self._index


def _index_of(items: list[str], value: str) -> int:
    try:
        return items.index(value)
    except ValueError:
        items.append(value)
        return len(items) - 1


def _as_object_array(values: Any) -> np.ndarray:
    array = np.empty(len(values), dtype=object)
    array[:] = list(values)
    return array


def _describe_indices(indices: NDArray[np.int64]) -> str:
    values = indices.tolist()
    if len(values) <= 8:
        return ", ".join(map(str, values))
    return ", ".join(map(str, values[:4])) + ", ..., " + ", ".join(map(str, values[-2:]))


@dataclasses.dataclass(frozen=True)
class _ProblemIndex:
    """Rows sorted by problem then sample_index, and per-problem counts (all vectorized).

    ``order`` permutes the rows; problem ``j`` holds sorted rows ``starts[j] : starts[j] + n_samples[j]``.
    Problems are sorted by (model code, task code, problem code).
    """

    order: NDArray[np.int64]
    starts: NDArray[np.int64]
    n_samples: NDArray[np.int64]
    n_correct: NDArray[np.int64]
    model_codes: NDArray[np.int64]
    task_codes: NDArray[np.int64]
    problem_codes: NDArray[np.int64]

    @property
    def n_problems(self) -> int:
        return len(self.starts)

    @classmethod
    def build(cls, table: SampleTable) -> "_ProblemIndex":
        model = table._columns["model"]
        task = table._columns["task"]
        problem = table._columns["problem_id"]
        sample_index = table._columns["sample_index"]
        sizes = [max(len(table._categories[name]), 1) for name in ("model", "task", "problem_id")]
        max_index = int(sample_index.max()) + 1
        if math.prod(sizes) * max_index < 2**62:
            key = model.astype(np.int64)
            key *= sizes[1]
            key += task
            key *= sizes[2]
            key += problem
            problem_key = key.copy()
            key *= max_index
            key += sample_index
            order = np.argsort(key, kind="stable")
            del key
            sorted_problem_key = problem_key[order]
            del problem_key
            change = np.empty(len(order), dtype=bool)
            change[0] = True
            np.not_equal(sorted_problem_key[1:], sorted_problem_key[:-1], out=change[1:])
            del sorted_problem_key
        else:  # astronomically many categories: fall back to a 4-key lexsort
            order = np.lexsort((sample_index, problem, task, model))
            change = np.empty(len(order), dtype=bool)
            change[0] = True
            change[1:] = False
            for column in (model, task, problem):
                sorted_column = column[order]
                change[1:] |= sorted_column[1:] != sorted_column[:-1]
        starts = np.flatnonzero(change).astype(np.int64)
        del change
        n_samples = np.diff(np.append(starts, len(order)))
        correct_sorted = table._columns["correct"][order]
        cumulative = np.concatenate([[0], np.cumsum(correct_sorted, dtype=np.int64)])
        del correct_sorted
        n_correct = cumulative[starts + n_samples] - cumulative[starts]
        first_rows = order[starts]
        return cls(
            order=order, starts=starts, n_samples=n_samples.astype(np.int64), n_correct=n_correct,
            model_codes=model[first_rows].astype(np.int64), task_codes=task[first_rows].astype(np.int64),
            problem_codes=problem[first_rows].astype(np.int64),
        )

    def rows_of(self, problems: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Table rows of the given problems, concatenated in problem order, and their offsets."""
        lengths = self.n_samples[problems]
        offsets = np.zeros(len(problems) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        if offsets[-1] == 0:
            return np.zeros(0, dtype=np.int64), offsets
        within = np.arange(offsets[-1], dtype=np.int64) - np.repeat(offsets[:-1], lengths)
        positions = np.repeat(self.starts[problems], lengths) + within
        return self.order[positions], offsets
