"""The sandbox front end: confined learner processes from one warm parent, the sandbox proved and described.

``Sandbox`` is all the grading session sees of the sandbox. It opens a
learner process for each exercise (the engine's ``ProcessFactory``), runs
the start-up self-test before the first one (once per warm parent and set of
layers), and turns it into the ``sandbox`` block of every result (``info``).

Starting and confining a process costs more than most exercises' calls, so
the exercises of one submission share a process: each exercise imports its
file afresh in it (a new module object, NumPy's error modes and the warning
filters reset), with its own output capture and its own time limit per call.
Nothing crosses between submissions: the session ends the process when the
submission is done (:meth:`Sandbox.release`).

A process is not reused once it has ended, crashed or timed out, after a
failed import, once it has been handed the exercise's given functions (an
argument of some checks, which a later exercise's code must not find), or
when it is no longer fresh: it has used a quarter of its CPU or memory
limit, or runs a thread besides its main one (a thread left running by one
exercise must not slow the next).

Its processes come from the warm parent, or where the kernel has no layers
from the fallback runner (``sandbox.fallback``; ``sandbox.parents`` chooses).
"""

from __future__ import annotations

from msgspec.structs import asdict, replace

from grader.errors import WeakSandboxError
from grader.results import SandboxInfo
from grader.sandbox.calls import CallBatch
from grader.sandbox.contracts import CapturedOutput, WarmParentLike
from grader.sandbox.fallback import UNPROTECTED, PlainParent, unsandboxed_label
from grader.sandbox.limits import Layers, Limits
from grader.sandbox.memory import SandboxMemo
from grader.sandbox.outcomes import CallOutcome, StartOutcome
from grader.sandbox.output import OutputCapture
from grader.sandbox.parents import no_kernel_layers
from grader.sandbox.replies import ReplyBudget
from grader.sandbox.runner import LearnerProcess
from grader.sandbox.selftest import SelfTest, judge, run_self_test, summarise

__all__ = ["Sandbox"]

_FRESH_SHARE = 0.25


