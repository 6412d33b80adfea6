"""The wire protocol between the grader and a learner process.

A message is a JSON header frame followed by ``header["blobs"]`` binary
frames; every frame is a 4-byte big-endian length and its payload. Arrays
travel as ``.npy`` bytes written and read with ``allow_pickle=False``; the
parent checks an ``.npy`` header (numeric dtype, element count matching the
payload) before it allocates anything. Nothing here unpickles, so a forged
frame can only claim a value, and the grader checks values.

Standard library and numpy only: the learner process imports this module.
"""

from __future__ import annotations

import io
import json
import struct
from typing import Any

import numpy as np

__all__ = [
    "MAX_ELEMENTS",
    "MAX_FRAME",
    "MessageParser",
    "ProtocolError",
    "decode_array",
    "encode_array",
    "encode_message",
]

MAX_FRAME = 64 * 1024 * 1024
MAX_ELEMENTS = 8 * 1024 * 1024
MAX_BLOBS = 4096
_LEN = struct.Struct(">I")
_NUMERIC_KINDS = "biufc"


class ProtocolError(Exception):
    """A frame that is malformed, oversized or not numeric: the sender cannot be trusted."""


def encode_array(value: Any) -> bytes:
    """Serialise a numeric array as ``.npy`` bytes (never pickled)."""
    array = np.asarray(value)
    if array.dtype.hasobject or array.dtype.kind not in _NUMERIC_KINDS:
        raise TypeError(f"not an array of numbers (dtype {array.dtype})")
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return buffer.getvalue()


def decode_array(blob: bytes, max_elements: int = MAX_ELEMENTS) -> np.ndarray:
    """Decode ``.npy`` bytes into a plain ndarray, refusing anything but numbers.

    The header is read and checked before any data is touched: object,
    structured and non-numeric dtypes, shapes whose size disagrees with the
    payload, and absurd sizes are all refused with ``ProtocolError``.
    """
    stream = io.BytesIO(blob)
    try:
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream)
        else:
            raise ProtocolError(f"unsupported .npy version {version}")
    except ProtocolError:
        raise
    except Exception as exc:  # numpy raises ValueError and friends on garbage
        raise ProtocolError(f"unreadable array header ({exc.__class__.__name__})") from None
    if dtype.hasobject or dtype.fields is not None or dtype.kind not in _NUMERIC_KINDS:
        raise ProtocolError(f"not an array of numbers (dtype {dtype})")
    count = 1
    for dim in shape:
        if not isinstance(dim, int) or dim < 0:
            raise ProtocolError("malformed array shape")
        count *= dim
    if count > max_elements:
        raise ProtocolError(f"array of {count} elements is larger than allowed ({max_elements})")
    offset = stream.tell()
    if count * dtype.itemsize != len(blob) - offset:
        raise ProtocolError("array payload does not match its header")
    flat = np.frombuffer(blob, dtype=dtype, count=count, offset=offset)
    array = np.array(flat.reshape(shape, order="F" if fortran else "C"), copy=True)
    if type(array) is not np.ndarray:  # pragma: no cover - frombuffer never subclasses
        raise ProtocolError("decoded value is not a plain ndarray")
    return array


def encode_message(header: dict[str, Any], blobs: list[bytes] = ()) -> bytes:  # type: ignore[assignment]
    """Frame a header and its binary payloads as one byte string."""
    header = dict(header, blobs=len(blobs))
    head = json.dumps(header, separators=(",", ":")).encode()
    parts = [_LEN.pack(len(head)), head]
    for blob in blobs:
        parts.append(_LEN.pack(len(blob)))
        parts.append(blob)
    return b"".join(parts)


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
        while True:
            frame = self._next_frame()
            if frame is None:
                return messages
            if self._header is None:
                self._header = self._parse_header(frame)
            else:
                self._blobs.append(frame)
            if len(self._blobs) == self._header["blobs"]:
                messages.append((self._header, self._blobs))
                self._header, self._blobs = None, []

    @property
    def pending(self) -> bool:
        """Whether part of a message has been received but not all of it."""
        return bool(self._buffer) or self._header is not None

    def _next_frame(self) -> bytes | None:
        if len(self._buffer) < _LEN.size:
            return None
        (length,) = _LEN.unpack_from(self._buffer)
        if length > self._max_frame:
            raise ProtocolError(f"frame of {length} bytes is larger than allowed")
        end = _LEN.size + length
        if len(self._buffer) < end:
            return None
        frame = bytes(self._buffer[_LEN.size : end])
        del self._buffer[:end]
        return frame

    @staticmethod
    def _parse_header(frame: bytes) -> dict[str, Any]:
        try:
            header = json.loads(frame)
        except (ValueError, RecursionError):
            raise ProtocolError("header is not JSON") from None
        if not isinstance(header, dict):
            raise ProtocolError("header is not a JSON object")
        blobs = header.get("blobs")
        if not isinstance(blobs, int) or isinstance(blobs, bool) or not 0 <= blobs <= MAX_BLOBS:
            raise ProtocolError("header names an invalid number of payloads")
        return header
