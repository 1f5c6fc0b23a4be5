"""The scoring of an lm-eval ``--predict_only`` run, rebuilt from the task's own YAML for post-hoc scoring.

``lm_eval --predict_only --log_samples`` generates without scoring: lm-eval replaces every task's
metrics by its ``bypass`` metric (``Task.override_metric``), so the results file records
``metric_list: [{metric: bypass}]`` and ``process_results: "process_results"`` (a name, no code), and
every sample logs ``"metrics": ["bypass"]``, ``"bypass": null``. The generations, targets, documents and
filter pipelines are all there; only the scoring is gone.

:func:`restore_task_scoring` puts it back from the task's own YAML, the one lm-eval loaded for the run:
its ``metric_list`` (with the metrics' options) and, for tasks that score with their own
``process_results`` (``aime24``, ``minerva_math_*``...), that function from the YAML's ``!function``
tag, i.e. from installed code (the task's ``utils.py`` in the installed lm-eval or under an include path),
never from text in the log (the log holds none). The reader then scores every sample as a live run
scores it (:mod:`kpass.adapters.lm_eval_reader`), so the numbers equal those of the same generations
scored live.

The YAML is looked for where the run's config says it came from (``metadata.config_source``, absolute,
or relative to an include path or its parent), then among the YAMLs of that task name under the include
paths and the installed lm-eval's tasks. A YAML is used only when the fields that define the task agree
with the run's config (``output_type``, ``doc_to_text``, ``doc_to_target``, ``filter_list``,
``process_docs``, ``metadata.version``; functions compared by their source text): a YAML of another
version of the task is never used to score it. No matching YAML (a task kpass cannot rebuild, such as a
Python-class task, or an include path not given): one-line :class:`kpass.DataError` naming the task and
what is missing.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["BYPASS_METRIC", "is_predict_only", "restore_task_scoring"]

#: lm-eval's placeholder metric of ``--predict_only`` runs (``lm_eval.api.metrics.bypass``).
BYPASS_METRIC = "bypass"
#: Config fields that define what a task asks and how its answers are extracted: a YAML whose values
#: differ from the run's is another task (or another version of it), whatever its name.
_DEFINING_FIELDS = ("output_type", "doc_to_text", "doc_to_target", "process_docs", "filter_list")


def is_predict_only(config: Mapping[str, Any]) -> bool:
    """True for the config of a task run with ``--predict_only`` (its only metric is ``bypass``).

    Examples
    --------
    >>> is_predict_only({"metric_list": [{"metric": "bypass"}], "process_results": "process_results"})
    True
    >>> is_predict_only({"metric_list": [{"metric": "exact_match"}]})
    False
    """
    metric_list = config.get("metric_list")
    return (isinstance(metric_list, list) and len(metric_list) == 1 and isinstance(metric_list[0], Mapping)
            and metric_list[0].get("metric") == BYPASS_METRIC)


def _normalised_source(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _as_logged(value: Any) -> Any:
    """A YAML value as lm-eval's results file records it: functions become their source text."""
    if callable(value) and not isinstance(value, type):
        try:
            return _normalised_source(inspect.getsource(value))
        except (OSError, TypeError):
            return f"<unreadable source of {getattr(value, '__qualname__', value)!r}>"
    if isinstance(value, Mapping):
        return {key: _as_logged(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_logged(item) for item in value]
    if isinstance(value, str) and ("\n" in value and "def " in value):
        return _normalised_source(value)
    return value


def _differing_field(logged: Mapping[str, Any], declared: Mapping[str, Any]) -> str | None:
    """The first defining field whose YAML value differs from the run's, or None."""
    for field in _DEFINING_FIELDS:
        if field in declared and _as_logged(declared[field]) != _as_logged(logged.get(field)):
            return field
    logged_meta, declared_meta = logged.get("metadata"), declared.get("metadata")
    if isinstance(declared_meta, Mapping) and "version" in declared_meta:
        logged_version = logged_meta.get("version") if isinstance(logged_meta, Mapping) else None
        if logged_version != declared_meta["version"]:
            return "metadata.version"
    return None


def _candidate_yamls(task: str, config: Mapping[str, Any], roots: Sequence[Path]) -> list[Path]:
    from .lm_eval_answers import _installed_tasks_dir, _task_yamls

    found: list[Path] = []
    metadata = config.get("metadata")
    source = metadata.get("config_source") if isinstance(metadata, Mapping) else None
    if isinstance(source, str) and source not in ("", "inline"):
        recorded = Path(source).expanduser()
        bases = [Path()] if recorded.is_absolute() else [*roots, *(root.parent for root in roots)]
        for base in bases:
            candidate = base / recorded
            if candidate.is_file():
                found.append(candidate.resolve())
    found.extend(_task_yamls(task, [*roots, _installed_tasks_dir()]))
    return list(dict.fromkeys(found))


def restore_task_scoring(task: str, config: Mapping[str, Any], *, include_path: Sequence[str | Path] = (),
                         source: Any = None) -> tuple[dict[str, Any], str]:
    """The run's config of a ``--predict_only`` task with the scoring of its own YAML put back.

    Parameters
    ----------
    task : str
        The task's name in the results file.
    config : Mapping
        Its config from ``results["configs"]`` (:func:`is_predict_only` is true for it).
    include_path : sequence of path, optional
        Directories of local task YAMLs (``--include_path`` of the run), searched before the installed tasks.
    source : path, optional
        The results file, named in errors.

    Returns
    -------
    config : dict
        A copy of ``config`` whose ``metric_list`` is the YAML's (``!function`` metrics as their source
        text, as a scored run's results file keeps them) and whose ``process_results`` is the YAML's
        function, or absent when the YAML has none.
    note : str
        Which YAML the scoring came from, for the table's notes.

    Raises
    ------
    kpass.DataError
        No YAML of the task is found, none loads, or none agrees with the run's config (the message
        names the task, the field and the option to give).
    """
    from kpass import DataError
    from lm_eval.tasks._yaml_loader import load_yaml

    roots = [Path(p).expanduser().resolve() for p in include_path]
    where = str(source) if source is not None else None
    rejected: list[str] = []
    for path in _candidate_yamls(task, config, roots):
        try:
            declared = load_yaml(path, resolve_func=True)
        except Exception as error:  # noqa: BLE001 - a YAML whose !function cannot be imported, named below
            rejected.append(f"{path} does not load ({type(error).__name__}: {error})")
            continue
        if declared.get("task") != task:
            continue
        differing = _differing_field(config, declared)
        if differing is not None:
            rejected.append(f"{path} differs from the run in {differing}")
            continue
        restored = {key: value for key, value in config.items() if key not in ("metric_list", "process_results")}
        if declared.get("metric_list") is not None:
            restored["metric_list"] = [_as_logged(entry) if isinstance(entry, Mapping) else entry
                                       for entry in declared["metric_list"]]
        process_results = declared.get("process_results")
        if callable(process_results):
            restored["process_results"] = process_results
        scored_by = ("its process_results" if callable(process_results)
                     else "metric_list " + ", ".join(str(entry.get("metric"))[:40] for entry in
                                                     restored.get("metric_list") or [{"metric": "exact_match"}]
                                                     if isinstance(entry, Mapping)))
        note = (f"{where or 'lm-eval run'}: task {task!r} was run with --predict_only; scored post hoc with "
                f"{scored_by} from {path}")
        return restored, note
    hint = ("give the directory of the task's YAML with --include-path DIR (kpass report) or "
            "read_lm_eval_output(..., include_path=[DIR])")
    if rejected:
        raise DataError(f"task {task!r} was run with --predict_only (no scoring in the files) and no YAML of it "
                        f"matches the run: {'; '.join(rejected)}; {hint}", source=where, field="metric_list")
    raise DataError(f"task {task!r} was run with --predict_only (no scoring in the files) and kpass cannot rebuild "
                    f"its scoring: no YAML defining task {task!r} under the include paths or the installed lm-eval; "
                    f"{hint}", source=where, field="metric_list")
