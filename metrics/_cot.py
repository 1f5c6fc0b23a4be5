r"""CoT-Pass@k: pass@k that also requires a correct chain of thought (higher-is-better).

A sample counts towards ``D`` (``n_cot_correct``) when its final answer is correct AND a verifier
(typically an LLM judge, run several times) judged its reasoning correct (docs/spec.md section 5).
:func:`count_cot_correct` aggregates several verdicts per sample into ``D``;
:func:`cot_pass_at_k` is the pass@k estimator with ``c := D``.

Verdict encoding
----------------
``verdicts`` has shape ``(N, S, V)``: problem, sample, verifier run. Each entry is

- ``1`` (or ``True``): the verifier judged the chain of thought correct ("yes");
- ``0`` (or ``False``): judged incorrect ("no");
- ``NaN``, ``-1`` or ``None``: an invalid verdict (the judge gave no parsable answer).

Ragged data are padded to a rectangle and described by ``mask``:

- ``mask`` of shape ``(N, S)`` marks real samples (ragged numbers of samples); every verdict
  slot of a real sample is real;
- ``mask`` of shape ``(N, S, V)`` marks real verdict slots (ragged numbers of verdicts and,
  with all slots of a sample False, of samples).

Padded entries are ignored, whatever they hold; padding is never an invalid verdict. A sample
whose answer is wrong never counts (its verdicts are not looked at, so they may be NaN), and a
sample with no real verdict slot is unverified and never counts.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._passk import _count_k_iv, _finish, _pass_curve
from ._samples import as_binary_matrix, as_mask
from ._validation import check_option, describe_offenders

__all__ = ["cot_pass_at_k", "count_cot_correct"]

_RULES = ("any", "majority", "all")


def cot_pass_at_k(n_samples: ArrayLike, n_cot_correct: ArrayLike, k: int | ArrayLike) -> NDArray[np.float64]:
    r"""Unbiased CoT-Pass@k per problem: pass@k counting only samples with correct reasoning.

    .. math::

        \mathrm{CoT\text{-}Pass@}k = 1 - \binom{n-D}{k} \Big/ \binom{n}{k}

    where :math:`D` counts samples whose final answer is correct and whose chain of thought a
    verifier judged correct [1]_ (see :func:`count_cot_correct`). Since :math:`D \le c`,
    CoT-Pass@k never exceeds :func:`pass_at_k` on the same samples.

    Parameters
    ----------
    n_samples : array_like of int, shape (N,)
        Samples drawn per problem; every ``n >= k``.
    n_cot_correct : array_like of int, shape (N,)
        :math:`D` per problem, ``0 <= D <= n``.
    k : int or 1-D sequence of int
        Number of draws, ``1 <= k <= n``.

    Returns
    -------
    ndarray of float64, shape (N,) or (N, len(k))

    Raises
    ------
    ValueError, TypeError
        As :func:`pass_at_k` (messages name ``n_cot_correct``).

    References
    ----------
    .. [1] X. Wen et al., "Reinforcement Learning with Verifiable Rewards Implicitly Incentivizes
       Correct Reasoning in Base LLMs", arXiv:2506.14245 (2025), definition of CoT-Pass@K.
    .. [2] M. Chen et al., "Evaluating Large Language Models Trained on Code",
       arXiv:2107.03374 (2021), Eq. 1.

    Examples
    --------
    >>> from kpass.metrics import cot_pass_at_k
    >>> cot_pass_at_k([8], [4], k=2).round(6)   # 11/14
    array([0.785714])
    """
    n, d, k_values, scalar_input, k_is_scalar = _count_k_iv(n_samples, n_cot_correct, k, "n_cot_correct")
    result = _pass_curve(n, d, k_values)  # Wen 2025's CoT-Pass@K via Chen 2021's product form
    return _finish(result, scalar_input, k_is_scalar)


def _as_verdicts(verdicts: Any) -> NDArray[np.float64]:
    try:
        arr = np.asarray(verdicts)
    except (ValueError, TypeError):
        raise TypeError("`verdicts` must be a rectangular (N, S, V) array; pad ragged data and pass `mask`.") from None
    if arr.ndim != 3:
        raise ValueError(f"`verdicts` must be 3-D (problems x samples x verdicts); got an array of shape {arr.shape}.")
    if arr.dtype.kind == "b":
        return arr.astype(np.float64)
    if arr.dtype.kind == "O":
        try:
            arr = arr.astype(np.float64)  # None -> NaN (an invalid verdict)
        except (ValueError, TypeError):
            raise TypeError("`verdicts` must hold 1 (yes), 0 (no), or NaN/-1/None (invalid).") from None
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"`verdicts` must hold 1 (yes), 0 (no), or NaN/-1/None (invalid); got dtype {arr.dtype}.")
    return arr.astype(np.float64, copy=False)


def _count_cot_correct_iv(answer_correct: Any, verdicts: Any, rule: Any, mask: Any):
    rule = check_option(rule, "rule", _RULES)
    votes = _as_verdicts(verdicts)
    try:
        answer_shape = np.shape(answer_correct)
    except (ValueError, TypeError):
        raise TypeError("`answer_correct` must be a rectangular (N, S) array; pad ragged data and pass `mask`.") from None
    if answer_shape != votes.shape[:2]:
        raise ValueError(
            f"`answer_correct` must have shape (N, S) = {votes.shape[:2]} to match `verdicts` of shape "
            f"{votes.shape}; got {answer_shape}."
        )
    sample_real: NDArray[np.bool_]
    slot_real: NDArray[np.bool_]
    if mask is None:
        sample_real = np.ones(votes.shape[:2], dtype=bool)
        slot_real = np.ones(votes.shape, dtype=bool)
    else:
        mask_shape = np.shape(mask)
        if mask_shape == votes.shape[:2]:
            sample_real = as_mask(mask, votes.shape[:2])
            slot_real = np.broadcast_to(sample_real[:, :, None], votes.shape)
        elif mask_shape == votes.shape:
            slot_real = as_mask(mask, votes.shape)
            sample_real = np.logical_or.reduce(slot_real, axis=2)  # a sample is real where a slot is
        else:
            raise ValueError(
                f"`mask` must have shape (N, S) = {votes.shape[:2]} (real samples) or (N, S, V) = "
                f"{votes.shape} (real verdict slots); got {mask_shape}."
            )
    correct = as_binary_matrix(answer_correct, "answer_correct", where=sample_real)
    valid_value = np.isnan(votes) | (votes == 0) | (votes == 1) | (votes == -1)
    # Only the verdicts of answer-correct samples are read; those of wrong-answer samples are
    # ignored whatever they hold (module notes), so they are not validated either.
    bad = slot_real & correct[:, :, None] & ~valid_value
    if bad.any():
        raise ValueError(
            "`verdicts` must hold 1 (yes), 0 (no), or NaN/-1/None (invalid) for answer-correct samples; "
            f"other values at {describe_offenders(bad, votes, value_name='verdict')} (index: problem, sample, "
            "verdict)."
        )
    return correct, votes, slot_real, rule


def count_cot_correct(
    answer_correct: ArrayLike, verdicts: ArrayLike, *, rule: str = "any", mask: ArrayLike | None = None
) -> NDArray[np.int64]:
    r"""Count per problem the samples with a correct answer AND a chain of thought judged correct.

    .. math::

        D_j = \sum_s \mathbb{1}[\text{answer}_{js} \text{ correct}]\;
              \mathbb{1}[\text{rule}(\text{verdicts}_{js\cdot})]

    Rules over the real verdicts of one sample (yes = 1, no = 0, invalid = NaN/-1/None) [1]_,
    as docs/spec.md section 5 specifies:

    - ``"any"``: at least one yes;
    - ``"majority"``: more yes than no; invalid verdicts abstain; a tie vetoes (so does a
      sample whose verdicts are all invalid);
    - ``"all"``: every verdict is yes; an invalid verdict vetoes.

    A sample with a wrong answer never counts and its verdicts are ignored (they are normally not
    computed, so NaN is fine there). A sample without any real verdict slot never counts.

    Parameters
    ----------
    answer_correct : array_like of bool or 0/1, shape (N, S)
        Final-answer correctness per problem and sample.
    verdicts : array_like, shape (N, S, V)
        Verifier verdicts: 1 yes, 0 no, NaN/-1/None invalid (see the module notes).
    rule : {"any", "majority", "all"}, default: "any"
        Keyword-only.
    mask : array_like of bool, shape (N, S) or (N, S, V), optional
        Real samples (``(N, S)``) or real verdict slots (``(N, S, V)``) when data are ragged;
        padded entries are ignored, whatever they hold. Default: everything is real.

    Returns
    -------
    ndarray of int64, shape (N,)
        ``n_cot_correct`` for :func:`cot_pass_at_k`.

    Raises
    ------
    ValueError
        Unknown ``rule``; mismatched shapes; verdict values other than 1, 0, NaN, -1 for an
        answer-correct sample (naming the entries); non-0/1 ``answer_correct``.
    TypeError
        Non-numeric input.

    References
    ----------
    .. [1] X. Wen et al., "Reinforcement Learning with Verifiable Rewards Implicitly Incentivizes
       Correct Reasoning in Base LLMs", arXiv:2506.14245 (2025) (verifier strategies any / majority / all).

    Examples
    --------
    >>> import numpy as np
    >>> from kpass.metrics import count_cot_correct
    >>> answer_correct = [[True, True, True, False]]
    >>> verdicts = [[[1, 0, np.nan], [1, 1, 0], [1, np.nan, np.nan], [1, 1, 1]]]
    >>> [count_cot_correct(answer_correct, verdicts, rule=r).tolist() for r in ("any", "majority", "all")]
    [[3], [2], [0]]
    """
    correct, votes, slot_real, rule = _count_cot_correct_iv(answer_correct, verdicts, rule, mask)
    yes = ((votes == 1) & slot_real).sum(axis=2)
    if rule == "any":
        accepted = yes >= 1
    elif rule == "majority":
        no = ((votes == 0) & slot_real).sum(axis=2)
        accepted = yes > no  # invalid verdicts abstain; yes == no (a tie) vetoes
    else:  # "all": every real verdict is yes; an invalid verdict (or a no) vetoes
        n_real = slot_real.sum(axis=2)
        accepted = (yes == n_real) & (n_real >= 1)
    return (correct & accepted).sum(axis=1, dtype=np.int64)
