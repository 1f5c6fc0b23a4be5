"""The problems one metric is computed on, with their per-problem counts and sample columns.

A :class:`ProblemSet` is what :meth:`kpass.MetricFamily.compute` receives: the problems of one
report group (say model ``m``, task ``t``) that have enough samples for the metric. Counts are
vectorized over problems; sample-level columns come back as flat arrays plus offsets so a family
can reduce them without a Python loop over problems.

Its per-problem statistics (:attr:`ProblemSet.n_samples`, :attr:`ProblemSet.n_correct`,
:meth:`ProblemSet.n_finished`, :meth:`ProblemSet.answer_classes`, :meth:`ProblemSet.cot_correct`,
and the budget counts) are the boundary between readers and metrics (kpass.data.reduction): on a
:class:`~kpass.SampleTable` numpy computes them from the samples; on a
:class:`~kpass.data.reduction.ProblemStatistics` an engine (DuckDB, Spark) has computed them with
SQL, and the sample-level accessors are not available.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

import numpy as np
from numpy.typing import NDArray

from kpass.data.reduction import COT_RULES, JUDGE_COLUMN, Needs, ProblemStatistics
from kpass.errors import DataError, UsageError

if TYPE_CHECKING:  # pragma: no cover
    from kpass.data.table import SampleTable

__all__ = ["CUT_ANSWER_RULES", "ProblemSet", "judge_range", "problem_attribute", "statistics_from_table",
           "unknown_finished_message"]

#: What cons@k does with the answer of an unfinished generation: ``abstain`` (the default: it
#: occupies its draw but never votes, like a sample without an answer) or ``vote``.
CUT_ANSWER_RULES = ("abstain", "vote")


#: The largest set of problems whose rows are read again whole when an engine flagged one of them
#: (:meth:`ProblemSet._numpy_error_if_flagged`); a larger set reads its flagged problems only.
REREAD_WHOLE_SET = 100_000


def unknown_finished_message(n_unknown: int) -> str:
    """The one-line refusal of fin@k (and of ``kpass budget``/``decompose``) when ``finished`` is
    null for some samples: never "finished" by default, and it says what to give. The count is of
    the samples with a null, the same on every engine (an engine re-reads only the problems with one)."""
    return (f"whether {n_unknown} sample{'' if n_unknown == 1 else 's'} finished is unknown (`finished` is null: "
            "the log records no "
            "stop reason or token count; the first is here), so fin@k is refused: give the model's tokenizer "
            "(--tokenizer hf:PATH/tokenizer.json or tiktoken:NAME; Python: reader_options={'tokenizer': SPEC}) to "
            "count lm-eval generations against their max_gen_toks, or record `finished` in the samples")


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
        correct (finished) within their first ``budget`` output tokens (docs/spec.md section 6).
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
        return self._at_budget().n_correct

    def n_finished(self) -> NDArray[np.int64]:
        """Samples that finished (within the budget when one is set), shape (N,).

        Raises
        ------
        DataError
            No ``finished`` column, or a null ``finished`` (naming the file and line).
        """
        if self.budget is not None:
            return self._at_budget().n_finished
        statistics = self._statistics()
        if statistics is not None:
            if statistics.n_finished is None:
                raise DataError("fin@k needs the `finished` column, which the input does not have",
                                **statistics.error_location(), field="finished")
            self._numpy_error_if_flagged("finished", ProblemSet.n_finished)
            return statistics.n_finished[self.problems]
        values, offsets = self.sample_column("finished")
        null = values < 0
        if null.any():
            self.raise_at(null, "finished", unknown_finished_message(int(null.sum())))
        return _segment_sum(values.astype(np.int64), offsets)

    def _at_budget(self) -> "_Counts":
        """Counts at :attr:`budget` from :func:`kpass.metrics.budget_counts`, in problem order."""
        if self._budget_counts is None:
            from kpass.metrics import budget_counts  # the core turns token positions into counts

            table = self.table
            statistics = self._statistics()
            if statistics is not None:
                if not any(statistics.has_column(name) for name in ("finished", "output_tokens", "answer_token")):
                    raise DataError(
                        f"a token budget (B={self.budget}) needs the `answer_token`, `output_tokens` or "
                        "`finished` column; the table has none of them", **table.error_location(),
                        field="answer_token")
                self._numpy_error_if_flagged(f"budget:{self.budget}", lambda twin: twin.n_correct)
                self._budget_counts = _Counts(statistics.budget_correct[self.budget][self.problems],
                                              statistics.budget_finished[self.budget][self.problems])
                return self._budget_counts
            rows, offsets = self.rows()
            columns = {}
            for name in ("finished", "output_tokens", "answer_token"):
                if table.has_column(name):
                    raw = table.raw_column(name)[rows]
                    columns[name] = np.where(raw < 0, np.nan, raw.astype(np.float64))
            if not columns:
                raise DataError(
                    f"a token budget (B={self.budget}) needs the `answer_token`, `output_tokens` or "
                    "`finished` column; the table has none of them", **table.error_location(),
                    field="answer_token")
            # the problems' own names (unique within this set), so that errors name them
            labels = self._unique_labels()
            try:
                counts = budget_counts(
                    np.repeat(labels, np.diff(offsets)), table.raw_column("correct")[rows], [self.budget],
                    **columns, describe_sample=lambda i: "{} line {}".format(*table.location(int(rows[i]))))
            except ValueError as exc:
                raise DataError(f"budget B={self.budget}: {exc}", **table.error_location(),
                                field="output_tokens") from exc
            # the core orders problems by label; put them back in this set's order
            position = np.searchsorted(np.asarray(counts.problem_ids, dtype=labels.dtype), labels)
            self._budget_counts = _Counts(counts.n_correct[position, 0], counts.n_finished[position, 0])
        return self._budget_counts

    def _unique_labels(self) -> NDArray[np.str_]:
        """``problem_id``, prefixed by ``task/`` (and ``model/``) where needed to tell problems apart."""
        index = self.table.problem_index
        labels: NDArray[Any] = self.table.category_values("problem_id")[index.problem_codes[self.problems]]
        for field, codes in (("task", index.task_codes), ("model", index.model_codes)):
            mine = codes[self.problems]
            if mine.size and (mine != mine[0]).any():
                labels = self.table.category_values(field)[mine] + "/" + labels
        labels = labels.astype(str)
        if np.unique(labels).size != labels.size:  # "/" inside ids: "a/b" + "c" == "a" + "b/c"
            labels = np.char.add(np.char.add(labels, " #"), np.arange(labels.size).astype(str))
        return labels

    def answer_classes(self, cut_answers: str = "abstain") -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """``(class_counts, n_invalid)`` for :func:`kpass.metrics.cons_at_k`: column 0 the samples
        judged correct, columns 1.. the wrong-answer classes (largest first, zero-padded),
        ``n_invalid`` the samples without an answer.

        Parameters
        ----------
        cut_answers : {"abstain", "vote"}, default: "abstain"
            The answer of an unfinished generation (``finished`` false: cut at its token limit,
            whatever an extractor found in the cut text) abstains, counted in ``n_invalid``, or
            votes like any other (docs/spec.md section 4).

        Raises
        ------
        DataError
            No ``answer`` column; a correct sample without answer, or a wrong answer equal to a
            correct one in the same problem (at the first such sample's line).
        """
        if cut_answers not in CUT_ANSWER_RULES:
            raise ValueError(f"`cut_answers` must be one of {CUT_ANSWER_RULES}; got {cut_answers!r}.")
        statistics = self._statistics()
        if statistics is None or not statistics.has_column("answer") or statistics.class_counts is None:
            from kpass.data.answers import answer_class_counts

            return answer_class_counts(self, cut_answers=cut_answers)  # (raises the missing-column error)
        self._numpy_error_if_flagged("answers", lambda twin: twin.answer_classes(cut_answers))
        counts, invalid = statistics.answer_classes_of(cut_answers)
        counts = counts[self.problems]
        used = np.flatnonzero(counts[:, 1:].any(axis=0))
        width = int(used.max()) + 2 if used.size else 1
        return counts[:, :width], invalid[self.problems]

    def n_cut_answers(self) -> NDArray[np.int64]:
        """Samples per problem with an answer from an unfinished generation (``finished`` false, an
        answer extracted, judged wrong): what abstains in cons@k by default, shape (N,)."""
        statistics = self._statistics()
        if statistics is not None:
            if statistics.n_cut_answers is None:
                return np.zeros(len(self), dtype=np.int64)
            return statistics.n_cut_answers[self.problems]
        if not (self.table.has_column("finished") and self.table.has_column("answer")):
            return np.zeros(len(self), dtype=np.int64)
        finished, offsets = self.sample_column("finished")
        answers, _ = self.sample_column("answer")
        correct, _ = self.sample_column("correct")
        cut = (finished == 0) & (answers >= 0) & ~correct.astype(bool)
        return _segment_sum(cut.astype(np.int64), offsets)

    def n_unknown_finished_answers(self) -> NDArray[np.int64]:
        """Samples per problem with an answer whose generation may or may not have finished
        (``finished`` null, an answer extracted, judged wrong): they vote in cons@k, since nothing
        says they were cut, shape (N,). Zero when the input has no ``finished`` column."""
        if not self.table.has_column("finished"):
            return np.zeros(len(self), dtype=np.int64)
        statistics = self._statistics()
        if statistics is not None:
            if statistics.n_unknown_answers is None:
                return np.zeros(len(self), dtype=np.int64)
            return statistics.n_unknown_answers[self.problems]
        if not self.table.has_column("answer"):
            return np.zeros(len(self), dtype=np.int64)
        finished, offsets = self.sample_column("finished")
        answers, _ = self.sample_column("answer")
        correct, _ = self.sample_column("correct")
        unknown = (finished < 0) & (answers >= 0) & ~correct.astype(bool)
        return _segment_sum(unknown.astype(np.int64), offsets)

    def cot_correct(self, rule: str) -> NDArray[np.int64]:
        """Samples per problem with a correct answer and a chain of thought accepted by ``rule``
        (``any``, ``majority``, ``all``; :func:`kpass.metrics.count_cot_correct`)."""
        from kpass import metrics as core

        statistics = self._statistics()
        if statistics is not None:
            if rule not in statistics.cot_correct:
                self.verdicts_padded()  # raises the missing-column error
            return statistics.cot_correct[rule][self.problems]
        verdicts, slots = self.verdicts_padded()
        correct, _ = self.padded("correct", fill=False)
        return core.count_cot_correct(correct, verdicts, rule=rule, mask=slots)

    def _statistics(self):
        """The table as :class:`~kpass.data.reduction.ProblemStatistics`, or None for samples."""
        return self.table if isinstance(self.table, ProblemStatistics) else None

    def _numpy_error_if_flagged(self, flag: str, compute: Callable[["ProblemSet"], Any]) -> None:
        """When the engine flagged one of these problems with ``flag``, raise the numpy path's
        error for this very set of problems: their rows read again by the numpy readers
        (:meth:`ProblemStatistics.locate`) and ``compute`` run on the same problems there, so the
        error names the same samples and problems, and no rule that depends on the whole set (the
        largest n, the problems' labels) sees fewer problems than the numpy path does."""
        statistics = self._statistics()
        mask = statistics.flags.get(flag)
        if mask is None or not mask[self.problems].any():
            return
        chosen = self.problems
        if len(chosen) > REREAD_WHOLE_SET:  # bounded memory on the error path: the flagged problems only
            chosen = chosen[mask[chosen]][:1000]
        located = statistics.locate(statistics.keys_of(chosen))
        compute(ProblemSet(located, _same_problems(statistics, chosen, located), budget=self.budget))
        statistics.check(flag, self.problems)  # not confirmed: the report says "internal error"

    # ------------------------------------------------------------------ identities and samples

    @property
    def problem_ids(self) -> list[str]:
        """Problem ids, shape (N,)."""
        return self.table.category_values("problem_id")[self.table.problem_index.problem_codes[self.problems]].tolist()

    def _require_samples(self, what: str) -> None:
        statistics = self._statistics()
        if statistics is not None:
            raise UsageError(f"{what} needs the samples, but the {statistics.engine} engine reduced them to per-problem "
                             "statistics; declare the family's `statistics` or use --engine numpy (Python: engine='numpy')")

    def rows(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Table rows of these problems sorted by (problem, sample_index), and offsets (N+1,)."""
        self._require_samples("rows()")
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
        self._require_samples(f"sample_column({name!r})")
        rows, offsets = self.rows()
        return self.table.raw_column(name)[rows], offsets

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
        self._require_samples("verdicts_padded()")
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

    def raise_at(self, bad: NDArray[np.bool_], field: str, message: str) -> NoReturn:
        """Raise :class:`~kpass.DataError` at the first sample where ``bad`` is true.

        Parameters
        ----------
        bad : ndarray of bool
            One entry per sample in :meth:`rows` order (as :meth:`sample_column` returns them).
        field : str
            The column at fault.
        message : str
            What is wrong with that sample; the error adds its file and line.
        """
        rows, _ = self.rows()
        row = int(rows[np.flatnonzero(bad)[0]])
        raise DataError(message, **self.table.error_location(row), field=field)


class _Counts(NamedTuple):
    """Per-problem counts at one budget, in a ProblemSet's order."""

    n_correct: NDArray[np.int64]
    n_finished: NDArray[np.int64]


def _segment_sum(values: NDArray[np.int64], offsets: NDArray[np.int64]) -> NDArray[np.int64]:
    cumulative = np.concatenate([[0], np.cumsum(values, dtype=np.int64)])
    return cumulative[offsets[1:]] - cumulative[offsets[:-1]]


def judge_range(table: "SampleTable", problems: NDArray[np.int64]) -> NDArray[np.object_]:
    """The first and last judge name (:data:`~kpass.data.reduction.JUDGE_COLUMN`, in code-point
    order: the ``MIN`` and ``MAX`` of the engines' SQL) among the samples of each of ``problems``,
    shape (P, 2); None where a problem's samples name none, or the table has no judge column.
    One name per problem in every table a reader writes; two where a problem's samples disagree."""
    out = np.full((len(problems), 2), None, dtype=object)
    if len(problems) == 0 or not table.has_column(JUDGE_COLUMN) or not table.is_categorical(JUDGE_COLUMN):
        return out
    names = table.category_values(JUDGE_COLUMN)
    order = np.argsort(names.astype(str), kind="stable")
    rank = np.empty(len(names), dtype=np.int64)
    rank[order] = np.arange(len(names))
    rows, offsets = table.problem_index.rows_of(np.asarray(problems, dtype=np.int64))
    codes = np.asarray(table.codes(JUDGE_COLUMN), dtype=np.int64)[rows]
    ranked = rank[np.maximum(codes, 0)]
    by_rank = np.append(names[order], np.array(None, dtype=object))  # rank len(names) (and -1): no judge
    low = np.minimum.reduceat(np.where(codes >= 0, ranked, len(names)), offsets[:-1])
    high = np.maximum.reduceat(np.where(codes >= 0, ranked, -1), offsets[:-1])
    out[:, 0], out[:, 1] = by_rank[low], by_rank[high]
    return out


def _same_problems(statistics: ProblemStatistics, problems: NDArray[np.int64],
                   located: "SampleTable") -> NDArray[np.int64]:
    """The problems of ``located`` (rows read again) that are ``problems`` of ``statistics``
    (the same model, task and problem_id), in ``located``'s order. The error path only."""
    def names(table: Any, chosen: Any) -> list[tuple[str, str, str]]:
        index = table.problem_index
        return list(zip(*(table.category_values(field)[codes[chosen]].tolist() for field, codes in (
            ("model", index.model_codes), ("task", index.task_codes), ("problem_id", index.problem_codes)))))

    wanted = set(names(statistics, problems))
    return np.flatnonzero([key in wanted for key in names(located, slice(None))]).astype(np.int64)


def problem_attribute(table: SampleTable, field: str, purpose: str, *, allow_null: bool = False) -> NDArray[np.int64]:
    """Per-problem code of a categorical column that must be constant within each problem.

    Raises :class:`~kpass.DataError` when the table lacks the field, when it varies within a
    problem, or (unless ``allow_null``) when it is null for a problem, naming the file and line.
    """
    index = table.problem_index
    if field == "model":
        return index.model_codes
    if field == "task":
        return index.task_codes
    if field == "problem_id":
        return index.problem_codes
    if not table.has_column(field):
        raise DataError(f"{purpose} names the field '{field}', which the table does not have; fields: "
                        f"{', '.join(table.columns)}", **table.error_location(), field=field)
    if not table.is_categorical(field):
        raise DataError(f"{purpose} needs a categorical (string) field; '{field}' is not one",
                        **table.error_location(), field=field)
    if isinstance(table, ProblemStatistics):  # the engine checked the rules below with SQL
        for flag in (f"varies:{field}",) + (() if allow_null else (f"null:{field}",)):
            flagged = table.flags.get(flag)
            if flagged is not None and flagged.any():  # the numpy error, on the rows read again
                problem_attribute(table.locate(table.keys_of(np.flatnonzero(flagged)[:1000])), field, purpose,
                                  allow_null=allow_null)
        return table.check_field(field, allow_null=allow_null)
    codes = table.codes(field).astype(np.int64)[index.order]
    starts = index.starts
    low = np.minimum.reduceat(codes, starts)
    high = np.maximum.reduceat(codes, starts)
    varying = low != high
    if varying.any():
        problem = int(np.flatnonzero(varying)[0])
        row = int(index.order[starts[problem]])
        raise DataError(f"{purpose} '{field}' must be the same for every sample of a problem; problem "
                        f"({table.describe_problem(row)}) has several values", **table.error_location(row),
                        field=field)
    if not allow_null and (low < 0).any():
        problem = int(np.flatnonzero(low < 0)[0])
        row = int(index.order[starts[problem]])
        raise DataError(f"{purpose} '{field}' is null for problem ({table.describe_problem(row)}); every "
                        "problem needs a cluster", **table.error_location(row), field=field)
    return low


def statistics_from_table(table: "SampleTable", needs: Needs = Needs()) -> ProblemStatistics:
    """The statistics of an in-memory table, computed with numpy (the reference for the
    engines' SQL: the equality tests compare both).

    A rule the report checks when it uses a statistic (a ``--by`` or ``--cluster-by`` field that
    varies within a problem, an unknown ``finished``, answers that contradict the verdicts, a
    budget the data cannot decide) is not raised here: every problem gets the rule's flag, as the
    engines' SQL flags the problems that break it, and the report raises the numpy path's own
    error for the first group that asks (:meth:`ProblemSet._numpy_error_if_flagged` runs the
    computation on that group's rows, here read from this very table), with that group's
    problems and in the report's order.

    Raises
    ------
    DataError
        A per-row or key rule of the table.
    """
    index = table.problem_index
    decode = {name: table.category_values(name)[codes] for name, codes in
              (("model", index.model_codes), ("task", index.task_codes), ("problem_id", index.problem_codes))}
    fields = {}
    field_flags: dict[str, NDArray[np.bool_]] = {}
    for field in needs.fields:
        values = np.empty(index.n_problems, dtype=object)
        values[:] = None
        try:
            codes = problem_attribute(table, field, "--by", allow_null=True)
        except DataError:  # the report says it, as --by or --cluster-by (see the docstring)
            field_flags[f"varies:{field}"] = np.ones(index.n_problems, dtype=bool)
        else:
            values[codes >= 0] = table.category_values(field)[codes[codes >= 0]]
            field_flags[f"null:{field}"] = codes < 0  # refused where the field may not be null (--cluster-by)
        fields[field] = values
    everyone = np.arange(index.n_problems, dtype=np.int64)
    judges = judge_range(table, everyone)  # carried as the engines carry it: shown, never checked
    fields.setdefault(JUDGE_COLUMN, judges[:, 0])
    stats = ProblemStatistics(keys=decode, n_samples=index.n_samples, n_correct=index.n_correct, fields=fields,
                sources=table.sources, columns_present=table.columns, extra_columns=table.extra_columns,
                notes=table.notes, engine="numpy", locate=lambda keys: table,
                first_seen=index.order[index.starts])
    stats.judges = stats.put(judges, dtype=object)
    every_problem = np.ones(index.n_problems, dtype=bool)
    nothing = np.zeros(index.n_problems, dtype=np.int64)
    for flag, mask in field_flags.items():
        stats.flags[flag] = stats.put(mask, dtype=bool)
    everything = ProblemSet(table, everyone)
    if needs.finished:
        stats.n_finished_null = np.zeros(len(stats), dtype=np.int64)
        try:
            stats.n_finished = stats.put(everything.n_finished())
        except DataError:
            stats.n_finished = stats.put(nothing)
            stats.flags["finished"] = stats.put(every_problem, dtype=bool)
    if needs.answer_classes:
        from kpass.data.answers import answer_class_counts

        try:
            for rule in CUT_ANSWER_RULES:
                counts, invalid = answer_class_counts(everything, cut_answers=rule)
                stats.set_answer_classes(rule, counts[stats._order_in], invalid[stats._order_in])
            stats.n_cut_answers = stats.put(everything.n_cut_answers())
            stats.n_unknown_answers = stats.put(everything.n_unknown_finished_answers())
        except DataError:
            for rule in CUT_ANSWER_RULES:
                stats.set_answer_classes(rule, np.zeros((len(stats), 1), dtype=np.int64), stats.put(nothing))
            stats.n_cut_answers = stats.n_unknown_answers = stats.put(nothing)
            stats.flags["answers"] = stats.put(every_problem, dtype=bool)
    if needs.cot:
        for rule in COT_RULES:
            stats.cot_correct[rule] = stats.put(everything.cot_correct(rule))
    if needs.as_run:  # finished as run: answer_token known, or finished true (kpass.metrics.budget_counts)
        n_rows = int(index.n_samples.sum())
        done = np.zeros(n_rows, dtype=bool)
        for name, known in (("answer_token", lambda v: v >= 0), ("finished", lambda v: v == 1)):
            if table.has_column(name):
                done |= known(table.raw_column(name)[index.order])
        correct = table.raw_column("correct")[index.order].astype(bool)
        for target, mask in ((stats.budget_finished, done), (stats.budget_correct, done & correct)):
            target[None] = stats.put(np.add.reduceat(mask.astype(np.int64), index.starts) if n_rows else mask)
    for budget in needs.budgets:
        at = ProblemSet(table, everything.problems, budget=budget)
        try:
            stats.budget_correct[budget] = stats.put(at.n_correct)
            stats.budget_finished[budget] = stats.put(at.n_finished())
        except DataError:
            stats.flags[f"budget:{budget}"] = stats.put(every_problem, dtype=bool)
            stats.budget_correct[budget] = stats.budget_finished[budget] = stats.put(nothing)
    if needs.tokens:
        tokens = table.raw_column("output_tokens")[index.order] if table.has_column("output_tokens") else np.full(
            int(index.n_samples.sum()), -1, dtype=np.int64)
        null = tokens < 0
        stats.tokens_null = stats.put(np.add.reduceat(null.astype(np.int64), index.starts) if null.size else null)
        for cap in (None, *needs.budgets):
            spent = np.where(null, 0, tokens if cap is None else np.minimum(tokens, cap)).astype(np.int64)
            stats.tokens_spent[cap] = stats.put(np.add.reduceat(spent, index.starts) if spent.size else spent)
    return stats
