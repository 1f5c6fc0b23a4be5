"""The built-in readers of sample tables stored as JSONL, CSV and Parquet.

A reader is any object with ``can_read(path) -> bool`` and ``read(path) -> SampleTable``
(optionally ``description`` and ``suffixes`` for listings), registered through the
``register_readers`` hook. :func:`kpass.read_samples` (in :mod:`kpass.host.lookups`) expands
glob patterns (:func:`kpass.data.sources.expand_globs`, one rule for every reader), then picks,
for every file or directory, the one reader that recognises it (or the reader named by the
caller). Optional methods: ``expand(paths) -> (paths, notes)`` turns all the inputs a reader was
chosen for into what it reads, with notes naming what it leaves out (the Inspect reader: a log
directory into its logs, a merged log and its shards into one of them); ``identity(path)``
tells runs of one model and task apart before reading (see :func:`kpass.read_samples`).

File formats (schema in :mod:`kpass.data.table`):

- JSONL (``.jsonl``, ``.ndjson``, optionally ``.gz``): one JSON object per line; blank lines are
  skipped; ``NaN`` is read and then rejected wherever a number or boolean is required.
- CSV (``.csv``, optionally ``.gz``): a header line, then one sample per line; an empty cell is
  null; ``cot_verdicts`` is a JSON list in its cell (``"[true, null]"``).
- Parquet (``.parquet``, ``.pq``; needs ``pyarrow``): one column per field; string columns are
  dictionary-encoded without converting rows to Python. Errors name the 1-based row as the line.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import pathlib
from collections.abc import Callable, Mapping
from typing import IO, Any

import numpy as np

from kpass.errors import DataError
from kpass.data.table import Categorical, SampleTable
from kpass.data.validation import TEXT_ENCODING, empty_file_error, loads_json_strict

__all__ = ["CsvReader", "JsonlReader", "ParquetReader"]

Progress = Callable[[int], None]


def _open_text(path: pathlib.Path, newline: str = "") -> IO[str]:
    """Text of a (possibly gzipped) file, lines untranslated; ``newline="\\n"`` splits lines on
    ``\\n`` only (JSON Lines), ``""`` on any line ending (CSV)."""
    if path.name.lower().endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding=TEXT_ENCODING, newline=newline)
    return open(path, encoding=TEXT_ENCODING, newline=newline)


def _open_bytes(path: pathlib.Path, source: str) -> IO[bytes]:
    """The bytes of a (possibly gzipped) file; ``DataError`` naming it when it cannot be opened."""
    try:
        handle: Any = gzip.open(path, "rb") if path.name.lower().endswith(".gz") else open(path, "rb")
        return handle
    except OSError as exc:
        raise DataError(f"cannot open: {exc}", source=source) from None


def _not_utf8(exc: UnicodeDecodeError, column: int) -> str:
    """The one-line message of bytes that are not UTF-8 (``column``: 1-based, in the line)."""
    return f"not UTF-8 text: byte 0x{exc.object[exc.start]:02x} at column {column} ({exc.reason})"


def _decoded(data: bytes, source: str) -> str:
    """``data`` as UTF-8 text (a leading byte-order mark skipped); ``DataError`` naming the line
    (any line ending: ``\n``, ``\r\n``, ``\r``) and column of the first byte that is not UTF-8."""
    try:
        return data.decode(TEXT_ENCODING)
    except UnicodeDecodeError as exc:
        before = data[:exc.start]
        line = before.count(b"\n") + before.count(b"\r") - before.count(b"\r\n") + 1
        start = max(before.rfind(b"\n"), before.rfind(b"\r")) + 1
        raise DataError(_not_utf8(exc, exc.start - start + 1), source=source, line=line) from None


#: Lines of a JSON Lines file parsed into Python objects at a time (then turned into typed
#: columns), so that a large file never holds one dict per row all at once.
JSONL_CHUNK_LINES = 1 << 20


class _SuffixReader:
    """A built-in reader that recognises its files by their suffixes (``suffixes``)."""

    suffixes: tuple[str, ...] = ()

    def matches_suffix(self, path: str | os.PathLike) -> bool:
        return pathlib.Path(path).name.lower().endswith(self.suffixes)

    def can_read(self, path: str | os.PathLike) -> bool:
        return self.matches_suffix(path)


class JsonlReader(_SuffixReader):
    """Sample tables as JSON Lines: one JSON object (one sample) per line."""

    name = "jsonl"
    suffixes = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")
    description = "kpass sample table, one JSON object per line"

    def can_read(self, path: str | os.PathLike) -> bool:
        """Suffix ``.jsonl``/``.ndjson`` and a first record that is not some other tool's log
        (it has ``problem_id``, or cannot be told apart: empty or broken files are ours to report)."""
        path = pathlib.Path(path)
        if not self.matches_suffix(path):
            return False
        try:
            with _open_text(path) as handle:
                for line in handle:
                    if line.strip():
                        if line.strip() == "[":  # one indented JSON array (old lm-eval logs), not JSON Lines
                            return False
                        record = loads_json_strict(line)
                        return not isinstance(record, dict) or "problem_id" in record
        except (OSError, UnicodeDecodeError, ValueError, EOFError):
            return True
        return True

    def read(self, path: str | os.PathLike, *, progress: Progress | None = None) -> SampleTable:
        """Read the file in chunks of :data:`JSONL_CHUNK_LINES` lines (see
        :meth:`SampleTable.from_record_chunks`); errors name the file and the line."""
        path = pathlib.Path(path)
        source = str(path)
        handle = self.open(path)
        if progress is not None:
            progress(0)
        with handle:
            table = SampleTable.from_record_chunks(self._chunks(handle, source, progress), source=source)
        return table

    @staticmethod
    def open(path: pathlib.Path) -> IO[bytes]:
        """The file's bytes, for :meth:`_chunks` (lines are decoded one at a time, so that bytes
        that are not UTF-8 are reported on their own line)."""
        return _open_bytes(path, str(path))

    @staticmethod
    def _chunks(handle: IO[bytes], source: str, progress: Progress | None):
        """``(records, lines)`` of successive runs of about JSONL_CHUNK_LINES lines of a binary
        handle (:meth:`open`): lines split on ``\\n`` only, each decoded as UTF-8."""
        loads = loads_json_strict  # duplicate keys and deep nesting are errors too
        records: list[Any] = []
        lines: list[int] = []
        number = 0
        yielded = False
        while True:
            try:
                data = handle.readline()
            except (OSError, EOFError, ValueError) as exc:  # a damaged gzip stream, ...
                raise DataError(f"cannot read the file: {exc}", source=source, line=number + 1) from None
            if not data:
                break
            number += 1
            if number == 1 and data.startswith(b"\xef\xbb\xbf"):
                data = data[3:]  # a byte-order mark (TEXT_ENCODING)
            try:
                line = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(_not_utf8(exc, exc.start + 1), source=source, line=number) from None
            if not line.strip():
                continue
            try:
                record = loads(line)
            except ValueError as exc:
                if not isinstance(exc, json.JSONDecodeError):  # a duplicate key, nesting too deep
                    raise DataError(f"invalid JSON: {exc}", source=source, line=number,
                                    field=getattr(exc, "key", None)) from None
                if not line.endswith("\n"):  # the last line, cut short
                    message = (f"truncated last line (no newline at the end and the JSON is incomplete: "
                               f"{exc.msg} at column {exc.colno}); was the file still being written?")
                else:
                    message = f"invalid JSON: {exc.msg} at column {exc.colno}"
                raise DataError(message, source=source, line=number) from None
            if not isinstance(record, dict):
                raise DataError(f"each line must be a JSON object (one sample); got {type(record).__name__}",
                                source=source, line=number)
            records.append(record)
            lines.append(number)
            if progress is not None and number % 65536 == 0:
                progress(number)
            if len(records) >= JSONL_CHUNK_LINES:
                yielded = True
                yield records, lines
                records, lines = [], []
        if not records and not yielded:
            raise DataError(empty_file_error(source) or "the file is empty: no samples", source=source, line=1)
        if records:
            yield records, lines
        if progress is not None:
            progress(number)


class CsvReader(_SuffixReader):
    """Sample tables as CSV with a header line; empty cells are null."""

    name = "csv"
    suffixes = (".csv", ".csv.gz")
    description = "kpass sample table as CSV with a header"

    def read(self, path: str | os.PathLike, *, progress: Progress | None = None) -> SampleTable:
        path = pathlib.Path(path)
        source = str(path)
        with _open_bytes(path, source) as handle:
            try:
                data = handle.read()
            except (OSError, EOFError, ValueError) as exc:
                raise DataError(f"cannot read the file: {exc}", source=source, line=1) from None
        raw = _decoded(data, source)
        reader = csv.reader(io.StringIO(raw, newline=""), strict=True)  # an unterminated quote is an error
        try:
            header = next(reader, None)
        except csv.Error as exc:
            raise DataError(f"malformed CSV header: {exc}", source=source, line=1) from None
        if header is None or not any(cell.strip() for cell in header):
            raise DataError(empty_file_error(source) or "the file is empty: no header and no samples", source=source, line=1)
        header = [cell.strip() for cell in header]
        duplicates = sorted({name for name in header if header.count(name) > 1})
        if duplicates:
            raise DataError(f"duplicate column(s) in the header: {', '.join(duplicates)}", source=source, line=1,
                            field=duplicates[0])
        columns: list[list[Any]] = [[] for _ in header]
        lines: list[int] = []
        width = len(header)
        ends_with_newline = raw.endswith("\n")
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                raise DataError(f"malformed CSV ({exc}); a truncated last line?", source=source,
                                line=reader.line_num) from None
            number = reader.line_num
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if len(row) != width:
                truncated = not ends_with_newline and number >= raw.count("\n") + 1
                hint = " (truncated last line: was the file still being written?)" if truncated else ""
                field = header[len(row)] if len(row) < width else None
                raise DataError(f"expected {width} fields as in the header, got {len(row)}{hint}", source=source,
                                line=number, field=field)
            for column, cell in zip(columns, row):
                column.append(cell if cell != "" else None)
            lines.append(number)
            if progress is not None and number % 65536 == 0:
                progress(number)
        if not lines:
            raise DataError("the file has a header but no samples", source=source, line=2)
        arrays = {}
        for name, values in zip(header, columns):
            array = np.empty(len(values), dtype=object)
            array[:] = values
            arrays[name] = array
        return SampleTable.from_columns(arrays, source=source, lines=lines)


class ParquetReader(_SuffixReader):
    """Sample tables as Parquet (needs pyarrow); strings are dictionary-encoded in Arrow."""

    name = "parquet"
    suffixes = (".parquet", ".pq")
    description = "kpass sample table as Parquet (needs pyarrow)"

    def read(self, path: str | os.PathLike, *, progress: Progress | None = None) -> SampleTable:
        path = pathlib.Path(path)
        source = str(path)
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise DataError("reading Parquet needs pyarrow: pip install pyarrow", source=source) from None
        try:
            _check_parquet_names(pq.read_schema(path).names, source)
            arrow = pq.read_table(path)
        except (OSError, pa.ArrowException) as exc:
            raise DataError(f"not a readable Parquet file: {_first_line(exc)}", source=source, line=1) from None
        if arrow.num_rows == 0:
            raise DataError(empty_file_error(source) or "the file is empty: no samples", source=source, line=1)
        columns = _arrow_columns(arrow, source)
        if progress is not None:
            progress(arrow.num_rows)
        return SampleTable.from_columns(columns, source=source)

    @staticmethod
    def chunks(path: pathlib.Path, extra: dict[str, str] | None = None, batch_rows: int = 1 << 20):
        """Typed, per-row-checked tables of successive row batches (keys not checked), with the
        1-based row as the line; ``extra`` adds constant columns (hive partition values)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        source = str(path)
        try:
            handle = pq.ParquetFile(path)
            _check_parquet_names(handle.schema_arrow.names, source)
        except (OSError, pa.ArrowException) as exc:
            raise DataError(f"not a readable Parquet file: {_first_line(exc)}", source=source, line=1) from None
        if handle.metadata.num_rows == 0:
            raise DataError(empty_file_error(source) or "the file is empty: no samples", source=source, line=1)
        first = 1
        batches = handle.iter_batches(batch_size=batch_rows)
        while True:
            try:  # a damaged page shows only when its batch is decoded
                batch = next(batches, None)
            except (OSError, pa.ArrowException) as exc:
                raise DataError(f"not a readable Parquet file: {_first_line(exc)}", source=source,
                                line=first) from None
            if batch is None:
                if first - 1 != handle.metadata.num_rows:
                    raise DataError(f"not a readable Parquet file: its footer counts {handle.metadata.num_rows} "
                                    f"rows, its pages hold {first - 1}", source=source, line=first)
                break
            arrow = pa.Table.from_batches([batch])
            columns = _arrow_columns(arrow, source, first)
            lines = np.arange(first, first + arrow.num_rows, dtype=np.int64)
            first += arrow.num_rows
            for name, value in (extra or {}).items():
                if name in columns:  # the file's own values must equal it where they are not null
                    _check_against_partition(columns[name], name, value, source, int(lines[0]))
                columns[name] = np.full(arrow.num_rows, value, dtype=object)
            yield SampleTable._convert_columns(columns, source=source, lines=lines)


