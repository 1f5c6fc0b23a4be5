"""Metric specs: what users type (``pass@1,8,64``, ``g-pass@16_0.5,1.0``, ``cons@16[ties=strict]``).

Grammar (case-insensitive; whitespace, ``;`` or a comma followed by a letter separate specs)::

    spec     := prefix ks ["_" params] ["[" option ("," option)* "]"] ["(" "B=" budget ")"]
    prefix   := a registered family symbol or alias, ending in "@" or "^"   (pass@, pass^, maj@, ...)
    ks       := k ("," k)*                      positive integers; one metric per k
    params   := p ("," p)*                      decimals (e.g. tau of G-Pass); one metric per (k, p)
    option   := name "=" value                  e.g. ties=strict, invalid=vote, rule=majority
    budget   := positive integer                output-token budget; also written [budget=4096]

Canonical names print the family symbol, one k, one parameter, the options that differ from their
defaults (sorted), and the budget: ``pass@8``, ``G-Pass@16_0.5``, ``cons@16[ties=strict]``,
``fin@1(B=4096)``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from kpass.errors import MetricSpecError, UnknownMetricError
from kpass.host.hookspecs import BUILTIN_PLUGIN_NAME

if TYPE_CHECKING:  # pragma: no cover
    from numpy.typing import NDArray

    from kpass.data.problems import ProblemSet
    from kpass.host.registry import Registry

__all__ = ["MetricFamily", "MetricSpec", "format_decimal", "parse_specs", "split_spec_text", "with_option_default"]


def format_decimal(value: Fraction) -> str:
    """Shortest exact decimal of a terminating fraction, with at least one decimal: 0.5, 1.0."""
    with localcontext() as context:
        context.prec = 60
        text = format((Decimal(value.numerator) / Decimal(value.denominator)).normalize(), "f")
    return text if "." in text else text + ".0"


_DECIMAL = re.compile(r"[0-9]+(\.[0-9]*)?|\.[0-9]+")
_INTEGER = re.compile(r"[0-9]+")  # ASCII digits only: str.isdigit() also accepts "²", which int() rejects


class MetricFamily:
    """A family of metrics that share a spec prefix, e.g. ``pass@k``; subclass it in a plugin.

    Register an instance with ``register(name, family)`` in a ``register_metrics`` hook. The
    host parses specs, excludes problems with fewer than :meth:`min_samples` samples (and lists
    them), checks :attr:`requires` against the sample table, and calls :meth:`compute` on the
    remaining problems of each (model, task) group.

    Attributes
    ----------
    symbol : str
        Canonical spec prefix ending in ``@`` or ``^``: ``"pass@"``, ``"G-Pass@"``.
    aliases : tuple of str
        Other prefixes users may type (``("maj@",)`` for ``cons@``); matched case-insensitively.
    parameter : str or None
        Name of the ``_x`` suffix parameter (``"tau"`` for G-Pass), parsed as an exact decimal
        in [0, 1]; ``None`` when the family takes none.
    options : Mapping[str, tuple of str]
        Option name -> allowed values; the first value is the default.
    flags : tuple of str
        Bare-word options (``pass@1024[extrapolate]``): ``params[flag]`` is ``True`` when given,
        ``False`` otherwise; a given flag is part of the canonical name.
    requires : tuple of str
        Sample-table columns needed besides the required ones (``("answer",)`` for cons@k).
    supports_budget : bool
        Whether ``(B=...)`` is meaningful: the host then passes counts truncated at the budget.
    statistics : tuple of str or None
        The per-problem statistics ``compute`` reads from its :class:`~kpass.ProblemSet`
        (``"counts"``: ``n_samples``, ``n_correct``; ``"finished"``: ``n_finished()``;
        ``"answer_classes"``: ``answer_classes()``; ``"cot"``: ``cot_correct()``), so that
        DuckDB and Spark can compute them with SQL. ``None`` (the default): the family reads
        sample-level columns and runs only on the numpy engine.
    example : str
        A valid spec, shown in error messages and ``kpass metrics``.
    description : str
        One line for listings.
    """

    symbol: str = ""
    aliases: tuple[str, ...] = ()
    parameter: str | None = None
    options: Mapping[str, tuple[str, ...]] = {}
    flags: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    supports_budget: bool = False
    statistics: tuple[str, ...] | None = None
    example: str = ""
    description: str = ""

    @property
    def pattern(self) -> str:
        """Human-readable pattern such as ``G-Pass@k_tau[...]``."""
        text = f"{self.symbol}k" + (f"_{self.parameter}" if self.parameter else "")
        if self.options or self.flags:
            text += "[" + ",".join([f"{name}={'|'.join(values)}" for name, values in self.options.items()]
                                   + list(self.flags)) + "]"
        return text

    def parse_parameter(self, text: str) -> Fraction:
        """Parse one ``_x`` value (default: an exact decimal in [0, 1])."""
        if not _DECIMAL.fullmatch(text):
            raise ValueError(f"{self.parameter} must be a decimal number such as 0.5; got {text!r}")
        value = Fraction(text)
        if not 0 <= value <= 1:
            raise ValueError(f"{self.parameter} must be in [0, 1]; got {text}")
        return value

    def format_parameter(self, value: Any) -> str:
        """Canonical text of a parameter value (default: shortest decimal, ``0.5``, ``1.0``)."""
        return format_decimal(Fraction(value))

    def min_samples(self, spec: "MetricSpec") -> int:
        """Samples a problem needs for this metric (default ``k``)."""
        return spec.k

    def compute(self, problems: "ProblemSet", spec: "MetricSpec") -> "NDArray":
        """Per-problem values, shape ``(len(problems),)``, for problems with enough samples."""
        raise NotImplementedError(f"metric family {self.symbol}k does not implement compute().")

    def summarize(self, problems: "ProblemSet", spec: "MetricSpec", *, clusters: Any,
                  options: Mapping[str, Any]) -> Any:
        """The benchmark number of a model-based metric, or ``None`` (the default) for the mean of
        :meth:`compute`'s values with :func:`kpass.mean_ci`. A family that returns something
        returns ``(IntervalResult or None, notes)``; ``None`` refuses the estimate (the notes say
        why)."""
        return None


@dataclasses.dataclass(frozen=True)
class MetricSpec:
    """One parsed metric: a family, one k, one parameter value, options, an optional budget.

    Attributes
    ----------
    name : str
        Canonical name (``"G-Pass@16_0.5"``); the report's metric column.
    family : str
        Registered family name (``"G-Pass@k"``).
    k : int
        Number of draws.
    params : Mapping[str, Any]
        The family parameter (``{"tau": Fraction(1, 2)}``) and every option, defaults filled in.
    budget : int or None
        Output-token budget, or ``None`` for the run as recorded.
    text : str
        What the user typed (for messages).
    implementation : MetricFamily
        The registered family object.
    """

    name: str
    family: str
    k: int
    params: Mapping[str, Any]
    budget: int | None = None
    text: str = dataclasses.field(default="", compare=False)
    implementation: MetricFamily | None = dataclasses.field(default=None, compare=False, repr=False)

    def __hash__(self) -> int:
        return hash(self.name)

    @property
    def min_samples(self) -> int:
        """Samples a problem needs for this metric (``k`` for every built-in family)."""
        return int(self.implementation.min_samples(self)) if self.implementation is not None else self.k

    @property
    def requires(self) -> tuple[str, ...]:
        """Sample-table columns this metric needs besides the required ones."""
        return tuple(getattr(self.implementation, "requires", ()))

    @property
    def parameter(self) -> Any:
        """The family parameter value (tau for G-Pass), or ``None``."""
        name = getattr(self.implementation, "parameter", None)
        return self.params.get(name) if name else None

    def option(self, name: str) -> str:
        """Value of option ``name`` (its default when not given)."""
        return self.params[name]


def split_spec_text(text: str) -> list[str]:
    """Split ``"pass@1,8 cons@16[ties=strict,invalid=vote];fin@1"`` into single specs.

    Whitespace and ``;`` always separate; a comma separates only when the next character starts
    a new spec (a letter); commas inside ``[...]`` and ``(...)`` never do.
    """
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for position, char in enumerate(text):
        if char in "[(":
            depth += 1
        elif char in "])":
            depth = max(depth - 1, 0)
        if depth == 0 and (char.isspace() or char == ";" or (
                char == "," and position + 1 < len(text) and text[position + 1].isalpha())):
            if current:
                parts.append("".join(current))
            current = []
            continue
        current.append(char)
    if current:
        parts.append("".join(current))
    return parts


_SPEC = re.compile(
    r"""^(?P<prefix>[A-Za-z][A-Za-z0-9_.\-]*?[@^])
         (?P<ks>[^_\[\(]*)
         (?:_(?P<params>[^\[\(]*))?
         (?P<rest>(?:\[[^\]]*\]|\([^)]*\))*)$""",
    re.VERBOSE,
)
_GROUP = re.compile(r"\[([^\]]*)\]|\(([^)]*)\)")
_BUDGET_NAMES = ("budget", "b")


def _valid_listing(registry: Registry) -> str:
    families = sorted(registry.metrics.items(),
                      key=lambda item: registry.owners.get(("metric", item[0])) != BUILTIN_PLUGIN_NAME)
    lines = []
    for _name, family in families:
        alias = f" (also {', '.join(family.aliases)})" if getattr(family, "aliases", ()) else ""
        example = f", e.g. {family.example}" if getattr(family, "example", "") else ""
        lines.append(f"  {family.pattern}{alias}{example}")
    return ("valid metric specs:\n" + "\n".join(lines)
            + "\n  options go in [...], a token budget in (B=4096); several ks: pass@1,8,64")


def _spec_error(text: str, problem: str, registry: Registry, cls=MetricSpecError) -> MetricSpecError:
    return cls(f"invalid metric spec {text!r}: {problem}.\n{_valid_listing(registry)}")


def _unbalanced_bracket(text: str) -> str | None:
    """What is wrong with the brackets of a spec (``"'[' at position 7 is never closed"``), or None."""
    closing = {"[": "]", "(": ")"}
    opened: list[tuple[str, int]] = []
    for position, char in enumerate(text):
        if char in closing:
            if opened:
                return f"{char!r} at position {position} opens inside {opened[-1][0]!r} at position {opened[-1][1]}"
            opened.append((char, position))
        elif char in closing.values():
            if not opened or closing[opened[-1][0]] != char:
                return f"{char!r} at position {position} closes nothing"
            opened.pop()
    if opened:
        char, position = opened[-1]
        return f"{char!r} at position {position} is never closed (add {closing[char]!r})"
    return None


def _parse_one(text: str, registry: Registry) -> list[MetricSpec]:
    """The specs of one spec text (``pass@1,8``: two), each checked against its family."""
    match = _SPEC.match(text.strip())
    if match is None:
        bracket = _unbalanced_bracket(text.strip())
        if bracket is not None:
            raise _spec_error(text, bracket, registry)
        raise _spec_error(text, "expected NAME@K such as pass@8", registry)
    prefix = match.group("prefix").lower()
    symbols = registry.metric_symbols()
    if prefix not in symbols:
        raise _spec_error(text, f"unknown metric {match.group('prefix')!r}", registry, UnknownMetricError)
    family_name = symbols[prefix]
    family = registry.metrics[family_name]
    ks = _ks_of(text, match.group("ks"), registry)
    values = _parameter_values(text, family, match.group("params"), registry)
    options, budget = _options_of(text, family, match.group("rest"), registry)
    parameter = getattr(family, "parameter", None)
    return [MetricSpec(name=_spec_name(family, k, value, options, budget), family=family_name, k=k,
                       params={**options, **({parameter: value} if parameter else {})}, budget=budget, text=text,
                       implementation=family)
            for k in ks for value in values]


def _ks_of(text: str, ks_text: str, registry: Registry) -> list[int]:
    """The k of ``NAME@K`` (several as ``1,8,64``), each a positive integer."""
    ks: list[int] = []
    for part in ks_text.split(","):
        part = part.strip()
        if not _INTEGER.fullmatch(part) or int(part) < 1:
            raise _spec_error(text, f"k must be a positive integer (several as 1,8,64); got {part!r}", registry)
        ks.append(int(part))
    return ks


def _parameter_values(text: str, family: Any, params_text: str | None, registry: Registry) -> list[Any]:
    """The values of the family's ``_`` parameter (``g-pass@16_0.5,1.0``: two); ``[None]`` when it has none."""
    parameter = getattr(family, "parameter", None)
    if params_text is None:
        if parameter:
            raise _spec_error(text, f"{family.symbol}k needs {parameter}, e.g. "
                                    f"{family.example or family.symbol + '16_0.5'}", registry)
        return [None]
    if not parameter:
        raise _spec_error(text, f"{family.symbol}k takes no '_' parameter", registry)
    values = []
    for part in params_text.split(","):
        try:
            values.append(family.parse_parameter(part.strip()))
        except ValueError as exc:
            raise _spec_error(text, str(exc), registry) from None
    return values


def _options_of(text: str, family: Any, rest: str, registry: Registry) -> tuple[dict[str, Any], int | None]:
    """``(options, budget)`` of the ``[name=value, flag]`` and ``(B=N)`` groups, every option at its
    default unless given; the budget only for a family that supports one."""
    allowed = dict(getattr(family, "options", {}) or {})
    flags = tuple(getattr(family, "flags", ()) or ())
    options: dict[str, Any] = {name: choices[0] for name, choices in allowed.items()}
    options.update({flag: False for flag in flags})
    budget: int | None = None
    for bracket, paren in _GROUP.findall(rest):
        body = bracket if bracket or not paren else paren
        for item in filter(None, (piece.strip() for piece in body.split(","))):
            if "=" not in item:
                if item.lower() in flags:
                    options[item.lower()] = True
                    continue
                raise _spec_error(text, f"option {item!r} must be written name=value"
                                        + (f" (or be one of {', '.join(flags)})" if flags else ""), registry)
            key, value = (piece.strip() for piece in item.split("=", 1))
            if key.lower() in _BUDGET_NAMES:
                if not _INTEGER.fullmatch(value) or int(value) < 1:
                    raise _spec_error(text, f"the budget must be a positive integer of output tokens; got {value!r}",
                                      registry)
                budget = int(value)
                continue
            options[key.lower()] = _option_value(text, family, allowed, key, value, registry)
    if budget is not None and not getattr(family, "supports_budget", False):
        raise _spec_error(text, f"{family.symbol}k does not support a token budget yet (families that do: "
                                + ", ".join(f.symbol + "k" for f in registry.metrics.values()
                                            if getattr(f, "supports_budget", False)) + ")", registry)
    return options, budget


def _option_value(text: str, family: Any, allowed: dict[str, Any], key: str, value: str, registry: Registry) -> str:
    """The value of option ``key``, one of the family's choices for it."""
    key_lower = key.lower()
    if key_lower not in allowed:
        valid = ", ".join(f"{name}={'|'.join(choices)}" for name, choices in allowed.items()) or "none"
        raise _spec_error(text, f"unknown option {key!r} for {family.symbol}k (options: {valid}; "
                                "budget: (B=N))", registry)
    if value.lower() not in allowed[key_lower]:
        raise _spec_error(text, f"option {key_lower}={value!r} must be one of "
                                f"{', '.join(allowed[key_lower])}", registry)
    return value.lower()


def _spec_name(family: Any, k: int, value: Any, options: dict[str, Any], budget: int | None) -> str:
    """The canonical name: ``symbol k``, ``_parameter``, ``[options not at their default]``, ``(B=budget)``."""
    name = f"{family.symbol}{k}"
    if getattr(family, "parameter", None):
        name += f"_{family.format_parameter(value)}"
    allowed = dict(getattr(family, "options", {}) or {})
    changed = [f"{key}={options[key]}" for key in sorted(allowed) if options[key] != allowed[key][0]]
    changed += [flag for flag in tuple(getattr(family, "flags", ()) or ()) if options[flag]]
    if changed:
        name += "[" + ",".join(changed) + "]"
    if budget is not None:
        name += f"(B={budget})"
    return name


def with_option_default(specs: str | Sequence[str], family: str, option: str, value: str,
                        registry: Registry) -> list[str]:
    """Spec texts where every spec of ``family`` that does not set ``option`` sets it to ``value``
    (``--cut-answers vote``: ``cons@8`` becomes ``cons@8[cut=vote]``; ``cons@8[cut=abstain]`` stays).
    Texts that do not parse are left as they are (the parser then says what is wrong)."""
    texts = [specs] if isinstance(specs, str) else list(specs)
    symbols = registry.metric_symbols()
    out = []
    for text in texts:
        for part in split_spec_text(text) if isinstance(text, str) else [text]:
            match = _SPEC.match(part.strip()) if isinstance(part, str) else None
            if match is None or symbols.get(match.group("prefix").lower()) != family or re.search(
                    rf"[\[,]\s*{re.escape(option)}\s*=", match.group("rest"), re.IGNORECASE):
                out.append(part)
                continue
            ks, params, rest = match.group("ks"), match.group("params"), match.group("rest")
            out.append(f"{match.group('prefix')}{ks}{'' if params is None else '_' + params}[{option}={value}]{rest}")
    return out


def parse_specs(specs: str | Sequence[str], registry: Registry) -> list[MetricSpec]:
    """:func:`kpass.parse_metric_specs` against the families of ``registry``."""
    if isinstance(specs, str):
        texts = [specs]
    else:
        texts = list(specs)
        for item in texts:
            if not isinstance(item, str):
                raise TypeError(f"`specs` must be strings; got {type(item).__name__} {item!r}.")
    out: dict[str, MetricSpec] = {}
    for text in texts:
        for part in split_spec_text(text):
            for spec in _parse_one(part, registry):
                out.setdefault(spec.name, spec)
    if not out:
        raise MetricSpecError(f"no metric spec given.\n{_valid_listing(registry)}")
    return list(out.values())
