"""Read lm-eval ``--log_samples`` output into a :class:`kpass.SampleTable` (post hoc, no re-run).

``lm_eval ... --log_samples --output_path OUT`` writes, per model, ``OUT/<model>/results_<date>.json``
(the task configs: filters, metrics, ``repeats``) and ``OUT/<model>/samples_<task>_<date>.jsonl``
(one line per document and filter pipeline, with all K raw generations in ``resps``). This reader
re-applies each task's own filter pipelines without their selection steps to all K generations
(:mod:`kpass.adapters.lm_eval_samples`), judges each extracted answer with the task's first
binary metric (``exact_match`` for most generation tasks, with its YAML options), and returns one
row per generation: ``problem_id`` = ``doc_id``, ``task`` = ``"<task>/<filter>"``.

Accepted paths: an output directory (searched recursively), a ``results_*.json`` file, or a
``samples_*.jsonl`` file (its ``results_*.json`` of the same run must sit beside it).

Runs and judges (:mod:`kpass.adapters.lm_eval_provenance`): each results file is a run, named in
every row's ``run`` column; runs of one model and task are told apart by their model shown as
``"<model> [<run>]"`` (under one directory here; across paths through :meth:`LmEvalSamplesReader.identity`
and :func:`kpass.read_samples`). Every row's ``judge`` column names the task metric that judged it:
``judge=`` if given, else the one a live ``kpass-lm-eval`` run recorded, else the task's first binary metric.

Groups (``--tasks <group>``): the run's groups as the results file records them
(:func:`task_groups_of`) go into :attr:`kpass.SampleTable.task_groups`, so reports add a row per
group (subtasks pooled, the subtask as the cluster; :mod:`kpass.reports.task_groups`). A single
samples file carries no groups.

For every pipeline that ends in ``take_first``, the re-scored first generation must agree with the
score lm-eval logged for it; a disagreement (multiple targets, a target mapping, a custom metric)
is a :class:`kpass.DataError` naming the file and line, never silently different numbers.

Token budgets (``kpass budget OUTPUT_DIR --budgets ... --tokenizer SPEC``): every row carries its raw
generation in ``metadata["output"]``, ``finished`` = the pipeline extracted an answer, and, for
unfinished rows, ``output_tokens`` = the run's generation limit (see
:mod:`kpass.adapters.lm_eval_samples`). lm-eval logs no usage data, so answer positions come only
from the user's tokenizer (choose the model's own, ``hf:path/to/tokenizer.json``, for exact
budgets: ``max_gen_toks`` counts the model's tokens). The limit is :func:`max_gen_toks_of`: the
task's ``generation_kwargs.max_gen_toks``, else ``max_gen_toks`` in the run's ``gen_kwargs`` or
``model_args``, else lm-eval's default of 256 (its API, Hugging Face and vLLM models); budgets above
it are an error naming the budget.

Limits (each raises :class:`kpass.DataError` naming the task and file): tasks scored by a custom
``process_results`` function, by ``doc_to_choice`` targets, or only by ``!function`` metrics cannot be
re-scored post hoc; run them through ``kpass-lm-eval`` instead, which scores with the live task.
Non-generation tasks (log-likelihood, multiple choice) have no K samples and are skipped with a
warning and a note in the table's :attr:`~kpass.SampleTable.notes` (so ``kpass report`` prints it and
``--format json`` keeps it).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .lm_eval_finishing import DEFAULT_REASONING_MARKERS
from .lm_eval_layouts import (LAYOUT_03, LAYOUT_040, legacy_job, legacy_layout, legacy_model_name, legacy_records,
                              legacy_samples_file, legacy_write_out_orphans, write_out_tables, write_out_tasks)
from .lm_eval_provenance import (JUDGE_COLUMN, RUN_COLUMN, judge_note, logged_judge, recorded_judges, run_names,
                                 shown_runs)
from .lm_eval_samples import (Generations, ScoredDocuments, distinct_pipelines, sample_columns, sample_pipelines,
                              score_samples, task_key)
from .lm_eval_judging import check_against_lm_eval, logged_verdicts, task_scoring
from .lm_eval_judging import data_error as _data_error
from .lm_eval_scoring import is_predict_only, restore_task_scoring

__all__ = ["LM_EVAL_DEFAULT_MAX_GEN_TOKS", "LmEvalSamplesReader", "max_gen_toks_of", "read_lm_eval_output",
           "task_groups_of"]

logger = logging.getLogger(__name__)

#: ``results_<date>.json`` (``--output_path DIR``) or ``<stem>_<date>.json`` (``--output_path DIR/<stem>.json``,
#: lm-eval's ``EvaluationTracker.save_results_aggregated``).
_DATE = r"(?P<date>\d{4}-\d{2}-\d{2}T[^_/]+?)"
_RESULTS_PATTERN = re.compile(rf"^(?P<stem>.+)_{_DATE}\.json$")
#: ``samples_<task>_<date>.jsonl``; lm-eval 0.4.0-0.4.2 wrote ``samples_<task>_<date>.json``.
_SAMPLES_PATTERN = re.compile(rf"^samples_(?P<task>.+)_{_DATE}\.(?P<suffix>jsonl|json)$")
_NOT_RESULTS_STEMS = ("samples", "kpass", "kpass_samples")
#: Output types of generation tasks (``greedy_until`` before lm-eval 0.4.0, ``generate_until`` since).
_GENERATION_TYPES = frozenset({"generate_until", "greedy_until"})
#: lm-eval 0.4.13's generation limit when neither the task nor the run sets ``max_gen_toks``
#: (``TemplateAPI``, ``HFLM`` and ``VLLM`` all default to 256).
LM_EVAL_DEFAULT_MAX_GEN_TOKS = 256


class _IncompleteRun(Exception):
    """A run whose files are missing or cut short; in a directory, the other runs are still read."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


