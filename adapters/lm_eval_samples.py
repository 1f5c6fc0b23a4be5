"""Per-sample answers and verdicts from lm-eval's K repeats, shared by the flag and the reader.

lm-eval keeps all K generations of a document (``resps``) but its filter pipelines usually end in a
selection step (``take_first``, ``take_first_k``, ``majority_vote``) that reduces them to one. kpass
needs one verdict per generation, judged the way the task judges its first one. This module

* turns each of a task's filter pipelines into a *sample pipeline*: the same steps with the
  selection steps removed, so K responses go in and K extracted answers come out
  (:func:`sample_pipelines`, :meth:`SamplePipeline.apply`);
* scores each extracted answer with the task's own metric through a caller-supplied ``score``
  function (the task object in the live run, the metric registry post hoc) and checks that the
  metric is binary (:func:`score_samples`);
* lays out the sample-table columns (:func:`sample_columns`) and measures how many documents got K
  identical generations (:func:`identical_response_share`, the temperature-0 trap).

Token budgets and finishing: given the raw generations (``responses=``), the columns also carry
what fin@k and ``kpass budget`` need. lm-eval logs no stop reason and no token count, so
``finished`` is decided only from evidence
(:func:`kpass.adapters.lm_eval_finishing.finished_flag`, docs/lm-eval.md):

* a sample judged correct emitted its answer: finished (the sample table rejects
  ``correct=true, finished=false``);
* a generation that ends inside an unclosed reasoning block (``<think>`` without ``</think>``,
  ``DEFAULT_REASONING_MARKERS``, configurable) did not finish, whatever stopped it;
* else the API's finish reason where it was observed (the live ``kpass-lm-eval`` run records it:
  ``"length"`` is cut, ``"stop"`` is finished);
* else the generation's token count where a tokenizer is given (``token_counts``): it reached the
  request's ``max_gen_toks`` (cut) or it did not (finished);
* else unknown (null): fin@k then refuses and says what to give (the model's tokenizer).

``output_tokens`` of an unfinished sample is the run's generation limit (``max_gen_toks``): it was
generated either to that limit or to a stop sequence without an answer, so it is decided (not
finished) at every budget up to the limit and unknown above it, which makes larger budgets an
error. A finished sample gets its token count where one is known, else null (a tokenizer counts it
later). ``metadata["output"]`` is each raw generation, for ``--tokenizer`` to find the answer's
token position.

One problem is one ``doc_id``. The table's ``task`` is ``"<task>/<filter>"`` (just ``"<task>"`` for
lm-eval's default ``"none"`` pipeline), so every pipeline gets its own rows, as in lm-eval's table.

Answers for cons@k: the filtered answer of each sample; the pipeline's fallback for "no match"
(``"[invalid]"`` unless the regex step sets ``fallback``) and empty answers become null (no
extractable answer). An answer that the task's metric judges correct is recorded as the gold
answer, so that equivalent correct spellings (``"Paris"``/``"paris"`` under ``ignore_case``) form one
class, the gold class.

No lm-eval import at module level: the functions that need lm-eval import it when called.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .lm_eval_finishing import DEFAULT_REASONING_MARKERS, finished_flag

__all__ = [
    "DEFAULT_FALLBACK",
    "SELECTION_FILTERS",
    "Generations",
    "SamplePipeline",
    "ScoredDocuments",
    "binary_verdict",
    "distinct_pipelines",
    "identical_response_share",
    "is_kpass_value",
    "recorded_answer",
    "sample_columns",
    "sample_pipelines",
    "score_samples",
    "task_key",
]

#: Filter steps that choose among the K responses instead of transforming each one.
SELECTION_FILTERS = frozenset({"take_first", "take_first_k", "majority_vote"})
#: What lm-eval's ``regex`` and ``multi_choice_regex`` filters return when nothing matches.
DEFAULT_FALLBACK = "[invalid]"
_EXTRACTION_FILTERS = frozenset({"regex", "multi_choice_regex"})
#: Marker key of the per-document values that kpass's own lm-eval metrics return.
KPASS_VALUE_KEY = "kpass_samples"
#: Document fields copied into the table as ``doc.<field>`` columns (short scalars only).
_MAX_DOC_FIELD_LENGTH = 64


def task_key(task: str, filter_name: str) -> str:
    """Task name in the sample table for ``task`` scored through pipeline ``filter_name``."""
    return task if filter_name == "none" else f"{task}/{filter_name}"


def is_kpass_value(value: Any) -> bool:
    """True for a per-document value produced by one of kpass's own lm-eval metrics."""
    return isinstance(value, Mapping) and KPASS_VALUE_KEY in value


