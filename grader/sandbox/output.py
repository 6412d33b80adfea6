"""What a learner process prints: captured with a cap, shown as a safe, deterministic excerpt."""

from __future__ import annotations

import os

__all__ = ["OutputCapture"]


class OutputCapture:
    """Learner stdout and stderr: keep the first bytes, count the rest, flag a flood."""

    def __init__(self, keep: int, cap: int) -> None:
        self.keep, self.cap = keep, cap
        self.head = bytearray()
        self.total = 0
        self.hide: list[str] = []

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.keep - len(self.head)
        if room > 0:
            self.head += data[:room]

    @property
    def flooded(self) -> bool:
        return self.total > self.cap

    def excerpt(self) -> str:
        """A safe excerpt: control characters escaped, truncation said."""
        text = self.head.decode("utf-8", "replace")
        for prefix in self.hide:  # the scratch folder's name is random: keep output deterministic
            text = text.replace(prefix + os.sep, "").replace(prefix, ".")
        cleaned = "".join(ch if ch in "\n\t" or (ch.isprintable()) else f"\\x{ord(ch):02x}" for ch in text)
        if self.total > len(self.head):
            cleaned += f"\n[... {self.total - len(self.head)} more bytes not shown]"
        return cleaned
