r"""Inspect scorers that record what kpass's k-sample metrics need, for every epoch.

:func:`kpass_scorer` wraps any Inspect scorer. The wrapped scorer's ``Score`` is returned
unchanged (value, answer, explanation, reason, metadata) except that one key is added to
``Score.metadata``::

    metadata["kpass"] = {
        "answer": "42",            # extracted final answer (None: nothing extractable); cons@k
        "stop_reason": "stop",     # state.output.stop_reason of the final generation
        "output_tokens": 187,      # state.output.usage.output_tokens (None without usage)
        "finished": True,          # see below; fin@k
        "epoch": 3,                # state.epoch (1-based)
        "output_digest": "9c1f...",  # output_digest(state.output): the seed-trap check of the metrics
    }

:func:`cot_verifier` does the same and, for samples whose final answer is correct, asks an LLM
judge several times whether the chain of thought is correct too, adding
``"cot_verdicts": [True, False, None, ...]`` (``None``: the judge's reply had no verdict line).
Samples with a wrong answer are never sent to the judge (``"cot_verdicts": None``), as
CoT-Pass@k counts only answer-correct samples (Wen et al. 2025, arXiv:2506.14245). The judges'
raw replies go under a separate key, ``metadata["kpass_cot_replies"]``, so that the small
``"kpass"`` dictionary stays under Inspect's 1 kB limit for sample summaries.

Finished
--------
A sample is *finished* when it emitted its final answer before its token limit. The rule is
:func:`kpass.adapters.inspect_records.finished_flag`, shared with the log reader and the metrics:
a correct verdict is finished; otherwise a generation stopped at its limit (``stop_reason``
``"max_tokens"`` or ``"model_length"``) is **not** finished, even when the extractor finds an
answer in the cut text; a generation that stopped on its own is finished (without an extractable
answer it is simply wrong); with no stop reason, the extractor decides (answer found: finished,
else unknown).

Answers
-------
``answer=None`` takes the wrapped scorer's ``Score.answer`` (Inspect's ``match``, ``pattern``,
``answer`` and ``choice`` scorers fill it). A regular expression takes the *last* match in
``state.output.completion`` (group 1 if the pattern has a group, else the whole match); a callable
``f(completion) -> str | None`` is used as is. Answers are stripped of surrounding whitespace;
anything else (case, ``4`` versus ``4.0``) is compared literally by cons@k, so normalise in the
callable when needed.

Both scorers take ``metrics=``; by default they carry the wrapped scorer's metrics, so Inspect's
own report (``accuracy``, ``stderr``) is unchanged. ``Task(metrics=[...])`` replaces the metrics of
every scorer, as always in Inspect.

Framework-side module (Inspect imported at module level; loaded only by Inspect and task files).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from inspect_ai.model import ChatMessageUser, ContentReasoning, Model, get_model
from inspect_ai.scorer import Metric, Score, Scorer, Target, scorer, value_to_float
from inspect_ai.solver import TaskState
from inspect_ai.util import collect

from .inspect_compat import scorer_metrics, set_scorer_metrics
from .inspect_compat import register_scorer_builder
from .inspect_records import TRUNCATED_STOP_REASONS, clean_answer, finished_flag
from .lm_eval_finishing import ends_in_open_reasoning

__all__ = [
    "COT_VERIFIER_TEMPLATE",
    "KPASS_METADATA_KEY",
    "TRUNCATED_STOP_REASONS",
    "cot_verifier",
    "kpass_scorer",
    "output_digest",
    "parse_cot_verdict",
]

#: ``Score.metadata`` key holding the per-epoch data that kpass metrics read.
KPASS_METADATA_KEY = "kpass"

#: ``Score.metadata`` key holding the CoT judge's raw replies (kept apart: they can be long).
COT_REPLIES_METADATA_KEY = "kpass_cot_replies"

#: The prompt sent to the CoT judge. Placeholders: ``{question}`` (the sample's input text),
#: ``{target}`` (the reference answer), ``{answer}`` (the extracted final answer) and
#: ``{solution}`` (the model's full completion). The judge must end with a verdict line that
#: :func:`parse_cot_verdict` reads.
COT_VERIFIER_TEMPLATE = """\
You are checking a worked solution to a problem. Its final answer has already been checked and \
matches the reference answer. Your job is to decide whether the REASONING that leads to that \
answer is also correct.