def recorded_answer(answer: Any, correct: bool, gold: str | None, fallbacks: frozenset[str]) -> str | None:
    """The answer kpass records for cons@k from one filtered lm-eval answer.

    The flag (:mod:`kpass.adapters.lm_eval_cli`), the post-hoc reader and the lm-eval metrics
    (:mod:`kpass.adapters.lm_eval_metrics`) all record answers with this function; the answer
    classes themselves are then counted by the core (:func:`kpass.metrics.class_counts_from_codes`).

    Parameters
    ----------
    answer : Any
        The pipeline's answer for one sample.
    correct : bool
        The task metric's verdict on it.
    gold : str or None
        The document's gold answer as text.
    fallbacks : frozenset of str
        Answers meaning "no extractable answer" (the pipeline's regex fallback, e.g. ``"[invalid]"``).

    Returns
    -------
    str or None
        The gold answer for a correct sample (so that spellings the task's metric accepts as
        equal, ``"Paris"``/``"paris"`` under ``ignore_case``, form one class: the gold class);
        ``None`` (no extractable answer) for ``None``, empty text and fallbacks; else the text.

    Examples
    --------
    >>> [recorded_answer(a, c, "7", frozenset({"[invalid]"})) for a, c in
    ...  [("7.0", True), ("5", False), ("[invalid]", False), ("  ", False), (None, False)]]
    ['7', '5', None, None, None]
    """
    if correct and gold is not None:
        return gold
    if answer is None:
        return None
    text = answer if isinstance(answer, str) else str(answer)
    if not text.strip() or text in fallbacks:
        return None
    return text


@dataclasses.dataclass(frozen=True)
class SamplePipeline:
    """One of a task's filter pipelines without its selection steps.

    Attributes
    ----------
    name : str
        The pipeline's name in the task config (lm-eval's ``filter`` key).
    components : tuple of (function, kwargs)
        The steps kept, in order, as ``build_filter_ensemble`` takes them.
    removed : tuple of str
        Selection steps removed (``take_first``, ``majority_vote``, ...).
    fallbacks : frozenset of str
        Values meaning "no extractable answer" (the extraction steps' ``fallback``).
    cluster_field : str or None
        Document field named by a ``kpass_cluster`` step, if the pipeline has one.
    """

    name: str
    components: tuple[tuple[Any, dict[str, Any]], ...]
    removed: tuple[str, ...]
    fallbacks: frozenset[str]
    cluster_field: str | None = None
    source: str | None = None

    def apply(self, responses: Sequence[Sequence[Any]], docs: Sequence[Mapping[str, Any]]) -> list[list[Any]]:
        """Run the kept steps over every document's responses; one answer per response.

        Parameters
        ----------
        responses : sequence of sequence
            ``responses[d]`` holds the K raw generations of document ``d`` (lm-eval's ``resps``).
        docs : sequence of mapping
            The documents, in the same order (filters may read them).

        Returns
        -------
        list of list
            ``answers[d][i]`` is the filtered answer of generation ``i`` of document ``d``.

        Raises
        ------
        ValueError
            A kept step does not return one answer per response (a custom filter that selects).
        """
        from lm_eval.filters import build_filter_ensemble

        from kpass.data.patterns import bounded_filter_factory

        holders = [_Holder(list(r), doc) for r, doc in zip(responses, docs, strict=True)]
        if self.components and holders:
            ensemble = build_filter_ensemble(self.name, [list(c) for c in self.components])
            ensemble.filters = [bounded_filter_factory(factory, source=self.source, field=f"filter {self.name!r}")
                                for factory in ensemble.filters]  # every regex call timed (issue #15)
            ensemble.apply(holders)
            answers = [h.filtered_resps[self.name] for h in holders]
        else:
            answers = [h.resps for h in holders]
        out: list[list[Any]] = []
        for index, (holder, answer) in enumerate(zip(holders, answers, strict=True)):
            if isinstance(answer, str) or not isinstance(answer, Sequence) or len(answer) != len(holder.resps):
                raise ValueError(
                    f"filter pipeline {self.name!r} (steps {self.step_names()}) does not keep one answer "
                    f"per response: document {index} has {len(holder.resps)} responses and the pipeline "
                    f"returned {answer!r}; kpass cannot score each sample through it."
                )
            out.append(list(answer))
        return out

    def step_names(self) -> list[str]:
        return [_function_name(function) for function, _ in self.components]

    def answer_or_none(self, value: Any) -> str | None:
        """The answer of a sample judged wrong, as recorded for cons@k: null for fallbacks and
        empty answers (see :func:`recorded_answer`)."""
        return recorded_answer(value, False, None, self.fallbacks)


