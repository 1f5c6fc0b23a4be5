"""Plots for ``kpass report --plot`` and ``kpass compare --plot`` (extra ``plot``: matplotlib).

matplotlib is imported lazily and used through :class:`matplotlib.figure.Figure` with the Agg
canvas, so no GUI backend and no global pyplot state is touched. The file format follows the
suffix (``.png`` or ``.svg``); the file is written atomically.

- Report: pass@k against k (log2 axis) with interval bands per model (``pass@K[extrapolate]`` as
  its own dashed series labelled "extrapolated"); G-Pass@k_tau against tau
  (one line per model and k); every other metric as a point with its interval. One row of panels
  per task.
- Comparison: each model's difference from the baseline with its interval, per metric, one
  panel per task, with a line at zero.
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Any

from kpass.reports.report import Comparison, Report

__all__ = ["plot_comparison", "plot_report", "plot_result"]


def _figure(n_rows: int, n_cols: int):
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        from kpass.cli import UsageError

        raise UsageError("--plot needs matplotlib: pip install 'kpass[plot]'") from None
    figure = Figure(figsize=(5.0 * n_cols, 3.6 * n_rows), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(n_rows, n_cols, squeeze=False)
    return figure, axes


def _save(figure, path: str | os.PathLike) -> None:
    from kpass.cli import UsageError, write_atomically

    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in (".png", ".svg"):
        raise UsageError(f"plot file {os.fspath(path)!r} must end in .png or .svg")
    write_atomically(path, lambda temporary: figure.savefig(temporary, format=suffix[1:], dpi=120))


def _label(group, skip: str) -> str:
    return ", ".join(value for name, value in group if name != skip) or "all"


def plot_report(report: Report, path: str | os.PathLike) -> None:
    """Draw a report (see the module docstring) to ``path`` (.png or .svg)."""
    curves: dict[str, dict[str, list[tuple[int, Any]]]] = defaultdict(lambda: defaultdict(list))
    taus: dict[str, dict[str, list[tuple[float, Any]]]] = defaultdict(lambda: defaultdict(list))
    points: dict[str, list[tuple[str, str, Any]]] = defaultdict(list)
    specs = {spec.name: spec for spec in report.metrics}
    for row in report.rows:
        if row.estimate is None:
            continue
        spec = specs[row.metric]
        task = row.task if row.task is not None else "all"
        series = _label(row.group, "task")
        if spec.family == "pass@k" and spec.budget is None:
            # model-based values are never drawn as if measured: their own dashed series
            extrapolated = " (extrapolated)" if spec.params.get("extrapolate") else ""
            curves[task][series + extrapolated].append((spec.k, row))
        elif spec.family == "G-Pass@k" and spec.budget is None:
            taus[task][f"{series}, k={spec.k}"].append((float(spec.parameter), row))
        else:
            points[task].append((row.metric, series, row))
    tasks = list(dict.fromkeys([*curves, *taus, *points]))
    kinds = [name for name, data in (("pass", curves), ("gpass", taus), ("points", points)) if data]
    if not tasks:
        from kpass.cli import UsageError

        raise UsageError("nothing to plot: no metric has an estimate")
    figure, axes = _figure(len(tasks), len(kinds))
    level = f"{report.confidence_level:.0%}"
    for r, task in enumerate(tasks):
        for c, kind in enumerate(kinds):
            ax = axes[r][c]
            if kind == "pass":
                for series, entries in curves.get(task, {}).items():
                    entries.sort(key=lambda item: item[0])
                    ks = [k for k, _ in entries]
                    line, = ax.plot(ks, [row.estimate for _, row in entries], marker="o", label=series,
                                    linestyle="--" if series.endswith("(extrapolated)") else "-")
                    low = [row.low if row.low is not None else row.estimate for _, row in entries]
                    high = [row.high if row.high is not None else row.estimate for _, row in entries]
                    ax.fill_between(ks, low, high, alpha=0.2, color=line.get_color())
                ax.set_xscale("log", base=2)
                ax.set_xlabel("k")
                ax.set_ylabel(f"pass@k ({level} interval)")
            elif kind == "gpass":
                for series, entries in taus.get(task, {}).items():
                    entries.sort(key=lambda item: item[0])
                    xs = [tau for tau, _ in entries]
                    line, = ax.plot(xs, [row.estimate for _, row in entries], marker="o", label=series)
                    low = [row.low if row.low is not None else row.estimate for _, row in entries]
                    high = [row.high if row.high is not None else row.estimate for _, row in entries]
                    ax.fill_between(xs, low, high, alpha=0.2, color=line.get_color())
                ax.set_xlabel("tau")
                ax.set_ylabel(f"G-Pass@k_tau ({level} interval)")
            else:
                entries = points.get(task, [])
                metrics = list(dict.fromkeys(metric for metric, _, _ in entries))
                series_names = list(dict.fromkeys(series for _, series, _ in entries))
                width = 0.8 / max(len(series_names), 1)
                for s, series in enumerate(series_names):
                    xs, ys, errors = [], [], [[], []]
                    for metric, name, row in entries:
                        if name != series:
                            continue
                        xs.append(metrics.index(metric) + (s - (len(series_names) - 1) / 2) * width)
                        ys.append(row.estimate)
                        errors[0].append(row.estimate - (row.low if row.low is not None else row.estimate))
                        errors[1].append((row.high if row.high is not None else row.estimate) - row.estimate)
                    ax.errorbar(xs, ys, yerr=errors, fmt="o", capsize=3, label=series)
                ax.set_xticks(range(len(metrics)), metrics, rotation=30, ha="right")
                ax.set_xlim(-0.6, len(metrics) - 0.4)
                ax.set_ylabel(f"estimate ({level} interval)")
            ax.set_ylim(-0.02, 1.02)
            ax.set_title(task)
            ax.grid(alpha=0.3)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize="small")
    _save(figure, path)


def plot_comparison(comparison: Comparison, path: str | os.PathLike) -> None:
    """Draw each model's paired difference from the baseline per metric, one panel per task."""
    by_task: dict[str, list[Any]] = defaultdict(list)
    for row in comparison.rows:
        if row.estimate is not None:
            by_task[row.task if row.task is not None else "all"].append(row)
    if not by_task:
        from kpass.cli import UsageError

        raise UsageError("nothing to plot: no comparison has an estimate")
    figure, axes = _figure(len(by_task), 1)
    for r, (task, rows) in enumerate(by_task.items()):
        ax = axes[r][0]
        labels = [f"{row.metric}: {row.model}" for row in rows]
        ys = list(range(len(rows)))[::-1]
        low = [row.estimate - (row.low if row.low is not None else row.estimate) for row in rows]
        high = [(row.high if row.high is not None else row.estimate) - row.estimate for row in rows]
        ax.errorbar([row.estimate for row in rows], ys, xerr=[low, high], fmt="o", capsize=3)
        ax.axvline(0.0, color="grey", linewidth=1)
        ax.set_yticks(ys, labels)
        ax.set_xlabel(f"difference from {comparison.baseline} ({comparison.confidence_level:.0%} interval, paired)")
        ax.set_title(task)
        ax.grid(alpha=0.3)
    _save(figure, path)


def plot_result(result: Report | Comparison, path: str | os.PathLike) -> None:
    """:func:`plot_report` or :func:`plot_comparison`, whichever fits ``result``."""
    if isinstance(result, Comparison):
        plot_comparison(result, path)
    else:
        plot_report(result, path)
