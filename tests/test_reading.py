"""The reusable read buffer: what it returns must never change when the buffer is reused."""

from __future__ import annotations

import os
import socket

import pytest

from grader.sandbox.reading import Reader


def test_each_read_returns_its_own_bytes_and_end_of_file_is_empty() -> None:
    reader = Reader(size=8)
    r, w = os.pipe()
    try:
        os.write(w, b"first message")
        first = reader.read(r)
        assert first == b"first me"  # at most the buffer's size
        os.write(w, b"\x00\x01")
        second = reader.read(r)
        assert (first, second) == (b"first me", b"ssage\x00\x01")  # the first read's bytes were not overwritten
        os.close(w)
        w = -1
        assert reader.read(r) == b""
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)


def test_a_non_blocking_pipe_with_nothing_in_it_raises_as_os_read_does() -> None:
    reader = Reader()
    r, w = os.pipe()
    os.set_blocking(r, False)
    try:
        with pytest.raises(BlockingIOError):
            reader.read(r)
    finally:
        os.close(r)
        os.close(w)


def test_datagrams_and_passed_descriptors_arrive_whole() -> None:
    reader = Reader()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    r, w = os.pipe()
    try:
        socket.send_fds(theirs, [b'{"op": "spawn"}'], [r, w])
        theirs.send(b"second")
        data, fds = reader.recv_fds(ours, 8)
        assert data == b'{"op": "spawn"}' and len(fds) == 2
        os.write(fds[1], b"through the passed pipe")
        assert os.read(fds[0], 100) == b"through the passed pipe"
        for fd in fds:
            os.close(fd)
        assert reader.recv(ours) == b"second" and data == b'{"op": "spawn"}'
    finally:
        for item in (ours, theirs):
            item.close()
        os.close(r)
        os.close(w)


def test_a_new_reader_takes_memory_only_as_reads_fill_it() -> None:
    """Every learner process makes one: a 1 MiB buffer written with zeros up front would be 256 page faults each."""
    import resource

    def faults() -> int:
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

    before = faults()
    reader = Reader()
    made = faults() - before
    r, w = os.pipe()
    try:
        os.write(w, b"x" * 100)
        assert reader.read(r) == b"x" * 100
    finally:
        os.close(r)
        os.close(w)
    assert made < 32, f"making a 1 MiB reader touched {made} pages"


def test_a_forked_process_reads_into_its_own_copy_of_the_buffer() -> None:
    """Grading processes are forked from the batch with its reader: each must read into memory of its own."""
    reader = Reader(size=64)
    r, w = os.pipe()
    done_r, done_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.write(w, b"from the child")
            reader.read(r)
            os.write(done_w, b"x")
        finally:
            os._exit(0)
    try:
        assert os.read(done_r, 1) == b"x"
        os.waitpid(pid, 0)
        assert bytes(reader._buffer[:14]) != b"from the child"
    finally:
        for fd in (r, w, done_r, done_w):
            os.close(fd)