class _Holder:
    """The three attributes of ``lm_eval.api.instance.Instance`` that ``FilterEnsemble.apply`` uses."""

    __slots__ = ("resps", "doc", "filtered_resps")

    def __init__(self, resps: list[Any], doc: Mapping[str, Any]) -> None:
        self.resps = resps
        self.doc = doc
        self.filtered_resps: dict[str, Any] = {}


def _function_name(function: Any) -> str:
    if isinstance(function, str):
        return function
    return getattr(function, "__name__", repr(function))


def sample_pipelines(filter_list: Sequence[Mapping[str, Any]] | None, *, source: str | None = None,
                     task: str | None = None) -> list[SamplePipeline]:
    """The sample pipelines of a task config's ``filter_list`` (lm-eval's default when None).

    Parameters
    ----------
    filter_list : sequence of mapping or None
        ``[{"name": ..., "filter": [{"function": ..., **kwargs}, ...]}, ...]`` as in a task YAML
        or the ``configs`` of a results JSON. None stands for lm-eval's default pipeline
        ``none = [take_first]``, whose sample pipeline keeps the raw generations.
    source, task : str, optional
        The file the configs were read from and the task, named in errors. With ``source``,
        patterns are untrusted: checked by :func:`kpass.data.patterns.check_pattern` here and
        timed on every call.

    Returns
    -------
    list of SamplePipeline
        One per pipeline, in config order.

    Raises
    ------
    ValueError
        A malformed entry (no ``name`` or no ``filter`` list, a step without ``function``).
    """
    if filter_list is None:
        return [SamplePipeline("none", (), ("take_first",), frozenset())]
    pipelines = []
    for position, entry in enumerate(filter_list):
        if not isinstance(entry, Mapping) or "name" not in entry or not isinstance(entry.get("filter"), Sequence):
            raise ValueError(
                f"`filter_list` entry {position} must be a mapping with 'name' and a 'filter' list; got {entry!r}."
            )
        kept: list[tuple[Any, dict[str, Any]]] = []
        removed: list[str] = []
        fallbacks: set[str] = set()
        cluster_field = None
        for step in entry["filter"]:
            if not isinstance(step, Mapping) or "function" not in step:
                raise ValueError(
                    f"filter pipeline {entry['name']!r}: every step needs a 'function'; got {step!r}."
                )
            function = step["function"]
            kwargs = {key: value for key, value in step.items() if key != "function"}
            name = _function_name(function)
            _check_untrusted_step(name, kwargs, entry["name"], source, task)
            if name in SELECTION_FILTERS:
                removed.append(name)
                continue
            if name in _EXTRACTION_FILTERS:
                fallback = kwargs.get("fallback", DEFAULT_FALLBACK)
                if isinstance(fallback, str):
                    fallbacks.add(fallback)
            if name == "kpass_cluster" and isinstance(kwargs.get("field"), str):
                cluster_field = kwargs["field"]
            kept.append((function, kwargs))
        pipelines.append(SamplePipeline(str(entry["name"]), tuple(kept), tuple(removed), frozenset(fallbacks),
                                        cluster_field, source))
    return pipelines


