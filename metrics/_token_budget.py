"""Token budgets: finished and correct-and-finished counts at many budgets from one run.

Every pass@k of a reasoning model is measured at some output-token budget ``B``: a derivation
that has not emitted its final answer within its first ``B`` output tokens scores zero. One long
run yields every smaller budget: truncate each sample at ``B`` tokens and decide again whether it
finished and whether it is correct (docs/spec.md section 6). This module does that for any list of
budgets at once, vectorized over samples and budgets, and turns the counts into ``fin@k(B)``,
``pass@k(B)`` and ``pass@k(B | fin)`` with intervals.

All three are higher-is-better.

The answer position of a sample
-------------------------------
Per sample ``i`` the *answer position* ``a_i`` is the number of output tokens needed to emit the
complete final answer; the sample is finished within ``B`` iff ``a_i <= B``, and correct-and-
finished within ``B`` iff it is also correct:

- ``answer_token`` known: ``a_i = answer_token`` (1-based position of the last token of the final
  answer, i.e. the number of output tokens up to and including it);
- otherwise, ``finished`` true: ``a_i = output_tokens`` (the whole generation; conservative: the
  answer may have been complete earlier, never later);
- otherwise, ``finished`` false (a generation stopped by its token limit without an answer):
  ``a_i = inf`` (not finished at any budget that was generated).

What was generated
------------------
A sample that did not finish was generated up to ``output_tokens`` tokens and no further. Its
state within a budget ``B > output_tokens`` is unknown: with more tokens it might have finished.
Such a budget is *beyond what was generated* for that sample, and asking for it is a
``ValueError`` naming the budget and the problems concerned, never a silent "not finished". A
finished sample is decided at every budget (finished iff ``a_i <= B``). So the largest budget a run
can answer is the smallest ``output_tokens`` among its unfinished samples: a run made with a
native ``max_tokens = B`` answers ``B`` and every smaller budget, and at ``B`` itself it is read as
it is (stop reason "length" means not finished).

The budget ``None`` means "as run": the recorded ``finished`` flags with no truncation (this needs
no token counts at all, for logs that do not record them).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._bootstrap import DEFAULT_N_RESAMPLES, bootstrap_of_sums
from ._intervals import mean_ci
from ._result import IntervalResult
from ._validation import MAX_REPORTED, check_confidence_level, check_n_resamples, check_option, factorize_labels, resolve_seed
from ._warnings import UndefinedBudgetMetricWarning

#: Bound on the elements of one chunk of resampling weights of the ratio bootstrap (32 MiB).
_RATIO_CHUNK_ELEMENTS = 4_000_000

__all__ = [
    "BudgetCounts",
    "BudgetCurvePoint",
    "budget_counts",
    "budget_curve",
    "UndefinedBudgetMetricWarning",
]


@dataclasses.dataclass(frozen=True)
class BudgetCounts:
    """Per-problem sample, finished and correct-and-finished counts at several budgets.

    Attributes
    ----------
    budgets : tuple of (int or None)
        The budgets, in the order given (``None``: as run, no truncation).
    problem_ids : tuple
        Problem labels, one per row (sorted unique labels of the ``problem`` input).
    n_samples : ndarray of int64, shape (N,)
        Samples per problem (ragged allowed).
    n_finished : ndarray of int64, shape (N, K)
        Samples finished within each budget.
    n_correct : ndarray of int64, shape (N, K)
        Samples correct and finished within each budget.
    """

    budgets: tuple[int | None, ...]
    problem_ids: tuple[Any, ...]
    n_samples: NDArray[np.int64]
    n_finished: NDArray[np.int64]
    n_correct: NDArray[np.int64]

    def __post_init__(self) -> None:
        for array in (self.n_samples, self.n_finished, self.n_correct):
            array.setflags(write=False)

    @property
    def n_problems(self) -> int:
        """Number of problems ``N``."""
        return int(self.n_samples.shape[0])

    def at(self, budget: int | None) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        """``(n_samples, n_finished, n_correct)`` at one budget (the first column equal to it)."""
        if budget not in self.budgets:
            raise KeyError(f"budget {budget!r} was not counted; counted budgets: {list(self.budgets)}.")
        column = self.budgets.index(budget)
        return self.n_samples, self.n_finished[:, column], self.n_correct[:, column]


# ----------------------------------------------------------------------------------------------
# input validation


def _as_1d(value: Any, name: str) -> np.ndarray:
    if isinstance(value, (str, bytes)):
        raise TypeError(f"`{name}` must be a 1-D array with one entry per sample; got the string {value!r}.")
    arr: np.ndarray
    if np.ma.isMaskedArray(value):
        arr = value
    else:
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"`{name}` must be a 1-D array with one entry per sample ({exc}).") from None
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D (one entry per sample); got an array of shape {arr.shape}.")
    return arr


def _missing_mask(arr: np.ndarray) -> NDArray[np.bool_]:
    """True where a nullable per-sample entry is missing (mask, NaN or None)."""
    if np.ma.isMaskedArray(arr):
        missing = np.ma.getmaskarray(arr).copy()
        data = np.ma.getdata(arr)
    else:
        missing = np.zeros(arr.shape, dtype=bool)
        data = arr
    if data.dtype.kind == "f":
        missing |= np.isnan(data)
    elif data.dtype.kind == "O":
        missing |= np.fromiter(
            (v is None or (isinstance(v, float) and v != v) for v in data), dtype=bool, count=data.size
        )
    return missing


def _sample_positions(mask: NDArray[np.bool_], describe: Any = None) -> str:
    idx = np.flatnonzero(mask)
    if describe is None:
        shown = "positions " + ", ".join(str(int(i)) for i in idx[:MAX_REPORTED])
    else:
        shown = ", ".join(str(describe(int(i))) for i in idx[:MAX_REPORTED])
    more = ", ..." if idx.size > MAX_REPORTED else ""
    return f"{idx.size} sample{'s' if idx.size != 1 else ''} ({shown}{more})"


def _nullable_column(value: Any, name: str, n_rows: int) -> tuple[np.ndarray, NDArray[np.bool_]]:
    """``(data, missing)`` of a per-sample column with one entry per sample (nulls marked missing)."""
    arr = _as_1d(value, name)
    if arr.shape[0] != n_rows:
        raise ValueError(f"`{name}` has {arr.shape[0]} entries but `correct` has {n_rows} (one per sample).")
    return np.ma.getdata(arr), _missing_mask(arr)


def _nullable_bool(value: Any, name: str, n_rows: int) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """``(values, known)`` of a nullable per-sample boolean column (None: all unknown)."""
    if value is None:
        return np.zeros(n_rows, dtype=bool), np.zeros(n_rows, dtype=bool)
    data, missing = _nullable_column(value, name, n_rows)
    known = ~missing
    if data.dtype.kind == "b":
        return data.astype(bool), known
    if data.dtype.kind == "O":
        ok = np.fromiter(
            (m or isinstance(v, (bool, np.bool_)) or (isinstance(v, numbers.Integral) and v in (0, 1))
             for v, m in zip(data, missing)),
            dtype=bool, count=data.size,
        )
        if not ok.all():
            bad = data[~ok][0]
            raise TypeError(f"`{name}` must hold booleans (or null); got {bad!r} at {_sample_positions(~ok)}.")
        values = np.zeros(n_rows, dtype=bool)
        values[known] = np.array([bool(v) for v in data[known]], dtype=bool)
        return values, known
    if data.dtype.kind not in "iuf":
        raise TypeError(f"`{name}` must hold booleans (or null); got dtype {data.dtype}.")
    filled = np.where(known, data, 0)
    bad = known & (filled != 0) & (filled != 1)
    if bad.any():
        raise ValueError(f"`{name}` must hold booleans (0/1, or null); got {filled[bad][0]!r} at {_sample_positions(bad)}.")
    return filled.astype(bool), known


def _nullable_tokens(value: Any, name: str, n_rows: int) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """``(values, known)`` of a nullable per-sample non-negative integer token count."""
    if value is None:
        return np.zeros(n_rows), np.zeros(n_rows, dtype=bool)
    data, missing = _nullable_column(value, name, n_rows)
    known = ~missing
    if data.dtype.kind == "O":
        ok = np.fromiter(
            (m or (isinstance(v, (numbers.Integral, float, np.floating)) and not isinstance(v, (bool, np.bool_)))
             for v, m in zip(data, missing)),
            dtype=bool, count=data.size,
        )
        if not ok.all():
            raise TypeError(f"`{name}` must hold integer token counts (or null); got {data[~ok][0]!r} at {_sample_positions(~ok)}.")
        values = np.zeros(n_rows)
        values[known] = np.array([float(v) for v in data[known]])
    elif data.dtype.kind in "iuf":
        values = np.where(known, data, 0).astype(np.float64)
    elif data.dtype.kind == "b":
        raise TypeError(f"`{name}` must hold integer token counts, not booleans.")
    else:
        raise TypeError(f"`{name}` must hold integer token counts (or null); got dtype {data.dtype}.")
    bad = known & (~np.isfinite(values) | (values != np.floor(values)) | (values < 0))
    if bad.any():
        raise ValueError(
            f"`{name}` must hold non-negative whole token counts (or null); got {values[bad][0]!r} at "
            f"{_sample_positions(bad)}."
        )
    return values, known


def _check_budgets(budgets: Any) -> tuple[int | None, ...]:
    if budgets is None or isinstance(budgets, (numbers.Integral, str, bytes)):
        if isinstance(budgets, (bool, np.bool_)) or isinstance(budgets, (str, bytes)):
            raise TypeError(f"`budgets` must be a sequence of integers >= 1 (or None for 'as run'); got {budgets!r}.")
        budgets = [budgets]
    try:
        values = list(budgets)
    except TypeError:
        raise TypeError(f"`budgets` must be a sequence of integers >= 1 (or None for 'as run'); got {budgets!r}.") from None
    if not values:
        raise ValueError("`budgets` must not be empty.")
    out: list[int | None] = []
    for value in values:
        if value is None:
            out.append(None)
            continue
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, float, np.floating)):
            raise TypeError(f"`budgets` must hold integers >= 1 (or None for 'as run'); got {value!r}.")
        if isinstance(value, (float, np.floating)) and (not np.isfinite(value) or value != int(value)):
            raise ValueError(f"`budgets` must hold whole numbers of tokens; got {value!r}.")
        if value < 1:
            raise ValueError(f"`budgets` must be >= 1 token; got {value!r}.")
        out.append(int(value))
    return tuple(out)


def _describe_problems(problem_ids: Sequence[Any], mask_per_problem: NDArray[np.bool_]) -> str:
    idx = np.flatnonzero(mask_per_problem)
    shown = ", ".join(repr(problem_ids[i]) for i in idx[:MAX_REPORTED])
    more = ", ..." if idx.size > MAX_REPORTED else ""
    return f"{idx.size} problem{'s' if idx.size != 1 else ''} ({shown}{more})"


# ----------------------------------------------------------------------------------------------
# counting


def budget_counts(
    problem: ArrayLike,
    correct: ArrayLike,
    budgets: Sequence[int | None] | int | None,
    *,
    finished: ArrayLike | None = None,
    output_tokens: ArrayLike | None = None,
    answer_token: ArrayLike | None = None,
    describe_sample: Any = None,
) -> BudgetCounts:
    r"""Count finished and correct-and-finished samples per problem at every budget at once.

    A sample ``i`` with answer position ``a_i`` (see the module docstring) is, at budget ``B``,

    .. math::

        \mathrm{finished}_i(B) = [a_i \le B], \qquad
        \mathrm{correct}_i(B) = \mathrm{correct}_i \wedge [a_i \le B],

    and per problem ``j``: :math:`f_j(B) = \sum_{i \in j} \mathrm{finished}_i(B)`,
    :math:`c_j(B) = \sum_{i \in j} \mathrm{correct}_i(B)` (docs/spec.md section 6).

    Parameters
    ----------
    problem : array_like, shape (S,)
        Problem label of each sample (any hashable, sortable values: ints or strings).
    correct : array_like of bool, shape (S,)
        Whether the sample's final answer (of the whole generation) is correct.
    budgets : sequence of (int or None)
        Output-token budgets, each ``>= 1``; ``None`` is the run as recorded (no truncation).
    finished : array_like of bool or null, shape (S,), optional
        Emitted a final answer before its token limit (stop reason "length" means ``False``).
        Null (NaN, None, masked) where unknown.
    output_tokens : array_like of int or null, shape (S,), optional
        Output tokens generated.
    answer_token : array_like of int or null, shape (S,), optional
        1-based output-token position at which the final answer was complete (a sample with a known
        position has finished; within ``B`` iff ``answer_token <= B``).
    describe_sample : callable, optional
        ``describe_sample(i) -> str`` names sample ``i`` in error messages (e.g. its file and
        line); default: its position in the input arrays.

    Returns
    -------
    BudgetCounts
        ``n_samples`` ``(N,)``, ``n_finished`` and ``n_correct`` ``(N, K)`` in the order of
        ``budgets``; problems in sorted label order.

    Raises
    ------
    ValueError
        A budget beyond what was generated: ``B`` larger than ``output_tokens`` of a sample that
        did not finish (the message names the budget, the largest decidable budget and the
        problems); a sample whose position cannot be placed (finished with neither
        ``answer_token`` nor ``output_tokens``; ``finished`` unknown without ``answer_token``;
        ``answer_token`` given for a sample marked not finished; ``answer_token >
        output_tokens``); bad values.
    TypeError
        Wrong kinds of input.

    Notes
    -----
    Vectorized: one ``searchsorted`` places every sample at the first budget that contains its
    answer, one ``bincount`` counts (problem, budget-slot) pairs and a cumulative sum over the
    sorted budgets gives every budget; ``O(S log K + N K)``.

    References
    ----------
    .. [1] kpass docs/spec.md, section 6 (token budgets).
    .. [2] Yang (2026), "What Outcome RL Buys" (fin@1 and the decomposition of pass@1 changes).

    Examples
    --------
    >>> counts = budget_counts(["p", "p", "q"], [True, True, False], [10, 20],
    ...                        finished=[True, True, False], output_tokens=[8, 15, 30])
    >>> counts.n_finished.tolist(), counts.n_correct.tolist()
    ([[1, 2], [0, 0]], [[1, 2], [0, 0]])
    """
    budget_list = _check_budgets(budgets)
    correct_arr = _as_1d(correct, "correct")
    n_rows = correct_arr.shape[0]
    if _missing_mask(correct_arr).any():
        raise ValueError(f"`correct` must be known for every sample; missing at {_sample_positions(_missing_mask(correct_arr))}.")
    correct_values, _ = _nullable_bool(correct_arr, "correct", n_rows)
    ids, problem_index = _problem_labels(problem, n_rows)
    positions = _AnswerPositions.of(finished, output_tokens, answer_token, n_rows)

    def fail(message: str, samples: NDArray[np.bool_]) -> None:
        per_problem = np.bincount(problem_index[samples], minlength=len(ids)) > 0
        raise ValueError(f"{message} {_sample_positions(samples, describe_sample)} of {_describe_problems(ids, per_problem)}.")

    positions.check(budget_list, fail)
    n_finished, n_correct = _counts_at_budgets(positions, correct_values, problem_index, len(ids), budget_list)
    return BudgetCounts(
        budgets=budget_list,
        problem_ids=ids,
        n_samples=np.bincount(problem_index, minlength=len(ids)).astype(np.int64),
        n_finished=n_finished,
        n_correct=n_correct,
    )


def _problem_labels(problem: ArrayLike, n_rows: int) -> tuple[tuple[Any, ...], NDArray[np.intp]]:
    """The sorted distinct problem labels (as Python values) and each sample's index into them."""
    problem_arr = _as_1d(problem, "problem")
    if problem_arr.shape[0] != n_rows:
        raise ValueError(f"`problem` has {problem_arr.shape[0]} entries but `correct` has {n_rows} (one per sample).")
    if np.ma.isMaskedArray(problem_arr) or _missing_mask(problem_arr).any():
        raise ValueError(f"`problem` must label every sample; missing at {_sample_positions(_missing_mask(problem_arr))}.")
    try:
        problem_ids, problem_index = np.unique(problem_arr, return_inverse=True)
    except TypeError as exc:
        raise TypeError(f"`problem` labels must be mutually sortable (all strings or all integers): {exc}.") from None
    return tuple(v.item() if isinstance(v, np.generic) else v for v in problem_ids), problem_index.reshape(-1)


