"""The fast path of the DuckDB engine for JSON lines: validate in aggregate, classify per row only where needed.

The general JSONL relation of :mod:`kpass.data.duckdb_engine` reads every value as JSON and
classifies its kind per row (so that ``"1"``, ``1``, ``1.0`` and ``true`` are judged as the numpy
reader judges them) and lists every line's keys; that costs about ten times DuckDB's own typed
GROUP BY of the file. Most sample logs are *regular*: every value has the one obvious form
(strings are JSON strings, ``correct``/``finished`` JSON booleans, integers plain digits) and every
line has only schema keys, each once. For those the rules are trivial, and this module checks them
in two cheap scans:

1. **values** (``read_json`` with a typed schema of JSON columns, one parse a line): the reduction
   of :func:`kpass.data.reduction.reduction_sql`, grouping by the JSON *text* of the keys
   (``"p1"``; DuckDB writes every value in one canonical form, so one text is one string) and
   counting, in the same scan, the rows whose values are not in the regular form. Categorical
   values are decoded and their kind checked once per *problem*, after the GROUP BY;
2. **keys** (``read_json_objects``): the lines grouped by the *hash* of their ``json_keys`` (a
   64-bit hash of a short list costs a fraction of grouping by the lists themselves, and a
   handful of distinct key lists is the rule); each distinct list is then read from its first
   line. Unknown keys, misspelt columns, duplicate keys and the presence of the optional columns
   (a key whose values are all null is present, as in the numpy readers) follow exactly; a line
   longer than ``DEEP_JSON_BRACKETS`` has its brackets counted for the depth rule. (Exact up to
   a collision of the 64-bit hashes of two different key lists of one input: with d distinct
   lists, a chance of about d**2 / 2**65.)

Any irregular value, a duplicate key, a deep line, or a DuckDB error makes :func:`reduce_regular_jsonl`
return None, and the general relation (every rule, with the numpy readers' error text) runs
instead; a rule broken by regular rows (gaps in ``sample_index``, duplicates, a misspelt column,
a field that varies within a problem) raises the same :class:`~kpass.data.reduction.Violation`
as the general path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kpass.data.columns import MAX_INTEGER, REQUIRED_COLUMNS, SCHEMA_COLUMNS, _close_schema_name

from .reduction import (DEEP_JSON_BRACKETS, DUCKDB, INDEX_WORDS, Needs, ProblemStatistics, Violation, classes_sql,
                        distinct_indices_sql, problems_sql, reduction_sql, statistics_from_rows)
from .duckdb_queries import FILE_SHIFT, fetch_columns, run_with_progress, sql_literal
from .sources import EngineOptions, InputFile, locate_rows

__all__ = ["reduce_regular_jsonl"]

_VERDICTS = r"'\[((true|false)(,(true|false))*)?\]'"
_CATEGORIES = ("model", "task", "problem_id")
def _integer(name: str, required: bool) -> tuple[str, str]:
    """``(value, irregular)`` of an integer column read as JSON text: regular when the text is
    the digits of its value (not ``3.0``, ``1e3``, ``"3"`` or ``-1``) and the value is at most
    2**53 - 1 (the numpy readers' bound)."""
    c = DUCKDB.ident(name)
    value = f"TRY_CAST({c} AS UBIGINT)"
    irregular = f"NOT COALESCE(CAST({value} AS VARCHAR) = {c} AND {value} <= {MAX_INTEGER}, FALSE)"
    return (f"CAST({value} AS BIGINT)",
            f"({c} IS NULL OR {irregular})" if required else f"({c} IS NOT NULL AND {irregular})")


def _values_sql(item: InputFile, number: int, fields: Sequence[str]) -> str:
    """Typed rows of one file (the columns :func:`reduction_sql` reads) and ``row_bad``: a value
    not in its regular form, or a correct sample that did not finish (docs/spec.md section 6)."""
    wanted = dict.fromkeys([*_CATEGORIES, "sample_index", "correct", "finished", "answer", "output_tokens",
                            "answer_token", "cot_verdicts", *fields])
    schema = "{" + ", ".join(f"{sql_literal(name)}: 'JSON'" for name in wanted) + "}"
    sample_index, bad_index = _integer("sample_index", True)
    output_tokens, bad_output = _integer("output_tokens", False)
    answer_token, bad_answer = _integer("answer_token", False)
    verdicts = DUCKDB.ident("cot_verdicts")

    def occurrences(word: str) -> str:
        return f"COALESCE((strlen({verdicts}) - strlen(replace({verdicts}, '{word}', ''))) // {len(word)}, 0)"

    select = [f"{number * FILE_SHIFT} + ordinality AS kpass_order", *_CATEGORIES, "answer",
              "correct = 'true' AS correct", "CASE WHEN finished IS NULL THEN NULL ELSE finished = 'true' END AS finished",
              f"{sample_index} AS sample_index", f"{output_tokens} AS output_tokens", f"{answer_token} AS answer_token",
              f"{occurrences('true')} AS cot_yes", f"{occurrences('false')} AS cot_no",
              f"{occurrences('true')} + {occurrences('false')} AS cot_real"]
    select += [f"{DUCKDB.ident(field)} AS f{n}" for n, field in enumerate(fields)]
    select.append(f"{sample_index} NOT BETWEEN 0 AND {64 * INDEX_WORDS - 1} AS wide_index")
    irregular = ["correct IS NULL", "correct NOT IN ('true', 'false')", "finished NOT IN ('true', 'false')",
                 bad_index, bad_output, bad_answer, f"NOT regexp_full_match({verdicts}, {_VERDICTS})",
                 "(correct = 'true' AND finished = 'false')"]
    select.append(f"({' OR '.join(f'COALESCE({rule}, FALSE)' for rule in irregular)}) AS row_bad")
    return (f"SELECT {', '.join(select)} FROM read_json({sql_literal(item.path)}, format = 'newline_delimited', hive_partitioning = false, "
            f"columns = {schema}) WITH ORDINALITY")


def _objects(item: InputFile) -> str:
    return f"read_json_objects({sql_literal(item.path)}, format = 'newline_delimited', hive_partitioning = false) WITH ORDINALITY"


def _keys_sql(item: InputFile, number: int) -> str:
    """The distinct key lists of one file's lines, by their hash: per list its first line and
    whether a line nests more deeply than the numpy readers' parser goes. Grouping by the hash
    of ``json_keys`` costs a fraction of grouping by the lists; each list is then read once from
    its first line (:func:`_key_lists`)."""
    brackets = "strlen(json) - strlen(replace(replace(CAST(json AS VARCHAR), '[', ''), '{', ''))"
    deep = f"CASE WHEN strlen(json) > {DEEP_JSON_BRACKETS} THEN {brackets} > {DEEP_JSON_BRACKETS} ELSE FALSE END"
    return (f"SELECT {number} AS file, hash(json_keys(json)) AS h, MIN(ordinality) AS first, bool_or({deep}) AS deep "
            f"FROM {_objects(item)} GROUP BY h")


def _key_lists(con: Any, files: Sequence[InputFile], rows: list[tuple]) -> list[tuple[int, list[str]]] | None:
    """``(order of the first line, keys)`` of every distinct key list, or None (fallback: a deep
    line)."""
    out = []
    for number, _, first, deep in rows:
        if deep:
            return None
        keys = con.execute(f"SELECT json_keys(json) FROM {_objects(files[number])} WHERE ordinality = {int(first)} "
                           "LIMIT 1").fetchone()[0]
        out.append((number * FILE_SHIFT + int(first), list(keys)))
    return out


def _decode(text: str) -> str:
    return f"CAST({text} AS JSON) ->> '$'"


def _not_string(text: str, nullable: bool) -> str:
    kind = f"json_type(CAST({text} AS JSON)) <> 'VARCHAR'"
    return f"({text} IS NOT NULL AND {kind})" if nullable else f"({text} IS NULL OR {kind})"


def _irregular_keys(lists: list[tuple[int, list[str]]], known: Sequence[str]) -> tuple[bool, list[str], set[str]]:
    """``(fallback, unknown keys in order of first appearance, known keys present)`` of the key lists."""
    unknown: dict[str, int] = {}
    present: set[str] = set()
    for first, keys in lists:
        if len(keys) != len(set(keys)):
            return True, [], set()
        present.update(key for key in keys if key in known)
        for key in keys:
            if key not in known and (key not in unknown or first < unknown[key]):
                unknown[key] = first
    return False, sorted(unknown, key=unknown.__getitem__), present


def reduce_regular_jsonl(con: Any, files: Sequence[InputFile], needs: Needs,
                         options: EngineOptions) -> ProblemStatistics | None:
    """Per-problem statistics of regular JSON lines (module docstring), or None when the input is
    not regular and the general relation must judge it.

    ``con`` is a connection of :func:`kpass.data.duckdb_engine.connect`; errors are located by
    reading rows back through the numpy readers (:func:`kpass.data.sources.locate_rows`).

    Raises
    ------
    Violation
        A rule broken by regular rows: ``sample_index`` not ``0..n-1``, a misspelt column, a
        field that varies or is null within a problem (where used).
    """
    import duckdb

    if any(item.format != "jsonl" or item.partitions for item in files):
        return None
    fields = list(needs.carried_fields)
    known = list(dict.fromkeys([*SCHEMA_COLUMNS, *fields]))
    try:
        run_with_progress(con, "CREATE TEMP TABLE kpass_regular_keys AS "
            + " UNION ALL ".join(_keys_sql(item, n) for n, item in enumerate(files)), options)
        lists = _key_lists(con, files, con.execute("SELECT * FROM kpass_regular_keys ORDER BY file, first").fetchall())
        if lists is None:
            return None
        fallback, unknown, present_keys = _irregular_keys(lists, known)
        if fallback:
            return None
        union = " UNION ALL ".join(_values_sql(item, n, fields) for n, item in enumerate(files))
        reduced = reduction_sql(union, needs, flags=["wide_index"], first_seen="kpass_order",
                                distinct_indices=distinct_indices_sql(DUCKDB, wide=False))
        run_with_progress(con, f"CREATE TEMP TABLE kpass_regular AS {reduced}", options)
        checks = ["n_bad > 0", "any_wide_index > 0", *(_not_string(name, False) for name in _CATEGORIES)]
        if needs.answer_classes:
            checks.append(f"(is_problem = 0 AND {_not_string('answer', True)})")
        checks += [_not_string(f"f{n}_{end}", True) for n in range(len(fields)) for end in ("min", "max")]
        if con.execute(f"SELECT count(*) FROM kpass_regular WHERE {' OR '.join(checks)}").fetchone()[0]:
            return None
        decoded = [f"{_decode(name)} AS {name}" for name in _CATEGORIES]
        decoded += [f"{_decode(f'f{n}_{end}')} AS f{n}_{end}" for n in range(len(fields)) for end in ("min", "max")]
        if needs.answer_classes:
            decoded.append(f"{_decode('answer')} AS answer")
        con.execute(f"CREATE TEMP TABLE kpass_regular_decoded AS SELECT * REPLACE ({', '.join(decoded)}) FROM kpass_regular")
        con.execute(f"CREATE TEMP TABLE kpass_regular_problems AS {problems_sql('kpass_regular_decoded')}")
        problems = fetch_columns(con, "SELECT * FROM kpass_regular_problems ORDER BY pid")
        classes = (fetch_columns(con, classes_sql("kpass_regular_decoded", "kpass_regular_problems"))
                   if needs.answer_classes else None)
    except duckdb.Error:  # malformed JSON, a duplicate key, a non-object line, bytes that are not UTF-8, ...
        return None
    if len(problems["n_samples"]) == 0:
        return None
    seen_fields = [field for field in fields if field in present_keys and field not in SCHEMA_COLUMNS]
    extras = list(dict.fromkeys([*seen_fields, *unknown]))
    if any(_close_schema_name(name) for name in extras):
        raise Violation([], "a misspelt column")
    present = [*REQUIRED_COLUMNS, *(c for c in SCHEMA_COLUMNS if c in present_keys and c not in REQUIRED_COLUMNS),
               *extras]
    return statistics_from_rows(problems, classes, needs, sources=[item.path for item in files],
                                columns_present=present, extra_columns=extras, engine="duckdb",
                                locate=lambda keys: locate_rows(files, keys))
