"""Feedback in Markdown: to paste into a message, or to post as a CI step summary.

Layout: a heading with the score, a table of exercises, then for each
exercise the checks that did not pass (input, expected, got, likely mistake,
hint as a list), the passing ones folded in a ``<details>`` block, and what
the learner's code printed in a fenced block.

Every piece of text that the learner can influence goes through
``grader.report.markdown_safe``, whose docstring gives the rules: prose is
escaped so it stays one line of text (no markup, HTML, link or autolink),
text a renderer would link anyway is shown as code, and printed output goes in
a fence no line of it can close. The same report always gives the same bytes.
"""

from __future__ import annotations

from grader.report._common import check_rows, points
from grader.report.markdown_safe import markdown_code, markdown_fence, markdown_text
from grader.report.runner_safe import inert_lines
from grader.results import Adjustment, CheckResult, ExerciseResult, Report, exercise_outcome

__all__ = ["format_markdown", "markdown_code", "markdown_fence", "markdown_text"]

_LABELS = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "timeout": "TIMEOUT", "skipped": "SKIP"}
_MAX_OUTPUT_LINES = 60


def format_markdown(report: Report) -> str:
    """The report as Markdown feedback."""
    kind = " (a self-check, not a grade of record)" if report.handout else ""  # the heading's start stays fixed
    lines = [f"# Grading results: {points(report.score)} / {points(report.max_score)} points{kind}", ""]
    if report.handout:
        lines += [f"**Note:** {markdown_text(report.handout)}", ""]
    if report.unsandboxed:  # before any result: these results were not produced in the sandbox
        lines += [f"**Note:** {markdown_text(report.unsandboxed)}", ""]
    lines += [f"Submission: {markdown_code(report.submission)}", ""]
    if report.problems:
        lines += [f"- Note: {markdown_text(problem)}" for problem in report.problems] + [""]
    if report.exercises:
        lines += ["| Exercise | Status | Points | Checks passed |", "| --- | --- | --- | --- |"]
        for exercise in report.exercises:
            rows = check_rows(exercise)
            passed = sum(check.status == "passed" for check in rows)
            lines.append(
                f"| {markdown_text(exercise.id, table=True)} | {exercise.outcome or exercise_outcome(exercise)} | "
                f"{points(exercise.score)} / {points(exercise.max_score)} | {passed} of {len(rows)} |"
            )
        lines.append("")
    if report.public_only and report.hidden_not_run:
        lines += [f"Only public checks ran; {report.hidden_not_run} hidden checks run when your work is graded.", ""]
    for exercise in report.exercises:
        lines += _exercise(exercise)
    if report.sandbox and report.sandbox.warning:
        lines += [f"Warning: {markdown_text(report.sandbox.warning)}", ""]
    return inert_lines("\n".join(lines).rstrip("\n") + "\n")


def _exercise(exercise: ExerciseResult) -> list[str]:
    title = f": {markdown_text(exercise.title)}" if exercise.title else ""
    word = exercise.outcome or exercise_outcome(exercise)  # the word the JSON, gradebook and summary use
    verdict = f"**{word}**, {points(exercise.score)} / {points(exercise.max_score)} points."
    lines = [f"## {markdown_text(exercise.id)}{title}", "", f"{verdict} {markdown_text(exercise.reason)}", ""]
    if exercise.note:
        lines += [f"Note: {markdown_text(exercise.note)}", ""]
    for change in exercise.adjustments or []:
        lines += [_adjustment(change), ""]
    rows = check_rows(exercise)
    failing = [check for check in rows if check.status != "passed"]
    passing = [check for check in rows if check.status == "passed"]
    for check in failing:
        lines += _failing(check)
    if failing:
        lines.append("")
    if passing:
        count = f"{len(passing)} check{'s' if len(passing) != 1 else ''} passed"
        lines += ["<details>", f"<summary>{count}</summary>", ""]
        lines += [f"- {markdown_code(check.id)} ({_points(check)}): {markdown_text(check.reason)}" for check in passing]
        lines += ["", "</details>", ""]
    if exercise.output:
        shown = exercise.output.split("\n")
        lines.append("What your code printed:")
        lines.append("")
        lines += markdown_fence("\n".join(shown[:_MAX_OUTPUT_LINES]))
        if len(shown) > _MAX_OUTPUT_LINES:
            lines.append(f"({len(shown) - _MAX_OUTPUT_LINES} more lines not shown)")
        lines.append("")
    return lines


def _failing(check: CheckResult) -> list[str]:
    hidden = "" if check.visibility == "public" else f", {markdown_text(check.visibility.replace('_', ' '))} check"
    label = _LABELS.get(check.status, check.status.upper())
    head = f"- **{label}** {markdown_code(check.id)} ({_points(check)}{hidden})"
    if check.input is None:
        return [f"{head}: {markdown_text(check.reason)}"]
    lines = [
        f"{head}: {markdown_text(check.property or check.reason)}",
        f"  - smallest failing input: {markdown_code(check.input)}",
    ]
    if check.expected is not None:
        lines.append(f"  - expected: {markdown_text(check.expected)}")
    if check.got is not None:
        lines.append(f"  - got: {markdown_text(check.got)}")
    if check.note:
        lines.append(f"  - note: {markdown_text(check.note)}")
    if check.diagnosis:
        lines.append(f"  - likely mistake: {markdown_text(check.diagnosis)}")
    elif check.hint:
        lines.append(f"  - hint: {markdown_text(check.hint)}")
    if check.more_failures:
        lines.append(f"  - and {check.more_failures} more failing input{'s' if check.more_failures != 1 else ''}")
    return lines


def _adjustment(change: Adjustment) -> str:
    """``Adjusted by your instructor: check x from 0 to 1 point (exercise 2 to 3). Reason``."""
    if change.check is not None and change.check_score_before is not None and change.check_score_after is not None:
        moved = (
            f"{markdown_code(change.check)} from {points(change.check_score_before)} to "
            f"{points(change.check_score_after)} points, the exercise from {points(change.score_before)} to "
            f"{points(change.score_after)}"
        )
    else:
        moved = f"from {points(change.score_before)} to {points(change.score_after)} points"
    return f"**Adjusted by your instructor:** {moved}. {markdown_text(change.reason)}"


def _points(check: CheckResult) -> str:
    return f"{points(check.score)} / {points(check.max_score)}"
