"""Existing leaderboard tables (CSV or Markdown) read, and new columns joined onto them.

``kpass leaderboard --extend TABLE`` keeps every row, column, line ending and line outside the
table exactly as it was and appends the new columns (:func:`extend_table`); rows whose key names
no model get empty cells and are listed in :meth:`ExtendResult.report`.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kpass.errors import DataError

__all__ = ["ExtendResult", "LeaderboardTable", "extend_table", "read_leaderboard_table"]

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\n|\r)|[^\r\n]+$")
_MD_DELIMITER_CELL = re.compile(r"^\s*:?-+:?\s*$")
_MD_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def _split_lines(text: str) -> list[str]:
    """Physical lines with their terminators, split exactly as ``open(newline='')`` does."""
    return _LINE.findall(text)


def _strip_terminator(line: str) -> tuple[str, str]:
    body = line.rstrip("\r\n")
    return body, line[len(body):]


@dataclass(frozen=True)
class LeaderboardTable:
    """An existing leaderboard table read from a CSV or Markdown file.

    Attributes
    ----------
    source : str
        File name, for messages.
    format : {"csv", "markdown"}
        Format of the file.
    header : tuple of str
        Column names (stripped cell texts).
    rows : tuple of tuple of str
        Cell texts of the body rows (stripped; Markdown escapes kept).
    row_lines : tuple of int
        1-based line number on which each body row starts.
    """

    source: str
    format: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    row_lines: tuple[int, ...]
    _text: str
    _header_line: int          # 0-based physical line index of the header (last line of the record)
    _delimiter_line: int | None
    _row_line_ends: tuple[int, ...]   # 0-based index of the last physical line of each body row
    _csv_delimiter: str = ","

    def column(self, name: str) -> int:
        """Index of column ``name`` (compared without surrounding whitespace, BOM or emphasis;
        ignoring case when only one column matches that way)."""
        wanted = _normalize_key(name, markdown=self.format == "markdown")
        names = [_normalize_key(cell, markdown=self.format == "markdown") for cell in self.header]
        if wanted in names:
            return names.index(wanted)
        folded = [i for i, cell in enumerate(names) if cell.casefold() == wanted.casefold()]
        if len(folded) == 1:
            return folded[0]
        raise ValueError(f"{self.source}: no column named {name!r} (the `--key` option); the table "
                         f"has columns {list(self.header)}.")


def _normalize_key(cell: str, *, markdown: bool) -> str:
    text = cell.replace("\ufeff", "").strip()
    if markdown:
        link = re.fullmatch(r"\[(.*)\]\([^)]*\)", text)
        if link:
            text = link.group(1).strip()
        for mark in ("**", "__", "`", "*", "_"):
            if len(text) > 2 * len(mark) and text.startswith(mark) and text.endswith(mark):
                text = text[len(mark):-len(mark)].strip()
        text = text.replace("\\|", "|")
        link = re.fullmatch(r"\[(.*)\]\([^)]*\)", text)
        if link:
            text = link.group(1).strip()
    return text


def _split_markdown_row(line: str) -> list[str]:
    inner = line.strip()
    if inner.startswith("|"):
        inner = inner[1:]
    if inner.endswith("|") and not inner.endswith("\\|"):
        inner = inner[:-1]
    return [cell.strip() for cell in _MD_UNESCAPED_PIPE.split(inner)]


def _read_markdown_table(text: str, source: str, key: str | None) -> LeaderboardTable:
    lines = [_strip_terminator(line)[0] for line in _split_lines(text)]
    candidates = []
    index = 0
    while index + 1 < len(lines):
        header_line, delimiter_line = lines[index], lines[index + 1]
        if "|" in header_line and "-" in delimiter_line:
            header = _split_markdown_row(header_line)
            delimiters = _split_markdown_row(delimiter_line)
            if (len(header) == len(delimiters)
                    and all(_MD_DELIMITER_CELL.match(cell) for cell in delimiters)):
                end = index + 2
                while end < len(lines) and lines[end].strip() and "|" in lines[end]:
                    end += 1
                rows = tuple(tuple(_split_markdown_row(lines[i])) for i in range(index + 2, end))
                for line_index, row in zip(range(index + 2, end), rows):
                    if len(row) > len(header):
                        raise DataError(
                            f"the row has {len(row)} cells but the table header has {len(header)}; "
                            f"new columns cannot be placed unambiguously", source=source,
                            line=line_index + 1)
                table = LeaderboardTable(
                    source=source, format="markdown", header=tuple(header), rows=rows,
                    row_lines=tuple(range(index + 3, end + 1)), _text=text, _header_line=index,
                    _delimiter_line=index + 1, _row_line_ends=tuple(range(index + 2, end)))
                candidates.append(table)
                index = end
                continue
        index += 1
    if not candidates:
        raise DataError("no Markdown pipe table found (a header row, a `|---|` delimiter row, then "
                        "body rows)", source=source)
    if key is None:
        return candidates[0]
    for table in candidates:
        try:
            table.column(key)
        except ValueError:
            continue
        return table
    raise ValueError(f"{source}: no Markdown table has a column named {key!r} (the `--key` option); "
                     f"tables found have columns {[list(t.header) for t in candidates]}.")


def _read_csv_table(text: str, source: str) -> LeaderboardTable:
    physical = _split_lines(text)
    first = next((line for line in physical if line.strip()), "")
    if source.lower().endswith((".tsv", ".tab")):
        delimiter = "\t"
    else:   # the header decides: a comma, else a semicolon, else a tab
        delimiter = next((d for d in (",", ";", "\t") if d in first), ",")
    consumed = iter(physical)
    reader = csv.reader(consumed, delimiter=delimiter, strict=True)  # an unterminated quote is an error
    header: tuple[str, ...] | None = None
    header_line = -1
    rows: list[tuple[str, ...]] = []
    row_lines: list[int] = []
    row_ends: list[int] = []
    start = 0
    try:
        for record in reader:
            end = reader.line_num          # physical lines consumed so far
            if record and any(cell.strip() for cell in record):
                if header is None:
                    header = tuple(cell.replace("\ufeff", "").strip() for cell in record)
                    header_line = end - 1
                else:
                    if len(record) > len(header):
                        raise DataError(
                            f"the row has {len(record)} cells but the header has {len(header)}; new "
                            f"columns cannot be placed unambiguously", source=source, line=start + 1)
                    rows.append(tuple(record))
                    row_lines.append(start + 1)
                    row_ends.append(end - 1)
            start = end
    except csv.Error as error:
        raise DataError(f"malformed CSV ({error}: an unterminated quote?)", source=source,
                        line=reader.line_num) from None
    if header is None:
        raise DataError("the CSV file has no header row", source=source)
    return LeaderboardTable(source=source, format="csv", header=header, rows=tuple(rows),
                            row_lines=tuple(row_lines), _text=text, _header_line=header_line,
                            _delimiter_line=None, _row_line_ends=tuple(row_ends),
                            _csv_delimiter=delimiter)


def read_leaderboard_table(path: str | os.PathLike[str], *, key: str | None = None,
                           format: str | None = None) -> LeaderboardTable:
    """Read an existing leaderboard table from a CSV or Markdown file.

    Parameters
    ----------
    path : path-like
        ``.csv``/``.tsv`` files are read as CSV (delimiter: tab for ``.tsv``, else the first of
        ``,``, ``;``, tab found in the header line),
        ``.md``/``.markdown`` files as Markdown: the first pipe table (having column ``key`` when
        given) is used, and every other line of the file is kept as it is.
    key : str, optional
        Column that names the model; with Markdown, selects the table.
    format : {"csv", "markdown"}, optional
        Overrides the format guessed from the suffix.

    Returns
    -------
    LeaderboardTable

    Raises
    ------
    kpass.DataError
        If the file holds no table or a malformed record (naming the file and the line).
    ValueError
        If no table has the column ``key``, or the format cannot be told from the suffix.
    """
    source = os.fspath(path)
    if format is None:
        suffix = Path(source).suffix.lower()
        if suffix in (".md", ".markdown"):
            format = "markdown"
        elif suffix in (".csv", ".tsv", ".tab", ".txt"):
            format = "csv"
        else:
            raise ValueError(f"{source}: cannot tell the table format from the suffix {suffix!r}; "
                             f"use a .csv or .md file.")
    with open(source, encoding="utf-8", newline="") as handle:
        text = handle.read()
    if format == "markdown":
        return _read_markdown_table(text, source, key)
    if format == "csv":
        return _read_csv_table(text, source)
    raise ValueError(f"`format` must be 'csv' or 'markdown'; got {format!r}.")


@dataclass(frozen=True)
class ExtendResult:
    """An existing leaderboard table with new columns joined on.

    Attributes
    ----------
    text : str
        The whole file with the new columns appended to the table (every other byte unchanged).
    matched : dict of int to str
        Body-row index -> model joined onto that row.
    unmatched_rows : tuple of (int, str)
        (line number, key) of rows that match no model; their new cells are empty.
    unmatched_models : tuple of str
        Models that match no row (not added to the table).
    duplicate_keys : tuple of str
        Keys that occur on more than one row (each such row gets the model's values).
    """

    text: str
    matched: dict[int, str]
    unmatched_rows: tuple[tuple[int, str], ...]
    unmatched_models: tuple[str, ...]
    duplicate_keys: tuple[str, ...]

    def report(self) -> str:
        """A human-readable summary of the join (for stderr)."""
        parts = [f"joined {len(set(self.matched.values()))} model(s) onto {len(self.matched)} row(s)"]
        if self.unmatched_rows:
            listed = ", ".join(f"{key!r} (line {line})" for line, key in self.unmatched_rows)
            parts.append(f"{len(self.unmatched_rows)} row(s) match no model: {listed}")
        if self.unmatched_models:
            parts.append(f"{len(self.unmatched_models)} model(s) match no row: "
                         + ", ".join(repr(m) for m in self.unmatched_models))
        if self.duplicate_keys:
            parts.append("keys on more than one row: " + ", ".join(repr(k) for k in self.duplicate_keys))
        return "; ".join(parts) + "."


def _match_models(keys: Sequence[str], models: Sequence[str]) -> list[str | None]:
    """Exact match first; then a case-insensitive match when it is unique."""
    exact = set(models)
    folded: dict[str, list[str]] = {}
    for model in models:
        folded.setdefault(model.casefold(), []).append(model)
    matches: list[str | None] = []
    for key in keys:
        if key in exact:
            matches.append(key)
        elif len(folded.get(key.casefold(), [])) == 1:
            matches.append(folded[key.casefold()][0])
        else:
            matches.append(None)
    return matches


def _csv_cells(cells: Sequence[str], delimiter: str) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, lineterminator="").writerow(list(cells))
    return buffer.getvalue()


def _append_markdown(line: str, cells: Sequence[str]) -> str:
    body = line.rstrip()
    trailing = line[len(body):]
    escaped = [cell.replace("|", "\\|") for cell in cells]  # the caller escapes HTML and controls
    if body.endswith("|") and not body.endswith("\\|"):
        return body + " " + " | ".join(escaped) + " |" + trailing
    return body + " | " + " | ".join(escaped) + trailing


def extend_table(table: LeaderboardTable, key: str, columns: Sequence[str],
                 values: Mapping[str, Sequence[str]]) -> ExtendResult:
    """Append ``columns`` to an existing table, filling each row from the model named in ``key``.

    The existing rows, columns, cell texts, quoting, line endings and (for Markdown) every line
    outside the table are kept exactly: new cells are appended to the end of each table line.
    Rows shorter than the header get empty cells first so the new columns line up.

    Parameters
    ----------
    table : LeaderboardTable
        From :func:`read_leaderboard_table`.
    key : str
        Column naming the model. A row matches a model whose name equals the key cell (stripped;
        in Markdown also stripped of a link or emphasis), or equals it ignoring case when only one
        model does.
    columns : sequence of str
        Names of the new columns; a name already in the table gets the suffix ``" (kpass)"``.
    values : mapping of str to sequence of str
        Model -> its cells for ``columns``.

    Returns
    -------
    ExtendResult
    """
    key_index = table.column(key)
    markdown = table.format == "markdown"
    existing = {_normalize_key(c, markdown=markdown) for c in table.header}
    new_columns = [c + " (kpass)" if c in existing else c for c in columns]
    for model, cells in values.items():
        if len(cells) != len(columns):
            raise ValueError(f"model {model!r} has {len(cells)} values for {len(columns)} columns.")
    width = len(table.header)
    keys = [_normalize_key(row[key_index], markdown=markdown) if key_index < len(row) else ""
            for row in table.rows]
    matches = _match_models(keys, list(values))
    seen: dict[str, int] = {}
    for key_value in keys:
        seen[key_value] = seen.get(key_value, 0) + 1

    lines = _split_lines(table._text)
    empty = [""] * len(columns)

    def appended(index: int, cells: Sequence[str], n_existing: int) -> None:
        body, terminator = _strip_terminator(lines[index])
        padded = [""] * max(0, width - n_existing) + list(cells)
        if markdown:
            lines[index] = _append_markdown(body, padded) + terminator
        else:
            lines[index] = body + table._csv_delimiter + _csv_cells(padded, table._csv_delimiter) \
                + terminator

    appended(table._header_line, new_columns, width)
    if table._delimiter_line is not None:
        body, terminator = _strip_terminator(lines[table._delimiter_line])
        lines[table._delimiter_line] = _append_markdown(body, ["---"] * len(columns)) + terminator
    matched: dict[int, str] = {}
    unmatched_rows = []
    for row_index, (row, line_end, match) in enumerate(zip(table.rows, table._row_line_ends, matches)):
        if match is None:
            unmatched_rows.append((table.row_lines[row_index], keys[row_index]))
            appended(line_end, empty, len(row))
        else:
            matched[row_index] = match
            appended(line_end, values[match], len(row))
    used = set(matched.values())
    return ExtendResult(
        text="".join(lines), matched=matched, unmatched_rows=tuple(unmatched_rows),
        unmatched_models=tuple(m for m in values if m not in used),
        duplicate_keys=tuple(sorted(k for k, n in seen.items() if n > 1 and k)))


