"""The grader's side of a learner process: start it, send calls, read numbers back.

``Zygote`` is the client of the warm parent; ``LearnerProcess`` is one
confined child serving one exercise. Every pipe operation has a deadline,
learner output is drained into a capped buffer while we wait, and a child
that crashes, hangs, floods its output or sends garbage ends its own
session with a ``CallOutcome`` that says which, never with an exception.
"""

from __future__ import annotations

import fcntl
import hashlib as digests  # TODO(issue 20): say hashlib at the call sites once the runner is split
import os
import selectors
import signal
import threading
import time
from collections import OrderedDict, deque
from dataclasses import asdict, dataclass, field
from typing import Any

from grader.errors import SandboxError
from grader.sandbox.outcomes import CallOutcome, StartOutcome
from grader.sandbox.frames import LimitExceeded
from grader.sandbox.protocol import MessageParser, ProtocolError, check_array, decode_array, encode_message
from grader.sandbox.reading import local_reader
from grader.sandbox.replies import HEADER_BYTES, ReplyBudget, size_error
from grader.sandbox.scratch import ScratchFolders
from grader.sandbox.zygote_client import Zygote

__all__ = ["Layers", "LearnerProcess", "Limits", "OutputCapture", "Zygote"]


def _seconds_from_environment(name: str, default: float) -> float:
    """A test-only override of a time limit (``GRADER_CALL_SECONDS`` ...), when it is a positive number."""
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if 0 < value <= 600 else default


@dataclass(frozen=True)
class Limits:
    """Resource limits of one learner process.

    The time limits' defaults can be overridden for tests that wait for
    timeouts, through hidden variables: ``GRADER_CALL_SECONDS`` (wall clock per
    call; it also replaces each exercise's own ``time_limit``),
    ``GRADER_IMPORT_SECONDS`` (wall clock for the import) and
    ``GRADER_CPU_SECONDS`` (CPU time per process).
    """

    call_seconds: float = field(default_factory=lambda: _seconds_from_environment("GRADER_CALL_SECONDS", 2.0))
    import_seconds: float = field(default_factory=lambda: _seconds_from_environment("GRADER_IMPORT_SECONDS", 5.0))
    cpu_seconds: float = field(default_factory=lambda: _seconds_from_environment("GRADER_CPU_SECONDS", 20.0))
    memory_bytes: int = 512 << 20
    file_bytes: int = 1 << 20
    open_files: int = 64
    output_keep: int = 8 << 10
    output_cap: int = 1 << 20

    def child_limits(self) -> dict[str, Any]:
        return {"cpu_seconds": self.cpu_seconds, "memory_bytes": self.memory_bytes,
                "file_bytes": self.file_bytes, "open_files": self.open_files}

    @staticmethod
    def call_seconds_for(exercise_limit: float) -> float:
        """The wall clock per call for an exercise: its own limit, unless ``GRADER_CALL_SECONDS`` overrides it."""
        return _seconds_from_environment("GRADER_CALL_SECONDS", exercise_limit)


@dataclass(frozen=True)
class Layers:
    """Which kernel layers to apply; ``GRADER_SANDBOX_LAYERS`` switches them for tests."""

    caps: bool = True
    landlock: bool = True
    seccomp: bool = True

    @classmethod
    def from_environment(cls) -> "Layers":
        """Read ``GRADER_SANDBOX_LAYERS``: ``all`` (default), ``none``, or a comma list."""
        value = os.environ.get("GRADER_SANDBOX_LAYERS", "all").strip().lower()
        if value in ("", "all"):
            return cls()
        chosen = {part.strip() for part in value.split(",")} - {"none", ""}
        unknown = chosen - {"caps", "landlock", "seccomp"}
        if unknown:
            raise SandboxError(
                f"GRADER_SANDBOX_LAYERS names unknown layers {sorted(unknown)}; "
                "use all, none, or a comma list of caps, landlock, seccomp."
            )
        return cls(caps="caps" in chosen, landlock="landlock" in chosen, seccomp="seccomp" in chosen)


class OutputCapture:
    """Learner stdout and stderr: keep the first bytes, count the rest, flag a flood."""

    def __init__(self, keep: int, cap: int) -> None:
        self.keep, self.cap = keep, cap
        self.head = bytearray()
        self.total = 0
        self.hide: list[str] = []

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.keep - len(self.head)
        if room > 0:
            self.head += data[:room]

    @property
    def flooded(self) -> bool:
        return self.total > self.cap

    def excerpt(self) -> str:
        """A safe excerpt: control characters escaped, truncation said."""
        text = self.head.decode("utf-8", "replace")
        for prefix in self.hide:  # the scratch folder's name is random: keep output deterministic
            text = text.replace(prefix + os.sep, "").replace(prefix, ".")
        cleaned = "".join(ch if ch in "\n\t" or (ch.isprintable()) else f"\\x{ord(ch):02x}" for ch in text)
        if self.total > len(self.head):
            cleaned += f"\n[... {self.total - len(self.head)} more bytes not shown]"
        return cleaned


