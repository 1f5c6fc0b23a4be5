"""The Spark engine: the reduction of kpass.data.reduction run by Apache Spark (pyspark).

For sample logs that live in a cluster: the per-row typing, the checks and the GROUP BY run on
the executors, and only the per-problem statistics come back to the driver, where the metric
core runs. :func:`reduce_dataframe` takes a Spark DataFrame with the sample-table columns (the
Python entry); ``--engine spark`` reads JSONL (parsed as Spark VARIANTs, so a JSON string and a
JSON number stay apart, as in the numpy reader), CSV and Parquet files.

Needs pyspark (``pip install 'kpass[spark]'``) and Java 17 or later.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from kpass.errors import DataError, EngineError, UsageError
from kpass.data.problems import statistics_from_table
from kpass.data.columns import REQUIRED_COLUMNS, SCHEMA_COLUMNS, _close_schema_name
from .sources import EngineOptions, InputFile
from .reduction import (BOOLEAN_COLUMNS, DEEP_JSON_BRACKETS, INDEX_WORDS, INTEGER_COLUMNS, SPARK, Needs, NumpyFallback,
                        RawColumns, ProblemStatistics, Violation, distinct_indices_sql, reduction_sql, statistics_from_rows,
                        typed_sql, with_partition)

__all__ = ["local_session", "reduce_dataframe", "reduce_files_with_spark"]

_SCALAR_COLUMNS = tuple(name for name in SCHEMA_COLUMNS if name not in ("metadata", "cot_verdicts"))
_OPTIONAL = tuple(name for name in SCHEMA_COLUMNS if name not in REQUIRED_COLUMNS)
_FILE_SHIFT = 1 << 40
_views = iter(range(1 << 62))


def _literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _array_literal(items: Sequence[str]) -> str:
    return "array(" + ", ".join(_literal(item) for item in items) + ")"


@contextlib.contextmanager
def _standard_error_to(path: str | None):
    """File descriptor 2 pointed at ``path`` for a while: a process started meanwhile (Spark's
    JVM) keeps writing its stderr there for its whole life, and kpass's own lines stay one."""
    if path is None:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(path, "ab") as log:
            os.dup2(log.fileno(), 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def local_session(cores: int = 2, *, shuffle_partitions: int = 16, driver_memory: str = "1g",
                  local_dir: str | None = None, jvm_log: str | None = None):
    """A local SparkSession (``local[cores]``, UI off, quiet logs) for one machine and tests.

    ``driver_memory`` is the JVM's heap, which in local mode is the executors' too: 1 GiB holds
    the reduction of 10^8 samples (3.1M problems; the per-problem table goes to disk, see
    :func:`_written_table`, and nothing else large comes back), and a larger heap only makes the
    JVM's resident memory, which adds to the Python driver's, larger. ``local_dir``: where Spark
    keeps its scratch files (``spark.local.dir`` and the JVM's ``java.io.tmpdir``; default the
    system temporary directory). ``jvm_log``: a file that takes the JVM's standard error (its
    start-up notices and log4j lines), which otherwise share the terminal with kpass's one line."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    if local_dir is not None:
        builder = builder.config("spark.local.dir", local_dir).config(
            "spark.driver.extraJavaOptions", f"-Djava.io.tmpdir={local_dir}")
    with _standard_error_to(jvm_log):
        session = (builder.master(f"local[{cores}]").appName("kpass")
                   .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", str(shuffle_partitions))
                   .config("spark.driver.memory", driver_memory).config("spark.ui.showConsoleProgress", "false")
                   .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    return session


def _session(options: EngineOptions):
    if options.spark is not None:
        return options.spark
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise DataError("the spark engine needs pyspark (and Java 17+): pip install 'kpass[spark]'") from None
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    _check_java()
    try:
        local_dir = _scratch_directory(options.temp_directory)
        # PySpark's notice about pandas >= 3 is not the user's concern (kpass converts its own results)
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
        return local_session(local_dir=local_dir, jvm_log=None if local_dir is None else os.path.join(local_dir, "jvm.log"))
    except Exception as exc:  # noqa: BLE001 - no Java, a JVM that cannot start: one line, not PySpark's traceback
        if _jvm_gone(exc):
            raise EngineError(f"Spark stopped while starting (its Java process is gone): {_first_line(exc)}") from None
        raise EngineError(f"the spark engine cannot start a local Spark session: {_first_line(exc)} (it needs Java 17 "
                          "or later on PATH or in JAVA_HOME; or use --engine duckdb)") from None


def _scratch_directory(parent: str | None) -> str | None:
    """A directory of this process for the session's scratch files (``blockmgr-*``, ``spark-*``),
    removed when the process exits, also after the JVM was killed (whose own clean-up then never
    ran). None (Spark's default) when it cannot be made."""
    import atexit
    import shutil
    import tempfile

    base = parent or os.environ.get("KPASS_TEMP_DIRECTORY")
    try:
        if base:
            os.makedirs(base, exist_ok=True)
        directory = tempfile.mkdtemp(prefix="kpass-spark-local-", dir=base)
    except OSError:
        return None
    atexit.register(shutil.rmtree, directory, True)  # registered before PySpark's own stop: runs after it
    return directory


def _check_java() -> None:
    """Refuse in one line, before PySpark launches anything, when no ``java`` can be found (the
    launcher's own scripts would print their errors and a traceback)."""
    import shutil

    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "java"), os.X_OK):
        return
    if not home and shutil.which("java"):
        return
    where = f"JAVA_HOME={home} holds no bin/java" if home else "no java on PATH and JAVA_HOME is not set"
    raise EngineError(f"the spark engine needs Java 17 or later: {where} (or use --engine duckdb)")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


