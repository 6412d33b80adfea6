"""A property judged on no numbers holds for nothing: empty results, NaN throughout, a number standing in for an array.

``np.all``, ``np.allclose`` and ``all()`` are true of nothing, and ``==``
in a relation counts NaN as equal to NaN; each check below must not hold
on such a result, and must say what came back. Results that are right
(an empty result of an empty input, NaN for NaN inputs, a constant side
written in the relation) still pass.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grader.checks.base import Check
from grader.checks.cases import Case
from grader.checks.general import InRange, Monotone
from grader.checks.identity import Identity
from grader.checks.properties import (
    Finite,
    LeavesInputUnchanged,
    NonNegative,
    OrderPreserving,
    SumsToOne,
    TranslationInvariant,
)
from grader.engine.call_loop import SourceModule, grade_implementation
from grader.engine.memory import GradingMemo
from grader.sandbox.outcomes import CallOutcome
from grader.spec.loader import load_catalog
from tests.fakes import InProcessFactory

ROOT = Path(__file__).resolve().parents[1]
Z = np.array([1.0, 2.0, 3.0])


def _ok(*values: Any) -> CallOutcome:
    arrays = [np.asarray(value, dtype=float) for value in values]
    kind = "tuple" if len(values) != 1 else "single"
    return CallOutcome(status="ok", values=arrays, kind=kind, types=["ndarray"] * len(arrays))


def _identity(relation: str) -> Identity:
    return Identity(id="i", property="identity", relation=relation)


@pytest.mark.parametrize(
    ("relation", "answers", "said"),
    [
        (
            "f(z) == f(z, axis=-1)",
            [np.full(3, np.nan), np.full(3, np.nan)],
            "both sides came back with every entry NaN",
        ),
        ("f(z) == f(z, axis=-1)", [np.empty(0), np.empty(0)], "both sides came back empty"),
        ("f(z) == f(z, axis=-1)", [np.empty(0), Z], "the left side came back empty"),
        ("f(z) <= max(z)", [np.empty(0)], "the left side came back empty"),
        ("f(z) >= g(z)", [np.array(0.5), Z], "came back a single number, 0.5, where an array of shape (3,)"),
        ("f(z) >= max(z, axis=-1) + z", [np.array(9.0)], "the left side came back a single number, 9"),
    ],
    ids=["all-nan", "both-empty", "one-empty", "empty-against-a-number", "number-for-array", "number-for-input-shape"],
)
def test_identity_does_not_hold_on_nothing(relation: str, answers: list[np.ndarray], said: str) -> None:
    finding = _identity(relation).judge(Case(args={"z": Z}), [_ok(Z), *(_ok(answer) for answer in answers)])
    assert finding is not None and said in finding.got


@pytest.mark.parametrize(
    ("relation", "args", "answers"),
    [
        ("f(z) == f(z, axis=-1)", {"z": np.array([np.nan, 1.0])}, [np.full(2, np.nan), np.full(2, np.nan)]),
        ("f(z) == f(z, axis=-1)", {"z": np.array([np.inf, np.inf])}, [np.full(2, np.nan), np.full(2, np.nan)]),
        ("f(z) == f(z, axis=-1)", {"z": Z}, [np.array([np.nan, 1.0, 2.0]), np.array([np.nan, 1.0, 2.0])]),
        ("f(z) == f(z, axis=-1)", {"z": np.empty(0)}, [np.empty(0), np.empty(0)]),
        ("f(z) >= 0", {"z": Z}, [Z]),
        ("f(z) == f(z, axis=-1)", {"z": Z}, [np.array(2.0), np.array(2.0)]),
    ],
    ids=["nan-input", "inf-input", "some-nan", "empty-input", "constant-side", "numbers-both-sides"],
)
def test_identity_still_holds_where_something_was_compared(
    relation: str, args: dict[str, Any], answers: list[np.ndarray]
) -> None:
    outcomes = [_ok(answers[0]), *(_ok(answer) for answer in answers)]
    assert _identity(relation).judge(Case(args=args), outcomes) is None


EMPTY = np.empty(0)


@pytest.mark.parametrize(
    ("check", "answer"),
    [
        (SumsToOne(id="c", property="sums-to-one", axis_arg=None), np.empty((0, 3))),
        (NonNegative(id="c", property="non-negative"), EMPTY),
        (InRange(id="c", property="in-range", low=0.0, high=1.0), EMPTY),
        (Monotone(id="c", property="monotone", arg="z"), EMPTY),
        (OrderPreserving(id="c", property="order-preserving"), EMPTY),
        (Finite(id="c", property="finite"), EMPTY),
        (TranslationInvariant(id="c", property="translation-invariant"), EMPTY),
    ],
    ids=lambda value: getattr(value, "property", None),
)
def test_a_property_of_an_empty_result_does_not_hold(check: Check, answer: np.ndarray) -> None:
    finding = check.judge(Case(args={"z": Z}), [_ok(answer)] * 3)
    assert finding is not None and "empty" in finding.got


@pytest.mark.parametrize(
    "check",
    [InRange(id="c", property="in-range", low=0.0, high=1.0), Finite(id="c", property="finite")],
    ids=["in-range", "finite"],
)
def test_an_empty_result_of_an_empty_input_still_holds(check: Check) -> None:
    assert check.judge(Case(args={"z": EMPTY}), [_ok(EMPTY)]) is None


def test_finite_on_an_empty_witness_or_tuple_does_not_hold() -> None:
    check = Finite(id="scores-are-finite", property="finite")
    witness = check.judge(Case(args={}), [_ok(EMPTY)])
    assert witness is not None and witness.got == "an empty array of shape (0,)"
    pair = check.judge(Case(args={}), [_ok(EMPTY, EMPTY)])
    assert pair is not None and pair.got == "a tuple of 2 empty arrays"
    nothing = CallOutcome(status="ok", values=[], kind="tuple", types=[])
    assert check.judge(Case(args={}), [nothing]) is not None
    assert check.judge(Case(args={}), [_ok([2.0, -3.0])]) is None


def test_inputs_not_reported_back_are_not_left_unchanged() -> None:
    check = LeavesInputUnchanged(id="c", property="leaves-input-unchanged")
    finding = check.judge(Case(args={"z": Z}), [_ok(Z)])
    assert finding is not None and "z was not reported back" in finding.got
    reported = _ok(Z)
    reported.inputs_after = [Z.copy()]
    assert check.judge(Case(args={"z": Z}), [reported]) is None


@pytest.mark.parametrize(
    "body",
    ["return np.full(np.shape(z), np.nan)", "return np.empty(0)"],
    ids=["all-nan", "empty"],
)
def test_a_submission_returning_nothing_earns_no_public_identity_point(body: str) -> None:
    exercise = load_catalog(ROOT / "exercises", only=["log-softmax"]).exercise("log-softmax")
    source = f"import numpy as np\n\n\ndef log_softmax(z, axis=-1):\n    {body}\n"
    result = grade_implementation(
        exercise,  # type: ignore[arg-type]
        SourceModule({"mine.py": source.encode()}, "mine.py"),
        InProcessFactory(),
        public_only=True,
        memo=GradingMemo(),
    )
    public = {check.id: check for check in result.checks}
    assert "default-axis-is-last" in public
    assert public["default-axis-is-last"].status == "failed" and public["default-axis-is-last"].score == 0
    assert result.score == 0


def test_learner_against_learner_checks_do_not_hold_on_nothing() -> None:
    from grader.checks.bridge import MeanOverBatch
    from grader.checks.reproducible import ChangesWithArgument, Reproducible

    args = {"d_k": 4, "n_samples": 100, "seed": 0}
    nan_pair = _ok(np.nan, np.nan)
    check = Reproducible(id="c", property="reproducible", defaults={"n_samples": 10000, "seed": 0})
    reproducible = check.judge(Case(args=args), [nan_pair, nan_pair])
    assert reproducible is not None and "every entry NaN" in reproducible.got
    changes = ChangesWithArgument(id="c", property="changes-with-argument", arg="seed", values=[0, 1])
    changed = changes.judge(Case(args=args), [nan_pair, nan_pair])
    assert changed is not None and "every entry NaN" in changed.got
    batch = MeanOverBatch(id="c", property="mean-over-batch")
    case = Case(args={"logits": np.zeros((2, 3)), "targets": np.zeros(2)})
    mean = batch.judge(case, [_ok(EMPTY), _ok(EMPTY)])
    assert mean is not None and "came back empty" in mean.got
