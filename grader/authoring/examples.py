"""Public examples as values: the call an example shows, and the result it promises, for ``grader validate``.

A spec's examples are text for learners (``softmax(np.array([1.0, 2.0]))``
and ``array([0.26894142, 0.73105858])``). Where both are plain values (numbers,
lists, ``np.array(...)``, a bare function name for a ``callable`` argument)
they are read with a small evaluator over the syntax tree, never ``eval``, and
the reference's output is compared with the promised result to the precision
it is written with: ``0.09003057`` must be right to its last digit (rounded),
``3.7e-44`` to within half of ``1e-45``. Anything else (prose such as ``about 64``) is left
unchecked, and said so.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from grader.spec.crossrefs import parameters

__all__ = ["ExampleMistake", "ExampleValue", "NotAValue", "compare_result", "read_example"]

_ARRAY_MAKERS = {"np.array", "np.asarray", "numpy.array", "numpy.asarray", "array"}
_NAMED = {
    "np.inf": math.inf,
    "np.nan": math.nan,
    "inf": math.inf,
    "nan": math.nan,
    "np.pi": math.pi,
    "True": True,
    "False": False,
    "None": None,
}
# numpy prints a value it shows exactly at its default precision with a bare point ("0.", "1.").
_NUMPY_PRECISION = 1e-8
# A printed number is the true one rounded to its last digit: within half a unit, and a hair more for the
# binary rounding of both.
_HALF = 0.5 + 1e-6


class NotAValue(ValueError):
    """The text is not a plain value this module reads; the message says what it met."""


class ExampleMistake(ValueError):
    """The call cannot work whatever the reference does: it names no entry, or an argument the entry lacks."""


@dataclass(frozen=True)
class ExampleValue:
    """One example, read: the entry it calls, the arguments by name, the result and its precision per element."""

    entry: str
    args: dict[str, Any]
    expected: Any
    units: Any


def read_example(call: str, result: str, entries: dict[str, Any]) -> ExampleValue:
    """The example's call and result as values; ``NotAValue`` saying why when either is not plain."""
    try:
        tree = ast.parse(call.strip(), mode="eval").body
    except SyntaxError:
        raise NotAValue("the call is not a single Python call") from None
    if not isinstance(tree, ast.Call) or not isinstance(tree.func, ast.Name):
        raise NotAValue("the call is not a single call of an entry, like f(...)")
    name = tree.func.id
    if name not in entries:
        raise ExampleMistake(f"it calls {name}(), which is not one of the entries ({', '.join(entries)})")
    parsed = parameters(entries[name].signature)
    if parsed is None:
        raise NotAValue(f"the signature of {name} is not Python")
    names = list(parsed[1])
    kinds = dict(entries[name].args)
    if len(tree.args) > len(names):
        raise ExampleMistake(f"it gives {name}() more arguments than {entries[name].signature} takes")
    args: dict[str, Any] = {}
    for parameter, node in zip(names, tree.args, strict=False):  # an example may leave out trailing parameters
        args[parameter] = _argument(node, kinds.get(parameter, "any"))
    for keyword in tree.keywords:
        if keyword.arg is None or keyword.arg not in names:
            raise ExampleMistake(f"it passes {keyword.arg!r}, which is not an argument of {entries[name].signature}")
        args[keyword.arg] = _argument(keyword.value, kinds.get(keyword.arg, "any"))
    text = result.strip()
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        raise NotAValue("the result is not a value (it reads as prose)") from None
    expected = _value(node, text, units=False)
    units = _value(node, text, units=True)
    return ExampleValue(entry=name, args=args, expected=expected, units=units)


