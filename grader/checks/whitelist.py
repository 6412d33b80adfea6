"""The whitelist of the relation language: which nodes a relation or expression may hold, checked when a spec loads.

``grader.checks.expressions`` parses a text into a tree (``parsed_tree``)
and has every node checked here (``check_node``) before anything is
computed; a node outside the whitelist is an ``ExpressionError`` naming
it. The limits (``MAX_LENGTH``, ``MAX_DEPTH``, ``MAX_EXPONENT``) and the
operators (``COMPARISONS``, ``ARITHMETIC``) are the language's, shared
with the evaluator.
"""

from __future__ import annotations

import ast
from typing import Any

from grader.checks.operations import FUNCTIONS, MAX_INTEGER, ExpressionError, check_entries

__all__ = [
    "ARITHMETIC",
    "COMPARISONS",
    "MAX_DEPTH",
    "MAX_EXPONENT",
    "MAX_LENGTH",
    "call_arguments",
    "callee",
    "check_node",
    "describe_node",
    "integer_literal",
    "number_literal",
    "parsed_tree",
    "shown_callee",
]

MAX_LENGTH = 500
MAX_DEPTH = 20
MAX_EXPONENT = 64.0

COMPARISONS: dict[type[ast.cmpop], str] = {
    ast.Eq: "==",
    ast.LtE: "<=",
    ast.GtE: ">=",
    ast.Lt: "<",
    ast.Gt: ">",
}
ARITHMETIC: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.MatMult: "@",
}


def parsed_tree(text: str, what: str, example: str) -> ast.expr:
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError(f"a {what} is {example}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"the {what} is {len(text)} characters long; at most {MAX_LENGTH} are allowed")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"the {what} is not an expression: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError):
        raise ExpressionError(f"the {what} could not be read as an expression") from None
    return tree.body


def check_node(node: ast.AST, depth: int, inside_call: str | None) -> None:
    """Refuse any node outside the whitelist; ``inside_call``: the learner/reference call whose arguments we are in."""
    if depth > MAX_DEPTH:
        raise ExpressionError(f"the relation is nested more than {MAX_DEPTH} deep")
    deeper = depth + 1
    if isinstance(node, ast.Compare):
        if len(node.ops) != 1 or type(node.ops[0]) not in COMPARISONS:
            raise ExpressionError("a comparison inside a relation has one operator: ==, <=, >=, < or >")
        check_node(node.left, deeper, inside_call)
        check_node(node.comparators[0], deeper, inside_call)
    elif isinstance(node, ast.Constant):
        _check_constant(node.value)
    elif isinstance(node, ast.Name):
        _check_name(node.id)
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in ARITHMETIC:
            raise ExpressionError(f"the operator {type(node.op).__name__} is not allowed; use + - * / // % ** @")
        if isinstance(node.op, ast.Pow):
            exponent = number_literal(node.right)
            if exponent is None or abs(exponent) > MAX_EXPONENT:
                raise ExpressionError(f"the exponent of ** must be a number of magnitude at most {MAX_EXPONENT:g}")
        check_node(node.left, deeper, inside_call)
        check_node(node.right, deeper, inside_call)
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, (ast.USub, ast.UAdd)):
            raise ExpressionError(f"the operator {type(node.op).__name__} is not allowed; use unary - or +")
        check_node(node.operand, deeper, inside_call)
    elif isinstance(node, (ast.List, ast.Tuple)):
        if len(node.elts) > 64:
            raise ExpressionError("a list in a relation has at most 64 items")
        for item in node.elts:
            check_node(item, deeper, inside_call)
    elif isinstance(node, ast.Subscript):
        check_node(node.value, deeper, inside_call)
        if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            _check_field(node)
        else:
            _check_index(node.slice, deeper, inside_call)
    elif isinstance(node, ast.Call):
        _check_call(node, depth, inside_call)
    elif isinstance(node, ast.Attribute):
        if node.attr != "T" or (isinstance(node.value, ast.Name) and node.value.id == "reference"):
            raise ExpressionError("a dot is allowed only in .T (the transpose) and in calls of reference.NAME(...)")
        check_node(node.value, deeper, inside_call)
    else:
        raise ExpressionError(f"{describe_node(node)} is not allowed in a relation")


