"""Inspect scores to kpass sample-table records (shared by the Inspect metrics and the log reader).

One record per (sample, epoch) with the columns of ``kpass.SampleTable``:

==============  =============================================================================
column          taken from
==============  =============================================================================
model           the log's ``eval.model`` (metrics: the constant ``"inspect"``)
task            the log's ``eval.task``, plus ``/<scorer>`` when a log holds several scorers
problem_id      the Inspect sample id, as a string
sample_index    0-based rank of the epoch among the sample's scored epochs
correct         the score value: ``value_to_float(value) >= 1.0`` (Inspect's ``pass_at`` rule)
answer          ``Score.metadata["kpass"]["answer"]`` (kpass scorers), else ``Score.answer``
gold            the sample target (a list of targets is kept as JSON)
finished        ``Score.metadata["kpass"]["finished"]`` (kpass scorers), else decided from the
                final generation's stop reason (log reader only; see *Finished*)
output_tokens   ``Score.metadata["kpass"]["output_tokens"]``, else the final generation's usage
                (``output.usage``), else the sample's usage of the evaluated model
cot_verdicts    ``Score.metadata["kpass"]["cot_verdicts"]`` (:func:`cot_verifier` only)
cluster         the sample-metadata value under the cluster key
metadata        ``{"epoch": ..., "output": <completion>, "sample_metadata": {...}}``: the
                log reader adds the final generation's text under ``"output"``, where
                ``kpass budget --tokenizer`` looks for it (see *Output text*)
==============  =============================================================================

Correctness
-----------
kpass metrics are binary, and the adapter uses exactly the rule of Inspect's own ``pass_at_{k}``
and ``pass_k_{k}`` reducers, so that the numbers agree: a value is correct when
``inspect_ai.scorer.value_to_float()(value) >= 1.0``. Hence ``"C"``, ``True``, ``1``, ``1.0``,
``"yes"``, ``"true"`` are correct; ``"I"``, ``"N"`` (no answer), ``"P"`` (partial credit, 0.5),
``0``, ``0.5``, ``False``, ``"no"`` are incorrect. A NaN value is Inspect's "unscored" sentinel:
that epoch is left out (Inspect's metrics and reducers leave it out too) and the remaining epochs of
the sample are renumbered. A value kpass cannot read as a single correct/incorrect flag (a dict,
a list, an unrecognised string) is an error naming the sample, rather than Inspect's warning and 0.

Finished (one rule on every path)
---------------------------------
``finished`` says whether an epoch emitted its final answer before its token limit (docs/spec.md
section 6). :func:`finished_flag` decides it, with the same precedence for
:func:`~kpass.adapters.inspect_scorers.kpass_scorer`, the log reader (logs made with or without
kpass) and the Inspect metrics:

1. a *correct* verdict: finished (a correct answer was emitted; the sample table rejects
   ``correct=true, finished=false``, so pass@1 = fin@1 x pass@1 | fin holds);
   then a completion that ends inside an unclosed reasoning block (its last ``<think>`` after its
   last ``</think>``; the markers are an option of the log reader, ``--reasoning-markers``, as under
   lm-eval: :func:`kpass.adapters.lm_eval_finishing.ends_in_open_reasoning`): **not finished**,
   whatever stopped it (a stop sequence in the middle of the reasoning);
2. else the generation stopped at its limit (``stop_reason`` ``"max_tokens"`` or
   ``"model_length"``): **not finished**, whatever an extractor finds in the cut text (an
   extractor such as ``match(numeric=True)`` takes any number of a cut-off derivation for the
   answer);
3. else a known stop reason (``"stop"``, ``"tool_calls"``, ``"content_filter"``...): finished
   (stopped on its own; a missing answer is then simply wrong);
4. else (no generation, or stop reason ``"unknown"``): the extractor decides: finished when it
   found an answer, unknown (null) otherwise; a token budget then needs the answer's position
   (``--tokenizer``) and says so.

Output text
-----------
``metadata["output"]`` is ``output.completion``, the text of the epoch's final generation. When
that generation reasoned in separate reasoning blocks (``ContentReasoning``, or usage reporting
reasoning tokens), the completion does not hold every token generated before the answer, and a
tokenizer would place the answer too early. The text is then kept under
``metadata["completion"]`` instead and ``"output"`` is left out, so ``kpass budget --tokenizer``
falls back to ``output_tokens`` (the whole generation: conservative); ``--text-field completion``
uses it anyway.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

from .lm_eval_finishing import DEFAULT_REASONING_MARKERS, ends_in_open_reasoning

__all__ = [
    "KPASS_METADATA_KEY",
    "LoggedGeneration",
    "LogFieldError",
    "TRUNCATED_STOP_REASONS",
    "answer_of",
    "assign_sample_indices",
    "check_header_fields",
    "check_required_columns",
    "check_sample_fields",
    "clean_answer",
    "correct_from_value",
    "field_of",
    "finished_flag",
    "kpass_metric_definitions",
    "sample_record",
]

KPASS_METADATA_KEY = "kpass"
#: Stop reasons that mean the generation was cut off by a token limit.
TRUNCATED_STOP_REASONS = frozenset({"max_tokens", "model_length"})
#: Stop reasons that do not say whether the generation was cut off.
_UNKNOWN_STOP_REASONS = frozenset({"unknown", ""})
_CORRECT_STRINGS = {"c": True, "i": False, "p": False, "n": False,
                    "yes": True, "true": True, "no": False, "false": False}


def correct_from_value(value: Any, *, where: str) -> bool | None:
    """Map an Inspect score value to correct (``True``), incorrect (``False``) or unscored (``None``).

    Parameters
    ----------
    value : Value
        ``Score.value``.
    where : str
        Description of the sample for error messages (``"sample 7, epoch 2"``).

    Returns
    -------
    bool or None
        ``value_to_float(value) >= 1.0``; ``None`` for NaN (Inspect's unscored sentinel).

    Raises
    ------
    TypeError
        The value is a dict or a list (several values per sample).
    ValueError
        A string that is neither C/I/P/N, yes/no, true/false nor a number.

    Examples
    --------
    >>> [correct_from_value(v, where="x") for v in ("C", "I", "P", 1.0, 0, True)]
    [True, False, False, True, False, True]
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, numbers.Real):
        as_float = float(value)
        if math.isnan(as_float):
            return None
        return as_float >= 1.0
    if isinstance(value, str):
        key = value.strip().lower()
        if key in _CORRECT_STRINGS:
            return _CORRECT_STRINGS[key]
        try:
            as_float = float(key)
        except ValueError:
            raise ValueError(
                f"{where}: score value {value!r} is not a correct/incorrect value kpass can read "
                "(expected C/I/P/N, yes/no, true/false or a number; correct means >= 1.0)."
            ) from None
        if math.isnan(as_float):
            return None
        return as_float >= 1.0
    if isinstance(value, Mapping) or isinstance(value, (list, tuple)):
        raise TypeError(
            f"{where}: score value {value!r} holds several values; kpass needs one correct/incorrect "
            "value per sample. In a task, apply kpass metrics to one key with "
            "metrics={'<key>': [kpass_metrics(...)]}; for a log, score it with a scalar scorer."
        )
    raise TypeError(f"{where}: score value of type {type(value).__name__} is not a correct/incorrect value.")


