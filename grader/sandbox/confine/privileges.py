"""Privileges, resource limits and process hygiene for the parent and the child.

The child drops every capability (a root child could otherwise raise its own
rlimits, setuid, chroot, signal anything) and caps CPU, memory, file size and
descriptors. The parent makes itself non-dumpable (its ``/proc/<pid>/environ``
and ``mem`` become unreadable to a same-uid child) and a child subreaper, so
that daemonised grandchildren come back to it and can be killed.
"""

from __future__ import annotations

import ctypes
import errno
import math
import os
import resource
import signal
import time

from ._libc import (
    PR_CAP_AMBIENT,
    PR_CAP_AMBIENT_CLEAR_ALL,
    PR_CAPBSET_DROP,
    PR_SET_CHILD_SUBREAPER,
    PR_SET_DUMPABLE,
    PR_SET_NO_NEW_PRIVS,
    PR_SET_PDEATHSIG,
    fail,
    libc,
    prctl,
    status_fields,
)
from ._libc import thread_count as _thread_count

_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_CAP_SETPCAP = 8


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _caps() -> dict[str, int]:
    fields = status_fields()
    return {k: int(fields.get(k, "0"), 16) for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}


def _cap_last_cap(bounding: int) -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        return max(bounding.bit_length() - 1, 0)


def drop_capabilities() -> bool:
    """Drop every capability this process holds; True when something was dropped.

    Clears the ambient set, empties the bounding set (PR_CAPBSET_DROP, when
    CAP_SETPCAP allows it) and capset()s empty effective, permitted and
    inheritable sets. A uid-0 child then cannot raise hard rlimits, setuid,
    chroot or signal other users' processes. Raises OSError if CapEff is not
    0 afterwards.

    In a process forked after :func:`empty_bounding_set` emptied its parent's
    bounding set, only the held sets are left to clear: they are read and
    checked with ``capget`` (reading ``/proc/self/status`` twice cost a fresh
    learner process about 0.8 ms). The ambient set needs nothing of its own
    there: the kernel keeps it within the permitted and inheritable sets.
    """
    if _bounding_emptied:
        return _drop_held()
    before = _caps()
    held = before["CapEff"] | before["CapPrm"] | before["CapInh"]
    may_drop_bounding = bool(before["CapBnd"] and (before["CapEff"] >> _CAP_SETPCAP) & 1)
    if not (held or before["CapAmb"] or may_drop_bounding):
        return False
    if before["CapAmb"]:
        try:
            prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
        except OSError as exc:
            if exc.errno != errno.EINVAL:  # EINVAL: kernel without ambient capabilities
                raise
    if may_drop_bounding:
        _drop_bounding(before["CapBnd"])
    if held:
        _clear_held()
    after = _caps()
    if after["CapEff"] or after["CapPrm"] or after["CapAmb"]:
        raise OSError(
            errno.EPERM,
            f"drop_capabilities: still holding CapEff={after['CapEff']:x}"
            f" CapPrm={after['CapPrm']:x} CapAmb={after['CapAmb']:x}",
        )
    return True


def _held() -> tuple[int, int, int]:
    """The effective, permitted and inheritable sets, from ``capget``."""
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    ctypes.set_errno(0)
    if libc.capget(ctypes.byref(header), data) != 0:
        raise fail("capget")
    low, high = data
    return (
        low.effective | high.effective << 32,
        low.permitted | high.permitted << 32,
        low.inheritable | high.inheritable << 32,
    )


def _clear_held() -> None:
    """``capset`` empty effective, permitted and inheritable sets."""
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    ctypes.set_errno(0)
    if libc.capset(ctypes.byref(header), (_CapData * 2)()) != 0:
        raise fail("capset")


def _drop_held() -> bool:
    if not any(_held()):
        return False
    _clear_held()
    effective, permitted, inheritable = _held()
    if effective or permitted or inheritable:
        raise OSError(errno.EPERM, f"drop_capabilities: still holding CapEff={effective:x} CapPrm={permitted:x}")
    return True


_bounding_emptied = False  # this process's bounding set was emptied here or in a parent it was forked from


def empty_bounding_set() -> bool:
    """Empty this process's bounding set, keeping the capabilities it holds; True when it is empty after.

    Meant for the warm parent, which never executes a program: the processes
    it forks inherit the empty set, so each skips dropping some forty
    capabilities one system call at a time (about 40 us each on a VM),
    and :func:`drop_capabilities` then clears only what they hold.
    """
    global _bounding_emptied
    caps = _caps()
    bounding = caps["CapBnd"]
    if bounding and (caps["CapEff"] >> _CAP_SETPCAP) & 1:
        _drop_bounding(bounding)
        bounding = _caps()["CapBnd"]
    _bounding_emptied = not bounding
    return _bounding_emptied


def _drop_bounding(bounding: int) -> None:
    for cap in range(_cap_last_cap(bounding) + 1):
        if (bounding >> cap) & 1:
            prctl(PR_CAPBSET_DROP, cap)


