"""Explanations derived from the data: each relation holds when it does, not when broken on one pair, never on noise."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.checks.reference import MatchesReference
from grader.engine.explanations import explain, named_values
from grader.engine.failure_modes import Failure, fitting_hint
from tests.grading_helpers import failures, grade_one

TOL = {"rtol": 1e-9, "atol": 1e-12}
_RNG = np.random.default_rng(20240611)


def _normalised_rows(shape: tuple[int, ...]) -> np.ndarray:
    x = np.exp(_RNG.normal(size=shape))
    return x / x.sum(-1, keepdims=True)


# Two expected values of each form, so that every relation is shown on more than one failing input.
ROWS = [_normalised_rows((3, 4)), _normalised_rows((2, 5))]
VECTORS = [_RNG.normal(size=6), _RNG.normal(size=5)]
POSITIVE = [_RNG.uniform(0.5, 3.0, size=6), _RNG.uniform(0.5, 3.0, size=4)]
CUBES = [_RNG.normal(size=(2, 3, 4)), _RNG.normal(size=(3, 2, 4))]
LARGE = [_RNG.uniform(-50.0, 50.0, size=8), _RNG.uniform(-50.0, 50.0, size=7)]


def _exp_rows(shape: tuple[int, ...]) -> np.ndarray:
    return np.exp(_RNG.normal(size=shape))


RAW = [_exp_rows((3, 4)), _exp_rows((4, 3))]


def _pairs(expected: list[np.ndarray], wrong: Callable[[np.ndarray], Any]) -> list[tuple[Any, np.ndarray]]:
    return [(wrong(e), e) for e in expected]


def _except_at(e: np.ndarray, positions: list[tuple[int, ...]]) -> np.ndarray:
    got = e.copy()
    for p in positions:
        got[p] += 1.0
    return got


# id, expected values, the learner's mistake, code, words the relation says
RELATIONS: list[tuple[str, list[np.ndarray], Callable[[np.ndarray], Any] | None, str, str]] = [
    ("container-list", ROWS, lambda e: e.tolist(), "container", "as a list, not an array"),
    ("container-tuple", VECTORS, lambda e: tuple(e), "container", "as a tuple, not an array"),
    ("shape-kept-axis", VECTORS, lambda e: e[:, None], "shape", "extra axis of length 1"),
    ("shape-dropped-axis", [v[:, None] for v in VECTORS], lambda e: e[:, 0], "shape", "without their axis of length 1"),
    ("shape-other", [v.reshape(2, -1) for v in (VECTORS[0], POSITIVE[0])], lambda e: e.ravel(), "shape", "shape"),
    ("float32", ROWS, lambda e: e.astype(np.float32), "rounding", "float32 precision"),
    ("float32-upcast", ROWS, lambda e: e.astype(np.float32).astype(np.float64), "rounding", "float32 precision"),
    ("float16", ROWS, lambda e: e.astype(np.float16), "rounding", "float16 precision"),
    ("truncation", LARGE, np.trunc, "truncation", "cut to whole numbers"),
    ("floor", LARGE, np.floor, "truncation", "rounded down to whole numbers"),
    ("decimals", ROWS, lambda e: np.round(e, 3), "rounding", "rounded to 3 decimals"),
    ("sign", VECTORS, lambda e: -e, "sign", "sign flipped"),
    ("factor", VECTORS, lambda e: 3.0 * e, "factor", "times 3"),
    ("reciprocal", VECTORS, lambda e: 1.0 / e, "reciprocal", "reciprocals of the expected values"),
    ("shift", VECTORS, lambda e: e - 0.25, "shift", "minus 0.25"),
    ("square", POSITIVE, lambda e: e**2, "power", "squares of the expected values"),
    ("square-root", POSITIVE, np.sqrt, "power", "square roots"),
    ("power", POSITIVE, lambda e: e**1.5, "power", "to the power 1.5"),
    ("transpose", [ROWS[0], ROWS[0][:, :3]], lambda e: e.T, "transpose", "transposed"),
    ("swap-axes", CUBES, lambda e: np.swapaxes(e, 0, 2), "transpose", "axes 0 and 2 swapped"),
    (
        "reverse-axes",
        [_RNG.normal(size=(2, 3, 1, 4)), _RNG.normal(size=(1, 2, 3, 3))],
        np.transpose,
        "transpose",
        "order of their axes reversed",
    ),
    ("reverse", VECTORS, lambda e: e[::-1], "permutation", "in reverse order"),
    ("reverse-rows", ROWS, lambda e: e[:, ::-1], "permutation", "in reverse order along axis 1"),
    ("roll", VECTORS, lambda e: np.roll(e, 2), "permutation", "each 2 places later"),
    ("roll-back", VECTORS, lambda e: np.roll(e, -1), "permutation", "each 1 place earlier"),
    ("sorted", VECTORS, np.sort, "permutation", "sorted in increasing order"),
    ("sorted-down", VECTORS, lambda e: np.sort(e)[::-1], "permutation", "sorted in decreasing order"),
    ("other-order", VECTORS, lambda e: e[[1, 0, 3, 2, *range(4, len(e))]], "permutation", "in another order"),
    ("normalised-axis", [r / r.sum(-1, keepdims=True) for r in RAW], None, "normalised-axis", "along axis 0"),
    ("normalised-all", [r / r.sum(-1, keepdims=True) for r in RAW], None, "normalised-axis", "all entries at once"),
    ("positions", [e.ravel() for e in CUBES], lambda e: _except_at(e, [(0,), (5,)]), "positions", "positions 0 and 5"),
    ("positions-nd", ROWS, lambda e: _except_at(e, [(0, 2), (1, 1)]), "positions", "positions (0, 2) and (1, 1)"),
]


def _wrong_for(case_id: str, index: int, wrong: Callable[[np.ndarray], Any] | None) -> Callable[[np.ndarray], Any]:
    """The mistake of a relation; the normalised ones are computed from the raw values they start from."""
    if wrong is not None:
        return wrong
    raw = RAW[index]
    if case_id == "normalised-axis":
        return lambda e: raw / raw.sum(0, keepdims=True)
    return lambda e: raw / raw.sum()


def _relation_pairs(case_id: str, expected: list[np.ndarray], wrong: Any) -> list[tuple[Any, np.ndarray]]:
    return [(_wrong_for(case_id, i, wrong)(e), e) for i, e in enumerate(expected)]


@pytest.mark.parametrize(("case_id", "expected", "wrong", "code", "words"), RELATIONS, ids=[r[0] for r in RELATIONS])
def test_explain_states_the_relation_that_holds_on_every_pair(
    case_id: str, expected: list[np.ndarray], wrong: Any, code: str, words: str
) -> None:
    found = explain(_relation_pairs(case_id, expected, wrong), **TOL)
    assert found is not None
    assert found.code == code
    assert words in found.relation
    assert found.sentence.startswith(("On every failing input, your values ", "Your values "))


@pytest.mark.parametrize(("case_id", "expected", "wrong", "code", "words"), RELATIONS, ids=[r[0] for r in RELATIONS])
def test_explain_says_nothing_when_the_relation_is_broken_on_one_pair(
    case_id: str, expected: list[np.ndarray], wrong: Any, code: str, words: str
) -> None:
    pairs = _relation_pairs(case_id, expected, wrong)
    got = np.array(pairs[1][0], dtype=np.float64, order="C")
    flat = got.reshape(-1)
    # One entry off breaks a relation on this pair; "right except at a few positions" breaks when every entry is.
    broken = slice(None) if code == "positions" else slice(-1, None)
    flat[broken] = flat[broken] * 0.37 + 0.61
    pairs[1] = (got, pairs[1][1])
    assert explain(pairs, **TOL) is None


def test_explain_names_a_parameter_that_differs_per_case() -> None:
    pairs = [(2.0 * ROWS[0], ROWS[0]), (0.5 * ROWS[1], ROWS[1])]
    found = explain(pairs, **TOL, named=[{"T": 2.0}, {"T": 0.5}], output="weights")
    assert found is not None and found.code == "factor"
    assert (
        found.sentence
        == "On every failing input, your weights are the expected ones times T (2 and 0.5 on these inputs)."
    )


def test_explain_names_a_constant_it_divides_by() -> None:
    losses = [1.2, 0.7, 2.3]
    found = explain([(x / np.log(2), x) for x in losses], **TOL, named={"log 2": float(np.log(2))}, output="loss")
    assert found is not None and found.code == "factor"
    assert found.sentence == "On every failing input, your loss is the expected one divided by log 2 (0.693147 here)."


def test_explain_names_the_square_of_a_parameter() -> None:
    found = explain([(VECTORS[0] * 4.0, VECTORS[0])], **TOL, named={"T": 2.0, "n": 10})
    assert found is not None and found.relation == "are the expected ones times T² (4 here)"


def test_explain_names_every_parameter_of_the_same_value() -> None:
    found = explain([(VECTORS[0] / 2.0, VECTORS[0])], **TOL, named={"sqrt(d_k)": 2.0, "d_k": 4, "T": 2.0})
    assert found is not None
    assert found.relation == "are the expected ones divided by 2 (which is sqrt(d_k) and also T here)"


def test_explain_names_a_shift_by_a_constant() -> None:
    found = explain(_pairs(VECTORS, lambda e: e - np.log(2)), **TOL, named={"log 2": float(np.log(2))})
    assert found is not None and found.code == "shift"
    assert found.relation == "are the expected ones minus log 2 (0.693147 here)"


def test_explain_names_parameters_that_are_equal_on_every_case() -> None:
    pairs = [(2.0 * VECTORS[0], VECTORS[0]), (3.0 * VECTORS[1], VECTORS[1])]
    found = explain(pairs, **TOL, named=[{"x.shape[0]": 2, "y.shape[0]": 2}, {"x.shape[0]": 3, "y.shape[0]": 3}])
    assert found is not None
    assert found.relation == "are the expected ones times x.shape[0] (2 and 3 on these inputs, as is y.shape[0])"


def test_explain_finds_values_normalised_along_another_axis_of_one_slice() -> None:
    expected = np.array([[0.25, 0.75]])  # one row: normalised along axis 0, every entry of it is 1
    found = explain([(np.ones((1, 2)), expected)], **TOL)
    assert found is not None and found.code == "normalised-axis"
    assert (
        found.relation
        == "are normalised along axis 0, where the expected ones are normalised along axis 1 (each sums to 1)"
    )


def test_explain_leaves_a_factor_unnamed_when_no_parameter_equals_it() -> None:
    found = explain(_pairs(VECTORS, lambda e: 3.0 * e), **TOL, named={"T": 2.0})
    assert found is not None and found.relation == "are the expected ones times 3"


def test_explain_names_positions_per_input_when_they_differ() -> None:
    pairs = [(_except_at(ROWS[0], [(0, 2)]), ROWS[0]), (_except_at(ROWS[1], [(1, 4)]), ROWS[1])]
    found = explain(pairs, **TOL, output="weights")
    assert found is not None and found.code == "positions"
    assert found.sentence == (
        "Your weights are right except at position (0, 2) on the first failing input and position (1, 4) on the second."
    )


def test_explain_finds_a_factor_within_a_loose_tolerance() -> None:
    noisy = [(2.0 * e * (1 + 1e-8 * _RNG.standard_normal(e.shape)), e) for e in VECTORS]
    assert explain(noisy, rtol=1e-6, atol=1e-9) is not None
    assert explain(noisy, rtol=1e-12, atol=0.0) is None


@pytest.mark.parametrize(
    ("pairs", "named"),
    [
        ([(np.array([1.0]), np.array([0.5]))], {"T": 2.0}),  # one value: a factor T and a shift of 0.5 both fit
        ([(2.0, 1.0)], {}),
        ([(np.full(4, 2.0), np.full(4, 1.0))], {}),  # every value equal: a factor and a shift both fit
        ([(np.zeros(4), VECTORS[0][:4])], {}),
        ([(VECTORS[0], np.zeros(6))], {}),
        ([(np.array([1.0, np.nan, 2.0]), np.array([0.5, 1.0, 1.0]))], {}),
        ([(2 * np.array([1.0, np.inf, 2.0]), np.array([1.0, np.inf, 2.0]))], {}),
        ([(VECTORS[0], VECTORS[0])], {}),  # right values: nothing to explain
        ([(np.full(5, 0.2)[::-1], np.full(5, 0.2))], {}),
        ([("a string", VECTORS[0])], {}),
        ([([[1.0, 2.0], [3.0]], VECTORS[0])], {}),
        ([({"a": 1}, VECTORS[0])], {}),
        ([(np.array([], dtype=float), np.array([], dtype=float))], {}),
        ([], {}),
    ],
    ids=[
        "one-value",
        "one-number",
        "all-equal",
        "got-zero",
        "expected-zero",
        "nan",
        "inf",
        "already-right",
        "equal-permuted",
        "string",
        "ragged",
        "dict",
        "empty",
        "no-pairs",
    ],
)
def test_explain_says_nothing_on_degenerate_data(pairs: list[tuple[Any, Any]], named: dict[str, float]) -> None:
    assert explain(pairs, **TOL, named=named) is None


def test_explain_says_nothing_of_a_rounding_that_fits_two_values_by_chance() -> None:
    expected = np.array([[0.25, -0.25], [-0.25, 0.25]])
    assert explain([(np.array([[0.0, -1.0], [-1.0, 0.0]]), expected)], **TOL) is None


def test_explain_speaks_of_the_entries_of_a_singular_output() -> None:
    found = explain(_pairs(ROWS, lambda e: -e), **TOL, output="Jacobian")
    assert found is not None
    assert (
        found.sentence
        == "On every failing input, the entries of your Jacobian are the expected ones with the sign flipped."
    )


def test_explain_says_nothing_when_two_relations_hold_on_different_pairs() -> None:
    pairs = [(2.0 * VECTORS[0], VECTORS[0]), (-VECTORS[1], VECTORS[1])]
    assert explain(pairs, **TOL) is None


def test_explain_positions_only_when_few_are_wrong() -> None:
    e = CUBES[0].ravel()  # 24 entries: at most 5 may be wrong
    assert explain([(_except_at(e, [(i,) for i in range(5)]), e)], **TOL) is not None
    assert explain([(_except_at(e, [(i,) for i in range(6)]), e)], **TOL) is None
    short = VECTORS[0][:3]  # 3 entries: one wrong is a third of them
    assert explain([(_except_at(short, [(0,)]), short)], **TOL) is None


def test_explain_rejects_a_named_list_of_another_length() -> None:
    with pytest.raises(ValueError, match="2 mappings for 1 pairs"):
        explain([(2 * VECTORS[0], VECTORS[0])], **TOL, named=[{"T": 2.0}, {"T": 3.0}])


def test_explain_speaks_of_one_value_for_numbers() -> None:
    found = explain([(-1.5, 1.5), (-0.25, 0.25)], **TOL)
    assert (
        found is not None
        and found.sentence == "On every failing input, your value is the expected one with the sign flipped."
    )


@settings(derandomize=True, max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    shape=st.sampled_from([(1,), (3,), (7,), (2, 3), (4, 4), (2, 3, 2)]),
    cases=st.integers(1, 3),
    positive=st.booleans(),
)
def test_explain_never_explains_noise(seed: int, shape: tuple[int, ...], cases: int, positive: bool) -> None:
    rng = np.random.default_rng(seed)
    draw = rng.uniform if positive else rng.normal
    pairs = [(draw(size=shape), draw(size=shape)) for _ in range(cases)]
    assert explain(pairs, **TOL, named={"T": 2.0, "log 2": float(np.log(2))}) is None


@settings(derandomize=True, max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.integers(2, 12),
    factor=st.floats(-20.0, 20.0).filter(lambda c: min(abs(c), abs(c - 1), abs(c + 1)) > 1e-3),
)
def test_explain_finds_any_constant_factor(seed: int, size: int, factor: float) -> None:
    e = np.random.default_rng(seed).normal(size=size)
    found = explain([(factor * e, e)], **TOL)
    assert found is not None and found.code in ("factor", "sign")


def test_fitting_hint_leaves_out_the_stock_hint_of_an_explained_wrong_value() -> None:
    check = MatchesReference(id="matches-reference", property="matches-reference", hint="divide by the sum")
    assert fitting_hint(check, Failure("wrong-value")) == "divide by the sum"
    assert fitting_hint(check, Failure("wrong-value", cause="Your values are...", explained=True)) == ""
    assert fitting_hint(check, Failure("wrong-value", hint="use np.where", explained=True)) == "use np.where"


def test_named_values_names_numbers_lengths_sizes_and_constants() -> None:
    named = named_values({"Q": np.zeros((3, 4)), "T": 2.0, "mask": None, "flag": True, "axis": -1})
    assert named["T"] == 2.0 and named["sqrt(T)"] == pytest.approx(2.0**0.5)
    assert named["Q.shape[0]"] == 3 and named["sqrt(Q.shape[1])"] == 2.0 and named["Q.size"] == 12
    assert named["log 2"] == pytest.approx(np.log(2))
    assert "mask" not in named and "flag" not in named


# Bugs no known-wrong solution of the catalog makes: the reason of each value check says what the values show.
UNFORESEEN = [
    (
        "cross-entropy",
        "return -log_probs[np.arange(len(targets)), targets].mean() / np.log(2)",
        "your loss is the expected one divided by log 2 (0.693147 here)",
    ),
    (
        "temperature",
        "return e / e.sum() * T",
        "your weights are the expected ones times T (",
    ),
]
_SOURCES = {
    "cross-entropy": (
        "import numpy as np\n\n\ndef cross_entropy(logits, targets):\n"
        "    shifted = logits - logits.max(axis=1, keepdims=True)\n"
        "    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))\n"
        "    {line}\n"
    ),
    "temperature": (
        "import numpy as np\n\n\ndef softmax_with_temperature(z, T):\n"
        "    if T <= 0:\n        raise ValueError('T must be positive')\n"
        "    s = z / T\n    e = np.exp(s - s.max())\n    {line}\n"
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize(("exercise_id", "line", "said"), UNFORESEEN, ids=[u[0] for u in UNFORESEEN])
def test_value_checks_explain_a_bug_nobody_foresaw(
    session: Any, catalog: Any, tmp_path: Path, exercise_id: str, line: str, said: str
) -> None:
    path = tmp_path / "learner.py"
    path.write_text(_SOURCES[exercise_id].format(line=line))
    result = grade_one(session, path, exercise_id)
    checks = {check.id: check for check in catalog.exercises[exercise_id].checks}
    compared = [c for c in result.checks if checks[c.id].property == "matches-reference" and c.status == "failed"]
    assert compared, failures(result)
    for check in compared:
        assert said in check.reason, check.reason
        assert checks[check.id].hint == "" or checks[check.id].hint not in check.reason
