"""The DuckDB engine: the reduction of kpass.data.reduction run by embedded DuckDB.

JSONL, CSV and Parquet files (one, many, globs, hive-partitioned directories) are scanned in
parallel and streamed: DuckDB holds the per-problem aggregates, not the rows, and spills to
``temp_directory`` past ``memory_limit``. Each file format becomes the same *raw* relation (for
every column its text and its kind, see :data:`kpass.data.reduction.KINDS`), which the shared SQL
types, checks and groups.
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
from collections.abc import Sequence
from typing import Any

import numpy as np

from kpass.errors import UsageError
from kpass.data.columns import REQUIRED_COLUMNS, SCHEMA_COLUMNS, _close_schema_name
from kpass.data.validation import memory_limit
from .sources import EngineOptions, InputFile
from .duckdb_jsonl import reduce_regular_jsonl
from .duckdb_queries import FILE_SHIFT, fetch_columns, run_with_progress, sql_literal
from .reduction import (BOOLEAN_COLUMNS, DEEP_JSON_BRACKETS, DUCKDB, INTEGER_COLUMNS, Needs, NumpyFallback,
                        ProblemStatistics, RawColumns, Violation, classes_sql, distinct_indices_sql, problems_sql,
                        reduction_sql, statistics_from_rows, typed_sql, with_partition)

__all__ = ["reduce_with_duckdb"]

#: Schema columns read by name (``metadata`` is never interpreted; ``cot_verdicts`` is a list).
_SCALAR_COLUMNS = tuple(name for name in SCHEMA_COLUMNS if name not in ("metadata", "cot_verdicts"))
_OPTIONAL = tuple(name for name in SCHEMA_COLUMNS if name not in REQUIRED_COLUMNS)
_DEFAULT_MEMORY_LIMIT = "2GB"


def _list_literal(items: Sequence[str]) -> str:
    return "[" + ", ".join(sql_literal(item) for item in items) + "]"


def connect(options: EngineOptions):
    """A DuckDB connection with kpass's limits: ``memory_limit``, ``temp_directory`` (spilling),
    ``threads``, and no insertion order to preserve (lets scans stream)."""
    import duckdb

    limit = options.memory_limit or os.environ.get("KPASS_MEMORY_LIMIT") or _DEFAULT_MEMORY_LIMIT
    try:
        limit = memory_limit(limit)
    except ValueError as exc:
        raise UsageError(f"--memory-limit / KPASS_MEMORY_LIMIT: {exc}") from None
    config: dict[str, str | bool | int | float | list[str]] = {
        "memory_limit": limit,
        "temp_directory": options.temp_directory or os.environ.get("KPASS_TEMP_DIRECTORY")
        or os.path.join(tempfile.gettempdir(), f"kpass-duckdb-{os.getpid()}"),
        "preserve_insertion_order": False,
    }
    threads = options.threads or os.environ.get("KPASS_THREADS")
    if threads:
        if not str(threads).strip().isdigit() or int(threads) < 1:
            raise UsageError(f"KPASS_THREADS / threads: expected a positive integer, got {threads!r}")
        config["threads"] = int(threads)
    con = duckdb.connect(config=config)
    con.execute("SET enable_progress_bar = true")  # kpass draws the bar (options.progress), never DuckDB
    con.execute("SET enable_progress_bar_print = false")
    return con


# ----------------------------------------------------------------------------------------------
# raw relations: text and kind of every column, per file format


def _json_kind(value: str) -> str:
    return (f"CASE WHEN {value} IS NULL THEN 'null' ELSE CASE json_type({value}) WHEN 'NULL' THEN 'null' "
            f"WHEN 'BOOLEAN' THEN 'bool' WHEN 'BIGINT' THEN 'int' WHEN 'UBIGINT' THEN 'int' "
            f"WHEN 'DOUBLE' THEN CASE WHEN isnan(TRY_CAST({value} ->> '$' AS DOUBLE)) THEN 'null' ELSE 'float' END "
            f"WHEN 'VARCHAR' THEN 'string' ELSE 'other' END END")


def _verdict_items(json_list: str) -> str:
    """Verdict texts of a JSON list: ``true``/``false``/``1``/``0``, NULL (invalid verdict), or
    ``bad`` (any other element, which kpass.table rejects)."""
    return (f"list_transform(from_json({json_list}, '[\"JSON\"]'), lambda v: CASE WHEN v IS NULL OR "
            "json_type(v) = 'NULL' THEN NULL WHEN json_type(v) = 'BOOLEAN' THEN v ->> '$' "
            "WHEN json_type(v) IN ('BIGINT', 'UBIGINT') AND v ->> '$' IN ('0', '1') THEN v ->> '$' ELSE 'bad' END)")


def _verdicts_from_text(text: str) -> tuple[str, str]:
    """``(list, kind)`` of verdicts written as a JSON list in text (a CSV cell, a JSON string)."""
    kind = (f"CASE WHEN {text} IS NULL OR TRIM({text}) IN ('', 'null', 'None') THEN 'null' "
            f"WHEN json_valid({text}) AND json_type(CAST({text} AS JSON)) = 'ARRAY' THEN 'list' ELSE 'other' END")
    items = _verdict_items(f"CAST(CASE WHEN ({kind}) = 'list' THEN {text} ELSE '[]' END AS JSON)")
    return items, kind


_Raw = RawColumns


def _partition_value(item: InputFile, column: str) -> str | None:
    """The SQL literal of ``column``'s hive partition value in ``item``'s path, or None."""
    value = dict(item.partitions).get(column)
    return None if value is None else sql_literal(value)


def _jsonl_raw(item: InputFile, number: int, raw: _Raw) -> str:
    structure = json.dumps({name: "JSON" for name in [*raw.columns, "cot_verdicts"]})
    partitions = dict(item.partitions)
    known = [*SCHEMA_COLUMNS, *raw.columns, *partitions]
    select = [f"{number * FILE_SHIFT} + ordinality AS kpass_order"]
    own = {column: (f"(struct_extract(s, {sql_literal(column)}) ->> '$')",
                    _json_kind(f"struct_extract(s, {sql_literal(column)})")) for column in raw.columns}
    conflicts = []
    for column in raw.columns:
        text, kind, conflict = with_partition(*own[column], _partition_value(item, column))
        conflicts.append(conflict)
        select += [f"{text} AS {DUCKDB.ident(column)}", f"{kind} AS {DUCKDB.ident(column + '__kind')}"]
    verdicts = "struct_extract(s, 'cot_verdicts')"
    text_items, text_kind = _verdicts_from_text(f"({verdicts} ->> '$')")
    select.append(f"CASE json_type({verdicts}) WHEN 'ARRAY' THEN {_verdict_items(verdicts)} "
                  f"WHEN 'VARCHAR' THEN {text_items} ELSE NULL END AS cot_verdicts__list")
    select.append(f"CASE WHEN {verdicts} IS NULL OR json_type({verdicts}) = 'NULL' THEN 'null' "
                  f"WHEN json_type({verdicts}) = 'ARRAY' THEN 'list' WHEN json_type({verdicts}) = 'VARCHAR' "
                  f"THEN {text_kind} ELSE 'other' END AS cot_verdicts__kind")
    select += [f"{'TRUE' if c in partitions else f'list_contains(k, {sql_literal(c)})'} AS has__{n}"
               for n, c in enumerate(raw.presence)]
    select.append(f"len(list_filter(k, lambda key: NOT list_contains({_list_literal(known)}, key))) > 0 "
                  "AS unknown_keys")
    # a name written as a JSON object or list: the numpy readers' canonical text of it (docs/bad-input.md)
    structured = [f"{kind} = 'other'" for column, (_, kind) in own.items()
                  if column not in INTEGER_COLUMNS and column not in BOOLEAN_COLUMNS]
    select.append(f"(fallback OR {' OR '.join([*conflicts, *structured])}) AS numpy_fallback")
    return (f"SELECT {', '.join(select)} FROM (SELECT ordinality, from_json(json, {sql_literal(structure)}) AS s, "
            f"CASE WHEN json_type(json) = 'OBJECT' THEN json_keys(json) ELSE [] END AS k, "
            f"(len(json_keys(json)) <> len(list_distinct(json_keys(json))) OR length(CAST(json AS VARCHAR)) - "
            f"length(replace(replace(CAST(json AS VARCHAR), '[', ''), '{{', '')) > {DEEP_JSON_BRACKETS}) AS fallback "
            f"FROM read_json_objects({sql_literal(item.path)}, format = 'newline_delimited', hive_partitioning = false) WITH ORDINALITY)")


def csv_header(path: str) -> list[str] | None:
    """The stripped names of a CSV file's header (None: empty file or unreadable header)."""
    from kpass.data.readers import _open_text
    import pathlib

    try:
        with _open_text(pathlib.Path(path)) as handle:
            header = next(csv.reader(handle), None)
    except (OSError, UnicodeDecodeError, csv.Error, EOFError):
        return None
    if header is None or not any(cell.strip() for cell in header):
        return None
    return [cell.strip() for cell in header]


