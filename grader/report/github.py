"""GitHub Actions workflow commands: each check that did not pass as an annotation, and the points for Classroom.

``format_github`` writes one workflow command a line, which the runner reads
from the step's output and shows as an annotation on the run and, where the
command names a file, on that file in the commit and pull-request views::

    ::error file=FILE,line=LINE,title=EXERCISE: CHECK::REASON (more lines as %0A)
    ::warning file=FILE,title=EXERCISE: not attempted::REASON
    ::warning title=submission::NOTE (an error when nothing could be graded)
    ::notice title=EXERCISE: passed::SCORE of MAX points
    ::notice file=FILE,title=EXERCISE: file graded::NOTE (which of several files was graded)
    ::notice title=grader::SCORE of MAX points

``file`` and ``line`` are where the graded entry is defined
(``ExerciseResult.file`` and ``line``), so the annotation sits on the
learner's own ``def``; a notebook is named with no line, and an exercise the
result does not place falls back to the submission when it is one file, as
in the JUnit report. A skipped check (credit held back
while its gate check does not pass) gets none: the gate check's annotation
says why.

GitHub shows at most 10 annotations of each kind from one step and drops the
rest without a word, so a kind with more keeps its first 9 and ends with one
saying how many more there are.

Learner text (a reason quotes exception messages and values) is first made
visible and inert as every format makes it (``printable``, then
``inert_lines``, so no ``##[``, ``##vso[`` or leading ``::`` survives), then
escaped as the runner decodes it: in a message ``%``, ``\\r``, ``\\n``
become ``%25``, ``%0D``, ``%0A``; in a property also ``:`` and ``,`` become
``%3A`` and ``%2C``. Each command is thus one line, and the only line starts
in the output are the grader's own commands.

``format_classroom`` is the result GitHub Classroom's grading reporter reads
(``classroom-resources/autograding-grading-reporter``, from a step output,
base64): ``{"version": 1, "status", "max_score", "tests": [...]}``, one test
per exercise with its points as ``score``, and ``notes`` (the handout's or
the missing sandbox's sentence), which the reporter does not read. The
reporter adds up the tests' ``score`` for Classroom and ``max_score`` for the
maximum.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Literal

from grader.report._common import check_rows, points, printable, submitted_file
from grader.report.runner_safe import inert_lines
from grader.results import CheckResult, ExerciseResult, Report

__all__ = ["ANNOTATIONS_PER_KIND", "format_classroom", "format_github"]

Kind = Literal["error", "warning", "notice"]

# What GitHub shows of one kind from one step (its documented limit); more are dropped silently.
ANNOTATIONS_PER_KIND = 10
_NOT_PASSING = ("failed", "error", "timeout")
_OVERALL_TITLE = "grader"


def format_github(report: Report) -> str:
    """The report as workflow commands, one a line: what did not pass as errors, what passed as notices.

    Written to a step's output (stdout), the lines become the run's
    annotations; every character of learner text is escaped (see the module
    docstring), so no other line reaches the runner.
    """
    file = submitted_file(report)
    errors: list[str] = []
    warnings: list[str] = []
    notices: list[str] = []
    # A note on the submission is a warning; it is an error only when nothing could be graded.
    kind: Kind = "warning" if report.exercises else "error"
    (warnings if report.exercises else errors).extend(
        _command(kind, problem, title="submission") for problem in report.problems
    )
    for exercise in report.exercises:
        if exercise.status == "missing":
            warnings.append(_command("warning", exercise.reason, title=f"{exercise.id}: not attempted", file=file))
            continue
        where = exercise.file or file
        line = exercise.line if exercise.file else None
        if exercise.note:  # which of several files defining the entry was graded: said in every format
            notices.append(_command("notice", exercise.note, title=f"{exercise.id}: file graded", file=where))
        for check in check_rows(exercise):
            if check.status in _NOT_PASSING:
                title = f"{exercise.id}: {check.id}"
                errors.append(_command("error", _check_message(check), title=title, file=where, line=line))
        if exercise.status == "passed":
            earned = _points_of(exercise.score, exercise.max_score)
            notices.append(_command("notice", earned, title=f"{exercise.id}: passed"))
    overall = _command("notice", _overall(report), title=_OVERALL_TITLE)
    lines = [
        *_within_limit(errors, "error", "more checks did not pass; the text or Markdown report lists every one"),
        *_within_limit(warnings, "warning", "more exercises are not attempted; the full report lists them"),
        *_within_limit(notices, "notice", "more exercises passed", keep=ANNOTATIONS_PER_KIND - 1),
        overall,
    ]
    return "".join(line + "\n" for line in lines)


def format_classroom(report: Report) -> str:
    """The result GitHub Classroom's grading reporter reads, as JSON (the workflow base64-encodes it).

    One test per exercise, its status as the reporter words it: ``pass``
    (passed), ``error`` (the exercise's status is ``error``: its code raised,
    crashed or ran out of time), ``fail`` (failed, or not attempted);
    ``score`` is the exercise's points, so the tests add up to the report's
    score; ``filename`` and ``line_no`` say where its entry is defined, when known.
    """
    tests = [
        {
            "name": printable(exercise.id),
            "status": _classroom_status(exercise),
            "score": exercise.score,
            "message": printable(f"{exercise.reason} {exercise.note}" if exercise.note else exercise.reason),
            "test_code": "",
            "filename": printable(exercise.file or ""),
            "line_no": exercise.line or 0,
        }
        for exercise in report.exercises
    ]
    status = "pass" if report.all_passed else "error" if not report.exercises else "fail"
    result: dict[str, object] = {"version": 1, "status": status, "max_score": report.max_score, "tests": tests}
    notes = [note for note in (report.handout, report.unsandboxed) if note]
    if notes:  # a key the reporter does not read, for whoever reads the result: what the text report notes first
        result["notes"] = [printable(note) for note in notes]
    return inert_lines(json.dumps(result, indent=2, ensure_ascii=False) + "\n", "json")


def _classroom_status(exercise: ExerciseResult) -> str:
    if exercise.status == "passed":
        return "pass"
    return "error" if exercise.status == "error" else "fail"


def _check_message(check: CheckResult) -> str:
    """What the text report says of a check that did not pass, as lines of one annotation."""
    if check.input is None:
        return check.reason
    lines = [
        check.property or check.reason,
        f"smallest failing input: {check.input}",
        f"expected: {check.expected}",
        f"got: {check.got}",
    ]
    if check.note:
        lines.append(check.note)
    if check.diagnosis:
        lines.append(f"likely mistake: {check.diagnosis}")
    elif check.hint:
        lines.append(f"hint: {check.hint}")
    if check.more_failures:
        lines.append(f"(and {check.more_failures} more failing input{'s' if check.more_failures > 1 else ''})")
    return "\n".join(lines)


def _overall(report: Report) -> str:
    """The total, then what the text report notes about the whole run (a handout's self-check, no sandbox)."""
    lines = [_points_of(report.score, report.max_score)]
    if report.public_only and report.hidden_not_run:
        hidden = report.hidden_not_run
        lines[0] += f"; only public checks ran, and {hidden} hidden checks will run when your work is graded"
    lines += [note for note in (report.handout, report.unsandboxed) if note]
    if report.sandbox and report.sandbox.warning:
        lines.append(f"warning: {report.sandbox.warning}")
    return "\n".join(lines)


def _points_of(score: float, max_score: float) -> str:
    return f"{points(score)} of {points(max_score)} points"


def _within_limit(lines: list[str], kind: Kind, more: str, *, keep: int = ANNOTATIONS_PER_KIND) -> Iterable[str]:
    """``lines``, or ``keep`` of them in all (what GitHub shows of ``kind``), the last saying how many more."""
    if len(lines) <= keep:
        return lines
    shown = lines[: keep - 1]
    return [*shown, _command(kind, f"{len(lines) - len(shown)} {more}", title=_OVERALL_TITLE)]


def _command(kind: Kind, message: str, *, title: str, file: str | None = None, line: int | None = None) -> str:
    """One workflow command, ``::KIND PROPERTIES::MESSAGE``, with every value escaped for the runner."""
    properties = [f"file={_property(file)}"] if file else []
    if file and line:
        properties.append(f"line={int(line)}")
    properties.append(f"title={_property(title)}")
    return f"::{kind} {','.join(properties)}::{_data(message)}"


def _safe(text: str) -> str:
    """Learner text as every format writes it: visible control characters, no runner command sequence."""
    return inert_lines(printable(text))


def _data(text: str) -> str:
    """A message as the runner decodes it: ``%``, ``\\r`` and ``\\n`` escaped, so it stays one line."""
    return _safe(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    """A property value: as a message, and ``:`` and ``,``, which would end the value, escaped too."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")
