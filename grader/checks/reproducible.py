"""Checks that a random entry is a function of its arguments: the same seed gives the same numbers, another differs.

An entry that draws random numbers is graded on what it promises about its
arguments, not on the draws themselves: called again with the same
arguments it returns exactly the same result (``reproducible``), and given
another value of one argument (a seed, a sample size) it returns another
(``changes-with-argument``), which shows that the argument is used. Both
judge only the learner's own answers; no reference is asked.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from grader.checks.base import Call, Check, Finding
from grader.checks.cases import Case
from grader.checks.display import format_value
from grader.checks.numbers import nothing_judged
from grader.record import Field
from grader.sandbox.outcomes import CallOutcome

__all__ = ["ChangesWithArgument", "Reproducible", "args_with"]


def args_with(case: Case, name: str, value: object) -> dict[str, object]:
    """The case's arguments with one replaced (or appended, when the case leaves it to its default)."""
    args = dict(case.args)
    args[name] = value
    return args


class Reproducible(Check):
    """Calling again with the same arguments (the same seed) gives exactly the same result.

    The engine sends each distinct call once, so the repeat is spelled
    differently but means the same in Python: the trailing arguments that
    equal their defaults are left out (``f(4, 500, 0)`` and ``f(4, 500)``), or,
    when the case already leaves them out, written in (``f(16)`` and
    ``f(16, 10000, 0)``). Cases should therefore use the default seed.
    """

    property: Literal["reproducible"]
    merge_calls = False  # the repeat must really run twice
    defaults: dict[str, int | float | str | None] = Field(
        min_length=1,
        description="the entry's trailing optional arguments with their defaults, in signature order",
    )

    def default_description(self, entry: str) -> str:
        return f"{entry} returns exactly the same result when called again with the same seed"

    def plan(self, case: Case, entry: str) -> list[Call]:
        full = dict(case.args)
        return [Call(entry, full), Call(entry, self._same_call_spelled_differently(full))]

    def _same_call_spelled_differently(self, args: dict[str, object]) -> dict[str, object]:
        shorter = dict(args)
        for name in reversed(list(self.defaults)):
            if list(shorter)[-1:] == [name] and shorter[name] == self.defaults[name]:
                shorter.pop(name)
            else:
                break
        if shorter != args:
            return shorter
        longer = dict(args)
        for name, value in self.defaults.items():
            longer.setdefault(name, value)
        return longer

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        first = outcomes[0]
        nothing = nothing_judged(first.values, case.args, nan_counts=True)
        if nothing:  # NaN equals NaN here, and nothing equals nothing: neither shows a reproducible result
            return Finding(got=f"a result that {nothing}", expected="the same numbers both times")
        for other in outcomes[1:]:
            same = (
                first.kind == other.kind
                and len(first.values) == len(other.values)
                and all(
                    a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f" and b.dtype.kind == "f")
                    for a, b in zip(first.values, other.values, strict=True)
                )
            )
            if not same:
                return Finding(
                    got=f"{format_value(first.value)} the first time and {format_value(other.value)} the next",
                    expected="the same result both times",
                    note="Make every draw from one generator created inside the function as "
                    "numpy.random.default_rng(seed), with seed=0 as the default; np.random.normal and "
                    "default_rng() without a seed give new numbers on every call.",
                )
        return None

    def verified(self, cases: list[Case]) -> str:
        return f"on {len(cases)} input{'s' if len(cases) != 1 else ''}, each called twice"


class ChangesWithArgument(Check):
    """Different values of one argument (a seed, a sample size) give different results: the argument is used.

    Results that stay the same whatever ``arg`` is do not show by themselves
    that ``arg`` is ignored: a result that changes with nothing (numbers
    made up, a variance of identical draws) stays the same too. So the note
    that ``arg`` seems ignored is given only when the ``control`` call (the
    first of ``values`` with another argument changed) shows that the result
    does change with something.
    """

    property: Literal["changes-with-argument"]
    arg: str = Field(description="the argument to vary")
    values: list[float | int] = Field(min_length=2, description="values to call the entry with, the rest unchanged")
    control: dict[str, float | int] = Field(
        default_factory=dict,
        max_length=1,
        description="another argument and a value for it: the result must change with it before a failure "
        "is said to show that `arg` is ignored (none: that is never said)",
    )

    def default_description(self, entry: str) -> str:
        return f"{entry} returns different results for different values of {self.arg}"

    def plan(self, case: Case, entry: str) -> list[Call]:
        calls = [Call(entry, args_with(case, self.arg, value)) for value in self.values]
        for name, value in self.control.items():
            calls.append(Call(entry, {**calls[0].args, name: value}))
        return calls

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        varied, controls = outcomes[: len(self.values)], outcomes[len(self.values) :]
        first = varied[0]
        nothing = nothing_judged(first.values, case.args, nan_counts=True)
        if nothing:  # NaN differs from NaN here: results that are NaN throughout do not show a dependence
            return Finding(got=f"a result that {nothing}", expected=f"results that depend on {self.arg}")
        if not all(_same_result(first, other) for other in varied[1:]):
            return None
        listed = " and ".join(f"{self.arg}={v}" for v in self.values)
        note = ""
        for (name, value), control in zip(self.control.items(), controls, strict=True):
            if _changed(first, control):
                note = f"The value of {self.arg} seems to be ignored: {name}={value} does change the result."
            else:
                note = (
                    f"With {name}={value} the result is the same too, to within rounding, so these calls do not "
                    f"show whether {self.arg} is used."
                )
        return Finding(
            got=f"{format_value(first.value)} for each of {listed}",
            expected=f"results that depend on {self.arg}",
            note=note,
        )

    def verified(self, cases: list[Case]) -> str:
        return f"on {len(cases)} input{'s' if len(cases) != 1 else ''}, with {self.arg} in {self.values}"


# A control call changes the result only by more than rounding: a variance of identical draws is 1e-31 or 0 by chance.
_ROUNDING = (1e-9, 1e-12)


def _changed(first: CallOutcome, other: CallOutcome) -> bool:
    """Whether ``other`` returned values that differ from ``first``'s by more than rounding."""
    if first.kind != other.kind or len(first.values) != len(other.values):
        return True
    for a, b in zip(first.values, other.values, strict=True):
        if a.shape != b.shape or a.dtype.kind not in "biuf" or b.dtype.kind not in "biuf":
            if not (a.shape == b.shape and np.array_equal(a, b)):
                return True
            continue
        with np.errstate(all="ignore"):
            if not np.allclose(a.astype(float), b.astype(float), rtol=_ROUNDING[0], atol=_ROUNDING[1], equal_nan=True):
                return True
    return False


def _same_result(first: CallOutcome, other: CallOutcome) -> bool:
    """Whether two calls returned exactly the same values."""
    return (
        first.kind == other.kind
        and len(first.values) == len(other.values)
        and all(a.shape == b.shape and np.array_equal(a, b) for a, b in zip(first.values, other.values, strict=True))
    )