#: What PySpark raises when the JVM behind the session is gone (killed, crashed, out of memory).
_JVM_GONE = ("Py4JNetworkError", "Py4JError")
_JVM_GONE_TEXT = ("SparkContext was shut down", "stopped SparkContext", "Answer from Java side is empty",
                  "Connection refused", "Broken pipe")


def _jvm_gone(exc: BaseException) -> bool:
    """Whether ``exc`` says the session's JVM stopped, rather than that the input is bad."""
    return (type(exc).__name__ in _JVM_GONE or isinstance(exc, ConnectionError)
            or any(text in str(exc) for text in _JVM_GONE_TEXT))


def _engine_failures(function: Any) -> Any:
    """Turn a JVM that stopped mid-run into one :class:`~kpass.errors.EngineError` line."""
    import functools

    @functools.wraps(function)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except (DataError, UsageError, EngineError, Violation, NumpyFallback):
            raise
        except Exception as exc:
            if _jvm_gone(exc):
                raise EngineError(f"Spark stopped during the reduction (its Java process is gone): "
                                  f"{_first_line(exc)}") from None
            raise
    return guarded


_Raw = RawColumns
#: ``(native, absent)`` columns of a raw relation (see :func:`_typed_columns`).
_Shape = tuple[tuple[str, ...], tuple[str, ...]]
_TEXT_ONLY: _Shape = ((), ())


def _variant_kind(value: str) -> str:
    schema = f"schema_of_variant({value})"
    return (f"CASE WHEN {value} IS NULL OR is_variant_null({value}) THEN 'null' WHEN {schema} = 'BOOLEAN' THEN 'bool' "
            f"WHEN {schema} IN ('BIGINT', 'INT', 'SMALLINT', 'TINYINT') OR {schema} RLIKE '^DECIMAL\\\\([0-9]+,0\\\\)$' "
            f"THEN 'int' WHEN {schema} IN ('DOUBLE', 'FLOAT') OR {schema} LIKE 'DECIMAL%' THEN 'float' "
            f"WHEN {schema} = 'STRING' THEN 'string' ELSE 'other' END")


def _verdicts_of_variant(value: str) -> tuple[str, str]:
    """``(list, kind)`` of verdicts in a VARIANT (a JSON list, or a JSON string holding one)."""
    inner = f"CASE WHEN schema_of_variant({value}) = 'STRING' THEN try_parse_json(variant_get({value}, '$', 'string')) " \
            f"ELSE {value} END"
    items = (f"transform(try_variant_get({inner}, '$', 'array<variant>'), e -> CASE WHEN e IS NULL OR "
             "is_variant_null(e) THEN NULL WHEN schema_of_variant(e) = 'BOOLEAN' THEN variant_get(e, '$', 'string') "
             "WHEN schema_of_variant(e) IN ('BIGINT', 'INT', 'SMALLINT', 'TINYINT') AND variant_get(e, '$', 'string') "
             "IN ('0', '1') THEN variant_get(e, '$', 'string') ELSE 'bad' END)")
    kind = (f"CASE WHEN {value} IS NULL OR is_variant_null({value}) THEN 'null' "
            f"WHEN schema_of_variant({value}) = 'STRING' AND TRIM(variant_get({value}, '$', 'string')) IN "
            "('', 'null', 'None') THEN 'null' "
            f"WHEN schema_of_variant({inner}) LIKE 'ARRAY%' THEN 'list' ELSE 'other' END")
    return items, kind


