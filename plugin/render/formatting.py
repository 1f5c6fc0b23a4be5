"""Render reports and comparisons as an aligned table, Markdown, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from typing import Any

from kpass.render.escape import csv_row, markdown_text, terminal_text
from kpass.reports.report import Comparison, Exclusion, Report

__all__ = ["FORMATS", "exclusion_lines", "format_comparison", "format_report", "format_tail", "render"]

FORMATS = ("table", "markdown", "csv", "json")
_MAX_IDS = 10


def _number(value: float | None, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def _p_value(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


def _interval(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "-"
    return f"[{low:.4f}, {high:.4f}]"


def _percent(level: float) -> str:
    text = f"{level * 100:.6g}"
    return f"{text}% CI"


def _aligned(header: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> str:
    header = [terminal_text(cell) for cell in header]
    rows = [[terminal_text(cell) for cell in row] for row in rows]
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]

    def line(cells):
        parts = [(str(c).rjust(w) if i in right else str(c).ljust(w)) for i, (c, w) in enumerate(zip(cells, widths))]
        return "  ".join(parts).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def _markdown(header: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> str:
    esc = markdown_text

    out = ["| " + " | ".join(esc(h) for h in header) + " |",
           "|" + "|".join(("---:" if i in right else ":---") for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def _csv(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(csv_row(header))
    writer.writerows(csv_row(row) for row in rows)
    return buffer.getvalue()


def exclusion_lines(exclusions: Sequence[Exclusion]) -> list[str]:
    """One line per exclusion: ``group / metric: N problems (reason): id, id, ...``."""
    lines = []
    for exclusion in exclusions:
        where = " / ".join(value for _, value in exclusion.group)
        ids = list(exclusion.problem_ids)
        shown = ", ".join(ids[:_MAX_IDS]) + (f", ... and {len(ids) - _MAX_IDS} more" if len(ids) > _MAX_IDS else "")
        count = f"{len(ids)} problem{'s' if len(ids) != 1 else ''}"
        lines.append(f"{where + ' / ' if where else ''}{exclusion.metric}: {count} ({exclusion.reason}): {shown}")
    return lines


def format_tail(title_exclusions: str, exclusions: Sequence[Exclusion], notes: Sequence[str], markdown: bool,
                say_none: bool = True) -> str:
    """The text after a table: the excluded problems (or, with ``say_none``, that there are
    none) and the notes, as plain text or Markdown."""
    parts = []
    bullet = "- " if markdown else "  "
    escape = markdown_text if markdown else terminal_text
    notes = [escape(note) for note in notes]
    if exclusions:
        parts.append(("\n**" + title_exclusions + "**\n" if markdown else "\n" + title_exclusions + ":")
                     + "\n" + "\n".join(bullet + escape(line) for line in exclusion_lines(exclusions)))
    elif say_none:
        parts.append("\nNo problem was excluded.")
    if notes:
        parts.append(("\n**Notes**\n" if markdown else "\nNotes:") + "\n" + "\n".join(bullet + n for n in notes))
    return "\n".join(parts)


def format_report(report: Report, fmt: str = "table") -> str:
    """Render a :class:`~kpass.Report` (``fmt`` in ``table``, ``markdown``, ``csv``, ``json``)."""
    if fmt not in FORMATS:
        raise ValueError(f"`fmt` must be one of {', '.join(FORMATS)}; got {fmt!r}.")
    if fmt == "json":
        return json.dumps(report.as_dict(), indent=2, allow_nan=False, default=_json_default) + "\n"
    by = list(report.by)
    clustered = report.cluster_by is not None
    if fmt == "csv":
        header = by + ["metric", "estimate", "low", "high", "standard_error", "confidence_level", "n_problems",
                       "n_samples"] + (["n_clusters"] if clustered else []) + ["n_excluded", "method", "note"]
        rows = []
        for row in report.rows:
            rows.append([value for _, value in row.group] + [
                row.metric, _raw(row.estimate), _raw(row.low), _raw(row.high), _raw(row.standard_error),
                report.confidence_level, row.n_problems, row.n_samples] + ([row.n_clusters] if clustered else [])
                + [row.n_excluded, row.method or "", row.note])
        return _csv(header, rows)
    header = by + ["metric", "estimate", _percent(report.confidence_level), "SE", "problems", "samples"] + (
        ["clusters"] if clustered else []) + ["excluded", "method"]
    right = set(range(len(by) + 1, len(header) - 1))
    rows = []
    for row in report.rows:
        rows.append([value for _, value in row.group] + [
            row.metric, _number(row.estimate), _interval(row.low, row.high), _number(row.standard_error),
            str(row.n_problems), str(row.n_samples)] + ([str(row.n_clusters or "-")] if clustered else [])
            + [str(row.n_excluded), row.method or ("-" if not row.note else row.note)])
    body = _markdown(header, rows, right) if fmt == "markdown" else _aligned(header, rows, right)
    return body + "\n" + format_tail("Excluded problems (not in the estimates)", report.exclusions, report.notes,
                               fmt == "markdown") + "\n"


def format_comparison(comparison: Comparison, fmt: str = "table") -> str:
    """Render a :class:`~kpass.Comparison` (``fmt`` in ``table``, ``markdown``, ``csv``, ``json``)."""
    if fmt not in FORMATS:
        raise ValueError(f"`fmt` must be one of {', '.join(FORMATS)}; got {fmt!r}.")
    if fmt == "json":
        return json.dumps(comparison.as_dict(), indent=2, allow_nan=False, default=_json_default) + "\n"
    by = list(comparison.by)
    clustered = comparison.cluster_by is not None
    if fmt == "csv":
        header = by + ["metric", "model", "baseline", "difference", "low", "high", "standard_error", "p_value",
                       "correlation", "estimate_model", "estimate_baseline", "confidence_level", "n_problems"] + (
            ["n_clusters"] if clustered else []) + ["n_excluded", "method", "note"]
        rows = [[value for _, value in row.group] + [
            row.metric, row.model, row.baseline, _raw(row.estimate), _raw(row.low), _raw(row.high),
            _raw(row.standard_error), _raw(row.p_value), _raw(row.correlation), _raw(row.estimate_model),
            _raw(row.estimate_baseline), comparison.confidence_level, row.n_problems]
            + ([row.n_clusters] if clustered else []) + [row.n_excluded, row.method or "", row.note]
            for row in comparison.rows]
        return _csv(header, rows)
    header = by + ["metric", "model", "baseline", "model est", "baseline est", "difference",
                   _percent(comparison.confidence_level), "SE", "p-value", "corr", "problems"] + (
        ["clusters"] if clustered else []) + ["excluded", "method"]
    right = set(range(len(by) + 3, len(header) - 1))
    rows = []
    for row in comparison.rows:
        rows.append([value for _, value in row.group] + [
            row.metric, row.model, row.baseline, _number(row.estimate_model), _number(row.estimate_baseline),
            _signed(row.estimate), _interval(row.low, row.high), _number(row.standard_error), _p_value(row.p_value),
            _number(row.correlation, 3), str(row.n_problems)] + ([str(row.n_clusters or "-")] if clustered else [])
            + [str(row.n_excluded), row.method or ("-" if not row.note else row.note)])
    body = _markdown(header, rows, right) if fmt == "markdown" else _aligned(header, rows, right)
    return body + "\n" + format_tail("Excluded problems (not compared)", comparison.exclusions, comparison.notes,
                               fmt == "markdown") + "\n"


def render(result: Report | Comparison, fmt: str = "table") -> str:
    """:func:`format_report` or :func:`format_comparison`, whichever fits ``result``."""
    return format_comparison(result, fmt) if isinstance(result, Comparison) else format_report(result, fmt)


def _signed(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:+.4f}"


def _raw(value: float | None) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return repr(float(value))


def _json_default(value: Any) -> Any:
    try:
        import numpy as np

        if isinstance(value, np.generic):
            return value.item()
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"cannot serialise {type(value).__name__}")
