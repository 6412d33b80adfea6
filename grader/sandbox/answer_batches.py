"""In the learner process: answers on their way to the grader, one message each or many in one.

``child.serve`` runs the calls; this module writes what they returned in the
protocol's framing (``protocol.frame_message``), keeping each shape of
answer's header as bytes made once, and gathering answers into batches
when the grader asks for them. Standard library and numpy only: the
learner process imports it.
"""

from __future__ import annotations

import json
import time
from typing import Any

from grader.memo import BoundedMemo
from grader.sandbox.printing import PrintTally
from grader.sandbox.protocol import encode_message, frame_message

__all__ = ["Answers", "encode_answer"]


class Answers:
    """Answers on their way to the parent: one message each, or (``batched``) one per pipe-full or ``every`` seconds.

    A batch is one ``results`` message: each distinct answer header once, in
    ``kinds``, each answer as the number of its header, in ``answers``, and
    their arrays in one payload, cut by ``sizes``; the parent takes it apart
    into the answers it would have received one by one. Batching saves a
    system call, a wake-up of the parent and the parsing of a header per
    answer (most answers of an exercise have the same header). The parent
    asks for it only on a first attempt: if the process then hangs or dies,
    answers still held here are lost and the parent cannot tell which call
    was to blame, so it asks again one answer at a time.

    An answer whose call printed something also carries ``printed``, the
    bytes the process had printed by then (``printing.PrintTally``): in an
    answer sent alone, a field of its own; in a batch, a pair (the answer's
    number in the batch, the count) in the batch's ``printed``. Either way
    the answer's header (its ``kinds`` entry) is what it would be otherwise.
    """

    def __init__(self, channel: Any, batched: bool, every: float = 0.01, printed: PrintTally | None = None) -> None:
        """``channel`` has ``write(bytes)``; ``every``: the longest an answer waits in a batch, in seconds;
        ``printed``: the process's count of printed bytes (none: answers carry no count)."""
        self._channel, self._batched, self._every = channel, batched, every
        self._printed = printed
        self._first = 0
        self._kinds: dict[bytes, int] = {}  # each distinct answer header (JSON) and its number, in order
        self._answers: list[bytes] = []  # each answer's header number, as JSON
        self._marks: list[bytes] = []  # [number in the batch, bytes printed] of each answer whose call printed
        self._blobs: list[bytes] = []
        self._held = 0
        self._since = time.monotonic()

    def add(self, header: dict[str, Any], payloads: list[bytes]) -> None:
        """Send one answer, or hold it in the batch until the batch is full or old enough."""
        count = None if self._printed is None else self._printed.news()
        if not self._batched:
            self._channel.write(encode_answer(header, payloads, count))
            return
        entry = _entry(header)
        size = sum(map(len, payloads)) + 16 * len(payloads) + 64  # its arrays, and its share of the batch's header
        if count is not None:
            size += 24  # its mark: two numbers
        if self._answers and self._held + size + len(entry) > _BATCH_BYTES:  # the grader reads no batch larger
            self.flush()  # than one answer may be
        if not self._answers:
            self._first = header["index"]
        kind = self._kinds.get(entry)
        if kind is None:
            kind = self._kinds[entry] = len(self._kinds)
            size += len(entry)
        if count is not None:
            self._marks.append(b"[%d,%d]" % (len(self._answers), count))
        self._answers.append(b"%d" % kind)
        self._blobs += payloads
        self._held += size
        now = time.monotonic()
        if self._held >= _BATCH_BYTES or now - self._since >= self._every:
            self.flush(now)

    def flush(self, now: float | None = None) -> None:
        """Send the answers held, as one ``results`` message."""
        if self._answers:
            sizes = b",".join(b"%d" % len(blob) for blob in self._blobs)
            marks = b',"printed":[%s]' % b",".join(self._marks) if self._marks else b""
            head = b'{"op":"results","first":%d,"kinds":[%s],"answers":[%s],"sizes":[%s]%s,"blobs":1}' % (
                self._first,
                b",".join(self._kinds),
                b",".join(self._answers),
                sizes,
                marks,
            )
            self._channel.write(frame_message(head, [b"".join(self._blobs)]))
            self._kinds, self._answers, self._marks, self._blobs, self._held = {}, [], [], [], 0
        self._since = time.monotonic() if now is None else now


_BATCH_BYTES = 1 << 17


def encode_answer(header: dict[str, Any], payloads: list[bytes], printed: int | None = None) -> bytes:
    """``encode_message``; an ``ok`` answer's header is its index spliced into JSON kept per shape of answer.

    ``printed``: the bytes the process had printed by the end of the call, when that changed (``Answers``).
    """
    if header.get("op") != "result" or header.get("ok") is not True:
        return encode_message(header if printed is None else {**header, "printed": printed}, payloads)
    count = b"" if printed is None else b',"printed":%d' % printed
    head = b'{"op":"result","index":%d,' % header["index"] + _entry(header)[1:-1] + count
    return frame_message(head + b',"blobs":%d}' % len(payloads), payloads)


def _entry(header: dict[str, Any]) -> bytes:
    """An answer's header without ``op`` and ``index``, as JSON: for an ``ok`` answer, kept per shape of answer."""
    # Float errors name learner lines: an answer holding them is its own, not a shape of answer worth keeping.
    if header.get("ok") is not True or "float_errors" in header:
        return _tail(header)
    key = (
        header["kind"],
        tuple(header["types"]),
        tuple(header.get("keys", ())),
        header["values"],
        header.get("inputs"),
    )
    entry = _ANSWER_TAILS.get(key)
    if entry is None:
        entry = _ANSWER_TAILS[key] = _tail(header)
    return entry


def _tail(header: dict[str, Any]) -> bytes:
    return json.dumps(
        {name: value for name, value in header.items() if name not in ("op", "index")}, separators=(",", ":")
    ).encode()


# This learner process's answer headers by shape of answer (its own state: one process, one thread answering).
_ANSWER_TAILS: BoundedMemo[tuple[Any, ...], bytes] = BoundedMemo(256)
