"""Token-budget inputs of ``kpass budget`` and ``kpass decompose``: per-sample arrays of a table,
or an engine's per-budget counts per problem (:class:`StatisticsBudgetSamples`).

:class:`BudgetSamples` holds, per row of a :class:`~kpass.SampleTable`, the ``finished`` flag,
``output_tokens`` and ``answer_token`` (null as NaN), filled from the output text by a tokenizer
where the table has none, and gives :func:`kpass.metrics.budget_counts` of any set of problems.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from kpass.data.problems import unknown_finished_message
from kpass.data.reduction import ProblemStatistics
from kpass.data.table import SampleTable
from kpass.data.tokenizers import token_positions_for_table
from kpass.errors import DataError
from kpass.metrics import BudgetCounts, budget_counts
from kpass.reports.report import problem_attribute

__all__ = ["BudgetSamples", "StatisticsBudgetSamples"]



class BudgetSamples:
    """Per-row arrays of a sample table, with token positions filled by a tokenizer if asked."""

    def __init__(self, table: SampleTable, *, tokenizer: Any = None, text_field: str = "output",
                 answer_pattern: str | None = None, cluster_by: str | None = None) -> None:
        self.table = table
        self.source = table.error_location()["source"]
        n_rows = len(table)

        def nullable(name: str) -> np.ndarray | None:
            if not table.has_column(name):
                return None
            raw = table.column(name)
            return np.where(raw < 0, np.nan, raw.astype(np.float64))

        self.finished = nullable("finished")
        self.output_tokens = nullable("output_tokens")
        self.answer_token = nullable("answer_token")
        self.correct = table.column("correct")
        if tokenizer is not None:
            answer_token = self.answer_token if self.answer_token is not None else np.full(n_rows, np.nan)
            output_tokens = self.output_tokens if self.output_tokens is not None else np.full(n_rows, np.nan)
            not_unfinished = np.ones(n_rows, dtype=bool) if self.finished is None else ~(self.finished == 0)
            rows = np.flatnonzero(np.isnan(answer_token) & not_unfinished | np.isnan(output_tokens))
            if rows.size:
                found_answer, found_output = token_positions_for_table(
                    table, tokenizer, text_field=text_field, answer_pattern=answer_pattern, rows=rows)
                fill_answer = np.isnan(answer_token[rows]) & not_unfinished[rows]
                answer_token[rows[fill_answer]] = found_answer[fill_answer]
                fill_output = np.isnan(output_tokens[rows])
                output_tokens[rows[fill_output]] = found_output[fill_output]
            self.answer_token, self.output_tokens = answer_token, output_tokens
        index = table.problem_index
        self.index = index
        self.models = table.categories("model")
        self.tasks = table.categories("task")
        self.problem_names = table.category_values("problem_id")
        # per problem, checked like kpass report's: present, categorical, one value per problem, never null
        self.cluster_of_problem = None if not cluster_by else table.category_values(cluster_by)[
            problem_attribute(table, cluster_by, "--cluster-by")]

    def problems(self, model: str, task: str | None) -> np.ndarray:
        """Problem numbers (of the table's problem index) of one model and task (or every task)."""
        index = self.index
        mask = index.model_codes == self.models.index(model)
        if task is not None:
            mask &= index.task_codes == self.tasks.index(task)
        return np.flatnonzero(mask)

    def labels(self, problems: np.ndarray, with_task: bool) -> np.ndarray:
        """Problem ids (``task/problem_id`` with ``with_task``) as a str array."""
        names = self.problem_names[self.index.problem_codes[problems]]
        if with_task:
            names = self.table.category_values("task")[self.index.task_codes[problems]] + "/" + names
        return names.astype(str)

    def counts(self, problems: np.ndarray, budgets: Sequence[int | None], with_task: bool = False):
        """:func:`kpass.metrics.budget_counts` of ``problems`` (its rows are in sorted label order)."""
        rows, offsets = self.index.rows_of(problems)
        label = np.repeat(self.labels(problems, with_task), np.diff(offsets))
        columns = {}
        for name in ("finished", "output_tokens", "answer_token"):
            values = getattr(self, name)
            if values is not None:
                columns[name] = values[rows]
        if "finished" in columns:  # never "finished" by default: refuse, saying what to give
            unknown = np.isnan(columns["finished"]) & (np.isnan(columns["answer_token"]) if "answer_token" in columns
                                                       else True)
            if unknown.any():
                source, line = self.table.location(int(rows[np.flatnonzero(unknown)[0]]))
                raise DataError(unknown_finished_message(int(unknown.sum())), source=source,
                                line=line, field="finished")
        try:
            return budget_counts(label, self.correct[rows], list(budgets), **columns,
                                 describe_sample=lambda i: "{} line {}".format(*self.table.location(int(rows[i]))))
        except ValueError as exc:
            raise DataError(str(exc), source=self.source) from exc

    def clusters(self, problems: np.ndarray, with_task: bool = False) -> np.ndarray | None:
        """Cluster of each problem in the order of :meth:`counts` (sorted labels), or ``None``."""
        if self.cluster_of_problem is None:
            return None
        order = np.argsort(self.labels(problems, with_task), kind="stable")
        return self.cluster_of_problem[problems[order]].astype(str)

    def cluster_map(self, problems: np.ndarray) -> dict[str, str] | None:
        """Problem id -> cluster of ``problems`` (for :func:`kpass.metrics.decompose_budget_counts`)."""
        if self.cluster_of_problem is None:
            return None
        return dict(zip(self.labels(problems, False).tolist(), self.cluster_of_problem[problems].tolist()))


class StatisticsBudgetSamples(BudgetSamples):
    """:class:`BudgetSamples` of an engine's per-problem statistics: the counts ``(c_B, f_B)``
    come from the reduction (``Needs(budgets=..., as_run=...)``), one GROUP BY with a FILTER per
    budget; a problem the engine found a budget rule broken for is read again by the numpy
    readers, whose :func:`kpass.metrics.budget_counts` raises the error with its file and line.
    Tokenizers re-count tokens from each sample's text, so they need :class:`BudgetSamples`."""

    def __init__(self, statistics: ProblemStatistics, *, cluster_by: str | None = None) -> None:
        self.statistics = statistics
        self.table = cast(SampleTable, statistics)  # it stands in for one (kpass.data.reduction)
        self.source = statistics.error_location()["source"]
        self.index = statistics.problem_index
        self.models = statistics.categories("model")
        self.tasks = statistics.categories("task")
        self.problem_names = statistics.category_values("problem_id")
        self.cluster_of_problem = None if not cluster_by else statistics.category_values(cluster_by)[
            problem_attribute(self.table, cluster_by, "--cluster-by")]

    def counts(self, problems: np.ndarray, budgets: Sequence[int | None], with_task: bool = False) -> BudgetCounts:
        """The counts of ``problems`` at ``budgets`` (rows in sorted label order, as :meth:`BudgetSamples.counts`)."""
        statistics = self.statistics
        missing = [budget for budget in budgets if budget not in statistics.budget_correct]
        if missing:
            raise RuntimeError(f"the engine's statistics hold no counts at budgets {missing}")
        broken = np.zeros(problems.size, dtype=bool)
        for budget in budgets:
            broken |= statistics.flags[f"budget:{budget}"][problems]
        if broken.any():
            self._raise_located(problems[broken], budgets, with_task)
        labels = self.labels(problems, with_task)
        order = np.argsort(labels, kind="stable")
        chosen = problems[order]
        return BudgetCounts(budgets=tuple(budgets), problem_ids=tuple(labels[order].tolist()),
                            n_samples=self.index.n_samples[chosen].copy(),
                            n_finished=np.stack([statistics.budget_finished[b][chosen] for b in budgets], axis=1),
                            n_correct=np.stack([statistics.budget_correct[b][chosen] for b in budgets], axis=1))

    def _raise_located(self, problems: np.ndarray, budgets: Sequence[int | None], with_task: bool) -> None:
        """The numpy error for ``problems`` (their rows read again; every sample breaking a rule
        is in them, so the message names the same samples and problems as the numpy path's)."""
        statistics = self.statistics
        located = statistics.locate(statistics.keys_of(problems))
        wanted = {(self.models[m], self.tasks[t], str(self.problem_names[p])) for m, t, p in zip(
            self.index.model_codes[problems].tolist(), self.index.task_codes[problems].tolist(),
            self.index.problem_codes[problems].tolist())}
        samples = BudgetSamples(located)
        index = samples.index
        keep = np.flatnonzero([(samples.models[m], samples.tasks[t], str(samples.problem_names[p])) in wanted
                               for m, t, p in zip(index.model_codes.tolist(), index.task_codes.tolist(),
                                                  index.problem_codes.tolist())])
        samples.counts(keep, budgets, with_task)
        raise DataError(f"internal error: the {statistics.engine} engine found a broken budget rule that the numpy "
                        "checks do not confirm; please report this. Meanwhile use --engine numpy",
                        source=self.source)
