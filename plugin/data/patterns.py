"""Regular expressions that kpass did not write: refused when they can blow up, timed when they run.

A pattern read from a file (an lm-eval results file's filter ``regex_pattern``, run on every
generation) or given on the command line (``kpass budget --answer-pattern``) is untrusted: a
pattern such as ``(a+)+$`` takes time exponential in the length of a text it fails on, so one
hostile results file could hang the reader. Two guards, both here:

1. :func:`check_pattern` compiles the pattern and refuses nested unbounded quantifiers (a
   repeat with more than one iteration inside an unbounded repeat: ``(a+)+``, ``(\\w*\\s?)*``,
   ``(x{2,})*``), the shape behind catastrophic backtracking (none of lm-eval's shipped task
   configs has one).
2. :class:`BoundedPattern` runs every match with the ``regex`` package's ``timeout``
   (:data:`MATCH_TIMEOUT_SECONDS` per call), for the blow-ups a static check cannot see
   (overlapping alternatives such as ``(a|aa)*b``);
3. every call of every :class:`BoundedPattern` is charged to one :class:`RegexBudget` for the
   whole run (:data:`DEFAULT_REGEX_BUDGET_SECONDS`, ``KPASS_REGEX_BUDGET=SECONDS`` or
   ``--regex-budget SECONDS``), so a pattern that costs a second on every generation cannot take
   hours over a large log: a call never runs past what is left of the budget.

Each failure is one line naming the file (or the option), the pattern and, for the budget, how
to raise it.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import re
import time
from collections.abc import Callable, Iterator
from re import _constants as _sre  # type: ignore[attr-defined]  # the stdlib parser's opcodes
from re import _parser as _sre_parse  # type: ignore[attr-defined]
from typing import Any

from kpass.errors import DataError, UsageError

__all__ = ["DEFAULT_REGEX_BUDGET_SECONDS", "MATCH_TIMEOUT_SECONDS", "REGEX_BUDGET_VARIABLE", "BoundedPattern",
           "RegexBudget", "bounded_filter_factory", "check_pattern", "compile_bounded", "parse_regex_budget",
           "regex_budget", "set_regex_budget"]

#: Longest time one match, search or findall of an untrusted pattern may take.
MATCH_TIMEOUT_SECONDS = 2.0
#: Total time every untrusted pattern of one run (one ``kpass`` command) may take together.
DEFAULT_REGEX_BUDGET_SECONDS = 60.0
#: Environment variable that sets the run's budget (seconds), as ``--regex-budget`` does.
REGEX_BUDGET_VARIABLE = "KPASS_REGEX_BUDGET"

_REPEATS = {_sre.MAX_REPEAT, _sre.MIN_REPEAT}


def _nested_quantifier(items: Any, inside_unbounded: bool) -> bool:
    for op, argument in items:
        if op in _REPEATS:
            _low, high, body = argument
            if inside_unbounded and (high == _sre.MAXREPEAT or high > 1):
                return True
            if _nested_quantifier(body, inside_unbounded or high == _sre.MAXREPEAT):
                return True
        elif op == _sre.SUBPATTERN:
            if _nested_quantifier(argument[-1], inside_unbounded):
                return True
        elif op == _sre.BRANCH:
            if any(_nested_quantifier(branch, inside_unbounded) for branch in argument[1]):
                return True
        elif op in (_sre.ASSERT, _sre.ASSERT_NOT):
            if _nested_quantifier(argument[1], inside_unbounded):
                return True
        elif op == _sre.GROUPREF_EXISTS:
            if any(branch is not None and _nested_quantifier(branch, inside_unbounded) for branch in argument[1:]):
                return True
    return False


def _error(message: str, source: str | None, field: str | None) -> ValueError:
    if source is None:
        return UsageError(f"{field}: {message}" if field else message)
    return DataError(message, source=source, field=field)


def check_pattern(pattern: Any, *, source: str | None = None, field: str | None = None) -> str:
    """``pattern`` if it compiles and has no nested unbounded quantifier; else one clear error.

    Parameters
    ----------
    pattern : str
        The regular expression (Python syntax).
    source : str, optional
        File the pattern comes from: errors are :class:`~kpass.errors.DataError` naming it.
        Without it (a command-line option) they are :class:`~kpass.errors.UsageError`.
    field : str, optional
        What the pattern is (``"--answer-pattern"``, ``"task gsm8k, filter strict-match,
        regex_pattern"``), named in the message.

    Raises
    ------
    DataError or UsageError
        Not a string, not a valid regular expression, or nested quantifiers.
    """
    if not isinstance(pattern, str):
        raise _error(f"a regular expression must be text; got {type(pattern).__name__} {pattern!r}", source, field)
    try:
        re.compile(pattern)
        tree = _sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        raise _error(f"invalid regular expression {pattern!r}: {exc}", source, field) from None
    if _nested_quantifier(tree, False):
        raise _error(f"refusing regular expression {pattern!r}: it nests unbounded quantifiers (like "
                     f"(a+)+), which can take exponential time on one text", source, field)
    return pattern


def parse_regex_budget(text: Any, *, name: str = "--regex-budget") -> float:
    """A budget in seconds (a finite number > 0) from an option or the environment; else a
    :class:`~kpass.errors.UsageError` naming ``name``."""
    try:
        seconds = float(text)
    except (TypeError, ValueError):
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise UsageError(f"{name}: the regular-expression time budget is a number of seconds > 0; got {text!r}")
    return seconds


class RegexBudget:
    """Seconds every untrusted pattern may still take together in one run.

    Every call of a :class:`BoundedPattern` is charged here; a call is given at most what is left
    (and at most its own per-call limit), so the total never exceeds ``seconds`` by more than one
    timer tick.
    """

    def __init__(self, seconds: float, origin: str) -> None:
        self.seconds = seconds
        self.origin = origin  # how the budget was set, named in the error
        self.spent = 0.0

    def remaining(self) -> float:
        return self.seconds - self.spent


def _budget_from_environment() -> RegexBudget:
    text = os.environ.get(REGEX_BUDGET_VARIABLE, "").strip()
    if not text:
        return RegexBudget(DEFAULT_REGEX_BUDGET_SECONDS, "the default")
    return RegexBudget(parse_regex_budget(text, name=REGEX_BUDGET_VARIABLE), f"{REGEX_BUDGET_VARIABLE}={text}")


_PROCESS_BUDGET: RegexBudget | None = None
_SCOPED_BUDGET: contextvars.ContextVar[RegexBudget | None] = contextvars.ContextVar("kpass_regex_budget", default=None)


def _current_budget() -> RegexBudget:
    global _PROCESS_BUDGET
    scoped = _SCOPED_BUDGET.get()
    if scoped is not None:
        return scoped
    if _PROCESS_BUDGET is None:
        _PROCESS_BUDGET = _budget_from_environment()
    return _PROCESS_BUDGET


def set_regex_budget(seconds: float, *, origin: str = "--regex-budget") -> RegexBudget:
    """Set the run's (the process's) budget to ``seconds``, keeping what was spent so far
    (``kpass --regex-budget SECONDS``). For a fresh budget around some calls, use
    :func:`regex_budget`."""
    global _PROCESS_BUDGET
    limit = parse_regex_budget(seconds, name=origin)  # the option wins over KPASS_REGEX_BUDGET
    if _PROCESS_BUDGET is None:
        _PROCESS_BUDGET = RegexBudget(limit, origin)
    _PROCESS_BUDGET.seconds, _PROCESS_BUDGET.origin = limit, f"{origin} {limit:g}"
    return _PROCESS_BUDGET


@contextlib.contextmanager
def regex_budget(seconds: float | None = None) -> Iterator[RegexBudget]:
    """A fresh budget for the calls made inside the ``with`` block (of this thread or task).

    Examples
    --------
    >>> with regex_budget(5.0) as budget:
    ...     _ = compile_bounded("a+").findall("aaa")
    >>> 0 <= budget.spent < 5
    True
    """
    budget = (_budget_from_environment() if seconds is None
              else RegexBudget(parse_regex_budget(seconds, name="regex_budget(seconds)"), f"regex_budget({seconds:g})"))
    token = _SCOPED_BUDGET.set(budget)
    try:
        yield budget
    finally:
        _SCOPED_BUDGET.reset(token)


class BoundedPattern:
    """A compiled pattern whose every call stops after :data:`MATCH_TIMEOUT_SECONDS`.

    Offers the ``re.Pattern`` methods lm-eval's filters and kpass's tokenizers call
    (``search``, ``match``, ``fullmatch``, ``findall``, ``finditer``, ``sub``, ``split``) and the
    attributes ``pattern``, ``groups``, ``groupindex`` and ``flags``. A call that runs out of
    time raises :class:`~kpass.errors.DataError` (with ``source``) or
    :class:`~kpass.errors.UsageError` naming the pattern.
    """

    def __init__(self, pattern: str, flags: int = 0, *, source: str | None = None, field: str | None = None,
                 timeout: float | None = None) -> None:
        import regex

        self.pattern = check_pattern(pattern, source=source, field=field)
        self._compiled = regex.compile(pattern, flags | regex.VERSION0)
        self._stdlib = re.compile(pattern, flags)
        self.groups = self._stdlib.groups
        self.groupindex = self._stdlib.groupindex
        self.flags = self._stdlib.flags
        self.source, self.field = source, field
        self.timeout = MATCH_TIMEOUT_SECONDS if timeout is None else timeout

    def _timed(self, method: str, text: Any, *rest: Any) -> Any:
        budget = _current_budget()
        left = budget.remaining()
        if left <= 0:
            raise self._over_budget(budget)
        timeout = min(self.timeout, left)
        started = time.perf_counter()
        try:
            if method == "sub":
                return self._compiled.sub(rest[0], text, *rest[1:], timeout=timeout)
            result = getattr(self._compiled, method)(text, *rest, timeout=timeout)
            return list(result) if method == "finditer" else result  # the timeout covers every match
        except TimeoutError:
            if timeout < self.timeout:
                raise self._over_budget(budget) from None
            raise _error(f"regular expression {self.pattern!r} ran longer than {self.timeout:g} s on one text "
                         f"({len(str(text))} characters); refusing it", self.source, self.field) from None
        finally:
            budget.spent += time.perf_counter() - started

    def _over_budget(self, budget: RegexBudget) -> ValueError:
        return _error(f"regular expression {self.pattern!r} used up the run's time budget for regular expressions "
                      f"from files and options ({budget.seconds:g} s, {budget.origin}); refusing it. If the "
                      f"patterns are trusted, raise the budget: --regex-budget SECONDS or "
                      f"{REGEX_BUDGET_VARIABLE}=SECONDS", self.source, self.field)

    def search(self, string: str, *args: Any) -> Any:
        return self._timed("search", string, *args)

    def match(self, string: str, *args: Any) -> Any:
        return self._timed("match", string, *args)

    def fullmatch(self, string: str, *args: Any) -> Any:
        return self._timed("fullmatch", string, *args)

    def findall(self, string: str, *args: Any) -> list[Any]:
        return self._timed("findall", string, *args)

    def finditer(self, string: str, *args: Any) -> list[Any]:
        return self._timed("finditer", string, *args)

    def split(self, string: str, maxsplit: int = 0) -> list[str]:
        return self._timed("split", string, maxsplit)

    def sub(self, replacement: Any, string: str, count: int = 0) -> str:
        return self._timed("sub", string, replacement, count)

    def __repr__(self) -> str:
        return f"BoundedPattern({self.pattern!r})"


def compile_bounded(pattern: Any, *, source: str | None = None, field: str | None = None) -> BoundedPattern:
    """:func:`check_pattern`, then a :class:`BoundedPattern` (the one way to compile an untrusted pattern)."""
    return BoundedPattern(check_pattern(pattern, source=source, field=field), source=source, field=field)


def bounded_filter_factory(factory: Callable[[], Any], *, source: str | None, field: str | None) -> Callable[[], Any]:
    """Wrap a filter factory (lm-eval's ``partial(RegexFilter, ...)``) so that every compiled
    pattern the filter holds (``self.regex``) runs as a :class:`BoundedPattern`."""

    def build() -> Any:
        instance = factory()
        for name, value in list(vars(instance).items()):
            if isinstance(value, re.Pattern):
                setattr(instance, name, BoundedPattern(value.pattern, value.flags & ~re.UNICODE, source=source,
                                                       field=field))
        return instance

    return build
