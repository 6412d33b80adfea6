"""What a relation computes: the functions it may call, its arithmetic, and the size cap on every value.

``grader.checks.expressions`` parses and checks a relation; this module is
what its walker does with the checked nodes.

- ``FUNCTIONS``: every function a relation may call, with the keywords it
  takes and, for those whose result can be larger than their arguments, the
  size of that result worked out from the arguments' shapes before anything
  is computed.
- The size cap: no value a relation computes has more than ``MAX_ENTRIES``
  entries (a broadcast that grows, a matrix or outer product, an identity
  matrix, a fancy index), and no product or factorisation costs more than
  ``MAX_WORK`` multiply-adds. Learner code chooses the shapes it returns, so
  the cap is checked on shapes, before numpy allocates; what would exceed it
  is refused with an ``ExpressionError`` naming the shapes.
- Arithmetic keeps integers integer: ``2 * n`` with ``n`` an int is an int,
  as Python computes it, while the exact result stays within 2**53 in
  magnitude; beyond that, with ``/``, or with a float operand it is float64,
  so no value grows without bound and no int64 wraps round.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from msgspec import Struct

__all__ = [
    "FUNCTIONS",
    "MAX_ENTRIES",
    "MAX_INTEGER",
    "MAX_WORK",
    "ExpressionError",
    "Function",
    "arithmetic",
    "call_function",
    "check_entries",
    "fits_together",
    "index_part",
    "negate",
    "transpose",
    "tuple_item",
]

MAX_ENTRIES = 1_000_000
MAX_WORK = 100_000_000
MAX_INTEGER = 1 << 53


class ExpressionError(ValueError):
    """A relation the grader refuses: the message says which part and why."""


Sizer = Callable[[list[Any]], tuple[int, int]]


class Function(Struct, frozen=True):
    """A function a relation may call: what computes it, its keywords, and how large its result can be.

    ``size`` gives (entries of the result, multiply-adds) from the positional
    arguments, for functions whose result can outgrow their arguments; the
    others make nothing larger than what they are given.
    """

    call: Callable[..., Any]
    keywords: tuple[str, ...] = ()
    size: Sizer | None = None


def _entries(value: Any) -> int:
    return math.prod(np.shape(value))


def _broadcast_size(args: list[Any]) -> tuple[int, int]:
    return math.prod(fits_together(*args)), 0


def _stacked_size(args: list[Any]) -> tuple[int, int]:
    items = args[0] if args and isinstance(args[0], (list, tuple)) else args[:1]
    return sum(_entries(item) for item in items), 0


def _outer_size(args: list[Any]) -> tuple[int, int]:
    size = math.prod(_entries(arg) for arg in args[:2])
    return size, size


def _diag_size(args: list[Any]) -> tuple[int, int]:
    """A vector becomes a square matrix (larger by its offset); a matrix gives a diagonal, never larger."""
    if not args:
        return 0, 0
    shape = np.shape(args[0])
    if len(shape) != 1:
        return _entries(args[0]), 0
    offset = abs(_integer(args[1], "diag's offset")) if len(args) > 1 else 0
    return (shape[0] + offset) ** 2, 0


def _eye_size(args: list[Any]) -> tuple[int, int]:
    rows = _integer(args[0], "eye's size") if args else 0
    columns = _integer(args[1], "eye's second size") if len(args) > 1 else rows
    if rows < 0 or columns < 0:
        raise ExpressionError(f"eye({rows}, {columns}) has a negative size")
    return rows * columns, 0


def _product_size(args: list[Any]) -> tuple[int, int]:
    """The entries and multiply-adds of ``a @ b``, from the shapes alone (numpy's rules for 1-D operands)."""
    if len(args) != 2:
        return 0, 0
    first, second = np.shape(args[0]), np.shape(args[1])
    if not first or not second:
        raise ExpressionError("@ multiplies arrays of at least one dimension; use * for a single number")
    a = first if len(first) > 1 else (1, *first)
    b = second if len(second) > 1 else (*second, 1)
    if a[-1] != b[-2]:
        raise ExpressionError(f"shapes {first} and {second} do not fit a matrix product: {a[-1]} against {b[-2]}")
    try:
        batch = np.broadcast_shapes(a[:-2], b[:-2])
    except ValueError:
        raise ExpressionError(f"shapes {first} and {second} do not fit a matrix product") from None
    entries = math.prod(batch) * a[-2] * b[-1]
    return entries, entries * a[-1]


def _cubic_size(args: list[Any]) -> tuple[int, int]:
    shape = np.shape(args[0]) if args else ()
    n = shape[-1] if shape else 0
    extra = _entries(args[1]) if len(args) > 1 else 0
    return max(_entries(args[0]) if args else 0, extra), math.prod(shape[:-2]) * n**3 + n * extra


def _shape(value: Any) -> tuple[int, ...]:
    return tuple(int(size) for size in np.shape(value))


def _eye(rows: Any, columns: Any = None) -> np.ndarray:
    return np.eye(_integer(rows, "eye's size"), None if columns is None else _integer(columns, "eye's second size"))


_REDUCE = ("axis", "keepdims")
_ELEMENTWISE = (
    "exp log log1p expm1 abs sqrt square tanh sign sin cos tan arcsin arccos arctan sinh cosh log2 log10 "
    "floor ceil isfinite isnan"
).split()

FUNCTIONS: dict[str, Function] = {
    **{name: Function(getattr(np, name)) for name in _ELEMENTWISE},
    "max": Function(np.max, _REDUCE),
    "min": Function(np.min, _REDUCE),
    "sum": Function(np.sum, _REDUCE),
    "mean": Function(np.mean, _REDUCE),
    "prod": Function(np.prod, _REDUCE),
    "maximum": Function(np.maximum, size=_broadcast_size),
    "minimum": Function(np.minimum, size=_broadcast_size),
    "logaddexp": Function(np.logaddexp, size=_broadcast_size),
    "where": Function(np.where, size=_broadcast_size),
    "stack": Function(np.stack, ("axis",), _stacked_size),
    "concatenate": Function(np.concatenate, ("axis",), _stacked_size),
    "zeros_like": Function(np.zeros_like),
    "ones_like": Function(np.ones_like),
    "full_like": Function(np.full_like),
    # linear algebra
    "eye": Function(_eye, size=_eye_size),
    "transpose": Function(np.transpose),
    "matmul": Function(np.matmul, size=_product_size),
    "outer": Function(np.outer, size=_outer_size),
    "norm": Function(np.linalg.norm, ("ord", "axis", "keepdims")),
    "diag": Function(np.diag, size=_diag_size),
    "diagonal": Function(np.diagonal),
    "trace": Function(np.trace),
    "triu": Function(np.triu),
    "tril": Function(np.tril),
    "det": Function(np.linalg.det, size=_cubic_size),
    "inv": Function(np.linalg.inv, size=_cubic_size),
    "solve": Function(np.linalg.solve, size=_cubic_size),
    "cond": Function(np.linalg.cond, size=_cubic_size),
    "shape": Function(_shape),
    "size": Function(np.size),
}


def check_entries(entries: int, work: int, what: str) -> None:
    """Refuse a value of more than ``MAX_ENTRIES`` entries, or a computation of more than ``MAX_WORK`` steps."""
    if entries > MAX_ENTRIES:
        raise ExpressionError(f"{what} would have {entries} entries; a relation's values have at most {MAX_ENTRIES}")
    if work > MAX_WORK:
        raise ExpressionError(f"{what} would take {work} multiply-adds; a relation may take at most {MAX_WORK}")


def fits_together(*operands: Any) -> tuple[int, ...]:
    """The shape the operands broadcast to, refused when they do not fit or it exceeds the size cap."""
    shapes = [np.shape(operand) for operand in operands if not isinstance(operand, (list, tuple))]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ExpressionError(f"shapes {', '.join(map(str, shapes))} do not fit together") from None
    check_entries(math.prod(shape), 0, f"broadcasting shapes {', '.join(map(str, shapes))}")
    return shape


def call_function(name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """``FUNCTIONS[name]`` on the arguments, once its result's size is known to be within the cap."""
    function = FUNCTIONS[name]
    if function.size is not None:
        entries, work = function.size(args)
        check_entries(entries, work, f"{name}()")
    return function.call(*args, **kwargs)


_FLOAT_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": np.add,
    "-": np.subtract,
    "*": np.multiply,
    "/": np.true_divide,
    "//": np.floor_divide,
    "%": np.mod,
    "**": np.power,
    "@": np.matmul,
}
_INT_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "//": lambda a, b: a // b,
    "%": lambda a, b: a % b,
    "**": lambda a, b: a**b,
}


