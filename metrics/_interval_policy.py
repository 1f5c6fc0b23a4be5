r"""The interval policy on one page: which rule the default intervals use, and every threshold (private module).

The default of :func:`~kpass.metrics.mean_ci` (``method="auto"``) and of
:func:`~kpass.metrics.paired_difference` (``method="mover"``) are not one formula but a choice
among several, made per column from a few facts about the values. :func:`single_default` and
:func:`paired_default` make that choice from a :class:`SingleFacts` / :class:`PairedFacts` record
and return the name of the rule; the engine (:mod:`._interval_engine`, :mod:`._single_score`)
computes the rule's bounds and records its name in ``IntervalResult.rule``. docs/intervals.md
has the table of every rule name, its formula, when it is picked and where its coverage was
measured.

Every threshold of the defaults lives in :class:`IntervalThresholds` (one frozen instance,
:data:`THRESHOLDS`); each field says where its value was measured.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "PAIRED_RULES",
    "SINGLE_RULES",
    "THRESHOLDS",
    "IntervalThresholds",
    "PairedFacts",
    "SingleFacts",
    "differences_default",
    "paired_default",
    "single_default",
]


@dataclass(frozen=True)
class IntervalThresholds:
    """Every threshold of the default intervals, with where its value was measured.

    The coverage study is ``scripts/coverage_study.py`` (main grid, docs/coverage.md) and
    ``scripts/coverage_regimes.py`` (edge regimes, docs/coverage-edges.md,
    docs/coverage-edges-paired.md); the reasons for each rule are in docs/intervals-edges.md.
    """

    few_clusters: int = 10
    """Fewer clusters than this: every cluster-robust interval is unreliable (Cameron & Miller 2015,
    section VI) and the defaults take the few-cluster score interval. At C = 10 the coverage study has
    the default at 94.5-98.5% where ``"clustered-t"`` covers 80.7-94.0% (docs/coverage.md)."""

    problem_score_min_problems: int = 10
    """The fewest independent problems that take the score bound toward the end (rule
    ``score-toward-end``): as many as the clustered score interval needs clusters (:attr:`few_clusters`);
    docs/intervals-edges.md, "Independent problems: the score interval toward the end"."""

    very_near_end_problems: float = 1.5
    """Within this many problems' worth of an end (:math:`N \\min(\\hat p, 1-\\hat p)`), ``score-toward-end``
    keeps the bootstrap-t bound on the end side too where it is the wider. On the study's 180 single-model
    edge cells at N >= 30: thresholds 1, 2, 3 gave 1 / 176 / 3, 0 / 172 / 8, 0 / 159 / 21 cells below 93% /
    in band / above 98%, 1.5 gave 0 / 175 / 5 (docs/intervals-edges.md, same section)."""

    near_end_problems: float = 3.0
    """A mean within this many problems' worth of an end (:math:`n_B \\min(\\hat p, 1-\\hat p)`) is "near
    the end": its spread rests on the few problems off that end (issue #16; the ceiling and floor
    regimes of docs/coverage-edges.md)."""

    near_end_size_factor: float = 2.0
    """Near an end, the single-model interior bound is no tighter than Wilson's with at most this many
    times :math:`n_B`: 1 covered 98.3-99.0% in the floor regime at N = 100, 4 let pass@1 at the ceiling
    fall to 92.2% at N = 100 (docs/coverage-edges.md)."""

    single_degenerate_fraction: float = 0.5
    """A single-model bootstrap-t tail is degenerate when more than this fraction of alpha/2 of the
    resamples are degenerate on its side (MOVER's per-model limits keep 1). With 0.5 no single-model regime
    cell moved by more than 0.7 points and the widest narrowed (clustered pass@1 at the ceiling, N = 200:
    mean width 0.114 -> 0.098); docs/intervals-edges.md."""

    warn_end_share: float = 0.30
    """Single-model reliability warning: a mean within this share of an end of its range that rests on
    :attr:`warn_off_end_problems` to :attr:`warn_max_off_end_problems` problems' worth off that end. Such
    intervals missed 1.94x as often as the others of their cell on the edge cells and 1.70x on the main
    grid (docs/intervals-edges.md, "Warnings")."""

    warn_off_end_problems: float = 3.0
    """Lower end of the warned band, in problems' worth off the end (equal to :attr:`near_end_problems`:
    closer to the end the near-end score bound makes the interval conservative; docs/intervals-edges.md,
    "Warnings")."""

    warn_max_off_end_problems: float = 15.0
    """Upper end of the warned band (docs/intervals-edges.md, "Warnings")."""

    saturated_share: float = 0.5
    """A paired difference is *saturated* when at least this share of the differing problems differ by
    less than :attr:`tiny_difference` (docs/intervals-edges.md, "Paired differences")."""

    tiny_difference: float = 0.05
    """Per-problem differences below this (values in [0, 1]) count as tiny (saturation; the
    tiny-difference warning); docs/intervals-edges.md, "Paired differences: visible, saturated and sparse"."""

    paired_near_end_size_factor: float = 5.0
    """Saturated differences without clusters: a part (gains or losses) within :attr:`near_end_problems`
    of 0 is no more informative than this many times :math:`n_B` problems. 4 put the main grid's paired
    pass@8 of Beta(2, 2), N = 30, n = 16 at 98.6%; 6 let point-mass pass@8 at N = 100 fall to 91.3%
    (docs/intervals-edges.md)."""

    paired_near_end_differing_share: float = 0.75
    """The near-end split bound applies only where fewer than this share of the problems differ: where
    nearly every problem differs it put Beta(2, 2) pass@8 at N = 30 at 99.1%, MOVER alone 94.0%
    (docs/intervals-edges.md)."""

    paired_near_end_contributing: float = 6.0
    """A part near its end resting on at least this many problems (participation ratio) is capped at
    :attr:`paired_near_end_spread_size_factor` :math:`n_B` instead: 204 of the 315 paired edge cells in
    93-98% and 8 below (before 199 and 8); docs/intervals-edges.md, "Near-end split bound: parts spread
    over many problems"."""

    paired_near_end_spread_size_factor: float = 15.0
    """The cap, in units of :math:`n_B`, of a part resting on :attr:`paired_near_end_contributing` or
    more problems (same section of docs/intervals-edges.md)."""

    paired_t_min_clusters: int = 30
    """Unsaturated differences with at least this many clusters (or none) take the paired t interval
    widened to the split score bound; with 10 to 29 clusters MOVER of the models stays (the clustered t
    interval covered 90.7-93.2% in the point-mass regime with 10 clusters; docs/coverage-edges-paired.md)."""

    paired_own_bootstrap_end_share: float = 0.1
    """Saturated differences without clusters take their own bootstrap-t where both models' means lie
    within this share of the same end: with 0.1, 0.15 or 0.2, 200 of the 315 paired edge cells in 93-98%
    and 8 below (MOVER everywhere: 194 and 8); docs/intervals-edges.md."""

    mover_near_end_size_factor: float = 12.0
    """MOVER's per-model limits with :attr:`paired_t_min_clusters` or more clusters: near an end the
    interior leg is no shorter than Wilson's with at most this many times :math:`n_B`. On the 51
    clustered paired edge cells, caps 2-40 gave 0/21/30 ... 27/23/1 below / in band / above; 12 gave
    0 / 30 / 21 (docs/intervals-edges.md, "MOVER's limits with 30 or more clusters")."""

    sparse_differences: int = 20
    """A paired difference carried by fewer problems than this (and under a quarter) is flagged for every
    method but the default (the t interval covered 60.7-92.2% for sparse paired gains;
    docs/intervals-edges.md)."""

    warn_tiny_difference_share: float = 0.5
    """The paired default warns when at least this share of :math:`\\sum_j |d_j|` comes from tiny
    differences: such intervals missed 2.8x as often as their cell (0.3: 2.0x, 0.7: 3.4x);
    docs/intervals-edges.md, "Which paired intervals warn"."""

    warn_few_differing_problems: int = 1
    """The paired default warns where the models differ on at most this many problems: one differing
    problem missed 3.1x as often, at most two 2.0x (same section of docs/intervals-edges.md)."""