def _pipeline_signature(pipeline: SamplePipeline) -> str:
    return repr([(_function_name(function), sorted(kwargs.items())) for function, kwargs in pipeline.components]
                + [pipeline.cluster_field, sorted(pipeline.fallbacks)])


def distinct_pipelines(pipelines: Sequence[SamplePipeline], *, task: str) -> tuple[list[SamplePipeline], list[str]]:
    """Pipelines that differ once their selection steps are removed, and a note per duplicate.

    ``gsm8k_cot_self_consistency``'s ``score-first``, ``maj@64`` and ``maj@8`` all become "regex
    over every response" without ``take_first``/``majority_vote``/``take_first_k``: they score the
    same samples the same way, so they are one set of problems, reported once (under the first
    pipeline's name), never three.

    Returns
    -------
    kept : list of SamplePipeline
        The first pipeline of each group of identical ones, in config order.
    notes : list of str
        ``"task T: pipelines B, C score every sample as A does once their selection steps ... are
        removed; reported once, as T/A"`` for each group of more than one.
    """
    groups: dict[str, list[SamplePipeline]] = {}
    for pipeline in pipelines:
        groups.setdefault(_pipeline_signature(pipeline), []).append(pipeline)
    kept, notes = [], []
    for group in groups.values():
        kept.append(group[0])
        if len(group) > 1:
            removed = sorted({step for p in group for step in p.removed})
            notes.append(f"lm-eval task {task!r}: pipelines {', '.join(p.name for p in group[1:])} score every sample "
                         f"as {group[0].name!r} does once their selection steps ({', '.join(removed)}) are removed; "
                         f"reported once, as {task_key(task, group[0].name)}")
    return kept, notes


def _check_untrusted_step(name: str, kwargs: Mapping[str, Any], pipeline: Any, source: str | None,
                          task: str | None) -> None:
    """Refuse, before anything runs, a step's patterns that can blow up and a ``custom`` step
    whose ``filter_fn`` a results file could only hold as text (issue #15)."""
    from kpass import DataError
    from kpass.data.patterns import check_pattern

    where = f"task {task!r}, filter {pipeline!r}" if task is not None else f"filter {pipeline!r}"
    if name == "custom" and not callable(kwargs.get("filter_fn")):
        raise DataError(f"{where}: the custom filter's filter_fn is {kwargs.get('filter_fn')!r}, not a function "
                        f"(a results file stores it as text); read this task from its own config with the "
                        f"kpass-lm-eval flag, or drop the custom step", source=source, field="filter_fn")
    for key in ("regex_pattern", "regexes_to_ignore"):
        if key in kwargs and kwargs[key] is not None:
            values = kwargs[key] if isinstance(kwargs[key], list) else [kwargs[key]]
            for value in values:
                check_pattern(value, source=source, field=f"{where}, {key}")


def binary_verdict(value: Any, *, metric: str, where: str) -> bool:
    """A metric value as a verdict; kpass's metrics need 0/1 (or boolean) values.

    Raises
    ------
    ValueError
        ``value`` is not one of ``0, 1, False, True`` (for instance an F1 of 0.5, or NaN).
    """
    if isinstance(value, (bool, numbers.Integral)) or (isinstance(value, numbers.Real) and not math.isnan(value)):
        if value == 1:
            return True
        if value == 0:
            return False
    raise ValueError(
        f"metric {metric!r} returned {value!r} for {where}; kpass's k-sample metrics need a binary "
        f"verdict (0/1 or true/false) per sample. Choose a binary metric of the task."
    )


