"""The rows of ``grader list``, kept in the spec cache so that listing imports neither pydantic nor numpy.

An entry is keyed by the bytes of every spec file of the exercises folder
and the code the specs are built with (``cache.spec_key``); it also names
the solution files the specs point to, and is used only while they all
exist. Any change, or a folder that would not load, goes the long way:
``load_catalog`` then reports the problem with its file and line.
Entries are plain JSON data, checked when read (``cache.load``). Standard library only.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from grader import cache
from grader.errors import UsageError
from grader.spec.folder import find_exercises_dir

__all__ = ["Row", "cached_rows", "catalog_rows", "store_rows"]

Row = tuple[str, str, str, str]  # id, kind, points, title

_KIND = "listing"


def _key(exercises_dir: str | os.PathLike[str] | None) -> str | None:
    try:
        chosen = find_exercises_dir(exercises_dir)
        files = sorted(p for p in chosen.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
        digest = hashlib.sha256(str(chosen.resolve()).encode())
        for path in files:
            digest.update(b"\0" + path.name.encode() + b"\0" + path.read_bytes())
    except (OSError, UsageError):  # the long way says what is wrong
        return None
    return cache.spec_key(digest.digest())


def cached_rows(exercises_dir: str | os.PathLike[str] | None) -> list[Row] | None:
    """The listing of an unchanged exercises folder, or ``None`` (not cached, changed, or a solution file gone)."""
    key = _key(exercises_dir) if cache.enabled() else None
    entry = cache.load(key, _entry, kind=_KIND) if key else None
    if entry is None:
        return None
    rows, paths = entry
    return rows if all(os.path.isfile(p) for p in paths) else None


def _entry(data: Any) -> tuple[list[Row], list[str]]:
    """A cache entry's rows (four strings each) and solution paths (strings); ``ValueError`` for anything else."""
    if type(data) is not dict or data.keys() != {"rows", "paths"}:
        raise ValueError("not a listing entry")
    rows, paths = data["rows"], data["paths"]
    if type(rows) is not list or type(paths) is not list or not all(type(p) is str for p in paths):
        raise ValueError("a listing entry holds a list of rows and a list of paths")
    if not all(type(row) is list and len(row) == 4 and all(type(cell) is str for cell in row) for row in rows):
        raise ValueError("a listing row is four strings")
    return [(row[0], row[1], row[2], row[3]) for row in rows], paths


def catalog_rows(catalog: Any) -> list[Row]:
    """Every exercise, then every assignment (and ``all``), as ``grader list`` shows them."""
    rows: list[Row] = [(e.id, e.kind, f"{e.max_score:g}", e.title) for e in catalog.exercises.values()]
    assignments = dict(catalog.assignments)
    for assignment in assignments.values():
        points = sum(catalog.exercises[i].max_score for i in assignment.exercises)
        rows.append((assignment.id, "assignment", f"{points:g}", assignment.title))
    if "all" not in assignments:
        total = sum(e.max_score for e in catalog.exercises.values())
        rows.append(("all", "assignment", f"{total:g}", "Every exercise"))
    return rows


def store_rows(exercises_dir: str | os.PathLike[str] | None, catalog: Any, rows: list[Row]) -> None:
    """Keep ``rows`` for the next ``grader list`` of this very folder."""
    key = _key(exercises_dir) if cache.enabled() else None
    if key is None:
        return
    paths = [
        str(catalog.resolve(relative))
        for exercise in catalog.exercises.values()
        for relative in [
            getattr(exercise, "reference_solution", None),
            *(wrong.path for wrong in getattr(exercise, "known_wrong", [])),
        ]
        if relative is not None
    ]
    cache.store(key, {"rows": [list(row) for row in rows], "paths": paths}, kind=_KIND)
