"""A quiz with params, graded as each learner's own variant: at the show, grade, batch and validate doors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.authoring.validate_quiz import validate_quiz, validation_variants
from grader.cli import main
from grader.engine.quiz_variants import grade_quiz_variant, quiz_for_variant, variant_for
from grader.engine.variants import SECRET_ENV, SECRET_FILE_ENV, Variant, draw_variant
from grader.errors import UsageError
from grader.spec.loader import load_catalog

SECRET = "a course secret of enough bytes"
QUIZ = """id: scale-quiz
kind: quiz
title: Scaling
prompt: "Use {{braces}} as written."
params:
  a: {uniform: [1, 5], round: 2}
  n: {integers: [3, 9]}
questions:
  - id: product
    type: numeric
    prompt: "What is {a} times {n}?"
    answer: "a * n"
    tolerance: 0.001
    reason_correct: "{a} * {n} is the product."
    reason_wrong: "Multiply {a} by {n}."
    mistakes:
      - value: "a + n"
        reason: "That is the sum of {a} and {n}."
  - id: depends
    type: single
    prompt: "Is {a} above {n}?"
    options:
      - {text: "always", reason: "{a} is drawn below 5 and {n} from 3."}
      - {text: "it depends on the draw", correct: true, reason: "here {a} and {n}."}
