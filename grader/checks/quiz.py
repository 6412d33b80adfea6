"""Grade a learner's answers to a quiz: each question is a check, each pick gets its reason."""

from __future__ import annotations

import math
import string
from typing import Any

from grader.results import CheckResult, ExerciseResult
from grader.spec.models import ChoiceQuestion, NumericQuestion, QuizExercise

__all__ = ["grade_quiz", "letters"]


def letters(count: int) -> str:
    """Option letters in order: ``ABCD...``."""
    return string.ascii_uppercase[:count]


def grade_quiz(quiz: QuizExercise, answers: Any, problem: str | None = None) -> ExerciseResult:
    """Grade one quiz from the learner's answers for it (a mapping of question id to answer)."""
    if problem is not None:
        return _whole_quiz(quiz, "error", f"Your answers could not be read: {problem}")
    if answers is None:
        return _whole_quiz(quiz, "missing", f"No answers for {quiz.id}; add a '{quiz.id}:' section to your answers file.")
    if not isinstance(answers, dict):
        return _whole_quiz(quiz, "error", f"The answers under '{quiz.id}' must map question ids to answers, "
                                          f"like '{quiz.questions[0].id}: A'.")
    checks = []
    for question in quiz.questions:
        given = answers.get(question.id)
        if isinstance(question, NumericQuestion):
            status, reason = _numeric(question, given)
        else:
            status, reason = _choice(question, given)
        checks.append(CheckResult(
            id=question.id, status=status, score=question.points if status == "passed" else 0.0,
            max_score=question.points, visibility=quiz.visibility, reason=reason,
        ))
    unknown = sorted(str(key) for key in answers if key not in {q.id for q in quiz.questions})
    score = sum(check.score for check in checks)
    right = sum(check.status == "passed" for check in checks)
    reason = f"{right} of {len(checks)} questions answered correctly."
    if unknown:
        reason += f" Ignored unknown question ids: {', '.join(repr(u) for u in unknown)} (the questions are " \
                  f"{', '.join(q.id for q in quiz.questions)})."
    return ExerciseResult(
        id=quiz.id, title=quiz.title, kind="quiz", status="passed" if right == len(checks) else "failed",
        score=score, max_score=quiz.max_score, reason=reason, checks=checks,
    )


def _whole_quiz(quiz: QuizExercise, status: str, reason: str) -> ExerciseResult:
    checks = [CheckResult(id=q.id, status="skipped" if status == "missing" else "error", score=0.0,
                          max_score=q.points, visibility=quiz.visibility, reason=reason) for q in quiz.questions]
    return ExerciseResult(id=quiz.id, title=quiz.title, kind="quiz", status=status,  # type: ignore[arg-type]
                          score=0.0, max_score=quiz.max_score, reason=reason, checks=checks)


def _choice(question: ChoiceQuestion, given: Any) -> tuple[str, str]:
    options = letters(len(question.options))
    if given is None:
        return "failed", f"Not answered: pick {'one option' if question.type == 'single' else 'every option that applies'} of {', '.join(options)}."
    picks = _letters(given)
    if picks is None or not picks:
        return "failed", f"{given!r} is not an answer here: give {'an option letter' if question.type == 'single' else 'a list of option letters'} from {', '.join(options)}."
    outside = [p for p in picks if p not in options]
    if outside:
        return "failed", f"{', '.join(outside)} {'is not an option' if len(outside) == 1 else 'are not options'}; the options are {', '.join(options)}."
    correct = {letter for letter, option in zip(options, question.options) if option.correct}
    chosen = sorted(set(picks))
    if question.type == "single":
        if len(chosen) > 1:
            return "failed", f"One option only: you gave {', '.join(chosen)}."
        pick = chosen[0]
        option = question.options[options.index(pick)]
        verdict = "Right" if pick in correct else "Not quite"
        return ("passed" if pick in correct else "failed"), f"{verdict}: you picked {pick} ({option.text}). {option.reason}"
    missing = sorted(correct - set(chosen))
    extra = sorted(set(chosen) - correct)
    if not missing and not extra:
        why = " ".join(f"{p}: {question.options[options.index(p)].reason}" for p in chosen)
        return "passed", f"Right: {', '.join(chosen)}. {why}"
    parts = [f"You picked {', '.join(chosen)}."]
    if extra:
        parts.append("Does not belong: " + " ".join(
            f"{p} ({question.options[options.index(p)].text}): {question.options[options.index(p)].reason}" for p in extra))
    if missing:
        parts.append(f"Missing {len(missing)} option{'s' if len(missing) > 1 else ''} that also appl{'y' if len(missing) > 1 else 'ies'}: "
                     + ", ".join(missing) + ".")
    return "failed", " ".join(parts)


def _letters(given: Any) -> list[str] | None:
    if isinstance(given, str):
        parts = [part.strip().rstrip(").").upper() for part in given.replace(";", ",").split(",")]
        return [part for part in parts if part]
    if isinstance(given, list) and all(isinstance(item, str) for item in given):
        return [item.strip().upper() for item in given]
    return None


def _numeric(question: NumericQuestion, given: Any) -> tuple[str, str]:
    if given is None:
        return "failed", "Not answered: give a number."
    if isinstance(given, bool):
        value = math.nan
    else:
        try:
            value = float(given)
        except (TypeError, ValueError):
            value = math.nan
    if not math.isfinite(value):
        return "failed", f"{given!r} is not a number; write it like 0.839."
    if abs(value - question.answer) <= question.tolerance:
        return "passed", f"Right: {value:g} is within {question.tolerance:g} of {question.answer:g}. {question.reason_correct}"
    for mistake in question.mistakes:
        if abs(value - mistake.value) <= mistake.tolerance:
            return "failed", f"Not quite: {value:g}. {mistake.reason}"
    return "failed", f"Not quite: {value:g} is not within {question.tolerance:g} of the answer. {question.reason_wrong}"
