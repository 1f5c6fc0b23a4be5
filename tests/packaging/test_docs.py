"""The documentation holds together: every link resolves, every path it names exists, and every
``docs/...`` page the source names is in the repository.

Checked on README.md and docs/*.md: relative links (``[text](docs/cli.md)``, images, anchors such
as ``README.md#install`` against the target's headings) and repository paths written in the text
(``scripts/coverage_study.py``, ``tests/adapters/fake_openai_server.py``); and in every source file
(metrics/, plugin/, adapters/, tests/, scripts/, examples/, Makefile, pyproject.toml), each
``docs/<page>`` it mentions. A page moved or renamed without its references fails here.
"""

from __future__ import annotations

import pathlib
import re

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SOURCE_FOLDERS = ("metrics", "plugin", "adapters", "tests", "scripts", "examples")
SOURCES = sorted(
    path
    for folder in SOURCE_FOLDERS
    for path in (REPO / folder).rglob("*")
    if path.suffix in {".py", ".sh", ".toml", ".yaml", ".md"} and ".venv" not in path.parts
) + [REPO / "Makefile", REPO / "pyproject.toml"]

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", flags=re.M | re.S)
# a repository path in prose or code: a top-level folder, then at least one more component
REPO_PATH = re.compile(
    r"(?<![\w./-])((?:scripts|tests|examples|metrics|plugin|adapters|docs)/[\w.-]+(?:/[\w.-]+)*/?)"
)
DOCS_PATH = re.compile(r"(?<![\w./-])(docs/[\w.-]+\.(?:md|png))")


def _relative(path: pathlib.Path) -> str:
    return str(path.relative_to(REPO))


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: pathlib.Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {_slug(match) for match in re.findall(r"^#+ (.+)$", text, flags=re.M)}


def _links(page: pathlib.Path) -> list[str]:
    text = re.sub(r"`[^`\n]*`", "", FENCE.sub("", page.read_text(encoding="utf-8")))  # code is not a link
    return [target for target in LINK.findall(text)
            if not re.match(r"[a-z][a-z0-9+.-]*:", target)]  # http:, https:, mailto: are external


@pytest.mark.parametrize("page", PAGES, ids=_relative)
def test_every_relative_link_resolves(page):
    broken = []
    for target in _links(page):
        path_part, _, anchor = target.partition("#")
        resolved = (page.parent / path_part).resolve() if path_part else page
        if not resolved.exists():
            broken.append(f"{target} (no file {_relative(resolved) if REPO in resolved.parents else resolved})")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target} (no heading #{anchor} in {_relative(resolved)})")
    assert not broken, f"{_relative(page)}: broken links: " + "; ".join(broken)


@pytest.mark.parametrize("page", PAGES, ids=_relative)
def test_every_repository_path_named_in_the_docs_exists(page):
    text = page.read_text(encoding="utf-8")
    missing = sorted({
        path for path in REPO_PATH.findall(text)
        if "*" not in path and "<" not in path and not (REPO / path.rstrip(".")).exists()
    })
    assert not missing, f"{_relative(page)} names paths that do not exist: {missing}"


def test_every_docs_page_named_in_the_source_exists():
    missing = {}
    for source in SOURCES:
        for path in DOCS_PATH.findall(source.read_text(encoding="utf-8", errors="replace")):
            if not (REPO / path).exists():
                missing.setdefault(path, []).append(_relative(source))
    assert not missing, f"the source names docs that are not in the repository: {missing}"


def test_the_specification_is_cited_in_the_repository():
    # the spec lives at docs/spec.md; a citation of a METRICS.md outside the project is stale
    citing = [_relative(source) for source in SOURCES
              if source != pathlib.Path(__file__) and "METRICS.md" in source.read_text(encoding="utf-8", errors="replace")]
    assert not citing, f"cite docs/spec.md, not METRICS.md: {citing}"
    assert (REPO / "docs" / "spec.md").exists()


def test_the_readme_is_a_front_door():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 320, f"README.md has {len(lines)} lines; move reference material to docs/"
    install = next(i for i, line in enumerate(lines) if line.startswith("## Install"))
    assert install < 80, f"the install section starts at line {install + 1}"
    assert not any(re.search(r"pip install ['\"]?kpass\b", line) for line in lines), \
        "kpass is not on the package index: install from the clone (pip install \".[extra]\")"
