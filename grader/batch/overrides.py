"""Instructor overrides: a point given back or an agreed penalty, kept across re-runs and ``--force``.

The file is YAML, a list with one entry per adjustment::

    - learner: ann
      exercise: stable-softmax
      check: no-overflow        # optional: one check (or quiz question) instead of the whole exercise
      score: 1                  # the new score, or
      change: -0.5              # a change to the score (exactly one of the two)
      reason: The overflow came from the data we handed out.

``grader batch`` reads ``overrides.yaml`` beside the exercises folder, or
the file ``--overrides`` names. Every entry is checked before anything is
graded: a learner, exercise or check the class and the assignment do not
have, an unknown key or a score outside the points is refused with the
file and line (``SpecError``, exit 2).

Overrides are applied when the batch rebuilds its outputs, never stored in
place of a result: ``strip_adjustments`` first undoes what an earlier
rebuild applied (each ``Adjustment`` in the stored JSON keeps the scores
grading gave), then ``apply_overrides`` applies the file as it is now. So a
re-run, ``--force`` or an edit of the file applies each override exactly
once, and a removed override leaves the result as grading wrote it. The
file is not part of any result key: editing it regrades nobody.

A change that would take a score below 0 or above its points stops there.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.errors import SpecError, UsageError, closest_name
from grader.results import Adjustment, CheckResult, ExerciseResult, Report
from grader.safeyaml import YamlProblem, load_yaml
from grader.spec.models import Exercise, ImplementationExercise, QuizExercise

__all__ = [
    "DEFAULT_NAME",
    "Override",
    "apply_overrides",
    "find_overrides",
    "load_overrides",
    "readjust",
    "strip_adjustments",
]

DEFAULT_NAME = "overrides.yaml"
_MAX_BYTES = 1 << 20
_MAX_VALUES = 100_000
_KEYS = ("learner", "exercise", "check", "score", "change", "reason")
_DIGITS = 9  # scores are rounded so a change of 0.1 does not leave float noise in the JSON


@dataclass(frozen=True)
class Override:
    """One entry of the file, checked: ``limit`` is the points of what it adjusts; ``line`` where it is written."""

    learner: str
    exercise: str
    check: str | None
    score: float | None
    change: float | None
    reason: str
    limit: float
    line: int


def find_overrides(named: str | None, exercises_dir: Path) -> Path | None:
    """The overrides file to use: the one named (which must exist), else ``overrides.yaml`` beside the exercises."""
    if named is not None:
        path = Path(named)
        if not path.is_file():
            raise UsageError(f"{named}: no such overrides file")
        return path
    found = exercises_dir.parent / DEFAULT_NAME
    return found if found.is_file() else None


def load_overrides(path: Path, *, learners: Collection[str], exercises: list[Exercise]) -> list[Override]:
    """Every override in ``path``, checked against the class and the assignment; ``SpecError`` at the first fault."""
    where = str(path)
    try:
        raw = path.read_bytes()[: _MAX_BYTES + 1]
        text = raw.decode("utf-8")
    except OSError as error:
        raise UsageError(f"{where}: the overrides file cannot be read ({error.strerror or error})") from None
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise SpecError("the overrides file is not UTF-8 text", path=where, line=line) from None
    try:
        data, lines = load_yaml(text, max_bytes=_MAX_BYTES, max_nodes=_MAX_VALUES)
    except YamlProblem as problem:
        raise SpecError(problem.message, path=where, line=problem.line) from None
    if data is None:
        return []
    if not isinstance(data, list):
        raise SpecError(
            "the overrides file must be a list of entries (learner, exercise, score or change, reason)",
            path=where,
            line=lines.get((), 1),
        )
    by_id = {exercise.id: exercise for exercise in exercises}
    return [_entry(item, number, lines, where, set(learners), by_id) for number, item in enumerate(data)]


def _entry(
    item: Any,
    number: int,
    lines: dict[tuple[Any, ...], int],
    where: str,
    learners: set[str],
    exercises: dict[str, Exercise],
) -> Override:
    line = lines.get((number,), 1)

    def refuse(message: str, key: str | None = None) -> SpecError:
        at = lines.get((number, key), line) if key is not None else line
        return SpecError(f"[{number}]{'.' + key if key else ''}: {message}", path=where, line=at)

    if not isinstance(item, dict):
        raise refuse("each override is a mapping: learner, exercise, score or change, reason")
    for key in item:
        if key not in _KEYS:
            raise refuse(f"unknown key{_did_you_mean(str(key), _KEYS)}; the keys are {', '.join(_KEYS)}", str(key))
    for key in ("learner", "exercise", "reason"):
        if key not in item:
            raise refuse(f"{key!r} is missing")
    learner = _name(item["learner"], "learner", refuse)
    if learner not in learners:
        raise refuse(f"{learner!r} is not a learner of this class{_did_you_mean(learner, learners)}", "learner")
    exercise_id = _name(item["exercise"], "exercise", refuse)
    exercise = exercises.get(exercise_id)
    if exercise is None:
        raise refuse(
            f"{exercise_id!r} is not an exercise of this assignment{_did_you_mean(exercise_id, exercises)}", "exercise"
        )
    check, limit = None, float(exercise.max_score)
    if item.get("check") is not None:
        check = _name(item["check"], "check", refuse)
        points = _check_points(exercise)
        if check not in points:
            raise refuse(f"{check!r} is not a check of {exercise_id!r}{_did_you_mean(check, points)}", "check")
        limit = points[check]
    if ("score" in item) == ("change" in item):
        raise refuse("give either 'score' (the new score) or 'change' (added to the score), not both or neither")
    key = "score" if "score" in item else "change"
    value = item[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise refuse(f"{value!r} is not a number", key)
    if key == "score" and not 0 <= value <= limit:
        raise refuse(f"{value!r} is outside 0 to {limit:g}, the points of {check or exercise_id!r}", key)
    reason = item["reason"]
    if not isinstance(reason, str) or not reason.strip():
        raise refuse("say why, in a sentence the learner will read", "reason")
    return Override(
        learner=learner,
        exercise=exercise_id,
        check=check,
        score=float(value) if key == "score" else None,
        change=float(value) if key == "change" else None,
        reason=" ".join(reason.split()),
        limit=limit,
        line=line,
    )


def _name(value: Any, key: str, refuse: Any) -> str:
    """A learner, exercise or check name as written; YAML reads ``007`` or ``yes`` as a number or a truth value."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int | float | bool):
        raise refuse(f"{value!r} is read as a {type(value).__name__}; write the name in quotes", key)
    raise refuse("write a name", key)


