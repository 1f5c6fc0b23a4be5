"""``kpass-lm-eval``: the ``lm_eval`` command plus kpass's k-sample metrics, on any generation task.

Usage::

    kpass-lm-eval --tasks gsm8k --model local-completions --model_args base_url=...,model=M \\
        --kpass "pass@1,8 cons@8 g-pass@8_0.5" --kpass-samples 8 --kpass-cluster-by topic \\
        --log_samples --output_path out

Every argument that does not start with ``--kpass`` goes to lm-eval unchanged
(``lm_eval.__main__.cli_evaluate``); lm-eval runs in this process, with these adjustments to the
chosen generation tasks (all ``generate_until`` tasks, or those named by ``--kpass-tasks``):

* ``repeats`` is set to K (``--kpass-samples``; default: the largest k the metrics need, or the
  task's own ``repeats`` if larger);
* the task's own filter pipelines and metrics are left as they are and see only the first R
  responses (R = the task's ``repeats`` before kpass, usually 1), so lm-eval's own numbers are what
  they would be without kpass; kpass re-applies each pipeline without its selection steps
  (``take_first``, ``majority_vote``) to all K responses and judges every answer with the task's
  own ``process_results`` (first binary metric, or ``--kpass-metric``);
* API models (``local-completions``, ``openai-*``... anything built on lm-eval's ``TemplateAPI``)
  send repeat r of a request with the seed :func:`repeat_seed` (``numpy.random.SeedSequence`` of
  the seed, the task and r; for every task of the run): repeat 0 keeps lm-eval's seed (so the
  first sample is the one a plain run gets), the K repeats differ on servers that honour seeds
  (vLLM) instead of being K copies of one sample, and runs with different seeds share no sample
  seed. Batches never mix repeats, so one seed per batch stays correct with ``batch_size > 1``;
* before the first request, every ``--kpass*`` flag is checked against the tasks: ``--kpass-filter``
  (``F`` or ``TASK:F``) and ``--kpass-metric`` name existing pipelines and metrics, ``k`` fits in
  ``--kpass-samples``, and cons@k has an answer extractor for every pipeline (the task family's,
  :mod:`kpass.adapters.lm_eval_answers`, or ``--kpass-answer``); pipelines identical once their
  selection steps are removed are scored once; lm-eval groups get a row of their own (problems
  pooled over the subtasks, the subtask as the cluster);
* a printed note says when lm-eval's own metrics (``maj@k``, ``take_first_k``) change because the
  repeats now differ;
* a task that would get K > 1 samples per problem (``--kpass-samples`` or its own ``repeats``) but decodes
  greedily (temperature 0 or ``do_sample: false`` once ``--gen_kwargs`` is merged into its YAML, as
  lm-eval sends it, :mod:`kpass.adapters.lm_eval_guards`; lm-eval's ``aime24`` and ``minerva_math``
  do) stops the run before the first request, naming the task and the setting;
  ``--kpass-allow-greedy`` sends them anyway;
* ``--use_cache`` is refused for tasks that do not sample (``do_sample`` not true): lm-eval's cache
  would hand the same generation to all K repeats; ``--cache_requests true`` is refused because
  lm-eval's request-cache key ignores ``repeats`` (use ``refresh``);
* after the run, a warning names every task where most problems got K identical samples
  (temperature 0, or a server that ignores the varied seed and caches);
* kpass's table (estimates with intervals, problems as the unit, clusters from
  ``--kpass-cluster-by``) is printed after lm-eval's table, added to lm-eval's results JSON under the
  key ``"kpass"`` (each estimate and its stderr also in lm-eval's own per-task results, ``pass@8,none``,
  so lm-eval's table and loggers show them: :mod:`kpass.adapters.lm_eval_results`), and written next
  to it as ``kpass_<date>.json`` plus the sample table
  ``kpass_samples_<date>.jsonl`` (readable by ``kpass report`` and ``kpass budget``: like the
  post-hoc reader's table it carries each generation's text, its *finished* flag and the task's
  generation limit, see :mod:`kpass.adapters.lm_eval_samples`), both through a temporary file and an
  atomic rename. Problems left out of a metric (fewer than k samples) are named in a warning.

Without ``--kpass`` the command is ``lm_eval`` with kpass's lm-eval metrics registered (so task YAMLs
can name them), their stderr patched in, the per-repeat API seed and the checks above (``--use_cache``,
identical samples) applied to tasks whose own ``repeats`` exceed 1; no task is changed otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import inspect
import json
import logging
import sys
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

__all__ = ["KpassOptions", "KpassUsageError", "main", "parse_kpass_args", "repeat_seed", "run"]

logger = logging.getLogger("kpass.lm_eval")

#: gen_kwargs key carrying the repeat index from generate_until to _create_payload (never sent).
REPEAT_KEY = "__kpass_repeat__"
#: Share of problems with K identical samples above which kpass warns.
IDENTICAL_WARNING_SHARE = 0.5


class KpassUsageError(SystemExit):
    """A kpass flag (or an lm-eval flag combined with kpass) that cannot work; exit code 2.

    A ``SystemExit`` so that no ``except Exception`` inside lm-eval swallows it when it is raised
    during the run (before any request is sent); :func:`main` prints the message.
    """

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(2)

    def __str__(self) -> str:
        return f"kpass-lm-eval: error: {self.message}"


@dataclasses.dataclass
class KpassOptions:
    """The ``--kpass*`` flags."""

    metrics: str | None = None
    samples: int | None = None
    cluster_by: str | None = None
    tasks: list[str] | None = None
    metric: str | None = None
    filters: list[str] | None = None
    method: str | None = None
    confidence_level: float = 0.95
    seed: int = 0
    answer: str | None = None
    allow_greedy: bool = False
    reasoning_markers: tuple[str, str] | None = ("<think>", "</think>")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer; got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer; got {text!r}")
    return value


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _kpass_parser() -> argparse.ArgumentParser:
    from .lm_eval_finishing import parse_reasoning_markers as reasoning_markers

    parser = argparse.ArgumentParser(
        prog="kpass-lm-eval", allow_abbrev=False, add_help=False,
        description="lm_eval plus kpass k-sample metrics; every other argument goes to lm_eval.")
    group = parser.add_argument_group("kpass")
    group.add_argument("--kpass", dest="metrics", action="append", metavar="SPECS",
                       help='kpass metric specs, e.g. "pass@1,8 cons@8 g-pass@8_0.5" (repeatable)')
    group.add_argument("--kpass-samples", dest="samples", type=_positive_int, metavar="K",
                       help="samples per problem (lm-eval repeats); default: the largest k needed")
    group.add_argument("--kpass-cluster-by", dest="cluster_by", metavar="FIELD",
                       help="document field whose values cluster problems (passage, subject, ...)")
    group.add_argument("--kpass-tasks", dest="tasks", type=_names, metavar="T1,T2",
                       help="generation tasks to sample K times (default: every generate_until task)")
    group.add_argument("--kpass-metric", dest="metric", metavar="NAME",
                       help="task metric that judges each sample (default: the first binary one)")
    group.add_argument("--kpass-filter", dest="filters", type=_names, metavar="F1,T:F2",
                       help="filter pipelines to report: F (every task that has it) or TASK:F (that task only); "
                            "default: all of each task's")
    group.add_argument("--kpass-answer", dest="answer", metavar="SPEC",
                       help="answer extractor for cons@k on every chosen task: a registered name (boxed, "
                            "lm_eval_aime, lm_eval_minerva_math, lm_eval_gsm8k, ...) or regex:PATTERN; default: "
                            "the task family's own (aime, minerva_math, hendrycks_math, regex filters)")
    group.add_argument("--kpass-method", dest="method", metavar="METHOD",
                       help="interval method of kpass.compute_report (default: kpass's)")
    group.add_argument("--kpass-confidence-level", dest="confidence_level", type=float, default=0.95,
                       metavar="LEVEL", help="confidence level of the intervals (default 0.95)")
    group.add_argument("--kpass-seed", dest="seed", type=int, default=0, metavar="SEED",
                       help="seed of kpass's bootstrap intervals (default 0)")
    group.add_argument("--kpass-allow-greedy", dest="allow_greedy", action="store_true",
                       help="send K samples per problem even when a task decodes greedily (temperature 0 or "
                            "do_sample false): they are then K copies of one generation")
    group.add_argument("--kpass-reasoning-markers", dest="reasoning_markers", type=reasoning_markers, metavar="OPEN,CLOSE",
                       help="markers of a reasoning block (default <think>,</think>; none: not looked for): a "
                            "generation that ends inside an unclosed block is unfinished")
    group.add_argument("--kpass-help", action="help", help="show the kpass flags and exit")
    return parser


def parse_kpass_args(argv: Sequence[str]) -> tuple[KpassOptions, list[str]]:
    """Split ``argv`` into kpass options and the arguments that go to lm-eval, in order.

    Raises
    ------
    KpassUsageError
        A ``--kpass*`` flag kpass does not know (a typo would otherwise reach lm-eval), bad values,
        or lm-eval flags that collapse repeats (``--cache_requests true``).
    """
    argv = list(argv)
    parser = _kpass_parser()
    unknown_kpass = [arg.split("=", 1)[0] for arg in argv
                     if arg.startswith("--kpass") and arg.split("=", 1)[0] not in parser._option_string_actions]
    if unknown_kpass:
        known = sorted(option for option in parser._option_string_actions if option.startswith("--kpass"))
        raise KpassUsageError(f"unknown kpass flag(s) {', '.join(unknown_kpass)}; kpass flags: {', '.join(known)}")
    kpass_argv: list[str] = []
    rest: list[str] = []
    index = 0
    while index < len(argv):
        arg = argv[index]
        name = arg.split("=", 1)[0]
        if name in parser._option_string_actions and name.startswith("--kpass"):
            kpass_argv.append(arg)
            action = parser._option_string_actions[name]
            if "=" not in arg and action.nargs != 0:
                if index + 1 >= len(argv):
                    raise KpassUsageError(f"{name} needs a value")
                kpass_argv.append(argv[index + 1])
                index += 1
        else:
            rest.append(arg)
        index += 1
    try:
        namespace = parser.parse_args(kpass_argv)
    except SystemExit as exit_:
        if exit_.code == 0:
            raise
        raise KpassUsageError("invalid kpass flag value (see above)") from None
    options = KpassOptions(
        metrics=" ".join(namespace.metrics) if namespace.metrics else None,
        samples=namespace.samples, cluster_by=namespace.cluster_by, tasks=namespace.tasks,
        metric=namespace.metric, filters=namespace.filters, method=namespace.method,
        confidence_level=namespace.confidence_level, seed=namespace.seed, answer=namespace.answer,
        allow_greedy=namespace.allow_greedy,
        **({} if namespace.reasoning_markers is None else {"reasoning_markers": namespace.reasoning_markers or None}),
    )
    if not 0 < options.confidence_level < 1:
        raise KpassUsageError(f"--kpass-confidence-level must be in (0, 1); got {options.confidence_level}")
    if options.metrics is None:
        flags = (("--kpass-samples", options.samples), ("--kpass-cluster-by", options.cluster_by),
                 ("--kpass-tasks", options.tasks), ("--kpass-metric", options.metric),
                 ("--kpass-filter", options.filters), ("--kpass-method", options.method),
                 ("--kpass-answer", options.answer))
        given = [flag for flag, value in flags if value is not None]
        if given:
            raise KpassUsageError(f"{', '.join(given)} need --kpass SPECS (the metrics to compute)")
    else:
        _check_cache_flags(rest)
    return options, rest


def _check_cache_flags(rest: Sequence[str]) -> None:
    for index, arg in enumerate(rest):
        name, _, inline = arg.partition("=")
        if name != "--cache_requests":
            continue
        value = inline or (rest[index + 1] if index + 1 < len(rest) and not rest[index + 1].startswith("-")
                           else "true")
        if value == "true":
            raise KpassUsageError(
                "--cache_requests true reuses requests built by an earlier run, whose `repeats` may not be K "
                "(lm-eval's request-cache key ignores repeats); use --cache_requests refresh, or drop it")


# ----------------------------------------------------------------------------- run state


@dataclasses.dataclass
class _TaskRun:
    name: str
    task: Any
    repeats: int
    original_repeats: int
    pipelines: list[Any] = dataclasses.field(default_factory=list)
    extractors: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class _RunState:
    options: KpassOptions
    specs: list[Any]
    lm: Any = None
    tasks: list[_TaskRun] = dataclasses.field(default_factory=list)
    samples: Mapping[str, Sequence[int]] | None = None
    results: dict[str, Any] | None = None
    table: Any = None
    report: Any = None
    error: str | None = None
    warnings: list[str] = dataclasses.field(default_factory=list)
    files: list[Path] = dataclasses.field(default_factory=list)
    groups: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    answer: Any = None  # the --kpass-answer extractor (kpass.host.extractors.AnswerExtractor)
    finish_reasons: Any = None  # the API's finish reasons (kpass.adapters.lm_eval_finishing.FinishReasonLog)


def _warn(state: _RunState, message: str) -> None:
    state.warnings.append(message)
    logger.warning(message)


def _group_map(task_dict: Any) -> dict[str, tuple[str, ...]]:
    """Group name -> its children (tasks or groups), from lm-eval's ``group_map``; the reports expand
    nested groups (:func:`kpass.reports.task_groups.leaf_task_groups`)."""
    group_map = task_dict.get("group_map") if isinstance(task_dict, Mapping) else None
    if not isinstance(group_map, Mapping):
        return {}
    return {str(group): tuple(str(child) for child in children) for group, children in group_map.items()}


def _filter_choices(options: KpassOptions, tasks: Mapping[str, Any]) -> dict[str, set[str] | None]:
    """Per task, the pipelines ``--kpass-filter`` keeps (None: all); checked against every task's pipelines.

    ``F`` keeps pipeline F of every task that has one; ``TASK:F`` keeps F of TASK only, and a task
    named that way keeps only what is named for it.
    """
    from .lm_eval_samples import sample_pipelines

    names = {name: [p.name for p in sample_pipelines(task.config.filter_list)] for name, task in tasks.items()}
    if options.filters is None:
        return {name: None for name in tasks}
    general = [entry for entry in options.filters if ":" not in entry]
    specific: dict[str, set[str]] = {}
    for entry in options.filters:
        if ":" in entry:
            task, _, pipeline = entry.partition(":")
            if task not in tasks:
                raise KpassUsageError(f"--kpass-filter {entry}: no generation task {task!r} in this run; tasks: "
                                      f"{sorted(tasks)}")
            if pipeline not in names[task]:
                raise KpassUsageError(f"--kpass-filter {entry}: task {task} has pipelines {names[task]}")
            specific.setdefault(task, set()).add(pipeline)
    for pipeline in general:
        if not any(pipeline in found for found in names.values()):
            raise KpassUsageError(f"--kpass-filter {pipeline}: no task of this run has that pipeline; pipelines: "
                                  + "; ".join(f"{task}: {', '.join(found)}" for task, found in names.items()))
    chosen: dict[str, set[str] | None] = {}
    for task in tasks:
        if task in specific:
            chosen[task] = specific[task]
        elif general:
            chosen[task] = {p for p in general if p in names[task]}
            if not chosen[task]:
                raise KpassUsageError(f"--kpass-filter {','.join(general)}: task {task} has none of them (its pipelines: "
                                      f"{', '.join(names[task])}); name its own with {task}:PIPELINE")
        else:
            chosen[task] = None
    return chosen


def _plan_pipelines(state: _RunState, name: str, task: Any, keep: set[str] | None) -> tuple[list[Any], dict[str, Any]]:
    """The task's distinct pipelines to score, and each one's answer extractor (checked for cons@k)."""
    from .lm_eval_answers import family_of_function, pipeline_answer_extractor
    from .lm_eval_samples import distinct_pipelines, sample_pipelines

    pipelines = [p for p in sample_pipelines(task.config.filter_list) if keep is None or p.name in keep]
    pipelines, duplicates = distinct_pipelines(pipelines, task=name)
    for note in duplicates:
        _warn(state, f"kpass: {note}")
    process_results = task.config.process_results
    custom = callable(process_results)
    family = family_of_function(process_results) if custom else None
    options = next((_metric_kwargs(entry) for entry in task.config.metric_list or ()
                    if isinstance(entry, Mapping) and entry.get("metric") == "exact_match"), None)
    extractors = {p.name: pipeline_answer_extractor(pipeline=p, family=family, custom_scoring=custom,
                                                    metric_options=options, override=state.answer)
                  for p in pipelines}
    needs_answers = [spec.name for spec in state.specs if "answer" in spec.requires]
    missing = [p.name for p in pipelines if extractors[p.name][0] is None]
    # --predict_only (lm-eval's override_metric("bypass")) drops the scoring: kpass computes nothing live then
    predict_only = [e.get("metric") for e in task.config.metric_list or () if isinstance(e, Mapping)] == ["bypass"]
    if needs_answers and missing and not predict_only:
        from kpass.host.extractors import ANSWER_EXTRACTOR_OPTIONS

        raise KpassUsageError(
            f"{', '.join(needs_answers)} vote over each sample's final answer, and no answer extractor is known for task "
            f"{name} (pipeline {', '.join(missing)}: {'its own process_results' if custom else 'raw generations'}); "
            f"name one with {ANSWER_EXTRACTOR_OPTIONS.split(' or ')[1]}")
    return pipelines, extractors


def _metric_kwargs(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in entry.items() if key not in ("metric", "aggregation", "higher_is_better")}


def _check_metric(options: KpassOptions, name: str, task: Any) -> None:
    if options.metric is None:
        return
    known = [entry.get("metric") for entry in task.config.metric_list or () if isinstance(entry, Mapping)]
    known = [metric for metric in known if isinstance(metric, str)]
    if options.metric not in known:
        raise KpassUsageError(f"--kpass-metric {options.metric}: task {name} scores with {known}")


def _eval_tasks(task_dict: Any) -> dict[str, Any]:
    if isinstance(task_dict, Mapping) and "tasks" in task_dict:
        return dict(task_dict["tasks"])
    from lm_eval.evaluator_utils import _handle_back_comp

    _, tasks = _handle_back_comp(task_dict)
    return dict(tasks)


def _required_samples(specs: Sequence[Any]) -> int:
    return max(int(spec.min_samples) for spec in specs)


def _prepare(state: _RunState, lm: Any, task_dict: Any, samples: Any) -> None:
    """Before any request: choose tasks, set repeats, guard caches, vary API seeds."""
    from lm_eval.api.model import CachingLM

    options = state.options
    tasks = _eval_tasks(task_dict)
    if options.tasks is not None:
        missing = sorted(set(options.tasks) - set(tasks))
        if missing:
            raise KpassUsageError(f"--kpass-tasks names {missing}, which are not in this run; tasks: {sorted(tasks)}")
    chosen = {name: task for name, task in tasks.items()
              if getattr(task, "OUTPUT_TYPE", None) == "generate_until"
              and (options.tasks is None or name in options.tasks)}
    not_generation = [name for name in (options.tasks or []) if name not in chosen]
    if not_generation:
        raise KpassUsageError(f"--kpass-tasks {not_generation}: only generate_until tasks have K samples")
    if not state.specs:  # no --kpass: only the tasks that repeat by themselves
        chosen = {name: task for name, task in chosen.items() if int(task.config.repeats or 1) > 1}
    elif not chosen:
        _warn(state, "kpass: no generate_until task in this run; kpass computes nothing")
    needed = _required_samples(state.specs) if state.specs else 1
    if state.specs and options.samples is not None and options.samples < needed:
        too_large = [spec.name for spec in state.specs if spec.min_samples > options.samples]
        raise KpassUsageError(f"--kpass-samples {options.samples} is fewer than {', '.join(too_large)} needs "
                              f"({needed} per problem); raise --kpass-samples or lower k")
    filter_choices = _filter_choices(options, chosen) if state.specs else {name: None for name in chosen}
    plans = {}
    for name, task in chosen.items():
        original = int(task.config.repeats or 1)
        repeats = original if not state.specs else (
            options.samples if options.samples is not None else max(needed, original))
        plans[name] = (original, repeats)
    if not options.allow_greedy:
        from .lm_eval_guards import greedy_refusal

        refusal = greedy_refusal(chosen, {name: plan[1] for name, plan in plans.items()},
                                 lm.lm if isinstance(lm, CachingLM) else lm)
        if refusal is not None:
            raise KpassUsageError(refusal)
    if isinstance(lm, CachingLM):
        greedy = [name for name, task in chosen.items()
                  if plans[name][1] > 1 and not (task.config.generation_kwargs or {}).get("do_sample", False)]
        if greedy:
            raise KpassUsageError(
                f"--use_cache with tasks {greedy}, which do not sample (generation_kwargs do_sample is not true): "
                "lm-eval's cache returns one stored generation for all K repeats of a request. Drop --use_cache, "
                "or sample (--gen_kwargs do_sample=True,temperature=...)")
    runs = []
    for name, task in chosen.items():
        original, repeats = plans[name]
        pipelines: list[Any] = []
        extractors: dict[str, Any] = {}
        if state.specs:
            _check_metric(options, name, task)
            pipelines, extractors = _plan_pipelines(state, name, task, filter_choices[name])
        runs.append(_TaskRun(name, task, repeats, original, pipelines, extractors))
    seeded = _is_api_model(lm.lm if isinstance(lm, CachingLM) else lm)
    for run in runs:
        name, task, original, repeats = run.name, run.task, run.original_repeats, run.repeats
        if repeats < needed:
            _warn(state, f"kpass: task {name} gets {repeats} samples per problem but {needed} are needed for "
                         f"every metric; problems with too few samples are excluded from those metrics")
        _note_changed_lm_eval_metrics(state, run, seeded)
        if original > repeats:
            _warn(state, f"kpass: task {name} asks for repeats={original} itself; --kpass-samples {repeats} lowers "
                         f"it, so lm-eval's own metrics of this task see {repeats} responses, not {original}")
        if options.cluster_by is not None and state.specs:
            docs = task.eval_docs
            if len(docs) and options.cluster_by not in docs[0]:
                raise KpassUsageError(f"--kpass-cluster-by {options.cluster_by!r}: documents of task {name} have "
                                      f"no such field; fields: {sorted(docs[0])}")
        if repeats != original:
            task.set_config(key="repeats", value=repeats)
        if original < repeats:
            _show_first_responses(task, original)
        state.tasks.append(run)
    state.lm = lm
    state.samples = samples
    state.groups = _group_map(task_dict)
    _vary_api_seeds(lm.lm if isinstance(lm, CachingLM) else lm)
    from .lm_eval_finishing import FinishReasonLog

    state.finish_reasons = FinishReasonLog()  # finished from the API's own finish reasons, where it gives them
    state.finish_reasons.wrap(lm.lm if isinstance(lm, CachingLM) else lm)


def _is_api_model(model: Any) -> bool:
    from lm_eval.models.api_models import TemplateAPI

    return isinstance(model, TemplateAPI)


def _note_changed_lm_eval_metrics(state: _RunState, run: _TaskRun, seeded: bool) -> None:
    """Say so when lm-eval's own numbers of a task move because its repeats now differ (maj@k ...)."""
    from .lm_eval_samples import sample_pipelines

    if run.original_repeats <= 1 or not seeded:
        return
    over_repeats = [p for p in sample_pipelines(run.task.config.filter_list)
                    if set(p.removed) - {"take_first"}]
    if not over_repeats:
        return
    seen = min(run.original_repeats, run.repeats)
    _warn(state, f"kpass: lm-eval's own numbers for task {run.name} (pipelines "
                 f"{', '.join(p.name for p in over_repeats)}: {', '.join(sorted(set().union(*(p.removed for p in over_repeats)) - {'take_first'}))} over "
                 f"its {seen} repeats) are not what a plain lm_eval run prints: kpass sends every repeat its own seed, so "
                 f"they are {seen} different samples instead of {seen} copies of one (a plain run's maj@k is the first "
                 "sample's score)")


