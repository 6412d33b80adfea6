"""What a learner process may send the grader: each limit refused on a length prefix, before anything is read."""

from __future__ import annotations

import os
import struct

import numpy as np
import pytest

from grader.engine import reasons
from grader.sandbox.answers import decode_answer
from grader.sandbox.arguments import decode_arguments
from grader.sandbox.frames import LimitExceeded, MessageParser, ProtocolError
from grader.sandbox.outcomes import CallOutcome
from grader.sandbox.protocol import encode_array, encode_message
from grader.sandbox.replies import ANSWER_BYTES, EXERCISE_BYTES, HEADER_BYTES, SUBMISSION_BYTES, ReplyBudget, size_error

HEADER = {"op": "result", "index": 0, "ok": True, "kind": "single", "types": ["ndarray"], "values": 1}


def _parser(budget: ReplyBudget) -> MessageParser:
    return MessageParser(max_header=budget.header, allowance=budget)


def test_a_frame_over_the_limit_of_one_answer_is_refused_on_its_length_prefix() -> None:
    """The prefix alone is enough: the payload it announces is never waited for, read or buffered."""
    budget = ReplyBudget(answer=1000, header=100)
    parser = _parser(budget)
    head = encode_message(HEADER, [b""])[:-4]  # the header frame, without the array frame
    assert parser.feed(head) == []
    with pytest.raises(LimitExceeded) as caught:
        parser.feed(struct.pack(">I", 60 << 20))
    assert (caught.value.scope, caught.value.limit) == ("answer", 1000)
    assert budget.spent is None  # one answer too large: the next process may still answer


def test_an_answer_counts_every_frame_of_its_message() -> None:
    budget = ReplyBudget(answer=1000, header=200)
    parser = _parser(budget)
    small = encode_array(np.zeros(50))  # 400 bytes of numbers: two fit, three do not
    assert len(parser.feed(encode_message(dict(HEADER, values=2), [small, small]))) == 1
    with pytest.raises(LimitExceeded):
        parser.feed(encode_message(dict(HEADER, values=3), [small, small, small]))


def test_the_exercise_and_submission_limits_span_messages_and_stay_reached() -> None:
    budget = ReplyBudget(answer=1000, exercise=3000, submission=5000, header=200)
    message = encode_message(HEADER, [encode_array(np.zeros(100))])  # about 900 bytes
    parser = _parser(budget)
    for _ in range(3):
        assert len(parser.feed(message)) == 1
    with pytest.raises(LimitExceeded) as caught:
        parser.feed(message)
    assert caught.value.scope == "exercise" and budget.spent_error() == size_error("exercise", 3000)
    with pytest.raises(LimitExceeded):  # reached: even a small frame of another process is refused now
        _parser(budget).feed(encode_message({"op": "ready"}))
    budget.start_exercise()
    parser = _parser(budget)
    assert len(parser.feed(message)) == 1 and budget.spent is None
    with pytest.raises(LimitExceeded) as caught:
        for _ in range(3):
            parser.feed(message)
    assert caught.value.scope == "submission"
    budget.start_exercise()
    assert budget.spent_error() == size_error("submission", 5000)  # spent for every later exercise


def test_a_header_larger_than_allowed_is_refused_before_it_is_read() -> None:
    with pytest.raises(ProtocolError, match="larger than allowed"):
        _parser(ReplyBudget(answer=1 << 20, header=100)).feed(struct.pack(">I", 1000))


def test_a_message_that_was_not_asked_for_is_refused_on_its_length_prefix() -> None:
    """Each message becomes Python objects many times its bytes: a reader that counts what it awaits takes no more."""
    parser = MessageParser()
    parser.owed = 2
    message = encode_message({"op": "result"})
    assert len(parser.feed(message * 2)) == 2
    with pytest.raises(ProtocolError, match="not asked for"):
        parser.feed(message[:4])


def test_a_batch_holding_answers_to_calls_not_asked_is_refused_before_it_is_taken_apart() -> None:
    from grader.sandbox.calls import CallBatch
    from grader.sandbox.runner import LearnerProcess
    from tests.fakes import ScriptedWarmParent

    header = {"op": "results", "first": 0, "kinds": [{"ok": False}], "answers": [0] * 3, "sizes": []}
    answered = {}
    for asked in (3, 2):
        process = LearnerProcess(ScriptedWarmParent([encode_message(header, [b""])]), {"m.py": b""}, "m.py", ["f"])
        try:
            assert process.start().status == "ok"
            calls = CallBatch.of([{"fn": "f", "args": [], "return_inputs": False}] * asked)
            answered[asked] = process.call_many(calls)
        finally:
            process.close()
    assert [o.status for o in answered[3]] == ["raised"] * 3  # three asked: the batch comes apart into three
    first, second = answered[2]
    assert first.status == "protocol" and "not asked" in first.detail and second.status == "not_run"


def test_a_refused_reply_is_a_fact_the_grader_phrases() -> None:
    from grader.sandbox.answers import refused_reply as _refused

    outcome = _refused(LimitExceeded("answer", ANSWER_BYTES))
    assert outcome.status == "bad_value" and outcome.error == size_error("answer", ANSWER_BYTES)
    assert reasons.describe_error(outcome, "softmax") == "softmax returned more than 1 MiB in one answer (limit 1 MiB)"
    for scope, limit, words in (
        ("exercise", EXERCISE_BYTES, "in the answers of one exercise (limit 4 MiB)"),
        ("submission", SUBMISSION_BYTES, "in the answers of one submission (limit 16 MiB)"),
    ):
        outcome = CallOutcome(status="bad_value", error=size_error(scope, limit))
        assert reasons.describe_error(outcome, "f").endswith(words)
    assert _refused(ProtocolError("garbage")).status == "protocol"


