"""``grader validate``: references pass every check, known-wrong solutions fail the checks they name.

``test_validate_cli_passes_on_the_real_catalog`` is the test that keeps
``grader validate`` in the suite: every spec of ``exercises/`` must self-test
cleanly. The other tests work on a temporary copy holding only
``stable-softmax`` (and the why-softmax quiz), so they do not depend on
exercises still being written.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from grader.authoring.validate import ValidationLine, validate_catalog
from grader.cli import main
from grader.grading import GradingSession
from grader.spec.loader import Catalog, load_catalog
from grader.spec.models import QuizExercise

ROOT = Path(__file__).resolve().parents[1]


def copy_catalog(tmp_path: Path, exercises: tuple[str, ...] = ("stable-softmax",), edit=None) -> Path:
    """A project under ``tmp_path`` with some exercises and their solutions; ``edit(spec)`` changes stable-softmax."""
    (tmp_path / "exercises").mkdir()
    for exercise_id in exercises:
        source = ROOT / "exercises" / f"{exercise_id}.yaml"
        target = tmp_path / "exercises" / source.name
        if edit is not None and exercise_id == "stable-softmax":
            spec = yaml.safe_load(source.read_text(encoding="utf-8"))
            edit(spec)
            target.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
        else:
            shutil.copy(source, target)
        if (ROOT / "solutions" / exercise_id).is_dir():
            shutil.copytree(ROOT / "solutions" / exercise_id, tmp_path / "solutions" / exercise_id)
    return tmp_path / "exercises"


def validate_copy(exercises_dir: Path, session: GradingSession):
    catalog = load_catalog(exercises_dir)
    with GradingSession(catalog, warm_parent=session.warm_parent) as grading:
        return validate_catalog(catalog, session=grading)


def wrong(spec: dict, wrong_id: str) -> dict:
    return next(w for w in spec["known_wrong"] if w["id"] == wrong_id)


@pytest.mark.slow
def test_validate_cli_passes_on_the_real_catalog() -> None:
    result = CliRunner().invoke(main, ["validate"])
    problems = [line for line in result.output.splitlines() if line.startswith("PROBLEM")]
    assert result.exit_code == 0, "\n".join(problems) or result.output
    assert "no problems" in result.output
    assert "ok      stable-softmax reference solutions/stable-softmax/reference.py: passes all" in result.output


@pytest.mark.slow
def test_validate_passes_on_stable_softmax_and_its_quiz(tmp_path: Path, session: GradingSession) -> None:
    report = validate_copy(copy_catalog(tmp_path, ("stable-softmax", "why-softmax-quiz")), session)
    assert report.ok, [line.render() for line in report.problems]
    rendered = [line.render() for line in report.lines]
    assert any(line.startswith("ok      stable-softmax known-wrong global-max") for line in rendered)
    assert any(line.startswith("ok      why-softmax-quiz quiz: 5 questions") for line in rendered)
    assert sum(line.subject.startswith("known-wrong") for line in report.lines) == 9


@pytest.mark.slow
def test_validate_names_the_check_that_lets_a_known_wrong_through(tmp_path: Path, session: GradingSession) -> None:
    def edit(spec: dict) -> None:
        wrong(spec, "global-max")["must_fail"].append("neg-inf-gets-zero")

    report = validate_copy(copy_catalog(tmp_path, edit=edit), session)
    assert not report.ok
    (problem,) = report.problems
    assert problem.subject == "known-wrong global-max (solutions/stable-softmax/wrong_global_max.py)"
    assert problem.message.startswith("neg-inf-gets-zero lets it through (passed)")
    assert "gives a -inf score a value of exactly 0 in the weights" in problem.message  # the check's own reason


@pytest.mark.slow
def test_validate_names_the_check_a_reference_fails(tmp_path: Path, session: GradingSession) -> None:
    def edit(spec: dict) -> None:
        spec["reference_solution"] = "solutions/stable-softmax/wrong_mutates_input.py"

    report = validate_copy(copy_catalog(tmp_path, edit=edit), session)
    lines = [line.render() for line in report.problems]
    assert lines == [next(line for line in lines if "fails leaves-input-unchanged (failed)" in line)]
    assert lines[0].startswith("PROBLEM stable-softmax reference solutions/stable-softmax/wrong_mutates_input.py:")


@pytest.mark.slow
def test_validate_flags_a_known_wrong_that_does_not_even_import(tmp_path: Path, session: GradingSession) -> None:
    exercises = copy_catalog(tmp_path)
    (tmp_path / "solutions/stable-softmax/wrong_global_max.py").write_text("def softmax(z, axis=-1):\n    return (\n")
    report = validate_copy(exercises, session)
    (problem,) = report.problems
    assert "global-max" in problem.subject and "every check fails for one reason" in problem.message
    assert "SyntaxError" in problem.message


def test_validate_quiz_flags_a_numeric_mistake_that_the_answer_window_accepts(session: GradingSession) -> None:
    quiz = QuizExercise.model_validate(
        {
            "id": "tiny-quiz",
            "kind": "quiz",
            "title": "Tiny",
            "questions": [
                {
                    "id": "largest-weight",
                    "type": "numeric",
                    "prompt": "How much?",
                    "answer": 0.839,
                    "tolerance": 0.001,
                    "reason_correct": "Yes.",
                    "reason_wrong": "No.",
                    "mistakes": [{"value": 0.8395, "reason": "Rounded."}],
                }
            ],
        }
    )
    catalog = Catalog(root=ROOT, exercises={quiz.id: quiz})
    report = validate_catalog(catalog, session=session)
    (problem,) = report.problems
    assert problem == ValidationLine("tiny-quiz", "quiz", "problem", problem.message)
    assert problem.message.startswith("largest-weight accepts the wrong answer 0.8395")


def test_validate_refuses_a_session_on_another_catalog(tmp_path: Path, session: GradingSession) -> None:
    from grader.errors import UsageError

    with pytest.raises(UsageError, match="GradingSession"):
        validate_catalog(Catalog(root=tmp_path), session=session)


@pytest.mark.slow
def test_validate_cli_exits_1_and_prints_the_problem(tmp_path: Path) -> None:
    def edit(spec: dict) -> None:
        wrong(spec, "mutates-input")["must_fail"] = ["rows-sum-to-one"]

    exercises = copy_catalog(tmp_path, ("stable-softmax", "why-softmax-quiz"), edit=edit)
    result = CliRunner().invoke(main, ["--exercises", str(exercises), "validate", "--exercise", "stable-softmax"])
    assert result.exit_code == 1
    assert "why-softmax-quiz" not in result.output
    assert (
        "PROBLEM stable-softmax known-wrong mutates-input (solutions/stable-softmax/wrong_mutates_input.py): "
        "rows-sum-to-one lets it through (passed)"
    ) in result.output
    assert result.output.splitlines()[-1] == "validate: 1 problem in 1 exercise."


def test_validate_cli_exits_2_for_a_spec_that_does_not_load(tmp_path: Path) -> None:
    exercises = copy_catalog(tmp_path)
    (exercises / "broken.yaml").write_text("id: broken\nkind: quiz\ntitle: [unclosed\n")
    result = CliRunner().invoke(main, ["--exercises", str(exercises), "validate"])
    assert result.exit_code == 2
    assert "broken.yaml" in result.output


def test_validate_cli_exits_2_for_an_unknown_exercise(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["--exercises", str(copy_catalog(tmp_path)), "validate", "--exercise", "stable"])
    assert result.exit_code == 2
    assert "unknown exercise 'stable'; did you mean 'stable-softmax'?" in result.output


@pytest.mark.slow
def test_validate_names_the_check_and_the_case_a_reference_fails(tmp_path: Path, session: GradingSession) -> None:
    exercises = copy_catalog(tmp_path)
    (tmp_path / "solutions/stable-softmax/reference.py").write_text(
        "import numpy as np\n\n\ndef softmax(z, axis=-1):\n    e = np.exp(z)\n"
        "    return e / e.sum(axis=axis, keepdims=True)\n"
    )
    report = validate_copy(exercises, session)
    messages = [line.message for line in report.problems if line.subject.startswith("reference")]
    assert any(
        message.startswith("fails finite-for-large-inputs (failed) on softmax(z=array([") and ": expected " in message
        for message in messages
    ), messages


@pytest.mark.slow
def test_validate_tells_the_author_a_reference_defines_nothing(tmp_path: Path, session: GradingSession) -> None:
    exercises = copy_catalog(tmp_path)
    (tmp_path / "solutions/stable-softmax/reference.py").write_text("import numpy as np\n")
    report = validate_copy(exercises, session)
    (line,) = [line for line in report.problems if line.subject.startswith("reference")]
    assert line.message == "does not define softmax(): a reference solution defines every entry of the spec"
    assert "your" not in line.message


@pytest.mark.slow
def test_validate_says_a_reference_is_still_a_stub(tmp_path: Path, session: GradingSession) -> None:
    exercises = copy_catalog(tmp_path)
    (tmp_path / "solutions/stable-softmax/reference.py").write_text(
        'def softmax(z, axis=-1):\n    """Write me."""\n    raise NotImplementedError("write softmax")\n'
    )
    catalog = load_catalog(exercises)
    report = validate_catalog(
        catalog, session=GradingSession(catalog, warm_parent=session.warm_parent), exercise_ids=["stable-softmax"]
    )
    stub = [line for line in report.problems if line.subject.startswith("reference")]
    assert [line.message.split(":")[0] for line in stub] == [
        "is still a stub (softmax() only raises NotImplementedError)"
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("result", "problem"),
    [
        ("array([0.09003057, 0.24472847, 0.66524097])", "entry 2 is 0.66524"),
        ("array([0.09, 0.24472847])", "shape (3,), the result shows shape (2,)"),
    ],
    ids=["last-digit-wrong", "wrong-shape"],
)
def test_validate_checks_each_public_example_result_against_the_reference(
    tmp_path: Path, session: GradingSession, result: str, problem: str
) -> None:
    def edit(spec: dict) -> None:
        spec["examples"][0]["result"] = result

    report = validate_copy(copy_catalog(tmp_path, edit=edit), session)
    (line,) = report.problems
    assert line.subject == "examples"
    assert line.message.startswith("example 1 at ")
    assert "stable-softmax.yaml:" in line.message.split(" (")[0]
    assert "(softmax(np.array([1.0, 2.0, 3.0]))): the reference gives" in line.message
    assert problem in line.message


@pytest.mark.slow
def test_validate_reports_the_examples_it_checked(tmp_path: Path, session: GradingSession) -> None:
    def edit(spec: dict) -> None:
        spec["examples"].append({"call": "softmax(z)", "result": "about uniform"})

    report = validate_copy(copy_catalog(tmp_path, edit=edit), session)
    assert report.ok
    rendered = [line.render() for line in report.lines if line.subject == "examples"]
    assert rendered == [
        ("note    stable-softmax examples: example 3 (softmax(z)) is not checked: 'z' is not a plain value"),
        "ok      stable-softmax examples: the reference gives the result of 2 examples",
    ]


@pytest.mark.slow
def test_validate_names_an_example_that_calls_an_argument_the_entry_lacks(
    tmp_path: Path, session: GradingSession
) -> None:
    def edit(spec: dict) -> None:
        spec["examples"][1]["call"] = "softmax(np.array([[1.0, 1.0], [0.0, 100.0]]), axes=1)"

    report = validate_copy(copy_catalog(tmp_path, edit=edit), session)
    (line,) = report.problems
    assert line.subject == "examples" and line.message.startswith("example 2 at ")
    assert line.message.endswith("cannot work: it passes 'axes', which is not an argument of softmax(z, axis=-1)")
