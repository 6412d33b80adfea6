"""The relations ``explanations.explain`` tries, each a function of every failing pair: a ``Found`` or ``None``.

Most specific first (``RELATIONS`` is the order):

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["AMBIGUOUS", "RELATIONS", "Ambiguous", "Found", "Pair", "Tolerance", "number_text"]

Array = NDArray[np.float64]

_MAX_ROLL = 256
_MAX_WRONG = 5
_ULPS = 16  # a computation in a narrow dtype loses a few of its units in the last place, not one
_MIN_ROUNDED = 3
_STRICT_RTOL = 1e-12  # rounding and truncation leave exact values: matched without the check's slack


@dataclass(frozen=True)
class Pair:
    """One failing case: got and expected as float64 arrays, what each was (a list, an array...), its names."""

    got: Array
    expected: Array
    got_kind: str
    expected_kind: str
    named: Mapping[str, float]


@dataclass(frozen=True)
class Found:
    """A relation that holds on every pair: its stable code and its phrase."""

    code: str
    phrase: str  # with {are}, {ones}, {values}, {s} filled in for one value or several
    prefixed: bool = True  # whether "on every failing input" leads (not when the phrase names inputs itself)


class Ambiguous:
    """Marker: two different relations fit, so the data cannot tell which one the code follows."""


AMBIGUOUS = Ambiguous()


@dataclass(frozen=True)
class Tolerance:
    """The check's tolerance, symmetric in its two arguments: ``|a - b| <= atol + rtol * max(|a|, |b|)``."""

    rtol: float
    atol: float

    def each(self, a: Array, b: Array) -> NDArray[np.bool_]:
        return np.abs(a - b) <= self.atol + self.rtol * np.maximum(np.abs(a), np.abs(b))

    def close(self, a: Array, b: Array) -> bool:
        return a.shape == b.shape and bool(np.all(self.each(a, b)))

    def differs(self, a: Array, b: Array) -> bool:
        return not self.close(a, b)


def number_text(x: float) -> str:
    """A number as a learner reads it: 2, 0.5, 0.693147; more digits when six would hide a difference from 1."""
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    text = f"{x:.6g}"
    if text in ("1", "-1", "0"):
        text = f"{x:.12g}"
    return text


def _listing(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


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
        if all(_holds(c, r, exact, tol) for c, r in zip(cases, rounded, strict=True)):
            return Found(code, phrase)
    return None


def _decimals(k: int) -> Callable[[Array], Array]:
    return lambda values: np.round(values, k)


def _holds(c: Pair, predicted: Array, match: Tolerance, tol: Tolerance) -> bool:
    """Whether got is ``predicted`` (to ``match``) and ``predicted`` is not the expected value itself (to ``tol``)."""
    return match.close(c.got, predicted) and tol.differs(predicted, c.expected)


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
                _holds(c, apply(c.expected, v), tol, tol) for c, v in zip(cases, values, strict=True)
            ):
                matches.append((verb, label(name), values))
        if matches:
            return _naming(matches)
    return None


def _naming(matches: list[tuple[str, str, list[float]]]) -> str:
    verb, label, values = matches[0]
    distinct = list(dict.fromkeys(number_text(v) for v in values))
    where = f"{distinct[0]} here" if len(distinct) == 1 else f"{_listing(distinct[:3])} on these inputs"
    if len(matches) == 1:
        return f"{verb} {label} ({where})"
    others = _listing([m[1] for m in matches[1:]])
    if len(distinct) == 1:
        return f"{verb} {distinct[0]} (which is {label} and also {others} here)"
    return f"{verb} {label} ({where}, as is {others})"


def _scale(cases: list[Pair], tol: Tolerance) -> Found | None:
    if all(_holds(c, -c.expected, tol, tol) for c in cases):
        return Found("sign", "{are} the expected {ones} with the sign flipped")
    named = _named_map(cases, tol, _FACTORS)
    if named:
        return Found("factor", "{are} the expected {ones} " + named)
    factor = sum(float(np.dot(c.got.ravel(), c.expected.ravel())) for c in cases) / sum(
        float(np.dot(c.expected.ravel(), c.expected.ravel())) for c in cases
    )
    if factor and math.isfinite(factor) and all(_holds(c, c.expected * factor, tol, tol) for c in cases):
        return Found("factor", f"{{are}} the expected {{ones}} times {number_text(factor)}")
    return None


def _reciprocal(cases: list[Pair], tol: Tolerance) -> Found | None:
    if all(np.all(c.expected != 0) and _holds(c, 1.0 / c.expected, tol, tol) for c in cases):
        return Found("reciprocal", "{are} the reciprocal{s} of the expected {values} (1 divided by each)")
    return None


