"""Where the exercise specs are; standard library only, so ``grader list`` can find them without pydantic."""

from __future__ import annotations

import os
from pathlib import Path

from grader.errors import UsageError

__all__ = ["HANDOUT_MARKER", "HANDOUT_SPECS", "find_exercises_dir"]

# What 'grader release' writes: a learner in the handout folder runs 'grader grade FILE --public' with no option.
HANDOUT_MARKER = ".grader-handout"
HANDOUT_SPECS = "public-checks"


def find_exercises_dir(option: str | os.PathLike[str] | None = None) -> Path:
    """``--exercises``, else ``$GRADER_EXERCISES``, else ``./exercises``, else a handout's ``./public-checks``."""
    chosen = option or os.environ.get("GRADER_EXERCISES")
    if not chosen:
        chosen = "exercises"
        if not Path(chosen).is_dir() and Path(HANDOUT_MARKER).is_file() and Path(HANDOUT_SPECS).is_dir():
            chosen = HANDOUT_SPECS
    path = Path(chosen)
    if not path.is_dir():
        raise UsageError(
            f"no exercises directory at {str(path)!r}; run from the project root (or a handout's folder), "
            "or pass --exercises DIR (or set GRADER_EXERCISES)"
        )
    return path
