"""Escaping of names (models, tasks, problems, notes) for every output format, in one place.

Model, task and problem names come from the files kpass reads, so they may be hostile. Every
renderer passes each text cell through the function of its format:

- :func:`csv_cell`: a text cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
  return is prefixed with ``'`` so that a spreadsheet shows it as text instead of running it as a
  formula (OWASP, "CSV Injection"); numbers, and text that reads as a number (``-0.5``), stay
  as they are. Control characters other than tab and newline are shown escaped (``\\x0d``,
  ``\\x1b``): Python's csv module leaves a bare carriage return unquoted, which splits the row.
- :func:`markdown_text`: a ``<`` that would open a tag, a comment or an autolink and an ``&``
  that would start a character reference become HTML entities (a CommonMark renderer passes raw
  HTML through; ``n >= k`` and ``Cameron & Miller`` stay as written), ``|`` is escaped (it would split the table cell) and control characters
  are shown escaped as in :func:`terminal_text`.
- :func:`terminal_text`: control characters (C0 except the ones kept, DEL, C1, and the Unicode
  bidirectional overrides) are shown as ``\\x1b`` / ``\\u202e`` instead of being sent to the
  terminal, so a name cannot clear the screen, retitle the window or write the clipboard
  (OSC 52).
- :func:`html_json`: JSON for a ``<script type="application/json">`` element with ``<``, ``>``,
  ``&`` and the JavaScript line separators written as ``\\u`` escapes, so that no name can close
  the element or open a comment (``<!--<script>``) that swallows the page's own script.
- :func:`html_text`: text or an attribute value in HTML (``&``, ``<``, ``>``, both quotes).
- :func:`plot_text`: a label drawn by matplotlib exactly as written: ``$`` escaped so that no
  name is read as mathtext (``cost $5 and $6`` stays upright, ``$\\foo{$`` is no parser error),
  control characters and lone surrogates shown escaped; :func:`legend_label` also keeps a
  name starting with ``_`` in the legend (matplotlib leaves such labels out).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["csv_cell", "csv_row", "html_json", "html_text", "legend_label", "markdown_text", "plot_text",
           "terminal_text"]

#: First characters that make a spreadsheet read a cell as a formula.
CSV_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|nan)", re.IGNORECASE)

#: Characters a terminal may act on: C0 controls, DEL, C1 controls, bidirectional overrides.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def csv_cell(value: Any) -> Any:
    """``value`` made inert for a spreadsheet: text cells that would run as a formula get a ``'``
    and control characters other than tab and newline are shown escaped.

    Non-text values (numbers, None) are returned unchanged, as is text that reads as a number.

    Examples
    --------
    >>> [csv_cell(v) for v in ["=1+1", "@SUM(A1)", "-0.25", -0.25, "gpt-4", "+cmd"]]
    ["'=1+1", "'@SUM(A1)", '-0.25', -0.25, 'gpt-4', "'+cmd"]
    """
    if not isinstance(value, str):
        return value
    value = terminal_text(value, keep="\n\t")  # a bare CR is not quoted by the csv module
    if not value.startswith(CSV_FORMULA_STARTS):
        return value
    if _NUMBER.fullmatch(value.strip()):
        return value
    return "'" + value


def csv_row(cells: Iterable[Any]) -> list[Any]:
    """:func:`csv_cell` of every cell of a row."""
    return [csv_cell(cell) for cell in cells]


def _escaped_control(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(text: Any, *, keep: str = "") -> str:
    """``str(text)`` with control characters shown escaped (``\\x1b``), except those in ``keep``.

    Examples
    --------
    >>> terminal_text("a\\x1b[2Jb\\x07")
    'a\\\\x1b[2Jb\\\\x07'
    >>> terminal_text("line\\nnext", keep="\\n")
    'line\\nnext'
    """
    text = str(text)
    if keep:
        return _CONTROL.sub(lambda m: m.group() if m.group() in keep else _escaped_control(m), text)
    return _CONTROL.sub(_escaped_control, text)


#: Where a CommonMark renderer would read raw HTML or a character reference: ``<`` before a tag
#: name, ``/``, ``!`` or ``?`` (tags, comments, declarations, autolinks), and ``&`` before an
#: entity or numeric reference. Only these are escaped, so ``n >= k`` or ``Cameron & Miller``
#: stay as written (also where Markdown is printed to a terminal).
_MARKDOWN_HTML = re.compile(r"<(?=[A-Za-z/!?])|&(?=#?[A-Za-z0-9]+;)")


def markdown_text(text: Any, *, pipes: bool = True) -> str:
    """Text for a Markdown table cell or line: what would start raw HTML or a character reference
    (``<tag``, ``</``, ``<!--``, ``&amp;``) as entities, ``|`` escaped (unless ``pipes=False``: the
    caller escapes them), control characters shown escaped.

    Examples
    --------
    >>> markdown_text('<img src=x onerror=alert(1)> | a&b &amp; n >= k')
    '&lt;img src=x onerror=alert(1)> \\\\| a&b &amp;amp; n >= k'
    """
    text = terminal_text(_MARKDOWN_HTML.sub(lambda m: "&lt;" if m.group() == "<" else "&amp;", str(text)))
    return text.replace("|", "\\|") if pipes else text


def html_text(text: Any) -> str:
    """Text or an attribute value in HTML."""
    return html.escape(str(text), quote=True)


def html_json(data: Any, **dumps_options: Any) -> str:
    """``json.dumps(data)`` safe inside ``<script type="application/json">``: ``<``, ``>``, ``&``,
    U+2028 and U+2029 as ``\\u`` escapes (the JSON means the same; ``JSON.parse`` reads it).

    Examples
    --------
    >>> html_json({"model": "<!--<script>"})
    '{"model": "\\\\u003c!--\\\\u003cscript\\\\u003e"}'
    """
    text = json.dumps(data, **dumps_options)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def plot_text(text: Any) -> str:
    """Text for a matplotlib label, drawn as written (never as mathtext).

    matplotlib reads a text with an even number of unescaped ``$`` as mathtext and draws
    ``\\$`` as ``$``; every ``$`` is escaped, so a name is shown literally. Control characters
    (a name is one line) and lone surrogates (no font draws them, the SVG writer cannot encode
    them) are shown escaped.

    Examples
    --------
    >>> plot_text("cost $5 and $6")
    'cost \\\\$5 and \\\\$6'
    >>> plot_text("a\\ud800b")
    'a\\\\ud800b'
    """
    text = terminal_text(text)
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")  # lone surrogates
    return text.replace("$", "\\$")


def legend_label(text: Any) -> str:
    """:func:`plot_text` for a legend entry; a leading ``_`` (which matplotlib takes as "leave
    out of the legend") gets a space before it."""
    text = plot_text(text)
    return " " + text if text.startswith("_") else text
