"""In the learner process: ``sys.stdout`` and ``sys.stderr``, counting the bytes written through them.

What the learner prints reaches the grader on a pipe of its own, apart from
the answers, so the grader cannot tell by itself which call printed what.
So every byte written through Python's streams is counted here, and an
answer says how many had been written by the end of its call
(``answer_batches.Answers``), the grader cutting the output there
(``output.OutputCapture``). The count is sent only when it changed: an
answer of a call that printed nothing is exactly what it was, and answers
reused by their bytes (``answers.KnownAnswers``) still are.

The count is kept at the bottom of Python's streams, their raw layer, so it
is the bytes that reach the pipe however they got there: text, bytes written
to ``sys.stdout.buffer``, the warnings and tracebacks Python writes. Writing
costs one addition more; nothing is counted, and no system call made, while
nothing is printed. Writes that go around Python's streams (``os.write(1,
...)``, C code) are not counted: each later cut of the same exercise then
falls that many bytes early, so some output may be shown on a neighbouring
check; never on another exercise's, whose output is captured apart.

Standard library only: the learner process imports it.
"""

from __future__ import annotations

import io
import os
import sys
from typing import Any, BinaryIO, cast

__all__ = ["PrintTally", "count_printing"]


class PrintTally:
    """Bytes written to the output pipe through Python's streams since the process began.

    ``told``: the count the grader was last sent, so an answer carries the count only when it changed.
    """

    __slots__ = ("told", "written")

    def __init__(self) -> None:
        self.written = 0
        self.told = 0

    def news(self) -> int | None:
        """The count, when it changed since the grader was last told (it is told now); else ``None``."""
        if self.written == self.told:
            return None
        self.told = self.written
        return self.told


class _CountingPipe(io.RawIOBase):
    """The raw layer of a standard stream: writes go to ``fd`` as they would, their bytes counted.

    The descriptor is never closed (the streams Python makes for fds 1 and 2 do not close theirs either).
    """

    def __init__(self, fd: int, tally: PrintTally) -> None:
        super().__init__()
        self._fd, self._tally = fd, tally

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: Any) -> int:
        written = os.write(self._fd, data)
        self._tally.written += written
        return written


def count_printing() -> PrintTally:
    """Put counting streams in place of ``sys.stdout`` and ``sys.stderr`` (and their ``__stdout__`` twins).

    Each new stream writes to the same descriptor, with the same encoding, error handler and line
    buffering as the one it replaces, and passes every write straight through (as ``python -u`` does,
    which starts the learner processes), so what reaches the pipe and when is unchanged.
    """
    tally = PrintTally()
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        try:
            fd = stream.fileno()
            counted = io.TextIOWrapper(
                cast("BinaryIO", _CountingPipe(fd, tally)),  # a raw stream, as python -u's own are
                encoding=stream.encoding,
                errors=stream.errors,
                line_buffering=stream.line_buffering,
                write_through=True,
            )
        except (AttributeError, OSError, ValueError):  # no such stream here: nothing printed there to count
            continue
        setattr(sys, name, counted)
        setattr(sys, f"__{name}__", counted)  # a learner restoring sys.stdout from it keeps being counted
    return tally