def set_no_new_privs() -> None:
    """PR_SET_NO_NEW_PRIVS: execve can never grant privileges (setuid bits, file caps)."""
    prctl(PR_SET_NO_NEW_PRIVS, 1)


def set_non_dumpable() -> None:
    """PR_SET_DUMPABLE 0: ``/proc/<pid>/{environ,mem}`` become root-owned, no ptrace
    attach by same-uid processes, no core dumps. Meant for the trusted parent."""
    prctl(PR_SET_DUMPABLE, 0)


def die_with_parent(parent: int) -> None:
    """PR_SET_PDEATHSIG SIGKILL: end with the parent ``parent`` (its pid), even when it is SIGKILLed.

    A parent that ended before the call leaves nobody to notice: this process then exits at once.
    """
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


def set_child_subreaper() -> None:
    """PR_SET_CHILD_SUBREAPER 1: orphaned descendants (``setsid`` daemons) are
    re-parented to this process instead of init, so :func:`kill_descendants` finds them."""
    prctl(PR_SET_CHILD_SUBREAPER, 1)


def _children_map() -> dict[int, list[tuple[int, str]]]:
    """ppid -> [(pid, state)] for every process visible in /proc."""
    children: dict[int, list[tuple[int, str]]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                raw = fh.read()
        except OSError:
            continue  # exited meanwhile
        fields = raw[raw.rfind(b")") + 2 :].split()  # comm may contain spaces and ')'
        if len(fields) >= 2:
            children.setdefault(int(fields[1]), []).append((int(name), fields[0].decode()))
    return children


def _descendants(root: int) -> list[tuple[int, int, str]]:
    """(pid, ppid, state) of every descendant of ``root``, parents first."""
    children, found, queue = _children_map(), [], [root]
    while queue:
        parent = queue.pop(0)
        for pid, state in children.get(parent, []):
            if pid != root:
                found.append((pid, parent, state))
                queue.append(pid)
    return found


def kill_descendants(sig: int = signal.SIGKILL, *, timeout: float = 2.0) -> int:
    """Signal every descendant of this process (transitively); return how many.

    Meant for a subreaper after a child run, so ``setsid`` daemons are found
    too. With SIGKILL it rescans until nothing is left (catching re-parented
    orphans and late forks) and reaps the signalled processes that are its
    own children with ``waitpid(WNOHANG)``, for at most ``timeout`` seconds.
    Call it after waiting for your own ``Popen`` children, or their exit
    status may be reaped here. Never signals ``os.getpid()``.
    """
    me, signalled = os.getpid(), set()
    deadline = time.monotonic() + timeout
    while True:
        desc = _descendants(me)
        for pid, _, state in desc:
            if pid not in signalled and state not in ("Z", "X"):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    continue
                signalled.add(pid)
        pending = {pid for pid, ppid, _ in desc if ppid == me and pid in signalled}
        for pid in list(pending):
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    pending.discard(pid)
            except ChildProcessError:
                pending.discard(pid)
        if sig != signal.SIGKILL:
            return len(signalled)
        if not any(pid in signalled or state not in ("Z", "X") for pid, _, state in desc):
            return len(signalled)
        if time.monotonic() > deadline:
            return len(signalled)
        time.sleep(0.005)


def _set(kind: int, soft: int, hard: int) -> None:
    """setrlimit that never raises a limit: keep a lower current hard limit."""
    _, cur_hard = resource.getrlimit(kind)
    if cur_hard != resource.RLIM_INFINITY:
        hard = min(hard, cur_hard)
    soft = min(soft, hard)
    try:
        resource.setrlimit(kind, (soft, hard))
    except (ValueError, OSError) as exc:
        raise OSError(errno.EPERM, f"setrlimit({kind}, ({soft}, {hard})) failed: {exc}") from exc


def set_limits(*, cpu_seconds: float, memory_bytes: int, file_bytes: int, open_files: int) -> None:
    """Apply the child's rlimits (never raising an existing lower limit).

    CPU: soft ``ceil(cpu_seconds)`` (SIGXCPU, may be ignored), hard one second
    more (SIGKILL); counts CPU already used by this process. AS
    ``memory_bytes`` (MemoryError instead of the OOM killer), FSIZE
    ``file_bytes``, NOFILE ``open_files``; CORE, MSGQUEUE and MEMLOCK 0.
    """
    if cpu_seconds <= 0 or min(memory_bytes, file_bytes, open_files) < 0:
        raise ValueError("set_limits: limits must be positive")
    cpu = math.ceil(cpu_seconds)
    _set(resource.RLIMIT_CPU, cpu, cpu + 1)
    _set(resource.RLIMIT_AS, int(memory_bytes), int(memory_bytes))
    _set(resource.RLIMIT_FSIZE, int(file_bytes), int(file_bytes))
    _set(resource.RLIMIT_NOFILE, int(open_files), int(open_files))
    for kind in (resource.RLIMIT_CORE, resource.RLIMIT_MSGQUEUE, resource.RLIMIT_MEMLOCK):
        _set(kind, 0, 0)


def thread_count() -> int:
    """Number of threads of this process (``/proc/self/task``); confine only at 1."""
    return _thread_count()
