"""A handout checks an answers file: ``grade answers.yaml --public`` says each answer is read, and nothing more.

The handout carries no answer key, so it cannot say whether an answer is right: each question passes when
its answer is read and of the form it asks for (an option letter, a list of them, a number), and fails
otherwise, with a reason that depends on the question's form alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from test_release import build_project, secret_findings

from grader.authoring.release import release_handout
from grader.cli import main
from grader.engine.quiz import QuizForm, check_quiz_form, quiz_form
from grader.spec.loader import load_catalog

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def handout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("handout") / "handout"
    release_handout(load_catalog(ROOT / "exercises"), out=out)
    return out


def _grade(handout: Path, answers: dict, tmp_path: Path, *options: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "answers.yaml"
    path.write_text(yaml.safe_dump(answers), encoding="utf-8")
    args = ["--exercises", str(handout / "public-checks"), "grade", str(path), "--public", *options]
    return CliRunner().invoke(main, args)


def test_handout_reads_every_answer_of_a_complete_answers_file(handout: Path, tmp_path: Path) -> None:
    answers = yaml.safe_load((ROOT / "solutions/why-softmax-answers.yaml").read_text())
    done = _grade(handout, answers, tmp_path, "--format", "json")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    (quiz,) = report["exercises"]
    assert quiz["id"] == "why-softmax-quiz" and quiz["status"] == "passed" and report["problems"] == []
    assert [c["status"] for c in quiz["checks"]] == ["passed"] * 5
    assert quiz["score"] == quiz["max_score"] == 0.0
    assert all(c["reason"].startswith("Read: ") for c in quiz["checks"])
    assert "not here" in quiz["reason"]


def test_handout_names_answers_of_the_wrong_form_and_says_nothing_of_the_key(handout: Path, tmp_path: Path) -> None:
    answers = {
        "softmax-bridge-quiz": {
            "most-probability": "Z",
            "temperature-up": ["A", "B"],
            "largest-weight": "about a half",
            "where-softmax": "A, B",
        }
    }
    done = _grade(handout, answers, tmp_path, "--format", "json")
    assert done.exit_code == 1, done.output
    (quiz,) = json.loads(done.stdout)["exercises"]
    reasons = {c["id"]: (c["status"], c["reason"]) for c in quiz["checks"]}
    assert reasons["most-probability"] == ("failed", "Z is not an option; the options are A, B, C, D.")
    assert reasons["temperature-up"][0] == "failed" and "One option only" in reasons["temperature-up"][1]
    assert reasons["largest-weight"][0] == "failed" and "not a number" in reasons["largest-weight"][1]
    assert reasons["where-softmax"] == ("passed", "Read: options A, B, among A, B, C, D.")
    assert reasons["why-sqrt-dk"][0] == "failed" and reasons["why-sqrt-dk"][1].startswith("Not answered")
    for word in ("Right", "Not quite", "correct", "0.839"):
        assert word not in done.stdout


def test_handout_quiz_forms_hold_no_secret(handout: Path) -> None:
    catalog = load_catalog(ROOT / "exercises")
    text = (handout / "public-checks/quizzes.json").read_text(encoding="utf-8")
    assert secret_findings(catalog, {"public-checks/quizzes.json": text}) == []
    forms = [QuizForm.from_data(item) for item in json.loads(text)["quizzes"]]
    assert {form.id for form in forms} == {e.id for e in catalog.exercises.values() if e.kind == "quiz"}


def test_quiz_form_check_never_depends_on_the_answer_key(tmp_path: Path) -> None:
    """Two keys, one form: the same answers read the same, word for word."""
    catalog = load_catalog(build_project(tmp_path))
    quiz = catalog.exercises["why-softmax-quiz"]
    flipped = quiz.model_copy(
        update={
            "questions": [
                q.model_copy(update={"options": [o.model_copy(update={"correct": not o.correct}) for o in q.options]})
                if q.type == "multiple"
                else q
                for q in quiz.questions
            ]
        }
    )
    answers = {"divide-by-sum-fails": "b", "exp-first": "[A, C]", "argmax-fails": 3}
    one = check_quiz_form(QuizForm.from_data(quiz_form(quiz)), answers)
    two = check_quiz_form(QuizForm.from_data(quiz_form(flipped)), answers)
    assert one == two
