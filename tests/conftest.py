"""Shared fixtures: the project root, the real catalog, a grading session on the real sandbox, and more."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def catalog():
    from grader.spec.loader import load_catalog

    return load_catalog(ROOT / "exercises")


@pytest.fixture(scope="session")
def session(catalog):
    from grader.grading import GradingSession

    with GradingSession(catalog) as grading:
        yield grading


@pytest.fixture(autouse=True)
def _run_from_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("GRADER_EXERCISES", raising=False)
    os.environ.setdefault("GRADER_SANDBOX_LAYERS", "all")


@pytest.fixture()
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private, empty grader cache folder for one test (the cache switched on)."""
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("GRADER_NO_CACHE", raising=False)
    return tmp_path / "cache"


@pytest.fixture()
def parsed_by_ast(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every source ``ast.parse`` is given while the test runs (parsed as usual): learner code must not be one.

    Python's parser needs about a second and 300 MiB for a megabyte of nested calls, so the grader's
    own processes lex learner source instead (docs/security.md).
    """
    parsed: list[object] = []
    parse = ast.parse

    def watched(source: str | bytes, *args: object, **kwargs: object) -> ast.AST:
        parsed.append(source)
        return parse(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", watched)
    return parsed
