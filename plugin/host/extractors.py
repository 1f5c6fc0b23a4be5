r"""Answer extractors: the answer classes that cons@k votes over.

cons@k is a majority vote over the *answers* of k samples, so it needs each sample's final answer
in the form the task compares (``\boxed{ 7 }`` and ``\boxed{7}`` are one vote). A raw generation is
not an answer: two wrong generations worded differently around the same value never agree, and a
vote over them is silently too high. An *answer extractor* turns one generation into its answer.

Extractors are registered through the ``register_answer_extractors`` hook
(:func:`kpass.hookspecs.register_answer_extractors`) as factories: ``factory(argument)`` returns
``extract(text) -> str | None`` (None: no extractable answer). A spec names one: ``"boxed"``, or
``"regex:PATTERN"`` (the part after the first ``:`` is the factory's argument). Built-ins (the
generic ones; the lm-eval adapter registers ``lm_eval_aime``, ``lm_eval_math``,
``lm_eval_minerva_math`` and ``lm_eval_gsm8k``, which call lm-eval's own normalisers):

* ``boxed``: the content of the last ``\boxed{...}`` (braces balanced), spaces removed;
* ``regex:PATTERN``: the last match of ``PATTERN`` (its first group if it has groups), stripped.

The column :data:`EXTRACTOR_COLUMN` of a sample table names the extractor that produced each
sample's ``answer``; a null value there means *no extractor is known* for the sample's task, and
cons@k refuses it (:func:`kpass.builtin.answer_class_counts`) instead of voting over raw text.
:func:`apply_answer_extractor` re-extracts a table's answers from the generation texts kept in
``metadata["output"]`` (``kpass report --answer-extractor SPEC``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kpass.errors import DataError, UsageError

if TYPE_CHECKING:  # pragma: no cover
    import pluggy

    from kpass.data.table import SampleTable

__all__ = [
    "ANSWER_EXTRACTOR_OPTIONS",
    "EXTRACTOR_COLUMN",
    "AnswerExtractor",
    "apply_answer_extractor",
    "last_boxed_content",
    "register_answer_extractors",
    "resolve_answer_extractor",
]

#: Extra column naming the extractor behind each sample's ``answer`` (null: none known).
EXTRACTOR_COLUMN = "answer_extractor"
#: How a user names an extractor, for messages (``kpass report`` / ``kpass-lm-eval``).
ANSWER_EXTRACTOR_OPTIONS = ("--answer-extractor NAME|regex:PATTERN (kpass report) or "
                            "--kpass-answer NAME|regex:PATTERN (kpass-lm-eval)")
_BOXED = ("\\boxed", "\\fbox")


@dataclasses.dataclass(frozen=True)
class AnswerExtractor:
    """A resolved extractor spec: ``extract(text) -> answer or None``."""

    spec: str
    extract: Callable[[str], str | None]


def last_boxed_content(text: str) -> str | None:
    r"""Content of the last ``\boxed{...}`` (or ``\fbox{...}``) of ``text``, braces balanced.

    Examples
    --------
    >>> last_boxed_content(r"so $x = \boxed{\frac{1}{2}}$, not \boxed{3")
    '\\frac{1}{2}'
    >>> last_boxed_content("no box") is None
    True
    """
    if not isinstance(text, str):
        return None
    for command in _BOXED:
        start = text.rfind(command + "{")
        while start >= 0:
            depth, position = 0, start + len(command)
            for position in range(start + len(command), len(text)):
                if text[position] == "{":
                    depth += 1
                elif text[position] == "}":
                    depth -= 1
                    if depth == 0:
                        return text[start + len(command) + 1:position]
            start = text.rfind(command + "{", 0, start)  # unbalanced: try the one before
    return None


def _boxed_factory(argument: str | None) -> Callable[[str], str | None]:
    if argument:
        raise UsageError(f"answer extractor 'boxed' takes no argument; got 'boxed:{argument}'.")

    def extract(text: str) -> str | None:
        content = last_boxed_content(text)
        if content is None:
            return None
        content = re.sub(r"\s+", "", content)
        return content or None

    return extract


def _regex_factory(argument: str | None) -> Callable[[str], str | None]:
    if not argument:
        raise UsageError("answer extractor 'regex' needs a pattern: regex:PATTERN, e.g. "
                         "'regex:The answer is (-?[0-9]+)'.")
    try:
        pattern = re.compile(argument)
    except re.error as error:
        raise UsageError(f"answer extractor regex:{argument!r} is not a valid regular expression: {error}.") from None
    group = 1 if pattern.groups else 0

    def extract(text: str) -> str | None:
        if not isinstance(text, str):
            return None
        last = None
        for last in pattern.finditer(text):
            pass
        if last is None or last.group(group) is None:
            return None
        answer = last.group(group).strip()
        return answer or None

    return extract


def register_answer_extractors(register: Callable[..., None]) -> None:
    """The built-in generic extractors (``boxed``, ``regex``), for :mod:`kpass.builtin`."""
    register("boxed", _boxed_factory)
    register("regex", _regex_factory)


def resolve_answer_extractor(spec: str, *, plugin_manager: pluggy.PluginManager | None = None) -> AnswerExtractor:
    """The extractor a spec names (``"boxed"``, ``"regex:PATTERN"``, a plugin's name).

    Raises
    ------
    UsageError
        An unknown name (the message lists the registered ones) or a bad argument.
    """
    from kpass.host.manager import get_registry

    if not isinstance(spec, str) or not spec.strip():
        raise UsageError(f"an answer extractor spec is a name or name:argument; got {spec!r}.")
    name, _, argument = spec.partition(":")
    name = name.strip()
    extractors = get_registry(plugin_manager).extractors
    if name not in extractors:
        raise UsageError(f"unknown answer extractor {name!r}; registered: {', '.join(sorted(extractors)) or 'none'} "
                         "(regex takes a pattern: regex:PATTERN).")
    return AnswerExtractor(spec, extractors[name](argument or None))


def apply_answer_extractor(table: SampleTable, spec: str, *,
                           plugin_manager: pluggy.PluginManager | None = None) -> SampleTable:
    """Re-extract every sample's ``answer`` from its generation text with the extractor ``spec``.

    The text is ``metadata["output"]`` (the lm-eval reader, ``kpass-lm-eval``'s sample table and
    the Inspect reader keep it). A sample judged correct gets the ``gold`` answer when the table has
    one (so spellings the judge accepts form one class, the gold class); the others get the
    extracted answer, None when nothing is found (it abstains). :data:`EXTRACTOR_COLUMN` is set
    to ``spec``.

    Raises
    ------
    UsageError
        An unknown extractor or bad argument (:func:`resolve_answer_extractor`).
    DataError
        The table keeps no generation text, or a sample has none (named by file and line).
    """
    extractor = resolve_answer_extractor(spec, plugin_manager=plugin_manager)
    if not table.has_column("metadata"):
        raise DataError(f"--answer-extractor {spec}: the samples keep no generation text (metadata.output) to "
                        "extract answers from", **table.error_location(), field="metadata")
    metadata = table.raw_column("metadata")
    correct = table.raw_column("correct")
    gold = table.column("gold") if table.has_column("gold") else None
    cache: dict[str, str | None] = {}
    answers: list[Any] = []
    for row, (entry, verdict) in enumerate(zip(metadata.tolist(), correct.tolist(), strict=True)):
        text = entry.get("output") if isinstance(entry, dict) else None
        if not isinstance(text, str):
            raise DataError(f"--answer-extractor {spec}: this sample keeps no generation text (metadata.output)",
                            **table.error_location(row), field="metadata")
        if verdict and gold is not None and gold[row] is not None:
            answers.append(gold[row])
            continue
        if text not in cache:
            cache[text] = extractor.extract(text)
        answers.append(cache[text])
    return table.with_categorical_columns({"answer": answers, EXTRACTOR_COLUMN: [spec] * len(table)})
