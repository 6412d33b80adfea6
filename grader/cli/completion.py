"""Shell completion of exercise and assignment ids (``_GRADER_COMPLETE=bash_source grader``; see docs/authoring.md).

click calls these while the shell waits, on a half-typed command line, so
they read ``grader list``'s cached rows (no pydantic, no numpy) and load the
specs only when that cache is stale. They never raise and never print: a
completion that fails offers nothing, and the command itself, once run, says
what is wrong.
"""

from __future__ import annotations

import contextlib
import io
import os
from typing import Any

import click
from click.shell_completion import CompletionItem

__all__ = ["complete_assignment_ids", "complete_exercise_ids"]


def complete_exercise_ids(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """The ids of the exercises (not assignments) that start with ``incomplete``, each with its title."""
    return [
        CompletionItem(row[0], help=row[3])
        for row in _rows(ctx)
        if row[1] != "assignment" and row[0].startswith(incomplete)
    ]


def complete_assignment_ids(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """The ids of the assignments that start with ``incomplete``, ``all`` (every exercise) among them."""
    return [
        CompletionItem(row[0], help=row[3])
        for row in _rows(ctx)
        if row[1] == "assignment" and row[0].startswith(incomplete)
    ]


def _rows(ctx: click.Context) -> list[tuple[str, str, str, str]]:
    """``grader list``'s rows (id, kind, points, title) for the folder the command line names; [] on any failure."""
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return _listing(_exercises_dir(ctx))
    except Exception:  # a broken spec, an unreadable folder, a bug: completion offers nothing, the command says why
        return []


def _listing(exercises_dir: str | None) -> list[tuple[str, str, str, str]]:
    from grader.spec.listing import cached_rows, catalog_rows, store_rows

    rows = cached_rows(exercises_dir)
    if rows is None:
        from grader.spec.loader import load_catalog

        catalog = load_catalog(exercises_dir)
        rows = catalog_rows(catalog)
        store_rows(exercises_dir, catalog, rows)
    return rows


def _exercises_dir(ctx: click.Context | None) -> str | None:
    """``--exercises`` as typed so far: after the command (it wins) or before it; ``None`` for the default."""
    while ctx is not None:
        obj: Any = ctx.obj
        if isinstance(obj, dict) and obj.get("exercises_dir"):
            return str(obj["exercises_dir"])
        if ctx.params.get("exercises_dir"):
            return str(ctx.params["exercises_dir"])
        ctx = ctx.parent
    return os.environ.get("GRADER_EXERCISES") or None
