"""Partial credit by design, measured on a corpus of single-bug solutions (tests/single_bug/<exercise-id>/).

Each file there makes one realistic mistake (its one-line docstring names it); files named ``fake_*``
compute nothing (constant, zeros, uniform, ranks, a table of the public inputs, fabricated numbers).
One bug must cost the checks it breaks, not the exercise; code that computes nothing must earn little.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from benchmarks.known_wrong_scores import scores, single_bug_solutions
from grader.grading import GradingSession
from grader.spec.models import ImplementationExercise

ROOT = Path(__file__).resolve().parents[1]
CORPUS = list(single_bug_solutions(ROOT / "tests" / "single_bug"))
FAKE = "fake_"
MOST_ZEROS = 0.10  # share of single-bug solutions that may score 0 (only if nothing of theirs held)
MOST_FOR_FAKES = 0.25  # share of the exercise's points code that computes nothing may earn


def test_single_bug_corpus_names_each_bug_in_one_line(catalog) -> None:
    assert len(CORPUS) >= 50
    for exercise_id, _name, path in CORPUS:
        assert isinstance(catalog.exercise(exercise_id), ImplementationExercise), path
        doc = ast.get_docstring(ast.parse(path.read_text()))
        assert doc and "\n" not in doc.strip(), f"{path}: a one-line docstring naming the bug"
    per_exercise = {exercise_id for exercise_id, name, _ in CORPUS if not name.startswith(FAKE)}
    assert len(per_exercise) >= 9


@pytest.fixture(scope="module")
def graded(session: GradingSession) -> dict[tuple[str, str], tuple[float, float, list[str]]]:
    """(exercise, file stem) -> (score, max score, ids of the checks that held, credited or not)."""
    out = {}
    for exercise_id, name, path in CORPUS:
        report = session.grade(path, exercise_ids=[exercise_id])
        result = next(r for r in report.exercises if r.id == exercise_id)
        held = [c.id for c in result.checks if c.status == "passed" or c.reason.startswith("Not credited:")]
        out[exercise_id, name] = (result.score, result.max_score, held)
    return out


@pytest.mark.slow
def test_every_single_bug_loses_points_but_rarely_all(graded) -> None:
    bugs = {key: value for key, value in graded.items() if not key[1].startswith(FAKE)}
    assert [key for key, (score, most, _) in bugs.items() if score >= most] == []
    zeros = [key for key, (score, _, _) in bugs.items() if score == 0]
    assert len(zeros) <= MOST_ZEROS * len(bugs), zeros
    # a zero only for a bug that breaks every property: nothing of it held, credited or not
    assert {key: held for key, (score, _, held) in bugs.items() if score == 0 and held} == {}


@pytest.mark.slow
def test_what_computes_nothing_earns_at_most_a_quarter(graded) -> None:
    fakes = {key: value for key, value in graded.items() if key[1].startswith(FAKE)}
    assert len(fakes) >= 6
    assert {key: (score, most) for key, (score, most, _) in fakes.items() if score > MOST_FOR_FAKES * most} == {}


@pytest.mark.slow
def test_every_reference_solution_still_gets_full_marks(session: GradingSession) -> None:
    references = [
        (exercise.id, "reference", session.catalog.resolve(exercise.reference_solution))
        for exercise in session.catalog.exercises.values()
        if isinstance(exercise, ImplementationExercise) and exercise.reference_solution
    ]
    assert [(e, s, m) for e, _, s, m in scores(session, references) if s != m] == []


@pytest.mark.slow
def test_a_guard_that_finds_only_wrong_values_withholds_nothing(graded, session: GradingSession) -> None:
    """ddof=d_k gives inf where n_samples <= d_k: the guard fails on that, yet the rest of the experiment is real."""
    score, most, held = graded["scaling-experiment", "ddof_dk"]
    report = session.grade(ROOT / "tests/single_bug/scaling-experiment/ddof_dk.py", exercise_ids=["scaling-experiment"])
    result = report.exercises[0]
    guard = next(c for c in result.checks if c.id == "varies-like-sampling-error")
    assert guard.status == "failed" and "the checks that held keep their points" in guard.reason
    assert not [c.id for c in result.checks if c.reason.startswith("Not credited:")]
    assert 0 < score < most and "unscaled-variance-near-dk" in held