#: Columns read past a CSV header's width: a row with one or two fields too many is counted as
#: such (DuckDB's strict mode drops empty trailing fields silently), three or more fail the scan.
_CSV_SPARE_COLUMNS = 2
#: DuckDB's null string for CSV, one no cell holds: an empty cell stays ``''`` (null once counted),
#: so that the fields of a row can be counted (padding is NULL).
_CSV_NULL = "\x01kpass-null\x02"
#: Python's ``str.isspace`` characters as an RE2 class: a row of one blank cell is skipped, as
#: the numpy reader's ``row[0].strip()`` skips it.
_PY_SPACE = r"[\t\n\x{b}\x{c}\r\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]"


def _csv_raw(item: InputFile, number: int, header: list[str], raw: _Raw) -> str:
    """The raw relation of one CSV file, columns read by position (any header name, even empty),
    with the numpy reader's row rules: a blank row is skipped, any other row must have exactly
    the header's number of fields (else the row is flagged and the numpy reader says where)."""
    width = len(header)
    names = [f"c{i}" for i in range(width + _CSV_SPARE_COLUMNS)]
    columns = "{" + ", ".join(f"{sql_literal(name)}: 'VARCHAR'" for name in names) + "}"
    position = {name: f"c{i}" for i, name in enumerate(header)}
    fields = " + ".join(f"CASE WHEN {name} IS NULL THEN 0 ELSE 1 END" for name in names)
    select = [f"{number * FILE_SHIFT} + ordinality AS kpass_order"]
    conflicts = []
    for column in raw.columns:
        if column in position:
            cell = f"NULLIF({position[column]}, '')"
            text, kind = cell, f"CASE WHEN {cell} IS NULL THEN 'null' ELSE 'string' END"
        else:
            text, kind = "CAST(NULL AS VARCHAR)", "'null'"
        text, kind, conflict = with_partition(text, kind, _partition_value(item, column))
        conflicts.append(conflict)
        select += [f"{text} AS {DUCKDB.ident(column)}", f"{kind} AS {DUCKDB.ident(column + '__kind')}"]
    if "cot_verdicts" in position:
        items, kind = _verdicts_from_text(f"NULLIF({position['cot_verdicts']}, '')")
        select += [f"{items} AS cot_verdicts__list", f"{kind} AS cot_verdicts__kind"]
    else:
        select += ["CAST(NULL AS VARCHAR[]) AS cot_verdicts__list", "'null' AS cot_verdicts__kind"]
    select += raw.has([*header, *(key for key, _ in item.partitions)])
    select.append("FALSE AS unknown_keys")
    select.append(f"(n_fields <> {width} OR {' OR '.join(conflicts)}) AS numpy_fallback")
    blank = f"(n_fields = 1 AND regexp_full_match(c0, '{_PY_SPACE}*'))"
    return (f"SELECT {', '.join(select)} FROM (SELECT *, {fields} AS n_fields FROM read_csv({sql_literal(item.path)}, "
            f"header = true, auto_detect = false, delim = ',', quote = '\"', escape = '\"', columns = {columns}, "
            f"nullstr = {sql_literal(_CSV_NULL)}, strict_mode = true, null_padding = true, parallel = false, hive_partitioning = false) "
            f"WITH ORDINALITY) WHERE NOT {blank}")


