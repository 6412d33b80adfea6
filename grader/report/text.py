"""The report for a person at a terminal: one line per check, details under failures."""

from __future__ import annotations

import textwrap

from grader.report._common import printable
from grader.report.runner_safe import inert_lines
from grader.results import CheckResult, ExerciseResult, Report, exercise_outcome

__all__ = ["format_text"]

_LABELS = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "timeout": "TIMEOUT", "skipped": "SKIP"}
_WIDTH = 100


def format_text(report: Report) -> str:
    """Every exercise with its checks, then the total and what it means."""
    lines: list[str] = []
    if report.handout:  # the very first line: this is a self-check, not a grade of record
        lines += _wrap(f"note: {report.handout}", "", "      ") + [""]
    if report.unsandboxed:  # first, before any result: these results were not produced in the sandbox
        lines += _wrap(f"note: {report.unsandboxed}", "", "      ") + [""]
    for problem in report.problems:
        lines += _wrap(f"note: {problem}", "", "      ")
    for exercise in report.exercises:
        lines += _exercise(exercise)
    lines.append(f"Total: {_points(report.score)}/{_points(report.max_score)}")
    if report.public_only and report.hidden_not_run:
        lines.append(
            f"Only public checks ran; {report.hidden_not_run} hidden checks will run when your work is graded."
        )
    if report.sandbox and report.sandbox.warning:
        lines.append(f"warning: {report.sandbox.warning}")
    return inert_lines("\n".join(lines) + "\n")


def _exercise(exercise: ExerciseResult) -> list[str]:
    word = exercise.outcome or exercise_outcome(exercise)  # the word the JSON, gradebook and summary use
    head = f"{exercise.id}  {_points(exercise.score)}/{_points(exercise.max_score)}  {word}"
    lines = [head]
    lines += _wrap(exercise.reason, "  ", "    ")  # deeper than check lines: wrapped text never passes for one
    if exercise.note:
        lines += _wrap(f"note: {exercise.note}", "  ", "    ")
    for check in exercise.checks:
        lines += _check(check)
    if exercise.output:
        lines.append("  your code printed:")
        shown = exercise.output.splitlines()[:20]
        lines += [f"    learner| {printable(line)}" for line in shown]
    lines.append("")
    return lines


def _check(check: CheckResult) -> list[str]:
    label = _LABELS[check.status]
    if check.status == "passed" or check.input is None:
        return _wrap(f"{label} {check.id}: {check.reason}", "  ", "       ")
    lines = _wrap(f"{label} {check.id}: {check.property}", "  ", "       ")
    lines += _wrap(f"smallest failing input: {check.input}", "       ", "         ")
    lines += _wrap(f"expected: {check.expected}", "       ", "         ")
    lines += _wrap(f"got: {check.got}", "       ", "         ")
    if check.note:
        lines += _wrap(check.note, "       ", "       ")
    if check.diagnosis:
        lines += _wrap(f"likely mistake: {check.diagnosis}", "       ", "         ")
    elif check.hint:
        lines += _wrap(f"hint: {check.hint}", "       ", "         ")
    if check.more_failures:
        lines.append(f"       (and {check.more_failures} more failing input{'s' if check.more_failures > 1 else ''})")
    return lines


def _wrap(text: str, first: str, rest: str) -> list[str]:
    text = printable(text)
    return textwrap.wrap(
        text, _WIDTH, initial_indent=first, subsequent_indent=rest, break_long_words=False, break_on_hyphens=False
    ) or [first]


def _points(value: float) -> str:
    return f"{value:g}"
