"""The ``kpass`` command: the subcommand table, the parser and the exit codes.

Exit codes: 0 success, 2 usage error (bad arguments, bad metric spec, missing file, an output
that is an input), 1 data error (the message names the file, the line and the field). Before a
command runs, :func:`kpass.cli.output.check_outputs` refuses an output that resolves to an input
and gives each ``--output`` the format of its suffix. Output goes to stdout or, with
``--output PATH``, to a file written by :mod:`kpass.cli.output` (regular files replaced
atomically, devices and FIFOs written through, symbolic links followed; a failure is one line). A progress bar is
drawn on stderr only when stderr is a terminal.

Every subcommand is one module of :mod:`kpass.cli` and one entry of :data:`SUBCOMMANDS`. Errors
of the Python API name its parameters (``confidence_level``); :func:`flag_names` says them as
the flags a user typed (``--confidence``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import NamedTuple

from kpass import __version__
from kpass.cli import budget, crossover, frontier, leaderboard, listings, power, report
from kpass.cli.output import check_outputs
from kpass.errors import DataError, MetricSpecError, OutputError, PluginLoadError, UsageError

__all__ = ["EXIT_DATA_ERROR", "EXIT_OK", "EXIT_USAGE", "PARAMETER_FLAGS", "SUBCOMMANDS", "Command", "build_parser",
           "flag_names", "main"]

EXIT_OK = 0
EXIT_DATA_ERROR = 1
EXIT_USAGE = 2


class Command(NamedTuple):
    """One ``kpass`` subcommand: its one-line help, description, arguments and run function."""

    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    description: str | None = None


#: name -> :class:`Command`; add a subcommand by adding an entry.
SUBCOMMANDS: dict[str, Command] = {
    "report": Command("estimate, interval and SE for every metric per model and task",
                      report.add_report_arguments, report.run_report),
    "compare": Command("paired differences of models on the same problems",
                       report.add_compare_arguments, report.run_compare),
    "power": Command("problems needed for an effect, or the detectable effect for a size",
                     power.add_power_arguments, power.run_power),
    "metrics": Command("list the metric families (built-in and from plugins)",
                       listings.add_no_arguments, listings.run_metrics),
    "plugins": Command("list loaded plugins and what they register",
                       listings.add_no_arguments, listings.run_plugins),
    "budget": Command(budget.BUDGET_HELP[0], budget.add_budget_arguments, budget.run_budget, budget.BUDGET_HELP[1]),
    "decompose": Command(budget.DECOMPOSE_HELP[0], budget.add_decompose_arguments, budget.run_decompose,
                         budget.DECOMPOSE_HELP[1]),
    "leaderboard": Command(leaderboard.LEADERBOARD_HELP[0], leaderboard.add_leaderboard_arguments,
                           leaderboard.run_leaderboard, leaderboard.LEADERBOARD_HELP[1]),
    "crossover": Command(crossover.HELP, crossover.add_arguments, crossover.run),
    "frontier": Command(frontier.HELP, frontier.add_arguments, frontier.run),
}

#: The Python API's parameter names (as its errors quote them) and the flags that set them.
PARAMETER_FLAGS = {
    "confidence_level": "--confidence",
    "n_resamples": "--n-resamples",
    "rng": "--seed",
    "method": "--method",
    "cluster_by": "--cluster-by",
    "by": "--by",
    "baseline": "--baseline",
    "models": "--models",
    "intersect": "--intersect",
    "temp_directory": "--temp-dir",
}


def flag_names(message: str) -> str:
    """``message`` with every quoted parameter name (```confidence_level```) said as its flag."""
    for parameter, flag in PARAMETER_FLAGS.items():
        message = message.replace(f"`{parameter}`", flag).replace(f"{parameter}=", f"{flag} ")
    return message


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kpass", description="Honest k-sample metrics with problem-level intervals.",
        epilog="exit codes: 0 success, 1 data error, 2 usage error")
    parser.add_argument("--version", action="version", version=f"kpass {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, command in SUBCOMMANDS.items():
        command.add_arguments(sub.add_parser(name, help=command.help, description=command.description or command.help))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``kpass`` command; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help/--version (0) or a usage error (2)
        return int(exc.code or 0) if isinstance(exc.code, int) or exc.code is None else EXIT_USAGE
    try:
        check_outputs(args)  # before anything is read: no output over an input, formats from suffixes
        return SUBCOMMANDS[args.command].run(args)
    except DataError as exc:
        print(f"kpass: data error: {exc}", file=sys.stderr)
        return EXIT_DATA_ERROR
    except PluginLoadError as exc:
        print(f"kpass: plugin error: {exc}", file=sys.stderr)
        return EXIT_DATA_ERROR
    except OutputError as exc:  # one line naming the path; 2, or 1 for a full disk
        print(f"kpass {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except (MetricSpecError, UsageError) as exc:
        print(f"kpass {args.command}: error: {flag_names(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except FileNotFoundError as exc:  # kpass's own carry the message; the system's an errno and a path
        message = f"{exc.strerror}: {exc.filename}" if exc.errno and exc.strerror else (exc.args[0] if exc.args else exc)
        print(f"kpass {args.command}: error: {message}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as exc:
        # The host's own paths raise DataError for data and UsageError for options (the core's
        # data errors are converted where it is called); a plain ValueError left here is an
        # option a command rejected (e.g. `kpass leaderboard --sort` naming no column).
        print(f"kpass {args.command}: error: {flag_names(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("kpass: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `kpass ... | head`: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
