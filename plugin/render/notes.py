"""Notes grouped by kind, in every medium (:class:`kpass.Note` records, :mod:`kpass.notes`).

Notes of one kind and one text become one line listing the rows they concern, the text once and
the doc section of the kind; the lines keep the order in which their first note came. Each
medium escapes its own way: terminal text shows control characters escaped (nothing else),
Markdown escapes Markdown (:func:`kpass.render.escape.markdown_text`), HTML escapes HTML and CSV
neutralises formulas.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from kpass.notes import Note, as_notes
from kpass.render.escape import csv_cell, html_text, markdown_text, terminal_text

__all__ = ["MAX_ROWS_SHOWN", "NoteLine", "grouped_notes", "note_lines", "notes_block"]

#: Rows a note line names before "... and N more".
MAX_ROWS_SHOWN = 8


class NoteLine:
    """The notes of one kind and one text: ``kind``, ``rows`` (first-appearance order, once each),
    ``text``, ``doc``."""

    __slots__ = ("doc", "kind", "rows", "text")

    def __init__(self, note: Note) -> None:
        self.kind, self.text, self.doc = note.kind, note.text, note.doc
        self.rows: list[str] = []

    def rows_text(self) -> str:
        shown = self.rows[:MAX_ROWS_SHOWN]
        more = len(self.rows) - len(shown)
        return "; ".join(shown) + (f"; ... and {more} more" if more else "")


def grouped_notes(notes: Iterable[Note | str]) -> list[NoteLine]:
    """One :class:`NoteLine` per (kind, text, doc), in order of first appearance."""
    lines: dict[tuple[str, str, str], NoteLine] = {}
    for note in as_notes(notes):
        line = lines.setdefault((note.kind, note.text, note.doc), NoteLine(note))
        line.rows.extend(row for row in note.rows if row not in line.rows)
    return list(lines.values())


def _plain(line: NoteLine) -> str:
    rows = line.rows_text()
    return f"[{line.kind}] " + (f"{rows}: " if rows else "") + f"{line.text} ({line.doc})"


def note_lines(notes: Iterable[Note | str], fmt: str = "table") -> list[str]:
    """The grouped notes as lines of ``fmt``: ``table`` (plain terminal text), ``markdown``
    (list items, escaped), ``html`` (``<li>`` elements, escaped) or ``csv`` (plain text with
    formulas neutralised)."""
    out = []
    for line in grouped_notes(notes):
        if fmt == "markdown":
            rows = line.rows_text()
            out.append(f"- **{markdown_text(line.kind)}** " + (f"{markdown_text(rows)}: " if rows else "")
                       + f"{markdown_text(line.text)} (`{line.doc}`)")
        elif fmt == "html":
            rows = line.rows_text()
            out.append(f"<li><b>{html_text(line.kind)}</b> " + (f"{html_text(rows)}: " if rows else "")
                       + f"{html_text(line.text)} (<code>{html_text(line.doc)}</code>)</li>")
        elif fmt == "csv":
            out.append(str(csv_cell(_plain(line))))
        else:
            out.append(terminal_text(_plain(line)))
    return out


def notes_block(notes: Sequence[Note | str], fmt: str = "table", *, title: str = "Notes") -> str:
    """The notes section after a table (empty without notes): a title, then :func:`note_lines`."""
    if not notes:
        return ""
    lines = note_lines(notes, fmt)
    if fmt == "markdown":
        return f"\n**{title}**\n" + "\n".join(lines)
    return f"\n{title}:\n" + "\n".join("  " + line for line in lines)