def _view(frame: Any) -> str:
    name = f"kpass_input_{next(_views)}"
    frame.createOrReplaceTempView(name)
    return name


def _jsonl_raw(spark: Any, item: InputFile, number: int, raw: _Raw) -> str:
    from pyspark.sql import functions as F

    lines = spark.read.text(item.path).withColumn("kpass_id", F.monotonically_increasing_id())
    view = _view(lines)
    partitions = dict(item.partitions)
    known = [*SCHEMA_COLUMNS, *raw.columns, *partitions]
    select = [f"{number * _FILE_SHIFT} + kpass_id AS kpass_order"]
    conflicts = []
    for column in raw.columns:
        path = "$['" + column.replace("'", "\\'") + "']"
        value = f"try_variant_get(v, {_literal(path)})"
        text, kind = f"try_variant_get(v, {_literal(path)}, 'string')", _variant_kind(value)
        if column in partitions:
            text, kind, conflict = with_partition(text, kind, _literal(partitions[column]))
            conflicts.append(conflict)
        select += [f"{text} AS {SPARK.ident(column)}", f"{kind} AS {SPARK.ident(column + '__kind')}"]
    items, kind = _verdicts_of_variant("try_variant_get(v, '$.cot_verdicts')")
    select += [f"{items} AS cot_verdicts__list", f"{kind} AS cot_verdicts__kind"]
    select += [f"{'TRUE' if c in partitions else f'array_contains(k, {_literal(c)})'} AS has__{n}"
               for n, c in enumerate(raw.presence)]
    select.append(f"size(filter(k, key -> NOT array_contains({_array_literal(known)}, key))) > 0 AS unknown_keys")
    select.append(f"(size(k) <> size(array_distinct(k)) OR length(value) - length(translate(value, '[{{', '')) "
                  f"> {DEEP_JSON_BRACKETS}{''.join(' OR ' + c for c in conflicts)}) AS numpy_fallback")
    return (f"SELECT {', '.join(select)} FROM (SELECT kpass_id, try_parse_json(value) AS v, "
            f"COALESCE(json_object_keys(value), array()) AS k, value FROM {view} WHERE TRIM(value) <> '')")


