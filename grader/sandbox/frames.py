"""Frames: how messages cross the pipes between the grader and a learner process.

A message is a JSON header frame followed by ``header["blobs"]`` binary
frames; every frame is a 4-byte big-endian length and its payload. What the
payloads hold (arrays) is :mod:`grader.sandbox.protocol`'s business.

Standard library only: the warm parent runs its start-up self-test, whose
probe process reports through these frames, before it imports numpy.
"""

from __future__ import annotations

import json
import struct
from typing import Any, Protocol

__all__ = [
    "MAX_BLOBS",
    "MAX_FRAME",
    "Allowance",
    "LimitExceeded",
    "MessageParser",
    "ProtocolError",
    "encode_message",
    "frame_message",
]

MAX_FRAME = 64 * 1024 * 1024
MAX_BLOBS = 4096
_LEN = struct.Struct(">I")


class ProtocolError(Exception):
    """A frame that is malformed, oversized or not numeric: the sender cannot be trusted.

    Raised by :meth:`MessageParser.feed`, it carries the messages that came
    whole before the bad frame (``messages``): they were sent before anything
    went wrong, and count.
    """

    messages: list[tuple[dict[str, Any], list[bytes]]] = []


class LimitExceeded(ProtocolError):
    """A frame that would take its sender past one of its byte limits, refused before it is read.

    Facts, for the grader's wording: ``scope`` names the limit
    (``"answer"``, ``"exercise"`` or ``"submission"``) and ``limit`` its size in bytes.
    """

    def __init__(self, scope: str, limit: int) -> None:
        super().__init__(f"more than {limit} bytes in one {scope}")
        self.scope, self.limit = scope, limit


class Allowance(Protocol):
    """What a parser may still read (``replies.ReplyBudget``)."""

    def admit(self, frame: int, message: int) -> None:
        """Charge a ``frame`` of that many bytes (length prefix included) to a message of ``message`` bytes so far.

        Raises ``LimitExceeded`` when it does not fit; the frame is then not read.
        """


def encode_message(header: dict[str, Any], blobs: list[bytes] = ()) -> bytes:  # type: ignore[assignment]
    """Frame a header and its binary payloads as one byte string."""
    return frame_message(_compact_json(dict(header, blobs=len(blobs))).encode(), blobs)


def frame_message(head: bytes, blobs: list[bytes] = ()) -> bytes:  # type: ignore[assignment]
    """Frame an already encoded JSON header (which must name ``len(blobs)`` as its ``blobs``) and its payloads."""
    parts = [_LEN.pack(len(head)), head]
    for blob in blobs:
        parts.append(_LEN.pack(len(blob)))
        parts.append(blob)
    return b"".join(parts)


_compact_json = json.JSONEncoder(separators=(",", ":")).encode
_decode_json = json.JSONDecoder().decode


class MessageParser:
    """Incremental decoder: feed it bytes, take whole messages out.

    Every length is checked against ``MAX_FRAME`` (a header's against
    ``max_header``) and charged to ``allowance`` before it is buffered, so a
    garbage length prefix costs nothing; a header that is not a JSON object,
    or names an absurd number of blobs, raises ``ProtocolError``. So does a
    message beyond the ``owed`` ones, when the reader counts what it awaits:
    each becomes Python objects, many times its bytes.
    """

    def __init__(
        self, max_frame: int = MAX_FRAME, *, max_header: int | None = None, allowance: Allowance | None = None
    ) -> None:
        self._buffer = bytearray()
        self._max_frame = max_frame
        self._max_header = max_frame if max_header is None else max_header
        self.allowance = allowance
        self.owed: int | None = None  # messages the reader still awaits, each taken on its header (None: any)
        self._header: dict[str, Any] | None = None
        self._blobs: list[bytes] = []
        self._message_bytes = 0  # of the message being received, every frame admitted so far
        self._admitted = False  # whether the frame at the start of the buffer has been charged

    def feed(self, data: bytes) -> list[tuple[dict[str, Any], list[bytes]]]:
        """Add received bytes; return every message now complete, in order."""
        self._buffer += data
        messages: list[tuple[dict[str, Any], list[bytes]]] = []
        start = 0
        try:
            while True:
                frame, start = self._next_frame(start)
                if frame is None:
                    return messages
                if self._header is None:
                    self._header = self._parse_header(frame)
                else:
                    self._blobs.append(frame)
                if len(self._blobs) == self._header["blobs"]:
                    messages.append((self._header, self._blobs))
                    self._header, self._blobs, self._message_bytes = None, [], 0
        except ProtocolError as exc:
            exc.messages = messages
            raise
        finally:
            del self._buffer[:start]  # once per feed: many small frames in one read cost no quadratic copying

    @property
    def pending(self) -> bool:
        """Whether part of a message has been received but not all of it."""
        return bool(self._buffer) or self._header is not None

    def _next_frame(self, start: int) -> tuple[bytes | None, int]:
        if len(self._buffer) - start < _LEN.size:
            return None, start
        (length,) = _LEN.unpack_from(self._buffer, start)
        if not self._admitted:  # once per frame, however many reads it takes to arrive
            if self._header is None and self.owed is not None:
                if self.owed <= 0:
                    raise ProtocolError("a message that was not asked for")
                self.owed -= 1
            if self.allowance is not None:
                self.allowance.admit(_LEN.size + length, self._message_bytes)
            if length > (self._max_header if self._header is None else self._max_frame):
                raise ProtocolError(f"frame of {length} bytes is larger than allowed")
            self._message_bytes += _LEN.size + length
            self._admitted = True
        end = start + _LEN.size + length
        if len(self._buffer) < end:
            return None, start
        self._admitted = False
        return bytes(self._buffer[start + _LEN.size : end]), end

    @staticmethod
    def _parse_header(frame: bytes) -> dict[str, Any]:
        try:
            header = _decode_json(frame.decode("utf-8"))  # what the child sends is ASCII JSON
        except (ValueError, RecursionError):
            raise ProtocolError("header is not JSON") from None
        if not isinstance(header, dict):
            raise ProtocolError("header is not a JSON object")
        blobs = header.get("blobs")
        if not isinstance(blobs, int) or isinstance(blobs, bool) or not 0 <= blobs <= MAX_BLOBS:
            raise ProtocolError("header names an invalid number of payloads")
        return header