def _parquet_kind(column: str, kind: str) -> tuple[str, str]:
    """``(text, kind)`` of a typed Parquet column, as the numpy Parquet reader sees its values."""
    c = DUCKDB.ident(column)
    upper = kind.upper()
    if upper == "BOOLEAN":
        return f"CAST({c} AS VARCHAR)", f"CASE WHEN {c} IS NULL THEN 'null' ELSE 'bool' END"
    if any(upper.startswith(t) for t in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT",
                                         "UINTEGER", "UBIGINT", "HUGEINT")):
        return f"CAST({c} AS VARCHAR)", f"CASE WHEN {c} IS NULL THEN 'null' ELSE 'int' END"
    if upper in ("FLOAT", "DOUBLE", "REAL") or upper.startswith("DECIMAL"):
        number = f"CAST({c} AS DOUBLE)"
        text = (f"CASE WHEN ABS({number}) < 9.2e18 AND {number} % 1 = 0 "
                f"THEN CAST(CAST({number} AS BIGINT) AS VARCHAR) ELSE CAST({number} AS VARCHAR) END")
        # a NaN is no number (refused where a count or verdict belongs), and a null name, as numpy reads it
        nan = "'null'" if column not in INTEGER_COLUMNS and column not in BOOLEAN_COLUMNS else "'float'"
        return text, f"CASE WHEN {c} IS NULL THEN 'null' WHEN isnan({number}) THEN {nan} ELSE 'float' END"
    if upper == "VARCHAR":
        return c, f"CASE WHEN {c} IS NULL THEN 'null' ELSE 'string' END"
    if upper == "BLOB":  # Parquet BINARY: UTF-8 text, as the numpy reader decodes it (invalid bytes fail the scan)
        return f"decode({c})", f"CASE WHEN {c} IS NULL THEN 'null' ELSE 'string' END"
    return f"CAST({c} AS VARCHAR)", f"CASE WHEN {c} IS NULL THEN 'null' ELSE 'other' END"


