"""Whether an lm-eval generation finished, decided only from evidence (issue #33).

lm-eval's samples files log no finish reason and no token count, so "a non-empty generation" is
no evidence that it finished: aime24 at ``max_gen_toks=120`` has 190 of 240 generations cut off,
and calling them finished reads fin@1 = 1.000. :func:`finished_flag` is the one rule of every
lm-eval path (the post-hoc reader and the live ``kpass-lm-eval`` run), in this order:

1. a sample judged *correct* emitted its answer: finished (the sample table rejects
   ``correct=true, finished=false``, so pass@1 = fin@1 x pass@1 | fin holds);
2. a generation that ends inside an unclosed reasoning block (the last ``<think>`` after the
   last ``</think>``; :data:`DEFAULT_REASONING_MARKERS`, configurable): **not finished**, whatever
   stopped it (the cap, or a stop sequence in the middle of the reasoning);
3. the API's finish reason where it was observed (the live run records it,
   :class:`FinishReasonLog`): ``"length"`` (and ``"max_tokens"``, ``"model_length"``) is cut,
   ``"stop"`` (and the other reasons of :data:`FINISHED_REASONS`) is finished;
4. the generation's length in tokens where a tokenizer counted it: it reached the request's
   ``max_gen_toks`` (cut, not finished) or stopped below it (finished: on its own or at a stop
   sequence). The model's own tokenizer gives exact counts; a tokenizer declared approximate gives
   counts that may be off near the limit, and the reader says so in a note;
5. else **unknown** (null): fin@k refuses and names what to give (the model's tokenizer).

The live run's evidence travels to the post-hoc reader of the same output: ``kpass-lm-eval`` records,
per task, one character per generation (:func:`evidence_strings`: ``f`` finished, ``c`` cut at the
limit, ``.`` unknown) under ``results["kpass"]["tasks"][task]["finish_evidence"]`` in lm-eval's
results file, and ``kpass report`` on that output reads them back (:func:`recorded_finish_reasons`),
so both decide ``finished`` from the same evidence and give the same fin@k and cons@k.

No lm-eval import here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "CUT_REASONS",
    "DEFAULT_REASONING_MARKERS",
    "FINISHED_REASONS",
    "EVIDENCE_FIELD",
    "FinishReasonLog",
    "check_reasoning_markers",
    "count_tokens",
    "ends_in_open_reasoning",
    "finished_flag",
    "finishing_note",
    "generation_token_counts",
    "evidence_strings",
    "parse_reasoning_markers",
    "live_evidence",
    "recorded_finish_reasons",
    "resolve_tokenizer",
]

#: ``(opening, closing)`` markers of a reasoning block (DeepSeek-R1, Qwen3, ...).
DEFAULT_REASONING_MARKERS: tuple[str, str] = ("<think>", "</think>")
#: API finish reasons that mean the generation was cut off by its token limit.
CUT_REASONS = frozenset({"length", "max_tokens", "model_length"})
#: API finish reasons that mean the generation stopped on its own (or at a stop sequence).
FINISHED_REASONS = frozenset({"stop", "eos", "end_turn", "stop_sequence", "tool_calls", "function_call",
                              "content_filter"})
#: Key of a task's finish evidence in ``results["kpass"]["tasks"][task]`` (written by ``kpass-lm-eval``).
EVIDENCE_FIELD = "finish_evidence"
#: One character per generation in :data:`EVIDENCE_FIELD`: finished, cut at the limit, unknown.
_EVIDENCE_CODES = {True: "f", False: "c", None: "."}
#: The finish reason each evidence character stands for when it is read back.
_EVIDENCE_REASONS = {"f": "stop", "c": "length", ".": None}


def check_reasoning_markers(markers: Any) -> tuple[str, str] | None:
    """``markers`` checked: a pair ``(opening, closing)`` of distinct non-empty strings, or None
    (reasoning blocks are not looked for).

    Raises
    ------
    ValueError
        Not two distinct non-empty strings.

    Examples
    --------
    >>> check_reasoning_markers(["<reasoning>", "</reasoning>"])
    ('<reasoning>', '</reasoning>')
    """
    if markers is None:
        return None
    if (isinstance(markers, str) or not isinstance(markers, Sequence) or len(markers) != 2
            or not all(isinstance(marker, str) and marker for marker in markers) or markers[0] == markers[1]):
        raise ValueError("`reasoning_markers` must be two distinct non-empty strings (opening, closing), such as "
                         f"('<think>', '</think>'), or None; got {markers!r}.")
    return str(markers[0]), str(markers[1])


def ends_in_open_reasoning(text: Any, markers: tuple[str, str] | None = DEFAULT_REASONING_MARKERS) -> bool:
    """Whether ``text`` ends inside a reasoning block: its last opening marker comes after its
    last closing marker (``False`` for non-text and when ``markers`` is None).

    Examples
    --------
    >>> [ends_in_open_reasoning(t) for t in ["<think> a </think> 4", "<think> a b", "4", "<think>x</think><think>y"]]
    [False, True, False, True]
    """
    if markers is None or not isinstance(text, str):
        return False
    opening, closing = markers
    start = text.rfind(opening)
    return start >= 0 and start > text.rfind(closing)


def finished_flag(correct: bool, text: Any, *, max_gen_toks: int | None = None, token_count: int | None = None,
                  finish_reason: str | None = None,
                  reasoning_markers: tuple[str, str] | None = DEFAULT_REASONING_MARKERS) -> bool | None:
    """Whether one lm-eval generation finished, from evidence only (module docstring).

    Parameters
    ----------
    correct : bool
        The task's verdict on the sample.
    text : str
        The raw generation.
    max_gen_toks : int, optional
        The request's generation limit.
    token_count : int, optional
        The generation's length in tokens (a tokenizer's count).
    finish_reason : str, optional
        The API's finish reason, where it was observed.
    reasoning_markers : (str, str) or None
        Opening and closing marker of a reasoning block; None: not looked for.

    Returns
    -------
    bool or None
        ``True`` finished, ``False`` cut off or stopped inside its reasoning, ``None`` unknown.

    Examples
    --------
    >>> [finished_flag(c, t, max_gen_toks=8, token_count=n, finish_reason=r) for c, t, n, r in [
    ...     (True, "x", 8, None), (False, "<think> a", 3, "stop"), (False, "x", 3, "length"),
    ...     (False, "x", 8, None), (False, "x", 3, None), (False, "x", None, None)]]
    [True, False, False, False, True, None]
    """
    if correct:
        return True
    if ends_in_open_reasoning(text, reasoning_markers):
        return False
    if finish_reason in CUT_REASONS:
        return False
    if finish_reason in FINISHED_REASONS:
        return True
    if token_count is not None and max_gen_toks is not None:
        return int(token_count) < int(max_gen_toks)
    return None


def resolve_tokenizer(tokenizer: Any) -> Any:
    """A tokenizer object from a spec (``"hf:PATH"``, ``"tiktoken:cl100k_base"``) or an object with
    ``token_ends`` (returned as it is); ``None`` stays ``None``.

    Raises
    ------
    ValueError
        A spec the registry cannot build (unknown name, file or encoding not installed locally).
    TypeError
        Neither a spec nor a tokenizer object.
    """
    if tokenizer is None or callable(getattr(tokenizer, "token_ends", None)):
        return tokenizer
    if isinstance(tokenizer, str):
        from kpass import get_tokenizer

        return get_tokenizer(tokenizer)
    raise TypeError(f"`tokenizer` must be a spec such as 'hf:tokenizer.json' or an object with token_ends(); "
                    f"got {type(tokenizer).__name__}.")


def count_tokens(texts: Sequence[Any], tokenizer: Any) -> list[int | None]:
    """Length in tokens of each text (``None`` for a non-text), tokenized in one batch."""
    known = [i for i, text in enumerate(texts) if isinstance(text, str)]
    batch = getattr(tokenizer, "token_ends_batch", None)
    strings = [texts[i] for i in known]
    ends = batch(strings) if callable(batch) else [tokenizer.token_ends(t) for t in strings]
    counts: list[int | None] = [None] * len(texts)
    for i, positions in zip(known, ends, strict=True):
        counts[i] = int(len(positions))
    return counts


def generation_token_counts(responses: Sequence[Sequence[Any]], tokenizer: Any) -> list[list[int | None]] | None:
    """:func:`count_tokens` of every document's generations (``responses[d][i]``), in one batch;
    None without a tokenizer."""
    if tokenizer is None:
        return None
    flat = count_tokens([text for texts in responses for text in texts], tokenizer)
    out, start = [], 0
    for texts in responses:
        out.append(flat[start:start + len(texts)])
        start += len(texts)
    return out


def finishing_note(where: str, task: str, flags: Sequence[bool | None], *, max_gen_toks: int,
                   tokenizer: Any = None, approximate: bool = False, observed_reasons: bool = False) -> str | None:
    """The table note that says how ``finished`` was decided for a task's generations, or None.

    Names the evidence (finish reasons, the tokenizer and the limit) and, when some flags stay
    unknown, what to give; with an approximate tokenizer, that its counts are approximate.
    """
    total = len(flags)
    unfinished = sum(1 for flag in flags if flag is False)
    unknown = sum(1 for flag in flags if flag is None)
    if tokenizer is None and not observed_reasons and not unknown:
        return None
    evidence = []
    if observed_reasons:
        evidence.append("the API's finish reasons")
    if tokenizer is not None:
        name = getattr(tokenizer, "name", type(tokenizer).__name__)
        evidence.append(f"{'approximate ' if approximate else ''}token counts of {name} against max_gen_toks="
                        f"{max_gen_toks}")
    evidence.append("unclosed reasoning blocks")
    text = (f"{where}: task {task!r}: finished decided from {', '.join(evidence)}: {unfinished} of {total} "
            "generations unfinished")
    if unknown:
        text += (f", {unknown} unknown (lm-eval logs no finish reason; give the model's tokenizer, --tokenizer "
                 f"hf:PATH/tokenizer.json, to count them against max_gen_toks={max_gen_toks})")
    if tokenizer is not None and approximate:
        text += (f"; the counts are approximate ({getattr(tokenizer, 'name', 'the tokenizer')} is not declared "
                 "the model's own tokenizer), so generations near the limit may be misjudged")
    return text


def parse_reasoning_markers(text: str) -> tuple[str, str] | tuple[()]:
    """``OPEN,CLOSE`` or ``none`` (:func:`kpass.data.tokenizers.parse_reasoning_markers`), the value of
    ``--kpass-reasoning-markers``.

    Raises
    ------
    argparse.ArgumentTypeError
        Not two distinct non-empty markers.
    """
    import argparse

    from kpass.data.tokenizers import parse_reasoning_markers as parse

    try:
        return parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def evidence_strings(doc_ids: Sequence[Any], reasons: Sequence[Sequence[str | None]],
                     counts: Sequence[Sequence[int | None]] | None, *, max_gen_toks: int) -> dict[str, str]:
    """A live run's evidence per document, compactly: ``str(doc_id)`` -> one character per
    generation (``f`` finished, ``c`` cut at ``max_gen_toks``, ``.`` unknown), from the API's
    finish reasons and the model tokenizer's counts, before the verdict and reasoning blocks
    are consulted (the reader applies those again, :func:`finished_flag`).

    Examples
    --------
    >>> evidence_strings([3, 7], [["stop", None], ["length", None]], [[None, 8], [None, None]], max_gen_toks=8)
    {'3': 'fc', '7': 'c.'}
    """
    out = {}
    for d, doc_id in enumerate(doc_ids):
        row_counts = counts[d] if counts is not None else [None] * len(reasons[d])
        out[str(doc_id)] = "".join(
            _EVIDENCE_CODES[finished_flag(False, None, max_gen_toks=max_gen_toks, token_count=count, finish_reason=reason,
                                          reasoning_markers=None)]
            for reason, count in zip(reasons[d], row_counts, strict=True))
    return out


def recorded_finish_reasons(results: Mapping[str, Any], task: str, doc_ids: Sequence[Any],
                            responses: Sequence[Sequence[Any]]) -> list[list[str | None]] | None:
    """The finish reasons a live ``kpass-lm-eval`` run recorded for ``task``
    (:func:`evidence_strings` in ``results["kpass"]``), one per generation of each document, or
    None when the run recorded none (a plain ``lm_eval`` run, an older kpass).

    Raises
    ------
    ValueError
        The record does not fit the samples (a document missing, or another number of generations).
    """
    kpass_part = results.get("kpass")
    tasks = kpass_part.get("tasks") if isinstance(kpass_part, Mapping) else None
    details = tasks.get(task) if isinstance(tasks, Mapping) else None
    recorded = details.get(EVIDENCE_FIELD) if isinstance(details, Mapping) else None
    if not isinstance(recorded, Mapping):
        return None
    out = []
    for doc_id, texts in zip(doc_ids, responses, strict=True):
        codes = recorded.get(str(doc_id))
        if not isinstance(codes, str) or len(codes) != len(texts) or set(codes) - set(_EVIDENCE_REASONS):
            raise ValueError(f"results['kpass']['tasks'][{task!r}][{EVIDENCE_FIELD!r}] does not fit the samples: "
                             f"doc_id {doc_id} has {len(texts)} generations, the record {codes!r}")
        out.append([_EVIDENCE_REASONS[code] for code in codes])
    return out


class FinishReasonLog:
    """The finish reason the API gave each generated text, for the live ``kpass-lm-eval`` run.

    lm-eval keeps only the generated texts, so the reasons are recorded where the API response is
    parsed (:meth:`wrap`) and looked up by text afterwards. A text the API returned with two
    different reasons (a natural stop and a cut that happen to read alike) is ambiguous: its
    reason is unknown, never guessed.
    """

    def __init__(self) -> None:
        self._reasons: dict[str, set[str]] = {}

    def __len__(self) -> int:
        return len(self._reasons)

    def record(self, outputs: Any, texts: Sequence[Any]) -> None:
        """Record the reasons of one parsed API response: ``outputs`` (a response dict or a list of
        them, as ``parse_generations`` takes them) and the texts it returned, in its order."""
        reasons: list[Any] = []
        for output in outputs if isinstance(outputs, list) else [outputs]:
            choices = output.get("choices") if isinstance(output, Mapping) else None
            if not isinstance(choices, list):
                return
            ordered: list[Any] = [None] * len(choices)
            for position, choice in enumerate(choices):
                if not isinstance(choice, Mapping):
                    return
                index = choice.get("index", position)
                if not isinstance(index, int) or not 0 <= index < len(choices):
                    return
                ordered[index] = choice.get("finish_reason")
            reasons.extend(ordered)
        if len(reasons) != len(texts):
            return  # a layout this log does not know: record nothing rather than misalign
        for text, reason in zip(texts, reasons, strict=True):
            if isinstance(text, str) and isinstance(reason, str):
                self._reasons.setdefault(text, set()).add(reason)

    def reason(self, text: Any) -> str | None:
        """The one reason recorded for ``text``, or None (never recorded, or ambiguous)."""
        found = self._reasons.get(text) if isinstance(text, str) else None
        return next(iter(found)) if found is not None and len(found) == 1 else None

    def wrap(self, model: Any) -> bool:
        """Record every response that ``model.parse_generations`` parses (an lm-eval ``TemplateAPI``
        model); returns whether the model was wrapped."""
        parse = getattr(model, "parse_generations", None)
        if not callable(parse) or getattr(parse, "__kpass_finish_reasons__", False):
            return False

        def parse_and_record(outputs: Any, **kwargs: Any) -> Any:
            texts = parse(outputs=outputs, **kwargs)
            try:
                self.record(outputs, list(texts))
            except Exception:  # noqa: BLE001 - never break the run over bookkeeping
                pass
            return texts

        parse_and_record.__kpass_finish_reasons__ = True  # type: ignore[attr-defined]
        model.parse_generations = parse_and_record
        return True


def _model_token_count(model: Any) -> Any:
    """``text -> number of tokens`` with the lm-eval model's own tokenizer (``tok_encode`` of a
    ``TemplateAPI`` with a tokenizer backend, of ``HFLM``...), or None when it has none."""
    encode = getattr(model, "tok_encode", None)
    if getattr(model, "tokenizer", None) is None or not callable(encode):
        return None

    def count(text: str) -> int | None:
        try:
            return len(encode(text, add_special_tokens=False))
        except TypeError:
            return len(encode(text))
        except Exception:  # noqa: BLE001 - a tokenizer that cannot count: no evidence
            return None

    return count


def live_evidence(model: Any, log: FinishReasonLog | None, responses: Sequence[Sequence[Any]],
                  ) -> tuple[list[list[str | None]], list[list[int | None]] | None]:
    """``(finish_reasons, token_counts)`` of a live run's generations (``responses[d][i]``): the
    reasons the API gave (``log``), and, for texts without one, counts with the model's own
    tokenizer where lm-eval has one (None otherwise). ``model`` may be lm-eval's ``CachingLM`` (its
    ``lm`` is the model)."""
    if type(model).__name__ == "CachingLM":
        model = model.lm
    reasons = [[log.reason(text) if log is not None else None for text in texts] for texts in responses]
    count = _model_token_count(model)
    if count is None:
        return reasons, None
    counts = [[count(text) if reason is None and isinstance(text, str) else None
               for text, reason in zip(texts, row, strict=True)] for texts, row in zip(responses, reasons, strict=True)]
    return reasons, counts
