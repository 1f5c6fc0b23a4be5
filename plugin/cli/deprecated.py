"""Old spellings of flags, kept working for a while: each sets its replacement and says so on stderr.

An old flag never silently means something else: ``kpass power --alpha 0.01`` still plans at the
99% level (``--confidence 0.99``), and ``--base A`` still names the baseline (``--baseline A``), with
one line on stderr naming the flag to use instead. They are hidden from ``--help``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["add_deprecated_alias"]


class _DeprecatedAlias(argparse.Action):
    """Stores ``convert(value)`` into the replacement's destination and warns once per use."""

    def __init__(self, option_strings: Sequence[str], dest: str, *, replacement: str,
                 convert: Callable[[Any], Any], **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.replacement = replacement
        self.convert = convert

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(f"kpass: {option_string} is deprecated and will be removed; use {self.replacement}",
              file=sys.stderr)
        setattr(namespace, self.dest, self.convert(values))


def add_deprecated_alias(parser: argparse.ArgumentParser | Any, old: str, *, dest: str, replacement: str,
                         convert: Callable[[Any], Any] = lambda value: value, **kwargs: Any) -> None:
    """Add ``old`` as a hidden flag that sets ``dest`` (the destination of ``replacement``).

    Parameters
    ----------
    parser : argparse.ArgumentParser or argument group
        Where the replacement flag was added (add the alias after it: the replacement's default wins).
    old : str
        The deprecated spelling, e.g. ``"--alpha"``.
    dest : str
        The destination of the replacement flag, e.g. ``"confidence"``.
    replacement : str
        What the warning tells the user to write instead, e.g. ``"--confidence 0.95"``.
    convert : callable, optional
        From the old flag's parsed value to the replacement's (``--alpha A`` is ``--confidence 1 - A``).
    **kwargs
        ``type``, ``metavar``, ... as for :meth:`argparse.ArgumentParser.add_argument`.
    """
    parser.add_argument(old, dest=dest, action=_DeprecatedAlias, replacement=replacement, convert=convert,
                        default=argparse.SUPPRESS, help=argparse.SUPPRESS, **kwargs)
