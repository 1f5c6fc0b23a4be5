"""kpass: honest k-sample metrics (pass@k, pass^k, cons@k, G-Pass@k, CoT-Pass@k, fin@k) with
intervals that treat the problem as the unit, as a pluggy host with readers, specs and a CLI.

The metric core lives in :mod:`kpass.metrics` and is re-exported here (everything in its
``__all__``). The host adds the sample table, metric specs, plugins and reports.
"""

from kpass.metrics import *  # noqa: F401,F403  (the core's public surface, re-exported)
from kpass.metrics import __all__ as _metrics_all

from .errors import DataError, MetricSpecError, PluginConflictError, PluginLoadError, UnknownMetricError, UsageError
from .hookspecs import hookimpl, hookspec
from .manager import Registry, get_plugin_manager, get_registry, make_plugin_manager, reset_plugin_manager
from .problems import ProblemSet
from .readers import choose_reader, read_samples
from .report import (
    Comparison,
    ComparisonRow,
    Exclusion,
    Report,
    ReportRow,
    compute_comparison,
    compute_report,
)
from .specs import MetricFamily, MetricSpec, parse_metric_specs
from .table import Categorical, SampleTable

__version__ = "0.1.0.dev0"

_host_all = [
    "Categorical", "Comparison", "ComparisonRow", "DataError", "Exclusion", "MetricFamily", "MetricSpec",
    "MetricSpecError", "PluginConflictError", "PluginLoadError", "ProblemSet", "Registry", "Report",
    "ReportRow", "SampleTable", "UnknownMetricError", "UsageError", "choose_reader", "compute_comparison", "compute_report", "get_plugin_manager",
    "get_registry", "hookimpl", "hookspec", "make_plugin_manager", "parse_metric_specs", "read_samples",
    "reset_plugin_manager",
]

__all__ = sorted(set(_metrics_all) | set(_host_all) | {"__version__"})
