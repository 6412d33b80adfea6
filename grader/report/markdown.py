"""Feedback in Markdown: to paste into a message, or to post as a CI step summary.

Layout: a heading with the score, a table of exercises, then for each
exercise the checks that did not pass (input, expected, got, likely mistake,
hint as a list), the passing ones folded in a ``<details>`` block, and what
the learner's code printed in a fenced block.

Every piece of text that the learner can influence is escaped so it stays
text: in prose, Markdown punctuation is backslash-escaped and ``<``, ``>``,
``&`` become entities (no HTML, no links, no emphasis); line breaks become
spaces, so nothing can start a heading or a list. Calls are shown in code
spans whose delimiter is longer than any run of backticks inside them.
Printed output goes in a fence made of more backticks than the longest run in
the output, so no line of it can close the fence. The same report always
gives the same bytes.
"""

from __future__ import annotations

import functools
import re

from grader.report._common import check_rows, points, printable
from grader.results import CheckResult, ExerciseResult, Report

__all__ = ["format_markdown", "markdown_code", "markdown_fence", "markdown_text"]

_LABELS = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "timeout": "TIMEOUT", "skipped": "SKIP"}
_ESCAPE = re.compile(r"([\\`*_\[\]{}|~$#])")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_MAX_OUTPUT_LINES = 60


@functools.lru_cache(maxsize=4096)  # a class's feedback repeats the same sentences learner after learner
def markdown_text(text: str) -> str:
    """Prose that renders as exactly these characters: one line, no markup, no HTML."""
    text = " ".join(printable(text).split())
    text = _ESCAPE.sub(r"\\\1", text)
    return re.sub(r"[&<>]", lambda m: _ENTITIES[m.group()], text)


@functools.lru_cache(maxsize=4096)
def markdown_code(text: str) -> str:
    """An inline code span that no backtick inside ``text`` can end."""
    text = " ".join(printable(text).split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_fence(text: str, info: str = "text") -> list[str]:
    """A fenced block holding ``text`` verbatim; no line of it can close the fence."""
    body = printable(text).rstrip("\n").split("\n")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{info}", *body, fence]


def format_markdown(report: Report) -> str:
    """The report as Markdown feedback."""
    lines = [f"# Grading results: {points(report.score)} / {points(report.max_score)} points", ""]
    lines += [f"Submission: {markdown_code(report.submission)}", ""]
    if report.problems:
        lines += [f"- Note: {markdown_text(problem)}" for problem in report.problems] + [""]
    if report.exercises:
        lines += ["| Exercise | Status | Points | Checks passed |", "| --- | --- | --- | --- |"]
        for exercise in report.exercises:
            rows = check_rows(exercise)
            passed = sum(check.status == "passed" for check in rows)
            lines.append(f"| {markdown_text(exercise.id)} | {exercise.status} | "
                         f"{points(exercise.score)} / {points(exercise.max_score)} | {passed} of {len(rows)} |")
        lines.append("")
    if report.public_only and report.hidden_not_run:
        lines += [f"Only public checks ran; {report.hidden_not_run} hidden checks run when your work is graded.", ""]
    for exercise in report.exercises:
        lines += _exercise(exercise)
    if report.sandbox and report.sandbox.warning:
        lines += [f"Warning: {markdown_text(report.sandbox.warning)}", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _exercise(exercise: ExerciseResult) -> list[str]:
    title = f": {markdown_text(exercise.title)}" if exercise.title else ""
    verdict = f"**{exercise.status}**, {points(exercise.score)} / {points(exercise.max_score)} points."
    lines = [f"## {markdown_text(exercise.id)}{title}", "", f"{verdict} {markdown_text(exercise.reason)}", ""]
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
    lines = [f"{head}: {markdown_text(check.property or check.reason)}",
             f"  - smallest failing input: {markdown_code(check.input)}"]
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


def _points(check: CheckResult) -> str:
    return f"{points(check.score)} / {points(check.max_score)}"
