"""What runs inside a learner process, after the zygote forks it.

Order matters: confine first (capabilities, limits, Landlock, seccomp), then
import the submission, then answer calls. Everything the learner's code
could touch from here on is untrusted; the parent judges only the numbers
this module sends back. Standard library and numpy only.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import traceback
from typing import Any, Callable

import numpy as np

from grader.sandbox.protocol import MessageParser, ProtocolError, decode_array, encode_array, encode_message

__all__ = ["serve"]

_MESSAGE_LIMIT = 500


def serve(config: dict[str, Any], request_fd: int, response_fd: int) -> None:
    """Confine this process, import the submission and answer calls until EOF."""
    channel = _Channel(request_fd, response_fd)
    layers = _confine(config)
    module, failure = _import_submission(config["module"], config["scratch"])
    if failure is not None:
        channel.send({"op": "ready", "ok": False, "layers": layers, "error": failure})
        return
    entries = {name: callable(_lookup(module, name)) for name in config.get("entries", [])}
    channel.send({"op": "ready", "ok": True, "layers": layers, "entries": entries})
    while True:
        message = channel.receive()
        if message is None:
            return
        header, blobs = message
        if header.get("op") != "call_many":
            return
        for index, call in enumerate(header["calls"]):
            channel.send(*_run_call(module, index, call, blobs, config["scratch"]))


class _Channel:
    """Blocking frames over the two pipes the zygote handed this process."""

    def __init__(self, request_fd: int, response_fd: int) -> None:
        self._request_fd = request_fd
        self._response_fd = response_fd
        self._parser = MessageParser()
        self._queue: list[tuple[dict[str, Any], list[bytes]]] = []

    def send(self, header: dict[str, Any], blobs: list[bytes] = ()) -> None:  # type: ignore[assignment]
        data = memoryview(encode_message(header, list(blobs)))
        while data:
            written = os.write(self._response_fd, data)
            data = data[written:]

    def receive(self) -> tuple[dict[str, Any], list[bytes]] | None:
        while not self._queue:
            chunk = os.read(self._request_fd, 1 << 20)
            if not chunk:
                return None
            self._queue.extend(self._parser.feed(chunk))
        return self._queue.pop(0)


def _confine(config: dict[str, Any]) -> dict[str, Any]:
    """Apply every layer the parent asked for; report what held and what failed."""
    wanted = config.get("layers", {})
    held: dict[str, Any] = {}
    from grader.sandbox.confine import landlock, privileges, seccomp

    steps: list[tuple[str, Callable[[], Any]]] = []
    if wanted.get("caps", True):
        steps.append(("caps_dropped", privileges.drop_capabilities))
    limits = config.get("limits")
    if limits:
        steps.append(("rlimits", lambda: privileges.set_limits(**limits) or True))
    if wanted.get("landlock", True):
        paths = config.get("landlock_paths") or {}
        steps.append((
            "landlock_abi",
            lambda: landlock.restrict(
                list(paths.get("read", [])) + [config["scratch"]],
                ["/dev/null"],
                list_paths=list(paths.get("list", [])),
            ),
        ))
    if wanted.get("seccomp", True):
        steps.append(("seccomp", lambda: seccomp.install_filter() or True))
    for name, step in steps:
        try:
            held[name] = step()
        except Exception as exc:
            held[name] = False
            held.setdefault("errors", {})[name] = f"{exc.__class__.__name__}: {exc}"
    return held


def _lookup(module: Any, name: str) -> Any:
    try:
        return getattr(module, name, None)
    except BaseException:
        return None


def _import_submission(path: str, scratch: str) -> tuple[Any, dict[str, Any] | None]:
    """Import the learner's file as module ``submission``; describe any failure."""
    sys.path.insert(0, scratch)
    try:
        spec = importlib.util.spec_from_file_location("submission", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["submission"] = module
        spec.loader.exec_module(module)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt included on purpose
        return None, _describe_exception(exc, scratch)
    return module, None


def _describe_exception(exc: BaseException, scratch: str) -> dict[str, Any]:
    """The exception's type, message and the learner's own frames, nothing of ours."""
    try:
        message = str(exc)
    except BaseException:
        message = "<the exception could not be turned into text>"
    described: dict[str, Any] = {
        "type": type(exc).__name__,
        "message": message[:_MESSAGE_LIMIT],
        "frames": [],
    }
    if isinstance(exc, SyntaxError):
        described["file"] = os.path.basename(exc.filename or "")
        described["line"] = exc.lineno
        described["text"] = (exc.text or "").strip()[:200]
        described["message"] = str(exc.msg)[:_MESSAGE_LIMIT]
    if isinstance(exc, SystemExit):
        described["message"] = repr(exc.code)[:_MESSAGE_LIMIT]
    try:
        frames = traceback.extract_tb(exc.__traceback__)
    except BaseException:
        frames = []
    for frame in frames:
        if frame.filename and frame.filename.startswith(scratch):
            described["frames"].append({
                "file": os.path.relpath(frame.filename, scratch),
                "line": frame.lineno,
                "function": frame.name,
                "text": (frame.line or "")[:200],
            })
    return described


def _run_call(
    module: Any, index: int, call: dict[str, Any], blobs: list[bytes], scratch: str
) -> tuple[dict[str, Any], list[bytes]]:
    """Call one entry function and encode what it returned, or what it raised."""
    try:
        args = [_decode_value(spec, blobs) for spec in call.get("args", [])]
        kwargs = {name: _decode_value(spec, blobs) for name, spec in call.get("kwargs", {}).items()}
    except Exception as exc:  # the grader sent something it should not have
        return {"op": "result", "index": index, "ok": False, "stage": "decode",
                "error": {"type": type(exc).__name__, "message": str(exc)[:_MESSAGE_LIMIT], "frames": []}}, []
    function = _lookup(module, call["fn"])
    try:
        value = function(*args, **kwargs)
    except BaseException as exc:
        return {"op": "result", "index": index, "ok": False, "stage": "call",
                "error": _describe_exception(exc, scratch)}, []
    try:
        kind, types, encoded = _encode_result(value)
    except BaseException as exc:
        return {"op": "result", "index": index, "ok": False, "stage": "value",
                "error": {"type": type(exc).__name__, "message": _safe_text(exc), "frames": []}}, []
    header: dict[str, Any] = {"op": "result", "index": index, "ok": True, "kind": kind, "types": types,
                              "values": len(encoded)}
    if call.get("return_inputs"):
        after = [item for item in list(args) + list(kwargs.values()) if isinstance(item, np.ndarray)]
        header["inputs"] = len(after)
        encoded += [encode_array(item) for item in after]
    return header, encoded


def _safe_text(exc: BaseException) -> str:
    try:
        return str(exc)[:_MESSAGE_LIMIT]
    except BaseException:
        return "<no message>"


def _encode_result(value: Any) -> tuple[str, list[str], list[bytes]]:
    """Turn a returned value into ``.npy`` payloads; refuse anything but numbers."""
    kind = "tuple" if isinstance(value, tuple) else "single"
    items = list(value) if kind == "tuple" else [value]
    if len(items) > 64:
        raise ValueError("returned a tuple of more than 64 items")
    types = [type(item).__name__ for item in items]
    encoded = []
    for item, name in zip(items, types):
        array = np.array(item, copy=True, subok=False)
        if array.dtype.hasobject or array.dtype.kind not in "biufc":
            raise TypeError(f"returned a value that is not an array of numbers ({name}, dtype {array.dtype})")
        encoded.append(encode_array(array))
    return kind, types, encoded


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
    namespace: dict[str, Any] = {"__name__": "grader_trusted"}
    exec(compile(TRUSTED_SOURCE, "<grader trusted functions>", "exec"), namespace)  # noqa: S102
    return namespace["build"](name, arrays)


def _read_trusted_source() -> str:
    """The text of ``trusted.py``, read before confinement and compiled only on demand.

    Keeping it as text means a learner process that is never handed a callable
    never holds the grader's softmax, so it cannot call it instead of its own.
    """
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trusted.py")
    with open(path, encoding="utf-8") as handle:
        return handle.read()


TRUSTED_SOURCE = _read_trusted_source()