def arithmetic(op: str, left: Any, right: Any) -> Any:
    """``left OP right``: exact for integers within 2**53 (``/`` always divides in float), else in float64."""
    if isinstance(left, (list, tuple)) or isinstance(right, (list, tuple)):
        raise ExpressionError("arithmetic on a list is not allowed; stack it into an array first")
    if op == "@":
        check_entries(
            *_product_size([left, right]), f"the matrix product of shapes {np.shape(left)} and {np.shape(right)}"
        )
    else:
        fits_together(left, right)
    if op not in ("/", "@") and _integral(left) and _integral(right):
        exact = _integer_arithmetic(op, left, right)
        if exact is not None:
            return exact
    return _FLOAT_OPS[op](_float(left), _float(right))


def _integer_arithmetic(op: str, left: Any, right: Any) -> Any:
    """The exact integer result, or ``None`` when it would leave the range float64 holds exactly."""
    if op in ("//", "%") and np.any(np.asarray(right) == 0):
        raise ExpressionError(f"an integer {op} by zero")
    if op == "**" and np.any(np.asarray(right) < 0):
        return None
    with np.errstate(all="ignore"):
        estimate = np.asarray(_FLOAT_OPS[op](_float(left), _float(right)))
    if estimate.size and not (np.all(np.isfinite(estimate)) and np.max(np.abs(estimate)) <= MAX_INTEGER):
        return None
    if type(left) is int and type(right) is int:
        return int(_INT_OPS[op](left, right))
    result = _INT_OPS[op](np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64))
    return int(result) if np.ndim(result) == 0 else result