def _show_first_responses(task: Any, count: int) -> None:
    """Let the task's own pipelines see only the first ``count`` responses (as without kpass)."""
    from lm_eval.api.filter import FilterEnsemble
    from lm_eval.filters.selection import TakeKFilter

    task._filters = [FilterEnsemble(name=ensemble.name, filters=[partial(TakeKFilter, k=count), *ensemble.filters])
                     for ensemble in task._filters]


def repeat_seed(seed: int, task: str | None, repeat: int) -> int:
    """The request seed of repeat ``repeat`` of a task: lm-eval's own ``seed`` for repeat 0, else a
    31-bit seed drawn from ``numpy.random.SeedSequence((seed, task, repeat))``.

    Runs with different seeds share no repeat's seed (``seed + r`` made runs with seeds 7 and 8
    share 7 of 8), and two tasks of one run never share one either.

    Examples
    --------
    >>> repeat_seed(1234, "aime24", 0)
    1234
    >>> repeat_seed(7, "t", 1) != repeat_seed(8, "t", 0) and repeat_seed(7, "t", 2) != repeat_seed(8, "t", 1)
    True
    """
    import hashlib

    import numpy as np

    if repeat == 0:
        return seed
    task_key = int.from_bytes(hashlib.sha256(str(task).encode("utf-8")).digest()[:8], "little")
    state = np.random.SeedSequence([int(seed) % 2**64, task_key, int(repeat)]).generate_state(1, dtype=np.uint32)
    return int(state[0] >> 1)


