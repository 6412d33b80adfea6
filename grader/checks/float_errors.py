"""``no-float-warnings``: the learner's code computes without NumPy overflow, invalid values or division by zero.

The learner process records NumPy's floating-point errors during each call
(``sandbox.learner_errors.FloatEvents``) and reports them with the answer,
as facts: the kind, the ufunc, the learner's own line. A result can be
right and still have overflowed on the way (``1 / (1 + exp(800))`` is 0,
after ``exp`` gave inf); this check makes that visible. Underflow is not
an error here: rounding a tiny number to zero is what floats do.
"""

from __future__ import annotations

from typing import Any, Literal

from grader.checks.base import Check, Finding
from grader.checks.cases import Case
from grader.record import Field
from grader.sandbox.outcomes import CallOutcome

__all__ = ["NoFloatWarnings", "describe_float_error"]

_VERBS = {"overflow": "overflowed", "invalid": "gave an invalid value (nan)", "divide": "divided by zero"}


class NoFloatWarnings(Check):
    """No NumPy overflow, invalid value or division by zero happens inside the call (underflow is fine)."""

    property: Literal["no-float-warnings"]
    noun: str = Field(default="the result", description="what the call computes, in the reason")

    def default_description(self, entry: str) -> str:
        return f"{entry} computes without floating-point overflow, invalid values or division by zero"

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        events = outcomes[0].float_errors
        if not events:
            return None
        more = f" (and {len(events) - 1} more kind{'s' if len(events) > 2 else ''})" if len(events) > 1 else ""
        return Finding(
            got=describe_float_error(events[0]) + more,
            expected=f"{self.noun} computed without overflow, invalid values or division by zero",
        )


def describe_float_error(event: dict[str, Any]) -> str:
    """``exp overflowed at mine.py line 3: return 1 / (1 + np.exp(-x))``, from a recorded event."""
    verb = _VERBS.get(str(event.get("kind")), "raised a floating-point error")
    what = f"{event['in']} {verb}" if event.get("in") else f"a computation {verb}"
    if event.get("file") and isinstance(event.get("line"), int):
        text = f": {event['text']}" if event.get("text") else ""
        return f"{what} at {event['file']} line {event['line']}{text}"
    return what
