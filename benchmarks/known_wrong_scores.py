"""The score of every known-wrong solution of the catalog, and of the single-bug corpus, exercise by exercise.

Run from the repository root:  python benchmarks/known_wrong_scores.py [--single-bug]

Prints one line per solution, ``exercise: known-wrong-id score/max`` (with ``--single-bug``, the
files under tests/single_bug/<exercise-id>/ instead, named by file). The solutions are graded with
every check, hidden ones included, through the public API (``GradingSession``), as ``grader batch``
grades a class.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Iterator
from pathlib import Path

from grader.grading import GradingSession
from grader.spec.models import ImplementationExercise

ROOT = Path(__file__).resolve().parents[1]
SINGLE_BUG = ROOT / "tests" / "single_bug"


def known_wrong_solutions(session: GradingSession) -> Iterator[tuple[str, str, Path]]:
    """(exercise id, known-wrong id, path) for every known-wrong solution of the catalog."""
    for exercise in session.catalog.exercises.values():
        if isinstance(exercise, ImplementationExercise):
            for wrong in exercise.known_wrong:
                yield exercise.id, wrong.id, session.catalog.resolve(wrong.path)


def single_bug_solutions(folder: Path = SINGLE_BUG) -> Iterator[tuple[str, str, Path]]:
    """(exercise id, file stem, path) for every file of the single-bug corpus."""
    for path in sorted(folder.glob("*/*.py")):
        yield path.parent.name, path.stem, path


def scores(
    session: GradingSession, solutions: Iterable[tuple[str, str, Path]]
) -> Iterator[tuple[str, str, float, float]]:
    """(exercise id, solution id, score, max score) of each solution, graded on its own exercise alone."""
    for exercise_id, solution_id, path in solutions:
        report = session.grade(path, exercise_ids=[exercise_id])
        result = next(r for r in report.exercises if r.id == exercise_id)
        yield exercise_id, solution_id, result.score, result.max_score


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--single-bug", action="store_true", help="grade tests/single_bug/ instead")
    args = parser.parse_args()
    with GradingSession(exercises_dir=ROOT / "exercises", allow_weak_sandbox=True) as session:
        solutions = single_bug_solutions() if args.single_bug else known_wrong_solutions(session)
        for exercise_id, solution_id, score, max_score in scores(session, solutions):
            print(f"{exercise_id}: {solution_id} {score:g}/{max_score:g}", flush=True)


if __name__ == "__main__":
    main()