def _shift(cases: list[Pair], tol: Tolerance) -> Found | None:
    named = _named_map(cases, tol, _SHIFTS)
    if named:
        return Found("shift", "{are} the expected {ones} " + named)
    differences = np.concatenate([(c.got - c.expected).ravel() for c in cases])
    shift = float(np.mean(differences))
    if shift and all(_holds(c, c.expected + shift, tol, tol) for c in cases):
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
        if all(_holds(c, c.expected**power, tol, tol) for c in cases):
            if power in _POWER_NAMES:
                return Found("power", f"{{are}} the {_POWER_NAMES[power]}{{s}} of the expected {{values}}")
            return Found("power", f"{{are}} the expected {{ones}} to the power {number_text(power)}")
    return None


# --- the same values, moved --------------------------------------------------------------------------------------


def _common(cases: list[Pair], keys: Callable[[Pair], set[tuple[Any, ...]]]) -> set[tuple[Any, ...]]:
    """The keys (a relation with its axes) that hold on every case."""
    found = keys(cases[0])
    for c in cases[1:]:
        if not found:
            break
        found &= keys(c)
    return found


def _axis(axis: int, cases: list[Pair]) -> str:
    if all(c.expected.ndim == 1 for c in cases):
        return ""
    return " along the last axis" if axis == -1 else f" along axis {axis}"


def _preferred(found: set[tuple[Any, ...]], rank: Sequence[str]) -> tuple[Any, ...]:
    """The most specific key: by the relation's rank, then non-negative axes (as written), then smallest."""
    return min(found, key=lambda k: (rank.index(k[0]), any(isinstance(a, int) and a < 0 for a in k[1:]), k))


def _swap_keys(tol: Tolerance) -> Callable[[Pair], set[tuple[Any, ...]]]:
    def keys(c: Pair) -> set[tuple[Any, ...]]:
        found: set[tuple[Any, ...]] = set()
        n = c.expected.ndim
        if n < 2 or c.got.ndim != n:
            return found
        for i in range(n):
            for j in range(i + 1, n):
                if _holds(c, np.swapaxes(c.expected, i, j), tol, tol):
                    found |= {("swap", i, j), ("swap", i - n, j - n)}
        if n > 2 and _holds(c, np.transpose(c.expected), tol, tol):
            found.add(("reverse-axes",))
        return found

    return keys


def _transposed(cases: list[Pair], tol: Tolerance) -> Found | None:
    found = _common(cases, _swap_keys(tol))
    if not found:
        return None
    key = _preferred(found, ("swap", "reverse-axes"))
    if key[0] == "reverse-axes":
        return Found("transpose", "{are} the expected {ones} with the order of their axes reversed")
    if key[1:] == (0, 1) and all(c.expected.ndim == 2 for c in cases):
        return Found("transpose", "{are} the expected {ones} transposed (rows and columns swapped)")
    if key[1:] == (-2, -1):
        return Found("transpose", "{are} the expected {ones} with their last two axes swapped")
    return Found("transpose", f"{{are}} the expected {{ones}} with axes {key[1]} and {key[2]} swapped")


def _order_keys(tol: Tolerance) -> Callable[[Pair], set[tuple[Any, ...]]]:
    def keys(c: Pair) -> set[tuple[Any, ...]]:
        found: set[tuple[Any, ...]] = set()
        e, n = c.expected, c.expected.ndim
        if c.got.shape != e.shape:
            return found
        for axis in range(n):
            both = (axis, axis - n)
            length = e.shape[axis]
            if _holds(c, np.flip(e, axis), tol, tol):
                found |= {("reverse", a) for a in both}
            if length <= _MAX_ROLL:
                for k in range(1, length):
                    if _holds(c, np.roll(e, k, axis), tol, tol):
                        found |= {("roll", a, s) for a in both for s in (k, k - length)}
            ascending = np.sort(e, axis)
            if _holds(c, ascending, tol, tol):
                found |= {("ascending", a) for a in both}
            if _holds(c, np.flip(ascending, axis), tol, tol):
                found |= {("descending", a) for a in both}
        if e.size >= 3 and tol.close(np.sort(c.got, axis=None), np.sort(e, axis=None)):
            found.add(("other-order",))
        return found

    return keys


def _permuted(cases: list[Pair], tol: Tolerance) -> Found | None:
    found = _common(cases, _order_keys(tol))
    if not found:
        return None
    key = _preferred(found, ("reverse", "roll", "ascending", "descending", "other-order"))
    if key[0] == "other-order":
        return Found("permutation", "{are} the expected {values} in another order")
    along = _axis(key[1], cases)
    if key[0] == "reverse":
        return Found("permutation", f"{{are}} the expected {{ones}} in reverse order{along}")
    if key[0] == "roll":
        places = f"{abs(key[2])} place{'s' if abs(key[2]) > 1 else ''}"
        way = "later" if key[2] > 0 else "earlier"
        return Found("permutation", f"{{are}} the expected {{ones}} rolled{along}: each {places} {way}, wrapping round")
    order = "increasing" if key[0] == "ascending" else "decreasing"
    return Found("permutation", f"{{are}} the expected {{ones}} sorted in {order} order{along}")


