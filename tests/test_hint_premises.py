"""Hints only where their premise is shown: every hint a learner reads is true of their own code.

Each known-wrong solution is a learner that makes one mistake and, often, already does what the hints
written for the other mistakes advise; it must be told the hints premised on its own mistake, and no hint
premised on a mistake it does not make. ``tests/hint_premise/`` holds code that already follows a hint's
advice and has another bug: it must never be given that advice.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

from grader.checks.base import Check, Hint
from grader.engine.call_loop import SourceModule, grade_implementation
from grader.engine.memory import GradingMemo
from grader.results import ExerciseResult
from grader.spec.loader import load_catalog
from grader.spec.models import ImplementationExercise
from tests.fakes import InProcessFactory

ROOT = Path(__file__).resolve().parents[1]
CATALOG = load_catalog(ROOT / "exercises")
EXERCISES = [e for e in CATALOG.exercises.values() if isinstance(e, ImplementationExercise)]
KNOWN_WRONG = [(e.id, w.id) for e in EXERCISES for w in e.known_wrong]
CORPUS = sorted((ROOT / "tests" / "hint_premise").glob("*/*.py"))


@cache
def _memo(exercise_id: str) -> GradingMemo:
    return GradingMemo()  # one per exercise: the known-wrong solutions' answers are asked once


def _grade(exercise: ImplementationExercise, path: Path) -> ExerciseResult:
    return grade_implementation(
        exercise,
        SourceModule({path.name: path.read_bytes()}, path.name),
        InProcessFactory(),
        memo=_memo(exercise.id),
        root=ROOT,
        references=ROOT,
    )


def _shown(check: Check, text: str | None) -> list[Hint]:
    """The check's hints with this text (two premises may share one text)."""
    return [hint for hint in check.hint_list() if hint.text == text] if text else []


def test_hint_premises_every_catalog_hint_names_a_premise_the_grader_can_test() -> None:
    for exercise in EXERCISES:
        for check in exercise.checks:
            assert check.hint == "" and isinstance(check.hints, list), (exercise.id, check.id)
            for hint in check.hints:
                assert hint.when.shows_something(), (exercise.id, check.id, hint.text)


@pytest.mark.parametrize(("exercise_id", "wrong_id"), KNOWN_WRONG, ids=[f"{e}-{w}" for e, w in KNOWN_WRONG])
def test_hint_premises_a_known_mistake_is_told_its_own_hints_and_no_other_mistakes(
    exercise_id: str, wrong_id: str
) -> None:
    exercise = CATALOG.exercise(exercise_id)
    assert isinstance(exercise, ImplementationExercise)
    wrong = next(w for w in exercise.known_wrong if w.id == wrong_id)
    result = _grade(exercise, ROOT / wrong.path)
    checks = {check.id: check for check in exercise.checks}
    for got in result.checks:
        hints = _shown(checks[got.id], got.hint)
        likes = {hint.when.like for hint in hints}
        if hints and None not in likes and wrong_id not in likes:
            # A hint written for another mistake only where this one's answers are that mistake's too.
            assert any(_same_answers(exercise, like, wrong_id, got.id) for like in likes), (got.id, got.hint)
        own = [h for h in checks[got.id].hint_list() if h.when.like == wrong_id]
        # A call that raised is told its exception (and its message's own suggestion) instead.
        if own and got.status == "failed" and got.id in wrong.must_fail and got.hint is None:
            pytest.fail(f"{got.id}: {wrong_id} fails it and has a hint of its own, but none was shown: {got.reason}")


def _same_answers(exercise: ImplementationExercise, one: str, other: str, check_id: str) -> bool:
    """Whether two known-wrong solutions fail a check the same way (then either's hint is true of both)."""
    paths = {w.id: ROOT / w.path for w in exercise.known_wrong}
    first, second = (_grade(exercise, paths[name]) for name in (one, other))
    a = next(c for c in first.checks if c.id == check_id)
    b = next(c for c in second.checks if c.id == check_id)
    return a.status == b.status and a.got == b.got


def _already(path: Path) -> list[str]:
    """The advice a corpus file already follows: its docstring's lines after ``Already:``, one phrase a line."""
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    _, _, rest = doc.partition("Already:")
    return [line.strip() for line in rest.splitlines() if line.strip()]


@pytest.mark.parametrize("path", CORPUS, ids=[f"{p.parent.name}-{p.stem}" for p in CORPUS])
def test_hint_premises_code_that_follows_a_hint_is_never_given_it(path: Path) -> None:
    exercise = CATALOG.exercise(path.parent.name)
    assert isinstance(exercise, ImplementationExercise)
    phrases = _already(path)
    assert phrases, f"{path}: its docstring names the advice it already follows after 'Already:'"
    result = _grade(exercise, path)
    assert result.status == "failed", f"{path}: the file has a bug of its own"
    for got in result.checks:
        for phrase in phrases:
            assert phrase not in got.reason, (got.id, got.reason)
