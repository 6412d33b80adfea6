"""The relations that move the expected values or re-normalise them: ``transpose``, ``permutation``,
``normalised-axis`` and ``positions`` (``engine.relations`` lists every relation and its order).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from grader.engine.pairs import Array, Found, Pair, Tolerance, holds, listing, number_text

__all__ = ["normalised", "permuted", "positions", "transposed"]

_MAX_ROLL = 256
_MAX_WRONG = 5


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
                if holds(c, np.swapaxes(c.expected, i, j), tol, tol):
                    found |= {("swap", i, j), ("swap", i - n, j - n)}
        if n > 2 and holds(c, np.transpose(c.expected), tol, tol):
            found.add(("reverse-axes",))
        return found

    return keys


def transposed(cases: list[Pair], tol: Tolerance) -> Found | None:
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
            if holds(c, np.flip(e, axis), tol, tol):
                found |= {("reverse", a) for a in both}
            if length <= _MAX_ROLL:
                for k in range(1, length):
                    if holds(c, np.roll(e, k, axis), tol, tol):
                        found |= {("roll", a, s) for a in both for s in (k, k - length)}
            ascending = np.sort(e, axis)
            if holds(c, ascending, tol, tol):
                found |= {("ascending", a) for a in both}
            if holds(c, np.flip(ascending, axis), tol, tol):
                found |= {("descending", a) for a in both}
        if e.size >= 3 and tol.close(np.sort(c.got, axis=None), np.sort(e, axis=None)):
            found.add(("other-order",))
        return found

    return keys


def permuted(cases: list[Pair], tol: Tolerance) -> Found | None:
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


def normalised(cases: list[Pair], tol: Tolerance) -> Found | None:
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


def positions(cases: list[Pair], tol: Tolerance) -> Found | None:
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
    return Found("positions", "{are} right except at " + listing(named), prefixed=False)


def _where(indices: tuple[tuple[int, ...], ...]) -> str:
    shown = [str(i[0]) if len(i) == 1 else "(" + ", ".join(map(str, i)) + ")" for i in indices]
    return ("position " if len(shown) == 1 else "positions ") + listing(shown)