The reasoning is correct only if every step is valid: no false statement, no arithmetic or \
algebra error (even one that is later cancelled out by another error), no unjustified guess or \
jump to the answer, and no step that contradicts the problem statement. Ignore style, verbosity \
and formatting.

[Problem]
{question}

[Reference answer]
{target}

[Solution to check (final answer: {answer})]
{solution}

Think step by step, then end your reply with exactly one line, either
VERDICT: CORRECT
if the reasoning is correct, or
VERDICT: INCORRECT
if it contains any error."""

_VERDICT_RE = re.compile(r"VERDICT\s*:\s*\**\s*(CORRECT|INCORRECT)\b", re.IGNORECASE)

AnswerExtractor = Callable[[str], "str | None"]


def parse_cot_verdict(reply: str) -> bool | None:
    """Read the judge's verdict: the last ``VERDICT: CORRECT|INCORRECT`` line of ``reply``.

    Parameters
    ----------
    reply : str
        The judge model's completion.

    Returns
    -------
    bool or None
        ``True`` for CORRECT, ``False`` for INCORRECT, ``None`` when no verdict line is present
        (an invalid verdict: it abstains under the "majority" rule and vetoes under "all").

    Examples
    --------
    >>> parse_cot_verdict("Step 2 divides by zero.\\nVERDICT: INCORRECT")
    False
    >>> parse_cot_verdict("looks fine") is None
    True
    """
    matches = _VERDICT_RE.findall(reply or "")
    if not matches:
        return None
    return matches[-1].upper() == "CORRECT"


def _extractor(answer: str | AnswerExtractor | None) -> AnswerExtractor | None:
    if answer is None or callable(answer):
        return answer
    if not isinstance(answer, str):
        raise TypeError(
            f"`answer` must be None, a regular expression string or a callable; got {answer!r}."
        )
    try:
        compiled = re.compile(answer)
    except re.error as exc:
        raise ValueError(f"`answer` is not a valid regular expression: {answer!r} ({exc}).") from exc

    def extract(completion: str) -> str | None:
        matches = list(compiled.finditer(completion or ""))
        last = matches[-1] if matches else None
        if last is None:
            return None
        return last.group(1) if compiled.groups else last.group(0)

    return extract


def _is_correct(value: Any) -> bool:
    """Inspect's pass_at / pass_k rule: ``value_to_float(value) >= 1.0``."""
    if isinstance(value, (dict, list)):
        return False
    return value_to_float()(value) >= 1.0


def output_digest(output: Any) -> str | None:
    """A 16-hex-digit digest of one generation, to tell identical epochs apart without keeping their text.

    It covers the completion and the reasoning blocks (``ContentReasoning``: two epochs with one short
    answer but different reasoning are different generations) of the first choice; None without a
    generation. Kept in ``Score.metadata["kpass"]["output_digest"]`` by the kpass scorers and taken by the
    kpass metrics' task hook from every sample of a run (:mod:`kpass.adapters.inspect_metrics`), for the
    seed-trap check (:func:`kpass.reports.sample_checks.identical_sample_groups`).

    Examples
    --------
    >>> from inspect_ai.model import ModelOutput
    >>> a, b = ModelOutput.from_content("m", "x = 4"), ModelOutput.from_content("m", "x = 4")
    >>> output_digest(a) == output_digest(b) != output_digest(ModelOutput.from_content("m", "x = 5"))
    True
    """
    import hashlib

    if output is None or not getattr(output, "choices", None):
        return None
    content = output.choices[0].message.content
    parts = [output.completion]
    if not isinstance(content, str):
        parts += [f"{item.reasoning}\x1e{item.signature or ''}" for item in content if isinstance(item, ContentReasoning)]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


