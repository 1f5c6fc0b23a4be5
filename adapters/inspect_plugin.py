"""kpass plugin for Inspect AI logs (target of the ``kpass`` entry point ``inspect_ai``).

Registers the reader ``inspect`` (:class:`kpass.adapters.inspect_reader.InspectLogReader`), so
that ``kpass report logs/*.eval`` and ``kpass compare`` read Inspect ``.eval`` and ``.json`` logs.
This module imports neither Inspect nor the reader's Inspect code: both load only when a log is
read, so kpass works (and lists this plugin) without Inspect installed.
"""

from __future__ import annotations

from kpass import hookimpl

__all__ = ["register_readers"]


@hookimpl
def register_readers(register):
    from .inspect_reader import InspectLogReader

    register("inspect", InspectLogReader())
