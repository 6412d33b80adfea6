"""The relation language: what it refuses when a spec loads, and what it computes."""

from __future__ import annotations

import numpy as np
import pytest

from grader.checks.expressions import (
    MAX_DEPTH,
    MAX_LENGTH,
    ExpressionError,
    evaluate,
    evaluate_expression,
    parse_expression,
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
    ("f(x) == x[1:2.5]", "slice"),
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
    ("f(x) == x << x", "operator"),
    ("f(x) == x.shape", "dot"),
    ("f(x) == reference.T", "dot|not allowed"),
    ("f(x) == norm(x, out=x)", "keyword 'out'"),
    ("f(x) == eye(2000)", "at most 1000000"),
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


def test_evaluate_lets_a_broadcast_grow_within_the_size_cap_and_refuses_beyond_it() -> None:
    relation = parse_relation("f(x) + f(-x) == 1")
    left, _ = evaluate(relation, {"x": np.zeros(3)}, [np.zeros((3, 1)), np.ones(3)])
    np.testing.assert_array_equal(left, np.ones((3, 3)))
    with pytest.raises(ExpressionError, match=r"\(2000, 1\), \(2000,\) would have 4000000 entries; .* at most 1000000"):
        evaluate(relation, {"x": np.zeros(3)}, [np.zeros((2000, 1)), np.zeros(2000)])
    with pytest.raises(ExpressionError, match="do not fit together"):
        evaluate(relation, {"x": np.zeros(3)}, [np.zeros(2), np.zeros(3)])
    keeps = parse_relation("f(z) == z - max(z, axis=-1, keepdims=1)")
    evaluate(keeps, {"z": np.zeros((2, 3))}, [np.zeros((2, 3))])


_RNG = np.random.default_rng(7)
_A = _RNG.standard_normal((5, 3))
_Q = np.linalg.qr(_A)[0]


@pytest.mark.parametrize(
    ("text", "variables", "results"),
    [
        ("g(A).T @ g(A) == eye(shape(A)[1])", {"A": _A}, [_Q, _Q]),
        ("g(A) @ (g(A).T @ A) == A", {"A": _A}, [_Q, _Q]),
        ("transpose(g(A)) == g(A).T", {"A": _A}, [_Q, _Q]),
        ("matmul(g(A).T, g(A)) == eye(3)", {"A": _A}, [_Q, _Q]),
        ("norm(g(A), axis=0) == ones_like(A[0])", {"A": _A}, [_Q]),
        ("norm(g(A)) == sqrt(3)", {"A": _A}, [_Q]),
        ("trace(g(A).T @ g(A)) == 3", {"A": _A}, [_Q, _Q]),
        ("diagonal(g(A).T @ g(A)) == diag(eye(3))", {"A": _A}, [_Q, _Q]),
        ("diag(g(x)) @ ones_like(x) == x", {"x": np.arange(3.0)}, [np.arange(3.0)]),
        ("outer(g(x), g(x)) == x[:, None] * x[None, :]", {"x": np.arange(3.0)}, [np.arange(3.0), np.arange(3.0)]),
        ("triu(g(A)) + tril(g(A), -1) == g(A)", {"A": _A}, [_Q, _Q, _Q]),
        ("solve(g(M), x) == inv(M) @ x", {"M": np.eye(2) * 2, "x": np.ones(2)}, [np.eye(2) * 2]),
        ("det(g(M)) == 4", {"M": np.eye(2) * 2}, [np.eye(2) * 2]),
        ("g(x)[:k] == x[:k]", {"x": np.arange(5.0), "k": 3}, [np.arange(5.0)]),
        ("g(x)[k - 1] == x[-k + 2 * k - 1]", {"x": np.arange(5.0), "k": 3}, [np.arange(5.0)]),
        ("g(x)[idx] == x[idx]", {"x": np.arange(5.0), "idx": np.array([4, 0])}, [np.arange(5.0)]),
        ("g(x)[x > 2] == x[3:]", {"x": np.arange(5.0)}, [np.arange(5.0)]),
        ("g(b) == 1 - cos(b) + sin(0) + arctan(0)", {"b": 1.0}, [1 - np.cos(1.0)]),
    ],
    ids=[
        "orthonormal",
        "span",
        "transpose",
        "matmul",
        "column-norms",
        "frobenius",
        "trace",
        "diagonal",
        "diag-of-vector",
        "outer",
        "triangles",
        "solve",
        "det",
        "where-slice",
        "where-index",
        "array-index",
        "mask",
        "trigonometry",
    ],
)
def test_the_linear_algebra_of_relations_computes_what_it_says(text: str, variables: dict, results: list) -> None:
    left, right = evaluate(parse_relation(text), variables, results)
    np.testing.assert_allclose(np.asarray(left, dtype=float), np.asarray(right, dtype=float), atol=1e-12)


def test_integer_arithmetic_stays_integer_within_two_to_the_53() -> None:
    relation = parse_relation("f(2 * n, n // 2, n % 3, -n, n ** 2) == 7 / n")
    planned = planned_calls(relation, {"n": 4})
    assert planned[0].args == (8, 2, 1, -4, 16)
    assert all(type(arg) is int for arg in planned[0].args)
    _, right = evaluate(relation, {"n": 4}, [np.array(0.0)])
    assert right == 1.75
    counts = planned_calls(parse_relation("f(k * 2 + 1) == 0"), {"k": np.arange(3)})[0].args[0]
    assert counts.dtype == np.int64 and counts.tolist() == [1, 3, 5]
    large = planned_calls(parse_relation("f(n * n) == 0"), {"n": 2**40})[0].args[0]
    assert isinstance(large, np.floating) or np.asarray(large).dtype == np.float64  # past 2**53: float, never wrapped
    mixed = planned_calls(parse_relation("f(n * 0.5) == 0"), {"n": 4})[0].args[0]
    assert float(mixed) == 2.0 and not isinstance(mixed, int)


@pytest.mark.parametrize(
    ("text", "variables", "why"),
    [
        (
            "f(x) == x[x]",
            {"x": np.zeros(3)},
            "an index in a relation is an integer; this one is an array of dtype float64",
        ),
        ("f(x) == x[:k]", {"x": np.zeros(3), "k": 1.5}, "a slice bound in a relation is an integer"),
        ("f(x) == eye(k)", {"x": np.zeros(3), "k": 2000}, "eye\\(\\) would have 4000000 entries"),
        ("f(x) == f(x) @ f(x)", {"x": np.zeros(3)}, "do not fit a matrix product: 2 against 3"),
        ("f(x) == n // 0", {"x": 1, "n": 3}, "by zero"),
    ],
    ids=["float-index", "float-slice", "eye-too-large", "product-shapes", "integer-division-by-zero"],
)
def test_evaluation_refuses_what_the_values_make_impossible(text: str, variables: dict, why: str) -> None:
    relation = parse_relation(text)
    results = [np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((3, 2))][: len(relation.calls)]
    with pytest.raises(ExpressionError, match=why):
        evaluate(relation, variables, results)


def test_a_matrix_product_past_the_size_cap_is_refused_before_it_is_computed() -> None:
    relation = parse_relation("f(x) @ f(x).T == 0")
    with pytest.raises(ExpressionError, match="would have 4000000 entries"):
        evaluate(relation, {"x": 0}, [np.zeros((2000, 1)), np.zeros((2000, 1))])


def test_parse_expression_refuses_entry_calls_and_reads_names() -> None:
    expression = parse_expression("reference.integral(f, a, b) + 1 - cos(b)")
    assert expression.names() == {"f", "a", "b"}
    assert [(site.function, site.on) for site in expression.calls] == [("integral", "reference")]
    assert evaluate_expression(parse_expression("1 - cos(b)"), {"b": 0.0}, []) == 0.0
    with pytest.raises(ExpressionError, match="calls trapezoid\\(\\), which is not a numpy function"):
        parse_expression("trapezoid(f, a, b, 8)")
