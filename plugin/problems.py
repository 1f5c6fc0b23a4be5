"""The problems one metric is computed on, with their per-problem counts and sample columns.

A :class:`ProblemSet` is what :meth:`kpass.MetricFamily.compute` receives: the problems of one
report group (say model ``m``, task ``t``) that have enough samples for the metric. Counts are
vectorized over problems; sample-level columns come back as flat arrays plus offsets so a family
can reduce them without a Python loop over problems.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from .errors import DataError

if TYPE_CHECKING:  # pragma: no cover
    from .table import SampleTable

__all__ = ["ProblemSet"]


class ProblemSet:
    """Problems of one group (and one metric), in a fixed order.

    Attributes
    ----------
    table : SampleTable
        The table the problems come from.
    problems : ndarray of int64, shape (N,)
        Indices into ``table.problem_index``.
    budget : int or None
        Output-token budget: when set, :attr:`n_correct` and :meth:`n_finished` count samples
        correct (finished) within their first ``budget`` output tokens (METRICS.md section 6).
    """

    def __init__(self, table: "SampleTable", problems: NDArray[np.int64], *, budget: int | None = None) -> None:
        self.table = table
        self.problems = np.asarray(problems, dtype=np.int64)
        self.budget = budget
        self._rows: tuple[NDArray[np.int64], NDArray[np.int64]] | None = None
        self._budget_counts: Any = None

    def __len__(self) -> int:
        return len(self.problems)

    def subset(self, mask: NDArray[np.bool_]) -> "ProblemSet":
        """The problems where ``mask`` is true (same budget)."""
        return ProblemSet(self.table, self.problems[np.asarray(mask, dtype=bool)], budget=self.budget)

    def with_budget(self, budget: int | None) -> "ProblemSet":
        """The same problems read at another output-token budget."""
        return ProblemSet(self.table, self.problems, budget=budget)

    # ------------------------------------------------------------------ counts

    @property
    def n_samples(self) -> NDArray[np.int64]:
        """Samples per problem, shape (N,)."""
        return self.table.problem_index.n_samples[self.problems]

    @property
    def n_correct(self) -> NDArray[np.int64]:
        """Correct samples per problem (correct within the budget when one is set), shape (N,)."""
        if self.budget is None:
            return self.table.problem_index.n_correct[self.problems]
        return self._at_budget().n_correct[:, 0]

    def n_finished(self) -> NDArray[np.int64]:
        """Samples that finished (within the budget when one is set), shape (N,).

        Raises
        ------
        DataError
            No ``finished`` column, or a null ``finished`` (naming the file and line).
        """
        if self.budget is not None:
            return self._at_budget().n_finished[:, 0]
        values, offsets = self.sample_column("finished")
        null = values < 0
        if null.any():
            self._raise_at(null, "finished", "`finished` is null for this sample; fin@k needs to know whether "
                                             "every sample finished")
        return _segment_sum(values.astype(np.int64), offsets)

    def _at_budget(self):
        if self._budget_counts is None:
            try:
                from kpass.metrics import budget_counts  # the core turns token positions into counts
            except ImportError:  # pragma: no cover - until the token-budget core is installed
                from .errors import MetricSpecError

                raise MetricSpecError(f"token budgets (B={self.budget}) are not yet supported by this kpass "
                                      "build (kpass.metrics.budget_counts is missing)") from None

            rows, offsets = self.rows()
            label = np.repeat(np.arange(len(self.problems)), np.diff(offsets))
            columns = {}
            for name in ("finished", "output_tokens", "answer_token"):
                if self.table.has_column(name):
                    raw = self.table._columns[name][rows]
                    columns[name] = np.where(raw < 0, np.nan, raw.astype(np.float64))
            if not columns:
                raise DataError(
                    f"a token budget (B={self.budget}) needs the `answer_token`, `output_tokens` or "
                    "`finished` column; the table has none of them", **self.table.error_location(),
                    field="answer_token")
            correct = self.table._columns["correct"][rows]
            try:
                self._budget_counts = budget_counts(label, correct, [self.budget], **columns)
            except ValueError as exc:
                raise DataError(f"budget B={self.budget}: {exc}", **self.table.error_location(),
                                field="output_tokens") from exc
        return self._budget_counts

    # ------------------------------------------------------------------ identities and samples

    @property
    def problem_ids(self) -> list[str]:
        """Problem ids, shape (N,)."""
        categories = self.table._categories["problem_id"]
        return [categories[code] for code in self.table.problem_index.problem_codes[self.problems].tolist()]

    @property
    def task_ids(self) -> list[str]:
        """Task of each problem."""
        categories = self.table._categories["task"]
        return [categories[code] for code in self.table.problem_index.task_codes[self.problems].tolist()]

    def rows(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Table rows of these problems sorted by (problem, sample_index), and offsets (N+1,)."""
        if self._rows is None:
            self._rows = self.table.problem_index.rows_of(self.problems)
        return self._rows

    def sample_column(self, name: str) -> tuple[np.ndarray, NDArray[np.int64]]:
        """A sample-level column for these problems: ``(values, offsets)``.

        Problem ``j``'s samples are ``values[offsets[j]:offsets[j+1]]`` in sample_index order.
        Categorical columns come as codes (``-1`` null); see :meth:`SampleTable.categories`.

        Raises
        ------
        DataError
            The table has no such column.
        """
        if not self.table.has_column(name):
            raise DataError(f"this metric needs the `{name}` column, which the table does not have",
                            **self.table.error_location(), field=name)
        rows, offsets = self.rows()
        return self.table._columns[name][rows], offsets

    def padded(self, name: str, fill: Any = 0) -> tuple[np.ndarray, NDArray[np.bool_]]:
        """A sample-level column as an ``(N, S_max)`` matrix plus the mask of real samples."""
        values, offsets = self.sample_column(name)
        lengths = np.diff(offsets)
        width = int(lengths.max()) if len(lengths) else 0
        matrix = np.full((len(lengths), width), fill, dtype=values.dtype)
        mask = np.arange(width)[None, :] < lengths[:, None]
        matrix[mask] = values
        return matrix, mask

    def verdicts_padded(self) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """CoT verdicts as an ``(N, S_max, V_max)`` float array (1 yes, 0 no, NaN invalid) and
        the mask of real verdict slots."""
        if not self.table.has_column("cot_verdicts"):
            raise DataError("CoT-Pass@k needs the `cot_verdicts` column (verifier verdicts per sample)",
                            **self.table.error_location(), field="cot_verdicts")
        flat, row_offsets = self.table.verdicts()
        rows, offsets = self.rows()
        per_sample = row_offsets[rows + 1] - row_offsets[rows]
        lengths = np.diff(offsets)
        n_problems = len(lengths)
        width = int(lengths.max()) if n_problems else 0
        depth = max(int(per_sample.max()) if per_sample.size else 0, 1)
        out = np.full((n_problems, width, depth), np.nan)
        slot = np.zeros((n_problems, width, depth), dtype=bool)
        problem_of_sample = np.repeat(np.arange(n_problems), lengths)
        position = np.arange(len(rows)) - np.repeat(offsets[:-1], lengths)
        total = int(per_sample.sum())
        if total:
            sample_of_verdict = np.repeat(np.arange(len(rows)), per_sample)
            within = np.arange(total) - np.repeat(np.cumsum(per_sample) - per_sample, per_sample)
            source = np.repeat(row_offsets[rows], per_sample) + within
            values = flat[source].astype(np.float64)
            values[values < 0] = np.nan
            p, s = problem_of_sample[sample_of_verdict], position[sample_of_verdict]
            out[p, s, within] = values
            slot[p, s, within] = True
        return out, slot

    def _raise_at(self, bad_sorted: NDArray[np.bool_], field: str, message: str) -> None:
        rows, _ = self.rows()
        row = int(rows[np.flatnonzero(bad_sorted)[0]])
        source, line = self.table.location(row)
        raise DataError(message, source=source, line=line, field=field)


def _segment_sum(values: NDArray[np.int64], offsets: NDArray[np.int64]) -> NDArray[np.int64]:
    cumulative = np.concatenate([[0], np.cumsum(values, dtype=np.int64)])
    return cumulative[offsets[1:]] - cumulative[offsets[:-1]]