def _check_against_partition(values: Any, key: str, value: str, source: str, first_line: int) -> None:
    """Refuse the first row of a raw column (as :func:`_arrow_columns` makes it) whose own value
    is not null and differs from its hive partition's ``value`` (as :func:`check_partition_values`)."""
    from kpass.data.columns import _stringify

    if isinstance(values, Categorical):
        texts = np.array([_stringify(category) for category in values.categories] + [value], dtype=object)
        codes = np.asarray(values.codes)
        own = texts[np.where(codes >= 0, codes, len(texts) - 1)]  # a null reads as the partition's value
    else:  # numbers or objects: the rows one by one (a partition key written as a number is rare)
        own = np.array([value if v is None or (isinstance(v, float) and v != v) else _stringify(v)
                        for v in values.tolist()], dtype=object)
    differs = np.flatnonzero(own != value)
    if differs.size:
        row = int(differs[0])
        raise partition_contradiction(key, value, own[row], source=source, line=first_line + row)


def partition_contradiction(key: str, value: str, own: str, *, source: str, line: int | None) -> DataError:
    """The error of a row whose own ``key`` (``own``, as text) is not its hive partition's ``value``:
    ``model=a/part.parquet`` holding ``model = "b"`` is a contradiction, not an override."""
    return DataError(f"the partition directory {key}={value} contradicts the file's own `{key}` {own!r}; "
                     "which is meant?", source=source, line=line, field=key)


