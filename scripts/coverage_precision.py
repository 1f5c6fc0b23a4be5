"""Monte Carlo precision and discreteness helpers of the coverage study (``scripts/coverage_study.py``).

- :func:`monte_carlo_se`: the binomial standard error of a coverage estimated from S simulations;
- :func:`binomial_interval_coverage`: the exact coverage of Wilson, Jeffreys and Clopper-Pearson
  intervals of a binomial proportion, the evidence for how far the rare-problem regimes' coverage is
  set by the few values the count of rare problems (or clusters) can take;
- :func:`discreteness_table`: that coverage, per benchmark size, as the markdown the study writes;
- :func:`regime_table_markdown`, :func:`regime_summary_lines`: the regime table and its summary lines
  (coverage with its Monte Carlo SE, out-of-band cells plainly and beyond 2 SE, width rule, warnings,
  the cells above the band that never missed on one side, the out-of-band cells where no method of the
  table is inside the band);
- :func:`regime_overview_markdown`, :func:`doc_block_parts`, :func:`write_doc_block`: the per-regime overview table of one
  comparison and the writer that puts it into a marked block of a docs page (``--summary-doc``), so the
  overview in ``docs/intervals-edges.md`` is the run's, not pasted by hand;
- :func:`parse_names` / :func:`parse_integers`: the study's subset flags (``--regimes``, ``--metrics``,
  ``--n-problems``, ``--n-samples``);
- :data:`COPULA_CORRELATION`, :data:`CLUSTER_SHARE`, :func:`default_method`: what the main grid
  (``coverage_study.py``) and the edge regimes (``coverage_regimes.py``) share.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np
from scipy import stats

from kpass.cli.output import write_outputs
from kpass.metrics import DEFAULT_INTERVAL_METHOD, DEFAULT_PAIRED_METHOD, wilson_interval

#: Correlation of the Gaussian copula joining the two models' per-problem probabilities (paired cells).
COPULA_CORRELATION = 0.8
#: In a clustered design, the probability that a problem takes its cluster's shared probability
#: (else it draws its own, so its marginal stays the population's).
CLUSTER_SHARE = 0.6


def default_method(comparison: str) -> str:
    """The library default for a single mean (``"single"``) or a paired difference (``"paired"``)."""
    return DEFAULT_INTERVAL_METHOD if comparison == "single" else DEFAULT_PAIRED_METHOD


def monte_carlo_se(coverage: float, n_sims: int) -> float:
    """Binomial standard error of a coverage estimated from ``n_sims`` simulations, sqrt(c(1-c)/S)."""
    return math.sqrt(max(coverage * (1.0 - coverage), 0.0) / max(n_sims, 1))


def binomial_interval_coverage(n_trials: int, p: float, method: str, level: float = 0.95) -> float:
    """Exact coverage of a binomial-proportion interval at the true ``p``: ``sum_x P(X = x) [p in CI(x)]``.

    ``method`` is "wilson" (Wilson 1927), "jeffreys" (Beta(x + 1/2, n - x + 1/2) quantiles, 0 at
    x = 0 and 1 at x = n) or "clopper-pearson" (Beta(x, n - x + 1) and Beta(x + 1, n - x) quantiles;
    Brown, Cai & DasGupta 2001 compare the three). The number of rare problems (or rare clusters) in a
    benchmark is Binomial(N or C, share), and how close to 95% any interval can get is limited by the
    few values that count takes.
    """
    x = np.arange(n_trials + 1)
    tail = (1.0 - level) / 2.0
    if method == "wilson":
        low, high = wilson_interval(np.full(n_trials + 1, n_trials), x, confidence_level=level)
    elif method in ("jeffreys", "clopper-pearson"):
        shift = 0.5 if method == "jeffreys" else 0.0
        with np.errstate(invalid="ignore"):
            low = np.where(x > 0, stats.beta.ppf(tail, x + shift, n_trials - x + 1 - shift), 0.0)
            high = np.where(x < n_trials, stats.beta.ppf(1.0 - tail, x + 1 - shift, n_trials - x + shift), 1.0)
    else:
        raise ValueError(f"method {method!r}: one of 'wilson', 'jeffreys', 'clopper-pearson'")
    covered = (low <= p) & (p <= high)
    return float(stats.binom.pmf(x, n_trials, p)[covered].sum())


def discreteness_table(n_problems: Sequence[int], problems_per_cluster: int, share: float, min_problems: int) -> str:
    """Markdown: per N >= ``min_problems`` (and its N // ``problems_per_cluster`` clusters), the chance that
    a benchmark holds none of the rare kind, and the exact coverage of Wilson, Jeffreys and
    Clopper-Pearson intervals for the rare share ``share`` (:func:`binomial_interval_coverage`)."""
    lines = [f"**Discreteness of the rare-problem regimes** (the rare kind is {100 * share:g}% of the problems; with "
             f"clusters {100 * share:g}% of the clusters, every problem of a cluster of its kind)", "",
             "| units | count | P(none of the rare kind) | Wilson % | Jeffreys % | Clopper-Pearson % |", "|---|---|---|---|---|---|"]
    for big_n in n_problems:
        if big_n < min_problems:
            continue
        for unit, count in (("problems", big_n), ("clusters", max(big_n // problems_per_cluster, 2))):
            values = [100 * binomial_interval_coverage(count, share, m) for m in ("wilson", "jeffreys", "clopper-pearson")]
            lines.append(f"| {unit} | {count} | {(1 - share) ** count:.2f} | " + " | ".join(f"{v:.1f}" for v in values) + " |")
    return "\n".join(lines)


def regime_table_markdown(cells, band: tuple[float, float], assessed: int) -> str:
    """Markdown of regime cells: the default's coverage (flagged over/under at N >= ``assessed``, and "> 2 SE"
    beyond Monte Carlo error), its MC SE, one-sided misses, width, the width rule and the warned shares."""
    header = ("| regime | comparison | metric | N (clusters) | n | sims | truth | default | coverage % | MC SE | "
              "misses below / above % | width | narrowest >= 94% (method) | width rule | warned % of misses | "
              "warned % of all | other methods: coverage % |")
    lines = ["**Edge regimes (issue #16)**", "", header, "|" + "---|" * 17]
    for c in cells:
        d = c.default
        covering = [(c.width[m], m) for m in c.coverage if c.coverage[m] >= 0.94]
        narrowest = f"{min(covering)[0]:.3f} ({min(covering)[1]})" if covering else "none"
        rule = "ok" if c.within_width_rule() else f"{c.width[d] / min(covering)[0]:.2f}x"
        flag = "" if c.in_band() or c.n_problems < assessed else (" (over" if c.coverage[d] > band[1] else " (under")
        flag += "" if not flag else (", > 2 SE)" if c.beyond_mc_error() else ")")
        warned = "-" if math.isnan(c.warned_share_of_misses) else f"{100 * c.warned_share_of_misses:.0f}"
        others = ", ".join(f"{m} {100 * v:.1f}" for m, v in c.coverage.items() if m != d)
        size = f"{c.n_problems}" + ("" if c.n_clusters is None else f" ({c.n_clusters})")
        lines.append(f"| {c.regime} | {c.comparison} | {c.metric} | {size} | {c.n_samples} | {c.n_sims} | {c.truth:.4f} | "
                     f"{d} | **{100 * c.coverage[d]:.1f}**{flag} | {100 * c.mc_se:.1f} | {100 * c.miss_low[d]:.1f} / {100 * c.miss_high[d]:.1f} | "
                     f"{c.width[d]:.3f} | {narrowest} | {rule} | {warned} | {100 * c.warned_share:.0f} | {others} |")
    return "\n".join(lines)


def _warned_shares(chosen: list) -> tuple[float, float]:
    """Pooled over cells: the share of the default's misses that carried a warning, and of all its intervals."""
    sims = sum(c.n_sims for c in chosen)
    misses = sum(c.n_sims * (1 - c.coverage[c.default]) for c in chosen)
    warned_misses = sum(c.n_sims * (1 - c.coverage[c.default]) * c.warned_share_of_misses
                        for c in chosen if not math.isnan(c.warned_share_of_misses))
    warned_all = sum(c.n_sims * c.warned_share for c in chosen)
    return warned_misses / max(misses, 1), warned_all / max(sims, 1)