@dataclass
class _Pipes:
    request_w: int
    response_r: int
    output_r: int
    child_fds: list[int] = field(default_factory=list)


class LearnerProcess:
    """One confined learner process serving one exercise of one submission."""

    def __init__(
        self,
        zygote: Zygote,
        files: dict[str, bytes],
        module: str,
        entries: list[str],
        limits: Limits | None = None,
        layers: Layers | None = None,
    ) -> None:
        limits = limits or Limits()
        self._zygote = zygote
        self._files, self._module, self._entries = files, module, entries
        self._limits, self._layers = limits, layers or Layers()
        self._pid: int | None = None
        self._pipes: _Pipes | None = None
        self._scratch: str | None = None
        self._replies = ReplyBudget()  # a process of its own; the engine hands it its submission's (``replies``)
        self._parser = self._new_parser()
        self._inbox: deque[tuple[dict[Any, Any], list[bytes]]] = deque()
        self._selector: selectors.BaseSelector | None = None
        self.output = OutputCapture(limits.output_keep, limits.output_cap)
        self.end: dict[str, Any] | None = None
        self.call_seconds = limits.call_seconds
        self.holds_trusted = False
        self._preloaded: set[str] = set()  # requests this process said it holds decoded (``child.preload``)
        self._ahead: _Request | None = None  # a request sent with the import, its answers not yet collected
        self._unsent = memoryview(b"")  # requests not yet written (the pipe was full, or an answer came first)
        self._broken: CallOutcome | None = None  # garbage came after the messages still in the inbox

    @property
    def alive(self) -> bool:
        return self._pid is not None and self.end is None

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

    def start(self, then: tuple[list[dict[str, Any]], list[bytes], bool] | None = None) -> StartOutcome:
        """Fork, confine, import the submission; report how that went.

        ``then``: the calls, payloads and batch flag of the first ``call_many``,
        sent at once, so the process goes on to them without waiting to be
        asked. Collect their answers with ``call_many`` on the very same lists.
        """
        held = set(getattr(self._zygote, "preloaded", ()))  # preloaded before this fork: the new process holds them
        self._spawn({})
        self._expect(1)
        self._preloaded = held
        return self._ready(memoryview(self._send_ahead(then)))

    def load(self, module: str, entries: list[str],
             then: tuple[list[dict[str, Any]], list[bytes], bool] | None = None) -> StartOutcome:
        """Import another of the submission's files, as a fresh module, in this live process.

        One process can then serve every exercise of a submission: confinement
        and process start are paid once. A failed import ends the process.
        ``then``: as for :meth:`start`; the import and the calls go in one write.
        """
        if not self.alive:
            return StartOutcome(status="crashed", detail="the process had already ended")
        assert self._scratch is not None
        self._module, self._entries = module, entries
        request = {"op": "import", "module": os.path.join(self._scratch, module), "entries": entries}
        self._expect(1)
        return self._ready(memoryview(encode_message(request) + self._send_ahead(then)))

    @property
    def settled(self) -> bool:
        """Whether no answers are owed to calls sent ahead (``then``) and not collected.

        Only such a process may serve another exercise.
        """
        return self._ahead is None

    def _send_ahead(self, then: tuple[list[dict[str, Any]], list[bytes], bool] | None) -> bytes:
        """The message of the calls sent along with an import (``b""`` for none), remembered until collected."""
        if then is None:
            return b""
        request = _request(*then)
        if request.trusted:
            self.holds_trusted = True  # so it never serves another exercise, whose code could call them
        self._ahead = request
        self._expect(len(request.calls))
        return self._message_for(request)

    def fresh_output(self) -> OutputCapture:
        """Start a new capture of what the learner prints (each exercise shows only its own output)."""
        if self._pipes is not None:  # what was printed before now belongs to the previous capture
            while (data := _read(self._pipes.output_r)) and self.output.total <= self.output.cap:
                self.output.add(data)
        self.output = OutputCapture(self._limits.output_keep, self._limits.output_cap)
        if self._scratch:
            self.output.hide.append(self._scratch)
        return self.output

    def usage(self) -> tuple[float, int, int] | None:
        """CPU seconds used, resident bytes and threads of the live process (from ``/proc``), or ``None``."""
        fields = self._stat_fields()
        if fields is None:
            return None
        try:
            return ((int(fields[11]) + int(fields[12])) / _CLOCK_TICKS, int(fields[21]) * _PAGE_BYTES,
                    int(fields[17]))
        except (IndexError, ValueError):
            return None

    def _ready(self, outgoing: memoryview = memoryview(b"")) -> StartOutcome:
        message, failure = self._receive(self._limits.import_seconds, "while importing your file", outgoing)
        if failure is not None:
            if failure.status == "bad_value":  # it sent more than it may: a fact about what it sent
                return StartOutcome(status="protocol", error=failure.error)
            return StartOutcome(status=failure.status, detail=failure.detail)  # type: ignore[arg-type]
        header, _ = message  # type: ignore[misc]
        if header.get("op") != "ready":
            self._end()
            return StartOutcome(status="protocol", detail="the process sent something other than its first answer")
        if not header.get("ok"):
            self._end()
            return StartOutcome(status="raised", error=self._limit_facts(_as_error(header.get("error"))),
                                layers=_as_layers(header.get("layers")))
        entries = header.get("entries", {})
        held = header.get("preloaded")
        if isinstance(held, list) and len(held) <= 1024:
            self._preloaded = {key for key in held if isinstance(key, str)}
        return StartOutcome(status="ok", layers=_as_layers(header.get("layers")),
                            entries={str(k): bool(v) for k, v in entries.items()})

    def self_test(self, spec: dict[str, Any]) -> dict[str, Any]:
        """Run the sandbox self-test (trusted probes, no learner code) in a process confined like this one.

        Returns ``{"layers": ..., "probes": ...}``; raises ``SandboxError`` when
        the process does not report (the grader's fault, not a learner's).
        """
        try:
            self._spawn({"selftest": spec})
            self._expect(1)
            message, failure = self._receive(max(self._limits.import_seconds, 10.0), "during the self-test")
            if failure is not None or message is None or message[0].get("op") != "selftest":
                why = failure.detail if failure is not None else "it sent something else"
                raise SandboxError(f"the sandbox self-test process did not report ({why}); "
                                   f"output: {self.output.excerpt()[:500]!r}")
            header = message[0]
            probes: dict[Any, Any] = header["probes"] if isinstance(header.get("probes"), dict) else {}
            return {"layers": _as_layers(header.get("layers")), "probes": {str(k): str(v)[:80] for k, v in probes.items()}}
        finally:
            self.close()

    def _spawn(self, extra: dict[str, Any]) -> None:
        self._scratch = self._folders().take()
        self.output.hide.append(self._scratch)
        for name, data in self._files.items():
            with open(os.path.join(self._scratch, name), "xb") as handle:
                handle.write(data)
        request_r, request_w = os.pipe()
        response_r, response_w = os.pipe()
        output_r, output_w = os.pipe()
        for fd in (request_w, response_r, output_r):
            os.set_blocking(fd, False)
        for fd in (request_w, response_w):
            _widen(fd)
        self._pipes = _Pipes(request_w, response_r, output_r)
        config = {
            "scratch": self._scratch,
            "module": os.path.join(self._scratch, self._module),
            "entries": self._entries,
            "limits": self._limits.child_limits(),
            "layers": asdict(self._layers),
            **extra,
        }
        try:
            self._pid = self._zygote.spawn(config, [request_r, response_w, output_w])
        finally:
            for fd in (request_r, response_w, output_w):
                os.close(fd)

    def call_many(
        self, calls: list[dict[str, Any]], blobs: list[bytes], deadline: float | None = None, *, batch: bool = False
    ) -> list[CallOutcome]:
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
        """
        if not self.alive:
            return [CallOutcome(status="not_run", detail="the process had already ended")] * len(calls)
        assert self._pipes is not None
        outcomes: list[CallOutcome] = []
        ahead = self._ahead
        if ahead is not None and not (ahead.calls is calls and ahead.blobs is blobs and ahead.batch == batch):
            self._end()  # answers to other calls are on their way
            return [CallOutcome(status="not_run", detail="the process was busy with other calls")] * len(calls)
        if ahead is not None:  # sent with the import: only the answers are left to read
            self._ahead = None
            pending = memoryview(b"")
        else:
            request = _request(calls, blobs, batch)
            self._expect(len(calls))
            if request.trusted:
                self.holds_trusted = True  # so it never serves another exercise, whose code could call them
            pending = memoryview(self._message_for(request))
        out_of_memory = 0
        for index, call in enumerate(calls):
            wait = self.call_seconds
            budget_left = None if deadline is None else deadline - time.monotonic()
            if budget_left is not None and budget_left < wait:
                wait = max(budget_left, 0.0)
            message, failure = self._receive(wait, "", pending)
            pending = memoryview(b"")
            if failure is not None and batch:
                break  # the process has ended; which call failed is unknown: every unanswered call is not_run
            if failure is not None:
                if failure.status == "timeout" and wait < self.call_seconds:
                    failure.detail = "the exercise's time budget ran out before this call answered"
                outcomes.append(failure)
                break
            header, payload = message  # type: ignore[misc]
            outcome = self._decode_result(index, header, payload)
            if outcome.error:
                self._limit_facts(outcome.error)
            outcomes.append(outcome)
            if outcome.status == "protocol":
                self._end()
                break
            if outcome.status == "raised" and outcome.error and outcome.error.get("type") == "MemoryError":
                out_of_memory += 1
                if out_of_memory >= 2:
                    self._end()
                    break
        outcomes += [CallOutcome(status="not_run", detail="not run after an earlier failure")] * (len(calls) - len(outcomes))
        return outcomes

    def _message_for(self, request: _Request) -> bytes:
        """The request in full, or just its key when this process said it holds it preloaded.

        A request sent in full a second time (to another learner, on the same
        plan) is handed to the warm parent to preload before its next fork.
        """
        if request.trusted:
            return request.message
        if request.key is not None and request.key in self._preloaded:
            return request.short()
        request.sent += 1
        note = getattr(self._zygote, "note_request", None)
        if request.sent >= 2 and note is not None:
            note(*request.preloadable())
        return request.message

    def close(self, *, wait: bool = True) -> None:
        """End the process (if alive), close the pipes, remove the scratch directory.

        ``wait=False``, for a process whose every answer has been read: the
        warm parent ends it while the grader moves on (``Zygote.finish_later``);
        its scratch folder is removed once it is gone, and what it prints from
        now on is not read.
        """
        if not wait and self._pid is not None and self.end is None and hasattr(self._zygote, "finish_later"):
            scratch, self._scratch = self._scratch, None
            self.end = {"pid": self._pid, "killed": True}
            self._zygote.finish_later(self._pid, lambda: scratch and self._give_back(scratch))
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

    def _folders(self) -> ScratchFolders:
        """The warm parent's scratch folders (a test double without any gets folders of its own)."""
        folders = getattr(self._zygote, "scratch", None)
        return folders if isinstance(folders, ScratchFolders) else _UNSHARED_FOLDERS

    def _give_back(self, scratch: str) -> None:
        self._folders().give_back(scratch, self._files)

    def __enter__(self) -> "LearnerProcess":
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
        key = _KNOWN_BATCHES.key(blobs)  # hashed once, whether found or remembered
        outcomes = _KNOWN_BATCHES.find(header, blobs, key)
        if outcomes is None:
            outcomes = [self._decode_result(answer["index"], answer, payload)
                        for answer, payload in unbatch(header, blobs)]
            _KNOWN_BATCHES.remember(header, blobs, outcomes, key)
        first = header["first"]
        return [({"op": "result", "index": first + number, _DECODED: outcome}, [])
                for number, outcome in enumerate(outcomes)]

    def _decode_result(self, index: int, header: dict[Any, Any], payload: list[bytes]) -> CallOutcome:
        if header.get("op") != "result" or header.get("index") != index:
            return CallOutcome(status="protocol", detail="the process sent an answer out of order")
        decoded = header.get(_DECODED)  # a key JSON cannot spell: only _answers_in puts it there
        if decoded is not None:
            return decoded
        if not header.get("ok"):
            error = _as_error(header.get("error"))
            status = "bad_value" if header.get("stage") == "value" else "raised"
            return CallOutcome(status=status, error=error)  # type: ignore[arg-type]
        try:
            n_values = int(header.get("values", 0))
            n_inputs = int(header.get("inputs", 0))
            if n_values + n_inputs != len(payload) or n_values < 1:
                raise ProtocolError("payload count mismatch")
            for blob in payload:
                check_array(blob)
        except (ProtocolError, TypeError, ValueError) as exc:
            return CallOutcome(status="protocol", detail=f"{exc}")
        kind = "tuple" if header.get("kind") == "tuple" else "single"
        types = [_clean_type(t) for t in header.get("types", [])][:n_values] if isinstance(header.get("types"), list) else []
        return _WireOutcome(payload, n_values, kind, types, _digest(kind, types, n_values, payload))

    def _receive(
        self, seconds: float, during: str, outgoing: memoryview = memoryview(b"")
    ) -> tuple[tuple[dict[str, Any], list[bytes]] | None, CallOutcome | None]:
        """Wait for one message, writing ``outgoing`` and draining output meanwhile.

        Everything that has arrived is read and parsed at once, so a child
        that answers faster than we judge costs one wake-up per pipe buffer,
        not one per answer. What could not be written before the message
        came stays queued and is written during the next wait: a new process
        imports its file before it reads any request, so its ``ready`` can
        arrive while the calls sent ahead of it are still being written (they
        were lost then, and the process waited for them until its deadline).
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
            return self._wait(selector, seconds, during)
        finally:
            if writing and pipes.request_w in selector.get_map():
                selector.unregister(pipes.request_w)

    def _wait(self, selector: selectors.BaseSelector, seconds: float,
              during: str) -> tuple[tuple[dict[str, Any], list[bytes]] | None, CallOutcome | None]:
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
                    return None, self._crash(end, during)
                used = None
                if cpu_mark is not None and cpu_mark[1] is not None and cpu_after is not None and now > cpu_mark[0]:
                    used = (cpu_after - cpu_mark[1]) * seconds / (now - cpu_mark[0])  # the share, over the whole wait
                return None, CallOutcome(status="timeout", detail=_reasons().timeout_detail(seconds, used, during))
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
                    while (data := _read(key.fd)) is not None:
                        if not data:
                            selector.unregister(key.fd)
                            break
                        self.output.add(data)
                        if self.output.flooded:
                            self._end()
                            return None, CallOutcome(
                                status="output_limit", detail=_reasons().output_limit_detail(self._limits.output_cap))
                        if len(data) < _READ_SIZE:
                            break
                    continue
                closed = False
                while (data := _read(key.fd)) is not None:
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
                        self._broken = _refused(broken)
                        if self._inbox:
                            return self._inbox.popleft(), None
                        self._end()
                        return None, self._broken
                    if len(data) < _READ_SIZE or self._inbox:  # what is read is parsed: read no more than is used
                        break
                if self._inbox:
                    return self._inbox.popleft(), None
                if closed:
                    return None, self._crash(self._end(grace=0.5), during)

    def _crash(self, end: dict[str, Any], during: str) -> CallOutcome:
        if end.get("killed"):
            return CallOutcome(status="crashed", detail="closed its channel to the grader" + _suffix(during))
        facts = dict(end)
        if "signal" in facts:
            try:
                facts["signal_name"] = signal.Signals(int(facts["signal"])).name
            except (ValueError, TypeError):
                pass
        detail = _reasons().crash_detail(facts, cpu_seconds=self._limits.cpu_seconds,
                                      file_bytes=self._limits.file_bytes, during=during)
        # Running out of CPU time is a time limit like the wall clock: it counts as a timeout.
        timed_out = _reasons().hit_cpu_limit(facts, self._limits.cpu_seconds)
        return CallOutcome(status="timeout" if timed_out else "crashed", detail=detail)

    def _limit_facts(self, error: dict[str, Any]) -> dict[str, Any]:
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

    def _stat_fields(self) -> list[bytes] | None:
        if self._pid is None or self.end is not None:
            return None
        try:
            with open(f"/proc/{self._pid}/stat", "rb") as handle:
                return handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            return None

    def _end(self, grace: float = 0.0) -> dict[str, Any]:
        if self.end is None and self._pid is not None:
            self.end = self._zygote.finish(self._pid, grace)
            if self._pipes is not None:
                while True:  # drain what was printed before the end, for the excerpt
                    data = _read(self._pipes.output_r)
                    if not data or self.output.total > self.output.cap:
                        break
                    self.output.add(data)
        return self.end or {}


class _WireOutcome(CallOutcome):
    """An ``ok`` outcome as it arrived: its payloads checked, its arrays decoded on first use.

    Most outcomes are never looked at: their finding is remembered by digest
    from an earlier submission that returned the same bytes.
    """

    def __init__(self, payload: list[bytes], n_values: int, kind: str, types: list[str], digest: bytes) -> None:
        self._payload, self._n_values = payload, n_values
        self._arrays: list[Any] | None = None
        super().__init__(status="ok", kind=kind, types=types, digest=digest)

    def release(self) -> None:
        """Forget the decoded arrays of a large answer (a check has judged it); they are decoded again if read again.

        Small answers (every answer of the catalog's references) stay decoded
        for the next check that reads them: decoding them again would cost more than they hold.
        """
        if self._arrays is not None and sum(map(len, self._payload)) > _KEEP_DECODED_BYTES:
            self._arrays = None

    def _decoded(self) -> list[Any]:
        if self._arrays is None:
            arrays = [decode_array(blob) for blob in self._payload]  # checked on arrival: cannot fail
            for array in arrays:
                array.flags.writeable = False  # an outcome may be shared (``_KnownBatches``): nobody changes it
            self._arrays = arrays
        return self._arrays

    @property  # type: ignore[override]
    def values(self) -> list[Any]:
        return self._decoded()[: self._n_values]

    @values.setter
    def values(self, arrays: list[Any]) -> None:
        if arrays:  # only the dataclass's empty default ever arrives here
            raise AttributeError("the arrays of a received outcome are what the process sent")

    @property  # type: ignore[override]
    def inputs_after(self) -> list[Any]:
        return self._decoded()[self._n_values :]

    @inputs_after.setter
    def inputs_after(self, arrays: list[Any]) -> None:
        if arrays:
            raise AttributeError("the arrays of a received outcome are what the process sent")


def unbatch(header: dict[str, Any], blobs: list[bytes]) -> list[tuple[dict[str, Any], list[bytes]]]:
    """The answers of a ``results`` message (a batch, ``child._Answers``), as if each had come alone.

    Every count, size and index is checked before anything is cut: a
    malformed batch raises ``ProtocolError`` (the sender cannot be trusted).
    Each answer is then checked by ``_decode_result`` as any other.
    """
    kinds, answers, sizes, first = header.get("kinds"), header.get("answers"), header.get("sizes"), header.get("first")
    if (not isinstance(kinds, list) or not isinstance(answers, list) or not isinstance(sizes, list)
            or type(first) is not int or first < 0 or len(blobs) != 1
            or len(kinds) > MAX_BATCH or len(answers) > MAX_BATCH or len(sizes) > MAX_BATCH
            or not all(type(kind) is int and 0 <= kind < len(kinds) for kind in answers)
            or not all(type(size) is int and size >= 0 for size in sizes) or sum(sizes) != len(blobs[0])):
        raise ProtocolError("a batch of answers is malformed")
    counts = [_array_count(entry) for entry in kinds]
    data, offset, taken = blobs[0], 0, 0
    out: list[tuple[dict[str, Any], list[bytes]]] = []
    for number, kind in enumerate(answers):
        count = counts[kind]
        if taken + count > len(sizes):
            raise ProtocolError("a batch of answers names more arrays than it holds")
        payload = []
        for size in sizes[taken:taken + count]:
            payload.append(data[offset:offset + size])
            offset += size
        taken += count
        out.append(({**kinds[kind], "op": "result", "index": first + number}, payload))
    if taken != len(sizes):
        raise ProtocolError("a batch of answers holds arrays no answer names")
    return out


def _array_count(entry: Any) -> int:
    """How many arrays an answer header of a batch says it comes with; ``ProtocolError`` if it makes no sense."""
    if not isinstance(entry, dict):
        raise ProtocolError("a batch of answers is malformed")
    if entry.get("ok") is not True:
        return 0
    values, inputs = entry.get("values", 0), entry.get("inputs", 0)
    if type(values) is not int or type(inputs) is not int or values < 0 or inputs < 0:
        raise ProtocolError("a batch of answers is malformed")
    return values + inputs


MAX_BATCH = 1 << 16
_DECODED = object()
_KEEP_DECODED_BYTES = 64 << 10


class _KnownBatches:
    """Recent batches of answers whose every answer was ``ok``, by their exact bytes, with their outcomes.

    Found only on an exact match (payload, answer headers and first index), so a
    hit is what decoding would give. The outcomes are shared, which is safe
    because their arrays are read-only (``_WireOutcome``) and nothing else
    in them changes once decoded. Shared by a process's threads. Bounded in
    bytes too: a learner returning large arrays must not fill the grader. A
    batch kept holds up to three times its bytes (itself, each answer's part,
    the decoded arrays); 4 MiB of batches is 40 times what the catalog's
    references return in all (107 KiB).
    """

    def __init__(self, limit: int = 64, max_batch_bytes: int = 1 << 18, max_bytes: int = 4 << 20) -> None:
        self._limit, self._max_batch_bytes, self._max_bytes = limit, max_batch_bytes, max_bytes
        self._entries: OrderedDict[bytes, tuple[Any, Any, Any, Any, bytes, list[CallOutcome]]] = OrderedDict()
        self._bytes = 0  # payload bytes held (each outcome holds a copy of its part, and maybe its arrays)
        self._lock = threading.Lock()

    @staticmethod
    def key(blobs: list[bytes]) -> bytes | None:
        """What a batch is filed under: a digest of its one payload (``None``: not a batch that is kept)."""
        return digests.blake2b(blobs[0], digest_size=16).digest() if len(blobs) == 1 else None

    def find(self, header: dict[str, Any], blobs: list[bytes], key: bytes | None = None) -> list[CallOutcome] | None:
        key = key if key is not None else self.key(blobs)
        with self._lock:
            entry = self._entries.get(key) if key is not None else None
            if entry is None:
                return None
            first, kinds, answers, sizes, data, outcomes = entry
            if (type(header.get("first")) is not int or header["first"] != first or data != blobs[0]
                    or header.get("sizes") != sizes or header.get("answers") != answers
                    or header.get("kinds") != kinds):
                return None
            self._entries.move_to_end(key)  # type: ignore[arg-type]
            return outcomes

    def remember(self, header: dict[str, Any], blobs: list[bytes], outcomes: list[CallOutcome],
                 key: bytes | None = None) -> None:
        key = key if key is not None else self.key(blobs)
        if (key is None or not outcomes or len(blobs[0]) > self._max_batch_bytes
                or not all(type(o) is _WireOutcome for o in outcomes)):
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= len(old[4])
            self._entries[key] = (header["first"], header["kinds"], header["answers"], header["sizes"],
                                  bytes(blobs[0]), outcomes)
            self._bytes += len(blobs[0])
            while len(self._entries) > self._limit or self._bytes > self._max_bytes:
                self._bytes -= len(self._entries.popitem(last=False)[1][4])


_KNOWN_BATCHES = _KnownBatches()


def _digest(kind: str, types: list[str], n_values: int, payload: list[bytes]) -> bytes:
    """What a call returned, exactly, in 16 bytes (each array's frame holds its dtype, shape and bytes)."""
    digest = digests.blake2b(f"{kind}\0{n_values}\0{chr(31).join(types)}\0".encode(), digest_size=16)
    for blob in payload:
        digest.update(len(blob).to_bytes(8, "little"))
        digest.update(blob)
    return digest.digest()


def _reasons() -> Any:
    """The learner-facing wording (``grader.reasons``), imported late: it needs the check library."""
    from grader import reasons

    return reasons


def _widen(fd: int) -> None:
    """Give a pipe a 1 MiB buffer where the system allows: requests and answers then cross in a few writes."""
    try:
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    except (OSError, AttributeError):  # an unprivileged limit below 1 MiB: the default buffer works, more slowly
        pass


_PIPE_BYTES = 1 << 20
_UNSHARED_FOLDERS = ScratchFolders(keep=0)
_READ_SIZE = 1 << 20
_CPU_MARK_SECONDS = 0.25


def _read(fd: int) -> bytes | None:
    """Read what is there: bytes, ``b""`` at end of file, ``None`` when nothing is ready yet."""
    try:
        return local_reader().read(fd)
    except (BlockingIOError, InterruptedError):
        return None
    except OSError:
        return b""


def _refused(exc: ProtocolError) -> CallOutcome:
    """The outcome of a reply that was not read: over one of its limits (a fact: which, and its size), or malformed."""
    if isinstance(exc, LimitExceeded):
        return CallOutcome(status="bad_value", error=size_error(exc.scope, exc.limit))
    return CallOutcome(status="protocol", detail=f"{exc}")


def _suffix(during: str) -> str:
    return f" {during}" if during else ""


_KINDS = ("memory", "process", "network", "file", "import", "signal", "limits", "forbidden", "size")
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _clean(value: Any, limit: int) -> str:
    """Learner-controlled text made safe to show: one line, control characters escaped, bounded.

    Whatever a learner puts in an exception message or a class name ends up
    in reasons; it must not move a terminal's cursor, fake a new line of the
    grader's own output, or carry an escape sequence.
    """
    text = str(value)[: limit * 2]
    text = "".join(ch if ch.isprintable() else (" " if ch in "\n\r\t" else f"\\x{ord(ch):02x}"
                                                  if ord(ch) < 0x100 else f"\\u{ord(ch):04x}") for ch in text)
    return text[:limit]


_TYPE_NAMES: dict[str, str] = {}


def _clean_type(value: Any) -> str:
    """A returned value's type name, made safe (``_clean``); the few usual names are cleaned once."""
    if type(value) is not str:
        return _clean(value, 40)
    cleaned = _TYPE_NAMES.get(value)
    if cleaned is None:
        cleaned = _clean(value, 40)
        if len(_TYPE_NAMES) < 256:
            _TYPE_NAMES[value] = cleaned
    return cleaned


def _as_error(error: Any) -> dict[str, Any]:
    """Keep only the expected keys of a child's error report, as short, escaped strings."""
    if not isinstance(error, dict):
        return {"type": "Exception", "message": "", "frames": []}
    frames = []
    for frame in error.get("frames", [])[:20] if isinstance(error.get("frames"), list) else []:
        if isinstance(frame, dict):
            frames.append({
                "file": _clean(frame.get("file", ""), 200),
                "line": frame.get("line") if type(frame.get("line")) is int else None,
                "function": _clean(frame.get("function", ""), 100),
                "text": _clean(frame.get("text", ""), 200),
            })
    cleaned: dict[str, Any] = {
        "type": _clean(error.get("type", "Exception"), 100),
        "message": _clean(error.get("message", ""), 500),
        "frames": frames,
    }
    for key in ("file", "text", "module"):
        if key in error:
            cleaned[key] = _clean(error[key], 200)
    if type(error.get("line")) is int:
        cleaned["line"] = error["line"]
    if error.get("kind") in _KINDS:
        cleaned["kind"] = error["kind"]
    if type(error.get("errno")) is int:
        cleaned["errno"] = error["errno"]
    return cleaned


def _as_layers(layers: Any) -> dict[str, Any]:
    """A child's report of the layers it applied, as plain values (it is only informative)."""
    if not isinstance(layers, dict):
        return {}
    kept: dict[str, Any] = {}
    for key in ("caps_dropped", "rlimits", "landlock_abi", "seccomp"):
        value = layers.get(key)
        if type(value) in (bool, int):
            kept[key] = value
    return kept


@dataclass
class _Request:
    """A ``call_many`` message, encoded once, and how often it went to a learner process in full."""

    calls: list[dict[str, Any]]
    blobs: list[bytes]
    batch: bool
    message: bytes
    trusted: bool  # it carries the grader's functions: never preloaded
    sent: int = 0
    key: str | None = None  # once it is worth preloading: the digest of its batch-free form
    _preload: bytes = b""

    def preloadable(self) -> tuple[str, bytes]:
        """The key and the message a warm parent preloads (the same calls, without the batch flag)."""
        if self.key is None:
            self._preload = encode_message({"op": "call_many", "calls": self.calls}, self.blobs)
            self.key = digests.blake2b(self._preload, digest_size=16).hexdigest()
        return self.key, self._preload

    def short(self) -> bytes:
        """The message for a process that holds this request preloaded: its key and how many calls it has."""
        return encode_message({"op": "call_many", "preloaded": self.key, "count": len(self.calls), "batch": self.batch})


_REQUESTS: dict[tuple[int, int, bool], _Request] = {}
_REQUESTS_KEPT = 64


def _request(calls: list[dict[str, Any]], blobs: list[bytes], batch: bool) -> _Request:
    """The ``call_many`` message for these calls, and whether it carries the grader's functions.

    The very same lists (a plan's whole request, sent for every submission)
    are encoded once per process.
    """
    key = (id(calls), id(blobs), batch)
    hit = _REQUESTS.pop(key, None)
    if hit is not None and hit.calls is calls and hit.blobs is blobs:
        _REQUESTS[key] = hit  # the most recently used last: the oldest is the first to go
        return hit
    request: dict[str, Any] = {"op": "call_many", "calls": calls, "batch": batch}
    trusted = _needs_trusted(calls)
    if trusted:  # only a process handed the grader's functions ever holds their source
        request["trusted_source"] = _trusted_source()
    made = _Request(calls, blobs, batch, encode_message(request, blobs), trusted)
    if _REQUESTS and len(_REQUESTS) >= _REQUESTS_KEPT:  # a long session: the least recently used goes
        del _REQUESTS[next(iter(_REQUESTS))]
    _REQUESTS[key] = made
    return made


def _needs_trusted(calls: list[dict[str, Any]]) -> bool:
    for call in calls:
        specs = list(call.get("args", [])) + list(call.get("kwargs", {}).values())
        if any(isinstance(spec, dict) and spec.get("t") == "callable" for spec in specs):
            return True
    return False


_TRUSTED: list[str] = []


def _trusted_source() -> str:
    if not _TRUSTED:
        from grader.sandbox.child import read_trusted_source

        _TRUSTED.append(read_trusted_source())
    return _TRUSTED[0]