def _record(state: TaskState, inner: Score, extract: AnswerExtractor | None) -> dict[str, Any]:
    output = state.output
    completion = output.completion if output is not None else ""
    answer = clean_answer(extract(completion) if extract is not None else inner.answer)
    stop_reason = output.stop_reason if output is not None and output.choices else None
    usage = output.usage if output is not None else None
    output_tokens = int(usage.output_tokens) if usage is not None else None
    open_reasoning = ends_in_open_reasoning(completion)  # stopped inside an unclosed <think> block
    record = {
        "answer": answer,
        "stop_reason": stop_reason,
        "output_tokens": output_tokens,
        "finished": finished_flag(stop_reason, _is_correct(inner.value), answer, open_reasoning=open_reasoning),
        "epoch": int(state.epoch),
        "output_digest": output_digest(output),
    }
    if open_reasoning:  # only then, so that other scores keep the metadata they had
        record["open_reasoning"] = True
    return record


def _with_metadata(inner: Score, extra: dict[str, Any]) -> Score:
    metadata = dict(inner.metadata or {})
    metadata.update(extra)
    return inner.model_copy(update={"metadata": metadata})


def _resolve_metrics(metrics: Any) -> Any:
    """Metric objects of a ``metrics=`` argument, also as Inspect records them in a log (dicts
    ``{"type": "metric", "name", "params"}``), nested in lists and dicts of lists."""
    from inspect_ai.util import registry_create

    if metrics is None:
        return None
    if isinstance(metrics, dict) and metrics.get("type") == "metric" and isinstance(metrics.get("name"), str):
        return registry_create("metric", metrics["name"], **(metrics.get("params") or {}))
    if isinstance(metrics, dict):
        return {key: _resolve_metrics(value) for key, value in metrics.items()}
    if isinstance(metrics, (list, tuple)):
        return [_resolve_metrics(item) for item in metrics]
    return metrics


def _set_metrics(new: Scorer, wrapped: Scorer, metrics: Any) -> Scorer:
    resolved = _resolve_metrics(metrics)
    if resolved is None:
        resolved = scorer_metrics(wrapped)
    elif isinstance(resolved, dict):
        resolved = {key: list(value) for key, value in resolved.items()}
    else:
        resolved = list(resolved)
    return set_scorer_metrics(new, resolved)


def _resolve_scorer(scorer: Any, scorer_args: dict[str, Any] | None, where: str) -> Scorer:
    """The scorer to wrap: a Scorer, or (``inspect score``, a log's options) a registry name such
    as ``"match"`` with ``scorer_args``, or the ``{"type": "scorer", "name", "params"}`` dict that
    Inspect writes into a log for a scorer argument."""
    from inspect_ai.util import registry_create

    if isinstance(scorer, dict) and scorer.get("type") == "scorer" and isinstance(scorer.get("name"), str):
        return registry_create("scorer", scorer["name"], **(scorer.get("params") or {}), **(scorer_args or {}))
    if isinstance(scorer, str):
        try:
            return registry_create("scorer", scorer, **(scorer_args or {}))
        except Exception as exc:
            raise ValueError(f"{where}: cannot create the scorer {scorer!r} to wrap "
                             f"({type(exc).__name__}: {exc}).") from exc
    if callable(scorer):
        if scorer_args:
            raise ValueError(f"{where}: `scorer_args` is only for a scorer given by name; got a Scorer.")
        return scorer
    raise TypeError(f"{where}: `scorer` must be a Scorer or a scorer's registry name (e.g. 'match'); "
                    f"got {scorer!r}. From the CLI: inspect score LOG --scorer kpass/kpass_scorer -S scorer=match.")


def _build_kpass_scorer(scorer: Scorer | str | None = None, answer: str | AnswerExtractor | None = None,
                        scorer_args: dict[str, Any] | None = None, metrics: Any = None) -> Scorer:
    """``kpass/kpass_scorer`` (and ``kpass_scorer``) as Inspect's registry creates it: from Python,
    from a log's scorer options (``inspect score LOG``) or from ``--scorer kpass/kpass_scorer
    -S scorer=match``; the wrapper carries ``metrics`` (default: the wrapped scorer's)."""
    if scorer is None:
        raise TypeError("kpass_scorer needs the scorer to wrap: kpass_scorer(match()) in Python, "
                        "-S scorer=match (and -S scorer_args='{numeric: true}') with inspect score.")
    inner = _resolve_scorer(scorer, scorer_args, "kpass_scorer")
    _extractor(answer)  # validate now, at task construction
    return _set_metrics(_kpass_scorer(inner, answer=answer, metrics=metrics), inner, metrics)


