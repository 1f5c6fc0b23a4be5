"""Render reports and comparisons as an aligned table, Markdown, CSV or JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from kpass.notes import Note
from kpass.render.escape import markdown_text, terminal_text
from kpass.render.notes import note_lines, notes_block
from kpass.render.numbers import MISSING, format_interval, format_level, format_number, format_p_value, format_raw
from kpass.render.tables import markdown_lines, render_table

if TYPE_CHECKING:  # pragma: no cover
    from kpass.reports.compare import Comparison
    from kpass.reports.report import Exclusion, Report

__all__ = ["FORMATS", "exclusion_lines", "format_comparison", "format_power", "format_report", "format_tail",
           "json_if_asked", "render"]

FORMATS = ("table", "markdown", "csv", "json")
_MAX_IDS = 10


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


def format_tail(title_exclusions: str, exclusions: Sequence[Exclusion], notes: Sequence[Note | str], markdown: bool,
                say_none: bool = True) -> str:
    """The text after a table: the excluded problems (or, with ``say_none``, that there are
    none) and the notes grouped by kind (:func:`kpass.render.notes.notes_block`), as plain text or Markdown."""
    parts = []
    bullet = "- " if markdown else "  "
    escape = markdown_text if markdown else terminal_text  # ids carry names from the files
    if exclusions:
        parts.append(("\n**" + title_exclusions + "**\n" if markdown else "\n" + title_exclusions + ":")
                     + "\n" + "\n".join(bullet + escape(line) for line in exclusion_lines(exclusions)))
    elif say_none:
        parts.append("\nNo problem was excluded.")
    if notes:
        parts.append(notes_block(notes, "markdown" if markdown else "table"))
    return "\n".join(parts)


def json_if_asked(result: Any, fmt: str) -> str | None:
    """The start of every ``format_*``: ``fmt`` must be one of :data:`FORMATS`; for ``"json"`` the
    result's ``as_dict()`` as indented JSON (NaN refused, numpy scalars as numbers), else ``None``
    (the caller renders its table)."""
    if fmt not in FORMATS:
        raise ValueError(f"`fmt` must be one of {', '.join(FORMATS)}; got {fmt!r}.")
    if fmt == "json":
        return json.dumps(result.as_dict(), indent=2, allow_nan=False, default=_json_default) + "\n"
    return None


def format_report(report: Report, fmt: str = "table") -> str:
    """Render a :class:`~kpass.Report` (``fmt`` in ``table``, ``markdown``, ``csv``, ``json``)."""
    text = json_if_asked(report, fmt)
    if text is not None:
        return text
    by = list(report.by)
    # group rows (lm-eval groups) are clustered by subtask even without cluster_by
    clustered = report.cluster_by is not None or any(row.n_clusters is not None for row in report.rows)
    judged = any(row.judge is not None for row in report.rows)  # the metric that judged (lm-eval output)
    if fmt == "csv":
        header = by + ["metric"] + (["judge"] if judged else []) + [
            "estimate", "low", "high", "standard_error", "confidence_level", "n_problems",
            "n_samples"] + (["n_clusters"] if clustered else []) + ["n_excluded", "method", "note"]
        rows: list[list[Any]] = []
        for row in report.rows:
            rows.append([value for _, value in row.group] + [row.metric] + ([row.judge or ""] if judged else []) + [
                format_raw(row.estimate), format_raw(row.low), format_raw(row.high), format_raw(row.standard_error),
                report.confidence_level, row.n_problems, row.n_samples] + ([row.n_clusters] if clustered else [])
                + [row.n_excluded, row.method or "", row.note])
        return render_table(header, rows, "csv")
    header = by + ["metric"] + (["judge"] if judged else []) + [
        "estimate", format_level(report.confidence_level) + " CI", "SE", "problems", "samples"] + (
        ["clusters"] if clustered else []) + ["excluded", "method"]
    right = set(range(len(by) + 1 + judged, len(header) - 1))
    rows = []
    for row in report.rows:
        rows.append([value for _, value in row.group] + [row.metric] + ([row.judge or MISSING] if judged else []) + [
            format_number(row.estimate), format_interval(row.low, row.high), format_number(row.standard_error),
            str(row.n_problems), str(row.n_samples)] + ([str(row.n_clusters or MISSING)] if clustered else [])
            + [str(row.n_excluded), row.method or row.note or MISSING])
    body = render_table(header, rows, fmt, right=right)
    return body + "\n" + format_tail("Excluded problems (not in the estimates)", report.exclusions, report.notes,
                               fmt == "markdown") + "\n"


def format_comparison(comparison: Comparison, fmt: str = "table") -> str:
    """Render a :class:`~kpass.Comparison` (``fmt`` in ``table``, ``markdown``, ``csv``, ``json``)."""
    text = json_if_asked(comparison, fmt)
    if text is not None:
        return text
    by = list(comparison.by)
    clustered = comparison.cluster_by is not None
    judged = any(row.judge is not None or row.judge_baseline is not None for row in comparison.rows)
    if fmt == "csv":
        header = by + ["metric", "model", "baseline"] + (["judge", "judge_baseline"] if judged else []) + [
            "difference", "low", "high", "standard_error", "p_value", "correlation", "estimate_model",
            "estimate_baseline", "confidence_level", "n_problems"] + (
            ["n_clusters"] if clustered else []) + ["n_excluded", "method", "note"]
        rows: list[list[Any]] = [[value for _, value in row.group] + [row.metric, row.model, row.baseline]
            + ([row.judge or "", row.judge_baseline or ""] if judged else []) + [
            format_raw(row.estimate), format_raw(row.low), format_raw(row.high),
            format_raw(row.standard_error), format_raw(row.p_value), format_raw(row.correlation), format_raw(row.estimate_model),
            format_raw(row.estimate_baseline), comparison.confidence_level, row.n_problems]
            + ([row.n_clusters] if clustered else []) + [row.n_excluded, row.method or "", row.note]
            for row in comparison.rows]
        return render_table(header, rows, "csv")
    header = by + ["metric", "model", "baseline"] + (["judge"] if judged else []) + [
        "model est", "baseline est", "difference", format_level(comparison.confidence_level) + " CI", "SE", "p-value",
        "corr", "problems"] + (["clusters"] if clustered else []) + ["excluded", "method"]
    right = set(range(len(by) + 3 + judged, len(header) - 1))
    rows = []
    for row in comparison.rows:
        rows.append([value for _, value in row.group] + [row.metric, row.model, row.baseline]
                    + ([_pair_judge(row.judge, row.judge_baseline)] if judged else []) + [
            format_number(row.estimate_model), format_number(row.estimate_baseline),
            format_number(row.estimate, signed=True), format_interval(row.low, row.high), format_number(row.standard_error), format_p_value(row.p_value),
            format_number(row.correlation, 3), str(row.n_problems)] + ([str(row.n_clusters or MISSING)] if clustered else [])
            + [str(row.n_excluded), row.method or row.note or MISSING])
    body = render_table(header, rows, fmt, right=right)
    return body + "\n" + format_tail("Excluded problems (not compared)", comparison.exclusions, comparison.notes,
                               fmt == "markdown") + "\n"


def _pair_judge(judge: str | None, judge_baseline: str | None) -> str:
    """One judge when model and baseline share it, else ``"model's / baseline's"``."""
    if judge == judge_baseline:
        return judge or MISSING
    return f"{judge or MISSING} / {judge_baseline or MISSING}"


def render(result: Report | Comparison, fmt: str = "table") -> str:
    """:func:`format_report` or :func:`format_comparison`, whichever fits ``result``."""
    if hasattr(result, "baseline"):
        return format_comparison(cast("Comparison", result), fmt)
    return format_report(result, fmt)


def _json_default(value: Any) -> Any:
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return value.item()
    raise TypeError(f"cannot serialise {type(value).__name__}")


def _quantity(value: Any) -> str:
    if isinstance(value, float):
        return format_number(value, 6, significant=True)
    return str(value)


def format_power(result: dict[str, Any], fmt: str = "table") -> str:
    """Render the result of ``kpass power`` (:func:`kpass.cli.power.compute_power`): one line per
    quantity (``table``), a two-column Markdown table, one CSV row, or JSON."""
    items = [(k, v) for k, v in result.items() if k != "notes"]
    if fmt == "json":
        return json.dumps(result, indent=2) + "\n"
    if fmt == "csv":
        return render_table([k for k, _ in items], [[v for _, v in items]], "csv")
    escape = markdown_text if fmt == "markdown" else terminal_text  # model and task names come from the pilot
    if fmt == "markdown":
        lines = markdown_lines(["quantity", "value"], [[k, _quantity(v)] for k, v in items], ["l", "r"])
    else:
        width = max(len(k) for k, _ in items)
        lines = [f"{k:<{width}}  {escape(_quantity(v))}" for k, v in items]
    lines += [f"note: {line}" for line in note_lines(result.get("notes", []), "markdown" if fmt == "markdown" else "table")]
    return "\n".join(lines) + "\n"
