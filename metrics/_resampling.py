"""Bootstrap resampling of problems or whole clusters, vectorized (private module).

A resample is a vector of multiplicities over the units (problems, or clusters carrying all their
problems); its statistics are sums of multiplicities times per-unit summaries, drawn in chunks of
bounded memory, never a Python loop per resample. Units are put in a canonical order before
drawing, so that at a fixed seed a result depends on the set of problems and not on their order.
When the units take few distinct summary rows, drawing multinomial counts over the distinct rows
is distributionally identical and much cheaper. Used by every bootstrap of kpass
(:mod:`._bootstrap`, :mod:`._interval_engine`, the token budgets, the decomposition, the ranks).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import (
    check_max_chunk,
    check_n_resamples,
    check_positive_int,
    check_rng,
    check_values,
    factorize_labels,
)

__all__ = [
    "DEFAULT_MAX_CHUNK_ELEMENTS",
    "Streams",
    "Units",
    "bootstrap_weights",
    "canonical_order",
    "canonical_units",
    "chunk_rows",
    "cluster_sums",
    "resampled_sums",
    "weights_generator",
]

#: Default bound on the elements of one chunk of resampling weights (8 M float64 = 64 MiB).
DEFAULT_MAX_CHUNK_ELEMENTS = 1 << 23

#: Use multinomial counts over distinct rows when there are at most this fraction of them (numpy
#: draws a multinomial row of G cells in about the time of gathering 20 G units, measured).
_GROUPED_FRACTION = 0.05

#: Gather columns one at a time (np.take) up to this many summary columns; matrix products above.
_MAX_GATHER_COLUMNS = 4

#: Chunk size of the gather path: small chunks stay in cache and are faster than large ones.
_GATHER_CHUNK_ELEMENTS = 1 << 17


def canonical_order(keys: NDArray[Any]) -> NDArray[np.intp]:
    """The stable permutation that sorts the rows of ``keys`` (shape ``(U, M)``) lexicographically.

    Every bootstrap in kpass draws for its units (problems, or clusters) in this order, so that a
    result depends on the *set* of problems and not on the order in which they were given:
    permuting problems (or clusters) permutes the rows of ``keys``, the sorted rows are the same,
    and rows that tie are identical, so which of them comes first changes nothing.
    """
    if keys.shape[0] < 2:
        return np.arange(keys.shape[0], dtype=np.intp)
    if keys.shape[1] == 1:
        return np.argsort(keys[:, 0], kind="stable")
    return np.lexsort(keys.T[::-1])  # np.lexsort sorts by its last key first


def cluster_sums(rows: NDArray[np.float64], codes: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Column sums ``(C, M)`` and sizes ``(C,)`` of the rows of each cluster (code order).

    Within a cluster the rows are summed in their given order; callers pass rows in canonical
    order (:func:`canonical_order`), so that a cluster's sums depend on its problems only.
    """
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    sums = np.add.reduceat(rows[order], starts, axis=0)
    sizes = np.diff(np.r_[starts, rows.shape[0]]).astype(np.float64)
    return sums, sizes


def canonical_units(rows: NDArray[np.float64], codes: NDArray[np.int64] | None):
    """Per-unit sums, sizes and the canonical order of the units of canonically ordered ``rows``.

    Without clusters the units are the rows themselves (already in canonical order: the order is
    the identity). With clusters a unit is a cluster, keyed by its size and column sums, which
    is all a statistic of weighted sums can see of it.
    """
    if codes is None:
        return rows, None, np.arange(rows.shape[0], dtype=np.intp)
    sums, sizes = cluster_sums(rows, codes)
    return sums, sizes, canonical_order(np.column_stack([sizes, sums]))


# ----------------------------------------------------------------------------------------------
# resampling
# ----------------------------------------------------------------------------------------------


