"""What the relations of ``engine.relations`` take and give: failing pairs, a tolerance, a relation found.

Shared by the relations that map values (``relations``) and those that move
or re-normalise them (``rearrangements``), and by ``explanations``, which
tries them all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from msgspec import Struct
from numpy.typing import NDArray

__all__ = ["AMBIGUOUS", "Ambiguous", "Array", "Found", "Pair", "Tolerance", "holds", "listing", "number_text"]

Array = NDArray[np.float64]


class Pair(Struct, frozen=True):
    """One failing case: got and expected as float64 arrays, what each was (a list, an array...), its names."""

    got: Array
    expected: Array
    got_kind: str
    expected_kind: str
    named: Mapping[str, float]


class Found(Struct, frozen=True):
    """A relation that holds on every pair: its stable code and its phrase."""

    code: str
    phrase: str  # with {are}, {ones}, {values}, {s} filled in for one value or several
    prefixed: bool = True  # whether "on every failing input" leads (not when the phrase names inputs itself)


class Ambiguous:
    """Marker: two different relations fit, so the data cannot tell which one the code follows."""


AMBIGUOUS = Ambiguous()


class Tolerance(Struct, frozen=True):
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


def listing(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def holds(c: Pair, predicted: Array, match: Tolerance, tol: Tolerance) -> bool:
    """Whether got is ``predicted`` (to ``match``) and ``predicted`` is not the expected value itself (to ``tol``)."""
    return match.close(c.got, predicted) and tol.differs(predicted, c.expected)