def clean_answer(value: Any) -> str | None:
    """An extracted answer as kpass compares it: stripped text, ``None`` for no answer.

    ``None``, NaN and text that is empty after stripping surrounding whitespace all mean "no
    extractable answer"; nothing else is normalised (``"4"`` and ``"4.0"`` stay different).

    Examples
    --------
    >>> [clean_answer(v) for v in (" 42 ", "", None, float("nan"), 7)]
    ['42', None, None, None, '7']
    """
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    text = str(value).strip()
    return text or None


def answer_of(score: Any) -> str | None:
    """The answer of one epoch for cons@k: ``Score.metadata["kpass"]["answer"]`` when a kpass
    scorer recorded it (even when it recorded ``None``), else ``Score.answer``; see
    :func:`clean_answer`. The Inspect metrics, the reducers and the log reader all use it."""
    data = kpass_data(score)
    if data is not None:
        return clean_answer(data.get("answer"))
    return clean_answer(getattr(score, "answer", None))


def kpass_metric_definitions(spec: Any) -> list[Any]:
    """The kpass metrics (``kpass/...``) a task declares, as Inspect records them.

    Parameters
    ----------
    spec : EvalSpec, Task, the ``eval`` dict of a log's JSON, or similar
        Anything with ``metrics`` (task-level metrics) and ``scorers`` (each with its own
        ``metrics``): a log header's ``eval``, the ``spec`` of a task-start hook, the task an
        early-stopping manager receives. Metrics may be nested in lists and dicts of lists.

    Returns
    -------
    list
        The metric definitions (objects or dicts with ``name`` and ``options``, e.g. Inspect's
        ``MetricSpec``; read their fields with :func:`field_of`) whose name starts with ``kpass/``, in declaration order (task metrics
        first).
    """
    found: list[Any] = []

    def visit(metrics: Any) -> None:
        if metrics is None:
            return
        if isinstance(metrics, Mapping) and isinstance(metrics.get("name"), str):
            if metrics["name"].startswith("kpass/"):  # a definition as a log's JSON holds it
                found.append(metrics)
            return
        if isinstance(metrics, Mapping):
            for group in metrics.values():
                visit(group)
            return
        for item in metrics:
            if isinstance(item, (Mapping, list, tuple)):
                visit(item)
            elif str(getattr(item, "name", "")).startswith("kpass/"):
                found.append(item)

    visit(field_of(spec, "metrics"))
    for scorer in field_of(spec, "scorers") or []:
        visit(field_of(scorer, "metrics"))
    return found


