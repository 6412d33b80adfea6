"""A request's arguments in the learner process: decoded from the wire, copied from a preloaded request,
or taken from the exercise's given functions (a public file whose source comes with the calls that need it).

Runs in the learner process and in the warm parent (``preload``), never in
the grader. Standard library and numpy only.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from grader.memo import BoundedMemo
from grader.sandbox.protocol import MessageParser, ProtocolError, decode_array
from grader.sandbox.scripts import decode_script

__all__ = [
    "decode_arguments",
    "preload",
    "preloaded_keys",
    "requested_calls",
    "set_given_source",
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
    hand over given functions are never preloaded (the warm parent holds none).
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
        if "script" in call:  # a script's steps hold their own arguments: not worth a form of their own here
            return False
        if any(spec.get("t") not in ("array", "value") for spec in specs):
            return False  # given functions are found only in a process that holds the given file
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
    """A call's positional and keyword arguments; for a script, its decoded steps as the one positional."""
    if "script" in call:
        try:
            return [decode_script(call["script"], partial(_decode_value, blobs=blobs))], {}
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise ProtocolError(f"{exc}") from None
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
        return _given_callable(str(spec["name"]), {str(k): decode_array(blobs[i]) for k, i in spec["bound"].items()})
    raise ProtocolError(f"unknown argument tag {tag!r}")


def _given_callable(name: str, bound: dict[str, np.ndarray]) -> Callable[..., Any]:
    """A function of the exercise's given file, from the source sent with this request."""
    source = _given[0]
    if source is None:
        raise ProtocolError("no given functions came with this request")
    namespace = _given_namespaces.get(source)
    if namespace is None:  # run once per process and source: many calls of an exercise hand one over
        namespace = {"__name__": "given_functions"}
        exec(compile(source, "<given functions>", "exec"), namespace)  # noqa: S102 - the course's public file
        _given_namespaces[source] = namespace
    function = namespace.get(name)
    if not callable(function):
        raise ProtocolError(f"the given functions have no {name!r}")
    return partial(function, **bound) if bound else function


# The source of the exercise's given functions reaches a learner process only with the calls that
# need it, so a process that is never handed one holds none (and a process that was serves no other
# exercise). Its namespace is not in ``sys.modules``: learner code cannot import it.
_given: list[str | None] = [None]
_given_namespaces: BoundedMemo[str, dict[str, Any]] = BoundedMemo(4)


def set_given_source(source: Any) -> None:
    """Use ``source`` (a request's ``given_source``) for the callables of the calls that follow."""
    if isinstance(source, str):
        _given[0] = source


def preloaded_keys() -> list[str]:
    """The keys of the requests this process holds preloaded (inherited from the warm parent)."""
    return sorted(_PRELOADED)
