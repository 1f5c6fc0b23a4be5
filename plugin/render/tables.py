"""The one table renderer: aligned text, Markdown and CSV from a header and rows of cells.

Every command's table goes through :func:`render_table`, so a cell is escaped (by
:mod:`kpass.render.escape`), aligned and quoted the same way in every output. Cells are already text (see :mod:`kpass.render.numbers`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from typing import Any

from kpass.render.escape import csv_row, markdown_text, terminal_text

__all__ = ["TABLE_FORMATS", "markdown_cell", "markdown_lines", "render_table"]

#: Formats of :func:`render_table`.
TABLE_FORMATS = ("table", "markdown", "csv")

_MARKDOWN_DELIMITER = {"l": ":---", "r": "---:", "c": ":---:", "-": "---"}


def markdown_cell(cell: Any) -> str:
    """A Markdown table cell: line breaks as spaces, then :func:`kpass.render.escape.markdown_text`
    (HTML special characters as entities, pipes escaped, control characters shown escaped)."""
    return markdown_text(str(cell).replace("\r\n", " ").replace("\n", " ").replace("\r", " "))


def markdown_lines(header: Sequence[str], rows: Iterable[Sequence[Any]], align: Sequence[str]) -> list[str]:
    """The lines of a Markdown table; ``align`` holds one of ``l``, ``r``, ``c``, ``-`` per column."""
    lines = ["| " + " | ".join(markdown_cell(h) for h in header) + " |",
             "|" + "|".join(_MARKDOWN_DELIMITER[a] for a in align) + "|"]
    lines += ["| " + " | ".join(markdown_cell(c) for c in row) + " |" for row in rows]
    return lines


def _aligned_lines(header: Sequence[str], rows: Sequence[Sequence[Any]], align: Sequence[str]) -> list[str]:
    header = [terminal_text(cell) for cell in header]  # a name cannot drive the terminal
    rows = [[terminal_text(cell) for cell in row] for row in rows]
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]

    def line(cells: Sequence[Any]) -> str:
        return "  ".join(str(c).rjust(w) if a == "r" else str(c).ljust(w)
                         for c, w, a in zip(cells, widths, align)).rstrip()

    return [line(header), "  ".join("-" * w for w in widths).rstrip(), *(line(r) for r in rows)]


def render_table(header: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str = "table", *,
                 right: Iterable[int] = (), align: Sequence[str] | None = None, title: str | None = None) -> str:
    """Render one table (no trailing newline for ``table`` and ``markdown``).

    Parameters
    ----------
    header, rows
        Column names and rows of cells (each row as long as the header).
    fmt : {"table", "markdown", "csv"}
        Aligned plain text (two spaces between columns), a Markdown table, or CSV (``\\n`` line
        ends, quoted where needed; ``title`` is left out).
    right : iterable of int
        Columns aligned right (numbers); the others are aligned left.
    align : sequence of str, optional
        Per column ``l``, ``r``, ``c`` (centred in Markdown) or ``-`` (no alignment marker in
        Markdown, left in text); overrides ``right``.
    title : str, optional
        Lines before the table (one bold line in Markdown).
    """
    if fmt not in TABLE_FORMATS:
        raise ValueError(f"`fmt` must be one of {', '.join(TABLE_FORMATS)}; got {fmt!r}.")
    rows = [list(row) for row in rows]
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(csv_row(header))  # formula-like text cells made inert
        writer.writerows(csv_row(row) for row in rows)
        return buffer.getvalue()
    right = set(right)
    columns = align if align is not None else ["r" if i in right else "l" for i in range(len(header))]
    title_lines = title.splitlines() if title else []  # a title of several lines: each line its own
    if fmt == "markdown":
        lines = ([f"**{markdown_text(' '.join(title_lines))}**", ""] if title else []) + markdown_lines(
            header, rows, columns)
    else:
        lines = [terminal_text(line) for line in title_lines] + _aligned_lines(header, rows, columns)
    return "\n".join(lines)
