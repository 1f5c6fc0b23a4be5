"""``kpass budget`` and ``kpass decompose``: token-budget curves and what a pass@1 change is made of.

``kpass budget FILES... --budgets 2048,4096,8192`` prints fin@k, pass@k and pass@k | fin per model,
task and budget with intervals. ``kpass decompose FILES... --baseline A --model B --budgets ...``
prints, per task and budget, the two models' pass@1 and fin@1, the change split into finishing F,
reliability P and reach (docs/spec.md section 6), robust reach, lone wins, matched reliability and
the attribution spread, each with a paired cluster-bootstrap interval. ``--plot PATH`` draws
pass@1 and fin@1 against the budget, or a stacked bar of F, P and reach per budget.

Budgets are read from one run by truncation (``answer_token``, else ``output_tokens`` of finished
samples; see :mod:`kpass.metrics._token_budget`), or with ``--tokenizer SPEC`` from the output text
(:mod:`kpass.data.tokenizers`). ``as-run`` (the default of ``kpass budget``) reads the recorded
``finished`` flags: a run made with a native ``max_tokens = B`` is read as it is (stop reason
"length" means not finished).

Both use the interval options of ``kpass report`` (seed 0, 10,000 resamples, the core's default
method; :func:`kpass.reports.options.interval_options`). Every warning of the core, and the reader's notes
(:attr:`kpass.SampleTable.notes`), become notes: after the table, under ``"notes"`` in
``--format json`` (``{"rows": [...], "exclusions": [...], "notes": [...]}``; decompose has no
exclusions), and on stderr with ``--format csv``. ``kpass budget -k K`` leaves out, and lists,
the problems with fewer than K samples; K above every problem's n is a data error.

The per-sample token arrays come from :class:`kpass.reports.budget.BudgetSamples`, the text
from :mod:`kpass.render.budget_text`, the plots from :mod:`kpass.render.plot`. :func:`run_budget` and
:func:`run_decompose` return the exit code (0); errors are raised for :func:`kpass.cli.main`.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import warnings
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from kpass.cli.argtypes import budget_list, fraction, k_list, regular_expression
from kpass.cli.arguments import (add_bootstrap_arguments, add_engine_arguments, add_intersect_argument, add_run_arguments,
                                 add_tokenizer_arguments, tokenizer_of,
                                 check_interval_arguments, read_tables, use_recorded_cluster)
from kpass.cli.deprecated import add_deprecated_alias
from kpass.cli.output import add_output_argument, emit, save_figure
from kpass.errors import DataError, UsageError
from kpass.metrics import (
    DEFAULT_INTERVAL_METHOD,
    INTERVAL_METHODS,
    BudgetCounts,
    UndefinedBudgetMetricWarning,
    UndefinedDecompositionWarning,
    budget_curve,
    decompose_budget_counts,
)
from kpass.notes import Note, as_notes, warning_note
from kpass.render.budget_text import budget_table, budget_tail, decompose_block, records_text
from kpass.render.plot import plot_budget_curves, plot_decomposition
from kpass.data.reduction import Needs, ProblemStatistics
from kpass.reports.budget import BudgetSamples, StatisticsBudgetSamples
from kpass.reports.columns import judge_of
from kpass.reports.report import (
    Exclusion,
    check_one_model_per_group,
    interval_options,
)

__all__ = [
    "BUDGET_HELP", "DECOMPOSE_HELP", "add_budget_arguments", "add_decompose_arguments", "run_budget", "run_decompose",
]


# ----------------------------------------------------------------------------------------------
# argument parsing


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="sample files (JSONL, CSV, Parquet, Inspect or lm-eval logs)")
    parser.add_argument("--reader", help="force a reader by name")
    add_run_arguments(parser)
    add_engine_arguments(parser)
    parser.add_argument("--cluster-by", metavar="FIELD",
                        help="column holding each problem's cluster (the bootstrap then resamples clusters)")
    add_bootstrap_arguments(parser)
    add_tokenizer_arguments(parser)
    parser.add_argument("--text-field", default="output", metavar="NAME",
                        help="column or metadata key holding the output text (default 'output')")
    parser.add_argument("--answer-pattern", metavar="REGEX", type=regular_expression,  # checked before reading
                        help="regex whose last match ends the final answer (default: the last occurrence "
                             "of the sample's `answer`)")
    add_output_argument(parser, ("table", "markdown", "csv", "json"), default="table")
    parser.add_argument("--plot", metavar="PATH", help="also draw a plot (PNG or SVG; needs matplotlib)")


#: ``(help, description)`` of ``kpass budget`` and ``kpass decompose``.
BUDGET_HELP = ("fin@k, pass@k and pass@k | fin at token budgets",
               "fin@k(B), pass@k(B) and pass@k(B | fin) per model, task and budget, with intervals "
               "(docs/spec.md section 6). One long run gives every smaller budget by truncation.")
DECOMPOSE_HELP = ("split a pass@1 change into finishing, reliability and reach",
                  "delta pass@1(B) = F + P + reach for a model against its base on the same problems, "
                  "per budget, with robust reach, lone wins, matched reliability and paired "
                  "cluster-bootstrap intervals (docs/spec.md section 6).")


def add_budget_arguments(budget: argparse.ArgumentParser) -> None:
    """The arguments of ``kpass budget``."""
    _add_common(budget)
    budget.add_argument("--budgets", type=budget_list, default=[None],
                        help="comma-separated output-token budgets, e.g. 2048,4096,8k; 'as-run' reads the "
                             "recorded `finished` flags (default)")
    budget.add_argument("-k", "--k", type=k_list, default=[1],
                        help="k values (default 1); problems with fewer samples than k are left out of that k "
                             "and listed")
    budget.add_argument("--by", default="model,task",
                        help="group by these of model,task (default both; with several models, model must be one)")
    budget.add_argument("--method", help=f"interval method of fin@k and pass@k ({', '.join(INTERVAL_METHODS)}; "
                                         f"default: {DEFAULT_INTERVAL_METHOD}, as kpass report)")
    budget.add_argument("--ratio-method", choices=("bootstrap", "bca"), default="bootstrap",
                        help="interval of pass@k | fin (default: percentile bootstrap)")


def add_decompose_arguments(decompose: argparse.ArgumentParser) -> None:
    """The arguments of ``kpass decompose``."""
    _add_common(decompose)
    baseline = decompose.add_mutually_exclusive_group(required=True)  # --baseline, or its old spelling
    baseline.add_argument("--baseline", "-b", metavar="MODEL", help="the base model")
    add_deprecated_alias(baseline, "--base", dest="baseline", replacement="--baseline", metavar="MODEL")
    decompose.add_argument("--model", required=True, metavar="MODEL", help="the model compared with it")
    decompose.add_argument("--budgets", type=budget_list, default=[None],
                           help="comma-separated output-token budgets or 'as-run' (default as-run)")
    decompose.add_argument("--task", action="append", help="only these tasks (default: every common task)")
    decompose.add_argument("--attribution", choices=("base", "reverse", "shapley"), default="base",
                           help="attribution of the cross term for the headline F and P (default base)")
    decompose.add_argument("--method", choices=("bootstrap", "bca"), default="bootstrap",
                           help="percentile (default) or BCa paired cluster bootstrap")
    decompose.add_argument("--reach-interval", choices=("score", "bootstrap"), default="score",
                           help="interval of reach, robust reach and lone wins: score (default; holds on "
                                "few problems) or the percentile bootstrap")
    add_intersect_argument(decompose, "compare on the problems both models have (default: unmatched problems are "
                                      "an error)")
    decompose.add_argument("--matched-fraction", type=fraction, default=Fraction(7, 8),
                           help="finished fraction both models need for matched reliability (default 7/8)")
    decompose.add_argument("--robust-fraction", type=fraction, default=Fraction(1, 2),
                           help="correct fraction for robust reach (default 1/2)")


# ----------------------------------------------------------------------------------------------
# reading and writing


def _samples(args: argparse.Namespace) -> BudgetSamples:
    """The files of ``args`` read, with token positions from ``--tokenizer`` where asked."""
    tokenizer, _ = tokenizer_of(args)
    engine = getattr(args, "engine", None)
    if tokenizer is not None or engine in (None, "numpy"):
        # a tokenizer re-counts tokens from each sample's text: it needs the samples (numpy)
        if engine not in (None, "numpy"):
            raise UsageError(f"--tokenizer re-counts tokens from each sample's text; use --engine numpy, not {engine}")
        table = read_tables(args)
        use_recorded_cluster(args, table)
        return BudgetSamples(table, tokenizer=tokenizer, text_field=args.text_field,
                             answer_pattern=args.answer_pattern, cluster_by=args.cluster_by)
    # fin@k(B), pass@k(B) and the decomposition are functions of (n, c_B, f_B) per problem: one
    # GROUP BY with a FILTER per budget on the engine
    finite = tuple(sorted({int(b) for b in args.budgets if b is not None}))
    needs = Needs(fields=() if args.cluster_by is None else (args.cluster_by,), budgets=finite,
                  as_run=None in args.budgets)
    statistics = read_tables(args, needs=needs)
    use_recorded_cluster(args, statistics)
    if isinstance(statistics, ProblemStatistics):
        return StatisticsBudgetSamples(statistics, cluster_by=args.cluster_by)
    return BudgetSamples(statistics, cluster_by=args.cluster_by)  # a format only the numpy readers read


def _write(text: str, output: str | None) -> None:
    emit(text if text.endswith("\n") else text + "\n", output)


# ----------------------------------------------------------------------------------------------
# kpass budget


def run_budget(args: argparse.Namespace) -> int:
    """``kpass budget``; data errors raise :class:`~kpass.DataError`, usage errors ``UsageError``
    (the ``kpass`` command turns them into exit codes 1 and 2)."""
    _budget(args)
    return 0


def _task_group_rows(samples: BudgetSamples, by: Sequence[str], args: argparse.Namespace,
                     notes: list[Note]) -> list[tuple[str, str, np.ndarray, np.ndarray, dict[str, Any]]]:
    """The rows of the data's task groups (lm-eval's ``--tasks <group>``, :mod:`kpass.reports.task_groups`):
    ``(model, group, problems, subtask of each problem in counts order, interval options)``; notes added."""
    from kpass.reports.task_groups import task_group_problems

    items, group_notes = task_group_problems(samples.table, by)
    notes.extend(group_notes)
    if not items:
        return []
    try:
        options = interval_options(method=args.method, confidence_level=args.confidence, rng=args.seed,
                                   n_resamples=args.n_resamples, clustered=True)
    except UsageError as exc:
        notes.append(Note("task-groups", (), f"no group rows: {exc}"))
        return []
    tasks = samples.table.category_values("task")
    out = []
    for item in items:
        order = np.argsort(samples.labels(item.problems, True), kind="stable")
        out.append((dict(item.group).get("model", "*"), item.name, item.problems,
                    tasks[item.clusters[order]].astype(str), options))
    return out


@dataclasses.dataclass(frozen=True)
class _Collected:
    """What the rows of ``kpass budget`` gather group by group: points, judges, exclusions, notes, skipped rows."""

    points: list[tuple[str, str, Any]]
    judges: dict[tuple[str, str], str | None]  # the task metric that judged each row's samples (lm-eval)
    exclusions: list[Exclusion]
    notes: list[Note]
    skipped: list[str]


def _by_fields(by: str) -> list[str]:
    """The fields of ``--by``, each model or task (a usage error otherwise)."""
    fields = [part.strip() for part in by.split(",") if part.strip()]
    unknown = [part for part in fields if part not in ("model", "task")]
    if unknown or not fields:
        raise UsageError(f"--by takes model and/or task; got {by!r}")
    return fields


def _check_k_fits(samples: BudgetSamples, ks: Sequence[int]) -> None:
    """A data error when some k exceeds every problem's number of samples."""
    largest = int(samples.index.n_samples.max())
    too_large = [k for k in ks if k > largest]
    if too_large:
        raise DataError(f"-k {','.join(map(str, too_large))}: k needs that many samples per problem, but no problem "
                        f"has more than {largest} (the largest n), so every problem would be excluded. Lower -k to "
                        f"at most {largest}", source=samples.source, field="sample_index")


