"""The guard (responds-to-input) and the credit rule (engine/credit.py), with the in-process fake."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.engine.call_loop import SourceModule, grade_implementation
from grader.engine.credit import apply_credit
from grader.engine.memory import GradingMemo
from grader.results import CheckResult
from tests.fakes import InProcessFactory

ROOT = Path(__file__).resolve().parents[1]
SINGLE_BUG = ROOT / "tests" / "single_bug"
HEADER = b"import numpy as np\n"
ONE_BUG = HEADER + (
    b"def softmax(z, axis=-1):\n"
    b"    z = np.asarray(z, dtype=float)\n"
    b"    e = np.abs(z - z.max(axis=axis, keepdims=True))\n"  # abs in place of exp: wrong, but computed
    b"    return e / e.sum(axis=axis, keepdims=True)\n"
)
NOISY = HEADER + (  # right values, rounded to float32 and back: noisy at the 1e-7 level, still computed
    b"def softmax(z, axis=-1):\n"
    b"    z = np.asarray(z, dtype=np.float32)\n"
    b"    e = np.exp(z - z.max(axis=axis, keepdims=True))\n"
    b"    return (e / e.sum(axis=axis, keepdims=True)).astype(float)\n"
)
NOT_COMPUTED = {
    "constant": HEADER + b"def softmax(z, axis=-1):\n    return np.full(np.shape(z), 0.25)\n",
    "uniform": HEADER
    + b"def softmax(z, axis=-1):\n    z = np.asarray(z, dtype=float)\n    return np.ones_like(z) / z.shape[axis]\n",
    "ranks": HEADER + b"def softmax(z, axis=-1):\n"
    b"    r = np.argsort(np.argsort(z, axis=axis), axis=axis) + 1.0\n"
    b"    return r / r.sum(axis=axis, keepdims=True)\n",
    "table": (SINGLE_BUG / "stable-softmax" / "fake_lookup_table.py").read_bytes(),
}
TABLE_WITH_SOFTMAX_FALLBACK_ELSEWHERE = HEADER + (  # a table of one public input; a shifted softmax elsewhere
    b"def softmax(z, axis=-1):\n"
    b"    z = np.asarray(z, dtype=float)\n"
    b"    if z.tolist() == [1.0, 2.0, 3.0]:\n"
    b"        return np.array([0.2, 0.3, 0.5])\n"
    b"    e = np.exp(z - z.max(axis=axis, keepdims=True))\n"
    b"    return e / e.sum(axis=axis, keepdims=True)\n"
)


@pytest.fixture()
def exercise(catalog):
    return catalog.exercise("stable-softmax")


def _grade(exercise, source: bytes):
    return grade_implementation(
        exercise, SourceModule({"mine.py": source}, "mine.py"), InProcessFactory(), memo=GradingMemo(), references=ROOT
    )


def _check(result, check_id):
    return next(c for c in result.checks if c.id == check_id)


def test_guard_holds_for_a_wrong_computation_and_every_held_property_earns_its_points(exercise) -> None:
    result = _grade(exercise, ONE_BUG)
    assert _check(result, "responds-to-input").status == "passed"
    held = [c for c in result.checks if c.status == "passed"]
    assert {"leaves-input-unchanged", "shape-and-dtype"} <= {c.id for c in held}
    assert result.score == sum(c.max_score for c in held) > 0
    assert not [c for c in result.checks if c.status == "skipped"]


def test_guard_holds_for_rounding_noise(exercise) -> None:
    assert _check(_grade(exercise, NOISY), "responds-to-input").status == "passed"


@pytest.mark.parametrize("kind", sorted(NOT_COMPUTED))
def test_guard_fails_what_is_not_computed_and_nothing_else_is_credited(exercise, kind: str) -> None:
    result = _grade(exercise, NOT_COMPUTED[kind])
    guard = _check(result, "responds-to-input")
    assert guard.status == "failed"
    assert result.score == 0.0
    skipped = [c for c in result.checks if c.status == "skipped"]
    assert skipped, "some property held by accident, and is reported as not credited"
    for check in skipped:
        assert check.reason.startswith("Not credited: this property held, but check responds-to-input found ")


def test_guard_names_a_jump_at_a_tabulated_public_input(exercise) -> None:
    guard = _check(_grade(exercise, TABLE_WITH_SOFTMAX_FALLBACK_ELSEWHERE), "responds-to-input")
    assert guard.status == "failed"
    assert guard.got is not None and guard.got.startswith("a jump")
    assert guard.input is not None and "1., 2., 3." in guard.input


def test_guard_without_its_run_credits_every_public_check(exercise) -> None:
    result = grade_implementation(
        exercise,
        SourceModule({"mine.py": NOT_COMPUTED["uniform"]}, "mine.py"),
        InProcessFactory(),
        memo=GradingMemo(),
        public_only=True,
    )
    assert all(c.id != "responds-to-input" for c in result.checks)
    assert _check(result, "rows-sum-to-one").status == "passed"


def _results(exercise, guard_status: str) -> list[CheckResult]:
    results = []
    for check in exercise.checks:
        status = guard_status if check.id == exercise.gate else "passed"
        results.append(
            CheckResult(
                id=check.id,
                status=status,  # type: ignore[arg-type]
                score=check.points if status == "passed" else 0.0,
                max_score=check.points,
                visibility=check.visibility,
                reason="Held.",
                got="square_normalise raised ValueError: no" if status == "error" else None,
            )
        )
    return results


@pytest.mark.parametrize("guard_status", ["failed", "error"])
def test_a_failed_or_raising_guard_withholds_its_entry_only(catalog, guard_status: str) -> None:
    exercise = catalog.exercise("square-breaks-order")
    results = _results(exercise, guard_status)
    apply_credit(exercise, results)
    guarded = exercise.entry_of(next(c for c in exercise.checks if c.id == exercise.gate))
    for check, result in zip(exercise.checks, results, strict=True):
        if check.id == exercise.gate:
            continue
        if exercise.entry_of(check) == guarded:
            assert (result.status, result.score) == ("skipped", 0.0)
            assert result.reason.startswith("Not credited:") and result.reason.endswith("Held.")
        else:  # order_counterexample's checks do not depend on square_normalise computing
            assert (result.status, result.score) == ("passed", check.points)
    if guard_status == "error":
        assert "got square_normalise raised ValueError" in results[0].reason


@pytest.mark.parametrize("guard_status", ["passed", "timeout"])
def test_a_holding_or_slow_guard_withholds_nothing(catalog, guard_status: str) -> None:
    exercise = catalog.exercise("square-breaks-order")
    results = _results(exercise, guard_status)
    apply_credit(exercise, results)
    assert all(r.status == "passed" for r in results if r.id != exercise.gate)


def test_raising_on_the_guards_simplest_input_does_not_hide_a_constant(exercise) -> None:
    source = HEADER + (
        b"def softmax(z, axis=-1):\n"
        b"    if np.size(z) == 3:\n"
        b"        raise ValueError('not this one')\n"
        b"    return np.full(np.shape(z), 0.25)\n"
    )
    result = _grade(exercise, source)
    assert _check(result, "responds-to-input").status in {"failed", "error"}
    assert result.score == 0.0


def test_a_step_in_some_entries_is_a_branch_of_real_code_not_a_lookup(catalog) -> None:
    # exp(x) where x < 0 forgets its denominator: sigmoid steps at 0 in that entry only, the rest move smoothly.
    source = (
        b"import numpy as np\n\ndef sigmoid(x):\n    x = np.asarray(x, dtype=float)\n"
        b"    small = np.exp(-np.abs(x))\n    return np.where(x >= 0, 1.0 / (1.0 + small), small)\n"
    )
    result = grade_implementation(
        catalog.exercise("sigmoid"),
        SourceModule({"mine.py": source}, "mine.py"),
        InProcessFactory(),
        memo=GradingMemo(),
        references=ROOT,
    )
    assert _check(result, "responds-to-input").status == "passed"
    assert _check(result, "in-range").status == "passed" and result.score > 0
