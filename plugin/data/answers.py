"""Answer classes of cons@k: the wrong-answer classes of each problem and the samples that abstain.

:func:`answer_class_counts` turns a problem set's ``answer`` and ``correct`` columns into the
``(class_counts, n_invalid)`` that :func:`kpass.cons_at_k` takes, through the core's
:func:`kpass.metrics.class_counts_from_codes` (docs/spec.md section 4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from kpass import metrics as core
from kpass.data.columns import ANSWER_EXTRACTOR_OPTIONS, EXTRACTOR_COLUMN
from kpass.errors import DataError

if TYPE_CHECKING:
    from kpass.data.problems import ProblemSet

__all__ = ["answer_class_counts"]


def answer_class_counts(problems: ProblemSet, *, cut_answers: str = "abstain",
                        ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``(class_counts, n_invalid)`` for :func:`kpass.cons_at_k`, vectorized over samples.

    Column 0 counts the samples judged correct; columns 1.. the wrong-answer classes of each
    problem (largest first, zero-padded); ``n_invalid`` the samples with a null answer and, with
    ``cut_answers="abstain"`` (the default), the answers of unfinished generations (``finished``
    false). The counting and its consistency rules are the core's
    :func:`kpass.metrics.class_counts_from_codes`; a contradiction it finds becomes a
    :class:`~kpass.DataError` at the first offending sample's line.
    """
    if not problems.table.has_column("answer"):
        raise DataError(
            "cons@k needs the `answer` column (the extracted final answer of every sample): binary "
            "correct/incorrect data cannot determine cons@k, because which wrong answers agree decides the vote",
            **problems.table.error_location(), field="answer")
    _refuse_unknown_extractor(problems)
    answers, offsets = problems.sample_column("answer")
    correct, _ = problems.sample_column("correct")
    n_problems = len(problems)
    problem = np.repeat(np.arange(n_problems, dtype=np.int64), np.diff(offsets))
    abstain = None
    if cut_answers == "abstain" and problems.table.has_column("finished"):
        finished, _ = problems.sample_column("finished")
        abstain = finished == 0
    try:
        return core.class_counts_from_codes(problem, answers, correct, n_problems, abstain=abstain)
    except core.InconsistentAnswersError as exc:
        bad = np.zeros(answers.shape[0], dtype=bool)
        bad[exc.samples] = True
        problems.raise_at(bad, "answer", exc.reason)


def _refuse_unknown_extractor(problems: ProblemSet) -> None:
    """A sample whose task has no known answer extractor (``answer_extractor`` null) cannot vote:
    its answer would be a raw generation, and raw generations worded differently never agree."""
    if not problems.table.has_column(EXTRACTOR_COLUMN):
        return
    codes, _ = problems.sample_column(EXTRACTOR_COLUMN)
    unknown = codes < 0
    if unknown.any():
        rows, _ = problems.rows()
        task = problems.table.column("task")[rows[int(np.flatnonzero(unknown)[0])]]
        problems.raise_at(unknown, EXTRACTOR_COLUMN,
                          f"cons@k needs each sample's final answer, and no answer extractor is known for task "
                          f"{task!r} (a vote over raw generations would be wrong); name one with "
                          f"{ANSWER_EXTRACTOR_OPTIONS}")
