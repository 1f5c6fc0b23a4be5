"""Argument types of the ``kpass`` subcommands: one validator per kind of value.

Each function turns the text of one command-line value into a Python value or raises
:class:`argparse.ArgumentTypeError` with a message naming what was expected and what was given
(argparse then prints ``argument --NAME: MESSAGE`` and exits with code 2). Every subcommand
(:mod:`kpass.cli`, :mod:`kpass.reports.budget`, ...) uses these, so one kind of value is checked and
described the same way everywhere. Pass them as ``type=`` to ``add_argument``.

An option the core checks (the interval options: ``--confidence``, ``--seed``, ``--n-resamples``,
``--method``, ``--cluster-by``) is only parsed here (:func:`number`, :func:`integer`): its value is
checked once, by the core, and the command says the core's message with its flags
(:func:`kpass.cli.arguments.check_interval_arguments`).
"""

from __future__ import annotations

import argparse
import math
from fractions import Fraction

from kpass.data.validation import memory_limit

__all__ = [
    "AS_RUN", "MAX_COUNT", "budget_list", "difference_of_proportions", "fields",
    "fraction", "integer", "k_list", "memory_size", "number", "positive_float", "positive_int",
    "probability", "reasoning_markers", "regular_expression", "samples_per_problem", "variance_of_difference",
    "variance_of_outcome",
]

#: Spellings of "the run as recorded" in a budget list (``--budgets 2048,as-run``).
AS_RUN = ("as-run", "native", "none")


def _ascii_digits(text: str) -> bool:
    """``0-9`` only: ``str.isdigit`` also accepts ``"²"``, which ``int`` rejects."""
    return text.isascii() and text.isdigit()


def probability(text: str) -> float:
    """A number in the open interval (0, 1): a confidence level, a significance level, a power."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1); got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1); got {text!r}")
    return value


#: The largest count an option takes (problems, samples): 2**53 - 1, the largest integer a float64
#: holds exactly (the sample tables' own bound, ``kpass.data.columns.MAX_INTEGER``).
MAX_COUNT = 2**53 - 1
def positive_int(text: str) -> int:
    """An integer >= 1 and at most :data:`MAX_COUNT` (problems)."""
    digits = text.strip().removeprefix("+")
    if not _ascii_digits(digits) or int(digits) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer; got {text!r}")
    if len(digits) > 20 or int(digits) > MAX_COUNT:
        raise argparse.ArgumentTypeError(f"expected a positive integer of at most {MAX_COUNT} (2**53 - 1); got {text!r}")
    return int(digits)


def memory_size(text: str) -> str:
    """A DuckDB memory limit (:func:`kpass.data.validation.memory_limit`): a number and a unit
    (``4GB``, ``512MiB``, ``1.5 GB``), at least 16 MiB. Returned as given, for DuckDB."""
    try:
        return memory_limit(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _finite(text: str, expected: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}; got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected {expected}; got {text!r}")
    return value


def variance_of_outcome(text: str) -> float:
    """A within-problem variance of one 0/1 outcome, p(1 - p): a number in [0, 0.25]."""
    value = _finite(text, "a variance of a 0/1 outcome, p(1-p), so a number in [0, 0.25]")
    if not 0 <= value <= 0.25:
        raise argparse.ArgumentTypeError(f"a variance of a 0/1 outcome, p(1-p), lies in [0, 0.25]; got {text!r}")
    return value


def variance_of_difference(text: str) -> float:
    """The between-problem variance of a difference of two success probabilities (each in [0, 1],
    so the difference in [-1, 1]): a number in [0, 1]."""
    value = _finite(text, "a variance of a difference of pass@1 values, so a number in [0, 1]")
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"a variance of a difference of two probabilities (in [-1, 1]) lies in "
                                         f"[0, 1]; got {text!r}")
    return value


def samples_per_problem(text: str) -> float:
    """Samples per problem: a number from 1 to :data:`MAX_COUNT` (a mean may be fractional)."""
    value = _finite(text, f"a number of samples per problem from 1 to {MAX_COUNT}")
    if not 1 <= value <= MAX_COUNT:
        raise argparse.ArgumentTypeError(f"expected a number of samples per problem from 1 to {MAX_COUNT}; got {text!r}")
    return value


def number(text: str) -> float:
    """A number (a confidence level): its range is the core's to check, with the one message the
    Python API gives too (:func:`kpass.reports.options.interval_options`)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number; got {text!r}") from None


def integer(text: str) -> int:
    """An integer (a seed, a number of resamples): its range is the core's to check, with the one
    message the Python API gives too (:func:`kpass.reports.options.interval_options`)."""
    digits = text.strip()
    if not _ascii_digits(digits.removeprefix("-").removeprefix("+")):
        raise argparse.ArgumentTypeError(f"expected an integer; got {text!r}")
    if len(digits) > 30:  # parsed, not checked: a guard against a number too long to say in one line
        raise argparse.ArgumentTypeError(f"expected an integer of at most 30 digits; got {len(digits)} digits")
    return int(digits)


def positive_float(text: str) -> float:
    """A finite number > 0 (an effect size, samples per problem)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number; got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number; got {text!r}")
    return value


def fields(text: str) -> tuple[str, ...]:
    """Comma-separated field names (``model,task``); empty parts are dropped (``""`` is no field)."""
    return tuple(part.strip() for part in text.split(",") if part.strip())


def budget_list(text: str) -> list[int | None]:
    """Comma-separated output-token budgets: ``2048,4096,8k`` (``k`` = 1024) or ``as-run`` (``None``)."""
    values: list[int | None] = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        if part.lower() in AS_RUN:
            values.append(None)
            continue
        multiplier, digits = (1024, part[:-1]) if part.lower().endswith("k") else (1, part)
        if not _ascii_digits(digits):
            raise argparse.ArgumentTypeError(
                f"budgets are comma-separated token counts (2048,4096,8k) or 'as-run'; got {text!r}")
        value = int(digits) * multiplier
        if value < 1:
            raise argparse.ArgumentTypeError(f"a budget must be >= 1 token; got {part!r}")
        values.append(value)
    if not values:
        raise argparse.ArgumentTypeError("give at least one budget")
    return values


def k_list(text: str) -> list[int]:
    """Comma-separated integers >= 1 (``1,4,16``)."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts or not all(_ascii_digits(part) and int(part) >= 1 for part in parts):
        raise argparse.ArgumentTypeError(f"k is a comma-separated list of integers >= 1; got {text!r}")
    return [int(part) for part in parts]


def fraction(text: str) -> Fraction:
    """An exact fraction in (0, 1]: ``7/8`` or ``0.875``."""
    try:
        value = Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"expected a fraction such as 7/8 or 0.875; got {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1]; got {text!r}")
    return value


def regular_expression(text: str) -> str:
    """A regular expression that compiles and cannot backtrack exponentially (checked by
    :func:`kpass.data.patterns.check_pattern`), so a bad ``--answer-pattern`` stops the command
    before anything is read."""
    from kpass.data.patterns import check_pattern

    try:
        return check_pattern(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def difference_of_proportions(text: str) -> float:
    """An effect to detect: a difference of two pass@1 values, so a number in (0, 1)."""
    try:
        return probability(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"the effect is a difference of pass@1 values, so it lies in (0, 1); "
                                         f"got {text!r}") from None


def reasoning_markers(text: str) -> tuple[str, str] | tuple[()]:
    """``OPEN,CLOSE`` or ``none``: :func:`kpass.data.tokenizers.parse_reasoning_markers`."""
    from kpass.data.tokenizers import parse_reasoning_markers

    try:
        return parse_reasoning_markers(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
