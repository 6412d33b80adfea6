"""Where the exercise specs are; standard library only, so ``grader list`` can find them without pydantic."""

from __future__ import annotations

import os
from pathlib import Path

from grader.errors import UsageError

__all__ = ["find_exercises_dir"]


def find_exercises_dir(option: str | os.PathLike[str] | None = None) -> Path:
    """``--exercises``, else ``$GRADER_EXERCISES``, else ``./exercises``."""
    chosen = option or os.environ.get("GRADER_EXERCISES") or "exercises"
    path = Path(chosen)
    if not path.is_dir():
        raise UsageError(
            f"no exercises directory at {str(path)!r}; run from the project root, "
            "or pass --exercises DIR (or set GRADER_EXERCISES)"
        )
    return path
