"""The grader's layers, read from the source's ``import`` statements: one direction, and no cycles.

The rule, in one line (docs/architecture.md draws it)::

    cli -> batch | authoring | export | jupyter -> grading -> engine | report | submission -> spec -> checks
        -> cache -> sandbox

over a foundation (``errors``, ``results``, ``memo``, ``safeyaml``, ``record``)
that every layer may use and that uses nothing above it. A module may import
modules of its own package, of any layer to its right, and the foundation;
nothing imports ``cli``. Every module of the package belongs to one of these
places, so a new module is placed on purpose.

Every ``import``/``from ... import`` counts: deferred ones (inside a
function) and those under ``if TYPE_CHECKING:`` too. A deferred import hides
a cycle from the interpreter, not from the reader, and a cycle in the types
is a cycle in the design. No two modules may import each other, directly or
round a loop, inside one package either.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "grader"

# From the top down; the packages of one row may not import each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("grader.cli",),
    ("grader.batch", "grader.authoring", "grader.export", "grader.jupyter"),
    ("grader.grading",),
    ("grader.engine", "grader.report", "grader.submission"),
    ("grader.spec",),
    ("grader.checks",),
    ("grader.cache",),  # where the disk cache lives depends on whether the sandbox can confine at all
    ("grader.sandbox",),
)
FOUNDATION = ("grader.errors", "grader.results", "grader.memo", "grader.safeyaml", "grader.record")


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
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    kept = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join(kept + ([base] if base else []))
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names
                ]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def place_of(module: str, layers: tuple[tuple[str, ...], ...], foundation: tuple[str, ...]) -> tuple[int, str] | None:
    """``(row, package)`` of a module: its layer's row from the top, or ``len(layers)`` for the foundation."""
    for row, packages in enumerate(layers):
        for package in packages:
            if _in(module, package):
                return row, package
    for package in foundation:
        if _in(module, package):
            return len(layers), package
    return None


def wrong_directions(
    graph: dict[str, set[str]], layers: tuple[tuple[str, ...], ...] = LAYERS, foundation: tuple[str, ...] = FOUNDATION
) -> list[str]:
    """Every import that goes up, sideways within a row, or out of the foundation; and every unplaced module."""
    wrong = []
    for module in sorted(graph):
        here = place_of(module, layers, foundation)
        if here is None:
            wrong.append(f"{module} belongs to no layer")
            continue
        for target in sorted(graph[module]):
            there = place_of(target, layers, foundation)
            if there is None or there[1] == here[1]:
                continue
            if here[0] == len(layers):
                if there[0] != len(layers):
                    wrong.append(f"{module} -> {target}: the foundation imports a layer")
            elif there[0] <= here[0]:
                wrong.append(f"{module} -> {target}: {here[1]} may not import {there[1]}")
    return wrong


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of two or more modules (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return sorted(found)


def test_import_layers_every_import_points_down() -> None:
    assert wrong_directions(import_graph()) == []


def test_import_layers_no_module_imports_cli() -> None:
    graph = import_graph()
    assert [
        m for m, targets in graph.items() if not _in(m, "grader.cli") and any(_in(t, "grader.cli") for t in targets)
    ] == []


def test_import_cycles_none_between_any_two_modules() -> None:
    assert cycles(import_graph()) == []


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
            [["pkg.a.x", "pkg.b.y"]],
        ),
        (
            {"__init__.py": "", "a/__init__.py": "", "a/x.py": "import pkg.z\n", "z.py": "from .a.x import f\n"},
            [["pkg.a.x", "pkg.z"]],
        ),
        (
            {"__init__.py": "", "a/__init__.py": "", "a/x.py": "from pkg.a import y\n", "a/y.py": "from . import x\n"},
            [["pkg.a.x", "pkg.a.y"]],
        ),
        (
            {
                "__init__.py": "",
                "a/__init__.py": "",
                "a/x.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b.y import T\n",
                "b/__init__.py": "",
                "b/y.py": "from pkg.a.x import f\n",
            },
            [["pkg.a.x", "pkg.b.y"]],
        ),
        (
            {
                "__init__.py": "",
                "a/__init__.py": "",
                "a/x.py": "from pkg.a import y\n",
                "a/y.py": "import os\n",
                "b/__init__.py": "",
                "b/y.py": "from pkg.a.x import f\n",
            },
            [],
        ),
    ],
    ids=["deferred-import", "through-a-module-outside-the-packages", "inside-one-package", "annotation-only", "none"],
)
def test_import_cycles_found_in_a_made_up_package(
    tmp_path: Path, files: dict[str, str], found: list[list[str]]
) -> None:
    assert cycles(import_graph(_write(tmp_path, files))) == found


@pytest.mark.parametrize(
    ("files", "wrong"),
    [
        (
            {
                "__init__.py": "",
                "low/__init__.py": "",
                "low/x.py": "from pkg.high import y\n",
                "high/__init__.py": "",
                "high/y.py": "",
            },
            ["pkg.low.x -> pkg.high.y: pkg.low may not import pkg.high"],
        ),
        (
            {
                "__init__.py": "",
                "low/__init__.py": "",
                "low/x.py": "",
                "high/__init__.py": "",
                "high/y.py": "from pkg.low import x\n",
            },
            [],
        ),
        (
            {
                "__init__.py": "",
                "left/__init__.py": "",
                "left/x.py": "def f():\n    from pkg.right import y\n",
                "right/__init__.py": "",
                "right/y.py": "",
                "low/__init__.py": "",
                "high/__init__.py": "",
            },
            ["pkg.left.x -> pkg.right.y: pkg.left may not import pkg.right"],
        ),
        (
            {
                "__init__.py": "",
                "base.py": "from pkg.low import x\n",
                "low/__init__.py": "",
                "low/x.py": "",
                "high/__init__.py": "",
            },
            ["pkg.base -> pkg.low.x: the foundation imports a layer"],
        ),
        (
            {"__init__.py": "", "stray.py": "", "low/__init__.py": "", "high/__init__.py": ""},
            ["pkg.stray belongs to no layer"],
        ),
    ],
    ids=["upward", "downward", "sideways-in-one-row", "out-of-the-foundation", "unplaced-module"],
)
def test_import_layers_found_in_a_made_up_package(tmp_path: Path, files: dict[str, str], wrong: list[str]) -> None:
    if "base.py" not in files:
        files = {**files, "base.py": ""}
    layers = (("pkg.high",), ("pkg.left", "pkg.right"), ("pkg.low",))
    graph = import_graph(_write(tmp_path, files))
    assert wrong_directions(graph, layers, ("pkg.base",)) == wrong
