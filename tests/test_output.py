"""A learner process's output captured per exercise and cut by call: what the import printed, what each call did."""

from __future__ import annotations

from grader.sandbox.calls import CallBatch
from grader.sandbox.output import OutputCapture
from grader.sandbox.protocol import encode_message
from grader.sandbox.runner import LearnerProcess
from tests.fakes import ScriptedWarmParent

CALL = {"fn": "f", "args": [], "return_inputs": False}
RAISED = {"ok": False, "stage": "call", "error": {"type": "ValueError", "message": "no", "frames": []}}


def _capture(text: bytes, keep: int = 1000, start: int = 0) -> OutputCapture:
    capture = OutputCapture(keep, 1 << 20, start=start)
    capture.add(text)
    return capture


def test_a_capture_cuts_its_output_where_the_process_said_each_call_ended() -> None:
    capture = _capture(b"import\none\ntwo\nhung\n", start=100)  # the process printed 100 bytes for an earlier exercise
    capture.imported = 107
    capture.called(3, 107, 111)
    capture.called(5, 111, 115)
    capture.called(6, 115, None)  # never answered: the rest is its
    assert capture.import_excerpt() == "import\n"
    assert capture.call_excerpts() == {3: "one\n", 5: "two\n", 6: "hung\n"}
    assert capture.excerpt() == "import\none\ntwo\nhung\n"


def test_a_capture_not_cut_by_call_says_so() -> None:
    capture = _capture(b"printed\n")
    assert capture.import_excerpt() is None and capture.call_excerpts() == {}
    assert capture.excerpt() == "printed\n"


def test_counts_beyond_what_was_read_are_clamped_and_bytes_past_the_kept_ones_said() -> None:
    capture = _capture(b"abcdefghij" * 3, keep=12)
    capture.imported = 2
    capture.called(0, 2, 10)
    capture.called(1, 10, 20)  # kept up to 12: two bytes shown, eight counted
    capture.called(2, 20, 10**9)  # the process's word, larger than what it printed
    capture.called(3, -50, 1)  # from before this exercise's share: only the share's bytes shown
    found = capture.call_excerpts()
    assert found[0] == "cdefghij" and found[1] == "ab\n[... 8 more bytes not shown]"
    assert found[2] == "\n[... 10 more bytes not shown]" and found[3] == "a" and 4 not in found


def test_a_call_excerpt_is_as_safe_as_the_whole_one() -> None:
    capture = _capture(b"\x1b[31m/tmp/scratch-x1/mine.py\n")
    capture.hide.append("/tmp/scratch-x1")
    capture.imported = 0
    capture.called(0, 0, capture.total)
    assert capture.call_excerpts()[0] == capture.excerpt() == "\\x1b[31mmine.py\n"


def test_a_process_marks_what_its_import_and_each_answered_call_printed() -> None:
    """The counts come in ``ready`` and in a batch's marks; the bytes on the output pipe; the runner joins them."""
    batch = {"op": "results", "first": 0, "kinds": [RAISED], "answers": [0, 0, 0], "sizes": [], "printed": [[1, 11]]}
    alone = encode_message({"op": "result", "index": 0, **RAISED, "printed": 15})
    warm = ScriptedWarmParent(
        [encode_message(batch, [b""]), alone], printing=[b"import\n", b"one\n", b"two\n"], ready={"printed": 7}
    )
    process = LearnerProcess(warm, {"m.py": b""}, "m.py", ["f"])
    try:
        assert process.start().status == "ok"
        assert [o.status for o in process.call_many(CallBatch.of([CALL] * 3), batch=True)] == ["raised"] * 3
        assert [o.status for o in process.call_many(CallBatch.of([CALL]))] == ["raised"]
    finally:
        process.close()
    capture = process.output
    assert capture.import_excerpt() == "import\n"
    assert capture.call_excerpts() == {1: "one\n", 3: "two\n"}  # the second request's call is the fourth sent