def choose_metric(first_result: Mapping[str, Any], requested: str | None, *, task: str) -> str:
    """The metric whose per-sample value decides correctness.

    ``requested`` if given (it must be among the task's metrics), else the first metric whose
    value on the first sample is a number (kpass's own k-sample metrics are skipped).
    """
    numeric = [name for name, value in first_result.items()
               if not is_kpass_value(value) and isinstance(value, (bool, numbers.Real))]
    if requested is not None:
        if requested not in first_result:
            raise ValueError(
                f"task {task!r} has no metric {requested!r}; its metrics are {sorted(first_result)}."
            )
        return requested
    if not numeric:
        raise ValueError(
            f"task {task!r} has no numeric per-sample metric to judge samples by (metrics: "
            f"{sorted(first_result)})."
        )
    return numeric[0]


def score_samples(
    answers: Sequence[Sequence[Any]],
    score: Callable[[int, Any], Mapping[str, Any]],
    *,
    metric: str | None,
    task: str,
    doc_ids: Sequence[Any],
) -> tuple[str, list[list[bool]]]:
    """Judge every extracted answer with the task's metric.

    Parameters
    ----------
    answers : sequence of sequence
        ``answers[d][i]``: filtered answer of sample ``i`` of document ``d``.
    score : callable
        ``score(d, answer) -> {metric: value}``, the task's scoring of one answer of document ``d``.
    metric : str or None
        Metric to use (None: see :func:`choose_metric`).
    task : str
        Task name, for messages.
    doc_ids : sequence
        Document ids, for messages.

    Returns
    -------
    metric : str
        The metric used.
    verdicts : list of list of bool
        ``verdicts[d][i]``.
    """
    chosen = metric
    verdicts: list[list[bool]] = []
    for d, doc_answers in enumerate(answers):
        row = []
        seen: dict[Any, Mapping[str, Any]] = {}  # one call per distinct answer of a document
        for i, answer in enumerate(doc_answers):
            try:
                result = seen[answer]
            except (KeyError, TypeError):
                result = score(d, answer)
                try:
                    seen[answer] = result
                except TypeError:  # unhashable answer: score every time
                    pass
            if chosen is None:
                chosen = choose_metric(result, None, task=task)
            elif d == 0 and i == 0:
                choose_metric(result, chosen, task=task)
            row.append(binary_verdict(result.get(chosen), metric=chosen,
                                      where=f"task {task!r}, doc_id {doc_ids[d]}, sample {i}"))
        verdicts.append(row)
    if chosen is None:
        raise ValueError(f"task {task!r} has no samples to score.")
    return chosen, verdicts


def identical_response_share(responses: Sequence[Sequence[Any]]) -> float:
    """Share of documents with at least two generations whose generations are all identical.

    A high share means the K samples carry no more information than one (temperature 0, or a
    seed repeated across repeats). Returns 0.0 when no document has two generations.
    """
    eligible = [r for r in responses if len(r) >= 2]
    if not eligible:
        return 0.0
    identical = sum(1 for r in eligible if all(x == r[0] for x in r[1:]))
    return identical / len(eligible)


def _doc_fields(doc: Mapping[str, Any]) -> dict[str, str]:
    fields = {}
    for key, value in doc.items():
        if isinstance(value, bool) or isinstance(value, (numbers.Integral, str)):
            text = str(value)
            if len(text) <= _MAX_DOC_FIELD_LENGTH:
                fields[f"doc.{key}"] = text
    return fields


@dataclasses.dataclass(frozen=True)
class ScoredDocuments:
    """One task's documents as one pipeline scored them; every sequence has one entry per document ``d``.

    Attributes
    ----------
    doc_ids, docs, targets : sequences
        lm-eval's ``doc_id``, the document's fields and its gold target.
    answers, verdicts : sequences of sequences
        ``answers[d][i]``: the pipeline's filtered answer of generation ``i``; ``verdicts[d][i]`` whether
        the task's metric judged it correct.
    lines : sequence of int, optional
        The source line of each document (default: its position, 1-based).
    """

    doc_ids: Sequence[Any]
    docs: Sequence[Mapping[str, Any]]
    targets: Sequence[Any]
    answers: Sequence[Sequence[Any]]
    verdicts: Sequence[Sequence[bool]]
    lines: Sequence[int] | None = None


