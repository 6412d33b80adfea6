"""What a failed check's first failing case gave, kept for the instructor when a class is graded.

The batch groups learners whose failing outputs agree (``grader.batch.mistakes``);
it needs the output itself, on hidden checks too, in a form that stays small
whatever the learner returned. The call and the finding's words are cut to
``FAILING_TEXT`` characters; the output's numbers are kept only when there are
at most ``FAILING_VALUES`` of them, otherwise the words alone say what came back.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from grader.checks.base import Check, Finding
from grader.engine.findings import CheckRun
from grader.results import FAILING_TEXT, FAILING_VALUES, FailingOutput
from grader.sandbox.outcomes import CallOutcome

__all__ = ["failing_output"]


def _bounded(text: str) -> str:
    return text if len(text) <= FAILING_TEXT else text[: FAILING_TEXT - 3] + "..."


def _number(value: float) -> float | str:
    """A float JSON can hold, or its name (``nan``, ``inf``, ``-inf``)."""
    return value if math.isfinite(value) else str(value)


def _values(outcomes: list[CallOutcome]) -> tuple[list[float | str], list[list[int]]] | None:
    """What the learner's calls of the case returned, as at most ``FAILING_VALUES`` numbers and each one's shape,
    when every one returned a single numeric array."""
    numbers: list[float | str] = []
    shapes: list[list[int]] = []
    for outcome in outcomes:
        if outcome.status != "ok" or outcome.kind != "single" or len(outcome.values) != 1:
            return None
        array = outcome.values[0]
        if not isinstance(array, np.ndarray) or array.dtype.kind not in "biuf":
            return None
        if len(numbers) + array.size > FAILING_VALUES:
            return None
        numbers += [_number(float(x)) for x in array.astype(float).ravel()]
        shapes.append([int(n) for n in array.shape])
    return (numbers, shapes) if shapes else None


def _tolerance(check: Check, run: CheckRun, index: int, mine: list[CallOutcome]) -> tuple[float, float]:
    """The tolerance the check compared with on that case, else its own ``rtol``/``atol``, else none."""
    try:
        compared = check.compared(run.cases[index], mine)
    except Exception:  # a value the check cannot compare: its own fields still say how close is close
        compared = None
    if compared is not None:
        return float(compared.rtol), float(compared.atol)
    own: list[Any] = [getattr(check, "rtol", 0.0), getattr(check, "atol", 0.0)]
    rtol, atol = (float(value) if isinstance(value, int | float) else 0.0 for value in own)
    return rtol, atol


def failing_output(
    run: CheckRun, index: int, call_text: str, finding: Finding, mine: list[CallOutcome]
) -> FailingOutput:
    """The instructor's record of failing case ``index`` of ``run``: its call, the finding, the learner's output.

    Called before the case's outcomes release their arrays.
    """
    calls = run.planned.calls[index]
    found = _values([outcome for call, outcome in zip(calls, mine, strict=False) if call.on == "learner"])
    rtol, atol = _tolerance(run.check, run, index, mine)
    return FailingOutput(
        input=_bounded(call_text),
        got=_bounded(finding.got),
        expected=_bounded(finding.expected),
        values=found[0] if found else None,
        shapes=found[1] if found else None,
        rtol=rtol,
        atol=atol,
    )
