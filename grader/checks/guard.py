"""``responds-to-input``: the guard that tells real computation from outputs that do not follow their input.

Properties such as "non-negative" or "sums to one" hold for code that
computes nothing (uniform weights, a table of the public inputs with a
rank-based fallback). An exercise names this check as its guard
(``gate:``); until it holds, the entry's other checks earn nothing
(``grader.engine.credit``). It asks nothing about the right values, so
one real bug does not cost every point.

For each case x it calls the entry, and the reference solution, at x, at
x + d and at x + d/16 for a small deterministic direction d of zero mean
(softmax ignores a constant added to every score); at a drawn case also at
x + e for a second direction e, and at a far point that keeps the order of
every array's entries (``(1 + far) x + far / 2``, scaled), where ranks stay
put. The data moves: float arrays, and the arrays bound to a given
function, by ``step`` times their largest entry (at least 1); float
numbers, by ``step`` times themselves, only when there are no such arrays;
integers, by one, only when nothing else can (``cases.twin_directions``,
which also makes the near twins that ordinary drawn case sets hold, so
the guard's calls look like any others).

A response is judged against the reference's response to the same move,
scale-free: the learner's change relative to the size of its output, over
the reference's change relative to the size of its own. So a real
computation wrong by a factor (a Jacobian times h squared, entries near
1e-11) responds, and a table plus a tiny smooth term does not. The check
fails when, at a drawn case,

(a) the output's entries are all equal though the reference's are not (uniform);
(b) no small move changes the output by ``response`` of what it changes the
    reference's, and neither does the far move (constant, ranks, a table,
    such values plus a tiny term);
(c) the output changes as much for a sixteenth of the move as for the
    whole of it, in every way at once (noise), while the reference's does not,
    and that noise is either large or all there is;

and at every case when

(d) the output jumps at x: a sixteenth of a move changes the output by
    more than ``smoothness`` (a half) of what the whole move does, while
    the outputs at x + m and x + m/16 stay close to each other. For a
    function with a derivative the share is about a sixteenth; a value
    looked up at exactly x jumps, by the same amount for both moved points.

An output that does not change for small moves but follows the far one
(a staircase, such as a floor division inside the formula) is real code
with steps: it passes. A move the reference does not respond to is no
evidence either way. Written-out examples (the public inputs a table could
hold) are judged by (d) alone.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from grader.checks.base import Call, Check, Finding
from grader.checks.cases import Case, moved, stretched, twin_directions
from grader.checks.display import format_number
from grader.record import Field
from grader.sandbox.outcomes import CallOutcome

__all__ = ["RespondsToInput", "movable_problem", "reference_still"]

# Below this relative change, a reference's output did not move: the move is no evidence.
_STILL = 1e-9
# The continuity test compares the change over a small move with that over this fraction of it.
_FRACTION = 16
# Noise this large (relative to the output) for a sixteenth of a small move is not rounding.
_LOUD = 0.1
# Calls per case: at x and three moves (the far one last) for a drawn case, two for an example.
_DRAWN, _DRAWN_WHOLE, _EXAMPLE = 5, 4, 3


class RespondsToInput(Check):
    """The entry's output moves with its input as the reference's does, a little and continuously (see the module)."""

    property: Literal["responds-to-input"]
    uses_reference = True
    step: float = Field(default=1e-3, gt=0, lt=0.1, description="the small move, relative to each argument's size")
    far: float = Field(default=0.5, gt=0, description="the far, order-keeping stretch, relative to each array's size")
    smoothness: float = Field(
        default=0.5,
        gt=0,
        lt=1,
        description="a jump at x: |f(x + d/16) - f(x)| above this share of |f(x + d) - f(x)|, "
        "while |f(x + d) - f(x + d/16)| is below this share of |f(x + d/16) - f(x)|",
    )
    response: float = Field(
        default=0.05,
        gt=0,
        lt=1,
        description="the least share of the reference's relative change, for the same move, that counts as a response",
    )
    uniform_allowed: bool = Field(default=False, description="whether equal output entries may be right")

    def default_description(self, entry: str) -> str:
        return f"{entry} computes its result from its input: it changes a little, and continuously, when the input does"

    def plan(self, case: Case, entry: str) -> list[Call]:
        """The entry's calls at x and its moved points, then the reference's at the same points."""
        points = self.moved_points(case)
        return [Call(entry, p) for p in points] + [Call(entry, p, on="reference") for p in points]

    def moved_points(self, case: Case) -> list[dict[str, object]]:
        """x, then x + d, x + d/16, x + e and the far point (a drawn case), or x + d and x + d/16 (an example).

        When only integers move: x, x + 1, x + 2 and the far point, at a drawn case only.
        """
        directions = twin_directions(case.args)
        drawn = case.origin == "random"
        if not directions.moves or (directions.integers and not drawn):
            return [case.args]
        if directions.integers:
            return [
                case.args,
                moved(case.args, directions.near, 1.0, integers=True),
                moved(case.args, directions.other, 1.0, integers=True),
                stretched(case.args, self.far, directions),
            ]
        points = [
            case.args,
            moved(case.args, directions.near, self.step),
            moved(case.args, directions.near, self.step / _FRACTION),
        ]
        if drawn:
            points += [moved(case.args, directions.other, self.step), stretched(case.args, self.far, directions)]
        return points

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        half = len(outcomes) // 2
        values = [_flat(outcome) for outcome in outcomes[:half]]
        reference = [_flat(outcome) for outcome in outcomes[half:]]
        if any(v is None for v in reference) or len({v.shape for v in reference if v is not None}) != 1:
            return None  # the reference's answers are checked apart (a fault of the exercise)
        if any(v is None for v in values) or len({v.shape for v in values if v is not None}) != 1:
            return Finding(
                got="outputs of different shapes, or not numbers, for inputs of the same shape",
                expected="one array of numbers of the same shape for each",
            )
        mine = [v for v in values if v is not None]
        theirs = [v for v in reference if v is not None]
        if len(mine) == _EXAMPLE:
            return self._jump(mine, theirs)
        if len(mine) not in (_DRAWN, _DRAWN_WHOLE):
            return None  # nothing moves: nothing to judge (``grader validate`` says so)
        if all(np.isfinite(v).all() for v in theirs) and not all(np.isfinite(v).all() for v in mine):
            return Finding(got="values that are not finite", expected="finite values for ordinary inputs")
        at = mine[0]
        if not self.uniform_allowed and at.size > 1 and _uniform(at) and not _uniform(theirs[0]) and _varied(case):
            return Finding(
                got=f"{at.size} equal values for an input whose entries differ",
                expected="values that depend on the entries",
                note="Equal values for unequal inputs hold some properties without computing anything.",
            )
        near = [1, 3] if len(mine) == _DRAWN else [1, 2]
        still = self._still(mine, theirs, near)
        if still is not None:
            return still
        return None if len(mine) == _DRAWN_WHOLE else self._noise(mine, theirs) or self._jump(mine[:3], theirs[:3])

    def _still(self, mine: list[np.ndarray], theirs: list[np.ndarray], near: list[int]) -> Finding | None:
        """(b): no move changes the output by ``response`` of the reference's relative change; else ``None``."""
        moves = near + [len(mine) - 1]
        ours = [_relative(mine[0], mine[i]) for i in moves]
        refs = [_relative(theirs[0], theirs[i]) for i in moves]
        judged = [(o, r) for o, r in zip(ours, refs, strict=True) if r > _STILL]
        if not judged or any(o >= self.response * r for o, r in judged):
            return None
        integers = len(mine) == _DRAWN_WHOLE
        small = "moved by one" if integers else f"moved by about {format_number(self.step)} of its size"
        far = "at a far input that keeps the order of the entries"
        if not any(ours):
            got = f"the same output when every argument {small}, in two directions, and {far}"
        else:
            got = (
                f"an output that changes by about {format_number(max(ours[:-1]))} of its size when every argument "
                f"{small}, and by {format_number(ours[-1])} {far}"
            )
        return Finding(
            got=got,
            expected=f"an output that follows its input as a computed one does (changing by about "
            f"{format_number(max(refs[:-1]))} and {format_number(refs[-1])} of its size for those moves; "
            f"at least {format_number(self.response)} of that counts)",
            note="An output this still holds some properties without computing them (a constant, ranks, values "
            "looked up for known inputs, or such values plus a tiny term), so none of them count.",
        )

    def _noise(self, mine: list[np.ndarray], theirs: list[np.ndarray]) -> Finding | None:
        """(c): the output moves as much for a sixteenth of the move as for all of it, in every way; else ``None``."""
        whole, share, between = _changes(mine[0], mine[1], mine[2])
        ref_whole, ref_share, _ = _changes(theirs[0], theirs[1], theirs[2])
        if not (ref_whole > 0 and ref_share <= self.smoothness * ref_whole):
            return None  # the reference itself is not smooth here: no evidence
        if not (whole > 0 and share > self.smoothness * whole and between > self.smoothness * share):
            return None
        loud = _relative(mine[0], mine[2]) > _LOUD
        far_still = _relative(mine[0], mine[-1]) < self.response * _relative(theirs[0], theirs[-1])
        if not (loud or far_still):
            return None  # rounding noise on a real response (float32 arithmetic, say)
        return Finding(
            got=f"an output that changes by about {format_number(_relative(mine[0], mine[2]))} of its size for a "
            f"{_FRACTION}th of a small move, as much as for the whole move",
            expected="a change that shrinks with the move, as a computed output's does",
            note="An output that changes as much however little the input moves does not follow the input.",
        )

    def _jump(self, mine: list[np.ndarray], theirs: list[np.ndarray]) -> Finding | None:
        """(d): a finding when the output at x stands apart from those at x + m and x + m/16, which agree.

        A sixteenth of the move changes the output by more than ``smoothness`` of the whole move, while
        the outputs at the two moved points are closer to each other than that: x itself is the odd one
        out, and the reference's output is not. Rounding noise moves all three apart alike, and is not a jump.
        """
        at, whole_point, part_point = mine
        whole, share, between = _changes(at, whole_point, part_point)
        ref_whole, ref_share, ref_between = _changes(*theirs)
        if ref_whole > 0 and ref_share > self.smoothness * ref_whole and ref_between < self.smoothness * ref_share:
            return None  # the reference jumps here too
        with np.errstate(all="ignore"):
            floor = _STILL * float(np.linalg.norm(at))
        if not (
            np.isfinite(whole)
            and whole > floor
            and share > self.smoothness * whole
            and floor < between < self.smoothness * share
            and not self._partly_smooth(at, whole_point, part_point, floor)
        ):
            return None
        return Finding(
            got=f"a jump: moving every argument by about {format_number(self.step)} of its size changes "
            f"the output by {format_number(whole)}, and a {_FRACTION}th of that move already by "
            f"{format_number(share)}",
            expected=f"a change that shrinks with the move (at most {format_number(self.smoothness)} "
            f"of it for a {_FRACTION}th of the move)",
            note="An output that jumps at exactly this input looks looked up, not computed.",
        )

    def _partly_smooth(self, at: np.ndarray, whole_point: np.ndarray, part_point: np.ndarray, floor: float) -> bool:
        """Whether some entries moved smoothly while others jumped: a branch of real code, not a lookup.

        A value looked up at exactly x replaces the whole output; a formula with
        a step (a wrong branch at 0, say) jumps only in the entries at the step.
        """
        with np.errstate(all="ignore"):
            whole = np.abs(whole_point - at)
            share = np.abs(part_point - at)
            between = np.abs(whole_point - part_point)
            changed = whole > floor / max(1.0, np.sqrt(at.size))
            jumped = changed & (share > self.smoothness * whole) & (between < self.smoothness * share)
        return bool(np.any(changed & ~jumped))

    def verified(self, cases: list[Case]) -> str:
        return f"at {len(cases)} input{'s' if len(cases) != 1 else ''}, each moved a little and far"