def _typed_columns(frame: Any, item: InputFile | None, number: int, raw: _Raw, *, csv: bool = False,
                   together: Sequence[tuple[int, InputFile]] = (), paths: Sequence[str] = ()) -> tuple[str, _Shape]:
    """The raw relation of a typed DataFrame (Parquet, CSV as strings, or the caller's) and its
    shape: the columns it holds natively (:func:`kpass.data.reduction.typed_sql`'s ``native``: a
    BOOLEAN ``correct`` or ``finished``, an integral integer column as BIGINT, a STRING
    categorical column, whose rules then run on the values, not on their text) and the optional
    columns it lacks (null in every row: no rule to check, and no SQL for them).

    ``together``: ``frame`` is one scan of these Parquet files (file number, file; one schema,
    the same partition keys), whose names as Spark gives them (``_metadata.file_path``) are
    ``paths``: each row gets its file's number and partition values from a small table joined on
    the name, and its row in the file from ``_metadata.row_index`` (a row whose file is not found
    goes to the numpy readers, never dropped)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    added = ("kpass_id", "kpass_file_path", "kpass_row")
    if not together:
        frame = frame.withColumn("kpass_id", F.monotonically_increasing_id())
        source, order, fallback = _view(frame), f"{number * _FILE_SHIFT} + kpass_id", "FALSE"
        partitions = {key: _literal(value) for key, value in (item.partitions if item is not None else ())}
    else:
        frame = frame.select("*", F.col("_metadata.file_path").alias("kpass_file_path"),
                             F.col("_metadata.row_index").alias("kpass_row"))
        keys = [key for key, _ in together[0][1].partitions]
        rows = ", ".join("(" + ", ".join([_literal(path), str(n), *(_literal(dict(f.partitions)[key]) for key in keys)])
                         + ")" for path, (n, f) in zip(paths, together))
        names = ", ".join(["kpass_path", "kpass_file", *(f"kpass_p{i}" for i in range(len(keys)))])
        source = (f"{_view(frame)} LEFT JOIN (SELECT * FROM VALUES {rows} AS kpass_files({names})) kpass_files "
                  "ON kpass_file_path = kpass_path")
        order, fallback = f"kpass_file * {_FILE_SHIFT} + kpass_row", "kpass_file IS NULL"
        partitions = {key: f"kpass_p{i}" for i, key in enumerate(keys)}
    kinds = {field.name: field.dataType for field in frame.schema.fields if field.name not in added}
    select = [f"{order} AS kpass_order"]
    native = []
    for column in raw.columns:
        c = SPARK.ident(column)
        kind_of = kinds.get(column)
        categorical = column not in BOOLEAN_COLUMNS and column not in INTEGER_COLUMNS
        if column in partitions and kind_of is None:
            text, kind = partitions[column], "'string'"
        elif kind_of is None:
            text, kind = "CAST(NULL AS STRING)", "'null'"
        elif isinstance(kind_of, T.BooleanType) and column in BOOLEAN_COLUMNS:
            text, kind = c, f"CASE WHEN {c} IS NULL THEN 'null' ELSE 'bool' END"
            native.append(column)
        elif isinstance(kind_of, T.IntegralType) and column in INTEGER_COLUMNS:
            text, kind = f"CAST({c} AS BIGINT)", f"CASE WHEN {c} IS NULL THEN 'null' ELSE 'int' END"
            native.append(column)
        elif isinstance(kind_of, T.StringType) and categorical and not csv:
            text, kind = c, f"CASE WHEN {c} IS NULL THEN 'null' ELSE 'string' END"
            native.append(column)
        elif isinstance(kind_of, T.BooleanType):
            text, kind = f"CAST({c} AS STRING)", f"CASE WHEN {c} IS NULL THEN 'null' ELSE 'bool' END"
        elif isinstance(kind_of, T.IntegralType):
            text, kind = f"CAST({c} AS STRING)", f"CASE WHEN {c} IS NULL THEN 'null' ELSE 'int' END"
        elif isinstance(kind_of, (T.FloatType, T.DoubleType, T.DecimalType)):
            number_sql = f"CAST({c} AS DOUBLE)"
            text = (f"CASE WHEN ABS({number_sql}) < 9.2e18 AND {number_sql} % 1 = 0 THEN "
                    f"CAST(CAST({number_sql} AS BIGINT) AS STRING) ELSE CAST({number_sql} AS STRING) END")
            nan = "'null'" if categorical else "'float'"  # no count or verdict: refused, as numpy reads it
            kind = f"CASE WHEN {c} IS NULL THEN 'null' WHEN isnan({number_sql}) THEN {nan} ELSE 'float' END"
        elif isinstance(kind_of, T.StringType):
            text = f"NULLIF({c}, '')" if csv else c
            kind = f"CASE WHEN {text} IS NULL THEN 'null' ELSE 'string' END"
        else:
            text, kind = f"CAST({c} AS STRING)", f"CASE WHEN {c} IS NULL THEN 'null' ELSE 'other' END"
        if column in partitions and kind_of is not None:  # the file's own column beside its partition
            text, kind, conflict = with_partition(f"CAST({text} AS STRING)", kind, partitions[column])
            fallback = f"({fallback} OR {conflict})"
            native = [name for name in native if name != column]
        select += [f"{text} AS {SPARK.ident(column)}", f"{kind} AS {SPARK.ident(column + '__kind')}"]
    verdicts = kinds.get("cot_verdicts")
    c = SPARK.ident("cot_verdicts")
    if verdicts is None:
        select += ["CAST(NULL AS ARRAY<STRING>) AS cot_verdicts__list", "'null' AS cot_verdicts__kind"]
    elif isinstance(verdicts, T.ArrayType):
        select += [f"transform({c}, e -> CASE WHEN e IS NULL THEN NULL WHEN CAST(e AS STRING) IN ('true', 'false', "
                   f"'0', '1') THEN CAST(e AS STRING) ELSE 'bad' END) AS cot_verdicts__list",
                   f"CASE WHEN {c} IS NULL THEN 'null' ELSE 'list' END AS cot_verdicts__kind"]
    else:
        items, kind = _verdicts_of_variant(f"try_parse_json(CAST({c} AS STRING))")
        select += [f"CASE WHEN {c} IS NULL THEN NULL ELSE {items} END AS cot_verdicts__list",
                   f"CASE WHEN {c} IS NULL OR TRIM(CAST({c} AS STRING)) IN ('', 'null', 'None') THEN 'null' "
                   f"ELSE {kind} END AS cot_verdicts__kind"]
    present = {*kinds, *partitions}
    select += [f"{'TRUE' if c in present else 'FALSE'} AS has__{n}" for n, c in enumerate(raw.presence)]
    select.append("FALSE AS unknown_keys")
    select.append(f"{fallback} AS numpy_fallback")
    absent = tuple(c for c in [*raw.columns, "cot_verdicts"] if c not in present and c not in REQUIRED_COLUMNS)
    return f"SELECT {', '.join(select)} FROM {source}", (tuple(native), absent)


def _is_local(spark: Any) -> bool:
    """Whether the executors write to the driver's file system (``local`` master, classic
    session with a JVM); a cluster's executors write to their own disks, and Spark Connect
    hides the master."""
    if getattr(spark, "_jsc", None) is None:
        return False
    try:
        return str(spark.sparkContext.master).startswith("local")
    except Exception:  # noqa: BLE001 - no master to ask: treat as a cluster
        return False


def _written_table(frame: Any, parent: str | None) -> Any:
    """The rows of ``frame`` as a pyarrow Table, written by the executors to a temporary Parquet
    directory (under ``parent``, default ``$KPASS_TEMP_DIRECTORY`` or the system temporary
    directory) and read back with pyarrow: no row passes through the driver's heap, which in
    local mode is also the executors' (at 10^8 samples the 3.1M problem rows collected through
    ``toArrow`` filled a 2 GiB heap). The directory is removed in every case: after the read,
    on an error and on an interrupt. A ``parent`` that does not exist is created; one that cannot
    be (a file, no permission) is a :class:`~kpass.errors.UsageError` naming it."""
    import shutil
    import tempfile

    import pyarrow.parquet as pq

    base = parent or os.environ.get("KPASS_TEMP_DIRECTORY")
    try:
        if base:
            os.makedirs(base, exist_ok=True)  # as DuckDB does with its spill directory
        directory = tempfile.mkdtemp(prefix="kpass-spark-", dir=base)
    except OSError as exc:
        where = repr(base) if base else "the system temporary directory"
        raise UsageError(f"`temp_directory` {where}: cannot create the Spark engine's temporary directory there "
                         f"({exc.strerror or exc})") from None
    try:
        target = os.path.join(directory, "problems")
        frame.write.parquet(target)
        return pq.read_table(target)  # part files only: pyarrow skips _SUCCESS and the .crc files
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _fetch(frame: Any, *, classes: bool = False, parent: str | None = None,
           ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray] | None]:
    """The reduced problems (:func:`_problems_sql`) as arrays in (model, task, problem_id)
    order: int64 where a column is integral without nulls, else objects (None for null); with
    ``classes``, also ``pid, n_gold, n_wrong, n_wrong_cut`` of every answer class (``pid`` the problem's
    position), from the list column ``kpass_classes``.

    In local mode the executors write the rows to a temporary Parquet directory that pyarrow
    reads (:func:`_written_table`); on a cluster, whose executors cannot write to the driver's
    disk, they come through one Arrow collect (``toArrow``: the driver's heap must hold them)."""
    import pyarrow as pa

    try:
        table = _written_table(frame, parent) if _is_local(frame.sparkSession) else frame.toArrow()
    except Exception as exc:
        if _jvm_gone(exc):
            raise
        if type(exc).__name__ in ("Py4JJavaError", "AnalysisException") or "Spark" in type(exc).__name__:
            raise Violation([], f"Spark cannot read the input: {exc}") from exc
        raise
    order = _key_order(table)
    out = {}
    for name in table.column_names:  # one column at a time: no sorted copy of the whole table
        if name == "kpass_classes":
            continue
        column = table.column(name).take(order).combine_chunks()
        if pa.types.is_integer(column.type) and column.null_count == 0:
            out[name] = column.to_numpy().astype(np.int64, copy=False)
        elif pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            out[name] = _objects(column)
        else:
            array = np.empty(len(column), dtype=object)
            array[:] = column.to_pylist()
            out[name] = array
    if not classes:
        return out, None
    lists = table.column("kpass_classes").take(order).combine_chunks()
    lengths = lists.value_lengths().fill_null(0).to_numpy().astype(np.int64)
    flat = lists.flatten()
    return out, {"pid": np.repeat(np.arange(len(lengths), dtype=np.int64), lengths),
                 "n_gold": flat.field("n_gold").to_numpy().astype(np.int64),
                 "n_wrong": flat.field("n_wrong").to_numpy().astype(np.int64),
                 "n_wrong_cut": flat.field("n_wrong_cut").to_numpy().astype(np.int64)}


def _key_order(table: Any) -> np.ndarray:
    """The positions of ``table``'s rows sorted by (model, task, problem_id) as pyarrow sorts
    them (nulls last), from each key's rank among its distinct values: a ``lexsort`` of
    integers (2.8 s for 3.1M problems), not a sort comparing strings (``sort_by``: 15 s)."""
    import pyarrow.compute as pc

    ranks = []
    for name in ("problem_id", "task", "model"):  # lexsort: the last key is the primary one
        encoded = table.column(name).combine_chunks().dictionary_encode()
        size = len(encoded.dictionary)
        rank = np.empty(size + 1, dtype=np.int64)
        rank[pc.sort_indices(encoded.dictionary).to_numpy()] = np.arange(size)
        rank[size] = size  # null after every value
        ranks.append(rank[encoded.indices.fill_null(size).to_numpy()])
    return np.lexsort(ranks)


def _objects(column: Any) -> np.ndarray:
    """A pyarrow string array as an object array (None for null) holding one Python string per
    distinct value, not one per row (3.1M problem ids of 200 checkpoints are 15,625 strings)."""
    encoded = column.dictionary_encode()
    values = np.empty(len(encoded.dictionary) + 1, dtype=object)
    values[:-1] = encoded.dictionary.to_pylist()  # values[-1] stays None: the null's index
    return values[encoded.indices.fill_null(len(encoded.dictionary)).to_numpy()]


def _problems_sql(reduced: str, needs: Needs) -> str:
    """The problem rows of the reduction ``reduced`` (:func:`kpass.data.reduction.reduction_sql`)
    and, for cons@k, the list ``kpass_classes`` of each problem's answer classes (``n_gold,
    n_wrong`` of every non-null answer): one query, one Spark job, one fetch."""
    if not needs.answer_classes:
        return reduced
    return (f"WITH r AS ({reduced}) SELECT p.*, c.kpass_classes FROM (SELECT * FROM r WHERE is_problem = 1) p "
            "LEFT JOIN (SELECT model, task, problem_id, collect_list(named_struct('n_gold', n_gold, 'n_wrong', n_wrong, "
            "'n_wrong_cut', n_wrong_cut)) "
            "AS kpass_classes FROM r WHERE is_problem = 0 AND answer IS NOT NULL GROUP BY model, task, problem_id) c "
            "ON p.model = c.model AND p.task = c.task AND p.problem_id = c.problem_id")


def _reduce(spark: Any, parts: list[tuple[str, _Shape]], raw: _Raw, needs: Needs, *, extras: list[str],
            sources: list[str], locate: Any, known: list[str], jsonl_views: list[str],
            temp_directory: str | None = None) -> ProblemStatistics:
    """Reduce the raw relations ``parts`` (SQL and shape, see :func:`_typed_columns`): the parts of
    one shape are stacked and typed once (:func:`kpass.data.reduction.typed_sql`), and the typed
    rows of every shape grouped by one query, fetched once (:func:`_fetch`; in local mode through
    a temporary Parquet directory under ``temp_directory``)."""
    names = ", ".join(SPARK.ident(name) for name in raw.names)
    groups: dict[_Shape, list[str]] = {}
    for sql, shape in parts:
        groups.setdefault(shape, []).append(sql)
    typed = " UNION ALL ".join(
        "SELECT * FROM (" + typed_sql("(" + " UNION ALL ".join(f"SELECT {names} FROM ({sql})" for sql in group) + ") raw",
                                      [c for c in [*raw.columns, "cot_verdicts"] if c not in absent], needs.carried_fields,
                                      SPARK, pass_through=["kpass_order", *raw.flags], native=native) + ")"
        for (native, absent), group in groups.items())

    def reduce(wide: bool) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray] | None]:
        reduced = reduction_sql(typed, needs, flags=raw.flags, first_seen="kpass_order",
                                distinct_indices=distinct_indices_sql(SPARK, wide=wide))
        return _fetch(spark.sql(_problems_sql(reduced, needs)), classes=needs.answer_classes, parent=temp_directory)

    problems, classes = reduce(wide=False)
    if len(problems.get("n_samples", ())) == 0:
        raise Violation([], "no samples")
    if not int(np.asarray(problems["n_bad"]).sum()) and (problems["max_index"] >= 64 * INDEX_WORDS).any():
        # indices past the bit words: reduce again, counting those exactly
        problems, classes = reduce(wide=True)
    if int(np.asarray(problems["any_numpy_fallback"], dtype=np.int64).sum()):
        raise NumpyFallback()
    if int(np.asarray(problems["any_unknown_keys"], dtype=np.int64).sum()):
        scans = " UNION ALL ".join(f"SELECT value FROM {view}" for view in jsonl_views)
        rows = spark.sql(f"SELECT DISTINCT key FROM (SELECT explode(filter(json_object_keys(value), key -> NOT "
                         f"array_contains({_array_literal(known)}, key))) AS key FROM ({scans}) "
                         "WHERE TRIM(value) <> '')").collect()
        extras += sorted(row[0] for row in rows)
    seen = [c for n, c in enumerate(raw.presence) if int(np.asarray(problems[f"any_has__{n}"]).sum())]
    extras = list(dict.fromkeys([*(c for c in seen if c not in SCHEMA_COLUMNS), *extras]))
    if any(_close_schema_name(name) for name in extras):
        raise Violation([], "a misspelt column")
    present = [*REQUIRED_COLUMNS, *(c for c in seen if c in SCHEMA_COLUMNS), *extras]
    return statistics_from_rows(problems, classes, needs, sources=sources, columns_present=present,
                                extra_columns=extras, engine="spark", locate=locate)


