"""Leaderboards: many models in one table, with intervals, rank intervals and paired comparisons.

A leaderboard that lists one number per model, sorted, suggests that every gap means something.
With 30 or 200 problems most neighbours are statistically tied. :func:`build_leaderboard` turns a
:class:`kpass.SampleTable` holding several models into a table that says what is and is not
known:

* every metric of every model with its interval, computed by the host's report machinery
  (:func:`kpass.compute_report`), so a leaderboard cell equals the ``kpass report`` number;
* a **rank interval** per model and metric from the paired (cluster) bootstrap: the problems (or
  whole clusters) are resampled once per replicate and the *same* multiplicities are applied to
  every model, so the models are compared on the same resampled benchmark
  (:func:`rank_intervals`);
* **pairwise paired comparisons** (:func:`kpass.metrics.paired_difference`) in the sort column
  with Holm-adjusted p-values (:func:`holm_adjust`): all pairs, neighbours in the sorted order,
  or every model against ``baseline``; the Holm family is exactly the comparisons listed;
* ``--extend``: the new columns joined onto an existing leaderboard file (CSV or Markdown), its
  rows and columns kept exactly as they were (:func:`extend_table`).

Ranks and comparisons of a column use the problems that every model of the column has (a paired
resample needs the same problems); problems some model lacks are left out and listed in the notes.
Every metric is higher-is-better unless its family says otherwise (``higher_is_better = False``).

Outputs (:class:`Leaderboard`): the JSON form is the source of every other output. Its keys:
``columns`` (``key``, ``task``, ``metric``, ``higher_is_better``, ``rank_problems``, ...),
``models`` in leaderboard order (each with ``metrics[key]`` = estimate, low, high,
standard_error, n_problems, ... and ``ranks[key]`` = rank, low, high, probability_first, of),
``comparisons`` (model_a, model_b, difference, low, high, p_value, p_value_holm, correlation,
n_problems, note), ``comparison_family``, ``curves`` (pass@k against k), ``budget_curves``
(pass@1 and fin@1 against the token budget), ``exclusions`` and ``notes``. Markdown and CSV show
the table (Markdown also the comparisons and notes); the HTML page
(:mod:`kpass.render.leaderboard_html`) shows all of it.

Ranks and ties
--------------
In one resample a model's rank is ``1 + (number of models strictly better)``, so tied models share
the best rank of their group (competition ranking, "1 2 2 4"). Equality is decided exactly where
it can be: models whose per-problem values are bitwise identical are merged before resampling and
therefore tie in every resample. Between other models a difference of resampled means no larger
than ``1e-10 * max|value|`` (floating-point rounding of the weighted sum, many orders of magnitude
below any difference one problem can make) counts as equal.

The rank interval ``[low, high]`` is the range of ranks the model takes in at least
``confidence_level`` of the resamples, cutting at most ``(1 - confidence_level) / 2`` of the
resamples from each end of the model's rank distribution:
``low = min{r : #(rank <= r) > alpha/2 * B}`` and ``high = min{r : #(rank <= r) >= (1 - alpha/2) * B}``
(computed in exact rational arithmetic).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import numbers
import os
import re
import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from kpass.render.escape import csv_row, markdown_text
from kpass.reports.report import DEFAULT_N_RESAMPLES, DEFAULT_SEED

__all__ = [
    "ExtendResult",
    "Leaderboard",
    "LeaderboardTable",
    "PAIRS",
    "RankIntervals",
    "TIE_TOLERANCE",
    "add_leaderboard_command",
    "build_leaderboard",
    "csv_columns",
    "extend_table",
    "format_interval",
    "format_number",
    "format_p_value",
    "format_rank",
    "holm_adjust",
    "markdown_columns",
    "rank_intervals",
    "read_leaderboard_table",
    "render_csv",
    "render_json",
    "render_markdown",
    "run_leaderboard",
    "shown_comparisons",
]

#: Relative tolerance below which two resampled means count as equal (floating-point rounding).
TIE_TOLERANCE = 1e-10

#: Upper bound on the elements of the (resamples x models x models) comparison array per step.
_MAX_COMPARISON_ELEMENTS = 1 << 22


# --------------------------------------------------------------------------------------------
# Statistics: Holm adjustment and bootstrap rank intervals
# --------------------------------------------------------------------------------------------


def holm_adjust(p_values: ArrayLike) -> NDArray[np.float64]:
    r"""Holm's step-down adjustment of a family of p-values (strong control of the FWER).

    With the ``m`` p-values sorted ascending, :math:`p_{(1)} \le \dots \le p_{(m)}`,

    .. math:: \tilde p_{(i)} = \min\Big(1, \max_{j \le i} (m - j + 1)\, p_{(j)}\Big)

    and each adjusted value is returned at the position of its p-value. Rejecting every hypothesis
    with :math:`\tilde p \le \alpha` controls the family-wise error rate at :math:`\alpha` under
    any dependence between the tests [1]_.

    Parameters
    ----------
    p_values : array_like of float, shape (m,)
        Unadjusted p-values in [0, 1]. An empty family gives an empty result.

    Returns
    -------
    ndarray of float, shape (m,)
        Adjusted p-values, each at least its unadjusted value and at most 1.

    Raises
    ------
    ValueError
        If ``p_values`` is not one-dimensional or holds values outside [0, 1] (NaN included).

    References
    ----------
    .. [1] S. Holm, "A Simple Sequentially Rejective Multiple Test Procedure",
       Scandinavian Journal of Statistics 6(2), 65-70 (1979).

    Examples
    --------
    >>> holm_adjust([0.01, 0.04, 0.03]).round(4)
    array([0.03, 0.06, 0.06])
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"`p_values` must be one-dimensional; got shape {p.shape}.")
    bad = np.flatnonzero(~((p >= 0.0) & (p <= 1.0)))
    if bad.size:
        raise ValueError(
            f"`p_values` must lie in [0, 1]; got {p[bad[:5]].tolist()} at positions {bad[:5].tolist()}."
        )
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = (m - np.arange(m)) * p[order]
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return adjusted


@dataclass(frozen=True)
class RankIntervals:
    """Bootstrap rank intervals of several models on one metric.

    Attributes
    ----------
    models : tuple of str
        Model names, in the order of the input rows.
    rank : ndarray of int, shape (M,)
        Rank on the observed data: 1 + number of models strictly better.
    low, high : ndarray of int, shape (M,)
        Rank interval: ranks taken in at least ``confidence_level`` of the resamples.
    rank_counts : ndarray of int, shape (M, M)
        ``rank_counts[m, r - 1]`` is the number of resamples in which model ``m`` has rank ``r``.
    confidence_level : float
        Nominal coverage of ``[low, high]``.
    n_resamples : int
        Bootstrap resamples drawn.
    n_problems : int
        Problems every model was compared on.
    n_clusters : int or None
        Clusters resampled (None: problems were resampled individually).
    higher_is_better : bool
        Direction of the metric.
    """

    models: tuple[str, ...]
    rank: NDArray[np.int64]
    low: NDArray[np.int64]
    high: NDArray[np.int64]
    rank_counts: NDArray[np.int64]
    confidence_level: float
    n_resamples: int
    n_problems: int
    n_clusters: int | None
    higher_is_better: bool

    @property
    def probability_first(self) -> NDArray[np.float64]:
        """Fraction of resamples in which each model ranks first (possibly tied)."""
        return self.rank_counts[:, 0] / self.n_resamples


