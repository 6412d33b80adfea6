"""Grade a learner's answers to a quiz: each question is a check, each pick gets its reason.

An answer may be any value an answers file can hold (a 5,000-digit integer,
``nan``, a date, a list of lists, a 60,000-character string): each is graded,
and a reason quotes it shortened, never in full.
"""

from __future__ import annotations

import datetime
import math
import string
from typing import Any

from grader.results import CheckResult, ExerciseResult
from grader.safeyaml import LongInteger
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
        reason += f" Ignored unknown question ids: {_listed([_shown(u) for u in unknown])} (the questions are " \
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
        form = "an option letter" if question.type == "single" else "a list of option letters"
        return "failed", f"{_shown(given)} is not an answer here: give {form} from {', '.join(options)}."
    outside = [p for p in picks if p not in options]
    if outside:
        verb = "is not an option" if len(outside) == 1 else "are not options"
        return "failed", f"{_listed([_letter(p) for p in outside])} {verb}; the options are {', '.join(options)}."
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
        return "failed", f"Not answered: give {_NUMBER}."
    value = _number(given)
    if isinstance(value, str):
        return "failed", f"{_shown(given)} {value}; give {_NUMBER}."
    if abs(value - question.answer) <= question.tolerance:
        return "passed", f"Right: {value:g} is within {question.tolerance:g} of {question.answer:g}. {question.reason_correct}"
    for mistake in question.mistakes:
        if abs(value - mistake.value) <= mistake.tolerance:
            return "failed", f"Not quite: {value:g}. {mistake.reason}"
    return "failed", f"Not quite: {value:g} is not within {question.tolerance:g} of the answer. {question.reason_wrong}"


# What a numeric answer looks like; the example is no quiz's answer.
_NUMBER = "one finite number, written like 0.25 or 1.5e-3"


def _number(given: Any) -> float | str:
    """The answer as a finite float, or why it is not one (``is a yes/no value, not a number``)."""
    if isinstance(given, bool):  # before int: YAML reads yes, no, on, off, true, false as booleans
        return "is a yes/no value, not a number"
    if isinstance(given, LongInteger):
        return "is far too large"
    if isinstance(given, str):
        try:
            given = float(given.strip())  # a number written in quotes still counts
        except ValueError:
            return "is text, not a number"
    if isinstance(given, int):
        if given.bit_length() > 1000:  # float() overflows near 2**1024
            return "is far too large"
        given = float(given)
    if not isinstance(given, float):
        return "is not a number"
    if math.isnan(given):
        return "is not a number"
    if math.isinf(given):
        return "is infinite"
    return given


_SHOWN_CHARS = 40
_SHOWN_ITEMS = 3


def _shown(value: Any) -> str:
    """A learner's answer as a reason quotes it: short, whatever its size or type."""
    if value is None or isinstance(value, (bool, float)):
        return {None: "null", True: "true", False: "false"}.get(value, repr(value))  # type: ignore[call-overload]
    if isinstance(value, int) and value.bit_length() > 4000:  # str() refuses past 4,300 digits
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    if isinstance(value, (int, LongInteger)):
        text = str(value)
        digits = sum(ch.isalnum() for ch in text)
        return text if len(text) <= _SHOWN_CHARS else f"{text[:20]}...{text[-8:]} ({digits} digits)"
    if isinstance(value, str):
        if len(value) <= _SHOWN_CHARS:
            return repr(value)
        return f"{value[:_SHOWN_CHARS]!r}... ({len(value)} characters)"
    if isinstance(value, (list, tuple)):  # one level deep: a list of lists shows as [[...], ...]
        return "[" + _listed(["[...]" if isinstance(item, (list, tuple)) else "{...}" if isinstance(item, dict)
                              else _shown(item) for item in value]) + "]"
    if isinstance(value, dict):
        return f"a mapping of {len(value)} key{'s' if len(value) != 1 else ''}"
    if isinstance(value, (datetime.date, datetime.datetime)):
        return f"the date {value.isoformat()}"
    if isinstance(value, bytes):
        return f"binary data ({len(value)} bytes)"
    if isinstance(value, (set, frozenset)):
        return f"a set of {len(value)} item{'s' if len(value) != 1 else ''}"
    return f"a {type(value).__name__} value"


def _letter(pick: str) -> str:
    """A pick that is not an option letter, quoted when it is more than plain letters and digits."""
    return pick if pick.isalnum() and pick.isascii() and len(pick) <= _SHOWN_CHARS else _shown(pick)


def _listed(items: list[str]) -> str:
    """``A, B, C (and 4 more)``: the first few of many."""
    shown = ", ".join(items[:_SHOWN_ITEMS])
    return shown + (f" (and {len(items) - _SHOWN_ITEMS} more)" if len(items) > _SHOWN_ITEMS else "")
