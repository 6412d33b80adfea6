"""``responds-to-input``: the guard that tells real computation from constant, uniform or tabulated outputs.

Properties such as "non-negative" or "sums to one" hold for code that
computes nothing (uniform weights, a table of the public inputs with a
rank-based fallback). An exercise names this check as its guard
(``gate:``); until it holds, the entry's other checks earn nothing
(``grader.engine.credit``). It asks nothing about the right values, so
one real bug does not cost every point.

For each case x it calls the entry at x, at x + d and at x + d/16 for a
small deterministic direction d of zero mean (softmax ignores a constant
added to every score); at a drawn case also at x + e for a second
direction e, and at a far point x + D. Each float array argument moves by ``step`` times
its largest entry (at least 1). The check fails when

(a) the output at the far point is the output at x, and no small move
    changes it (constant);
(b) the output's entries are all equal though the input's are not (uniform);
(c) no small move changes the output (locally constant: ranks, a table);
(d) the output jumps at x: a sixteenth of a move changes the output by
    more than ``smoothness`` (a half) of what the whole move does, while
    the outputs at x + m and x + m/16 stay close to each other. For a
    function with a derivative the share is about a sixteenth (less at a
    stationary point); a value looked up at exactly x jumps, by the same
    amount for both moved points; rounding noise moves all three apart.

(a) to (c) apply to drawn cases (``random``): hidden inputs, where code
that computes must respond. At written-out examples (the public inputs a
table could hold), only (d) applies: a buggy but real computation may be
constant on a small example (softmax over an axis of length 1), but it
does not jump there. Only float array arguments move; masks, targets and
functions stay. Where equal entries are right for some inputs, the spec
says ``uniform_allowed`` rather than the guard asking the reference.
"""

from __future__ import annotations

import hashlib
from typing import Literal

import numpy as np

from grader.checks.base import Call, Check, Finding
from grader.checks.cases import Case
from grader.checks.display import format_number
from grader.record import Field
from grader.sandbox.outcomes import CallOutcome

__all__ = ["RespondsToInput"]

# Below this share of the output's size, a change is rounding, not a response.
_RESPONSE_FLOOR = 1e-10
# The continuity test compares the change over a small move with that over this fraction of it.
_FRACTION = 16