@scorer(metrics=[], name="kpass_scorer")
def _kpass_scorer(scorer: Scorer, answer: str | AnswerExtractor | None = None,
                  metrics: Any = None) -> Scorer:
    # `metrics` is only recorded (in the log's scorer options), for _build_kpass_scorer
    extract = _extractor(answer)

    async def score(state: TaskState, target: Target) -> Score | None:
        inner = await scorer(state, target)
        if inner is None:
            return None
        return _with_metadata(inner, {KPASS_METADATA_KEY: _record(state, inner, extract)})

    return score


def kpass_scorer(
    scorer: Scorer,
    *,
    answer: str | AnswerExtractor | None = None,
    metrics: Sequence[Metric] | dict[str, Sequence[Metric]] | None = None,
) -> Scorer:
    r"""Wrap an Inspect scorer so that every epoch's score keeps what kpass metrics need.

    The wrapped scorer's value (and everything else in its ``Score``) is unchanged; the answer,
    stop reason, output tokens, finished flag and epoch are added under
    ``Score.metadata["kpass"]`` (see the module docstring for the exact content and the
    definition of *finished*).

    Parameters
    ----------
    scorer : Scorer
        Any Inspect scorer, e.g. ``match()`` or ``pattern(r"ANSWER: (\S+)")``.
    answer : str or callable, optional
        How to extract the final answer for cons@k. ``None`` (default): the wrapped scorer's
        ``Score.answer``. A regular expression: its last match in the completion (group 1 if
        present). A callable ``f(completion) -> str | None``.
    metrics : list of Metric or dict, optional
        Metrics of the wrapper; default: the wrapped scorer's metrics.

    Returns
    -------
    Scorer
        Registered as ``kpass/kpass_scorer``.

    Examples
    --------
    >>> from inspect_ai.scorer import match
    >>> from kpass.adapters.inspect_metrics import kpass_metrics
    >>> s = kpass_scorer(match(numeric=True), metrics=[kpass_metrics("pass@1,8", "cons@8")])
    """
    return _build_kpass_scorer(scorer, answer=answer, metrics=metrics)


@scorer(metrics=[], name="cot_verifier")
def _cot_verifier(
    scorer: Scorer,
    model: str | Model | None = None,
    verdicts: int = 3,
    template: str = COT_VERIFIER_TEMPLATE,
    answer: str | AnswerExtractor | None = None,
    model_role: str = "grader",
    metrics: Any = None,
) -> Scorer:
    extract = _extractor(answer)

    async def score(state: TaskState, target: Target) -> Score | None:
        inner = await scorer(state, target)
        if inner is None:
            return None
        record = _record(state, inner, extract)
        replies: list[str] = []
        verdict_list: list[bool | None] | None = None
        if _is_correct(inner.value):
            judge = get_model(model) if model is not None else get_model(role=model_role)
            prompt = template.format(
                question=state.input_text,
                target=target.text,
                answer=record["answer"] if record["answer"] is not None else "(none)",
                solution=state.output.completion if state.output is not None else "",
            )
            results = await collect(*(judge.generate([ChatMessageUser(content=prompt)])
                                      for _ in range(verdicts)))
            replies = [result.completion for result in results]
            verdict_list = [parse_cot_verdict(reply) for reply in replies]
        record["cot_verdicts"] = verdict_list
        extra: dict[str, Any] = {KPASS_METADATA_KEY: record}
        if replies:
            extra[COT_REPLIES_METADATA_KEY] = replies
        return _with_metadata(inner, extra)

    return score


