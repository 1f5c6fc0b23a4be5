"""How the samples of an lm-eval task are judged post hoc, from the files a run wrote.

The task's own scoring decides each sample's verdict, as lm-eval decided it for generation 0:
its ``process_results`` (resolved to installed code, or from the task's YAML), else its
``metric_list`` of registered metrics called per sample (:func:`task_scoring`); with one sample
per document and a custom ``process_results``, lm-eval's logged per-sample metric is the verdict
(:func:`logged_verdicts`). :func:`check_against_lm_eval` refuses a re-scoring that does not give
lm-eval's own logged score for the first generation. No lm-eval import at module level.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["TaskScoring", "check_against_lm_eval", "data_error", "logged_verdicts", "task_scoring"]

#: Keys of a ``metric_list`` entry that are not keyword arguments of the metric.
_CONFIG_KEYS_NOT_KWARGS = frozenset({"metric", "aggregation", "higher_is_better", "hf_evaluate"})


def data_error(message: str, *, source: Any = None, line: int | None = None, field: str | None = None):
    """A :class:`kpass.DataError` naming the file (``source``), line and field of an lm-eval run."""
    from kpass import DataError

    return DataError(message, source=None if source is None else str(source), line=line, field=field)


def logged_verdicts(docs, pipeline, metric: str, task: str, samples_path: Path) -> list[list[bool]]:
    """lm-eval's own per-sample verdicts (one sample per document), from the samples file."""
    from .lm_eval_samples import binary_verdict

    verdicts = []
    for doc in docs:
        logged = doc["logged"].get(pipeline.name) or {}
        if metric not in logged:
            raise data_error(f"task {task!r}, pipeline {pipeline.name!r}, doc_id {doc['doc_id']}: no logged "
                              f"{metric!r} value", source=samples_path, line=doc["line"], field=metric)
        try:
            verdicts.append([binary_verdict(logged[metric], metric=metric, where=f"doc_id {doc['doc_id']}")])
        except ValueError as error:
            raise data_error(str(error), source=samples_path, line=logged.get("line"), field=metric) from None
    return verdicts


class TaskScoring:
    """How a task's samples are judged post hoc, and how each pipeline's answer classes are found."""

    def __init__(self, *, score=None, logged_metric: str | None = None, family: str | None = None,
                 custom: bool = False, exact_match_options: Mapping[str, Any] | None = None,
                 description: str = "", notes: Sequence[str] = ()) -> None:
        self.score = score
        self.logged_metric = logged_metric
        self.family = family
        self.custom = custom
        self.exact_match_options = exact_match_options
        self.description = description
        self.notes = list(notes)

    def extractor(self, pipeline):
        from .lm_eval_answers import pipeline_answer_extractor

        return pipeline_answer_extractor(pipeline=pipeline, family=self.family, custom_scoring=self.custom,
                                         metric_options=self.exact_match_options)


def task_scoring(config: Mapping[str, Any], task: str, samples_path: Path, docs, include_path) -> TaskScoring:
    """The task's own scoring: its ``process_results`` resolved to installed code, or its metrics.

    One sample per document and a custom ``process_results``: lm-eval's logged per-sample metric
    is the verdict (nothing to re-score), and a note says so.
    """
    from .lm_eval_answers import (ProcessResultsError, family_of_function, family_of_source,
                                  resolve_process_results)

    if callable(config.get("process_results")):  # from the task's YAML (predict_only: kpass.adapters.lm_eval_scoring)
        function = config["process_results"]
        return TaskScoring(score=lambda d, answer: function(docs[d]["doc"], [answer]),
                        family=family_of_function(function), custom=True,
                        description=f"process_results of {function.__module__}")
    if not _is_code(config.get("process_results")):
        score, metric_names, options = _config_scorer(config, task, samples_path)
        return TaskScoring(score=lambda d, answer: score(docs[d]["target"], answer), exact_match_options=options,
                        description=", ".join(metric_names))
    family_found = family_of_source(config.get("process_results"))
    family = family_found[0] if family_found else None
    if all(len(doc["resps"]) == 1 for doc in docs):
        metric = _first_logged_metric(config, docs, task, samples_path)
        return TaskScoring(logged_metric=metric, family=family, custom=True, description=f"logged {metric}",
                        notes=[f"{samples_path}: task {task!r} has one sample per problem: each verdict is lm-eval's "
                               f"own logged {metric} (its process_results already scored it)"])
    try:
        function, family, where = resolve_process_results(task, config, include_path=include_path)
    except ProcessResultsError as error:
        raise data_error(str(error), source=samples_path, field="process_results") from None

    def rescore(d: int, answer: Any) -> Mapping[str, Any]:
        return function(docs[d]["doc"], [answer])

    return TaskScoring(score=rescore, family=family, custom=True, description=f"process_results of {where}",
                    notes=[f"{samples_path}: task {task!r} re-scored sample by sample with its own process_results "
                           f"({where})"])