@dataclasses.dataclass(frozen=True)
class _Run:
    """How one run (results file) is read: its ``run`` name, whether its model is shown as
    ``"<model> [<run>]"``, and the metric asked to judge its samples (None: recorded or default)."""

    name: str
    shown: bool = False
    judge: str | None = None


def _results_match(name: str) -> re.Match | None:
    match = _RESULTS_PATTERN.match(name)
    if match is None or _SAMPLES_PATTERN.match(name) or match.group("stem") in _NOT_RESULTS_STEMS:
        return None
    return match


def _run_date(results_path: Path) -> str:
    """The run date in the name of a results file that :func:`_results_match` accepted."""
    match = _results_match(results_path.name)
    if match is None and legacy_layout(results_path) is not None:  # 0.3 / 0.4.0-0.4.2: no date in the name
        return results_path.stem
    if match is None:
        raise ValueError(f"{results_path}: not an lm-eval results file name (results_<date>.json)")
    return match.group("date")


class LmEvalSamplesReader:
    """The ``lm_eval`` reader registered through kpass's ``register_readers`` hook."""

    name = "lm_eval"
    description = ("lm-evaluation-harness --log_samples output (results_*.json or <name>_*.json + "
                   "samples_*.jsonl, lm-eval 0.3-0.4.13 layouts)")

    def can_read(self, path: str | Path) -> bool:
        """True for an lm-eval output directory, a results JSON or a samples file of lm-eval."""
        path = Path(path)
        try:
            if path.is_dir():
                return any(True for _ in _results_files(path)) or any(path.rglob("*_write_out_info.json"))
            if path.is_file():
                if _results_match(path.name):
                    return _looks_like_results(path)
                if _SAMPLES_PATTERN.match(path.name):
                    return _looks_like_samples(path)
                return _legacy_job(path) is not None
        except OSError:
            return False
        return False

    def identity(self, path: str | Path) -> list[dict[str, Any]] | None:
        """One ``{"model", "task", "eval_id", "run"}`` per (run, task) under ``path``, from the results
        files alone (cheap), for :func:`kpass.read_samples` to tell two runs of one model and task
        apart before reading them: ``eval_id`` is the results file, ``run`` the path's default run
        name (:func:`kpass.adapters.lm_eval_provenance.run_names`)."""
        try:
            jobs = _jobs(Path(path))
        except Exception:  # noqa: BLE001 - read() reports what is wrong
            return None
        run = _path_run_name(Path(path))
        out = []
        for results_path, only_task in jobs:
            header = _run_header(results_path)
            if header is None:
                continue
            model, tasks = header
            for task in [only_task] if only_task is not None else tasks:
                out.append({"model": model, "task": task, "eval_id": str(results_path.resolve()), "run": run})
        return out or None

    def read(self, path: str | Path, *, include_path: Sequence[str | Path] | None = None, judge: str | None = None,
             run_label: str | None = None, tokenizer: Any = None, approximate_tokenizer: Any = None,
             reasoning_markers: Any = DEFAULT_REASONING_MARKERS):
        """Read ``path``; see :func:`read_lm_eval_output`."""
        return read_lm_eval_output(path, include_path=include_path or (), judge=judge, run_label=run_label,
                                   tokenizer=tokenizer, approximate_tokenizer=approximate_tokenizer,
                                   reasoning_markers=reasoning_markers)


def _looks_like_results(path: Path) -> bool:
    try:
        with path.open("rb") as handle:  # bytes: a file with bad bytes is still ours, and read() names them
            head = handle.read(4096)
    except OSError:
        return False
    return b'"results"' in head or b'"configs"' in head