def warned_miss_ratio(chosen: list) -> float:
    r"""How much more often the default's warned intervals miss than all intervals of their own cell, pooled.

    With :math:`M_c` misses in cell :math:`c`, a share :math:`m_c` of them warned and a share
    :math:`w_c` of all its intervals warned, the ratio is :math:`\sum_c M_c m_c / \sum_c M_c w_c`:
    the warned misses over the misses the warned intervals would hold if warnings were unrelated to
    misses within each cell (1: no better than chance; a ratio pooled across cells would also reward
    a warning that merely fires in the regimes that miss most). NaN without any warned interval.
    """
    observed = expected = 0.0
    for c in chosen:
        misses = c.n_sims * (1 - c.coverage[c.default])
        if misses > 0:
            observed += misses * c.warned_share_of_misses
            expected += misses * c.warned_share
    return observed / expected if expected > 0 else float("nan")


def _count_line(chosen: list, band: tuple[float, float]) -> str:
    below = [c for c in chosen if c.coverage[c.default] < band[0]]
    above = [c for c in chosen if c.coverage[c.default] > band[1]]
    return (f"{len(chosen) - len(below) - len(above)} of {len(chosen)} in band, {len(below)} below "
            f"({sum(c.beyond_mc_error() for c in below)} beyond 2 MC SE), {len(above)} above "
            f"({sum(c.beyond_mc_error() for c in above)} beyond 2 MC SE)")


