"""Exceptions raised by the kpass host (the core raises plain ``ValueError``/``TypeError``)."""

from __future__ import annotations

__all__ = [
    "DataError", "EngineError", "MetricSpecError", "OutputError", "PluginConflictError", "PluginHookError", "PluginLoadError",
    "PluginTypeError", "UnknownMetricError",
    "UsageError",
]


class DataError(ValueError):
    """Bad or inconsistent sample data, located by source, line and field.

    The ``kpass`` command turns it into exit code 1 and prints ``str(error)``, which names the
    file, the line and the field when they are known.

    Parameters
    ----------
    message : str
        What is wrong and, where possible, how to fix it.
    source : str, optional
        File name (or the ``source`` label given to :meth:`kpass.SampleTable.from_records`).
    line : int, optional
        1-based line of the offending record (the header is line 1 in CSV files).
    field : str, optional
        Column / field concerned.
    """

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None,
                 field: str | None = None) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.field = field
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = []
        if self.source is not None:
            where.append(str(self.source))
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.field is not None:
            where.append(f"field '{self.field}'")
        return f"{', '.join(where)}: {self.message}" if where else self.message

    def __reduce__(self):  # keep keyword-only arguments through pickling (multiprocessing)
        return (_rebuild_data_error, (self.message, self.source, self.line, self.field))


def _rebuild_data_error(message, source, line, field):
    return DataError(message, source=source, line=line, field=field)


class UsageError(ValueError):
    """An option the caller chose that cannot work, whatever the data (the ``kpass`` command: exit 2).

    Examples: an unknown interval ``method``, ``--method clustered-t`` without ``--cluster-by``, a
    grouping (``--by task``) that would pool several models' samples of one problem. Data that a
    metric cannot use is a :class:`DataError` instead (exit 1).
    """


class OutputError(UsageError):
    """An output that cannot be written (a directory, no permission, a full disk, a name too long).

    The message is one line naming the path and the reason; ``exit_code`` is what the ``kpass``
    command exits with: 2 when the path is the problem, 1 when the disk is (full, I/O error).
    """

    def __init__(self, message: str, *, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class EngineError(RuntimeError):
    """An engine (Spark, DuckDB) failed for a reason outside the data and the options: Spark
    without Java, a JVM killed mid-run. The ``kpass`` command prints one line and exits 1."""


class MetricSpecError(ValueError):
    """A metric spec such as ``pass@1,8`` that cannot be parsed; the message lists what is valid."""


class UnknownMetricError(MetricSpecError, KeyError):
    """A metric spec naming a family no plugin registered; the message lists the families."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class PluginLoadError(RuntimeError):
    """A plugin of the ``kpass`` entry-point group could not be imported or registered."""


class PluginHookError(PluginLoadError):
    """A plugin's hook or reader raised, or returned the wrong type; the message names the plugin
    and the hook (or the reader's method)."""


class PluginTypeError(PluginHookError, TypeError):
    """A plugin registered an object of the wrong kind (also a ``TypeError``)."""


class PluginConflictError(PluginLoadError, ValueError):
    """Two plugins registered one name; the message names both (a ``ValueError`` too)."""
