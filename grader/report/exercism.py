"""Exercism's test-runner ``results.json``, version 3 (building/tooling/test-runners/interface.md).

Top level: ``version: 3``; ``status`` ``pass`` (every check passed),
``error`` (no check could run: the file does not import, nothing attempts
the exercise; ``message`` then says why, and every test is ``error`` with
its exercise's cause) or ``fail``; ``tests`` in the report's order. Each test
is one check::

    name       "EXERCISE / CHECK"
    status     pass | fail | error   (error: the learner's code raised or ran out of time)
    message    the reason, for a test that did not pass (null otherwise)
    test_code  the smallest failing input as a call, when the report shows one; left out
               otherwise (the interface asks for code, and a property in words is not code)
    task_id    the check's ``task`` from its spec, left out when the spec names none: the
               interface links a test to a task only when it tests exactly that one
    output     what the learner's code printed while the check's calls ran, at most 500 characters
               each, without the warnings Python printed for it (its own output only, as the
               interface asks); left out for a test whose calls printed nothing. The first test's
               output also holds what the file printed when it was imported, and starts (as
               ``message`` does) with the note of a report graded against a handout, which is not a
               grade of record

The output is the exercise's, cut by call (``ExerciseResult.printed``, from
``engine.printed``): each answer of the learner process says how many bytes
it had printed by then. A call several checks share shows its output on the
first of them only. A report without that cut (read back from JSON, or an
exercise whose file did not import) shows the exercise's whole output on its
first test. A skipped check (credit held back, or part of an exercise not
attempted) is ``fail``: its points are lost. Reasons of hidden checks say
what their spec lets them reveal, as in every format.
"""

from __future__ import annotations

import json
import re
from typing import Any

from grader.report._common import check_rows, printable
from grader.report._runnable import nothing_ran, why_nothing_ran
from grader.report.runner_safe import inert_lines
from grader.results import CheckResult, ExerciseResult, Report

__all__ = ["MESSAGE_LIMIT", "OUTPUT_LIMIT", "capped", "format_exercism", "own_output"]

OUTPUT_LIMIT = 500  # characters, Exercism's cap on a test's output
MESSAGE_LIMIT = 65535  # characters, Exercism's cap on the top-level message
_TRUNCATED = "\n[Output was truncated. Please limit to 500 chars.]"
# The first line of a warning as Python's warnings module shows it: "softmax.py:5: RuntimeWarning: overflow ...".
_WARNING = re.compile(r"^\S[^:\n]*\.py:\d+: [A-Za-z_]*Warning: ")
_STATUS = {"passed": "pass", "failed": "fail", "skipped": "fail", "error": "error", "timeout": "error"}


def format_exercism(report: Report) -> str:
    """The report as Exercism test-runner ``results.json`` text (version 3)."""
    stopped = nothing_ran(report)
    tests = [
        _test(exercise, index, check, stopped)
        for exercise in report.exercises
        for index, check in enumerate(check_rows(exercise))
    ]
    if stopped:
        status, message = "error", printable("\n".join(why_nothing_ran(report)))[:MESSAGE_LIMIT]
    else:
        status, message = ("pass" if report.all_passed else "fail"), None
    results: dict[str, Any] = {"version": 3, "status": status, "message": message, "tests": tests}
    if report.handout:  # not a grade of record: said first in the message and in the first test's output
        if message is not None:
            results["message"] = printable(f"{report.handout}\n{message}")[:MESSAGE_LIMIT]
        if tests:
            tests[0]["output"] = capped(f"note: {report.handout}\n" + tests[0].get("output", ""))
    return inert_lines(json.dumps(results, indent=2, ensure_ascii=False) + "\n", "json")


def _test(exercise: ExerciseResult, index: int, check: CheckResult, stopped: bool) -> dict[str, Any]:
    """One check as a test; when nothing ran, each test errs with the cause that stopped its exercise."""
    status = "error" if stopped else _STATUS.get(check.status, "error")
    if status == "pass":
        message = None
    elif stopped and exercise.status == "error":  # its checks say "see above"; Exercism shows no "above"
        message = printable(exercise.reason)
    else:
        message = printable(check.reason)
    test: dict[str, Any] = {"name": printable(f"{exercise.id} / {check.id}"), "status": status, "message": message}
    code = _test_code(check)
    if code:
        test["test_code"] = printable(code)
    if check.task is not None:
        test["task_id"] = check.task
    printed = _printed(exercise, index, check)
    if printed or (index == 0 and exercise.note):
        noted = f"note: {exercise.note}\n" if exercise.note else ""
        test["output"] = capped(noted + printed)
    return test


def _printed(exercise: ExerciseResult, index: int, check: CheckResult) -> str:
    """What the test of ``check`` (the exercise's ``index``-th) shows as printed: its calls' output, after the
    import's on the first test; without the cut by call, the exercise's whole output on its first test."""
    cut = exercise.printed
    if cut is None:
        return own_output(exercise.output or "") if index == 0 else ""
    own = own_output(cut.checks.get(check.id, ""))
    if index != 0:
        return own
    imported = own_output(cut.imported)
    if imported and own and not imported.endswith("\n"):
        imported += "\n"
    return imported + own


def own_output(text: str) -> str:
    """What the learner printed, without the warnings Python wrote for them (``FILE:LINE: XWarning: ...`` and the
    source line under it): the interface's ``output`` is what a user deliberately prints, and each NumPy warning
    that matters is already in the reason of the check it broke."""
    kept: list[str] = []
    lines = text.splitlines(keepends=True)
    index = 0
    while index < len(lines):
        if _WARNING.match(lines[index]):
            index += 2 if index + 1 < len(lines) and lines[index + 1].startswith("  ") else 1
            continue
        kept.append(lines[index])
        index += 1
    return "".join(kept)


def _test_code(check: CheckResult) -> str | None:
    """The call the check failed on, when the report shows one; else none (Exercism then shows the message)."""
    return check.input


def capped(text: str) -> str:
    """``text`` in at most :data:`OUTPUT_LIMIT` characters, saying so when it was cut."""
    text = printable(text)
    if len(text) <= OUTPUT_LIMIT:
        return text
    return text[: OUTPUT_LIMIT - len(_TRUNCATED)] + _TRUNCATED
