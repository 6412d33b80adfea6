"""A small, safe language for relations between calls: parsed with ``ast``, evaluated over numpy.

A relation is one comparison, ``left OP right`` with OP one of ``==``,
``<=``, ``>=``, ``<``, ``>``, written in a spec (``property: identity``);
an expression (``parse_expression``) is one side alone, such as the exact
value a convergence check measures errors against. Nothing of either is
ever handed to ``eval``: the text is parsed, every node is checked against
a whitelist when the spec loads, and a tree walker computes the value
(``grader.checks.operations`` holds the functions, the arithmetic and the
size cap). What a relation may contain:

- numbers (integers stay integers while exact, within 2**53; ``/`` and
  float operands give float64), ``inf``, ``nan``, ``pi``;
- names bound to the case's arguments and the check's ``where`` variables;
- ``+ - * / // % **`` and ``@`` (the matrix product), unary ``-``/``+`` (the
  exponent of ``**`` must be a number of magnitude at most
  ``MAX_EXPONENT``), ``.T`` (the transpose), comparisons (a boolean array
  inside, e.g. ``where(x > 0, ...)``);
- subscripts: integers, slices, ``...``, ``None`` and tuples of those, whose
  integers may be computed (``x[:k]``, ``A[:, n - 1]``, ``x[idx]``); an
  item of a tuple a call returns (``newton(a)[0]``);
- lists and tuples (as arguments: ``stack([x, zeros_like(x)], axis=-1)``);
- calls of the functions in ``NUMPY_FUNCTIONS`` (each with its own
  keywords), of the exercise's entry functions (the learner's), and of
  ``reference.NAME`` (the exercise's reference solution).

No other attribute, no dunder name, no lambda, comprehension, f-string or
starred argument. A relation longer than ``MAX_LENGTH`` characters or
nested deeper than ``MAX_DEPTH`` is refused, and so is any value with more
than ``MAX_ENTRIES`` entries. A learner or reference call may not sit
inside another such call's arguments: every such call is planned before
any runs, on arguments computed from the case alone.

Evaluation has two phases (``grader.checks.identity``): ``planned_calls``
computes each learner or reference call's arguments from the case;
``evaluate`` computes the relation once those calls have answered.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
from msgspec import Struct

from grader.checks.operations import (
    FUNCTIONS,
    MAX_ENTRIES,
    ExpressionError,
    arithmetic,
    call_function,
    fits_together,
    index_part,
    negate,
    transpose,
    tuple_item,
)
from grader.checks.whitelist import (
    ARITHMETIC,
    COMPARISONS,
    MAX_DEPTH,
    MAX_EXPONENT,
    MAX_LENGTH,
    callee,
    check_node,
    describe_node,
    parsed_tree,
    shown_callee,
)

__all__ = [
    "COMPARISONS",
    "MAX_DEPTH",
    "MAX_ENTRIES",
    "MAX_EXPONENT",
    "MAX_LENGTH",
    "NUMPY_FUNCTIONS",
    "CallSite",
    "Expression",
    "ExpressionError",
    "PlannedCall",
    "Relation",
    "evaluate",
    "evaluate_expression",
    "parse_expression",
    "parse_relation",
    "planned_calls",
]


NUMPY_FUNCTIONS: dict[str, Callable[..., Any]] = {name: function.call for name, function in FUNCTIONS.items()}
_CONSTANTS = {"inf": np.inf, "nan": np.nan, "pi": np.pi}

_ORDER: dict[str, Callable[[Any, Any], Any]] = {
    "==": np.equal,
    "<=": np.less_equal,
    ">=": np.greater_equal,
    "<": np.less,
    ">": np.greater,
}


class CallSite(Struct, frozen=True):
    """A call a relation makes of a learner's entry (``on="learner"``) or of the reference solution.

    ``indexed``: the relation subscripts the call's result directly
    (``newton(x)[0]``), so a tuple it returns is taken apart, item by item.
    """

    function: str
    on: str
    node: ast.Call
    indexed: bool = False


class Relation(Struct, frozen=True):
    """A parsed, checked relation: its two sides, the comparison, and the calls it makes, in order."""

    text: str
    left: ast.expr
    op: str
    right: ast.expr
    calls: tuple[CallSite, ...]

    def names(self) -> set[str]:
        """The variable names the relation reads (not the names it calls, not ``reference``, not constants)."""
        return _names_read([self.left, self.right])


class Expression(Struct, frozen=True):
    """A parsed, checked expression (one side of a relation, with no learner call): a value computed from a case."""

    text: str
    node: ast.expr
    calls: tuple[CallSite, ...]

    def names(self) -> set[str]:
        """The variable names the expression reads."""
        return _names_read([self.node])


def _names_read(sides: list[ast.expr]) -> set[str]:
    nodes = [node for side in sides for node in ast.walk(side)]
    callees = set()
    for node in nodes:
        if isinstance(node, ast.Call):
            callees.add(id(node.func))
            if isinstance(node.func, ast.Attribute):
                callees.add(id(node.func.value))
    return {
        node.id
        for node in nodes
        if isinstance(node, ast.Name) and id(node) not in callees and node.id not in _CONSTANTS
    }


@functools.lru_cache(maxsize=256)  # by text: a check parses its relation for every case it plans and judges
def parse_relation(text: str) -> Relation:
    """Parse and check a relation; ``ExpressionError`` names what is not allowed.

    The ``Relation`` returned is shared between callers (it is cached by
    text): nothing may change its nodes.

    Names that are not numpy functions are taken for entry functions when
    called and for variables otherwise; whether they exist is checked
    against the exercise (``Relation.names``, ``Relation.calls``).
    """
    body = parsed_tree(text, "relation", "a non-empty comparison, like 'f(-x) == 1 - f(x)'")
    if not isinstance(body, ast.Compare) or len(body.ops) != 1 or type(body.ops[0]) not in COMPARISONS:
        raise ExpressionError("a relation is one comparison, 'left OP right', with OP one of ==, <=, >=, <, >")
    check_node(body, depth=0, inside_call=None)
    calls = tuple(_call_sites(body))
    if not any(site.on == "learner" for site in calls):
        raise ExpressionError("the relation calls no entry function, so it says nothing about the learner's code")
    return Relation(text, body.left, COMPARISONS[type(body.ops[0])], body.comparators[0], calls)


@functools.lru_cache(maxsize=256)
def parse_expression(text: str) -> Expression:
    """Parse and check an expression that calls no entry (numpy functions and ``reference.NAME`` only)."""
    body = parsed_tree(text, "expression", "a non-empty expression, like '1 - cos(1)'")
    check_node(body, depth=0, inside_call=None)
    calls = tuple(_call_sites(body))
    learner = [site.function for site in calls if site.on == "learner"]
    if learner:
        raise ExpressionError(
            f"the expression calls {learner[0]}(), which is not a numpy function it may use; "
            "it may call reference.NAME(...) and those of the relation language"
        )
    return Expression(text, body, calls)


def _call_sites(node: ast.AST, indexed: bool = False) -> Iterator[CallSite]:
    """The learner and reference calls of a checked relation, left to right (never nested, by ``check_node``)."""
    if isinstance(node, ast.Call):
        function, on = callee(node)
        if on != "numpy":
            yield CallSite(function, on, node, indexed)
            return
    for child in ast.iter_child_nodes(node):
        yield from _call_sites(child, isinstance(node, ast.Subscript) and child is node.value)


# Evaluation


class PlannedCall(Struct, frozen=True):
    """A call site with its arguments computed from the case: positional values and keyword values."""

    site: CallSite
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def planned_calls(relation: Relation | Expression, variables: Mapping[str, Any]) -> list[PlannedCall]:
    """Each learner or reference call of ``relation`` with its arguments computed from ``variables``."""
    walker = _Walker(variables, {})
    planned = []
    for site in relation.calls:
        args = tuple(walker.value(arg) for arg in site.node.args)
        kwargs = {str(k.arg): walker.value(k.value) for k in site.node.keywords}
        planned.append(PlannedCall(site, args, kwargs))
    return planned


def evaluate(relation: Relation, variables: Mapping[str, Any], results: list[Any]) -> tuple[Any, Any]:
    """The values of both sides, with each call of ``relation.calls`` replaced by its result, in order."""
    walker = _Walker(variables, _answered(relation.calls, results))
    with np.errstate(all="ignore"):
        return walker.value(relation.left), walker.value(relation.right)


def evaluate_expression(expression: Expression, variables: Mapping[str, Any], results: list[Any]) -> Any:
    """The value of ``expression``, with each of its reference calls replaced by its result, in order."""
    walker = _Walker(variables, _answered(expression.calls, results))
    with np.errstate(all="ignore"):
        return walker.value(expression.node)


def field_of(result: Any, name: str) -> Any:
    """Field ``name`` of a dict a call returned (``stats(x)["mean"]``), or an ``ExpressionError`` saying what came."""
    if not isinstance(result, dict):
        shown = f"a tuple of {len(result)} values" if isinstance(result, tuple) else "one value"
        raise ExpressionError(f"[{name!r}] reads a field of a dict, and the call returned {shown}")
    if name not in result:
        fields = ", ".join(map(str, result)) or "none"
        raise ExpressionError(f"the returned dict has no field {name!r} (its fields: {fields})")
    item = result[name]
    return int(item) if isinstance(item, np.ndarray) and item.ndim == 0 and item.dtype.kind in "iu" else item


def _answered(calls: tuple[CallSite, ...], results: list[Any]) -> dict[int, Any]:
    return {id(site.node): result for site, result in zip(calls, results, strict=True)}


class _Walker:
    """Computes checked nodes (``grader.checks.operations``: integers stay integers, every value within the cap)."""

    def __init__(self, variables: Mapping[str, Any], answered: dict[int, Any]) -> None:
        self._variables, self._answered = variables, answered

    def value(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in self._variables:
                return self._variables[node.id]
            if node.id in _CONSTANTS:
                return _CONSTANTS[node.id]
            raise ExpressionError(f"the name {node.id!r} is not bound")
        if isinstance(node, ast.BinOp):
            return arithmetic(ARITHMETIC[type(node.op)], self.value(node.left), self.value(node.right))
        if isinstance(node, ast.UnaryOp):
            operand = self.value(node.operand)
            if isinstance(operand, (list, tuple)):
                raise ExpressionError("arithmetic on a list is not allowed; stack it into an array first")
            return negate(operand) if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.Compare):
            op = COMPARISONS[type(node.ops[0])]
            left, right = self.value(node.left), self.value(node.comparators[0])
            fits_together(left, right)
            return _ORDER[op](left, right)
        if isinstance(node, ast.Attribute):
            return transpose(self.value(node.value))
        if isinstance(node, ast.List):
            return [self.value(item) for item in node.elts]
        if isinstance(node, ast.Tuple):
            return tuple(self.value(item) for item in node.elts)
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.Call):
            if id(node) in self._answered:
                return self._answered[id(node)]
            function, on = callee(node)
            if on != "numpy":
                raise ExpressionError(f"{shown_callee(function, on)}() has not been answered")
            args = [self.value(arg) for arg in node.args]
            kwargs = {str(k.arg): self.value(k.value) for k in node.keywords}
            return call_function(function, args, kwargs)
        raise ExpressionError(f"{describe_node(node)} is not allowed in a relation")

    def _subscript(self, node: ast.Subscript) -> Any:
        raw = self.value(node.value)
        if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            return field_of(raw, node.slice.value)
        if isinstance(raw, tuple) and not isinstance(node.slice, (ast.Tuple, ast.Slice)):
            return tuple_item(raw, self.value(node.slice))  # one item of a returned tuple, such as (root, steps)
        value = np.asarray(raw)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        parts: list[Any] = []
        for item in items:
            if isinstance(item, ast.Slice):
                bounds = (
                    None if p is None else index_part(self.value(p), "slice")
                    for p in (item.lower, item.upper, item.step)
                )
                parts.append(slice(*bounds))
            else:
                parts.append(index_part(self.value(item), "index"))
        arrays = [part for part in parts if isinstance(part, np.ndarray) and part.dtype.kind != "b"]
        if len(arrays) > 1:
            fits_together(*arrays)  # several integer arrays index by broadcasting against each other
        result = value[tuple(parts) if isinstance(node.slice, ast.Tuple) else parts[0]]
        return int(result) if isinstance(result, np.integer) else result
