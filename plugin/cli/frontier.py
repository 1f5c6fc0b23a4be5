"""``kpass frontier``: the arguments and the run (the analysis: :mod:`kpass.reports.frontier`;
the plot: :mod:`kpass.render.analysis_plots`)."""

from __future__ import annotations

import argparse
import math
import re

from kpass.cli.arguments import (add_input_arguments, add_metric_arguments, add_output_arguments,
                                 check_interval_arguments, metric_specs, read_tables)
from kpass.errors import UsageError
from kpass.cli.output import emit, save_figure
from kpass.host.lookups import parse_metric_specs
from kpass.render.analysis_plots import plot_frontier
from kpass.render.frontier_text import format_frontier
from kpass.reports.frontier import UNITS, compute_frontier

__all__ = ["HELP", "add_arguments", "model_values", "run"]

HELP = "equal-compute comparison: pass@k, cons@k, pass@1(B) against tokens, FLOPs or dollars; Pareto frontier"

_SUFFIX = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
_NUMBER = re.compile(r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)([kKmMbBgGtT]?)")


def model_values(text: str) -> dict[str, float]:
    """``MODEL=VALUE[,MODEL=VALUE...]`` with VALUE > 0, optionally with a K/M/B/T suffix (``7B``)."""
    out: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        if "=" not in item:
            raise argparse.ArgumentTypeError(f"expected MODEL=VALUE (e.g. base=7B); got {item!r}")
        model, value = (part.strip() for part in item.rsplit("=", 1))
        match = _NUMBER.fullmatch(value)
        number = float(match.group(1)) * _SUFFIX[match.group(2).lower()] if match else math.nan
        if not model or not (math.isfinite(number) and number > 0):
            raise argparse.ArgumentTypeError(f"expected MODEL=VALUE with a positive number (e.g. base=7B); got {item!r}")
        out[model] = number
    if not out:
        raise argparse.ArgumentTypeError("expected MODEL=VALUE (e.g. base=7B)")
    return out


class _Merge(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        merged = dict(getattr(namespace, self.dest) or {})
        merged.update(values)
        setattr(namespace, self.dest, merged)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_arguments(parser)
    add_metric_arguments(parser, default="pass@1,2,4,.. and cons@1,2,4,.. up to the smallest n")
    parser.add_argument("--unit", choices=UNITS, default="tokens",
                        help="compute per problem: output tokens (k x mean tokens per sample), FLOPs "
                             "(tokens x 2 x active parameters) or dollars (tokens x price); default: tokens")
    parser.add_argument("--active-params", type=model_values, action=_Merge, metavar="MODEL=N",
                        help="active parameters per token of each model, e.g. base=7B,moe=3.6B (--unit flops)")
    parser.add_argument("--price", type=model_values, action=_Merge, metavar="MODEL=USD",
                        help="dollars per million output tokens of each model, e.g. a=0.6,b=4.4 (--unit dollars)")
    add_output_arguments(parser)


def run(args: argparse.Namespace) -> int:
    # scores need per-problem counts, compute the per-problem token sums: any engine reduces to
    # them (without --metrics the defaults follow the smallest n, so reduce for pass@k and cons@k)
    if args.cut_answers and args.metrics:  # every cons@k spec that does not set cut= (kpass.cli.arguments)
        args.metrics = [spec.name for spec in metric_specs(args)]
    elif args.cut_answers:
        raise UsageError("--cut-answers applies to the cons@k specs given with --metrics; give them")
    specs = parse_metric_specs(args.metrics or ["pass@1", "cons@1"])
    check_interval_arguments(args)  # before reading
    table = read_tables(args, specs, by=("model",), cluster_by=args.cluster_by, tokens=True)
    prices = None if args.price is None else {m: v / 1e6 for m, v in args.price.items()}
    report = compute_frontier(table, args.metrics, unit=args.unit, active_parameters=args.active_params,
                              prices=prices, cluster_by=args.cluster_by, method=args.method,
                              confidence_level=args.confidence, rng=args.seed, n_resamples=args.n_resamples)
    text = format_frontier(report, args.format)
    if args.plot:
        save_figure(plot_frontier(report), args.plot)
    emit(text, args.output)
    return 0
