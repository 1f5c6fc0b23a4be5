"""kpass plugin for lm-evaluation-harness: the ``--log_samples`` reader and lm-eval's answer extractors.

Target of the ``lm_eval`` entry point of the ``kpass`` group (see ``pyproject.toml``), so that
``kpass report OUT`` and ``kpass compare OUT_A OUT_B`` read lm-eval output directories and
``--answer-extractor lm_eval_aime`` (``lm_eval_math``, ``lm_eval_minerva_math``, ``lm_eval_gsm8k``)
names lm-eval's answer classes. It imports without lm-eval installed: the reader and the
extractors import lm-eval only when they run, and this module imports them only inside the hooks
that register them, so loading the plugin (which parsing a metric spec does) costs nothing.
"""

from __future__ import annotations

from kpass import hookimpl

__all__ = ["register_answer_extractors", "register_readers"]


@hookimpl
def register_readers(register):
    """Register the ``lm_eval`` reader (:class:`~kpass.adapters.lm_eval_reader.LmEvalSamplesReader`)."""
    from .lm_eval_reader import LmEvalSamplesReader

    register("lm_eval", LmEvalSamplesReader())


@hookimpl
def register_answer_extractors(register):
    """Register lm-eval's answer extractors (:mod:`kpass.adapters.lm_eval_answers`)."""
    from . import lm_eval_answers

    lm_eval_answers.register_answer_extractors(register)
