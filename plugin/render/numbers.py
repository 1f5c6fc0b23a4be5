"""The one number formatter: every table, Markdown page, HTML page and plot label prints numbers here.

A value that is undefined (``None``, NaN or infinite) prints as :data:`MISSING` everywhere.
Estimates, intervals and standard errors print with :data:`DIGITS` decimals (a magnitude of 1000
or more with ``DIGITS + 1`` significant digits); p-values with four decimals, ``<0.0001`` below
1e-4; machine-readable outputs (CSV, JSON) carry the full ``repr`` instead.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

__all__ = [
    "DIGITS", "MISSING", "format_cell", "format_interval", "format_level", "format_number", "format_p_value",
    "format_rank", "format_raw",
]

#: What an undefined number prints as.
MISSING = "n/a"
#: Decimals of an estimate, interval bound or standard error.
DIGITS = 4


def _undefined(value: Any) -> bool:
    return value is None or (isinstance(value, float) and not math.isfinite(value))


def format_number(value: float | None, digits: int = DIGITS, *, signed: bool = False,
                  significant: bool = False) -> str:
    """``value`` with ``digits`` decimals (``signed``: always with a sign; ``significant``:
    ``digits`` significant digits instead), or :data:`MISSING` when it is undefined."""
    if value is None or _undefined(value):
        return MISSING
    sign = "+" if signed else ""
    if significant:
        return f"{value:{sign}.{digits}g}"
    if abs(value) >= 1000:
        return f"{value:{sign}.{digits + 1}g}"
    return f"{value:{sign}.{digits}f}"


def format_interval(low: float | None, high: float | None, digits: int = DIGITS, *, signed: bool = False) -> str:
    """``[low, high]``, or :data:`MISSING` when either bound is undefined."""
    if _undefined(low) or _undefined(high):
        return MISSING
    return f"[{format_number(low, digits, signed=signed)}, {format_number(high, digits, signed=signed)}]"


def format_cell(cell: Mapping[str, Any] | None, digits: int = DIGITS, *, signed: bool = False) -> str:
    """``"0.6120 [0.5400, 0.6840]"``: an ``estimate`` with its ``low``/``high`` interval."""
    if not cell:
        return MISSING
    interval = format_interval(cell.get("low"), cell.get("high"), digits, signed=signed)
    return f"{format_number(cell.get('estimate'), digits, signed=signed)} {interval}"


def format_p_value(value: float | None) -> str:
    """Four decimals, ``"<0.0001"`` below 1e-4, :data:`MISSING` when undefined."""
    if value is None or _undefined(value):
        return MISSING
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


def format_rank(rank: Mapping[str, Any] | None) -> str:
    """``"2"`` when the rank interval is one rank, else ``"1-4"`` (low-high)."""
    if not rank:
        return MISSING
    return str(rank["low"]) if rank["low"] == rank["high"] else f"{rank['low']}-{rank['high']}"


def format_level(level: float) -> str:
    """A confidence level as a percentage: ``0.95`` -> ``"95%"``, ``0.999`` -> ``"99.9%"``."""
    return f"{level * 100:.6g}%"


def format_raw(value: Any) -> str:
    """Machine-readable: full precision (``repr``) for floats, empty when undefined."""
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        value = float(value)  # numpy floats too
    if _undefined(value):
        return ""
    return repr(value) if isinstance(value, float) else str(value)
