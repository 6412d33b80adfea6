"""How values and calls are written in reasons: short, exact enough to reproduce, deterministic.

``format_pair`` writes a learner's value and the expected one together,
with the fewest digits (six at least) at which every entry that differs
beyond the tolerance reads differently, and for arrays of more than a few
entries names the positions that differ; every check that shows two values
side by side writes them with it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, SupportsFloat

import numpy as np
from msgspec import Struct

from grader.checks.scripts import script_text
from grader.sandbox.calls import TrustedFunction
from grader.sandbox.scripts import Script

__all__ = [
    "Pair",
    "count_of",
    "differing",
    "format_call",
    "format_steps",
    "format_number",
    "format_pair",
    "format_value",
    "positions",
    "values_not_shown",
]

UNSHOWN = "…"
DIGITS = 6  # the digits a value is written with unless more are needed to tell two apart
_MAX_DIGITS = 17  # float64 round-trips at 17 significant digits
_SHOWN_ENTRIES = 12  # arrays with more entries are summarised (first and last three of each axis)
_FEW = 3  # arrays of more entries than this name the positions that differ
_state = threading.local()  # a batch may grade on several threads
_NUMBER = re.compile(r"-?(?:nan|inf|\d+\.?\d*(?:e[+-]?\d+)?)")


@contextmanager
def values_not_shown() -> Iterator[None]:
    """Within it, ``format_value`` writes every array as ``UNSHOWN``: for findings that are counted, never shown.

    A check fails on many inputs; the reason shows the first (the
    smallest) and counts the rest; writing out arrays is the slowest part
    of judging, so the rest are never written.
    """
    before = getattr(_state, "quiet", False)
    _state.quiet = True
    try:
        yield
    finally:
        _state.quiet = before


def format_number(value: SupportsFloat, digits: int = DIGITS) -> str:
    """A float the way a person reads it: ``1e-09``, ``0.5``, ``nan``, ``inf``; ``digits`` significant digits."""
    return f"{float(value):.{digits}g}"


def format_value(value: Any, digits: int = DIGITS) -> str:
    """An array as ``array([...])`` (summarised past a dozen entries), a tuple item by item.

    ``digits``: the decimals (or significant digits, for a number) a float is written with at most.
    """
    if isinstance(value, tuple):
        inner = ", ".join(format_value(item, digits) for item in value)
        return f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, np.ndarray):
        if getattr(_state, "quiet", False):
            return UNSHOWN
        if value.ndim == 0:
            return format_number(value, digits) if value.dtype.kind in "fc" else repr(value.item())
        options = {"threshold": _SHOWN_ENTRIES, "edgeitems": 3, "linewidth": 100, "floatmode": "maxprec"}
        with np.printoptions(precision=digits, **options):  # type: ignore[arg-type]
            text = np.array2string(value, separator=", ")
        # One line, without the padding numpy adds to align columns ("[1. , 0.]" reads as a stray space).
        text = " ".join(text.split()).replace("[ ", "[").replace(" ]", "]")
        text = re.sub(r" +,", ",", text)
        suffix = "" if value.dtype == np.float64 or value.dtype == np.bool_ else f", dtype={value.dtype}"
        return f"array({text}{suffix})"
    if isinstance(value, (float, np.floating)):
        return format_number(value, digits)
    if isinstance(value, TrustedFunction):
        bound = ", ".join(f"{name}={format_value(array, digits)}" for name, array in value.bound)
        return f"{value.name}({bound})" if bound else value.name
    return repr(value)


def format_call(function: str, args: dict[str, Any], upto: str | None = None) -> str:
    """``softmax(z=array([1000., 1001.]), axis=-1)``: the call, with named arguments.

    A 0-d array is written as one (``x=array(0.)``), so it is not read as the number the entry was
    handed: code that works for a Python float may fail for it, and the other way round. A class
    entry's script is written as its steps, up to the one keeping ``upto`` when a check judges that.
    """
    script = args.get("script")
    if isinstance(script, Script):
        return script_text(function, script, script.upto(upto), _step_argument)
    inner = ", ".join(f"{name}={_argument_text(value)}" for name, value in args.items())
    return f"{function}({inner})"


def format_steps(function: str, script: Script, count: int) -> str:
    """The first ``count`` steps of a class entry's script, as ``format_call`` writes them, the last one bare
    (what it was to keep or raise left out: the reason says what it did)."""
    return script_text(function, script, count, _step_argument, bare_last=True)


def _step_argument(value: Any) -> str:
    """A script's argument: a Python float in full (``1000000001.0``, never ``1e+09``), else as in a call."""
    return repr(value) if type(value) is float else _argument_text(value)


class Pair(Struct, frozen=True):
    """A learner's value and the expected one as written side by side, and where they differ.

    ``where``: ``differs at [0, 2] and [1, 1]`` for arrays of more than a few
    entries (with the first differing values when the arrays are summarised),
    else empty.
    """

    got: str
    expected: str
    where: str = ""

    def which(self) -> str:
        """``, which differs at [0, 2] and [1, 1]``, or empty when no position is named."""
        return f", which {self.where}" if self.where else ""

    def got_with_where(self) -> str:
        """``got``, followed by where it differs when that is named."""
        return self.got + self.which()


