"""The shape of the code: which kpass module may import which, no import cycle, no huge file.

The graph is read from the source (every ``import`` statement, also inside functions, except
those under ``if TYPE_CHECKING:``), so an import moved into a function to dodge a cycle still
counts. ``from kpass import NAME`` is an arrow to the module that defines ``NAME`` (the top
package loads its public names lazily). Arrows from a module to its own parent packages, which
Python imports first, are not drawn: they are never a choice of the author.
"""

from __future__ import annotations

import ast
import pathlib

import kpass
import kpass.metrics

REPO = pathlib.Path(__file__).resolve().parents[2]
FOLDERS = {"plugin": "kpass", "metrics": "kpass.metrics", "adapters": "kpass.adapters"}

#: Largest source file, in lines (docstrings and comments count: they are read too).
MAX_LINES = 900
#: Files allowed to be longer for now, each with the reason and who removes it.
LONG_FILE_EXCEPTIONS: dict[str, str] = {}  # metrics/_intervals.py was split by concern (issue #16)

#: The rooms of ``plugin/`` from the top down: a room imports only rooms below it (and
#: ``kpass.errors``, ``kpass.notes`` and ``kpass.metrics``, which are below every room).
ROOMS = ("kpass.cli", "kpass.render", "kpass.reports", "kpass.host", "kpass.data")


def _module_name(path: pathlib.Path) -> str:
    relative = path.relative_to(REPO)
    parts = [FOLDERS[relative.parts[0]], *relative.parts[1:]]
    parts[-1] = parts[-1][: -len(".py")]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


SOURCES = {_module_name(p): p for folder in FOLDERS for p in sorted((REPO / folder).rglob("*.py"))}


