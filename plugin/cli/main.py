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
the flags a user typed (``--confidence``), from the one table of option names
(:data:`kpass.reports.options.PARAMETERS`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import NamedTuple, NoReturn

from kpass import __version__
from kpass.cli import budget, crossover, frontier, leaderboard, listings, power, report
from kpass.cli.output import broken_pipe, check_inputs, check_outputs, flush_stdout, reserve_standard_streams
from kpass.errors import DataError, EngineError, MetricSpecError, OutputError, PluginLoadError, UsageError
from kpass.reports.options import PARAMETERS, flag_names

__all__ = ["EXIT_DATA_ERROR", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "PARAMETER_FLAGS", "SUBCOMMANDS", "Command", "build_parser",
           "flag_names", "main"]

EXIT_OK = 0
EXIT_DATA_ERROR = 1
EXIT_USAGE = 2
#: Ctrl-C (128 + SIGINT), as shells report a command the signal stopped.
EXIT_INTERRUPTED = 130


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

#: The Python API's parameter names (as its errors quote them) and the flags that set them, read
#: from the one table of option names (:data:`kpass.reports.options.PARAMETERS`).
PARAMETER_FLAGS = {parameter.api: parameter.flag for parameter in PARAMETERS}


class OneLineParser(argparse.ArgumentParser):
    """argparse with a usage error in one line (``kpass report: error: ...; see kpass report --help``),
    as every other failure: the usage block it printed first buried the line that says what is wrong."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``kpass`` parser: every subcommand with its arguments, or, given ``command``, only that
    subcommand's arguments (the others are listed with their help; nothing else is parsed)."""
    parser = OneLineParser(
        prog="kpass", description="Honest k-sample metrics with problem-level intervals.",
        epilog="exit codes: 0 success, 1 data error, 2 usage error")
    parser.add_argument("--version", action="version", version=f"kpass {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, entry in SUBCOMMANDS.items():
        subparser = sub.add_parser(name, help=entry.help, description=entry.description or entry.help)
        if command is None or name == command:
            entry.add_arguments(subparser)
    return parser


def _command_of(argv: Sequence[str] | None) -> str | None:
    """The subcommand ``argv`` names (its first word that is not an option), if it is one."""
    words = sys.argv[1:] if argv is None else argv
    first = next((word for word in words if not word.startswith("-")), None)
    return first if first in SUBCOMMANDS else None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``kpass`` command; returns the exit code.

    Every failure is one line on stderr: 1 for data (and a full disk, a closed stdout, an engine
    that failed), 2 for an option, 130 for an interrupt (Ctrl-C, also when it reaches kpass
    chained to an engine's exception), and a quiet 141 when the reader of stdout goes away
    (``kpass report x | head -1``), as the usual command-line tools do.
    """
    reserve_standard_streams()
    command = "kpass"
    try:
        parser = build_parser(_command_of(argv))  # the arguments of the command asked for
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # argparse: --help/--version (0) or a usage error (2)
            return int(exc.code or 0) if isinstance(exc.code, int) or exc.code is None else EXIT_USAGE
        command = f"kpass {args.command}"
        check_outputs(args)  # before anything is read: no output over an input, formats from suffixes
        check_inputs(args)
        code = SUBCOMMANDS[args.command].run(args)
        flush_stdout()
        return code
    except Exception as exc:  # noqa: BLE001 - each kind is one line; anything else is re-raised
        return _failure(exc, command)
    except KeyboardInterrupt:
        return _interrupted()


def _interrupted() -> int:
    """Ctrl-C: one line, exit 130. Temporaries are removed by the ``finally`` blocks the interrupt
    ran through (outputs, DuckDB's spill files, Spark's directories)."""
    _say("kpass: interrupted")
    return EXIT_INTERRUPTED


def _say(line: str) -> None:
    encoding = getattr(sys.stderr, "encoding", None) or "utf-8"
    try:  # a lone surrogate in a name is said as \ud800
        line = line.encode(encoding, "backslashreplace").decode(encoding)
    except LookupError:
        pass
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):  # stderr closed or full: the exit code is all that is left
        pass


def _chain(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    while exc is not None and exc not in chain and len(chain) < 100:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return chain


def _failure(exc: Exception, command: str) -> int:
    """The exit code of ``exc`` (its one line printed), or ``exc`` re-raised if it is a bug."""
    chain = _chain(exc)
    if any(isinstance(link, KeyboardInterrupt) for link in chain):  # an engine's error raised while it stopped
        return _interrupted()
    if isinstance(exc, BrokenPipeError) or (isinstance(exc, OutputError) and isinstance(exc.__cause__, BrokenPipeError)):
        return broken_pipe()
    if isinstance(exc, DataError):
        _say(f"kpass: data error: {exc}")
        return EXIT_DATA_ERROR
    if isinstance(exc, PluginLoadError):
        _say(f"kpass: plugin error: {exc}")
        return EXIT_DATA_ERROR
    if isinstance(exc, EngineError):
        _say(f"kpass: engine error: {exc}")
        return EXIT_DATA_ERROR
    if isinstance(exc, OutputError):  # one line naming the path; 2, or 1 for a full disk
        _say(f"{command}: error: {exc}")
        return exc.exit_code
    if isinstance(exc, (MetricSpecError, UsageError)):
        _say(f"{command}: error: {flag_names(str(exc))}")
        return EXIT_USAGE
    if isinstance(exc, FileNotFoundError):  # kpass's own carry the message; the system's an errno and a path
        message = f"{exc.strerror}: {exc.filename}" if exc.errno and exc.strerror else (exc.args[0] if exc.args else exc)
        _say(f"{command}: error: {message}")
        return EXIT_USAGE
    if isinstance(exc, ValueError):
        # The host's own paths raise DataError for data and UsageError for options (the core's
        # data errors are converted where it is called); a plain ValueError left here is an
        # option a command rejected (e.g. `kpass leaderboard --sort` naming no column).
        _say(f"{command}: error: {flag_names(str(exc))}")
        return EXIT_USAGE
    if isinstance(exc, MemoryError):
        _say(f"{command}: error: out of memory; give the command fewer or smaller inputs, or --memory-limit (DuckDB then works out of core)")
        return EXIT_DATA_ERROR
    raise exc
