"""The wire protocol: arrays survive the trip exactly; anything forged is refused before allocation."""

from __future__ import annotations

import os
import struct

import numpy as np
import pytest

from grader.sandbox.answers import KnownAnswers, decode_answer, unbatch
from grader.sandbox.protocol import MAX_FRAME, MessageParser, ProtocolError, decode_array, encode_array, encode_message
from tests.fakes import WarmParentStub


@pytest.mark.parametrize(
    "value",
    [
        np.array([1.0, 2.5, -np.inf, np.nan]),
        np.zeros((2, 3, 4)),
        np.array(3.5),
        np.array([1, 2], dtype=np.int64),
        np.array([True, False]),
        np.ones((3,), dtype=np.float32),
        np.array([], dtype=float).reshape(0, 3),
        np.arange(6, dtype=">f8").reshape(2, 3),
        np.array([1 + 2j]),
    ],
    ids=["float64", "3d", "scalar", "int64", "bool", "float32", "empty", "big-endian", "complex"],
)
def test_encode_array_round_trips_values_shape_and_kind(value: np.ndarray) -> None:
    decoded = decode_array(encode_array(value))
    assert type(decoded) is np.ndarray
    assert decoded.shape == value.shape
    assert decoded.dtype.kind == value.dtype.kind
    np.testing.assert_array_equal(decoded, value)


def test_encode_array_refuses_objects() -> None:
    with pytest.raises(TypeError, match="not an array of numbers"):
        encode_array(np.array([object()]))


