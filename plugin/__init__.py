"""kpass: honest k-sample metrics (pass@k, pass^k, cons@k, G-Pass@k, CoT-Pass@k, fin@k) with
intervals that treat the problem as the unit, as a pluggy host with readers, specs and a CLI.

The metric core lives in :mod:`kpass.metrics` and is re-exported here (everything in its
``__all__``). The host adds the sample table, metric specs, plugins and reports. ``__all__`` below
is the whole public surface.

Names load on first use (PEP 562): Inspect imports every installed extension's entry point on
every run, so ``import kpass.adapters.inspect_registry`` must not pull in numpy and scipy for a
run that never uses kpass. ``from kpass import *``, ``kpass.pass_at_k`` and ``dir(kpass)`` work
as with eager imports.
"""
# ruff: noqa: F405  (the metric core's names in __all__ come from kpass.metrics, bound on first use)

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0.dev0"

#: The public names, written out: the host's, then the metric core's (exactly ``kpass.metrics.__all__``,
#: checked by tests/packaging/test_vocabulary.py). Helpers the adapters share with the host are public
#: in the module that owns them (e.g. ``kpass.data.validation.loads_json_strict``), not here.
__all__ = [
    "__version__",
    # the host: sample tables, readers, specs, plugins, reports
    "Categorical", "Comparison", "ComparisonRow", "DataError", "Exclusion", "MetricFamily", "MetricSpec",
    "MetricSpecError", "Note", "OutputError", "PluginConflictError", "PluginHookError", "PluginLoadError", "ProblemSet",
    "Registry", "Report", "ReportRow", "SCHEMA_COLUMNS", "SampleTable", "UnknownMetricError", "UsageError",
    "apply_answer_extractor", "choose_reader", "compute_comparison", "compute_report", "format_comparison",
    "format_report", "get_plugin_manager", "get_registry", "get_tokenizer", "hookimpl", "hookspec",
    "make_plugin_manager", "parse_metric_specs", "read_samples", "reset_plugin_manager",
    "resolve_answer_extractor",
    # the metric core, re-exported from kpass.metrics
    "ATTRIBUTIONS", "BudgetCounts", "BudgetCurvePoint", "CoverageShift", "Crossover", "CrossoverResult",
    "DEFAULT_EXTRAPOLATION_RESAMPLES", "DEFAULT_INTERVAL_METHOD", "DEFAULT_N_RESAMPLES",
    "DEFAULT_PAIRED_METHOD", "DegenerateIntervalWarning", "DifficultyFit", "ExtrapolationResult",
    "FEW_CLUSTERS", "FewDifferencesWarning", "INTERVAL_METHODS", "InconsistentAnswersError",
    "IntervalMethodWarning", "IntervalResult", "KpassWarning", "MeaninglessMetricWarning",
    "PAIRED_INTERVAL_METHODS", "PairedResult", "PassChangeDecomposition", "PowerInputs", "RankIntervals",
    "SampleCounts", "SelectionBias", "TIE_TOLERANCE", "TinyDifferencesWarning", "UndefinedBudgetMetricWarning",
    "UndefinedDecompositionWarning", "best_within_compute", "biased_plugin_pass_at_k", "bootstrap_weights",
    "budget_counts", "budget_curve", "canonical_problem_keys", "check_interval_options",
    "class_counts_from_answers", "class_counts_from_codes", "cons_at_k", "cot_pass_at_k", "count_cot_correct",
    "counts_from_matrix", "decompose_budget_counts", "decompose_pass_change", "design_effect",
    "extrapolate_pass_at_k", "few_clusters_note", "fin_at_k", "first_k_majority_vote", "fit_difficulty",
    "g_pass_at_k", "holm_adjust", "icc", "mean_ci", "mean_ci_columns", "mg_pass_at_k",
    "minimum_detectable_effect", "paired_difference", "paired_difference_columns", "pareto_frontier",
    "pass_at_k", "pass_at_k_crossover", "pass_hat_k", "power_inputs_from_pilot", "rank_intervals",
    "reconcile_rank_intervals", "required_problems", "selection_inflation", "wilson_interval",
]

# public name of the host -> submodule of kpass that defines it
_HOST_NAMES: dict[str, str] = {
    "DataError": "errors", "MetricSpecError": "errors", "PluginConflictError": "errors",
    "PluginLoadError": "errors", "UnknownMetricError": "errors", "UsageError": "errors",
    "OutputError": "errors", "PluginHookError": "errors",
    "hookimpl": "host.hookspecs", "hookspec": "host.hookspecs",
    "Registry": "host.registry", "get_plugin_manager": "host.manager", "get_registry": "host.manager",
    "make_plugin_manager": "host.manager", "reset_plugin_manager": "host.manager",
    "ProblemSet": "data.problems",
    "choose_reader": "host.lookups", "read_samples": "host.lookups", "get_tokenizer": "host.lookups",
    "apply_answer_extractor": "host.lookups", "resolve_answer_extractor": "host.lookups",
    "Comparison": "reports.compare", "ComparisonRow": "reports.compare", "Exclusion": "reports.report", "Report": "reports.report",
    "ReportRow": "reports.report", "compute_comparison": "reports.compare", "compute_report": "reports.report",
    "MetricFamily": "host.specs", "MetricSpec": "host.specs", "parse_metric_specs": "host.lookups",
    "Categorical": "data.table", "SampleTable": "data.table", "SCHEMA_COLUMNS": "data.table",
    "format_comparison": "render.formatting", "format_report": "render.formatting",
    "Note": "notes",
}

if TYPE_CHECKING:  # static tools see the eager imports
    from kpass.metrics import *  # noqa: F403

    from kpass.errors import DataError, MetricSpecError, PluginConflictError, PluginLoadError, UnknownMetricError, UsageError
    from kpass.host.hookspecs import hookimpl, hookspec
    from kpass.host.manager import get_plugin_manager, get_registry, make_plugin_manager, reset_plugin_manager
    from kpass.host.registry import Registry
    from kpass.host.lookups import (apply_answer_extractor, choose_reader, get_tokenizer, parse_metric_specs,
                                    read_samples, resolve_answer_extractor)
    from kpass.data.problems import ProblemSet
    from kpass.reports.compare import Comparison, ComparisonRow, compute_comparison
    from kpass.reports.report import Exclusion, Report, ReportRow, compute_report
    from kpass.host.specs import MetricFamily, MetricSpec
    from kpass.data.table import SCHEMA_COLUMNS, Categorical, SampleTable
    from kpass.render.formatting import format_comparison, format_report
    from kpass.errors import OutputError, PluginHookError
    from kpass.notes import Note


def __getattr__(name: str) -> Any:
    if name in _HOST_NAMES:
        value = getattr(import_module(f"{__name__}.{_HOST_NAMES[name]}"), name)
    elif not name.startswith("_") and name in __all__:
        value = getattr(import_module("kpass.metrics"), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
