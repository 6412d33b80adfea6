"""Private ctypes plumbing shared by the confinement modules.

One libc handle, one way to turn a failed call into ``OSError`` and a
``prctl`` wrapper whose variadic arguments are always passed as full
machine words (a bare Python int would be passed as a C ``int``, leaving
the upper half of the register undefined on some ABIs).
"""

from __future__ import annotations

import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.prctl.restype = ctypes.c_int

# prctl(2) options used by this package (include/uapi/linux/prctl.h).
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3
PR_SET_SECCOMP = 22
PR_CAPBSET_READ = 23
PR_CAPBSET_DROP = 24
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
PR_GET_NO_NEW_PRIVS = 39
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4


def fail(call: str, err: int | None = None) -> OSError:
    """Build the ``OSError`` for a failed libc call, naming the call."""
    if err is None:
        err = ctypes.get_errno()
    return OSError(err, f"{call} failed: {os.strerror(err)}")


def word(value: object) -> object:
    """Wrap a syscall argument as a full machine word (pointers pass through)."""
    if isinstance(value, int):
        return ctypes.c_ulong(value & ((1 << (8 * ctypes.sizeof(ctypes.c_ulong))) - 1))
    return value


def prctl(option: int, arg2: int = 0, arg3: object = 0, arg4: int = 0, arg5: int = 0) -> int:
    """Call prctl(2); raise ``OSError`` naming the option when it fails."""
    ctypes.set_errno(0)
    result = libc.prctl(ctypes.c_int(option), word(arg2), word(arg3), word(arg4), word(arg5))
    if result < 0:
        raise fail(f"prctl({option})")
    return result


def syscall(nr: int, *args: object) -> int:
    """Raw syscall(2); returns the result, or -1 with errno left for the caller."""
    ctypes.set_errno(0)
    return libc.syscall(ctypes.c_long(nr), *(word(a) for a in args))


def status_fields() -> dict[str, str]:
    """Parse ``/proc/self/status`` into a name -> value mapping."""
    fields: dict[str, str] = {}
    with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
        for line in fh:
            name, sep, value = line.partition(":")
            if sep:
                fields[name.strip()] = value.strip()
    return fields


def thread_count() -> int:
    """Number of threads in this process, from ``/proc/self/task``."""
    return len(os.listdir("/proc/self/task"))
