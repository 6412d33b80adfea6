"""The README's worked example is a valid spec, and its table of known-wrong scores is what grading gives."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from grader.grading import GradingSession
from grader.spec.loader import load_catalog

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_the_worked_example_loads_as_a_spec(tmp_path: Path) -> None:
    section = README[README.index("## Writing an exercise") :]
    spec = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert spec is not None
    (tmp_path / "exercises").mkdir()
    (tmp_path / "exercises" / "sigmoid.yaml").write_text(spec.group(1))
    shutil.copytree(ROOT / "solutions" / "sigmoid", tmp_path / "solutions" / "sigmoid")
    exercise = load_catalog(tmp_path / "exercises").exercise("sigmoid")
    assert {check.property for check in exercise.checks} >= {"in-range", "identity", "monotone"}  # type: ignore[union-attr]


@pytest.mark.slow
def test_the_table_of_known_wrong_scores_is_what_grading_gives() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from known_wrong_scores import known_wrong_solutions, scores
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    written = {
        match.group(1): (match.group(2), match.group(3))
        for match in re.finditer(r"^\| `([a-z0-9-]+)` \((\d+)\) \| (.*) \|$", README, re.M)
    }
    with GradingSession(exercises_dir=ROOT / "exercises", allow_weak_sandbox=True) as session:
        graded: dict[str, tuple[str, list[str]]] = {}
        for exercise_id, wrong_id, score, max_score in scores(session, known_wrong_solutions(session)):
            graded.setdefault(exercise_id, (f"{max_score:g}", []))[1].append(f"{wrong_id} {score:g}")
    assert written == {exercise: (top, ", ".join(items)) for exercise, (top, items) in graded.items()}
