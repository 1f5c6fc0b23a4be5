"""The text outputs of a leaderboard: Markdown, CSV and JSON, all read from its JSON form.

Every output reads :attr:`kpass.reports.leaderboard.Leaderboard.data` (the JSON form), so all of
them show the same numbers, formatted by :mod:`kpass.render.numbers`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from typing import Any

from kpass.data.leaderboard_tables import ExtendResult, LeaderboardTable, extend_table
from kpass.notes import Note, as_notes
from kpass.render import numbers
from kpass.render.escape import csv_cell, csv_row, markdown_text
from kpass.render.numbers import format_level, format_p_value, format_rank, format_raw
from kpass.render.notes import note_lines
from kpass.render.tables import markdown_lines

__all__ = [
    "LEADERBOARD_DIGITS", "MAX_SHOWN_COMPARISONS", "csv_columns", "format_cell", "format_number", "format_p_value",
    "extend_leaderboard", "format_rank", "leaderboard_notes", "markdown_columns", "render_csv", "render_json", "render_markdown",
    "shown_comparisons",
]

#: Decimals of a leaderboard cell: each carries an estimate and its interval, for every metric
#: side by side, so one fewer than a ``kpass report`` table.
LEADERBOARD_DIGITS = 3


def format_number(value: float | None, digits: int = LEADERBOARD_DIGITS) -> str:
    """:func:`kpass.render.numbers.format_number` with the leaderboard's decimals."""
    return numbers.format_number(value, digits)


def format_cell(cell: Mapping[str, Any] | None) -> str:
    """:func:`kpass.render.numbers.format_cell` with the leaderboard's decimals."""
    return numbers.format_cell(cell, digits=LEADERBOARD_DIGITS)


def _shared_judge(data: Mapping[str, Any], key: str) -> str | None:
    """The judge every model's cell of column ``key`` names, when they all name the same one."""
    judges = {cell.get("judge") for entry in data["models"] for cell in [entry["metrics"].get(key)] if cell}
    return judges.pop() if len(judges) == 1 else None


def markdown_columns(data: Mapping[str, Any]) -> tuple[list[str], dict[str, list[str]]]:
    """The human-readable columns a leaderboard adds: per metric "estimate [CI]", then the rank.
    A column whose samples a named task metric judged (lm-eval output) says which in its header,
    or in each cell when the models' judges differ.

    Returns the column names and, per model, their cells (used by Markdown output and by
    ``--extend`` onto Markdown tables).
    """
    level = format_level(data["confidence_level"])
    keys = [column["key"] for column in data["columns"]]
    shared = {column["key"]: _shared_judge(data, column["key"]) for column in data["columns"]}
    header = [f"{key} ({level} CI" + (f", judged by {shared[key]})" if shared[key] else ")") for key in keys]
    header.append(f"rank by {data['sort']} ({level})")

    def cell_text(cell: Mapping[str, Any] | None, key: str) -> str:
        text = format_cell(cell)
        if cell is not None and cell.get("judge") and not shared[key]:
            text += f" (judged by {cell['judge']})"
        return text

    cells = {}
    for entry in data["models"]:
        cells[entry["model"]] = ([cell_text(entry["metrics"].get(key), key) for key in keys]
                                 + [format_rank(entry["ranks"].get(data["sort"]))])
    return header, cells


def csv_columns(data: Mapping[str, Any]) -> tuple[list[str], dict[str, list[str]]]:
    """The machine-readable columns: per metric estimate, low, high, se, problems, rank, rank low/high,
    and ``judge`` (the task metric that judged the samples) where the input names one."""
    parts = ["", " low", " high", " se", " n_problems", " rank", " rank low", " rank high"]
    header = [key + part for column in data["columns"] for key in [column["key"]]
              for part in [*parts, *([" judge"] if column.get("judge") else [])]]
    cells = {}
    for entry in data["models"]:
        row = []
        for column in data["columns"]:
            cell = entry["metrics"].get(column["key"])
            rank = entry["ranks"].get(column["key"])
            row += ([format_raw(cell[name]) for name in
                     ("estimate", "low", "high", "standard_error", "n_problems")]
                    if cell else [""] * 5)
            row += [format_raw(rank[name]) for name in ("rank", "low", "high")] if rank else [""] * 3
            if column.get("judge"):
                row.append((cell or {}).get("judge") or "")
        cells[entry["model"]] = row
    return header, cells


#: Above this many pairwise comparisons, Markdown and HTML show only neighbours in the sorted
#: order (the JSON output always has every comparison).
MAX_SHOWN_COMPARISONS = 120