def chunk_rows(n_resamples: int, n_units: int, max_chunk_elements: int) -> Iterator[int]:
    rows = max(1, max_chunk_elements // max(n_units, 1))
    done = 0
    while done < n_resamples:
        b = min(rows, n_resamples - done)
        yield b
        done += b


def _index_dtype(n_units: int) -> type:
    return np.int32 if n_units < 2**31 - 1 else np.int64


def _multiplicities(indices: NDArray[np.integer], n_units: int) -> NDArray[np.float64]:
    """Turn a (b, n_draws) matrix of drawn unit indices into (b, n_units) multiplicities."""
    b = indices.shape[0]
    offsets = (np.arange(b, dtype=np.int64) * n_units)[:, None]
    flat = np.bincount((indices + offsets).ravel(), minlength=b * n_units)
    return flat.reshape(b, n_units).astype(np.float64)


def bootstrap_weights(
    n_problems: int,
    *,
    clusters: ArrayLike | None = None,
    n_resamples: int,
    rng: int | np.random.Generator | None = None,
    max_chunk_elements: int = DEFAULT_MAX_CHUNK_ELEMENTS,
    order_by: ArrayLike | None = None,
) -> Iterator[NDArray[np.float64]]:
    r"""Bootstrap resampling weights: how often each problem appears in each resample.

    Yields ``(B_chunk, N)`` float matrices whose rows are resample multiplicities, with the
    same resampling scheme as :func:`mean_ci`: N problems drawn with replacement, or, with
    ``clusters``, C clusters drawn with replacement, each carrying all its problems (then every
    problem of a drawn cluster gets the cluster's multiplicity). Any vectorized statistic can be
    bootstrapped with it, e.g. a ratio of means:

    .. math:: \hat\theta^*_b = \frac{\sum_j w_{bj} x_j}{\sum_j w_{bj} y_j}

    Parameters
    ----------
    n_problems : int
        N, the number of problems (>= 2).
    clusters : array_like, shape (N,), optional
        Cluster label of each problem (at least 2 distinct labels).
    n_resamples : int
        B, the total number of resamples over all chunks (>= 1).
    rng : int, numpy.random.Generator or None
        Seed or generator; ``None`` draws fresh entropy.
    max_chunk_elements : int, default: 2**23
        Upper bound on ``B_chunk * N`` (memory of one chunk: 8 bytes per element).
    order_by : array_like of float, shape (N,) or (N, M), optional
        The per-problem values the statistic is computed from (every column it uses). The draws
        are then made for the problems (or clusters) in a canonical order, rows sorted
        lexicographically (clusters by size and column sums), and handed back in the caller's
        order, so that at a fixed seed the resampled statistic does not depend on the order of
        the problems (or clusters). Without it the draws follow the given order.

    Yields
    ------
    ndarray of float64, shape (B_chunk, N)
        Multiplicities, columns in the caller's problem order; each row sums to N without
        clusters, and to the number of problems in the drawn clusters with them.

    Notes
    -----
    The draws follow the same distribution as :func:`mean_ci`'s resampling but not the same
    random stream: :func:`mean_ci` draws multinomial counts over groups of identical problems
    when it can, which is much faster and distributionally identical.

    Examples
    --------
    >>> import numpy as np
    >>> from kpass.metrics import bootstrap_weights
    >>> x = np.array([1.0, 0.0, 1.0, 1.0]); y = np.array([2.0, 1.0, 2.0, 1.0])
    >>> ratios = np.concatenate([w @ x / (w @ y) for w in bootstrap_weights(4, n_resamples=1000, rng=0)])
    >>> ratios.shape
    (1000,)
    >>> chunk = next(bootstrap_weights(4, clusters=["a", "a", "b", "c"], n_resamples=3, rng=1))
    >>> bool((chunk[:, 0] == chunk[:, 1]).all())   # problems of one cluster move together
    True
    >>> xy = np.column_stack([x, y]); order = [2, 0, 3, 1]      # the same problems, reordered
    >>> w = next(bootstrap_weights(4, n_resamples=5, rng=0, order_by=xy))
    >>> v = next(bootstrap_weights(4, n_resamples=5, rng=0, order_by=xy[order]))
    >>> bool(np.array_equal(w @ x, v @ x[order]))
    True
    """
    n = check_positive_int(n_problems, "n_problems", 2)
    n_resamples = check_n_resamples(n_resamples, minimum=1)
    max_chunk_elements = check_max_chunk(max_chunk_elements)
    generator, _ = check_rng(rng)
    if clusters is not None:
        codes, labels = factorize_labels(clusters, "clusters", n)
        if len(labels) < 2:
            raise ValueError(f"`clusters` has a single cluster ({labels[0]!r}); a cluster bootstrap needs at least 2.")
    else:
        codes, labels = None, []
    position_of_unit = None
    if order_by is not None:
        keys, _ = check_values(order_by, "order_by")
        if keys.shape[0] != n:
            raise ValueError(f"`order_by` has {keys.shape[0]} rows but there are {n} problems; give one row per problem.")
        row_order = canonical_order(keys)
        _, _, unit_order = canonical_units(keys[row_order], None if codes is None else codes[row_order])
        if codes is None:
            unit_order = row_order[unit_order]
        position_of_unit = np.empty_like(unit_order)
        position_of_unit[unit_order] = np.arange(unit_order.size)
    return weights_generator(n, codes, len(labels), n_resamples, generator, max_chunk_elements, position_of_unit)


def weights_generator(n, codes, n_clusters, n_resamples, generator, max_chunk_elements, position_of_unit=None):
    """Multiplicities per problem; ``position_of_unit[u]`` is the draw position of unit ``u``."""
    units = n if codes is None else n_clusters
    dtype = _index_dtype(units)
    columns = None
    if position_of_unit is not None:
        columns = position_of_unit if codes is None else position_of_unit[codes]
    elif codes is not None:
        columns = codes
    for b in chunk_rows(n_resamples, n, max_chunk_elements):
        drawn = generator.integers(0, units, size=(b, units), dtype=dtype)
        counts = _multiplicities(drawn, units)
        yield counts if columns is None else counts[:, columns]


class Streams:
    """Where each independently resampled column group gets its random numbers.

    An int seed (a SeedSequence, or the entropy drawn once for ``rng=None``) gives every request
    a fresh ``default_rng(seed)``: a column of an ``(N, K)`` call then draws exactly what a call
    with that column alone draws, so its interval does not depend on the other columns (up to
    rounding). A Generator is handed out itself and consumed in turn.
    """

    def __init__(self, rng: Any):
        generator, self.seed = check_rng(rng)
        if isinstance(rng, np.random.Generator):
            self._fresh = None
            self._generator = generator
        else:
            self._fresh = rng if rng is not None else self.seed

    def new(self) -> np.random.Generator:
        return self._generator if self._fresh is None else np.random.default_rng(self._fresh)


class Units:
    """Per-unit summaries (problems, or clusters) of centered values for resampling.

    ``centered`` is ``values - estimate`` (exactly 0 for constant columns), ``(N, K)``, rows in
    canonical order (:func:`canonical_order`). The K columns fall into *column groups* that are
    resampled together (``groups``; default: each column alone; the MOVER pairs model a's column j
    with model b's, and with their difference where it takes the differences' own bootstrap-t).
    Each group puts the units in its own canonical order (rows of its summaries
    sorted; clusters by size and totals) and is resampled on its own, so that a column's result
    is what a call with that column (group) alone gives. ``totals`` and ``sizes`` are ``(U, K)``,
    each column in its group's order. Summary columns of a group: ``T`` unit totals of centered
    values; with clusters also ``n``; when standard errors are needed ``Q = T**2`` and, with
    clusters, ``nT`` and ``n**2``.
    """

    def __init__(self, centered: NDArray[np.float64], codes: NDArray[np.int64] | None, need_se: bool,
                 groups: Sequence[Sequence[int]] | None = None):
        self.k = centered.shape[1]
        self.clustered = codes is not None
        self.need_se = need_se
        self.groups = [list(g) for g in groups] if groups is not None else [[j] for j in range(self.k)]
        if codes is None:
            totals, unit_sizes = centered, None
        else:
            totals, unit_sizes = cluster_sums(centered, codes)
        self.n_units = totals.shape[0]
        self.unit_sizes = unit_sizes
        self.totals = np.empty_like(totals)
        sizes = None if unit_sizes is None else np.empty(totals.shape)
        self.sizes = sizes
        self.summaries = []
        for columns in self.groups:
            group_totals = totals[:, columns]
            if unit_sizes is None:
                order = canonical_order(group_totals)
            else:
                order = canonical_order(np.column_stack([unit_sizes, group_totals]))
            group_totals = group_totals[order]
            self.totals[:, columns] = group_totals
            parts = [group_totals]
            if unit_sizes is not None and sizes is not None:  # clustered: both are set
                group_sizes = unit_sizes[order]
                sizes[:, columns] = group_sizes[:, None]
                parts.append(group_sizes[:, None])
            if need_se:
                parts.append(group_totals * group_totals)
                if unit_sizes is not None:
                    parts.append(group_sizes[:, None] * group_totals)
                    parts.append((group_sizes * group_sizes)[:, None])
            self.summaries.append(np.ascontiguousarray(np.concatenate(parts, axis=1)))

    def split(self, columns: list[int], sums: NDArray[np.float64], out: dict[str, NDArray[np.float64]], rows: slice) -> None:
        """Write one group's resampled summary sums ``(b, m)`` into the per-column arrays of ``out``."""
        width = len(columns)
        out["T"][rows, columns] = sums[:, :width]
        pos = width
        if self.clustered:
            out["n"][rows, columns] = sums[:, pos : pos + 1]
            pos += 1
        if self.need_se:
            out["Q"][rows, columns] = sums[:, pos : pos + width]
            pos += width
            if self.clustered:
                out["nT"][rows, columns] = sums[:, pos : pos + width]
                out["n2"][rows, columns] = sums[:, pos + width : pos + width + 1]


def resampled_sums(units: Units, n_resamples: int, streams: Streams, max_chunk_elements: int):
    """Per-column sums over each resample of the unit summaries (``T``, and as needed ``n``,
    ``Q``, ``nT``, ``n2``; each ``(B, K)``) and, per column, how they were drawn.

    A column group whose units take few distinct summary rows draws multinomial counts over them
    (resampling U units == multinomial counts over the G groups of identical units, B x G instead
    of B x U) from its own stream; groups with the same group sizes (in the order of their sorted
    rows) share those draws, which are the ones each would draw alone. The other groups share
    drawn unit positions (0..U-1, each group mapping them through its own canonical order) from
    one stream.
    """
    b_total, k, n_units = n_resamples, units.k, units.n_units
    names = ["T"] + (["n"] if units.clustered else []) + (["Q"] + (["nT", "n2"] if units.clustered else []) if units.need_se else [])
    out = {name: np.empty((b_total, k)) for name in names}
    info: list[dict[str, Any]] = [{} for _ in range(k)]
    partitions: dict[bytes, tuple[NDArray[np.float64], list]] = {}
    gathered_groups = []
    for columns, summaries in zip(units.groups, units.summaries):
        distinct, group_sizes = np.unique(summaries, axis=0, return_counts=True)
        n_groups = distinct.shape[0]
        grouped = n_groups <= max(1, int(_GROUPED_FRACTION * n_units))
        for j in columns:
            info[j] = {"path": "grouped" if grouped else "gather", "n_groups": int(n_groups)}
        if grouped:
            # the draws depend only on the group sizes (in the order of the sorted rows)
            key = np.ascontiguousarray(group_sizes, dtype=np.int64).tobytes()
            partitions.setdefault(key, (group_sizes / n_units, []))[1].append((columns, distinct))
        else:
            gathered_groups.append((columns, summaries))
    for probabilities, members in partitions.values():
        generator = streams.new()
        n_groups = probabilities.shape[0]
        start = 0
        for b in chunk_rows(n_resamples, n_groups, max_chunk_elements):
            counts = generator.multinomial(n_units, probabilities, size=b).astype(np.float64)
            for columns, distinct in members:
                units.split(columns, counts @ distinct, out, slice(start, start + b))
            start += b
    if not gathered_groups:
        return out, info
    # a few summary columns: one gather each; more: one matrix product for all of them (row p of
    # the stacked summaries holds each group's unit at its position p); the two differ by rounding
    if sum(s.shape[1] for _, s in gathered_groups) <= _MAX_GATHER_COLUMNS:
        narrow, wide = gathered_groups, []
    else:
        narrow, wide = [], gathered_groups
    stacked = np.ascontiguousarray(np.concatenate([s for _, s in wide], axis=1)) if wide else None
    generator = streams.new()
    chunk_elements = max_chunk_elements if wide else min(max_chunk_elements, _GATHER_CHUNK_ELEMENTS)
    start = 0
    for b in chunk_rows(n_resamples, n_units, chunk_elements):
        # np.intp indices: np.take converts anything else to intp first
        drawn = generator.integers(0, n_units, size=(b, n_units), dtype=np.intp)
        rows = slice(start, start + b)
        for columns, summaries in narrow:
            m = summaries.shape[1]
            sums = np.empty((b, m))
            if not units.clustered and units.need_se:
                # one gather per value column; squares from the gathered values
                width = len(columns)
                for c in range(width):
                    gathered = np.take(summaries[:, c], drawn)
                    sums[:, c] = gathered.sum(axis=1)
                    sums[:, width + c] = np.einsum("ij,ij->i", gathered, gathered)
            else:
                for c in range(m):
                    sums[:, c] = np.take(summaries[:, c], drawn).sum(axis=1)
            units.split(columns, sums, out, rows)
        if stacked is not None:  # the wide groups
            all_sums = _multiplicities(drawn, n_units) @ stacked
            position = 0
            for columns, summaries in wide:
                m = summaries.shape[1]
                units.split(columns, all_sums[:, position : position + m], out, rows)
                position += m
        start += b
    return out, info
