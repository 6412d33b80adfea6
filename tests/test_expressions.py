"""The relation language: what it refuses when a spec loads, and what it computes."""

from __future__ import annotations

import numpy as np
import pytest

from grader.checks.expressions import (
    MAX_DEPTH,
    MAX_LENGTH,
    ExpressionError,
    evaluate,
    parse_relation,
    planned_calls,
)

HOSTILE = [
    ("__import__('os').system('true') == f(x)", "called"),
    ("().__class__ == f(x)", "dot"),
    ("x.__dict__ == f(x)", "dot"),
    ("f(x).__class__.__mro__ == 1", "dot"),
    ("(lambda: 1)() == f(x)", "called"),
    ("f(x) == (lambda y: y)", "lambda"),
    ("f(x) == [a for a in x]", "comprehension"),
    ("f(x) == sum(a for a in x)", "generator"),
    ("f(x) == {a: 1 for a in x}", "comprehension"),
    ("f(x) == 10**10**10", "exponent"),
    ("f(x) == x ** x", "exponent"),
    ("f(x) == 2 ** 1000", "exponent"),
    ("f(x) == 'a'", "constant"),
    ("f(x) == f'{x}'", "f-string"),
    ("f(x) == (y := 3)", "assignment"),
    ("f(x) == np.exp(x)", "called"),
    ("f(x) == getattr(x, 'shape')", "constant"),
    ("f(x) == _secret", "name"),
    ("f(x) == exp(x, out=x)", "keyword"),
    ("f(x) == exp(*x)", r"\*arguments"),
    ("f(x) == exp(**x)", "keywords"),
    ("f(x) == x[x]", "index"),
    ("f(x) == x[1.5]", "index"),
    ("f(x) == x if x else x", "one comparison|conditional"),
    ("f(x) == 1 == 1", "one comparison"),
    ("f(x) and x", "one comparison"),
    ("f(x)", "one comparison"),
    ("exp(x) == log(x)", "calls no entry"),
    ("f(g(x)) == 1", "inside the arguments"),
    ("f(x) == reference.g(f(x))", "inside the arguments"),
    ("f(x) == reference.__class__(x)", "not allowed"),
    ("f(x) == reference", "not allowed"),
    ("f(x) == x @ x", "operator"),
    ("f(x) == ~x", "operator"),
    ("f(x) == 1" + " + 1" * 200, "characters long"),
    ("f(x) == " + "(" * 40 + "x" + ")" * 40 + " + " + "-" * 30 + "x", "nested"),
    ("f(x) == 99999999999999999999999999", "too large"),
    ("", "non-empty"),
    ("f(x) ==", "not an expression"),
]


@pytest.mark.parametrize(("text", "why"), HOSTILE, ids=[f"hostile-{i}" for i in range(len(HOSTILE))])
def test_parse_relation_refuses_what_is_not_whitelisted(text: str, why: str) -> None:
    with pytest.raises(ExpressionError, match=why):
        parse_relation(text)


def test_parse_relation_refuses_deep_nesting_and_long_text() -> None:
    nested = "f(x) == " + "exp(" * (MAX_DEPTH + 2) + "x" + ")" * (MAX_DEPTH + 2)
    with pytest.raises(ExpressionError, match="nested"):
        parse_relation(nested)
    with pytest.raises(ExpressionError, match=str(MAX_LENGTH)):
        parse_relation("f(x) == x" + " " * MAX_LENGTH)


@pytest.mark.parametrize(
    "text",
    [
        "sigmoid(-x) == 1 - sigmoid(x)",
        "logsumexp(z + c) == logsumexp(z) + c",
        "sigmoid(x) == reference.softmax(stack([x, zeros_like(x)], axis=-1))[..., 0]",
        "logsumexp(z) >= max(z, axis=-1)",
        "f(x)[1:, ::2] < where(x > 0, x ** 2, -x) + inf",
        "f(x) > -pi",
    ],
    ids=["symmetry", "shift", "reference", "bound", "subscripts", "constant"],
)
def test_parse_relation_accepts_the_documented_forms(text: str) -> None:
    relation = parse_relation(text)
    assert relation.text == text
    assert relation.calls


def test_relation_names_are_the_variables_read_not_the_functions_called() -> None:
    relation = parse_relation("sigmoid(x) == reference.softmax(stack([x, zeros_like(y)], axis=-1))[..., 0] + pi")
    assert relation.names() == {"x", "y"}
    assert [(site.function, site.on) for site in relation.calls] == [("sigmoid", "learner"), ("softmax", "reference")]


def test_planned_calls_compute_arguments_from_the_case_alone() -> None:
    relation = parse_relation("logsumexp(z + c, axis=-1) == logsumexp(z) + c")
    z = np.array([[0.0, 1.0]])
    planned = planned_calls(relation, {"z": z, "c": 1000.0})
    assert [call.site.function for call in planned] == ["logsumexp", "logsumexp"]
    np.testing.assert_array_equal(planned[0].args[0], z + 1000.0)
    assert planned[0].kwargs == {"axis": -1} and type(planned[0].kwargs["axis"]) is int
    np.testing.assert_array_equal(planned[1].args[0], z)


def test_evaluate_substitutes_each_call_by_its_result_in_order() -> None:
    relation = parse_relation("f(-x) == 1 - f(x)")
    x = np.array([0.0, 2.0])
    left, right = evaluate(relation, {"x": x}, [np.array([0.5, 0.25]), np.array([0.5, 0.75])])
    np.testing.assert_array_equal(left, [0.5, 0.25])
    np.testing.assert_array_equal(right, [0.5, 0.25])


def test_evaluate_keeps_integer_literals_for_indices_and_does_arithmetic_in_float() -> None:
    relation = parse_relation("f(x)[..., 0] == 2 ** 62 * 4 + stack([x, x], axis=-1)[-1, 1:]")
    left, right = evaluate(relation, {"x": np.array([1.0, 2.0])}, [np.array([[7.0, 8.0], [9.0, 10.0]])])
    np.testing.assert_array_equal(left, [7.0, 9.0])
    assert right.dtype == np.float64 and right[0] == pytest.approx(2.0**64 + 2.0)


def test_evaluate_refuses_arithmetic_on_lists() -> None:
    relation = parse_relation("f(x) == [x] * 1000000000")
    with pytest.raises(ExpressionError, match="list"):
        evaluate(relation, {"x": np.array([1.0])}, [np.array([1.0])])


def test_evaluate_refuses_to_broadcast_two_results_into_an_outer_product() -> None:
    relation = parse_relation("f(x) + f(-x) == 1")
    with pytest.raises(ExpressionError, match="larger than either"):
        evaluate(relation, {"x": np.zeros(3)}, [np.zeros((3, 1)), np.zeros(3)])
    left, _ = evaluate(relation, {"x": np.zeros(3)}, [np.zeros((2, 3)), np.ones(3)])
    np.testing.assert_array_equal(left, np.ones((2, 3)))
    keeps = parse_relation("f(z) == z - max(z, axis=-1, keepdims=1)")
    evaluate(keeps, {"z": np.zeros((2, 3))}, [np.zeros((2, 3))])
