"""Commands flow one way: the CLI parses its arguments and hands values down; below it nothing
knows argparse. The rooms under ``kpass.cli`` (host, reports, data, render) import no argparse and
write no attribute of a command's arguments: the CLI reads what they return and sets its own."""

from __future__ import annotations

import ast
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
#: The rooms below the command line.
BELOW_CLI = ("host", "reports", "data", "render")


def _sources() -> list[pathlib.Path]:
    return [path for room in BELOW_CLI for path in sorted((REPO / "plugin" / room).rglob("*.py"))]


def _argparse_imports(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "argparse" for alias in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "argparse":
            lines.append(node.lineno)
    return lines


def _writes_into_arguments(tree: ast.AST) -> list[int]:
    """Lines that set an attribute of ``args`` (``args.x = ...``, ``args.x += ...``, ``setattr(args, ...)``)."""
    lines = []
    for node in ast.walk(tree):
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "args":
                lines.append(node.lineno)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"
                and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == "args"):
            lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("path", _sources(), ids=lambda path: str(path.relative_to(REPO)))
def test_no_room_below_the_cli_knows_argparse(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert _argparse_imports(tree) == [], f"{path.relative_to(REPO)} imports argparse"
    assert "Namespace" not in path.read_text(encoding="utf-8"), f"{path.relative_to(REPO)} names argparse.Namespace"
    assert _writes_into_arguments(tree) == [], f"{path.relative_to(REPO)} sets attributes of a command's args"


def test_the_checks_see_what_they_look_for():
    tree = ast.parse("import argparse\nfrom argparse import Namespace\n"
                     "def f(args):\n    args.cluster_by = 'x'\n    args.n += 1\n    setattr(args, 'y', 2)\n")
    assert _argparse_imports(tree) == [1, 2]
    assert _writes_into_arguments(tree) == [4, 5, 6]
    assert _sources() and all(path.suffix == ".py" for path in _sources())
