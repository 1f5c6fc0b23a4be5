"""``kpass crossover``: the arguments and the run (the analysis: :mod:`kpass.reports.crossover`;
the plot: :mod:`kpass.render.analysis_plots`)."""

from __future__ import annotations

import argparse

from kpass.cli.arguments import (add_bootstrap_arguments, add_input_arguments, add_output_arguments,
                                 check_interval_arguments, read_tables)
from kpass.cli.argtypes import fraction
from kpass.cli.deprecated import add_deprecated_alias
from kpass.cli.output import emit, save_figure
from kpass.host.lookups import parse_metric_specs
from kpass.render.analysis_plots import plot_crossover
from kpass.render.crossover_text import format_crossover
from kpass.reports.crossover import compute_crossover

__all__ = ["HELP", "add_arguments", "run"]

HELP = "where a model's pass@k curve crosses its base model's, with problems lost and gained"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_arguments(parser)
    baseline = parser.add_mutually_exclusive_group(required=True)  # --baseline, or its old spelling
    baseline.add_argument("--baseline", "-b", metavar="MODEL", help="the base model")
    add_deprecated_alias(baseline, "--base", dest="baseline", replacement="--baseline", metavar="MODEL")
    parser.add_argument("--model", required=True, metavar="MODEL", help="the model compared with the base")
    parser.add_argument("--cluster-by", metavar="FIELD", help="cluster field of each problem (resampled whole)")
    add_bootstrap_arguments(parser)
    parser.add_argument("--robust-fraction", type=fraction, default=fraction("1/2"), metavar="F",
                        help="a lone win is robust when the winner is correct in >= F of its samples (default: 1/2)")
    add_output_arguments(parser)


def run(args: argparse.Namespace) -> int:
    check_interval_arguments(args, paired=True)  # before reading
    # pass@k curves are functions of per-problem (n, c): any engine reduces to them
    table = read_tables(args, parse_metric_specs("pass@1"), by=("model",), cluster_by=args.cluster_by)
    report = compute_crossover(table, base=args.baseline, model=args.model, cluster_by=args.cluster_by,
                               confidence_level=args.confidence, rng=args.seed, n_resamples=args.n_resamples,
                               robust_fraction=args.robust_fraction)
    text = format_crossover(report, args.format)
    if args.plot:
        save_figure(plot_crossover(report), args.plot)
    emit(text, args.output)
    return 0
