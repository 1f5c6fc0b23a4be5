r"""cons@k: majority vote over k samples, exact over all k-subsets (higher is better).

Public functions:

- :func:`cons_at_k` -- the exact U-statistic: the expected success of a majority vote over a
  k-subset drawn uniformly without replacement from the n samples of a problem, computed from
  answer-class counts by a polynomial dynamic programme (never by enumerating subsets);
- :func:`class_counts_from_codes` -- builds the ``(class_counts, n_invalid)`` input of
  :func:`cons_at_k` from per-sample integer answer codes and gold flags, vectorized; every
  other way of building class counts in kpass (answer strings, the sample table, the Inspect
  reducer, lm-eval) goes through it, so they all apply the same consistency rules;
- :func:`class_counts_from_answers` -- the same from per-sample answer strings and gold answers;
- :func:`first_k_majority_vote` -- the order-dependent vote over the *first* k samples that the
  evaluation harnesses report as maj@k, to reproduce their numbers.

Definitions follow kpass's ``docs/spec.md`` section 4.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln, xlog1py

from ._validation import as_count_array, check_k, check_option, describe_offenders

__all__ = [
    "InconsistentAnswersError",
    "class_counts_from_answers",
    "class_counts_from_codes",
    "cons_at_k",
    "first_k_majority_vote",
]

_TIE_RULES = ("fractional", "strict")
_INVALID_POLICIES = ("abstain", "vote")
_MAX_LISTED = 5  # offending problems named in an error message (answers, gold)
#: The largest k of :func:`cons_at_k`: the exact vote's work and memory grow with k^2 per problem.
MAX_CONS_K = 1 << 16
_STIRLING_SERIES_FROM = 10  # Stirling series for log(m!) is used for m >= this
# B_2j / (2j (2j - 1)) for j = 1..7: 1/12, -1/360, 1/1260, -1/1680, 1/1188, -691/360360, 1/156
_STIRLING_COEFFICIENTS = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)
_BLOCK_ELEMENTS = 1 << 19  # problems per block * tie nodes * (k + 1) in the dynamic programme


# ----------------------------------------------------------------------------------------------
# input validation
# ----------------------------------------------------------------------------------------------


def _check_k_within_answers(k_values: NDArray[np.int64], n_answers: NDArray[np.int64]) -> None:
    if n_answers.size == 0:
        return
    k_max = int(k_values.max())
    short = n_answers < k_max
    if short.any():
        raise ValueError(
            f"`k` = {k_max} exceeds the number of answers for "
            f"{describe_offenders(short, n_answers, value_name='answers')}; every problem needs at "
            f"least k answers (the harnesses' take_first_k asserts the same)."
        )


def _cons_at_k_iv(class_counts, k, n_invalid, ties, invalid):
    counts = as_count_array(class_counts, "class_counts", ndim=2)
    if counts.shape[1] < 1:
        raise ValueError(
            "`class_counts` must have at least one column (column 0 counts the gold answer); "
            f"got shape {counts.shape}."
        )
    n_problems = counts.shape[0]
    if n_invalid is None:
        invalid_counts = np.zeros(n_problems, dtype=np.int64)
    else:
        invalid_counts = as_count_array(n_invalid, "n_invalid", ndim=1)
        if invalid_counts.shape != (n_problems,):
            raise ValueError(
                f"`n_invalid` must have shape ({n_problems},) to match `class_counts` "
                f"{counts.shape}; got shape {invalid_counts.shape}."
            )
    check_option(ties, "ties", _TIE_RULES)
    check_option(invalid, "invalid", _INVALID_POLICIES)
    n_samples = counts.sum(axis=1) + invalid_counts
    k_values, k_scalar = check_k(k, n_samples)
    return counts, invalid_counts, n_samples, [int(v) for v in k_values], k_scalar


# ----------------------------------------------------------------------------------------------
# scaled binomial weights
# ----------------------------------------------------------------------------------------------


def _remainders_of(m: NDArray[np.float64]) -> NDArray[np.float64]:
    """``log(m!) - m log m + m`` elementwise (0 at ``m = 0``); see :func:`_stirling_remainders`."""
    remainders = np.zeros(m.shape)
    small = (m >= 1) & (m < _STIRLING_SERIES_FROM)
    remainders[small] = gammaln(m[small] + 1) - m[small] * np.log(m[small]) + m[small]
    large = m >= _STIRLING_SERIES_FROM
    ml = m[large]
    inverse_square = 1.0 / (ml * ml)
    # log m! = m log m - m + log(2 pi m)/2 + sum_j B_2j / (2j (2j-1) m^(2j-1))
    series = np.zeros_like(ml)
    for coefficient in reversed(_STIRLING_COEFFICIENTS):
        series = series * inverse_square + coefficient
    remainders[large] = 0.5 * np.log(2 * np.pi * ml) + series / ml
    return remainders


class _RemaindersOnDemand:
    """:func:`_remainders_of` indexed like the table of :func:`_stirling_remainders`, computed for
    the counts asked for: the table of every count up to ``n`` would take 8n bytes."""

    def __getitem__(self, counts: Any) -> NDArray[np.float64]:
        return _remainders_of(np.asarray(counts, dtype=np.float64))


#: Largest sample count per problem for which the remainders are tabulated (32 MiB).
_TABLE_MAX = 1 << 22


def _stirling_remainders(n_max: int) -> Any:
    r"""``s[m] = log(m!) - m log m + m`` for ``m = 0..n_max`` (``s[0] = 0``).

    Small (about ``0.5 log(2 pi m)``), so that binomial log-weights built from it do not lose
    the digits that ``log(m!)`` (of order ``m log m``) would. Stirling's series for
    ``m >= 10`` (truncation error < 1e-16), ``gammaln`` below. A table up to ``n_max`` when it
    is at most :data:`_TABLE_MAX`, else the same values computed on demand.
    """
    if n_max > _TABLE_MAX:
        return _RemaindersOnDemand()
    return _remainders_of(np.arange(n_max + 1, dtype=np.float64))


def _binomial_weight(count, draws, p, q, remainders):
    r"""``C(count, draws) p^draws q^(count - draws)`` elementwise, 0 outside ``0..count``.

    Requires ``p + q == 1`` exactly (see :func:`_scaling`). Written as

    ``exp(s[c] - s[x] - s[c-x] - x log1p((x - cp)/cp) - (c-x) log1p((cp - x)/cq))``

    so that no large logarithms cancel: the rounding error of the log-weight is of order
    ``1e-16 * (x + c p + |log weight|)``, not ``1e-16 * c log c``.
    """
    valid = (draws >= 0) & (draws <= count)
    x = np.where(valid, draws, 0)
    c = np.where(valid, count, 0)
    rest = c - x
    c_positive = np.maximum(c, 1)  # c = 0 forces x = rest = 0, and xlog1py(0, .) = 0
    mean = c_positive * p
    log_weight = (
        remainders[c]
        - remainders[x]
        - remainders[rest]
        - xlog1py(x, (x - mean) / mean)
        - xlog1py(rest, (mean - x) / (c_positive * q))
    )
    return np.where(valid, np.exp(log_weight), 0.0)


def _scaling(n, k):
    """``(p, q)`` with ``p ~ k/(n+1)`` (k is the mode of Binomial(n, p)) and ``p + q == 1`` exactly."""
    q = 1.0 - k / (n + 1.0)
    return 1.0 - q, q  # q >= 1/2 or p >= 1/2: both subtractions are exact (Sterbenz)


def _tie_quadrature(max_ties: int, fractional: bool) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Nodes and weights on [0, 1] with ``sum w u^T = 1/(1+T)`` (fractional) or ``[T = 0]`` (strict).

    ``1/(1+T) = \int_0^1 u^T du``; Gauss-Legendre with ``max_ties // 2 + 1`` nodes is exact
    for polynomials in ``u`` of degree ``<= max_ties``.
    """
    if not fractional:
        return np.zeros(1), np.ones(1)
    nodes, weights = np.polynomial.legendre.leggauss(max_ties // 2 + 1)
    return (nodes + 1.0) / 2.0, weights / 2.0


# ----------------------------------------------------------------------------------------------
# the dynamic programme
# ----------------------------------------------------------------------------------------------


def _cons_block(gold, wrong, n, k, fractional, remainders):
    """cons@k for one block of problems and one k.

    ``gold`` (R,) gold counts; ``wrong`` (R, W) counts of every class that can beat gold,
    sorted in decreasing order along each row; ``n`` (R,) all samples (abstaining invalid
    samples are ``n - gold - wrong.sum(1)``).
    """
    n_rows = gold.shape[0]
    result = np.zeros(n_rows)
    if n_rows == 0:
        return result
    p, q = _scaling(n, k)  # any p in (0, 1) is exact; this one keeps the normaliser near its maximum
    inverse_norm = 1.0 / _binomial_weight(n, k, p, q, remainders)
    half = k // 2

    # gold drawn g > k/2 times: no other class can reach g, gold wins outright
    g_high = np.arange(half + 1, k + 1)
    weight_gold = _binomial_weight(gold[:, None], g_high, p[:, None], q[:, None], remainders)
    weight_rest = _binomial_weight((n - gold)[:, None], k - g_high, p[:, None], q[:, None], remainders)
    result += (weight_gold * weight_rest).sum(axis=1) * inverse_norm

    # gold drawn g <= k/2 times: every other class must stay below g (or tie at g)
    for g in range(1, min(half, int(gold.max())) + 1):
        rows = np.flatnonzero(gold >= g)
        p_r, q_r = p[rows], q[rows]
        budget = k - g  # draws left for everything but gold
        wrong_r = wrong[rows]
        contested = wrong_r >= g  # classes that could reach g; the others join the free pool
        n_contested = int(contested.sum(axis=1).max()) if wrong_r.shape[1] else 0
        free = (n - gold)[rows] - np.where(contested, wrong_r, 0).sum(axis=1)
        gold_weight = _binomial_weight(gold[rows], g, p_r, q_r, remainders) * inverse_norm[rows]
        if n_contested == 0:
            result[rows] += gold_weight * _binomial_weight(free, budget, p_r, q_r, remainders)
            continue
        max_ties = min(n_contested, budget // g)
        nodes, node_weights = _tie_quadrature(max_ties, fractional)
        # poly[r, u, d]: coefficient of t^d in prod_j (sum_{x<g} w_j(x) t^x + u w_j(g) t^g)
        poly = np.zeros((rows.size, nodes.size, budget + 1))
        poly[:, :, 0] = 1.0
        degree = 0
        x_range = np.arange(g + 1)
        for column in range(n_contested):
            counts_j = wrong_r[:, column]
            factor = _binomial_weight(counts_j[:, None], x_range, p_r[:, None], q_r[:, None], remainders)
            factor[counts_j < g] = 0.0
            factor[counts_j < g, 0] = 1.0  # class already counted in the free pool
            new_degree = min(degree + g, budget)
            product = poly[:, :, : new_degree + 1] * factor[:, None, 0:1]
            for x in range(1, min(g, new_degree) + 1):
                width = min(degree, new_degree - x) + 1
                coefficient = factor[:, x, None] * nodes if x == g else factor[:, x, None]
                product[:, :, x : x + width] += coefficient[:, :, None] * poly[:, :, :width]
            poly[:, :, : new_degree + 1] = product
            degree = new_degree
        d = np.arange(degree + 1)
        free_weight = _binomial_weight(free[:, None], budget - d, p_r[:, None], q_r[:, None], remainders)
        at_nodes = np.einsum("rud,rd->ru", poly[:, :, : degree + 1], free_weight)
        result[rows] += gold_weight * (at_nodes @ node_weights)
    return result


def cons_at_k(
    class_counts: ArrayLike,
    k: int | Sequence[int],
    *,
    n_invalid: ArrayLike | None = None,
    ties: str = "fractional",
    invalid: str = "abstain",
) -> NDArray[np.float64]:
    r"""Exact cons@k (maj@k) per problem: majority-vote success over all k-subsets of the samples.

    For a problem with ``n`` samples in answer classes of sizes ``c_0`` (the gold answer),
    ``c_1, ..., c_m`` (wrong answers) and ``c_inv`` samples with no extractable answer, cons@k is
    the expectation, over a k-subset drawn uniformly without replacement, of the vote's success:

    .. math::

        \mathrm{cons@}k = \sum_{x:\ \sum_j x_j = k}
            \frac{\prod_j \binom{c_j}{x_j}}{\binom{n}{k}}\, w(x),
        \qquad
        w(x) = \begin{cases}
            1 & x_0 \ge 1 \text{ and } x_0 > x_j \text{ for every other voting class } j,\\
            1/t \text{ or } 0 & x_0 \ge 1 \text{ ties for first with } t - 1 \text{ other classes},\\
            0 & \text{otherwise,}
        \end{cases}

    the unbiased (U-statistic) estimate of the success probability of self-consistency
    voting [2]_ with k samples, as defined in kpass ``docs/spec.md`` section 4 [1]_.

    Parameters
    ----------
    class_counts : array_like of int, shape (N, M)
        Per problem, column 0 counts the samples whose answer is the gold answer; columns
        ``1..M-1`` count the samples of each wrong answer class (zero-padded, any order).
        Build it from answer strings with :func:`class_counts_from_answers`.
    k : int or 1-D sequence of int
        Number of samples voting; ``1 <= k <= n`` for every problem, where
        ``n = class_counts.sum(axis=1) + n_invalid``.
    n_invalid : array_like of int, shape (N,), optional
        Samples with no extractable answer per problem. Default: none.
    ties : {"fractional", "strict"}, default: "fractional"
        A tie for first place between gold and ``t - 1`` other classes scores ``1/t``
        ("fractional", the expectation of a first-seen tie-break under a random sample order)
        or 0 ("strict").
    invalid : {"abstain", "vote"}, default: "abstain"
        "abstain": invalid samples occupy draws but never vote (if all k draws are invalid,
        nobody wins and the score is 0). "vote": they form one more class that can win or tie
        but is never correct (lm-eval's ``"[invalid]"`` fallback string).

    Returns
    -------
    ndarray of float, shape (N,) or (N, len(k))
        Per-problem cons@k in [0, 1]; one column per k when ``k`` is a sequence.

    Raises
    ------
    TypeError
        Counts or ``k`` that are not numbers (strings, booleans, ragged lists).
    ValueError
        Negative or fractional counts, wrong shapes, ``k < 1`` or fractional, ``k > n`` (naming
        the problems), or an unknown ``ties``/``invalid`` option.

    Notes
    -----
    ``k = 1`` gives ``c_0 / n`` (under both policies; ``n`` includes invalid samples) and
    ``k = n`` gives the plain vote over all samples. Binary correct/incorrect data do not
    determine cons@k: the wrong answers' classes matter.

    Computation. Split on the number ``g`` of gold draws. For ``g > k/2`` gold wins outright
    (hypergeometric term). For ``1 <= g <= k/2`` the other classes must satisfy ``x_j <= g``;
    with ``T`` of them at ``g`` the weight is ``1/(1+T) = \int_0^1 u^T du`` (fractional) or
    ``[T = 0]`` (strict), so

    .. math::

        P(g) = \frac{\binom{c_0}{g}}{\binom{n}{k}} \int_0^1 [t^{k-g}]
            \prod_{j:\,c_j \ge g} \Big(\sum_{x<g}\binom{c_j}{x}t^x + u\binom{c_j}{g}t^g\Big)
            (1+t)^{F_g}\, du ,

    where the free pool ``F_g`` holds abstaining invalid samples and the classes with
    ``c_j < g`` (they cannot reach ``g``). The polynomial in ``t`` is truncated at degree
    ``k - g``; its degree in ``u`` is at most ``floor(k/g) - 1``, so Gauss-Legendre quadrature
    with ``floor(k/(2g)) + 1`` nodes integrates it exactly. Every coefficient is scaled as a
    binomial probability with ``p = k/(n+1)`` (``\binom{c}{x} p^x (1-p)^{c-x}``; the powers of
    ``p`` cancel against the normaliser ``\binom{n}{k} p^k (1-p)^{n-k}``), so nothing overflows
    for any ``n``; sums are of positive terms only, and the log-weights avoid ``log(n!)``
    cancellation (error of order ``1e-16 * k`` per factor, not ``1e-16 * n log n``). Agreement
    with exact rational arithmetic is tested to ``1e-12`` for ``n`` up to 100,000 (observed
    errors about ``1e-15``). Work per problem is about
    ``sum_{g<=k/2} B_g (g+1) (k-g) (k/(2g)+1)`` multiply-adds, ``B_g`` the number of wrong
    classes with at least ``g`` samples; problems are vectorized, loops run over k, g,
    classes and polynomial degree.

    References
    ----------
    .. [1] kpass ``docs/spec.md``, section 4 "cons@k".
    .. [2] X. Wang et al., "Self-Consistency Improves Chain of Thought Reasoning in Language
       Models", arXiv:2203.11171 (2022).

    Examples
    --------
    Answers 7, 5, 5, 7, 7, 3, 5, 5 with gold 7 (docs/spec.md MJ17 and MJ16): three samples say 7,
    four say 5, one says 3.

    >>> cons_at_k([[3, 4, 1]], k=2)
    array([0.375])
    >>> cons_at_k([[3, 4, 1]], k=2, ties="strict") * 28
    array([3.])
    >>> cons_at_k([[3, 4, 1]], k=[1, 8])
    array([[0.375, 0.   ]])
    """
    counts, invalid_counts, n_samples, k_values, k_scalar = _cons_at_k_iv(
        class_counts, k, n_invalid, ties, invalid
    )
    if max(k_values) > MAX_CONS_K:
        raise ValueError(f"`k` must be at most {MAX_CONS_K} for cons@k (the exact vote's work and memory grow with "
                         f"k^2 per problem); got {max(k_values)}.")
    fractional = ties == "fractional"
    gold = counts[:, 0]
    wrong = counts[:, 1:]
    if invalid == "vote":
        wrong = np.concatenate([wrong, invalid_counts[:, None]], axis=1)
    wrong = -np.sort(-wrong, axis=1)  # largest first, so that column j is contested for g <= c_j
    if wrong.shape[0] and wrong.shape[1]:
        wrong = wrong[:, : int(np.count_nonzero(wrong.max(axis=0)))]
    remainders = _stirling_remainders(int(n_samples.max()) if n_samples.size else 0)
    out = np.zeros((counts.shape[0], len(k_values)))
    for position, k_value in enumerate(k_values):
        max_nodes = min(wrong.shape[1], k_value - 1) // 2 + 1
        block = max(1, _BLOCK_ELEMENTS // ((k_value + 1) * max_nodes))
        for start in range(0, counts.shape[0], block):
            part = slice(start, start + block)
            out[part, position] = _cons_block(
                gold[part], wrong[part], n_samples[part], k_value, fractional, remainders
            )
    np.clip(out, 0.0, 1.0, out=out)  # rounding only; the sum is a probability
    return out[:, 0] if k_scalar else out


# ----------------------------------------------------------------------------------------------
# from answer codes (the one place where samples become answer classes)
# ----------------------------------------------------------------------------------------------


class InconsistentAnswersError(ValueError):
    """The gold flags and the answers of some samples contradict each other (see
    :func:`class_counts_from_codes`).

    A ``ValueError`` whose message names the problems and samples; callers that know where each
    sample came from (a file and line) use the attributes to point there.

    Attributes
    ----------
    samples : ndarray of int64
        Positions (in the input arrays) of every offending sample, ascending.
    reason : str
        What is wrong with each of them, as a clause about one sample (e.g. "this sample is
        judged correct but has no answer"), so that a caller can attach it to one sample.
    """

    def __init__(self, message: str, samples: NDArray[np.int64], reason: str) -> None:
        super().__init__(message)
        self.samples = samples
        self.reason = reason


#: The two contradictions :func:`class_counts_from_codes` rejects, as clauses about one sample.
_GOLD_WITHOUT_ANSWER = (
    "this sample is judged correct but has no answer; cons@k needs the answer of every correct sample "
    "(fill the answer or fix the verdict)"
)
_WRONG_WITH_GOLD_ANSWER = (
    "this sample is judged incorrect but its answer equals the answer of a sample of the same problem "
    "judged correct; the verdicts and the answers disagree"
)


def _as_int_vector(value: Any, name: str) -> NDArray[np.int64]:
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D (one entry per sample); got an array of shape {arr.shape}.")
    if arr.size == 0:
        return arr.astype(np.int64)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"`{name}` must hold integers; got dtype {arr.dtype}.")
    return arr.astype(np.int64, copy=False)


def _class_counts_from_codes_iv(problem, answer_codes, is_gold, n_problems):
    if isinstance(n_problems, (bool, np.bool_)) or not isinstance(n_problems, (int, np.integer)):
        raise TypeError(f"`n_problems` must be an integer >= 0; got {n_problems!r}.")
    if n_problems < 0:
        raise ValueError(f"`n_problems` must be >= 0; got {n_problems!r}.")
    problem_arr = _as_int_vector(problem, "problem")
    codes = _as_int_vector(answer_codes, "answer_codes")
    gold = np.asarray(is_gold)
    if gold.ndim != 1:
        raise ValueError(f"`is_gold` must be 1-D (one entry per sample); got an array of shape {gold.shape}.")
    if gold.size and gold.dtype.kind != "b":
        if gold.dtype.kind not in "iu" or not np.isin(gold, (0, 1)).all():
            raise TypeError(f"`is_gold` must hold booleans (or 0/1); got dtype {gold.dtype}.")
    gold = gold.astype(bool, copy=False)
    if not problem_arr.shape == codes.shape == gold.shape:
        raise ValueError(
            "`problem`, `answer_codes` and `is_gold` must have one entry per sample each; got lengths "
            f"{problem_arr.shape[0]}, {codes.shape[0]} and {gold.shape[0]}."
        )
    out_of_range = (problem_arr < 0) | (problem_arr >= n_problems)
    if out_of_range.any():
        raise ValueError(
            f"`problem` must be in 0..n_problems-1 = 0..{int(n_problems) - 1}; out of range at "
            f"{describe_offenders(out_of_range, problem_arr, value_name='problem')}."
        )
    below = codes < -1
    if below.any():
        raise ValueError(
            "`answer_codes` must be >= 0 (an answer) or -1 (no extractable answer); got "
            f"{describe_offenders(below, codes, value_name='answer_codes')}."
        )
    return problem_arr, codes, gold, int(n_problems)


def _conflict(message: str, reason: str, mask: NDArray[np.bool_], problem: NDArray[np.int64],
              n_problems: int) -> InconsistentAnswersError:
    samples = np.flatnonzero(mask)
    per_problem = np.zeros(n_problems, dtype=bool)
    per_problem[problem[samples]] = True
    shown = ", ".join(map(str, samples[:_MAX_LISTED].tolist())) + (", ..." if samples.size > _MAX_LISTED else "")
    return InconsistentAnswersError(
        f"{message}: {samples.size} sample{'s' if samples.size != 1 else ''} (positions {shown}) in "
        f"{describe_offenders(per_problem)}.",
        samples.astype(np.int64), reason)


def class_counts_from_codes(
    problem: ArrayLike, answer_codes: ArrayLike, is_gold: ArrayLike, n_problems: int, *,
    abstain: ArrayLike | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    r"""Answer-class counts per problem from integer-coded samples, the input of :func:`cons_at_k`.

    Sample ``i`` belongs to problem ``problem[i]``. Its answer class is

    - the gold class (column 0) when ``is_gold[i]``;
    - "no extractable answer" (counted in ``n_invalid``) when ``answer_codes[i] == -1``, or when
      ``abstain[i]`` (an answer taken from an unfinished generation, which abstains by default:
      docs/spec.md section 4);
    - otherwise the wrong class of its code within its problem: wrong samples of one problem
      with equal codes form one class (columns ``1..``, largest first, zero-padded).

    .. math::

        \mathrm{class\_counts}_{j,0} = \#\{i \in j : \mathrm{gold}_i\},\qquad
        n^{\mathrm{invalid}}_j = \#\{i \in j :
eg\mathrm{gold}_i,\ a_i = -1\}

    Parameters
    ----------
    problem : array_like of int, shape (S,)
        Problem of each sample, in ``0..n_problems-1`` (any order; problems may have no sample).
    answer_codes : array_like of int, shape (S,)
        Answer of each sample as an integer code (equal codes = equal answers within a problem;
        codes need not be dense), ``-1`` for a sample with no extractable answer.
    is_gold : array_like of bool, shape (S,)
        Whether the sample's answer is the gold answer (judged correct).
    n_problems : int
        Number of problems (rows of the result).
    abstain : array_like of bool, shape (S,), optional
        Samples whose answer abstains (is counted as no answer) although it has a code: the
        answers of generations cut at their token limit. A gold sample never abstains. The
        consistency checks below see every answer as given, whether it abstains or not.

    Returns
    -------
    class_counts : ndarray of int64, shape (n_problems, M)
        Column 0: gold samples; columns ``1..M-1``: the wrong answer classes of each problem,
        largest first, zero-padded (``M >= 1``).
    n_invalid : ndarray of int64, shape (n_problems,)
        Samples with no extractable answer.

    Raises
    ------
    InconsistentAnswersError
        (a ``ValueError``) when the gold flags contradict the answers, naming the samples and
        problems: a gold sample with no answer (code -1), or a sample that is not gold although
        its code equals the code of a gold sample of the same problem. kpass treats both as
        errors on every path (the sample table, the Inspect reducer, lm-eval) rather than
        guessing which of the two pieces of data is wrong.
    ValueError, TypeError
        Wrong shapes or kinds of input, problems outside ``0..n_problems-1``, codes below -1.

    Notes
    -----
    Vectorized over samples: one ``bincount`` per count, one ``unique`` over (problem, code)
    keys and one ``lexsort``; ``O(S log S)``. Codes are renumbered densely first when they are
    sparse, so ``problem * n_codes + code`` never overflows.

    Examples
    --------
    Answers 7, 5, 5, 7, none, 3 with gold 7, coded 7 -> 0, 5 -> 1, 3 -> 2:

    >>> counts, n_invalid = class_counts_from_codes(
    ...     [0, 0, 0, 0, 0, 0], [0, 1, 1, 0, -1, 2], [True, False, False, True, False, False], 1)
    >>> counts, n_invalid
    (array([[2, 2, 1]]), array([1]))

    The same with the two answers "5" cut off at the token limit, abstaining:

    >>> class_counts_from_codes([0, 0, 0, 0, 0, 0], [0, 1, 1, 0, -1, 2],
    ...                         [True, False, False, True, False, False], 1,
    ...                         abstain=[False, True, True, False, False, False])
    (array([[2, 1]]), array([3]))
    """
    problem_arr, codes, gold, n_problems = _class_counts_from_codes_iv(problem, answer_codes, is_gold, n_problems)
    if abstain is not None:
        abstaining = np.asarray(abstain)
        if abstaining.dtype != np.bool_ or abstaining.shape != codes.shape:
            raise ValueError(f"`abstain` must be a boolean array of shape {codes.shape} (one flag per sample); "
                             f"got dtype {abstaining.dtype} and shape {abstaining.shape}.")
    null = codes < 0
    gold_without_answer = gold & null
    if gold_without_answer.any():
        raise _conflict("`is_gold` and `answer_codes` disagree (a gold sample has answer code -1)",
                        _GOLD_WITHOUT_ANSWER, gold_without_answer, problem_arr, n_problems)
    if codes.size and int(codes.max()) >= codes.size:  # sparse codes: renumber densely
        dense = np.full(codes.shape, -1, dtype=np.int64)
        dense[~null] = np.unique(codes[~null], return_inverse=True)[1].reshape(-1)
        codes = dense
    n_codes = max(int(codes.max()) + 1 if codes.size else 1, 1)
    key = problem_arr * n_codes + codes
    wrong = ~gold & ~null
    clash = wrong & np.isin(key, key[gold])
    if clash.any():
        raise _conflict("`is_gold` and `answer_codes` disagree (a sample that is not gold has the code of a "
                        "gold sample of its problem)", _WRONG_WITH_GOLD_ANSWER, clash, problem_arr, n_problems)
    if abstain is not None:  # after the checks: they see every answer as given
        null = null | (abstaining & ~gold)
        wrong = wrong & ~null
    n_invalid = np.bincount(problem_arr[null & ~gold], minlength=n_problems).astype(np.int64)
    gold_counts = np.bincount(problem_arr[gold], minlength=n_problems).astype(np.int64)
    keys, sizes = np.unique(key[wrong], return_counts=True)
    owner = keys // n_codes
    order = np.lexsort((-sizes, owner))  # by problem, then largest class first
    owner, sizes = owner[order], sizes[order]
    column = np.arange(owner.size) - np.searchsorted(owner, owner, side="left") + 1
    width = int(column.max()) + 1 if column.size else 1
    class_counts = np.zeros((n_problems, width), dtype=np.int64)
    class_counts[:, 0] = gold_counts
    class_counts[owner, column] = sizes
    return class_counts, n_invalid


# ----------------------------------------------------------------------------------------------
# from answer strings
# ----------------------------------------------------------------------------------------------


def _check_answers(answers: Any, gold: Any) -> tuple[list[Sequence[Any]], list[str]]:
    if isinstance(answers, (str, bytes)) or not isinstance(answers, Sequence):
        raise TypeError(
            f"`answers` must be a sequence (one entry per problem) of sequences of answers; "
            f"got {type(answers).__name__}."
        )
    if isinstance(gold, (str, bytes)) or not isinstance(gold, Sequence):
        raise TypeError(f"`gold` must be a sequence of gold answers (str); got {type(gold).__name__}.")
    rows = list(answers)
    golds = list(gold)
    if len(rows) != len(golds):
        raise ValueError(
            f"`answers` has {len(rows)} problems but `gold` has {len(golds)}; they must match."
        )
    bad_rows = [i for i, row in enumerate(rows) if isinstance(row, (str, bytes)) or not isinstance(row, Sequence)]
    if bad_rows:
        raise TypeError(
            f"`answers` must hold one sequence of answers per problem; problems "
            f"{bad_rows[:_MAX_LISTED]} hold {type(rows[bad_rows[0]]).__name__} instead."
        )
    bad_gold = [i for i, value in enumerate(golds) if not isinstance(value, str)]
    if bad_gold:
        raise TypeError(
            f"`gold` must hold one str per problem; got {golds[bad_gold[0]]!r} for problems "
            f"{bad_gold[:_MAX_LISTED]}."
        )
    return rows, golds


def _check_answer_types(rows: list[Sequence[Any]], flat: list[Any]) -> None:
    if all(t is str or t is type(None) for t in set(map(type, flat))):
        return
    bad = [
        i for i, row in enumerate(rows) if any(a is not None and not isinstance(a, str) for a in row)
    ]
    if bad:
        example = next(a for a in rows[bad[0]] if a is not None and not isinstance(a, str))
        raise TypeError(
            f"`answers` must hold str (or None for no extractable answer); got {example!r} "
            f"for problems {bad[:_MAX_LISTED]}."
        )


def _encode(rows: list[Sequence[Any]], golds: list[str], limit: int | None = None):
    """Flat arrays ``(problem, answer code, gold code per problem)``; code -1 is None."""
    _check_answer_types(rows, list(itertools.chain.from_iterable(rows)))  # every answer, not only the first k
    if limit is not None:
        rows = [row[:limit] for row in rows]
    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    flat = list(itertools.chain.from_iterable(rows))
    table: dict[str, int] = {}
    gold_codes = np.fromiter(
        (table.setdefault(value, len(table)) for value in golds), dtype=np.int64, count=len(golds)
    )
    codes = np.fromiter(
        (-1 if a is None else table.setdefault(a, len(table)) for a in flat),
        dtype=np.int64,
        count=len(flat),
    )
    problem = np.repeat(np.arange(len(rows), dtype=np.int64), lengths)
    return problem, codes, gold_codes, lengths, len(table)


def class_counts_from_answers(
    answers: Sequence[Sequence[str | None]],
    gold: Sequence[str],
    *,
    equivalent: Callable[[str, str], bool] | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    r"""Answer-class counts per problem, the input of :func:`cons_at_k`.

    Parameters
    ----------
    answers : sequence of sequences of (str or None)
        ``answers[i]`` holds the extracted final answers of problem ``i``'s samples (any
        number per problem, ragged allowed); ``None`` marks a sample with no extractable answer.
    gold : sequence of str, length N
        The gold answer of each problem.
    equivalent : callable ``(answer, representative) -> bool``, optional
        Answer equivalence (e.g. numeric equality of ``"0.5"`` and ``"1/2"``). Without it,
        classes are **exact string equality, with no normalisation at all** (``"5"``,
        ``" 5"`` and ``"5.0"`` are three classes): normalise answers beforehand or pass a
        function. With it, each distinct answer joins the first class whose representative it
        is equivalent to, trying the gold class (representative: the gold string) first, then
        wrong classes in order of first appearance (representative: their first answer); it
        starts a new class otherwise. Non-transitive relations are therefore resolved in that
        order. Equal strings are always one class; ``equivalent`` is called at most once per
        pair of distinct answer and representative within a problem.

    Returns
    -------
    class_counts : ndarray of int64, shape (N, M)
        Column 0: samples equal (or equivalent) to gold; columns ``1..M-1``: the wrong answer
        classes of each problem, largest first, zero-padded (``M >= 1``).
    n_invalid : ndarray of int64, shape (N,)
        Samples whose answer is ``None``.

    Raises
    ------
    TypeError
        ``answers`` or ``gold`` of the wrong kind (a str where a sequence belongs, an answer
        that is neither str nor None, a gold answer that is not a str).
    ValueError
        ``answers`` and ``gold`` of different lengths.

    Notes
    -----
    Input preparation, not a hot path: string codes are assigned with one dict look-up per
    sample in Python (about 0.1 s per million samples); everything after that is vectorized.
    With ``equivalent``, the merge loops in Python over problems and their distinct answers.

    Examples
    --------
    >>> counts, n_invalid = class_counts_from_answers([["7", "5", "5", "7", None, "3"]], ["7"])
    >>> counts, n_invalid
    (array([[2, 2, 1]]), array([1]))
    >>> same_number = lambda a, b: float(a) == float(b)
    >>> class_counts_from_answers([["7.0", "5", "07"]], ["7"], equivalent=same_number)[0]
    array([[2, 1]])
    """
    rows, golds = _check_answers(answers, gold)
    n_problems = len(rows)
    if equivalent is not None:
        if not callable(equivalent):
            raise TypeError(f"`equivalent` must be a callable (answer, representative) -> bool; got {equivalent!r}.")
        return _class_counts_with_equivalence(rows, golds, equivalent)
    problem, codes, gold_codes, _, _ = _encode(rows, golds)
    is_gold = (codes >= 0) & (codes == gold_codes[problem])
    return class_counts_from_codes(problem, codes, is_gold, n_problems)


def _class_counts_with_equivalence(rows, golds, equivalent):
    _check_answer_types(rows, list(itertools.chain.from_iterable(rows)))
    class_codes: list[int] = []  # per sample: 0 = the gold class, 1.. = wrong classes, -1 = None
    for row, gold_answer in zip(rows, golds):  # Python loop: input preparation
        representatives = [gold_answer]
        class_of: dict[str, int] = {}
        for answer in row:
            if answer is None:
                class_codes.append(-1)
                continue
            index = class_of.get(answer)
            if index is None:
                index = next(
                    (
                        j
                        for j, representative in enumerate(representatives)
                        if answer == representative or equivalent(answer, representative)
                    ),
                    None,
                )
                if index is None:
                    representatives.append(answer)
                    index = len(representatives) - 1
                class_of[answer] = index
            class_codes.append(index)
    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    problem = np.repeat(np.arange(len(rows), dtype=np.int64), lengths)
    codes = np.asarray(class_codes, dtype=np.int64)
    return class_counts_from_codes(problem, codes, codes == 0, len(rows))


def first_k_majority_vote(
    answers: Sequence[Sequence[str | None]],
    gold: Sequence[str],
    k: int | Sequence[int],
    *,
    invalid: str = "vote",
) -> NDArray[np.float64]:
    r"""The harnesses' maj@k: 1 if the majority of the FIRST k answers is the gold answer, else 0.

    One order-dependent draw, not an estimate: it reproduces leaderboards computed with
    lm-evaluation-harness (``take_first_k`` then ``majority_vote``, as in its
    ``gsm8k_cot_self_consistency`` task) and lighteval (``MajAtK``/maj@n). Prefer
    :func:`cons_at_k`, its expectation over all k-subsets [1]_.

    .. math::

        \mathrm{vote}_i = \operatorname*{arg\,max}_{a} \#\{s \le k : a_{i,s} = a\}
        \ \text{(ties: the answer seen first)},
        \qquad \mathrm{score}_i = [\mathrm{vote}_i = \mathrm{gold}_i]

    Parameters
    ----------
    answers : sequence of sequences of (str or None)
        Per problem, the extracted answers in sample order; ``None`` = no extractable answer.
        Every problem needs at least ``k`` answers.
    gold : sequence of str, length N
        Gold answers; a vote is correct when it equals the gold string exactly.
    k : int or 1-D sequence of int
        Number of leading samples that vote.
    invalid : {"vote", "abstain"}, default: "vote"
        "vote" (the default, because this function exists to reproduce lm-eval): ``None`` is one
        more answer that can win (and is never correct), as lm-eval's ``"[invalid]"`` regex
        fallback does. "abstain": ``None`` answers are dropped before voting (all ``None`` scores
        0), as :func:`cons_at_k` does by default. Note that the two functions' defaults differ:
        ``cons_at_k`` is kpass's estimate, this one a reproduction.

    Returns
    -------
    ndarray of float, shape (N,) or (N, len(k))
        0.0 or 1.0 per problem.

    Notes
    -----
    Tie rule: lm-eval 0.4.13's ``MajorityVoteFilter`` returns
    ``Counter(resps).most_common(1)[0][0]``; ``most_common(1)`` is ``max`` over the counter's
    items, which are in first-insertion order, so among tied answers the one that appears
    first among the k samples wins. lighteval's ``max(answers, key=answers.count)`` gives the
    same answer. kpass follows that rule. Answers are compared as exact strings (normalise
    them beforehand, as the harness's filters do). Conversion of the ragged input loops in
    Python over problems and samples (input preparation); the vote itself is vectorized.

    References
    ----------
    .. [1] kpass ``docs/spec.md``, section 4 "cons@k".
    .. [2] X. Wang et al., "Self-Consistency Improves Chain of Thought Reasoning in Language
       Models", arXiv:2203.11171 (2022).

    Examples
    --------
    The first four answers tie 2-2 between "5" and "7"; "5" was seen first.

    >>> first_k_majority_vote([["5", "7", "7", "5", "7"]], ["7"], k=[4, 5])
    array([[0., 1.]])
    """
    rows, golds = _check_answers(answers, gold)
    k_array, k_scalar = check_k(k)
    check_option(invalid, "invalid", _INVALID_POLICIES)
    n_problems = len(rows)
    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=n_problems)
    _check_k_within_answers(k_array, lengths)
    k_values = [int(v) for v in k_array]
    problem, codes, gold_codes, kept, n_codes = _encode(rows, golds, limit=max(k_values))
    starts = np.concatenate([[0], np.cumsum(kept)[:-1]]) if n_problems else np.zeros(0, np.int64)
    position = np.arange(codes.size) - np.repeat(starts, kept)
    if invalid == "vote":
        codes = np.where(codes < 0, n_codes, codes)  # one extra class, never equal to a gold code
    out = np.zeros((n_problems, len(k_values)))
    for column, k_value in enumerate(k_values):
        voting = (position < k_value) & (codes >= 0)
        keys = problem[voting] * (n_codes + 1) + codes[voting]
        unique_keys, first_seen, sizes = np.unique(keys, return_index=True, return_counts=True)
        owner = unique_keys // (n_codes + 1)
        order = np.lexsort((first_seen, -sizes, owner))  # per problem: most votes, then first seen
        owner, winner = owner[order], (unique_keys % (n_codes + 1))[order]
        leading = np.concatenate([[True], owner[1:] != owner[:-1]]) if owner.size else owner.astype(bool)
        owner, winner = owner[leading], winner[leading]
        out[owner, column] = (winner == gold_codes[owner]).astype(np.float64)
    return out[:, 0] if k_scalar else out
