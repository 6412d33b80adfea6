"""The relations ``explanations.explain`` tries, each a function of every failing pair: a ``Found`` or ``None``.

Most specific first (``RELATIONS`` is the order; the last four, which move
values rather than map them, are in ``engine.rearrangements``, and what all
of them take and give in ``engine.pairs``):

- ``container``, ``shape``: the right values in order, in another container
  (a list, a tuple, a number) or another shape (an axis of length 1 kept).
- ``rounding``: the expected values at float32 or float16 precision, or
  rounded to a few decimals; ``truncation``: cut to whole numbers.
- ``sign``, ``factor``, ``reciprocal``, ``shift``, ``power``: one map applied
  to every value; a factor or shift is named when it equals a parameter or
  constant the caller names (per case: a factor equal to each case's own
  ``T`` is "times T"). When two of these fit (one value, which a factor and
  a shift both fit), the data cannot tell them apart: ``AMBIGUOUS``.
- ``transpose``: two axes swapped (or every axis reversed).
- ``permutation``: reversed, rolled or sorted along an axis, or another order.
- ``normalised-axis``: values that sum to the expected total along another
  axis (or over every entry) while the expected ones do along theirs.
- ``positions``: right except at a few positions (at most a quarter of the
  entries and at most five), the same ones or named per input.

A relation holds only when it holds on every pair and its map changes the
expected values (a factor of 1 or a shift of 0 explains nothing). A phrase
carries ``{are}``, ``{ones}``, ``{values}`` and ``{s}``, filled in for one
value or several when the sentence is made.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from grader.engine.pairs import AMBIGUOUS, Ambiguous, Array, Found, Pair, Tolerance, holds, listing, number_text
from grader.engine.rearrangements import normalised, permuted, positions, transposed

__all__ = ["AMBIGUOUS", "RELATIONS", "Ambiguous", "Found", "Pair", "Tolerance", "number_text"]

_ULPS = 16  # a computation in a narrow dtype loses a few of its units in the last place, not one
_MIN_ROUNDED = 3
_STRICT_RTOL = 1e-12  # rounding and truncation leave exact values: matched without the check's slack


# --- values right, in another container or shape ---------------------------------------------------------------

_CONTAINER_NOUN = {"list": "a list", "tuple": "a tuple", "array": "an array", "number": "a single number"}


def _same_values(cases: list[Pair], tol: Tolerance) -> Found | None:
    seen = set()
    for c in cases:
        if c.got.size != c.expected.size or not tol.close(c.got.ravel(), c.expected.ravel()):
            return None
        if c.got_kind != c.expected_kind:
            seen.add(("container", c.got_kind, c.expected_kind, (), ()))
        else:
            seen.add(("shape", _shape_kind(c.got.shape, c.expected.shape), "", c.got.shape, c.expected.shape))
    if len({entry[:3] for entry in seen}) != 1:
        return None
    code, what, expected_kind, got_shape, expected_shape = min(seen)
    if code == "container":
        return Found(
            "container",
            f"{{are}} the expected {{values}} as {_CONTAINER_NOUN[what]}, not {_CONTAINER_NOUN[expected_kind]}",
        )
    example = "" if len(seen) == 1 else "for example "
    shapes = f"{example}shape {got_shape} instead of {expected_shape}"
    if what == "kept":
        return Found("shape", f"{{are}} the expected {{values}} with an extra axis of length 1 ({shapes})")
    if what == "dropped":
        return Found("shape", f"{{are}} the expected {{values}} without their axis of length 1 ({shapes})")
    return Found("shape", f"{{are}} the expected {{values}} in another shape ({shapes})")


def _shape_kind(got: tuple[int, ...], expected: tuple[int, ...]) -> str:
    squeezed = tuple(n for n in got if n != 1) == tuple(n for n in expected if n != 1)
    if squeezed and len(got) > len(expected):
        return "kept"
    if squeezed and len(got) < len(expected):
        return "dropped"
    return "other"


# --- rounding and truncation -----------------------------------------------------------------------------------


def _narrow_precision(cases: list[Pair], tol: Tolerance) -> Found | None:
    for dtype, digits in ((np.float32, 7), (np.float16, 3)):
        info = np.finfo(dtype)
        if all(_rounded_to(c, dtype, float(info.eps), float(info.max)) for c in cases):
            name = np.dtype(dtype).name
            return Found("rounding", f"{{are}} the expected {{ones}} to {name} precision only (about {digits} digits)")
    return None


def _rounded_to(c: Pair, dtype: type[np.floating[Any]], eps: float, largest: float) -> bool:
    """Whether every got value is a number of ``dtype`` within a few of its ulps of the expected one."""
    if c.got.shape != c.expected.shape or np.max(np.abs(c.expected)) >= largest:
        return False
    narrow = c.got.astype(dtype).astype(np.float64)
    return bool(np.array_equal(narrow, c.got)) and bool(
        np.all(np.abs(c.got - c.expected) <= _ULPS * eps * np.abs(c.expected) + float(np.finfo(dtype).tiny))
    )


_WHOLE: tuple[tuple[str, str, Callable[[Array], Array]], ...] = (
    ("truncation", "{are} the expected {ones} cut to whole numbers (the fraction dropped)", np.trunc),
    ("truncation", "{are} the expected {ones} rounded down to whole numbers", np.floor),
    ("truncation", "{are} the expected {ones} rounded to whole numbers", np.rint),
)


def _rounded(cases: list[Pair], tol: Tolerance) -> Found | None:
    exact = Tolerance(_STRICT_RTOL, 0.0)
    maps = list(_WHOLE) + [
        ("rounding", f"{{are}} the expected {{ones}} rounded to {k} decimal{'s' if k > 1 else ''}", _decimals(k))
        for k in range(1, 7)
    ]
    for code, phrase, rounding in maps:
        rounded = [rounding(c.expected) for c in cases]
        # Few distinct results (0 and -1 from 0.25 and -0.25) fit a rounding by chance: it must keep three apart.
        if len(np.unique(np.concatenate([r.ravel() for r in rounded]))) < _MIN_ROUNDED:
            continue
        if all(holds(c, r, exact, tol) for c, r in zip(cases, rounded, strict=True)):
            return Found(code, phrase)
    return None


def _decimals(k: int) -> Callable[[Array], Array]:
    return lambda values: np.round(values, k)


# --- one map applied to every value ----------------------------------------------------------------------------


def _value_maps(cases: list[Pair], tol: Tolerance) -> Found | Ambiguous | None:
    if any(c.got.shape != c.expected.shape for c in cases):
        return None
    found = [f for f in (_scale(cases, tol), _reciprocal(cases, tol), _shift(cases, tol), _power(cases, tol)) if f]
    if len(found) > 1:
        return AMBIGUOUS  # e.g. one value: a factor, a shift and a power all fit it
    return found[0] if found else None


# How a named value enters a map, simplest first: (verb, how it is named, the value so named, the map).
_Derived = tuple[tuple[str, Callable[[str], str], Callable[[float], float], Callable[[Array, float], Array]], ...]


def _squared(name: str) -> str:
    return f"{name}²" if name.isidentifier() else f"({name})²"


_FACTORS: _Derived = (
    ("times", str, float, lambda e, v: e * v),
    ("divided by", str, float, lambda e, v: e / v),
    ("times", _squared, lambda v: v * v, lambda e, v: e * v),
    ("divided by", _squared, lambda v: v * v, lambda e, v: e / v),
)
_SHIFTS: _Derived = (("plus", str, float, lambda e, v: e + v), ("minus", str, float, lambda e, v: e - v))


def _named_map(cases: list[Pair], tol: Tolerance, tiers: _Derived) -> str | None:
    """The phrase naming the parameter or constant (its value per case) that a map uses, when one fits every case."""
    shared = set.intersection(*(set(c.named) for c in cases))
    order = [name for name in cases[0].named if name in shared]
    for verb, label, value, apply in tiers:
        matches: list[tuple[str, str, list[float]]] = []
        for name in order:
            values = [value(c.named[name]) for c in cases]
            if all(v != 0 for v in values) and all(
                holds(c, apply(c.expected, v), tol, tol) for c, v in zip(cases, values, strict=True)
            ):
                matches.append((verb, label(name), values))
        if matches:
            return _naming(matches)
    return None


def _naming(matches: list[tuple[str, str, list[float]]]) -> str:
    verb, label, values = matches[0]
    distinct = list(dict.fromkeys(number_text(v) for v in values))
    where = f"{distinct[0]} here" if len(distinct) == 1 else f"{listing(distinct[:3])} on these inputs"
    if len(matches) == 1:
        return f"{verb} {label} ({where})"
    others = listing([m[1] for m in matches[1:]])
    if len(distinct) == 1:
        return f"{verb} {distinct[0]} (which is {label} and also {others} here)"
    return f"{verb} {label} ({where}, as is {others})"


def _scale(cases: list[Pair], tol: Tolerance) -> Found | None:
    if all(holds(c, -c.expected, tol, tol) for c in cases):
        return Found("sign", "{are} the expected {ones} with the sign flipped")
    named = _named_map(cases, tol, _FACTORS)
    if named:
        return Found("factor", "{are} the expected {ones} " + named)
    factor = sum(float(np.dot(c.got.ravel(), c.expected.ravel())) for c in cases) / sum(
        float(np.dot(c.expected.ravel(), c.expected.ravel())) for c in cases
    )
    if factor and math.isfinite(factor) and all(holds(c, c.expected * factor, tol, tol) for c in cases):
        return Found("factor", f"{{are}} the expected {{ones}} times {number_text(factor)}")
    return None


def _reciprocal(cases: list[Pair], tol: Tolerance) -> Found | None:
    if all(np.all(c.expected != 0) and holds(c, 1.0 / c.expected, tol, tol) for c in cases):
        return Found("reciprocal", "{are} the reciprocal{s} of the expected {values} (1 divided by each)")
    return None


def _shift(cases: list[Pair], tol: Tolerance) -> Found | None:
    named = _named_map(cases, tol, _SHIFTS)
    if named:
        return Found("shift", "{are} the expected {ones} " + named)
    differences = np.concatenate([(c.got - c.expected).ravel() for c in cases])
    shift = float(np.mean(differences))
    if shift and all(holds(c, c.expected + shift, tol, tol) for c in cases):
        sign = "plus" if shift > 0 else "minus"
        return Found("shift", f"{{are}} the expected {{ones}} {sign} {number_text(abs(shift))}")
    return None


_POWER_NAMES = {2.0: "square", 3.0: "cube", 0.5: "square root"}


def _power(cases: list[Pair], tol: Tolerance) -> Found | None:
    if not all(np.all(c.expected > 0) and np.all(c.got > 0) for c in cases):
        return None
    logs_e = np.concatenate([np.log(c.expected).ravel() for c in cases])
    logs_g = np.concatenate([np.log(c.got).ravel() for c in cases])
    spread = float(np.dot(logs_e, logs_e))
    if spread < 1e-12:
        return None
    fitted = float(np.dot(logs_g, logs_e)) / spread
    for power in (round(fitted * 6) / 6, fitted):  # a simple fraction when one fits, the fitted value otherwise
        if abs(power) < 1e-9 or abs(power - 1) < 1e-9 or abs(power + 1) < 1e-9:
            continue
        if all(holds(c, c.expected**power, tol, tol) for c in cases):
            if power in _POWER_NAMES:
                return Found("power", f"{{are}} the {_POWER_NAMES[power]}{{s}} of the expected {{values}}")
            return Found("power", f"{{are}} the expected {{ones}} to the power {number_text(power)}")
    return None


RELATIONS: tuple[Callable[[list[Pair], Tolerance], Found | Ambiguous | None], ...] = (
    _same_values,
    _narrow_precision,
    _rounded,
    _value_maps,
    transposed,
    permuted,
    normalised,
    positions,
)
