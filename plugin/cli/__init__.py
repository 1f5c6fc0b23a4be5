"""The ``kpass`` command: ``report``, ``compare``, ``power``, ``metrics`` and ``plugins``.

Exit codes: 0 success, 2 usage error (bad arguments, bad metric spec, missing file), 1 data
error (the message names the file, the line and the field). Output goes to stdout or, with
``--output PATH``, to a file written by :mod:`kpass.cli.output` (regular files replaced
atomically, devices and FIFOs written through, symbolic links followed; every failure one line). A progress bar is drawn on stderr only when stderr is a
terminal.

New subcommands register themselves in :data:`SUBCOMMANDS` (name -> (add_arguments, run)).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from kpass.cli.argtypes import difference_of_proportions, fields, nonnegative_int, positive_float, positive_int, probability
from kpass.cli.output import write_output, write_outputs, write_stdout
from kpass.errors import DataError, MetricSpecError, OutputError, PluginLoadError, UsageError

__all__ = ["EXIT_DATA_ERROR", "EXIT_OK", "EXIT_USAGE", "SUBCOMMANDS", "UsageError", "main", "write_atomically",
           "write_output", "write_outputs", "write_stdout"]

EXIT_OK = 0
EXIT_DATA_ERROR = 1
EXIT_USAGE = 2


#: The one writer of output files (kept under its old name for callers outside the CLI).
write_atomically = write_output


# ----------------------------------------------------------------------------------------------
# shared arguments


def _add_input_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="sample files (JSONL, CSV, Parquet, or a plugin's format)")
    parser.add_argument("--reader", metavar="NAME", help="read every file with this reader (see `kpass plugins`)")


def _add_metric_arguments(parser: argparse.ArgumentParser, default: str = "pass@1", paired: bool = False) -> None:
    from kpass.metrics import DEFAULT_INTERVAL_METHOD, DEFAULT_PAIRED_METHOD, INTERVAL_METHODS, PAIRED_INTERVAL_METHODS

    from kpass.reports.report import DEFAULT_N_RESAMPLES, DEFAULT_SEED

    methods, default_method = ((PAIRED_INTERVAL_METHODS, DEFAULT_PAIRED_METHOD) if paired
                               else (INTERVAL_METHODS, DEFAULT_INTERVAL_METHOD))
    parser.add_argument("--metrics", "-m", nargs="+", action="extend", metavar="SPEC",
                        help=f"metric specs, e.g. pass@1,8,64 pass^4 cons@16 g-pass@16_0.5 (default: {default}); "
                             "see `kpass metrics`")
    parser.add_argument("--cluster-by", metavar="FIELD", help="cluster field of each problem (e.g. cluster, subject)")
    parser.add_argument("--method", metavar="M",
                        help=f"interval method ({', '.join(methods)}; default: {default_method})")
    parser.add_argument("--confidence", type=probability, default=0.95, metavar="LEVEL",
                        help="confidence level (default: 0.95)")
    parser.add_argument("--seed", type=nonnegative_int, default=DEFAULT_SEED, metavar="S",
                        help=f"bootstrap seed (default: {DEFAULT_SEED}, reproducible)")
    parser.add_argument("--n-resamples", type=positive_int, default=DEFAULT_N_RESAMPLES, metavar="B",
                        help=f"bootstrap resamples (default: {DEFAULT_N_RESAMPLES})")


def _add_output_arguments(parser: argparse.ArgumentParser, plot: bool = True) -> None:
    from kpass.render.formatting import FORMATS

    parser.add_argument("--format", "-f", choices=FORMATS, default="table", help="output format (default: table)")
    parser.add_argument("--output", "-o", metavar="PATH", help="write the output to PATH (atomically) instead of stdout")
    if plot:
        parser.add_argument("--plot", metavar="PATH", help="also draw a plot to PATH (.png or .svg; needs matplotlib)")
    parser.add_argument("--no-progress", action="store_true", help="never draw a progress bar")


def _read(args: argparse.Namespace):
    from kpass.cli.progress import ProgressBar
    from kpass.data.readers import read_samples

    bar = ProgressBar("reading", enabled=False if args.no_progress else None)
    try:
        return read_samples(args.files, reader=args.reader,
                            progress=lambda path, done: bar.update(done, label=f"reading {os.path.basename(path)} (lines)"))
    finally:
        bar.close()


def _specs(args: argparse.Namespace, default: str = "pass@1"):
    from kpass.host.specs import parse_metric_specs

    return parse_metric_specs(args.metrics or [default])


def _emit(args: argparse.Namespace, text: str) -> None:
    if args.output:
        write_output(args.output, text)
        print(f"kpass: wrote {args.output}", file=sys.stderr)
    else:
        write_stdout(text)


def _plot(args: argparse.Namespace, result: Any) -> None:
    if not getattr(args, "plot", None):
        return
    from kpass.render.plot import plot_result

    plot_result(result, args.plot)
    print(f"kpass: wrote {args.plot}", file=sys.stderr)


# ----------------------------------------------------------------------------------------------
# report


def _report_arguments(parser: argparse.ArgumentParser) -> None:
    _add_input_arguments(parser)
    _add_metric_arguments(parser)
    parser.add_argument("--by", type=fields, default=("model", "task"), metavar="FIELDS",
                        help="comma-separated grouping fields (default: model,task; with several models, "
                             "model must be one of them)")
    _add_output_arguments(parser)


def _run_report(args: argparse.Namespace) -> int:
    from kpass.render.formatting import format_report
    from kpass.cli.progress import ProgressBar
    from kpass.reports.report import check_interval_method, compute_report

    if args.plot:
        _check_plot_path(args.plot)
    specs = _specs(args)
    check_interval_method(args.method, paired=False, clustered=args.cluster_by is not None)  # before reading
    table = _read(args)
    with ProgressBar("computing", enabled=False if args.no_progress else None) as bar:
        report = compute_report(table, specs, by=args.by, cluster_by=args.cluster_by, method=args.method,
                                confidence_level=args.confidence, seed=args.seed, n_resamples=args.n_resamples,
                                progress=bar.update)
    text = format_report(report, args.format)
    _plot(args, report)
    _emit(args, text)
    return EXIT_OK


# ----------------------------------------------------------------------------------------------
# compare


def _compare_arguments(parser: argparse.ArgumentParser) -> None:
    _add_input_arguments(parser)
    parser.add_argument("--baseline", "-b", metavar="MODEL",
                        help="reference model (default with two files of one model each: the first file's model)")
    parser.add_argument("--models", type=fields, metavar="MODELS",
                        help="comma-separated models to compare with the baseline (default: all others)")
    _add_metric_arguments(parser, paired=True)
    parser.add_argument("--by", type=fields, default=("task",), metavar="FIELDS",
                        help="comma-separated grouping fields besides the model (default: task)")
    add_intersect_argument(parser, "compare on the problems both models have and list the others (default: error)")
    _add_output_arguments(parser)


def _run_compare(args: argparse.Namespace) -> int:
    from kpass.render.formatting import format_comparison
    from kpass.cli.progress import ProgressBar
    from kpass.data.readers import read_samples
    from kpass.reports.report import check_interval_method, compute_comparison
    from kpass.data.table import SampleTable

    if args.plot:
        _check_plot_path(args.plot)
    specs = _specs(args)
    check_interval_method(args.method, paired=True, clustered=args.cluster_by is not None)  # before reading
    baseline = args.baseline
    if baseline is None:
        if len(args.files) != 2:
            raise UsageError("give --baseline MODEL (or exactly two files, one model each)")
        tables = [read_samples([path], reader=args.reader) for path in args.files]
        first_models = tables[0].categories("model")
        second_models = tables[1].categories("model")
        if len(first_models) != 1 or len(second_models) != 1 or first_models == second_models:
            raise UsageError(f"with two files and no --baseline each file must hold one model, and they must differ; "
                             f"got {first_models} and {second_models}. Give --baseline MODEL")
        baseline = first_models[0]
        table = SampleTable.concat(tables)
    else:
        table = _read(args)
    if baseline not in table.categories("model"):
        raise UsageError(f"--baseline {baseline!r} is not a model in the input; models: "
                         f"{', '.join(table.categories('model'))}")
    with ProgressBar("comparing", enabled=False if args.no_progress else None) as bar:
        comparison = compute_comparison(table, specs, baseline=baseline, models=args.models, by=args.by,
                                        cluster_by=args.cluster_by, method=args.method,
                                        confidence_level=args.confidence, seed=args.seed,
                                        n_resamples=args.n_resamples, intersect=args.intersect,
                                        progress=bar.update)
    text = format_comparison(comparison, args.format)
    _plot(args, comparison)
    _emit(args, text)
    return EXIT_OK


# ----------------------------------------------------------------------------------------------
# power


def _power_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", metavar="PILOT",
                        help="pilot sample files with two models on the same problems (or give the variances)")
    parser.add_argument("--reader", metavar="NAME", help="reader for the pilot files")
    parser.add_argument("--baseline", "-b", metavar="MODEL", help="model B of the pilot (default: the first model)")
    parser.add_argument("--model", metavar="MODEL", help="model A of the pilot (default: the other model)")
    parser.add_argument("--task", metavar="TASK",
                        help="restrict the pilot to one task (default: pool every task, said in a note)")
    parser.add_argument("--between-variance", type=float, metavar="W2",
                        help="between-problem variance of the paired difference (omega^2)")
    parser.add_argument("--within-variance-a", type=float, metavar="S2A", help="within-problem variance, model A")
    parser.add_argument("--within-variance-b", type=float, metavar="S2B", help="within-problem variance, model B")
    parser.add_argument("--samples-a", type=positive_float, metavar="KA", help="samples per problem, model A")
    parser.add_argument("--samples-b", type=positive_float, metavar="KB", help="samples per problem, model B")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--effect", type=difference_of_proportions, metavar="DELTA",
                        help="effect to detect (difference of pass@1); prints the problems needed")
    target.add_argument("--problems", type=positive_int, metavar="N",
                        help="number of problems; prints the minimum detectable effect")
    parser.add_argument("--alpha", type=probability, default=0.05, help="two-sided significance level (default 0.05)")
    parser.add_argument("--power", type=probability, default=0.8, help="power (default 0.8)")
    parser.add_argument("--format", "-f", choices=("table", "markdown", "csv", "json"), default="table")
    parser.add_argument("--output", "-o", metavar="PATH", help="write the output to PATH (atomically)")
    parser.add_argument("--no-progress", action="store_true", help=argparse.SUPPRESS)


def _run_power(args: argparse.Namespace) -> int:
    from kpass.reports.power import compute_power, format_power

    result = compute_power(args)
    _emit(args, format_power(result, args.format))
    return EXIT_OK


# ----------------------------------------------------------------------------------------------
# listings


def _metrics_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def _run_metrics(args: argparse.Namespace) -> int:
    from kpass.host.manager import get_registry

    registry = get_registry()
    for name, family in registry.metrics.items():
        aliases = getattr(family, "aliases", ())
        print(f"{family.pattern:<48} {getattr(family, 'description', '')}"
              + (f" (also {', '.join(aliases)})" if aliases else "")
              + f"  [{registry.owners[('metric', name)]}]")
        if getattr(family, "example", ""):
            print(f"{'':<48}   e.g. {family.example}")
    print("\noptions go in [...], e.g. cons@16[ties=strict]; a token budget in (B=4096); several k: pass@1,8,64")
    return EXIT_OK


def _run_plugins(args: argparse.Namespace) -> int:
    from kpass.host.manager import get_plugin_manager, get_registry

    pm = get_plugin_manager()
    registry = get_registry(pm)
    for name, _plugin in pm.list_name_plugin():
        owned = sorted(f"{kind} {item}" for (kind, item), owner in registry.owners.items() if owner == name)
        print(f"{name}: {', '.join(owned) or 'registers nothing'}")
    return EXIT_OK


#: name -> (help, add_arguments, run); add a subcommand by adding an entry.
SUBCOMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {
    "report": ("estimate, interval and SE for every metric per model and task", _report_arguments, _run_report),
    "compare": ("paired differences of models on the same problems", _compare_arguments, _run_compare),
    "power": ("problems needed for an effect, or the detectable effect for a size", _power_arguments, _run_power),
    "metrics": ("list the metric families (built-in and from plugins)", _metrics_arguments, _run_metrics),
    "plugins": ("list loaded plugins and what they register", _metrics_arguments, _run_plugins),
}


#: Modules that add their own subcommands: ``function(subparsers)`` adds parsers and sets
#: ``func`` (``(args) -> exit code``) through ``set_defaults``. Missing modules are skipped.
EXTENSION_COMMANDS: list[tuple[str, str]] = [
    ("kpass.reports.budget", "add_budget_commands"),
    ("kpass.reports.leaderboard", "add_leaderboard_command"),
]


def _add_extension_commands(sub: Any) -> None:
    import importlib

    for module_name, function_name in EXTENSION_COMMANDS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            raise
        add = getattr(module, function_name, None)
        if add is not None:
            add(sub)


def build_parser() -> argparse.ArgumentParser:
    from kpass import __version__

    parser = argparse.ArgumentParser(
        prog="kpass", description="Honest k-sample metrics with problem-level intervals.",
        epilog="exit codes: 0 success, 1 data error, 2 usage error")
    parser.add_argument("--version", action="version", version=f"kpass {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, (help_text, add_arguments, _) in SUBCOMMANDS.items():
        add_arguments(sub.add_parser(name, help=help_text, description=help_text))
    _add_extension_commands(sub)
    return parser


def add_intersect_argument(parser: argparse.ArgumentParser, help_text: str) -> None:
    """``--intersect`` (also spelt ``--intersection``), shared by ``compare`` and ``decompose``."""
    parser.add_argument("--intersect", "--intersection", dest="intersect", action="store_true", help=help_text)


def _check_plot_path(path: str) -> None:
    if os.path.splitext(path)[1].lower() not in (".png", ".svg"):
        raise UsageError(f"--plot {path}: the file name must end in .png or .svg")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``kpass`` command; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help/--version (0) or a usage error (2)
        return int(exc.code or 0) if isinstance(exc.code, int) or exc.code is None else EXIT_USAGE
    run = getattr(args, "func", None) or SUBCOMMANDS[args.command][2]
    try:
        return run(args)
    except DataError as exc:
        print(f"kpass: data error: {exc}", file=sys.stderr)
        return EXIT_DATA_ERROR
    except PluginLoadError as exc:
        print(f"kpass: plugin error: {exc}", file=sys.stderr)
        return EXIT_DATA_ERROR
    except OutputError as exc:
        print(f"kpass {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except (MetricSpecError, UsageError) as exc:
        print(f"kpass {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except FileNotFoundError as exc:
        print(f"kpass {args.command}: error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as exc:
        # The host's own paths raise DataError for data and UsageError for options (the core's
        # data errors are converted where it is called); a plain ValueError left here is an
        # option an extension command rejected (e.g. `kpass leaderboard --sort` naming no column).
        print(f"kpass {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("kpass: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `kpass ... | head`: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
