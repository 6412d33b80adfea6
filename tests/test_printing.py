"""The bytes a learner process prints, counted in the process and sent with its answers, outside what is reused."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from grader.sandbox import answer_batches
from grader.sandbox.answers import KnownAnswers, printed_marks
from grader.sandbox.printing import PrintTally
from grader.sandbox.protocol import MessageParser, ProtocolError, encode_array

OK = {"op": "result", "ok": True, "kind": "single", "types": ["ndarray"], "values": 1}
FAILED = {"op": "result", "ok": False, "stage": "call", "error": {"type": "ValueError", "message": "no", "frames": []}}

# Run as a learner process runs (python -u, stdout and stderr one pipe): every way Python code prints; then
# the count, written around the streams to descriptor FD.
_PRINTS = r"""
import os, sys, warnings
os.dup2(1, 2)
from grader.sandbox.printing import count_printing
tally = count_printing()
print("h\u00e9llo")
sys.stdout.buffer.write(b"raw\n")
sys.stderr.write("to stderr\n")
warnings.warn("careful")
print("\udcff")  # stdout's error handler, as before: surrogateescape writes the byte 0xff
assert sys.__stdout__ is sys.stdout and sys.stdout.errors == "surrogateescape"
told = tally.news()
os.write(FD, b"%d %s" % (told, repr(tally.news()).encode()))
"""


def test_what_python_code_prints_is_counted_in_the_bytes_that_reach_the_pipe() -> None:
    read, write = os.pipe()
    try:
        with os.fdopen(write, "wb") as ours:  # closed here once the child has it, so the read sees its end
            done = subprocess.run(
                [sys.executable, "-u", "-c", _PRINTS.replace("FD", str(write))],
                capture_output=True,
                pass_fds=(ours.fileno(),),
                timeout=60,
            )
        counts = os.read(read, 100)
    finally:
        os.close(read)
    assert done.returncode == 0, done.stdout
    assert b"UserWarning: careful" in done.stdout and "h\u00e9llo".encode() in done.stdout
    assert b"\xff\n" in done.stdout and done.stderr == b""
    told, again = counts.split(b" ")
    assert int(told) == len(done.stdout)
    assert again == b"None"  # told once: nothing printed since, nothing to tell


def test_a_tally_tells_only_a_change() -> None:
    tally = PrintTally()
    assert tally.news() is None
    tally.written += 5
    assert tally.news() == 5 and tally.news() is None


def _sent(answers: list[tuple[dict[str, Any], list[bytes], int]], batched: bool) -> list[tuple[dict, list]]:
    """The messages a learner process sends for ``answers`` (header, payloads, bytes printed after the call)."""
    sent: list[bytes] = []
    channel = type("Channel", (), {"write": lambda self, data: sent.append(bytes(data))})()
    tally = PrintTally()
    out = answer_batches.Answers(channel, batched=batched, every=float("inf"), printed=tally)
    for header, payloads, printed in answers:
        tally.written += printed
        out.add(header, payloads)
    out.flush()
    return MessageParser().feed(b"".join(sent))


def _answers(printing: list[int]) -> list[tuple[dict[str, Any], list[bytes], int]]:
    blob = encode_array(np.array([0.25, 0.75]))
    return [({**OK, "index": index}, [blob], printed) for index, printed in enumerate(printing)]


def test_an_answer_sent_alone_carries_the_count_only_when_its_call_printed() -> None:
    messages = _sent([*_answers([0, 4]), ({**FAILED, "index": 2}, [], 3), ({**FAILED, "index": 3}, [], 0)], False)
    assert [header.get("printed") for header, _ in messages] == [None, 4, 7, None]


def test_a_batch_marks_the_answers_whose_calls_printed_and_keeps_their_headers() -> None:
    ((header, blobs),) = _sent(_answers([0, 4, 0, 2]), True)
    assert printed_marks(header, len(header["answers"])) == [(1, 4), (3, 6)]
    ((quiet, _),) = _sent(_answers([0, 0, 0, 0]), True)
    assert "printed" not in quiet and header["kinds"] == quiet["kinds"] and header["answers"] == quiet["answers"]


def test_answers_are_reused_whether_or_not_their_calls_printed() -> None:
    """The count travels beside the answers' headers and bytes, so a batch found by them is found still."""
    known = KnownAnswers()
    ((quiet, blobs),) = _sent(_answers([0, 0, 0]), True)
    outcomes = known.decode(quiet, blobs)
    known.remember(quiet, blobs, outcomes)
    ((loud, loud_blobs),) = _sent(_answers([3, 0, 5]), True)
    assert known.find(loud, loud_blobs) is outcomes
    assert all(a is b for a, b in zip(known.decode(loud, loud_blobs), outcomes, strict=True))


@pytest.mark.parametrize(
    "marks",
    [{"0": 4}, [[0]], [[0, -1]], [[3, 4]], [[-1, 4]], [[0, "4"]], [[True, 4]], [[0, 1]] * 4],
    ids=["not-a-list", "not-a-pair", "negative-count", "no-such-answer", "negative-number", "text", "bool", "too-many"],
)
def test_forged_marks_make_the_batch_malformed(marks: Any) -> None:
    with pytest.raises(ProtocolError, match="malformed"):
        printed_marks({"printed": marks}, 3)