def _vary_api_seeds(model: Any) -> None:
    """Give repeat r of every request the seed :func:`repeat_seed` on lm-eval API models (TemplateAPI)."""
    from lm_eval.models.api_models import TemplateAPI

    if not isinstance(model, TemplateAPI) or "generate_until" in vars(model):
        return
    generate_until = model.generate_until
    create_payload = model._create_payload

    def tagged_generate_until(requests, *args, **kwargs):
        occurrences: dict[int, int] = {}
        tagged = []
        for request in requests:
            repeat = occurrences.get(id(request), 0)
            occurrences[id(request)] = repeat + 1
            context, gen_kwargs, *extra = request.args
            gen_kwargs = {**gen_kwargs, REPEAT_KEY: (request.task_name, repeat)}
            tagged.append(dataclasses.replace(request, arguments=(context, gen_kwargs, *extra),
                                              resps=[], filtered_resps={}))
        return generate_until(tagged, *args, **kwargs)

    def seeded_create_payload(messages, *args, **kwargs):
        task, repeat = None, 0
        if isinstance(kwargs.get("gen_kwargs"), dict) and REPEAT_KEY in kwargs["gen_kwargs"]:
            kwargs["gen_kwargs"] = dict(kwargs["gen_kwargs"])
            task, repeat = kwargs["gen_kwargs"].pop(REPEAT_KEY)
        elif len(args) >= 2 and isinstance(args[1], dict) and REPEAT_KEY in args[1]:
            gen_kwargs = dict(args[1])
            task, repeat = gen_kwargs.pop(REPEAT_KEY)
            args = (args[0], gen_kwargs, *args[2:])
        payload = create_payload(messages, *args, **kwargs)
        if repeat and isinstance(payload, dict):
            for holder in (payload, payload.get("sampling_params")):
                if isinstance(holder, dict) and isinstance(holder.get("seed"), int):
                    holder["seed"] = repeat_seed(holder["seed"], task, int(repeat))
        return payload

    model.generate_until = tagged_generate_until
    model._create_payload = seeded_create_payload


