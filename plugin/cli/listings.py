"""``kpass metrics`` and ``kpass plugins``: what the loaded plugins register."""

from __future__ import annotations

import argparse

from kpass.host.manager import get_plugin_manager, get_registry

__all__ = ["add_no_arguments", "run_metrics", "run_plugins"]


def add_no_arguments(parser: argparse.ArgumentParser) -> None:
    """The listings take no argument."""


def run_metrics(args: argparse.Namespace) -> int:
    registry = get_registry()
    for name, family in registry.metrics.items():
        aliases = getattr(family, "aliases", ())
        print(f"{family.pattern:<48} {getattr(family, 'description', '')}"
              + (f" (also {', '.join(aliases)})" if aliases else "")
              + f"  [{registry.owners[('metric', name)]}]")
        if getattr(family, "example", ""):
            print(f"{'':<48}   e.g. {family.example}")
    print("\noptions go in [...], e.g. cons@16[ties=strict]; a token budget in (B=4096); several k: pass@1,8,64")
    return 0


def run_plugins(args: argparse.Namespace) -> int:
    pm = get_plugin_manager()
    registry = get_registry(pm)
    for name, _plugin in pm.list_name_plugin():
        owned = sorted(f"{kind} {item}" for (kind, item), owner in registry.owners.items() if owner == name)
        print(f"{name}: {', '.join(owned) or 'registers nothing'}")
    return 0