"""


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "exercises").mkdir()
    (tmp_path / "exercises/scale-quiz.yaml").write_text(QUIZ, encoding="utf-8")
    (tmp_path / "secret").write_text(SECRET + "\n", encoding="utf-8")
    for name in (SECRET_ENV, SECRET_FILE_ENV):  # set empty (no secret) so that what --variant-secret sets is undone
        monkeypatch.setenv(name, "")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _quiz(project: Path):  # type: ignore[no-untyped-def]
    return load_catalog(project / "exercises").exercise("scale-quiz")


def _variant(project: Path, learner: str) -> Variant:
    quiz = _quiz(project)
    return draw_variant(quiz.id, quiz.params, learner, SECRET.encode())


def test_quiz_for_variant_fills_every_text_and_computes_the_answers(project: Path) -> None:
    variant = _variant(project, "ada")
    a, n = variant.values["a"], variant.values["n"]
    filled = quiz_for_variant(_quiz(project), variant)
    product, depends = filled.questions
    assert product.prompt == f"What is {a!r} times {n}?" and product.answer == pytest.approx(a * n)
    assert product.mistakes[0].value == pytest.approx(a + n)
    assert product.reason_wrong == f"Multiply {a!r} by {n}."
    assert depends.options[1].reason == f"here {a!r} and {n}."
    assert filled.prompt == "Use {braces} as written." and not filled.params


def test_each_learner_is_graded_on_their_own_variant(project: Path) -> None:
    quiz = _quiz(project)
    ada, bob = _variant(project, "ada"), _variant(project, "bob")
    assert ada.values != bob.values
    ada_answer = ada.values["a"] * ada.values["n"]
    own = grade_quiz_variant(quiz, {"product": ada_answer, "depends": "B"}, None, ada)
    assert own.status == "passed" and own.variant == ada.values
    assert own.reason.endswith(f"Graded on your variant of the quiz: {ada.describe()}.")
    copied = grade_quiz_variant(quiz, {"product": ada_answer, "depends": "B"}, None, bob)
    assert next(c for c in copied.checks if c.id == "product").status == "failed"


def test_a_listed_mistake_is_recognised_in_the_learners_variant(project: Path) -> None:
    variant = _variant(project, "ada")
    result = grade_quiz_variant(_quiz(project), {"product": variant.values["a"] + variant.values["n"]}, None, variant)
    reason = next(c for c in result.checks if c.id == "product").reason
    assert f"That is the sum of {variant.values['a']!r} and {variant.values['n']}." in reason


def test_no_learner_or_no_secret_is_bad_usage_in_one_line(project: Path) -> None:
    quiz = _quiz(project)
    with pytest.raises(UsageError, match="--learner NAME"):
        variant_for(quiz, None, lambda: SECRET.encode())
    with pytest.raises(UsageError, match="course's secret"):
        variant_for(quiz, "ada", lambda: None)


def test_an_answer_failing_for_a_learners_values_is_the_exercises_error(project: Path) -> None:
    quiz = _quiz(project)
    broken = quiz.model_copy(update={"questions": [quiz.questions[0].model_copy(update={"answer": "a / (n - n)"})]})
    result = grade_quiz_variant(broken, {"product": 1.0}, None, _variant(project, "ada"))
    assert result.status == "error" and "a fault of the exercise, not of your answers" in result.reason


def test_validate_tries_both_ends_and_drawn_variants(project: Path) -> None:
    quiz = _quiz(project)
    variants = validation_variants(quiz)
    assert {"a": 1.0, "n": 3} in [v.values for v in variants] and {"a": 5.0, "n": 9} in [v.values for v in variants]
    (line,) = validate_quiz(load_catalog(project / "exercises"), quiz)
    assert line.verdict == "ok", line.message


@pytest.mark.parametrize(
    ("answer", "mistake", "words"),
    [
        ('"a / (n - 3)"', '"a + n"', "scale-quiz.yaml:12: the answer 'a / (n - 3)' gives inf"),
        ('"a * n"', '"a * n + 0.0001"', "accepts the wrong answer"),
    ],
    ids=["infinite-at-the-low-end", "mistake-equal-to-the-answer"],
)
def test_validate_names_a_variant_the_answer_key_fails(project: Path, answer: str, mistake: str, words: str) -> None:
    text = QUIZ.replace('answer: "a * n"', f"answer: {answer}").replace('value: "a + n"', f"value: {mistake}")
    (project / "exercises/scale-quiz.yaml").write_text(text, encoding="utf-8")
    catalog = load_catalog(project / "exercises")
    lines = validate_quiz(catalog, catalog.exercise("scale-quiz"))
    assert lines and all(line.verdict == "problem" for line in lines)
    assert any(words in line.message for line in lines), [line.message for line in lines]


def _grade(project: Path, learner: str | None, answers: dict, *options: str):  # type: ignore[no-untyped-def]
    path = project / f"{learner or 'someone'}.json"
    path.write_text(json.dumps({"scale-quiz": answers}), encoding="utf-8")
    args = ["--exercises", "exercises", "grade", str(path), "--format", "json", *options]
    if learner is not None:
        args += ["--learner", learner, "--variant-secret", "secret"]
    return CliRunner().invoke(main, args)


def test_cli_grade_without_a_learner_is_refused_in_one_line(project: Path) -> None:
    result = _grade(project, None, {"product": 1.0})
    assert result.exit_code == 2
    assert "gives each learner a variant of its own" in result.output and "Traceback" not in result.output


def test_cli_grade_records_the_variant_and_repeats_byte_for_byte(project: Path) -> None:
    variant = _variant(project, "ada")
    answers = {"product": variant.values["a"] * variant.values["n"], "depends": "B"}
    first = _grade(project, "ada", answers)
    assert first.exit_code == 0, first.output
    exercise = json.loads(first.output)["exercises"][0]
    assert exercise["variant"] == variant.values and exercise["status"] == "passed"
    assert _grade(project, "ada", answers).output == first.output
    assert SECRET not in first.output


def test_cli_show_fills_in_the_learners_values_and_the_template_says_they_differ(project: Path) -> None:
    variant = _variant(project, "ada")
    shown = CliRunner().invoke(
        main, ["--exercises", "exercises", "show", "scale-quiz", "--learner", "ada", "--variant-secret", "secret"]
    )
    assert shown.exit_code == 0, shown.output
    assert f"What is {variant.values['a']!r} times {variant.values['n']}?" in shown.output
    assert f"for ada: {variant.describe()}" in shown.output and SECRET not in shown.output
    template = CliRunner().invoke(main, ["--exercises", "exercises", "show", "scale-quiz"])
    assert "What is {a} times {n}?" in template.output and "values of their own in place of {a}, {n}" in template.output


@pytest.mark.slow
def test_cli_batch_grades_each_learner_on_the_variant_of_their_folder_name(project: Path) -> None:
    (project / "exercises/a1.yaml").write_text("id: a1\nkind: assignment\ntitle: A\nexercises: [scale-quiz]\n")
    for learner in ("ada", "bob"):
        variant = _variant(project, learner)
        (project / "class" / learner).mkdir(parents=True)
        answers = {"scale-quiz": {"product": variant.values["a"] * variant.values["n"], "depends": "B"}}
        (project / "class" / learner / "answers.json").write_text(json.dumps(answers))
    args = ["--exercises", "exercises", "batch", "class", "--assignment", "a1", "--out", "out", "--jobs", "1"]
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 2 and "course's secret" in refused.output
    result = CliRunner().invoke(main, [*args, "--variant-secret", "secret"])
    assert result.exit_code == 0, result.output
    for learner in ("ada", "bob"):
        exercise = json.loads((project / f"out/results/{learner}.json").read_text())["exercises"][0]
        assert exercise["status"] == "passed" and exercise["variant"] == _variant(project, learner).values


def test_batch_workers_get_the_secret_however_they_start(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker from a forkserver (the batch's process has other threads) inherits no environment set later."""
    from grader.batch.worker import WorkerConfig, start_worker
    from grader.engine.variants import SECRET_ENV, SECRET_FILE_ENV, variant_environ

    (project / "secret.txt").write_text("a course secret of enough bytes\n")
    (project / "exercises/a1.yaml").write_text("id: a1\nkind: assignment\ntitle: A\nexercises: [scale-quiz]\n")
    monkeypatch.chdir(project)
    monkeypatch.delenv(SECRET_ENV, raising=False)
    monkeypatch.setenv(SECRET_FILE_ENV, "secret.txt")
    handed = variant_environ()
    assert handed == ((SECRET_FILE_ENV, str(project / "secret.txt")),)  # by its absolute path: workers start elsewhere
    monkeypatch.delenv(SECRET_FILE_ENV)
    monkeypatch.chdir("/")
    config = WorkerConfig(exercises_dir=str(project / "exercises"), assignment="a1", spec_digest="", environ=handed)
    worker = start_worker(config)
    try:
        assert os.environ[SECRET_FILE_ENV] == str(project / "secret.txt")
    finally:
        worker.session.close()