# ----------------------------------------------------------------------------- scoring


@dataclasses.dataclass
class _TaskSamples:
    run: _TaskRun
    doc_ids: list[Any]
    docs: list[Any]
    responses: list[list[Any]]
    identical_share: float


def _collect(state: _RunState) -> list[_TaskSamples]:
    """Every chosen task's documents and K raw responses; warns about identical samples."""
    from .lm_eval_samples import identical_response_share

    collected = []
    for run in state.tasks:
        by_doc: dict[int, Any] = {}
        for instance in sorted(run.task.instances, key=lambda inst: (inst.doc_id, inst.idx)):
            by_doc.setdefault(instance.doc_id, instance)
        indices = state.samples.get(run.name) if state.samples else None
        doc_ids = [indices[doc_id] if indices else doc_id for doc_id in by_doc]
        responses = [list(instance.resps) for instance in by_doc.values()]
        short = [doc_id for doc_id, resps in zip(doc_ids, responses, strict=True) if len(resps) != run.repeats]
        if short:
            raise RuntimeError(
                f"task {run.name}: documents {short[:5]} do not have {run.repeats} responses (lm-eval's request "
                "cache may hold requests built with other repeats; rerun with --cache_requests refresh)")
        share = identical_response_share(responses)
        if share > IDENTICAL_WARNING_SHARE:
            _warn(state, f"kpass: task {run.name}: {share:.0%} of problems got {run.repeats} identical samples "
                         "(temperature 0, or a server that ignores the seed?); k-sample metrics then say no more "
                         "than one sample. Sample with --gen_kwargs do_sample=True,temperature=...")
        collected.append(_TaskSamples(run, doc_ids, [instance.doc for instance in by_doc.values()], responses, share))
    return collected