def field_of(obj: Any, name: str) -> Any:
    """``obj.name``, or ``obj[name]`` for the dicts of a log's JSON (None when absent)."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def finished_flag(stop_reason: str | None, correct: bool, answer: str | None = None, *,
                  open_reasoning: bool = False) -> bool | None:
    """Whether an epoch finished: the one precedence of every Inspect path (module docstring).

    Parameters
    ----------
    stop_reason : str or None
        ``output.stop_reason`` of the epoch's final generation (None: no generation).
    correct : bool
        The epoch's verdict.
    answer : str or None, optional
        The extracted answer, if an extractor ran; consulted only when the stop reason does not
        say whether the generation was cut off.
    open_reasoning : bool, default: False
        The completion ends inside an unclosed reasoning block: not finished (when wrong).

    Returns
    -------
    bool or None
        ``True`` when correct or stopped on its own; ``False`` when the token limit cut it off
        (and it is wrong); with an unknown stop reason, ``True`` if an answer was extracted,
        else ``None`` (unknown).

    Examples
    --------
    >>> [finished_flag(r, c, a) for r, c, a in
    ...  [("stop", False, None), ("max_tokens", True, "4"), ("max_tokens", False, "4"),
    ...   (None, False, "4"), (None, False, None)]]
    [True, True, False, True, None]
    """
    if correct:
        return True
    if open_reasoning or stop_reason in TRUNCATED_STOP_REASONS:
        return False
    if stop_reason is not None and stop_reason not in _UNKNOWN_STOP_REASONS:
        return True
    return True if answer is not None else None


def kpass_data(score: Any) -> Mapping[str, Any] | None:
    """The ``Score.metadata["kpass"]`` dictionary written by the kpass scorers, if any."""
    metadata = getattr(score, "metadata", None) or {}
    data = metadata.get(KPASS_METADATA_KEY)
    return data if isinstance(data, Mapping) else None


@dataclasses.dataclass(frozen=True)
class LoggedGeneration:
    """What a log records of an epoch's final generation, beside its score (the log reader has it;
    a metric inside Inspect does not).

    Attributes
    ----------
    output_tokens : int, optional
        Output tokens from Inspect's usage data, used when the kpass data has none.
    stop_reason : str, optional
        Stop reason of the final generation (None: the epoch has no generation); decides
        ``finished`` when the score has no kpass data (:func:`finished_flag`).
    output_text : Mapping, optional
        ``{"output": text}`` (or ``{"completion": text}``, see *Output text*) added to the
        record's metadata.
    reasoning_markers : (str, str) or None
        Markers of a reasoning block: a completion in ``output_text`` that ends inside an unclosed
        one is unfinished; None: not looked for.
    """

    output_tokens: int | None = None
    stop_reason: str | None = None
    output_text: Mapping[str, str] | None = None
    reasoning_markers: tuple[str, str] | None = DEFAULT_REASONING_MARKERS


def sample_record(
    *,
    sample_id: Any,
    epoch: int | None,
    score: Any,
    sample_metadata: Mapping[str, Any] | None,
    cluster: str | None,
    where: str,
    generation: LoggedGeneration | None = None,
) -> dict[str, Any] | None:
    """One sample-table record (without model, task and sample_index) from one epoch's score.

    Parameters
    ----------
    sample_id : int or str
        Inspect sample id (``None`` is an error: kpass needs ids to group epochs).
    epoch : int or None
        1-based epoch, kept in the metadata.
    score : Score
        The epoch's score.
    sample_metadata : Mapping or None
        The sample's metadata (for the cluster).
    cluster : str or None
        Sample-metadata key of the cluster; a sample without it is an error.
    where : str
        Description of the sample for error messages.
    generation : LoggedGeneration, optional
        The final generation as the log records it (the log reader): its token count, stop reason
        and text. Without it (or without its text), what the kpass scorer recorded
        (``open_reasoning``, with the default markers) decides an open reasoning block, and
        ``finished`` is only what the kpass data says.

    Returns
    -------
    dict or None
        ``None`` when the epoch is unscored (NaN value).
    """
    if sample_id is None:
        raise ValueError(f"{where}: the sample has no id; kpass groups epochs by sample id.")
    correct = correct_from_value(score.value, where=where)
    if correct is None:
        return None
    data = kpass_data(score)
    record: dict[str, Any] = {"problem_id": str(sample_id), "correct": correct}
    output_text = generation.output_text if generation is not None else None
    shown = output_text or {}
    text = next((shown[key] for key in ("output", "completion") if key in shown), None)
    open_reasoning = (ends_in_open_reasoning(text, generation.reasoning_markers)
                      if generation is not None and output_text is not None
                      else bool(data is not None and data.get("open_reasoning")))
    answer = answer_of(score)
    if data is not None or answer is not None:
        record["answer"] = answer
    if data is not None:
        if data.get("output_tokens") is not None:
            record["output_tokens"] = data["output_tokens"]
        if "stop_reason" in data:
            # decided again from what the scorer saw, so that logs of earlier kpass versions
            # (which trusted the extractor over the stop reason) follow today's precedence too
            record["finished"] = finished_flag(data.get("stop_reason"), correct, answer,
                                               open_reasoning=open_reasoning)
        elif data.get("finished") is not None:
            record["finished"] = (bool(data["finished"]) and not open_reasoning) or correct
        if "cot_verdicts" in data:  # written by cot_verifier (None: wrong answer, never verified)
            verdicts = data["cot_verdicts"]
            record["cot_verdicts"] = list(verdicts) if verdicts is not None else []
    if generation is not None:
        if "output_tokens" not in record and generation.output_tokens is not None:
            record["output_tokens"] = int(generation.output_tokens)
        if "finished" not in record:
            record["finished"] = finished_flag(generation.stop_reason, correct, answer, open_reasoning=open_reasoning)
    if cluster is not None:
        value = (sample_metadata or {}).get(cluster)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            raise ValueError(
                f"{where}: the sample has no metadata value for the cluster key {cluster!r}; every "
                f"sample needs one (as for Inspect's stderr(cluster={cluster!r}))."
            )
        record["cluster"] = str(value)
    record["metadata"] = {"epoch": epoch, **(output_text or {})}
    return record


def assign_sample_indices(records: list[dict[str, Any]], epochs: list[int | None]) -> None:
    """Set ``sample_index`` to the 0-based rank of each record's epoch within its
    ``(model, task, problem_id)``, in place (epochs may have gaps after unscored epochs)."""
    order = sorted(
        range(len(records)),
        key=lambda i: (records[i].get("model", ""), records[i].get("task", ""),
                       records[i]["problem_id"], epochs[i] if epochs[i] is not None else i),
    )
    previous = None
    rank = 0
    for i in order:
        key = (records[i].get("model", ""), records[i].get("task", ""), records[i]["problem_id"])
        rank = rank + 1 if key == previous else 0
        previous = key
        records[i]["sample_index"] = rank


def check_required_columns(specs: Sequence[Any], records: list[dict[str, Any]]) -> None:
    """A metric whose column no score carries (fin@k without a finished flag, CoT-Pass@k without
    verdicts) is an error that says what to run, not a bare DataError."""
    needs_finished = [spec.name for spec in specs if "finished" in spec.requires]
    if needs_finished and not any(record.get("finished") is not None for record in records):
        raise ValueError(
            f"{', '.join(needs_finished)} needs each epoch's stop reason, which these scores do not carry "
            "(Inspect gives metrics the scores only, not the generations). Score with kpass_scorer: in a task, "
            "scorer=kpass_scorer(match()); for a log made without kpass, "
            "inspect score LOG --scorer kpass/kpass_scorer -S scorer=<the log's scorer, e.g. match> "
            "--metric kpass/fin_at_k; or read the log with kpass report -m fin@1 LOG."
        )
    needs_verdicts = [spec.name for spec in specs if "cot_verdicts" in spec.requires]
    if needs_verdicts and not any("cot_verdicts" in record for record in records):
        raise ValueError(f"{', '.join(needs_verdicts)} needs the verdicts that cot_verifier() records; "
                         "score the task with cot_verifier(...).")


# --------------------------------------------------------------------------------------------
# the types of the log's JSON fields kpass reads (a hostile or damaged log: one line, no traceback)


class LogFieldError(ValueError):
    """A field of an Inspect log's JSON of the wrong type or value; ``field`` is its dotted path
    (``output.usage.output_tokens``, ``eval.config.epochs``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


_JSON_KINDS = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
               float: "a number"}


