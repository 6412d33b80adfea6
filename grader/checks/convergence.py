"""``converges-at-order``: the error of a method shrinks at a stated order as one argument is refined.

One argument (``arg``, a number of steps ``n`` or a step size ``h``) is
varied geometrically from the case's own value: ``v, v*ratio,
v*ratio**2, ...`` (``steps`` values; integers stay integers). The error at
each is the largest absolute difference from an exact value, ``exact``, an
expression of the relation language over the case's other arguments (``1 -
cos(b)``, or ``reference.NAME(...)``, computed by the exercise's reference
solution). The order is the least-squares slope of log(error) against
log(arg), its sign turned so that an error falling like ``n**-p`` (as ``n``
grows) or ``h**p`` (as ``h`` shrinks) has order ``p``; it must lie within
``tolerance`` of ``order``. Errors at round-off level (at most ``floor``
plus a few machine epsilons of the exact value) say nothing of the order
and are left out; when fewer than two are left, no order shows, and the
case fails.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Literal

import numpy as np

from grader.checks.base import Call, Check, Finding
from grader.checks.cases import Case
from grader.checks.display import format_number
from grader.checks.expressions import evaluate_expression, parse_expression, planned_calls
from grader.checks.identity import calls_of, site_problems
from grader.errors import SpecError
from grader.record import Field, field_validator
from grader.sandbox.outcomes import CallOutcome

__all__ = ["ConvergesAtOrder", "estimated_order"]


class ConvergesAtOrder(Check):
    """The error against an exact value falls like ``arg**-order`` (or ``arg**order`` for a shrinking step)."""

    property: Literal["converges-at-order"]
    arg: str = Field(description="the argument varied geometrically from the case's value (n, or a step h)")
    exact: str = Field(description="the exact value: an expression over the case's arguments, e.g. '1 - cos(b)'")
    order: float = Field(gt=0, le=64, description="the order the error shows: n**-order, or h**order")
    tolerance: float = Field(default=0.3, ge=0, description="how far the estimated order may be from `order`")
    ratio: float = Field(default=2.0, gt=0, description="the factor between successive values of `arg` (not 1)")
    steps: int = Field(default=4, ge=3, le=12, description="how many values of `arg` are tried")
    floor: float = Field(default=1e-12, ge=0, description="errors at most this are round-off, left out of the fit")
    item: int | None = Field(default=None, ge=0, description="for an entry returning a tuple: the item measured")

    @field_validator("exact")
    @classmethod
    def _exact_parses(cls, value: str) -> str:
        parse_expression(value)  # ExpressionError is a ValueError: the loader names the file and line
        return value

    @field_validator("ratio")
    @classmethod
    def _ratio_refines(cls, value: float) -> float:
        if abs(np.log(value)) < 1e-3:
            raise ValueError("a ratio of 1 varies nothing; use 2 for n (doubling) or 0.5 for a step size")
        return value

    def reference_functions(self) -> tuple[str, ...]:
        """The reference solution's functions ``exact`` calls."""
        sites = parse_expression(self.exact).calls
        return tuple(dict.fromkeys(site.function for site in sites if site.on == "reference"))

    def default_description(self, entry: str) -> str:
        sign = "-" if self.ratio > 1 else ""
        power = f"{self.arg}^{sign}{format_number(self.order)}"
        return (
            f"the error of {entry} against {self.exact} shrinks like {power} as {self.arg} is multiplied by "
            f"{format_number(self.ratio)} (order {format_number(self.order)} within {format_number(self.tolerance)})"
        )

    def spec_problems(self, entry: str, signatures: Mapping[str, Mapping[str, bool]]) -> Iterator[tuple[str, str]]:
        """``arg`` is a parameter of the entry; ``exact`` reads only the others, and calls what exists."""
        parameters = set(signatures.get(entry, {}))
        if self.arg not in parameters:
            yield f"{self.arg!r} is not an argument of {entry}, so it cannot be varied", "arg"
        expression = parse_expression(self.exact)
        for name in sorted(expression.names()):
            if name == self.arg:
                yield (
                    f"the exact value reads {name!r}, the argument the check varies; it is computed once per case",
                    "exact",
                )
            elif name not in parameters:
                yield f"the exact value reads {name!r}, which is not an argument of {entry}", "exact"
        for site in expression.calls:
            yield from site_problems(site, signatures, "exact value")

    def plan(self, case: Case, entry: str) -> list[Call]:
        return self.plan_in(case, entry, {})

    def plan_in(self, case: Case, entry: str, parameters: Mapping[str, Mapping[str, str]]) -> list[Call]:
        """The entry at each value of ``arg`` (the case's own first), then the exact value's reference calls."""
        calls = [Call(entry, {**case.args, self.arg: value}) for value in self.values(case)]
        try:
            planned = planned_calls(parse_expression(self.exact), case.args)
        except Exception as exc:  # an argument that cannot be computed on this case is the spec's fault
            raise SpecError(f"check {self.id}: the arguments of {self.exact!r} cannot be computed: {exc}") from None
        return calls + calls_of(planned, parameters)

    def values(self, case: Case) -> list[Any]:
        """The values of ``arg`` tried on ``case``: its own, then each ``ratio`` times the last."""
        if self.arg not in case.args or case.args[self.arg] is None:
            raise SpecError(f"check {self.id}: a case gives no {self.arg}, the argument the check varies")
        start = case.args[self.arg]
        if isinstance(start, (bool, np.bool_)) or np.ndim(start) != 0:
            raise SpecError(f"check {self.id}: {self.arg} is {start!r}, not a single number to vary")
        if isinstance(start, (int, np.integer)):
            values: list[Any] = [int(round(int(start) * self.ratio**k)) for k in range(self.steps)]
            if len(set(values)) < self.steps or min(values) < 1:
                raise SpecError(f"check {self.id}: {self.arg}={start} times {self.ratio:g} gives {values}")
            return values
        return [float(start) * self.ratio**k for k in range(self.steps)]

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        values = self.values(case)
        mine, theirs = outcomes[: len(values)], outcomes[len(values) :]
        exact = np.asarray(
            evaluate_expression(parse_expression(self.exact), case.args, [o.value for o in theirs]), dtype=float
        )
        if not np.all(np.isfinite(exact)):
            return Finding(got=f"an exact value {exact} that is not finite", expected="a finite exact value")
        errors = []
        for outcome in mine:
            got, problem = self._measured(outcome, exact)
            if problem is not None:
                return problem
            errors.append(float(np.max(np.abs(got - exact))) if got.size else 0.0)
        floor = self.floor + 8 * np.finfo(float).eps * float(np.max(np.abs(exact), initial=0.0))
        at = f"at {self.arg} = {', '.join(format_number(v) for v in values)}"
        shown = f"errors {', '.join(format_number(e) for e in errors)} {at}"
        wanted = f"order {format_number(self.order)} within {format_number(self.tolerance)}"
        order = estimated_order(values, errors, floor, self.ratio > 1)
        if order is None:
            return Finding(
                got=f"{shown}: too few above round-off ({format_number(floor)}) to show an order",
                expected=f"errors that shrink at {wanted}",
            )
        if abs(order - self.order) <= self.tolerance:
            return None
        return Finding(got=f"{shown}: estimated order {order:.2f}", expected=wanted)

    def _measured(self, outcome: CallOutcome, exact: np.ndarray) -> tuple[np.ndarray, Finding | None]:
        """The returned value measured (the ``item`` of a tuple), as floats of the exact value's shape."""
        if outcome.kind == "tuple":
            if self.item is None or self.item >= len(outcome.values):
                which = "one value" if self.item is None else f"a tuple of more than {self.item} values"
                return exact, Finding(got=f"a tuple of {len(outcome.values)} values", expected=which)
            value = outcome.values[self.item]
        elif self.item is not None:
            return exact, Finding(got="a single value", expected=f"a tuple holding item {self.item}")
        else:
            value = outcome.values[0]
        if value.dtype.kind not in "biuf":
            return exact, Finding(got=f"a value of dtype {value.dtype}", expected="real numbers")
        got = value.astype(float)
        if got.shape != exact.shape and exact.ndim:
            return exact, Finding(got=f"a value of shape {got.shape}", expected=f"shape {exact.shape}")
        if not np.all(np.isfinite(got)):
            return exact, Finding(got="a value that is not finite", expected="finite values")
        return got, None


def estimated_order(values: list[Any], errors: list[float], floor: float, growing: bool) -> float | None:
    """The order the errors show: minus the slope of log(error) on log(value) for a growing value, else the slope.

    Errors at or below ``floor`` are left out; ``None`` when fewer than two remain.
    """
    kept = [(float(v), e) for v, e in zip(values, errors, strict=True) if e > floor]
    if len(kept) < 2:
        return None
    x = np.log([v for v, _ in kept])
    y = np.log([e for _, e in kept])
    slope = float(np.polyfit(x, y, 1)[0])
    return -slope if growing else slope
