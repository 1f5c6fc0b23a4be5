"""kpass: honest k-sample metrics (pass@k, pass^k, cons@k, G-Pass@k, CoT-Pass@k, fin@k) with
intervals that treat the problem as the unit, as a pluggy host with readers, specs and a CLI.

The metric core lives in :mod:`kpass.metrics` and is re-exported here (everything in its
``__all__``). The host adds the sample table, metric specs, plugins and reports.

Names load on first use (PEP 562): Inspect imports every installed extension's entry point on
every run, so ``import kpass.adapters.inspect_registry`` must not pull in numpy and scipy for a
run that never uses kpass. ``from kpass import *``, ``kpass.pass_at_k`` and ``dir(kpass)`` work
as with eager imports.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0.dev0"

# public name -> submodule of kpass that defines it
_HOST_NAMES: dict[str, str] = {
    "DataError": "errors", "MetricSpecError": "errors", "PluginConflictError": "errors",
    "PluginLoadError": "errors", "UnknownMetricError": "errors", "UsageError": "errors",
    "hookimpl": "host.hookspecs", "hookspec": "host.hookspecs",
    "Registry": "host.registry", "get_plugin_manager": "host.manager", "get_registry": "host.manager",
    "make_plugin_manager": "host.manager", "reset_plugin_manager": "host.manager",
    "ProblemSet": "data.problems",
    "choose_reader": "host.lookups", "read_samples": "host.lookups", "get_tokenizer": "host.lookups",
    "apply_answer_extractor": "host.lookups", "resolve_answer_extractor": "host.lookups",
    "ANSWER_EXTRACTOR_OPTIONS": "host.extractors",
    "Comparison": "reports.report", "ComparisonRow": "reports.report", "Exclusion": "reports.report", "Report": "reports.report",
    "ReportRow": "reports.report", "compute_comparison": "reports.report", "compute_report": "reports.report",
    "MetricFamily": "host.specs", "MetricSpec": "host.specs", "parse_metric_specs": "host.lookups",
    "Categorical": "data.table", "SampleTable": "data.table", "SCHEMA_COLUMNS": "data.table",
    "format_comparison": "render.formatting", "format_report": "render.formatting",
    "write_atomically": "cli.output",
    "OutputError": "errors", "PluginHookError": "errors",
    "Note": "notes",
    "BoundedPattern": "data.patterns", "bounded_filter_factory": "data.patterns", "check_pattern": "data.patterns",
    "loads_json_strict": "data.validation", "parse_byte_size": "data.validation",
    "IdenticalSamples": "reports.sample_checks", "identical_sample_groups": "reports.sample_checks",
    "parse_reasoning_markers": "data.tokenizers",
}

if TYPE_CHECKING:  # static tools see the eager imports
    from kpass.metrics import *  # noqa: F403

    from kpass.errors import DataError, MetricSpecError, PluginConflictError, PluginLoadError, UnknownMetricError, UsageError
    from kpass.host.hookspecs import hookimpl, hookspec
    from kpass.host.manager import get_plugin_manager, get_registry, make_plugin_manager, reset_plugin_manager
    from kpass.host.registry import Registry
    from kpass.host.extractors import ANSWER_EXTRACTOR_OPTIONS
    from kpass.host.lookups import (apply_answer_extractor, choose_reader, get_tokenizer, parse_metric_specs,
                                    read_samples, resolve_answer_extractor)
    from kpass.data.problems import ProblemSet
    from kpass.reports.report import Comparison, ComparisonRow, Exclusion, Report, ReportRow, compute_comparison, compute_report
    from kpass.host.specs import MetricFamily, MetricSpec
    from kpass.data.table import SCHEMA_COLUMNS, Categorical, SampleTable
    from kpass.render.formatting import format_comparison, format_report
    from kpass.cli.output import write_atomically
    from kpass.data.patterns import BoundedPattern, bounded_filter_factory, check_pattern
    from kpass.data.validation import loads_json_strict, parse_byte_size
    from kpass.errors import OutputError, PluginHookError
    from kpass.notes import Note
    from kpass.reports.sample_checks import IdenticalSamples, identical_sample_groups
    from kpass.data.tokenizers import parse_reasoning_markers


def _public_names() -> list[str]:
    metrics_names = import_module("kpass.metrics").__all__
    return sorted(set(metrics_names) | set(_HOST_NAMES) | {"__version__"})


def __getattr__(name: str) -> Any:
    if name in _HOST_NAMES:
        value = getattr(import_module(f"{__name__}.{_HOST_NAMES[name]}"), name)
    elif name == "__all__":
        value = _public_names()
    elif not name.startswith("_") and name in (metrics := import_module("kpass.metrics")).__all__:
        value = getattr(metrics, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_public_names()))
