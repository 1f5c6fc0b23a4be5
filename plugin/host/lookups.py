"""The public look-ups that take a plugin manager: metric specs, readers, tokenizers.

Each builds the :class:`~kpass.Registry` of ``plugin_manager`` (default: the process-wide
manager, :func:`kpass.get_plugin_manager`) once and asks it (:mod:`kpass.host.registry`).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pluggy

from kpass.data.engines import check_engine, reduce_samples
from kpass.data.readers import CsvReader, JsonlReader, ParquetReader
from kpass.data.reduction import Needs, ProblemStatistics
from kpass.data.sources import (EngineOptions, InputFile, expand_globs, expand_inputs, file_labels, label_run,
                                locate_rows)
from kpass.data.table import SampleTable
from kpass.data.validation import empty_file_error
from kpass.errors import DataError, PluginHookError, UsageError
from kpass.host.extractors import EXTRACTOR_COLUMN, AnswerExtractor
from kpass.host.manager import get_registry, metric_registry
from kpass.host.specs import MetricSpec

__all__ = [
    "apply_answer_extractor", "choose_reader", "get_tokenizer", "load_samples", "parse_metric_specs", "read_samples",
    "recorded_cluster", "resolve_answer_extractor",
]


def parse_metric_specs(specs: str | Sequence[str], *,
                       plugin_manager: pluggy.PluginManager | None = None) -> list[MetricSpec]:
    """Parse metric specs into :class:`MetricSpec` objects, one per metric, in input order.

    Parameters
    ----------
    specs : str or sequence of str
        Spec text(s), e.g. ``"pass@1,8,64 cons@16"`` or ``["pass^4", "g-pass@16_0.5,1.0"]``.
    plugin_manager : pluggy.PluginManager, optional
        Host whose registered families are valid (default: :func:`kpass.get_plugin_manager`).

    Returns
    -------
    list of MetricSpec
        Duplicates (same canonical name) are kept once.

    Raises
    ------
    UnknownMetricError
        An unregistered prefix; the message lists every valid family with an example.
    MetricSpecError
        Any other malformed spec (bad k, parameter, option, budget), with the same listing.

    Examples
    --------
    >>> [s.name for s in parse_metric_specs("pass@1,8 maj@16 G-PASS@16_0.50,1")]
    ['pass@1', 'pass@8', 'cons@16', 'G-Pass@16_0.5', 'G-Pass@16_1.0']

    Notes
    -----
    Specs are parsed against the metric families alone (:func:`kpass.host.manager.metric_registry`):
    every plugin is loaded, so a plugin that claims a built-in prefix or fails to import is
    reported, but no reader, tokenizer or extractor is asked for (kpass's own adapters import
    their readers only then).
    """
    return metric_registry(plugin_manager).metric_specs(specs)


def choose_reader(path: str | os.PathLike, *, reader: str | None = None,
                  plugin_manager: pluggy.PluginManager | None = None) -> tuple[str, Any]:
    """The ``(name, reader)`` that will read ``path``.

    The named ``reader`` when given; else the only reader whose ``can_read`` accepts the file;
    else a built-in reader whose suffix matches (it then reports what is wrong with the file).

    Raises
    ------
    ValueError
        Unknown reader name (listing the registered readers).
    DataError
        No reader recognises the file, or several do (choose one with ``reader=``).
    """
    return get_registry(plugin_manager).reader_for(path, reader)


def read_samples(paths: str | os.PathLike | Sequence[str | os.PathLike], *, reader: str | None = None,
                 plugin_manager: pluggy.PluginManager | None = None,
                 progress: Callable[[str, int], None] | None = None,
                 reader_options: Mapping[str, Any] | None = None,
                 labels: Mapping[str, str] | None = None) -> SampleTable:
    """Read sample files with the registered readers and concatenate them into one table.

    Parameters
    ----------
    paths : path or sequence of paths
        Sample files (JSONL, CSV, Parquet, or any format a plugin reader recognises).
    reader : str, optional
        Force one reader by name (``"jsonl"``, ``"csv"``, ``"parquet"``, a plugin's reader).
    plugin_manager : pluggy.PluginManager, optional
        Host to take the readers from (default: :func:`kpass.get_plugin_manager`).
    progress : callable ``(path, units_done)``, optional
        Called while reading (the CLI draws a progress bar with it).
    reader_options : mapping, optional
        Keyword options handed to every reader whose ``read`` accepts them (e.g. the lm-eval
        reader's ``include_path``); a reader that takes none of them reads as usual.
    labels : mapping of str to str, optional
        Path (as given in ``paths``) -> the user's name for its run (``kpass ... --label
        NAME=PATH``): its rows get ``run`` = NAME and their models are shown as ``"<model>
        [NAME]"`` (:func:`kpass.data.sources.label_run`), whatever the reader.

    Raises
    ------
    FileNotFoundError
        A path that does not exist.
    ValueError
        A label for a path that is not among ``paths``.
    DataError
        Unreadable or invalid data, naming the file, the line and the field; samples of one
        problem duplicated or split across files.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = list(paths)
    if not paths:
        raise ValueError("`paths` is empty: give at least one sample file.")
    matches = {os.fspath(path): expand_globs([path]) for path in paths}  # one glob rule for every reader
    labels = {match: label for given, label in (labels or {}).items()
              for match in matches.get(os.fspath(given), [os.fspath(given)])}
    paths = [match for path in paths for match in matches[os.fspath(path)]]
    registry = get_registry(plugin_manager)
    chosen_readers = []
    for path in paths:
        if not os.path.exists(path):
            raise FileNotFoundError(f"no such file: {path}")
        empty = empty_file_error(path)
        if empty is not None and reader is None:  # "empty", not "no reader recognises this file"
            raise DataError(empty, source=str(path), line=1)
        if os.path.isdir(path) and reader is None:
            # Some logs are directories (lm-eval's --output_path); only a reader that claims the
            # directory may read it, never a file reader by its suffix.
            try:
                name, chosen = registry.reader_for(path)
            except DataError as exc:
                raise DataError(f"is a directory that no reader recognises ({exc.message})",
                                source=str(path)) from exc
        else:
            name, chosen = registry.reader_for(path, reader)
        chosen_readers.append((path, name, chosen))
    unknown = sorted(set(labels) - {os.fspath(path) for path in paths})
    if unknown:
        raise ValueError(f"`labels` names {', '.join(unknown)}, not among `paths`.")
    chosen_readers, labels, expansion_notes = _expanded(chosen_readers, labels)
    run_labels, run_notes = _run_labels([item for item in chosen_readers if os.fspath(item[0]) not in labels])
    tables = []
    for path, name, chosen in chosen_readers:
        callback = None if progress is None else (lambda units, _path=str(path): progress(_path, units))
        keywords = {key: value for key, value in (reader_options or {}).items() if _takes_parameter(chosen, key)}
        if callback is not None and _takes_parameter(chosen, "progress"):
            keywords["progress"] = callback
        if str(path) in run_labels:
            keywords["run_label"] = run_labels[str(path)]
        owner = registry.owners.get(("reader", name))
        try:
            table = chosen.read(path, **keywords)
        except (DataError, UsageError):  # bad data, or a bad value of an option the reader takes (exit 2)
            raise
        except Exception as exc:
            raise DataError(f"reader '{name}' (plugin '{owner}') failed in read(): {type(exc).__name__}: {exc}",
                            source=str(path)) from exc
        if not isinstance(table, SampleTable):
            raise PluginHookError(f"reader '{name}' (plugin '{owner}') returned {type(table).__name__} from "
                                  f"read({os.fspath(path)!r}), not a kpass.SampleTable")
        tables.append(label_run(table, labels[os.fspath(path)]) if os.fspath(path) in labels else table)
    notes = [*expansion_notes, *run_notes]
    return SampleTable._concat(list(tables), notes=notes) if notes else SampleTable.concat(tables)


def _expanded(chosen_readers: list[tuple[Any, str, Any]], labels: dict[str, str]
              ) -> tuple[list[tuple[Any, str, Any]], dict[str, str], list[str]]:
    """The inputs after each reader's ``expand(paths) -> (paths, notes)``, if it has one.

    A reader may turn the inputs it was chosen for into the files it reads (the Inspect reader:
    a log directory into the logs ``inspect view --log-dir`` lists, a merged log and its shards
    into one of them); it sees all its inputs at once, except that each input the user labelled
    is expanded alone and its label goes to every file it becomes. Returns the inputs, the
    labels and the readers' notes (what they left out, and why).
    """
    groups: list[tuple[str, Any, str | None, list[Any]]] = []  # (reader name, reader, label, inputs)
    grouped: dict[tuple[int, str | None], list[Any]] = {}
    for path, name, chosen in chosen_readers:
        label = labels.get(os.fspath(path))
        key = (id(chosen), label)
        if getattr(chosen, "expand", None) is not None and key in grouped:
            grouped[key].append(path)
            continue
        groups.append((name, chosen, label, [path]))
        grouped[key] = groups[-1][3]
    expanded: list[tuple[Any, str, Any]] = []
    notes: list[str] = []
    labels = dict(labels)
    for name, chosen, label, given in groups:
        if getattr(chosen, "expand", None) is None:
            expanded.append((given[0], name, chosen))
            continue
        try:
            files, told = chosen.expand(given)
        except DataError:
            raise
        except Exception as exc:
            raise DataError(f"reader '{name}' failed in expand(): {type(exc).__name__}: {exc}",
                            source=", ".join(map(os.fspath, given))) from exc
        notes += told
        for path in files:
            expanded.append((path, name, chosen))
            if label is not None:
                labels[os.fspath(path)] = label
    return expanded, labels, notes


def recorded_cluster(table: Any, cluster_by: str | None) -> tuple[str | None, str | None]:
    """``(field, note)``: the field to cluster by and, when the data chose it, the note that says so.

    ``cluster_by`` when it is given (``note`` None); without it, the field the data recorded (an
    Inspect log's kpass metrics' ``cluster=``, :attr:`SampleTable.recorded_cluster_by`) and a
    note for the report; else ``(None, None)``.
    """
    recorded = getattr(table, "recorded_cluster_by", None)
    if cluster_by is not None or not recorded:
        return cluster_by, None
    return recorded, (f"clustered by '{recorded}', the cluster the log's kpass metrics recorded "
                      "(give --cluster-by FIELD to choose another)")


def _run_labels(chosen_readers: list[tuple[Any, str, Any]]) -> tuple[dict[str, str], list[str]]:
    """Runs of one model and task among the files, told apart before any sample is read.

    A reader may offer ``identity(path) -> {"model", "task", "eval_id", "run"}`` (or a list of
    them: an lm-eval output directory holds several tasks and runs) read from the file's header
    alone (the Inspect and lm-eval readers do) and accept ``read(path, run_label=...)``. Two
    paths of one model and task are then two runs: each is read with its ``run`` as label (the
    reader shows the model as ``"<model> [<run>]"``), so that they are reported side by side and
    ``kpass compare`` pairs them on the problems they share. The same run given twice (one
    ``eval_id``) is an error naming both files, raised before reading either.
    """
    seen: dict[tuple[Any, Any], dict[str, dict[str, Any]]] = {}
    by_eval: dict[Any, str] = {}
    for path, _name, chosen in chosen_readers:
        identity_of = getattr(chosen, "identity", None)
        if identity_of is None or not _takes_parameter(chosen, "run_label"):
            continue
        identity = identity_of(path)
        # one identity, or a list of them (an lm-eval output directory: one per run and task)
        for one in (identity if isinstance(identity, list) else [identity] if identity else []):
            seen.setdefault((one.get("model"), one.get("task")), {}).setdefault(str(path), one)
            eval_id = one.get("eval_id")
            if eval_id is not None and by_eval.setdefault(eval_id, str(path)) != str(path):
                raise DataError(f"is the same run (eval id {eval_id}) as {by_eval[eval_id]}; give each log once",
                                source=str(path))
    labels: dict[str, str] = {}
    notes: list[str] = []
    told: dict[tuple[Any, tuple[str, ...]], list[Any]] = {}  # one note per model and set of runs
    for (model, task), by_path in seen.items():
        runs = list(by_path.items())
        if len(runs) < 2:
            continue
        names = [identity.get("run") or os.path.basename(path) for path, identity in runs]
        if len(set(names)) < len(names):
            names = [path for path, _ in runs]
        for (path, _), label in zip(runs, names):
            labels[path] = label
        told.setdefault((model, tuple(names)), []).append(task)
    for (model, run_names), tasks in told.items():
        listed = ", ".join(map(repr, tasks[:5])) + (", ..." if len(tasks) > 5 else "")
        on = f"task {tasks[0]!r}" if len(tasks) == 1 else f"{len(tasks)} tasks ({listed})"
        notes.append(f"{len(run_names)} runs of model {model!r} on {on} ({', '.join(run_names)}): each run's "
                     f"model is shown as '{model} [<run>]'; compare them with kpass compare --baseline "
                     f"'{model} [{run_names[0]}]'")
    return labels, notes


def _takes_parameter(reader: Any, parameter: str) -> bool:
    try:
        return parameter in inspect.signature(reader.read).parameters
    except (TypeError, ValueError):
        return False


def get_tokenizer(spec: str, *, plugin_manager: pluggy.PluginManager | None = None) -> Any:
    """Build the tokenizer a spec ``NAME:ARGUMENT`` names (``hf:tokenizer.json``, ``tiktoken:cl100k_base``).

    Raises
    ------
    ValueError
        A malformed spec, an unknown name (the message lists the registered ones), or a factory
        that cannot build it (missing file, encoding not installed locally).
    """
    return get_registry(plugin_manager).tokenizer(spec)


def resolve_answer_extractor(spec: str, *, plugin_manager: pluggy.PluginManager | None = None) -> AnswerExtractor:
    """The extractor a spec names (``"boxed"``, ``"regex:PATTERN"``, a plugin's name).

    Raises
    ------
    UsageError
        An unknown name (the message lists the registered ones) or a bad argument.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise UsageError(f"an answer extractor spec is a name or name:argument; got {spec!r}.")
    name, _, argument = spec.partition(":")
    name = name.strip()
    extractors = get_registry(plugin_manager).extractors
    if name not in extractors:
        raise UsageError(f"unknown answer extractor {name!r}; registered: {', '.join(sorted(extractors)) or 'none'} "
                         "(regex takes a pattern: regex:PATTERN).")
    return AnswerExtractor(spec, extractors[name](argument or None))


def apply_answer_extractor(table: SampleTable, spec: str, *,
                           plugin_manager: pluggy.PluginManager | None = None) -> SampleTable:
    """Re-extract every sample's ``answer`` from its generation text with the extractor ``spec``.

    The text is ``metadata["output"]`` (the lm-eval reader, ``kpass-lm-eval``'s sample table and
    the Inspect reader keep it). A sample judged correct gets the ``gold`` answer when the table has
    one (so spellings the judge accepts form one class, the gold class); the others get the
    extracted answer, None when nothing is found (it abstains). :data:`EXTRACTOR_COLUMN` is set
    to ``spec``.

    Raises
    ------
    UsageError
        An unknown extractor or bad argument (:func:`resolve_answer_extractor`).
    DataError
        The table keeps no generation text, or a sample has none (named by file and line).
    """
    extractor = resolve_answer_extractor(spec, plugin_manager=plugin_manager)
    if not table.has_column("metadata"):
        raise DataError(f"--answer-extractor {spec}: the samples keep no generation text (metadata.output) to "
                        "extract answers from", **table.error_location(), field="metadata")
    metadata = table.raw_column("metadata")
    correct = table.raw_column("correct")
    gold = table.column("gold") if table.has_column("gold") else None
    cache: dict[str, str | None] = {}
    answers: list[Any] = []
    for row, (entry, verdict) in enumerate(zip(metadata.tolist(), correct.tolist(), strict=True)):
        text = entry.get("output") if isinstance(entry, dict) else None
        if not isinstance(text, str):
            raise DataError(f"--answer-extractor {spec}: this sample keeps no generation text (metadata.output)",
                            **table.error_location(row), field="metadata")
        if verdict and gold is not None and gold[row] is not None:
            answers.append(gold[row])
            continue
        if text not in cache:
            cache[text] = extractor.extract(text)
        answers.append(cache[text])
    return table.with_categorical_columns({"answer": answers, EXTRACTOR_COLUMN: [spec] * len(table)})


def _claimed_by_builtin(files: Sequence[InputFile], reader: str | None, plugin_manager: Any) -> bool:
    """Whether every file goes to a built-in JSONL/CSV/Parquet reader (not a plugin's)."""

    if reader is not None and reader not in ("jsonl", "csv", "parquet"):
        return False
    for item in files:
        try:
            _, chosen = choose_reader(item.path, reader=reader, plugin_manager=plugin_manager)
        except DataError:
            return False
        if not isinstance(chosen, (JsonlReader, CsvReader, ParquetReader)):
            return False
    return True


def load_samples(paths: Sequence[str | os.PathLike], needs: Needs | None, *, engine: str | None = None,
                 reader: str | None = None, plugin_manager: pluggy.PluginManager | None = None,
                 options: EngineOptions = EngineOptions(),
                 progress: Callable[[str, int], None] | None = None,
                 reader_options: Mapping[str, Any] | None = None,
                 labels: Mapping[str, str] | None = None) -> SampleTable | ProblemStatistics:
    """Read samples for a computation: a :class:`~kpass.SampleTable` with the numpy engine (or
    when a plugin's format is among the inputs, or ``needs`` is None: the computation needs the
    samples), else the engine's :class:`~kpass.data.reduction.ProblemStatistics`.

    With ``labels`` (given path -> run name, see :func:`read_samples`) the samples are read in
    memory whatever the engine: each file of a labelled glob or directory carries its label.

    Raises
    ------
    UsageError
        Unknown engine.
    FileNotFoundError
        A missing path.
    DataError
        Invalid data (file, line, field), exactly as the numpy readers say it.
    """
    engine = check_engine(engine)
    files = None if _directory_claimed_whole(paths, reader, plugin_manager) else expand_inputs(paths)
    if files is None:  # a plugin's format (an Inspect log, an lm-eval output directory)
        if engine == "spark":
            raise UsageError("the spark engine reads JSONL, CSV and Parquet sample tables; these inputs need a "
                             "plugin reader: use --engine numpy")
        return read_samples(paths, reader=reader, plugin_manager=plugin_manager, progress=progress,
                            reader_options=reader_options, labels=labels)
    if labels:
        return read_samples([item.path for item in files], reader=reader, plugin_manager=plugin_manager,
                            progress=progress, reader_options=reader_options, labels=file_labels(paths, labels))
    builtin = _claimed_by_builtin(files, reader, plugin_manager)
    if engine == "numpy" or needs is None or not builtin:
        if builtin and any(item.partitions for item in files):
            return locate_rows(files, None)
        return read_samples([item.path for item in files], reader=reader, plugin_manager=plugin_manager,
                            progress=progress, reader_options=reader_options)
    return reduce_samples(files, needs, engine=engine, options=options)


def _directory_claimed_whole(paths: Sequence[str | os.PathLike], reader: str | None, plugin_manager: Any) -> bool:
    """Whether a plugin reader claims one of the directories among ``paths`` as a whole (an
    lm-eval output directory holds lm-eval's samples and kpass's own table of the same run: read
    file by file, every sample would count twice)."""
    for path in paths:
        if not os.path.isdir(path):
            continue
        try:
            _, chosen = choose_reader(path, reader=reader, plugin_manager=plugin_manager)
        except (DataError, UsageError):
            continue
        if not isinstance(chosen, (JsonlReader, CsvReader, ParquetReader)):
            return True
    return False
