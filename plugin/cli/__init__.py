"""The ``kpass`` command (console script ``kpass = "kpass.cli:main"``), one module per subcommand.

:mod:`kpass.cli.main` holds the subcommand table and the exit codes, :mod:`kpass.cli.arguments`
the arguments every subcommand shares, :mod:`kpass.cli.output` the writing of every output (files and stdout).
"""

from kpass.cli.main import main
from kpass.cli.output import write_atomically, write_output, write_outputs, write_stdout
from kpass.errors import UsageError

__all__ = ["UsageError", "main", "write_atomically", "write_output", "write_outputs", "write_stdout"]