def _ranks_of_scores(scores: NDArray[np.float64], multiplicity: NDArray[np.int64],
                     tolerance: float) -> NDArray[np.int64]:
    """Competition ranks ``1 + #(strictly better)`` of each column of ``scores`` (higher is better).

    ``scores`` has shape (B, U): U distinct models, each standing for ``multiplicity[u]`` models.
    Loops over bounded chunks of rows only.
    """
    n_rows, n_distinct = scores.shape
    ranks = np.empty((n_rows, n_distinct), dtype=np.int64)
    step = max(1, _MAX_COMPARISON_ELEMENTS // max(1, n_distinct * n_distinct))
    for start in range(0, n_rows, step):
        block = scores[start:start + step]
        # better[b, u, v]: model v beats model u in resample b by more than rounding
        better = (block[:, None, :] - block[:, :, None]) > tolerance
        ranks[start:start + step] = 1 + better.astype(np.int64) @ multiplicity
    return ranks


def _interval_from_counts(rank_counts: NDArray[np.int64], n_resamples: int,
                          confidence_level: float) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Equal-tailed rank interval from per-model rank histograms, thresholds in exact arithmetic."""
    tail = (1 - Fraction(str(confidence_level))) / 2
    cumulative = np.cumsum(rank_counts, axis=1)
    below = tail * n_resamples                   # at most this many resamples cut from each end
    above = (1 - tail) * n_resamples
    # low: first r with cum(r) > below ; high: first r with cum(r) >= above (cum is integer)
    low = np.argmax(cumulative > math.floor(below), axis=1) + 1
    high = np.argmax(cumulative >= math.ceil(above), axis=1) + 1
    return low.astype(np.int64), high.astype(np.int64)


def _check_confidence_level(confidence_level: float) -> float:
    if not (isinstance(confidence_level, numbers.Real) and 0.0 < float(confidence_level) < 1.0):
        raise ValueError(f"`confidence_level` must be in (0, 1); got {confidence_level!r}.")
    return float(confidence_level)


def canonical_problem_keys(values: np.ndarray) -> np.ndarray:
    """Per-problem keys, shape (n_problems, n_models), that order the bootstrap draws.

    Passed as ``order_by`` to :func:`kpass.metrics.bootstrap_weights`: the draws are made for the
    problems sorted by these keys. Each key is the problem's values sorted across models, so the
    draws do not depend on the order in which the models are listed, nor on the order of the
    problems, except among problems whose sorted values coincide while the models' values differ
    (such problems keep their input order).
    """
    return np.sort(values, axis=0).T


def rank_intervals(values: ArrayLike, *, models: Sequence[str] | None = None,
                   clusters: ArrayLike | None = None, confidence_level: float = 0.95,
                   n_resamples: int = DEFAULT_N_RESAMPLES, rng: int | np.random.Generator | None = DEFAULT_SEED,
                   higher_is_better: bool = True,
                   max_chunk_elements: int | None = None) -> RankIntervals:
    r"""Rank intervals of M models from the paired (cluster) bootstrap over problems.

    Each resample draws problems (or, with ``clusters``, whole clusters carrying their problems)
    with replacement through :func:`kpass.metrics.bootstrap_weights`; the same multiplicity row
    :math:`w^{(b)}` is applied to every model, so the comparison stays paired. Model m's score in
    resample b is the weighted mean :math:`\bar v^{(b)}_m = \sum_j w^{(b)}_j v_{mj} / \sum_j w^{(b)}_j`
    and its rank

    .. math:: r^{(b)}_m = 1 + \#\{m' : \bar v^{(b)}_{m'} > \bar v^{(b)}_m\}

    (ties share the best rank; see the module docstring for the equality rule). The interval is
    the equal-tailed range of ranks holding at least ``confidence_level`` of the resamples, as
    in the "ranking uncertainty" intervals of Hall and Miller [1]_.

    Parameters
    ----------
    values : array_like of float, shape (M, N)
        Per-problem values of M models on the same N problems (row m = model m).
    models : sequence of str, optional
        Names of the M models; default ``"0"``, ``"1"``, ...
    clusters : array_like, shape (N,), optional
        Cluster label of each problem; whole clusters are resampled.
    confidence_level : float, default: 0.95
        Share of resamples the rank interval must hold.
    n_resamples : int, default: 10_000
        Bootstrap resamples.
    rng : int, numpy.random.Generator or None, default: 0
        Seed or generator of the resampling (the seed of every kpass bootstrap; ``None``: fresh
        entropy).
    higher_is_better : bool, default: True
        Direction of the metric (lower-is-better metrics rank the smallest value first).
    max_chunk_elements : int, optional
        Memory bound on one chunk of the weight matrix (passed to ``bootstrap_weights``; default:
        its default).

    Returns
    -------
    RankIntervals

    Raises
    ------
    ValueError
        On a non-2-D or non-finite ``values``, fewer than one problem, mismatched ``models`` or
        ``clusters``, or a bad ``n_resamples``/``confidence_level``.

    References
    ----------
    .. [1] P. Hall and H. Miller, "Using the bootstrap to quantify the authority of an empirical
       ranking", Annals of Statistics 37(6B), 3929-3959 (2009).

    Examples
    --------
    >>> result = rank_intervals([[1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]], n_resamples=200, rng=0)
    >>> result.low.tolist(), result.high.tolist()
    ([1, 2, 2], [1, 2, 2])
    """
    from kpass.metrics import bootstrap_weights

    matrix = np.asarray(values, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"`values` must have shape (n_models, n_problems); got shape {matrix.shape}.")
    n_models, n_problems = matrix.shape
    if n_models < 1 or n_problems < 2:
        raise ValueError(f"`values` needs at least one model and two problems (a bootstrap over one "
                         f"problem says nothing); got shape {matrix.shape}.")
    bad = np.argwhere(~np.isfinite(matrix))
    if bad.size:
        raise ValueError(f"`values` must be finite; got non-finite values at (model, problem) "
                         f"{[tuple(x) for x in bad[:5].tolist()]}.")
    names = tuple(str(i) for i in range(n_models)) if models is None else tuple(models)
    if len(names) != n_models:
        raise ValueError(f"`models` has {len(names)} names for {n_models} rows of `values`.")
    if not (isinstance(n_resamples, numbers.Integral) and n_resamples >= 1):
        raise ValueError(f"`n_resamples` must be an integer >= 1; got {n_resamples!r}.")
    confidence_level = _check_confidence_level(confidence_level)
    cluster_labels = None
    n_clusters = None
    if clusters is not None:
        cluster_labels = np.asarray(clusters)
        if cluster_labels.shape != (n_problems,):
            raise ValueError(f"`clusters` must have shape ({n_problems},) like the problems of "
                             f"`values`; got shape {cluster_labels.shape}.")
        n_clusters = int(np.unique(cluster_labels).size)

    oriented = (matrix if higher_is_better else -matrix) + 0.0      # + 0.0 turns -0.0 into 0.0
    # Exact-equality rule: bitwise identical models become one distinct row, so they always tie.
    distinct, inverse, multiplicity = np.unique(oriented, axis=0, return_inverse=True,
                                                return_counts=True)
    inverse = np.asarray(inverse).reshape(-1)
    scale = float(np.max(np.abs(distinct)))
    tolerance = TIE_TOLERANCE * scale
    multiplicity = multiplicity.astype(np.int64)

    observed = _ranks_of_scores(distinct.mean(axis=1)[None, :], multiplicity, tolerance)[0]

    counts = np.zeros((distinct.shape[0], n_models), dtype=np.int64)
    rows = np.arange(distinct.shape[0])
    drawn = 0
    chunking = {} if max_chunk_elements is None else {"max_chunk_elements": max_chunk_elements}
    for weights in bootstrap_weights(n_problems, clusters=cluster_labels, n_resamples=int(n_resamples),
                                     rng=rng, order_by=canonical_problem_keys(matrix), **chunking):
        weights = np.asarray(weights, dtype=np.float64)
        scores = (weights @ distinct.T) / weights.sum(axis=1)[:, None]
        ranks = _ranks_of_scores(scores, multiplicity, tolerance)
        flat = (rows[None, :] * n_models + (ranks - 1)).ravel()
        counts += np.bincount(flat, minlength=counts.size).reshape(counts.shape)
        drawn += weights.shape[0]
    if drawn != n_resamples:  # pragma: no cover - guards the bootstrap_weights contract
        raise RuntimeError(f"bootstrap_weights yielded {drawn} resamples instead of {n_resamples}.")

    rank_counts = counts[inverse]
    low, high = _interval_from_counts(rank_counts, int(n_resamples), confidence_level)
    return RankIntervals(models=names, rank=observed[inverse].astype(np.int64), low=low, high=high,
                         rank_counts=rank_counts, confidence_level=confidence_level,
                         n_resamples=int(n_resamples), n_problems=n_problems,
                         n_clusters=n_clusters, higher_is_better=bool(higher_is_better))


# --------------------------------------------------------------------------------------------
# --extend: join new columns onto an existing leaderboard table (CSV or Markdown)
# --------------------------------------------------------------------------------------------

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\n|\r)|[^\r\n]+$")
_MD_DELIMITER_CELL = re.compile(r"^\s*:?-+:?\s*$")
_MD_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def _split_lines(text: str) -> list[str]:
    """Physical lines with their terminators, split exactly as ``open(newline='')`` does."""
    return _LINE.findall(text)


def _strip_terminator(line: str) -> tuple[str, str]:
    body = line.rstrip("\r\n")
    return body, line[len(body):]


@dataclass(frozen=True)
class LeaderboardTable:
    """An existing leaderboard table read from a CSV or Markdown file.

    Attributes
    ----------
    source : str
        File name, for messages.
    format : {"csv", "markdown"}
        Format of the file.
    header : tuple of str
        Column names (stripped cell texts).
    rows : tuple of tuple of str
        Cell texts of the body rows (stripped; Markdown escapes kept).
    row_lines : tuple of int
        1-based line number on which each body row starts.
    """

    source: str
    format: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    row_lines: tuple[int, ...]
    _text: str
    _header_line: int          # 0-based physical line index of the header (last line of the record)
    _delimiter_line: int | None
    _row_line_ends: tuple[int, ...]   # 0-based index of the last physical line of each body row
    _csv_delimiter: str = ","

    def column(self, name: str) -> int:
        """Index of column ``name`` (compared without surrounding whitespace, BOM or emphasis;
        ignoring case when only one column matches that way)."""
        wanted = _normalize_key(name, markdown=self.format == "markdown")
        names = [_normalize_key(cell, markdown=self.format == "markdown") for cell in self.header]
        if wanted in names:
            return names.index(wanted)
        folded = [i for i, cell in enumerate(names) if cell.casefold() == wanted.casefold()]
        if len(folded) == 1:
            return folded[0]
        raise ValueError(f"{self.source}: no column named {name!r} (the `--key` option); the table "
                         f"has columns {list(self.header)}.")


def _normalize_key(cell: str, *, markdown: bool) -> str:
    text = cell.replace("\ufeff", "").strip()
    if markdown:
        link = re.fullmatch(r"\[(.*)\]\([^)]*\)", text)
        if link:
            text = link.group(1).strip()
        for mark in ("**", "__", "`", "*", "_"):
            if len(text) > 2 * len(mark) and text.startswith(mark) and text.endswith(mark):
                text = text[len(mark):-len(mark)].strip()
        text = text.replace("\\|", "|")
        link = re.fullmatch(r"\[(.*)\]\([^)]*\)", text)
        if link:
            text = link.group(1).strip()
    return text


def _split_markdown_row(line: str) -> list[str]:
    inner = line.strip()
    if inner.startswith("|"):
        inner = inner[1:]
    if inner.endswith("|") and not inner.endswith("\\|"):
        inner = inner[:-1]
    return [cell.strip() for cell in _MD_UNESCAPED_PIPE.split(inner)]


def _read_markdown_table(text: str, source: str, key: str | None) -> LeaderboardTable:
    from kpass.errors import DataError

    lines = [_strip_terminator(line)[0] for line in _split_lines(text)]
    candidates = []
    index = 0
    while index + 1 < len(lines):
        header_line, delimiter_line = lines[index], lines[index + 1]
        if "|" in header_line and "-" in delimiter_line:
            header = _split_markdown_row(header_line)
            delimiters = _split_markdown_row(delimiter_line)
            if (len(header) == len(delimiters)
                    and all(_MD_DELIMITER_CELL.match(cell) for cell in delimiters)):
                end = index + 2
                while end < len(lines) and lines[end].strip() and "|" in lines[end]:
                    end += 1
                rows = tuple(tuple(_split_markdown_row(lines[i])) for i in range(index + 2, end))
                for line_index, row in zip(range(index + 2, end), rows):
                    if len(row) > len(header):
                        raise DataError(
                            f"the row has {len(row)} cells but the table header has {len(header)}; "
                            f"new columns cannot be placed unambiguously", source=source,
                            line=line_index + 1)
                table = LeaderboardTable(
                    source=source, format="markdown", header=tuple(header), rows=rows,
                    row_lines=tuple(range(index + 3, end + 1)), _text=text, _header_line=index,
                    _delimiter_line=index + 1, _row_line_ends=tuple(range(index + 2, end)))
                candidates.append(table)
                index = end
                continue
        index += 1
    if not candidates:
        raise DataError("no Markdown pipe table found (a header row, a `|---|` delimiter row, then "
                        "body rows)", source=source)
    if key is None:
        return candidates[0]
    for table in candidates:
        try:
            table.column(key)
        except ValueError:
            continue
        return table
    raise ValueError(f"{source}: no Markdown table has a column named {key!r} (the `--key` option); "
                     f"tables found have columns {[list(t.header) for t in candidates]}.")


def _read_csv_table(text: str, source: str) -> LeaderboardTable:
    from kpass.errors import DataError

    physical = _split_lines(text)
    first = next((line for line in physical if line.strip()), "")
    if source.lower().endswith((".tsv", ".tab")):
        delimiter = "\t"
    else:   # the header decides: a comma, else a semicolon, else a tab
        delimiter = next((d for d in (",", ";", "\t") if d in first), ",")
    consumed = iter(physical)
    reader = csv.reader(consumed, delimiter=delimiter, strict=True)  # an unterminated quote is an error
    header: tuple[str, ...] | None = None
    header_line = -1
    rows: list[tuple[str, ...]] = []
    row_lines: list[int] = []
    row_ends: list[int] = []
    start = 0
    try:
        for record in reader:
            end = reader.line_num          # physical lines consumed so far
            if record and any(cell.strip() for cell in record):
                if header is None:
                    header = tuple(cell.replace("\ufeff", "").strip() for cell in record)
                    header_line = end - 1
                else:
                    if len(record) > len(header):
                        raise DataError(
                            f"the row has {len(record)} cells but the header has {len(header)}; new "
                            f"columns cannot be placed unambiguously", source=source, line=start + 1)
                    rows.append(tuple(record))
                    row_lines.append(start + 1)
                    row_ends.append(end - 1)
            start = end
    except csv.Error as error:
        raise DataError(f"malformed CSV ({error}: an unterminated quote?)", source=source,
                        line=reader.line_num) from None
    if header is None:
        raise DataError("the CSV file has no header row", source=source)
    return LeaderboardTable(source=source, format="csv", header=header, rows=tuple(rows),
                            row_lines=tuple(row_lines), _text=text, _header_line=header_line,
                            _delimiter_line=None, _row_line_ends=tuple(row_ends),
                            _csv_delimiter=delimiter)


def read_leaderboard_table(path: str | os.PathLike[str], *, key: str | None = None,
                           format: str | None = None) -> LeaderboardTable:
    """Read an existing leaderboard table from a CSV or Markdown file.

    Parameters
    ----------
    path : path-like
        ``.csv``/``.tsv`` files are read as CSV (delimiter: tab for ``.tsv``, else the first of
        ``,``, ``;``, tab found in the header line),
        ``.md``/``.markdown`` files as Markdown: the first pipe table (having column ``key`` when
        given) is used, and every other line of the file is kept as it is.
    key : str, optional
        Column that names the model; with Markdown, selects the table.
    format : {"csv", "markdown"}, optional
        Overrides the format guessed from the suffix.

    Returns
    -------
    LeaderboardTable

    Raises
    ------
    kpass.DataError
        If the file holds no table or a malformed record (naming the file and the line).
    ValueError
        If no table has the column ``key``, or the format cannot be told from the suffix.
    """
    source = os.fspath(path)
    if format is None:
        suffix = Path(source).suffix.lower()
        if suffix in (".md", ".markdown"):
            format = "markdown"
        elif suffix in (".csv", ".tsv", ".tab", ".txt"):
            format = "csv"
        else:
            raise ValueError(f"{source}: cannot tell the table format from the suffix {suffix!r}; "
                             f"use a .csv or .md file.")
    with open(source, encoding="utf-8", newline="") as handle:
        text = handle.read()
    if format == "markdown":
        return _read_markdown_table(text, source, key)
    if format == "csv":
        return _read_csv_table(text, source)
    raise ValueError(f"`format` must be 'csv' or 'markdown'; got {format!r}.")


@dataclass(frozen=True)
class ExtendResult:
    """An existing leaderboard table with new columns joined on.

    Attributes
    ----------
    text : str
        The whole file with the new columns appended to the table (every other byte unchanged).
    matched : dict of int to str
        Body-row index -> model joined onto that row.
    unmatched_rows : tuple of (int, str)
        (line number, key) of rows that match no model; their new cells are empty.
    unmatched_models : tuple of str
        Models that match no row (not added to the table).
    duplicate_keys : tuple of str
        Keys that occur on more than one row (each such row gets the model's values).
    """

    text: str
    matched: dict[int, str]
    unmatched_rows: tuple[tuple[int, str], ...]
    unmatched_models: tuple[str, ...]
    duplicate_keys: tuple[str, ...]

    def report(self) -> str:
        """A human-readable summary of the join (for stderr)."""
        parts = [f"joined {len(set(self.matched.values()))} model(s) onto {len(self.matched)} row(s)"]
        if self.unmatched_rows:
            listed = ", ".join(f"{key!r} (line {line})" for line, key in self.unmatched_rows)
            parts.append(f"{len(self.unmatched_rows)} row(s) match no model: {listed}")
        if self.unmatched_models:
            parts.append(f"{len(self.unmatched_models)} model(s) match no row: "
                         + ", ".join(repr(m) for m in self.unmatched_models))
        if self.duplicate_keys:
            parts.append("keys on more than one row: " + ", ".join(repr(k) for k in self.duplicate_keys))
        return "; ".join(parts) + "."


def _match_models(keys: Sequence[str], models: Sequence[str]) -> list[str | None]:
    """Exact match first; then a case-insensitive match when it is unique."""
    exact = set(models)
    folded: dict[str, list[str]] = {}
    for model in models:
        folded.setdefault(model.casefold(), []).append(model)
    matches: list[str | None] = []
    for key in keys:
        if key in exact:
            matches.append(key)
        elif len(folded.get(key.casefold(), [])) == 1:
            matches.append(folded[key.casefold()][0])
        else:
            matches.append(None)
    return matches


def _csv_cells(cells: Sequence[str], delimiter: str) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, lineterminator="").writerow(csv_row(cells))
    return buffer.getvalue()


def _append_markdown(line: str, cells: Sequence[str]) -> str:
    body = line.rstrip()
    trailing = line[len(body):]
    escaped = [markdown_text(cell) for cell in cells]
    if body.endswith("|") and not body.endswith("\\|"):
        return body + " " + " | ".join(escaped) + " |" + trailing
    return body + " | " + " | ".join(escaped) + trailing


def extend_table(table: LeaderboardTable, key: str, columns: Sequence[str],
                 values: Mapping[str, Sequence[str]]) -> ExtendResult:
    """Append ``columns`` to an existing table, filling each row from the model named in ``key``.

    The existing rows, columns, cell texts, quoting, line endings and (for Markdown) every line
    outside the table are kept exactly: new cells are appended to the end of each table line.
    Rows shorter than the header get empty cells first so the new columns line up.

    Parameters
    ----------
    table : LeaderboardTable
        From :func:`read_leaderboard_table`.
    key : str
        Column naming the model. A row matches a model whose name equals the key cell (stripped;
        in Markdown also stripped of a link or emphasis), or equals it ignoring case when only one
        model does.
    columns : sequence of str
        Names of the new columns; a name already in the table gets the suffix ``" (kpass)"``.
    values : mapping of str to sequence of str
        Model -> its cells for ``columns``.

    Returns
    -------
    ExtendResult
    """
    key_index = table.column(key)
    markdown = table.format == "markdown"
    existing = {_normalize_key(c, markdown=markdown) for c in table.header}
    new_columns = [c + " (kpass)" if c in existing else c for c in columns]
    for model, cells in values.items():
        if len(cells) != len(columns):
            raise ValueError(f"model {model!r} has {len(cells)} values for {len(columns)} columns.")
    width = len(table.header)
    keys = [_normalize_key(row[key_index], markdown=markdown) if key_index < len(row) else ""
            for row in table.rows]
    matches = _match_models(keys, list(values))
    seen: dict[str, int] = {}
    for key_value in keys:
        seen[key_value] = seen.get(key_value, 0) + 1

    lines = _split_lines(table._text)
    empty = [""] * len(columns)

    def appended(index: int, cells: Sequence[str], n_existing: int) -> None:
        body, terminator = _strip_terminator(lines[index])
        padded = [""] * max(0, width - n_existing) + list(cells)
        if markdown:
            lines[index] = _append_markdown(body, padded) + terminator
        else:
            lines[index] = body + table._csv_delimiter + _csv_cells(padded, table._csv_delimiter) \
                + terminator

    appended(table._header_line, new_columns, width)
    if table._delimiter_line is not None:
        body, terminator = _strip_terminator(lines[table._delimiter_line])
        lines[table._delimiter_line] = _append_markdown(body, ["---"] * len(columns)) + terminator
    matched: dict[int, str] = {}
    unmatched_rows = []
    for row_index, (row, line_end, match) in enumerate(zip(table.rows, table._row_line_ends, matches)):
        if match is None:
            unmatched_rows.append((table.row_lines[row_index], keys[row_index]))
            appended(line_end, empty, len(row))
        else:
            matched[row_index] = match
            appended(line_end, values[match], len(row))
    used = set(matched.values())
    return ExtendResult(
        text="".join(lines), matched=matched, unmatched_rows=tuple(unmatched_rows),
        unmatched_models=tuple(m for m in values if m not in used),
        duplicate_keys=tuple(sorted(k for k, n in seen.items() if n > 1 and k)))


# --------------------------------------------------------------------------------------------
# Rendering (every renderer reads the JSON form, so all outputs show the same numbers)
# --------------------------------------------------------------------------------------------


def format_number(value: float | None, digits: int = 3) -> str:
    """The text a leaderboard shows for a number: ``digits`` decimals, or ``"n/a"`` when undefined."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    if abs(value) >= 1000:
        return f"{value:.{digits + 1}g}"
    return f"{value:.{digits}f}"


def format_p_value(value: float | None) -> str:
    """p-values: three significant digits, ``"<0.0001"`` below 1e-4."""
    if value is None or not math.isfinite(value):
        return "n/a"
    if value < 1e-4:
        return "<0.0001"
    return f"{value:.3g}" if value < 0.01 else f"{value:.3f}"


def format_rank(rank: Mapping[str, Any] | None) -> str:
    """``"2"`` when the rank interval is one rank, else ``"1-4"`` (low-high)."""
    if not rank:
        return "n/a"
    return str(rank["low"]) if rank["low"] == rank["high"] else f"{rank['low']}-{rank['high']}"


def format_interval(cell: Mapping[str, Any] | None) -> str:
    """``"0.612 [0.540, 0.684]"``: estimate and interval of one leaderboard cell."""
    if not cell:
        return "n/a"
    return (f"{format_number(cell['estimate'])} "
            f"[{format_number(cell['low'])}, {format_number(cell['high'])}]")


def _percent(level: float) -> str:
    return f"{100 * level:g}%"


_md_escape = markdown_text


def _markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]],
                    align: Sequence[str]) -> list[str]:
    lines = ["| " + " | ".join(_md_escape(h) for h in header) + " |",
             "|" + "|".join({"r": "---:", "l": "---", "c": ":---:"}[a] for a in align) + "|"]
    lines += ["| " + " | ".join(_md_escape(c) for c in row) + " |" for row in rows]
    return lines


