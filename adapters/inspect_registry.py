"""Inspect AI extension module of kpass (target of the ``inspect_ai`` entry point ``kpass``).

Importing it registers, under the ``kpass/`` namespace of Inspect's registry:

- metrics ``kpass/kpass_metrics``, ``kpass/pass_at_k``, ``kpass/pass_hat_k``, ``kpass/g_pass_at_k``,
  ``kpass/mg_pass_at_k``, ``kpass/cons_at_k``, ``kpass/cot_pass_at_k``, ``kpass/fin_at_k``
  (``inspect score LOG --metric kpass/pass_at_k``);
- epoch reducers ``kpass/pass_at``, ``kpass/pass_hat``, ``kpass/g_pass_at``, ``kpass/mg_pass_at``,
  ``kpass/cons_at``, ``kpass/cot_pass_at``, ``kpass/fin_at``
  (``inspect eval ... --epochs-reducer kpass/pass_at_8``);
- scorers ``kpass/kpass_scorer`` and ``kpass/cot_verifier``.

The task-start hook ``kpass/kpass_epochs`` (which checks kpass metrics against the epochs) is
registered only when a kpass metric is created, so Inspect runs without kpass metrics see no
kpass hook.

Inspect loads this module itself when a ``kpass/...`` name is looked up, and imports every
extension's entry point on every run, so it is kept cheap: it and the modules it imports load only
Inspect and the standard library; kpass's metric core (numpy, scipy) is imported inside the
functions that compute, the first time a kpass metric or reducer is created or called.
``kpass/__init__.py`` re-exports lazily, so importing this module loads no numpy or scipy
(``tests/adapters/test_inspect_budget.py`` checks it in a fresh process).
"""

from __future__ import annotations

from . import inspect_metrics
from .inspect_metrics import *  # noqa: F403  (metrics, reducers, preflight: registers them)
from .inspect_scorers import cot_verifier, kpass_scorer

__all__ = sorted([*inspect_metrics.__all__, "cot_verifier", "kpass_scorer"])
