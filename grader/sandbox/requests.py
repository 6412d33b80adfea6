"""Requests to a learner process: a batch of calls encoded once, and what is remembered about each.

Every submission's first request is its plan's whole batch, the same for a
whole class, so a request's bytes are made once per session
(``RequestMemo``), found by the batch's key. A request sent in full a second
time is worth preloading in the warm parent: every later fork then holds it
decoded, and is sent only its key (``Request.short``).
"""

from __future__ import annotations

import hashlib
from typing import Any

from msgspec import Struct

from grader.memo import BoundedMemo
from grader.sandbox.calls import CallBatch
from grader.sandbox.protocol import encode_message

__all__ = ["Request", "RequestMemo", "needs_trusted"]

_REQUESTS_KEPT = 64


class Request(Struct):
    """A ``call_many`` message, encoded once, and how often it went to a learner process in full."""

    calls: CallBatch
    batch: bool
    message: bytes
    trusted: bool  # it hands over given functions: never preloaded
    sent: int = 0
    key: str | None = None  # once it is worth preloading: the digest of its batch-free form
    _preload: bytes = b""

    def preloadable(self) -> tuple[str, bytes]:
        """The key and the message a warm parent preloads (the same calls, without the batch flag)."""
        if self.key is None:
            self._preload = encode_message({"op": "call_many", "calls": self.calls.calls}, self.calls.blobs)
            self.key = hashlib.blake2b(self._preload, digest_size=16).hexdigest()
        return self.key, self._preload

    def short(self) -> bytes:
        """The message for a process that holds this request preloaded: its key and how many calls it has."""
        return encode_message({"op": "call_many", "preloaded": self.key, "count": len(self.calls), "batch": self.batch})


class RequestMemo:
    """The requests of one grading session, by their batch's key and answer mode (a bounded LRU)."""

    def __init__(self, kept: int = _REQUESTS_KEPT) -> None:
        self._requests: BoundedMemo[tuple[str, bool], Request] = BoundedMemo(kept)

    def request(self, calls: CallBatch, batch: bool) -> Request:
        """The ``call_many`` request for ``calls`` (answered in batches when ``batch``), encoded once."""
        return self._requests.setdefault_with((calls.key, batch), lambda: _encoded(calls, batch))


def _encoded(calls: CallBatch, batch: bool) -> Request:
    request: dict[str, Any] = {"op": "call_many", "calls": calls.calls, "batch": batch}
    trusted = needs_trusted(calls.calls)
    if trusted and calls.given:  # only a process handed given functions ever holds their source
        request["given_source"] = calls.given
    return Request(calls, batch, encode_message(request, calls.blobs), trusted)


def needs_trusted(calls: list[dict[str, Any]]) -> bool:
    """Whether some call takes a function of the exercise's given file (found in the process that holds it)."""
    for call in calls:
        specs = list(call.get("args", [])) + list(call.get("kwargs", {}).values())
        if any(isinstance(spec, dict) and spec.get("t") == "callable" for spec in specs):
            return True
    return False
