"""The pluggy plugin manager and the registries built from its hooks.

:func:`get_plugin_manager` returns one lazily created manager: hook specs added, the ``kpass``
entry-point group loaded (filtered by ``KPASS_LOAD_PLUGINS``), and :mod:`kpass.host.builtin` registered
last through the same hooks as any third-party plugin. :func:`make_plugin_manager` builds a fresh
one (tests use it so that no state leaks between them). :func:`builtin_registry` is what the
built-in plugin alone registers, with no entry point loaded: the built-in metric specs parse
against it (:func:`kpass.parse_metric_specs`) without importing any plugin, kpass's own adapters
included; a plugin loads when a look-up needs more (a plugin's metric family, a reader).

``KPASS_LOAD_PLUGINS`` pins which entry-point plugins load: a comma-separated list of entry-point
names or distribution names (``KPASS_LOAD_PLUGINS=inspect_ai,kpass-example``). Set but empty, it
loads none; unset, it loads all. The built-ins always load.
"""

from __future__ import annotations

import importlib.metadata
import os
import threading
from collections.abc import Callable
from typing import Any

import pluggy

from kpass.errors import PluginConflictError, PluginHookError, PluginLoadError, PluginTypeError
from kpass.host import builtin, hookspecs
from kpass.host.hookspecs import BUILTIN_PLUGIN_NAME
from kpass.host.registry import Registry

__all__ = [
    "ENTRY_POINT_GROUP",
    "Registry",
    "builtin_registry",
    "get_plugin_manager",
    "get_registry",
    "make_plugin_manager",
    "reset_plugin_manager",
]

ENTRY_POINT_GROUP = "kpass"
_ENV_VAR = "KPASS_LOAD_PLUGINS"

_lock = threading.Lock()
_default_manager: pluggy.PluginManager | None = None
_registry_cache: dict[int, tuple[tuple, "Registry"]] = {}
_metric_registry_cache: dict[int, tuple[tuple, "Registry"]] = {}
_builtin_registry: Registry | None = None
#: What :mod:`kpass.host.builtin` registers, per hook, asked once per process: every registry
#: takes the same objects (families, readers and factories hold no state).
_builtin_registrations: dict[str, list[tuple[str, Any]]] = {}


def _builtin_entries(hook_name: str, function: Callable[..., Any]) -> list[tuple[str, Any]]:
    """The ``(name, object)`` pairs the built-in plugin's ``hook_name`` registers (its hook called once)."""
    entries = _builtin_registrations.get(hook_name)
    if entries is None:
        made: list[tuple[str, Any]] = []
        function(lambda name, obj, *_: made.append((name, obj)))
        entries = _builtin_registrations.setdefault(hook_name, made)
    return entries


def _pinned_plugins() -> set[str] | None:
    value = os.environ.get(_ENV_VAR)
    if value is None:
        return None
    return {part.strip() for part in value.split(",") if part.strip()}


def _describe(ep: importlib.metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    where = f" from distribution '{dist.name} {dist.version}'" if dist is not None else ""
    return f"plugin '{ep.name}' (entry point '{ep.name} = {ep.value}'{where})"


def _load_entry_points(pm: pluggy.PluginManager) -> None:
    pinned = _pinned_plugins()
    entry_points = list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))
    seen_names: set[str] = set()
    unique = []
    for ep in entry_points:  # one distribution may be visible twice on sys.path
        if ep.name in seen_names:
            continue
        seen_names.add(ep.name)
        unique.append(ep)
    if pinned is not None:
        known = {ep.name for ep in unique} | {
            ep.dist.name for ep in unique if ep.dist is not None
        }
        missing = sorted(pinned - known)
        if missing:
            raise PluginLoadError(
                f"{_ENV_VAR} names {', '.join(map(repr, missing))}, which no installed kpass plugin "
                f"provides; installed: {', '.join(sorted(known)) or 'none'}."
            )
    for ep in unique:
        dist = getattr(ep, "dist", None)
        if pinned is not None and ep.name not in pinned and (dist is None or dist.name not in pinned):
            continue
        if pm.get_plugin(ep.name) is not None or pm.is_blocked(ep.name):
            continue
        try:
            plugin = ep.load()
        except Exception as exc:
            raise PluginLoadError(
                f"kpass {_describe(ep)} failed to import: {type(exc).__name__}: {exc}. Fix or "
                f"uninstall it, or set {_ENV_VAR} to the plugins you want to load."
            ) from exc
        try:
            pm.register(plugin, name=ep.name)
        except Exception as exc:
            raise PluginLoadError(
                f"kpass {_describe(ep)} could not be registered: {type(exc).__name__}: {exc}"
            ) from exc


