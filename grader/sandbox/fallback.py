"""The fallback runner: learner processes with no kernel layers, for a learner's own public checks only.

Where the kernel offers neither Landlock nor seccomp (macOS, WSL 1, an old
Linux; ``kernel_layers.kernel_layers_missing`` says which), the warm parent
cannot confine anything, and on some of those systems cannot even run. A
learner who runs ``grader grade FILE --public`` there to check their own
work still gets an answer: :class:`PlainParent` stands in for the warm
parent and starts each learner process as a plain child interpreter, which
runs the same learner loop (``child.serve``, told by the ``confine`` flag to
skip the kernel layers) over the same pipes and protocol. The grader's side
is the same ``LearnerProcess``: the wall clock per call and for the import
is kept by the grader killing the process, and ``rlimits.limit_process`` sets
the resource limits the system has (CPU, memory, file size, open files).

Nothing else holds: the learner's code can read and write the user's files,
start processes and use the network. That is the learner's own machine and
their own code, running checks they can read anyway; hidden checks, batch
grading and the platform formats never run this way (``parents.start_parent``
refuses them), and every report it produces says so at its top.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grader.sandbox.environment import learner_environment
from grader.sandbox.scratch import ScratchFolders

__all__ = ["UNPROTECTED", "PlainParent", "serve_plain", "unsandboxed_label"]

_ROOT = str(Path(__file__).resolve().parents[2])
# What the child interpreter runs: the grader's package and the grader's import path, then the learner loop.
_BOOT = (
    "import sys; from json import loads; sys.path[:0] = loads(sys.argv[1]); "
    "from grader.sandbox.fallback import serve_plain; serve_plain(sys.argv[2])"
)

# What the fallback runner does not stop, for the ``unprotected`` list of the report's sandbox block.
UNPROTECTED = (
    "file reads are not confined: learner code can read any file of this user",
    "file writes are not confined: learner code can change or delete this user's files",
    "starting processes is not blocked",
    "the network is open to learner code",
    "learner code can signal other processes of this user",
)


def unsandboxed_label(reason: str) -> str:
    """The sentence at the top of every report the fallback runner produced."""
    return (
        f"These public checks ran without the sandbox on this machine (reason: {reason}); "
        "your graded result will run in the full sandbox."
    )


class PlainParent:
    """Starts learner processes as plain child interpreters (``contracts.WarmParentLike``): the fallback runner.

    ``reason``: why the kernel layers are missing here, for the report's
    label. Nothing is preloaded and no self-test runs: there is nothing to
    prove. One client serves one thread at a time.
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        self.preloaded: set[str] = set()
        self.scratch = ScratchFolders()
        self.self_tests: dict[Any, Any] = {}
        self._processes: dict[int, subprocess.Popen[bytes]] = {}

    @property
    def facts(self) -> dict[str, Any]:
        """What the machine offers: no kernel layer."""
        return {"landlock_abi": 0, "seccomp": False, "root": hasattr(os, "geteuid") and os.geteuid() == 0}

    def early_self_test(self, confinement: dict[str, Any]) -> dict[str, Any] | None:
        return None

    def spawn(self, config: dict[str, Any], fds: list[int]) -> int:
        """Start a learner process on ``fds`` (request, response, output) as its stdin, stdout and stderr.

        It is told to skip the kernel layers (``confine``); its own session, so
        :meth:`finish` ends whatever it started along with it.
        """
        request_r, response_w, output_w = fds
        paths = [_ROOT] + [path for path in sys.path if path and path != _ROOT]
        config = dict(config, confine=False, grader_pid=os.getpid())
        process = subprocess.Popen(
            [sys.executable, "-I", "-B", "-u", "-c", _BOOT, json.dumps(paths), json.dumps(config)],
            stdin=request_r,
            stdout=response_w,
            stderr=output_w,
            env=_environment(),
            cwd=config["scratch"],
            start_new_session=True,
        )
        self._processes[process.pid] = process
        return process.pid

    def finish(self, pid: int, grace: float = 0.0) -> dict[str, Any]:
        """End a learner process (after ``grace`` seconds to exit by itself); say how it ended."""
        process = self._processes.pop(pid, None)
        if process is None:
            return {"pid": pid, "killed": False, "exit": -1}
        ended = _reap(process, time.monotonic() + grace)
        killed = ended is None
        if ended is None:
            _kill(process)
            ended = _reap(process, None)
        assert ended is not None
        return {"pid": pid, "killed": killed, **ended}

    def finish_later(self, pid: int, then: Callable[[], None]) -> None:
        """End a process whose answers have all been read: a kill here, then ``then``."""
        self.finish(pid)
        then()

    def note_request(self, key: str, message: bytes) -> None:
        """Nothing is preloaded: each process gets its requests in full."""

    def close(self, *, wait: bool = True) -> None:
        """End every learner process still running and remove the scratch folders."""
        for pid in list(self._processes):
            self.finish(pid)
        self.scratch.close()

    def __enter__(self) -> PlainParent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _reap(process: subprocess.Popen[bytes], deadline: float | None) -> dict[str, Any] | None:
    """How the process ended (exit status or signal, and its CPU seconds where the system says), once it has;
    ``None`` if it is still running at ``deadline`` (``None``: wait as long as it takes)."""
    wait4 = getattr(os, "wait4", None)
    if wait4 is None:  # Windows: no resource usage of a child
        try:
            code = process.wait(timeout=None if deadline is None else max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            return None
        return {"exit": code}
    while True:
        try:
            pid, status, usage = wait4(process.pid, 0 if deadline is None else os.WNOHANG)
        except ChildProcessError:  # reaped already: nothing more is known
            return {"exit": -1}
        if pid:
            process.returncode = code = os.waitstatus_to_exitcode(status)
            facts: dict[str, Any] = {"signal": -code} if code < 0 else {"exit": code}
            return {**facts, "cpu": round(usage.ru_utime + usage.ru_stime, 3)}
        if deadline is not None and time.monotonic() >= deadline:
            return None
        time.sleep(0.005)


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Kill the learner process and what it started (its session's process group, where there are groups)."""
    killpg = getattr(os, "killpg", None)
    if killpg is not None:
        try:
            killpg(process.pid, signal.SIGKILL)
            return
        except OSError:
            pass
    process.kill()


def _environment() -> dict[str, str]:
    """The learner process's environment: the warm parent's minimal one, with the system's own ``PATH``."""
    return learner_environment(
        os.environ.get("PATH", os.defpath), ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "SYSTEMROOT")
    )


# -- the learner process -----------------------------------------------------


def serve_plain(config_json: str) -> None:
    """The learner process of the fallback runner: requests on stdin, answers on stdout, its printing on stderr.

    The answers get descriptors of their own and what the learner prints
    goes where stdout was, so no ``print`` can break into the protocol.
    """
    config = json.loads(config_json)
    _end_with_the_grader(int(config["grader_pid"]))
    request_fd, response_fd = os.dup(0), os.dup(1)
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    from grader.sandbox import child

    child.serve(config, request_fd, response_fd)


def _end_with_the_grader(grader: int) -> None:
    """End this process when the grader is gone: a grader killed mid-call can no longer kill it itself.

    On Linux the kernel does it (``PR_SET_PDEATHSIG``); elsewhere a thread
    watches for the grader's end (this process is then re-parented).
    """
    try:
        from grader.sandbox.confine.privileges import die_with_parent

        die_with_parent(grader)
        return
    except Exception:  # not Linux: no prctl (its module does not even load)
        pass
    import threading

    def watch() -> None:
        while os.getppid() == grader:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="grader-watch", daemon=True).start()