def negate(value: Any) -> Any:
    """``-value``: an integer stays one (within 2**53), anything else is negated in float64."""
    if type(value) is int:
        return -value
    if _integral(value) and np.all(np.abs(np.asarray(value, dtype=float)) <= MAX_INTEGER):
        result = np.negative(np.asarray(value, dtype=np.int64))
        return int(result) if np.ndim(result) == 0 else result
    return np.negative(_float(value))


def transpose(value: Any) -> Any:
    """``value.T``: the axes reversed (a vector or a number is itself)."""
    if isinstance(value, (list, tuple)):
        raise ExpressionError(".T is taken of an array; stack a list into one first")
    return np.transpose(value)


def index_part(value: Any, where: str) -> Any:
    """An index, slice bound or tuple item number computed in a relation: an integer (an index may be an array)."""
    if value is None or value is Ellipsis:
        return value
    if _integral(value) and np.ndim(value) == 0:
        return int(value)
    if where == "index" and isinstance(value, np.ndarray) and value.dtype.kind in "biu":
        check_entries(value.size, 0, "an array index")
        return value
    kind = {"slice": "a slice bound", "item": "an item number"}.get(where, "an index")
    shown = f"an array of dtype {value.dtype}" if isinstance(value, np.ndarray) else repr(value)
    raise ExpressionError(f"{kind} in a relation is an integer; this one is {shown}")


def tuple_item(items: tuple[Any, ...], position: Any) -> Any:
    """Item ``position`` of a tuple (a call's ``(root, steps)``, a ``shape``); a 0-d integer array as an int."""
    at = index_part(position, "item")
    if not -len(items) <= at < len(items):
        raise ExpressionError(f"item {at} of a tuple of {len(items)} values does not exist")
    item = items[at]
    return int(item) if isinstance(item, np.ndarray) and item.ndim == 0 and item.dtype.kind in "iu" else item


def _integer(value: Any, what: str) -> int:
    if _integral(value) and np.ndim(value) == 0:
        return int(value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    shown = f"an array of shape {np.shape(value)}" if np.ndim(value) else repr(value)
    raise ExpressionError(f"{what} is an integer; this one is {shown}")


def _integral(value: Any) -> bool:
    """An integer, a numpy integer or an integer array (booleans are not)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, np.integer)):
        return True
    return isinstance(value, np.ndarray) and value.dtype.kind in "iu"


def _float(value: Any) -> Any:
    """An operand as float64, so no integer can overflow or wrap."""
    array = np.asarray(value)
    return array.astype(np.float64) if array.dtype.kind in "biu" else array