@pytest.mark.parametrize(
    "blob",
    [
        b"",
        b"\x07",
        bytes([200, 1]) + struct.pack("<Q", 1) + b"\0" * 8,
        bytes([0, 1]) + struct.pack("<Q", 10**11),
        bytes([0, 1]) + struct.pack("<Q", 3) + b"\0" * 8,
        b"\x93NUMPY\x01\x00" + b"{'descr': '|O'}",
    ],
    ids=["empty", "truncated-head", "unknown-dtype", "absurd-size", "short-payload", "npy-object"],
)
def test_decode_array_refuses_forged_payloads(blob: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_array(blob)


def test_message_parser_reassembles_messages_split_anywhere() -> None:
    data = encode_message({"op": "a"}, [b"xyz"]) + encode_message({"op": "b"})
    parser = MessageParser()
    messages = []
    for byte in data:
        messages += parser.feed(bytes([byte]))
    assert [(h["op"], blobs) for h, blobs in messages] == [("a", [b"xyz"]), ("b", [])]
    assert not parser.pending


@pytest.mark.parametrize(
    "data",
    [
        struct.pack(">I", MAX_FRAME + 1),
        struct.pack(">I", 4) + b"[1] ",
        struct.pack(">I", 2) + b"{}",
        struct.pack(">I", 3) + b"\xff\xfe\x00",
    ],
    ids=["oversized-frame", "not-an-object", "no-blob-count", "not-json"],
)
def test_message_parser_refuses_garbage(data: bytes) -> None:
    with pytest.raises(ProtocolError):
        MessageParser().feed(data)


def test_a_head_seen_before_still_needs_the_right_payload() -> None:
    """Checked heads are remembered (a class returns the same shapes); the payload is still measured each time."""
    blob = encode_array(np.arange(6.0).reshape(2, 3))
    assert decode_array(blob).shape == (2, 3)
    for forged in (blob[:-8], blob + b"\x00" * 8, blob[:2]):
        with pytest.raises(ProtocolError):
            decode_array(forged)
    assert decode_array(blob, max_elements=6).shape == (2, 3)
    with pytest.raises(ProtocolError):
        decode_array(blob, max_elements=5)  # a smaller limit is a different question, not a remembered answer


@pytest.mark.parametrize(
    "header",
    [
        {"op": "result", "index": 0, "ok": True, "kind": "single", "types": ["ndarray"], "values": 1},
        {
            "op": "result",
            "index": 41,
            "ok": True,
            "kind": "tuple",
            "types": ["float", "float64"],
            "values": 2,
            "inputs": 1,
        },
        {"op": "result", "index": 3, "ok": True, "kind": "single", "types": ['we"ird\\name'], "values": 1},
        {"op": "result", "index": 5, "ok": False, "stage": "call", "error": {"type": "ValueError", "message": "no"}},
    ],
    ids=["single", "tuple-with-inputs", "odd-type-name", "error"],
)
def test_a_learner_process_answer_reads_as_the_plain_encoding(header: dict) -> None:
    """The learner process builds an ``ok`` answer's header from a template; it must read exactly the same."""
    from grader.sandbox.answer_batches import encode_answer as _answer

    payloads = [encode_array(np.arange(3.0))] * (header.get("values", 0) + header.get("inputs", 0))
    for _ in range(2):  # the second time, from the remembered template
        assert MessageParser().feed(_answer(header, payloads)) == MessageParser().feed(encode_message(header, payloads))


ANSWERS = [
    (
        {"op": "result", "index": 4, "ok": True, "kind": "single", "types": ["ndarray"], "values": 1},
        [encode_array(np.arange(3.0))],
    ),
    ({"op": "result", "index": 5, "ok": False, "stage": "call", "error": {"type": "ValueError", "message": "no"}}, []),
    (
        {
            "op": "result",
            "index": 6,
            "ok": True,
            "kind": "tuple",
            "types": ["float", 'we"ird'],
            "values": 2,
            "inputs": 1,
        },
        [encode_array(np.float64(1.5)), encode_array(np.array([[1, 2]])), encode_array(np.zeros(0))],
    ),
]


def _batched(answers: list) -> bytes:  # type: ignore[type-arg]
    """The answers as one ``results`` message, as a learner process sends them (never cut by time here)."""
    from grader.sandbox import answer_batches

    sent: list[bytes] = []
    channel = type("Channel", (), {"write": lambda self, data: sent.append(bytes(data))})()
    batch = answer_batches.Answers(
        channel, batched=True, every=float("inf")
    )  # a slow moment must not cut the batch in two
    for header, payloads in answers:
        batch.add(header, payloads)
    batch.flush()
    return b"".join(sent)


def test_a_batch_of_answers_comes_apart_into_the_answers_sent_one_by_one() -> None:
    ((header, blobs),) = MessageParser().feed(_batched(ANSWERS))
    assert header["op"] == "results"
    expected = [MessageParser().feed(encode_message(h, p))[0] for h, p in ANSWERS]
    got = [({k: v for k, v in h.items() if k != "blobs"}, p) for h, p in unbatch(header, blobs)]
    assert got == [({k: v for k, v in h.items() if k != "blobs"}, p) for h, p in expected]


def test_a_batch_names_each_distinct_answer_header_once() -> None:
    """A check's answers mostly share one header: the batch carries it once and numbers the answers."""
    same = [({**OK_ANSWERS[0][0], "index": index}, OK_ANSWERS[0][1]) for index in range(40)]
    ((header, blobs),) = MessageParser().feed(_batched(same + [({**OK_ANSWERS[1][0], "index": 40}, OK_ANSWERS[1][1])]))
    assert header["kinds"] == [
        {k: v for k, v in h.items() if k not in ("op", "index")} for h in (OK_ANSWERS[0][0], OK_ANSWERS[1][0])
    ]
    assert header["answers"] == [0] * 40 + [1]


@pytest.mark.parametrize(
    "change",
    [
        {"first": -1},
        {"first": "4"},
        {"answers": {"0": {}}},
        {"answers": [[1, 2]]},
        {"answers": [True]},
        {"answers": [0, 99]},
        {"answers": [-1]},
        {"kinds": {"0": {}}},
        {"kinds": [[1, 2]], "answers": [0]},
        {"sizes": [1, -1]},
        {"sizes": [24, 16, 32, 16, 1]},  # more bytes named than sent
        {"kinds": [{"ok": True, "values": 99}], "answers": [0]},  # more arrays named than sizes given
        {"kinds": [{"ok": True, "values": 1}], "answers": [0]},  # arrays sent that no answer names
        {"kinds": [{"ok": True, "values": True}], "answers": [0]},
        {"kinds": [{"ok": True, "values": 1, "inputs": -2}], "answers": [0]},
    ],
    ids=[
        "negative-first",
        "text-first",
        "answers-not-a-list",
        "answer-not-a-number",
        "answer-a-boolean",
        "answer-past-the-kinds",
        "negative-answer",
        "kinds-not-a-list",
        "kind-not-an-object",
        "negative-size",
        "sizes-past-the-payload",
        "too-many-arrays-named",
        "arrays-left-over",
        "boolean-count",
        "negative-count",
    ],
)
def test_a_malformed_batch_is_refused_before_anything_is_cut(change: dict) -> None:  # type: ignore[type-arg]
    ((header, blobs),) = MessageParser().feed(_batched(ANSWERS))
    with pytest.raises(ProtocolError):
        unbatch({**header, **change}, blobs)


OK_ANSWERS = [
    (
        {"op": "result", "index": 0, "ok": True, "kind": "single", "types": ["ndarray"], "values": 1},
        [encode_array(np.array([0.25, 0.75]))],
    ),
    (
        {"op": "result", "index": 1, "ok": True, "kind": "tuple", "types": ["float", "float"], "values": 2},
        [encode_array(np.float64(64.2)), encode_array(np.float64(1.003))],
    ),
]


def _taken_apart(answers: list, known: KnownAnswers) -> list:  # type: ignore[type-arg]
    """What the grader's side makes of a batch: each answer's outcome, in order (``known``: recent batches)."""
    ((header, blobs),) = MessageParser().feed(_batched(answers))
    outcomes = known.find(header, blobs)
    if outcomes is None:
        outcomes = [decode_answer(h["index"], h, p) for h, p in unbatch(header, blobs)]
        known.remember(header, blobs, outcomes)
    return outcomes


def test_a_batch_with_the_same_bytes_as_a_recent_one_gets_its_outcomes_again() -> None:
    known = KnownAnswers()
    first, again = _taken_apart(OK_ANSWERS, known), _taken_apart(OK_ANSWERS, known)
    assert [o.status for o in first] == ["ok", "ok"] and first[1].value == (64.2, 1.003)
    assert all(a is b for a, b in zip(first, again, strict=True))  # not taken apart a second time
    assert not first[0].values[0].flags.writeable  # shared, so nobody may change them

    other_values = [encode_array(np.float64(64.2)), encode_array(np.float64(1.0031))]
    one_bit_off = [OK_ANSWERS[0], (OK_ANSWERS[1][0], other_values)]
    other = _taken_apart(one_bit_off, known)
    assert other[1].value == (64.2, 1.0031) and other[1].digest != first[1].digest
    assert other[0] is not first[0]  # an exact match or nothing: the whole batch is decoded afresh


def test_a_batch_with_a_failed_answer_is_always_taken_apart_afresh() -> None:
    known = KnownAnswers()
    first, again = _taken_apart(ANSWERS, known), _taken_apart(ANSWERS, known)
    assert [o.status for o in first] == [o.status for o in again] and "raised" in {o.status for o in first}
    assert all(a is not b for a, b in zip(first, again, strict=True))


def test_known_batches_are_bounded_in_bytes_as_well_as_in_number() -> None:
    """A learner returning large arrays must not make the grader keep them: big batches are never kept."""
    ((header, blobs),) = MessageParser().feed(_batched(OK_ANSWERS))
    size = len(blobs[0])

    def outcomes():  # type: ignore[no-untyped-def]
        return [decode_answer(h["index"], h, p) for h, p in unbatch(header, blobs)]

    too_big = KnownAnswers(max_batch_bytes=size - 1)
    too_big.remember(header, blobs, outcomes())
    assert too_big.find(header, blobs) is None
    room_for_one = KnownAnswers(max_bytes=size)
    room_for_one.remember(header, blobs, outcomes())
    assert room_for_one.find(header, blobs) is not None
    other = dict(header, first=header["first"] + 100)
    other_blobs = [blobs[0] + b""]  # the same bytes under another first index replace the entry
    room_for_one.remember(other, other_blobs, outcomes())
    assert room_for_one.find(other, other_blobs) is not None and room_for_one.held_bytes == size


def test_known_batches_let_the_oldest_go_when_full() -> None:
    def batch(value: float):  # type: ignore[no-untyped-def]
        answers = [(OK_ANSWERS[0][0], [encode_array(np.array([value, 1 - value]))])]
        ((header, blobs),) = MessageParser().feed(_batched(answers))
        return header, blobs, [decode_answer(h["index"], h, p) for h, p in unbatch(header, blobs)]

    first, second = batch(0.25), batch(0.5)
    known = KnownAnswers(max_bytes=len(first[1][0]))  # room for one batch
    known.remember(*first)
    known.remember(*second)
    assert known.find(first[0], first[1]) is None and known.find(second[0], second[1]) is second[2]


GARBAGE = b"\xff\xff\xff\xff" + b"garbage" * 10  # a frame length far over the limit


def test_messages_whole_before_garbage_come_with_the_error() -> None:
    parser = MessageParser()
    ready = encode_message({"op": "ready", "ok": True})
    with pytest.raises(ProtocolError) as caught:
        parser.feed(ready + encode_message({"op": "result", "index": 0}) + GARBAGE)
    assert [header["op"] for header, _ in caught.value.messages] == ["ready", "result"]


class _WritesAtSpawn(WarmParentStub):
    """A warm parent whose 'learner process' has written ``data`` to its answer pipe by the time it is started."""

    def __init__(self, data: bytes) -> None:
        super().__init__()
        self.data, self.finished = data, []
        self._answers: int | None = None

    def spawn(self, config, fds):  # type: ignore[no-untyped-def]
        self._answers = os.dup(fds[1])
        os.write(self._answers, self.data)
        return 999_999

    def finish(self, pid: int, grace: float = 0.0):  # type: ignore[no-untyped-def]
        self.finished.append(pid)
        if self._answers is not None:
            os.close(self._answers)
            self._answers = None
        return {"op": "finished", "pid": pid, "killed": True}


def test_a_ready_read_together_with_garbage_still_counts_and_the_garbage_fails_the_calls() -> None:
    """A process that imported its file and then wrote garbage (a forged frame) while answering the calls sent
    with the import: both can arrive in one read. The import succeeded; the calls did not. (The garbage used to
    discard the 'ready' read with it, so the file was graded as unimportable, for every exercise it serves.)"""
    from grader.checks.base import Call
    from grader.sandbox.calls import encode_calls
    from grader.sandbox.runner import LearnerProcess

    warm_parent = _WritesAtSpawn(encode_message({"op": "ready", "ok": True, "entries": {"f": True}}) + GARBAGE)
    process = LearnerProcess(warm_parent, {"m.py": b"def f():\n    return 1.0\n"}, "m.py", ["f"])
    try:
        assert process.start().status == "ok"
        assert warm_parent.finished == []
        calls = encode_calls([Call("f", {})])
        outcome = process.call_many(calls, batch=True)[0]
        assert outcome.status in ("protocol", "not_run")  # in a batch, the call to blame is asked again alone
        assert warm_parent.finished == [999_999] and not process.alive
    finally:
        process.close()


def test_arrays_of_more_shapes_than_the_head_caches_hold_still_encode_and_check_exactly() -> None:
    """The head caches are bounded: past their size, the shapes seen last still round-trip exactly."""
    from grader.sandbox.protocol import check_array

    for n in range(1, 5000):  # each shape a new one
        array = np.arange(float(n)).reshape(1, n) if n % 2 else np.zeros((n, 1), dtype=np.int32)
        blob = encode_array(array)
        assert check_array(blob)[1] == array.shape
        assert np.array_equal(decode_array(blob), array) and decode_array(blob).dtype == array.dtype


def _decoded(answers: list, known: KnownAnswers) -> list:  # type: ignore[type-arg]
    ((header, blobs),) = MessageParser().feed(_batched(answers))
    return known.decode(header, blobs)


def test_an_answer_seen_before_is_reused_whatever_batch_it_comes_in() -> None:
    """Children cut batches by time: the same answer in another batch, at another index, is not decoded again."""
    known = KnownAnswers()
    whole = _decoded(OK_ANSWERS, known)
    second_alone = _decoded([({**OK_ANSWERS[1][0], "index": 0}, OK_ANSWERS[1][1])], known)
    assert second_alone[0] is whole[1] and second_alone[0].value == (64.2, 1.003)
    plain = [decode_answer(h["index"], h, p) for h, p in OK_ANSWERS]
    assert [(o.status, o.digest) for o in whole] == [(o.status, o.digest) for o in plain]

    changed = [encode_array(np.float64(64.2)), encode_array(np.float64(1.0031))]
    one_bit_off = [({**OK_ANSWERS[1][0], "index": 0}, changed)]
    other = _decoded(one_bit_off, known)[0]
    assert other is not whole[1] and other.value == (64.2, 1.0031)
    other_header = [({**OK_ANSWERS[1][0], "index": 0, "types": ["float", "int"]}, OK_ANSWERS[1][1])]
    assert _decoded(other_header, known)[0] is not whole[1]  # same bytes, another header: decoded afresh


def test_failed_answers_are_decoded_afresh_in_every_batch() -> None:
    known = KnownAnswers()
    first, again = _decoded(ANSWERS, known), _decoded(ANSWERS, known)
    assert [o.status for o in first] == [o.status for o in again]
    assert all((a is b) == (a.status == "ok") for a, b in zip(first, again, strict=True))


def test_answers_kept_are_bounded_in_bytes() -> None:
    small = KnownAnswers(max_answer_bytes=100)
    big = [({**OK_ANSWERS[0][0], "index": 0}, [encode_array(np.zeros(64))])]
    assert _decoded(big, small)[0] is not _decoded(big, small)[0]  # heavier than the bound: never kept
