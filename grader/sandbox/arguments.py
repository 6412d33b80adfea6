"""A request's arguments in the learner process: decoded from the wire, copied from a preloaded request,
or built (the grader's own functions, from their source sent with the calls that need them).

Runs in the learner process and in the warm parent (``preload``), never in
the grader. Standard library and numpy only.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from grader.memo import BoundedMemo
from grader.sandbox.protocol import MessageParser, ProtocolError, decode_array

__all__ = [
    "decode_arguments",
    "preload",
    "preloaded_keys",
    "read_trusted_source",
    "requested_calls",
    "set_trusted_source",
]


# Requests the warm parent decoded before forking this process (``preload``), by key: every
# call's function name, flag and arguments, ready to be copied. A batch sends each exercise's
# whole plan to every learner; decoded once here, it costs each of them a copy of the arrays.
_PRELOADED: dict[str, list[tuple[dict[str, Any], list[Any], dict[str, Any]]]] = {}
_MAX_PRELOADED_BYTES = 64 * 1024 * 1024
_preloaded_bytes = [0]


def preload(key: str, message: bytes) -> bool:
    """Decode a ``call_many`` request (``encode_message`` bytes) and keep it as ``key``; False when it cannot be kept.

    Run by the warm parent on the grader's request, so that learner
    processes forked afterwards find it decoded; the grader then sends them
    only the key (``{"op": "call_many", "preloaded": key}``). Requests that
    hand over the grader's own functions are never preloaded.
    """
    if key in _PRELOADED:
        return True
    if _preloaded_bytes[0] + len(message) > _MAX_PRELOADED_BYTES:
        return False
    messages = MessageParser().feed(message)
    if len(messages) != 1 or not isinstance(messages[0][0].get("calls"), list):
        return False
    header, blobs = messages[0]
    calls = []
    for call in header["calls"]:
        if not isinstance(call, dict) or not isinstance(call.get("fn"), str):
            return False
        specs = list(call.get("args", [])) + list(call.get("kwargs", {}).values())
        if any(spec.get("t") not in ("array", "value") for spec in specs):
            return False  # the grader's functions are built only in a process meant to hold them
        args, kwargs = decode_arguments(call, blobs)
        plain = {name: value for name, value in call.items() if name not in ("args", "kwargs")}
        calls.append((plain, args, kwargs))
    _PRELOADED[key] = calls
    _preloaded_bytes[0] += len(message)
    return True


def requested_calls(request: dict[str, Any], blobs: list[bytes]) -> list[tuple[dict[str, Any], Callable[[], Any]]]:
    """Each call of a ``call_many`` request with a way to get its arguments: decoded from ``blobs``, or
    fresh copies of a preloaded request's (so nothing one call does to its arguments reaches another)."""
    key = request.get("preloaded")
    if key is None:
        return [(call, partial(decode_arguments, call, blobs)) for call in request["calls"]]
    held = _PRELOADED.get(key) if isinstance(key, str) else None
    if held is None:  # the grader asks only for what this process said it holds

        def missing() -> Any:
            raise ProtocolError(f"no preloaded request {key!r} here")

        return [({"fn": ""}, missing)] * max(0, min(int(request.get("count", 1)), 1 << 16))
    return [(call, partial(_fresh_arguments, args, kwargs)) for call, args, kwargs in held]


def decode_arguments(call: dict[str, Any], blobs: list[bytes]) -> tuple[list[Any], dict[str, Any]]:
    args = [_decode_value(spec, blobs) for spec in call.get("args", [])]
    kwargs = {name: _decode_value(spec, blobs) for name, spec in call.get("kwargs", {}).items()}
    return args, kwargs


def _fresh_arguments(args: list[Any], kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    return [_fresh(value) for value in args], {name: _fresh(value) for name, value in kwargs.items()}


def _fresh(value: Any) -> Any:
    """A copy the learner's code may change freely: arrays copied, JSON lists and objects rebuilt."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list):
        return [_fresh(item) for item in value]
    if isinstance(value, dict):
        return {name: _fresh(item) for name, item in value.items()}
    return value  # numbers, strings, None: immutable


def _decode_value(spec: dict[str, Any], blobs: list[bytes]) -> Any:
    tag = spec["t"]
    if tag == "array":
        return decode_array(blobs[spec["i"]])
    if tag == "value":
        return spec["v"]
    if tag == "callable":
        return _trusted_callable(spec["name"], [decode_array(blobs[i]) for i in spec.get("arrays", [])])
    raise ProtocolError(f"unknown argument tag {tag!r}")


def _trusted_callable(name: str, arrays: list[np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """Build one of the grader's own functions here, so no callable crosses the boundary."""
    code = _trusted_code.get(_trusted_source())
    if code is None:  # compiled once per process: many calls of an exercise carry a callable
        code = _trusted_code[_trusted_source()] = compile(_trusted_source(), "<grader trusted functions>", "exec")
    namespace: dict[str, Any] = {"__name__": "grader_trusted"}
    exec(code, namespace)  # noqa: S102 - a fresh namespace per call: no state is shared with the learner's code
    return namespace["build"](name, arrays)


_trusted_code: BoundedMemo[str, Any] = BoundedMemo(4)  # compiled per source text (one in practice)


# The text of ``trusted.py`` reaches a learner process only with the calls that
# need it (the parent adds it to their message), so a process that is never
# handed a callable never holds the grader's softmax and cannot call it
# instead of its own. Outside the sandbox (in-process test doubles) it is read
# from disk on demand.
_trusted: list[str | None] = [None]


def set_trusted_source(source: Any) -> None:
    if isinstance(source, str):
        _trusted[0] = source


def _trusted_source() -> str:
    source = _trusted[0]
    if source is None:
        source = _trusted[0] = read_trusted_source()
    return source


def read_trusted_source() -> str:
    """The text of ``trusted.py`` (read by the parent, which sends it along with calls that need it)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trusted.py")
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def preloaded_keys() -> list[str]:
    """The keys of the requests this process holds preloaded (inherited from the warm parent)."""
    return sorted(_PRELOADED)
