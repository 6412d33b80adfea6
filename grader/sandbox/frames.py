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
from typing import Any

__all__ = ["MAX_BLOBS", "MAX_FRAME", "MessageParser", "ProtocolError", "encode_message", "frame_message"]

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

    Every length is checked against ``MAX_FRAME`` before it is buffered, so a
    garbage length prefix costs nothing; a header that is not a JSON object,
    or names an absurd number of blobs, raises ``ProtocolError``.
    """

    def __init__(self, max_frame: int = MAX_FRAME) -> None:
        self._buffer = bytearray()
        self._max_frame = max_frame
        self._header: dict[str, Any] | None = None
        self._blobs: list[bytes] = []

    def feed(self, data: bytes) -> list[tuple[dict[str, Any], list[bytes]]]:
        """Add received bytes; return every message now complete, in order."""
        self._buffer += data
        messages = []
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
                    self._header, self._blobs = None, []
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
        if length > self._max_frame:
            raise ProtocolError(f"frame of {length} bytes is larger than allowed")
        end = start + _LEN.size + length
        if len(self._buffer) < end:
            return None, start
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
