"""Reading pipes and sockets into one buffer kept from read to read.

``os.read(fd, 1 << 20)`` makes a new 1 MiB bytes object on every call, even
when 100 bytes arrive or none: memory of that size comes from ``mmap``, so
each read costs an ``mmap``, a page fault and a ``munmap`` (more in a
learner process, whose every system call passes the seccomp filter).
Reading into a buffer made once costs one read system call. The
grader, the warm parent and every learner process read many small messages.
The buffer is anonymous memory, not a ``bytearray``: the system hands out
its pages as reads first fill them, where a ``bytearray`` of 1 MiB is written
with zeros at once, 256 page faults in every new learner process.

Standard library only: the warm parent and the learner process import it.
"""

from __future__ import annotations

import array
import mmap
import os
import socket
import threading

__all__ = ["Reader", "local_reader"]


class Reader:
    """One reusable buffer of ``size`` bytes; each read returns a copy of what arrived."""

    def __init__(self, size: int = 1 << 20) -> None:
        self._buffer = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)  # private: a fork gets a copy, not this memory
        self._view = memoryview(self._buffer)

    def read(self, fd: int) -> bytes:
        """Up to ``size`` bytes from ``fd``; ``b""`` at end of file; raises as ``os.read`` does."""
        return self._view[: os.readv(fd, [self._buffer])].tobytes()

    def recv(self, sock: socket.socket) -> bytes:
        """One datagram (or up to ``size`` bytes) from ``sock``; raises as ``socket.recv`` does."""
        return self._view[: sock.recv_into(self._buffer)].tobytes()

    def recv_fds(self, sock: socket.socket, max_fds: int) -> tuple[bytes, list[int]]:
        """One message and the descriptors passed with it, as ``socket.recv_fds`` gives them."""
        fds = array.array("i")
        size, ancillary, _, _ = sock.recvmsg_into([self._buffer], socket.CMSG_LEN(max_fds * fds.itemsize))
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
        return self._view[:size].tobytes(), list(fds)


_local = threading.local()


def local_reader() -> Reader:
    """This thread's reader (a batch may grade on several threads; a buffer serves one read at a time)."""
    reader = getattr(_local, "reader", None)
    if reader is None:
        reader = _local.reader = Reader()
    return reader