def compare_result(example: ExampleValue, got: list[np.ndarray], kind: str) -> str | None:
    """``None`` when ``got`` (a call's returned arrays) is the promised result to its precision, else what differs."""
    expected = example.expected
    if kind == "tuple" or isinstance(expected, tuple):
        wanted = list(expected) if isinstance(expected, tuple) else [expected]
        units = list(example.units) if isinstance(example.units, tuple) else [example.units]
        if len(wanted) != len(got):
            return f"returns {len(got)} value{'s' if len(got) != 1 else ''}, the result shows {len(wanted)}"
        for number, (one, unit, value) in enumerate(zip(wanted, units, got, strict=True)):
            problem = _compare_one(one, unit, value)
            if problem:
                return f"value {number + 1}: {problem}"
        return None
    return _compare_one(expected, example.units, got[0])


def _compare_one(expected: Any, units: Any, got: np.ndarray) -> str | None:
    try:
        want = np.asarray(expected, dtype=float)
        unit = np.asarray(units, dtype=float)
        value = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        return None if np.array_equal(np.asarray(expected), np.asarray(got)) else f"gives {got!r}"
    if want.shape != value.shape and not (want.size == value.size == 1):
        return f"gives an array of shape {value.shape}, the result shows shape {want.shape}"
    want, unit, value = want.reshape(-1), unit.reshape(-1), value.reshape(-1)
    same = (want == value) | (np.isnan(want) & np.isnan(value))
    with np.errstate(invalid="ignore", over="ignore"):
        near = np.abs(want - value) <= unit * _HALF
    if np.all(same | near):
        return None
    index = int(np.argmin(same | near))
    return (
        f"gives {np.array2string(np.asarray(got), precision=10)}; entry {index} is {float(value[index])!r} "
        f"where the result shows {float(want[index])!r}"
    )


def _argument(node: ast.expr, kind: str) -> Any:
    if kind == "callable" and isinstance(node, ast.Name):
        return node.id  # a trusted function, named as the cases name it
    return _value(node, "", units=False)


def _value(node: ast.expr, text: str, *, units: bool) -> Any:
    """The value ``node`` writes; with ``units``, the place of the last digit of each number instead."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return _unit((ast.get_source_segment(text, node) if text else None) or "", node.value) if units else node.value
    if isinstance(node, ast.Constant) and isinstance(node.value, (bool, type(None))):
        return 0.0 if units else node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _value(node.operand, text, units=units)
        return inner if units or isinstance(node.op, ast.UAdd) else -inner
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_value(item, text, units=units) for item in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    dotted = _dotted(node)
    if dotted in _NAMED:
        return 0.0 if units else _NAMED[dotted]
    if isinstance(node, ast.Call) and _dotted(node.func) in _ARRAY_MAKERS and len(node.args) == 1:
        for keyword in node.keywords:
            if keyword.arg != "dtype":
                raise NotAValue(f"{_dotted(node.func)}() is given {keyword.arg}=")
        inner = _value(node.args[0], text, units=units)
        return inner if units else np.asarray(inner, dtype=_dtype(node))
    if (
        isinstance(node, ast.Call)
        and _dotted(node.func) in ("np.float64", "np.float32", "float", "np.int64", "int")
        and len(node.args) == 1
    ):
        return _value(node.args[0], text, units=units)
    raise NotAValue(
        f"{(ast.get_source_segment(text, node) if text else None) or ast.unparse(node)!r:.42} is not a plain value"
    )


def _dtype(node: ast.Call) -> Any:
    for keyword in node.keywords:
        name = _dotted(keyword.value)
        if name is None:
            raise NotAValue("the dtype is not a name")
        return np.dtype(name.removeprefix("np.").removeprefix("numpy."))
    return None


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _unit(written: str, value: float) -> float:
    """One unit in the last written place of a number: ``0.25`` -> 0.01, ``3.7e-44`` -> 1e-45, ``1.`` -> numpy's."""
    mantissa, _, exponent = written.lower().replace("_", "").partition("e")
    _, point, decimals = mantissa.partition(".")
    if point and not decimals:
        return _NUMPY_PRECISION * max(1.0, abs(value))
    return float(10.0 ** (int(exponent or 0) - len(decimals)))
