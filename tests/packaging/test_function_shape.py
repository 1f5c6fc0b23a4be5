"""Seams, not sizes (issue #35): every function of kpass fits on a screen and takes few parameters.

Read from the source of ``plugin/``, ``metrics/`` and ``adapters/``:

- at most :data:`MAX_CODE_LINES` lines of code per function (the docstring, comments and blank lines
  are not code; a nested function counts in its own right and in the function that holds it);
- at most :data:`MAX_PARAMETERS` parameters per function (``self``/``cls`` excluded).

The public API keeps SciPy's shape: a function or class a module lists in its ``__all__`` may take
more keyword-only options with defaults (``compute_report(table, metrics, *, by=..., rng=...)``;
renaming them away would break every caller), but its positional and required parameters obey
the same bound. Everything else, where a call passes its arguments along (the issue counted
internal calls of 16 parameters, some a bare positional ``False``), obeys the bound in full.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SOURCE_FOLDERS = ("plugin", "metrics", "adapters")
MAX_CODE_LINES = 80
MAX_PARAMETERS = 10


def _public_names(tree: ast.Module) -> set[str]:
    """The names in the module's literal ``__all__`` (empty when it has none)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            try:
                return set(ast.literal_eval(node.value))
            except ValueError:
                return set()
    return set()


def _functions(tree: ast.Module):
    """``(qualified name, node, public)`` of every function, methods and nested functions included;
    public: a top-level function in ``__all__``, or a method (not ``_private``, ``__init__`` allowed)
    of a class in ``__all__``."""
    public = _public_names(tree)

    def walk(node: ast.AST, prefix: str, owner_public: bool):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.", prefix == "" and child.name in public)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                is_public = ((prefix == "" and child.name in public)
                             or (owner_public and (not child.name.startswith("_") or child.name == "__init__")))
                yield f"{prefix}{child.name}", child, is_public
                yield from walk(child, f"{prefix}{child.name}.", False)

    yield from walk(tree, "", False)


def _code_lines(node: ast.AST, lines: list[str]) -> int:
    body = node.body
    has_docstring = (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                     and isinstance(body[0].value.value, str))
    docstring_lines = set(range(body[0].lineno, body[0].end_lineno + 1)) if has_docstring else set()
    return sum(1 for number in range(node.lineno, node.end_lineno + 1)
               if number not in docstring_lines and lines[number - 1].strip()
               and not lines[number - 1].strip().startswith("#"))


def _parameters(node: ast.AST, public: bool) -> int:
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    if positional and positional[0].arg in ("self", "cls"):
        positional = positional[1:]
    keyword_only = len(arguments.kwonlyargs)
    if public:  # keyword-only options with a default are the public API's shape
        keyword_only = sum(default is None for default in arguments.kw_defaults)
    return len(positional) + keyword_only + bool(arguments.vararg) + bool(arguments.kwarg)


def _measure() -> tuple[list[str], list[str]]:
    too_long, too_many = [], []
    for folder in SOURCE_FOLDERS:
        for path in sorted((REPO / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            lines = text.splitlines()
            for name, node, public in _functions(ast.parse(text)):
                where = f"{path.relative_to(REPO)}:{node.lineno} {name}"
                if (count := _code_lines(node, lines)) > MAX_CODE_LINES:
                    too_long.append(f"{where}: {count} code lines")
                if (count := _parameters(node, public)) > MAX_PARAMETERS:
                    too_many.append(f"{where}: {count} parameters")
    return too_long, too_many


def test_every_function_fits_on_a_screen():
    too_long, _ = _measure()
    assert not too_long, f"split these functions where their steps part (over {MAX_CODE_LINES} code lines): " \
                         f"{too_long}"


def test_every_function_takes_few_parameters():
    _, too_many = _measure()
    assert not too_many, f"pass a record instead (over {MAX_PARAMETERS} parameters): {too_many}"


@pytest.mark.parametrize("source, expected", [
    ("def f(a, b, c, d, e, f, g, h, i, j, k): pass\n", 11),
    ("class C:\n    def m(self, a, *, b=1): pass\n", 2),
    ("__all__ = ['f']\ndef f(a, *, b=1, c=2, d): pass\n", 2),  # public: options with defaults not counted
    ("def f(a, *, b=1, c=2, d): pass\n", 4),
    ("def f(*args, **kwargs): pass\n", 2),
])
def test_the_parameter_count_reads_signatures(source, expected):
    tree = ast.parse(source)
    ((_, node, public),) = [item for item in _functions(tree) if item[0].split(".")[-1] in ("f", "m")]
    assert _parameters(node, public) == expected


def test_the_line_count_leaves_out_docstrings_comments_and_blank_lines():
    source = 'def f():\n    """Doc.\n\n    More.\n    """\n    # a comment\n\n    return 1\n'
    ((_, node, _),) = list(_functions(ast.parse(source)))
    assert _code_lines(node, source.splitlines()) == 2  # the def line and the return
