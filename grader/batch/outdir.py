"""Where a batch writes: an output folder that is no learner's, and one the batch can write.

``--out`` is judged with its links followed, as the writes will follow them:

- resolved, it (and its ``results/``, ``feedback/`` and ``failing/``) may be neither the
  class folder nor anything inside it: every entry of the class folder is a
  learner, so outputs written there would be graded, or would hide that
  learner, on the next run. A learner's entry that is a link is graded as a
  link, never followed, so where it leads does not matter (a link to ``/``
  must not block the class);
- the class folder may not lie inside ``results/``, ``feedback/`` or ``failing/``, nor be
  the output folder itself;
- a dangling link, a path through a file, or a folder the batch cannot create
  or write a file in is refused, before any learner is graded;
- a place where the batch writes a file (``gradebook.csv``, a learner's
  result) that holds something other than a file or a link is refused
  (``os.replace`` replaces a link itself and never writes through it).

Every refusal is a ``UsageError``: one line naming the path and what is wrong.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from grader.errors import UsageError

__all__ = ["OUTPUT_FILES", "check_out", "check_output_files", "make_out", "resolved"]

OUTPUT_FILES = ("gradebook.csv", "summary.md", "report.html", "similarity.html")
_FOLDERS = ("results", "feedback", "failing")


def resolved(path: Path) -> Path:
    """``path`` with every link followed (what does not exist yet kept as written), or a usage error."""
    try:
        return path.resolve()
    except (OSError, RuntimeError) as error:  # RuntimeError: a link loop, before Python 3.13
        raise UsageError(f"{path}: cannot tell where this folder is ({error})") from None


def check_out(folder: Path, out: Path) -> None:
    """Refuse an output folder that is, or leads, into the class folder, or that cannot be a folder."""
    class_folder = resolved(folder)
    for place in (out, *(out / name for name in _FOLDERS)):
        target = resolved(place)
        if target == class_folder:
            raise UsageError(
                f"{place}: the output folder cannot be the class folder itself; every entry there is taken "
                "for a learner"
            )
        if target.is_relative_to(class_folder):
            entry = target.relative_to(class_folder).parts[0]
            where = "is" if target == Path(os.path.abspath(place)) else f"leads to {target},"
            raise UsageError(
                f"{place}: {where} inside the class folder (its entry {entry!r}), where every entry is a "
                "learner; put the output folder beside the class folder"
            )
        if place != out and class_folder.is_relative_to(target):
            raise UsageError(f"{place}: the class folder {folder} is inside it, and the batch writes there")
    if out.is_symlink() and not out.exists():
        raise UsageError(f"{out}: a symbolic link to {os.readlink(out)!r}, which leads to nothing that exists")
    try:
        is_file = out.exists() and not out.is_dir()
    except OSError as error:
        raise UsageError(f"{out}: cannot be looked at ({error.strerror or error})") from None
    if is_file:
        raise UsageError(f"{out}: exists and is not a folder")
    for name in _FOLDERS:
        if (out / name).exists() and not (out / name).is_dir():
            raise UsageError(f"{out / name}: exists and is not a folder")
    above = resolved(out).parent
    while not above.exists() and above != above.parent:
        above = above.parent
    if not above.is_dir():
        raise UsageError(f"{out}: cannot be made, since {above} is not a folder")


def check_output_files(paths: Iterable[Path]) -> None:
    """Refuse a place the batch will write a file to that holds a folder, a FIFO or anything but a file or link."""
    for path in paths:
        try:
            facts = os.lstat(path)
        except FileNotFoundError:
            continue
        except OSError as error:
            raise UsageError(f"{path}: cannot be written ({error.strerror or error})") from None
        if not (stat.S_ISREG(facts.st_mode) or stat.S_ISLNK(facts.st_mode)):
            what = "a folder" if stat.S_ISDIR(facts.st_mode) else "not a regular file"
            raise UsageError(f"{path}: is {what}, where the batch writes a file; move it away")


def make_out(out: Path) -> tuple[Path, Path]:
    """Create the output folder with its ``results/`` and ``feedback/``, each shown to take a new file."""
    made = []
    for place in (out, *(out / name for name in _FOLDERS)):
        if place.is_symlink() and not place.exists():
            raise UsageError(f"{place}: a symbolic link to {os.readlink(place)!r}, which leads to nothing that exists")
        if place.exists() and not place.is_dir():
            raise UsageError(f"{place}: exists and is not a folder")
        try:
            place.mkdir(parents=True, exist_ok=True)
            handle, probe = tempfile.mkstemp(dir=place, prefix=".probe.", suffix=".tmp")
            os.close(handle)
            os.unlink(probe)
        except OSError as error:
            raise UsageError(f"{place}: the batch cannot write there ({error.strerror or error})") from None
        made.append(place)
    return made[1], made[2]