@dataclasses.dataclass(frozen=True)
class Generations:
    """The raw generations of those documents and the evidence of whether each one finished.

    ``responses[d][i]`` is generation ``i`` of document ``d`` (lm-eval's ``resps``);
    ``token_counts[d][i]`` a tokenizer's count of it and ``finish_reasons[d][i]`` the API's finish
    reason where observed (None where not); ``max_gen_toks`` the task's limit;
    ``reasoning_markers`` the open and close tags of a reasoning block
    (:func:`kpass.adapters.lm_eval_finishing.finished_flag`).
    """

    responses: Sequence[Sequence[Any]]
    max_gen_toks: int | None = None
    token_counts: Sequence[Sequence[int | None]] | None = None
    finish_reasons: Sequence[Sequence[str | None]] | None = None
    reasoning_markers: tuple[str, str] | None = DEFAULT_REASONING_MARKERS

    def __post_init__(self) -> None:
        limit = self.max_gen_toks
        if limit is not None and not (isinstance(limit, int) and not isinstance(limit, bool) and limit >= 1):
            raise ValueError(f"`max_gen_toks` must be an integer >= 1; got {limit!r}.")

    def finishing(self, d: int, doc_id: Any, verdicts: Sequence[bool]) -> tuple[list[Any], list[Any], list[Any]]:
        """Document ``d``'s ``finished``, ``output_tokens`` and ``metadata`` values, one per generation."""
        n = len(verdicts)
        texts = self.responses[d]
        if len(texts) != n:
            raise ValueError(f"document {doc_id}: {n} answers but {len(texts)} responses.")
        counts = self.token_counts[d] if self.token_counts is not None else [None] * n
        reasons = self.finish_reasons[d] if self.finish_reasons is not None else [None] * n
        if len(counts) != n or len(reasons) != n:
            raise ValueError(f"document {doc_id}: {n} responses but {len(counts)} token counts and "
                             f"{len(reasons)} finish reasons.")
        finished = [finished_flag(bool(v), t, max_gen_toks=self.max_gen_toks, token_count=c, finish_reason=r,
                                  reasoning_markers=self.reasoning_markers)
                    for v, t, c, r in zip(verdicts, texts, counts, reasons)]
        output_tokens = [self.max_gen_toks if f is False else c if f else None for f, c in zip(finished, counts)]
        return finished, output_tokens, [{"output": t if isinstance(t, str) else None} for t in texts]


