"""Inputs that keep the contract: every call hands an entry what its ``args:`` promise, and the catalog's cases
cover what the contract admits (negative axes, integer arrays, nearly tied large scores, losses near zero).

The fast tests walk every call of every check of the catalog's plans; the slow ones grade the reference
solutions with a list in place of each array, and the single-bug files of this concern, for the reasons
they must give.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grader.checks.base import Call
from grader.checks.cases import Case
from grader.checks.display import format_call
from grader.checks.identity import Identity
from grader.checks.kinds import coerce_argument, keeps_kind
from grader.engine.plan import build_plan
from grader.grading import GradingSession
from grader.spec.crossrefs import parameters
from grader.spec.models import ImplementationExercise

ROOT = Path(__file__).resolve().parents[1]
SINGLE_BUG = ROOT / "tests" / "single_bug"
FORM_CHECKS = ("shape-and-dtype", "jacobian-shape")  # the checks that judge the form of one array


def _implementations(catalog: Any) -> list[ImplementationExercise]:
    return [e for e in catalog.exercises.values() if isinstance(e, ImplementationExercise)]


def _entry_calls(exercise: ImplementationExercise) -> list[tuple[str, Call]]:
    """(check id, call) for every call of the exercise's plan that an entry answers, the reference's twins included."""
    plan = build_plan(exercise, list(exercise.checks))
    return [
        (planned.check.id, call)
        for planned in plan.checks
        for case_calls in planned.calls
        for call in case_calls
        if call.function in exercise.entries
    ]


def test_every_call_of_the_catalog_hands_each_entry_what_its_args_promise(catalog) -> None:
    broken = []
    walked = 0
    for exercise in _implementations(catalog):
        optional = {}
        for name, entry in exercise.entries.items():
            parsed = parameters(entry.signature)
            optional[name] = parsed[1] if parsed else {}
        for check_id, call in _entry_calls(exercise):
            kinds = exercise.entries[call.function].args
            for name, value in call.args.items():
                walked += 1
                kind = kinds.get(name, "any")
                if not keeps_kind(value, kind, optional=optional[call.function].get(name, False)):
                    broken.append((exercise.id, check_id, call.on, f"{name}: {kind}", type(value).__name__))
    assert walked > 1000
    assert broken == []


def test_a_relation_on_a_0d_array_hands_the_entry_0d_arrays() -> None:
    check = Identity(id="i", property="identity", relation="f(-x) == 1 - f(x + 0.5) + f(0.0) * 0")
    calls = check.plan_in(Case(args={"x": np.asarray(0.0)}), "f", {"f": {"x": "float_array"}})
    for call in calls:
        assert type(call.args["x"]) is np.ndarray and call.args["x"].ndim == 0, call
    assert [float(call.args["x"]) for call in calls] == [0.0, -0.0, 0.5, 0.0]


def test_a_relation_keeps_float32_and_the_kinds_of_numbers() -> None:
    check = Identity(id="i", property="identity", relation="f(z, 1) == f(z, axis=-1)")
    z = np.ones(3, dtype=np.float32)
    calls = check.plan_in(Case(args={"z": z}), "f", {"f": {"z": "float_array", "axis": "int"}})
    assert [call.args["z"].dtype for call in calls] == [np.float32] * 3
    assert [type(call.args.get("axis")) for call in calls[1:]] == [int, int]


@pytest.mark.parametrize(
    ("value", "kind", "expected"),
    [
        (np.float64(2.0), "float_array", np.asarray(2.0)),
        (0.0, "float_array", np.asarray(0.0)),
        (np.asarray([1, 2]), "float_array", np.asarray([1.0, 2.0])),
        (np.asarray([1.0, 2.0]), "int_array", np.asarray([1, 2])),
        (np.asarray([1, 2]), "number_array", np.asarray([1, 2])),
        (np.float64(3.0), "int", 3),
        (np.asarray(1.5), "float", 1.5),
        ([1.0, 2.0], "any", np.asarray([1.0, 2.0])),
    ],
    ids=["scalar-to-0d", "literal-to-0d", "ints-to-floats", "whole-floats-to-ints", "ints-kept", "int", "float", "lst"],
)
def test_computed_values_take_their_declared_kind(value: Any, kind: str, expected: Any) -> None:
    got = coerce_argument(value, kind)
    assert type(got) is type(expected)
    assert keeps_kind(got, kind)
    if isinstance(expected, np.ndarray):
        assert got.dtype.kind == expected.dtype.kind and np.array_equal(got, expected)
    else:
        assert got == expected


@pytest.mark.parametrize(
    ("value", "kind"),
    [(np.asarray([0.5]), "int_array"), (2.5, "int"), (np.asarray([1.0, 2.0]), "float"), (1.0, "bool")],
    ids=["fraction-as-ints", "fraction-as-int", "array-as-float", "number-as-bool"],
)
def test_a_value_that_would_change_is_refused(value: Any, kind: str) -> None:
    with pytest.raises(ValueError, match="cannot be passed"):
        coerce_argument(value, kind)


def test_a_call_shows_a_0d_array_as_an_array() -> None:
    shown = format_call("f", {"x": np.asarray(0.0), "n": np.asarray(3), "T": 1.0})
    assert shown == "f(x=array(0.), n=array(3, dtype=int64), T=1)"


def test_an_entry_that_takes_an_axis_is_graded_on_negative_axes_besides_the_last(catalog) -> None:
    for exercise in _implementations(catalog):
        for entry_name, entry in exercise.entries.items():
            if "axis" not in entry.args:
                continue
            axes = {
                (call.args["axis"], np.ndim(call.args[next(iter(entry.args))]))
                for check_id, call in _entry_calls(exercise)
                if call.function == entry_name and call.on == "learner" and call.args.get("axis") is not None
                if check_id.startswith("matches-reference")
            }
            assert {(-2, 2), (-2, 3), (-3, 3)} <= axes, (exercise.id, sorted(axes))


def test_an_entry_that_admits_integer_arrays_is_graded_on_them(catalog) -> None:
    admitting = [
        (exercise, name)
        for exercise in _implementations(catalog)
        for entry in exercise.entries.values()
        for name, kind in entry.args.items()
        if kind == "number_array"
    ]
    assert admitting, "sigmoid admits integer arrays"
    for exercise, name in admitting:
        checked = {
            check_id
            for check_id, call in _entry_calls(exercise)
            if call.on == "learner" and getattr(call.args.get(name), "dtype", np.dtype(float)).kind == "i"
        }
        assert {"matches-reference", "shape-and-dtype"} <= checked, (exercise.id, checked)


def _listed_reference(exercise: ImplementationExercise, folder: Path) -> Path:
    """The reference solution, with every entry handing back ``.tolist()`` of each array of one or more dimensions."""
    source = (ROOT / exercise.reference_solution).read_text()
    wrap = ["", "import numpy as _np", ""]
    for entry in exercise.entries:
        wrap += [
            f"_{entry} = {entry}",
            "",
            f"def {entry}(*args, **kwargs):",
            f"    out = _{entry}(*args, **kwargs)",
            "    return out.tolist() if isinstance(out, _np.ndarray) and out.ndim else out",
            "",
        ]
    path = folder / f"{exercise.id.replace('-', '_')}.py"
    path.write_text(source + "\n".join(wrap))
    return path


@pytest.mark.slow
def test_a_list_where_an_array_is_asked_costs_the_form_point_only_in_every_exercise(
    session: GradingSession, tmp_path: Path
) -> None:
    judged = []
    for exercise in _implementations(session.catalog):
        forms = [check.id for check in exercise.checks if check.property in FORM_CHECKS]
        if not forms or not exercise.reference_solution:
            continue
        report = session.grade(_listed_reference(exercise, tmp_path), exercise_ids=[exercise.id])
        result = next(r for r in report.exercises if r.id == exercise.id)
        lost = [c.id for c in result.checks if c.status != "passed"]
        assert set(lost) <= set(forms), (exercise.id, lost)  # an entry returning a single number loses nothing
        if lost:
            judged.append(exercise.id)
        for check in result.checks:
            if check.id in lost:
                assert "It returned a list; the contract asks for a numpy.ndarray" in check.reason, check.reason
    assert {"argmax-zero-gradient", "softmax-jacobian", "sigmoid", "stable-softmax"} <= set(judged)


# Each single-bug file of this concern, the check it must fail and what that reason must contain.
SINGLE_BUG_REASONS = [
    ("log-softmax", "negative_axis_is_last", "matches-reference", [r"axis=-2"]),
    ("logsumexp", "negative_axis_is_last", "matches-reference", [r"axis=-2", r"Expected shape \(3,\)"]),
    ("stable-softmax", "negative_axis_is_last", "rows-sum-to-one", [r"axis=-2", r"along axis -2"]),
    ("argmax-zero-gradient", "nested_list", "shape-m-by-n", [r"got a list", r"a numpy\.ndarray of shape \(1, 3\)"]),
    ("attention-weights", "float32_scores", "matches-reference-on-near-ties", [r"rtol 1e-09"]),
    ("sigmoid", "empty_like_input", "shape-and-dtype", [r"x=array\(0, dtype=int64\)", r"dtype int64", r"Here x held"]),
    ("sigmoid", "empty_like_input", "matches-reference", [r"dtype=int64", r"Expected 0\.5"]),
    ("cross-entropy", "guarded_log", "matches-reference-near-zero", [r"Expected 4\.53989e-05", r"atol 1e-09"]),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("exercise_id", "name", "check_id", "patterns"),
    SINGLE_BUG_REASONS,
    ids=[f"{e}-{n}-{c}" for e, n, c, _ in SINGLE_BUG_REASONS],
)
def test_each_coverage_bug_fails_its_check_with_a_reason_that_shows_it(
    session: GradingSession, exercise_id: str, name: str, check_id: str, patterns: list[str]
) -> None:
    report = session.grade(SINGLE_BUG / exercise_id / f"{name}.py", exercise_ids=[exercise_id])
    result = next(r for r in report.exercises if r.id == exercise_id)
    check = next(c for c in result.checks if c.id == check_id)
    assert check.status == "failed", check.reason
    for pattern in patterns:
        assert re.search(pattern, check.reason), (pattern, check.reason)
    assert result.score > 0


@pytest.mark.slow
def test_a_sigmoid_that_indexes_its_array_keeps_full_marks(session: GradingSession) -> None:
    """Boolean indexing needs the array the contract promises, 0-d ones and relation calls included."""
    path = ROOT / "tests" / "fixtures" / "relatives" / "sigmoid" / "boolean_index.py"
    result = session.grade(path, exercise_ids=["sigmoid"]).exercises[0]
    assert result.score == result.max_score, [c.reason for c in result.checks if c.status != "passed"]
