"""In the fallback runner's learner process: the resource limits the system has, where no kernel layer confines.

A confined learner process applies its layers (``confine.process``); the
fallback runner's plain one (``fallback``) has only these. It is its own
module so that the learner loop (``child``) can call it without importing
the fallback runner, which starts that loop.
"""

from __future__ import annotations

from typing import Any

__all__ = ["limit_process"]


def limit_process(config: dict[str, Any]) -> dict[str, Any]:
    """Set the resource limits this system has (``resource.setrlimit``; none on Windows); report what held.

    The learner process calls it where a confined one applies its layers
    (``child.serve``). CPU: soft limit then SIGKILL one second later; memory
    (address space), file size and open files as the confined process has
    them; no core files. A limit the system refuses (macOS has no address
    space limit to speak of) is left as it was.
    """
    held: dict[str, Any] = {"caps_dropped": False, "landlock_abi": 0, "seccomp": False}
    try:
        import resource
    except ImportError:  # Windows: the grader's wall clock is the only limit
        held["rlimits"] = False
        return held
    limits = config.get("limits") or {}
    cpu = int(float(limits.get("cpu_seconds", 20.0)) + 0.999)
    wanted = [
        ("RLIMIT_CPU", cpu, cpu + 1),
        ("RLIMIT_AS", int(limits.get("memory_bytes", 512 << 20)), None),
        ("RLIMIT_FSIZE", int(limits.get("file_bytes", 1 << 20)), None),
        ("RLIMIT_NOFILE", int(limits.get("open_files", 64)), None),
        ("RLIMIT_CORE", 0, None),
    ]
    every = True
    for name, soft, hard in wanted:
        kind = getattr(resource, name, None)
        if kind is None:
            every = False
            continue
        try:
            _, old_hard = resource.getrlimit(kind)
            top = soft if hard is None else hard
            if old_hard != resource.RLIM_INFINITY:  # never raise a lower limit set from outside
                soft, top = min(soft, old_hard), min(top, old_hard)
            resource.setrlimit(kind, (soft, top))
        except (OSError, ValueError):
            every = False
    held["rlimits"] = every
    return held
