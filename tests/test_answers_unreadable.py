"""An answers file that cannot be read still scores 0 on every quiz it names, with the reason once."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.grading import grade_submission
from grader.submission.answers import AnswersProblem, load_answers, named_quizzes


@pytest.mark.parametrize(
    ("name", "text", "named"),
    [
        (
            "answers.yaml",
            "why-softmax-quiz:\n  exp-first: [A,\nsoftmax-bridge-quiz:\n  x: 1\n",
            ("why-softmax-quiz", "softmax-bridge-quiz"),
        ),
        ("answers.yaml", "'why-softmax-quiz':\n  a: [\n", ("why-softmax-quiz",)),
        ("answers.json", '{"why-softmax-quiz": {"exp-first": "A"', ("why-softmax-quiz",)),
        ("answers.yaml", "  indented: [\n", ()),
    ],
)
def test_an_unreadable_file_still_names_its_quizzes(
    tmp_path: Path, name: str, text: str, named: tuple[str, ...]
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(AnswersProblem) as refused:
        load_answers(path)
    assert refused.value.named == named


def test_a_json_key_written_twice_is_refused_at_its_second_line(tmp_path: Path) -> None:
    path = tmp_path / "answers.json"
    path.write_text('{"why-softmax-quiz": {\n  "exp-first": "A",\n  "exp-first": "B"\n}}\n')
    with pytest.raises(AnswersProblem, match=r"'exp-first' is written twice in one mapping; keep one \(line 3\)"):
        load_answers(path)


def test_the_named_scan_is_linear_on_a_hostile_file() -> None:
    assert named_quizzes("a" * 200_000 + ":", json_file=False) == ()
    assert named_quizzes('"' + "a" * 200_000, json_file=True) == ()


@pytest.mark.slow
def test_every_quiz_an_unreadable_file_names_scores_zero_with_the_reason_once(tmp_path: Path) -> None:
    path = tmp_path / "answers.yaml"
    path.write_text("why-softmax-quiz:\n  exp-first: [A,\n")
    report = grade_submission(str(path))
    (quiz,) = report.exercises
    assert quiz.id == "why-softmax-quiz" and quiz.score == 0 and quiz.status == "error"
    assert "answers.yaml: not valid YAML" in quiz.reason and "(line 3)" in quiz.reason
    assert all(check.reason.startswith("Not graded: the answers file could not be read") for check in quiz.checks)


@pytest.mark.slow
def test_one_unreadable_file_does_not_cost_the_quiz_another_file_answers(tmp_path: Path) -> None:
    (tmp_path / "bridge.yaml").write_text("softmax-bridge-quiz:\n  largest-weight: [\n")
    key = Path(__file__).parents[1] / "solutions" / "why-softmax-answers.yaml"
    (tmp_path / "why.yaml").write_text(key.read_text())
    report = grade_submission(str(tmp_path))
    by_id = {exercise.id: exercise for exercise in report.exercises}
    assert by_id["why-softmax-quiz"].score == by_id["why-softmax-quiz"].max_score
    assert by_id["softmax-bridge-quiz"].score == 0 and "bridge.yaml" in by_id["softmax-bridge-quiz"].reason
