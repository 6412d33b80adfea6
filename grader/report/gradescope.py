"""Gradescope's ``results.json``: write it to ``/autograder/results/results.json``.

One test per check, named ``exercise / check``, numbered ``1.1``, ``1.2``,
... (exercise, then check) and tagged with the exercise id; its ``output`` is
the check's reason.

Visibility says what Gradescope will actually do with a test:

- ``public`` checks are ``visible``: shown at once.
- ``after_due_date`` and ``after_published`` checks keep their word: shown
  once the due date has passed, or once the instructor publishes grades.
- ``hidden`` checks (the learner cannot see or run them before submitting)
  are ``after_published`` by default, so their teaching reasons reach learners
  once grades are published. An exercise whose spec says
  ``gradescope_hidden: hidden`` writes them ``hidden``: Gradescope never shows
  them to students, only to instructors.

The top-level ``visibility`` is ``visible`` (the summary and every visible
test show at once) and ``stdout_visibility`` is ``hidden``: the autograder's
own output is for instructors. ``execution_time`` is left to the autograder
bundle's ``finish_results.py``, which measures the whole run: a time written
here would make the same submission give different bytes.

``output_format`` and ``test_output_format`` are ``text``, not ``md`` or
``html``: reasons are plain sentences that quote code (``z**2 / sum(z**2)``,
``x_max``, ``[0, 0, 1]``), which Markdown would turn into emphasis and links,
and they quote the learner's own exception messages and output, which must
never become markup. Gradescope shows ``text`` exactly as written.

The top-level ``output`` is shown to learners whatever the tests' visibility,
so it says nothing that a non-visible test would reveal: per exercise, the
score and reason only when all of its checks are visible, otherwise how many
visible checks passed and when the others will be shown (or that they will
not be). ``score`` is given explicitly, so totals do not depend on Gradescope
summing tests.

What the learner's code printed is captured per exercise, while all of its
checks ran in one process: a submission that prints its arguments prints the
hidden checks' inputs. So that output is shown no earlier than the least
visible of those checks (``output_visibility``): at the top only when every
check that ran is visible; otherwise in the output of the first test that has
exactly that visibility, and nowhere when no test has it (checks shown after
the due date and others shown once grades are published: neither moment
surely comes after the other).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from grader.report._common import check_rows, points, printable
from grader.report.runner_safe import inert_lines
from grader.results import CheckResult, ExerciseResult, Report, to_data

__all__ = ["format_gradescope", "gradescope_visibility", "hidden_checks_on_gradescope", "output_visibility"]

# Ours to Gradescope's; ``hidden`` depends on the exercise (``hidden_as``).
_VISIBILITY = {"public": "visible", "after_due_date": "after_due_date", "after_published": "after_published"}
# What learners are told about the checks they cannot see yet, by Gradescope's visibility word.
_WHEN_SHOWN = {
    "after_published": "shown once grades are published",
    "after_due_date": "shown after the due date",
    "hidden": "counted in your score but never shown",
}


def gradescope_visibility(visibility: str, *, hidden_as: str = "after_published") -> str:
    """Gradescope's word for one of ours: what Gradescope will do with the test.

    ``hidden_as`` is the word for our ``hidden`` (``after_published`` or
    ``hidden``, from the exercise's spec); anything unknown is ``hidden``,
    never shown.
    """
    if visibility == "hidden":
        return hidden_as
    return _VISIBILITY.get(visibility, "hidden")


def output_visibility(exercise: ExerciseResult, *, hidden_as: str = "after_published") -> str:
    """The Gradescope word for what ``exercise``'s code printed: the least visible of its checks that ran.

    ``after_due_date`` with ``after_published`` is ``hidden``: no test is shown only once both hold.
    """
    later = {gradescope_visibility(check.visibility, hidden_as=hidden_as) for check in check_rows(exercise)}
    later.discard("visible")
    if not later:
        return "visible"
    return later.pop() if len(later) == 1 else "hidden"


def hidden_checks_on_gradescope(catalog: Any) -> dict[str, str]:
    """Per exercise id, the Gradescope word its spec gives its ``hidden`` checks (``gradescope_hidden``)."""
    return {
        exercise_id: getattr(exercise, "gradescope_hidden", "after_published")
        for exercise_id, exercise in catalog.exercises.items()
    }


def format_gradescope(report: Report, *, hidden_as: Mapping[str, str] | None = None) -> str:
    """The report as Gradescope ``results.json`` text.

    ``hidden_as`` maps an exercise id to the word for its ``hidden`` checks
    (see ``hidden_checks_on_gradescope``); an exercise not in it uses
    ``after_published``.
    """
    words = hidden_as or {}
    tests: list[dict[str, Any]] = []
    printed: dict[str, str] = {}  # exercise id -> where its printed output went, for the summary
    for number, exercise in enumerate(report.exercises, start=1):
        word = words.get(exercise.id, "after_published")
        own = [_test(number, exercise, index, check, word) for index, check in enumerate(check_rows(exercise), start=1)]
        if exercise.output:
            printed[exercise.id] = _place_output(exercise, own, output_visibility(exercise, hidden_as=word))
        tests += own
    sandbox = to_data(report.sandbox) if report.sandbox else None
    results: dict[str, Any] = {
        "score": report.score,
        "output": _summary(report, words, printed),
        "output_format": "text",
        "test_output_format": "text",
        "test_name_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
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
    if report.handout:  # not a grade of record: also the summary's first line
        results["extra_data"]["handout"] = printable(report.handout)
    return inert_lines(json.dumps(results, indent=2, ensure_ascii=False) + "\n", "json")


def _test(number: int, exercise: ExerciseResult, index: int, check: CheckResult, hidden_as: str) -> dict[str, Any]:
    return {
        "name": printable(f"{exercise.id} / {check.id}"),
        "number": f"{number}.{index}",
        "score": check.score,
        "max_score": check.max_score,
        "status": "passed" if check.status == "passed" else "failed",
        "output": printable(check.reason),
        "tags": [printable(exercise.id)],
        "visibility": gradescope_visibility(check.visibility, hidden_as=hidden_as),
        "extra_data": {"exercise": exercise.id, "check": check.id, "status": check.status},
    }


def _place_output(exercise: ExerciseResult, tests: list[dict[str, Any]], word: str) -> str:
    """Put what ``exercise``'s code printed where it is shown as late as ``word`` says; return that place.

    ``visible``: the summary (the return value says so). Otherwise the first of ``tests`` with that
    visibility, or nowhere; the return value is the line the summary says instead.
    """
    if word == "visible":
        return ""
    printed = "\n".join(f"    {line}" for line in (exercise.output or "").splitlines())
    for test in tests:
        if test["visibility"] == word:
            test["output"] = printable(f"{test['output']}\n\nOutput of your code while this exercise's checks ran:\n")
            test["output"] += printable(printed)
            if word == "hidden":
                break
            when = _WHEN_SHOWN[word].removeprefix("shown ")
            return f"What your code printed ({exercise.id}) is shown with test {test['number']}, {when}."
    return (
        f"What your code printed ({exercise.id}) is not shown, because it was printed while checks ran "
        "that are not shown to you."
    )


def _summary(report: Report, hidden_as: Mapping[str, str], printed: Mapping[str, str]) -> str:
    """What every learner sees above the tests: nothing a non-visible test would give away.

    ``printed`` says, per exercise with output, where that output went (``""``: here).
    """
    rows = [check for exercise in report.exercises for check in check_rows(exercise)]
    everything_visible = all(check.visibility == "public" for check in rows)
    lines = [f"Note: {report.handout}"] if report.handout else []
    if everything_visible:
        lines.append(f"Score: {points(report.score)} / {points(report.max_score)}")
    lines += [f"Note: {problem}" for problem in report.problems]
    for exercise in report.exercises:
        lines.append(_exercise_line(exercise, hidden_as.get(exercise.id, "after_published")))
        if exercise.note:
            lines.append(f"Note ({exercise.id}): {exercise.note}")
    if report.public_only and report.hidden_not_run:
        lines.append(f"Only public checks ran; {report.hidden_not_run} hidden checks run when your work is graded.")
    for exercise in report.exercises:
        if exercise.output and printed.get(exercise.id):
            lines.append(printed[exercise.id])
    for exercise in report.exercises:
        if exercise.output and not printed.get(exercise.id):
            lines += ["", f"Output of your code ({exercise.id}):"]
            lines += [f"    {line}" for line in exercise.output.splitlines()]
    return printable("\n".join(lines) + "\n") if lines else ""


def _exercise_line(exercise: ExerciseResult, hidden_as: str) -> str:
    rows = check_rows(exercise)
    visible = [check for check in rows if check.visibility == "public"]
    if len(visible) == len(rows):
        score = f"{points(exercise.score)} / {points(exercise.max_score)}"
        return f"{exercise.id}: {score}, {exercise.status}. {exercise.reason}"
    passed = sum(check.status == "passed" for check in visible)
    later: dict[str, int] = {}
    for check in rows:
        word = gradescope_visibility(check.visibility, hidden_as=hidden_as)
        if word != "visible":
            later[word] = later.get(word, 0) + 1
    line = f"{exercise.id}: {passed} of {len(visible)} visible checks passed; {_later(later)}."
    # One cause for every check (not attempted, not importable) gives nothing away; say it.
    same_cause = len(rows) > 1 and len({(check.status, check.reason) for check in rows}) == 1
    if exercise.status == "missing" or (same_cause and rows[0].status != "passed"):
        line += f" {exercise.reason}"
    return line


def _later(counts: dict[str, int]) -> str:
    """``3 more checks are shown once grades are published, 1 after the due date``: what Gradescope will do.

    Published means the instructor published the grades on Gradescope; a
    hidden test is never shown to students, so the text never says it will be.
    """
    parts: list[str] = []
    for word in ("after_published", "after_due_date", "hidden"):
        count = counts.get(word, 0)
        if not count:
            continue
        when = _WHEN_SHOWN[word]
        if parts and word != "hidden":  # "..., 1 after the due date": "shown" is said once
            parts.append(f"{count} {when.removeprefix('shown ')}")
        elif parts:
            parts.append(f"{count} {'are' if count != 1 else 'is'} {when}")
        else:
            parts.append(f"{count} more check{'s are' if count != 1 else ' is'} {when}")
    return ", ".join(parts)