def markdown_columns(data: Mapping[str, Any]) -> tuple[list[str], dict[str, list[str]]]:
    """The human-readable columns a leaderboard adds: per metric "estimate [CI]", then the rank.

    Returns the column names and, per model, their cells (used by Markdown output and by
    ``--extend`` onto Markdown tables).
    """
    level = _percent(data["confidence_level"])
    keys = [column["key"] for column in data["columns"]]
    header = [f"{key} ({level} CI)" for key in keys] + [f"rank by {data['sort']} ({level})"]
    cells = {}
    for entry in data["models"]:
        cells[entry["model"]] = ([format_interval(entry["metrics"].get(key)) for key in keys]
                                 + [format_rank(entry["ranks"].get(data["sort"]))])
    return header, cells


def csv_columns(data: Mapping[str, Any]) -> tuple[list[str], dict[str, list[str]]]:
    """The machine-readable columns: per metric estimate, low, high, se, problems, rank, rank low/high."""
    parts = ["", " low", " high", " se", " n_problems", " rank", " rank low", " rank high"]
    header = [key + part for key in (c["key"] for c in data["columns"]) for part in parts]
    cells = {}
    for entry in data["models"]:
        row = []
        for column in data["columns"]:
            cell = entry["metrics"].get(column["key"])
            rank = entry["ranks"].get(column["key"])
            row += ([_csv_value(cell[name]) for name in
                     ("estimate", "low", "high", "standard_error", "n_problems")]
                    if cell else [""] * 5)
            row += [_csv_value(rank[name]) for name in ("rank", "low", "high")] if rank else [""] * 3
        cells[entry["model"]] = row
    return header, cells


