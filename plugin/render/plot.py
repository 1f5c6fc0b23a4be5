"""Plots for ``kpass report --plot`` and ``kpass compare --plot`` (extra ``plot``: matplotlib).

matplotlib is imported lazily and used through :class:`matplotlib.figure.Figure` with the Agg
canvas, so no GUI backend and no global pyplot state is touched. The file format follows the
suffix (``.png`` or ``.svg``). Every function returns the figure; the command writes it
(:func:`kpass.cli.output.save_figure`, atomically).

- Report: pass@k against k (log2 axis) with interval bands per model (``pass@K[extrapolate]`` as
  its own dashed series labelled "extrapolated"); G-Pass@k_tau against tau
  (one line per model and k); every other metric as a point with its interval. One row of panels
  per task.
- Comparison: each model's difference from the baseline with its interval, per metric, one
  panel per task, with a line at zero.

Names from the files (models, tasks, metrics) are drawn as plain text
(:func:`kpass.render.escape.plot_text`: never mathtext, so ``cost $5 and $6`` is drawn as written).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from kpass.errors import UsageError
from kpass.render.escape import legend_label, plot_text

if TYPE_CHECKING:  # pragma: no cover
    from kpass.reports.compare import Comparison
    from kpass.reports.report import Report

__all__ = ["plot_budget_curves", "plot_comparison", "plot_decomposition", "plot_report"]


def _figure(n_rows: int, n_cols: int, size: tuple[float, float] = (5.0, 3.6), sharex: bool = False):
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise UsageError("--plot needs matplotlib: pip install 'kpass[plot]'") from None
    figure = Figure(figsize=(size[0] * n_cols, size[1] * n_rows), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(n_rows, n_cols, squeeze=False, sharex=sharex)
    return figure, axes


def _label(group, skip: str) -> str:
    return ", ".join(value for name, value in group if name != skip) or "all"


class _Estimate(NamedTuple):
    """A row's estimate and interval as drawn: a missing bound sits at the estimate."""

    estimate: float
    low: float
    high: float

    @classmethod
    def of(cls, estimate: float, low: float | None, high: float | None) -> _Estimate:
        return cls(estimate, estimate if low is None else low, estimate if high is None else high)


def plot_report(report: Report) -> Any:
    """A report drawn as the module docstring says (a matplotlib ``Figure``)."""
    curves: dict[str, dict[str, list[tuple[int, _Estimate]]]] = defaultdict(lambda: defaultdict(list))
    taus: dict[str, dict[str, list[tuple[float, _Estimate]]]] = defaultdict(lambda: defaultdict(list))
    points: dict[str, list[tuple[str, str, _Estimate]]] = defaultdict(list)
    specs = {spec.name: spec for spec in report.metrics}
    for row in report.rows:
        if row.estimate is None:
            continue
        drawn = _Estimate.of(row.estimate, row.low, row.high)
        spec = specs[row.metric]
        task = row.task if row.task is not None else "all"
        series = _label(row.group, "task")
        if spec.family == "pass@k" and spec.budget is None:
            # model-based values are never drawn as if measured: their own dashed series
            extrapolated = " (extrapolated)" if spec.params.get("extrapolate") else ""
            curves[task][series + extrapolated].append((spec.k, drawn))
        elif spec.family == "G-Pass@k" and spec.budget is None:
            taus[task][f"{series}, k={spec.k}"].append((float(spec.parameter), drawn))
        else:
            points[task].append((row.metric, series, drawn))
    tasks = list(dict.fromkeys([*curves, *taus, *points]))
    kinds = [name for name, data in (("pass", curves), ("gpass", taus), ("points", points)) if data]
    if not tasks:
        raise UsageError("nothing to plot: no metric has an estimate")
    figure, axes = _figure(len(tasks), len(kinds))
    level = f"{report.confidence_level:.0%}"
    for r, task in enumerate(tasks):
        for c, kind in enumerate(kinds):
            ax = axes[r][c]
            if kind == "pass":
                _draw_bands(ax, curves.get(task, {}))
                ax.set_xscale("log", base=2)
                ax.set_xlabel("k")
                ax.set_ylabel(f"pass@k ({level} interval)")
            elif kind == "gpass":
                _draw_bands(ax, taus.get(task, {}))
                ax.set_xlabel("tau")
                ax.set_ylabel(f"G-Pass@k_tau ({level} interval)")
            else:
                _draw_points(ax, points.get(task, []))
                ax.set_ylabel(f"estimate ({level} interval)")
            ax.set_ylim(-0.02, 1.02)
            ax.set_title(plot_text(task))
            ax.grid(alpha=0.3)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize="small")
    return figure