def differing(got: Any, expected: Any, rtol: float = 0.0, atol: Any = 0.0) -> np.ndarray:
    """Where ``got`` and ``expected`` (arrays of one shape) differ beyond ``atol + rtol * |expected|``.

    NaN matches only NaN, an infinity only itself.
    """
    a = np.asarray(got, dtype=float)
    b = np.asarray(expected, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        same = (a == b) | (np.isnan(a) & np.isnan(b)) | (np.isfinite(b) & (np.abs(a - b) <= atol + rtol * np.abs(b)))
    return np.asarray(~same)


def positions(mask: np.ndarray, limit: int = _FEW) -> str:
    """The positions where ``mask`` is True, as a reader names them: ``[0, 2] and [1, 1]``, ``[3], [5] and 4 more``."""
    found = [tuple(int(i) for i in index) for index in np.argwhere(mask)]
    names = ["[" + ", ".join(str(i) for i in index) + "]" for index in found[:limit]]
    rest = len(found) - len(names)
    if rest:
        return f"{', '.join(names)} and {rest} more"
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def count_of(count: int, noun: str) -> str:
    """``1 value``, ``3 values``: a count with its noun in the right number."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def format_pair(
    got: Any, expected: Any, *, rtol: float = 0.0, atol: Any = 0.0, apart: np.ndarray | None = None
) -> Pair:
    """``got`` and ``expected`` written with the fewest digits (at least six) that make them differ where they do.

    Numbers and arrays of one shape are compared entry by entry (beyond
    ``atol + rtol * |expected|``, or where ``apart`` is True: the entries that
    break a relation other than equality); anything else is written as
    ``format_value`` writes it. For arrays of more than a few entries,
    ``where`` names the positions that differ.
    """
    if getattr(_state, "quiet", False):
        return Pair(UNSHOWN, UNSHOWN)
    a, b = _numeric(got), _numeric(expected)
    if a is None or b is None or a.shape != b.shape:
        return Pair(format_value(got), format_value(expected))
    mask = differing(a, b, rtol, atol) if apart is None or np.shape(apart) != a.shape else np.asarray(apart, bool)
    if not mask.any():
        return Pair(format_value(got), format_value(expected))
    if a.ndim == 0 or not isinstance(got, np.ndarray) or not isinstance(expected, np.ndarray):
        digits = _digits_apart(a[mask] if a.ndim else a.reshape(1), b[mask] if b.ndim else b.reshape(1))
        return Pair(format_value(_scalar_or(got, a), digits), format_value(_scalar_or(expected, b), digits))
    digits = DIGITS
    if a.size <= _SHOWN_ENTRIES:
        while digits < _MAX_DIGITS and not _entries_apart(got, expected, mask, digits):
            digits += 1
    where = ""
    if a.size > _FEW:
        where = "differs at every entry" if mask.all() else f"differs at {positions(mask)}"
        if a.size > _SHOWN_ENTRIES:  # summarised: the differing values may not be on show
            first = tuple(int(i) for i in np.argwhere(mask)[0])
            places = _digits_apart(a[first].reshape(1), b[first].reshape(1))
            where += f" ({format_number(a[first], places)} there, expected {format_number(b[first], places)})"
    return Pair(format_value(got, digits), format_value(expected, digits), where)


def _numeric(value: Any) -> np.ndarray | None:
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, float, np.integer, np.floating)):
        return np.asarray(value, dtype=float)
    if isinstance(value, np.ndarray) and value.dtype.kind in "iuf":
        return value.astype(float, copy=False)
    return None


def _scalar_or(value: Any, array: np.ndarray) -> Any:
    return array if isinstance(value, np.ndarray) else value


def _digits_apart(a: np.ndarray, b: np.ndarray) -> int:
    """The fewest significant digits (six at least) at which each ``a[k]`` reads differently from ``b[k]``."""
    digits = DIGITS
    while digits < _MAX_DIGITS and any(
        format_number(x, digits) == format_number(y, digits) for x, y in zip(a.ravel(), b.ravel(), strict=True)
    ):
        digits += 1
    return digits


def _entries_apart(got: np.ndarray, expected: np.ndarray, mask: np.ndarray, digits: int) -> bool:
    """Whether every differing entry reads differently when both arrays are written with ``digits``."""
    left = _NUMBER.findall(format_value(got, digits).split("dtype=")[0])
    right = _NUMBER.findall(format_value(expected, digits).split("dtype=")[0])
    if len(left) != got.size or len(right) != expected.size:
        return True  # not one number per entry (never so for float arrays of a dozen entries): nothing to refine
    flat = np.flatnonzero(mask)
    return all(left[k] != right[k] for k in flat)


def _argument_text(value: Any) -> str:
    if not isinstance(value, np.ndarray) or value.ndim or getattr(_state, "quiet", False):
        return format_value(value)
    with np.printoptions(precision=6, floatmode="maxprec"):
        text = np.array2string(value)
    suffix = "" if value.dtype == np.float64 or value.dtype == np.bool_ else f", dtype={value.dtype}"
    return f"array({text}{suffix})"