def _process_one(task: Any, docs: Sequence[Any], doc_index: int, answer: Any) -> Mapping[str, Any]:
    """The task's own ``process_results`` on one extracted answer of document ``docs[doc_index]``."""
    return task.process_results(docs[doc_index], [answer])


def _task_tables(state: _RunState, collected: Sequence[_TaskSamples],
                 model_name: str) -> tuple[list[Any], dict[str, Any]]:
    """Sample tables of every chosen task (one per filter pipeline) and per-task diagnostics."""
    from kpass import SampleTable

    from .lm_eval_finishing import EVIDENCE_FIELD, evidence_strings, live_evidence
    from .lm_eval_provenance import JUDGE_COLUMN
    from .lm_eval_samples import Generations, ScoredDocuments, sample_columns, score_samples

    tables = []
    details: dict[str, Any] = {}
    for item in collected:
        run, task, docs, doc_ids = item.run, item.run.task, item.docs, item.doc_ids
        targets = [task.doc_to_target(doc) for doc in docs]
        limit = _max_gen_toks(task, state.lm, run.name)
        pipelines = run.pipelines
        judged_by = {}
        reasons, counts = live_evidence(state.lm, state.finish_reasons, item.responses)  # API reasons, model counts
        for pipeline in pipelines:
            answers = pipeline.apply(item.responses, docs)
            metric, verdicts = score_samples(
                answers, partial(_process_one, task, docs),
                metric=state.options.metric, task=run.name, doc_ids=doc_ids)
            columns, _ = sample_columns(
                model=model_name, task=run.name, pipeline=pipeline, cluster_by=state.options.cluster_by,
                doc_fields=False, extractor=run.extractors[pipeline.name],
                scored=ScoredDocuments(doc_ids=doc_ids, docs=docs, targets=targets, answers=answers,
                                       verdicts=verdicts),
                generations=Generations(item.responses, max_gen_toks=limit, finish_reasons=reasons,
                                        token_counts=counts, reasoning_markers=state.options.reasoning_markers))
            columns[JUDGE_COLUMN] = [metric] * len(columns["model"])  # the report names it, as post hoc
            tables.append(SampleTable.from_columns(columns, source=f"lm-eval task {run.name}"))
            judged_by[pipeline.name] = metric
        details[run.name] = {"samples_per_problem": run.repeats, "repeats_before_kpass": run.original_repeats,
                             "problems": len(docs), "identical_sample_share": item.identical_share,
                             "max_gen_toks": limit,  # and the evidence of finishing, for `kpass report` on this output:
                             EVIDENCE_FIELD: evidence_strings(doc_ids, reasons, counts, max_gen_toks=limit),
                             "judged_by": judged_by,
                             "pipelines": {p.name: {"selection_steps_removed": list(p.removed),
                                                    "steps_kept": p.step_names(),
                                                    "answer_extractor": run.extractors[p.name][0]}
                                           for p in pipelines}}
    return tables, details


