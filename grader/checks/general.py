"""General properties of any numeric function: values in a range, monotone in an argument.

They assume nothing about softmax, so an exercise on sigmoid, logsumexp or
any elementwise function states them in YAML alone. ``noun`` names the
values in reasons ("the probabilities", "the result").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Literal

import numpy as np

from grader.checks.base import ArrayCheck, Finding
from grader.checks.cases import Case
from grader.checks.display import format_number, format_pair
from grader.errors import did_you_mean
from grader.record import Field, model_validator
from grader.sandbox.outcomes import CallOutcome

__all__ = ["INDISTINGUISHABLE", "InRange", "Monotone"]

Bounds = Literal["[]", "()", "[)", "(]"]

INDISTINGUISHABLE = 1e-12


class InRange(ArrayCheck):
    """Every entry of the result lies within ``low`` and ``high`` (``bounds`` says which ends are included).

    Either end may be left out for a one-sided bound. NaN is never in range.
    """

    property: Literal["in-range"]
    low: float | None = Field(default=None, description="the lower end; leave out for no lower bound")
    high: float | None = Field(default=None, description="the upper end; leave out for no upper bound")
    bounds: Bounds = Field(default="[]", description="which ends are included: [] both, () neither, [) or (]")
    noun: str = Field(default="the result", description="what the values are, in the reason")

    @model_validator(mode="after")
    def _an_interval(self) -> InRange:
        if self.low is None and self.high is None:
            raise ValueError("give low, high or both")
        if self.low is not None and self.high is not None and self.low > self.high:
            raise ValueError(f"low ({self.low:g}) is above high ({self.high:g})")
        return self

    def interval(self) -> str:
        """The range as written in reasons: ``[0, 1]``, ``(0, inf)``."""
        low = "-inf" if self.low is None else format_number(self.low)
        high = "inf" if self.high is None else format_number(self.high)
        return f"{self.bounds[0]}{low}, {high}{self.bounds[1]}"

    def default_description(self, entry: str) -> str:
        return f"every entry {entry} returns lies in {self.interval()}"

    def judge_array(self, case: Case, got: np.ndarray, outcomes: list[CallOutcome]) -> Finding | None:
        inside = ~np.isnan(got)
        if self.low is not None:
            inside &= got >= self.low if self.bounds[0] == "[" else got > self.low
        if self.high is not None:
            inside &= got <= self.high if self.bounds[1] == "]" else got < self.high
        if np.all(inside):
            return None
        index = tuple(int(i) for i in np.argwhere(~inside)[0])
        value = outcomes[0].values[0][index]  # in its own dtype, every digit: 1.0000001 must not print as 1
        others = int(np.count_nonzero(~inside)) - 1
        more = f", and {others} other {'entry' if others == 1 else 'entries'} outside it" if others else ""
        return Finding(
            got=f"{_exact(value)} at entry {_where(index)}{more}",
            expected=f"every entry of {self.noun} in {self.interval()}",
        )


class Monotone(ArrayCheck):
    """An elementwise function is monotone in one argument: a larger input never gives a smaller output.

    The argument's entries are sorted (flattened, NaN inputs left out) and
    the outputs compared in that order. ``strict`` also refuses ties, with
    two exceptions where float64 cannot show a difference:

    - the two inputs are indistinguishable: they differ by at most
      ``INDISTINGUISHABLE`` (1e-12) times the larger of 1 and their magnitudes;
    - the tied output is saturated: within ``saturation_rtol`` (relative;
      by default 4 machine epsilons of the result's dtype, 8.9e-16 for
      float64) of one of ``saturates_at`` (by default -1, 0 and 1, where
      sigmoid, tanh and probabilities flatten out: sigmoid(710) ==
      sigmoid(745) == 1.0 is a tie at 1.0, allowed, while sigmoid(1) ==
      sigmoid(2) is not), or at an end of the float range, where no larger
      (or smaller) value can be told apart: infinite, the largest finite
      magnitude, or subnormal (smaller in magnitude than the smallest
      normal float of the result's dtype, zero excluded).
    """

    property: Literal["monotone"]
    arg: str | None = Field(default=None, description="the input argument; default: the first")
    direction: Literal["increasing", "decreasing"] = Field(
        default="increasing", description="whether outputs rise or fall as the input grows"
    )
    strict: bool = Field(default=False, description="also refuse equal outputs for different inputs")
    saturates_at: list[float] = Field(
        default=[-1.0, 0.0, 1.0],
        description="output values a strict function may tie at, where it flattens out; [] for none",
    )
    saturation_rtol: float | None = Field(
        default=None, ge=0, description="how near (relative) a saturates_at value a tie may be; default 4 epsilons"
    )
    noun: str = Field(default="the result", description="what the values are, in the reason")

    def spec_problems(self, entry: str, signatures: Mapping[str, Mapping[str, bool]]) -> Iterator[tuple[str, str]]:
        """``arg`` must be a parameter of the entry."""
        parameters = signatures.get(entry)
        if self.arg is not None and parameters is not None and self.arg not in parameters:
            yield f"{self.arg!r} is not an argument of {entry}{did_you_mean(self.arg, parameters)}", "arg"

    def default_description(self, entry: str) -> str:
        strictly = "strictly " if self.strict else ""
        return f"{entry} is {strictly}{self.direction} in {self.arg or 'its first argument'}"

    def judge_array(self, case: Case, got: np.ndarray, outcomes: list[CallOutcome]) -> Finding | None:
        name = self.arg or next(iter(case.args))
        inputs = np.asarray(case.args[name], dtype=float)
        if got.shape != inputs.shape:
            return Finding(
                got=f"{self.noun} of shape {got.shape}",
                expected=f"one output per entry of {name}, shape {inputs.shape}",
            )
        x, y = inputs.ravel(), got.ravel()
        keep = ~np.isnan(x)
        x, y = x[keep], y[keep]
        order = np.argsort(x, kind="stable")
        x, y = x[order], y[order]
        sign = 1.0 if self.direction == "increasing" else -1.0
        own = outcomes[0].values[0].dtype
        floats = np.finfo(own if own.kind == "f" else np.float64)
        for i in range(len(x) - 1):
            x1, x2, y1, y2 = x[i], x[i + 1], y[i], y[i + 1]
            if x1 == x2:
                continue
            with np.errstate(invalid="ignore"):
                wrong_way = bool(sign * (y2 - y1) < 0)
            if np.isnan(y1) or np.isnan(y2) or wrong_way:
                return self._finding(name, x1, x2, y1, y2)
            if self.strict and y1 == y2 and not self._tie_allowed(x1, x2, y1, floats):
                return self._finding(name, x1, x2, y1, y2)
        return None

    def _tie_allowed(self, x1: float, x2: float, y: float, floats: np.finfo) -> bool:
        if abs(x2 - x1) <= INDISTINGUISHABLE * max(1.0, abs(x1), abs(x2)):
            return True
        tiny, rtol = float(floats.tiny), self.saturation_rtol
        rtol = 4 * float(floats.eps) if rtol is None else rtol
        if any(abs(y - s) <= rtol * max(abs(s), tiny) for s in self.saturates_at):
            return True
        return bool(np.isinf(y) or abs(y) >= float(floats.max) or 0 < abs(y) < tiny)

    def _finding(self, name: str, x1: float, x2: float, y1: float, y2: float) -> Finding:
        strictly = "strictly " if self.strict else ""
        xs = format_pair(np.float64(x1), np.float64(x2))
        if y1 == y2:
            got = f"the same value, {_exact(y1)}, at {name}={xs.got} and at {name}={xs.expected}"
        else:
            ys = format_pair(np.float64(y1), np.float64(y2))
            how = "" if np.isnan(y1) or np.isnan(y2) else f", {'less' if y2 < y1 else 'more'} for the larger {name}"
            got = f"{ys.got} at {name}={xs.got} and {ys.expected} at {name}={xs.expected}{how}"
        return Finding(got=got, expected=f"{self.noun} {strictly}{self.direction} in {name}")


def _where(index: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(i) for i in index) + "]"


def _exact(value: object) -> str:
    """A number with every digit its dtype has (numpy's shortest repr), so a near miss is visible."""
    if isinstance(value, np.generic):
        return str(value)
    return str(np.float64(value))  # type: ignore[arg-type]
