"""The one place where kpass touches Inspect AI internals (framework-side module).

kpass uses Inspect's public API (``inspect_ai.scorer``, ``inspect_ai.util.registry_info`` and
``registry_create``, ``inspect_ai.hooks``) everywhere but here. One thing has no public API in
Inspect: the metrics a *scorer* carries. The ``@scorer(metrics=...)`` decorator fixes them when a
scorer factory is defined, but :func:`~kpass.adapters.inspect_scorers.kpass_scorer` wraps any
scorer and by default keeps the wrapped scorer's metrics, so it must read them from the wrapped
scorer and give them to the wrapper. Inspect keeps them in the scorer's registry metadata under
the key ``inspect_ai.scorer._scorer.SCORER_METRICS`` and reads them with ``scorer_metrics``.

If a future Inspect release moves them, importing this module fails with an error naming the
versions kpass supports, instead of a bare ``ImportError`` from deep inside kpass.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SUPPORTED_INSPECT", "scorer_metrics", "set_scorer_metrics"]

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
