"""Add kpass metrics to an Inspect task built elsewhere (an ``inspect_evals`` task, a colleague's).

The natural ``task_with(task, metrics=[kpass_metrics(...)])`` silently shows only the task's
own metrics for most tasks: Inspect keeps the metrics a scorer declares itself
(``@scorer(metrics=[accuracy(), stderr()])``), so the kpass keys never appear, and the scores
would lack the stop reasons fin@k needs anyway. :func:`with_kpass_metrics` instead wraps every scorer of the task in
:func:`~kpass.adapters.inspect_scorers.kpass_scorer` (which records the answer, stop reason and
token counts kpass needs per epoch) carrying the scorer's own metrics *and* the kpass metrics::

    from inspect_evals.gsm8k import gsm8k
    from kpass.adapters.inspect_tasks import with_kpass_metrics

    task = with_kpass_metrics(gsm8k(fewshot=0), "pass@1,8", "cons@8", "fin@1")
    # inspect eval: Task objects from Python, or a task file that returns this task

Framework-side module (imports Inspect at module level).
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task_with

from .inspect_compat import scorer_metrics
from .inspect_metrics import kpass_metrics
from .inspect_scorers import AnswerExtractor, kpass_scorer

__all__ = ["with_kpass_metrics"]


def _as_list(metrics: Any) -> list[Any]:
    if metrics is None:
        return []
    if isinstance(metrics, dict):
        raise TypeError(
            "this scorer declares its metrics per score key (a dict); kpass metrics need one "
            "correct/incorrect value per sample: wrap it yourself with kpass_scorer(scorer, "
            "metrics={'<key>': [kpass_metrics(...)]})."
        )
    return list(metrics)


def with_kpass_metrics(
    task: Task,
    *specs: str,
    cluster: str | None = None,
    method: str | None = None,
    confidence_level: float = 0.95,
    rng: int | None = 0,
    prefix: str | None = None,
    answer: str | AnswerExtractor | None = None,
) -> Task:
    r"""Wrap every scorer of ``task`` so that it also reports kpass metrics.

    Each scorer ``s`` becomes ``kpass_scorer(s, answer=answer, metrics=[*s's metrics,
    kpass_metrics(*specs, ...)])``: its values and its own metrics (``accuracy``, ``stderr``) are
    unchanged, and each epoch's score records what kpass needs (answer, stop reason, output
    tokens, finished). When the task sets task-level ``metrics=`` (which replace every scorer's
    metrics in Inspect), the kpass metric is appended to those instead.

    Parameters
    ----------
    task : Task
        The task, e.g. ``inspect_evals.gsm8k.gsm8k(fewshot=0)``. It is adapted in place
        (``task_with``), and returned.
    *specs : str
        kpass metric specs (see :func:`~kpass.adapters.inspect_metrics.kpass_metrics`).
    cluster, method, confidence_level, rng, prefix
        As for :func:`~kpass.adapters.inspect_metrics.kpass_metrics`.
    answer : str or callable, optional
        Answer extraction for cons@k, as for :func:`~kpass.adapters.inspect_scorers.kpass_scorer`
        (default: the scorer's ``Score.answer``).

    Returns
    -------
    Task

    Raises
    ------
    ValueError
        The task has no scorer, or it runs fewer epochs than a spec needs (``--epochs`` given
        later is checked when the task starts).
    TypeError
        A scorer declares its metrics per score key (wrap it by hand, see the message).

    Examples
    --------
    >>> from inspect_ai import Task
    >>> from inspect_ai.scorer import match
    >>> task = with_kpass_metrics(Task(dataset=[], scorer=match()), "pass@1")
    """
    scorers = list(task.scorer or [])
    if not scorers:
        raise ValueError("the task has no scorer to add kpass metrics to; give it one (Task(scorer=...)).")
    metric = kpass_metrics(*specs, cluster=cluster, method=method, confidence_level=confidence_level,
                           rng=rng, prefix=prefix)
    task_metrics = task.metrics
    if task_metrics is not None:
        wrapped = [kpass_scorer(scorer, answer=answer) for scorer in scorers]
        metrics = (dict(task_metrics, kpass=[metric]) if isinstance(task_metrics, dict)
                   else [*task_metrics, metric])
        return task_with(task, scorer=wrapped, metrics=metrics)
    wrapped = [kpass_scorer(scorer, answer=answer, metrics=[*_as_list(scorer_metrics(scorer)), metric])
               for scorer in scorers]
    return task_with(task, scorer=wrapped)
