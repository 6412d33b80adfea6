"""Gradescope's ``results.json``: write it to ``/autograder/results/results.json``.

One test per check, named ``exercise / check`` and numbered ``1.1``, ``1.2``,
... (exercise, then check); its ``output`` is the check's reason. Our
visibilities map to Gradescope's: ``public`` becomes ``visible``; ``hidden``,
``after_due_date`` and ``after_published`` are the same words there. (A check
whose reason should reach learners after grading, but not before the due
date, is written ``after_due_date`` or ``after_published`` in its spec.)

``output_format`` and ``test_output_format`` are ``text``, not ``md`` or
``html``: reasons are plain sentences that quote code (``z**2 / sum(z**2)``,
``x_max``, ``[0, 0, 1]``), which Markdown would turn into emphasis and links,
and they quote the learner's own exception messages and output, which must
never become markup. Gradescope shows ``text`` exactly as written.

The top-level ``output`` is shown to learners whatever the tests' visibility,
so it says nothing that a non-visible test would reveal: per exercise, the
score and reason only when all of its checks are visible, otherwise how many
visible checks passed. ``score`` is given explicitly, so totals do not depend
on Gradescope summing tests. No execution time: the same report gives the same
bytes.
"""

from __future__ import annotations

import json
from typing import Any

from grader.report._common import check_rows, points, printable
from grader.results import CheckResult, ExerciseResult, Report, to_data

__all__ = ["format_gradescope", "gradescope_visibility"]

_VISIBILITY = {"public": "visible", "hidden": "hidden", "after_due_date": "after_due_date",
               "after_published": "after_published"}


def gradescope_visibility(visibility: str) -> str:
    """Gradescope's word for one of ours; anything unknown stays hidden."""
    return _VISIBILITY.get(visibility, "hidden")


def format_gradescope(report: Report) -> str:
    """The report as Gradescope ``results.json`` text."""
    tests = [
        _test(number, exercise, index, check)
        for number, exercise in enumerate(report.exercises, start=1)
        for index, check in enumerate(check_rows(exercise), start=1)
    ]
    sandbox = to_data(report.sandbox) if report.sandbox else None
    results: dict[str, Any] = {
        "score": report.score,
        "output": _summary(report),
        "output_format": "text",
        "test_output_format": "text",
        "test_name_format": "text",
        "tests": tests,
        "extra_data": {
            "grader_version": report.grader_version,
            "submission": printable(report.submission),
            "max_score": report.max_score,
            "public_only": report.public_only,
            "sandbox_tier": sandbox["tier"] if sandbox else None,
            "sandbox": sandbox,
        },
    }
    return json.dumps(results, indent=2, ensure_ascii=False) + "\n"


def _test(number: int, exercise: ExerciseResult, index: int, check: CheckResult) -> dict[str, Any]:
    return {
        "name": printable(f"{exercise.id} / {check.id}"),
        "number": f"{number}.{index}",
        "score": check.score,
        "max_score": check.max_score,
        "status": "passed" if check.status == "passed" else "failed",
        "output": printable(check.reason),
        "tags": [printable(exercise.id)],
        "visibility": gradescope_visibility(check.visibility),
        "extra_data": {"exercise": exercise.id, "check": check.id, "status": check.status},
    }


def _summary(report: Report) -> str:
    """What every learner sees above the tests: nothing a non-visible test would give away."""
    rows = [check for exercise in report.exercises for check in check_rows(exercise)]
    everything_visible = all(check.visibility == "public" for check in rows)
    lines = []
    if everything_visible:
        lines.append(f"Score: {points(report.score)} / {points(report.max_score)}")
    lines += [f"Note: {problem}" for problem in report.problems]
    for exercise in report.exercises:
        lines.append(_exercise_line(exercise))
    if report.public_only and report.hidden_not_run:
        lines.append(f"Only public checks ran; {report.hidden_not_run} hidden checks run when your work is graded.")
    for exercise in report.exercises:
        if exercise.output:
            lines += ["", f"Output of your code ({exercise.id}):"]
            lines += [f"    {line}" for line in exercise.output.splitlines()]
    return printable("\n".join(lines) + "\n") if lines else ""


def _exercise_line(exercise: ExerciseResult) -> str:
    rows = check_rows(exercise)
    visible = [check for check in rows if check.visibility == "public"]
    if len(visible) == len(rows):
        score = f"{points(exercise.score)} / {points(exercise.max_score)}"
        return f"{exercise.id}: {score}, {exercise.status}. {exercise.reason}"
    passed = sum(check.status == "passed" for check in visible)
    later = len(rows) - len(visible)
    line = (f"{exercise.id}: {passed} of {len(visible)} visible checks passed; "
            f"{later} more check{'s are' if later != 1 else ' is'} shown when results are released.")
    # One cause for every check (not attempted, not importable) gives nothing away; say it.
    same_cause = len(rows) > 1 and len({(check.status, check.reason) for check in rows}) == 1
    if exercise.status == "missing" or (same_cause and rows[0].status != "passed"):
        line += f" {exercise.reason}"
    return line
