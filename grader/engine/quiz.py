"""Grade a learner's answers to a quiz: each question is a check, each pick gets its reason.

An answer may be any value an answers file can hold (a 5,000-digit integer,
``nan``, a date, a list of lists, a 60,000-character string): each is graded,
and a reason quotes it shortened, never in full. How an answer is read (the
letters a choice picks, the number given) is ``engine.quiz_answers``.

What feedback says
------------------
Every option the learner picked gets its reason, right or wrong. ``reveal``
(per quiz, replaced per question) decides what a wrong answer is told
beyond that: ``picked`` (the default) says how many correct options were
left out ("2 more options also apply") without naming them; ``full`` names
them, and the right answer of a single-choice or numeric question. There is
no due date at grading time, so a quiz says ``picked`` while learners may
resubmit and ``full`` once the due date has passed and the class is graded
again.

An answer that cannot be read, or no answer, gets a reason that does not
depend on the answer key at all, whatever ``reveal`` says: it describes the
form to use without an example letter or number that could be the answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from msgspec import Struct

from grader.engine.quiz_answers import (
    NUMBER_FORM,
    ChoiceReading,
    letters,
    listed,
    read_choice,
    read_choice_form,
    read_number,
    shown_answer,
)
from grader.results import CheckResult, CheckStatus, ExerciseResult, ExerciseStatus

if TYPE_CHECKING:
    from grader.spec.models import ChoiceQuestion, NumericQuestion, QuizExercise

__all__ = [
    "QUIZ_FORMS",
    "ChoiceReading",
    "QuestionForm",
    "QuizForm",
    "check_quiz_form",
    "grade_quiz",
    "letters",
    "quiz_form",
    "read_choice",
]


# The file of a handout's ``public-checks`` folder holding its quizzes' forms (``QuizForm``).
QUIZ_FORMS = "quizzes.json"


def grade_quiz(quiz: QuizExercise, answers: Any, problem: str | None = None) -> ExerciseResult:
    """Grade one quiz from the learner's answers for it (a mapping of question id to answer)."""
    if problem is not None:
        return _whole_quiz(
            quiz,
            "error",
            f"Your answers could not be read: {problem}",
            "Not graded: the answers file could not be read (the quiz's reason says where).",
        )
    if answers is None:
        return _whole_quiz(
            quiz,
            "missing",
            f"No answers for {quiz.id}; add a '{quiz.id}:' section to your answers file.",
            f"Not answered: there is no '{quiz.id}:' section.",
        )
    if not isinstance(answers, dict):
        return _whole_quiz(
            quiz,
            "error",
            f"The answers under '{quiz.id}' must map question ids to answers, one per line as 'question-id: answer'.",
            f"Not graded: the answers under '{quiz.id}' are not a mapping of question ids to answers.",
        )
    checks = []
    for question in quiz.questions:
        given = answers.get(question.id)
        reveal = (question.reveal or quiz.reveal) == "full"
        if question.type == "numeric":  # a NumericQuestion
            status, reason = _numeric(question, given, reveal)
        else:
            status, reason = _choice(question, given, reveal)
        checks.append(
            CheckResult(
                id=question.id,
                status=status,
                score=question.points if status == "passed" else 0.0,
                max_score=question.points,
                visibility=quiz.visibility,
                reason=reason,
                picked=_picked(question, given),
            )
        )
    unknown = sorted(str(key) for key in answers if key not in {q.id for q in quiz.questions})
    score = sum(check.score for check in checks)
    right = sum(check.status == "passed" for check in checks)
    reason = f"{right} of {len(checks)} questions answered correctly."
    if unknown:
        reason += (
            f" Ignored unknown question ids: {listed([shown_answer(u) for u in unknown])} (the questions are "
            f"{', '.join(q.id for q in quiz.questions)})."
        )
    return ExerciseResult(
        id=quiz.id,
        title=quiz.title,
        kind="quiz",
        status="passed" if right == len(checks) else "failed",
        score=score,
        max_score=quiz.max_score,
        reason=reason,
        checks=checks,
    )


