"""PrairieLearn's external-grader ``results.json``: write it to ``/grade/results/results.json``.

Top level::

    gradable       false when no check could run (the file does not import, nothing
                   attempts the exercise): PrairieLearn then marks the submission
                   "invalid, not gradable", awards nothing and does not count the attempt
    format_errors  with gradable false: the sentences that say why
    score          points earned / points available, in [0, 1]
    message        one line: the points, or why nothing could be graded
    output         what the learner's code printed, per exercise (after the note of a report
                   graded against a handout, which also starts ``message``)
    tests          one per check, in the report's order:
                   name "EXERCISE / CHECK", description (the property checked, or the
                   exercise's title), points, max_points, message (the reason) and
                   output (smallest failing input, expected, got, hint: what the spec
                   lets the check reveal; empty for a check that passed)

PrairieLearn shows every test to the student at once; it has no hidden or
after-the-deadline tests, so a hidden check's entry says only what its spec
lets it reveal after grading, as in every format. All text is plain (its
``<pl-external-grader-results>`` element escapes it) and passes through
``printable``. No times: the same report gives the same bytes.
"""

from __future__ import annotations

import json
from typing import Any

from grader.report._common import check_rows, points, printable
from grader.report._runnable import nothing_ran, why_nothing_ran
from grader.report.runner_safe import inert_lines
from grader.results import CheckResult, ExerciseResult, Report

__all__ = ["format_prairielearn"]


def format_prairielearn(report: Report) -> str:
    """The report as PrairieLearn external-grader ``results.json`` text."""
    gradable = not nothing_ran(report)
    score = min(1.0, max(0.0, report.score / report.max_score)) if report.max_score > 0 else 0.0
    results: dict[str, Any] = {"gradable": gradable}
    if gradable:
        results["score"] = score
        results["message"] = f"{points(report.score)} of {points(report.max_score)} points."
    else:
        errors = [printable(line) for line in why_nothing_ran(report)]
        results["score"] = 0.0
        results["message"] = "This submission could not be graded: " + " ".join(errors)
        results["format_errors"] = errors
    if report.handout:  # not a grade of record: said first in the message and in the output
        note = printable(report.handout)
        results["message"] = f"{note} {results['message']}"
    results["output"] = _printed(report)
    results["tests"] = [_test(exercise, check) for exercise in report.exercises for check in check_rows(exercise)]
    return inert_lines(json.dumps(results, indent=2, ensure_ascii=False) + "\n", "json")


def _test(exercise: ExerciseResult, check: CheckResult) -> dict[str, Any]:
    return {
        "name": printable(f"{exercise.id} / {check.id}"),
        "description": printable(check.property or exercise.title or exercise.id),
        "points": check.score,
        "max_points": check.max_score,
        "message": printable(check.reason),
        "output": "" if check.status == "passed" else _details(check),
    }


def _details(check: CheckResult) -> str:
    """The parts of a reason a reader scans for: input, expected, got, likely mistake or hint."""
    parts = [
        ("smallest failing input", check.input),
        ("expected", check.expected),
        ("got", check.got),
        ("note", check.note),
        ("likely mistake", check.diagnosis),
        ("hint", None if check.diagnosis else check.hint),
    ]
    return printable("\n".join(f"{label}: {value}" for label, value in parts if value))


def _printed(report: Report) -> str:
    blocks = [f"Note: {report.handout}"] if report.handout else []
    blocks += [f"Note ({exercise.id}): {exercise.note}" for exercise in report.exercises if exercise.note]
    blocks += [
        f"Output of your code ({exercise.id}):\n{exercise.output.rstrip()}"
        for exercise in report.exercises
        if exercise.output
    ]
    return printable("\n\n".join(blocks))
