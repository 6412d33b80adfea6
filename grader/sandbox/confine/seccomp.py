"""seccomp-BPF: a deny-list filter that stops processes, sockets and privileged calls.

After :func:`install_filter` every thread of the process (TSYNC) gets EPERM
for creating processes, exec, sockets, signalling other processes (by
``kill`` and its kin, and by making another process a descriptor's owner:
``F_SETOWN``, ``F_SETSIG``, ``FIOSETOWN``...), re-scheduling, re-nicing or
pinning any process but itself, tracing, namespaces, IPC objects that outlive
the process, changing a file's mode, owner, times or extended attributes, and
the privileged calls a root child could use; with
``read_only_fs`` also for every way of changing the filesystem. Errors are
returned as errno values, so Python raises a readable ``PermissionError``;
only a foreign architecture kills the process.
seccomp cannot restrict reads by path: that is Landlock's job.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
from typing import Any

from ._libc import PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, fail, prctl, syscall, thread_count
from .syscalls import ARCHES as _ARCHES

DENY_EPERM = (
    "socket",
    "socketpair",
    "fork",
    "vfork",
    "execve",
    "execveat",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "process_madvise",
    "tkill",
    "pidfd_open",
    "pidfd_send_signal",
    "pidfd_getfd",
    "rt_sigqueueinfo",
    "rt_tgsigqueueinfo",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "msgget",
    "shmget",
    "semget",
    "mq_open",
    "setsid",
    "setpgid",
    "personality",
    "reboot",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "setrlimit",
    "swapon",
    "swapoff",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "sethostname",
    "setdomainname",
    "acct",
    "open_by_handle_at",
    "name_to_handle_at",
    "iopl",
    "ioperm",
    "syslog",
    "quotactl",
    "quotactl_fd",
    "capset",
    "setuid",
    "setgid",
    "setreuid",
    "setregid",
    "setresuid",
    "setresgid",
    "setfsuid",
    "setfsgid",
    "setgroups",
    "fanotify_init",
    "mknod",
    "mknodat",
    "kcmp",
    "process_mrelease",
    # A learner process has no use for Landlock, and a rule added to a ruleset its warm parent built
    # would reach the processes confined with it later (the one it was given is closed before the
    # learner's code runs).
    "landlock_create_ruleset",
    "landlock_add_rule",
    "landlock_restrict_self",
)
# Calls that act on (or read) a process named by their first argument: allowed only on this process
# itself (0, or its own pid), so a learner cannot re-schedule, pin, re-nice or move the memory of
# another process of the same user (another learner, the grader). Its own other threads count as
# others here: nothing a learner process runs needs to aim these at one of them.
SELF_ONLY = (
    "sched_setaffinity",
    "sched_setscheduler",
    "sched_setparam",
    "sched_setattr",
    "migrate_pages",
    "move_pages",
    "get_robust_list",
)
# fcntl commands and ioctls by which a descriptor signals a chosen process with no kill(): setting its
# owner (F_SETOWN and kin) or the signal, turning on O_ASYNC (on a terminal that also makes the
# terminal's foreground process group the owner), taking a lease whose break signals; and acting on a
# terminal's foreground group or input.
F_SETFL, F_SETOWN, F_SETSIG, F_SETOWN_EX, F_SETLEASE, O_ASYNC = 4, 8, 10, 15, 1024, 0o20000
FIOSETOWN, SIOCSPGRP, FIOASYNC, TIOCSPGRP, TIOCSTI, TIOCSIG = 0x8901, 0x8902, 0x5452, 0x5410, 0x5412, 0x40045436
DENY_FCNTL = (F_SETOWN, F_SETSIG, F_SETOWN_EX, F_SETLEASE)
DENY_IOCTL = (FIOSETOWN, SIOCSPGRP, FIOASYNC, TIOCSPGRP, TIOCSTI, TIOCSIG)
PRIO_PROCESS, IOPRIO_WHO_PROCESS = 0, 1
DENY_READ_ONLY_FS = (
    "creat",
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
    "mkdir",
    "mkdirat",
    "rmdir",
    "link",
    "linkat",
    "symlink",
    "symlinkat",
    "truncate",
)
# A file's mode, owner, times and extended attributes: Landlock has no access right for them, so a
# learner process could open up (chmod 0777) or re-date any file of the grader's user it can name.
# Denied at every tier.
DENY_METADATA = (
    "chmod",
    "fchmod",
    "fchmodat",
    "fchmodat2",
    "chown",
    "fchown",
    "lchown",
    "fchownat",
    "utime",
    "utimes",
    "futimesat",
    "utimensat",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
)

# Classic BPF opcodes and seccomp constants.
_LD_W_ABS, _JA, _JEQ, _JGE, _JSET, _RET = 0x20, 0x05, 0x15, 0x35, 0x45, 0x06
_RET_KILL_PROCESS, _RET_ALLOW, _RET_ERRNO = 0x80000000, 0x7FFF0000, 0x00050000
_OFF_NR, _OFF_ARCH = 0, 4
_X32_BIT = 0x40000000
_CLONE_THREAD = 0x00010000
_CLONE_NAMESPACES = 0x7E020000  # NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET
_OPEN_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC
SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, SECCOMP_MODE_FILTER = 1, 1, 2
SECCOMP_FILTER_FLAG_SPEC_ALLOW = 1 << 2  # Linux 4.17


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def _arg_lo(i: int) -> int:
    return 16 + 8 * i  # low 32 bits of args[i] (little-endian)


def _assemble(items: list) -> list[tuple[int, int, int, int]]:
    """Resolve labels: items are ``"label"`` strings or ``(code, jt, jf, k)`` tuples
    whose jt/jf (and k for JA) may name a label."""
    where, n = {}, 0
    for item in items:
        if isinstance(item, str):
            where[item] = n
        else:
            n += 1
    out: list[tuple[int, int, int, int]] = []
    for item in items:
        if isinstance(item, str):
            continue
        code, jt, jf, k = item
        here = len(out) + 1
        jt = where[jt] - here if isinstance(jt, str) else jt
        jf = where[jf] - here if isinstance(jf, str) else jf
        k = where[k] - here if isinstance(k, str) else k
        if not (0 <= jt <= 255 and 0 <= jf <= 255 and k >= 0):
            raise ValueError("seccomp program: jump out of range")
        out.append((code, jt, jf, k))
    return out


def build_program(machine: str, pid: int, *, read_only_fs: bool = False) -> list[tuple]:
    """The filter for ``machine`` as resolved ``(code, jt, jf, k)`` tuples."""
    audit_arch, table = _ARCHES[machine]
    errno_ret = {e: _RET_ERRNO | e for e in (errno.EPERM, errno.EACCES, errno.ENOSYS)}
    prog: list = [
        (_LD_W_ABS, 0, 0, _OFF_ARCH),
        (_JEQ, 1, 0, audit_arch),
        (_RET, 0, 0, _RET_KILL_PROCESS),
        (_LD_W_ABS, 0, 0, _OFF_NR),
    ]
    if machine in ("x86_64", "amd64"):
        prog.append((_JGE, "eperm", 0, _X32_BIT))
    special = [
        ("clone", "clone"),
        ("clone3", "enosys"),
        ("kill", "signal"),
        ("tgkill", "signal"),
        ("prlimit64", "prlimit"),
        ("fcntl", "fcntl"),
        ("ioctl", "ioctl"),
        ("setpriority", "priority"),
        ("ioprio_set", "ioprio"),
    ]
    special += [(name, "self") for name in SELF_ONLY]
    if read_only_fs:
        special += [("open", "open"), ("openat", "openat"), ("openat2", "enosys")]
    prog += [(_JEQ, label, 0, table[name]) for name, label in special if name in table]
    # pid_t, int and unsigned int arguments: the kernel reads only their low 32 bits.
    prog += [
        (_JA, 0, 0, "deny"),
        "clone",
        (_LD_W_ABS, 0, 0, _arg_lo(0)),
        (_JSET, "eperm", 0, _CLONE_NAMESPACES),
        (_JSET, "allow", "eperm", _CLONE_THREAD),
        "fcntl",
        (_LD_W_ABS, 0, 0, _arg_lo(1)),
        *((_JEQ, "eperm", 0, cmd) for cmd in DENY_FCNTL),
        (_JEQ, 0, "allow", F_SETFL),
        (_LD_W_ABS, 0, 0, _arg_lo(2)),
        (_JSET, "eperm", "allow", O_ASYNC),
        "ioctl",
        (_LD_W_ABS, 0, 0, _arg_lo(1)),
        *((_JEQ, "eperm", 0, cmd) for cmd in DENY_IOCTL),
        (_JA, 0, 0, "allow"),
        # kill(0) and kill(-1) reach the process group and every process: only the own pid is allowed
        "signal",
        (_LD_W_ABS, 0, 0, _arg_lo(0)),
        (_JA, 0, 0, "own_pid"),
        # (which, who): only a process, and only this one; never a process group or a user
        "priority",
        (_LD_W_ABS, 0, 0, _arg_lo(0)),
        (_JEQ, "who", "eperm", PRIO_PROCESS),
        "ioprio",
        (_LD_W_ABS, 0, 0, _arg_lo(0)),
        (_JEQ, "who", "eperm", IOPRIO_WHO_PROCESS),
        "who",
        (_LD_W_ABS, 0, 0, _arg_lo(1)),
        (_JA, 0, 0, "zero_or_self"),
        "self",
        (_LD_W_ABS, 0, 0, _arg_lo(0)),
        "zero_or_self",
        (_JEQ, "allow", 0, 0),
        "own_pid",
        (_JEQ, "allow", "eperm", pid & 0xFFFFFFFF),
        "prlimit",
        (_LD_W_ABS, 0, 0, _arg_lo(2)),
        (_JEQ, 0, "eperm", 0),
        (_LD_W_ABS, 0, 0, _arg_lo(2) + 4),
        (_JEQ, "allow", "eperm", 0),
        "open",
        (_LD_W_ABS, 0, 0, _arg_lo(1)),
        (_JSET, "eacces", "allow", _OPEN_WRITE_FLAGS),
        "openat",
        (_LD_W_ABS, 0, 0, _arg_lo(2)),
        (_JSET, "eacces", "allow", _OPEN_WRITE_FLAGS),
        "allow",
        (_RET, 0, 0, _RET_ALLOW),
        "eperm",
        (_RET, 0, 0, errno_ret[errno.EPERM]),
        "eacces",
        (_RET, 0, 0, errno_ret[errno.EACCES]),
        "enosys",
        (_RET, 0, 0, errno_ret[errno.ENOSYS]),
        "deny",
    ]
    rules = [(table[n], errno.EPERM) for n in DENY_EPERM if n in table]
    rules += [(table[n], errno.EPERM) for n in DENY_METADATA if n in table]
    if read_only_fs:
        rules += [(table[n], errno.EACCES) for n in DENY_READ_ONLY_FS if n in table]
    # Chunks keep every conditional jump within BPF's 8-bit range.
    for c in range(0, len(rules), 64):
        chunk = rules[c : c + 64]
        for err in sorted({e for _, e in chunk}):
            prog += [(_JEQ, f"ret{c}_{err}", 0, nr) for nr, e in chunk if e == err]
            prog += [(_JA, 0, 0, f"next{c}_{err}"), f"ret{c}_{err}", (_RET, 0, 0, errno_ret[err]), f"next{c}_{err}"]
    prog.append((_RET, 0, 0, _RET_ALLOW))
    return _assemble(prog)


def prepare_filter() -> None:
    """Build now the programs :func:`install_filter` loads, in a process about to fork many (the warm parent).

    Only the process's own pid differs from one learner process to the
    next; the rest (about 150 instructions, assembled in Python) is built
    once here, and a fork patches in its pid.
    """
    if platform.machine() in _ARCHES:
        for read_only_fs in (False, True):
            prepared_program(platform.machine(), read_only_fs)


def prepared_program(machine: str, read_only_fs: bool) -> tuple[Any, int]:
    """The assembled filter for any pid, as a ``sock_filter`` array, and the index of the instruction naming the pid."""
    key = (machine, read_only_fs)
    hit = _PROGRAMS.get(key)
    if hit is None:
        one, two = (build_program(machine, pid, read_only_fs=read_only_fs) for pid in (1, 2))
        (where,) = [i for i, (a, b) in enumerate(zip(one, two, strict=True)) if a != b]
        array = (_SockFilter * len(one))(*(_SockFilter(*i) for i in one))
        hit = _PROGRAMS[key] = (array, where)
    return hit


_PROGRAMS: dict[tuple[str, bool], tuple[Any, int]] = {}


def available() -> bool:
    """True when seccomp filters can be installed here (kernel support, known arch).

    Checks the ``Seccomp:`` line of ``/proc/self/status`` and that
    ``platform.machine()`` has a syscall table (x86_64, aarch64).
    """
    if platform.machine() not in _ARCHES:
        return False
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            return any(line.startswith("Seccomp:") for line in fh)
    except OSError:
        return False


def install_filter(*, read_only_fs: bool = False) -> None:
    """Install the deny-list filter on every thread of this process.

    Uses seccomp(SECCOMP_SET_MODE_FILTER, TSYNC) so threads started before
    (OpenBLAS) are covered too; falls back to prctl(PR_SET_SECCOMP) on kernels
    without the seccomp syscall, refusing (RuntimeError) if several threads
    exist then. ``kill``/``tgkill`` stay allowed only towards this process's
    current pid, and the calls that act on a process (:data:`SELF_ONLY`,
    ``setpriority``, ``ioprio_set``) only on 0 or that pid.
    ``read_only_fs=True`` adds the no-writes rules for when Landlock is
    missing. Sets no_new_privs. Raises OSError on failure.

    With SPEC_ALLOW where the kernel knows it: kernels before 5.16 (or
    booted with ``spec_store_bypass_disable=seccomp``) otherwise turn on the
    speculative store bypass mitigation for every filtered process, which
    slows all of its code to guard data inside the process itself; a learner
    process holds nothing it may not read (its own code and inputs).
    """
    machine = platform.machine()
    if machine not in _ARCHES:
        raise OSError(errno.ENOSYS, f"seccomp: unsupported architecture {machine!r}")
    array, where = prepared_program(machine, read_only_fs)  # prepared by the warm parent: only the pid is ours to set
    array[where].k = os.getpid() & 0xFFFFFFFF
    prog = _SockFprog(len(array), array)
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    number = _ARCHES[machine][1]["seccomp"]
    result = syscall(
        number, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_SPEC_ALLOW, ctypes.byref(prog)
    )
    if result < 0 and ctypes.get_errno() == errno.EINVAL:  # a kernel before 4.17: without SPEC_ALLOW
        result = syscall(number, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, ctypes.byref(prog))
    if result == 0:
        return
    if result > 0:
        raise OSError(errno.EAGAIN, f"seccomp(TSYNC) failed: thread {result} could not sync")
    err = ctypes.get_errno()
    if err not in (errno.ENOSYS, errno.EINVAL):
        raise fail("seccomp(SECCOMP_SET_MODE_FILTER)", err)
    if thread_count() > 1:
        raise RuntimeError("seccomp: no TSYNC on this kernel and the process has several threads")
    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog))