def _draw_bands(ax: Any, series_entries: Mapping[str, Sequence[tuple[float, _Estimate]]]) -> None:
    """One line with its interval band per series, over x (k, or tau); a series named
    "... (extrapolated)" dashed."""
    for series, entries in series_entries.items():
        ordered = sorted(entries, key=lambda item: item[0])
        xs = [x for x, _ in ordered]
        line, = ax.plot(xs, [drawn.estimate for _, drawn in ordered], marker="o", label=legend_label(series),
                        linestyle="--" if series.endswith("(extrapolated)") else "-")
        ax.fill_between(xs, [drawn.low for _, drawn in ordered], [drawn.high for _, drawn in ordered],
                        alpha=0.2, color=line.get_color())


def _draw_points(ax: Any, entries: Sequence[tuple[str, str, _Estimate]]) -> None:
    """Every metric as a point with its interval, the series side by side at each metric."""
    metrics = list(dict.fromkeys(metric for metric, _, _ in entries))
    series_names = list(dict.fromkeys(series for _, series, _ in entries))
    width = 0.8 / max(len(series_names), 1)
    for s, series in enumerate(series_names):
        chosen = [(metric, drawn) for metric, name, drawn in entries if name == series]
        xs = [metrics.index(metric) + (s - (len(series_names) - 1) / 2) * width for metric, _ in chosen]
        ys = [drawn.estimate for _, drawn in chosen]
        errors = [[drawn.estimate - drawn.low for _, drawn in chosen], [drawn.high - drawn.estimate for _, drawn in chosen]]
        ax.errorbar(xs, ys, yerr=errors, fmt="o", capsize=3, label=legend_label(series))
    ax.set_xticks(range(len(metrics)), [plot_text(metric) for metric in metrics], rotation=30, ha="right")
    ax.set_xlim(-0.6, len(metrics) - 0.4)


def plot_comparison(comparison: Comparison) -> Any:
    """Each model's paired difference from the baseline per metric, one panel per task (a ``Figure``)."""
    by_task: dict[str, list[tuple[str, _Estimate]]] = defaultdict(list)
    for row in comparison.rows:
        if row.estimate is not None:
            by_task[row.task if row.task is not None else "all"].append(
                (f"{row.metric}: {row.model}", _Estimate.of(row.estimate, row.low, row.high)))
    if not by_task:
        raise UsageError("nothing to plot: no comparison has an estimate")
    figure, axes = _figure(len(by_task), 1)
    for r, (task, entries) in enumerate(by_task.items()):
        ax = axes[r][0]
        labels = [plot_text(label) for label, _ in entries]
        ys = list(range(len(entries)))[::-1]
        low = [drawn.estimate - drawn.low for _, drawn in entries]
        high = [drawn.high - drawn.estimate for _, drawn in entries]
        ax.errorbar([drawn.estimate for _, drawn in entries], ys, xerr=[low, high], fmt="o", capsize=3)
        ax.axvline(0.0, color="grey", linewidth=1)
        ax.set_yticks(ys, labels)
        ax.set_xlabel(plot_text(f"difference from {comparison.baseline} ({comparison.confidence_level:.0%} "
                                f"interval, paired)"))
        ax.set_title(plot_text(task))
        ax.grid(alpha=0.3)
    return figure