def make_plugin_manager(*, load_entry_points: bool = True, builtins: bool = True) -> pluggy.PluginManager:
    """Build a new plugin manager.

    Parameters
    ----------
    load_entry_points : bool, default: True
        Load the ``kpass`` entry-point group (respecting ``KPASS_LOAD_PLUGINS``).
    builtins : bool, default: True
        Register :mod:`kpass.host.builtin` (the built-in metric families and readers).

    Raises
    ------
    PluginLoadError
        When a plugin fails to import, naming the plugin and its distribution.
    """
    pm = pluggy.PluginManager(ENTRY_POINT_GROUP)
    pm.add_hookspecs(hookspecs)
    if load_entry_points:
        _load_entry_points(pm)
    if builtins:
        pm.register(builtin, name=BUILTIN_PLUGIN_NAME)
    return pm


def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager, created on first use."""
    global _default_manager
    with _lock:
        if _default_manager is None:
            _default_manager = make_plugin_manager()
        return _default_manager


def builtin_registry() -> Registry:
    """What :mod:`kpass.host.builtin` registers, with no entry point loaded (built once).

    A name it holds means the same in every registry: two plugins that register one name (or one
    metric-spec prefix) are refused (:func:`get_registry`), so a built-in spec parses the same
    here as against every plugin, without importing any.
    """
    global _builtin_registry
    with _lock:
        if _builtin_registry is None:
            _builtin_registry = _build_registry(make_plugin_manager(load_entry_points=False))
        return _builtin_registry


def reset_plugin_manager() -> None:
    """Forget the process-wide manager and every registry built from it, the built-in plugin's
    registrations included (the next :func:`get_plugin_manager` loads plugins again)."""
    global _default_manager, _builtin_registry
    with _lock:
        _default_manager = None
        _builtin_registry = None
        _registry_cache.clear()
        _metric_registry_cache.clear()
        _builtin_registrations.clear()


def _call_each(pm: pluggy.PluginManager, hook_name: str, kind: str,
               check: Callable[[str, Any, str], None] | None,
               owners: dict[tuple[str, str], str]) -> dict[str, Any]:
    entries: dict[str, Any] = {}
    hook = getattr(pm.hook, hook_name)
    # get_hookimpls() is ordered first-registered first; call them in that order and attribute
    # every name to the plugin whose implementation registered it.
    for impl in hook.get_hookimpls():
        if getattr(impl, "hookwrapper", False) or getattr(impl, "wrapper", False):
            continue
        plugin_name = impl.plugin_name

        def register(name: str, obj: Any, *_, _plugin: str = plugin_name) -> None:
            if not isinstance(name, str) or not name:
                raise TypeError(
                    f"kpass plugin '{_plugin}' registered a {kind} with name {name!r}; names are "
                    "non-empty strings."
                )
            if name in entries:
                raise PluginConflictError(
                    f"{kind} name '{name}' is registered by two plugins: "
                    f"'{owners[(kind, name)]}' and '{_plugin}'. Uninstall one of them or pin the "
                    f"plugins to load with {_ENV_VAR}."
                )
            if check is not None:
                try:
                    check(name, obj, _plugin)
                except Exception as exc:
                    exc.kpass_names_the_plugin = True  # type: ignore[attr-defined]  # the message does
                    raise
            entries[name] = obj
            owners[(kind, name)] = _plugin

        arguments = {"register": register}
        try:
            if impl.plugin is builtin:  # the same objects in every registry
                for name, obj in _builtin_entries(hook_name, impl.function):
                    register(name, obj)
            else:
                impl.function(*[arguments[arg] for arg in impl.argnames])
        except PluginLoadError:
            raise
        except Exception as exc:
            message = str(exc) if getattr(exc, "kpass_names_the_plugin", False) else (
                f"kpass plugin '{plugin_name}' failed in its {hook_name} hook: {type(exc).__name__}: {exc}")
            raise (PluginTypeError if isinstance(exc, TypeError) else PluginHookError)(message) from exc
    return entries


def _metric_checker(owners: dict[tuple[str, str], str]) -> Callable[[str, Any, str], None]:
    prefixes: dict[str, tuple[str, str]] = {}

    def check(name: str, family: Any, plugin: str) -> None:
        symbol = getattr(family, "symbol", None)
        if not isinstance(symbol, str) or not symbol or symbol[-1] not in "@^":
            raise TypeError(
                f"metric family '{name}' from plugin '{plugin}' needs a `symbol` ending in '@' or "
                f"'^' (e.g. 'pass@'); got {symbol!r}."
            )
        for prefix in (symbol, *getattr(family, "aliases", ())):
            key = prefix.lower()
            if key in prefixes:
                other_name, other_plugin = prefixes[key]
                raise PluginConflictError(
                    f"metric spec prefix '{prefix}' (family '{name}') is registered by two plugins: "
                    f"'{other_plugin}' (family '{other_name}') and '{plugin}'."
                )
            prefixes[key] = (name, plugin)

    return check


def _reader_checker(name: str, reader: Any, plugin: str) -> None:
    for method in ("can_read", "read"):
        if not callable(getattr(reader, method, None)):
            raise TypeError(f"reader '{name}' from plugin '{plugin}' has no callable `{method}`.")


def _factory_checker(kind: str) -> Callable[[str, Any, str], None]:
    def check(name: str, factory: Any, plugin: str) -> None:
        if not callable(factory):
            raise TypeError(f"{kind} factory '{name}' from plugin '{plugin}' is not callable.")

    return check


def _build_registry(pm: pluggy.PluginManager) -> Registry:
    owners: dict[tuple[str, str], str] = {}
    metrics = _call_each(pm, "register_metrics", "metric", _metric_checker(owners), owners)
    readers = _call_each(pm, "register_readers", "reader", _reader_checker, owners)
    tokenizers = _call_each(pm, "register_tokenizers", "tokenizer", _factory_checker("tokenizer"), owners)
    extractors = _call_each(pm, "register_answer_extractors", "extractor", _factory_checker("answer extractor"),
                            owners)
    return Registry(metrics=metrics, readers=readers, tokenizers=tokenizers, owners=owners, extractors=extractors)


def metric_registry(plugin_manager: pluggy.PluginManager | None = None) -> Registry:
    """The metric families of every loaded plugin, and nothing else asked of the plugins.

    What parsing a metric spec needs: every plugin is loaded (its entry-point module imported, so a
    plugin that fails to import is reported) and only its ``register_metrics`` hook is called, so
    two plugins that claim one spec prefix are refused as by :func:`get_registry`, while readers,
    tokenizers and extractors (and the adapters' reader modules, which kpass's own entry-point
    modules import only inside their hooks) load when a file is read.

    Raises
    ------
    PluginConflictError
        Two plugins register one metric name or spec prefix.
    PluginLoadError
        A plugin fails to import.
    """
    pm = get_plugin_manager() if plugin_manager is None else plugin_manager
    fingerprint = tuple((name, id(plugin)) for name, plugin in pm.list_name_plugin())
    cached = _metric_registry_cache.get(id(pm))
    if cached is not None and cached[0] == fingerprint:
        return cached[1]
    owners: dict[tuple[str, str], str] = {}
    metrics = _call_each(pm, "register_metrics", "metric", _metric_checker(owners), owners)
    registry = Registry(metrics=metrics, readers={}, tokenizers={}, owners=owners, extractors={})
    if plugin_manager is None:  # only the process-wide manager is cached
        _metric_registry_cache[id(pm)] = (fingerprint, registry)
    return registry


def get_registry(plugin_manager: pluggy.PluginManager | None = None) -> Registry:
    """Metric families, readers and tokenizers registered through ``plugin_manager``'s hooks.

    Raises
    ------
    ValueError
        When two plugins register one name (or one metric-spec prefix), naming both plugins.
    """
    pm = get_plugin_manager() if plugin_manager is None else plugin_manager
    fingerprint = tuple((name, id(plugin)) for name, plugin in pm.list_name_plugin())
    cached = _registry_cache.get(id(pm))
    if cached is not None and cached[0] == fingerprint:
        return cached[1]
    registry = _build_registry(pm)
    if plugin_manager is None:  # only the process-wide manager is cached
        _registry_cache[id(pm)] = (fingerprint, registry)
    return registry
