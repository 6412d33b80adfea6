"""An in-process stand-in for the sandbox, for fast unit tests of checks and the engine.

It runs TRUSTED test fixtures in the test process through the same call
encoding and result decoding as the real learner process, so the engine
cannot tell the difference. Never use it on learner code.
"""

from __future__ import annotations

import types
import warnings
from typing import Any

from grader.sandbox import child
from grader.sandbox.outcomes import CallOutcome, StartOutcome
from grader.sandbox.runner import LearnerProcess, OutputCapture


class InProcessProcess:
    def __init__(self, files: dict[str, bytes], module: str, entries: list[str]) -> None:
        self._source = files[module].decode()
        self._module_name = module
        self._entries = entries
        self.output = OutputCapture(8192, 1 << 20)
        self.module: Any = None
        self.alive = True
        self.calls_received = 0

    def start(self, then: Any = None) -> StartOutcome:  # calls sent ahead are simply asked for again
        module = types.ModuleType("submission")
        try:
            exec(compile(self._source, self._module_name, "exec"), module.__dict__)  # noqa: S102 - trusted fixtures
        except Exception as exc:
            return StartOutcome(status="raised", error={"type": type(exc).__name__, "message": str(exc), "frames": []})
        self.module = module
        return StartOutcome(status="ok", entries={n: callable(getattr(module, n, None)) for n in self._entries})

    def call_many(self, calls: list[dict[str, Any]], blobs: list[bytes], deadline: float | None = None, *,
                  batch: bool = False) -> list[CallOutcome]:
        outcomes = []
        for index, call in enumerate(calls):
            self.calls_received += 1
            with warnings.catch_warnings():  # a learner process has no pytest warning filters
                warnings.simplefilter("ignore")
                header, payload = child._run_call(self.module, index, call,
                                                  lambda call=call: child._decode_arguments(call, blobs), "/nonexistent")
            outcomes.append(LearnerProcess._decode_result(None, index, header, payload))  # type: ignore[arg-type]
        return outcomes

    def close(self) -> None:
        self.alive = False


class InProcessFactory:
    """ProcessFactory that records every process it opened."""

    def __init__(self) -> None:
        self.opened: list[InProcessProcess] = []

    def open(self, files: dict[str, bytes], module: str, entries: list[str], call_seconds: float) -> InProcessProcess:
        process = InProcessProcess(files, module, entries)
        self.opened.append(process)
        return process
