"""An in-process stand-in for the sandbox, for fast unit tests of checks and the engine.

It runs TRUSTED test fixtures in the test process through the same call
encoding and result decoding as the real learner process, so the engine
cannot tell the difference. Never use it on learner code. It implements the
sandbox's Protocols (``grader.sandbox.contracts``) and uses only public
functions of the sandbox.
"""

from __future__ import annotations

import os
import threading
import types
import warnings
from collections.abc import Callable
from typing import Any

from grader.sandbox import answer_batches, child
from grader.sandbox.answers import decode_answer, refused_reply
from grader.sandbox.arguments import decode_arguments, set_given_source
from grader.sandbox.calls import CallBatch
from grader.sandbox.contracts import LearnerProcessLike, ProcessFactory, WarmParentLike
from grader.sandbox.frames import LimitExceeded, MessageParser
from grader.sandbox.outcomes import CallOutcome, StartOutcome
from grader.sandbox.output import OutputCapture
from grader.sandbox.protocol import encode_message
from grader.sandbox.replies import ReplyBudget
from grader.sandbox.scratch import ScratchFolders
from grader.sandbox.signatures import describe_defaults


class InProcessProcess:
    """A ``LearnerProcessLike`` that runs a trusted module in this process.

    ``metered``: every answer is read through the grader's parser against
    the process's reply budget (``replies``), as the real process's are; an
    answer over the budget ends the process.
    """

    def __init__(self, files: dict[str, bytes], module: str, entries: list[str], *, metered: bool = False) -> None:
        self._source = files[module].decode()
        self._module_name = module
        self._entries = entries
        self._metered = metered
        self.output = OutputCapture(8192, 1 << 20)
        self.replies = ReplyBudget()
        self.module: Any = None
        self.alive = True
        self.calls_received = 0
        self.answered: list[CallOutcome] = []

    def start(self, ahead: CallBatch | None = None) -> StartOutcome:  # calls sent ahead are simply asked for again
        module = types.ModuleType("submission")
        try:
            exec(compile(self._source, self._module_name, "exec"), module.__dict__)  # noqa: S102 - trusted fixtures
        except Exception as exc:
            return StartOutcome(status="raised", error={"type": type(exc).__name__, "message": str(exc), "frames": []})
        self.module = module
        entries = {n: callable(getattr(module, n, None)) for n in self._entries}
        defaults = describe_defaults(module, [name for name, defined in entries.items() if defined])
        return StartOutcome(status="ok", entries=entries, defaults=defaults)

    def call_many(self, calls: CallBatch, deadline: float | None = None, *, batch: bool = False) -> list[CallOutcome]:
        outcomes: list[CallOutcome] = []
        set_given_source(calls.given)  # as a learner process does with a request's given_source
        for index, call in enumerate(calls.calls):
            self.calls_received += 1
            with warnings.catch_warnings():  # a learner process has no pytest warning filters
                warnings.simplefilter("ignore")
                header, payload = child.run_call(
                    self.module, index, call, lambda call=call: decode_arguments(call, calls.blobs), "/nonexistent"
                )
            if self._metered:
                try:
                    MessageParser(allowance=self.replies).feed(answer_batches.encode_answer(header, payload))
                except LimitExceeded as exc:
                    self.alive = False
                    outcomes.append(refused_reply(exc))
                    break
            outcomes.append(decode_answer(index, header, payload))
        self.answered += outcomes
        return outcomes + [CallOutcome(status="not_run")] * (len(calls) - len(outcomes))

    def close(self) -> None:
        self.alive = False


class InProcessFactory:
    """A ``ProcessFactory`` of in-process learner processes, recording every process it opened."""

    def __init__(self, *, metered: bool = False) -> None:
        self.opened: list[InProcessProcess] = []
        self._metered = metered

    def open(self, files: dict[str, bytes], module: str, entries: list[str], call_seconds: float) -> InProcessProcess:
        process = InProcessProcess(files, module, entries, metered=self._metered)
        self.opened.append(process)
        return process


def _conforms(process: InProcessProcess, factory: InProcessFactory) -> tuple[LearnerProcessLike, ProcessFactory]:
    """Checked by mypy: the fakes implement the sandbox's Protocols."""
    return process, factory


class WarmParentStub:
    """A ``WarmParentLike`` that forks nothing: subclasses say what ``spawn`` and ``finish`` do.

    For tests of a ``LearnerProcess`` against a scripted "process".
    """

    def __init__(self) -> None:
        self.preloaded: set[str] = set()
        self.scratch = ScratchFolders(keep=0)
        self.self_tests: dict[Any, Any] = {}
        self.noted: list[str] = []

    @property
    def facts(self) -> dict[str, Any]:
        return {}

    def early_self_test(self, confinement: dict[str, Any]) -> dict[str, Any] | None:
        return None

    def spawn(self, config: dict[str, Any], fds: list[int]) -> int:
        raise NotImplementedError

    def finish(self, pid: int, grace: float = 0.0) -> dict[str, Any]:
        return {"op": "finished", "pid": pid, "killed": True}

    def finish_later(self, pid: int, then: Callable[[], None]) -> None:
        self.finish(pid)
        then()

    def note_request(self, key: str, message: bytes) -> None:
        self.noted.append(key)


class ScriptedWarmParent(WarmParentStub):
    """A warm parent whose "learner process" is a thread of this process, reading and writing the real pipes.

    It says it is ready (every entry defined), then answers each request
    it reads with the next message of ``replies`` (bytes, as a learner
    process would write them), until the grader closes the pipes.
    ``printing``: what it prints (on its output pipe) before it says it is
    ready, then before each reply; ``ready``: more fields of its ``ready``.
    """

    def __init__(
        self, replies: list[bytes], printing: list[bytes] | None = None, ready: dict[str, Any] | None = None
    ) -> None:
        super().__init__()
        self.replies = list(replies)
        self.printing = list(printing or [])
        self.ready = dict(ready or {})

    def spawn(self, config: dict[str, Any], fds: list[int]) -> int:
        request_r, response_w, output_w = os.dup(fds[0]), os.dup(fds[1]), os.dup(fds[2])
        entries = {name: True for name in config["entries"]}
        ready = encode_message({"op": "ready", "ok": True, "entries": entries, **self.ready})

        def learner() -> None:
            printing = list(self.printing)
            try:
                os.write(output_w, printing.pop(0) if printing else b"")
                os.write(response_w, ready)
                parser, replies = MessageParser(), list(self.replies)
                while replies and (data := os.read(request_r, 1 << 20)):
                    for _ in parser.feed(data):
                        os.write(output_w, printing.pop(0) if printing else b"")
                        os.write(response_w, replies.pop(0))
            except OSError:  # the grader closed its ends
                pass
            finally:
                os.close(request_r)
                os.close(response_w)
                os.close(output_w)

        threading.Thread(target=learner, daemon=True).start()
        return 999_999


def _a_warm_parent(stub: WarmParentStub) -> WarmParentLike:
    """Checked by mypy: the stub implements the warm parent's Protocol."""
    return stub