def one_sided_line(chosen: list, band: tuple[float, float], comparison: str) -> str:
    """Of the cells above the band, how many never missed on one side, and the largest miss rate on the
    other side: such a cell's coverage is one minus its one-sided miss rate, so it comes inside the band
    only when that one side misses more than ``1 - band[1]`` of the time (at nominal 95%, 2.5% per side)."""
    above = [c for c in chosen if c.coverage[c.default] > band[1]]
    one_sided = [c for c in above if min(c.miss_low[c.default], c.miss_high[c.default]) == 0.0]
    if not above:
        return f"- {comparison}: no cell above {100 * band[1]:g}%."
    largest = max(max(c.miss_low[c.default], c.miss_high[c.default]) for c in above)
    return (f"- {comparison}, the {len(above)} cells above {100 * band[1]:g}%: {len(one_sided)} never missed on one side "
            f"(the truth never lay beyond that bound); the other side missed "
            f"at most {100 * largest:.1f}% (nominal 2.5%), so these cells come inside the band only when that side "
            f"misses more than {100 * (1 - band[1]):g}%.")


def no_method_in_band_line(chosen: list, band: tuple[float, float], comparison: str) -> str:
    """Of the cells outside the band, how many have no method of the table inside it: above the band,
    every method that covers at least ``band[0]`` covers more than ``band[1]`` (what is left out covers
    less than ``band[0]``); below it, no method reaches ``band[0]``. In such a cell no method the study
    compares would bring the cell inside the band, whatever rule picked it."""
    above = [c for c in chosen if c.coverage[c.default] > band[1]]
    below = [c for c in chosen if c.coverage[c.default] < band[0]]

    def none_in_band(c) -> bool:
        return not any(band[0] <= value <= band[1] for value in c.coverage.values())

    return (f"- {comparison}, no method of the table inside the band: {sum(map(none_in_band, above))} of the "
            f"{len(above)} cells above {100 * band[1]:g}% (every method covering at least {100 * band[0]:g}% covers more), "
            f"{sum(map(none_in_band, below))} of the {len(below)} below {100 * band[0]:g}% (none reaches it).")