def _group_rows(samples: BudgetSamples, by: Sequence[str],
                options: dict[str, Any]) -> list[tuple[str, str, np.ndarray, np.ndarray | None, dict[str, Any]]]:
    """The rows of the ``--by`` groups: ``(model, task, problems, None, interval options)``, one model per group checked."""
    index = samples.index
    group_models = index.model_codes if "model" in by else np.zeros_like(index.model_codes)
    group_tasks = index.task_codes if "task" in by else np.zeros_like(index.task_codes)
    keys, group_of_problem = np.unique(group_models * len(samples.tasks) + group_tasks, return_inverse=True)
    group_of_problem = group_of_problem.ravel()
    groups = [tuple((field, samples.models[key // len(samples.tasks)] if field == "model"
                     else samples.tasks[key % len(samples.tasks)]) for field in by) for key in keys.tolist()]
    check_one_model_per_group(samples.table, group_of_problem, groups, by)
    return [(samples.models[key // len(samples.tasks)] if "model" in by else "*",
             samples.tasks[key % len(samples.tasks)] if "task" in by else "*",
             np.flatnonzero(group_of_problem == g), None, options) for g, key in enumerate(keys.tolist())]


def _budget(args: argparse.Namespace) -> None:
    by = _by_fields(args.by)
    # the same interval options as kpass report, so that pass@k(as-run) here is report's pass@k
    options = check_interval_arguments(args)
    samples = _samples(args)
    _check_k_fits(samples, args.k)
    plans = _group_rows(samples, by, options)
    collected = _Collected(points=[], judges={}, exclusions=[], notes=as_notes(samples.table.notes), skipped=[])
    plans += _task_group_rows(samples, by, args, collected.notes)
    for plan in plans:
        _add_group_points(samples, plan, "task" not in by, args, collected)
    if not collected.points:
        raise DataError("no row has 2 problems with enough samples for an interval: "
                        f"{'; '.join(collected.skipped[:3])}", source=samples.source, field="sample_index")
    notes = list(dict.fromkeys(collected.notes))
    points, judges = collected.points, collected.judges
    judged = any(judge is not None for judge in judges.values())  # a judge column only where the input names one
    if args.format in ("csv", "json"):
        text = records_text(_budget_records(points, judges if judged else None, args.confidence), args.format,
                            exclusions=collected.exclusions, notes=notes)
    else:
        text = budget_table(points, judges if judged else None, args.format, confidence_level=args.confidence,
                            method=options["method"], ratio_method=args.ratio_method,
                            clustered=bool(args.cluster_by), n_resamples=args.n_resamples, seed=args.seed)
        text += budget_tail(collected.exclusions, notes, args.format)
    _write(text, args.output)
    if args.plot:
        save_figure(plot_budget_curves(points), args.plot)


def _add_group_points(samples: BudgetSamples,
                      plan: tuple[str, str, np.ndarray, np.ndarray | None, dict[str, Any]],
                      with_task: bool, args: argparse.Namespace, collected: _Collected) -> None:
    """One row's curve points, in budget and k order, added to ``collected`` with its exclusions and notes."""
    model, task, problems, subtasks, row_options = plan
    where = f"model {model!r}, task {task!r}"
    pooled = with_task or subtasks is not None  # a group row's problems come from several tasks
    counts = samples.counts(problems, args.budgets, with_task=pooled)
    collected.judges[model, task] = judge_of(samples.table, problems)
    clusters = samples.clusters(problems, with_task=pooled) if subtasks is None else subtasks
    if counts.n_problems < 2:
        raise DataError(f"{where}: an interval needs at least 2 problems; got {counts.n_problems}",
                        source=samples.source)
    ids = np.asarray(counts.problem_ids, dtype=object)
    group_points = []
    for keep, ks in _ks_by_eligible_problems(counts.n_samples, args.k):
        collected.exclusions.extend(_short_exclusions(model, task, ids, counts.n_samples, keep, ks))
        if keep.sum() < 2:
            collected.skipped.append(f"{where}, k = {','.join(map(str, ks))}: {int(keep.sum())} problem(s) with "
                                     "enough samples; an interval needs 2, so no row")
            collected.notes.append(Note("budget", (f"{model} / {task} / k = {','.join(map(str, ks))}",),
                                        f"{int(keep.sum())} problem(s) with enough samples; an interval needs 2, "
                                        "so no row"))
            continue
        chosen = counts if keep.all() else dataclasses.replace(
            counts, problem_ids=tuple(ids[keep].tolist()), n_samples=counts.n_samples[keep],
            n_finished=counts.n_finished[keep], n_correct=counts.n_correct[keep])
        group_points.extend(_curve_points(samples, chosen, ks, None if clusters is None else clusters[keep],
                                          args.ratio_method, row_options, (model, task), collected.notes))
    budget_order = {budget: i for i, budget in reversed(list(enumerate(args.budgets)))}
    group_points.sort(key=lambda point: (budget_order[point.budget], args.k.index(point.k)))
    collected.points.extend((model, task, point) for point in group_points)


def _short_exclusions(model: str, task: str, ids: np.ndarray, n_samples: np.ndarray, keep: np.ndarray,
                      ks: Sequence[int]) -> list[Exclusion]:
    """The problems with fewer samples than each k, left out of k and listed (as in kpass report), one per n."""
    short_n = np.unique(n_samples[~keep]).tolist()
    return [Exclusion((("model", model), ("task", task)), f"k={k}", tuple(ids[n_samples == n].tolist()),
                      f"{n} sample{'s' if n != 1 else ''}, k = {k} needs {k}")
            for k in ks for n in short_n]


def _curve_points(samples: BudgetSamples, counts: BudgetCounts, ks: list[int], clusters: np.ndarray | None,
                  ratio_method: str, options: dict[str, Any], row: tuple[str, str], notes: list[Note]) -> list[Any]:
    """:func:`~kpass.metrics.budget_curve` of one row's counts; its warnings become notes (and stderr lines)."""
    model, task = row
    where = f"model {model!r}, task {task!r}"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            curve = budget_curve(counts, k=ks, clusters=clusters, ratio_method=ratio_method, **options)
        except ValueError as exc:  # options were checked: the data cannot give these intervals
            raise DataError(f"{where}: {exc}", source=samples.source) from exc
    for warning in caught:
        notes.append(warning_note(warning, (f"{model} / {task}",)))
        if issubclass(warning.category, UndefinedBudgetMetricWarning):
            print(f"warning: {where}: {warning.message}", file=sys.stderr)
    return list(curve)


def _budget_records(points: Sequence[tuple[str, str, Any]], judges: dict[tuple[str, str], str | None] | None,
                    confidence_level: float) -> list[dict[str, Any]]:
    """The ``--format csv/json`` records of the points (a judge column only when ``judges`` is given)."""
    return [
        {
            "model": model, "task": task, **({"judge": judges[model, task]} if judges is not None else {}),
            "budget": point.budget, "k": point.k,
            "fin": point.fin_at_k.estimate, "fin_low": point.fin_at_k.low, "fin_high": point.fin_at_k.high,
            "pass": point.pass_at_k.estimate, "pass_low": point.pass_at_k.low, "pass_high": point.pass_at_k.high,
            "pass_given_fin": point.pass_given_fin.estimate, "pass_given_fin_low": point.pass_given_fin.low,
            "pass_given_fin_high": point.pass_given_fin.high, "n_problems": point.n_problems,
            "n_samples": point.n_samples, "method": point.pass_at_k.method,
            "ratio_method": point.pass_given_fin.method, "confidence_level": confidence_level,
        }
        for model, task, point in points
    ]


def _ks_by_eligible_problems(n_samples: np.ndarray, ks: Sequence[int]) -> list[tuple[np.ndarray, list[int]]]:
    """``(problems with n >= k, [k, ...])``: the ks that share one set of eligible problems (one
    :func:`~kpass.metrics.budget_curve` call each; usually every k, on every problem)."""
    sets: dict[bytes, tuple[np.ndarray, list[int]]] = {}
    for k in dict.fromkeys(ks):
        keep = n_samples >= k
        sets.setdefault(keep.tobytes(), (keep, []))[1].append(k)
    return list(sets.values())


# ----------------------------------------------------------------------------------------------
# kpass decompose

def run_decompose(args: argparse.Namespace) -> int:
    """``kpass decompose``; errors as :func:`run_budget`."""
    _decompose(args)
    return 0


def _decompose(args: argparse.Namespace) -> None:
    if args.baseline == args.model:
        raise UsageError("--baseline and --model name the same model")
    check_interval_arguments(args, paired=True)  # before reading
    samples = _samples(args)
    for name, option in ((args.baseline, "--baseline"), (args.model, "--model")):
        if name not in samples.models:
            raise UsageError(f"{option} {name!r}: no such model in the files; models: {', '.join(samples.models)}")
    index = samples.index
    base_code, model_code = samples.models.index(args.baseline), samples.models.index(args.model)
    base_tasks = {samples.tasks[t] for t in index.task_codes[index.model_codes == base_code].tolist()}
    model_tasks = {samples.tasks[t] for t in index.task_codes[index.model_codes == model_code].tolist()}
    if args.task:
        for task in args.task:
            if task not in base_tasks or task not in model_tasks:
                raise UsageError(f"--task {task!r}: not run by both models (base: {sorted(base_tasks)}, "
                                  f"model: {sorted(model_tasks)})")
        tasks = list(dict.fromkeys(args.task))
    else:
        tasks = sorted(base_tasks & model_tasks)
        if not tasks:
            raise DataError(f"models {args.baseline!r} and {args.model!r} have no task in common "
                            f"(base: {sorted(base_tasks)}, model: {sorted(model_tasks)})", source=samples.source)
    results: list[tuple[str, Any]] = []
    notes = as_notes(samples.table.notes)
    for task in tasks:
        base_counts = samples.counts(samples.problems(args.baseline, task), args.budgets)
        model_counts = samples.counts(samples.problems(args.model, task), args.budgets)
        clusters = samples.cluster_map(samples.problems(args.baseline, task))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                # the seed and resamples of kpass report and compare (their linear terms agree)
                decomposition = decompose_budget_counts(
                    base_counts, model_counts, clusters=clusters, intersect=args.intersect,
                    attribution=args.attribution, method=args.method, reach_interval=args.reach_interval,
                    confidence_level=args.confidence, n_resamples=args.n_resamples, rng=args.seed,
                    matched_fraction=args.matched_fraction, robust_fraction=args.robust_fraction)
            except ValueError as exc:  # unmatched problems, too few problems: the data's problem
                raise DataError(f"task {task!r}: {exc}", source=samples.source) from exc
        for warning in caught:
            notes.append(warning_note(warning, (task,)))
            if issubclass(warning.category, UndefinedDecompositionWarning):
                print(f"warning: task {task!r}: {warning.message}", file=sys.stderr)
        results.extend((task, d) for d in decomposition)
    notes = list(dict.fromkeys(notes))

    if args.format in ("csv", "json"):
        records = [{"task": task, "base": args.baseline, "model": args.model, **d.as_dict()} for task, d in results]
        text = records_text(records, args.format, notes=notes)
    else:
        blocks = [decompose_block(task, d, model=args.model, base=args.baseline, seed=args.seed, fmt=args.format)
                  for task, d in results]
        text = "\n\n".join(blocks) + budget_tail((), notes, args.format)
    _write(text, args.output)
    if args.plot:
        save_figure(plot_decomposition(results, model=args.model, base=args.baseline), args.plot)
