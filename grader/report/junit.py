"""JUnit XML, for CI systems that draw test results (GitLab, Jenkins, GitHub test reporters).

The layout follows what pytest's ``--junitxml`` writes, so the usual parsers
read it::

    <testsuites name="grader" tests=.. failures=.. errors=.. skipped=..>
      <testsuite name="EXERCISE-ID" tests=.. failures=.. errors=.. skipped=..>
        <properties>  score, max_score, status, reason (and hidden_not_run, note) of the exercise,
                      and handout when the report was graded against a handout (not a grade of record)
        <testcase classname="EXERCISE-ID" name="CHECK-ID">
          <failure | error | skipped message="REASON" type="STATUS">REASON</...>
        </testcase>
        <system-out>  what the learner's code printed
      </testsuite>
    </testsuites>

A failed check is a ``<failure>``; an error or a timeout an ``<error>`` (the
learner's code raised, crashed or ran out of time); a skipped check
``<skipped>``, except in an exercise the submission does not attempt (status
``missing``), whose checks are ``<failure type="missing">``: its points are
lost, so CI must go red. An implementation exercise not attempted has one row,
``attempted``, also a failure. Every row that is not ``passed`` in the JSON is
thus a failure, an error or skipped here; a ``<skipped>`` row is credit held
back while the exercise's gate check does not pass, and that check is a failure
or an error.
The reason goes in both the ``message`` attribute and the
element text, since some readers show only one of them. There are no
timestamps, host names or durations: the same report gives the same bytes.
Text passes through ``printable``, so no character XML 1.0 forbids gets in.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from grader.report._common import check_rows, points, printable
from grader.report.runner_safe import inert_lines
from grader.results import CheckResult, ExerciseResult, Report

__all__ = ["format_junit"]

_ELEMENT = {"failed": "failure", "error": "error", "timeout": "error", "skipped": "skipped"}
_SUBMISSION = "submission"


def format_junit(report: Report) -> str:
    """The report as a JUnit XML document (UTF-8, ending with a newline)."""
    root = ET.Element("testsuites", {"name": "grader"})
    suites = [_suite(exercise, report.handout) for exercise in report.exercises]
    if report.problems or not report.exercises:
        suites.append(_submission_suite(report))
    for suite in suites:
        root.append(suite)
    _count(root, list(root.iter("testcase")))
    ET.indent(root, space="  ")
    return inert_lines('<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n", "xml")


def _suite(exercise: ExerciseResult, handout: str | None) -> ET.Element:
    suite = ET.Element("testsuite", {"name": printable(exercise.id)})
    properties = ET.SubElement(suite, "properties")
    facts = [
        ("score", points(exercise.score)),
        ("max_score", points(exercise.max_score)),
        ("status", exercise.status),
        ("reason", exercise.reason),
    ]
    if exercise.hidden_not_run:
        facts.append(("hidden_not_run", str(exercise.hidden_not_run)))
    if exercise.note:
        facts.append(("note", exercise.note))
    if handout:
        facts.append(("handout", handout))
    for name, value in facts:
        ET.SubElement(properties, "property", {"name": name, "value": printable(value)})
    seen: set[str] = set()
    missing = exercise.status == "missing"
    for check in check_rows(exercise):
        suite.append(_case(exercise.id, _unique(check.id, seen), check, missing))
    _count(suite, list(suite.iter("testcase")))
    if exercise.output:
        ET.SubElement(suite, "system-out").text = printable(exercise.output)
    return suite


def _case(classname: str, name: str, check: CheckResult, missing: bool) -> ET.Element:
    """One check as a test case; a check of an exercise not attempted is a failure, whatever its status."""
    case = ET.Element("testcase", {"classname": printable(classname), "name": printable(name)})
    element: str | None = _ELEMENT.get(check.status)
    kind: str = check.status
    if missing and check.status != "passed":
        element, kind = "failure", "missing"
    if element:
        reason = printable(check.reason)
        ET.SubElement(case, element, {"message": reason, "type": kind}).text = reason
    return case


def _submission_suite(report: Report) -> ET.Element:
    """Notes about the submission as a whole; a failure when nothing could be graded."""
    suite = ET.Element("testsuite", {"name": _SUBMISSION})
    if report.handout:
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", {"name": "handout", "value": printable(report.handout)})
    case = ET.SubElement(suite, "testcase", {"classname": _SUBMISSION, "name": "attempts-an-exercise"})
    notes = printable("\n".join(report.problems) or "Nothing was graded.")
    if not report.exercises:
        ET.SubElement(case, "failure", {"message": notes, "type": "failed"}).text = notes
    _count(suite, [case])
    ET.SubElement(suite, "system-out").text = notes
    return suite


def _count(element: ET.Element, cases: list[ET.Element]) -> None:
    """Set tests/failures/errors/skipped from the test cases, in a fixed attribute order."""
    counts = {"tests": len(cases), "failures": 0, "errors": 0, "skipped": 0}
    for case in cases:
        for child, key in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
            if case.find(child) is not None:
                counts[key] += 1
    for key, value in counts.items():
        element.set(key, str(value))


def _unique(name: str, seen: set[str]) -> str:
    """``name``, or ``name (2)``, ``name (3)``... when it was already used in this suite."""
    candidate, number = name, 1
    while candidate in seen:
        number += 1
        candidate = f"{name} ({number})"
    seen.add(candidate)
    return candidate
