"""The three pipes between the grader and one learner process: requests, answers, printed output.

The grader's ends never block (every wait goes through a selector with a
deadline); the pipes that carry requests and answers get a 1 MiB buffer
where the system allows, so a whole plan or a batch of answers crosses in a
few writes.
"""

from __future__ import annotations

import fcntl
import os

from msgspec import Struct

from grader.sandbox.reading import local_reader

__all__ = ["READ_SIZE", "Pipes", "open_pipes", "read_ready"]

READ_SIZE = 1 << 20
_PIPE_BYTES = 1 << 20


class Pipes(Struct):
    """The grader's ends: where it writes requests, reads answers, reads what the learner printed."""

    request_w: int
    response_r: int
    output_r: int


def open_pipes() -> tuple[Pipes, tuple[int, int, int]]:
    """New pipes: the grader's ends (non-blocking), and the learner's ends (request, answer, output) to hand over."""
    request_r, request_w = os.pipe()
    response_r, response_w = os.pipe()
    output_r, output_w = os.pipe()
    for fd in (request_w, response_r, output_r):
        os.set_blocking(fd, False)
    for fd in (request_w, response_w):
        _widen(fd)
    return Pipes(request_w, response_r, output_r), (request_r, response_w, output_w)


def read_ready(fd: int) -> bytes | None:
    """Read what is there: bytes, ``b""`` at end of file, ``None`` when nothing is ready yet."""
    try:
        return local_reader().read(fd)
    except (BlockingIOError, InterruptedError):
        return None
    except OSError:
        return b""


def _widen(fd: int) -> None:
    """Give a pipe a 1 MiB buffer where the system allows: requests and answers then cross in a few writes."""
    try:
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    except (OSError, AttributeError):  # an unprivileged limit below 1 MiB: the default buffer works, more slowly
        pass