def _returning(value: object, *, return_inputs: bool = False) -> dict:  # type: ignore[type-arg]
    """What the learner process sends for one call of ``f(z)`` whose code returns ``value``."""
    from grader.sandbox import child

    module = type("Module", (), {"f": staticmethod(lambda z: value)})
    call = {"fn": "f", "args": [{"t": "array", "i": 0}], "return_inputs": return_inputs}
    blobs = [encode_array(np.zeros(3))]
    header, _ = child.run_call(module, 0, call, lambda: decode_arguments(call, blobs), "/nonexistent")
    return header


@pytest.mark.parametrize(
    "value",
    [
        np.ones(ANSWER_BYTES // 8 + 1),
        (np.ones(ANSWER_BYTES // 16),) * 3,
        [[1.0] * 1024] * 129,
        np.ones(ANSWER_BYTES // 2, dtype=np.int8),
    ],
    ids=["array", "tuple", "nested-lists", "travels-wider"],
)
def test_a_learner_process_refuses_a_value_over_the_limit_of_one_answer(value: object) -> None:
    """Refused in the process, before it is encoded: the grader reads a fact, not the value."""
    header = _returning(value)
    assert header["ok"] is False and header["stage"] == "value" and header["error"]["kind"] == "size"
    assert _returning(np.ones(ANSWER_BYTES // 8 - 64))["ok"] is True  # just under it: answered


def test_the_inputs_a_call_returns_count_toward_its_answer() -> None:
    assert _returning(np.ones(ANSWER_BYTES // 8 - 64), return_inputs=True)["ok"] is True
    assert _returning(np.ones(ANSWER_BYTES // 8 - 2), return_inputs=True)["error"]["kind"] == "size"


def test_the_grader_names_its_own_limit_for_a_value_the_process_refused() -> None:
    from grader.sandbox.runner import LearnerProcess

    process = LearnerProcess(None, {}, "mine.py", [])  # type: ignore[arg-type]
    header = dict(_returning(np.ones(ANSWER_BYTES)), op="result")
    header["error"]["limit"] = 5  # what the process says of the limit is not taken
    outcome = decode_answer(0, header, [])
    process.limit_facts(outcome.error)  # type: ignore[arg-type]
    assert reasons.describe_error(outcome, "softmax") == "softmax returned more than 1 MiB in one answer (limit 1 MiB)"


def test_a_large_answer_is_not_kept_decoded_once_judged() -> None:
    large = decode_answer(0, dict(HEADER), [encode_array(np.ones(100_000))])
    small = decode_answer(0, dict(HEADER), [encode_array(np.ones(3))])
    for outcome in (large, small):
        assert outcome.values[0].sum() == outcome.values[0].size
        outcome.release()
    assert not large.decoded and small.decoded  # type: ignore[attr-defined]
    assert large.values[0].shape == (100_000,)  # read again: decoded again


def _frames(data: bytes) -> list[tuple[int, int]]:
    """The size of each message in ``data``: its header frame, and all its frames."""
    sizes, offset = [], 0
    while offset < len(data):
        (head,) = struct.unpack_from(">I", data, offset)
        blobs = int(data[offset + 4 : offset + 4 + head].split(b'"blobs":')[1].rstrip(b"}"))
        end = offset + 4 + head
        for _ in range(blobs):
            end += 4 + struct.unpack_from(">I", data, end)[0]
        sizes.append((head, end - offset))
        offset = end
    return sizes


@pytest.mark.parametrize(
    "answers",
    [
        [(HEADER, [encode_array(np.ones(40_000))])] * 12,  # 320 KB each: one answer per batch
        [(HEADER, [encode_array(np.ones(1000))])] * 200,
        [
            (
                {
                    "op": "result",
                    "ok": False,
                    "stage": "call",
                    "error": {
                        "type": "E",
                        "message": "\U0001f600" * 500,
                        "frames": [{"text": "\U0001f600" * 200}] * 20,
                    },
                },
                [],
            )
        ]
        * 30,  # distinct long error headers, 68 KB each once escaped
    ],
    ids=["large-answers", "many-answers", "long-errors"],
)
def test_a_batch_of_answers_is_never_larger_than_one_answer_may_be(answers: list) -> None:  # type: ignore[type-arg]
    from grader.sandbox import answer_batches

    sent: list[bytes] = []
    batch = answer_batches.Answers(
        type("Channel", (), {"write": lambda self, data: sent.append(bytes(data))})(), batched=True
    )
    for index, (header, payloads) in enumerate(answers):
        error = header.get("error")
        batch.add(dict(header, index=index, **({"error": dict(error, type=f"E{index}")} if error else {})), payloads)
    batch.flush()
    sizes = _frames(b"".join(sent))
    assert all(head <= HEADER_BYTES and whole <= ANSWER_BYTES + HEADER_BYTES for head, whole in sizes), sizes
    budget = ReplyBudget(exercise=1 << 30, submission=1 << 30)
    messages = MessageParser(max_header=HEADER_BYTES, allowance=budget).feed(b"".join(sent))
    assert sum(len(header["answers"]) for header, _ in messages) == len(answers)


def test_an_exception_reports_no_more_frames_than_the_grader_shows() -> None:
    from grader.sandbox import learner_errors

    scratch = os.path.dirname(os.path.abspath(__file__))

    def deep(n: int) -> None:
        if n:
            deep(n - 1)
        raise ValueError("x")

    try:
        deep(100)
    except ValueError as exc:
        described = learner_errors.describe_exception(exc, scratch)
    assert len(described["frames"]) == 20  # the outermost 20, as the grader keeps them
    assert described["frames"][0]["function"] == "test_an_exception_reports_no_more_frames_than_the_grader_shows"
