"""Hook specifications of the kpass plugin host (pluggy project name ``"kpass"``).

A plugin is a module (or any object) with functions decorated by :data:`hookimpl`, made visible
through the ``kpass`` entry-point group::

    [project.entry-points.kpass]
    myplugin = "kpass_myplugin"

Every hook receives one ``register`` callback and calls it once per thing it adds, the way
simonw/llm's ``register_models(register)`` does. Names are global: two plugins registering the
same name is an error that names both plugins.
"""

from __future__ import annotations

import pluggy

__all__ = [
    "hookimpl", "hookspec", "register_answer_extractors", "register_metrics", "register_readers",
    "register_tokenizers",
]

#: The name the built-in plugin (:mod:`kpass.host.builtin`) is registered under.
BUILTIN_PLUGIN_NAME = "kpass.builtin"

hookspec = pluggy.HookspecMarker("kpass")
hookimpl = pluggy.HookimplMarker("kpass")


@hookspec
def register_metrics(register):
    """Register metric families.

    Call ``register(name, family)`` once per family, where ``family`` is a
    :class:`kpass.MetricFamily` (or an object with the same attributes): its ``symbol`` (canonical
    spec prefix such as ``"pass@"``) and ``aliases`` make it usable in specs like ``pass@8``.
    """


@hookspec
def register_readers(register):
    """Register sample-log readers.

    Call ``register(name, reader)`` once per reader; ``reader.can_read(path) -> bool`` says whether
    it recognises a file and ``reader.read(path) -> kpass.SampleTable`` reads it.
    """


@hookspec
def register_tokenizers(register):
    """Register tokenizer factories for token budgets.

    Call ``register(name, factory)``; ``factory(spec: str)`` returns a tokenizer for the part of a
    tokenizer spec after ``name:`` (used by the token-budget features).
    """


@hookspec
def register_answer_extractors(register):
    """Register answer extractors (the answer classes cons@k votes over).

    Call ``register(name, factory)``; ``factory(argument: str | None)`` returns a function
    ``extract(text: str) -> str | None`` giving the final answer of one generation, normalised
    the way the task compares answers (None: no extractable answer). ``argument`` is the part of
    an extractor spec after ``name:`` (``regex:PATTERN``), None without one. Used by
    ``kpass report --answer-extractor SPEC`` and by adapters (:mod:`kpass.host.extractors`).
    """
