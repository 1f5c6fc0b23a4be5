"""``kpass report`` and ``kpass compare``: estimates with intervals, and paired differences."""

from __future__ import annotations

import argparse

from kpass.cli.argtypes import fields
from kpass.cli.arguments import (
    add_input_arguments,
    add_intersect_argument,
    add_metric_arguments,
    add_output_arguments,
    add_selected_argument,
    check_interval_arguments,
    metric_specs,
    read_tables,
    use_recorded_cluster,
)
from kpass.cli.output import emit, save_figure
from kpass.cli.progress import ProgressBar
from kpass.data.table import SampleTable
from kpass.errors import UsageError
from kpass.render.formatting import format_comparison, format_report
from kpass.render.plot import plot_comparison, plot_report
from kpass.reports.compare import Comparison, compute_comparison
from kpass.reports.report import Report, compute_report

__all__ = ["add_compare_arguments", "add_report_arguments", "run_compare", "run_report"]


def _plot(args: argparse.Namespace, result: Report | Comparison) -> None:
    if getattr(args, "plot", None):
        figure = plot_comparison(result) if isinstance(result, Comparison) else plot_report(result)
        save_figure(figure, args.plot)


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_arguments(parser)
    add_metric_arguments(parser)
    parser.add_argument("--by", type=fields, default=("model", "task"), metavar="FIELDS",
                        help="comma-separated grouping fields (default: model,task; with several models, "
                             "model must be one of them)")
    add_selected_argument(parser)
    add_output_arguments(parser)


def run_report(args: argparse.Namespace) -> int:
    specs = metric_specs(args)
    check_interval_arguments(args)  # before reading
    table = read_tables(args, specs, by=args.by, cluster_by=args.cluster_by)
    use_recorded_cluster(args, table)
    with ProgressBar("computing", enabled=False if args.no_progress else None) as bar:
        report = compute_report(table, specs, by=args.by, cluster_by=args.cluster_by, method=args.method,
                                confidence_level=args.confidence, rng=args.seed, n_resamples=args.n_resamples,
                                selected_on_this_set=args.selected_on_this_set, progress=bar.update)
    text = format_report(report, args.format)
    _plot(args, report)
    emit(text, args.output)
    return 0


def add_compare_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_arguments(parser)
    parser.add_argument("--baseline", "-b", metavar="MODEL",
                        help="reference model (default with two files of one model each: the first file's model)")
    parser.add_argument("--models", type=fields, metavar="MODELS",
                        help="comma-separated models to compare with the baseline (default: all others)")
    add_metric_arguments(parser, paired=True)
    parser.add_argument("--by", type=fields, default=("task",), metavar="FIELDS",
                        help="comma-separated grouping fields besides the model (default: task)")
    add_intersect_argument(parser, "compare on the problems both models have and list the others (default: error)")
    add_output_arguments(parser)


def run_compare(args: argparse.Namespace) -> int:
    specs = metric_specs(args)
    check_interval_arguments(args, paired=True)  # before reading
    baseline = args.baseline
    if baseline is None:
        if len(args.files) != 2:
            raise UsageError("give --baseline MODEL (or exactly two files, one model each)")
        read = dict(by=(*args.by, "model"), cluster_by=args.cluster_by)
        tables = [read_tables(args, specs, files=[path], **read) for path in args.files]
        first_models = tables[0].categories("model")
        second_models = tables[1].categories("model")
        if len(first_models) == 1 and first_models == second_models:
            # two runs of one model: read together, a reader that tells runs apart (Inspect logs)
            # labels each run's model, and the first file's run is the baseline
            both = read_tables(args)  # with --label, --include-path and --judge, as every read
            if len(both.categories("model")) == 2:
                tables, first_models, second_models = [both], both.categories("model")[:1], both.categories("model")[1:]
        if len(first_models) != 1 or len(second_models) != 1 or first_models == second_models:
            raise UsageError(f"with two files and no --baseline each file must hold one model, and they must differ; "
                             f"got {first_models} and {second_models}. Give --baseline MODEL")
        baseline = first_models[0]
        sample_tables = [table for table in tables if isinstance(table, SampleTable)]
        table = (SampleTable.concat(sample_tables) if len(sample_tables) == len(tables)
                 else read_tables(args, specs, **read))
    else:
        table = read_tables(args, specs, by=(*args.by, "model"), cluster_by=args.cluster_by)
    use_recorded_cluster(args, table)
    if baseline not in table.categories("model"):
        raise UsageError(f"--baseline {baseline!r} is not a model in the input; models: "
                         f"{', '.join(table.categories('model'))}")
    with ProgressBar("comparing", enabled=False if args.no_progress else None) as bar:
        comparison = compute_comparison(table, specs, baseline=baseline, models=args.models, by=args.by,
                                        cluster_by=args.cluster_by, method=args.method,
                                        confidence_level=args.confidence, rng=args.seed,
                                        n_resamples=args.n_resamples, intersect=args.intersect,
                                        progress=bar.update)
    text = format_comparison(comparison, args.format)
    _plot(args, comparison)
    emit(text, args.output)
    return 0