def _budget_label(budget: int | None) -> str:
    return "as-run" if budget is None else str(budget)


def plot_budget_curves(points: list[tuple[str, str, Any]]) -> Any:
    """pass@k(B) and fin@k(B) against the token budget (log2 axis) with interval bands, one line
    per model, task and k; ``points`` are ``(model, task, BudgetCurvePoint)`` (``kpass budget``)."""
    finite = [p for _, _, p in points if p.budget is not None]
    if not finite:
        raise UsageError("--plot draws metrics against the budget: give numeric --budgets")
    figure, axes = _figure(1, 2, size=(5.0, 4.0), sharex=True)
    ax_pass, ax_fin = axes[0]
    series: dict[tuple[str, str, int], list[Any]] = {}
    for model, task, point in points:
        if point.budget is not None:
            series.setdefault((model, task, point.k), []).append(point)
    for (model, task, k), values in series.items():
        values.sort(key=lambda p: p.budget)
        x = [p.budget for p in values]
        label = f"{model}" + (f" / {task}" if task != "*" else "") + (f" (k={k})" if k != 1 else "")
        for axis, attribute in ((ax_pass, "pass_at_k"), (ax_fin, "fin_at_k")):
            estimate = [getattr(p, attribute).estimate for p in values]
            low = [getattr(p, attribute).low for p in values]
            high = [getattr(p, attribute).high for p in values]
            line, = axis.plot(x, estimate, marker="o", label=legend_label(label))
            axis.fill_between(x, low, high, alpha=0.2, color=line.get_color())
    ticks = sorted({p.budget for p in finite})
    for axis, name in ((ax_pass, "pass@k(B)"), (ax_fin, "fin@k(B)")):
        axis.set_xscale("log", base=2)
        axis.set_xticks(ticks, [str(t) for t in ticks])
        axis.minorticks_off()
        axis.set_xlabel("output-token budget B")
        axis.set_ylabel(name)
        axis.set_ylim(-0.02, 1.02)
        axis.grid(alpha=0.3)
    ax_pass.legend(fontsize="small")
    figure.suptitle("pass@k and fin@k against the token budget (bands: intervals)")
    return figure


def plot_decomposition(results: list[tuple[str, Any]], *, model: str, base: str) -> Any:
    """A stacked bar of F, P and reach per budget with delta pass@1 and its interval, one panel
    per task; ``results`` are ``(task, PassChangeDecomposition)`` (``kpass decompose``)."""
    tasks = list(dict.fromkeys(task for task, _ in results))
    figure, axes = _figure(1, len(tasks), size=(max(5.0, 4.0 * len(tasks)) / len(tasks), 4.0))
    for axis, task in zip(axes[0], tasks):
        rows = [d for t, d in results if t == task]
        labels = [_budget_label(d.budget) for d in rows]
        x = np.arange(len(rows))
        positive = np.zeros(len(rows))
        negative = np.zeros(len(rows))
        for name, label in (("finishing", "F finishing"), ("reliability", "P reliability"), ("reach", "reach")):
            values = np.array([getattr(d, name).estimate for d in rows])
            bottom = np.where(values >= 0, positive, negative)
            axis.bar(x, values, 0.6, bottom=bottom, label=label)
            positive += np.clip(values, 0, None)
            negative += np.clip(values, None, 0)
        delta = np.array([d.delta.estimate for d in rows])
        error = np.array([[d.delta.estimate - d.delta.low for d in rows],
                          [d.delta.high - d.delta.estimate for d in rows]])
        axis.errorbar(x, delta, yerr=error, fmt="D", color="black", label="delta pass@1 (interval)")
        axis.axhline(0, color="grey", linewidth=0.8)
        axis.set_xticks(x, labels)
        axis.set_xlabel("output-token budget B")
        axis.set_ylabel("change in pass@1")
        axis.set_title(plot_text(f"{task}: {model} vs {base} ({rows[0].attribution} attribution)"), fontsize="small")
        axis.legend(fontsize="x-small", loc="best", framealpha=0.6)
    return figure