def _parquet_names_renamed(con: Any, path: str) -> bool:
    """Whether the file's own schema names a top-level column twice or has an empty column name,
    which DuckDB renames (``x_1``, ``C10``) and the numpy reader refuses or keeps as written.
    ``parquet_schema`` lists the schema depth first, each element with its number of children."""
    elements = con.execute(f"SELECT name, num_children FROM parquet_schema({sql_literal(path)})").fetchall()
    names, position = [], 1
    for _ in range(elements[0][1] or 0 if elements else 0):
        if position >= len(elements):
            break
        names.append(elements[position][0])
        pending = elements[position][1] or 0  # the column's nested elements, skipped
        position += 1
        while pending and position < len(elements):
            pending += (elements[position][1] or 0) - 1
            position += 1
    return len(set(names)) != len(names) or "" in names


def _parquet_raw(con: Any, item: InputFile, number: int, raw: _Raw) -> tuple[str, list[str]]:
    """The raw relation of one Parquet file and its column names."""
    source = f"read_parquet({sql_literal(item.path)}, file_row_number = true, hive_partitioning = false)"
    described = [(row[0], row[1]) for row in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()]
    types = dict(described[:-1])  # the last is file_row_number
    if len(types) != len(described) - 1 or _parquet_names_renamed(con, item.path):
        raise NumpyFallback("duplicate or empty Parquet column name")  # DuckDB renames them (x_1, C10)
    select = [f"{number * FILE_SHIFT} + file_row_number AS kpass_order"]
    conflicts = []
    for column in raw.columns:
        if column in types:
            text, kind = _parquet_kind(column, types[column])
        else:
            text, kind = "CAST(NULL AS VARCHAR)", "'null'"
        text, kind, conflict = with_partition(text, kind, _partition_value(item, column))
        conflicts.append(conflict)
        select += [f"{text} AS {DUCKDB.ident(column)}", f"{kind} AS {DUCKDB.ident(column + '__kind')}"]
    if "cot_verdicts" in types:
        c = DUCKDB.ident("cot_verdicts")
        if types["cot_verdicts"].upper().endswith("[]"):
            select += [f"list_transform({c}, lambda v: CASE WHEN v IS NULL THEN NULL WHEN CAST(v AS VARCHAR) IN "
                       "('true', 'false', '0', '1') THEN CAST(v AS VARCHAR) ELSE 'bad' END) AS cot_verdicts__list",
                       f"CASE WHEN {c} IS NULL THEN 'null' ELSE 'list' END AS cot_verdicts__kind"]
        else:
            items, kind = _verdicts_from_text(f"CAST({c} AS VARCHAR)")
            select += [f"{items} AS cot_verdicts__list", f"{kind} AS cot_verdicts__kind"]
    else:
        select += ["CAST(NULL AS VARCHAR[]) AS cot_verdicts__list", "'null' AS cot_verdicts__kind"]
    select += raw.has([*types, *dict(item.partitions)])
    select.append("FALSE AS unknown_keys")
    select.append(f"({' OR '.join(conflicts)}) AS numpy_fallback")
    return f"SELECT {', '.join(select)} FROM {source}", list(types)


# ----------------------------------------------------------------------------------------------
# JSON that DuckDB's parser reads and Python's strict parser does not read the same way