def _max_gen_toks(task: Any, lm: Any, name: str) -> int:
    """The generation limit of a task in this run, as :func:`~kpass.adapters.lm_eval_reader.max_gen_toks_of`
    finds it post hoc: the task's ``generation_kwargs`` limit (which include ``--gen_kwargs``; ``max_tokens``
    first for the API models that send it first), else the model's ``max_gen_toks``, else lm-eval's 256."""
    from lm_eval.api.model import CachingLM

    from .lm_eval_reader import LM_EVAL_DEFAULT_MAX_GEN_TOKS, _max_gen_toks_in, max_gen_toks_of

    model = lm.lm if isinstance(lm, CachingLM) else lm
    first = type(model).__module__.rsplit(".", 1)[-1] in ("openai_completions", "sglang_generate_API")
    if _max_gen_toks_in(generation_kwargs := task.config.generation_kwargs, max_tokens_first=first) is not None:
        return max_gen_toks_of({"generation_kwargs": generation_kwargs}, {}, task=name,
                               source=f"lm-eval task {name}", max_tokens_first=first)
    for attribute in ("max_gen_toks", "_max_gen_toks"):  # HFLM/VLLM property; TemplateAPI attribute
        value = getattr(model, attribute, None)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
    return LM_EVAL_DEFAULT_MAX_GEN_TOKS