#: The thresholds every default interval uses.
THRESHOLDS = IntervalThresholds()


# ----------------------------------------------------------------------------------------------
# single model
# ----------------------------------------------------------------------------------------------

#: Rule names of :func:`single_default` (docs/intervals.md, "Rules").
SINGLE_RULES: tuple[str, ...] = ("wilson-deff", "few-cluster-score", "clustered-score", "score-toward-end",
                                 "bootstrap-t-arcsine", "bootstrap-t", "constant")


@dataclass(frozen=True)
class SingleFacts:
    """What :func:`single_default` needs to know about one column of per-problem values.

    Attributes
    ----------
    n_problems : int
        Number of problems N.
    n_clusters : int or None
        Number of clusters, ``None`` without clusters.
    known_range : bool
        The values lie in a known finite range (``[0, 1]`` or an explicit ``bounds``).
    at_range_ends : bool
        Every value is at an end of that range (0/1 values; also all at the same end).
    constant : bool
        Every value is the same.
    """

    n_problems: int
    n_clusters: int | None
    known_range: bool
    at_range_ends: bool
    constant: bool


def single_default(facts: SingleFacts, thresholds: IntervalThresholds = THRESHOLDS) -> str:
    """The rule of the single-model default (``method="auto"``) for one column.

    Returns one of :data:`SINGLE_RULES`: ``"wilson-deff"`` for 0/1 values, ``"constant"`` for other
    constant values, ``"bootstrap-t"`` (raw scale) without a known range, ``"few-cluster-score"`` with
    fewer than :attr:`IntervalThresholds.few_clusters` clusters, ``"clustered-score"`` with more,
    ``"score-toward-end"`` with :attr:`IntervalThresholds.problem_score_min_problems` or more independent
    problems and ``"bootstrap-t-arcsine"`` below. The near-end rule and the score replacement of a
    degenerate bootstrap-t tail modify single bounds of the last three (``details["bound_methods"]``).

    Examples
    --------
    >>> single_default(SingleFacts(n_problems=30, n_clusters=None, known_range=True, at_range_ends=False, constant=False))
    'score-toward-end'
    """
    if facts.known_range and facts.at_range_ends:
        return "wilson-deff"
    if facts.constant:
        return "constant"
    if not facts.known_range:
        return "bootstrap-t"
    if facts.n_clusters is not None:
        return "few-cluster-score" if facts.n_clusters < thresholds.few_clusters else "clustered-score"
    if facts.n_problems >= thresholds.problem_score_min_problems:
        return "score-toward-end"
    return "bootstrap-t-arcsine"