class RespondsToInput(Check):
    """The entry's output moves with its input, a little for a small move and continuously (see the module)."""

    property: Literal["responds-to-input"]
    step: float = Field(default=1e-3, gt=0, lt=0.1, description="the small move, relative to each array's size")
    far: float = Field(default=0.5, gt=0, description="the far move, relative to each array's size")
    smoothness: float = Field(
        default=0.5,
        gt=0,
        lt=1,
        description="a jump at x: |f(x + d/16) - f(x)| above this share of |f(x + d) - f(x)|, "
        "while |f(x + d) - f(x + d/16)| is below this share of |f(x + d/16) - f(x)|",
    )
    uniform_allowed: bool = Field(default=False, description="whether equal output entries may be right")

    def default_description(self, entry: str) -> str:
        return f"{entry} computes its result from its input: it changes a little, and continuously, when the input does"

    def plan(self, case: Case, entry: str) -> list[Call]:
        """At x, x + d and x + d/16; a drawn case also at x + e and the far point (written-out ones need no more)."""
        d, e, far = _directions(case)
        calls = [
            Call(entry, case.args),
            Call(entry, _moved(case.args, d, self.step)),
            Call(entry, _moved(case.args, d, self.step / _FRACTION)),
        ]
        if case.origin == "random":
            calls += [Call(entry, _moved(case.args, e, self.step)), Call(entry, _moved(case.args, far, self.far))]
        return calls

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        values = [_flat(outcome) for outcome in outcomes]
        if any(v is None for v in values) or len({v.shape for v in values if v is not None}) != 1:
            return Finding(
                got="outputs of different shapes, or not numbers, for inputs of the same shape",
                expected="one array of numbers of the same shape for each",
            )
        at, plus, plus_part, *drawn = (v for v in values if v is not None)
        with np.errstate(all="ignore"):  # a written-out example may give inf or nan: then no change is measured
            size = float(np.linalg.norm(at)) + 1.0
            floor = _RESPONSE_FLOOR * size
        if case.origin != "random":
            return self._jump(at, [(plus, plus_part)], floor)
        other, far = drawn
        with np.errstate(all="ignore"):
            changes = [float(np.linalg.norm(v - at)) for v in (plus, other)]
        if not all(np.isfinite(v).all() for v in (at, plus, plus_part, other)):
            return Finding(got="values that are not finite", expected="finite values for ordinary inputs")
        still = max(changes) <= floor
        moved = f"every array moved by about {format_number(self.step)} of its size"
        if still and np.array_equal(far, at):
            return Finding(
                got="the same output for different inputs",
                expected="an output computed from the input",
                note="A constant result holds some properties without computing anything, so none of them count.",
            )
        if not self.uniform_allowed and at.size > 1 and np.ptp(at) <= 1e-12 * size and _varied(case):
            return Finding(
                got=f"{at.size} equal values for an input whose entries differ",
                expected="values that depend on the entries",
                note="Equal weights for unequal scores hold some properties without computing anything.",
            )
        if still:
            return Finding(
                got=f"the same output when {moved}, in two directions",
                expected="an output that moves a little when the input moves a little",
                note="Locally constant results (ranks, or values looked up for known inputs) are not computed "
                "from the input.",
            )
        return self._jump(at, [(plus, plus_part)], floor)

    def _jump(self, at: np.ndarray, moves: list[tuple[np.ndarray, np.ndarray]], floor: float) -> Finding | None:
        """(d): a finding when the output at x stands apart from those at x + m and x + m/16, which agree.

        A sixteenth of the move changes the output by more than ``smoothness`` of the whole move, while
        the outputs at the two moved points are closer to each other than that: x itself is the odd one
        out. Rounding noise (float32 differences) moves all three apart alike, and is not a jump.
        """
        with np.errstate(all="ignore"):
            for whole_point, part_point in moves:
                whole = float(np.linalg.norm(whole_point - at))
                share = float(np.linalg.norm(part_point - at))
                between = float(np.linalg.norm(whole_point - part_point))
                if (
                    np.isfinite(whole)
                    and whole > floor
                    and share > self.smoothness * whole
                    and between < self.smoothness * share
                    and not self._partly_smooth(at, whole_point, part_point, floor)
                ):
                    return Finding(
                        got=f"a jump: moving every array by about {format_number(self.step)} of its size changes "
                        f"the output by {format_number(whole)}, and a {_FRACTION}th of that move already by "
                        f"{format_number(share)}",
                        expected=f"a change that shrinks with the move (at most {format_number(self.smoothness)} "
                        f"of it for a {_FRACTION}th of the move)",
                        note="An output that jumps at exactly this input looks looked up, not computed.",
                    )
        return None

    def _partly_smooth(self, at: np.ndarray, whole_point: np.ndarray, part_point: np.ndarray, floor: float) -> bool:
        """Whether some entries moved smoothly while others jumped: a branch of real code, not a lookup.

        A value looked up at exactly x replaces the whole output; a formula with
        a step (a wrong branch at 0, say) jumps only in the entries at the step.
        """
        whole = np.abs(whole_point - at)
        share = np.abs(part_point - at)
        between = np.abs(whole_point - part_point)
        changed = whole > floor / max(1.0, np.sqrt(at.size))
        jumped = changed & (share > self.smoothness * whole) & (between < self.smoothness * share)
        return bool(np.any(changed & ~jumped))

    def verified(self, cases: list[Case]) -> str:
        return f"at {len(cases)} input{'s' if len(cases) != 1 else ''}, each moved a little and far"


def _flat(outcome: CallOutcome) -> np.ndarray | None:
    """Every returned number as one float vector, or None when something returned is not a number."""
    parts = []
    for value in outcome.values:
        if value.dtype.kind not in "biuf":
            return None
        parts.append(np.asarray(value, dtype=float).ravel())
    return np.concatenate(parts) if parts else None


def _varied(case: Case) -> bool:
    """Whether some float array argument has entries that differ."""
    return any(
        _movable(v) and v.size > 1 and np.isfinite(v).any() and np.ptp(v[np.isfinite(v)]) > 0
        for v in case.args.values()
    )


def _movable(value: object) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.size > 0


Directions = dict[str, np.ndarray]


def _directions(case: Case) -> tuple[Directions, Directions, Directions]:
    """Per float array argument: a zero-mean near direction, a second near one and a far one.

    Drawn from a seed the case's own bytes give, so a case always moves the same way.
    """
    digest = hashlib.sha256()
    for name, value in sorted(case.args.items()):
        if _movable(value):
            digest.update(name.encode() + np.ascontiguousarray(value).tobytes())
    rng = np.random.default_rng(int.from_bytes(digest.digest()[:8], "little"))
    d: Directions = {}
    e: Directions = {}
    far: Directions = {}
    for name, value in case.args.items():
        if _movable(value):
            centred = rng.standard_normal(value.shape)
            centred = centred - centred.mean() if centred.size > 1 else centred
            d[name] = centred / max(float(np.abs(centred).max()), 1e-12)
            e[name] = rng.uniform(-1.0, 1.0, value.shape)
            far[name] = rng.standard_normal(value.shape)
    return d, e, far


def _moved(args: dict[str, object], direction: Directions, by: float) -> dict[str, object]:
    """``args`` with each float array moved by ``by`` times its direction, scaled to the array's largest entry."""
    moved = dict(args)
    for name, d in direction.items():
        value = np.asarray(args[name])
        finite = np.isfinite(value)
        scale = max(float(np.abs(value[finite]).max()), 1.0) if finite.any() else 1.0
        moved[name] = np.where(finite, value + by * d * scale, value).astype(value.dtype)
    return moved