@dataclasses.dataclass(frozen=True)
class _AnswerPositions:
    """Where each sample's answer was complete, as far as the columns tell (docs/spec.md section 6).

    ``position`` is the answer's output-token position :math:`a_i` (inf: not finished within what
    was generated); ``horizon`` the tokens an unfinished sample generated (inf for a finished one,
    decided at every budget; -inf when unknown); the ``*_known`` masks say which values are known.
    """

    position: NDArray[np.float64]
    horizon: NDArray[np.float64]
    finished_as_run: NDArray[np.bool_]
    answer_known: NDArray[np.bool_]
    finished_known: NDArray[np.bool_]
    from_output_tokens: NDArray[np.bool_]
    output_known: NDArray[np.bool_]
    #: ``(message, samples)`` of the columns' contradictions, raised first by :meth:`check`.
    contradictions: tuple[tuple[str, NDArray[np.bool_]], ...]

    @classmethod
    def of(cls, finished: Any, output_tokens: Any, answer_token: Any, n_rows: int) -> "_AnswerPositions":
        """The positions from the three nullable columns (their contradictions are raised by :meth:`check`)."""
        fin_values, fin_known = _nullable_bool(finished, "finished", n_rows)
        out_values, out_known = _nullable_tokens(output_tokens, "output_tokens", n_rows)
        ans_values, ans_known = _nullable_tokens(answer_token, "answer_token", n_rows)
        position = np.full(n_rows, np.inf)
        position[ans_known] = ans_values[ans_known]
        use_output = ~ans_known & fin_known & fin_values
        position[use_output] = out_values[use_output]
        horizon = np.full(n_rows, np.inf)
        unfinished = ~(ans_known | (fin_known & fin_values)) & fin_known
        horizon[unfinished] = np.where(out_known[unfinished], out_values[unfinished], -np.inf)
        contradictions = (
            ("`answer_token` is given (the answer was complete) but `finished` is false for",
             ans_known & fin_known & ~fin_values),
            ("`answer_token` exceeds `output_tokens` for", ans_known & out_known & (ans_values > out_values)))
        return cls(position, horizon, ans_known | (fin_known & fin_values), ans_known, fin_known, use_output,
                   out_known, contradictions)

    def check(self, budget_list: tuple[int | None, ...], fail: Any) -> None:
        """Call ``fail(message, samples)`` for the first rule the samples break at these budgets."""
        for message, samples in self.contradictions:
            if samples.any():
                fail(message, samples)
        finite_budgets = [b for b in budget_list if b is not None]
        undecided = ~self.answer_known & ~self.finished_known
        if finite_budgets:
            if undecided.any():
                fail("cannot place samples within a token budget: `finished` is unknown and no `answer_token` is "
                     "given for", undecided)
            unplaced = self.from_output_tokens & ~self.output_known
            if unplaced.any():
                fail("cannot place finished samples within a token budget: neither `answer_token` nor "
                     "`output_tokens` is known for", unplaced)
            self._check_horizon(finite_budgets, fail)
        if None in budget_list and undecided.any():
            fail("budget None ('as run') needs `finished` (or `answer_token`) for every sample; unknown for", undecided)

    def _check_horizon(self, finite_budgets: list[int], fail: Any) -> None:
        """Refuse a budget beyond what an unfinished sample generated, naming the largest decidable one."""
        largest = max(finite_budgets)
        over = largest > self.horizon
        if not over.any():
            return
        smallest_horizon = self.horizon.min()
        decidable = ("no budget (they have no `output_tokens`)" if smallest_horizon == -np.inf
                     else f"{int(smallest_horizon)} tokens")
        too_large = sorted({b for b in finite_budgets if b > smallest_horizon})
        fail(
            f"budget {too_large[-1] if len(too_large) == 1 else too_large} is beyond what was "
            f"generated (the largest budget this data can decide is {decidable}): some samples "
            f"stopped unfinished before that many output tokens, so whether they would have "
            f"finished within it is unknown. Lower the budget or rerun with max_tokens >= "
            f"{largest}. Unfinished too early:",
            over,
        )