def movable_problem(case: Case) -> str | None:
    """Why the guard cannot move ``case`` (a sentence for the spec's author), or ``None`` when it can."""
    directions = twin_directions(case.args)
    if not directions.moves:
        return (
            "none of its arguments can move (the guard moves float arrays, float numbers and the arrays bound "
            "to a given function, and integers when nothing else can)"
        )
    return None


def reference_still(outcomes: list[CallOutcome]) -> bool:
    """Whether the reference's outputs at a case and its moved points (its calls, as planned) all stay the same."""
    theirs = [_flat(outcome) for outcome in outcomes]
    if len(theirs) < 2 or any(v is None for v in theirs) or len({v.shape for v in theirs if v is not None}) != 1:
        return False
    values = [v for v in theirs if v is not None]
    return all(_relative(values[0], v) <= _STILL for v in values[1:])


def _flat(outcome: CallOutcome) -> np.ndarray | None:
    """Every returned number as one float vector, or None when something returned is not a number."""
    if outcome.status != "ok":
        return None
    parts = []
    for value in outcome.values:
        if value.dtype.kind not in "biuf":
            return None
        parts.append(np.asarray(value, dtype=float).ravel())
    return np.concatenate(parts) if parts else None


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    """|b - a| relative to the larger of |a| and |b| (0 when both are 0, or not finite)."""
    with np.errstate(all="ignore"):
        size = max(float(np.linalg.norm(a)), float(np.linalg.norm(b)))
        change = float(np.linalg.norm(b - a))
    if not (np.isfinite(size) and np.isfinite(change)) or size == 0:
        return 0.0
    return change / size


def _changes(at: np.ndarray, whole_point: np.ndarray, part_point: np.ndarray) -> tuple[float, float, float]:
    """|f(x + d) - f(x)|, |f(x + d/16) - f(x)| and |f(x + d) - f(x + d/16)|."""
    with np.errstate(all="ignore"):
        return (
            float(np.linalg.norm(whole_point - at)),
            float(np.linalg.norm(part_point - at)),
            float(np.linalg.norm(whole_point - part_point)),
        )


def _uniform(values: np.ndarray) -> bool:
    with np.errstate(all="ignore"):
        return bool(np.ptp(values) <= 1e-12 * float(np.abs(values).max())) if values.size else False


def _varied(case: Case) -> bool:
    """Whether some float array argument has entries that differ."""
    return any(
        isinstance(v, np.ndarray)
        and v.dtype.kind == "f"
        and v.size > 1
        and np.isfinite(v).any()
        and np.ptp(v[np.isfinite(v)]) > 0
        for v in case.args.values()
    )
