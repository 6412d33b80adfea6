"""Exercism's test-runner ``results.json``, version 3.

Top level: ``version: 3``; ``status`` ``pass`` (every check passed),
``error`` (no check could run: the file does not import, nothing attempts
the exercise; ``message`` then says why) or ``fail``; ``tests`` in the
report's order. Each test is one check::

    name       "EXERCISE / CHECK"
    status     pass | fail | error   (error: the learner's code raised or ran out of time)
    message    the reason, for a test that did not pass (null otherwise)
    test_code  what the check runs: the smallest failing input as a call, else the
               property it checks (for a passing check, its reason says it), or the
               quiz question it marks
    task_id    the exercise's position in the report (1, 2, ...): the "task" a test belongs to
    output     what the learner's code printed, at most 500 characters; the first test's
               output (and ``message``) start with the note of a report graded against a
               handout, which is not a grade of record

The grader captures printed output per exercise, not per check, so it goes on
the exercise's first test only. A skipped check (credit held back, or part
of an exercise not attempted) is ``fail``: its points are lost. Reasons of
hidden checks say what their spec lets them reveal, as in every format.
"""

from __future__ import annotations

import json
from typing import Any

from grader.report._common import ATTEMPTED, check_rows, printable
from grader.report._runnable import nothing_ran, why_nothing_ran
from grader.report.runner_safe import inert_lines
from grader.results import CheckResult, ExerciseResult, Report

__all__ = ["OUTPUT_LIMIT", "format_exercism"]

OUTPUT_LIMIT = 500  # characters, Exercism's cap on a test's output
_TRUNCATED = "\n[Output was truncated. Please limit to 500 chars.]"
_STATUS = {"passed": "pass", "failed": "fail", "skipped": "fail", "error": "error", "timeout": "error"}


def format_exercism(report: Report) -> str:
    """The report as Exercism test-runner ``results.json`` text (version 3)."""
    tests = [
        _test(task_id, exercise, index, check)
        for task_id, exercise in enumerate(report.exercises, start=1)
        for index, check in enumerate(check_rows(exercise))
    ]
    if nothing_ran(report):
        status, message = "error", printable("\n".join(why_nothing_ran(report)))
    else:
        status, message = ("pass" if report.all_passed else "fail"), None
    results: dict[str, Any] = {"version": 3, "status": status, "message": message, "tests": tests}
    if report.handout:  # not a grade of record: said first in the message and in the first test's output
        if message is not None:
            results["message"] = printable(f"{report.handout}\n{message}")
        if tests:
            tests[0]["output"] = capped(f"note: {report.handout}\n" + tests[0].get("output", ""))
    return inert_lines(json.dumps(results, indent=2, ensure_ascii=False) + "\n", "json")


def _test(task_id: int, exercise: ExerciseResult, index: int, check: CheckResult) -> dict[str, Any]:
    status = _STATUS.get(check.status, "error")
    test: dict[str, Any] = {
        "name": printable(f"{exercise.id} / {check.id}"),
        "status": status,
        "message": None if status == "pass" else printable(check.reason),
        "test_code": printable(_test_code(exercise, check)),
        "task_id": task_id,
    }
    if index == 0 and (exercise.output or exercise.note):
        noted = f"note: {exercise.note}\n" if exercise.note else ""
        test["output"] = capped(noted + (exercise.output or ""))
    return test


def _test_code(exercise: ExerciseResult, check: CheckResult) -> str:
    """What the check runs, as far as the report tells it."""
    if check.input or check.property:
        return check.input or check.property or ""
    if check.id == ATTEMPTED:
        return f"a file of the submission that attempts {exercise.id}"
    if exercise.kind == "quiz":
        return f"your answer to question {check.id} of {exercise.id}"
    if check.status == "passed":  # "softmax returns ..., verified on 12 inputs."
        return check.reason
    return f"check {check.id} of {exercise.id}"


def capped(text: str) -> str:
    """``text`` in at most :data:`OUTPUT_LIMIT` characters, saying so when it was cut."""
    text = printable(text)
    if len(text) <= OUTPUT_LIMIT:
        return text
    return text[: OUTPUT_LIMIT - len(_TRUNCATED)] + _TRUNCATED