def _first_logged_metric(config: Mapping[str, Any], docs, task: str, samples_path: Path) -> str:
    """The first metric of the task's ``metric_list`` that the samples file logs (else the first logged)."""
    logged: Mapping[str, Any] = next(iter(docs[0]["logged"].values()), {}) if docs else {}
    names = [entry.get("metric") for entry in config.get("metric_list") or () if isinstance(entry, Mapping)]
    for name in [*names, *[key for key in logged if key != "line"]]:
        if isinstance(name, str) and name in logged:
            return name
    raise data_error(f"task {task!r}: the samples file logs no per-sample metric to take as the verdict",
                      source=samples_path, field="metrics")


def check_against_lm_eval(pipeline, metric: str, docs, verdicts, task: str, samples_path: Path) -> None:
    """Post-hoc verdicts of the first generation must equal lm-eval's own logged score.

    For a pipeline whose only selection step is a final ``take_first``, lm-eval scored generation 0
    through the same steps with the same metric; a disagreement means the post-hoc scoring does not
    reproduce the task (multiple targets, a target mapping, a custom metric), and is an error
    rather than silently wrong numbers.
    """
    if pipeline.removed != ("take_first",):
        return
    for d, doc in enumerate(docs):
        logged = doc["logged"].get(pipeline.name) or {}
        value = logged.get(metric)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value not in (0, 1):
            continue
        if bool(value) != verdicts[d][0]:
            raise data_error(
                f"task {task!r}, pipeline {pipeline.name!r}, doc_id {doc['doc_id']}: lm-eval logged "
                f"{metric}={value} for the first generation but re-scoring it gives {int(verdicts[d][0])}; "
                "this task's scoring cannot be reproduced from the files (multiple targets, a target "
                "mapping or a custom metric?). Run it through kpass-lm-eval.",
                source=samples_path, line=logged.get("line"), field=metric)


def _config_scorer(config: Mapping[str, Any], task: str, source: Path):
    """``(score, metric names, exact_match options)``: ``score(target, answer) -> {metric: value}``
    rebuilt from a task config's ``metric_list`` (options None when ``exact_match`` is not used).

    Mirrors the ``generate_until`` branch of lm-eval's ``ConfigurableTask.process_results`` for
    registered metrics called as ``fn(references=[gold], predictions=[answer], **kwargs)``.
    """
    from lm_eval.api.registry import get_metric, metric_registry

    import lm_eval.api.metrics  # noqa: F401  (registers the built-in metrics)

    from .lm_eval_metrics import KPASS_METRIC_NAMES, kpass_scorer_of

    if config.get("doc_to_choice") is not None:
        raise data_error(
            f"task {task!r} maps targets through doc_to_choice; post-hoc scoring supports plain targets only. "
            "Run the task through kpass-lm-eval.", source=source, field="doc_to_choice")
    metric_list = config.get("metric_list") or [{"metric": "exact_match"}]
    scorers = []
    kpass_entries = []
    for entry in metric_list:
        name = entry.get("metric") if isinstance(entry, Mapping) else None
        if not isinstance(name, str):
            continue
        kwargs = {key: value for key, value in entry.items() if key not in _CONFIG_KEYS_NOT_KWARGS}
        if name in KPASS_METRIC_NAMES or (_is_code(name) and _kpass_function_source(name)):
            kpass_entries.append(kwargs)
            continue
        if _is_code(name) or entry.get("hf_evaluate") or name not in metric_registry:
            continue
        scorers.append((name, get_metric(name), kwargs))
    if not scorers and kpass_entries:
        # a task scored only by kpass metrics: judge samples the way they do (score_with + options)
        name, kwargs = kpass_scorer_of(kpass_entries[0])
        scorers.append((name, get_metric(name), kwargs))
    if not scorers:
        raise data_error(
            f"task {task!r} has no registered lm-eval metric kpass can call per sample (metric_list: "
            f"{[_short(e.get('metric')) for e in metric_list if isinstance(e, Mapping)]}); run it through "
            "kpass-lm-eval.", source=source, field="metric_list")

    def score(target: Any, answer: Any) -> dict[str, Any]:
        gold = target
        if isinstance(answer, str) and not isinstance(gold, str):
            gold = str(gold)
        out: dict[str, Any] = {}
        for name, function, kwargs in scorers:
            try:
                value = function(references=[gold], predictions=[answer], **kwargs)
            except TypeError:
                value = function([gold, answer])
            if isinstance(value, Mapping):
                out.update(value)
            else:
                out[name] = value
        return out

    options = next((kwargs for name, _, kwargs in scorers if name == "exact_match"), None)
    return score, [name for name, _, _ in scorers], options


def _kpass_function_source(text: str) -> bool:
    """True for the dumped source of one of kpass's lm-eval metric functions."""
    from .lm_eval_metrics import KPASS_METRIC_NAMES

    head = text.lstrip().split("(", 1)[0]
    return head.startswith("def ") and head[4:].strip() in KPASS_METRIC_NAMES


def _is_code(value: Any) -> bool:
    return isinstance(value, str) and ("def " in value or "\n" in value)


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) < 40 else text[:37] + "..."