def _is_type_checking_block(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _imports(tree: ast.AST):
    """Every Import/ImportFrom node outside ``if TYPE_CHECKING:`` blocks."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        for child in ast.iter_child_nodes(node):
            if not _is_type_checking_block(child):
                stack.append(child)


def _defining_module(name: str) -> str:
    """The module behind ``from kpass import name``."""
    if f"kpass.{name}" in SOURCES:
        return f"kpass.{name}"
    value = getattr(kpass, name)
    module = getattr(value, "__module__", None)
    return module if isinstance(module, str) and module in SOURCES else "kpass"


def _arrows(module: str) -> list[tuple[str, str, int]]:
    """``(imported module, imported name or "", line)`` for each kpass import of ``module``."""
    path = SOURCES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(alias.name, "", node.lineno) for alias in node.names if alias.name.split(".")[0] == "kpass"]
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")
            anchor = anchor[: len(anchor) - node.level + 1]
            base = ".".join(anchor + ([base] if base else []))
        if base.split(".")[0] != "kpass":
            continue
        for alias in node.names:
            target = f"{base}.{alias.name}"
            if target in SOURCES:
                out.append((target, "", node.lineno))
            elif base == "kpass" and alias.name != "*":
                out.append((_defining_module(alias.name), alias.name, node.lineno))
            else:
                out.append((base, alias.name, node.lineno))
    return out


GRAPH = {module: _arrows(module) for module in SOURCES}


def _parents(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def _room(module: str) -> str | None:
    return next((room for room in ROOMS if module == room or module.startswith(room + ".")), None)


def test_every_arrow_points_at_a_kpass_source_file():
    unknown = [f"{m}:{line} imports {target}" for m, arrows in GRAPH.items() for target, _, line in arrows
               if target not in SOURCES]
    assert not unknown, unknown


def test_no_import_cycle():
    edges = {m: sorted({t for t, _, _ in arrows if t in SOURCES and t != m and t not in _parents(m)})
             for m, arrows in GRAPH.items()}
    state: dict[str, int] = {}  # 1 on the path, 2 done
    cycles = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in edges[module]:
            if state.get(target) == 1:
                cycles.append(" -> ".join(path[path.index(target):] + [target]))
            elif target not in state:
                visit(target, path + [target])
        state[module] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_metrics_import_nothing_else_of_kpass():
    wrong = [f"{m}:{line} imports {t}" for m, arrows in GRAPH.items() if m.startswith("kpass.metrics")
             for t, _, line in arrows if not t.startswith("kpass.metrics")]
    assert not wrong, wrong


def test_the_host_never_imports_the_adapters():
    wrong = [f"{m}:{line} imports {t}" for m, arrows in GRAPH.items()
             if not m.startswith(("kpass.adapters", "kpass.metrics"))
             for t, _, line in arrows if t.startswith("kpass.adapters")]
    assert not wrong, wrong


def public_names(module: str) -> set[str] | None:
    """The names in ``module``'s ``__all__`` as written in its source, or None without one.

    ``__all__`` is a literal list (``kpass``, ``kpass.data.validation``, ...), or, for a package
    that re-exports its private modules (``kpass.metrics``), ``sorted(name for name in dir() if not
    name.startswith("_"))``: then every name its ``__init__`` imports without a leading underscore.
    """
    tree = ast.parse(SOURCES[module].read_text(encoding="utf-8"))
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if not (isinstance(target, ast.Name) and target.id == "__all__" and node.value is not None):
            continue
        if isinstance(node.value, (ast.List, ast.Tuple)):
            return {element.value for element in node.value.elts if isinstance(element, ast.Constant)}
        assert "dir()" in ast.unparse(node.value), f"{module}: __all__ must be a literal list"
        imported = [alias.asname or alias.name for n in tree.body if isinstance(n, ast.ImportFrom) for alias in n.names]
        return {name for name in imported if not name.startswith("_")}
    return None


def test_adapters_use_public_kpass_names_only():
    # public: in the __all__ of the module imported from (kpass.__all__ for ``from kpass import``);
    # a helper the adapters share with the host is imported from the module that owns it
    wrong = []
    for module, path in SOURCES.items():
        if not module.startswith("kpass.adapters"):
            continue
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                wrong += [f"{module}:{node.lineno} import {a.name}" for a in node.names
                          if a.name.startswith("kpass.") and not a.name.startswith(("kpass.adapters", "kpass.metrics"))]
                continue
            if node.level or not (node.module or "").startswith("kpass") or node.module.startswith("kpass.adapters"):
                continue
            names = public_names(node.module) if node.module in SOURCES else None
            for alias in node.names:
                if f"{node.module}.{alias.name}" in SOURCES:  # a module: ``from kpass import metrics``
                    continue
                if names is None or alias.name not in names or alias.name.startswith("_"):
                    wrong.append(f"{module}:{node.lineno} from {node.module} import {alias.name}")
    assert not wrong, "adapters must import names listed in the __all__ of the module they import from:\n" + \
        "\n".join(wrong)


def test_the_public_names_read_from_the_source_are_the_runtime_ones():
    assert public_names("kpass") == set(kpass.__all__)
    assert public_names("kpass.metrics") == set(kpass.metrics.__all__)


def test_rooms_import_only_rooms_below_them():
    wrong = set()
    for module, arrows in GRAPH.items():
        room = _room(module)
        if room is None:
            continue
        for target, _, line in arrows:
            other = _room(target)
            if other is not None and other != room and ROOMS.index(other) < ROOMS.index(room):
                wrong.add(f"{module}:{line} ({room}) imports {target} ({other})")
    assert not wrong, "an arrow runs up:\n" + "\n".join(sorted(wrong))


def test_errors_and_public_names_sit_below_every_room():
    arrows = [t for t, _, _ in GRAPH["kpass.errors"]]
    assert arrows == [], arrows


def test_notes_sit_below_every_room():
    """``kpass.notes`` (the note record) is made by readers, the host, reports and adapters alike."""
    arrows = [t for t, _, _ in GRAPH["kpass.notes"]]
    assert arrows == [], arrows


def test_reports_never_import_render_not_even_for_types():
    """Reports return typed results; the text for people is made in ``kpass.render`` alone."""
    wrong = []
    for module, path in SOURCES.items():
        if not module.startswith("kpass.reports"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kpass.render"):
                wrong.append(f"{module}:{node.lineno} imports {node.module}")
            elif isinstance(node, ast.Import):
                wrong += [f"{module}:{node.lineno} imports {a.name}" for a in node.names
                          if a.name.startswith("kpass.render")]
    assert not wrong, wrong


def test_no_source_file_is_too_long():
    long = {}
    for folder in ("plugin", "metrics", "adapters", "examples", "scripts"):
        for path in (REPO / folder).rglob("*.py"):
            n_lines = len(path.read_text(encoding="utf-8").splitlines())
            relative = str(path.relative_to(REPO))
            if n_lines > MAX_LINES and relative not in LONG_FILE_EXCEPTIONS:
                long[relative] = n_lines
    assert not long, f"split these files (over {MAX_LINES} lines): {long}"
    for relative in LONG_FILE_EXCEPTIONS:  # an exception that is no longer needed goes
        assert len((REPO / relative).read_text(encoding="utf-8").splitlines()) > MAX_LINES, relative


def test_no_hidden_imports():
    """``importlib.import_module`` hides an arrow from this graph; only the lazy top package uses it."""
    hidden = []
    for module, path in SOURCES.items():
        if module == "kpass":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                function = node.func
                name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
                if name in ("import_module", "__import__"):
                    hidden.append(f"{module}:{node.lineno}")
    assert not hidden, hidden
