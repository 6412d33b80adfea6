"""No import cycles between the grader's layers, read from the source's ``import`` statements.

Every ``import``/``from ... import`` in ``grader/`` counts, deferred ones
(inside a function) included: a deferred import hides a cycle from the
interpreter, not from the reader. Each package in ``LAYERS`` is one node of
the graph (all its modules together); every other module is a node of its
own, so a cycle that passes through a module outside the layers is found
too. A cycle inside one layer (a module and its helper) is not a cycle
between layers and is not reported. Imports under ``if TYPE_CHECKING:`` do
not count: they name a type for an annotation and never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "grader"

# Packages that must not import each other in a circle. Adding one is one line.
LAYERS = (
    "grader.record",
    "grader.spec",
    "grader.checks",
    "grader.sandbox",
    "grader.engine.reasons",
)


def _module_names(package: Path) -> dict[str, Path]:
    names = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Which of the package's modules each module imports (``from a import b`` counts ``a.b`` when it is one).

    The package root is left out: it holds only the version and the lazy
    public API for callers outside, and a module that reads the version from
    it runs none of that.
    """
    modules = _module_names(package)
    root = package.name
    modules.pop(root)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _run_time_nodes(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    kept = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join(kept + ([base] if base else []))
                targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def _run_time_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``)."""
    found: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        found.append(node)
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))
    return found


def _node(module: str, layers: tuple[str, ...]) -> str:
    for layer in layers:
        if module == layer or module.startswith(layer + "."):
            return layer
    return module


def cycles_between(layers: tuple[str, ...], graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of the graph (layers collapsed) that hold a layer and another node."""
    nodes: dict[str, set[str]] = {}
    for module, imported in graph.items():
        source = _node(module, layers)
        nodes.setdefault(source, set()).update(_node(target, layers) for target in imported)
        for target in imported:
            nodes.setdefault(_node(target, layers), set())
    for source, targets in nodes.items():
        targets.discard(source)
    reach = {node: _reachable(node, nodes) for node in nodes}
    groups: list[list[str]] = []
    for layer in layers:
        if layer not in nodes:
            continue
        group = sorted({layer} | {other for other in nodes if other in reach[layer] and layer in reach[other]})
        if len(group) > 1 and group not in groups:
            groups.append(group)
    return groups


def _reachable(start: str, nodes: dict[str, set[str]]) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in nodes[todo.pop()]:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_import_cycles_none_between_layers() -> None:
    assert cycles_between(LAYERS, import_graph()) == []


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "pkg"


@pytest.mark.parametrize(
    ("files", "found"),
    [
        (
            {
                "__init__.py": "",
                "a/__init__.py": "",
                "a/x.py": "from pkg.b.y import thing\n",
                "b/__init__.py": "",
                "b/y.py": "def f():\n    from pkg.a import x\n",
            },
            [["pkg.a", "pkg.b"]],
        ),
        (
            {
                "__init__.py": "",
                "a/__init__.py": "",
                "a/x.py": "import pkg.z\n",
                "z.py": "from .a.x import f\n",
                "b/__init__.py": "",
            },
            [["pkg.a", "pkg.z"]],
        ),
        (
            {
                "__init__.py": "",
                "a/__init__.py": "",
                "a/x.py": "from pkg.a import y\n",
                "a/y.py": "from . import x\n",
                "b/__init__.py": "",
                "b/y.py": "from pkg.a.x import f\n",
            },
            [],
        ),
        (
            {
                "__init__.py": "",
                "a/__init__.py": "",
                "a/x.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b.y import T\n",
                "b/__init__.py": "",
                "b/y.py": "from pkg.a.x import f\n",
            },
            [],
        ),
    ],
    ids=[
        "deferred-import-between-layers",
        "through-a-module-outside-the-layers",
        "inside-one-layer-only",
        "annotation-only-import",
    ],
)
def test_import_cycles_found_in_a_made_up_package(
    tmp_path: Path, files: dict[str, str], found: list[list[str]]
) -> None:
    graph = import_graph(_write(tmp_path, files))
    assert cycles_between(("pkg.a", "pkg.b"), graph) == found