def shown_comparisons(data: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]], int]:
    """The comparisons a table shows and how many it leaves to the JSON output.

    All of them up to :data:`MAX_SHOWN_COMPARISONS`; beyond, the comparisons of neighbours in the
    leaderboard order (their Holm p-values are still adjusted over the whole family).
    """
    comparisons = list(data["comparisons"])
    if len(comparisons) <= MAX_SHOWN_COMPARISONS or data["comparison_family"]["pairs"] != "all":
        return comparisons, 0
    order = {entry["model"]: i for i, entry in enumerate(data["models"])}
    shown = [c for c in comparisons if abs(order[c["model_a"]] - order[c["model_b"]]) == 1]
    return shown, len(comparisons) - len(shown)


def render_markdown(data: Mapping[str, Any]) -> str:
    """The leaderboard as Markdown: the main table, the pairwise comparisons, the notes."""
    level = format_level(data["confidence_level"])
    header, cells = markdown_columns(data)
    rank_header = header.pop()
    rows = [[cells[e["model"]][-1], e["model"], *cells[e["model"]][:-1], str(e["n_problems"]),
             str(e["n_samples"])] for e in data["models"]]
    lines = markdown_lines([rank_header, "model", *header, "problems", "samples"], rows,
                            ["c", "-"] + ["-"] * len(header) + ["r", "r"])
    family = data["comparison_family"]
    if data["comparisons"]:
        against = {"baseline": f"every model against {markdown_text(family['baseline'])}",
                   "adjacent": "neighbours in the sorted order"}.get(family["pairs"], "all pairs")
        shown, hidden = shown_comparisons(data)
        lines += ["", f"Paired differences in {family['column']} ({against}; {level} CI; "
                      f"p-values Holm-adjusted over the {family['size']} comparisons"
                      + (f"; the {len(shown)} between neighbours shown, all {len(shown) + hidden} "
                         f"in the JSON output" if hidden else "") + "):", ""]
        pair_rows = [[c["model_a"], c["model_b"],
                      format_cell({"estimate": c["difference"], "low": c["low"],
                                       "high": c["high"]}),
                      format_p_value(c["p_value"]), format_p_value(c["p_value_holm"]),
                      str(c["n_problems"])]
                     for c in shown]
        lines += markdown_lines(["model A", "model B", f"A - B ({level} CI)", "p", "p (Holm)",
                                  "problems"], pair_rows, ["-", "-", "-", "r", "r", "r"])
    notes = leaderboard_notes(data)
    if notes:
        lines += ["", *note_lines(notes, "markdown")]
    return "\n".join(lines) + "\n"


def leaderboard_notes(data: Mapping[str, Any]) -> list[Note]:
    """The notes of a leaderboard's JSON form (records), then its exclusions as notes."""
    notes = as_notes(data.get("notes", []))
    notes += [Note("exclusions", (f"{exclusion['model']} / {exclusion['column']}",),
                   f"{exclusion['n_problems']} problem(s) excluded ({exclusion['reason']}).")
              for exclusion in data.get("exclusions", [])]
    return notes


def render_csv(data: Mapping[str, Any]) -> str:
    """The leaderboard as one CSV table (models in leaderboard order; comparisons are in JSON)."""
    header, cells = csv_columns(data)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(csv_row(["model", "n_problems", "n_samples", *header]))  # formula-like cells inert
    for entry in data["models"]:
        writer.writerow(csv_row([entry["model"], entry["n_problems"], entry["n_samples"],
                                 *cells[entry["model"]]]))
    return buffer.getvalue()


def render_json(data: Mapping[str, Any]) -> str:
    """The leaderboard as JSON (undefined numbers are ``null``, never ``NaN``)."""
    return json.dumps(data, indent=2, allow_nan=False) + "\n"




def extend_leaderboard(data: Mapping[str, Any], table: LeaderboardTable, key: str) -> ExtendResult:
    """Join a leaderboard's columns (its JSON form, :attr:`kpass.reports.leaderboard.Leaderboard.data`)
    onto an existing table (see :func:`kpass.data.leaderboard_tables.extend_table`).

    Markdown tables get the human-readable columns ("estimate [low, high]", rank interval),
    CSV tables the machine-readable ones (estimate, low, high, se, problems, ranks).
    """
    header, cells = markdown_columns(data) if table.format == "markdown" else csv_columns(data)
    escape = ((lambda cell: markdown_text(cell, pipes=False)) if table.format == "markdown"  # extend_table
              else csv_cell)                                                           # escapes pipes
    return extend_table(table, key, [escape(h) for h in header],
                        {model: [escape(c) for c in row] for model, row in cells.items()})
