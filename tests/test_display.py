"""How values and failures are written: got and expected told apart, like with like, learner facts in their terms.

The sweep at the end grades every known-wrong solution of the catalog with the
in-process fake runner and reads every reason it gets, so each property of the
registry is read failing at least once.
"""

from __future__ import annotations

import re
import typing
from pathlib import Path

import numpy as np
import pytest

from grader.checks.display import format_pair, format_value, positions
from grader.checks.registry import CHECK_TYPES
from grader.engine.call_loop import SourceModule, grade_implementation
from grader.engine.memory import GradingMemo
from grader.engine.reasons import describe_error, returned_value
from grader.results import CheckResult
from grader.sandbox.outcomes import CallOutcome
from tests.fakes import InProcessFactory

ROOT = Path(__file__).resolve().parents[1]


def test_format_pair_writes_the_digits_that_tell_got_from_expected() -> None:
    expected = np.array([0.0900305732, 0.2447284711, 0.6652409558])
    got = expected + np.array([0.0, 4e-7, 0.0])  # the same at six decimals in [0] and [2], not in [1]
    pair = format_pair(got, expected, rtol=1e-7, atol=1e-9)
    assert pair.got != pair.expected
    assert pair.got.split(", ")[1] != pair.expected.split(", ")[1]
    assert pair.where == ""  # three entries: no positions to name


def test_format_pair_a_sum_a_hair_off_one_does_not_read_as_one() -> None:
    pair = format_pair(np.array([1.0 + 2e-10, 1.0]), np.ones(2), atol=1e-12)
    assert pair.got == "array([1.0000000002, 1.])" and pair.expected == "array([1., 1.])"


def test_format_pair_entries_within_tolerance_add_no_digits() -> None:
    pair = format_pair(np.array([0.5 + 1e-12, 0.7]), np.array([0.5, 0.2]), rtol=1e-9)
    assert pair.got == "array([0.5, 0.7])" and pair.expected == "array([0.5, 0.2])"


def test_format_pair_numbers_get_significant_digits_until_they_differ() -> None:
    pair = format_pair(np.float64(0.1848369183), np.float64(0.1848364465))
    assert (pair.got, pair.expected) == ("0.184837", "0.184836")
    pair = format_pair(np.float64(1.00000004), np.float64(1.00000001))
    assert (pair.got, pair.expected) == ("1.00000004", "1.00000001")


@pytest.mark.parametrize(
    ("changed", "where"),
    [
        ([(0, 2), (1, 1)], "differs at [0, 2] and [1, 1]"),
        ([(0, 0)], "differs at [0, 0]"),
        ([(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)], "differs at [0, 0], [0, 1], [0, 2] and 2 more"),
        ([(i, j) for i in range(2) for j in range(3)], "differs at every entry"),
    ],
    ids=["two", "one", "many", "every"],
)
def test_format_pair_names_the_differing_positions_of_arrays_of_more_than_a_few_entries(changed, where) -> None:
    expected = np.arange(6.0).reshape(2, 3)
    got = expected.copy()
    for index in changed:
        got[index] += 0.5
    assert format_pair(got, expected).where == where


def test_format_pair_a_summarised_array_shows_the_first_differing_values() -> None:
    expected = np.linspace(0.0, 1.0, 40)
    got = expected.copy()
    got[17] += 1e-8
    pair = format_pair(got, expected, rtol=1e-9)
    assert "..." in pair.got
    assert pair.where == "differs at [17] (0.43589744 there, expected 0.43589744)" or (
        pair.where.startswith("differs at [17] (") and "there, expected" in pair.where
    )
    shown = re.findall(r"\(([-\d.e]+) there, expected ([-\d.e]+)\)", pair.where)[0]
    assert shown[0] != shown[1]


def test_format_pair_is_deterministic_and_plain_for_other_values() -> None:
    got, expected = np.array([0.1, 0.2000001]), np.array([0.1, 0.2])
    assert format_pair(got, expected) == format_pair(got.copy(), expected.copy())
    assert format_pair((1.0, 2.0), "x").got == "(1, 2)"
    assert format_pair(np.zeros(2), np.zeros(3)).got == "array([0., 0.])"  # shapes differ: written as they are