def _looks_like_samples(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(65536)
    except OSError:
        return False
    if head.lstrip().startswith(b"["):  # a JSON array of sample records (0.4.0-0.4.2, and before); read() names bad bytes
        return b'"doc_id"' in head and b'"resps"' in head
    try:  # a first line that is not UTF-8 JSON: the JSONL reader claims it and names the line
        record = json.loads(head.split(b"\n", 1)[0])
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False
    return isinstance(record, dict) and "doc_id" in record and "resps" in record


def _results_files(directory: Path):
    for candidate in sorted(directory.rglob("*.json")):
        if candidate.is_file() and ((_results_match(candidate.name) and _looks_like_results(candidate))
                                    or legacy_layout(candidate) is not None):  # 0.3, 0.4.0-0.4.2
            yield candidate


def _legacy_job(path: Path) -> tuple[Path, str | None] | None:
    """:func:`kpass.adapters.lm_eval_layouts.legacy_job`; a file it cannot place is not the reader's."""
    try:
        return legacy_job(path)
    except Exception:  # noqa: BLE001 - read() says what is missing
        return (path, None) if path.name.endswith("_write_out_info.json") else None


def _samples_file(results_path: Path, task: str, date: str) -> Path | None:
    for suffix in ("jsonl", "json"):
        candidate = results_path.with_name(f"samples_{task}_{date}.{suffix}")
        if candidate.is_file():
            return candidate
    return None


def _jobs(path: Path) -> list[tuple[Path, str | None]]:
    """``(results file, only this task or None)`` of every run under ``path``."""
    if path.is_dir():
        results_files = list(_results_files(path))
        if not results_files and any(path.rglob("*_write_out_info.json")):
            raise _data_error("lm-eval 0.3 --write_out files name no model: kpass reads them with the results file "
                              "(--output_path JSON) of their run, which must lie beside them", source=path)
        if not results_files:
            raise _data_error("no lm-eval results file (results_<date>.json or <name>_<date>.json) in this "
                              "directory (was lm_eval run with --output_path?)", source=path)
        return [(results, None) for results in results_files]
    if path.is_file() and _results_match(path.name):
        return [(path, None)]
    if path.is_file() and (match := _SAMPLES_PATTERN.match(path.name)):
        candidates = [c for c in sorted(path.parent.glob(f"*_{match.group('date')}.json"))
                      if _results_match(c.name) and _looks_like_results(c)]
        if not candidates:
            raise _data_error(f"the results file of this run (results_{match.group('date')}.json, or "
                              f"<name>_{match.group('date')}.json) is missing; kpass needs it for the task's "
                              "filters and metrics", source=path)
        return [(candidates[0], match.group("task"))]
    if path.is_file() and (job := legacy_job(path)) is not None:  # lm-eval 0.3 and 0.4.0-0.4.2 layouts
        return [job]
    raise _data_error("not an lm-eval output directory, results file or samples_*.jsonl file", source=path)


def _path_run_name(path: Path) -> str:
    """The default run name of everything under ``path``: a directory's name, a file's run date."""
    if path.is_dir():
        return path.resolve().name or str(path)
    match = _results_match(path.name) or _SAMPLES_PATTERN.match(path.name)
    return match.group("date") if match else path.name


def _run_header(results_path: Path) -> tuple[str, list[str]] | None:
    """``(model, tasks)`` of a run from its results file; None when it cannot be read (read() says why)."""
    try:
        results = _load_json(results_path)
    except Exception:  # noqa: BLE001 - an incomplete run: reading it reports what is wrong
        return None
    configs = results.get("configs")
    if not isinstance(configs, Mapping) and legacy_layout(results_path, results) == LAYOUT_03:
        tasks = write_out_tasks(results_path, results)  # 0.3: the tasks with per-sample outputs
        return (_model_name(results, results_path), tasks) if tasks else None
    return _model_name(results, results_path), list(configs) if isinstance(configs, Mapping) else []


def read_lm_eval_output(path: str | Path, *, include_path: Sequence[str | Path] = (), judge: str | None = None,
                        run_label: str | None = None, tokenizer: Any = None, approximate_tokenizer: Any = None,
                        reasoning_markers: Any = DEFAULT_REASONING_MARKERS):
    """Read lm-eval ``--log_samples`` output into a sample table.

    Parameters
    ----------
    path : str or Path
        Output directory, a results file (``results_<date>.json``, or ``<stem>_<date>.json`` from
        ``--output_path DIR/<stem>.json``) or a samples file (``samples_<task>_<date>.jsonl``, or
        ``.json`` from lm-eval 0.4.0-0.4.2).
    include_path : sequence of path, optional
        Directories of local task YAMLs, for tasks scored by their own ``process_results``
        (:func:`kpass.adapters.lm_eval_answers.resolve_process_results`).
    judge : str, optional
        The task metric that judges every sample (``exact_match``, ``math_verify``; ``kpass report
        --judge``). Default: the metric the live ``kpass-lm-eval`` run recorded for the task and
        pipeline (``results["kpass"]["tasks"][task]["judged_by"]``), else the task's first binary
        metric. Every row's ``judge`` column names the metric used.
    run_label : str, optional
        Name of the run(s) under ``path``: each row's ``run`` is ``run_label`` (``"<run_label>/<date>"``
        when ``path`` holds several runs) and its model is shown as ``"<model> [<run>]"``.
        Without it, ``run`` is the default of :func:`kpass.adapters.lm_eval_provenance.run_names`, and only runs that share a model
        and task under ``path`` show their model so (a note says which).
    tokenizer, approximate_tokenizer : str or tokenizer, optional
        The model's own tokenizer (a spec such as ``"hf:path/tokenizer.json"`` or an object with
        ``token_ends``), or one declared approximate (a note then says the counts are): each
        generation is counted against its ``max_gen_toks`` to decide ``finished``
        (:mod:`kpass.adapters.lm_eval_finishing`). Without either, ``finished`` is known only for
        correct samples and unclosed reasoning blocks, and fin@k refuses. A live ``kpass-lm-eval``
        run's output needs neither: the evidence it saw (the API's finish reasons) is recorded in
        its results file and used (:func:`~kpass.adapters.lm_eval_finishing.recorded_finish_reasons`).
    reasoning_markers : (str, str) or None, default ``("<think>", "</think>")``
        Opening and closing marker of a reasoning block: a generation that ends inside an unclosed
        one is unfinished; None: not looked for (``--reasoning-markers OPEN,CLOSE`` or ``none``).

    Returns
    -------
    kpass.SampleTable
        One row per generation of every generation task (and distinct filter pipeline) found. In a
        directory, a run whose files are missing or cut short is left out and named in a note
        (:attr:`kpass.SampleTable.notes`), as are samples files without a results file. The
        columns ``run`` and ``judge`` say which run each row comes from and which metric judged it.

    Raises
    ------
    kpass.DataError
        Missing files, corrupt or truncated JSON (file and line named) of a file given by name or
        of every run in a directory, a task that cannot be re-scored post hoc, a ``judge`` the
        task does not compute.
    """
    from kpass import SampleTable

    from .lm_eval_finishing import check_reasoning_markers, resolve_tokenizer

    if tokenizer is not None and approximate_tokenizer is not None:
        raise ValueError("give `tokenizer` (the model's own) or `approximate_tokenizer`, not both.")
    counting = (resolve_tokenizer(tokenizer if tokenizer is not None else approximate_tokenizer),
                approximate_tokenizer is not None, check_reasoning_markers(reasoning_markers))
    path = Path(path)
    jobs = _jobs(path)
    directory_notes: list[str] = []
    if path.is_dir():
        directory_notes.extend(_orphan_notes(path, [results for results, _ in jobs]))
    names = run_names({results: _run_date(results) for results, _ in jobs}, path, run_label)
    headers = {results: (header[0], [only_task] if only_task is not None else header[1])
               for results, only_task in jobs if (header := _run_header(results)) is not None}
    shown, run_notes = shown_runs(headers, names, path, run_label)

    tables: list[Any] = []
    incomplete: list[Exception] = []
    for results_path, only_task in jobs:
        run = _Run(names[results_path], results_path in shown, judge)
        try:
            run_tables = list(_read_run(results_path, only_task, include_path, run, counting))
        except _IncompleteRun as skipped:
            if len(jobs) == 1:
                raise skipped.error from None
            incomplete.append(skipped.error)
            directory_notes.append(f"{results_path}: incomplete lm-eval run left out ({skipped.error})")
            continue
        tables.extend(table for _, table in run_tables)
    if not tables:
        if incomplete:
            raise incomplete[0]
        raise _data_error("no generation task with logged samples found (lm-eval needs --log_samples, "
                          "and only generate_until tasks have K samples)", source=path)
    for note in directory_notes:
        warnings.warn(f"kpass: {note}.", stacklevel=2)
    table = tables[0] if len(tables) == 1 else SampleTable.concat(tables)
    if directory_notes or run_notes:
        table.notes = tuple(dict.fromkeys([*directory_notes, *run_notes, *table.notes]))
    return table


def _orphan_notes(directory: Path, results_files: Sequence[Path]) -> list[str]:
    """Notes naming samples files that no results file of the directory belongs to."""
    runs = {(results.parent, _run_date(results)) for results in results_files}
    notes = []
    for candidate in sorted(directory.rglob("samples_*")):
        match = _SAMPLES_PATTERN.match(candidate.name)
        if match and candidate.is_file() and (candidate.parent, match.group("date")) not in runs:
            notes.append(f"{candidate}: samples without their run's results file (an incomplete run?) left out")
    return notes + legacy_write_out_orphans(directory, results_files)


def _strict_json(text: str | bytes, source: Path, line: int | None, what: str = "JSON") -> Any:
    """``text`` parsed by :func:`kpass.data.validation.loads_json_strict` (a key twice in one object, nesting too
    deep and bytes that are not UTF-8 are errors, like bad syntax), or a ``DataError`` naming the
    file, the line (given, or the error's own for a whole file) and for a duplicate key the key."""
    from kpass.data.validation import loads_json_strict

    try:
        return loads_json_strict(text)
    except UnicodeDecodeError as error:  # the line and column of the byte, as the JSONL reader says it
        where = error.object[:error.start]
        number = (line or 1) + where.count(b"\n")
        column = error.start - (where.rfind(b"\n") + 1) + 1
        raise _data_error(f"not UTF-8 text: byte 0x{error.object[error.start]:02x} at column {column} "
                          f"({error.reason})", source=source, line=number) from None
    except json.JSONDecodeError as error:
        raise _data_error(f"invalid or truncated {what}: {error.msg} (column {error.colno})", source=source,
                          line=error.lineno if line is None else line) from None
    except ValueError as error:  # a duplicate key, nesting too deep
        raise _data_error(f"invalid {what}: {error}", source=source, line=line,
                          field=getattr(error, "key", None)) from None


def _load_json(path: Path) -> dict[str, Any]:
    data = _strict_json(path.read_bytes(), path, None)
    if not isinstance(data, dict):
        raise _data_error(f"expected a JSON object, got {type(data).__name__}", source=path, line=1)
    return data


def _model_name(results: Mapping[str, Any], results_path: Path) -> str:
    name = results.get("model_name")
    if isinstance(name, str) and name:
        return name
    # before 0.4.3: a naming key of config.model_args (a "k=v,..." string or a dict), else config.model
    return legacy_model_name(results) or results_path.parent.name


#: lm-eval 0.4.13's models whose request payload takes ``max_tokens`` before ``max_gen_toks``
#: (models/openai_completions.py, sglang_generate_API.py); every other model resolves the aliases as
#: ``lm_eval.models.utils.normalize_gen_kwargs`` does: max_gen_toks > max_new_tokens > max_tokens > max_completion_tokens
MAX_TOKENS_FIRST_MODELS = frozenset({"local-completions", "local-chat-completions", "openai-completions",
                                     "openai-chat-completions", "azure-openai-chat-completions", "sglang-generate"})
_LIMIT_KEYS = ("max_gen_toks", "max_new_tokens", "max_tokens", "max_completion_tokens")


def _max_gen_toks_in(arguments: Any, *, max_tokens_first: bool = False, aliases: bool = True) -> Any:
    """The generation limit a ``generation_kwargs``/``gen_kwargs`` dict or ``k=v,...`` string sets, by the
    backend's priority among lm-eval's aliases (``aliases=False``: ``max_gen_toks`` only, as in ``model_args``)."""
    if isinstance(arguments, str):
        arguments = {key.strip(): value.strip() for key, _, value in (p.partition("=") for p in arguments.split(","))}
    if not isinstance(arguments, Mapping):
        return None
    keys = ("max_gen_toks",) if not aliases else ("max_tokens", "max_gen_toks") if max_tokens_first else _LIMIT_KEYS
    return next((arguments[key] for key in keys if arguments.get(key) is not None), None)


def max_gen_toks_of(config: Mapping[str, Any], results: Mapping[str, Any], *, task: str = "?",
                    source: Any = None, max_tokens_first: bool | None = None) -> int:
    """The generation limit (in the model's tokens) of a task in an lm-eval run.

    Parameters
    ----------
    config : Mapping
        The task's config from ``results["configs"]`` (its ``generation_kwargs`` include the run's
        ``--gen_kwargs``).
    results : Mapping
        The whole results JSON (for the run's ``config.gen_kwargs`` and ``config.model_args``).

    Returns
    -------
    int
        The limit in the task's ``generation_kwargs`` (which include ``--gen_kwargs``), else in the run's
        ``gen_kwargs``, else ``max_gen_toks`` of its ``model_args``, else
        :data:`LM_EVAL_DEFAULT_MAX_GEN_TOKS`. Within one dict the aliases resolve as the backend sends
        them: ``max_tokens`` before ``max_gen_toks`` for the models in :data:`MAX_TOKENS_FIRST_MODELS`
        (``max_tokens_first``; default: from the run's ``config.model``), otherwise ``max_gen_toks`` >
        ``max_new_tokens`` > ``max_tokens`` > ``max_completion_tokens``.

    Raises
    ------
    kpass.DataError
        The value found is not a positive integer.
    """
    run_config = results.get("config")
    if not isinstance(run_config, Mapping):
        run_config = {}
    if max_tokens_first is None:
        max_tokens_first = run_config.get("model") in MAX_TOKENS_FIRST_MODELS
    for where, arguments in (("generation_kwargs", config.get("generation_kwargs")),
                             ("config.gen_kwargs", run_config.get("gen_kwargs")),
                             ("config.model_args", run_config.get("model_args"))):
        value = _max_gen_toks_in(arguments, max_tokens_first=max_tokens_first, aliases=where != "config.model_args")
        if value is None:
            continue
        try:
            limit = int(float(value)) if not isinstance(value, bool) else 0
        except (TypeError, ValueError):
            limit = 0
        if limit < 1 or float(value) != limit:
            raise _data_error(f"task {task!r}: max_gen_toks in {where} is {value!r}, not a positive integer",
                              source=source, field="max_gen_toks")
        return limit
    return LM_EVAL_DEFAULT_MAX_GEN_TOKS


def _read_run(results_path: Path, only_task: str | None, include_path: Sequence[str | Path] = (),
              run: _Run | None = None, counting: tuple[Any, bool, Any] = (None, False, DEFAULT_REASONING_MARKERS)):
    run = run or _Run(_run_date(results_path))

    try:
        results = _load_json(results_path)
    except Exception as error:  # a results file cut short: the run is incomplete
        raise _IncompleteRun(error) from error
    layout = None if _results_match(results_path.name) else legacy_layout(results_path, results)
    if layout == LAYOUT_03:  # aggregates + {task}_write_out_info.json files: kpass.adapters.lm_eval_layouts
        model = _model_name(results, results_path)
        try:
            yield from list(write_out_tables(results_path, results, only_task, run_name=run.name,
                                             model=f"{model} [{run.name}]" if run.shown else model))
        except Exception as error:  # no per-sample outputs: in a directory, the other runs are still read
            raise _IncompleteRun(error) from error
        return
    configs = results.get("configs")
    if not isinstance(configs, Mapping):
        raise _data_error("no 'configs' object: not an lm-eval results file", source=results_path, field="configs")
    model = _model_name(results, results_path)
    shown_model = f"{model} [{run.name}]" if run.shown else model
    recorded = recorded_judges(results)
    notes: list[str] = []  # what this run's tables leave out or how they were scored, for SampleTable.notes
    read = _read_tasks(results_path, results, configs, only_task, layout, notes)
    groups = task_groups_of(results) if only_task is None else {}  # one samples file: no group row
    judged: dict[str, list[str]] = {}  # metric -> tasks it judged, for the run's note
    built = []
    for task, config, samples_path, docs in read:
        notes.extend(_coverage_notes(results, task, docs, samples_path))
        if is_predict_only(config):  # generated with --predict_only: the task's own scoring from its YAML
            config, restored_note = restore_task_scoring(task, config, include_path=include_path, source=results_path)
            notes.append(restored_note)
        scoring = task_scoring(config, task, samples_path, docs, include_path)
        notes.extend(scoring.notes)
        pipelines, duplicate_notes = distinct_pipelines(
            sample_pipelines(config.get("filter_list"), source=str(results_path), task=task), task=task)
        reading = _TaskReading.of(results_path=results_path, results=results, task=task, config=config,
                                  samples_path=samples_path, docs=docs, scoring=scoring, run=run, model=shown_model,
                                  counting=counting, notes=(*notes, *duplicate_notes))
        for pipeline in pipelines:
            metric, table = reading.table(pipeline, run.judge or recorded.get(task, {}).get(pipeline.name))
            judged.setdefault(metric, []).append(task_key(task, pipeline.name))
            table.task_groups = dict(groups)
            built.append(((shown_model, table.categories("task")[0]), table))
        logger.debug("read %s (%d documents, judged by %s)", samples_path, len(docs), scoring.description)
    judges = judge_note(results_path, judged, recorded, run.judge)
    for key, table in built:
        table.notes = (*table.notes, judges)
        yield key, table


def _read_tasks(results_path: Path, results: Mapping[str, Any], configs: Mapping[str, Any], only_task: str | None,
                layout: str | None, notes: list[str]) -> list[tuple[str, Mapping[str, Any], Path, list[Any]]]:
    """``(task, config, samples file, documents)`` of every generation task of a run; a task of
    another output type is left out with a note (and a warning), a missing samples file is an
    incomplete run."""
    date = _run_date(results_path)
    tasks = [only_task] if only_task is not None else list(configs)
    for task in tasks:
        config = configs.get(task)
        if not isinstance(config, Mapping):
            raise _data_error(f"task {task!r} has no config in this results file", source=results_path,
                              field="configs")
        if config.get("output_type", "generate_until") not in _GENERATION_TYPES:
            note = (f"{results_path}: skipping lm-eval task {task!r} ({config.get('output_type')}): only "
                    "generate_until tasks have K samples to score")
            notes.append(note)
            warnings.warn(f"kpass: {note}.", stacklevel=4)
    read = []
    for task in tasks:
        config = configs[task]
        if config.get("output_type", "generate_until") not in _GENERATION_TYPES:
            continue
        samples_path = (legacy_samples_file(results_path, results, task) if layout == LAYOUT_040
                        else _samples_file(results_path, task, date))
        if samples_path is None and layout == LAYOUT_040:
            raise _IncompleteRun(_data_error(
                f"samples file <model_args>_{task}.jsonl of task {task!r} (lm-eval 0.4.0-0.4.2) is missing (run "
                "lm_eval with --log_samples)", source=results_path))
        if samples_path is None:
            raise _IncompleteRun(_data_error(
                f"samples file samples_{task}_{date}.jsonl of task {task!r} is missing (run lm_eval with "
                "--log_samples)", source=results_path))
        try:
            docs = _read_samples(samples_path, legacy_records(samples_path, config) if layout == LAYOUT_040 else None)
        except Exception as error:
            if "invalid or truncated JSON" in str(error):
                raise _IncompleteRun(error) from error
            raise
        read.append((task, config, samples_path, docs))
    return read


@dataclasses.dataclass(frozen=True)
class _TaskReading:
    """One task of one run, read: its results and config, samples file and documents, the task's
    scoring, the run, the model as shown, how generations are counted and the notes so far."""

    results_path: Path
    results: Mapping[str, Any]
    task: str
    config: Mapping[str, Any]
    samples_path: Path
    docs: list[Any]
    scoring: Any
    run: Any
    model: str
    counting: tuple[Any, bool, Any]
    notes: tuple[str, ...]
    limit: int = 0  # set by of()
    token_counts: Any = None
    finish_reasons: Any = None

    @classmethod
    def of(cls, **fields: Any) -> "_TaskReading":
        """The task with its evidence of finishing read once for all its pipelines: the task's
        max_gen_toks, a tokenizer's counts of the generations and the finish reasons a live
        kpass-lm-eval run recorded."""
        from .lm_eval_finishing import generation_token_counts, recorded_finish_reasons

        reading = cls(**fields)
        docs, task = reading.docs, reading.task
        limit = max_gen_toks_of(reading.config, reading.results, task=task, source=reading.results_path)
        counts = generation_token_counts([d["resps"] for d in docs], reading.counting[0])  # lm_eval_finishing
        try:  # the evidence a live kpass-lm-eval run saw (the API's finish reasons), as it used it
            reasons = recorded_finish_reasons(reading.results, task, [d["doc_id"] for d in docs],
                                              [d["resps"] for d in docs])
        except ValueError as error:
            raise _data_error(str(error), source=reading.results_path, field="kpass") from None
        return dataclasses.replace(reading, limit=limit, token_counts=counts, finish_reasons=reasons)

    def table(self, pipeline: Any, requested: str | None) -> tuple[str, Any]:
        """``(metric, SampleTable)`` of one filter pipeline: answers, verdicts (logged or scored
        again by the task's own metric), finishing evidence and the notes."""
        from kpass import SampleTable

        from .lm_eval_finishing import finishing_note

        docs, task, samples_path, scoring = self.docs, self.task, self.samples_path, self.scoring
        limit, reasons = self.limit, self.finish_reasons
        answers = pipeline.apply([d["resps"] for d in docs], [d["doc"] for d in docs])
        metric, verdicts = self._verdicts(pipeline, answers, requested)
        columns, lines = sample_columns(
            model=self.model, task=task, pipeline=pipeline, extractor=scoring.extractor(pipeline),
            scored=ScoredDocuments(doc_ids=[d["doc_id"] for d in docs], docs=[d["doc"] for d in docs],
                                   targets=[d["target"] for d in docs], answers=answers, verdicts=verdicts,
                                   lines=[d["line"] for d in docs]),
            generations=Generations([d["resps"] for d in docs], max_gen_toks=limit, token_counts=self.token_counts,
                                    finish_reasons=reasons, reasoning_markers=self.counting[2]),
        )
        finishing = finishing_note(str(samples_path), task_key(task, pipeline.name), columns["finished"],
                                   max_gen_toks=limit, tokenizer=self.counting[0], approximate=self.counting[1],
                                   observed_reasons=reasons is not None)
        rows = len(columns["model"])
        columns[RUN_COLUMN] = [self.run.name] * rows
        columns[JUDGE_COLUMN] = [metric] * rows
        table = SampleTable.from_columns(columns, source=str(samples_path), lines=lines,
                                         notes=[*self.notes, *([finishing] if finishing else [])])
        return metric, table

    def _verdicts(self, pipeline: Any, answers: Any, requested: str | None) -> tuple[str, Any]:
        """``(metric, verdicts)``: the logged judge's verdicts, or the task's metric run again on the answers."""
        docs, task, samples_path, scoring = self.docs, self.task, self.samples_path, self.scoring
        if scoring.logged_metric is not None:
            metric = logged_judge(scoring.logged_metric, requested, docs[0]["logged"].get(pipeline.name) or {},
                                  task=task, source=samples_path)
            return metric, logged_verdicts(docs, pipeline, metric, task, samples_path)
        try:
            metric, verdicts = score_samples(answers, scoring.score, metric=requested, task=task,
                                             doc_ids=[d["doc_id"] for d in docs])
        except ValueError as error:  # a judge the task does not compute, a non-binary value
            raise _data_error(str(error), source=samples_path, field="judge" if requested else "metrics") from None
        check_against_lm_eval(pipeline, metric, docs, verdicts, task, samples_path)
        return metric, verdicts


def task_groups_of(results: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """The groups of an lm-eval run (``--tasks <group>``): group name -> its children, as the results file records them.

    lm-eval 0.4.2 and later write ``group_subtasks`` (group -> its subtasks and subgroups; 0.4.2
    to 0.4.8 also list every task with no subtasks, which are dropped here). Files without it
    (lm-eval 0.4.0 and 0.4.1) name each task's group in its config (``group``, a name or a list);
    those count only for the groups the file reports results for (``groups``, or a ``results``
    entry without a config), as lm-eval made rows only for them. Reports pool each group's
    subtasks into a row (:mod:`kpass.reports.task_groups`).
    """
    subtasks = results.get("group_subtasks")
    if isinstance(subtasks, Mapping):
        return {str(group): tuple(str(child) for child in children) for group, children in subtasks.items()
                if isinstance(children, (list, tuple)) and children}
    found = results.get("configs")
    configs: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    reported = {*(results.get("groups") or {}), *(name for name in results.get("results") or {} if name not in configs)}
    groups: dict[str, list[str]] = {}
    for task, config in configs.items():
        declared = config.get("group") if isinstance(config, Mapping) else None
        for group in [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else []:
            if group in reported and group != task:
                groups.setdefault(str(group), []).append(str(task))
    return {group: tuple(members) for group, members in groups.items()}


def _coverage_notes(results: Mapping[str, Any], task: str, docs: Sequence[Mapping[str, Any]],
                    samples_path: Path) -> list[str]:
    """A note when the samples file holds fewer documents than the results file says were scored."""
    counts = (results.get("n-samples") or {}).get(task) if isinstance(results.get("n-samples"), Mapping) else None
    if not isinstance(counts, Mapping):
        return []
    expected = counts.get("effective", counts.get("original"))
    if isinstance(expected, int) and not isinstance(expected, bool) and len(docs) < expected:
        return [f"{samples_path}: holds {len(docs)} of the {expected} documents the results file counts for task "
                f"{task!r} (n-samples); the numbers cover those {len(docs)} only"]
    return []


def _sample_records(samples_path: Path):
    """``(line, record)`` of a samples file: JSON Lines, or one JSON array (lm-eval 0.4.0-0.4.2 and
    earlier wrote ``json.dumps(samples, indent=2)``; then ``line`` is the record's 1-based position)."""
    with samples_path.open("rb") as handle:
        head = handle.read(65).lstrip()
    if head.startswith(b"["):
        records = _strict_json(samples_path.read_bytes(), samples_path, None)
        if not isinstance(records, list):
            raise _data_error("expected a JSON array of sample records", source=samples_path, line=1)
        yield from enumerate(records, start=1)
        return
    with samples_path.open("rb") as handle:  # lines decoded one at a time: bad bytes are named on their line
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            yield number, _strict_json(text, samples_path, number, what="JSON line")


def _read_samples(samples_path: Path, records=None) -> list[dict[str, Any]]:
    """One entry per doc_id: doc, target, the K raw generations and the line it came from (``records``:
    ``(line, record)`` pairs already read, as :func:`kpass.adapters.lm_eval_layouts.legacy_records` gives)."""
    docs: dict[Any, dict[str, Any]] = {}
    for number, record in _sample_records(samples_path) if records is None else records:
        if not isinstance(record, dict):
            raise _data_error("a sample line must be a JSON object", source=samples_path, line=number)
        for field in ("doc_id", "doc", "target", "resps"):
            if field not in record:
                raise _data_error(f"missing field '{field}'", source=samples_path, line=number, field=field)
        doc_id = record["doc_id"]
        logged = {"line": number, **{name: record.get(name) for name in record.get("metrics") or ()
                                     if isinstance(name, str)}}
        if doc_id in docs:
            if docs[doc_id]["raw_resps"] != record["resps"]:
                raise _data_error(
                    f"doc_id {doc_id} has different 'resps' on lines {docs[doc_id]['line']} and "
                    f"{number}; the file mixes two runs", source=samples_path, line=number, field="resps")
            docs[doc_id]["logged"].setdefault(record.get("filter"), logged)
            continue
        resps = record["resps"]
        if (not isinstance(resps, list) or len(resps) != 1 or not isinstance(resps[0], list)
                or not resps[0]):
            raise _data_error(
                "expected 'resps' = [[generation 1, ..., generation K]] (one generate_until request "
                f"per document); got {str(resps)[:120]}", source=samples_path, line=number, field="resps")
        nested = next((position for position, generation in enumerate(resps[0]) if not isinstance(generation, str)),
                      None)
        if nested is not None:  # a list one level deeper would be read as one "generation"
            raise _data_error(
                f"expected 'resps' = [[generation 1, ..., generation K]] with each generation a string; generation "
                f"{nested + 1} is {type(resps[0][nested]).__name__} {str(resps[0][nested])[:80]}",
                source=samples_path, line=number, field="resps")
        doc = record["doc"] if isinstance(record["doc"], dict) else {"doc": record["doc"]}
        docs[doc_id] = {"doc_id": doc_id, "doc": doc, "target": record["target"],
                        "resps": list(resps[0]), "raw_resps": resps, "line": number,
                        "logged": {record.get("filter"): logged}}
    if not docs:
        raise _data_error("no samples: the file is empty", source=samples_path)
    return list(docs.values())