def _whole_quiz(quiz: QuizExercise, status: ExerciseStatus, reason: str, each: str) -> ExerciseResult:
    """A quiz no question of which could be graded: ``reason`` says why once, ``each`` is every question's."""
    checks = [
        CheckResult(
            id=q.id,
            status="skipped" if status == "missing" else "error",
            score=0.0,
            max_score=q.points,
            visibility=quiz.visibility,
            reason=each,
        )
        for q in quiz.questions
    ]
    return ExerciseResult(
        id=quiz.id,
        title=quiz.title,
        kind="quiz",
        status=status,
        score=0.0,
        max_score=quiz.max_score,
        reason=reason,
        checks=checks,
    )


def _picked(question: ChoiceQuestion | NumericQuestion, given: Any) -> list[str] | None:
    """What the class's item statistics count for one answer: ``None`` for no answer, else the option letters it
    picks in letter order, empty when it names no option (a numeric question's, or one that is not an option)."""
    if given is None:
        return None
    if question.type == "numeric":
        return []
    reading = read_choice(given, letters(len(question.options)), multiple=question.type == "multiple")
    return sorted(reading.picks) if reading is not None and not reading.not_options else []


def _choice(question: ChoiceQuestion, given: Any, reveal: bool) -> tuple[CheckStatus, str]:
    options = letters(len(question.options))
    multiple = question.type == "multiple"
    chosen = read_choice_form(given, options, multiple)
    if isinstance(chosen, str):
        return "failed", chosen
    correct = {letter for letter, option in zip(options, question.options, strict=True) if option.correct}

    def described(pick: str, *, why: bool = True) -> str:
        option = question.options[options.index(pick)]
        return f"{pick} ({option.text})" + (f": {option.reason}" if why else "")

    if not multiple:
        pick = chosen[0]
        option = question.options[options.index(pick)]
        if pick in correct:
            return "passed", f"Right: you picked {pick} ({option.text}). {option.reason}"
        reason = f"Not quite: you picked {pick} ({option.text}). {option.reason}"
        if reveal:
            reason += f" The answer is {described(min(correct), why=False)}."
        return "failed", reason
    missing = sorted(correct - set(chosen))
    extra = [p for p in chosen if p not in correct]
    belongs = [p for p in chosen if p in correct]
    if not missing and not extra:
        why = " ".join(f"{p}: {question.options[options.index(p)].reason}" for p in chosen)
        return "passed", f"Right: {', '.join(chosen)}. {why}"
    parts = [f"You picked {', '.join(chosen)}."]
    if belongs:
        parts.append("Belongs: " + " ".join(described(p) for p in belongs))
    if extra:
        parts.append("Does not belong: " + " ".join(described(p) for p in extra))
    if missing:
        many = len(missing) > 1
        options_apply = f"option{'s' if many else ''} {'that ' if reveal else ''}also appl{'y' if many else 'ies'}"
        if reveal:
            parts.append(
                f"Missing {len(missing)} {options_apply}: " + ", ".join(described(p, why=False) for p in missing) + "."
            )
        else:  # counted, not named: naming them would hand over the answer before the due date
            parts.append(f"{len(missing)} more {options_apply}.")
    return "failed", " ".join(parts)


def _numeric(question: NumericQuestion, given: Any, reveal: bool) -> tuple[CheckStatus, str]:
    if given is None:
        return "failed", f"Not answered: give {NUMBER_FORM}."
    value = read_number(given)
    if isinstance(value, str):
        return "failed", f"{shown_answer(given)} {value}; give {NUMBER_FORM}."
    key = float(question.answer)  # a number: a quiz with params is graded as a learner's variant (engine.variants)
    if abs(value - key) <= question.tolerance:
        return "passed", f"Right: {value:g} is within {question.tolerance:g} of {key:g}. {question.reason_correct}"
    answer = f" The answer is {key:g} (within {question.tolerance:g})." if reveal else ""
    for mistake in question.mistakes:
        if abs(value - float(mistake.value)) <= mistake.tolerance:
            return "failed", f"Not quite: {value:g}. {mistake.reason}{answer}"
    return "failed", (
        f"Not quite: {value:g} is not within {question.tolerance:g} of the answer. {question.reason_wrong}{answer}"
    )


class QuestionForm(Struct, frozen=True):
    """What an answer to one question must look like: ``type`` (single, multiple, numeric) and, for a choice,
    how many options it has. Nothing of its answer key."""

    id: str
    type: str
    options: int = 0