# --- normalised along another axis --------------------------------------------------------------------------------


def _normal_keys(tol: Tolerance) -> Callable[[Pair], set[tuple[Any, ...]]]:
    def keys(c: Pair) -> set[tuple[Any, ...]]:
        found: set[tuple[Any, ...]] = set()
        e, g, n = c.expected, c.got, c.expected.ndim
        if n < 2 or g.shape != e.shape or not (np.all(e > 0) and np.all(g > 0)):
            return found
        ratio = np.log(g) - np.log(e)
        for k in range(n):
            total = _constant_sum(e, k, tol)
            if total is None or _sums_to(g, k, total, tol):
                continue  # got is normalised where the expected values are: not normalised elsewhere instead
            whole = Tolerance(tol.rtol, tol.atol * e.size)
            if whole.close(np.array(g.sum()), np.array(total)) and tol.close(
                g, e * np.exp(ratio.mean(k, keepdims=True))
            ):
                found |= {("all", kk, number_text(total)) for kk in (k, k - n)}
            for m in range(n):
                if m == k or not _sums_to(g, m, total, tol):
                    continue
                separable = (
                    ratio.mean(k, keepdims=True) + ratio.mean(m, keepdims=True) - ratio.mean((k, m), keepdims=True)
                )
                if tol.close(g, e * np.exp(separable)):
                    found |= {("axis", mm, kk, number_text(total)) for mm, kk in ((m, k), (m - n, k - n))}
        return found

    return keys


def _constant_sum(values: Array, axis: int, tol: Tolerance) -> float | None:
    """The total every slice along ``axis`` sums to, when it is the same for all of them (within tolerance)."""
    total = float(np.mean(values.sum(axis)))
    return total if _sums_to(values, axis, total, tol) else None


def _sums_to(values: Array, axis: int, total: float, tol: Tolerance) -> bool:
    """Whether every slice along ``axis`` sums to ``total`` (within tolerance)."""
    sums = values.sum(axis)
    return Tolerance(tol.rtol, tol.atol * values.shape[axis]).close(sums, np.full_like(sums, total))


def _normalised(cases: list[Pair], tol: Tolerance) -> Found | None:
    found = _common(cases, _normal_keys(tol))
    if not found:
        return None
    key = _preferred(found, ("axis", "all"))
    if key[0] == "all":
        where = _axis(key[1], cases).replace(" along ", "")
        return Found(
            "normalised-axis", f"{{are}} normalised over all entries at once (they sum to {key[2]}), not along {where}"
        )
    mine, theirs = _axis(key[1], cases), _axis(key[2], cases)
    return Found(
        "normalised-axis",
        f"{{are}} normalised{mine}, where the expected {{ones}} are normalised{theirs} (each sums to {key[3]})",
    )


# --- right except at a few positions ----------------------------------------------------------------------------


def _positions(cases: list[Pair], tol: Tolerance) -> Found | None:
    wrong: list[tuple[tuple[int, ...], ...]] = []
    for c in cases:
        if c.got.shape != c.expected.shape:
            return None
        where = np.argwhere(~tol.each(c.got, c.expected))
        if not 1 <= len(where) <= min(_MAX_WRONG, c.expected.size // 4):
            return None
        wrong.append(tuple(tuple(int(i) for i in row) for row in where))
    if len(set(wrong)) == 1 and len({c.expected.ndim for c in cases}) == 1:
        return Found("positions", f"{{are}} right except at {_where(wrong[0])}")
    ordinals = ("first", "second", "third")
    named = [f"{_where(w)} on the {ordinals[i]}" for i, w in enumerate(wrong[:3])]
    named[0] += " failing input"
    rest = wrong[3:]
    if rest:
        most = max(len(w) for w in rest)
        named.append(f"at most {most} position{'s' if most > 1 else ''} on each other one")
    return Found("positions", "{are} right except at " + _listing(named), prefixed=False)


def _where(indices: tuple[tuple[int, ...], ...]) -> str:
    shown = [str(i[0]) if len(i) == 1 else "(" + ", ".join(map(str, i)) + ")" for i in indices]
    return ("position " if len(shown) == 1 else "positions ") + _listing(shown)


RELATIONS: tuple[Callable[[list[Pair], Tolerance], Found | Ambiguous | None], ...] = (
    _same_values,
    _narrow_precision,
    _rounded,
    _value_maps,
    _transposed,
    _permuted,
    _normalised,
    _positions,
)
