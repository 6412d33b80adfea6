"""The files a spec reads besides itself: one list, used by the loader's checks and by the batch's results key.

An implementation spec names files by path, relative to the folder holding
``exercises/``: its reference solution, a handout's reference answers, the
given functions (``functions:``) and each known-wrong solution. Grading reads
them, so a result depends on their bytes as much as on the spec's. The loader
checks that each exists (``loader._check_paths``) and the batch hashes each
into the key its results are stored under (``batch.cache.spec_digest``); both
take the list from :func:`spec_files`, so a path a future spec key adds is
checked and keyed once it is listed here (``tests/test_spec_files.py`` fails
for a path-valued key left out).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from msgspec import Struct

__all__ = ["PATH_KEYS", "SpecFile", "spec_files", "spec_files_of"]

# The keys of an implementation spec whose value is a path, in the order a spec usually writes them.
PATH_KEYS = ("reference_solution", "reference_answers", "functions")
KNOWN_WRONG_PATH = "path"  # each known_wrong entry's path


class SpecFile(Struct, frozen=True):
    """One file a spec names: its path as written, and where in the spec it is written.

    ``loc`` is the dotted location the loader turns into a line
    (``("known_wrong", 1, "path")``); ``key`` the spec key it is the value of.
    """

    relative: str
    loc: tuple[str | int, ...]

    @property
    def key(self) -> str:
        """The spec key naming the file: ``functions``, ``known_wrong``, ..."""
        return str(self.loc[0])


def spec_files(exercise: Any) -> list[SpecFile]:
    """Every file ``exercise`` names, in the order its spec lists them; a quiz (or anything else) names none."""
    found: list[SpecFile] = []
    for key in PATH_KEYS:
        relative = getattr(exercise, key, None)
        if isinstance(relative, str):
            found.append(SpecFile(relative, (key,)))
    for number, wrong in enumerate(getattr(exercise, "known_wrong", None) or []):
        relative = getattr(wrong, KNOWN_WRONG_PATH, None)
        if isinstance(relative, str):
            found.append(SpecFile(relative, ("known_wrong", number, KNOWN_WRONG_PATH)))
    return found


def spec_files_of(exercises: Iterable[Any]) -> list[str]:
    """The paths (as written) of every file the given exercises name, each once, sorted."""
    return sorted({file.relative for exercise in exercises for file in spec_files(exercise)})