def _check_points(exercise: Exercise) -> dict[str, float]:
    if isinstance(exercise, QuizExercise):
        return {question.id: float(question.points) for question in exercise.questions}
    if isinstance(exercise, ImplementationExercise):
        return {check.id: float(check.points) for check in exercise.checks}
    return {}


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    close = closest_name(name, known)
    return f" (did you mean {close!r}?)" if close is not None else ""


def readjust(report: Report, overrides: Iterable[Override]) -> bool:
    """Undo what was applied to ``report`` before, then apply ``overrides``; whether the report was touched."""
    undone = strip_adjustments(report)
    applied = apply_overrides(report, overrides)
    return undone or applied


def strip_adjustments(report: Report) -> bool:
    """Undo every adjustment recorded in ``report``, in place, back to the scores grading gave; whether any was."""
    undone = False
    for exercise in report.exercises:
        for change in reversed(exercise.adjustments or []):
            exercise.score = change.score_before
            row = _row(exercise, change.check)
            if row is not None and change.check_score_before is not None:
                row.score = change.check_score_before
            undone = True
        exercise.adjustments = None
    if undone:
        report.score = float(sum(exercise.score for exercise in report.exercises))  # as grading sums it
    return undone


def apply_overrides(report: Report, overrides: Iterable[Override]) -> bool:
    """Apply ``overrides`` (one learner's, in file order) to ``report`` in place, recording each; whether any was."""
    applied = False
    for override in overrides:
        exercise = next((found for found in report.exercises if found.id == override.exercise), None)
        if exercise is None:
            continue
        row = _row(exercise, override.check)
        if override.check is None:
            before = exercise.score
        else:
            before = row.score if row is not None else 0.0  # a check that did not run earned nothing
        after = _bounded(override.score if override.score is not None else before + (override.change or 0.0), override)
        change = Adjustment(score_before=exercise.score, score_after=after, reason=override.reason)
        if override.check is not None:
            change.check, change.check_score_before, change.check_score_after = override.check, before, after
            change.score_after = min(max(round(exercise.score + after - before, _DIGITS), 0.0), exercise.max_score)
            if row is not None:
                row.score = after
        exercise.score = change.score_after
        exercise.adjustments = [*(exercise.adjustments or []), change]
        applied = True
    if applied:
        report.score = float(sum(exercise.score for exercise in report.exercises))
    return applied


def _bounded(value: float, override: Override) -> float:
    return min(max(round(value, _DIGITS), 0.0), override.limit)


def _row(exercise: ExerciseResult, check: str | None) -> CheckResult | None:
    if check is None:
        return None
    return next((row for row in exercise.checks if row.id == check), None)
