"""``kpass leaderboard``: many models in one table (:func:`kpass.reports.leaderboard.build_leaderboard`)."""

from __future__ import annotations

import argparse
import os
import sys

from kpass.cli.arguments import (
    add_input_arguments,
    add_metric_arguments,
    add_selected_argument,
    check_interval_arguments,
    metric_specs,
    read_tables,
)
from kpass.cli.output import add_output_argument, write_outputs, write_stdout
from kpass.data.leaderboard_tables import read_leaderboard_table
from kpass.data.reduction import ProblemStatistics
from kpass.data.table import SampleTable
from kpass.errors import UsageError
from kpass.reports.leaderboard import PAIRS, build_leaderboard
from kpass.render.leaderboard_html import render_html
from kpass.render.leaderboard_text import extend_leaderboard, render_csv, render_json, render_markdown

__all__ = ["LEADERBOARD_HELP", "OUTPUT_FORMATS", "add_leaderboard_arguments", "run_leaderboard"]

OUTPUT_FORMATS = ("markdown", "csv", "json", "html")


def _budget_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected budgets such as 1024,2048,4096; got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"budgets must be positive integers; got {text!r}")
    return sorted(set(values))


#: ``(help, description)`` of ``kpass leaderboard``.
LEADERBOARD_HELP = (
    "many models in one table with intervals, rank intervals and comparisons",
    "One row per model with every metric's estimate and interval, rank intervals from the "
    "paired (cluster) bootstrap, and paired comparisons with Holm-adjusted p-values. Outputs "
    "Markdown, CSV, JSON or a self-contained HTML page; --extend joins the new columns onto an "
    "existing leaderboard table.")


def add_leaderboard_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``kpass leaderboard``."""
    add_input_arguments(parser)
    add_metric_arguments(parser)
    parser.add_argument("--sort", metavar="METRIC",
                        help="column to sort, rank and compare by (default: the first metric)")
    parser.add_argument("--baseline", metavar="MODEL",
                        help="compare every model with MODEL (default: compare all pairs)")
    parser.add_argument("--pairs", choices=PAIRS, default="all",
                        help="without --baseline: all pairs, or neighbours in the sorted order "
                             "(default: all)")
    add_output_argument(parser, OUTPUT_FORMATS, default="markdown", several=True)
    parser.add_argument("--extend", metavar="TABLE",
                        help="existing leaderboard (.csv or .md) to join the new columns onto; its rows "
                             "and columns are kept as they are")
    parser.add_argument("--key", metavar="COLUMN", default="model",
                        help="column of --extend's table naming the model (default: model)")
    parser.add_argument("--title", default="kpass leaderboard", help="title of the HTML page")
    parser.add_argument("--budgets", type=_budget_list, metavar="B1,B2,...",
                        help="token budgets of the budget curves (default: powers of two up to what "
                             "each run decides)")
    parser.add_argument("--no-curves", action="store_true",
                        help="skip the pass@k and budget curves (JSON and HTML)")
    parser.add_argument("--no-budget-curves", action="store_true",
                        help="skip the budget curves only (they need the samples: --engine duckdb or spark "
                             "needs this or --no-curves when the input has token columns)")
    parser.add_argument("--no-progress", action="store_true", help="never draw a progress bar")
    add_selected_argument(parser)


def run_leaderboard(args: argparse.Namespace) -> int:
    """Run ``kpass leaderboard`` from parsed arguments; returns the exit code (0)."""
    check_interval_arguments(args)  # before reading any file
    existing = None
    if args.extend:
        if not os.path.exists(args.extend):
            raise UsageError(f"--extend {args.extend}: no such file")
        existing = read_leaderboard_table(args.extend, key=args.key)
        existing.column(args.key)
    targets = args.output_targets  # (path or None for stdout, format): kpass.cli.output.check_outputs
    specs = metric_specs(args)
    # every column, rank interval, comparison and pass@k curve is a function of per-problem
    # values: any engine reduces to them; the budget curves need the samples (numpy), so
    # without an --engine they keep the numpy path
    budget_curves = not (args.no_curves or args.no_budget_curves)
    table: SampleTable | ProblemStatistics
    if budget_curves and getattr(args, "engine", None) is None:
        table = read_tables(args)
    else:
        table = read_tables(args, specs, by=("model",), cluster_by=args.cluster_by)
    # a bad --sort or --baseline raises ValueError: `kpass` reports it as a usage error (exit 2)
    leaderboard = build_leaderboard(
        table, specs, sort=args.sort, baseline=args.baseline, pairs=args.pairs,
        cluster_by=args.cluster_by, method=args.method, confidence_level=args.confidence,
        rng=args.seed, n_resamples=args.n_resamples, curves=not args.no_curves,
        budgets=args.budgets, selected_on_this_set=args.selected_on_this_set, budget_curves=budget_curves)
    extended = None
    if existing is not None:
        extended = extend_leaderboard(leaderboard.data, existing, args.key)
        print(f"kpass leaderboard --extend {args.extend}: {extended.report()}", file=sys.stderr)
    data = leaderboard.data
    renderers = {"markdown": lambda: render_markdown(data), "csv": lambda: render_csv(data),
                 "json": lambda: render_json(data), "html": lambda: render_html(data, title=args.title)}
    texts = [(path, extended.text if extended is not None and existing is not None
              and (path is None or fmt == existing.format) else renderers[fmt]()) for path, fmt in targets]
    files = [(path, text) for path, text in texts if path is not None]
    write_outputs(files)  # every file prepared before any is replaced
    for path, _ in files:
        print(f"kpass: wrote {path}", file=sys.stderr)
    for path, text in texts:
        if path is None:
            write_stdout(text)
    return 0
