"""Which core each local grading process, with its warm parent and learner processes, keeps to.

A grading process and its learner process take turns: one waits on a pipe
while the other works. When the two sit on different cores, every hand-over
wakes the other core (on a virtual machine, an interrupt the hypervisor must
deliver), and the learner process, forked afresh for each submission, starts
with none of the shared pages in its core's cache. Kept on one core, with one
grading process per core, the hand-overs stay local and each core serves one
learner at a time. The batch's own process, which stores results, is left to
go where there is room.
"""

from __future__ import annotations

import os

__all__ = ["cores_to_use", "keep_to"]


def cores_to_use(jobs: int) -> list[int] | None:
    """The cores to give the ``jobs`` grading processes one each, or ``None`` when they should roam.

    Only when there is one process for every core this process may run on
    (the default), and more than one core. With fewer processes than cores,
    on a machine others use too, the system knows better which cores are
    free; with more, two would share a core while another sat idle.
    """
    try:
        allowed = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None
    return allowed if len(allowed) >= 2 and jobs == len(allowed) else None


def keep_to(pid: int, core: int) -> bool:
    """Keep process ``pid`` (0: this one) on ``core``; its children inherit it. Whether the system agreed."""
    try:
        os.sched_setaffinity(pid, {core})
    except (AttributeError, OSError):  # gone already, not ours, or a core a container took away since
        return False
    return True