#: JSON strings (what is left after them is syntax: brackets, numbers, true, false, null).
_JSON_STRING = r'"([^"\\]|\\.)*"'
#: What DuckDB's JSON parser accepts beyond what kpass's strict reader (``json`` with duplicate
#: keys refused) reads the same way: a trailing comma, the words NaN / Infinity / inf / nan (Python
#: reads only NaN, Infinity, -Infinity, as floats the readers then judge), exponents past 1e308.
_LENIENT_SYNTAX = r",[ \t\r\n]*[\]}]|[nN][aA][nN]|[iI][nN][fF]|[eE][-+]?[0-9]{3,}"
#: The same forms as words, looked for in a line's whole text (strings too): a cheap filter that
#: passes every line :data:`_LENIENT_SYNTAX` can match once its strings are taken out.
_LENIENT_WORDS = r",[ \t\r\n]*[\]}]|(?i:\bnan\b|\binf(inity)?\b)|[eE][-+]?[0-9]{3,}"


#: A key of a JSON object in the text of a line without backslashes (a quoted string followed by a
#: colon; without escapes a string holds no quote, so the keys are found exactly): a line whose
#: keys, at any depth, are all different cannot hold a key twice in one object.
_JSON_KEY = r'"([^"]*)"\s*:'


def lenient_json(con: Any, files: Sequence[InputFile], options: EngineOptions) -> bool:
    """Whether some JSON line needs Python's strict parser: a form DuckDB's parser reads
    leniently (:data:`_LENIENT_SYNTAX`, looked for outside strings) or a key twice in a nested
    object (``json_keys`` sees only the top level: nested lines are walked with ``json_tree``).

    One scan of the JSON Lines files with two cheap filters on each line's text, which pass a
    superset of the lines concerned: the lenient forms anywhere (also inside strings), and a nested
    line in which some key name appears twice at any depth (:data:`_JSON_KEY`). Only those lines are
    stripped of their strings and walked. A line DuckDB cannot parse is left to the reduction
    (which then hands the input to numpy)."""
    import duckdb

    jsonl = [item for item in files if item.format == "jsonl"]
    if not jsonl:
        return False
    lines = " UNION ALL ".join(f"SELECT {n} AS file, ordinality AS line, json, CAST(json AS VARCHAR) AS raw "
                               f"FROM read_json_objects({sql_literal(item.path)}, format = 'newline_delimited', "
                               "hive_partitioning = false) WITH ORDINALITY" for n, item in enumerate(jsonl))
    nested = "regexp_matches(raw, '[{].*[{]|[[].*[{]')"
    named = (f"SELECT file, line, json, raw, regexp_matches(raw, {sql_literal(_LENIENT_WORDS)}) AS maybe_lenient, "
             f"{nested} AND contains(raw, '\\') AS escaped, CASE WHEN {nested} AND NOT contains(raw, '\\') "
             f"THEN regexp_extract_all(raw, {sql_literal(_JSON_KEY)}, 1) END AS names FROM ({lines})")
    flagged = ("SELECT file, line, json, raw, maybe_lenient, escaped OR COALESCE(list_unique(names) <> len(names), "
               f"FALSE) AS keys_repeat FROM ({named})")
    syntax = f"regexp_replace(raw, {sql_literal(_JSON_STRING)}, '\"\"', 'g')"
    try:
        run_with_progress(con, f"CREATE TEMP TABLE kpass_syntax AS SELECT file, line, json, keys_repeat, "
                               f"CASE WHEN maybe_lenient THEN regexp_matches({syntax}, {sql_literal(_LENIENT_SYNTAX)}) "
                               "ELSE FALSE END AS lenient "
                               f"FROM ({flagged}) WHERE maybe_lenient OR keys_repeat", options)
        if con.execute("SELECT bool_or(lenient) FROM kpass_syntax").fetchone()[0]:
            return True
        repeated = con.execute("SELECT 1 FROM kpass_syntax, json_tree(json) AS node WHERE keys_repeat AND "
                               "node.parent IS NOT NULL AND node.key IS NOT NULL GROUP BY file, line, node.parent "
                               "HAVING count(*) <> count(DISTINCT node.key) LIMIT 1").fetchall()
    except duckdb.Error:
        return False
    finally:
        con.execute("DROP TABLE IF EXISTS kpass_syntax")
    return bool(repeated)


# ----------------------------------------------------------------------------------------------
# the reduction


