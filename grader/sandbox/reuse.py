"""One confined learner process for every exercise of a submission.

Starting and confining a process costs more than most exercises' calls, so
the exercises of one submission share a process: each exercise imports its
file afresh in it (a new module object, NumPy's error modes and the warning
filters reset), with its own output capture and its own time limit per call.
Nothing crosses between submissions: the grader ends the process when the
submission is done (:meth:`ReusedProcesses.release`).

A process is not reused once it has ended, crashed or timed out, after a
failed import, once it has been handed the grader's own functions (an
argument of some checks, which a later exercise's code must not find), or
when it is no longer fresh: it has used a quarter of its
CPU or memory limit, or runs a thread besides its main one (a thread left
running by one exercise must not slow the next).
"""

from __future__ import annotations

from typing import Any, Callable

from grader.sandbox.outcomes import CallOutcome, StartOutcome
from grader.sandbox.replies import ReplyBudget
from grader.sandbox.runner import LearnerProcess, Limits, OutputCapture

__all__ = ["ReusedProcesses", "SharedHandle"]

_FRESH_SHARE = 0.25


class ReusedProcesses:
    """Hands out learner processes, reusing one live process for files it already holds."""

    def __init__(self, make: Callable[[dict[str, bytes], str, list[str], Limits], LearnerProcess]) -> None:
        self._make = make
        self._process: LearnerProcess | None = None
        self._files: dict[str, bytes] | None = None
        self._busy = False

    def open(self, files: dict[str, bytes], module: str, entries: list[str], limits: Limits,
             on_start: Callable[[StartOutcome], None] = lambda start: None) -> "SharedHandle":
        """A handle that will import ``module`` of ``files``: in the shared process when it can."""
        return SharedHandle(self, files, module, entries, limits, on_start)

    def release(self) -> None:
        """End the shared process (the submission is graded: none of its answers is still awaited)."""
        process, self._process, self._files = self._process, None, None
        self._busy = False
        if process is not None:
            process.close(wait=False)

    # -- used by SharedHandle ------------------------------------------------

    def _take(self, files: dict[str, bytes], module: str, entries: list[str],
              limits: Limits) -> tuple[LearnerProcess, bool, bool]:
        """``(process, shared, reused)``: the shared process if it can serve ``files``, else a new one."""
        process = self._process
        if process is not None and not self._busy and self._files == files:
            if self._fresh(process, limits):
                self._busy = True
                return process, True, True
            self.release()
        if self._process is None:
            self._process, self._files, self._busy = self._make(files, module, entries, limits), files, True
            return self._process, True, False
        return self._make(files, module, entries, limits), False, False  # other files (a known-wrong): a one-off

    def _give_back(self, process: LearnerProcess) -> None:
        self._busy = False
        if not process.alive:
            if process is self._process:
                self._process, self._files = None, None
            process.close()

    def _fresh(self, process: LearnerProcess, limits: Limits) -> bool:
        if not process.alive or process.holds_trusted:
            return False
        usage = process.usage()
        if usage is None:
            return False
        cpu, resident, threads = usage
        return (cpu < limits.cpu_seconds * _FRESH_SHARE and resident < limits.memory_bytes * _FRESH_SHARE
                and threads <= 1)  # a process forked from the warm parent has one thread until the learner starts one


class SharedHandle:
    """What the engine sees as its learner process for one exercise (the engine's ``LearnerProcessLike``)."""

    def __init__(self, owner: ReusedProcesses, files: dict[str, bytes], module: str, entries: list[str],
                 limits: Limits, on_start: Callable[[StartOutcome], None]) -> None:
        self._owner = owner
        self._files, self._module, self._entries, self._limits = files, module, entries, limits
        self._on_start = on_start
        self._process: LearnerProcess | None = None
        self._shared = False
        self.output = OutputCapture(limits.output_keep, limits.output_cap)
        self.replies: ReplyBudget | None = None  # what the process may send for this exercise (the engine's)

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.alive

    def start(self, then: tuple[list[dict[str, Any]], list[bytes], bool] | None = None) -> StartOutcome:
        """Import the file, in the shared process when it can.

        ``then``: calls to send along with the import (``LearnerProcess.start``).
        """
        process, self._shared, reused = self._owner._take(self._files, self._module, self._entries, self._limits)
        self._process = process
        process.call_seconds = self._limits.call_seconds
        if self.replies is not None:
            process.replies = self.replies
        if reused:
            self.output = process.fresh_output()
            start = process.load(self._module, self._entries, then)
        else:
            self.output = process.output
            start = process.start(then)
        self._on_start(start)
        return start

    def call_many(self, calls: list[dict[str, Any]], blobs: list[bytes],
                  deadline: float | None = None, *, batch: bool = False) -> list[CallOutcome]:
        if self._process is None:
            return [CallOutcome(status="not_run", detail="the process was never started")] * len(calls)
        return self._process.call_many(calls, blobs, deadline, batch=batch)

    def close(self) -> None:
        """Done with this exercise: keep what it printed; a one-off or ended process is closed for good."""
        process, self._process = self._process, None
        if process is None:
            return
        if not self._shared:
            process.close()
            return
        if process.alive and process.settled:
            process.fresh_output()  # drains what this exercise printed into self.output
        else:  # ended, or still owing answers to calls sent ahead that nobody will read: not for another exercise
            process.close()
        self._owner._give_back(process)
