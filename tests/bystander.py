"""A bystander process for attacks to aim at, as another learner in the same batch would be.

It holds no capabilities (a learner process holds none), so even when the
tests run as root nothing but the sandbox stands between it and a learner
process of the same user. It notes every catchable signal it gets, and
:meth:`Bystander.scheduling` reads what a re-scheduling attack would change.
"""

from __future__ import annotations

import ctypes
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
_CODE = f"""
import os, signal, sys
sys.path.insert(0, {str(REPO)!r})
from grader.sandbox.confine import privileges
if os.geteuid() == 0:
    privileges.drop_capabilities()
def note(number, frame):
    os.write(1, signal.Signals(number).name.encode() + b"\\n")
for number in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGIO, signal.SIGURG, signal.SIGTERM, signal.SIGHUP):
    signal.signal(number, note)
os.write(1, b"ready\\n")
sys.stdin.read()
"""
_IOPRIO_GET = {"x86_64": 252, "aarch64": 31}
_IOPRIO_WHO_PROCESS = 1


class Bystander:
    """A running bystander: ``pid``, :meth:`scheduling`, and :meth:`close`, which says what reached it."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-c", _CODE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd="/"
        )
        assert self.process.stdout is not None and self.process.stdout.readline() == b"ready\n"
        self.pid = self.process.pid

    def scheduling(self) -> dict[str, Any]:
        """Its CPU affinity, nice value, scheduling policy and I/O priority."""
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        ioprio = libc.syscall(
            ctypes.c_long(_IOPRIO_GET[platform.machine()]), ctypes.c_long(_IOPRIO_WHO_PROCESS), ctypes.c_long(self.pid)
        )
        return {
            "affinity": sorted(os.sched_getaffinity(self.pid)),
            "nice": os.getpriority(os.PRIO_PROCESS, self.pid),
            "policy": os.sched_getscheduler(self.pid),
            "ioprio": ioprio,
        }

    def close(self) -> tuple[list[str], int]:
        """End it; the signals it noted and its exit status (negative: killed by that signal)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        noted = self.process.stdout.read().decode().split()
        self.process.stdout.close()
        return noted, self.process.wait(timeout=30)

    def __enter__(self) -> Bystander:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None and not stream.closed:
                stream.close()
