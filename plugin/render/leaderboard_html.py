"""One self-contained HTML page for a kpass leaderboard (inline CSS, JS and SVG; works offline).

:func:`render_html` reads the JSON form of a leaderboard (:meth:`kpass.reports.leaderboard.Leaderboard.as_dict`)
and writes a page with no external resource at all (no CDN, no font, no image file):

* a sortable table (click or press Enter on a header): the rank interval by the sort metric,
  drawn as a bar over ranks 1..M, and every metric's estimate with its interval drawn as a bar on
  a scale shared by the column;
* the pairwise paired comparisons with Holm-adjusted p-values;
* pass@k against k (log2 axis) per model with interval bands, and pass@1 / fin@1 against the
  token budget when the logs carry token counts; charts are inline SVG generated here;
* the leaderboard's JSON in a ``<script type="application/json" id="kpass-data">`` element, so
  the numbers on the page can be checked against it (the browser test does).

Every number shown is formatted by the same functions as the Markdown output
(:mod:`kpass.render.numbers`, with :data:`~kpass.render.leaderboard_text.LEADERBOARD_DIGITS`).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from kpass.render.escape import html_json, html_text
from kpass.render.leaderboard_text import format_number, format_p_value, format_rank, leaderboard_notes, shown_comparisons
from kpass.render.notes import note_lines
from kpass.render.numbers import MISSING

__all__ = ["render_html"]

#: Colour-blind-safe palette (Okabe and Ito), cycled with dash patterns past its length.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#999999")
_DASHES = ("", "6 3", "2 3", "8 3 2 3")

_CSS = """
:root { --fg: #1d1d1f; --muted: #666; --line: #d8d8d8; --accent: #0072B2; --band: #e8f0f8; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       margin: 24px auto; max-width: 1200px; padding: 0 16px; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
p.kp-meta { color: var(--muted); margin: 0 0 16px; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { padding: 5px 8px; border-bottom: 1px solid var(--line); text-align: left;
         vertical-align: middle; white-space: nowrap; }
th { background: #f6f6f6; font-weight: 600; position: sticky; top: 0; }
th[data-sort-type] { cursor: pointer; user-select: none; }
th[data-sort-type]:hover { background: #ececec; }
th[data-sort-type]::after { content: " \\2195"; color: #aaa; font-weight: 400; }
th[aria-sort="ascending"]::after { content: " \\2191"; color: var(--accent); }
th[aria-sort="descending"]::after { content: " \\2193"; color: var(--accent); }
td.kp-num, th.kp-num { text-align: right; }
.kp-est { font-weight: 600; } .kp-ci { color: var(--muted); font-size: 12px; margin-left: 4px; }
svg.kp-bar { display: block; margin-top: 2px; }
tr.kp-significant td { background: #fff7e6; }
.kp-charts { display: flex; flex-wrap: wrap; gap: 16px; }
figure { margin: 0; } figcaption { color: var(--muted); font-size: 12px; max-width: 560px; }
ul.kp-notes { color: var(--muted); }
footer { color: var(--muted); font-size: 12px; margin-top: 32px; }
"""

_JS = """
(function () {
  "use strict";
  function cellKey(row, column, type) {
    var cell = row.cells[column];
    var raw = cell ? cell.getAttribute("data-sort") : null;
    if (raw === null || raw === "") { return null; }
    return type === "number" ? parseFloat(raw) : raw.toLowerCase();
  }
  function sortTable(table, column, header) {
    var type = header.getAttribute("data-sort-type");
    var current = header.getAttribute("aria-sort");
    var direction = current === "ascending" ? "descending"
                  : current === "descending" ? "ascending"
                  : (header.getAttribute("data-sort-first") || "ascending");
    var headers = table.tHead.rows[0].cells;
    for (var i = 0; i < headers.length; i++) { headers[i].removeAttribute("aria-sort"); }
    header.setAttribute("aria-sort", direction);
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var keyed = rows.map(function (row, index) {
      return { row: row, key: cellKey(row, column, type), index: index };
    });
    var sign = direction === "ascending" ? 1 : -1;
    keyed.sort(function (a, b) {
      if (a.key === null && b.key === null) { return a.index - b.index; }
      if (a.key === null) { return 1; }          /* missing values always last */
      if (b.key === null) { return -1; }
      if (a.key < b.key) { return -sign; }
      if (a.key > b.key) { return sign; }
      return a.index - b.index;                  /* stable */
    });
    keyed.forEach(function (item) { body.appendChild(item.row); });
  }
  var tables = document.querySelectorAll("table.kp-sortable");
  Array.prototype.forEach.call(tables, function (table) {
    var headers = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(headers, function (header, column) {
      if (!header.hasAttribute("data-sort-type")) { return; }
      header.tabIndex = 0;
      header.addEventListener("click", function () { sortTable(table, column, header); });
      header.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          sortTable(table, column, header);
        }
      });
    });
  });
})();
"""


_esc = html_text


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def _nice_domain(lows: Sequence[float], highs: Sequence[float]) -> tuple[float, float]:
    """A shared axis for one column: the range of its intervals, widened to round steps."""
    values = [v for v in (*lows, *highs) if _finite(v)]
    if not values:
        return 0.0, 1.0
    low, high = min(values), max(values)
    if high - low < 1e-12:
        pad = max(abs(high) * 0.05, 0.05)
        return low - pad, high + pad
    step = 10 ** math.floor(math.log10(high - low)) / 2
    domain = (math.floor(low / step) * step, math.ceil(high / step) * step)
    if 0.0 <= low and high <= 1.0:            # keep bounded metrics inside [0, 1]
        domain = (max(domain[0], 0.0), min(domain[1], 1.0))
    return domain


def _interval_bar(low: float, estimate: float, high: float, domain: tuple[float, float],
                  *, width: int = 140, height: int = 12, label: str = "") -> str:
    """An inline SVG bar: the interval as a filled band, the estimate as a tick."""
    lo, hi = domain
    span = (hi - lo) or 1.0

    def x(value: float) -> float:
        return round(2 + (width - 4) * min(max((value - lo) / span, 0.0), 1.0), 2)

    middle = height / 2
    return (f'<svg class="kp-bar" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'role="img" aria-label="{_esc(label)}">'
            f'<line x1="2" y1="{middle}" x2="{width - 2}" y2="{middle}" stroke="#ddd" stroke-width="1"/>'
            f'<rect class="kp-interval" x="{x(low)}" y="{middle - 3}" width="{max(x(high) - x(low), 1.5)}" '
            f'height="6" rx="2" fill="#9cc3e3"/>'
            f'<line class="kp-estimate" x1="{x(estimate)}" y1="1" x2="{x(estimate)}" '
            f'y2="{height - 1}" stroke="#0072B2" stroke-width="2"/></svg>')


def _main_table(data: Mapping[str, Any]) -> str:
    level = f"{100 * data['confidence_level']:g}%"
    n_models = len(data["models"])
    columns = data["columns"]
    domains = {}
    for column in columns:
        cells = [m["metrics"].get(column["key"]) for m in data["models"]]
        domains[column["key"]] = _nice_domain([c["low"] for c in cells if c],
                                              [c["high"] for c in cells if c])
    sort_key = data["sort"]
    head = [f'<th data-sort-type="number" data-sort-first="ascending" data-column="rank" '
            f'title="Range of ranks by {_esc(sort_key)} in {level} of paired bootstrap resamples">'
            f'rank by {_esc(sort_key)}</th>',
            '<th data-sort-type="text" data-sort-first="ascending" data-column="model">model</th>']
    for column in columns:
        first = "descending" if column.get("higher_is_better", True) else "ascending"
        lo, hi = domains[column["key"]]
        head.append(f'<th data-sort-type="number" data-sort-first="{first}" '
                    f'data-column="{_esc(column["key"])}" '
                    f'title="estimate [{level} CI]; bars on the scale {format_number(lo)} to '
                    f'{format_number(hi)}">{_esc(column["key"])}</th>')
    head.append('<th class="kp-num" data-sort-type="number" data-sort-first="descending" '
                'data-column="n_problems">problems</th>')
    head.append('<th class="kp-num" data-sort-type="number" data-sort-first="descending" '
                'data-column="n_samples">samples</th>')
    body = []
    for entry in data["models"]:
        rank = entry["ranks"].get(sort_key)
        cells = []
        if rank:
            rank_bar = _interval_bar(rank["low"], rank["rank"], rank["high"],
                                     (0.5, n_models + 0.5), width=100,
                                     label=f"rank interval {format_rank(rank)} of {n_models}")
            cells.append(f'<td class="kp-rank" data-column="rank" data-sort="{rank["rank"]}" '
                         f'data-rank="{rank["rank"]}" data-low="{rank["low"]}" '
                         f'data-high="{rank["high"]}"><span class="kp-est">{format_rank(rank)}</span>'
                         f'{rank_bar}</td>')
        else:
            cells.append(f'<td class="kp-rank" data-column="rank" data-sort="">{MISSING}</td>')
        cells.append(f'<td class="kp-model" data-column="model" data-sort="{_esc(entry["model"])}">'
                     f'{_esc(entry["model"])}</td>')
        for column in columns:
            key = column["key"]
            cell = entry["metrics"].get(key)
            if not cell or not _finite(cell["estimate"]):
                cells.append(f'<td data-column="{_esc(key)}" data-sort="">{MISSING}</td>')
                continue
            column_rank = entry["ranks"].get(key)
            title = (f'{key}: {format_number(cell["estimate"])} [{format_number(cell["low"])}, '
                     f'{format_number(cell["high"])}], SE {format_number(cell["standard_error"])}, '
                     f'{cell["n_problems"]} problems, {cell["method"]}'
                     + (f'; rank {format_rank(column_rank)}' if column_rank else ""))
            low = cell["low"] if _finite(cell["low"]) else cell["estimate"]
            high = cell["high"] if _finite(cell["high"]) else cell["estimate"]
            bar = _interval_bar(low, cell["estimate"], high, domains[key], label=title)
            cells.append(
                f'<td data-column="{_esc(key)}" data-sort="{cell["estimate"]!r}" '
                f'data-estimate="{cell["estimate"]!r}" data-low="{cell["low"]!r}" '
                f'data-high="{cell["high"]!r}" title="{_esc(title)}">'
                f'<span class="kp-est">{format_number(cell["estimate"])}</span>'
                f'<span class="kp-ci">[{format_number(cell["low"])}, {format_number(cell["high"])}]'
                f'</span>{bar}</td>')
        cells.append(f'<td class="kp-num" data-column="n_problems" data-sort="{entry["n_problems"]}">'
                     f'{entry["n_problems"]}</td>')
        cells.append(f'<td class="kp-num" data-column="n_samples" data-sort="{entry["n_samples"]}">'
                     f'{entry["n_samples"]}</td>')
        body.append(f'<tr data-model="{_esc(entry["model"])}">' + "".join(cells) + "</tr>")
    return ('<table id="kp-leaderboard" class="kp-sortable"><thead><tr>' + "".join(head)
            + "</tr></thead><tbody>" + "\n".join(body) + "</tbody></table>")


def _comparisons_table(data: Mapping[str, Any]) -> str:
    if not data["comparisons"]:
        return ""
    comparisons, hidden = shown_comparisons(data)
    family = data["comparison_family"]
    level = f"{100 * data['confidence_level']:g}%"
    alpha = 1 - data["confidence_level"]
    against = {"baseline": f"every model against <b>{_esc(family['baseline'])}</b>",
               "adjacent": "neighbours in the sorted order"}.get(family["pairs"], "all pairs of models")
    if hidden:
        against += (f" (the {len(comparisons)} between neighbours shown; all "
                    f"{len(comparisons) + hidden} in the JSON output)")
    rows = []
    for c in comparisons:
        significant = _finite(c["p_value_holm"]) and c["p_value_holm"] <= alpha
        rows.append(
            f'<tr class="{"kp-significant" if significant else ""}" data-model-a="{_esc(c["model_a"])}" '
            f'data-model-b="{_esc(c["model_b"])}">'
            f'<td data-sort="{_esc(c["model_a"])}">{_esc(c["model_a"])}</td>'
            f'<td data-sort="{_esc(c["model_b"])}">{_esc(c["model_b"])}</td>'
            f'<td class="kp-num" data-sort="{c["difference"]!r}">{format_number(c["difference"])}'
            f'<span class="kp-ci">[{format_number(c["low"])}, {format_number(c["high"])}]</span></td>'
            f'<td class="kp-num" data-sort="{"" if c["p_value"] is None else repr(c["p_value"])}">'
            f'{format_p_value(c["p_value"])}</td>'
            f'<td class="kp-num" data-sort="{"" if c["p_value_holm"] is None else repr(c["p_value_holm"])}">'
            f'{format_p_value(c["p_value_holm"])}</td>'
            f'<td class="kp-num" data-sort="{c["n_problems"]}">{c["n_problems"]}</td></tr>')
    head = ('<th data-sort-type="text">model A</th><th data-sort-type="text">model B</th>'
            f'<th class="kp-num" data-sort-type="number" data-sort-first="descending">A &minus; B '
            f'[{level} CI]</th>'
            '<th class="kp-num" data-sort-type="number">p</th>'
            '<th class="kp-num" data-sort-type="number">p (Holm)</th>'
            '<th class="kp-num" data-sort-type="number" data-sort-first="descending">problems</th>')
    return (f'<h2>Paired comparisons in {_esc(family["column"])}</h2>'
            f'<p class="kp-meta">{against}, on the problems both models answered; p-values '
            f'Holm-adjusted over the {family["size"]} comparisons. Highlighted: adjusted p &le; '
            f'{alpha:g}.</p>'
            '<table id="kp-comparisons" class="kp-sortable"><thead><tr>' + head
            + "</tr></thead><tbody>" + "\n".join(rows) + "</tbody></table>")


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    if high <= low:
        return [low]
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = min((m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw), default=raw)
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + 1e-9 * step:
        ticks.append(round(value, 12))
        value += step
    return ticks


def line_chart(series: Sequence[Mapping[str, Any]], *, title: str, x_label: str, y_label: str,
               log2_x: bool, chart_id: str, width: int = 560, height: int = 320) -> str:
    """An inline SVG line chart with interval bands.

    Parameters
    ----------
    series : sequence of mapping
        Each ``{"name": str, "points": [{"x", "estimate", "low", "high"}, ...]}``.
    title, x_label, y_label : str
        Texts of the chart.
    log2_x : bool
        Whether the x axis is logarithmic (base 2, ticks at powers of two).
    chart_id : str
        ``id`` of the ``<svg>`` element.
    """
    left, right, top, bottom = 52, 170, 28, 44
    plot_w, plot_h = width - left - right, height - top - bottom
    xs = [p["x"] for s in series for p in s["points"]]
    ys = [v for s in series for p in s["points"] for v in (p["low"], p["high"], p["estimate"])
          if _finite(v)]
    if not xs or not ys:
        return ""
    tx = (lambda v: math.log2(v)) if log2_x else (lambda v: float(v))
    x_lo, x_hi = tx(min(xs)), tx(max(xs))
    if x_hi == x_lo:
        x_lo, x_hi = x_lo - 1, x_hi + 1
    y_lo, y_hi = min(ys), max(ys)
    y_lo, y_hi = math.floor(y_lo * 10) / 10, math.ceil(y_hi * 10) / 10
    if 0 <= min(ys) and max(ys) <= 1:
        y_lo, y_hi = max(y_lo, 0.0), min(y_hi, 1.0)
    if y_hi == y_lo:
        y_lo, y_hi = y_lo - 0.05, y_hi + 0.05

    def px(v: float) -> float:
        return round(left + plot_w * (tx(v) - x_lo) / (x_hi - x_lo), 2)

    def py(v: float) -> float:
        return round(top + plot_h * (1 - (v - y_lo) / (y_hi - y_lo)), 2)

    parts = [f'<svg id="{_esc(chart_id)}" class="kp-chart" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{_esc(title)}" '
             f'font-family="system-ui, sans-serif" font-size="11">',
             f'<text x="{left}" y="16" font-size="13" font-weight="600">{_esc(title)}</text>']
    for tick in _ticks(y_lo, y_hi):
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{py(tick)}" y2="{py(tick)}" '
                     f'stroke="#eee"/><text x="{left - 6}" y="{py(tick) + 4}" text-anchor="end">'
                     f'{tick:g}</text>')
    if log2_x:
        x_ticks = [2 ** e for e in range(math.ceil(x_lo - 1e-9), math.floor(x_hi + 1e-9) + 1)]
        stride = max(1, math.ceil(len(x_ticks) / 10))
        x_ticks = x_ticks[::stride]
    else:
        x_ticks = _ticks(min(xs), max(xs))
    for tick in x_ticks:
        parts.append(f'<line x1="{px(tick)}" x2="{px(tick)}" y1="{top}" y2="{top + plot_h}" '
                     f'stroke="#f2f2f2"/><text x="{px(tick)}" y="{top + plot_h + 16}" '
                     f'text-anchor="middle">{tick:g}</text>')
    parts.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" '
                 f'stroke="#bbb"/>')
    parts.append(f'<text x="{left + plot_w / 2}" y="{height - 8}" text-anchor="middle">'
                 f'{_esc(x_label)}</text>')
    parts.append(f'<text transform="translate(14 {top + plot_h / 2}) rotate(-90)" '
                 f'text-anchor="middle">{_esc(y_label)}</text>')
    for index, item in enumerate(series):
        color = PALETTE[index % len(PALETTE)]
        dash = _DASHES[(index // len(PALETTE)) % len(_DASHES)]
        points = sorted((p for p in item["points"] if _finite(p["estimate"])), key=lambda p: p["x"])
        if not points:
            continue
        band = [p for p in points if _finite(p["low"]) and _finite(p["high"])]
        if len(band) > 1:
            outline = ([f"{px(p['x'])},{py(p['high'])}" for p in band]
                       + [f"{px(p['x'])},{py(p['low'])}" for p in reversed(band)])
            parts.append(f'<polygon points="{" ".join(outline)}" fill="{color}" fill-opacity="0.13" '
                         f'stroke="none"/>')
        line = " ".join(f"{px(p['x'])},{py(p['estimate'])}" for p in points)
        parts.append(f'<polyline class="kp-series" data-name="{_esc(item["name"])}" points="{line}" '
                     f'fill="none" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/>')
        for p in points:
            tip = (f'{item["name"]}: {format_number(p["estimate"])} [{format_number(p["low"])}, '
                   f'{format_number(p["high"])}] at {x_label} = {p["x"]:g}')
            parts.append(f'<circle cx="{px(p["x"])}" cy="{py(p["estimate"])}" r="2.6" fill="{color}">'
                         f'<title>{_esc(tip)}</title></circle>')
        legend_y = top + 8 + 16 * index
        if legend_y < height - 10:
            parts.append(f'<line x1="{left + plot_w + 12}" x2="{left + plot_w + 32}" y1="{legend_y}" '
                         f'y2="{legend_y}" stroke="{color}" stroke-width="2.5" '
                         f'stroke-dasharray="{dash}"/><text x="{left + plot_w + 37}" '
                         f'y="{legend_y + 4}">{_esc(item["name"])[:22]}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _chart_id(prefix: str, name: str) -> str:
    """An element id (no whitespace): ``kp-curve-pass@k``, ``kp-budget-code:-pass@1``."""
    return f"{prefix}-" + "-".join(str(name).split())


def _charts(data: Mapping[str, Any]) -> str:
    figures = []
    level = f"{100 * data['confidence_level']:g}%"
    order = [entry["model"] for entry in data["models"]]
    curves = data.get("curves") or {}
    for metric, per_model in curves.items():
        series = [{"name": model, "points": [{"x": p["k"], **p} for p in per_model[model]]}
                  for model in order if per_model.get(model)]
        chart = line_chart(series, title=f"{metric} against k", x_label="k", y_label=metric,
                           log2_x=True, chart_id=_chart_id("kp-curve", metric))
        if chart:
            figures.append(f"<figure>{chart}<figcaption>{_esc(metric)} per model with {level} "
                           f"intervals (bands), k up to the fewest samples of any of the model's problems, so "
                           f"every point averages the same problems."
                           f"</figcaption></figure>")
    budget = data.get("budget_curves") or {}
    for metric, per_model in budget.items():
        series = [{"name": model, "points": [{"x": p["budget"], **p} for p in per_model[model]]}
                  for model in order if per_model.get(model)]
        budgets = [p["x"] for s in series for p in s["points"]]
        log2 = bool(budgets) and min(budgets) > 0 and max(budgets) / min(budgets) >= 8
        chart = line_chart(series, title=f"{metric} against the token budget",
                           x_label="token budget B", y_label=metric, log2_x=log2,
                           chart_id=_chart_id("kp-budget", metric))
        if chart:
            figures.append(f"<figure>{chart}<figcaption>{_esc(metric)}(B) per model with {level} "
                           f"intervals: each sample truncated at B output tokens.</figcaption></figure>")
    if not figures:
        return ""
    return '<h2>Curves</h2><div class="kp-charts">' + "".join(figures) + "</div>"


def render_html(data: Mapping[str, Any], *, title: str = "kpass leaderboard") -> str:
    """The whole leaderboard page as one self-contained HTML document.

    Parameters
    ----------
    data : mapping
        The JSON form of a leaderboard (:meth:`kpass.reports.leaderboard.Leaderboard.as_dict`).
    title : str, default: "kpass leaderboard"
        Page title and heading.

    Returns
    -------
    str
        HTML5 with inline CSS, JS and SVG and no external reference.
    """
    level = f"{100 * data['confidence_level']:g}%"
    cluster = (f"clusters of <code>{_esc(data['cluster_by'])}</code>" if data.get("cluster_by")
               else "problems")
    meta = (f"{len(data['models'])} models &middot; {len(data['columns'])} metric column(s) &middot; "
            f"{level} intervals &middot; rank intervals and comparisons from {data['n_resamples']:,} "
            f"paired bootstrap resamples of {cluster}"
            + (f" (seed {data['seed']})" if data.get("seed") is not None else ""))
    notes = leaderboard_notes(data)
    notes_html = ("<h2>Notes</h2><ul class=\"kp-notes\">" + "".join(note_lines(notes, "html")) + "</ul>") if notes else ""
    payload = html_json(data, allow_nan=False)  # <, > and & as \u escapes: no name ends the element
    explanation = (
        f"Each cell: estimate and {level} interval; the bar draws the interval on a scale shared "
        f"by the column. The rank interval is the range of ranks a model takes in {level} of "
        f"resamples of the benchmark (the same resample for every model); ties share the best "
        f"rank. Click a column header to sort.")
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{_esc(title)}</h1>",
        f'<p class="kp-meta">{meta}</p>',
        f'<p class="kp-meta">{_esc(explanation)}</p>',
        _main_table(data),
        _comparisons_table(data),
        _charts(data),
        notes_html,
        f'<footer>Generated by kpass {_esc(data.get("kpass_version", ""))}. Works offline: '
        f"everything on this page is in this file.</footer>",
        f'<script type="application/json" id="kpass-data">{payload}</script>',
        f"<script>{_JS}</script>",
        "</body></html>",
    ]) + "\n"