def _parquet_signature(path: str) -> str | None:
    """The Parquet schema of a file (names, physical and logical types) as text, read from its
    footer without Spark; None when it cannot be read (Spark then reads the file alone)."""
    import pyarrow.parquet as pq

    try:
        return str(pq.read_metadata(path).schema).split("\n", 1)[1]  # past the object's repr line
    except Exception:  # noqa: BLE001 - any unreadable footer: Spark reads the file and says what is wrong
        return None


def _spark_file_names(spark: Any, paths: Sequence[str]) -> list[str] | None:
    """``_metadata.file_path`` of the files ``paths`` as Spark will give it (the qualified Hadoop
    path, canonicalized as Spark's ``FileFormat`` does: ``new Path(path.toString).toUri``);
    None where the session has no JVM (Spark Connect): the files are then read one by one."""
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        return None
    try:
        conf = spark._jsc.hadoopConfiguration()
        hadoop = jvm.org.apache.hadoop.fs.Path
        names = []
        for path in paths:
            qualified = hadoop(path).getFileSystem(conf).makeQualified(hadoop(path))
            names.append(hadoop(qualified.toString()).toUri().toString())
        return names
    except Exception:  # noqa: BLE001 - any failure: one scan per file, as Spark names nothing
        return None


@_engine_failures
def reduce_files_with_spark(files: Sequence[InputFile], needs: Needs, options: EngineOptions = EngineOptions(),
                            ) -> ProblemStatistics:
    """Per-problem statistics of sample files, reduced by Spark.

    Parquet files with the same schema and partition keys are read by one scan (one schema job,
    one generated reader, whatever the number of files), not one scan per file.

    Raises
    ------
    Violation
        A rule of the sample table is broken (turned into the numpy readers' error by
        :func:`kpass.data.engines.reduce_samples`).
    """
    from .duckdb_engine import csv_header
    from .sources import locate_rows

    spark = _session(options)
    raw = _Raw(needs)
    parts: list[tuple[str, _Shape]] = []
    extras, jsonl_views = [], []
    parquet: dict[tuple[str, tuple[str, ...]] | int, list[tuple[int, InputFile]]] = {}
    for number, item in enumerate(files):
        if item.format == "jsonl":
            parts.append((_jsonl_raw(spark, item, number, raw), _TEXT_ONLY))
            jsonl_views.append(parts[-1][0].rsplit(" FROM ", 1)[1].split()[0])
        elif item.format == "csv":
            header = csv_header(item.path)
            if header is None or len(set(header)) != len(header):
                raise Violation([], "unreadable or duplicate CSV header")
            extras += [name for name in header if name not in SCHEMA_COLUMNS]
            frame = spark.read.csv(item.path, header=True, inferSchema=False, mode="FAILFAST", enforceSchema=False)
            parts.append(_typed_columns(frame.toDF(*header), item, number, raw, csv=True))
        else:  # files of one schema and the same partition keys are read by one scan
            signature = _parquet_signature(item.path)
            key = number if signature is None else (signature, tuple(k for k, _ in item.partitions))
            parquet.setdefault(key, []).append((number, item))
    for group in parquet.values():
        paths = _spark_file_names(spark, [item.path for _, item in group]) if len(group) > 1 else None
        if paths is None:
            for number, item in group:
                frame = spark.read.parquet(item.path)
                extras += [name for name in frame.columns if name not in SCHEMA_COLUMNS]
                parts.append(_typed_columns(frame, item, number, raw))
        else:
            frame = spark.read.parquet(*[item.path for _, item in group])
            extras += [name for name in frame.columns if name not in SCHEMA_COLUMNS]
            parts.append(_typed_columns(frame, None, 0, raw, together=group, paths=paths))
    extras += [key for item in files for key, _ in item.partitions if key not in SCHEMA_COLUMNS]
    return _reduce(spark, parts, raw, needs, extras=extras, sources=[item.path for item in files],
                   locate=lambda keys: locate_rows(files, keys), known=[*SCHEMA_COLUMNS, *raw.columns],
                   jsonl_views=jsonl_views, temp_directory=options.temp_directory)


