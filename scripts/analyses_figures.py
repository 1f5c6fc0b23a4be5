"""Draw the figures of docs/analyses.md from the seeded example tables (except extrapolation.png,
which scripts/extrapolation_study.py draws) and rerun every ``$ kpass ...`` transcript in it, so
that the page shows real output. Run from the repository root::

    .venv/bin/python scripts/analyses_figures.py
"""

from __future__ import annotations

import contextlib
import io
import pathlib
import re
import shlex
import sys

import numpy as np

from kpass.cli import main as kpass

ROOT = pathlib.Path(__file__).resolve().parents[1]
TABLES = ROOT / "examples" / "sample_tables"
DOCS = ROOT / "docs"


def selection_figure(path: pathlib.Path) -> None:
    """Winner's curse: expected inflation of the best of m against m, measured by simulation."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from kpass.metrics import selection_inflation

    rng = np.random.default_rng(18)
    ms = [2, 4, 8, 16, 32]
    estimated, realized, theory = [], [], []
    for m in ms:
        # 200 test sets of 200 problems; m equally good checkpoints, 4 samples each
        p = rng.beta(1.0, 1.0, (200, 200, 1))
        values = rng.binomial(4, np.broadcast_to(p, (200, 200, m))) / 4
        truth = p[:, :, 0].mean(axis=1)
        realized.append(float((values.mean(axis=1).max(axis=1) - truth).mean()))
        results = [selection_inflation(values[s], n_draws=20_000, rng=s) for s in range(10)]
        estimated.append(float(np.mean([r.inflation for r in results])))
        theory.append(float(np.mean([r.independent_in_sigma * r.sigma for r in results])))
    figure = Figure(figsize=(5.5, 3.8), layout="constrained")
    FigureCanvasAgg(figure)
    ax = figure.subplots()
    ax.plot(ms, realized, "o-", color="black", label="realized (200 simulated test sets)")
    ax.plot(ms, estimated, "s--", label="kpass estimate from one test set")
    ax.plot(ms, theory, ":", label="sigma x E[max of m] (independent models)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("m, models or checkpoints compared")
    ax.set_ylabel("inflation of the best pass@1")
    ax.set_title("winner's curse: 200 problems, equally good checkpoints", fontsize="medium")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    figure.savefig(path, dpi=120)


TRANSCRIPT = re.compile(r"^```\n\$ (kpass [^\n]+)\n.*?^```", flags=re.M | re.S)


def refresh_transcripts(path: pathlib.Path) -> None:
    """Replace the output under each ``$ kpass ...`` line of a fenced block by the command's output."""
    def rerun(match: re.Match) -> str:
        command = match.group(1)
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            code = kpass(shlex.split(command)[1:])
        if code != 0:
            raise SystemExit(f"`{command}` exited with {code}")
        return f"```\n$ {command}\n{buffer.getvalue().rstrip()}\n```"

    path.write_text(TRANSCRIPT.sub(rerun, path.read_text()))


def main() -> int:
    rl = str(TABLES / "rl_and_base.jsonl")
    with contextlib.redirect_stdout(io.StringIO()):  # only the plots are wanted here
        codes = [
            kpass(["crossover", rl, "--baseline", "base", "--model", "rl", "--plot", str(DOCS / "crossover.png")]),
            kpass(["frontier", rl, "--plot", str(DOCS / "frontier.png")]),
        ]
    selection_figure(DOCS / "selection_bias.png")
    refresh_transcripts(DOCS / "analyses.md")
    return max(codes)


if __name__ == "__main__":
    sys.exit(main())
