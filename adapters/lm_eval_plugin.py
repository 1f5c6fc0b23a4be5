"""kpass plugin for lm-evaluation-harness: registers the ``--log_samples`` reader.

Target of the ``lm_eval`` entry point of the ``kpass`` group (see ``pyproject.toml``), so that
``kpass report OUT`` and ``kpass compare OUT_A OUT_B`` read lm-eval output directories. It imports
without lm-eval installed: the reader imports lm-eval only when it reads.
"""

from __future__ import annotations

from kpass import hookimpl

from .lm_eval_reader import LmEvalSamplesReader

__all__ = ["register_readers"]


@hookimpl
def register_readers(register):
    """Register the ``lm_eval`` reader (:class:`~kpass.adapters.lm_eval_reader.LmEvalSamplesReader`)."""
    register("lm_eval", LmEvalSamplesReader())
