"""File descriptors in a just-forked learner process: which to keep, closing the rest, renumbering.

Used by the warm parent (``warm_parent_server``) between fork and
confinement; imported there before any learner runs, since nothing of the
grader is readable once a learner process is confined. Standard library only.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

__all__ = ["close_inherited", "close_range", "renumber_low", "runs"]


def renumber_low(fd: int) -> int:
    """``fd`` moved to the lowest free number, if that is lower (the Landlock descriptors took the low ones here)."""
    moved = os.dup(fd)
    if moved < fd:
        os.close(fd)
        return moved
    os.close(moved)
    return fd


def _open_fds() -> list[int]:
    """The descriptors this process holds open (a guess when ``/proc`` cannot be read)."""
    try:
        return [int(fd) for fd in os.listdir("/proc/self/fd")]
    except OSError:  # pragma: no cover
        return list(range(3, 256))


def runs(fds: Iterable[int], runs: Iterable[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """``fds`` and the ``(first, last)`` ``runs`` as sorted, merged runs of consecutive descriptors."""
    merged: list[tuple[int, int]] = []
    for first, last in sorted([(fd, fd) for fd in fds] + list(runs)):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(last, merged[-1][1]))
        else:
            merged.append((first, last))
    return merged


_SYS_CLOSE_RANGE = 436  # the same number on every Linux architecture (added in 5.9)


def close_inherited(keep: list[tuple[int, int]]) -> None:
    """In a just-forked learner process, close every descriptor outside the ``keep`` runs.

    ``close_range`` closes each gap in one system call. Listing
    ``/proc/self/fd`` instead is the fallback for kernels before 5.9; it is
    slower with the many Landlock descriptors a warm parent holds open.
    """
    start = 0
    for first, last in keep + [(_FD_CEILING, _FD_CEILING)]:
        if first > start and close_range(start, first - 1) != 0:
            break
        start = last + 1
    else:
        return
    kept = {fd for first, last in keep for fd in range(first, last + 1)}
    for fd in _open_fds():
        if fd not in kept:
            try:
                os.close(fd)
            except OSError:
                pass


_FD_CEILING = (1 << 31) - 1


def close_range(first: int, last: int) -> int:
    """The ``close_range`` system call: 0 when every descriptor from ``first`` to ``last`` is closed."""
    from grader.sandbox.confine._libc import syscall

    return syscall(_SYS_CLOSE_RANGE, first, last, 0)
