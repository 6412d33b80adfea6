"""The pytest baseline that ``benchmarks/run.py`` times asks what the grader asks, and passes only correct work."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int, Path]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from equivalent_pytest import write_suite
        from run import make_class
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    work = tmp_path_factory.mktemp("baseline")
    make_class(work / "class", 2)  # learner000 hands in the solutions; learner001 one known-wrong file
    test_file, cases, tests = write_suite(work)
    return test_file, cases, tests, work / "class"


def _pytest(test_file: Path, cases: Path, learner: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, LEARNER_DIR=str(learner), BASELINE_CASES=str(cases))
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", str(test_file)],
        cwd=test_file.parent,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.slow
def test_the_suite_makes_every_learner_call_of_the_plans_and_asks_every_quiz_item(
    suite: tuple[Path, Path, int, Path],
) -> None:
    from grader.engine.plan import build_plan, checks_to_run
    from grader.spec.loader import load_catalog
    from grader.spec.models import ImplementationExercise, QuizExercise

    catalog = load_catalog(ROOT / "exercises")
    calls = items = 0
    for exercise in catalog.assignment("all"):
        if isinstance(exercise, ImplementationExercise):
            plan = build_plan(exercise, checks_to_run(exercise, False))
            calls += sum(1 for key in plan.whole_keys if plan.table.calls[key].on == "learner")
        elif isinstance(exercise, QuizExercise):
            items += len(exercise.questions)
    assert suite[2] == calls + items


@pytest.mark.slow
def test_correct_work_passes_every_test(suite: tuple[Path, Path, int, Path]) -> None:
    test_file, cases, tests, learners = suite
    done = _pytest(test_file, cases, learners / "learner000")
    assert done.returncode == 0, done.stdout[-2000:]
    assert f"{tests} passed" in done.stdout


@pytest.mark.slow
def test_a_known_wrong_file_fails_only_its_own_exercises_tests(suite: tuple[Path, Path, int, Path]) -> None:
    test_file, cases, _, learners = suite
    wrong = sorted(path.name for path in (learners / "learner001").glob("*.py") if path.read_bytes() != _solution(path))
    done = _pytest(test_file, cases, learners / "learner001")
    assert done.returncode == 1
    failed = set(re.findall(r"^FAILED \S+\[([a-z0-9-]+)-\d+\]", done.stdout, re.M))
    assert [f"{exercise.replace('-', '_')}.py" for exercise in sorted(failed)] == wrong


def _solution(path: Path) -> bytes:
    """The catalog's solution as the generated class hands it in (with its learner's closing comment)."""
    reference = (ROOT / "solutions" / path.stem.replace("_", "-") / "reference.py").read_bytes()
    return reference + f"\n# handed in by {path.parent.name}\n".encode()
