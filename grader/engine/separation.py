"""Separating calls: the few inputs on which an exercise's known-wrong solutions and its reference answer apart.

A learner whose answers agree with a known mistake on one input may do so by
coincidence (dividing by ``n / 2`` agrees with not dividing at all when
``n = 2``). So before a mistake is named, the learner must also agree with it
on inputs chosen to tell every known mistake from every other and from the
reference: the separating calls. They are chosen among the plan's own
learner calls (the exercise's examples and its seeded random cases, which
every learner answers anyway), so they cost no call; per entry, greedily,
until every pair of solutions that any call tells apart is told apart by a
few of them, the simplest and the most varied first.

``find_separation`` is pure: it is given each solution's answers and how to
tell two answers apart; ``engine.diagnosis`` asks for the answers (once a
session, kept on disk with the choice) and ``grader validate`` reports the
pairs no call tells apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np
from msgspec import Struct

from grader.sandbox.outcomes import CallOutcome

__all__ = [
    "COVER",
    "MOST",
    "Separation",
    "find_separation",
    "separation_data",
    "separation_from_data",
    "shape_parts",
]

# How many separating calls each pair of solutions should differ on: one could fall on a special value of the
# arguments (a dimension of 2, a step of 1) where an unknown mistake agrees with a known one.
COVER = 3
# At most this many separating calls per entry: each is compared for every learner a mistake is named for.
MOST = 10
_FINAL = ("ok", "raised", "bad_value")


class Separation(Struct, frozen=True):
    """The separating calls of one plan: by entry, their numbers in the plan's table; each one's tolerance (the
    loosest ``(rtol, atol)`` of the checks that plan it); and the pairs of solutions (by label) that no call of
    the plan tells apart, which a learner's answers can never tell apart either."""

    keys: dict[str, tuple[int, ...]]
    tolerance: dict[int, tuple[float, float]]
    unseparated: tuple[tuple[str, str], ...] = ()

    def of(self, entries: set[str]) -> tuple[int, ...]:
        """The separating calls of these entries, in table order."""
        return tuple(sorted({key for entry in entries for key in self.keys.get(entry, ())}))


def find_separation(
    candidates: Mapping[str, Sequence[int]],
    answers: Mapping[str, Mapping[int, CallOutcome]],
    tolerance: Mapping[int, tuple[float, float]],
    differ: Callable[[int, CallOutcome, CallOutcome], bool],
    shape_of: Callable[[int], tuple[Any, ...]] = lambda key: (),
    *,
    cover: int = COVER,
    most: int = MOST,
) -> Separation:
    """Choose, per entry, the calls among ``candidates`` (simplest first) that tell the solutions apart.

    ``answers``: each solution's outcomes, by label (the reference and every
    known-wrong solution); ``tolerance``: each call's, kept with the choice;
    ``differ(key, a, b)``: whether two outcomes of call ``key`` differ by
    more than twice its tolerance, so that a learner within it of one
    solution is not within it of the other;
    ``shape_of(key)``: what the call's arguments look like (shapes and
    numbers), so that, of calls that tell as many pairs apart, one unlike
    those already chosen is preferred. A call a solution did not answer in
    full (timed out, crashed) tells nothing about it.
    """
    labels = sorted(answers)
    pairs = list(combinations(labels, 2))
    chosen: dict[str, tuple[int, ...]] = {}
    told_apart: set[tuple[str, str]] = set()
    for entry, keys in candidates.items():
        splits = {key: _pairs_told_apart(key, pairs, answers, differ) for key in keys}
        separable = {pair for told in splits.values() for pair in told}
        told_apart |= separable
        need = {pair: min(cover, sum(pair in told for told in splits.values())) for pair in separable}
        picked: list[int] = []
        seen: set[Any] = set()
        while len(picked) < most and any(count > 0 for count in need.values()):
            best = max(
                (key for key in keys if key not in picked),
                key=lambda key: (
                    sum(1 for pair in splits[key] if need[pair] > 0),
                    len(set(shape_of(key)) - seen),
                    -keys.index(key),  # the simplest (planned earliest) of equals
                ),
                default=None,
            )
            if best is None or not any(need[pair] > 0 for pair in splits[best]):
                break
            picked.append(best)
            seen |= set(shape_of(best))
            for pair in splits[best]:
                need[pair] = max(need[pair] - 1, 0)
        chosen[entry] = tuple(sorted(picked))
    kept = {key: tolerance[key] for keys in chosen.values() for key in keys}
    return Separation(chosen, kept, tuple(pair for pair in pairs if pair not in told_apart))


def _pairs_told_apart(
    key: int,
    pairs: list[tuple[str, str]],
    answers: Mapping[str, Mapping[int, CallOutcome]],
    differ: Callable[[int, CallOutcome, CallOutcome], bool],
) -> set[tuple[str, str]]:
    told = set()
    for first, second in pairs:
        a, b = answers[first].get(key), answers[second].get(key)
        if a is None or b is None or a.status not in _FINAL or b.status not in _FINAL:
            continue
        if a.digest is not None and a.digest == b.digest:
            continue
        if differ(key, a, b):
            told.add((first, second))
    return told


def shape_parts(args: Mapping[str, Any]) -> tuple[Any, ...]:
    """What a call's arguments look like, part by part: each array's shape and dtype, each number itself."""
    parts: list[Any] = []
    for name, value in args.items():
        if isinstance(value, np.ndarray):
            parts.append((name, value.shape, value.dtype.str))
        elif isinstance(value, (bool, int, float, str)) or value is None:
            parts.append((name, value))
    return tuple(parts)


def separation_data(separation: Separation) -> dict[str, Any]:
    """A separation as plain data, for the disk cache."""
    return {
        "keys": {entry: list(keys) for entry, keys in separation.keys.items()},
        "tolerance": [[key, rtol, atol] for key, (rtol, atol) in sorted(separation.tolerance.items())],
        "unseparated": [list(pair) for pair in separation.unseparated],
    }


def separation_from_data(data: Any) -> Separation:
    """A separation read back (``separation_data``), checked; ``ValueError`` for anything else."""
    if type(data) is not dict or data.keys() != {"keys", "tolerance", "unseparated"}:
        raise ValueError("a separation is a mapping of keys, their tolerances and unseparated pairs")
    keys, tolerance, unseparated = data["keys"], data["tolerance"], data["unseparated"]
    if type(keys) is not dict or not all(
        type(entry) is str and type(numbers) is list and all(type(n) is int and n >= 0 for n in numbers)
        for entry, numbers in keys.items()
    ):
        raise ValueError("a separation's calls are call numbers by entry")
    if type(unseparated) is not list or not all(
        type(pair) is list and len(pair) == 2 and all(type(label) is str for label in pair) for pair in unseparated
    ):
        raise ValueError("a separation's unseparated pairs are pairs of labels")
    if type(tolerance) is not list or not all(
        type(item) is list
        and len(item) == 3
        and type(item[0]) is int
        and all(type(x) is float and x >= 0 for x in item[1:])
        for item in tolerance
    ):
        raise ValueError("a separation's tolerances are [call, rtol, atol]")
    tolerances = {item[0]: (item[1], item[2]) for item in tolerance}
    chosen = {entry: tuple(numbers) for entry, numbers in keys.items()}
    if {key for numbers in chosen.values() for key in numbers} != set(tolerances):
        raise ValueError("a separation's tolerances are not those of its calls")
    return Separation(chosen, tolerances, tuple((pair[0], pair[1]) for pair in unseparated))
