"""The wire protocol between the grader and a learner process.

A message is a JSON header frame followed by ``header["blobs"]`` binary
frames (:mod:`grader.sandbox.frames`), every frame a 4-byte big-endian
length and its payload. Arrays travel as a fixed binary head (a dtype code
from a short list of numeric dtypes, the number of dimensions, the shape)
and their raw bytes; the parent checks the head (known code, element count matching the payload,
size cap) before it allocates anything. Nothing here unpickles, so a forged
frame can only claim a value, and the grader checks values.

Standard library and numpy only: the learner process imports this module.
"""

from __future__ import annotations

import functools
import struct
from typing import Any

import numpy as np

from grader.sandbox.frames import MAX_BLOBS, MAX_FRAME, MessageParser, ProtocolError, encode_message, frame_message

__all__ = [
    "MAX_BLOBS",
    "MAX_ELEMENTS",
    "MAX_FIELDS",
    "MAX_FIELD_NAME",
    "MAX_FRAME",
    "MAX_TEXT",
    "MessageParser",
    "ProtocolError",
    "decode_array",
    "encode_array",
    "encode_message",
    "frame_message",
    "wire_bytes",
]

MAX_ELEMENTS = 8 * 1024 * 1024
# A returned dict's fields and a returned string are bounded like any answer: at most MAX_FIELDS fields, each
# named by a string of at most MAX_FIELD_NAME characters; a string of at most MAX_TEXT characters travels as the
# 1-D array of its code points (dtype <u4), so text needs no encoding of its own, and never pickle.
MAX_FIELDS = 64
MAX_FIELD_NAME = 80
MAX_TEXT = 1 << 16
_NUMERIC_KINDS = "biufc"


_DTYPES = [np.dtype(code) for code in ("<f8", "<f4", "<i8", "<i4", "|b1", "<u8", "<c16", "<c8", "<u4")]
_CODES = {dtype: code for code, dtype in enumerate(_DTYPES)}
_ARRAY_HEAD = struct.Struct("<BB")
_DIM = struct.Struct("<Q")
MAX_NDIM = 32


def _wire_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype an array travels as: its own when it has a code, else the nearest wide one."""
    dtype = dtype.newbyteorder("<") if dtype.byteorder == ">" else dtype
    if dtype in _CODES:
        return dtype
    return np.dtype({"b": "|b1", "i": "<i8", "u": "<u8", "f": "<f8", "c": "<c16"}[dtype.kind])


def wire_bytes(array: np.ndarray) -> int:
    """How many bytes of numbers ``encode_array`` writes for a numeric array (its head aside), without encoding it."""
    dtype = array.dtype
    if dtype.kind not in _NUMERIC_KINDS:
        return array.nbytes
    return array.size * _wire_dtype(dtype).itemsize


def encode_array(value: Any) -> bytes:
    """Serialise a numeric array: a 2-byte head (dtype code, ndim), the shape, the raw data.

    A fixed binary head is read with ``struct`` alone, so decoding costs no
    parsing of text and can be checked completely before any allocation.
    """
    if type(value) is np.ndarray and value.flags.c_contiguous:  # the usual case, with a head built once
        head = _head(value.dtype, value.shape)
        if head is not None:
            return head + value.tobytes()
    array = np.asarray(value)
    if array.dtype.hasobject or array.dtype.kind not in _NUMERIC_KINDS:
        raise TypeError(f"not an array of numbers (dtype {array.dtype})")
    if array.ndim > MAX_NDIM:
        raise ValueError(f"an array with {array.ndim} dimensions has too many")
    dtype = _wire_dtype(array.dtype)
    array = np.asarray(array, dtype=dtype, order="C")
    return _head(dtype, array.shape) + array.tobytes()  # type: ignore[operator]  # a wire dtype: always a head


# A head depends only on its dtype and shape, and a class sends the same few again and again: the least
# recently used give way when full, so a long batch with many shapes keeps the ones in use.
@functools.lru_cache(maxsize=4096)
def _head(dtype: np.dtype, shape: tuple[int, ...]) -> bytes | None:
    """The encoded head of an array of ``dtype`` and ``shape``; ``None`` when that dtype does not travel as itself."""
    code = _CODES.get(dtype)
    if code is None or len(shape) > MAX_NDIM:
        return None
    return _ARRAY_HEAD.pack(code, len(shape)) + b"".join(_DIM.pack(n) for n in shape)


def decode_array(blob: bytes, max_elements: int = MAX_ELEMENTS) -> np.ndarray:
    """Decode an encoded array into a plain ndarray, refusing anything malformed.

    The head is checked before any data is touched (``check_array``):
    unknown dtype codes, shapes whose size disagrees with the payload, and
    absurd sizes are all refused with ``ProtocolError``. Only numeric dtypes
    have codes, so an object array cannot even be described.
    """
    dtype, shape, count, offset = check_array(blob, max_elements)
    array = np.frombuffer(blob, dtype=dtype, count=count, offset=offset).reshape(shape).copy()
    if type(array) is not np.ndarray:  # pragma: no cover - frombuffer never subclasses
        raise ProtocolError("decoded value is not a plain ndarray")
    return array


def check_array(blob: bytes, max_elements: int = MAX_ELEMENTS) -> tuple[np.dtype, tuple[int, ...], int, int]:
    """The dtype, shape, element count and data offset of an encoded array, every one checked.

    A payload that passes decodes without error, so a caller may check now and decode later (or never).
    A head seen before (a class returns the same shapes) is looked up, not parsed again.
    """
    head = bytes(blob[: _ARRAY_HEAD.size + blob[1] * _DIM.size]) if len(blob) >= _ARRAY_HEAD.size else b""
    return _check_head(head, len(blob), max_elements)


# What a head allows depends only on the head, the payload's length and the limit: the least recently
# used give way when full, so heads seen later are still looked up, not parsed again.
@functools.lru_cache(maxsize=4096)
def _check_head(head: bytes, size: int, max_elements: int) -> tuple[np.dtype, tuple[int, ...], int, int]:
    """``check_array`` for a payload of ``size`` bytes that starts with ``head`` (all of its head, when whole)."""
    if size < _ARRAY_HEAD.size:
        raise ProtocolError("array payload is too short")
    code, ndim = _ARRAY_HEAD.unpack_from(head)
    if code >= len(_DTYPES) or ndim > MAX_NDIM:
        raise ProtocolError("array header is malformed")
    offset = _ARRAY_HEAD.size + ndim * _DIM.size
    if size < offset:
        raise ProtocolError("array header is truncated")
    shape = tuple(_DIM.unpack_from(head, _ARRAY_HEAD.size + i * _DIM.size)[0] for i in range(ndim))
    count = 1
    for dim in shape:
        count *= dim
        if count > max_elements:
            raise ProtocolError(f"array larger than allowed ({max_elements} elements)")
    dtype = _DTYPES[code]
    if count * dtype.itemsize != size - offset:
        raise ProtocolError("array payload does not match its header")
    return dtype, shape, count, offset
