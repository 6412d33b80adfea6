"""What a learner process prints: captured with a cap, shown as a safe, deterministic excerpt, cut by call.

A capture holds one exercise's share of its process's output, which is one
stream over the process's life: ``start`` is where the share begins in it.
The process's answers say how many bytes it had printed by the end of each
call (``sandbox.printing``), so the runner marks where the import's output
ends (``imported``) and which bytes each call printed (``called``); the
engine then hands each check what its calls printed.
"""

from __future__ import annotations

import os

from msgspec import Struct

__all__ = ["OutputCapture", "Printed"]


class Printed(Struct, frozen=True):
    """What one call printed: bytes ``start`` to ``end`` of its process's output (``end`` ``None``: all the rest).

    ``call`` numbers the call among those the capture's process was sent for the exercise, in the order
    sent, from 0. ``end`` is ``None`` for a call the process never answered (it hung, crashed or sent too
    much): everything it printed from then on is that call's.
    """

    call: int
    start: int
    end: int | None


class OutputCapture:
    """Learner stdout and stderr: keep the first bytes, count the rest, flag a flood."""

    def __init__(self, keep: int, cap: int, start: int = 0) -> None:
        self.keep, self.cap = keep, cap
        self.head = bytearray()
        self.total = 0
        self.hide: list[str] = []
        self.start = start
        self.imported: int | None = None  # where the import's output ends, once the process has said
        self.printed: list[Printed] = []
        self._calls = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.keep - len(self.head)
        if room > 0:
            self.head += data[:room]

    @property
    def flooded(self) -> bool:
        return self.total > self.cap

    @property
    def end(self) -> int:
        """Where the bytes read so far end in the process's output: where the next exercise's capture starts."""
        return self.start + self.total

    def excerpt(self) -> str:
        """A safe excerpt: control characters escaped, truncation said."""
        return self._excerpt(0, self.total)

    def begin_calls(self, count: int) -> int:
        """Number ``count`` calls about to be sent; the number of the first of them."""
        first, self._calls = self._calls, self._calls + count
        return first

    def called(self, call: int, start: int, end: int | None) -> None:
        """Mark what call ``call`` printed (``Printed``)."""
        self.printed.append(Printed(call, start, end))

    def import_excerpt(self) -> str | None:
        """What the import printed, as an excerpt; ``None`` when the output was not cut by call."""
        if self.imported is None:
            return None
        return self._excerpt(0, self.imported - self.start)

    def call_excerpts(self) -> dict[int, str]:
        """What each call that printed printed, as an excerpt, by call number (calls that printed nothing left out).

        Empty when the output was not cut by call (``import_excerpt`` is ``None``).
        """
        if self.imported is None:
            return {}
        found: dict[int, str] = {}
        for mark in self.printed:
            end = self.total if mark.end is None else mark.end - self.start
            text = self._excerpt(mark.start - self.start, end)
            if text:
                found[mark.call] = found.get(mark.call, "") + text
        return found

    def _excerpt(self, start: int, end: int) -> str:
        """Bytes ``start`` to ``end`` of this capture, escaped, the bytes past the kept ones counted.

        Both ends are clamped to what was read: a count the process sent is the process's word, not a fact.
        """
        start, end = max(0, min(start, self.total)), max(0, min(end, self.total))
        if end <= start:
            return ""
        kept = min(end, len(self.head))
        text = self.head[start:kept].decode("utf-8", "replace") if kept > start else ""
        for prefix in self.hide:  # the scratch folder's name is random: keep output deterministic
            text = text.replace(prefix + os.sep, "").replace(prefix, ".")
        cleaned = "".join(ch if ch in "\n\t" or (ch.isprintable()) else f"\\x{ord(ch):02x}" for ch in text)
        hidden = end - max(start, len(self.head))
        if hidden > 0:
            cleaned += f"\n[... {hidden} more bytes not shown]"
        return cleaned