def _wrong(field: str, value: Any, expected: str) -> LogFieldError:
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return LogFieldError(field, f"{_JSON_KINDS.get(type(value), type(value).__name__)} {shown} where Inspect "
                                f"writes {expected}")


def _is_count(value: Any) -> bool:
    """An integer >= 0 (``3.0`` too, as Inspect's own models read it); never a boolean."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value >= 0
    return isinstance(value, float) and value.is_integer() and value >= 0


def _optional(container: Mapping[str, Any], key: str, field: str, accept: Any, expected: str) -> Any:
    value = container.get(key)
    if value is not None and not accept(value):
        raise _wrong(field, value, expected)
    return value


def _mapping(value: Any) -> bool:
    return isinstance(value, Mapping)


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _sample_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def check_header_fields(header: Any) -> None:
    """Raise :class:`LogFieldError` for a header field kpass reads that has the wrong type:
    ``eval`` (an object), ``eval.model`` and ``eval.task`` (strings), ``status``, ``eval.eval_id``
    (strings), ``eval.config.epochs`` (an integer >= 1), ``eval.dataset.samples`` (an integer >= 0),
    ``eval.dataset.sample_ids`` (an array of ids), ``eval.scorers`` and ``eval.metrics``."""
    if not isinstance(header, Mapping):
        raise _wrong("header", header, "an object")
    spec = header.get("eval")
    if not isinstance(spec, Mapping):
        raise _wrong("eval", spec, "an object") if spec is not None else LogFieldError("eval", "missing")
    for key in ("model", "task"):
        if not isinstance(spec.get(key), str) or not spec[key]:
            raise (_wrong(f"eval.{key}", spec[key], "a non-empty string") if spec.get(key) is not None
                   else LogFieldError(f"eval.{key}", "missing"))
    _optional(header, "status", "status", _text, "a string")
    _optional(spec, "eval_id", "eval.eval_id", _text, "a string")
    config = _optional(spec, "config", "eval.config", _mapping, "an object") or {}
    _optional(config, "epochs", "eval.config.epochs", lambda v: _is_count(v) and v >= 1, "an integer >= 1")
    dataset = _optional(spec, "dataset", "eval.dataset", _mapping, "an object") or {}
    _optional(dataset, "samples", "eval.dataset.samples", _is_count, "an integer >= 0")
    ids = _optional(dataset, "sample_ids", "eval.dataset.sample_ids", lambda v: isinstance(v, list), "an array")
    for position, sample_id in enumerate(ids or ()):
        if not _sample_id(sample_id):
            raise _wrong(f"eval.dataset.sample_ids[{position}]", sample_id, "a string or an integer")
    _optional(spec, "scorers", "eval.scorers", lambda v: isinstance(v, list), "an array")
    _optional(spec, "metrics", "eval.metrics", lambda v: isinstance(v, (list, Mapping)), "an array or an object")


def check_sample_fields(sample: Any, model: str) -> None:
    """Raise :class:`LogFieldError` for a sample field kpass reads that has the wrong type: ``id``
    (a string or an integer), ``epoch`` (an integer >= 1), ``scores`` (an object of score objects),
    ``metadata``, ``target``, ``output`` (its ``usage`` token counts are integers >= 0, never
    ``2.7`` or ``true``; its ``choices``, ``stop_reason``, ``completion`` and message content) and
    the evaluated model's ``model_usage``."""
    if not isinstance(sample, Mapping):
        raise _wrong("sample", sample, "an object")
    _optional(sample, "id", "id", _sample_id, "a string or an integer")
    _optional(sample, "epoch", "epoch", lambda v: _is_count(v) and not isinstance(v, float) and v >= 1,
              "an integer >= 1")
    scores = _optional(sample, "scores", "scores", _mapping, "an object") or {}
    for name, score in scores.items():
        _optional(scores, name, f"scores.{name}", _mapping, "a score object")
        _optional(score or {}, "metadata", f"scores.{name}.metadata", _mapping, "an object")
    _optional(sample, "metadata", "metadata", _mapping, "an object")
    target = sample.get("target")
    if target is not None and not (isinstance(target, str) or (
            isinstance(target, list) and all(isinstance(item, str) for item in target))):
        raise _wrong("target", target, "a string or an array of strings")
    output = _optional(sample, "output", "output", _mapping, "an object") or {}
    usage = _optional(output, "usage", "output.usage", _mapping, "an object") or {}
    for key in ("output_tokens", "reasoning_tokens"):
        _optional(usage, key, f"output.usage.{key}", _is_count, "an integer >= 0")
    _optional(output, "completion", "output.completion", _text, "a string")
    choices = _optional(output, "choices", "output.choices", lambda v: isinstance(v, list), "an array") or []
    for position, choice in enumerate(choices[:1]):  # kpass reads the first choice
        field = f"output.choices[{position}]"
        if not isinstance(choice, Mapping):
            raise _wrong(field, choice, "an object")
        _optional(choice, "stop_reason", f"{field}.stop_reason", _text, "a string")
        message = _optional(choice, "message", f"{field}.message", _mapping, "an object") or {}
        _optional(message, "content", f"{field}.message.content", lambda v: isinstance(v, (str, list)),
                  "a string or an array")
    model_usage = _optional(sample, "model_usage", "model_usage", _mapping, "an object") or {}
    total = _optional(model_usage, model, f"model_usage.{model}", _mapping, "an object") or {}
    _optional(total, "output_tokens", f"model_usage.{model}.output_tokens", _is_count, "an integer >= 0")
