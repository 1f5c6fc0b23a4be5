"""Runs and judges of lm-eval output read post hoc (:mod:`kpass.adapters.lm_eval_reader`).

Runs: each results file (``results_<date>.json``, with its ``samples_<task>_<date>.jsonl``) is one
run, and every row of it carries its name in the ``run`` column (:data:`RUN_COLUMN`). Two runs of
one served model and task (other settings, or another checkpoint behind the same name) are told
apart by showing their model as ``"<model> [<run>]"``, so that ``kpass report`` puts them side by
side and ``kpass compare`` pairs them problem by problem, as for Inspect logs: under one directory
here (:func:`shown_runs`), across the paths given to :func:`kpass.read_samples` through the
reader's ``identity``.

Judges: the task metric that judged each sample is the ``judge`` column (:data:`JUDGE_COLUMN`).
A live ``kpass-lm-eval`` run records it in the results file
(``kpass.tasks.<task>.judged_by.<pipeline>``, :func:`recorded_judges`) and the post-hoc reader
judges with the same metric by default; ``kpass report --judge METRIC`` chooses another; each run's
note says which metric judged which tasks, and why (:func:`judge_note`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .lm_eval_samples import task_key

__all__ = ["JUDGE_COLUMN", "RUN_COLUMN", "judge_note", "logged_judge", "recorded_judges", "run_names", "shown_runs"]

#: kpass's own columns on every row the lm-eval reader makes (as the Inspect reader's ``run``).
RUN_COLUMN = "run"
JUDGE_COLUMN = "judge"


def run_names(dates: Mapping[Path, str], root: Path, run_label: str | None = None) -> dict[Path, str]:
    """The ``run`` of each results file read from one path (each results file is one run).

    Parameters
    ----------
    dates : mapping of Path to str
        Each results file read from the path -> its run date (lm-eval's ``date_id``,
        ``2026-12-03T10-00-00.123456``).
    root : Path
        The path (for results files whose dates are equal: their path under it).
    run_label : str, optional
        A name for the path (the user's ``--label NAME=PATH``, or the path's name when two paths
        hold runs of one model and task, :func:`kpass.read_samples`).

    Returns
    -------
    dict of Path to str
        Without ``run_label``: each run's date (its path under ``root`` when two dates are equal),
        so the same run has the same name however it is given (its directory, its results file or
        a samples file). With it: ``run_label`` for a path of one run, else
        ``"<run_label>/<date>"``.
    """
    names = dict(dates)
    if len(set(names.values())) < len(names):
        names = {results: str(results.relative_to(root).with_suffix("")) for results in dates}
    if run_label and len(names) == 1:
        return {results: run_label for results in names}
    return {results: f"{run_label}/{name}" if run_label else name for results, name in names.items()}


def shown_runs(headers: Mapping[Path, tuple[str, Sequence[str]]], names: Mapping[Path, str], where: Path,
               run_label: str | None = None) -> tuple[set[Path], list[str]]:
    """The runs whose model is shown as ``"<model> [<run>]"``, and a note per model so shown.

    Parameters
    ----------
    headers : mapping of Path to (model, tasks)
        What each run under ``where`` holds (runs whose results file cannot be read are absent).
    names : mapping of Path to str
        Each run's name (:func:`run_names`).
    where : Path
        The path read, named in the notes.
    run_label : str, optional
        Given: every run is shown with its name, and no note is needed.

    Returns
    -------
    shown : set of Path
        With ``run_label`` every run; else the runs that share a model and task with another run.
    notes : list of str
        For :attr:`kpass.SampleTable.notes`: which runs of which model are shown so, and how to
        compare them.
    """
    if run_label:
        return set(names), []
    runs_of: dict[tuple[str, str], list[Path]] = {}
    for results, (model, tasks) in headers.items():
        for task in tasks:
            runs_of.setdefault((model, task), []).append(results)
    shown: dict[str, dict[Path, None]] = {}
    for (model, _task), runs in runs_of.items():
        if len(runs) > 1:
            shown.setdefault(model, {}).update(dict.fromkeys(runs))
    notes = [f"{where}: {len(runs)} runs of model {model!r} ({', '.join(names[run] for run in runs)}): each run's "
             f"model is shown as '{model} [<run>]'; compare them with kpass compare --baseline "
             f"'{model} [{names[next(iter(runs))]}]'" for model, runs in shown.items()]
    return {run for runs in shown.values() for run in runs}, notes


def recorded_judges(results: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """The metric that judged each task and filter pipeline in a live ``kpass-lm-eval`` run.

    Returns
    -------
    dict
        ``{task: {pipeline: metric}}`` from the results file's ``kpass.tasks.<task>.judged_by``;
        empty for a plain ``lm_eval`` run.
    """
    kpass_part = results.get("kpass")
    tasks = kpass_part.get("tasks") if isinstance(kpass_part, Mapping) else None
    out: dict[str, dict[str, str]] = {}
    for task, details in (tasks.items() if isinstance(tasks, Mapping) else ()):
        judged_by = details.get("judged_by") if isinstance(details, Mapping) else None
        if isinstance(judged_by, Mapping):
            out[str(task)] = {str(pipeline): metric for pipeline, metric in judged_by.items()
                              if isinstance(metric, str) and metric}
    return out


def logged_judge(logged_metric: str, requested: str | None, logged: Mapping[str, Any], *, task: str,
                 source: Any = None) -> str:
    """The logged metric whose per-sample value is the verdict of a one-sample task: ``requested``
    if given, else ``logged_metric``.

    Parameters
    ----------
    logged : mapping
        The per-sample metrics lm-eval logged for one document (the keys are what may be asked).

    Raises
    ------
    kpass.DataError
        ``requested`` is not among the logged metrics (the message lists them).
    """
    if requested is None:
        return logged_metric
    names = sorted(name for name in logged if name != "line")
    if requested not in names:
        from kpass import DataError

        raise DataError(f"task {task!r} has no metric {requested!r}; its metrics are {names}",
                        source=None if source is None else str(source), field="judge")
    return requested


def judge_note(results_path: Path, judged: Mapping[str, Sequence[str]], recorded: Mapping[str, Mapping[str, str]],
               option: str | None) -> str:
    """One note per run: which metric judged which tasks, and why.

    Parameters
    ----------
    judged : mapping of str to sequence of str
        Metric -> the table's task names (``task`` or ``"<task>/<filter>"``) it judged.
    recorded : mapping
        :func:`recorded_judges` of the run.
    option : str, optional
        The metric asked for (``--judge``).
    """
    live = {task_key(task, pipeline): metric for task, pipelines in recorded.items()
            for pipeline, metric in pipelines.items()}
    parts: dict[tuple[str, str], list[str]] = {}
    for metric, keys in judged.items():
        for key in keys:
            if option:
                why = ("--judge" if live.get(key, option) == option
                       else f"--judge; the kpass-lm-eval run judged by {live[key]}")
            elif key in live:
                why = "as the kpass-lm-eval run recorded"
            else:
                why = "the task's first binary metric"
            parts.setdefault((metric, why), []).append(key)
    shown = "; ".join(f"{metric} ({', '.join(keys)}: {why})" for (metric, why), keys in parts.items())
    return f"{results_path}: samples judged by {shown}; --judge METRIC chooses another"
