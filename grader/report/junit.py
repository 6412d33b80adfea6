"""JUnit XML, for CI systems that draw test results (GitLab, Jenkins, GitHub test reporters).

The document is valid against the strictest JUnit schema in common use,
Jenkins xUnit's ``junit-10.xsd`` (``tests/junit.xsd`` states the rules the
tests hold it to), and keeps the layout pytest's ``--junitxml`` writes, so
the usual parsers read it::

    <testsuites name="grader" tests=.. failures=.. errors=.. time="0">
      <testsuite name="EXERCISE-ID" tests=.. failures=.. errors=.. skipped=.. time="0" file="FILE">
        <properties>  score, max_score, status, reason (and hidden_not_run, note) of the exercise,
                      and handout when the report was graded against a handout (not a grade of record)
        <testcase classname="EXERCISE-ID" name="CHECK-ID" time="0">
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

The reason goes in both the ``message`` attribute and the element text,
since some readers show only one of them (GitLab shows the text, and ignores
``<properties>`` and the suite's ``<system-out>``). When one cause stopped
every check of an exercise (the file does not import, does not define the
entry), each check's own reason only points at the exercise's; then the
exercise's reason comes first in both places, so every row says why by itself.

``file`` names the file that defines each suite's entry (the result's
``file``), or the submitted file when the submission is one and the result
does not place the entry. Schemas put ``file`` on the suite,
not the test case. ``time`` is ``0`` everywhere: the grader does not measure
how long a check took, and a measured time would make two gradings of the same
submission differ; readers that need a number (dorny/test-reporter) get one.
There are no timestamps or host names either: the same report gives the same
bytes. Text passes through ``printable``, so no character XML 1.0 forbids gets
in, and the whole document through ``inert_lines``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from grader.report._common import check_rows, points, printable, submitted_file
from grader.report.runner_safe import inert_lines
from grader.results import CheckResult, ExerciseResult, Report

__all__ = ["format_junit"]

_ELEMENT = {"failed": "failure", "error": "error", "timeout": "error", "skipped": "skipped"}
_SUBMISSION = "submission"
_TIME = "0"


def format_junit(report: Report) -> str:
    """The report as a JUnit XML document (UTF-8, ending with a newline)."""
    root = ET.Element("testsuites", {"name": "grader"})
    file = submitted_file(report)
    suites = [_suite(exercise, report.handout, exercise.file or file) for exercise in report.exercises]
    if report.problems or not report.exercises:
        suites.append(_submission_suite(report))
    for suite in suites:
        root.append(suite)
    _count(root, list(root.iter("testcase")), skipped=False)
    ET.indent(root, space="  ")
    return inert_lines('<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n", "xml")


def _suite(exercise: ExerciseResult, handout: str | None, file: str | None) -> ET.Element:
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
    rows = check_rows(exercise)
    cause = _common_cause(exercise, rows)
    for check in rows:
        suite.append(_case(exercise.id, _unique(check.id, seen), check, missing, cause))
    _count(suite, list(suite.iter("testcase")))
    if file and not missing:
        suite.set("file", printable(file))
    if exercise.output:
        ET.SubElement(suite, "system-out").text = printable(exercise.output)
    return suite


def _common_cause(exercise: ExerciseResult, rows: list[CheckResult]) -> str | None:
    """The exercise's reason when one cause stopped every check and their shared reason defers to it, else None.

    The engine says such a cause once, in the exercise's reason, and gives
    each check a short reason pointing there; a reader that shows test cases
    alone must get the cause in each of them.
    """
    if exercise.status not in ("error", "missing") or any(check.status == "passed" for check in rows):
        return None
    reasons = {check.reason for check in rows}
    return exercise.reason if len(reasons) == 1 and exercise.reason not in reasons else None


def _case(classname: str, name: str, check: CheckResult, missing: bool, cause: str | None) -> ET.Element:
    """One check as a test case; a check of an exercise not attempted is a failure, whatever its status."""
    case = ET.Element("testcase", {"classname": printable(classname), "name": printable(name), "time": _TIME})
    element: str | None = _ELEMENT.get(check.status)
    kind: str = check.status
    if missing and check.status != "passed":
        element, kind = "failure", "missing"
    if element:
        reason = printable(check.reason)
        message = printable(cause) if cause else reason
        body = f"{message}\n{reason}" if cause else reason
        ET.SubElement(case, element, {"message": message, "type": kind}).text = body
    return case


def _submission_suite(report: Report) -> ET.Element:
    """Notes about the submission as a whole; a failure when nothing could be graded."""
    suite = ET.Element("testsuite", {"name": _SUBMISSION})
    if report.handout:
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", {"name": "handout", "value": printable(report.handout)})
    case = ET.SubElement(suite, "testcase", {"classname": _SUBMISSION, "name": "attempts-an-exercise", "time": _TIME})
    notes = printable("\n".join(report.problems) or "Nothing was graded.")
    if not report.exercises:
        ET.SubElement(case, "failure", {"message": notes, "type": "failed"}).text = notes
    _count(suite, [case])
    ET.SubElement(suite, "system-out").text = notes
    return suite


def _count(element: ET.Element, cases: list[ET.Element], *, skipped: bool = True) -> None:
    """Set tests/failures/errors(/skipped)/time from the test cases, in a fixed attribute order.

    ``<testsuites>`` takes no ``skipped`` in the JUnit schema; strict readers
    reject a document that has one there.
    """
    counts = {"tests": len(cases), "failures": 0, "errors": 0, "skipped": 0}
    for case in cases:
        for child, key in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
            if case.find(child) is not None:
                counts[key] += 1
    if not skipped:
        del counts["skipped"]
    for key, value in counts.items():
        element.set(key, str(value))
    element.set("time", _TIME)


def _unique(name: str, seen: set[str]) -> str:
    """``name``, or ``name (2)``, ``name (3)``... when it was already used in this suite."""
    candidate, number = name, 1
    while candidate in seen:
        number += 1
        candidate = f"{name} ({number})"
    seen.add(candidate)
    return candidate
