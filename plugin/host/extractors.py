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
* ``regex:PATTERN``: the last match of ``PATTERN`` (its first group if it has groups), stripped;
  the pattern is untrusted (:func:`kpass.data.patterns.compile_bounded`): one that nests unbounded
  quantifiers is refused, and every match is timed and charged to the run's budget.

The column :data:`EXTRACTOR_COLUMN` of a sample table names the extractor that produced each
sample's ``answer``; a null value there means *no extractor is known* for the sample's task, and
cons@k refuses it (:func:`kpass.data.answers.answer_class_counts`) instead of voting over raw text.
The registry look-ups live in :mod:`kpass.host.lookups`: :func:`~kpass.host.lookups.resolve_answer_extractor`
and :func:`~kpass.host.lookups.apply_answer_extractor`, which re-extracts a table's answers from the
generation texts kept in ``metadata["output"]`` (``kpass report --answer-extractor SPEC``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from kpass.data.columns import ANSWER_EXTRACTOR_OPTIONS, EXTRACTOR_COLUMN
from kpass.errors import UsageError

__all__ = [
    "ANSWER_EXTRACTOR_OPTIONS",
    "EXTRACTOR_COLUMN",
    "AnswerExtractor",
    "last_boxed_content",
    "register_answer_extractors",
]

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
    from kpass.data.patterns import compile_bounded

    # the same guard as every untrusted pattern: refused if it can blow up, timed on every text,
    # charged to the run's regular-expression budget
    pattern = compile_bounded(argument, field="argument --answer-extractor")
    group = 1 if pattern.groups else 0

    def extract(text: str) -> str | None:
        if not isinstance(text, str):
            return None
        matches = pattern.finditer(text)
        last = matches[-1] if matches else None
        if last is None or last.group(group) is None:
            return None
        answer = last.group(group).strip()
        return answer or None

    return extract


def register_answer_extractors(register: Callable[..., None]) -> None:
    """The built-in generic extractors (``boxed``, ``regex``), for :mod:`kpass.builtin`."""
    register("boxed", _boxed_factory)
    register("regex", _regex_factory)