def test_format_value_writes_no_alignment_padding() -> None:
    assert format_value(np.array([[1.0, 0.0], [0.5, 0.25]])) == "array([[1., 0.], [0.5, 0.25]])"
    assert format_value(np.array([0.04201, 0.114195])) == "array([0.04201, 0.114195])"


def test_positions_counts_what_it_leaves_out() -> None:
    mask = np.zeros(10, dtype=bool)
    mask[[1, 3, 5, 7, 9]] = True
    assert positions(mask) == "[1], [3], [5] and 2 more"


def _bad_value(type_: str, message: str) -> CallOutcome:
    return CallOutcome(status="bad_value", error={"type": type_, "message": message, "frames": []})


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (
            _bad_value("TypeError", "returned a value that is not an array of numbers (ValueError)"),
            "f returned a ValueError object instead of raising it",
        ),
        (_bad_value("TypeError", "returned a value that is not an array of numbers (NoneType)"), "f returned None"),
        (
            _bad_value(
                "ValueError",
                "setting an array element with a sequence. The requested array has an inhomogeneous shape "
                "after 1 dimensions. The detected shape was (3,) + inhomogeneous part.",
            ),
            "f returned a list or tuple whose items are not all numbers of one shape",
        ),
        (
            _bad_value("TypeError", "returned a value that is not an array of numbers (ndarray, dtype object)"),
            "f returned a NumPy array of Python objects (dtype object)",
        ),
        (
            _bad_value("TypeError", "returned a value that is not an array of numbers (list)"),
            "f returned a list holding something other than numbers",
        ),
        (
            _bad_value("TypeError", "returned a value that is not an array of numbers (Weights)"),
            "f returned a Weights object, not an array of numbers",
        ),
    ],
    ids=["exception-object", "none", "ragged-list", "object-array", "list-of-other", "own-class"],
)
def test_describe_error_says_what_the_learner_returned(error: CallOutcome, said: str) -> None:
    text = describe_error(error, "f")
    assert text.startswith(said)
    assert "inhomogeneous" not in text and "cannot read" not in text


def test_returned_value_keeps_an_unknown_message_in_parentheses() -> None:
    assert returned_value({"type": "TypeError", "message": "odd"}) == (
        "returned a value that could not be read as numbers (odd)"
    )


RAISES_NOTHING_RETURNS_AN_ERROR = """
import numpy as np

def softmax_with_temperature(z, T):
    if T <= 0:
        return ValueError("T must be positive")
    e = np.exp((z - z.max()) / T)
    return e / e.sum()
"""


def test_a_returned_exception_is_said_against_the_exception_asked_for(catalog) -> None:
    result = _grade(catalog, "temperature", RAISES_NOTHING_RETURNS_AN_ERROR)
    check = next(c for c in result.checks if c.id == "rejects-non-positive-temperature")
    assert check.expected == "ValueError to be raised"
    assert (check.got or "").startswith("softmax_with_temperature returned a ValueError object instead of raising it")


LIST_FOR_A_TUPLE = """
import numpy as np

def order_counterexample():
    return [np.array([-3.0, 1.0]), 1, 0]
"""


def test_a_list_where_a_tuple_was_asked_is_said_so_once(catalog) -> None:
    result = _grade(catalog, "square-breaks-order", LIST_FOR_A_TUPLE)
    stopped = [c for c in result.checks if c.status == "error" and "order_counterexample" in (c.property or "")]
    first = stopped[0]
    assert (first.expected or "").startswith("a tuple (z, i, j)")
    assert "a list or tuple whose items are not all numbers of one shape" in (first.got or "")
    assert "return a, b makes a tuple" in (first.note or "")
    assert all(f"stopped by the same error as {first.id}" in c.reason for c in stopped[1:])


def _grade(catalog, exercise_id: str, source: str):
    return grade_implementation(
        catalog.exercise(exercise_id),
        SourceModule({"mine.py": source.encode()}, "mine.py"),
        InProcessFactory(),
        memo=GradingMemo(),
        references=ROOT,
    )


