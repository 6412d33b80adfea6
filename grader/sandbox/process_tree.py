"""What ``/proc`` says of learner processes: the processes below a warm parent, and one process's usage.

After each learner process the warm parent lists its descendants, so a
daemon a learner left behind is found and killed; while a learner process
runs, the grader reads its CPU time and memory. Standard library only.
"""

from __future__ import annotations

import os

__all__ = ["children_map", "process_usage", "scan_all"]

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def children_map(root: int) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    """Parent pid -> child pids of ``root`` and its descendants: the live processes, and the zombies.

    Each process of the subtree lists its children in ``/proc/PID/task/TID/children``,
    so a check after every learner reads a few files, not the ``stat`` of every
    process on the machine (which grows with everything else the machine runs).
    Where the kernel offers no such file, every process is scanned instead.
    """
    if not os.path.exists(f"/proc/{root}/task/{root}/children"):
        return scan_all()
    children: dict[int, list[int]] = {}
    zombies: dict[int, list[int]] = {}
    queue = [root]
    while queue:
        parent = queue.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
            listed = b"".join(_read(f"/proc/{parent}/task/{tid}/children") for tid in tasks)
        except OSError:  # gone meanwhile
            continue
        for pid in map(int, listed.split()):
            try:
                state = _read(f"/proc/{pid}/stat").rsplit(b")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            (zombies if state in (b"Z", b"X") else children).setdefault(parent, []).append(pid)
            queue.append(pid)
    return children, zombies


def process_usage(pid: int) -> tuple[float, int, int] | None:
    """CPU seconds used, resident bytes and threads of process ``pid`` (``/proc/PID/stat``), or ``None``."""
    try:
        fields = _read(f"/proc/{pid}/stat").rsplit(b")", 1)[1].split()
        return ((int(fields[11]) + int(fields[12])) / _CLOCK_TICKS, int(fields[21]) * _PAGE_BYTES, int(fields[17]))
    except (OSError, IndexError, ValueError):
        return None


def _read(path: str) -> bytes:
    """The bytes of a small ``/proc`` file."""
    with open(path, "rb") as handle:
        return handle.read()


def scan_all() -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    """Parent pid -> child pids of every process in ``/proc``: the live processes, and the zombies."""
    children: dict[int, list[int]] = {}
    zombies: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1:
            target = zombies if fields[0] in (b"Z", b"X") else children
            target.setdefault(int(fields[1]), []).append(int(entry))
    return children, zombies
