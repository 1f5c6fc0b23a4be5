"""Small DuckDB helpers shared by the general reduction (:mod:`kpass.data.duckdb_engine`) and the
fast path for regular JSON lines (:mod:`kpass.data.duckdb_jsonl`): quoting, running a query with
progress, fetching columns as numpy arrays."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np

from .sources import EngineOptions

__all__ = ["FILE_SHIFT", "fetch_columns", "run_with_progress", "sql_literal"]

#: Order key of a row: file number * 2**40 + its ordinal in the file.
FILE_SHIFT = 1 << 40


def sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def run_with_progress(con: Any, sql: str, options: EngineOptions) -> None:
    """Execute ``sql``, reporting DuckDB's progress (percent) while it runs."""
    if options.progress is None:
        con.execute(sql)
        return
    failure: list[BaseException] = []

    def work() -> None:
        try:
            con.execute(sql)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            failure.append(exc)

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.2)
            try:
                percent = con.query_progress()
            except Exception:  # noqa: BLE001 - progress is best effort
                percent = -1
            if percent is not None and percent >= 0:
                options.progress(float(percent))
    except BaseException:  # Ctrl-C: stop the query, so the connection can close (and remove its spill files)
        con.interrupt()
        while worker.is_alive():  # a second Ctrl-C (or DuckDB's own, raised as it stops) waits too
            try:
                worker.join()
            except KeyboardInterrupt:
                con.interrupt()
        _wait_until_idle(con)
        raise
    if failure:
        raise failure[0]
    options.progress(100.0)


def _wait_until_idle(con: Any, seconds: float = 5.0) -> None:
    """Wait until ``con`` takes a query again: after a Ctrl-C, DuckDB's own SIGINT handling keeps
    the connection busy for a moment after the query stopped, and a busy connection refuses the
    statements (DROP, close) that remove its temporary tables and spill files."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            con.execute("SELECT 1")
            return
        except Exception:  # noqa: BLE001 - busy (or closed): retry until the deadline
            if time.monotonic() > deadline:
                return
            time.sleep(0.05)


def fetch_columns(con: Any, sql: str) -> dict[str, np.ndarray]:
    result = con.execute(sql).fetchnumpy()
    out = {}
    for name, values in result.items():
        if isinstance(values, np.ma.MaskedArray):
            mask = np.ma.getmaskarray(values)
            data = np.asarray(values.data, dtype=object)
            data[mask] = None
            values = data
        out[name] = values
    return out
