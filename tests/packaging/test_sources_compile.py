"""Every source file compiles without warnings (e.g. a TeX backslash in a non-raw docstring)."""

from __future__ import annotations

import pathlib
import warnings

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SOURCES = sorted(
    p for folder in ("metrics", "plugin", "adapters", "tests", "scripts", "examples") for p in (REPO / folder).rglob("*.py")
)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_source_compiles_without_warnings(path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # invalid escape sequences are SyntaxWarning/DeprecationWarning
        compile(path.read_text(encoding="utf-8"), str(path), "exec")
