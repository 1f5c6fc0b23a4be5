"""kpass metric core: exact, vectorized estimators and intervals on arrays of counts.

Every estimator here is higher-is-better. Nothing in this package does I/O or imports an
evaluation framework; the public surface is ``__all__`` (re-exported from :mod:`kpass`).
"""

# --- core estimators (pass@k family, cons@k, CoT-Pass@k, fin@k) ---
from ._budget import fin_at_k
from ._cot import cot_pass_at_k, count_cot_correct
from ._passk import (
    MeaninglessMetricWarning,
    biased_plugin_pass_at_k,
    g_pass_at_k,
    mg_pass_at_k,
    pass_at_k,
    pass_hat_k,
)
from ._samples import SampleCounts, counts_from_matrix
# --- end core estimators ---

# --- consensus ---
from ._consensus import (
    InconsistentAnswersError,
    class_counts_from_answers,
    class_counts_from_codes,
    cons_at_k,
    first_k_majority_vote,
)
# --- end consensus ---

# --- intervals, ranks and power ---
from ._intervals import (
    DEFAULT_INTERVAL_METHOD,
    DEFAULT_N_RESAMPLES,
    DEFAULT_PAIRED_METHOD,
    FEW_CLUSTERS,
    INTERVAL_METHODS,
    PAIRED_INTERVAL_METHODS,
    bootstrap_weights,
    few_clusters_note,
    mean_ci,
    mean_ci_columns,
    paired_difference,
    paired_difference_columns,
    wilson_interval,
)
from ._options import check_interval_options
from ._power import (
    design_effect,
    icc,
    minimum_detectable_effect,
    power_inputs_from_pilot,
    required_problems,
)
from ._ranks import (
    TIE_TOLERANCE,
    RankIntervals,
    canonical_problem_keys,
    holm_adjust,
    rank_intervals,
    reconcile_rank_intervals,
)
from ._result import IntervalResult, PairedResult, PowerInputs
# --- end intervals, ranks and power ---

# --- warnings ---
from ._warnings import (
    DegenerateIntervalWarning,
    FewDifferencesWarning,
    IntervalMethodWarning,
    KpassWarning,
    TinyDifferencesWarning,
)
# --- end warnings ---

# --- token budgets ---
from ._decomposition import (
    ATTRIBUTIONS,
    PassChangeDecomposition,
    UndefinedDecompositionWarning,
    decompose_pass_change,
)
from ._decomposition_budget import decompose_budget_counts
from ._token_budget import (
    BudgetCounts,
    BudgetCurvePoint,
    UndefinedBudgetMetricWarning,
    budget_counts,
    budget_curve,
)
# --- end token budgets ---

# --- analyses: crossover, extrapolation, equal compute, selection bias ---
from ._crossover import CoverageShift, Crossover, CrossoverResult, pass_at_k_crossover
from ._extrapolation import (
    DEFAULT_EXTRAPOLATION_RESAMPLES,
    DifficultyFit,
    ExtrapolationResult,
    extrapolate_pass_at_k,
    fit_difficulty,
)
from ._frontier import best_within_compute, pareto_frontier
from ._selection import SelectionBias, selection_inflation
# --- end analyses ---

__all__: list[str] = sorted(
    name for name in dir() if not name.startswith("_")
)
