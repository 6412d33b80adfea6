"""The seams of the sandbox, as ``Protocol``s: what the engine asks of a learner process, what a learner
process asks of its warm parent.

The real classes (``LearnerProcess``, ``Sandbox``,
``WarmParent``) implement these; so do the test doubles (``tests/fakes.py``),
which is what lets the engine's unit tests run without starting a process.
Every member listed is used; nothing is probed for with ``getattr``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from grader.sandbox.calls import CallBatch
from grader.sandbox.outcomes import CallOutcome, StartOutcome
from grader.sandbox.replies import ReplyBudget
from grader.sandbox.scratch import ScratchFolders
from grader.sandbox.selftest import SelfTest

__all__ = ["CapturedOutput", "LearnerProcessLike", "ProcessFactory", "WarmParentLike"]


class CapturedOutput(Protocol):
    """What a learner printed, as the engine shows it: all of it, and cut by call.

    ``import_excerpt`` is what the import printed, ``None`` when the output was not cut by call;
    ``call_excerpts`` what each call that printed printed, by the call's number among those the
    process was sent for the exercise (``call_many`` after ``call_many``, in order, from 0).
    """

    def excerpt(self) -> str: ...
    def import_excerpt(self) -> str | None: ...
    def call_excerpts(self) -> dict[int, str]: ...


class LearnerProcessLike(Protocol):
    """One learner process serving one exercise, as the engine drives it.

    ``start(ahead)`` imports the file and sends the calls of ``ahead`` with
    the import (answered in batches); their answers are collected by
    ``call_many`` on a batch with the same key and ``batch=True``. Any other
    ``call_many`` while such answers are owed ends the process and returns
    ``not_run`` outcomes. ``replies`` is what the process may still send
    (the engine hands each process its submission's budget).
    """

    replies: ReplyBudget

    @property
    def output(self) -> CapturedOutput: ...
    @property
    def alive(self) -> bool: ...
    def start(self, ahead: CallBatch | None = None) -> StartOutcome: ...
    def call_many(
        self, calls: CallBatch, deadline: float | None = None, *, batch: bool = False
    ) -> list[CallOutcome]: ...
    def close(self) -> None: ...


class ProcessFactory(Protocol):
    """Opens learner processes: the sandbox in production, an in-process fake in unit tests."""

    def open(
        self, files: dict[str, bytes], module: str, entries: list[str], call_seconds: float
    ) -> LearnerProcessLike: ...


class WarmParentLike(Protocol):
    """The warm parent a learner process is forked from, as a ``LearnerProcess`` uses it.

    ``preloaded``: keys of requests the parent holds decoded (every fork
    inherits them); ``note_request`` offers one to preload. ``scratch``:
    folders handed out again to its learner processes. ``finish_later``
    ends a process whose answers have all been read, and runs ``then`` once
    it is gone. ``facts`` are what the machine offers; ``self_tests`` the
    start-up self-tests this parent passed, by set of layers (a clone of the
    parent inherits them); ``early_self_test`` hands over the one it ran
    while the grader imported, if it ran with that confinement.
    """

    preloaded: set[str]
    scratch: ScratchFolders
    self_tests: dict[Any, SelfTest]

    @property
    def facts(self) -> dict[str, Any]: ...
    def early_self_test(self, confinement: dict[str, Any]) -> dict[str, Any] | None: ...

    def spawn(self, config: dict[str, Any], fds: list[int]) -> int: ...
    def finish(self, pid: int, grace: float = 0.0) -> dict[str, Any]: ...
    def finish_later(self, pid: int, then: Callable[[], None]) -> None: ...
    def note_request(self, key: str, message: bytes) -> None: ...
