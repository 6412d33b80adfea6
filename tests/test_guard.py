"""The guard (responds-to-input) and the credit rule (engine/credit.py), with the in-process fake."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grader.checks.cases import TWIN_STEP, Case, RandomGenerator, build_cases, moved, twin_directions
from grader.checks.guard import movable_problem
from grader.engine.call_loop import SourceModule, grade_implementation
from grader.engine.credit import GuardCases, apply_credit
from grader.engine.memory import GradingMemo
from grader.engine.plan import build_plan
from grader.results import CheckResult
from grader.sandbox.calls import TrustedFunction
from tests.fakes import InProcessFactory
from tests.test_validate import copy_catalog, validate_copy

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
    "ranks-times-a-tiny-term": (SINGLE_BUG / "stable-softmax" / "fake_ranks_tanh.py").read_bytes(),
    "noise": (SINGLE_BUG / "stable-softmax" / "fake_noise.py").read_bytes(),
    "uniform-plus-small-noise": HEADER + b"def softmax(z, axis=-1):\n    z = np.asarray(z, dtype=float)\n"
    b"    w = 1 + 1e-3 * np.random.default_rng().random(z.shape)\n"
    b"    return w / w.sum(axis=axis, keepdims=True)\n",
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
        assert "could not judge any of its inputs (square_normalise raised ValueError: no)" in results[0].reason
    assert "computes nothing" not in results[0].reason and "without computing" not in results[0].reason


def test_a_guard_that_ran_out_of_time_fails_closed(catalog) -> None:
    exercise = catalog.exercise("square-breaks-order")
    results = _results(exercise, "timeout")
    apply_credit(exercise, results)
    guarded = exercise.entry_of(next(c for c in exercise.checks if c.id == exercise.gate))
    same = [r for c, r in zip(exercise.checks, results, strict=True) if exercise.entry_of(c) == guarded]
    assert all(r.status == "skipped" for r in same if r.id != exercise.gate)


@pytest.mark.parametrize("guard_status", ["error", "timeout"])
def test_a_guard_that_judged_some_drawn_inputs_credits_what_held_and_says_where(catalog, guard_status) -> None:
    exercise = catalog.exercise("square-breaks-order")
    results = _results(exercise, guard_status)
    seen = GuardCases(held=("z of shape (3,)",), unjudged=("z of shape (6,)",), refused=False)
    apply_credit(exercise, results, seen)
    assert all(r.status == "passed" for r in results if r.id != exercise.gate)
    guard = next(r for r in results if r.id == exercise.gate)
    assert "It could judge 1 of its 2 inputs (z of shape (3,))" in guard.reason
    assert "(z of shape (6,)) it could not judge it" in guard.reason
    refused = GuardCases(held=("z of shape (3,)",), unjudged=(), refused=True)
    results = _results(exercise, guard_status)
    apply_credit(exercise, results, refused)
    assert any(r.status == "skipped" for r in results)


def test_crashing_on_some_inputs_keeps_what_held_on_the_others(exercise) -> None:
    source = HEADER + (
        b"def softmax(z, axis=-1):\n"
        b"    z = np.asarray(z, dtype=float)\n"
        b"    if z.size == 4:\n"
        b"        raise ValueError('not this size')\n"
        b"    e = np.exp(z - z.max(axis=axis, keepdims=True))\n"
        b"    return e / e.sum(axis=axis, keepdims=True)\n"
    )
    result = _grade(exercise, source)
    guard = _check(result, "responds-to-input")
    assert guard.status == "error"
    assert "z of shape (3,)" in guard.reason and "z of shape (4,)" in guard.reason
    assert not [c for c in result.checks if c.status == "skipped"]
    assert result.score > 0


@pytest.mark.parametrize("guard_status", ["passed"])
def test_a_holding_guard_withholds_nothing(catalog, guard_status: str) -> None:
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


COMPUTED = {  # wrong, but computed: each must pass the guard
    "times-1e-11": HEADER + b"def softmax(z, axis=-1):\n"
    b"    e = np.exp(z - np.max(z, axis=axis, keepdims=True))\n"
    b"    return 1e-11 * e / e.sum(axis=axis, keepdims=True)\n",
    "staircase": HEADER + b"def softmax(z, axis=-1):\n"
    b"    z = np.floor(np.asarray(z, dtype=float))\n"
    b"    e = np.exp(z - np.max(z, axis=axis, keepdims=True))\n"
    b"    return e / e.sum(axis=axis, keepdims=True)\n",
}


@pytest.mark.parametrize("kind", sorted(COMPUTED))
def test_guard_judges_a_response_against_the_references_scale_free(exercise, kind: str) -> None:
    assert _check(_grade(exercise, COMPUTED[kind]), "responds-to-input").status == "passed"


def test_guard_passes_a_jacobian_wrong_by_h_squared(catalog) -> None:
    source = (SINGLE_BUG / "argmax-zero-gradient" / "divides_then_multiplies_h.py").read_bytes()
    result = grade_implementation(
        catalog.exercise("argmax-zero-gradient"),
        SourceModule({"mine.py": source}, "mine.py"),
        InProcessFactory(),
        memo=GradingMemo(),
        references=ROOT,
    )
    assert _check(result, "responds-to-input").status == "passed"
    assert result.score > 0


def test_guard_calls_go_mixed_among_the_other_checks_calls(exercise) -> None:
    plan = build_plan(exercise, list(exercise.checks))
    guard = next(p for p in plan.checks if p.check.id == exercise.gate)
    mine = {key for keys in guard.keys for key in keys if plan.table.calls[key].on == "learner"}
    others = {key for p in plan.checks if p is not guard for keys in p.keys for key in keys}
    positions = [i for i, key in enumerate(plan.whole_keys) if key in mine and key not in others]
    assert positions and positions[-1] - positions[0] + 1 > len(positions), "not one block"
    assert positions[-1] < len(plan.whole_keys) - 1 or positions[0] < len(plan.whole_keys) // 2


def test_ordinary_drawn_case_sets_hold_a_near_twin_made_as_the_guard_makes_them() -> None:
    generators = [RandomGenerator.model_validate({"random": {"count": 5, "args": {"z": {"shape": [[4]]}}}})]
    cases = build_cases(generators, {"z": "float_array"}, ("twin-test", "set"))
    twins = [
        (a, b)
        for a in cases
        for b in cases
        if a is not b and np.allclose(moved(a.args, twin_directions(a.args).near, TWIN_STEP)["z"], b.args["z"])
    ]
    assert len(twins) == 1


def test_the_guard_moves_the_data_numbers_when_there_is_none_and_integers_last() -> None:
    with_arrays = twin_directions({"z": np.array([1.0, 2.0]), "T": 2.0, "axis": -1})
    assert set(with_arrays.near) == {"z"}
    numbers = twin_directions({"f": TrustedFunction("square"), "a": 0.0, "b": 1.0, "n": 10})
    assert set(numbers.near) == {"a", "b"} and not numbers.integers
    bound = twin_directions({"f": TrustedFunction("linear", (("A", np.eye(2)),)), "n": 10})
    assert set(bound.near) == {"f"}
    moved_f = moved({"f": TrustedFunction("linear", (("A", np.eye(2)),))}, bound.near, 1e-3)["f"]
    assert not np.array_equal(moved_f.bound[0][1], np.eye(2))
    integers = twin_directions({"f": TrustedFunction("square"), "n": 10})
    assert integers.integers and moved({"n": 10}, integers.near, 1.0, integers=True) == {"n": 11}
    stuck = Case(args={"f": TrustedFunction("square"), "mask": np.array([True])}, origin="random")
    assert movable_problem(stuck) is not None and "none of its arguments can move" in movable_problem(stuck)


def test_validate_says_plainly_when_the_guard_cannot_apply(tmp_path: Path, session) -> None:
    def edit(spec: dict) -> None:  # the guard's drawn inputs hold integers only, which it does not move
        spec["cases"]["guard"] = [{"random": {"count": 3, "args": {"z": {"shape": [[4]], "dtype": "int64"}}}}]

    report = validate_copy(copy_catalog(tmp_path, edit=edit), session)
    lines = [line for line in report.problems if line.subject == "guard responds-to-input"]
    assert lines and "cannot apply to softmax(): none of its arguments can move" in lines[0].message
