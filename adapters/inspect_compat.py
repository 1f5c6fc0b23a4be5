"""The one place where kpass touches Inspect AI internals (framework-side module).

kpass uses Inspect's public API (``inspect_ai.scorer``, ``inspect_ai.util.registry_info`` and
``registry_create``, ``inspect_ai.hooks``) everywhere but here. One thing has no public API in
Inspect: the metrics a *scorer* carries (and a second one, below). The ``@scorer(metrics=...)`` decorator fixes them when a
scorer factory is defined, but :func:`~kpass.adapters.inspect_scorers.kpass_scorer` wraps any
scorer and by default keeps the wrapped scorer's metrics, so it must read them from the wrapped
scorer and give them to the wrapper. Inspect keeps them in the scorer's registry metadata under
the key ``inspect_ai.scorer._scorer.SCORER_METRICS`` and reads them with ``scorer_metrics``.

The second: Inspect records a scorer in a log under its *unqualified* registry name
(``as_scorer_spec`` uses ``registry_unqualified_name``), so a log of ``kpass/kpass_scorer`` says
``kpass_scorer``, a name ``inspect score`` cannot look up. :func:`register_scorer_builder`
adds that bare name to Inspect's registry (``inspect_ai._util.registry.registry_add``), so that
``inspect score LOG`` re-creates the scorer without the task file.

If a future Inspect release moves them, importing this module fails with an error naming the
versions kpass supports, instead of a bare ``ImportError`` from deep inside kpass.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SUPPORTED_INSPECT", "metric_params", "register_scorer_builder", "scorer_metrics", "set_scorer_metrics"]

#: Inspect versions kpass's adapter supports (pyproject's ``inspect`` extra; tested with the
#: version pinned in constraints.txt).
SUPPORTED_INSPECT = "inspect-ai >= 0.3.100, < 0.4, tested with 0.3.285"


def _installed_version() -> str:
    try:
        from importlib.metadata import version

        return version("inspect-ai")
    except Exception:  # noqa: BLE001 - only for the message
        return "unknown"


try:
    from inspect_ai.scorer._scorer import SCORER_METRICS as _SCORER_METRICS
    from inspect_ai.scorer._scorer import scorer_metrics as _scorer_metrics
except ImportError as _error:  # pragma: no cover - only with an unsupported Inspect
    raise ImportError(
        f"kpass's Inspect adapter needs inspect_ai.scorer._scorer.SCORER_METRICS and scorer_metrics "
        f"(how Inspect stores a scorer's metrics), which the installed inspect-ai {_installed_version()} "
        f"does not have; kpass supports {SUPPORTED_INSPECT}. Install a supported version "
        f"(pip install 'inspect-ai==0.3.285') or report the incompatibility to kpass."
    ) from _error


def scorer_metrics(scorer: Any) -> Any:
    """The metrics a scorer carries (a list, or a dict of lists), as Inspect reads them."""
    return _scorer_metrics(scorer)


def set_scorer_metrics(scorer: Any, metrics: Any) -> Any:
    """Give ``scorer`` (an object created by an ``@scorer`` factory) these metrics; returns it."""
    from inspect_ai.util import registry_info

    registry_info(scorer).metadata[_SCORER_METRICS] = metrics
    return scorer


def register_scorer_builder(builder: Any, name: str) -> None:
    """Register ``builder`` as the scorer ``kpass/<name>`` and as the bare ``name``.

    Inspect creates a registered scorer by calling the registry entry with the recorded
    options, and the scorer's metrics are those its ``@scorer`` decorator fixed. kpass's
    wrappers carry the metrics given at run time (default: the wrapped scorer's), so the entry
    must be a builder that sets them (:func:`set_scorer_metrics`). The scorers it creates keep
    the registry name ``kpass/<name>`` of their ``@scorer`` factory. The bare ``name`` is what
    Inspect writes into a log, so ``inspect score LOG`` finds it.
    """
    import functools

    from inspect_ai._util.registry import RegistryInfo, registry_add

    for registered in (f"kpass/{name}", name):
        @functools.wraps(builder)
        def entry(*args: Any, **kwargs: Any) -> Any:
            return builder(*args, **kwargs)

        registry_add(entry, RegistryInfo(type="scorer", name=registered))


def metric_params(metric: Any) -> dict[str, Any] | None:
    """The live parameter dict of a registered metric object (what ``registry_params`` returns
    and Inspect copies into each ``EvalMetric.params`` after calling the metric), or None."""
    from inspect_ai._util.registry import registry_params

    try:
        params = registry_params(metric)
    except ValueError:
        return None
    return params if isinstance(params, dict) else None
