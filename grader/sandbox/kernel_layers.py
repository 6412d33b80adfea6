"""Whether this machine can confine a learner process at all: Landlock and seccomp are Linux's.

Asked before the warm parent starts (``grader.cli``, ``sandbox.parents``):
where neither layer exists, only the fallback runner can start a learner
process, and only for a learner's own public checks.
"""

from __future__ import annotations

import os
import sys

__all__ = ["PRETEND_NO_KERNEL_LAYERS", "kernel_layers_missing"]

# The test-only switch that makes the grader believe this machine has no kernel layers, so the fallback
# runner (``sandbox.fallback``) and the refusals around it can be tested on a Linux that has them.
PRETEND_NO_KERNEL_LAYERS = "GRADER_PRETEND_NO_KERNEL_LAYERS"

_SYSTEMS = {"darwin": "macOS", "win32": "Windows", "cygwin": "Cygwin"}


def kernel_layers_missing() -> str | None:
    """Why this machine cannot confine a learner process at all, or ``None`` when it can.

    Landlock and seccomp are Linux's; elsewhere (macOS, Windows, WSL 1, a
    Linux kernel with neither) no layer can be applied, the warm parent's
    own calls (``prctl``, ``SOCK_SEQPACKET``) may not exist, and only the
    fallback runner can start a learner process. A Linux with one of the
    two keeps the confined runner: its self-test says what the other
    layer would have stopped. Cheap: one system call and one small file read.
    """
    if os.environ.get(PRETEND_NO_KERNEL_LAYERS, "").strip() not in ("", "0"):
        return f"{PRETEND_NO_KERNEL_LAYERS} is set, a switch for tests"
    if sys.platform != "linux":
        return f"{_SYSTEMS.get(sys.platform, sys.platform)} has no Landlock or seccomp"
    system = os.uname()
    release = system.release.lower()
    if "microsoft" in release and "wsl2" not in release:
        return "WSL 1 has no Landlock or seccomp"
    if system.machine in ("x86_64", "aarch64") and _seccomp_listed():
        return None  # seccomp is here; the check below imports the confinement modules, which takes longer
    from grader.sandbox.confine import landlock, seccomp

    if landlock.abi_version() == 0 and not seccomp.available():
        return "this Linux kernel offers neither Landlock nor seccomp"
    return None


def _seccomp_listed() -> bool:
    """Whether this kernel lists seccomp for this process (``/proc/self/status``), as ``seccomp.available`` reads it."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as handle:
            return any(line.startswith("Seccomp:") for line in handle)
    except OSError:
        return False