def _check_constant(value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ExpressionError(f"the constant {value!r} is not allowed; only numbers are")
    if isinstance(value, int) and abs(value) > MAX_INTEGER:
        raise ExpressionError(f"the integer {value} is too large (at most 2**53)")


def _check_name(name: str) -> None:
    if name.startswith("_") or name == "reference":
        raise ExpressionError(f"the name {name!r} is not allowed in a relation")


def _check_field(node: ast.Subscript) -> None:
    """A field of a dict a call returns, ``stats(x)["mean"]``: a short name, on a call's result itself."""
    name = node.slice.value  # type: ignore[attr-defined]  # a str constant, by the caller
    if not isinstance(node.value, ast.Call) or callee(node.value)[1] == "numpy":
        raise ExpressionError(f'a field such as ["{name}"] is read only off what an entry or reference call returns')
    if not name or len(name) > 80:
        raise ExpressionError("a field name in a relation has 1 to 80 characters")


def _check_index(node: ast.AST, depth: int, inside_call: str | None) -> None:
    """An index: integers (written or computed), slices of them, ``...``, ``None``, or a tuple of those."""
    items = node.elts if isinstance(node, ast.Tuple) else [node]
    if len(items) > 32:
        raise ExpressionError("an index has at most 32 parts")
    for item in items:
        if isinstance(item, ast.Constant) and (item.value is Ellipsis or item.value is None):
            continue
        if isinstance(item, ast.Slice):
            for part in (item.lower, item.upper, item.step):
                if part is None:
                    continue
                if number_literal(part) is not None and integer_literal(part) is None:
                    raise ExpressionError("a slice in a relation is made of integers, like [1:], [::2] or [:k]")
                check_node(part, depth + 1, inside_call)
            continue
        if number_literal(item) is not None and integer_literal(item) is None:
            raise ExpressionError("an index in a relation is an integer, a slice, ..., None or an integer array")
        check_node(item, depth + 1, inside_call)


def _check_call(node: ast.Call, depth: int, inside_call: str | None) -> None:
    function, on = callee(node)
    if any(keyword.arg is None for keyword in node.keywords):
        raise ExpressionError("**keywords are not allowed in a relation")
    if on == "numpy":
        allowed = FUNCTIONS[function].keywords
        for keyword in node.keywords:
            if keyword.arg not in allowed:
                takes = f"allowed: {', '.join(allowed)}" if allowed else "it takes none"
                raise ExpressionError(f"{function}() takes no keyword {keyword.arg!r} in a relation ({takes})")
        if function == "eye":  # a written size is refused when the spec loads, not when it is first graded
            sizes = [integer_literal(arg) for arg in node.args]
            if len(sizes) in (1, 2) and all(size is not None for size in sizes):
                rows, columns = sizes[0], sizes[-1]
                assert rows is not None and columns is not None
                check_entries(abs(rows) * abs(columns), 0, f"eye({', '.join(map(str, sizes))})")
    else:
        if inside_call is not None:
            raise ExpressionError(
                f"{shown_callee(function, on)}() is called inside the arguments of {inside_call}(); "
                "the arguments of an entry or reference call are computed from the case alone"
            )
        inside_call = shown_callee(function, on)
    for keyword in node.keywords:
        _check_name(str(keyword.arg))
    for arg in call_arguments(node):
        if isinstance(arg, ast.Starred):
            raise ExpressionError("*arguments are not allowed in a relation")
        if on != "numpy" and isinstance(arg, ast.Constant) and arg.value is None:
            continue  # an entry's optional argument given as None (mask=None), as its signature allows
        check_node(arg, depth + 1, inside_call)


def callee(node: ast.Call) -> tuple[str, str]:
    """What a call calls: (name, "numpy" | "learner" | "reference"); ``ExpressionError`` for anything else."""
    func = node.func
    if isinstance(func, ast.Name):
        _check_name(func.id)
        return func.id, "numpy" if func.id in FUNCTIONS else "learner"
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "reference":
        _check_name(func.attr)
        return func.attr, "reference"
    raise ExpressionError("only numpy functions, entry functions and reference.NAME can be called in a relation")


def shown_callee(function: str, on: str) -> str:
    return f"reference.{function}" if on == "reference" else function


def call_arguments(node: ast.Call) -> list[ast.expr]:
    return list(node.args) + [keyword.value for keyword in node.keywords]


def describe_node(node: ast.AST) -> str:
    names = {
        "Lambda": "a lambda",
        "ListComp": "a comprehension",
        "SetComp": "a comprehension",
        "DictComp": "a comprehension",
        "GeneratorExp": "a generator expression",
        "JoinedStr": "an f-string",
        "Dict": "a dict",
        "Set": "a set",
        "IfExp": "a conditional expression",
        "BoolOp": "and/or",
        "NamedExpr": "an assignment (:=)",
        "Await": "await",
        "Yield": "yield",
        "Starred": "a starred expression",
    }
    return names.get(type(node).__name__, f"the construct {type(node).__name__}")


def number_literal(node: ast.AST) -> float | None:
    """A number literal (possibly negated), or ``None``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = number_literal(node.operand)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    return None


def integer_literal(node: ast.AST) -> int | None:
    """An integer literal (possibly negated), or ``None``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = integer_literal(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None
