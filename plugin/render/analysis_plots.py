"""Plots of the analyses: ``kpass crossover --plot`` and ``kpass frontier --plot``.

In the style of :mod:`kpass.render.plot` (matplotlib imported lazily, the Agg canvas, no pyplot
state). Each function returns the figure; the command writes it (:func:`kpass.cli.output.save_figure`).
Names from the files are drawn as plain text (:func:`kpass.render.escape.plot_text`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kpass.render.escape import legend_label, plot_text

__all__ = ["plot_crossover", "plot_frontier"]


def plot_crossover(report: Any) -> Any:
    """A :class:`~kpass.reports.crossover.CrossoverReport` drawn: both pass@k curves with their
    bands, the crossover (and its interval) marked, and what the gap is made of; a row per task."""
    from kpass.render.plot import _figure

    tasks: Sequence[str] = list(report.results)
    figure, axes = _figure(len(tasks), 2)
    level = f"{report.confidence_level:.0%}"
    for row, task in enumerate(tasks):
        r = report.results[task]
        ax, gap_ax = axes[row][0], axes[row][1]
        for name, curve, low, high in ((report.base, r.base, r.base_low, r.base_high),
                                       (report.model, r.model, r.model_low, r.model_high)):
            line, = ax.plot(r.ks, curve, marker="o" if r.ks.size <= 32 else None, markersize=3, label=legend_label(name))
            ax.fill_between(r.ks, low, high, alpha=0.2, color=line.get_color())
        crossing = r.below
        for target in (ax, gap_ax):
            if crossing.k is not None:
                at = crossing.k_interpolated if crossing.k_interpolated is not None else crossing.k
                target.axvline(at, color="black", linestyle="--", linewidth=1,
                               label=f"crossover k = {crossing.k}" if target is ax else None)
                right = crossing.high if crossing.high is not None else r.ks[-1]
                if crossing.low is not None:
                    target.axvspan(crossing.low, right, color="grey", alpha=0.15,
                                   label=f"{level} interval" if target is ax else None)
            target.set_xscale("log", base=2)
            target.set_xlabel("k")
            target.grid(alpha=0.3)
        ax.set_ylabel(f"pass@k ({level} band)")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(plot_text(f"{task}: {report.model} vs {report.base}"))
        ax.legend(fontsize="small")
        cov = r.coverage
        gap_ax.plot(r.ks, -r.difference, color="black", label=legend_label(f"{report.base} - {report.model}"))
        gap_ax.plot(r.ks, cov.lost, label=f"lost ({cov.n_lost} problems)")
        gap_ax.fill_between(r.ks, cov.lost_low, cov.lost_high, alpha=0.2)
        gap_ax.plot(r.ks, cov.gained, label=f"gained ({cov.n_gained} problems)")
        gap_ax.fill_between(r.ks, cov.gained_low, cov.gained_high, alpha=0.2)
        gap_ax.plot(r.ks, cov.shared, linestyle=":", label="shared problems")
        gap_ax.axhline(0.0, color="grey", linewidth=1)
        gap_ax.set_ylabel("part of the base's lead")
        gap_ax.set_title("what the gap is made of")
        gap_ax.legend(fontsize="small")
    return figure


def plot_frontier(report: Any) -> Any:
    """A :class:`~kpass.reports.frontier.FrontierReport` drawn: score against compute (log axis)
    per model with intervals, and the Pareto frontier; a panel per task."""
    from kpass.render.plot import _figure

    tasks = list(dict.fromkeys(p["task"] for p in report.points))
    figure, axes = _figure(len(tasks), 1)
    level = f"{report.confidence_level:.0%}"
    for r, task in enumerate(tasks):
        ax = axes[r][0]
        points = [p for p in report.points if p["task"] == task]
        for model in dict.fromkeys(p["model"] for p in points):
            mine = sorted((p for p in points if p["model"] == model), key=lambda p: p["compute"])
            for family, marker in (("pass", "o"), ("cons", "s"), ("other", "^")):
                subset = [p for p in mine if (p["metric"].startswith(family) if family != "other"
                                              else not p["metric"].startswith(("pass", "cons")))]
                if not subset:
                    continue
                xs = [p["compute"] for p in subset]
                ys = [p["estimate"] for p in subset]
                errors = [[p["estimate"] - (p["low"] if p["low"] is not None else p["estimate"]) for p in subset],
                          [(p["high"] if p["high"] is not None else p["estimate"]) - p["estimate"] for p in subset]]
                ax.errorbar(xs, ys, yerr=errors, marker=marker, capsize=2, linestyle="-" if family != "other" else "",
                            label=legend_label(f"{model} {family}@k" if family != "other" else f"{model} (other)"))
        frontier = sorted((p for p in points if p.get("on_frontier")), key=lambda p: p["compute"])
        ax.step([p["compute"] for p in frontier], [p["estimate"] for p in frontier], where="post", color="black",
                linewidth=2, alpha=0.5, label="Pareto frontier")
        ax.set_xscale("log")
        ax.set_xlabel(plot_text(report.unit_label))
        ax.set_ylabel(f"score ({level} interval)")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(plot_text(f"{task}: equal-compute comparison"))
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    return figure