def cot_verifier(
    scorer: Scorer,
    model: str | Model | None = None,
    *,
    verdicts: int = 3,
    template: str = COT_VERIFIER_TEMPLATE,
    answer: str | AnswerExtractor | None = None,
    model_role: str = "grader",
    metrics: Sequence[Metric] | dict[str, Sequence[Metric]] | None = None,
) -> Scorer:
    r"""Score answers with ``scorer`` and have an LLM judge check the reasoning of correct ones.

    For CoT-Pass@k (Wen et al. 2025, arXiv:2506.14245): ``CoT-Pass@k = 1 - C(n-D, k)/C(n, k)``
    where ``D`` counts the samples whose final answer is correct and whose chain of thought the
    verifier accepts. The judge is stochastic, so it is asked ``verdicts`` times per
    answer-correct sample (concurrently, within Inspect's connection limits); the verdicts are stored in ``Score.metadata["kpass"]["cot_verdicts"]``
    and combined later under the rule chosen in the metric spec ("any": at least one yes;
    "majority": more yes than no, invalid verdicts abstain, ties veto; "all": every verdict yes,
    an invalid verdict vetoes). Samples with a wrong answer are never sent to the judge.

    Everything :func:`kpass_scorer` records is recorded too, and the wrapped score's value is
    unchanged.

    Parameters
    ----------
    scorer : Scorer
        The answer scorer (e.g. ``match()``).
    model : str or Model, optional
        The judge. Default: the model bound to ``model_role`` (``--model-role grader=...`` or
        ``Task(model_roles=...)``), else the model being evaluated.
    verdicts : int, default: 3
        Judge calls per answer-correct sample (>= 1). Use a judge temperature above 0, or the
        verdicts of one sample will all be the same.
    template : str, default: :data:`COT_VERIFIER_TEMPLATE`
        Judge prompt with ``{question}``, ``{target}``, ``{answer}`` and ``{solution}``; the reply
        must end with ``VERDICT: CORRECT`` or ``VERDICT: INCORRECT``.
    answer : str or callable, optional
        Answer extraction, as in :func:`kpass_scorer`.
    model_role : str, default: "grader"
        Model role consulted when ``model`` is None.
    metrics : list of Metric or dict, optional
        Metrics of the scorer; default: the wrapped scorer's metrics.

    Returns
    -------
    Scorer
        Registered as ``kpass/cot_verifier``.
    """
    return _build_cot_verifier(scorer, model, verdicts=verdicts, template=template, answer=answer,
                               model_role=model_role, metrics=metrics)


def _build_cot_verifier(scorer: Scorer | str | None = None, model: str | Model | None = None, *,
                        verdicts: int = 3, template: str = COT_VERIFIER_TEMPLATE,
                        answer: str | AnswerExtractor | None = None, model_role: str = "grader",
                        scorer_args: dict[str, Any] | None = None, metrics: Any = None) -> Scorer:
    """``kpass/cot_verifier`` as Inspect's registry creates it (see :func:`_build_kpass_scorer`)."""
    if scorer is None:
        raise TypeError("cot_verifier needs the answer scorer to wrap: cot_verifier(match()) in Python, "
                        "-S scorer=match with inspect score.")
    if not (isinstance(verdicts, int) and not isinstance(verdicts, bool) and verdicts >= 1):
        raise ValueError(f"`verdicts` must be an integer >= 1; got {verdicts!r}.")
    if not isinstance(template, str):
        raise TypeError(f"`template` must be a string; got {type(template).__name__}.")
    missing = [name for name in ("{solution}",) if name not in template]
    if missing:
        raise ValueError(f"`template` must contain the placeholder {missing[0]}.")
    _extractor(answer)
    inner = _resolve_scorer(scorer, scorer_args, "cot_verifier")
    options: dict[str, Any] = {"model": model, "verdicts": verdicts, "answer": answer, "model_role": model_role}
    if template != COT_VERIFIER_TEMPLATE:  # keep the default prompt out of every log header
        options["template"] = template
    if metrics is not None:
        options["metrics"] = metrics
    return _set_metrics(_cot_verifier(inner, **options), inner, metrics)


# Inspect writes a scorer's *unqualified* name into the log (``kpass_scorer``, not
# ``kpass/kpass_scorer``), and ``inspect score LOG`` looks that name up to re-create the scorer;
# Inspect loads every extension's entry point at start-up, so these aliases exist by then.
register_scorer_builder(_build_kpass_scorer, "kpass_scorer")
register_scorer_builder(_build_cot_verifier, "cot_verifier")
