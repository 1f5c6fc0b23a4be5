"""The documentation holds together: every link resolves, every path it names exists, and every
``docs/...`` page the source names is in the repository.

Checked on README.md and docs/*.md: relative links (``[text](docs/cli.md)``, images, anchors such
as ``README.md#install`` against the target's headings) and repository paths written in the text
(``scripts/coverage_study.py``, ``tests/adapters/fake_openai_server.py``); and in every source file
(metrics/, plugin/, adapters/, tests/, scripts/, examples/, Makefile, pyproject.toml), each
``docs/<page>`` it mentions. A page moved or renamed without its references fails here.

docs/architecture.md is checked against the code it names (backticked ``kpass.`` names, module
files, ``name()`` calls, private helpers, the names of each module's table row), and README.md's
sentence on what ``pip install .`` alone needs against pyproject.toml's dependencies.
"""

from __future__ import annotations

import ast
import builtins
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


# ------------------------------------------------------------------------------------------
# docs/architecture.md names only what the code has (issue #35, point 7). Read from the page, so
# the check holds whatever the layout: every backticked ``kpass.dotted.name`` resolves, every
# ``module.py`` is a source file, every ``name(...)`` and ``_private`` helper is defined somewhere,
# and each name in a ``| `module.py` | ... |`` row is bound in that module.

CODE_PAGES = [REPO / "docs" / "architecture.md"]
CODE_FOLDERS = ("metrics", "plugin", "adapters", "scripts")
SPAN = re.compile(r"`([^`\n]+)`")
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
CALL = re.compile(r"^((?:[A-Za-z_]\w*\.)*)([A-Za-z_]\w*)\(")
DOTTED = re.compile(r"^kpass(?:\.[A-Za-z_]\w*)+")


def _source_files() -> list[pathlib.Path]:
    return [p for folder in CODE_FOLDERS for p in (REPO / folder).rglob("*.py") if ".venv" not in p.parts]


def _bound_names(tree: ast.Module) -> set[str]:
    """Names a module binds at its top level: functions, classes, assignments, imports."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _code_index() -> tuple[dict[str, list[set[str]]], set[str]]:
    """``file name -> [names bound by each file of that name]`` and every name defined anywhere
    (functions and methods, classes, module-level assignments)."""
    by_file: dict[str, list[set[str]]] = {}
    defined: set[str] = set()
    for path in _source_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        by_file.setdefault(path.name, []).append(_bound_names(tree))
        defined |= {node.name for node in ast.walk(tree)
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        defined |= _bound_names(tree)
    return by_file, defined | set(dir(builtins))


def _resolves(dotted: str) -> bool:
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(value, attribute):
                return False
            value = getattr(value, attribute)
        return True
    return False


def _code_problems(page: pathlib.Path) -> list[str]:
    by_file, defined = _code_index()
    text = page.read_text(encoding="utf-8")
    problems = []
    for span in SPAN.findall(text):
        span = span.strip()
        if DOTTED.match(span) and not _resolves(DOTTED.match(span).group(0)):
            problems.append(f"`{span}`: {DOTTED.match(span).group(0)} does not resolve")
        for module in re.findall(r"(?<![\w/.-])(\w+\.py)\b", span):
            if module not in by_file:
                problems.append(f"`{span}`: no source file {module}")
        call = CALL.match(span)
        if call and not span.startswith("kpass.") and call.group(2) not in defined:
            problems.append(f"`{span}`: nothing defines {call.group(2)}()")
        if re.fullmatch(r"_[A-Za-z]\w*", span) and span not in defined:  # a private helper
            problems.append(f"`{span}`: nothing defines {span}")
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")] if line.startswith("|") else []
        module = re.fullmatch(r"`(\w+\.py)`", cells[0]) if cells else None
        if module is None or module.group(1) not in by_file:
            continue
        bound = set().union(*by_file[module.group(1)]) | set(dir(builtins))
        for cell in cells[1:]:
            for span in SPAN.findall(cell):
                if IDENTIFIER.fullmatch(span) and span not in bound:
                    problems.append(f"{module.group(1)} row: `{span}` is not bound in {module.group(1)}")
    return problems


@pytest.mark.parametrize("page", CODE_PAGES, ids=_relative)
def test_the_architecture_page_names_only_code_that_exists(page):
    problems = _code_problems(page)
    assert not problems, f"{_relative(page)} cites code that does not exist:\n" + "\n".join(problems)


def test_the_code_check_catches_a_stale_name(tmp_path):
    stale = tmp_path / "stale.md"
    stale.write_text("| `_power.py` | `icc`, `no_such_function` |\n\nUses `_no_such_helper` and "
                     "`kpass.reports.report.no_such_name`, `no_such_module.py`, `gone_helper(x)`.\n")
    problems = _code_problems(stale)
    assert len(problems) == 5, problems
    assert not _code_problems(_write(tmp_path / "fine.md", "| `_power.py` | `icc` |\n`kpass.compute_report`"))


def _write(path: pathlib.Path, text: str) -> pathlib.Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_the_readme_names_the_dependencies_of_a_plain_install():
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")  # tomllib is Python 3.11+
    block = re.search(r"^dependencies = \[(.*?)^\]", pyproject, flags=re.M | re.S)
    assert block, "pyproject.toml: no [project] dependencies list"
    required = {name.lower() for name in re.findall(r'^\s*"([A-Za-z0-9_.-]+)', block.group(1), flags=re.M)}
    assert {"numpy", "scipy"} <= required
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    sentence = re.search(r"`pip install \.` alone[^.]*\(([^)]*)\)", readme)
    assert sentence, "README.md: the sentence on what `pip install .` alone needs, with the packages in parentheses"
    named = {word.lower() for word in re.findall(r"[A-Za-z][\w.-]*", sentence.group(1))} - {"and", "only"}
    assert named == required, f"README says {sorted(named)}; pyproject.toml requires {sorted(required)}"