def _csv_value(value: Any) -> str:
    """Full precision for floats (``repr``), empty for undefined values."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return repr(value) if isinstance(value, float) else str(value)


#: Above this many pairwise comparisons, Markdown and HTML show only neighbours in the sorted
#: order (the JSON output always has every comparison).
MAX_SHOWN_COMPARISONS = 120


def shown_comparisons(data: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]], int]:
    """The comparisons a table shows and how many it leaves to the JSON output.

    All of them up to :data:`MAX_SHOWN_COMPARISONS`; beyond, the comparisons of neighbours in the
    leaderboard order (their Holm p-values are still adjusted over the whole family).
    """
    comparisons = list(data["comparisons"])
    if len(comparisons) <= MAX_SHOWN_COMPARISONS or data["comparison_family"]["pairs"] != "all":
        return comparisons, 0
    order = {entry["model"]: i for i, entry in enumerate(data["models"])}
    shown = [c for c in comparisons if abs(order[c["model_a"]] - order[c["model_b"]]) == 1]
    return shown, len(comparisons) - len(shown)


def render_markdown(data: Mapping[str, Any]) -> str:
    """The leaderboard as Markdown: the main table, the pairwise comparisons, the notes."""
    level = _percent(data["confidence_level"])
    header, cells = markdown_columns(data)
    rank_header = header.pop()
    rows = [[cells[e["model"]][-1], e["model"], *cells[e["model"]][:-1], str(e["n_problems"]),
             str(e["n_samples"])] for e in data["models"]]
    lines = _markdown_table([rank_header, "model", *header, "problems", "samples"], rows,
                            ["c", "l"] + ["l"] * len(header) + ["r", "r"])
    family = data["comparison_family"]
    if data["comparisons"]:
        against = {"baseline": f"every model against {markdown_text(family['baseline'])}",
                   "adjacent": "neighbours in the sorted order"}.get(family["pairs"], "all pairs")
        shown, hidden = shown_comparisons(data)
        lines += ["", f"Paired differences in {family['column']} ({against}; {level} CI; "
                      f"p-values Holm-adjusted over the {family['size']} comparisons"
                      + (f"; the {len(shown)} between neighbours shown, all {len(shown) + hidden} "
                         f"in the JSON output" if hidden else "") + "):", ""]
        pair_rows = [[c["model_a"], c["model_b"],
                      format_interval({"estimate": c["difference"], "low": c["low"],
                                       "high": c["high"]}),
                      format_p_value(c["p_value"]), format_p_value(c["p_value_holm"]),
                      str(c["n_problems"])]
                     for c in shown]
        lines += _markdown_table(["model A", "model B", f"A - B ({level} CI)", "p", "p (Holm)",
                                  "problems"], pair_rows, ["l", "l", "l", "r", "r", "r"])
    notes = list(data.get("notes", []))
    for exclusion in data.get("exclusions", []):
        notes.append(f"{exclusion['model']} / {exclusion['column']}: {exclusion['n_problems']} "
                     f"problem(s) excluded ({exclusion['reason']}).")
    if notes:
        lines += ["", *[f"- {markdown_text(note)}" for note in notes]]
    return "\n".join(lines) + "\n"


def render_csv(data: Mapping[str, Any]) -> str:
    """The leaderboard as one CSV table (models in leaderboard order; comparisons are in JSON)."""
    header, cells = csv_columns(data)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(csv_row(["model", "n_problems", "n_samples", *header]))
    for entry in data["models"]:
        writer.writerow(csv_row([entry["model"], entry["n_problems"], entry["n_samples"],
                                 *cells[entry["model"]]]))
    return buffer.getvalue()


def render_json(data: Mapping[str, Any]) -> str:
    """The leaderboard as JSON (undefined numbers are ``null``, never ``NaN``)."""
    return json.dumps(data, indent=2, allow_nan=False) + "\n"


# --------------------------------------------------------------------------------------------
# Building a leaderboard from a sample table
# --------------------------------------------------------------------------------------------

#: Which pairs of models are compared when no baseline is given.
PAIRS = ("all", "adjacent")

#: Most budgets drawn per budget curve when the budgets are chosen automatically.
_MAX_AUTO_BUDGETS = 12


def _none_if_nan(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


@dataclass(frozen=True)
class Leaderboard:
    """A leaderboard: its JSON form plus the objects it was computed from.

    Attributes
    ----------
    data : dict
        The JSON form (what ``--format json`` writes); every renderer reads only this.
    report : kpass.Report
        The host report the cells come from (one row per model, task and metric).
    ranks : dict of str to RankIntervals
        Rank intervals per column key.
    """

    data: dict[str, Any]
    report: Any
    ranks: dict[str, RankIntervals]

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the JSON form."""
        return json.loads(render_json(self.data))

    def to_markdown(self) -> str:
        """Markdown: the table, the pairwise comparisons and the notes."""
        return render_markdown(self.data)

    def to_csv(self) -> str:
        """CSV: one row per model, machine-readable columns."""
        return render_csv(self.data)

    def to_json(self) -> str:
        """JSON (no NaN: undefined numbers are ``null``)."""
        return render_json(self.data)

    def to_html(self, *, title: str = "kpass leaderboard") -> str:
        """One self-contained HTML page (see :mod:`kpass.render.leaderboard_html`)."""
        from kpass.render.leaderboard_html import render_html

        return render_html(self.data, title=title)

    def extend(self, table: LeaderboardTable, key: str) -> ExtendResult:
        """Join this leaderboard's columns onto an existing table (see :func:`extend_table`).

        Markdown tables get the human-readable columns ("estimate [low, high]", rank interval),
        CSV tables the machine-readable ones (estimate, low, high, se, problems, ranks).
        """
        header, cells = (markdown_columns(self.data) if table.format == "markdown"
                         else csv_columns(self.data))
        return extend_table(table, key, header, cells)


