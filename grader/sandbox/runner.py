"""The grader's side of a learner process: start it, send calls, read numbers back.

``WarmParent`` is the client of the warm parent; ``LearnerProcess`` is one
confined child serving one exercise. Every pipe operation has a deadline,
learner output is drained into a capped buffer while we wait (and cut by
call where the answers say how much had been printed), and a child
that crashes, hangs, floods its output or sends garbage ends its own
session with a ``CallOutcome`` that says which, never with an exception.
"""

from __future__ import annotations

import os
import selectors
import signal
import time
from collections import deque
from typing import Any

from msgspec.structs import asdict, replace

from grader.errors import SandboxError
from grader.sandbox.answers import decode_answer, printed_marks, refused_reply
from grader.sandbox.calls import CallBatch
from grader.sandbox.contracts import WarmParentLike
from grader.sandbox.limits import Layers, Limits
from grader.sandbox.memory import SandboxMemo
from grader.sandbox.outcomes import CallOutcome, Phase, StartOutcome, Stop, hit_cpu_limit
from grader.sandbox.output import OutputCapture
from grader.sandbox.pipes import READ_SIZE, Pipes, open_pipes, read_ready
from grader.sandbox.process_tree import process_usage
from grader.sandbox.protocol import MessageParser, ProtocolError, encode_message
from grader.sandbox.replies import HEADER_BYTES, ReplyBudget
from grader.sandbox.requests import Request
from grader.sandbox.signatures import clean_defaults
from grader.sandbox.untrusted import clean_error, clean_layers
from grader.sandbox.warm_parent import WarmParent

__all__ = ["Layers", "LearnerProcess", "Limits", "OutputCapture", "WarmParent"]


_NOTHING = memoryview(b"")  # nothing to write; a read-only view, so one shared default is safe


