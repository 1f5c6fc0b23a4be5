"""Seeded simulation study of ``pass@K[extrapolate]`` (kpass.metrics.extrapolate_pass_at_k).

Fit on n = 16 and 32 samples per problem, compare with the truth at K = 256 and 1,024 on five
populations of problems (all solvable; a share unsolvable; two sharp difficulty levels;
logit-normal difficulty; problems solvable only with p far below 1/n), against the plain
beta-binomial fit. Writes its table into docs/analyses.md (between the ``extrapolation-study``
markers) and the figure docs/extrapolation.png. Run from the repository root::

    .venv/bin/python scripts/extrapolation_study.py            # about 15 minutes on 2 busy cores
    .venv/bin/python scripts/extrapolation_study.py --reps 2   # a quick look
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys
from collections.abc import Callable

import numpy as np

from kpass.metrics import extrapolate_pass_at_k, fit_difficulty, pass_at_k

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "analyses.md"
FIGURE = ROOT / "docs" / "extrapolation.png"
START, END = "<!-- extrapolation-study:start -->", "<!-- extrapolation-study:end -->"

N_PROBLEMS = 400

Population = Callable[[np.random.Generator, int], np.ndarray]

POPULATIONS: dict[str, Population] = {
    "Beta(0.5, 2), all solvable": lambda rng, size: rng.beta(0.5, 2.0, size),
    "30% unsolvable + Beta(1, 3)": lambda rng, size: np.where(rng.random(size) < 0.3, 0.0, rng.beta(1.0, 3.0, size)),
    "two levels: p = 0.05 or 0.9": lambda rng, size: rng.choice([0.05, 0.9], size),
    "logit-normal(-2, 2)": lambda rng, size: 1.0 / (1.0 + np.exp(-rng.normal(-2.0, 2.0, size))),
    "40% unsolvable, 20% p = 0.002, 40% Beta(2, 2)": lambda rng, size: _hidden_tail(rng, size),
}


def _hidden_tail(rng: np.random.Generator, size: int) -> np.ndarray:
    u = rng.random(size)
    return np.where(u < 0.4, 0.0, np.where(u < 0.6, 0.002, rng.beta(2.0, 2.0, size)))


def run_study(populations: dict[str, Population] = POPULATIONS, *, ns=(16, 32), ks=(256, 1024), reps: int = 6,
              n_resamples: int = 60, seed: int = 2025) -> list[dict]:
    """One row per (population, n, K): truth, bias and RMSE of kpass and of the plain fit, coverage."""
    rows = []
    for p_index, (name, draw) in enumerate(populations.items()):
        for n in ns:
            cells = {k: {"truth": [], "kpass": [], "plain": [], "covered": [], "quality": []} for k in ks}
            for rep in range(reps):
                rng = np.random.default_rng([seed, p_index, n, rep])
                p = draw(rng, N_PROBLEMS)
                counts = rng.binomial(n, p)
                samples = np.full(N_PROBLEMS, n)
                plain = fit_difficulty(samples, counts, components=1, zero_inflated=False)
                for k in ks:
                    truth = float(np.mean(1.0 - (1.0 - p) ** k))
                    result = extrapolate_pass_at_k(samples, counts, k, n_resamples=n_resamples, rng=rep)
                    cell = cells[k]
                    cell["truth"].append(truth)
                    cell["kpass"].append(result.estimate)
                    cell["plain"].append(float(plain.posterior_pass_at_k(samples, counts, k).mean()))
                    cell["covered"].append(result.low <= truth <= result.high)
                    cell["quality"].append(result.fit_quality)
            for k, cell in cells.items():
                truth = np.array(cell["truth"])
                kp, pl = np.array(cell["kpass"]), np.array(cell["plain"])
                rows.append({"population": name, "n": n, "K": k, "truth": truth.mean(),
                             "kpass_bias": (kp - truth).mean(), "kpass_rmse": np.sqrt(((kp - truth) ** 2).mean()),
                             "plain_bias": (pl - truth).mean(), "plain_rmse": np.sqrt(((pl - truth) ** 2).mean()),
                             "coverage": float(np.mean(cell["covered"])),
                             "good_fits": sum(q == "good" for q in cell["quality"]), "reps": len(truth)})
            print(f"  {name}, n = {n}: done", file=sys.stderr)
    return rows


def markdown_table(rows: list[dict], reps: int, n_resamples: int, seed: int) -> str:
    lines = [f"{N_PROBLEMS} problems per test set, {reps} test sets per row (seed {seed}), {n_resamples} bootstrap "
             "refits per interval (95%). Bias and RMSE are of the extrapolated pass@K against the test set's "
             "true pass@K; \"plain\" is the beta-binomial fit without the point mass at 0 (Kazdan et al. 2025); "
             "\"good fits\" counts test sets whose goodness-of-fit check passed (max |z| <= 2).", "",
             "| population | n | K | true pass@K | kpass bias | kpass RMSE | plain bias | plain RMSE | "
             "kpass 95% coverage | good fits |",
             "|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['population']} | {r['n']} | {r['K']} | {r['truth']:.3f} | {r['kpass_bias']:+.3f} | "
                     f"{r['kpass_rmse']:.3f} | {r['plain_bias']:+.3f} | {r['plain_rmse']:.3f} | "
                     f"{r['coverage']:.0%} | {r['good_fits']}/{r['reps']} |")
    return "\n".join(lines)


def write_table(text: str, path: pathlib.Path = DOC) -> None:
    document = path.read_text()
    if START not in document or END not in document:
        raise SystemExit(f"{path} has no {START} ... {END} block to fill")
    block = f"{START}\n{text}\n{END}"
    path.write_text(re.sub(re.escape(START) + ".*?" + re.escape(END), lambda _: block, document, flags=re.S))


def draw_figure(path: pathlib.Path = FIGURE, seed: int = 2025) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    names = ["30% unsolvable + Beta(1, 3)", "40% unsolvable, 20% p = 0.002, 40% Beta(2, 2)"]
    figure = Figure(figsize=(10.0, 3.8), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(1, 2, squeeze=False)[0]
    ks = np.unique(np.geomspace(1, 1024, 40).astype(int))
    for ax, name in zip(axes, names):
        rng = np.random.default_rng([seed, 99])
        p = POPULATIONS[name](rng, N_PROBLEMS)
        n = 16
        counts = rng.binomial(n, p)
        samples = np.full(N_PROBLEMS, n)
        truth = [np.mean(1 - (1 - p) ** k) for k in ks]
        plain = fit_difficulty(samples, counts, components=1, zero_inflated=False)
        fit = fit_difficulty(samples, counts)
        ax.plot(ks, truth, color="black", label="truth")
        ax.plot(ks, [plain.posterior_pass_at_k(samples, counts, k).mean() for k in ks], linestyle=":",
                label="plain beta-binomial")
        ax.plot(ks, [fit.posterior_pass_at_k(samples, counts, k).mean() for k in ks], linestyle="--",
                label="kpass (extrapolated)")
        big = [k for k in (64, 256, 1024)]
        results = [extrapolate_pass_at_k(samples, counts, k, n_resamples=60, rng=0) for k in big]
        ax.errorbar(big, [r.estimate for r in results],
                    yerr=[[r.estimate - r.low for r in results], [r.high - r.estimate for r in results]],
                    fmt="o", capsize=3, color="C1", label="95% interval (extrapolated)")
        observed = pass_at_k(samples, counts, np.arange(1, n + 1)).mean(axis=0)
        ax.plot(np.arange(1, n + 1), observed, "s", markersize=3, color="grey", label=f"measured (n = {n})")
        ax.axvline(n, color="grey", linewidth=1)
        ax.set_xscale("log", base=2)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("K")
        ax.set_ylabel("pass@K")
        ax.set_title(name, fontsize="medium")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    figure.savefig(path, dpi=120)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=6)
    parser.add_argument("--n-resamples", type=int, default=60)
    parser.add_argument("--seed", type=int, default=2025)
    parser.add_argument("--no-write", action="store_true", help="print the table only")
    args = parser.parse_args(argv)
    rows = run_study(reps=args.reps, n_resamples=args.n_resamples, seed=args.seed)
    table = markdown_table(rows, args.reps, args.n_resamples, args.seed)
    print(table)
    if not args.no_write:
        write_table(table)
        draw_figure(seed=args.seed)
        print(f"wrote {DOC} and {FIGURE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
