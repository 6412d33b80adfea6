"""Tests reach the grader only through public names.

A test that reads ``module._name`` pins a private detail: the module cannot be
changed without breaking a test that says nothing about behaviour. This scan
keeps the rule enforced: any attribute access ``X._name`` where ``X`` is bound
by ``import grader...`` or ``from grader... import X``, and any
``from grader... import _name``, fails here, listed.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent


def grader_names(tree: ast.Module) -> set[str]:
    """The names a test file binds to grader modules or objects by importing them."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "grader" or alias.name.startswith("grader."):
                    names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "grader" or node.module.startswith("grader."):
                names.update(alias.asname or alias.name for alias in node.names)
    return names


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_reaches(source: str) -> list[tuple[int, str]]:
    """Each ``X._name`` in ``source`` where ``X`` is a grader import, and each private name imported, with its line."""
    tree = ast.parse(source)
    names = grader_names(tree)
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.split(".")[0] == "grader"
        ):
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names if _private(a.name)]
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in names:
                found.append((node.lineno, f"{ast.unparse(node)}"))
    return sorted(found)


def test_the_scan_finds_a_private_reach() -> None:
    source = "from grader.sandbox import child\nimport grader.spec\nchild._x\ngrader.spec._y\nother._z\n"
    source += "from grader.cli import _hidden, shown\nfrom other import _theirs\n"
    assert private_reaches(source) == [(3, "child._x"), (4, "grader.spec._y"), (6, "grader.cli._hidden")]


def test_tests_reach_only_public_names() -> None:
    offenders = [
        f"{path.name}:{line}: {text}"
        for path in sorted(TESTS.glob("*.py"))
        for line, text in private_reaches(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
