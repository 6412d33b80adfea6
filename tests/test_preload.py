"""Preloaded requests: a plan sent to many learners is decoded once, by the warm parent, and copied per call."""

from __future__ import annotations

import numpy as np
import pytest

from grader.checks.base import Call, TrustedFunction
from grader.results import report_to_json
from grader.sandbox import arguments as argument_decoding
from grader.sandbox import child
from grader.sandbox.arguments import preload, requested_calls
from grader.sandbox.calls import CallBatch, encode_calls
from grader.sandbox.memory import SandboxMemo
from grader.sandbox.protocol import encode_message
from grader.sandbox.requests import Request
from grader.sandbox.runner import LearnerProcess
from grader.sandbox.warm_parent import WarmParent

# Scales its argument in place (a learner's bug) and returns the new values.
MUTATES = "import numpy as np\ndef f(z, k=1.0):\n    z *= 2.0\n    return z * k\n"


def _batch() -> CallBatch:
    calls = [
        Call("f", {"z": np.array([1.0, 2.0, 3.0]), "k": 0.5}, return_inputs=True),
        Call("f", {"z": np.arange(6.0).reshape(2, 3)}, return_inputs=True),
        Call("f", {"z": np.array([4.0], dtype=np.float32), "k": 3}),
    ]
    return encode_calls(calls, {"f": ["z", "k"]})


def _plan() -> tuple[list[dict], list[bytes]]:
    batch = _batch()
    return batch.calls, batch.blobs


def _message(calls: list[dict], blobs: list[bytes]) -> bytes:
    return encode_message({"op": "call_many", "calls": calls}, blobs)


@pytest.fixture()
def preloaded(monkeypatch: pytest.MonkeyPatch) -> dict:
    held: dict = {}
    monkeypatch.setattr(argument_decoding, "_PRELOADED", held)
    monkeypatch.setattr(argument_decoding, "_preloaded_bytes", [0])
    return held


def test_a_preloaded_request_gives_each_call_the_arguments_a_full_request_would(preloaded: dict) -> None:
    calls, blobs = _plan()
    assert preload("plan", _message(calls, blobs))
    inline = requested_calls({"op": "call_many", "calls": calls}, blobs)
    held = requested_calls({"op": "call_many", "preloaded": "plan", "count": len(calls)}, [])
    assert [call["fn"] for call, _ in held] == ["f", "f", "f"]
    assert [call.get("return_inputs") for call, _ in held] == [True, True, False]
    for (_, full), (_, copied) in zip(inline, held, strict=True):
        (args, kwargs), (args2, kwargs2) = full(), copied()
        assert kwargs == kwargs2
        assert len(args) == len(args2) and args[1:] == args2[1:]  # the scale k, a plain number
        a, b = args[0], args2[0]
        assert type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
        assert b.flags.writeable and b.flags.c_contiguous


def test_a_call_that_changes_its_arguments_leaves_the_next_call_its_own_copy(preloaded: dict) -> None:
    calls, blobs = _plan()
    preload("plan", _message(calls, blobs))
    (_, arguments), *_ = requested_calls({"op": "call_many", "preloaded": "plan"}, [])
    first, _ = arguments()
    first[0] *= 100.0
    again, _ = arguments()
    assert again[0].tolist() == [1.0, 2.0, 3.0]


def test_requests_that_hand_over_the_graders_functions_are_not_preloaded(preloaded: dict) -> None:
    batch = encode_calls([Call("f", {"g": TrustedFunction("softmax")})])
    assert not preload("trusted", _message(batch.calls, batch.blobs))
    assert "trusted" not in preloaded


def test_asking_for_a_request_the_process_does_not_hold_is_answered_as_a_decode_failure(preloaded: dict) -> None:
    module = type("M", (), {"f": staticmethod(lambda: 1.0)})
    answers = [
        child.run_call(module, index, call, arguments, "/x")[0]
        for index, (call, arguments) in enumerate(
            requested_calls({"op": "call_many", "preloaded": "gone", "count": 2}, [])
        )
    ]
    assert [(a["ok"], a["stage"]) for a in answers] == [(False, "decode"), (False, "decode")]


@pytest.mark.slow
def test_the_second_learner_sent_a_plan_makes_the_warm_parent_preload_it_for_the_third(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memo = SandboxMemo()  # the session's: what its processes share
    calls = _batch()
    sent: list[bytes] = []
    short = Request.short
    monkeypatch.setattr(Request, "short", lambda self: sent.append(short(self)) or sent[-1])
    answers = []
    with WarmParent.start() as warm_parent:
        for _ in range(3):
            with LearnerProcess(warm_parent, {"m.py": MUTATES.encode()}, "m.py", ["f"], memo=memo) as process:
                assert process.start().status == "ok"
                answers.append(process.call_many(calls, batch=True))
        assert len(warm_parent.preloaded) == 1
    assert len(sent) == 1 and len(sent[0]) < 200  # only the third got the key instead of the plan
    first, _, third = answers
    assert [a.status for a in third] == ["ok"] * 3
    assert [a.digest for a in first] == [a.digest for a in third]
    assert third[0].values[0].tolist() == [1.0, 2.0, 3.0]  # (2 z) * 0.5, from the pristine z
    assert third[0].inputs_after[0].tolist() == [2.0, 4.0, 6.0]  # the change it made in place is still seen


@pytest.mark.slow
def test_a_batch_grades_the_same_with_and_without_preloaded_requests(session, root) -> None:  # type: ignore[no-untyped-def]
    learner = root / "solutions" / "stable-softmax" / "reference.py"
    reports = [session.grade(learner, exercise_ids=["stable-softmax"]) for _ in range(3)]
    assert report_to_json(reports[0]) == report_to_json(reports[2])
    assert session.warm_parent.preloaded  # the third learner process got the plan preloaded


def test_a_batch_given_a_source_has_the_key_it_would_have_had_if_made_with_it() -> None:
    """``with_given`` derives the key without encoding the calls again; it must be the key ``of`` computes."""
    plain = _batch()
    given = plain.with_given("def g():\n    return 1\n")
    made = CallBatch.of(plain.calls, plain.blobs, "def g():\n    return 1\n")
    assert given.key == made.key and given.key != plain.key
    other = given.with_given("def g():\n    return 2\n")  # from one source to another: the calls' key again
    assert other.key == CallBatch.of(plain.calls, plain.blobs, "def g():\n    return 2\n").key != given.key
    assert plain.with_given("") is plain and given.with_given(given.given) is given