# ----------------------------------------------------------------------------------------------
# paired difference
# ----------------------------------------------------------------------------------------------

#: Rule names of :func:`paired_default` and :func:`differences_default` (docs/intervals.md, "Rules").
PAIRED_RULES: tuple[str, ...] = ("matched-pairs", "no-difference-bound", "mover-score", "mover-clustered-score",
                                 "bootstrap-t-differences", "t-split-score", "mover", "constant", "bootstrap-t")


@dataclass(frozen=True)
class PairedFacts:
    """What :func:`paired_default` needs to know about one pair of columns (model a, model b).

    Attributes
    ----------
    n_problems : int
        Number of problems N.
    n_clusters : int or None
        Number of clusters, ``None`` without clusters.
    known_range : bool
        Both models' values lie in [0, 1].
    both_at_range_ends : bool
        Both models' values are 0/1 values.
    constant_difference : bool
        Every difference :math:`d_j = a_j - b_j` is the same (then not the matched-pairs interval; the
        engine pins such an interval to the difference, or gives two different models that agree on every
        problem the ``"no-difference-bound"``, and keeps the rule's interval for one model all at the top
        and the other all at the bottom).
    saturated : bool
        Half or more of the differing problems differ by less than :attr:`IntervalThresholds.tiny_difference`.
    within_share_of_same_end : bool
        Both means lie within :attr:`IntervalThresholds.paired_own_bootstrap_end_share` of the same end.
    near_same_end : bool
        Both means lie within :attr:`IntervalThresholds.near_end_problems` problems' worth of the same end.
    model_near_end : bool
        Either model's limits are its clustered score interval (30 or more clusters, a model near an end,
        neither constant nor 0/1 values).
    """

    n_problems: int
    n_clusters: int | None
    known_range: bool
    both_at_range_ends: bool
    constant_difference: bool
    saturated: bool
    within_share_of_same_end: bool
    near_same_end: bool
    model_near_end: bool


def paired_default(facts: PairedFacts, thresholds: IntervalThresholds = THRESHOLDS) -> str:
    """The rule of the paired default (``method="mover"``) for one pair of columns.

    Returns one of :data:`PAIRED_RULES` but ``"constant"``, ``"no-difference-bound"`` and
    ``"bootstrap-t"`` (which the engine names for a constant difference, and
    :func:`differences_default` for ``method="auto"``). The order is the precedence: ``"mover"`` without
    a known range; ``"mover-score"`` (MOVER of the two
    models' score intervals) with few clusters; ``"matched-pairs"`` (Bonett & Price) for 0/1 values of
    both models; ``"bootstrap-t-differences"`` for saturated differences without clusters of two models
    within 10% of the same end; ``"t-split-score"`` for unsaturated differences without clusters or with
    30 or more clusters, and with 10 to 29 clusters of two models near the same end; otherwise MOVER of
    the models (``"mover-clustered-score"`` when their limits are clustered score intervals). Every
    bound of the last four is widened to the split score interval of the gains and losses.

    Examples
    --------
    >>> facts = PairedFacts(n_problems=30, n_clusters=None, known_range=True, both_at_range_ends=False,
    ...                     constant_difference=False, saturated=False,
    ...                     within_share_of_same_end=False, near_same_end=False, model_near_end=False)
    >>> paired_default(facts)
    't-split-score'
    """
    if not facts.known_range:
        return "mover"
    if facts.n_clusters is not None and facts.n_clusters < thresholds.few_clusters:
        return "mover-score"
    if facts.both_at_range_ends and not facts.constant_difference:
        return "matched-pairs"
    many_or_none = facts.n_clusters is None or facts.n_clusters >= thresholds.paired_t_min_clusters
    if facts.saturated and facts.n_clusters is None and facts.within_share_of_same_end:
        return "bootstrap-t-differences"
    if not facts.saturated and (many_or_none or facts.near_same_end):
        return "t-split-score"
    return "mover-clustered-score" if facts.model_near_end else "mover"


def differences_default(*, n_clusters: int | None, known_range: bool, constant: bool,
                        thresholds: IntervalThresholds = THRESHOLDS) -> str:
    """The rule of :func:`~kpass.metrics.paired_difference` with ``method="auto"``: the single-model
    default on the differences, whose few-cluster and degenerate-tail fallback is MOVER of the two models'
    score intervals (``"mover-score"``); ``"bootstrap-t"`` otherwise, ``"constant"`` for a constant difference."""
    if constant:
        return "constant"
    if known_range and n_clusters is not None and n_clusters < thresholds.few_clusters:
        return "mover-score"
    return "bootstrap-t"