@_engine_failures
def reduce_dataframe(frame: Any, needs: Needs = Needs(), *, source: str = "<Spark DataFrame>",
                     temp_directory: str | None = None) -> ProblemStatistics:
    """Per-problem statistics of a Spark DataFrame of samples (one row per sample, the
    sample-table columns; ``cot_verdicts`` an array of booleans), reduced on the cluster.

    The result goes into :func:`kpass.compute_report` and :func:`kpass.compute_comparison` like a
    :class:`~kpass.SampleTable`; the metric core runs on the driver.

    Parameters
    ----------
    frame : pyspark.sql.DataFrame
    needs : Needs
        The statistics to compute (:meth:`kpass.data.reduction.Needs.for_specs`).
    source : str
        How errors name the input; their ``line`` is the 1-based row in the DataFrame's order.
    temp_directory : str, optional
        Where a local-mode session's executors write the per-problem table for the driver to
        read (removed after the read); default ``$KPASS_TEMP_DIRECTORY`` or the system
        temporary directory.

    Raises
    ------
    DataError
        Invalid data, with the numpy checks' text, naming ``source``, the row and the field.
    """
    from .reduction import raise_violation

    spark = frame.sparkSession
    raw = _Raw(needs)
    extras = [name for name in frame.columns if name not in SCHEMA_COLUMNS]

    def locate(keys: list[tuple[str, str]] | None):
        return _collect_rows(frame, keys, source)

    try:
        return _reduce(spark, [_typed_columns(frame, None, 0, raw)], raw, needs, extras=extras, sources=[source],
                       locate=locate, known=list(SCHEMA_COLUMNS), jsonl_views=[], temp_directory=temp_directory)
    except Violation as violation:
        stand_in = ProblemStatistics.stand_in([source], "spark", locate)
        raise_violation(violation, stand_in, lambda table: statistics_from_table(table, needs))
        raise  # pragma: no cover


def _collect_rows(frame: Any, keys: list[tuple[str, str]] | None, source: str):
    """Rows of a DataFrame for the numpy checks: those of the problems ``keys`` (``None``:
    all; ``[]``: all, converted to find a per-row error), numbered by their position."""
    from pyspark.sql import functions as F

    from kpass.data.table import SampleTable

    numbered = frame.rdd.zipWithIndex().map(lambda pair: (*pair[0], pair[1] + 1)).toDF([*frame.columns, "kpass_line"])
    if keys:
        condition = None
        for task, problem in keys:
            term = (F.col("task").cast("string") == str(task)) & (F.col("problem_id").cast("string") == str(problem))
            condition = term if condition is None else condition | term
        numbered = numbered.where(condition)
    rows = numbered.orderBy("kpass_line").collect()
    records = [{name: (value.tolist() if hasattr(value, "tolist") else value)
                for name, value in row.asDict(recursive=True).items() if name != "kpass_line"} for row in rows]
    lines = [row["kpass_line"] for row in rows]
    if not records:
        from .reduction import NothingLocated

        raise NothingLocated(keys)
    return SampleTable.from_records(records, source=source, lines=lines)