def regime_summary_lines(cells, order: Sequence[str], band: tuple[float, float], assessed: int, width_rule: float) -> str:
    """One line per regime and comparison: the range of the default's coverage at N >= 30, the cells out
    of band (plainly and beyond 2 Monte Carlo standard errors), the width rule, and the warned share of
    the misses and of all intervals at N >= 30; then one line of totals per comparison."""
    lines = []
    for regime in order:
        for comparison in ("single", "paired"):
            chosen = [c for c in cells if c.regime == regime and c.comparison == comparison
                      and c.n_problems >= assessed]
            if not chosen:
                continue
            values = [100 * c.coverage[c.default] for c in chosen]
            out = [f"{c.metric} N={c.n_problems} n={c.n_samples} {100 * c.coverage[c.default]:.1f}%"
                   + (" (> 2 SE)" if c.beyond_mc_error() else "") for c in chosen if not c.in_band()]
            wide = [f"{c.metric} N={c.n_problems} n={c.n_samples}" for c in chosen if not c.within_width_rule()]
            of_misses, of_all = _warned_shares(chosen)
            lines.append(f"- {regime}, {comparison}: default {min(values):.1f}-{max(values):.1f}% at N >= 30; "
                         f"{_count_line(chosen, band)}; outside 93-98%: {', '.join(out) or 'none'}; wider than {width_rule}x the "
                         f"narrowest method covering >= 94%: {', '.join(wide) or 'none'}; warned: "
                         f"{100 * of_misses:.0f}% of the misses, {100 * of_all:.0f}% of all intervals.")
    for comparison in ("single", "paired"):
        chosen = [c for c in cells if c.comparison == comparison and c.n_problems >= assessed]
        if not chosen:
            continue
        of_misses, of_all = _warned_shares(chosen)
        lines.append(f"- **All {comparison} cells at N >= 30**: {_count_line(chosen, band)}; wider than {width_rule}x: "
                     f"{sum(not c.within_width_rule() for c in chosen)}; warned: {100 * of_misses:.0f}% of the misses, "
                     f"{100 * of_all:.0f}% of all intervals; a warned interval misses {warned_miss_ratio(chosen):.2f}x "
                     "as often as the intervals of its cell do on average.")
        lines.append(one_sided_line(chosen, band, comparison))
        lines.append(no_method_in_band_line(chosen, band, comparison))
    return "\n".join(lines)


def regime_overview_markdown(cells, order: Sequence[str], band: tuple[float, float], assessed: int,
                             comparison: str) -> str:
    """Markdown: per regime of ``comparison``, then for all its cells at N >= ``assessed``: the cells in
    band, below and above it (with those beyond 2 Monte Carlo SE), beyond the width rule, the range of
    the default's coverage, and the warned share of the default's misses and of all its intervals
    (:func:`_warned_shares`); the total row adds :func:`warned_miss_ratio`. The numbers are those of
    :func:`regime_summary_lines` for the same cells."""
    lines = ["| regime | cells | in band | below (beyond 2 MC SE) | above (beyond 2 MC SE) | beyond the width rule | "
             "default's coverage | misses warned | intervals warned |", "|" + "---|" * 9]

    def row(name: str, chosen: list, tail: str = "") -> str:
        below = [c for c in chosen if c.coverage[c.default] < band[0]]
        above = [c for c in chosen if c.coverage[c.default] > band[1]]
        values = [100 * c.coverage[c.default] for c in chosen]
        of_misses, of_all = _warned_shares(chosen)
        return (f"| {name} | {len(chosen)} | {len(chosen) - len(below) - len(above)} | {len(below)} "
                f"({sum(c.beyond_mc_error() for c in below)}) | {len(above)} ({sum(c.beyond_mc_error() for c in above)}) | "
                f"{sum(not c.within_width_rule() for c in chosen)} | {min(values):.1f}-{max(values):.1f}% | "
                f"{100 * of_misses:.0f}% | {100 * of_all:.0f}%{tail} |")

    assessed_cells = [c for c in cells if c.comparison == comparison and c.n_problems >= assessed]
    if not assessed_cells:
        raise ValueError(f"no {comparison} cell with N >= {assessed} to summarize")
    for regime in order:
        chosen = [c for c in assessed_cells if c.regime == regime]
        if chosen:
            lines.append(row(regime, chosen))
    ratio = warned_miss_ratio(assessed_cells)
    lines.append(row(f"**all {comparison} cells**", assessed_cells,
                     f" (a warned interval misses **{ratio:.2f}x** as often as its cell's intervals)"))
    return "\n".join(lines)


