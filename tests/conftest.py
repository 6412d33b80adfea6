"""Shared fixtures: the project root, the real catalog, and a grading session on the real sandbox."""

from __future__ import annotations

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