class LearnerProcess:
    """One confined learner process serving one exercise of one submission."""

    def __init__(
        self,
        warm_parent: WarmParentLike,
        files: dict[str, bytes],
        module: str,
        entries: list[str],
        limits: Limits | None = None,
        layers: Layers | None = None,
        *,
        memo: SandboxMemo | None = None,
    ) -> None:
        limits = limits or Limits()
        self._warm_parent = warm_parent
        self._memo = memo if memo is not None else SandboxMemo()  # a session's, shared by its processes
        self._files, self._module, self._entries = files, module, entries
        self._limits, self._layers = limits, layers or Layers()
        self._pid: int | None = None
        self._pipes: Pipes | None = None
        self._scratch: str | None = None
        self._replies = ReplyBudget()  # a process of its own; the engine hands it its submission's (``replies``)
        self._parser = self._new_parser()
        self._inbox: deque[tuple[dict[Any, Any], list[bytes]]] = deque()
        self._selector: selectors.BaseSelector | None = None
        self.output = OutputCapture(limits.output_keep, limits.output_cap)
        self._printed = 0  # the bytes the process last said it had printed (``sandbox.printing``)
        self.end: dict[str, Any] | None = None
        self.call_seconds = limits.call_seconds
        self.holds_trusted = False
        self._preloaded: set[str] = set()  # requests this process said it holds decoded (``arguments.preload``)
        self._ahead: Request | None = None  # a request sent with the import, its answers not yet collected
        self._unsent = memoryview(b"")  # requests not yet written (the pipe was full, or an answer came first)
        self._broken: CallOutcome | None = None  # garbage came after the messages still in the inbox

    @property
    def alive(self) -> bool:
        return self._pid is not None and self.end is None

    @property
    def pid(self) -> int | None:
        """The learner process's pid once started (it may have ended since)."""
        return self._pid

    @property
    def scratch_folder(self) -> str | None:
        """The folder holding the learner's files while the process runs (handed back when it is closed)."""
        return self._scratch

    @property
    def replies(self) -> ReplyBudget:
        """What this process may still send the grader: its submission's budget, once the engine hands it over."""
        return self._replies

    @replies.setter
    def replies(self, budget: ReplyBudget) -> None:
        self._replies = self._parser.allowance = budget

    def _new_parser(self) -> MessageParser:
        """A parser of this process's messages: each frame charged to its budget, no message it was not asked for."""
        parser = MessageParser(max_header=HEADER_BYTES, allowance=self._replies)
        parser.owed = 0  # raised by each request sent (``_expect``)
        return parser

    def _expect(self, messages: int) -> None:
        """Await ``messages`` more from the process: a ``ready`` for an import, an answer for each call."""
        assert self._parser.owed is not None
        self._parser.owed += messages

    def start(self, ahead: CallBatch | None = None) -> StartOutcome:
        """Fork, confine, import the submission; report how that went.

        ``ahead``: the calls of the first ``call_many``, sent at once and
        answered in batches, so the process goes on to them without waiting
        to be asked. Collect their answers with ``call_many`` on a batch with
        the same key and ``batch=True``.
        """
        inherited = set(self._warm_parent.preloaded)  # preloaded before this fork: the new process holds them
        self._spawn({})
        self._expect(1)
        self._preloaded = inherited
        return self._ready(memoryview(self._send_ahead(ahead)))

    def load(self, module: str, entries: list[str], ahead: CallBatch | None = None) -> StartOutcome:
        """Import another of the submission's files, as a fresh module, in this live process.

        One process can then serve every exercise of a submission: confinement
        and process start are paid once. A failed import ends the process.
        ``ahead``: as for :meth:`start`; the import and the calls go in one write.
        """
        if not self.alive:
            return StartOutcome(status="crashed", detail="the process had already ended")
        assert self._scratch is not None
        self._module, self._entries = module, entries
        request = {"op": "import", "module": os.path.join(self._scratch, module), "entries": entries}
        self._expect(1)
        return self._ready(memoryview(encode_message(request) + self._send_ahead(ahead)))

    @property
    def settled(self) -> bool:
        """Whether no answers are owed to calls sent ahead (``ahead``) and not collected.

        Only such a process may serve another exercise.
        """
        return self._ahead is None

    def _send_ahead(self, ahead: CallBatch | None) -> bytes:
        """The message of the calls sent along with an import (``b""`` for none), remembered until collected."""
        if ahead is None:
            return b""
        request = self._memo.requests.request(ahead, batch=True)
        if request.trusted:
            self.holds_trusted = True  # so it never serves another exercise, whose code could call them
        self._ahead = request
        self._expect(len(request.calls))
        return self._message_for(request)

    def fresh_output(self) -> OutputCapture:
        """Start a new capture of what the learner prints (each exercise shows only its own output)."""
        if self._pipes is not None:  # what was printed before now belongs to the previous capture
            while (data := read_ready(self._pipes.output_r)) and self.output.total <= self.output.cap:
                self.output.add(data)
        self.output = OutputCapture(self._limits.output_keep, self._limits.output_cap, start=self.output.end)
        if self._scratch:
            self.output.hide.append(self._scratch)
        return self.output

    def usage(self) -> tuple[float, int, int] | None:
        """CPU seconds used, resident bytes and threads of the live process (from ``/proc``), or ``None``."""
        if self._pid is None or self.end is not None:
            return None
        return process_usage(self._pid)

    def _ready(self, outgoing: memoryview = _NOTHING) -> StartOutcome:
        message, failure = self._receive(self._limits.import_seconds, "import", outgoing)
        if failure is not None:
            if failure.status == "bad_value":  # it sent more than it may: a fact about what it sent
                return StartOutcome(status="protocol", error=failure.error)
            return StartOutcome(status=failure.status, detail=failure.detail, stop=failure.stop)  # type: ignore[arg-type]
        header, _ = message  # type: ignore[misc]
        if header.get("op") != "ready":
            self._end()
            return StartOutcome(status="protocol", detail="the process sent something other than its first answer")
        if not header.get("ok"):
            self._end()
            return StartOutcome(
                status="raised",
                error=self.limit_facts(clean_error(header.get("error"))),
                layers=clean_layers(header.get("layers")),
            )
        self._note_printed(header)
        self.output.imported = self._printed
        entries = header.get("entries", {})
        held = header.get("preloaded")
        if isinstance(held, list) and len(held) <= 1024:
            self._preloaded = {key for key in held if isinstance(key, str)}
        return StartOutcome(
            status="ok",
            layers=clean_layers(header.get("layers")),
            entries={str(k): bool(v) for k, v in entries.items()},
            defaults=clean_defaults(header.get("defaults")),
        )

    def self_test(self, spec: dict[str, Any]) -> dict[str, Any]:
        """Run the sandbox self-test (trusted probes, no learner code) in a process confined like this one.

        Returns ``{"layers": ..., "probes": ...}``; raises ``SandboxError`` when
        the process does not report (the grader's fault, not a learner's).
        """
        try:
            self._spawn({"selftest": spec})
            self._expect(1)
            message, failure = self._receive(max(self._limits.import_seconds, 10.0), "self-test")
            if failure is not None or message is None or message[0].get("op") != "selftest":
                why = _fact_text(failure) if failure is not None else "it sent something else"
                raise SandboxError(
                    f"the sandbox self-test process did not report ({why}); output: {self.output.excerpt()[:500]!r}"
                )
            header = message[0]
            probes: dict[Any, Any] = header["probes"] if isinstance(header.get("probes"), dict) else {}
            return {
                "layers": clean_layers(header.get("layers")),
                "probes": {str(k): str(v)[:80] for k, v in probes.items()},
            }
        finally:
            self.close()

    def _spawn(self, extra: dict[str, Any]) -> None:
        self._scratch = self._warm_parent.scratch.take()
        self.output.hide.append(self._scratch)
        for name, data in self._files.items():
            with open(os.path.join(self._scratch, name), "xb") as handle:
                handle.write(data)
        self._pipes, (request_r, response_w, output_w) = open_pipes()
        config = {
            "scratch": self._scratch,
            "module": os.path.join(self._scratch, self._module),
            "entries": self._entries,
            "limits": self._limits.child_limits(),
            "layers": asdict(self._layers),
            **extra,
        }
        try:
            self._pid = self._warm_parent.spawn(config, [request_r, response_w, output_w])
        finally:
            for fd in (request_r, response_w, output_w):
                os.close(fd)

    def call_many(self, calls: CallBatch, deadline: float | None = None, *, batch: bool = False) -> list[CallOutcome]:
        """Send a whole batch of calls in one message; collect one outcome per call.

        Results stream back in order. The first call that hangs, crashes or
        floods ends the process: it gets that status and later calls get
        ``not_run`` (the caller starts a new process for the next batch).
        So does running out of memory twice, and reaching ``deadline`` (a
        ``time.monotonic()`` value: the exercise's whole time budget).

        With ``batch`` the process sends its answers in batches, which is
        faster; but then a call that hangs or crashes cannot be told apart
        from the calls answered before it and not yet sent. Such a failure
        ends the process and marks every unanswered call ``not_run``: ask
        again, without ``batch``, to learn which call it was.

        While the answers to calls sent ahead (``start``) are owed, only a
        batch with the same key, answered in batches, collects them; any
        other request ends the process (its answers would be taken for
        those) and every call is ``not_run``.
        """
        first = self.output.begin_calls(len(calls))  # numbered even when none is answered: numbers follow the sending
        if not self.alive:
            return [CallOutcome(status="not_run", detail="the process had already ended")] * len(calls)
        assert self._pipes is not None
        outcomes: list[CallOutcome] = []
        ahead = self._ahead
        if ahead is not None and not (ahead.calls.key == calls.key and ahead.batch == batch):
            self._end()  # answers to other calls are on their way
            return [CallOutcome(status="not_run", detail="the process was busy with other calls")] * len(calls)
        if ahead is not None:  # sent with the import: only the answers are left to read
            self._ahead = None
            pending = memoryview(b"")
        else:
            request = self._memo.requests.request(calls, batch)
            self._expect(len(calls))
            if request.trusted:
                self.holds_trusted = True  # so it never serves another exercise, whose code could call them
            pending = memoryview(self._message_for(request))
        out_of_memory = 0
        for index in range(len(calls)):
            wait = self.call_seconds
            budget_left = None if deadline is None else deadline - time.monotonic()
            if budget_left is not None and budget_left < wait:
                wait = max(budget_left, 0.0)
            message, failure = self._receive(wait, "call", pending)
            pending = memoryview(b"")
            if failure is not None and batch:
                break  # the process has ended; which call failed is unknown: every unanswered call is not_run
            if failure is not None:
                if failure.status == "timeout" and wait < self.call_seconds and failure.stop is not None:
                    failure.stop = replace(failure.stop, budget=True)
                self.output.called(first + index, self._printed, None)  # the call it never answered printed the rest
                outcomes.append(failure)
                break
            header, payload = message  # type: ignore[misc]
            before = self._note_printed(header)
            if self._printed > before:
                self.output.called(first + index, before, self._printed)
            outcome = self._decode_result(index, header, payload)
            if outcome.error:
                self.limit_facts(outcome.error)
            outcomes.append(outcome)
            if outcome.status == "protocol":
                self._end()
                break
            if outcome.status == "raised" and outcome.error and outcome.error.get("type") == "MemoryError":
                out_of_memory += 1
                if out_of_memory >= 2:
                    self._end()
                    break
        not_run = CallOutcome(status="not_run", detail="not run after an earlier failure")
        outcomes += [not_run] * (len(calls) - len(outcomes))
        return outcomes

    def _note_printed(self, header: dict[Any, Any]) -> int:
        """Take the count of printed bytes a message carries, if any; the count before it.

        The count only grows: a smaller one (the process's word, not a fact) is ignored.
        """
        before, count = self._printed, header.get("printed")
        if type(count) is int and count > before:
            self._printed = count
        return before

    def _message_for(self, request: Request) -> bytes:
        """The request in full, or just its key when this process said it holds it preloaded.

        A request sent in full a second time (to another learner, on the same
        plan) is handed to the warm parent to preload before its next fork.
        """
        if request.trusted:
            return request.message
        if request.key is not None and request.key in self._preloaded:
            return request.short()
        request.sent += 1
        if request.sent >= 2:
            self._warm_parent.note_request(*request.preloadable())
        return request.message

    def close(self, *, wait: bool = True) -> None:
        """End the process (if alive), close the pipes, remove the scratch directory.

        ``wait=False``, for a process whose every answer has been read: the
        warm parent ends it while the grader moves on (``WarmParent.finish_later``);
        its scratch folder is removed once it is gone, and what it prints from
        now on is not read.
        """
        if not wait and self._pid is not None and self.end is None:
            scratch, self._scratch = self._scratch, None
            self.end = {"pid": self._pid, "killed": True}

            def gone() -> None:
                if scratch:
                    self._give_back(scratch)

            self._warm_parent.finish_later(self._pid, gone)
        if self._pid is not None and self.end is None:
            self._end()
        if self._pipes is not None:
            for fd in (self._pipes.request_w, self._pipes.response_r, self._pipes.output_r):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._pipes = None
        if self._selector is not None:
            self._selector.close()
            self._selector = None
        self._inbox.clear()  # what came and was not asked for is not kept
        self._parser = self._new_parser()
        if self._scratch is not None:  # its process is gone (``_end`` waits for that)
            self._give_back(self._scratch)
            self._scratch = None

    def _give_back(self, scratch: str) -> None:
        self._warm_parent.scratch.give_back(scratch, self._files)

    def __enter__(self) -> LearnerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -------------------------------------------------------

    def _answers_in(self, header: dict[str, Any], blobs: list[bytes]) -> list[tuple[dict[Any, Any], list[bytes]]]:
        """The answers of a ``results`` message, each decoded and checked, as messages of their own.

        A batch whose bytes are exactly those of a recent one (a class's correct
        submissions return the same numbers) gets that batch's outcomes again:
        same bytes, same outcomes, without taking them apart a second time.
        """
        answers = header.get("answers")
        more = len(answers) - 1 if isinstance(answers, list) and answers else 0  # beyond the one its header took
        assert self._parser.owed is not None
        if more > self._parser.owed:  # each answer becomes objects in the grader: only those asked for are made
            raise ProtocolError("a batch holds answers to calls that were not asked")
        self._parser.owed -= more
        marks = printed_marks(header, len(answers) if isinstance(answers, list) else 0)  # checked before it is kept
        known = self._memo.answers
        key = known.key(blobs)  # hashed once, whether found or remembered
        outcomes = known.find(header, blobs, key)
        if outcomes is None:
            outcomes = known.decode(header, blobs)
            known.remember(header, blobs, outcomes, key)
        first = header["first"]
        answers_of = [
            {"op": "result", "index": first + number, _DECODED: outcome} for number, outcome in enumerate(outcomes)
        ]
        for number, count in marks:  # each names one of the answers: there are as many as ``answers`` lists
            answers_of[number]["printed"] = count
        return [(answer, []) for answer in answers_of]

    def _decode_result(self, index: int, header: dict[Any, Any], payload: list[bytes]) -> CallOutcome:
        decoded = header.get(_DECODED)  # a key JSON cannot spell: only _answers_in puts it there
        if decoded is not None and header.get("op") == "result" and header.get("index") == index:
            return decoded
        return decode_answer(index, header, payload)

    def _receive(
        self, seconds: float, phase: Phase, outgoing: memoryview = _NOTHING
    ) -> tuple[tuple[dict[str, Any], list[bytes]] | None, CallOutcome | None]:
        """Wait for one message, writing ``outgoing`` and draining output meanwhile.

        Everything that has arrived is read and parsed at once, so a child
        that answers faster than we judge costs one wake-up per pipe buffer,
        not one per answer. What could not be written before the message
        came stays queued and is written during the next wait: a new process
        imports its file before it reads any request, so its ``ready`` can
        arrive while the calls sent ahead of it are still being written, and
        the rest of them must still reach it.
        """
        assert self._pipes is not None
        if outgoing:
            self._unsent = memoryview(bytes(self._unsent) + bytes(outgoing)) if self._unsent else outgoing
        if self._inbox:
            return self._inbox.popleft(), None
        if self._broken is not None:  # what came whole before the garbage has been read: now the garbage counts
            self._end()
            return None, self._broken
        pipes = self._pipes
        selector = self._selector
        if selector is None:
            selector = self._selector = selectors.DefaultSelector()
            selector.register(pipes.response_r, selectors.EVENT_READ, "response")
            selector.register(pipes.output_r, selectors.EVENT_READ, "output")
        writing = bool(self._unsent)
        if writing:
            selector.register(pipes.request_w, selectors.EVENT_WRITE, "request")
        try:
            return self._wait(selector, seconds, phase)
        finally:
            if writing and pipes.request_w in selector.get_map():
                selector.unregister(pipes.request_w)

    def _wait(
        self, selector: selectors.BaseSelector, seconds: float, phase: Phase
    ) -> tuple[tuple[dict[str, Any], list[bytes]] | None, CallOutcome | None]:
        assert self._pipes is not None
        pipes = self._pipes
        started = time.monotonic()
        deadline = started + seconds
        # The CPU clock is read only once a wait has lasted a while: nearly every answer comes well before.
        cpu_mark: tuple[float, float | None] | None = None
        while True:
            now = time.monotonic()
            remaining = deadline - now
            if cpu_mark is None and now - started >= min(_CPU_MARK_SECONDS, seconds / 4):
                cpu_mark = (now, self._cpu_seconds())
            if remaining <= 0:
                cpu_after = self._cpu_seconds()
                end = self._end()
                if not end.get("killed"):  # it died by itself just before the deadline
                    return None, self._crash(end, phase)
                used = None
                if cpu_mark is not None and cpu_mark[1] is not None and cpu_after is not None and now > cpu_mark[0]:
                    used = (cpu_after - cpu_mark[1]) * seconds / (now - cpu_mark[0])  # the share, over the whole wait
                return None, CallOutcome(status="timeout", stop=Stop("timeout", phase, seconds=seconds, cpu_used=used))
            wait = remaining if cpu_mark is not None else min(remaining, max(started + _CPU_MARK_SECONDS - now, 0.0))
            for key, _ in selector.select(wait):
                if key.data == "request":
                    try:
                        written = os.write(pipes.request_w, self._unsent)
                    except (BlockingIOError, InterruptedError):
                        continue
                    except OSError:  # the child closed its end: it will be seen as a crash
                        selector.unregister(pipes.request_w)
                        self._unsent = memoryview(b"")
                        continue
                    self._unsent = self._unsent[written:]
                    if not self._unsent:
                        selector.unregister(pipes.request_w)
                    continue
                if key.data == "output":
                    while (data := read_ready(key.fd)) is not None:
                        if not data:
                            selector.unregister(key.fd)
                            break
                        self.output.add(data)
                        if self.output.flooded:
                            self._end()
                            return None, CallOutcome(
                                status="output_limit",
                                stop=Stop("output_limit", phase, output_cap=self._limits.output_cap),
                            )
                        if len(data) < READ_SIZE:
                            break
                    continue
                closed = False
                while (data := read_ready(key.fd)) is not None:
                    if not data:
                        closed = True
                        break
                    try:
                        messages, broken = self._parser.feed(data), None
                    except ProtocolError as exc:  # what came whole before it still counts (a "ready", answers)
                        messages, broken = exc.messages, exc
                    try:
                        for message in messages:
                            if message[0].get("op") == "results":
                                self._inbox.extend(self._answers_in(*message))
                            else:
                                self._inbox.append(message)
                    except ProtocolError as exc:
                        broken = exc
                    if broken is not None:
                        self._broken = refused_reply(broken)
                        if self._inbox:
                            return self._inbox.popleft(), None
                        self._end()
                        return None, self._broken
                    if len(data) < READ_SIZE or self._inbox:  # what is read is parsed: read no more than is used
                        break
                if self._inbox:
                    return self._inbox.popleft(), None
                if closed:
                    return None, self._crash(self._end(grace=0.5), phase)

    def _crash(self, end: dict[str, Any], phase: Phase) -> CallOutcome:
        """The outcome of a process that ended without answering: how it ended, as facts."""
        if end.get("killed"):
            return CallOutcome(status="crashed", stop=Stop("closed", phase))
        facts = dict(end)
        if "signal" in facts:
            try:
                facts["signal_name"] = signal.Signals(int(facts["signal"])).name
            except (ValueError, TypeError):
                pass
        stop = Stop("ended", phase, end=facts, cpu_seconds=self._limits.cpu_seconds, file_bytes=self._limits.file_bytes)
        # Running out of CPU time is a time limit like the wall clock: it counts as a timeout.
        timed_out = hit_cpu_limit(facts, self._limits.cpu_seconds)
        return CallOutcome(status="timeout" if timed_out else "crashed", stop=stop)

    def limit_facts(self, error: dict[str, Any]) -> dict[str, Any]:
        """Add the parent's own numbers to a child's error report (the memory limit it ran into),
        and hide the scratch folder's random name (results stay deterministic, paths stay private)."""
        if error.get("kind") == "memory" or error.get("type") == "MemoryError":
            error["limit"] = self._limits.memory_bytes
        elif error.get("kind") == "size" and "scope" not in error:  # the learner process refused a value too large
            error["scope"], error["limit"] = "answer", self._replies.limits["answer"]
        if self._scratch:
            for key in ("message", "text"):
                if isinstance(error.get(key), str):
                    error[key] = error[key].replace(self._scratch + os.sep, "").replace(self._scratch, ".")
            for frame in error.get("frames", []):
                if isinstance(frame.get("text"), str):
                    frame["text"] = frame["text"].replace(self._scratch + os.sep, "").replace(self._scratch, ".")
        return error

    def _cpu_seconds(self) -> float | None:
        """CPU time the learner process has used so far, from ``/proc/<pid>/stat``."""
        usage = self.usage()
        return None if usage is None else usage[0]

    def _end(self, grace: float = 0.0) -> dict[str, Any]:
        if self.end is None and self._pid is not None:
            self.end = self._warm_parent.finish(self._pid, grace)
            if self._pipes is not None:
                while True:  # drain what was printed before the end, for the excerpt
                    data = read_ready(self._pipes.output_r)
                    if not data or self.output.total > self.output.cap:
                        break
                    self.output.add(data)
        return self.end or {}


_DECODED = object()
_CPU_MARK_SECONDS = 0.25


def _fact_text(failure: CallOutcome) -> str:
    """A grader-facing note of why a process stopped (for an error of the grader's own, not a learner's reason)."""
    if failure.stop is None:
        return failure.detail or failure.status
    return f"{failure.status}: {failure.stop.kind} during the {failure.stop.phase}"