class QuizForm(Struct, frozen=True):
    """A quiz as a handout holds it: its id, title and the form of each question's answer, with no answer key.

    ``grader release`` writes it (``quiz_form``); ``check_quiz_form`` reads a learner's answers against it.
    """

    id: str
    title: str
    questions: tuple[QuestionForm, ...]

    @classmethod
    def from_data(cls, data: Any) -> QuizForm:
        """A form read back from its plain data; ``ValueError`` when the data is not one."""
        try:
            questions = tuple(
                QuestionForm(id=str(q["id"]), type=str(q["type"]), options=int(q.get("options", 0)))
                for q in data["questions"]
            )
            form = cls(id=str(data["id"]), title=str(data.get("title", "")), questions=questions)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"not a quiz form: {exc!r}") from None
        for question in questions:
            if question.type not in ("single", "multiple", "numeric") or not (
                question.type == "numeric" or 2 <= question.options <= 26
            ):
                raise ValueError(f"not a quiz form: question {question.id!r}")
        return form


def quiz_form(quiz: QuizExercise) -> dict[str, Any]:
    """The plain data of ``quiz``'s form, for a handout: ids, question types and option counts, no answer key."""
    questions: list[dict[str, Any]] = []
    for question in quiz.questions:
        if question.type == "numeric":
            questions.append({"id": question.id, "type": "numeric"})
        else:
            questions.append({"id": question.id, "type": question.type, "options": len(question.options)})
    return {"id": quiz.id, "title": quiz.title, "questions": questions}


def check_quiz_form(form: QuizForm, answers: Any, problem: str | None = None) -> ExerciseResult:
    """Whether each of the learner's answers to ``form``'s quiz is read and of the right form, without grading it.

    A handout has no answer key, so nothing here can say whether an answer is right: a question passes when
    its answer is read (the options it picks, or its number), and fails when it is missing or of another form.
    The quiz scores nothing here (0 of 0 points); it is graded when the work is handed in.
    """
    later = "whether the answers are right is known when your work is graded, not here"
    if problem is not None or not isinstance(answers, dict):
        why = (
            f"Your answers could not be read: {problem}"
            if problem is not None
            else f"The answers under '{form.id}' must map question ids to answers, one per line as "
            "'question-id: answer'."
        )
        status: ExerciseStatus = "error"
        checks = [_form_result(q.id, "error", "Not read: see the quiz's reason.") for q in form.questions]
        return ExerciseResult(
            id=form.id,
            title=form.title,
            kind="quiz",
            status=status,
            score=0.0,
            max_score=0.0,
            reason=why,
            checks=checks,
        )
    checks = []
    for question in form.questions:
        given = answers.get(question.id)
        if question.type == "numeric":
            value = read_number(given) if given is not None else f"Not answered: give {NUMBER_FORM}."
            if isinstance(value, str):
                reason = value if given is None else f"{shown_answer(given)} {value}; give {NUMBER_FORM}."
                checks.append(_form_result(question.id, "failed", reason))
            else:
                checks.append(_form_result(question.id, "passed", f"Read: the number {value:g}."))
            continue
        options = letters(question.options)
        chosen = read_choice_form(given, options, question.type == "multiple")
        if isinstance(chosen, str):
            checks.append(_form_result(question.id, "failed", chosen))
        else:
            picked = "option" if len(chosen) == 1 else "options"
            checks.append(
                _form_result(question.id, "passed", f"Read: {picked} {', '.join(chosen)}, among {', '.join(options)}.")
            )
    read = sum(check.status == "passed" for check in checks)
    reason = f"{read} of {len(checks)} answers read in the form their question asks for; {later}."
    unknown = sorted(str(key) for key in answers if key not in {q.id for q in form.questions})
    if unknown:
        reason += (
            f" Ignored unknown question ids: {listed([shown_answer(u) for u in unknown])} (the questions are "
            f"{', '.join(q.id for q in form.questions)})."
        )
    return ExerciseResult(
        id=form.id,
        title=form.title,
        kind="quiz",
        status="passed" if read == len(checks) else "failed",
        score=0.0,
        max_score=0.0,
        reason=reason,
        checks=checks,
    )


def _form_result(question_id: str, status: CheckStatus, reason: str) -> CheckResult:
    return CheckResult(id=question_id, status=status, score=0.0, max_score=0.0, visibility="public", reason=reason)