def _cell_of(row: Any) -> dict[str, Any]:
    return {"estimate": _none_if_nan(row.estimate), "low": _none_if_nan(row.low),
            "high": _none_if_nan(row.high), "standard_error": _none_if_nan(row.standard_error),
            "n_problems": int(row.n_problems), "n_samples": int(row.n_samples),
            "n_clusters": row.n_clusters, "method": row.method, "n_excluded": int(row.n_excluded),
            "note": row.note}


def _problem_clusters(table: Any, cluster_by: str) -> dict[str, tuple[NDArray[np.str_], NDArray[np.str_]]]:
    """Per task: (sorted problem ids, their cluster labels); one cluster per problem id across models."""
    from kpass.errors import DataError

    index = table.problem_index
    first_rows = index.order[index.starts]
    cluster_codes = np.asarray(table.codes(cluster_by), dtype=np.int64)[first_rows]
    triples = np.unique(np.stack([index.task_codes, index.problem_codes, cluster_codes], axis=1), axis=0)
    pairs, first, counts = np.unique(triples[:, :2], axis=0, return_index=True, return_counts=True)
    task_names = table.categories("task")
    ids = np.asarray(table.categories("problem_id"), dtype=str)
    labels = np.asarray(table.categories(cluster_by), dtype=str)
    if np.any(counts > 1):
        task_code, problem_code = pairs[np.flatnonzero(counts > 1)[0]].tolist()
        raise DataError(f"problem {ids[problem_code]!r} of task {task_names[task_code]!r} has different "
                        f"'{cluster_by}' values under different models; a paired comparison needs one "
                        f"cluster per problem", source=", ".join(table.sources), field=cluster_by)
    out = {}
    for task_code, task in enumerate(task_names):
        chosen = triples[first[pairs[:, 0] == task_code]]
        problem_ids = ids[chosen[:, 1]]
        order = np.argsort(problem_ids, kind="stable")
        out[task] = (problem_ids[order], labels[chosen[order, 2]])
    return out


def _clusters_for(cluster_map: Mapping[str, Any] | None, task: str,
                  problem_ids: NDArray[np.str_]) -> NDArray[np.str_] | None:
    if cluster_map is None:
        return None
    ids, labels = cluster_map[task]
    return labels[np.searchsorted(ids, problem_ids)]


def _column_matrix(report: Any, models: Sequence[str], task: str, metric: str):
    """Models with values, the problems they all have (sorted ids), the (M, N) value matrix, and
    the problems some model lacks."""
    present, labels, values = [], [], []
    for model in models:
        entry = report.per_problem.get(((("model", model), ("task", task)), metric))
        if entry is None or len(entry[0]) == 0:
            continue
        present.append(model)
        labels.append(np.asarray(entry[0], dtype=str))
        values.append(np.asarray(entry[1], dtype=np.float64))
    if not present:
        return [], np.zeros(0, dtype=str), np.zeros((0, 0)), np.zeros(0, dtype=str)
    common = labels[0]
    union = labels[0]
    for other in labels[1:]:
        common = np.intersect1d(common, other)
        union = np.union1d(union, other)
    common = np.unique(common)
    matrix = np.empty((len(present), common.size))
    for row, (ids, vals) in enumerate(zip(labels, values)):
        order = np.argsort(ids, kind="stable")
        matrix[row] = vals[order[np.searchsorted(ids[order], common)]]
    return present, common, matrix, np.setdiff1d(np.unique(union), common)