def _model_name(model: Any, model_args: Any) -> str:
    try:
        from lm_eval.loggers.evaluation_tracker import GeneralConfigTracker

        name = GeneralConfigTracker._get_model_name(model_args)
    except Exception:  # noqa: BLE001 - private helper of lm-eval; fall back below
        name = None
    if name:
        return str(name)
    return model if isinstance(model, str) else type(model).__name__


def _compute(state: _RunState, model: Any, model_args: Any) -> dict[str, Any] | None:
    """Score every sample, build the report; None when no --kpass metrics were asked for."""
    import kpass

    if getattr(state.lm, "world_size", 1) > 1:
        _warn(state, "kpass: lm-eval runs in several processes; each holds only its share of the samples, so "
                     "kpass computes nothing here. Run `kpass report` on the --log_samples output instead.")
        return None
    collected = _collect(state)
    if not state.specs or not collected:
        return None
    model_name = _model_name(model, model_args)
    tables, details = _task_tables(state, collected, model_name)
    if not tables:
        raise ValueError("no filter pipeline left to score (see --kpass-filter)")
    table = tables[0] if len(tables) == 1 else kpass.SampleTable.concat(tables)
    table.task_groups = dict(state.groups)  # lm-eval groups: compute_report adds their rows (kpass.reports.task_groups)
    clustered = state.options.cluster_by is not None or all(t.has_column("cluster") for t in tables)
    report = kpass.compute_report(table, state.specs, cluster_by="cluster" if clustered else None,
                                  method=state.options.method, confidence_level=state.options.confidence_level,
                                  rng=state.options.seed)
    for exclusion in report.exclusions:  # also in the printed table and in report.as_dict(); never silent
        shown = ", ".join(exclusion.problem_ids[:20]) + (", ..." if len(exclusion.problem_ids) > 20 else "")
        _warn(state, f"kpass: {exclusion.task} / {exclusion.metric}: {len(exclusion.problem_ids)} problem(s) left "
                     f"out ({exclusion.reason}): doc_id {shown}")
    state.table, state.report = table, report
    return {
        "kpass_version": getattr(kpass, "__version__", None),
        "metrics": [spec.name for spec in state.specs],
        "cluster_by": state.options.cluster_by or ("kpass_cluster filter" if clustered else None),
        "method": state.options.method,
        "seed": state.options.seed,
        "api_seed": ("repeat 0 of a request keeps lm-eval's seed; repeat r > 0 is sent with a seed from "
                     "numpy.random.SeedSequence((seed, task, r)) (lm-eval TemplateAPI models)"),
        "tasks": details,
        "report": report.as_dict(),
        "warnings": list(state.warnings),
    }


# ----------------------------------------------------------------------------- patches