def sample_columns(
    *,
    model: str,
    task: str,
    pipeline: SamplePipeline,
    scored: ScoredDocuments,
    generations: Generations | None = None,
    cluster_by: str | None = None,
    doc_fields: bool = True,
    extractor: tuple[str | None, Callable[[Any, Any], str | None] | None] | None = None,
) -> tuple[dict[str, list[Any]], list[int]]:
    """Columns of the sample table for one task and pipeline, and each row's source line.

    Each document contributes K rows (``sample_index`` 0..K-1, ``problem_id = str(doc_id)``), tagged
    ``pipeline_of = task`` so that rows pooled over tasks count each document once
    (:func:`kpass.reports.sample_checks.pooled_pipeline_rows`).
    With ``doc_fields``, short scalar document fields are kept as ``doc.<field>`` columns so that
    ``kpass report --cluster-by doc.<field>`` and ``--by doc.<field>`` can use them; ``cluster_by``
    (a document field; default: the pipeline's ``kpass_cluster`` field) fills the ``cluster`` column.

    With ``generations`` (:class:`Generations`), the columns ``metadata`` (``{"output": generation}``),
    ``finished`` (from evidence only: :func:`kpass.adapters.lm_eval_finishing.finished_flag` with a
    tokenizer's count, the API's finish reason where observed and the reasoning markers; null where
    nothing says) and ``output_tokens`` (``max_gen_toks`` for unfinished samples, the token count or
    null otherwise) are added (module docstring).

    With ``extractor`` = ``(name, extract)`` (:func:`kpass.adapters.lm_eval_answers.pipeline_answer_extractor`),
    a wrong sample's ``answer`` is ``extract(raw generation, filtered answer)`` (a correct one's is
    the gold answer) and the column ``answer_extractor`` names the extractor; ``(None, None)``
    means none is known: the answers are null and ``answer_extractor`` null, so cons@k refuses
    them. Without ``extractor`` the filtered answers are recorded (:func:`recorded_answer`).

    Raises
    ------
    ValueError
        A document lacks the ``cluster_by`` field (message lists the fields it has), or its
        responses do not match its answers.
    """
    if cluster_by is None:
        cluster_by = pipeline.cluster_field
    columns: dict[str, list[Any]] = {name: [] for name in (
        "model", "task", "problem_id", "sample_index", "correct", "answer", "gold", "pipeline_of",
        *(("cluster",) if cluster_by is not None else ()), *(("answer_extractor",) if extractor is not None else ()),
        *(("finished", "output_tokens", "metadata") if generations is not None else ()))}
    extra: dict[str, list[Any]] = {}
    lines: list[int] = []
    rows = 0
    for d, (doc_id, doc, target) in enumerate(zip(scored.doc_ids, scored.docs, scored.targets, strict=True)):
        gold = None if target is None else str(target)
        doc_verdicts = scored.verdicts[d]
        n = len(scored.answers[d])
        if len(doc_verdicts) != n:
            raise ValueError(f"document {doc_id}: {n} answers but {len(doc_verdicts)} verdicts.")
        for name, value in (("model", model), ("task", task_key(task, pipeline.name)), ("pipeline_of", task),
                            ("problem_id", str(doc_id)), ("gold", gold)):
            columns[name].extend([value] * n)
        columns["sample_index"].extend(range(n))
        columns["correct"].extend(bool(v) for v in doc_verdicts)
        columns["answer"].extend(_answers(scored, d, gold, pipeline, extractor, generations))
        if extractor is not None:
            columns["answer_extractor"].extend([extractor[0]] * n)
        if generations is not None:
            for name, values in zip(("finished", "output_tokens", "metadata"),
                                    generations.finishing(d, doc_id, doc_verdicts)):
                columns[name].extend(values)
        if cluster_by is not None:
            columns["cluster"].extend([_cluster_of(doc, cluster_by, doc_id, task)] * n)
        fields = _doc_fields(doc) if doc_fields else {}
        for name in fields:
            if name not in extra:  # a new column: null for the rows before it
                extra[name] = [None] * rows
        for name, values in extra.items():
            values.extend([fields.get(name)] * n)
        rows += n
        lines.extend([scored.lines[d] if scored.lines is not None else d + 1] * n)
    columns.update(extra)
    return columns, lines


def _answers(scored: ScoredDocuments, d: int, gold: str | None, pipeline: SamplePipeline,
             extractor: tuple[str | None, Callable[[Any, Any], str | None] | None] | None,
             generations: Generations | None) -> list[Any]:
    """Document ``d``'s ``answer`` values: the recorded answers, or the extractor's (the gold one where correct)."""
    answers, verdicts = scored.answers[d], scored.verdicts[d]
    if extractor is None:
        return [recorded_answer(a, bool(v), gold, pipeline.fallbacks) for a, v in zip(answers, verdicts)]
    extract = extractor[1]
    raws = generations.responses[d] if generations is not None else answers
    return [gold if v and gold is not None else (None if extract is None else extract(raw, a))
            for raw, a, v in zip(raws, answers, verdicts, strict=True)]


def _cluster_of(doc: Mapping[str, Any], cluster_by: str, doc_id: Any, task: str) -> str | None:
    """The cluster of a document: its ``cluster_by`` field as text (None stays null)."""
    if cluster_by not in doc:
        raise ValueError(f"cluster field {cluster_by!r}: document {doc_id} of task {task!r} has no field "
                         f"{cluster_by!r}; its fields are {sorted(doc)}.")
    cluster = doc[cluster_by]
    return None if cluster is None else str(cluster)
