"""A quiz with params as one learner's variant: its texts filled in, its answers computed, then graded.

``quiz_for_variant`` turns the template (``grader.spec.params``) into an
ordinary quiz, the one this learner reads: each ``{name}`` replaced by the
learner's value, each answer expression computed from the values with the
relation language (``grader.checks.expressions``, never eval). The quiz
engine (``engine.quiz``) then grades it as it grades any quiz, and the
result records the variant: its values in ``ExerciseResult.variant``, and
a sentence naming them in the quiz's reason (the learner read them in the
questions, so saying them again reveals nothing).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, cast

import numpy as np

from grader.checks.expressions import ExpressionError, evaluate_expression, parse_expression
from grader.engine.quiz import grade_quiz
from grader.engine.variants import Variant, VariantError, read_secret, variant_for
from grader.results import ExerciseResult
from grader.spec.models import ImplementationExercise, NumberOrExpression, QuizExercise
from grader.spec.params import fill_text

__all__ = [
    "VariantError",
    "grade_quiz_variant",
    "quiz_for_variant",
    "require_variant_secret",
    "variant_for",
    "variant_sentence",
]


def quiz_for_variant(quiz: QuizExercise, variant: Variant) -> QuizExercise:
    """``quiz`` as ``variant``'s learner reads and is graded on it: texts filled in, answers numbers, no params.

    Raises ``VariantError`` when an answer expression gives no finite number for these values.
    """
    shown = variant.shown()
    questions = []
    for number, question in enumerate(quiz.questions):
        update: dict[str, Any] = {"prompt": fill_text(question.prompt, shown)}
        if question.type == "numeric":
            at = ("questions", number)
            update["answer"] = _number(question.answer, variant, (*at, "answer"))
            update["reason_correct"] = fill_text(question.reason_correct, shown)
            update["reason_wrong"] = fill_text(question.reason_wrong, shown)
            update["mistakes"] = [
                mistake.model_copy(
                    update={
                        "value": _number(mistake.value, variant, (*at, "mistakes", index, "value")),
                        "reason": fill_text(mistake.reason, shown),
                    }
                )
                for index, mistake in enumerate(question.mistakes)
            ]
        else:
            update["options"] = [
                option.model_copy(
                    update={"text": fill_text(option.text, shown), "reason": fill_text(option.reason, shown)}
                )
                for option in question.options
            ]
        questions.append(question.model_copy(update=update))
    filled = quiz.model_copy(update={"prompt": fill_text(quiz.prompt, shown), "questions": questions, "params": {}})
    return cast(QuizExercise, filled)


def _number(answer: NumberOrExpression, variant: Variant, loc: tuple[str | int, ...]) -> float:
    """An answer as a number: itself, or its expression computed from the variant's values."""
    if not isinstance(answer, str):
        return float(answer)
    try:
        return float(answer)  # a number the YAML left as text ("1e-3")
    except ValueError:
        pass
    try:
        value = evaluate_expression(parse_expression(answer), variant.values, [])
        array = np.asarray(value)
        number = float(array) if array.size == 1 and array.dtype.kind in "iuf" else math.nan
    except (ExpressionError, ArithmeticError, TypeError, ValueError) as error:
        raise VariantError(
            f"the answer {answer!r} cannot be computed for {variant.describe()}: {error}", *loc
        ) from None
    if not math.isfinite(number):
        raise VariantError(f"the answer {answer!r} gives {number} for {variant.describe()}, not a finite number", *loc)
    return number


def variant_sentence(variant: Variant) -> str:
    """What a quiz's reason adds about the variant graded: its values, which the learner's questions showed."""
    return f"Graded on your variant of the quiz: {variant.describe()}."


def require_variant_secret(exercises: Iterable[object]) -> None:
    """Refuse (``UsageError``) to grade exercises with params, among ``exercises``, when no course secret is set."""
    with_params = [e for e in exercises if isinstance(e, (QuizExercise, ImplementationExercise)) and e.params]
    if with_params:
        variant_for(with_params[0], "", read_secret)


def grade_quiz_variant(
    quiz: QuizExercise, answers: Any, problem: str | None, variant: Variant | None
) -> ExerciseResult:
    """Grade answers to ``variant`` of ``quiz`` (``None``: a quiz without params, graded as it is).

    An answer expression that fails for this learner's values is the exercise's error, said as such, never a
    low score.
    """
    if variant is None:
        return grade_quiz(quiz, answers, problem)
    try:
        filled = quiz_for_variant(quiz, variant)
    except VariantError:
        result = ExerciseResult.unscored(
            quiz,
            "error",
            "This quiz could not be graded for your variant: a fault of the exercise, not of your answers; "
            "please tell your instructor.",
        )
        result.variant = dict(variant.values)
        return result
    result = grade_quiz(filled, answers, problem)
    result.variant = dict(variant.values)
    if result.status in ("passed", "failed"):  # answers were read and graded against these values
        result.reason = f"{result.reason} {variant_sentence(variant)}"
    return result
