"""``kpass crossover`` as text: a table per task, Markdown, CSV or JSON
(:class:`kpass.reports.crossover.CrossoverReport`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from kpass.render.formatting import json_if_asked
from kpass.render.notes import notes_block
from kpass.render.numbers import format_interval, format_level, format_number
from kpass.render.tables import render_table

if TYPE_CHECKING:  # pragma: no cover
    from kpass import metrics as core
    from kpass.reports.crossover import CrossoverReport

__all__ = ["format_crossover"]


def _k(value: int | None, k_max: int) -> str:
    return f"> {k_max}" if value is None else str(value)


def _shown_ks(result: core.CrossoverResult) -> list[int]:
    """Powers of two, k_max, and the k on either side of each crossing."""
    k_max = int(result.ks[-1])
    shown = {1 << i for i in range(int(math.log2(k_max)) + 1)} | {k_max}
    for crossing in (result.below, result.above):
        if crossing.k is not None:
            shown |= {max(crossing.k - 1, 1), crossing.k}
    return sorted(shown)


def _percent(value: float, undefined: str | None = None) -> str:
    if undefined is not None:
        return "undefined"
    return format_number(None) if math.isnan(value) else f"{100 * value + 0.0:.0f}%"  # + 0.0: never "-0%"


def _undefined_share_line(result: core.CrossoverResult, shown: list[int], level: str) -> str:
    """Why the lost / gained shares of the shown ks are undefined (empty when every one is defined)."""
    reasons: dict[str, list[int]] = {}
    for k in shown:
        reason = result.coverage.share_undefined[k - 1]
        if reason is not None:
            reasons.setdefault(reason, []).append(k)
    return "; ".join(f"lost / gained share undefined at k = {', '.join(map(str, ks))}: {reason}"
                     + (f" (its {level} interval holds 0)" if reason != "gap is 0" else "") for reason, ks in
                     reasons.items())


def format_crossover(report: CrossoverReport, fmt: str = "table") -> str:
    """Render a :class:`CrossoverReport` (``fmt`` in ``table``, ``markdown``, ``csv``, ``json``)."""
    text = json_if_asked(report, fmt)
    if text is not None:
        return text
    if fmt == "csv":
        rows = report.as_dict()["curves"]
        header = list(rows[0]) if rows else ["task", "k"]
        return render_table(header, [["" if row[h] is None else row[h] for h in header] for row in rows], "csv")
    level = format_level(report.confidence_level)
    parts = []
    for task, r in report.results.items():
        k_max = int(r.ks[-1])
        lines = [f"{task}: {report.model} vs base {report.base}, {r.n_problems} paired problems, k = 1..{k_max}"]
        for crossing, words in ((r.below, f"{report.model} falls below {report.base}"),
                                (r.above, f"{report.base} falls below {report.model}")):
            interval = f"{level} interval: k in [{_k(crossing.low, k_max)}, {_k(crossing.high, k_max)}]"
            if crossing.k is None:
                lines.append(f"  {words}: not within k <= {k_max} ({interval}; "
                             f"{crossing.share_without:.0%} of resamples never cross)")
            elif crossing.k == 1:
                lines.append(f"  {words.replace(' falls below ', ' is below ')} already at k = 1; {interval}")
            else:
                lines.append(f"  {words} at k = {crossing.k}, between k = {crossing.k - 1} and {crossing.k} "
                             f"(linear: {crossing.k_interpolated:.2f}); {interval}")
        cov = r.coverage
        lines.append(f"  coverage: {cov.n_lost} problems lost (base >= 1 correct, model none; {cov.n_robust_lost} "
                     f"robust), {cov.n_gained} gained ({cov.n_robust_gained} robust); robust = the winner correct in "
                     f">= {r.robust_fraction} of its samples")
        header = ["k", "base", "model", "model - base", f"{level} CI", "lost", "gained", "shared", "lost share",
                  "gained share"]
        rows = []
        shown = _shown_ks(r)
        for k in shown:
            i = k - 1
            undefined = cov.share_undefined[i]
            rows.append([str(k), format_number(r.base[i]), format_number(r.model[i]),
                         format_number(r.difference[i], signed=True),
                         format_interval(r.difference_low[i], r.difference_high[i], signed=True),
                         format_number(cov.lost[i], signed=True), format_number(cov.gained[i] + 0.0, signed=True),
                         format_number(cov.shared[i], signed=True), _percent(cov.share_lost[i], undefined),
                         _percent(cov.share_gained[i], undefined)])
        table = render_table(header, rows, fmt, right=range(len(header)))
        why = _undefined_share_line(r, shown, level)
        parts.append("\n".join(lines) + "\n\n" + table + (f"\n{why}" if why else ""))
    text = "\n\n".join(parts) + "\n"
    text += ("\nlost / gained / shared: parts of the base's lead (base - model) from the problems the model lost, "
             "gained, and the rest; they add up to it exactly.\n")
    if report.notes:
        text += notes_block(report.notes, fmt) + "\n"
    return text
