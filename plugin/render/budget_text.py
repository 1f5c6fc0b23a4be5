"""``kpass budget`` and ``kpass decompose`` as text: the budget table, the decomposition blocks,
their JSON and CSV records, and the exclusions and notes after them."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from kpass.notes import Note, as_notes
from kpass.render.formatting import exclusion_lines, format_tail
from kpass.render.notes import note_lines
from kpass.render.numbers import MISSING, format_interval, format_level, format_number
from kpass.render.tables import render_table

if TYPE_CHECKING:  # pragma: no cover
    from kpass.reports.report import Exclusion

__all__ = ["budget_label", "budget_table", "budget_tail", "decompose_block", "records_text"]


def records_text(records: list[dict[str, Any]], fmt: str, *, exclusions: Sequence[Exclusion] | None = None,
                 notes: Sequence[Note | str] = ()) -> str:
    """JSON ``{"rows": [...], "exclusions": [...], "notes": [...]}`` or CSV of the rows (a CSV has
    no room for exclusions and notes: they go to stderr, grouped by kind, never lost)."""
    if fmt == "json":
        data: dict[str, Any] = {"rows": records}
        if exclusions is not None:
            data["exclusions"] = [exclusion.as_dict() for exclusion in exclusions]
        data["notes"] = [note.as_dict() for note in as_notes(notes)]
        return json.dumps(data, indent=2, default=_json_default)
    for line in exclusion_lines(exclusions or ()):
        print(f"kpass: excluded: {line}", file=sys.stderr)
    for line in note_lines(notes, "table"):
        print(f"kpass: note: {line}", file=sys.stderr)
    header = list(records[0]) if records else []
    return render_table(header, [["" if v is None else v for v in record.values()] for record in records], "csv")


def _json_default(value: Any) -> Any:
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    if isinstance(value, (tuple, set)):
        return list(value)
    if isinstance(value, Fraction):
        return str(value)
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def budget_label(budget: int | None) -> str:
    """A budget as shown: ``as-run`` for the run as it was, else the number of tokens."""
    return "as-run" if budget is None else str(budget)


def budget_table(points: Sequence[tuple[str, str, Any]], judges: dict[tuple[str, str], str | None] | None, fmt: str,
                 *, confidence_level: float, method: str, ratio_method: str, clustered: bool, n_resamples: int,
                 seed: Any) -> str:
    """The table of ``kpass budget``: one row per (model, task, budget, k) point of
    :func:`kpass.metrics.budget_curve`, with a judge column when ``judges`` is given."""
    level = format_level(confidence_level)
    ks = sorted({point.k for _, _, point in points})
    k_label = str(ks[0]) if len(ks) == 1 else "k"
    headers = ["model", "task"] + (["judge"] if judges is not None else []) + ["budget"] + (
        ["k"] if len(ks) > 1 else []) + [
        f"fin@{k_label}", f"{level} interval", f"pass@{k_label}", f"{level} interval",
        f"pass@{k_label} | fin", f"{level} interval", "problems", "samples"]
    rows = []
    for model, task, point in points:
        row = [model, task] + ([judges[model, task] or MISSING] if judges is not None else []) + [
            budget_label(point.budget)] + ([str(point.k)] if len(ks) > 1 else [])
        for result in (point.fin_at_k, point.pass_at_k, point.pass_given_fin):
            row += [format_number(result.estimate), format_interval(result.low, result.high)]
        rows.append(row + [str(point.n_problems), str(point.n_samples)])
    return render_table(headers, rows, fmt,
                        title=f"token budgets: fin@{k_label}, pass@{k_label} ({method} intervals) and "
                              f"pass@{k_label} | fin = pass / fin ({ratio_method} over "
                              f"{'clusters' if clustered else 'problems'}, {n_resamples} resamples, seed {seed})")


def budget_tail(exclusions: Sequence[Exclusion], notes: Sequence[Note | str], fmt: str) -> str:
    """The exclusions and notes after a table (the same layout as ``kpass report``)."""
    if not exclusions and not notes:
        return ""
    return "\n" + format_tail("Excluded problems (not in the estimates)", exclusions, notes,
                              fmt == "markdown", say_none=False)


_TERMS = (
    ("base_pass", "pass@1 base", False),
    ("model_pass", "pass@1 model", False),
    ("delta", "delta pass@1", True),
    ("base_fin", "fin@1 base", False),
    ("model_fin", "fin@1 model", False),
    ("finishing", "F finishing", True),
    ("reliability", "P reliability", True),
    ("reach", "reach", True),
)


def decompose_block(task: str, d: Any, *, model: str, base: str, seed: Any, fmt: str) -> str:
    """One block of ``kpass decompose``: the terms of the decomposition ``d`` of one task and budget
    (:func:`kpass.metrics.decompose_budget_counts`), with their intervals."""
    level = format_level(d.confidence_level)
    method = "percentile" if d.method == "bootstrap" else "BCa"
    unit = "clusters" if d.n_clusters else "problems"
    reach_method = d.reach.method if d.reach.method == "score" else f"{method} bootstrap"
    title = (f"task {task}, budget {budget_label(d.budget)}: {model} vs {base}, {d.n_problems} "
             f"problems (|R|={d.n_reached} base-unreached, |M|={d.n_mirror} mirror, |S|={d.n_rest} rest)\n"
             f"{level} intervals, paired over {unit}, {d.n_resamples} resamples, seed {seed}: "
             f"pass, fin, delta {d.delta.method}; F, P, spread, matched {method} bootstrap; reach, robust "
             f"reach, lone wins {reach_method}")
    rows: list[list[str]] = []
    for name, label, signed in _TERMS:
        result = getattr(d, name)
        if name in ("finishing", "reliability"):
            label = f"{label} ({d.attribution})"
        rows.append([label, format_number(result.estimate, signed=signed),
                     format_interval(result.low, result.high, signed=signed)])
    rows.append(["F + P + reach",
                 format_number(d.finishing.estimate + d.reliability.estimate + d.reach.estimate, signed=True), ""])
    for attribution, (finishing, reliability) in d.attributions.items():
        if attribution == d.attribution:
            continue
        rows.append([f"F, P ({attribution})",
                     f"{format_number(finishing.estimate, signed=True)}, {format_number(reliability.estimate, signed=True)}",
                     f"{format_interval(finishing.low, finishing.high, signed=True)}, "
                     f"{format_interval(reliability.low, reliability.high, signed=True)}"])
    extra = (
        ("attribution_spread", "attribution spread |I|", False, ""),
        ("robust_reach", "robust reach", False, f"{d.n_robust_reach} of {d.n_reached} problems in R"),
        ("robust_reach_mirror", "robust reach (mirror)", False, f"{d.n_robust_reach_mirror} of {d.n_mirror} in M"),
        ("lone_wins_model", "lone wins model", False, f"{d.n_lone_wins_model} problems"),
        ("lone_wins_base", "lone wins base", False, f"{d.n_lone_wins_base} problems"),
        ("matched_reliability_base", "matched pass@1|fin base", False, f"{d.n_matched} matched problems"),
        ("matched_reliability_model", "matched pass@1|fin model", False, ""),
        ("matched_reliability_delta", "matched reliability delta", True, ""),
    )
    for name, label, signed, note in extra:
        result = getattr(d, name)
        rows.append([label, format_number(result.estimate, signed=signed),
                     format_interval(result.low, result.high, signed=signed), note])
    headers = ["term", "estimate", f"{level} interval", "note"]
    for row in rows:
        row.extend([""] * (len(headers) - len(row)))
    return render_table(headers, rows, fmt, title=title)