def reduce_with_duckdb(files: Sequence[InputFile], needs: Needs, options: EngineOptions = EngineOptions(),
                       ) -> ProblemStatistics:
    """Per-problem statistics of sample files, reduced by DuckDB.

    Raises
    ------
    Violation
        A rule of the sample table is broken (:func:`kpass.data.engines.reduce_samples` turns it
        into the numpy readers' error).
    """
    import duckdb

    from .sources import locate_rows

    raw = _Raw(needs)
    parts = []
    extras: list[str] = []
    con = connect(options)
    try:
        if lenient_json(con, files, options):
            raise NumpyFallback("JSON that only Python's strict parser judges as the numpy readers do")
        regular = reduce_regular_jsonl(con, files, needs, options)
        if regular is not None:
            return regular
        for number, item in enumerate(files):
            if item.format == "jsonl":
                parts.append(_jsonl_raw(item, number, raw))
            elif item.format == "csv":
                header = csv_header(item.path)
                if header is None or len(set(header)) != len(header):
                    raise Violation([], "unreadable or duplicate CSV header")
                extras += [name for name in header if name not in SCHEMA_COLUMNS]
                parts.append(_csv_raw(item, number, header, raw))
            else:
                try:
                    part, columns = _parquet_raw(con, item, number, raw)
                except duckdb.Error as exc:  # the numpy reader says what is wrong, or reads it
                    raise NumpyFallback(f"DuckDB cannot read the Parquet file: {exc}") from exc
                extras += [name for name in columns if name not in SCHEMA_COLUMNS]
                parts.append(part)
        extras += [key for item in files for key, _ in item.partitions if key not in SCHEMA_COLUMNS]
        names = ", ".join(DUCKDB.ident(name) for name in raw.names)
        union = " UNION ALL ".join(f"SELECT {names} FROM ({part})" for part in parts)
        typed = typed_sql(f"({union}) raw", [*raw.columns, "cot_verdicts"], needs.carried_fields, DUCKDB,
                          pass_through=["kpass_order", *raw.flags])
        reduced = reduction_sql(typed, needs, flags=raw.flags, first_seen="kpass_order",
                                distinct_indices=distinct_indices_sql(DUCKDB))
        try:
            run_with_progress(con, f"CREATE TEMP TABLE kpass_reduced AS {reduced}", options)
        except duckdb.Error as exc:  # malformed JSON, ragged CSV, bytes DuckDB refuses: the numpy readers judge
            raise NumpyFallback(f"DuckDB cannot read the input: {exc}") from exc
        con.execute(f"CREATE TEMP TABLE kpass_problems AS {problems_sql('kpass_reduced')}")
        problems = fetch_columns(con, "SELECT * FROM kpass_problems ORDER BY pid")
        if len(problems["n_samples"]) == 0:
            raise Violation([], "no samples")
        if int(np.asarray(problems["any_numpy_fallback"], dtype=np.int64).sum()):
            raise NumpyFallback()
        if int(np.asarray(problems["any_unknown_keys"], dtype=np.int64).sum()):
            known = [*SCHEMA_COLUMNS, *raw.columns]
            scans = " UNION ALL ".join(
                f"SELECT {number * FILE_SHIFT} + ordinality AS o, json FROM read_json_objects({sql_literal(item.path)}, "
                "format = 'newline_delimited', hive_partitioning = false) WITH ORDINALITY" for number, item in enumerate(files)
                if item.format == "jsonl")
            extras += [row[0] for row in con.execute(
                f"SELECT key, MIN(o) FROM (SELECT o, unnest(list_filter(json_keys(json), lambda key: NOT "
                f"list_contains({_list_literal(known)}, key))) AS key FROM ({scans}) WHERE json_type(json) = 'OBJECT') "
                "GROUP BY key ORDER BY 2").fetchall()]
        seen = [c for number, c in enumerate(raw.presence) if int(np.asarray(problems[f"any_has__{number}"]).sum())]
        extras = list(dict.fromkeys([*(c for c in seen if c not in SCHEMA_COLUMNS), *extras]))
        if any(_close_schema_name(name) for name in extras):
            raise Violation([], "a misspelt column")
        present = [*REQUIRED_COLUMNS, *(c for c in seen if c in SCHEMA_COLUMNS), *extras]
        classes = fetch_columns(con, classes_sql("kpass_reduced", "kpass_problems")) if needs.answer_classes else None
    finally:
        con.close()
    return statistics_from_rows(problems, classes, needs, sources=[item.path for item in files],
                                columns_present=present, extra_columns=extras, engine="duckdb",
                                locate=lambda keys: locate_rows(files, keys))
