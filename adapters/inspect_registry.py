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
(Importing any ``kpass.*`` module also runs ``kpass/__init__.py``; see the lazy-import test in
``tests/adapters/test_inspect_budget.py``.)
"""

from __future__ import annotations

from .inspect_metrics import (
    cons_at,
    cons_at_k,
    cot_pass_at,
    cot_pass_at_k,
    fin_at,
    fin_at_k,
    g_pass_at,
    g_pass_at_k,
    kpass_metrics,
    kpass_preflight,
    mg_pass_at,
    mg_pass_at_k,
    pass_at,
    pass_at_k,
    pass_hat,
    pass_hat_k,
)
from .inspect_scorers import cot_verifier, kpass_scorer

__all__ = [
    "cons_at",
    "cons_at_k",
    "cot_pass_at",
    "cot_pass_at_k",
    "cot_verifier",
    "fin_at",
    "fin_at_k",
    "g_pass_at",
    "g_pass_at_k",
    "kpass_metrics",
    "kpass_preflight",
    "kpass_scorer",
    "mg_pass_at",
    "mg_pass_at_k",
    "pass_at",
    "pass_at_k",
    "pass_hat",
    "pass_hat_k",
]
