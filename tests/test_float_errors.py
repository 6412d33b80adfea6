"""NumPy floating-point errors: recorded in the learner process per call, carried to the parent, judged."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grader.checks.cases import Case
from grader.checks.float_errors import NoFloatWarnings, describe_float_error
from grader.sandbox import answer_batches, child
from grader.sandbox.answers import decode_answer, unbatch
from grader.sandbox.outcomes import CallOutcome
from grader.sandbox.protocol import MessageParser
from grader.sandbox.untrusted import clean_float_errors

NAIVE = "import numpy as np\n\n\ndef sigmoid(x):\n    return 1 / (1 + np.exp(-x))\n"
IGNORES = (
    "import numpy as np\n\n\ndef sigmoid(x):\n    with np.errstate(all='ignore'):\n"
    "        return 1 / (1 + np.exp(-x))\n"
)
HELPER = (
    "import numpy as np\n\n\ndef _shift(x):\n    return np.log(x)\n\n\ndef sigmoid(x):\n"
    "    y = np.array(x) - np.inf\n    return _shift(np.abs(x)) + 0 * y\n"
)


def _module(scratch: Path, source: str) -> Any:
    path = scratch / "mine.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("mine_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _call(scratch: Path, source: str, x: list[float]) -> tuple[dict[str, Any], list[bytes]]:
    module = _module(scratch, source)
    arguments = np.array(x)
    with warnings.catch_warnings():  # a learner process has no pytest warning filters
        warnings.simplefilter("ignore")
        return child.run_call(module, 0, {"fn": "sigmoid"}, lambda: ([arguments], {}), str(scratch))


def test_an_overflow_is_recorded_with_the_ufunc_and_the_learners_line(tmp_path: Path) -> None:
    header, _ = _call(tmp_path, NAIVE, [-1000.0, 0.0])
    assert header["ok"] is True
    assert header["float_errors"] == [
        {"kind": "overflow", "in": "exp", "file": "mine.py", "line": 5, "text": "return 1 / (1 + np.exp(-x))"}
    ]


def test_underflow_is_not_an_error_and_a_clean_call_reports_nothing(tmp_path: Path) -> None:
    header, _ = _call(tmp_path, NAIVE, [1000.0, 0.0])  # exp(-1000) underflows to 0: fine
    assert "float_errors" not in header


def test_learner_code_that_sets_its_own_errstate_is_its_own_business(tmp_path: Path) -> None:
    header, _ = _call(tmp_path, IGNORES, [-1000.0])
    assert "float_errors" not in header


RAISES = (
    "import numpy as np\n\nnp.seterr(over='raise')\n\n\ndef sigmoid(x):\n    try:\n"
    "        return 1 / (1 + np.exp(-x))\n    except FloatingPointError:\n        return np.full_like(x, -1.0)\n"
)


def test_a_mode_the_learner_set_at_import_is_theirs_and_the_others_are_still_watched(tmp_path: Path) -> None:
    before = np.geterr()
    try:
        module = _module(tmp_path, RAISES)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            header, payload = child.run_call(
                module, 0, {"fn": "sigmoid"}, lambda: ([np.array([-1000.0, np.inf])], {}), str(tmp_path)
            )
    finally:
        np.seterr(**before)
    outcome = decode_answer(0, header, payload)
    np.testing.assert_array_equal(outcome.values[0], [-1.0, -1.0])
    assert outcome.float_errors == []  # the overflow raised, as the learner asked, before anything else ran


CATCHES = (
    "import warnings\n\nimport numpy as np\n\n\ndef sigmoid(x):\n    with warnings.catch_warnings():\n"
    "        warnings.simplefilter('error')\n        try:\n            return 1 / (1 + np.exp(-x))\n"
    "        except RuntimeWarning as caught:\n            return np.full_like(x, len(str(caught)))\n"
)


def test_a_learner_catching_numpys_warning_still_gets_it_and_nothing_is_recorded(tmp_path: Path) -> None:
    header, payload = _call(tmp_path, CATCHES, [-1000.0])
    np.testing.assert_array_equal(decode_answer(0, header, payload).values[0], [len("overflow encountered in exp")])
    assert "float_errors" not in header


def test_each_kind_is_recorded_once_at_the_innermost_learner_frame(tmp_path: Path) -> None:
    header, _ = _call(tmp_path, HELPER, [0.0, 0.0])
    events = header["float_errors"]
    assert [(e["kind"], e["in"], e["line"]) for e in events] == [("divide", "log", 5), ("invalid", "multiply", 10)]
    header, _ = _call(tmp_path, HELPER, [np.inf, 1.0])
    assert [(e["kind"], e["in"]) for e in header["float_errors"]] == [("invalid", "subtract")]


def test_the_error_mode_is_restored_after_the_call(tmp_path: Path) -> None:
    before = np.geterr()
    _call(tmp_path, NAIVE, [-1000.0])
    assert np.geterr() == before


def test_float_errors_reach_the_parent_alone_and_in_a_batch(tmp_path: Path) -> None:
    answers = [_call(tmp_path, NAIVE, x) for x in ([-1000.0], [1.0], [-1000.0])]
    alone = decode_answer(0, *next(iter(MessageParser().feed(answer_batches.encode_answer(*answers[0])))))
    assert [e["kind"] for e in alone.float_errors] == ["overflow"]

    written: list[bytes] = []

    class Channel:
        def write(self, data: bytes) -> None:
            written.append(bytes(data))

    batch = answer_batches.Answers(Channel(), batched=True, every=60.0)
    for index, (header, payload) in enumerate(answers):
        batch.add(dict(header, index=index), payload)
    batch.flush()
    (message,) = MessageParser().feed(b"".join(written))
    outcomes = [decode_answer(i, h, p) for i, (h, p) in enumerate(unbatch(*message))]
    assert [bool(o.float_errors) for o in outcomes] == [True, False, True]
    assert outcomes[0].float_errors[0]["text"] == "return 1 / (1 + np.exp(-x))"


def test_the_same_numbers_with_an_overflow_are_a_different_answer(tmp_path: Path) -> None:
    header, payload = _call(tmp_path, NAIVE, [-1000.0])
    quiet = {key: value for key, value in header.items() if key != "float_errors"}
    assert decode_answer(0, header, payload).digest != decode_answer(0, quiet, payload).digest


def test_a_childs_report_is_cleaned_before_use() -> None:
    cleaned = clean_float_errors(
        [
            {"kind": "overflow", "in": "exp\x1b[2J", "file": "a.py", "line": 3, "text": "x\ny", "extra": 1},
            {"kind": "divide", "in": "log", "file": "a.py", "line": "3"},
            {"kind": "overflow", "in": "log"},
            {"kind": "underflow", "in": "exp"},
            "junk",
        ]
        + [{"kind": "invalid"}] * 100
    )
    assert cleaned == [
        {"kind": "overflow", "in": "exp\\x1b[2J", "file": "a.py", "line": 3, "text": "x y"},
        {"kind": "divide", "in": "log"},
    ]
    assert clean_float_errors("not a list") == []


def _outcome(events: list[dict[str, Any]]) -> CallOutcome:
    return CallOutcome(status="ok", values=[np.zeros(1)], float_errors=events)


def test_no_float_warnings_names_the_learners_line() -> None:
    check = NoFloatWarnings(id="w", property="no-float-warnings")
    case = Case(args={"x": np.array([-1000.0])})
    assert check.judge(case, [_outcome([])]) is None
    event = {"kind": "overflow", "in": "exp", "file": "mine.py", "line": 3, "text": "return 1 / (1 + np.exp(-x))"}
    finding = check.judge(case, [_outcome([event, {"kind": "invalid", "in": "divide"}])])
    assert finding is not None
    assert finding.got == "exp overflowed at mine.py line 3: return 1 / (1 + np.exp(-x)) (and 1 more kind)"
    assert finding.expected == "the result computed without overflow, invalid values or division by zero"


@pytest.mark.parametrize(
    ("event", "text"),
    [
        ({"kind": "divide", "in": "log"}, "log divided by zero"),
        (
            {"kind": "invalid", "in": "subtract", "file": "a.py", "line": 2},
            "subtract gave an invalid value (nan) at a.py line 2",
        ),
        ({"kind": "overflow", "in": ""}, "a computation overflowed"),
    ],
    ids=["no-frame", "no-text", "no-ufunc"],
)
def test_describe_float_error_says_what_it_knows(event: dict[str, Any], text: str) -> None:
    assert describe_float_error(event) == text


POISONS = (
    "import numpy as np\n\n\ndef sigmoid(x):\n    record = np.geterrcall()\n"
    "    record._events = [{'kind': 'overflow', 'in': object()}, 5, {'kind': 'divide', 'in': 'x' * 10000, 'line': 7},"
    " {1: 2}]\n    return x\n"
)


def test_a_learner_writing_into_the_record_sends_only_well_formed_events(tmp_path: Path) -> None:
    header, payload = _call(tmp_path, POISONS, [1.0])
    assert header["float_errors"] == [{"kind": "overflow"}, {"kind": "divide", "in": "x" * 200, "line": 7}]
    answer_batches.encode_answer(header, payload)  # plain JSON: the answer can be sent


def test_the_warning_numpy_would_give_is_still_given_where_the_learner_called(tmp_path: Path) -> None:
    module = _module(tmp_path, NAIVE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        header, _ = child.run_call(module, 0, {"fn": "sigmoid"}, lambda: ([np.array([-1000.0])], {}), str(tmp_path))
    assert [(str(w.message), w.category, Path(w.filename).name, w.lineno) for w in caught] == [
        ("overflow encountered in exp", RuntimeWarning, "mine.py", 5)
    ]
    assert header["float_errors"][0]["kind"] == "overflow"