DOC_BLOCK_MARKER = re.compile(r"<!-- [^<>]*?:(?:start|end) -->")  # any block's marker, for overlaps


def doc_block_parts(path, name: str) -> tuple[str, str, str, str]:
    """The page ``path`` split around its block ``name``: the text before ``<!-- NAME:start -->``, the two
    markers and the text after ``<!-- NAME:end -->``. ``ValueError`` names the page and the markers when
    they are missing, repeated or out of order, or when another block's marker lies between them (the blocks
    overlap: writing one would delete the other's marker); ``OSError`` when the page cannot be read."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    with open(path, encoding="utf-8", newline="") as handle:  # CRLF pages stay CRLF
        page = handle.read()
    if page.count(start) != 1 or page.count(end) != 1 or page.index(start) > page.index(end):
        raise ValueError(f"{path}: expected one {start} followed by one {end} to write the run's table into")
    head, rest = page.split(start, 1)
    inside, tail = rest.split(end, 1)
    nested = DOC_BLOCK_MARKER.search(inside)
    if nested:  # another block's marker inside this one: replacing it would delete that block's marker
        raise ValueError(f"{path}: {nested.group(0)} lies between {start} and {end}; the blocks overlap")
    return head, start, end, tail


def write_doc_block(path, name: str, text: str) -> None:
    """Replace the text between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` in the page ``path``
    with ``text``, keeping the rest of the page byte for byte (:func:`doc_block_parts`). kpass's own atomic
    writer (:func:`kpass.cli.output.write_outputs`) replaces the page, so an interrupted write leaves it whole."""
    head, start, end, tail = doc_block_parts(path, name)
    newline = "\r\n" if "\r\n" in head + tail else "\n"  # the page's own line ending
    block = text.replace("\n", newline)
    write_outputs([(path, f"{head}{start}{newline}{block}{newline}{end}{tail}")])


def parse_names(text: str, known: Sequence[str], flag: str, partial: bool = False) -> tuple[str, ...]:
    """The names of a comma-separated flag value, in ``known``'s order; with ``partial`` a part of a name
    matches when no name matches whole. ``ValueError`` names the flag and the unknown names."""
    wanted = [w.strip() for w in text.split(",") if w.strip()]
    chosen = [name for name in known if name in wanted]
    if partial and not chosen:
        chosen = [name for name in known if any(w in name for w in wanted)]
    unknown = [w for w in wanted if not any(w == name or (partial and w in name) for name in known)]
    if unknown or not chosen:
        raise ValueError(f"{flag}: unknown {', '.join(unknown or wanted)} (known: {', '.join(known)})")
    return tuple(chosen)


def parse_integers(text: str, flag: str) -> tuple[int, ...]:
    """Comma-separated integers of a flag value; ``ValueError`` names the flag."""
    try:
        return tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise ValueError(f"{flag} {text!r}: comma-separated integers expected") from None
