"""What the plugins registered, and every look-up in it: metric families, readers, tokenizers.

:class:`Registry` is built by :func:`kpass.get_registry` from the hooks of a plugin manager; the
look-ups here take the registry itself, so they never reach for a process-wide manager.
The public functions that take a ``plugin_manager`` (:mod:`kpass.host.lookups`) build the
registry once and call these.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any

from kpass.errors import DataError
from kpass.host.specs import MetricSpec, parse_specs

__all__ = ["Registry"]


@dataclasses.dataclass(frozen=True)
class Registry:
    """Everything the plugins registered, with the plugin that registered each name.

    Attributes
    ----------
    metrics, readers, tokenizers, extractors : Mapping[str, object]
        Registered objects by name, in registration order (``extractors``: answer-extractor
        factories, see :func:`kpass.host.hookspecs.register_answer_extractors`).
    owners : Mapping[tuple[str, str], str]
        ``(kind, name) -> plugin name`` where kind is ``"metric"``, ``"reader"``, ``"tokenizer"``
        or ``"extractor"``.
    """

    metrics: Mapping[str, Any]
    readers: Mapping[str, Any]
    tokenizers: Mapping[str, Any]
    owners: Mapping[tuple[str, str], str]
    extractors: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def metric_symbols(self) -> dict[str, str]:
        """Lower-cased spec prefix (symbol or alias) -> registered family name."""
        out: dict[str, str] = {}
        for name, family in self.metrics.items():
            for prefix in (family.symbol, *getattr(family, "aliases", ())):
                out[prefix.lower()] = name
        return out

    def metric_specs(self, specs: str | Sequence[str]) -> list[MetricSpec]:
        """:func:`kpass.parse_metric_specs` against these families."""
        return parse_specs(specs, self)

    def reader_for(self, path: str | os.PathLike, reader: str | None = None) -> tuple[str, Any]:
        """The ``(name, reader)`` that will read ``path`` (see :func:`kpass.choose_reader`)."""
        readers = self.readers
        if reader is not None:
            if reader not in readers:
                raise ValueError(f"unknown reader {reader!r}; registered readers: {', '.join(readers) or 'none'}.")
            return reader, readers[reader]
        claiming = []
        for name, candidate in readers.items():
            try:
                accepted = bool(candidate.can_read(path))
            except Exception as exc:  # a plugin's sniffing must not hide the file's problem
                raise DataError(f"reader '{name}' (plugin '{self.owners.get(('reader', name))}') failed "
                                f"while checking the file: {type(exc).__name__}: {exc}", source=str(path)) from exc
            if accepted:
                claiming.append(name)
        if len(claiming) == 1:
            return claiming[0], readers[claiming[0]]
        if len(claiming) > 1:
            raise DataError(f"several readers recognise this file: {', '.join(claiming)}; choose one with "
                            f"--reader NAME (Python: reader=NAME)", source=str(path))
        for name, candidate in readers.items():
            matches = getattr(candidate, "matches_suffix", None)
            if matches is not None and matches(path):
                return name, candidate
        raise DataError(f"no reader recognises this file; registered readers: {self.describe_readers()}",
                        source=str(path))

    def describe_readers(self) -> str:
        """``name (suffixes): description; ...`` of every registered reader."""
        parts = []
        for name, reader in self.readers.items():
            detail = ", ".join(getattr(reader, "suffixes", ()))
            description = getattr(reader, "description", "")
            parts.append(name + (f" ({detail})" if detail else "") + (f": {description}" if description else ""))
        return "; ".join(parts)

    def tokenizer(self, spec: str) -> Any:
        """The tokenizer a spec ``NAME:ARGUMENT`` names (see :func:`kpass.host.lookups.get_tokenizer`)."""
        if not isinstance(spec, str) or ":" not in spec or not spec.split(":", 1)[1]:
            raise ValueError(
                f"tokenizer spec must be NAME:ARGUMENT, e.g. 'hf:path/to/tokenizer.json' or "
                f"'tiktoken:cl100k_base'; got {spec!r}."
            )
        name, argument = spec.split(":", 1)
        if name not in self.tokenizers:
            raise ValueError(f"unknown tokenizer {name!r} in spec {spec!r}; registered: {sorted(self.tokenizers)}.")
        tokenizer = self.tokenizers[name](argument)
        if not callable(getattr(tokenizer, "token_ends", None)):
            raise TypeError(f"tokenizer factory {name!r} returned {type(tokenizer).__name__}, which has no "
                            "token_ends(text).")
        return tokenizer
