r"""What a pass@1 change is made of: finishing, reliability and reach (docs/spec.md section 6).

Two models on the same ``N`` problems at one token budget ``B`` (a *base* model and a *model*,
e.g. its outcome-RL descendant), ``k = 1``. Per problem ``j`` and model ``m``: ``n_j^m`` samples
(ragged: it may differ between problems and between the two models), ``f_j^m`` finished within
``B`` and ``c_j^m`` correct-and-finished, ``p_j^m = c_j^m / n_j^m`` (pass@1) and
``fin_j^m = f_j^m / n_j^m`` (fin@1).

Sets
----
- ``R`` (base-unreached): the base finished all its samples and got none right,
  ``f^base = n^base`` and ``c^base = 0``;
- ``M`` (mirror): the same for the model;
- ``S``: every other problem (``S = complement of R u M``; a problem in both ``R`` and ``M``
  contributes 0 either way).

Terms
-----
.. math::

    \mathrm{reach} = \frac{1}{N}\Big[\sum_{j\in R} p_j^{model} - \sum_{j\in M} p_j^{base}\Big]

On ``S`` the finishing rate and the pass rate given finishing are pooled with the same problem
weights as pass@1 itself (so that ``pass = fin * q`` holds exactly, ragged ``n`` included):

.. math::

    \Phi_m = \sum_{j\in S} fin_j^m, \qquad \Pi_m = \sum_{j\in S} p_j^m, \qquad
    q_m = \Pi_m / \Phi_m, \qquad fin_m = \Phi_m / |S|

    F = \frac{|S|}{N}(fin_{model} - fin_{base})\, q_{model}, \qquad
    P = \frac{|S|}{N} fin_{base}\, (q_{model} - q_{base})  \qquad \text{("base" attribution)}

so that :math:`\Delta\mathrm{pass@1}(B) = F + P + \mathrm{reach}` exactly (no residual). The
cross term :math:`I = \frac{|S|}{N}\Delta fin\,\Delta q` is given to F by "base" and to P by
"reverse" (F uses ``q_base``, P uses ``fin_model``); "shapley" splits it in half. The
*attribution spread* ``|I|`` is how much F (and P) move between the attributions.

Undefined reliability. ``q_m`` is 0/0 when model ``m`` finished nothing on ``S``. kpass then sets
it to the other model's ``q`` (nothing is known about its reliability once finished, so no change
of reliability is attributed), and to 0 when neither finished anything on ``S``. Every
attribution stays exact because ``\Phi_m q_m = \Pi_m = 0`` whatever ``q_m`` is. With ``S`` empty,
``F = P = 0``.

Also reported
-------------
- robust reach: problems of ``R`` on which the model is correct in at least half its samples
  (``2 c^model >= n^model``), as a fraction of ``N``; and the mirror (problems of ``M`` the base
  solves robustly);
- lone wins: problems with ``c >= 1`` for one model and ``c = 0`` for the other, per direction, as
  fractions of ``N``;
- matched reliability: pass@1 | fin, pooled as above, on the problems where both models finished
  at least 7/8 of their samples, per model and the difference (undefined, NaN with a warning, when
  no problem qualifies).

Intervals: a paired cluster bootstrap over problems (both models' samples of a problem, and of a
cluster, move together), with the resampling of :func:`kpass.metrics.bootstrap_weights` (units
drawn in canonical order, so the result does not depend on the order of the problems). Every
statistic is a smooth function of per-problem sums, so one matrix product per chunk of resamples
gives them all, for all budgets at once. Percentile (``"bootstrap"``) or BCa (``"bca"``, jackknife
acceleration over problems or clusters) intervals, from the same percentile, BCa, Wilson and MOVER
code as :func:`kpass.metrics.mean_ci`. The linear terms (pass@1 and fin@1 of each model, delta
pass@1) are by default exactly :func:`kpass.metrics.mean_ci` and
:func:`kpass.metrics.paired_difference` of their per-problem values. Reach, robust reach and lone wins live on a handful of problems,
where every bootstrap (and the t interval) under-covers; without clusters they get score intervals
instead (Wilson; MOVER for reach; ``reach_interval="bootstrap"`` restores the bootstrap). The
seeded coverage study ``scripts/budget_coverage.py`` measures both (docs/token-budgets.md).

References
----------
.. [1] kpass docs/spec.md, section 6.
.. [2] Yang (2026), "What Outcome RL Buys" (finishing, reliability and reach; the published
       equations could not be obtained, so the definitions above are kpass's).
.. [3] B. Efron and R. Tibshirani, "An Introduction to the Bootstrap", Chapman & Hall (1993),
       ch. 13-14 (percentile and BCa intervals).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping, Sequence
from fractions import Fraction
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from ._bootstrap import DEFAULT_N_RESAMPLES, bootstrap_of_sums
from ._intervals import (
    DEFAULT_INTERVAL_METHOD,
    DEFAULT_PAIRED_METHOD,
    INTERVAL_METHODS,
    PAIRED_INTERVAL_METHODS,
    mean_ci,
    paired_difference,
)
from ._patterns import robust_wins
from ._resampling import canonical_order
from ._result import IntervalResult
from ._score_intervals import mover_bounds, wilson_score_bounds
from ._validation import (
    check_confidence_level,
    check_counts,
    check_max_chunk,
    check_method,
    check_n_resamples,
    check_option,
    exact_fraction,
    factorize_labels,
    resolve_seed,
)
from ._warnings import DegenerateIntervalWarning, UndefinedDecompositionWarning

__all__ = [
    "ATTRIBUTIONS",
    "PassChangeDecomposition",
    "decompose_pass_change",
    "UndefinedDecompositionWarning",
]

#: The attributions of the cross term between finishing and reliability.
ATTRIBUTIONS: tuple[str, ...] = ("base", "reverse", "shapley")
_METHODS = ("bootstrap", "bca")
_DEFAULT_CHUNK_ELEMENTS = 4_000_000
#: ``linear_method`` value that gives the linear terms the decomposition's own bootstrap.
_OWN_BOOTSTRAP = "decomposition"


# ----------------------------------------------------------------------------------------------
# score intervals of the terms that live on few problems


def _scaled_wilson(values: NDArray[np.float64], quantile: float) -> tuple[float, float, float]:
    r"""Score interval for the mean of a sparse variable in [0, 1] (``(mean, low, high)``).

    Model: a value is 0 or a draw from a distribution of non-zero values; scaling the non-zero
    frequency scales the mean ``mu`` and gives the variance function
    :math:`V(\mu) = \kappa\mu - \mu^2` with :math:`\kappa = E[v^2]/E[v]` (estimated by
    :math:`\sum v^2 / \sum v`; 1 when every value is 0, the bound for [0, 1] variables).
    Inverting the score test gives Wilson's interval [Wilson 1927] for :math:`\hat\mu/\kappa`
    scaled by :math:`\kappa` (for 0/1 values exactly Wilson's interval; the Wilson bounds are
    kpass's one implementation, ``kpass.metrics._score_intervals.wilson_score_bounds``).
    """
    n = values.shape[0]
    s1 = float(values.sum())
    s2 = float((values * values).sum())
    kappa = s2 / s1 if s1 > 0 else 1.0
    p = min(s1 / kappa / n, 1.0)
    low, high = wilson_score_bounds(p, n, quantile)
    return s1 / n, kappa * float(low), kappa * float(high)


def _score_interval(plus: NDArray[np.float64], minus: NDArray[np.float64], confidence_level: float) -> tuple[float, float]:
    r"""Interval for ``mean(plus) - mean(minus)`` of two sparse [0, 1] variables (MOVER).

    Each mean gets :func:`_scaled_wilson` (quantile of t with N-1 df); the difference combines them
    by the method of variance estimates recovery with their Pearson correlation (Zou & Donner
    2008; Newcombe 1998 for paired proportions), kpass's one MOVER implementation
    (``kpass.metrics._score_intervals.mover_bounds``):

    .. math::

        L = d - \sqrt{(\hat a - l_a)^2 + (u_b - \hat b)^2 - 2\rho(\hat a - l_a)(u_b - \hat b)},\quad
        U = d + \sqrt{(u_a - \hat a)^2 + (\hat b - l_b)^2 - 2\rho(u_a - \hat a)(\hat b - l_b)}
    """
    n = plus.shape[0]
    quantile = float(stats.t.ppf(1 - (1 - confidence_level) / 2, n - 1))
    a, la, ua = _scaled_wilson(plus, quantile)
    b, lb, ub = _scaled_wilson(minus, quantile)
    rho = 0.0
    if plus.std() > 0 and minus.std() > 0:
        rho = float(np.corrcoef(plus, minus)[0, 1])
    low, high = mover_bounds(a - b, a - la, ua - a, b - lb, ub - b, rho)
    return float(low), float(high)


# ----------------------------------------------------------------------------------------------
# the decomposition


@dataclasses.dataclass(frozen=True, kw_only=True)
class PassChangeDecomposition:
    """The change of pass@1 between a base and a model at one budget, split into its parts.

    Every number is an :class:`~kpass.metrics.IntervalResult`. The decomposition's own terms come
    from one paired cluster bootstrap (the same resamples for all of them, so their intervals are
    jointly consistent); by default the linear terms (pass@1 and fin@1 of each model, delta) are
    :func:`~kpass.metrics.mean_ci` / :func:`~kpass.metrics.paired_difference` of their own values,
    the numbers ``kpass report`` and ``kpass compare`` give.

    Attributes
    ----------
    budget : int or None
        Token budget (``None``: as run / not given).
    attribution : str
        Attribution used for :attr:`finishing` and :attr:`reliability`.
    base_pass, model_pass, delta : IntervalResult
        pass@1 of each model and ``model - base``.
    base_fin, model_fin : IntervalResult
        fin@1 of each model (all problems).
    finishing, reliability, reach : IntervalResult
        F, P (in the chosen attribution) and reach; ``F + P + reach == delta.estimate``.
    attributions : Mapping[str, tuple[IntervalResult, IntervalResult]]
        ``(F, P)`` for each of ``"base"``, ``"reverse"``, ``"shapley"``.
    interaction : IntervalResult
        The cross term ``(|S|/N) (fin_model - fin_base)(q_model - q_base)``
        (= F_base - F_reverse).
    attribution_spread : IntervalResult
        ``|interaction|``: how far F and P move between attributions.
    robust_reach, robust_reach_mirror : IntervalResult
        Fractions of all problems: problems of R that the model solves in at least half its
        samples; problems of M that the base does.
    lone_wins_model, lone_wins_base : IntervalResult
        Fractions of all problems with ``c >= 1`` for that model and ``c = 0`` for the other.
    matched_reliability_base, matched_reliability_model, matched_reliability_delta : IntervalResult
        pass@1 | fin on problems where both models finished at least ``matched_fraction`` of
        their samples (NaN when there is none).
    pooled : Mapping[str, float]
        ``fin_base``, ``fin_model``, ``q_base``, ``q_model`` pooled over S (NaN when S is empty),
        ``q_base_borrowed``/``q_model_borrowed`` (whether the 0/0 convention applied).
    n_problems, n_clusters : int, int or None
    n_reached, n_mirror, n_rest, n_matched, n_robust_reach, n_robust_reach_mirror : int
        ``|R|``, ``|M|``, ``|S|``, matched problems, robust problems of R and of M.
    n_lone_wins_model, n_lone_wins_base : int
    method : str
        ``"bootstrap"`` (percentile) or ``"bca"``.
    n_resamples : int
    confidence_level : float
    """

    budget: int | None
    attribution: str
    base_pass: IntervalResult
    model_pass: IntervalResult
    delta: IntervalResult
    base_fin: IntervalResult
    model_fin: IntervalResult
    finishing: IntervalResult
    reliability: IntervalResult
    reach: IntervalResult
    attributions: Mapping[str, tuple[IntervalResult, IntervalResult]]
    interaction: IntervalResult
    attribution_spread: IntervalResult
    robust_reach: IntervalResult
    robust_reach_mirror: IntervalResult
    lone_wins_model: IntervalResult
    lone_wins_base: IntervalResult
    matched_reliability_base: IntervalResult
    matched_reliability_model: IntervalResult
    matched_reliability_delta: IntervalResult
    pooled: Mapping[str, float]
    n_problems: int
    n_clusters: int | None
    n_reached: int
    n_mirror: int
    n_rest: int
    n_matched: int
    n_robust_reach: int
    n_robust_reach_mirror: int
    n_lone_wins_model: int
    n_lone_wins_base: int
    method: str
    n_resamples: int
    confidence_level: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "attributions", MappingProxyType(dict(self.attributions)))
        object.__setattr__(self, "pooled", MappingProxyType(dict(self.pooled)))

    @property
    def residual(self) -> float:
        """``delta - (F + P + reach)``: 0 up to floating-point rounding, for every attribution."""
        return self.delta.estimate - (self.finishing.estimate + self.reliability.estimate + self.reach.estimate)

    def as_dict(self) -> dict[str, Any]:
        """A flat ``dict``: ``<term>``, ``<term>_low``, ``<term>_high``, ``<term>_se`` and the counts."""
        out: dict[str, Any] = {"budget": self.budget, "attribution": self.attribution}
        for name in _RESULT_TERMS:
            result = getattr(self, name)
            out[name] = result.estimate
            out[f"{name}_low"] = result.low
            out[f"{name}_high"] = result.high
            out[f"{name}_se"] = result.standard_error
        for attribution, (finishing, reliability) in self.attributions.items():
            out[f"finishing_{attribution}"] = finishing.estimate
            out[f"finishing_{attribution}_low"] = finishing.low
            out[f"finishing_{attribution}_high"] = finishing.high
            out[f"reliability_{attribution}"] = reliability.estimate
            out[f"reliability_{attribution}_low"] = reliability.low
            out[f"reliability_{attribution}_high"] = reliability.high
        for key, value in self.pooled.items():
            out[f"pooled_{key}"] = value
        for name in ("n_problems", "n_clusters", "n_reached", "n_mirror", "n_rest", "n_matched",
                     "n_robust_reach", "n_robust_reach_mirror", "n_lone_wins_model",
                     "n_lone_wins_base", "method", "n_resamples", "confidence_level"):
            out[name] = getattr(self, name)
        return out


_RESULT_TERMS = (
    "base_pass", "model_pass", "delta", "base_fin", "model_fin", "finishing", "reliability", "reach",
    "interaction", "attribution_spread", "robust_reach", "robust_reach_mirror", "lone_wins_model",
    "lone_wins_base", "matched_reliability_base", "matched_reliability_model",
    "matched_reliability_delta",
)

# Columns of the per-problem matrix (one block per budget).
_COLUMNS = (
    "p_base", "p_model", "fin_base", "fin_model",          # 0-3
    "reach_plus", "reach_minus",                          # 4-5: p_model on R, p_base on M
    "fin_base_S", "fin_model_S", "p_base_S", "p_model_S",  # 6-9
    "robust_R", "robust_M", "lone_model", "lone_base",     # 10-13
    "matched", "fin_base_T", "fin_model_T", "p_base_T", "p_model_T",  # 14-18
    "in_R", "in_M", "in_S",                               # 19-21
)
_C = {name: i for i, name in enumerate(_COLUMNS)}
_N_COLUMNS = len(_COLUMNS)

# Output statistics (last axis of the statistic function).
_STATS = (
    "base_pass", "model_pass", "delta", "base_fin", "model_fin", "reach",
    "finishing_base", "reliability_base", "finishing_reverse", "reliability_reverse",
    "finishing_shapley", "reliability_shapley", "interaction", "attribution_spread",
    "robust_reach", "robust_reach_mirror", "lone_wins_model", "lone_wins_base",
    "matched_reliability_base", "matched_reliability_model", "matched_reliability_delta",
)
_S = {name: i for i, name in enumerate(_STATS)}

# Statistics that get the score interval (reach, or a fraction of problems: its 0/1 column).
_SCORE_COLUMNS = {"robust_reach": "robust_R", "robust_reach_mirror": "robust_M",
                  "lone_wins_model": "lone_model", "lone_wins_base": "lone_base"}
_SCORE_STATS = ("reach", *_SCORE_COLUMNS)  # reach: the MOVER of its two parts' intervals


def _pooled_reliability(phi_base, pi_base, phi_model, pi_model):
    """``q_base, q_model`` with the 0/0 convention (borrow the other's q; 0 when both are 0/0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q_base = np.where(phi_base > 0, pi_base / np.where(phi_base > 0, phi_base, 1.0), np.nan)
        q_model = np.where(phi_model > 0, pi_model / np.where(phi_model > 0, phi_model, 1.0), np.nan)
    q_base_filled = np.where(np.isnan(q_base), np.where(np.isnan(q_model), 0.0, q_model), q_base)
    q_model_filled = np.where(np.isnan(q_model), np.where(np.isnan(q_base), 0.0, q_base), q_model)
    return q_base_filled, q_model_filled


def _statistic(sums: NDArray[np.float64], total_weight: NDArray[np.float64], n_budgets: int) -> NDArray[np.float64]:
    """All decomposition statistics from weighted per-problem sums; shape (B, n_budgets, n_stats)."""
    t = sums.reshape(sums.shape[0], n_budgets, _N_COLUMNS)
    n_w = total_weight[:, None]
    out = np.empty((sums.shape[0], n_budgets, len(_STATS)))

    def col(name):
        return t[..., _C[name]]

    out[..., _S["base_pass"]] = col("p_base") / n_w
    out[..., _S["model_pass"]] = col("p_model") / n_w
    out[..., _S["delta"]] = (col("p_model") - col("p_base")) / n_w
    out[..., _S["base_fin"]] = col("fin_base") / n_w
    out[..., _S["model_fin"]] = col("fin_model") / n_w
    out[..., _S["reach"]] = (col("reach_plus") - col("reach_minus")) / n_w
    phi_b, phi_m = col("fin_base_S"), col("fin_model_S")
    q_b, q_m = _pooled_reliability(phi_b, col("p_base_S"), phi_m, col("p_model_S"))
    d_fin = (phi_m - phi_b) / n_w          # (|S|/N) (fin_model - fin_base)
    d_q = q_m - q_b
    f_base, p_base = d_fin * q_m, phi_b / n_w * d_q
    f_rev, p_rev = d_fin * q_b, phi_m / n_w * d_q
    out[..., _S["finishing_base"]] = f_base
    out[..., _S["reliability_base"]] = p_base
    out[..., _S["finishing_reverse"]] = f_rev
    out[..., _S["reliability_reverse"]] = p_rev
    out[..., _S["finishing_shapley"]] = 0.5 * (f_base + f_rev)
    out[..., _S["reliability_shapley"]] = 0.5 * (p_base + p_rev)
    out[..., _S["interaction"]] = d_fin * d_q
    out[..., _S["attribution_spread"]] = np.abs(d_fin * d_q)
    out[..., _S["robust_reach"]] = col("robust_R") / n_w
    out[..., _S["robust_reach_mirror"]] = col("robust_M") / n_w
    out[..., _S["lone_wins_model"]] = col("lone_model") / n_w
    out[..., _S["lone_wins_base"]] = col("lone_base") / n_w
    matched = col("matched") > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        qt_b = np.where(matched, col("p_base_T") / col("fin_base_T"), np.nan)
        qt_m = np.where(matched, col("p_model_T") / col("fin_model_T"), np.nan)
    out[..., _S["matched_reliability_base"]] = qt_b
    out[..., _S["matched_reliability_model"]] = qt_m
    out[..., _S["matched_reliability_delta"]] = qt_m - qt_b
    return out


def _as_fraction(value: Any, name: str) -> Fraction:
    frac = exact_fraction(value, name, "(0, 1]")
    if not 0 < frac <= 1:
        raise ValueError(f"`{name}` must be in (0, 1]; got {value!r}.")
    return frac


def _counts_2d(n_samples, n_finished, n_correct, who: str):
    n = np.asarray(n_samples)
    f = np.asarray(n_finished)
    c = np.asarray(n_correct)
    if f.ndim not in (1, 2) or c.shape != f.shape:
        raise ValueError(
            f"`{who}_n_finished` and `{who}_n_correct` must have the same shape, (N,) or (N, n_budgets); "
            f"got {f.shape} and {c.shape}."
        )
    two_d = f.ndim == 2
    f2 = f if two_d else f[:, None]
    c2 = c if two_d else c[:, None]
    if n.ndim != 1 or n.shape[0] != f2.shape[0]:
        raise ValueError(f"`{who}_n_samples` must be 1-D with one entry per problem ({f2.shape[0]}); got shape {n.shape}.")
    columns_f, columns_c = [], []
    for b in range(f2.shape[1]):
        nn, ff, _ = check_counts(n, f2[:, b], correct_name=f"{who}_n_finished")
        _, cc, _ = check_counts(n, c2[:, b], correct_name=f"{who}_n_correct")
        over = cc > ff
        if over.any():
            first = np.flatnonzero(over)[:5].tolist()
            raise ValueError(
                f"`{who}_n_correct` exceeds `{who}_n_finished` (a correct sample within the budget has "
                f"finished) for {int(over.sum())} problems; first indices: {first}"
                + (f" (budget column {b})." if two_d else ".")
            )
        columns_f.append(ff)
        columns_c.append(cc)
    nn = np.asarray(n).astype(np.int64)
    zero = nn == 0
    if zero.any():
        raise ValueError(
            f"`{who}_n_samples` must be >= 1 (pass@1 is undefined without samples) for every problem; "
            f"0 at problems {np.flatnonzero(zero)[:5].tolist()}."
        )
    return nn, np.stack(columns_f, axis=1), np.stack(columns_c, axis=1), two_d


def _per_problem_matrix(nb, fb, cb, nm, fm, cm, matched_fraction: Fraction, robust_fraction: Fraction):
    """Per-problem columns (N, n_budgets * n_columns) and set sizes (n_budgets, ...)."""
    from ._passk import pass_at_k

    n_problems, n_budgets = fb.shape
    x = np.empty((n_problems, n_budgets, _N_COLUMNS))
    nb2, nm2 = nb[:, None], nm[:, None]
    # pass@1 and fin@1 through the core estimator (fin@k is pass@k with c := f, docs/spec.md sec. 6)
    p_b = np.stack([pass_at_k(nb, cb[:, i], 1) for i in range(n_budgets)], axis=1)
    p_m = np.stack([pass_at_k(nm, cm[:, i], 1) for i in range(n_budgets)], axis=1)
    fin_b = np.stack([pass_at_k(nb, fb[:, i], 1) for i in range(n_budgets)], axis=1)
    fin_m = np.stack([pass_at_k(nm, fm[:, i], 1) for i in range(n_budgets)], axis=1)
    in_r = (fb == nb2) & (cb == 0)
    in_m = (fm == nm2) & (cm == 0)
    in_s = ~(in_r | in_m)
    robust_r = in_r & robust_wins(cm, nm2, robust_fraction)
    robust_m = in_m & robust_wins(cb, nb2, robust_fraction)
    lone_m = (cm >= 1) & (cb == 0)
    lone_b = (cb >= 1) & (cm == 0)
    matched = (fb * matched_fraction.denominator >= matched_fraction.numerator * nb2) & (
        fm * matched_fraction.denominator >= matched_fraction.numerator * nm2
    )
    values = {
        "p_base": p_b, "p_model": p_m, "fin_base": fin_b, "fin_model": fin_m,
        "reach_plus": p_m * in_r, "reach_minus": p_b * in_m,
        "fin_base_S": fin_b * in_s, "fin_model_S": fin_m * in_s,
        "p_base_S": p_b * in_s, "p_model_S": p_m * in_s,
        "robust_R": robust_r, "robust_M": robust_m, "lone_model": lone_m, "lone_base": lone_b,
        "matched": matched, "fin_base_T": fin_b * matched, "fin_model_T": fin_m * matched,
        "p_base_T": p_b * matched, "p_model_T": p_m * matched,
        "in_R": in_r, "in_M": in_m, "in_S": in_s,
    }
    for name, value in values.items():
        x[..., _C[name]] = value
    return x.reshape(n_problems, n_budgets * _N_COLUMNS)


# ----------------------------------------------------------------------------------------------
# the steps of decompose_pass_change


def _aligned_counts(base_n_samples, base_n_finished, base_n_correct, model_n_samples, model_n_finished,
                    model_n_correct):
    """Both models' counts as ``(n, f, c)`` of shape ``(N,)``, ``(N, K)``, ``(N, K)``, checked to match.

    Returns ``(base, model, two_d)``; ``two_d`` says whether either was given for several budgets.
    """
    nb, fb, cb, two_d_b = _counts_2d(base_n_samples, base_n_finished, base_n_correct, "base")
    nm, fm, cm, two_d_m = _counts_2d(model_n_samples, model_n_finished, model_n_correct, "model")
    if nb.shape[0] != nm.shape[0] or fb.shape != fm.shape:
        raise ValueError(
            f"base and model must have the same problems (rows) and budgets (columns); got base "
            f"{fb.shape} and model {fm.shape}. Align them by problem id first "
            "(kpass.metrics.decompose_budget_counts does)."
        )
    if fb.shape[0] < 2:
        raise ValueError(
            f"the decomposition's bootstrap intervals need at least 2 problems; got {fb.shape[0]}."
        )
    return (nb, fb, cb), (nm, fm, cm), two_d_b or two_d_m


def _budget_labels(budgets: Sequence[int | None] | None, n_budgets: int) -> tuple[int | None, ...]:
    """The label of each budget column (``None`` for each when no labels were given)."""
    if budgets is None:
        return (None,) * n_budgets
    labels = tuple(budgets)
    if len(labels) != n_budgets:
        raise ValueError(f"`budgets` has {len(labels)} labels for {n_budgets} budget columns.")
    return labels


def _cluster_codes(clusters: ArrayLike | None, n_problems: int) -> tuple[NDArray[np.int64] | None, int | None]:
    """Integer cluster codes of the problems and the number of clusters (``(None, None)`` without clusters)."""
    if clusters is None:
        return None, None
    codes, labels = factorize_labels(clusters, "clusters", n_problems)
    if len(labels) < 2:
        raise ValueError(f"`clusters` has a single cluster ({labels[0]!r}); a cluster bootstrap needs at least 2.")
    return codes, len(labels)


def _linear_methods(linear_method: str | None, clustered: bool) -> tuple[str, str] | None:
    """``(mean_ci method, paired_difference method)`` of the linear terms; ``None``: the own bootstrap."""
    if linear_method == _OWN_BOOTSTRAP:
        return None
    mean_method = linear_method if linear_method in INTERVAL_METHODS else DEFAULT_INTERVAL_METHOD
    paired_method = DEFAULT_PAIRED_METHOD if linear_method is None else linear_method
    return (check_method(mean_method, clustered, methods=INTERVAL_METHODS, paired_methods=PAIRED_INTERVAL_METHODS),
            check_method(paired_method, clustered, paired=True, methods=INTERVAL_METHODS,
                         paired_methods=PAIRED_INTERVAL_METHODS))


def _linear_terms(x: NDArray[np.float64], n_budgets: int, mean_method: str, paired_method: str,
                  **options: Any) -> dict[tuple[str, int], IntervalResult]:
    """pass@1 and fin@1 of each model and delta pass@1 at every budget, keyed by ``(term, budget index)``.

    One term at a time, with the caller's options and seed unchanged: each is exactly what
    mean_ci / paired_difference (kpass report / kpass compare) give for it alone.
    """
    blocks = x.reshape(x.shape[0], n_budgets, _N_COLUMNS)
    linear: dict[tuple[str, int], IntervalResult] = {}
    for b in range(n_budgets):
        for name, column in (("base_pass", "p_base"), ("model_pass", "p_model"),
                             ("base_fin", "fin_base"), ("model_fin", "fin_model")):
            linear[name, b] = mean_ci(blocks[:, b, _C[column]], method=mean_method, **options)
        linear["delta", b] = paired_difference(blocks[:, b, _C["p_model"]], blocks[:, b, _C["p_base"]],
                                               method=paired_method, **options)
    return linear


@dataclasses.dataclass(frozen=True)
class _Fit:
    """What one call's terms are read from: the per-problem matrix (canonical order), its bootstrap
    (``_bootstrap_of_sums``), the linear terms and the options they were computed with."""

    x: NDArray[np.float64]
    boot: Mapping[str, Any]
    linear: Mapping[tuple[str, int], IntervalResult]
    codes: NDArray[np.int64] | None
    n_clusters: int | None
    budget_labels: tuple[int | None, ...]
    method: str
    level: float
    n_resamples: int
    seed: Any
    use_score: bool

    @property
    def n_problems(self) -> int:
        return int(self.x.shape[0])

    def budget_block(self, b: int) -> NDArray[np.float64]:
        """The ``(N, _N_COLUMNS)`` per-problem columns of budget column ``b``."""
        return self.x.reshape(self.n_problems, len(self.budget_labels), _N_COLUMNS)[:, b, :]


def _score_bounds(fit: _Fit, stat: str, b: int, details: dict[str, Any]) -> tuple[float, float]:
    """Score interval of a term that lives on few problems (reach, robust reach, lone wins)."""
    block = fit.budget_block(b)
    details.pop("bias_correction", None)
    details.pop("acceleration", None)
    if stat == "reach":
        details["interval"] = "score: MOVER of scaled Wilson intervals of the R and M parts"
        return _score_interval(block[:, _C["reach_plus"]], block[:, _C["reach_minus"]], fit.level)
    quantile = float(stats.t.ppf(1 - (1 - fit.level) / 2, fit.n_problems - 1))
    _, low, high = _scaled_wilson(block[:, _C[_SCORE_COLUMNS[stat]]], quantile)
    details["interval"] = "score: Wilson interval of a fraction of problems (t quantile, N-1 df)"
    return low, high


def _term(fit: _Fit, stat: str, b: int, degenerate_terms: set[str]) -> IntervalResult:
    """The interval of one term at budget column ``b`` (a zero-width one is added to ``degenerate_terms``)."""
    if (stat, b) in fit.linear:
        return fit.linear[stat, b]
    i = _S[stat]
    estimate = float(fit.boot["estimate"][b, i])
    low = float(fit.boot["low"][b, i])
    high = float(fit.boot["high"][b, i])
    details: dict[str, Any] = {
        "n_resamples": fit.n_resamples,
        "seed": fit.seed,
        "resampling": "clusters" if fit.codes is not None else "problems",
        "paired": True,
        "n_undefined_resamples": int(fit.boot["n_undefined"][b, i]),
        "standard_error_kind": "bootstrap standard deviation",
        "budget": fit.budget_labels[b],
    }
    for key, value in fit.boot["details"].items():
        details[key] = float(value[b, i])
    interval_method = fit.method
    if fit.use_score and stat in _SCORE_STATS:
        low, high = _score_bounds(fit, stat, b, details)
        interval_method = "score"
    if math.isfinite(estimate) and low == high:
        degenerate_terms.add(stat)
        details["degenerate"] = True
    if math.isfinite(estimate) and not low <= estimate <= high:
        details["estimate_outside"] = True
    return IntervalResult(
        estimate=estimate,
        low=low,
        high=high,
        standard_error=float(fit.boot["standard_error"][b, i]),
        confidence_level=fit.level,
        n_problems=fit.n_problems,
        n_clusters=fit.n_clusters,
        method=interval_method,
        details=details,
    )


def _pooled_summary(sums: NDArray[np.float64], n_problems: int) -> dict[str, Any]:
    """Pooled finishing and reliability of the rest ``S`` of one budget (``PassChangeDecomposition.pooled``)."""
    phi_b, phi_m = sums[_C["fin_base_S"]], sums[_C["fin_model_S"]]
    n_rest = int(round(sums[_C["in_S"]]))
    q_b, q_m = _pooled_reliability(np.array(phi_b), np.array(sums[_C["p_base_S"]]), np.array(phi_m),
                                   np.array(sums[_C["p_model_S"]]))
    return {
        "fin_base": float(phi_b / n_rest) if n_rest else math.nan,
        "fin_model": float(phi_m / n_rest) if n_rest else math.nan,
        "q_base": float(q_b) if n_rest else math.nan,
        "q_model": float(q_m) if n_rest else math.nan,
        "q_base_borrowed": bool(n_rest and phi_b == 0),
        "q_model_borrowed": bool(n_rest and phi_m == 0),
        "rest_fraction": n_rest / n_problems,
    }


def _budget_decomposition(fit: _Fit, b: int, attribution: str, matched_fraction: Fraction,
                          degenerate_terms: set[str]) -> PassChangeDecomposition:
    """The decomposition at budget column ``b`` (warns when matched reliability is undefined there)."""
    def term(stat: str) -> IntervalResult:
        return _term(fit, stat, b, degenerate_terms)

    attributions = {name: (term(f"finishing_{name}"), term(f"reliability_{name}")) for name in ATTRIBUTIONS}
    sums = fit.x.sum(axis=0).reshape(len(fit.budget_labels), _N_COLUMNS)[b]
    pooled = _pooled_summary(sums, fit.n_problems)

    def count(column: str) -> int:
        return int(round(sums[_C[column]]))

    if count("matched") == 0:
        warnings.warn(
            f"matched reliability is undefined at budget {fit.budget_labels[b]!r}: no problem where both "
            f"models finished at least {matched_fraction} of their samples; reported as NaN.",
            UndefinedDecompositionWarning,
            stacklevel=3,
        )
    chosen_f, chosen_p = attributions[attribution]
    return PassChangeDecomposition(
        budget=fit.budget_labels[b], attribution=attribution,
        base_pass=term("base_pass"), model_pass=term("model_pass"), delta=term("delta"),
        base_fin=term("base_fin"), model_fin=term("model_fin"),
        finishing=chosen_f, reliability=chosen_p, reach=term("reach"), attributions=attributions,
        interaction=term("interaction"), attribution_spread=term("attribution_spread"),
        robust_reach=term("robust_reach"), robust_reach_mirror=term("robust_reach_mirror"),
        lone_wins_model=term("lone_wins_model"), lone_wins_base=term("lone_wins_base"),
        matched_reliability_base=term("matched_reliability_base"),
        matched_reliability_model=term("matched_reliability_model"),
        matched_reliability_delta=term("matched_reliability_delta"),
        pooled=pooled, n_problems=fit.n_problems, n_clusters=fit.n_clusters,
        n_reached=count("in_R"), n_mirror=count("in_M"), n_rest=count("in_S"), n_matched=count("matched"),
        n_robust_reach=count("robust_R"), n_robust_reach_mirror=count("robust_M"),
        n_lone_wins_model=count("lone_model"), n_lone_wins_base=count("lone_base"),
        method=fit.method, n_resamples=fit.n_resamples, confidence_level=fit.level,
    )


def _warn_degenerate(degenerate_terms: set[str]) -> None:
    if degenerate_terms:
        warnings.warn(
            "bootstrap intervals of zero width (every resample gives the same value, e.g. no problem in "
            f"R or M) for: {', '.join(sorted(degenerate_terms))}. They carry no information about "
            "uncertainty.",
            DegenerateIntervalWarning,
            stacklevel=3,
        )


def decompose_pass_change(
    base_n_samples: ArrayLike,
    base_n_finished: ArrayLike,
    base_n_correct: ArrayLike,
    model_n_samples: ArrayLike,
    model_n_finished: ArrayLike,
    model_n_correct: ArrayLike,
    *,
    budgets: Sequence[int | None] | None = None,
    clusters: ArrayLike | None = None,
    attribution: str = "base",
    method: str = "bootstrap",
    reach_interval: str = "score",
    linear_method: str | None = None,
    confidence_level: float = 0.95,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    rng: int | np.random.Generator | None = None,
    matched_fraction: float | Fraction | str = Fraction(7, 8),
    robust_fraction: float | Fraction | str = Fraction(1, 2),
    max_chunk_elements: int | None = None,
) -> PassChangeDecomposition | tuple[PassChangeDecomposition, ...]:
    r"""Split the change of pass@1 between a base and a model into finishing, reliability and reach.

    .. math::

        \Delta \mathrm{pass@1}(B) = F + P + \mathrm{reach}

    with F, P and reach as in the module docstring (docs/spec.md section 6), for every attribution
    of the cross term, plus robust reach, lone wins, matched reliability and the attribution
    spread, each with a paired cluster-bootstrap interval.

    Parameters
    ----------
    base_n_samples, model_n_samples : array_like of int, shape (N,)
        Samples per problem of each model (ragged allowed; ``>= 1``).
    base_n_finished, base_n_correct, model_n_finished, model_n_correct : array_like of int
        Shape ``(N,)`` for one budget or ``(N, K)`` for ``K`` budgets at once: samples finished
        within the budget, and correct and finished (``c <= f <= n``).
    budgets : sequence of (int or None), optional
        Labels of the ``K`` budget columns (stored in the results).
    clusters : array_like, shape (N,), optional
        Cluster of each problem; the bootstrap then resamples whole clusters.
    attribution : {"base", "reverse", "shapley"}, default: "base"
        Which attribution gives the headline F and P (all three are always computed).
    method : {"bootstrap", "bca"}, default: "bootstrap"
        Percentile or BCa interval from the same resamples.
    reach_interval : {"score", "bootstrap"}, default: "score"
        Interval of reach, robust reach and lone wins, which live on few problems (reach is
        the mean of a variable that is 0 on every problem outside R and M). ``"score"``: a score
        interval (Wilson's for the fractions of problems; for reach, the difference of the
        scaled Wilson intervals of its R and M parts combined by MOVER, see Notes), which holds
        its level when R has a handful of problems; ``"bootstrap"``: the paired bootstrap as for
        the other terms, which under-covers then (85% instead of 95% in the coverage study at
        N = 100). With ``clusters`` the bootstrap is used (the score intervals assume
        independent problems).
    linear_method : str or None, default: None
        Interval of the linear terms (pass@1 and fin@1 of each model, and delta pass@1, a paired
        difference). They are :func:`kpass.metrics.mean_ci` of each column and
        :func:`kpass.metrics.paired_difference` of the two pass@1 columns, called one term at a
        time with this call's ``confidence_level``, ``n_resamples``, ``clusters`` and ``rng``
        unchanged, so that each equals what ``mean_ci`` / ``paired_difference`` (and ``kpass
        report`` / ``kpass compare``) give for it on the same data and seed (``delta`` is then
        a :class:`~kpass.metrics.PairedResult` with its p-value). ``None``: their defaults
        (:data:`~kpass.metrics.DEFAULT_INTERVAL_METHOD` and
        :data:`~kpass.metrics.DEFAULT_PAIRED_METHOD`); a method of
        :data:`~kpass.metrics.INTERVAL_METHODS`: that method for all of them; ``"mover"``: MOVER
        for delta and the default for the others; ``"decomposition"``: the decomposition's own
        bootstrap (``method``) for them too.
    confidence_level : float, default: 0.95
    n_resamples : int, default: 10_000
        Bootstrap resamples (:data:`~kpass.metrics.DEFAULT_N_RESAMPLES`, as every kpass interval).
    rng : int, numpy.random.Generator or None
        Seed or generator of the resampling. An int is handed unchanged to every bootstrap of the
        call (the decomposition's own and each linear term's), so the result is reproducible and
        the linear terms equal ``mean_ci(..., rng=seed)``; ``None`` draws fresh entropy once and
        records it as ``details["seed"]`` of every term, so that the result can be reproduced.
    matched_fraction : number in (0, 1], default: 7/8
        Both models must have finished at least this fraction of their samples for a problem to
        count in matched reliability (compared exactly, in integers).
    robust_fraction : number in (0, 1], default: 1/2
        The model must be correct in at least this fraction of its samples on a problem of R for
        robust reach.
    max_chunk_elements : int, optional
        Bound on the elements of one resample-weight matrix (memory).

    Returns
    -------
    PassChangeDecomposition or tuple of PassChangeDecomposition
        One per budget column (a single result for 1-D inputs).

    Raises
    ------
    ValueError
        Mismatched shapes, ``c > f``, ``f > n``, ``n = 0``, unknown options, ``confidence_level``
        outside (0, 1), ``n_resamples < 2``, a single cluster or missing cluster labels.
    TypeError
        Options of the wrong type (e.g. ``n_resamples=2.5``, ``rng="seed"``).

    Warns
    -----
    UndefinedDecompositionWarning
        Matched reliability with no matched problem (its estimate is NaN).
    DegenerateIntervalWarning
        Terms whose bootstrap distribution has zero width (e.g. reach when no problem is in R
        or M): the interval ``[x, x]`` is what the bootstrap gives, not certainty.
    IntervalMethodWarning
        From the linear terms' :func:`~kpass.metrics.mean_ci` / :func:`~kpass.metrics.paired_difference`
        (a score fallback for values piled up at 0 or 1, fewer than 10 clusters).

    Notes
    -----
    The identity holds for every bootstrap replicate as well as for the estimate, so the
    bootstrap intervals of F, P and reach are those of three parts of one sum.

    Score interval of reach: reach = mean(a) - mean(b) with ``a_j = p_j^model [j in R]`` and
    ``b_j = p_j^base [j in M]``, both in [0, 1] and mostly 0. Each mean gets the score interval of
    the variance function ``V(mu) = kappa mu - mu^2`` (kappa = sum v^2 / sum v; Wilson's interval
    scaled by kappa), with the t quantile for N - 1 df, and the difference is combined by MOVER
    with the sample correlation of a and b (Zou & Donner 2008; Newcombe 1998). The coverage
    study (``scripts/budget_coverage.py``, docs/token-budgets.md) measures it. ``n`` may differ between
    problems and models: each problem counts once (weight ``1/N``), as in pass@1.

    References
    ----------
    .. [1] kpass docs/spec.md, section 6.
    .. [2] Yang (2026), "What Outcome RL Buys".
    .. [3] Efron & Tibshirani (1993), "An Introduction to the Bootstrap", ch. 13-14.
    .. [4] E. B. Wilson, JASA 22(158), 209-212 (1927).
    .. [5] R. G. Newcombe, "Improved confidence intervals for the difference between binomial
       proportions based on paired data", Statistics in Medicine 17(22), 2635-2650 (1998).
    .. [6] G. Y. Zou and A. Donner, "Construction of confidence limits about effect measures: A
       general approach", Statistics in Medicine 27(10), 1693-1702 (2008).

    Examples
    --------
    >>> d = decompose_pass_change([4, 4], [2, 4], [1, 0], [4, 4], [4, 4], [3, 2], rng=0)
    >>> round(d.delta.estimate, 4), round(d.finishing.estimate + d.reliability.estimate + d.reach.estimate, 4)
    (0.5, 0.5)
    """
    check_option(attribution, "attribution", ATTRIBUTIONS)
    check_option(method, "method", _METHODS)
    check_option(reach_interval, "reach_interval", ("score", "bootstrap"))
    if linear_method is not None:
        check_option(linear_method, "linear_method", (*PAIRED_INTERVAL_METHODS, _OWN_BOOTSTRAP))
    level = check_confidence_level(confidence_level)
    n_resamples = check_n_resamples(n_resamples)
    chunk_elements = _DEFAULT_CHUNK_ELEMENTS if max_chunk_elements is None else check_max_chunk(max_chunk_elements)
    rng, seed = resolve_seed(rng)
    matched_frac = _as_fraction(matched_fraction, "matched_fraction")
    robust_frac = _as_fraction(robust_fraction, "robust_fraction")
    (nb, fb, cb), (nm, fm, cm), two_d = _aligned_counts(base_n_samples, base_n_finished, base_n_correct,
                                                        model_n_samples, model_n_finished, model_n_correct)
    n_problems, n_budgets = fb.shape
    budget_labels = _budget_labels(budgets, n_budgets)
    codes, n_clusters = _cluster_codes(clusters, n_problems)
    linear_methods = _linear_methods(linear_method, codes is not None)

    x = _per_problem_matrix(nb, fb, cb, nm, fm, cm, matched_frac, robust_frac)
    # problems in canonical order: no number below depends on the order they were given in
    order = canonical_order(x)
    x = x[order]
    codes = None if codes is None else codes[order]
    boot = bootstrap_of_sums(
        x,
        lambda sums, weight: _statistic(sums, weight, n_budgets),
        codes=codes,
        n_clusters=n_clusters,
        method=method,
        level=level,
        n_resamples=n_resamples,
        rng=rng,
        max_chunk_elements=chunk_elements,
    )
    linear = {} if linear_methods is None else _linear_terms(
        x, n_budgets, *linear_methods, clusters=codes, confidence_level=level, n_resamples=n_resamples, rng=rng)
    fit = _Fit(x=x, boot=boot, linear=linear, codes=codes, n_clusters=n_clusters, budget_labels=budget_labels,
               method=method, level=level, n_resamples=n_resamples, seed=seed,
               use_score=reach_interval == "score" and codes is None)
    degenerate_terms: set[str] = set()
    results = []
    for b in range(n_budgets):  # a plain loop: the warnings' stacklevel counts on this frame
        results.append(_budget_decomposition(fit, b, attribution, matched_frac, degenerate_terms))
    _warn_degenerate(degenerate_terms)
    return tuple(results) if two_d else results[0]

