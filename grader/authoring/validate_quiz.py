"""``grader validate`` for a quiz: its answer key scores full marks and every known wrong answer does not.

A quiz with params is checked on several of its variants: the one with
every param at its low end, the one with every param at its high end, and
``DRAWN`` drawn as learners' are (with a key of validation's own, not the
course's secret, so validating needs no secret and reveals no learner's
variant). An answer expression that gives no finite number for one of them
is a problem at the file and line where it is written; so is an answer key
that fails, or a wrong answer that passes, in any of them.
"""

from __future__ import annotations

from grader.authoring.verdicts import ValidationLine
from grader.engine.quiz import grade_quiz, letters
from grader.engine.quiz_variants import quiz_for_variant
from grader.engine.variants import Variant, VariantError, draw_variant, end_variant
from grader.spec.loader import Catalog, line_in
from grader.spec.models import ChoiceQuestion, Exercise, NumericQuestion, QuizExercise

__all__ = ["DRAWN", "located", "validate_quiz", "validation_variants"]

DRAWN = 6
_VALIDATION_KEY = b"grader validate: variants drawn to self-test a quiz"


def validate_quiz(catalog: Catalog, quiz: QuizExercise) -> list[ValidationLine]:
    """The quiz's verdicts: one ``ok`` line, or a ``problem`` line for each fault found."""
    if not quiz.params:
        found, wrong = _key_problems(quiz)
        return _verdicts(quiz, found, f"the answer key passes and {wrong} wrong answers fail")
    variants = validation_variants(quiz)
    problems: list[str] = []
    wrong = 0
    for variant in variants:
        try:
            filled = quiz_for_variant(quiz, variant)
        except VariantError as error:
            problems.append(located(catalog, quiz.id, error))
            continue
        found, wrong = _key_problems(filled)
        problems += [f"for {variant.describe()}: {problem}" for problem in found]
    seen = list(dict.fromkeys(problems))  # two variants failing alike say it once
    return _verdicts(
        quiz, seen, f"on {len(variants)} variants the answer key passes and {wrong} wrong answers fail in each"
    )


def validation_variants(exercise: Exercise, drawn: int = DRAWN) -> list[Variant]:
    """The variants validate tries: every param at its low end, every param at its high end, then ``drawn`` drawn
    (as learners' are, with validation's own key)."""
    params = exercise.params
    ends = [end_variant(exercise.id, params), end_variant(exercise.id, params, high=True)]
    return ends + [draw_variant(exercise.id, params, f"validate-{n}", _VALIDATION_KEY) for n in range(1, drawn + 1)]


def located(catalog: Catalog, exercise_id: str, error: VariantError) -> str:
    """A variant's problem as ``file:line: message``, at the expression that failed."""
    source = catalog.sources.get(exercise_id)
    if source is None:
        return str(error)
    line = line_in(source, error.loc)
    return f"{source}:{line}: {error}" if line else f"{source}: {error}"


def _verdicts(quiz: QuizExercise, problems: list[str], passing: str) -> list[ValidationLine]:
    if problems:
        return [ValidationLine(quiz.id, "quiz", "problem", problem) for problem in problems]
    return [ValidationLine(quiz.id, "quiz", "ok", f"{len(quiz.questions)} questions; {passing}")]


def _key_problems(quiz: QuizExercise) -> tuple[list[str], int]:
    """Grade the answer key (full marks expected) and each wrong option or listed mistake (no marks expected).

    Returns the problems found and how many wrong answers were tried. ``quiz`` has numbers for answers.
    """
    key: dict[str, object] = {}
    wrong: list[tuple[str, object]] = []
    for question in quiz.questions:
        if isinstance(question, NumericQuestion):
            key[question.id] = float(question.answer)
            wrong += [(question.id, float(mistake.value)) for mistake in question.mistakes]
            continue
        assert isinstance(question, ChoiceQuestion)
        options = letters(len(question.options))
        right = [letter for letter, option in zip(options, question.options, strict=True) if option.correct]
        key[question.id] = right[0] if question.type == "single" else right
        wrong += [
            (question.id, letter if question.type == "single" else right + [letter])
            for letter, option in zip(options, question.options, strict=True)
            if not option.correct
        ]
        if question.type == "multiple" and len(right) > 1:  # leaving out a correct option is wrong too
            wrong += [(question.id, [other for other in right if other != letter]) for letter in right]
    problems = []
    graded = grade_quiz(quiz, key)
    for check in graded.checks:
        if check.status != "passed":
            problems.append(f"the answer key fails {check.id}: {check.reason}")
    for question_id, answer in wrong:
        check = next(c for c in grade_quiz(quiz, {**key, question_id: answer}).checks if c.id == question_id)
        if check.status == "passed":
            problems.append(f"{question_id} accepts the wrong answer {answer!r}: {check.reason}")
    return problems, len(wrong)
