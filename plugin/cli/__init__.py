"""The ``kpass`` command (console script ``kpass = "kpass.cli:main"``), one module per subcommand.

:mod:`kpass.cli.main` holds the subcommand table and the exit codes, :mod:`kpass.cli.arguments`
the arguments every subcommand shares, :mod:`kpass.cli.output` the atomic file writing.
"""

from kpass.cli.main import main
from kpass.cli.output import write_atomically
from kpass.errors import UsageError

__all__ = ["UsageError", "main", "write_atomically"]
