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
from grader.engine.quiz_variants import VariantError, quiz_for_variant
from grader.engine.variants import ParamValue, Variant, draw_variant
from grader.spec.loader import Catalog, line_in
from grader.spec.models import ChoiceQuestion, NumericQuestion, QuizExercise
from grader.spec.params import ParamSpec

__all__ = ["DRAWN", "validate_quiz", "validation_variants"]

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
            source = catalog.sources.get(quiz.id)
            line = line_in(source, error.loc) if source is not None else None
            where = f"{source}:{line}: " if source is not None and line else f"{source}: " if source else ""
            problems.append(f"{where}{error}")
            continue
        found, wrong = _key_problems(filled)
        problems += [f"for {variant.describe()}: {problem}" for problem in found]
    seen = list(dict.fromkeys(problems))  # two variants failing alike say it once
    return _verdicts(
        quiz, seen, f"on {len(variants)} variants the answer key passes and {wrong} wrong answers fail in each"
    )


def validation_variants(quiz: QuizExercise) -> list[Variant]:
    """The variants validate tries: every param at its low end, every param at its high end, then ``DRAWN`` drawn."""
    low = {name: _end(spec, high=False) for name, spec in quiz.params.items()}
    high = {name: _end(spec, high=True) for name, spec in quiz.params.items()}
    ends = [Variant(quiz.id, "the low ends", low), Variant(quiz.id, "the high ends", high)]
    drawn = [draw_variant(quiz.id, quiz.params, f"validate-{n}", _VALIDATION_KEY) for n in range(1, DRAWN + 1)]
    return ends + drawn


def _end(spec: ParamSpec, *, high: bool) -> ParamValue:
    """A param's value at one end of its range (the first or last choice)."""
    if spec.uniform is not None:
        value = spec.uniform[1 if high else 0]
        return round(value, spec.round) if spec.round is not None else value
    if spec.integers is not None:
        return spec.integers[1 if high else 0]
    choices = spec.choice or []
    return choices[-1 if high else 0]


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