#: Pairs compared per call of paired_difference (its 2-D form: one resampling for all of them).
_PAIRS_PER_CALL = 512


def _pair_note(result: Any) -> str:
    notes = []
    if result.standard_error == 0:
        notes.append("every per-problem difference is identical: the interval has width 0 and says "
                     "nothing about uncertainty")
    degenerate = result.details.get("degenerate") if result.details else None
    if degenerate and result.standard_error != 0:
        notes.append(f"degenerate interval ({degenerate})")
    if not math.isfinite(result.correlation) and result.standard_error != 0:
        notes.append("one model's per-problem values are constant: correlation undefined")
    return "; ".join(notes)


def _compare_pairs(pairs: Sequence[tuple[str, str]], present: Sequence[str], matrix: NDArray[np.float64],
                   clusters: Any, *, column: str, method: str | None, confidence_level: float,
                   n_resamples: int | None, seed: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """Paired differences ``a - b`` of the given pairs, Holm-adjusted over the whole family.

    Calls :func:`kpass.metrics.paired_difference` on blocks of pairs at once (its 2-D form, one
    column per pair): the same result as one call per pair, much faster for many pairs.
    """
    import warnings

    from kpass.metrics import DegenerateIntervalWarning, paired_difference
    from kpass.reports.report import interval_options

    position = {model: i for i, model in enumerate(present)}
    # the options of kpass compare, built by the same function
    options = interval_options(method=method, confidence_level=confidence_level, seed=seed, n_resamples=n_resamples,
                               paired=True, clustered=clusters is not None)
    options["clusters"] = clusters
    comparisons = []
    other_warnings: list[str] = []
    for start in range(0, len(pairs), _PAIRS_PER_CALL):
        block = pairs[start:start + _PAIRS_PER_CALL]
        a = matrix[[position[model_a] for model_a, _ in block]].T
        b = matrix[[position[model_b] for _, model_b in block]].T
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results = paired_difference(a, b, **options)
        other_warnings += [f"{column} comparisons: {w.message}" for w in caught
                           if not issubclass(w.category, DegenerateIntervalWarning)]
        for (model_a, model_b), result in zip(block, results):
            comparisons.append({
                "column": column, "model_a": model_a, "model_b": model_b,
                "difference": _none_if_nan(result.estimate), "low": _none_if_nan(result.low),
                "high": _none_if_nan(result.high),
                "standard_error": _none_if_nan(result.standard_error),
                "p_value": _none_if_nan(result.p_value), "p_value_holm": None,
                "correlation": _none_if_nan(result.correlation),
                "estimate_a": _none_if_nan(result.estimate_a),
                "estimate_b": _none_if_nan(result.estimate_b),
                "n_problems": int(result.n_problems), "n_clusters": result.n_clusters,
                "method": result.method, "note": _pair_note(result),
            })
    tested = [i for i, c in enumerate(comparisons) if c["p_value"] is not None]
    adjusted = holm_adjust([comparisons[i]["p_value"] for i in tested])
    for i, value in zip(tested, adjusted.tolist()):
        comparisons[i]["p_value_holm"] = value
    return comparisons, sorted(set(other_warnings))


def _resolve_sort(sort: str | None, columns: Sequence[Mapping[str, Any]], plugin_manager: Any) -> str:
    keys = [column["key"] for column in columns]
    if sort is None:
        return keys[0]
    if sort in keys:
        return sort
    from kpass.host.specs import parse_metric_specs

    task, _, spec_text = sort.rpartition("/")
    try:
        names = [spec.name for spec in parse_metric_specs(spec_text, plugin_manager=plugin_manager)]
    except ValueError:
        names = []
    matches = [c["key"] for c in columns if c["metric"] in names and (not task or c["task"] == task)]
    if len(matches) == 1:
        return matches[0]
    raise ValueError(f"--sort {sort!r} names {'several' if matches else 'no'} leaderboard column(s); "
                     f"columns: {', '.join(keys)}.")


def _powers_of_two_up_to(limit: int) -> list[int]:
    ks = [2 ** i for i in range(int(math.log2(limit)) + 1)] if limit >= 1 else []
    if ks and ks[-1] != limit:
        ks.append(limit)
    return ks


def _pass_at_k_curves(table: Any, models: Sequence[str], tasks: Sequence[str], options: Mapping[str, Any],
                      plugin_manager: Any) -> tuple[dict[str, Any], list[str]]:
    """pass@k against k per model: k = 1, 2, 4, ... up to the fewest samples of the model's problems,
    so that every point of a curve averages over the same problems."""
    from kpass.reports.report import compute_report

    index = table.problem_index
    groups = index.model_codes * len(tasks) + index.task_codes
    fewest = np.full(len(models) * len(tasks), np.iinfo(np.int64).max)
    np.minimum.at(fewest, groups, index.n_samples)
    present = fewest < np.iinfo(np.int64).max
    if not present.any() or int(fewest[present].max()) < 2:
        return {}, []
    ks = _powers_of_two_up_to(int(fewest[present].max()))
    report = compute_report(table, [f"pass@{k}" for k in ks], by=("model", "task"),
                            plugin_manager=plugin_manager, **options)
    curves: dict[str, Any] = {}
    for row in report.rows:
        group = models.index(row.model) * len(tasks) + tasks.index(row.task)
        if row.n_excluded or row.estimate is None or int(row.metric.split("@")[1]) > fewest[group]:
            continue
        key = "pass@k" if len(tasks) == 1 else f"{row.task}: pass@k"
        curves.setdefault(key, {}).setdefault(row.model, []).append(
            {"k": int(row.metric.split("@")[1]), "estimate": _none_if_nan(row.estimate),
             "low": _none_if_nan(row.low), "high": _none_if_nan(row.high), "n_problems": row.n_problems})
    notes = []
    for key, per_model in curves.items():
        short = sorted(model for model, points in per_model.items() if len(points) < 2)
        if short:
            notes.append(f"{key} curve: {', '.join(short)} drawn at k = 1 only (a problem has a single sample).")
    return curves, notes


def _nullable_column(table: Any, name: str) -> NDArray[np.float64] | None:
    if not table.has_column(name):
        return None
    raw = np.asarray(table.column(name))
    return np.where(raw < 0, np.nan, raw.astype(np.float64))


def _auto_budgets(output_tokens, answer_token, finished) -> list[int]:
    """Powers of two between the shortest answer and the largest budget decidable from the run."""
    positions = []
    for values in (answer_token, output_tokens):
        if values is not None and np.isfinite(values).any():
            positions.append(values[np.isfinite(values)])
    if not positions:
        return []
    known = np.concatenate(positions)
    top = float(known.max())
    if finished is not None and output_tokens is not None:
        cut = (finished == 0) & np.isfinite(output_tokens)
        if cut.any():
            top = min(top, float(output_tokens[cut].min()))   # beyond this a truncated sample is undecided
    top = int(top)
    if top < 1:
        return []
    low = max(1, int(known[known > 0].min()) if (known > 0).any() else 1)
    grid = [2 ** i for i in range(max(0, math.ceil(math.log2(low))), int(math.log2(top)) + 1)]
    grid = grid[-(_MAX_AUTO_BUDGETS - 1):]
    if not grid or grid[-1] != top:
        grid.append(top)
    return grid


def _budget_curves(table: Any, models: Sequence[str], tasks: Sequence[str], cluster_map: Any,
                   budgets: Sequence[int] | None, options: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """fin@1(B) and pass@1(B) per model, from the token-budget core (kpass.metrics.budget_curve)."""
    import warnings

    from kpass.metrics import budget_counts, budget_curve

    output_tokens = _nullable_column(table, "output_tokens")
    answer_token = _nullable_column(table, "answer_token")
    if output_tokens is None and answer_token is None:
        return {}, []
    finished = _nullable_column(table, "finished")
    correct = np.asarray(table.column("correct"))
    index = table.problem_index
    ids = np.asarray(table.categories("problem_id"), dtype=str)
    curves: dict[str, Any] = {}
    notes = []
    for task_code, task in enumerate(tasks):
        for model_code, model in enumerate(models):
            problems = np.flatnonzero((index.model_codes == model_code) & (index.task_codes == task_code))
            if problems.size < 2:
                continue
            rows, offsets = index.rows_of(problems)
            columns = {name: values[rows] for name, values in
                       (("finished", finished), ("output_tokens", output_tokens),
                        ("answer_token", answer_token)) if values is not None}
            grid = list(budgets) if budgets else _auto_budgets(
                columns.get("output_tokens"), columns.get("answer_token"), columns.get("finished"))
            label = f"{model}" + (f" / {task}" if len(tasks) > 1 else "")
            if not grid:
                notes.append(f"{label}: no budget curve (no token positions recorded).")
                continue
            try:
                counts = budget_counts(np.repeat(ids[index.problem_codes[problems]], np.diff(offsets)),
                                       correct[rows], grid, **columns)
                clusters = _clusters_for(cluster_map, task, np.asarray(counts.problem_ids, dtype=str))
                with warnings.catch_warnings(record=True):
                    warnings.simplefilter("always")
                    points = budget_curve(counts, k=1, clusters=clusters, **options)
            except ValueError as error:
                notes.append(f"{label}: no budget curve ({error}).")
                continue
            for name, attribute in (("pass@1", "pass_at_k"), ("fin@1", "fin_at_k")):
                key = name if len(tasks) == 1 else f"{task}: {name}"
                curves.setdefault(key, {})[model] = [
                    {"budget": int(p.budget), "estimate": _none_if_nan(getattr(p, attribute).estimate),
                     "low": _none_if_nan(getattr(p, attribute).low),
                     "high": _none_if_nan(getattr(p, attribute).high), "n_problems": int(p.n_problems)}
                    for p in points]
    return curves, notes


def build_leaderboard(table: Any, metrics: str | Sequence[str] | Sequence[Any] = "pass@1", *,
                      sort: str | None = None, baseline: str | None = None, pairs: str = "all",
                      cluster_by: str | None = None, method: str | None = None,
                      confidence_level: float = 0.95, seed: int | np.random.Generator | None = DEFAULT_SEED,
                      n_resamples: int = DEFAULT_N_RESAMPLES, curves: bool = True,
                      budgets: Sequence[int] | None = None, plugin_manager: Any = None) -> Leaderboard:
    """Build a leaderboard from a sample table holding several models.

    Every cell (estimate, interval, standard error, problem counts) comes from
    :func:`kpass.compute_report` grouped by model and task, so it equals ``kpass report``. Each
    column (a metric, or a task and metric when the table has several tasks) then gets

    * rank intervals (:func:`rank_intervals`) from the paired (cluster) bootstrap over the
      problems every model of the column has;
    * for the sort column, paired differences (:func:`kpass.metrics.paired_difference`) of all
      pairs, of neighbours in the sorted order (``pairs="adjacent"``), or of every model against
      ``baseline``, with Holm-adjusted p-values over that family (:func:`holm_adjust`).

    Parameters
    ----------
    table : kpass.SampleTable
        Samples of every model (see :func:`kpass.read_samples`).
    metrics : str or sequence, default: "pass@1"
        Metric specs (see :func:`kpass.parse_metric_specs`).
    sort : str, optional
        Column to sort by and to rank and compare in; a column key or a metric spec (default:
        the first column).
    baseline : str, optional
        Compare every model with this one instead of all pairs.
    pairs : {"all", "adjacent"}, default: "all"
        Without a baseline: every pair (M(M-1)/2 comparisons) or neighbours in the sorted order.
    cluster_by : str, optional
        Problem field whose clusters are resampled whole (intervals, ranks and comparisons).
    method : str, optional
        Interval method of :func:`kpass.mean_ci` (default: the core's).
    confidence_level : float, default: 0.95
        Of the intervals, the rank intervals and the comparison intervals.
    seed : int or Generator, default: 0
        Seed of every bootstrap (reproducible leaderboards).
    n_resamples : int, default: 10_000
        Bootstrap resamples of the intervals, ranks, comparisons and curves
        (:data:`kpass.reports.report.DEFAULT_N_RESAMPLES`, as ``kpass report``).
    curves : bool, default: True
        Also compute pass@k against k and, when the table has token counts, fin@1 and pass@1
        against the token budget (for the HTML page and the JSON).
    budgets : sequence of int, optional
        Budgets of the budget curves (default: powers of two up to the largest budget each
        model's run decides).
    plugin_manager : pluggy.PluginManager, optional
        Host whose metric families are used.

    Returns
    -------
    Leaderboard

    Raises
    ------
    ValueError
        Unknown ``baseline``, ``sort`` or ``pairs``; fewer than two problems shared by the models.
    kpass.DataError
        What :func:`kpass.compute_report` raises, and clusters that differ between models.
    """
    from kpass import __version__
    from kpass.reports.report import compute_report, interval_options
    from kpass.data.table import SampleTable

    if not isinstance(table, SampleTable):
        raise TypeError(f"`table` must be a kpass.SampleTable; got {type(table).__name__}.")
    if pairs not in PAIRS:
        raise ValueError(f"`pairs` must be one of {PAIRS}; got {pairs!r}.")
    confidence_level = _check_confidence_level(confidence_level)
    models = table.categories("model")
    tasks = table.categories("task")
    if baseline is not None and baseline not in models:
        raise ValueError(f"baseline model {baseline!r} is not in the table; models: {', '.join(models)}.")
    options = {"cluster_by": cluster_by, "method": method, "confidence_level": confidence_level,
               "seed": seed, "n_resamples": n_resamples}
    report = compute_report(table, metrics, by=("model", "task"), plugin_manager=plugin_manager, **options)
    multi_task = len(tasks) > 1
    columns = [{"key": f"{task}/{spec.name}" if multi_task else spec.name, "task": task,
                "metric": spec.name,
                "higher_is_better": bool(getattr(spec.implementation, "higher_is_better", True))}
               for task in tasks for spec in report.metrics]
    sort_key = _resolve_sort(sort, columns, plugin_manager)
    cluster_map = _problem_clusters(table, cluster_by) if cluster_by is not None else None
    rows = {(row.model, row.task, row.metric): row for row in report.rows}
    notes = list(report.notes)

    ranks: dict[str, RankIntervals] = {}
    matrices = {}
    for column in columns:
        present, common, matrix, dropped = _column_matrix(report, models, column["task"], column["metric"])
        column.update(rank_problems=int(common.size), rank_models=len(present),
                      rank_dropped_problems=int(dropped.size))
        if dropped.size:
            shown = ", ".join(dropped[:5].tolist()) + (", ..." if dropped.size > 5 else "")
            notes.append(f"{column['key']}: rank intervals and comparisons use the {common.size} problems "
                         f"every model has; {dropped.size} problem(s) that some model lacks are left out "
                         f"({shown}).")
        if not present:
            continue
        clusters = _clusters_for(cluster_map, column["task"], common)
        if common.size < 2:
            notes.append(f"{column['key']}: no rank intervals (fewer than 2 problems shared by the models).")
            continue
        if clusters is not None and np.unique(clusters).size < 2:
            notes.append(f"{column['key']}: no rank intervals (the shared problems are in one cluster).")
            continue
        ranks[column["key"]] = rank_intervals(
            matrix, models=present, clusters=clusters, confidence_level=confidence_level,
            n_resamples=n_resamples or DEFAULT_N_RESAMPLES, rng=seed,
            higher_is_better=column["higher_is_better"])
        matrices[column["key"]] = (present, matrix, clusters)

    sort_column = next(c for c in columns if c["key"] == sort_key)

    def order_key(model: str):
        row = rows.get((model, sort_column["task"], sort_column["metric"]))
        if row is None or row.estimate is None:
            return (1, 0.0, model)
        return (0, -row.estimate if sort_column["higher_is_better"] else row.estimate, model)

    ordered = sorted(models, key=order_key)

    comparisons: list[dict[str, Any]] = []
    if sort_key in matrices:
        present, matrix, clusters = matrices[sort_key]
        in_order = [m for m in ordered if m in present]
        if baseline is not None:
            if baseline not in present:
                raise ValueError(f"baseline model {baseline!r} has no values in column {sort_key!r}.")
            pair_list = [(m, baseline) for m in in_order if m != baseline]
        elif pairs == "adjacent":
            pair_list = list(zip(in_order[:-1], in_order[1:]))
        else:
            pair_list = [(a, b) for i, a in enumerate(in_order) for b in in_order[i + 1:]]
        comparisons, comparison_notes = _compare_pairs(
            pair_list, present, matrix, clusters, column=sort_key, method=method,
            confidence_level=confidence_level, n_resamples=n_resamples, seed=seed)
        notes += comparison_notes

    index = table.problem_index
    problems_per_model = np.bincount(index.model_codes, minlength=len(models))
    samples_per_model = np.bincount(index.model_codes, weights=index.n_samples, minlength=len(models))
    entries = []
    for model in ordered:
        code = models.index(model)
        metrics_of_model, ranks_of_model = {}, {}
        for column in columns:
            row = rows.get((model, column["task"], column["metric"]))
            metrics_of_model[column["key"]] = None if row is None else _cell_of(row)
            if row is not None and row.note:
                notes.append(f"{model} / {column['key']}: {row.note}.")
            result = ranks.get(column["key"])
            if result is not None and model in result.models:
                i = result.models.index(model)
                ranks_of_model[column["key"]] = {
                    "rank": int(result.rank[i]), "low": int(result.low[i]), "high": int(result.high[i]),
                    "probability_first": float(result.probability_first[i]),
                    "of": len(result.models)}
            else:
                ranks_of_model[column["key"]] = None
        entries.append({"model": model, "n_problems": int(problems_per_model[code]),
                        "n_samples": int(samples_per_model[code]), "metrics": metrics_of_model,
                        "ranks": ranks_of_model})

    exclusions = []
    for exclusion in report.exclusions:
        key = f"{exclusion.task}/{exclusion.metric}" if multi_task else exclusion.metric
        exclusions.append({"model": exclusion.model, "task": exclusion.task, "column": key,
                           "metric": exclusion.metric, "n_problems": len(exclusion.problem_ids),
                           "problem_ids": list(exclusion.problem_ids[:20]), "reason": exclusion.reason})

    curve_data: dict[str, Any] = {}
    budget_data: dict[str, Any] = {}
    if curves:
        curve_data, curve_notes = _pass_at_k_curves(table, models, tasks, options, plugin_manager)
        budget_options = interval_options(method=method, confidence_level=confidence_level, seed=seed,
                                          n_resamples=n_resamples, clustered=cluster_map is not None)
        budget_data, budget_notes = _budget_curves(table, models, tasks, cluster_map, budgets, budget_options)
        notes += curve_notes + budget_notes

    data = {
        "kind": "kpass.leaderboard",
        "kpass_version": __version__,
        "confidence_level": confidence_level,
        "n_resamples": int(n_resamples or DEFAULT_N_RESAMPLES),
        "seed": seed if isinstance(seed, (int, type(None))) else str(seed),
        "method": method,
        "cluster_by": cluster_by,
        "sort": sort_key,
        "baseline": baseline,
        "tie_rule": ("rank = 1 + number of models with a strictly larger resampled mean; models with "
                     "identical per-problem values always tie"),
        "columns": columns,
        "models": entries,
        "comparisons": comparisons,
        "comparison_family": {"column": sort_key, "baseline": baseline,
                              "pairs": "baseline" if baseline else pairs,
                              "adjustment": "holm", "size": sum(c["p_value"] is not None
                                                               for c in comparisons)},
        "curves": curve_data,
        "budget_curves": budget_data,
        "exclusions": exclusions,
        "notes": notes,
    }
    return Leaderboard(data=data, report=report, ranks=ranks)


# --------------------------------------------------------------------------------------------
# The `kpass leaderboard` command
# --------------------------------------------------------------------------------------------

_SUFFIX_FORMATS = {".md": "markdown", ".markdown": "markdown", ".csv": "csv", ".json": "json",
                   ".html": "html", ".htm": "html"}
OUTPUT_FORMATS = ("markdown", "csv", "json", "html")


def _budget_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected budgets such as 1024,2048,4096; got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"budgets must be positive integers; got {text!r}")
    return sorted(set(values))


def add_leaderboard_command(subparsers: Any) -> None:
    """Add ``kpass leaderboard`` to the ``kpass`` argument parser (called by :mod:`kpass.cli`).

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``kpass`` command's subparsers; the new parser sets ``func`` to :func:`run_leaderboard`.
    """
    from kpass.cli import _add_input_arguments, _add_metric_arguments

    description = (
        "One row per model with every metric's estimate and interval, rank intervals from the "
        "paired (cluster) bootstrap, and paired comparisons with Holm-adjusted p-values. Outputs "
        "Markdown, CSV, JSON or a self-contained HTML page; --extend joins the new columns onto an "
        "existing leaderboard table.")
    parser = subparsers.add_parser(
        "leaderboard", help="many models in one table with intervals, rank intervals and comparisons",
        description=description)
    _add_input_arguments(parser)
    _add_metric_arguments(parser)
    parser.add_argument("--sort", metavar="METRIC",
                        help="column to sort, rank and compare by (default: the first metric)")
    parser.add_argument("--baseline", metavar="MODEL",
                        help="compare every model with MODEL (default: compare all pairs)")
    parser.add_argument("--pairs", choices=PAIRS, default="all",
                        help="without --baseline: all pairs, or neighbours in the sorted order "
                             "(default: all)")
    parser.add_argument("--format", "-f", choices=OUTPUT_FORMATS,
                        help="format of stdout, or of an --output whose suffix says nothing "
                             "(default: markdown; .md, .csv, .json, .html outputs follow their suffix)")
    parser.add_argument("--output", "-o", metavar="PATH", action="append",
                        help="write to PATH (atomically); repeat for several formats at once")
    parser.add_argument("--extend", metavar="TABLE",
                        help="existing leaderboard (.csv or .md) to join the new columns onto; its rows "
                             "and columns are kept as they are")
    parser.add_argument("--key", metavar="COLUMN", default="model",
                        help="column of --extend's table naming the model (default: model)")
    parser.add_argument("--title", default="kpass leaderboard", help="title of the HTML page")
    parser.add_argument("--budgets", type=_budget_list, metavar="B1,B2,...",
                        help="token budgets of the budget curves (default: powers of two up to what "
                             "each run decides)")
    parser.add_argument("--no-curves", action="store_true",
                        help="skip the pass@k and budget curves (JSON and HTML)")
    parser.add_argument("--no-progress", action="store_true", help="never draw a progress bar")
    parser.set_defaults(func=run_leaderboard)


def _output_format(path: str | None, fallback: str | None) -> str:
    if path is None:
        return fallback or "markdown"
    suffix = Path(path).suffix.lower()
    if suffix in _SUFFIX_FORMATS:
        return _SUFFIX_FORMATS[suffix]
    if fallback:
        return fallback
    from kpass.cli import UsageError

    raise UsageError(f"--output {path}: cannot tell the format from the suffix; use .md, .csv, .json "
                     f"or .html, or give --format")


def run_leaderboard(args: argparse.Namespace) -> int:
    """Run ``kpass leaderboard`` from parsed arguments; returns the exit code (0)."""
    from kpass.cli import UsageError, _read, _specs, write_outputs, write_stdout

    existing = None
    if args.extend:
        if not os.path.exists(args.extend):
            raise UsageError(f"--extend {args.extend}: no such file")
        existing = read_leaderboard_table(args.extend, key=args.key)
        existing.column(args.key)
    targets = [(path, _output_format(path, args.format)) for path in (args.output or [None])]
    specs = _specs(args)
    table = _read(args)
    # a bad --sort or --baseline raises ValueError: `kpass` reports it as a usage error (exit 2)
    leaderboard = build_leaderboard(
        table, specs, sort=args.sort, baseline=args.baseline, pairs=args.pairs,
        cluster_by=args.cluster_by, method=args.method, confidence_level=args.confidence,
        seed=args.seed, n_resamples=args.n_resamples, curves=not args.no_curves,
        budgets=args.budgets)
    extended = None
    if existing is not None:
        extended = leaderboard.extend(existing, args.key)
        print(f"kpass leaderboard --extend {args.extend}: {extended.report()}", file=sys.stderr)
    renderers = {"markdown": leaderboard.to_markdown, "csv": leaderboard.to_csv,
                 "json": leaderboard.to_json,
                 "html": lambda: leaderboard.to_html(title=args.title)}
    texts = [(path, extended.text if extended is not None and (path is None or fmt == existing.format)
              else renderers[fmt]()) for path, fmt in targets]
    files = [(path, text) for path, text in texts if path is not None]
    write_outputs(files)  # every file prepared before any is replaced
    for path, _ in files:
        print(f"kpass: wrote {path}", file=sys.stderr)
    for path, text in texts:
        if path is None:
            write_stdout(text)
    return 0
