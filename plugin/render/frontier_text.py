"""``kpass frontier`` as text: the configurations and the leaders per compute level, as a
table, Markdown, CSV or JSON (:class:`kpass.reports.frontier.FrontierReport`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kpass.render.formatting import json_if_asked
from kpass.render.notes import notes_block
from kpass.render.numbers import MISSING, format_interval, format_level, format_number
from kpass.render.tables import render_table

if TYPE_CHECKING:  # pragma: no cover
    from kpass.reports.frontier import FrontierReport

__all__ = ["format_frontier"]


def _compute_text(value: float, unit: str) -> str:
    if unit == "dollars":
        return f"${value:.4g}"
    if unit == "tokens":
        return f"{value:,.0f}"
    return f"{value:.4g}"


def format_frontier(report: FrontierReport, fmt: str = "table") -> str:
    """Render a :class:`FrontierReport` (``fmt`` in ``table``, ``markdown``, ``csv``, ``json``)."""
    text = json_if_asked(report, fmt)
    if text is not None:
        return text
    if fmt == "csv":
        header = ["task", "compute", "leader", "leader_metric", "leader_estimate", "runner_up", "runner_up_metric",
                  "runner_up_estimate", "difference", "low", "high", "p_value"]
        return render_table(header, [["" if row.get(h) is None else row.get(h) for h in header]
                                     for row in report.leaders], "csv")
    level = f"{format_level(report.confidence_level)} CI"
    parts = []
    for task in dict.fromkeys(p["task"] for p in report.points):
        points = sorted((p for p in report.points if p["task"] == task), key=lambda p: (p["compute"], p["model"]))
        rows = [[p["model"], p["metric"], _compute_text(p["compute"], report.unit), format_number(p["estimate"]),
                 format_interval(p["low"], p["high"]), "yes" if p.get("on_frontier") else ""] for p in points]
        header = ["model", "metric", report.unit_label, "estimate", level, "Pareto"]
        lead_rows = []
        for entry in (e for e in report.leaders if e["task"] == task):
            lead_rows.append([
                _compute_text(entry["compute"], report.unit),
                f"{entry['leader']} {entry['leader_metric']}" if entry["leader"] else MISSING,
                format_number(entry.get("leader_estimate")),
                f"{entry['runner_up']} {entry['runner_up_metric']}" if entry.get("runner_up") else MISSING,
                format_number(entry.get("runner_up_estimate")), format_number(entry.get("difference"), signed=True),
                format_interval(entry.get("low"), entry.get("high"), signed=True)])
        lead_header = ["compute <=", "leader", "score", "runner-up", "score", "difference", f"{level} (paired)"]
        parts.append(render_table(header, rows, fmt, right={2, 3, 4}, title=f"{task}: configurations ({report.unit})")
                     + "\n\n" + render_table(lead_header, lead_rows, fmt, right={0, 2, 4, 5, 6},
                                              title=f"{task}: best configuration of each model within each "
                                                    "compute level"))
    text = "\n\n".join(parts) + "\n"
    if report.notes:
        text += notes_block(report.notes, fmt) + "\n"
    return text
