"""One batch at a time per output folder: the lock a run holds while it writes there."""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

from grader.errors import UsageError

__all__ = ["OutputLock", "same_file"]


class OutputLock:
    """One batch at a time per output folder: two would race on the same files.

    A POSIX lock on ``.batch.lock``, held by this process alone (grading
    processes forked from it do not inherit it). The kernel drops it however
    the process ends, so the file a killed run leaves never blocks the next
    one. A run that ends removes the file while it still holds the lock; a run
    that opened the file just before (and so locks a file no longer there)
    sees that the path names another file or none, and opens it again.
    """

    NAME = ".batch.lock"

    def __init__(self, out_dir: Path) -> None:
        self.path = out_dir / self.NAME
        self.handle: int | None = None

    def __enter__(self) -> None:
        while self.handle is None:  # another round only when a run ended between our open and our lock
            try:  # never through a link: O_CREAT would make the file it names, wherever that is
                handle = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            except OSError as error:
                what = "is a symbolic link" if error.errno == errno.ELOOP else f"cannot be opened ({error.strerror})"
                raise UsageError(f"{self.path}: the batch's lock file {what}") from None
            try:
                fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(handle)
                if exc.errno not in (errno.EACCES, errno.EAGAIN):
                    raise
                raise UsageError(
                    f"{self.path.parent}: another 'grader batch' is writing there; wait for it to finish"
                ) from None
            if same_file(handle, self.path):
                self.handle = handle
            else:
                os.close(handle)

    def __exit__(self, *exc: object) -> None:
        if self.handle is not None:
            try:
                os.unlink(self.path)  # before the lock goes: no run can lock this file and take it for current
            except FileNotFoundError:
                pass
            os.close(self.handle)
            self.handle = None


def same_file(handle: int, path: Path) -> bool:
    """Whether ``path`` still names the file open as ``handle``."""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(handle)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)