def _counts_at_budgets(positions: _AnswerPositions, correct_values: NDArray[np.bool_], problem_index: NDArray[np.intp],
                       n_problems: int, budget_list: tuple[int | None, ...]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``(n_finished, n_correct)``, shape ``(N, K)``: one ``searchsorted`` places every sample at the
    first budget that contains its answer, one ``bincount`` counts (problem, slot) pairs and a
    cumulative sum over the sorted budgets gives every budget; ``None`` is the run as recorded."""
    n_finished = np.zeros((n_problems, len(budget_list)), dtype=np.int64)
    n_correct = np.zeros((n_problems, len(budget_list)), dtype=np.int64)
    finite_columns = np.asarray([i for i, b in enumerate(budget_list) if b is not None], dtype=np.int64)
    if finite_columns.size:
        finite_budgets = np.asarray([budget_list[i] for i in finite_columns], dtype=np.float64)
        order = np.argsort(finite_budgets, kind="stable")
        n_finite = finite_budgets.shape[0]
        slot = np.searchsorted(finite_budgets[order], positions.position, side="left")  # n_finite: none
        flat = problem_index * (n_finite + 1) + slot
        size = n_problems * (n_finite + 1)
        for target, chosen in ((n_finished, flat), (n_correct, flat[correct_values])):
            histogram = np.bincount(chosen, minlength=size).reshape(n_problems, n_finite + 1)
            target[:, finite_columns[order]] = np.cumsum(histogram, axis=1)[:, :n_finite]
    as_run = positions.finished_as_run
    for column in (i for i, b in enumerate(budget_list) if b is None):
        n_finished[:, column] = np.bincount(problem_index[as_run], minlength=n_problems)
        n_correct[:, column] = np.bincount(problem_index[as_run & correct_values], minlength=n_problems)
    return n_finished, n_correct


# ----------------------------------------------------------------------------------------------
# fin@k(B), pass@k(B) and pass@k(B | fin)


@dataclasses.dataclass(frozen=True, kw_only=True)
class BudgetCurvePoint:
    """fin@k, pass@k and pass@k | fin at one budget, each with its interval.

    Attributes
    ----------
    budget : int or None
        Token budget (``None``: as run).
    k : int
    fin_at_k, pass_at_k : IntervalResult
        Benchmark means of the per-problem estimators (interval from :func:`mean_ci`).
    pass_given_fin : IntervalResult
        ``pass_at_k.estimate / fin_at_k.estimate`` (a ratio of benchmark means, so that
        ``pass@k(B) = fin@k(B) * pass@k(B | fin)`` holds exactly), with a paired cluster-bootstrap
        interval; NaN with :class:`UndefinedBudgetMetricWarning` when nothing finished.
    n_problems : int
    n_samples : int
        Samples over all problems.
    """

    budget: int | None
    k: int
    fin_at_k: Any
    pass_at_k: Any
    pass_given_fin: Any
    n_problems: int
    n_samples: int


def budget_curve(
    counts: BudgetCounts,
    *,
    k: int | Sequence[int] = 1,
    clusters: ArrayLike | None = None,
    method: str | None = None,
    ratio_method: str = "bootstrap",
    confidence_level: float = 0.95,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    rng: int | np.random.Generator | None = None,
) -> list[BudgetCurvePoint]:
    r"""fin@k(B), pass@k(B) and pass@k(B | fin) at every budget of ``counts``.

    .. math::

        \mathrm{fin@}k(B) = \frac{1}{N}\sum_j \Big[1 - \tbinom{n_j - f_j(B)}{k}\Big/\tbinom{n_j}{k}\Big],
        \qquad
        \mathrm{pass@}k(B) = \frac{1}{N}\sum_j \Big[1 - \tbinom{n_j - c_j(B)}{k}\Big/\tbinom{n_j}{k}\Big],

        \mathrm{pass@}k(B \mid \mathrm{fin}) = \mathrm{pass@}k(B) \,/\, \mathrm{fin@}k(B)

    (docs/spec.md section 6; the per-problem estimators are :func:`kpass.metrics.fin_at_k` and
    :func:`kpass.metrics.pass_at_k`).

    Parameters
    ----------
    counts : BudgetCounts
        From :func:`budget_counts`.
    k : int or sequence of int, default: 1
        Every ``k <= n`` of every problem (else ``ValueError`` naming the problems).
    clusters : array_like, shape (N,), optional
        Cluster of each problem (row of ``counts``).
    method : str, optional
        Interval method of fin@k and pass@k, passed to :func:`kpass.metrics.mean_ci` (default:
        its default, chosen by the project's coverage study).
    ratio_method : {"bootstrap", "bca"}, default: "bootstrap"
        Interval of the ratio pass@k | fin: percentile or BCa paired cluster bootstrap.
    confidence_level : float, default: 0.95
    n_resamples : int, default: 10_000
        Bootstrap resamples (:data:`~kpass.metrics.DEFAULT_N_RESAMPLES`, as every kpass interval).
    rng : int, Generator or None
        Seed or generator. Each fin@k and pass@k is :func:`kpass.metrics.mean_ci` of its
        per-problem values alone with this ``rng`` unchanged, so it equals ``mean_ci(values,
        rng=seed)`` (and ``kpass report``) on the same problems in any order; ``None`` draws
        fresh entropy once and records it as ``details["seed"]``.

    Returns
    -------
    list of BudgetCurvePoint
        Budget-major: for each budget (in ``counts.budgets`` order) every ``k``.

    Raises
    ------
    ValueError
        ``k`` larger than some ``n``, an unknown ``method``/``ratio_method``, ``confidence_level``
        outside (0, 1), ``n_resamples < 2``, bad ``clusters``.

    Warns
    -----
    UndefinedBudgetMetricWarning
        No sample finished within a budget: pass@k | fin is NaN there.
    DegenerateIntervalWarning, IntervalMethodWarning
        From :func:`kpass.metrics.mean_ci` (e.g. fin@1 = 0 at a tight budget: every value 0).

    References
    ----------
    .. [1] kpass docs/spec.md, section 6.
    .. [2] Yang (2026), "What Outcome RL Buys".
    """
    from ._budget import fin_at_k
    from ._passk import pass_at_k

    if not isinstance(counts, BudgetCounts):
        raise TypeError(f"`counts` must be a BudgetCounts (from budget_counts); got {type(counts).__name__}.")
    check_option(ratio_method, "ratio_method", ("bootstrap", "bca"))
    level = check_confidence_level(confidence_level)
    n_resamples = check_n_resamples(n_resamples)
    rng, seed = resolve_seed(rng)
    ks = [int(k)] if isinstance(k, (int, np.integer)) else list(k)
    n = counts.n_samples
    n_budgets = len(counts.budgets)
    codes, n_clusters = None, None
    if clusters is not None:
        codes, labels = factorize_labels(clusters, "clusters", counts.n_problems)
        n_clusters = len(labels)
        if n_clusters < 2:
            raise ValueError(f"`clusters` has a single cluster ({labels[0]!r}); a cluster bootstrap needs at least 2.")
    columns = []
    for b in range(n_budgets):
        fin = np.asarray(fin_at_k(n, counts.n_finished[:, b], ks)).reshape(n.shape[0], len(ks))
        pas = np.asarray(pass_at_k(n, counts.n_correct[:, b], ks)).reshape(n.shape[0], len(ks))
        columns.extend([fin, pas])
    values = np.concatenate(columns, axis=1)  # (N, n_budgets * 2 * K): [fin_k..., pass_k...] per budget
    mean_kwargs: dict[str, Any] = {"clusters": codes, "confidence_level": level, "n_resamples": n_resamples, "rng": rng}
    if method is not None:
        mean_kwargs["method"] = method
    # one column at a time with the caller's seed: each equals mean_ci of those values alone
    means = [mean_ci(values[:, j], **mean_kwargs) for j in range(values.shape[1])]
    n_stats = values.shape[1] // 2

    def ratio(sums: NDArray[np.float64], total_weight: NDArray[np.float64]) -> NDArray[np.float64]:
        blocks = sums.reshape(sums.shape[0], n_budgets, 2, len(ks))
        with np.errstate(divide="ignore", invalid="ignore"):  # NaN where nothing finished: reported below
            out = np.where(blocks[:, :, 0] > 0, blocks[:, :, 1] / blocks[:, :, 0], np.nan)
        return out.reshape(sums.shape[0], n_stats)

    boot = bootstrap_of_sums(values, ratio, codes=codes, n_clusters=n_clusters, method=ratio_method, level=level,
                              n_resamples=n_resamples, rng=rng, max_chunk_elements=_RATIO_CHUNK_ELEMENTS)

    points = []
    for b, budget in enumerate(counts.budgets):
        for i, kk in enumerate(ks):
            fin_result = means[b * 2 * len(ks) + i]
            pass_result = means[b * 2 * len(ks) + len(ks) + i]
            ratio_result = _ratio_result(boot, b * len(ks) + i, fin_result, pass_result, budget=budget, k=int(kk),
                                         resampling="clusters" if clusters is not None else "problems",
                                         method=ratio_method, n_resamples=n_resamples, seed=seed)
            points.append(BudgetCurvePoint(
                budget=budget, k=int(kk), fin_at_k=fin_result, pass_at_k=pass_result,
                pass_given_fin=ratio_result, n_problems=counts.n_problems, n_samples=int(n.sum()),
            ))
    return points


def _ratio_result(boot: dict[str, Any], column: int, fin_result: IntervalResult, pass_result: IntervalResult, *,
                  budget: int | None, k: int, resampling: str, method: str, n_resamples: int,
                  seed: Any) -> IntervalResult:
    """pass@k(B | fin) = pass@k(B) / fin@k(B) with the bootstrap interval of ``boot``'s ``column``
    (NaN, with an :class:`UndefinedBudgetMetricWarning`, where no sample finished within the budget)."""
    if fin_result.estimate == 0:
        warnings.warn(
            f"pass@{k}(B | fin) is undefined at budget {budget!r}: no sample finished within "
            f"budget {budget}; reported as NaN.",
            UndefinedBudgetMetricWarning,
            stacklevel=3,
        )
        estimate = math.nan
    else:
        estimate = pass_result.estimate / fin_result.estimate
    details: dict[str, Any] = {
        "n_resamples": n_resamples,
        "seed": seed,
        "resampling": resampling,
        "n_undefined_resamples": int(boot["n_undefined"][column]),
        "standard_error_kind": "bootstrap standard deviation",
        "ratio_of": ("pass_at_k", "fin_at_k"),
    }
    for key, value in boot["details"].items():
        details[key] = float(value[column])
    return IntervalResult(
        estimate=estimate,
        low=float(boot["low"][column]),
        high=float(boot["high"][column]),
        standard_error=float(boot["standard_error"][column]),
        confidence_level=fin_result.confidence_level,
        n_problems=fin_result.n_problems,
        n_clusters=fin_result.n_clusters,
        method=method,
        details=details,
    )
