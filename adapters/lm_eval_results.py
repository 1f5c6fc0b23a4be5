"""kpass's live metrics in lm-eval's own results (``kpass-lm-eval``): the table it prints, its loggers, its JSON.

lm-eval 0.4.13 keeps one dict per task (and per group) under ``results["results"]`` (groups also under
``results["groups"]``), keyed ``"<metric>,<filter>"`` with the standard error under
``"<metric>_stderr,<filter>"`` (``"N/A"`` when there is none); ``lm_eval.utils.make_table`` prints
every such key (``_stderr`` keys as the ± column), and the W&B and hub loggers read the same dicts.
:func:`add_kpass_metrics` puts each kpass estimate there under that convention: the row of task
``gsm8k`` scored through pipeline ``strict-match`` becomes ``results["results"]["gsm8k"]["pass@8,strict-match"]``
and ``"pass@8_stderr,strict-match"``; a task without a filter list has lm-eval's pipeline ``none``.

Rules:

* lm-eval's own entries are never changed: a key lm-eval already has (a task YAML that names kpass's
  lm-eval metrics, :mod:`kpass.adapters.lm_eval_metrics`, reports ``pass@8,none`` itself) is left as
  it is, and the kpass key is listed as skipped;
* an estimate kpass could not compute is left out (never NaN); a missing standard error is ``"N/A"``,
  as lm-eval writes it;
* ``results["higher_is_better"][task]`` gets the metric (kpass metrics are higher-is-better unless
  their family says otherwise) where lm-eval has no entry of that name, so the table shows the arrow;
* a group row (problems of the subtasks pooled, each through its first pipeline) goes under the
  pipeline name its subtasks share; when they do not share one, it is left out (listed as skipped);
* what was added is listed in ``results["kpass"]["lm_eval_results_keys"]`` (task -> keys), so that a
  reader of the results file can tell kpass's keys from lm-eval's: kpass's own post-hoc reader
  (:mod:`kpass.adapters.lm_eval_reader`) takes the metrics that judge samples from the task configs
  and the samples files, never from these dicts.

Framework-free (plain dicts); :mod:`kpass.adapters.lm_eval_cli` calls it on the dict that
``simple_evaluate`` returns, before lm-eval saves, prints and logs it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

__all__ = ["RESULTS_KEYS_FIELD", "add_kpass_metrics", "lm_eval_key", "pipeline_of_rows"]

#: Field of ``results["kpass"]`` listing the keys kpass added to lm-eval's per-task dicts.
RESULTS_KEYS_FIELD = "lm_eval_results_keys"


def lm_eval_key(metric: str, pipeline: str, *, stderr: bool = False) -> str:
    """lm-eval's results key of a metric under a filter pipeline.

    Examples
    --------
    >>> lm_eval_key("pass@8", "none"), lm_eval_key("pass@8", "strict-match", stderr=True)
    ('pass@8,none', 'pass@8_stderr,strict-match')
    """
    return f"{metric}{'_stderr' if stderr else ''},{pipeline}"


def pipeline_of_rows(task_pipelines: Mapping[str, Sequence[str]],
                     groups: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, str] | None]:
    """Report task name -> (lm-eval task or group, filter pipeline); None for a group whose subtasks
    join it through differently named pipelines.

    Parameters
    ----------
    task_pipelines : mapping of str to sequence of str
        lm-eval task -> the pipelines kpass scored, in order (the first is the one a group pools).
    groups : mapping of str to sequence of str
        lm-eval's group map (group -> children, tasks or groups).
    """
    from .lm_eval_samples import task_key

    out: dict[str, tuple[str, str] | None] = {}
    for task, pipelines in task_pipelines.items():
        for pipeline in pipelines:
            out[task_key(task, pipeline)] = (task, pipeline)
    for group in groups:
        firsts = {task_pipelines[task][0] for task in _scored_tasks_under(group, groups, task_pipelines)}
        if firsts:
            out[group] = (group, firsts.pop()) if len(firsts) == 1 else None
    return out


def _scored_tasks_under(group: str, groups: Mapping[str, Sequence[str]],
                        task_pipelines: Mapping[str, Sequence[str]]) -> set[str]:
    """The scored tasks below ``group`` (through nested groups; a group listed under itself stops)."""
    found: set[str] = set()
    pending, seen = [group], set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        if task_pipelines.get(name):
            found.add(name)
        pending.extend(str(child) for child in groups.get(name) or ())
    return found


def _number(value: Any) -> float | None:
    return float(value) if value is not None and math.isfinite(float(value)) else None


def add_kpass_metrics(results: MutableMapping[str, Any], report: Any,
                      rows_to_lm_eval: Mapping[str, tuple[str, str] | None]) -> dict[str, Any]:
    """Add every kpass estimate of ``report`` to lm-eval's per-task dicts of ``results``, in place.

    Parameters
    ----------
    results : dict
        What ``lm_eval.evaluator.simple_evaluate`` returns (``results``, ``groups``, ``higher_is_better``).
    report : kpass.Report
        The live report (rows by model and task).
    rows_to_lm_eval : mapping
        :func:`pipeline_of_rows`.

    Returns
    -------
    dict
        ``{"added": {task: [keys]}, "skipped": {task: {key: reason}}}``, for ``results["kpass"]``.
    """
    per_task = results.get("results")
    if not isinstance(per_task, MutableMapping):
        return {"added": {}, "skipped": {}}
    groups = results.get("groups")
    if not isinstance(groups, MutableMapping):
        groups = {}
    higher = results.get("higher_is_better")
    directions = {spec.name: bool(getattr(spec.implementation, "higher_is_better", True))
                  for spec in getattr(report, "metrics", ())}
    added: dict[str, list[str]] = {}
    skipped: dict[str, dict[str, str]] = {}
    for row in report.rows:
        estimate = _number(row.estimate)
        if estimate is None or row.task not in rows_to_lm_eval:
            continue
        target = rows_to_lm_eval[row.task]
        if target is None:
            skipped.setdefault(row.task, {})[row.metric] = (
                "a group whose subtasks join it through differently named filter pipelines")
            continue
        task, pipeline = target
        value_key, stderr_key = lm_eval_key(row.metric, pipeline), lm_eval_key(row.metric, pipeline, stderr=True)
        holders = [holder for holder in (per_task.get(task), groups.get(task)) if isinstance(holder, MutableMapping)]
        if not holders:
            continue
        taken = [key for key in (value_key, stderr_key) if any(key in holder for holder in holders)]
        if taken:
            skipped.setdefault(task, {})[value_key] = "lm-eval reports this key itself (left as lm-eval computed it)"
            continue
        stderr = _number(row.standard_error)
        for holder in holders:
            holder[value_key] = estimate
            holder[stderr_key] = stderr if stderr is not None else "N/A"
        added.setdefault(task, []).extend([value_key, stderr_key])
        if isinstance(higher, MutableMapping):
            direction = higher.setdefault(task, {})
            if isinstance(direction, MutableMapping) and row.metric not in direction:
                direction[row.metric] = directions.get(row.metric, True)
    return {"added": added, "skipped": skipped}