class Sandbox:
    """Opens confined learner processes from one warm parent, reusing one per submission; proves the sandbox.

    ``memo``: what its processes share within the session (encoded
    requests, known answers); by default one of its own. Given the fallback
    runner (``fallback.PlainParent``) instead of a warm parent, its processes
    are not confined: no self-test runs, hidden checks are refused even with
    ``allow_weak``, and :attr:`unsandboxed` is the label for the report.
    """

    def __init__(
        self,
        warm_parent: WarmParentLike,
        limits: Limits,
        layers: Layers,
        *,
        allow_weak: bool = False,
        memo: SandboxMemo | None = None,
    ) -> None:
        self.warm_parent, self.limits, self.layers = warm_parent, limits, layers
        self.allow_weak = allow_weak
        self.memo = memo if memo is not None else SandboxMemo()
        self.unsandboxed = unsandboxed_label(warm_parent.reason) if isinstance(warm_parent, PlainParent) else None
        self._process: LearnerProcess | None = None  # the submission's shared process
        self._files: dict[str, bytes] | None = None
        self._busy = False

    def open(self, files: dict[str, bytes], module: str, entries: list[str], call_seconds: float) -> _Handle:
        """A learner process for one exercise: the submission's shared process when it is fresh, else a new one."""
        limits = replace(self.limits, call_seconds=Limits.call_seconds_for(call_seconds))
        return _Handle(self, files, module, entries, limits)

    def release(self) -> None:
        """End the process the submission's exercises shared: nothing of one submission meets the next."""
        process, self._process, self._files = self._process, None, None
        self._busy = False
        if process is not None:
            process.close(wait=False)

    def self_test(self) -> SelfTest:
        """The start-up self-test's outcome, run now if this warm parent has not run it with these layers."""
        kept = self.warm_parent.self_tests
        if self.layers not in kept:  # the warm parent may have run it already, while this process imported
            early = self.warm_parent.early_self_test(
                {"limits": self.limits.child_limits(), "layers": asdict(self.layers)}
            )
            if early is not None:
                kept[self.layers] = judge(early, self.warm_parent.facts, self.layers)
        if self.layers not in kept:
            kept[self.layers] = run_self_test(
                lambda spec: self._new_process({}, "selftest.py", [], self.limits).self_test(spec),
                self.warm_parent.facts,
                self.layers,
            )
        return kept[self.layers]

    def require_strong(self) -> None:
        """Raise ``WeakSandboxError`` when the sandbox is weak here and weakness was not allowed.

        With the fallback runner, always: it never runs hidden checks.
        """
        if isinstance(self.warm_parent, PlainParent):
            raise WeakSandboxError(no_kernel_layers(self.warm_parent.reason, "hidden checks need"))
        test = self.self_test()
        if test.weak and not self.allow_weak:
            raise WeakSandboxError(test.refusal(self.warm_parent.facts, self.layers))

    def info(self) -> SandboxInfo:
        """The ``sandbox`` block of a result: the tier and layers the self-test proved, and any warning.

        With the fallback runner: tier ``none``, every kind of harm unprotected.
        """
        if isinstance(self.warm_parent, PlainParent):
            return SandboxInfo(tier="none", unprotected=list(UNPROTECTED))
        test = self.self_test()
        facts = self.warm_parent.facts
        applied = test.layers
        reads = test.protected("reads")
        abi = int(applied.get("landlock_abi") or 0) if reads else 0
        seccomp = bool(applied.get("seccomp")) and test.protected("processes")
        caps = bool(applied.get("caps_dropped")) or not facts.get("root")
        warning = None
        if test.weak:
            parts = []
            if test.failures:
                parts.append("the start-up self-test found layers that did not hold (" + ", ".join(test.failures) + ")")
            if test.unprotected:
                parts.append(f"sandbox tier {test.tier}: " + "; ".join(test.unprotected))
            warning = "; ".join(parts) or f"sandbox tier {test.tier}"
            if self.allow_weak:
                warning += " (graded anyway: --allow-weak-sandbox)"
        return SandboxInfo(
            tier=test.tier,
            landlock_abi=abi,
            seccomp=seccomp,
            caps_dropped=caps,
            warning=warning,
            self_test=summarise(test),
            unprotected=test.unprotected or None,
        )

    # -- sharing one process between the exercises of a submission -------------

    def _new_process(self, files: dict[str, bytes], module: str, entries: list[str], limits: Limits) -> LearnerProcess:
        return LearnerProcess(self.warm_parent, files, module, entries, limits, self.layers, memo=self.memo)

    def _take(
        self, files: dict[str, bytes], module: str, entries: list[str], limits: Limits
    ) -> tuple[LearnerProcess, bool, bool]:
        """``(process, shared, reused)``: the shared process if it can serve ``files``, else a new one."""
        process = self._process
        if process is not None and not self._busy and self._files == files:
            if self._fresh(process, limits):
                self._busy = True
                return process, True, True
            self.release()
        if self._process is None:
            self._process, self._files, self._busy = self._new_process(files, module, entries, limits), files, True
            return self._process, True, False
        return self._new_process(files, module, entries, limits), False, False  # other files (a known-wrong): a one-off

    def _give_back(self, process: LearnerProcess) -> None:
        self._busy = False
        if not process.alive:
            if process is self._process:
                self._process, self._files = None, None
            process.close()

    @staticmethod
    def _fresh(process: LearnerProcess, limits: Limits) -> bool:
        if not process.alive or process.holds_trusted:
            return False
        usage = process.usage()
        if usage is None:
            return False
        cpu, resident, threads = usage
        return (
            cpu < limits.cpu_seconds * _FRESH_SHARE and resident < limits.memory_bytes * _FRESH_SHARE and threads <= 1
        )  # a process forked from the warm parent has one thread until the learner starts one


class _Handle:
    """What the engine sees as its learner process for one exercise (``contracts.LearnerProcessLike``)."""

    def __init__(
        self, sandbox: Sandbox, files: dict[str, bytes], module: str, entries: list[str], limits: Limits
    ) -> None:
        self._sandbox = sandbox
        self._files, self._module, self._entries, self._limits = files, module, entries, limits
        self._process: LearnerProcess | None = None
        self._shared = False
        self._captured = OutputCapture(limits.output_keep, limits.output_cap)
        self.replies = ReplyBudget()  # what the process may send for this exercise; the engine hands it its own

    @property
    def output(self) -> CapturedOutput:
        return self._captured

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.alive

    def start(self, ahead: CallBatch | None = None) -> StartOutcome:
        """Import the file, in the shared process when it can; ``ahead``: as for ``LearnerProcess.start``."""
        process, self._shared, reused = self._sandbox._take(self._files, self._module, self._entries, self._limits)
        self._process = process
        process.call_seconds = self._limits.call_seconds
        process.replies = self.replies
        if reused:
            self._captured = process.fresh_output()
            return process.load(self._module, self._entries, ahead)
        self._captured = process.output
        return process.start(ahead)

    def call_many(self, calls: CallBatch, deadline: float | None = None, *, batch: bool = False) -> list[CallOutcome]:
        if self._process is None:
            return [CallOutcome(status="not_run", detail="the process was never started")] * len(calls)
        return self._process.call_many(calls, deadline, batch=batch)

    def close(self) -> None:
        """Done with this exercise: keep what it printed; a one-off or ended process is closed for good."""
        process, self._process = self._process, None
        if process is None:
            return
        if not self._shared:
            process.close()
            return
        if process.alive and process.settled:
            process.fresh_output()  # drains what this exercise printed into the capture this handle shows
        else:  # ended, or still owing answers to calls sent ahead that nobody will read: not for another exercise
            process.close()
        self._sandbox._give_back(process)