# -- The sweep: every known-wrong solution of the catalog, every reason read ---------------------------------

_GARBLED = [
    (re.compile(r"\b([A-Za-z]{2,}) \1\b"), "a word repeated"),
    (re.compile(r"\b1 (values|entries|numbers|inputs|items)\b"), "one of a plural"),
    (re.compile(r"= -?[\d.]+(e[-+]?\d+)? = "), "a chain of equalities"),
    (re.compile(r"\b(of|and|with|the|a|to|at|than)[.;:]( |$)"), "a dangling word"),
    (re.compile(r"[Gg]ot (got|scores|expected)\b"), "a garbled got"),
    (re.compile(r"\s,|\(\s|\s\)|  "), "stray spacing"),
    (re.compile(r"inhomogeneous|setting an array element|cannot read|could not use"), "a NumPy or grader internal"),
]


def _arrays(text: str) -> list[str]:
    return re.findall(r"array\(\[.*?\]\)", text)


# The catalog, and the linear-algebra exercises of tests/fixtures, whose properties the catalog does not use.
LINALG = ROOT / "tests" / "fixtures" / "linalg"


@pytest.fixture(scope="module")
def swept_catalogs(catalog) -> list[tuple[object, Path]]:
    from grader.spec.loader import load_catalog

    return [(catalog, ROOT), (load_catalog(LINALG / "exercises"), LINALG)]


@pytest.fixture(scope="module")
def swept(swept_catalogs) -> list[tuple[str, str, CheckResult]]:
    memo = GradingMemo()
    found = []
    for each, root in swept_catalogs:
        for exercise in each.exercises.values():
            if exercise.kind != "implementation":
                continue
            for wrong in exercise.known_wrong:
                source = SourceModule({"mine.py": (root / wrong.path).read_bytes()}, "mine.py")
                result = grade_implementation(
                    exercise, source, InProcessFactory(), memo=memo, references=root, root=root
                )
                found += [(exercise.id, wrong.id, check) for check in result.checks if check.status != "passed"]
    return found


def test_sweep_reads_a_failure_of_every_property_in_the_registry(swept_catalogs, swept) -> None:
    kinds = {
        (exercise.id, check.id): check.property
        for each, _ in swept_catalogs
        for exercise in each.exercises.values()
        if exercise.kind == "implementation"
        for check in exercise.checks
    }
    read = {kinds[(exercise, check.id)] for exercise, _, check in swept if check.got}
    every = {typing.get_type_hints(cls)["property"].__args__[0] for cls in CHECK_TYPES}
    assert every <= read


def test_sweep_every_reason_reads_as_got_and_expected_without_garbled_words(swept) -> None:
    problems = []
    for exercise, wrong, check in swept:
        texts = [check.reason, check.got or "", check.expected or "", check.note or ""]
        for pattern, what in _GARBLED:
            for text in texts:
                if pattern.search(text):
                    problems.append(f"{exercise}/{wrong}/{check.id}: {what}: {text}")
        if check.got is not None and check.input is not None:  # without an input, the one line pointing elsewhere
            assert f"Expected {check.expected}; got {check.got}".strip(" .") in check.reason
    assert not problems, "\n".join(problems[:20])


def test_sweep_got_and_expected_never_read_alike(swept) -> None:
    alike = [
        f"{exercise}/{wrong}/{check.id}: {check.got} against {check.expected}"
        for exercise, wrong, check in swept
        if check.got and check.expected and _arrays(check.got)[:1] == _arrays(check.expected)[:1] != []
    ]
    assert not alike, "\n".join(alike[:10])


def test_sweep_a_call_stopped_the_same_way_is_said_in_full_once_per_exercise(swept) -> None:
    seen: dict[tuple[str, str, str], int] = {}
    for exercise, wrong, check in swept:
        if check.status in ("error", "timeout") and check.got and check.got.strip(" .") in check.reason:
            key = (exercise, wrong, check.got.split(":")[0])
            seen[key] = seen.get(key, 0) + 1
    repeated = {key: count for key, count in seen.items() if count > 1 and " raised " in key[2]}
    assert not repeated
