"""Notes as data: what a report must say besides its numbers, as typed records.

A :class:`Note` is made where the fact is found (a reader, the host, a report, an adapter) and
rendered once per kind where text is made (:mod:`kpass.render.notes`): one line per kind and
text, listing the rows it concerns, the text once and the doc section that explains it. This
module sits below every room of ``plugin/`` (like :mod:`kpass.errors`): it imports nothing of kpass.

Every kind is one entry of :data:`NOTE_KINDS` (a closed set) with its heading and its section in
``docs/notes.md``; :data:`WARNING_KINDS` maps a warning class of the core to its kind.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["NOTE_KINDS", "WARNING_KINDS", "Note", "NoteKind", "as_note", "as_notes", "warning_note"]


@dataclasses.dataclass(frozen=True)
class NoteKind:
    """One kind of note: its name, the heading a renderer shows and the doc section explaining it."""

    name: str
    heading: str
    doc: str


def _kinds(*entries: tuple[str, str]) -> dict[str, NoteKind]:
    return {name: NoteKind(name, heading, f"docs/notes.md#{name}") for name, heading in entries}


#: Every kind of note (the closed set; ``docs/notes.md`` has one section per kind, named as the kind).
NOTE_KINDS: dict[str, NoteKind] = _kinds(
    ("reader", "from the reader"),
    ("exclusions", "excluded problems"),
    ("extra-columns", "extra columns"),
    ("seed-trap", "identical samples"),
    ("pooled", "pooled pipelines"),
    ("task-groups", "task groups"),
    ("mixed-samples", "samples per problem vary"),
    ("degenerate", "degenerate interval"),
    ("interval-rule", "interval rule"),
    ("near-end", "near an end"),
    ("few-differences", "few differing problems"),
    ("few-clusters", "few clusters"),
    ("metric", "metric"),
    ("model-based", "model-based estimate"),
    ("selection-bias", "selection bias"),
    ("curves", "curves"),
    ("budget", "token budget"),
    ("ranks", "ranks"),
    ("unmatched", "unmatched problems"),
    ("power", "power"),
)

#: The kind of note each warning class of the core becomes (by class name, most specific first;
#: a warning of another class is an ``interval-rule`` note).
WARNING_KINDS: dict[str, str] = {
    "TinyDifferencesWarning": "few-differences",
    "FewDifferencesWarning": "few-differences",
    "DegenerateIntervalWarning": "degenerate",
    "UndefinedBudgetMetricWarning": "budget",
    "UndefinedDecompositionWarning": "budget",
    "MeaninglessMetricWarning": "metric",
    "IntervalMethodWarning": "interval-rule",
}


@dataclasses.dataclass(frozen=True)
class Note:
    """A fact a report must say besides its numbers.

    Attributes
    ----------
    kind : str
        One of :data:`NOTE_KINDS` (``"selection-bias"``, ``"mixed-samples"``, ...).
    rows : tuple of str
        Labels of the rows it concerns (``"base / logic / pass@8"``); empty for the whole table.
    text : str
        What it says, on one line, without the row names (they are in ``rows``).
    doc : str
        The ``docs/`` page and section that explain the kind; by default the kind's own.
    detail : str
        The whole message when ``text`` is its short form (a core warning that explains itself at
        length); empty otherwise. Records and JSON carry it; printed notes show ``text``.
    """

    kind: str
    rows: tuple[str, ...] = ()
    text: str = ""
    doc: str = ""
    detail: str = ""

    def __post_init__(self) -> None:
        if self.kind not in NOTE_KINDS:
            raise ValueError(f"`kind` must be one of {', '.join(NOTE_KINDS)}; got {self.kind!r}.")
        if isinstance(self.rows, str) or not all(isinstance(row, str) for row in self.rows):
            raise TypeError(f"`rows` must be a tuple of str; got {self.rows!r}.")
        object.__setattr__(self, "rows", tuple(self.rows))
        object.__setattr__(self, "text", " ".join(str(self.text).split()))  # one line
        if not self.doc:
            object.__setattr__(self, "doc", NOTE_KINDS[self.kind].doc)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-able record: ``kind``, ``rows`` (a list), ``text``, ``doc`` (and ``detail`` when there is one)."""
        record = {"kind": self.kind, "rows": list(self.rows), "text": self.text, "doc": self.doc}
        return {**record, "detail": self.detail} if self.detail else record

    def __str__(self) -> str:
        where = " / ".join(self.rows) if len(self.rows) == 1 else "; ".join(self.rows)
        return f"{where}: {self.text}" if where else self.text


#: A plain note that starts with a file name (no space; a ``/`` or a ``.`` in it) and ``": "``.
_NAMES_ITS_FILE = re.compile(r"([^\s:]*[/.][^\s:]*): ")


def as_note(note: Note | Mapping[str, Any] | str, *, kind: str = "reader") -> Note:
    """``note`` itself, a note's record (:meth:`Note.as_dict`, e.g. from a JSON output), or a
    plain string (a reader's or a plugin's) as a note of ``kind``."""
    if isinstance(note, Note):
        return note
    if isinstance(note, Mapping):
        return Note(note["kind"], tuple(note.get("rows", ())), note.get("text", ""), note.get("doc", ""),
                    note.get("detail", ""))
    if not isinstance(note, str):
        raise TypeError(f"a note must be a str or a kpass.Note; got {type(note).__name__}.")
    named = _NAMES_ITS_FILE.match(note)  # "run.eval: 3 unscored epochs left out": the file is its row
    if named:
        return Note(kind, (named.group(1),), note[named.end():])
    return Note(kind, (), note)


def as_notes(notes: Iterable[Note | Mapping[str, Any] | str], *, kind: str = "reader") -> list[Note]:
    """:func:`as_note` of each, duplicates dropped (first kept)."""
    return list(dict.fromkeys(as_note(note, kind=kind) for note in notes))


def warning_note(warning: Any, rows: tuple[str, ...] = ()) -> Note:
    """A caught warning (a ``warnings.WarningMessage`` or a ``Warning``) of ``rows`` as a note
    of the kind of its class (:data:`WARNING_KINDS`; the most specific base class that is listed)."""
    message = getattr(warning, "message", warning)
    category = getattr(warning, "category", type(message))
    names = [cls.__name__ for cls in getattr(category, "__mro__", ())]
    kind = next((WARNING_KINDS[name] for name in names if name in WARNING_KINDS), "interval-rule")
    text = str(message)
    if "off_end_problems" in text:  # the core's near-end warning (an IntervalMethodWarning)
        kind = "near-end"
    elif text.startswith("only ") and " clusters: " in text[:40]:  # kpass.metrics.few_clusters_note
        kind = "few-clusters"
    if kind == "few-clusters":
        return Note(kind, tuple(rows), _few_clusters_text(text), detail=text)
    return Note(kind, tuple(rows), text)


def _few_clusters_text(text: str) -> str:
    """One short text for every row with too few clusters (:func:`kpass.metrics.few_clusters_note` says
    the count and the rule at length; the count is in the row's ``clusters`` column and the long
    explanation in docs/notes.md#few-clusters), so that the rows share one line."""
    unreliable = "fewer than 10 clusters: every cluster-robust interval is unreliable (Cameron & Miller 2015)"
    if "is then usually too narrow" in text:  # a method other than the default
        return f"{unreliable}; this method is then usually too narrow (the default uses the few-cluster score interval)"
    return f"{unreliable}; the default is then the few-cluster score interval: treat it as rough"