def check_partition_values(table: SampleTable, partitions: Mapping[str, str]) -> None:
    """Refuse a row whose own value of a hive partition key differs from the partition's (a null
    is filled by the partition): :func:`partition_contradiction`.

    Raises
    ------
    DataError
        The first such row: file, line, field.
    """
    for key, value in partitions.items():
        if not table.has_column(key) or not table.is_categorical(key):
            continue
        codes = table.codes(key)
        differs = np.flatnonzero((codes >= 0) & (table.category_values(key)[np.maximum(codes, 0)] != value))
        if differs.size:
            row = int(differs[0])
            source, line = table.location(row)
            raise partition_contradiction(key, value, table.categories(key)[int(codes[row])], source=source, line=line)


def _first_line(exc: BaseException) -> str:
    """The first line of an exception's text (pyarrow's messages can go on with the schema)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _check_parquet_names(names: list[str], source: str) -> None:
    """``DataError`` for a column name the file holds twice (which column is meant?)."""
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise DataError(f"duplicate column(s) in the file: {', '.join(duplicates)}", source=source, line=1,
                        field=duplicates[0])


def _as_text(column, name: str, source: str, first_line: int):
    """A Parquet BINARY column as UTF-8 text (every engine reads ``b"a"`` as ``"a"``);
    ``DataError`` at the first value that is not UTF-8."""
    import pyarrow as pa

    try:
        return column.cast(pa.large_string())
    except pa.ArrowException:
        for row, value in enumerate(column.to_pylist()):  # the error path only: find the row
            try:
                None if value is None else bytes(value).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(_not_utf8(exc, exc.start + 1), source=source, line=first_line + row,
                                field=name) from None
        raise


def _arrow_columns(arrow, source: str = "", first_line: int = 1) -> dict[str, Any]:
    """Column arrays of an Arrow table for :meth:`SampleTable.from_columns` (strings
    dictionary-encoded without converting rows to Python; nulls of numbers as NaN; BINARY
    columns decoded as UTF-8 text)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    columns: dict[str, Any] = {}
    for name in arrow.column_names:
        column = arrow.column(name).combine_chunks()
        kind = column.type
        if pa.types.is_dictionary(kind):
            column = column.cast(kind.value_type)
            kind = column.type
        if pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_fixed_size_binary(kind):
            column = _as_text(column, name, source, first_line)
            kind = column.type
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            if name in ("sample_index", "correct", "finished", "output_tokens", "answer_token", "cot_verdicts"):
                columns[name] = np.array(column.to_pylist(), dtype=object)
                continue
            encoded = pc.dictionary_encode(column)
            codes = encoded.indices.to_numpy(zero_copy_only=False)
            codes = np.where(encoded.is_null().to_numpy(zero_copy_only=False), -1, codes).astype(np.int64)
            columns[name] = Categorical(codes=codes, categories=encoded.dictionary.to_pylist())
        elif pa.types.is_floating(kind) and pc.any(pc.is_nan(column)).as_py():
            # a NaN value is not a null: the rules see it as they see JSONL's NaN (no guess)
            columns[name] = np.array(column.to_pylist() + [None], dtype=object)[:-1]
        elif pa.types.is_boolean(kind) or pa.types.is_integer(kind) or pa.types.is_floating(kind):
            if column.null_count:
                values = column.cast(pa.float64()).to_numpy(zero_copy_only=False)  # nulls -> NaN
                if pa.types.is_boolean(kind) or pa.types.is_integer(kind):
                    values = np.where(column.is_null().to_numpy(zero_copy_only=False), np.nan, values)
                columns[name] = values
            else:
                columns[name] = column.to_numpy(zero_copy_only=False)
        else:
            columns[name] = np.array(column.to_pylist() + [None], dtype=object)[:-1]
    return columns


