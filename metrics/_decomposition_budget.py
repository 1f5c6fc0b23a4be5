"""Decompose the pass@1 change at every budget of two :class:`~kpass.metrics.BudgetCounts`.

Aligns the two models' per-budget counts by problem id and hands them to
:func:`kpass.metrics.decompose_pass_change` (docs/spec.md section 6).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from ._decomposition import PassChangeDecomposition, decompose_pass_change
from ._token_budget import BudgetCounts

__all__ = ["decompose_budget_counts"]


def decompose_budget_counts(
    base: BudgetCounts,
    model: BudgetCounts,
    *,
    clusters: Mapping[Any, Any] | None = None,
    intersect: bool = False,
    **options: Any,
) -> tuple[PassChangeDecomposition, ...]:
    """Decompose the pass@1 change at every budget of two :class:`BudgetCounts`.

    The two are aligned by problem id. Problems only one model has are an error naming them,
    unless ``intersect=True`` (then they are dropped and the results' ``delta.details`` say how
    many and which).

    Parameters
    ----------
    base, model : BudgetCounts
        From :func:`kpass.metrics.budget_counts`, with the same budgets.
    clusters : Mapping, optional
        Problem id -> cluster label (every matched problem must have one).
    intersect : bool, default: False
    **options
        Passed to :func:`decompose_pass_change` (``attribution``, ``method``, ``n_resamples``,
        ``rng``, ``confidence_level``, ...).

    Returns
    -------
    tuple of PassChangeDecomposition
        One per budget, in ``base.budgets`` order.
    """
    for name, value in (("base", base), ("model", model)):
        if not isinstance(value, BudgetCounts):
            raise TypeError(f"`{name}` must be a BudgetCounts (from budget_counts); got {type(value).__name__}.")
    if tuple(base.budgets) != tuple(model.budgets):
        raise ValueError(f"base and model were counted at different budgets: {list(base.budgets)} and {list(model.budgets)}.")
    base_index = {pid: i for i, pid in enumerate(base.problem_ids)}
    model_index = {pid: i for i, pid in enumerate(model.problem_ids)}
    only_base = [pid for pid in base.problem_ids if pid not in model_index]
    only_model = [pid for pid in model.problem_ids if pid not in base_index]
    if (only_base or only_model) and not intersect:
        raise ValueError(
            f"base and model do not have the same problems: {len(only_base)} only in base "
            f"(first: {only_base[:5]}), {len(only_model)} only in model (first: {only_model[:5]}). "
            "Pass intersect=True (CLI: --intersect) to compare on the common problems."
        )
    common = [pid for pid in base.problem_ids if pid in model_index]
    if not common:
        raise ValueError("base and model have no problem in common.")
    ib = np.fromiter((base_index[p] for p in common), dtype=np.int64, count=len(common))
    im = np.fromiter((model_index[p] for p in common), dtype=np.int64, count=len(common))
    cluster_labels = None
    if clusters is not None:
        missing = [p for p in common if p not in clusters]
        if missing:
            raise ValueError(f"`clusters` has no cluster for {len(missing)} problems (first: {missing[:5]}).")
        cluster_labels = np.asarray([str(clusters[p]) for p in common])
    results = decompose_pass_change(
        base.n_samples[ib], base.n_finished[ib], base.n_correct[ib],
        model.n_samples[im], model.n_finished[im], model.n_correct[im],
        budgets=base.budgets, clusters=cluster_labels, **options,
    )
    assert isinstance(results, tuple)  # (N, K) counts: one result per budget
    if only_base or only_model:
        results = tuple(
            dataclasses.replace(
                r,
                delta=dataclasses.replace(
                    r.delta,
                    details={**r.delta.details, "n_unmatched": len(only_base) + len(only_model),
                             "unmatched_ids_base": tuple(only_base), "unmatched_ids_model": tuple(only_model)},
                ),
            )
            for r in results
        )
    return results