def _bound(function: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    bound = inspect.signature(function).bind_partial(*args, **kwargs)
    return dict(bound.arguments)


@contextlib.contextmanager
def _patched(state: _RunState) -> Iterator[None]:
    import lm_eval.evaluator as evaluator
    from lm_eval.loggers.evaluation_tracker import EvaluationTracker

    original_evaluate = evaluator.evaluate
    original_simple_evaluate = evaluator.simple_evaluate
    original_save = EvaluationTracker.save_results_aggregated

    def evaluate(*args, **kwargs):
        arguments = _bound(original_evaluate, args, kwargs)
        _prepare(state, arguments.get("lm"), arguments.get("task_dict"), arguments.get("samples"))
        return original_evaluate(*args, **kwargs)

    def simple_evaluate(*args, **kwargs):
        results = original_simple_evaluate(*args, **kwargs)
        if results is None or not state.tasks:
            return results
        arguments = _bound(original_simple_evaluate, args, kwargs)
        if arguments.get("predict_only"):
            _warn(state, "kpass: --predict_only computes no metrics, so kpass computes none either; run "
                         "`kpass report` on the --log_samples output")
            return results
        try:
            state.results = _compute(state, arguments.get("model"), arguments.get("model_args"))
        except Exception as error:
            logger.exception("kpass: computing the k-sample metrics failed")
            state.error = f"{type(error).__name__}: {error}"
            state.results = {"error": state.error, "warnings": list(state.warnings)}
        if state.results is not None:
            results["kpass"] = state.results
            if state.report is not None:
                _add_to_lm_eval_results(state, results)
        return results

    def save_results_aggregated(self, results, samples=None):
        original_save(self, results=results, samples=samples)
        if state.results is not None and self.output_path and getattr(self, "date_id", None):
            state.files.extend(_write_files(state, self))

    evaluator.evaluate = evaluate
    evaluator.simple_evaluate = simple_evaluate
    EvaluationTracker.save_results_aggregated = save_results_aggregated
    try:
        yield
    finally:
        evaluator.evaluate = original_evaluate
        evaluator.simple_evaluate = original_simple_evaluate
        EvaluationTracker.save_results_aggregated = original_save


def _add_to_lm_eval_results(state: _RunState, results: dict[str, Any]) -> None:
    """kpass's estimates also in lm-eval's per-task dicts (``pass@8,none``...), so lm-eval's table, loggers
    and results JSON carry them; what was added is listed in ``results["kpass"]``
    (:mod:`kpass.adapters.lm_eval_results`)."""
    from .lm_eval_results import RESULTS_KEYS_FIELD, add_kpass_metrics, pipeline_of_rows

    rows = pipeline_of_rows({run.name: [p.name for p in run.pipelines] for run in state.tasks}, state.groups)
    assert state.results is not None
    state.results[RESULTS_KEYS_FIELD] = add_kpass_metrics(results, state.report, rows)


def _output_dir(tracker: Any) -> Path:
    path = Path(tracker.output_path)
    if path.suffix == ".json":
        return path.parent
    return path / str(tracker.general_config_tracker.model_name_sanitized)


def _write_files(state: _RunState, tracker: Any) -> list[Path]:
    from lm_eval.utils import handle_non_serializable

    directory = _output_dir(tracker)
    directory.mkdir(parents=True, exist_ok=True)
    from kpass.cli.output import write_atomically

    report_path = directory / f"kpass_{tracker.date_id}.json"
    written = []
    write_atomically(report_path, json.dumps(state.results, indent=2, default=handle_non_serializable,
                                             ensure_ascii=False))
    written.append(report_path)
    if state.table is not None:
        samples_path = directory / f"kpass_samples_{tracker.date_id}.jsonl"
        lines = (json.dumps(record, default=handle_non_serializable, ensure_ascii=False)
                 for record in state.table.to_records())
        write_atomically(samples_path, "".join(line + "\n" for line in lines))
        written.append(samples_path)
    return written


# ----------------------------------------------------------------------------- entry point


def run(argv: Sequence[str]) -> int:
    """Run ``kpass-lm-eval`` with ``argv`` (without the program name); returns the exit code."""
    options, lm_eval_argv = parse_kpass_args(argv)
    from . import lm_eval_metrics  # noqa: F401  (registers kpass metrics, patches lm-eval's stderr)

    from lm_eval.__main__ import cli_evaluate

    from kpass import parse_metric_specs
    from kpass import format_report

    specs = []
    if options.metrics is not None:
        try:
            specs = parse_metric_specs(options.metrics)
        except ValueError as error:
            raise KpassUsageError(f"--kpass {options.metrics!r}: {error}") from None
    state = _RunState(options=options, specs=specs)
    if options.answer is not None:
        from kpass import UsageError, resolve_answer_extractor

        try:
            state.answer = resolve_answer_extractor(options.answer)
        except UsageError as error:
            raise KpassUsageError(f"--kpass-answer: {error}") from None
    with _patched(state):
        _call_lm_eval(cli_evaluate, lm_eval_argv)
    if state.report is not None:
        print()
        print(f"kpass ({', '.join(spec.name for spec in specs)}; samples per problem: "
              f"{', '.join(f'{t.name}={t.repeats}' for t in state.tasks)}"
              + (f"; clusters: {options.cluster_by}" if options.cluster_by else "") + ")")
        print(format_report(state.report, "markdown"))
    for message in state.warnings:
        print(f"warning: {message}", file=sys.stderr)
    for path in state.files:
        print(f"kpass: wrote {path}", file=sys.stderr)
    if state.error is not None:
        print(f"kpass-lm-eval: error: k-sample metrics failed: {state.error}", file=sys.stderr)
        return 1
    return 0


def _call_lm_eval(cli_evaluate: Any, lm_eval_argv: Sequence[str]) -> None:
    saved = sys.argv
    sys.argv = ["lm_eval", *lm_eval_argv]
    try:
        cli_evaluate()
    finally:
        sys.argv = saved


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point ``kpass-lm-eval``; exit code 2 for usage errors, 1 if kpass's part failed."""
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except KpassUsageError as error:
        print(str(error), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
