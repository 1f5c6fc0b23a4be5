"""Engines that reduce sample logs to per-problem statistics, and what they read.

Three engines compute the same :class:`~kpass.data.reduction.ProblemStatistics`:

- ``numpy``: the in-memory :class:`~kpass.SampleTable` (every reader, every plugin format);
- ``duckdb`` (the default for JSONL, CSV and Parquet): embedded, streaming and out of core;
- ``spark``: Apache Spark (pyspark), for logs that live in a cluster; the core runs on the driver.

:func:`kpass.host.lookups.load_samples` is what every command that reads samples calls: it returns a
``SampleTable`` (numpy) or ``ProblemStatistics`` (the others), and both go into
:func:`kpass.compute_report` and :func:`kpass.compute_comparison` unchanged.

Inputs (:func:`expand_inputs`): files, glob patterns (``logs/*.jsonl``, ``runs/**/*.parquet``),
and directories of sample files, including hive-partitioned datasets (``model=a/task=b/part-0.parquet``:
``model`` and ``task`` become columns). A file that a plugin reader claims (an Inspect log, an
lm-eval sample log) is read by that reader with the numpy engine.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import partial

from kpass.errors import UsageError
from kpass.data.problems import statistics_from_table
from .sources import EngineOptions, InputFile, expand_inputs, locate_rows
from .reduction import Needs, NothingLocated, NumpyFallback, ProblemStatistics, Violation, raise_violation

__all__ = ["DEFAULT_ENGINE", "ENGINES", "EngineOptions", "InputFile", "check_engine", "expand_inputs",
           "locate_rows", "reduce_samples"]

ENGINES = ("numpy", "duckdb", "spark")
#: More files than this, together no larger than :data:`SMALL_INPUT_BYTES`, are reduced by the numpy
#: path on the DuckDB engine: DuckDB's query holds one scan per file (each with its own line numbers
#: and partition values), and its planning time and memory grow faster than the number of files
#: (2,000 files of 3 rows: 28 s and 1.5 GB against numpy's 3 s and 130 MB). Larger inputs stay on
#: DuckDB, out of core.
DUCKDB_MAX_FILES = 256
SMALL_INPUT_BYTES = 512 * 2**20
#: The engine of every command that reads JSONL, CSV or Parquet, unless ``--engine`` says otherwise.
DEFAULT_ENGINE = "duckdb"


def _many_small_files(files: Sequence[InputFile], options: EngineOptions) -> bool:
    """More than :data:`DUCKDB_MAX_FILES` plain (uncompressed) JSONL or CSV files holding at most
    :data:`SMALL_INPUT_BYTES` together, and no memory limit asked for: what the numpy path holds
    in memory is then about the files' size."""
    if len(files) <= DUCKDB_MAX_FILES or options.memory_limit or os.environ.get("KPASS_MEMORY_LIMIT"):
        return False
    total = 0
    for item in files:
        if item.format not in ("jsonl", "csv") or item.path.lower().endswith(".gz"):
            return False
        try:
            total += os.path.getsize(item.path)
        except OSError:
            return False
        if total > SMALL_INPUT_BYTES:
            return False
    return True


def check_engine(engine: str | None) -> str:
    """The engine name, checked (``None``: :data:`DEFAULT_ENGINE`)."""
    engine = DEFAULT_ENGINE if engine is None else engine
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r}; engines: {', '.join(ENGINES)}")
    return engine


def reduce_samples(inputs: Sequence[InputFile] | Sequence[str | os.PathLike], needs: Needs = Needs(), *,
                   engine: str | None = None, options: EngineOptions = EngineOptions()) -> ProblemStatistics:
    """Reduce sample files to per-problem statistics with an engine.

    Parameters
    ----------
    inputs : sequence of paths (files, globs, directories) or of :class:`InputFile`
    needs : Needs
        The statistics to compute (:meth:`Needs.for_specs`).
    engine : {"duckdb", "spark", "numpy"}, default: "duckdb"
    options : EngineOptions

    Raises
    ------
    DataError
        Invalid data, with the numpy readers' text (file, line, field).
    """
    engine = check_engine(engine)
    files = [item for item in inputs if isinstance(item, InputFile)]
    paths = [item for item in inputs if not isinstance(item, InputFile)]
    if paths:
        if files:
            raise TypeError("`inputs` of reduce_samples: give paths or InputFile items, not both")
        expanded = expand_inputs(paths)
        if expanded is None:
            raise UsageError(f"the {engine} engine reads JSONL, CSV and Parquet files; got {', '.join(map(str, paths))}")
        files = expanded
    if engine == "numpy" or (engine == "duckdb" and _many_small_files(files, options)):
        return statistics_from_table(locate_rows(files, None), needs)
    try:
        if engine == "duckdb":
            from .duckdb_engine import reduce_with_duckdb

            return reduce_with_duckdb(files, needs, options)
        from .spark_engine import reduce_files_with_spark

        return reduce_files_with_spark(files, needs, options)
    except NumpyFallback:  # input only the numpy readers can judge (module docstring of kpass.data.reduction)
        return _numpy_judges(files, needs)
    except Violation as violation:  # a per-row or key rule: the numpy readers name file and line
        stand_in = ProblemStatistics.stand_in([f.path for f in files], engine, partial(locate_rows, files))
        raise_violation(violation, stand_in, lambda table: statistics_from_table(table, needs))
        raise  # pragma: no cover - raise_violation always raises


# ----------------------------------------------------------------------------------------------
# reading rows again with the numpy readers (where errors get their file, line and field)


def _numpy_judges(files: Sequence[InputFile], needs: Needs) -> ProblemStatistics:
    """The numpy reduction of input an engine cannot judge (JSON that only Python's strict parser
    reads as the numpy readers do, bytes DuckDB's parsers refuse): every row is first converted
    and checked without keeping any (the numpy readers' first error, in bounded memory), then,
    if none, reduced by the numpy path."""
    try:
        locate_rows(files, [])
    except NothingLocated:
        pass
    return statistics_from_table(locate_rows(files, None), needs)
