"""Scratch folders for learner processes: made once, emptied and handed out again once their process is gone.

A learner process reads its submission's files from a scratch folder and
nothing else of the grader's. Its warm parent builds the Landlock ruleset
that allows that folder once per folder and keeps it (``warm_parent_server._ruleset_for``),
so a process given a folder used before confines itself with one system call
instead of adding ~280 rules. A folder is handed out again only after the
process that used it is gone (its end confirmed by the warm parent) and the
files written for it are removed: a learner process cannot write anywhere,
so an empty folder holds nothing of the learner before.

Standard library only: the warm parent's client imports it before numpy.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterable

__all__ = ["SCRATCH_PREFIX", "ScratchFolders"]

SCRATCH_PREFIX = "grader-"  # learner scratch folders: grader-<pid of the grading process>-<random>


class ScratchFolders:
    """The scratch folders of one grading process for one warm parent, with up to ``keep`` kept for reuse."""

    def __init__(self, keep: int = 4) -> None:
        self._keep = keep
        self._free: list[str] = []
        self._owner = os.getpid()
        self._closed = False

    def take(self) -> str:
        """An empty folder: one given back before, or a new one."""
        if os.getpid() != self._owner:  # a fork inherited this object: the folders are its parent's
            self._free, self._owner = [], os.getpid()
        while self._free:
            folder = self._free.pop()
            if _empty_folder_of_ours(folder):
                return folder
            shutil.rmtree(folder, ignore_errors=True)
        return tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-")

    def give_back(self, folder: str, names: Iterable[str]) -> None:
        """Return ``folder``, whose process is gone: the files ``names`` written there are removed.

        It is kept for reuse when nothing else is left in it, else removed.
        """
        for name in names:
            try:
                os.unlink(os.path.join(folder, name))
            except FileNotFoundError:
                pass
            except OSError:
                break
        if (
            not self._closed
            and os.getpid() == self._owner
            and len(self._free) < self._keep
            and _empty_folder_of_ours(folder)
        ):
            self._free.append(folder)
        else:
            shutil.rmtree(folder, ignore_errors=True)

    def close(self) -> None:
        """Remove the folders kept for reuse; later ones given back are removed at once."""
        self._closed = True
        if os.getpid() == self._owner:
            for folder in self._free:
                shutil.rmtree(folder, ignore_errors=True)
        self._free = []


def _empty_folder_of_ours(folder: str) -> bool:
    try:
        found = os.lstat(folder)
        return stat.S_ISDIR(found.st_mode) and found.st_uid == os.geteuid() and not os.listdir(folder)
    except OSError:
        return False
