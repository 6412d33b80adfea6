"""Quiz item statistics: how each question of each quiz behaved across the class.

``quiz_items`` turns every learner's report into one ``QuestionStat`` per
question; ``format_items_csv`` writes them as ``quiz-items.csv``, and
``grader.batch.summary`` and ``grader.batch.html`` show them in
``summary.md`` and ``report.html``. The definitions, which
``docs/batch.md`` repeats for instructors:

- A learner *answered* a question when their quiz was graded (the answers
  file was read and had the quiz's section) and it held an answer to that
  question, readable or not. Only they are counted for that question.
  Learners the grader failed on are left out, as everywhere in the summary.
- *Facility*: the share of those who answered who got the question right.
- *Discrimination*: the point-biserial correlation, over those who answered,
  between the points scored on the question and the rest-score, the learner's
  score on the same quiz minus the question's points. It is not defined when
  fewer than two learners answered, or when either the question's points or
  the rest-scores are the same for all of them.
- *Option shares*: for a choice question, the share of those who answered
  who picked each option (on a multiple-choice question a learner picks
  several, so the shares add up to more than one). The *top group* is the
  third of those who answered with the highest rest-scores: the first
  ``ceil(n / 3)`` by rest-score, with every learner tied with the last of them.
- Flags: an option nobody who answered picked is ``never chosen`` (when
  someone answered). A wrong option is
  ``chosen by strong learners`` when its share in the top group is above
  ``STRONG_SHARE``, or at least the share there of the correct option (of
  the least picked correct option, on a multiple-choice question), and above
  zero. That flag needs a top group that is told apart from the others: at
  least three learners answered and their rest-scores differ.

Every sum is one pass over the learners, so a class of thousands takes a
fraction of a second.
"""

from __future__ import annotations

import csv
import io
import math
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from grader.batch.gradebook import format_points, inert_cell
from grader.results import CheckResult, Report
from grader.spec.models import ChoiceQuestion, NumericQuestion, QuizExercise

__all__ = [
    "ITEMS_NOTE",
    "NEVER_CHOSEN",
    "STRONG_CHOSEN",
    "STRONG_SHARE",
    "OptionStat",
    "QuestionStat",
    "format_items_csv",
    "quiz_items",
]

STRONG_SHARE = 0.4
NEVER_CHOSEN = "never chosen"
STRONG_CHOSEN = "chosen by strong learners"
ITEMS_NOTE = (
    "Among the learners who answered each question: facility is the share who got it right; discrimination is "
    "the correlation (point-biserial) of the question's points with the rest of the learner's score on the quiz, "
    "'-' when either is the same for everyone or fewer than two answered; each option's share counts who picked "
    "it, overall and in the top third by that rest-score (learners tied with its last one included). "
    "A wrong option is flagged when the top third picked it at least as often as the "
    f"correct one, or more than {100 * STRONG_SHARE:.0f}% of them did."
)


@dataclass
class OptionStat:
    """One option of a choice question: how many of those who answered picked it, overall and in the top group."""

    letter: str
    text: str
    correct: bool
    chosen: int = 0
    top_chosen: int = 0
    flags: list[str] = field(default_factory=list)


@dataclass
class QuestionStat:
    """One quiz question: who answered, who got it right, its discrimination and, for a choice question, options."""

    exercise: str
    question: str
    type: str
    answered: int = 0
    right: int = 0
    top: int = 0
    discrimination: float | None = None
    options: list[OptionStat] = field(default_factory=list)

    @property
    def facility(self) -> float | None:
        return self.right / self.answered if self.answered else None

    def share(self, option: OptionStat) -> float:
        """The share of those who answered who picked ``option``."""
        return option.chosen / self.answered if self.answered else 0.0

    def top_share(self, option: OptionStat) -> float | None:
        """The share of the top group who picked ``option``; ``None`` when there is no top group."""
        return option.top_chosen / self.top if self.top else None


def quiz_items(
    reports: dict[str, Report], quizzes: Iterable[object], *, left_out: Sequence[str] = ()
) -> list[QuestionStat] | None:
    """Statistics of every question of the quizzes among ``quizzes`` (other exercises are skipped), in spec order,
    over ``reports`` (learner name to report) but for the learners in ``left_out``; ``None`` when there is no quiz."""
    found = [quiz for quiz in quizzes if isinstance(quiz, QuizExercise)]
    if not found:
        return None
    skip = set(left_out)
    counted = [report for name, report in sorted(reports.items()) if name not in skip]
    stats: list[QuestionStat] = []
    for quiz in found:
        graded = []  # per learner: the quiz's score and its checks by question id
        for report in counted:
            exercise = next((e for e in report.exercises if e.id == quiz.id), None)
            if exercise is not None and exercise.status in ("passed", "failed"):
                graded.append((exercise.score, {check.id: check for check in exercise.checks}))
        for question in quiz.questions:
            answers = [(total, by_id[question.id]) for total, by_id in graded if _answered(by_id.get(question.id))]
            stats.append(_question(quiz.id, question, answers))
    return stats


def _answered(check: CheckResult | None) -> bool:
    return check is not None and check.status in ("passed", "failed") and check.picked is not None


def _question(
    exercise_id: str, question: ChoiceQuestion | NumericQuestion, answers: list[tuple[float, CheckResult]]
) -> QuestionStat:
    stat = QuestionStat(exercise=exercise_id, question=question.id, type=question.type)
    stat.answered = len(answers)
    stat.right = sum(check.status == "passed" for _, check in answers)
    points = [check.score for _, check in answers]
    rest = [total - check.score for total, check in answers]
    stat.discrimination = _correlation(points, rest)
    if not isinstance(question, ChoiceQuestion):
        return stat
    stat.options = [
        OptionStat(letter=letter, text=option.text, correct=option.correct)
        for letter, option in zip(string.ascii_uppercase, question.options, strict=False)
    ]
    by_letter = {option.letter: option for option in stat.options}
    # Strong learners are told apart only when there are a few and their rest-scores differ.
    top = _top_group(rest) if len(answers) >= 3 and min(rest) < max(rest) else set()
    stat.top = len(top)
    for index, (_, check) in enumerate(answers):
        for letter in check.picked or ():
            if letter in by_letter:
                by_letter[letter].chosen += 1
                by_letter[letter].top_chosen += index in top
    _flag(stat)
    return stat


def _top_group(rest: list[float]) -> set[int]:
    """The indexes of the first ``ceil(n / 3)`` by rest-score, and of every learner tied with the last of them."""
    if not rest:
        return set()
    cut = sorted(rest, reverse=True)[math.ceil(len(rest) / 3) - 1]
    return {index for index, value in enumerate(rest) if value >= cut}


def _flag(stat: QuestionStat) -> None:
    if not stat.answered:  # no option was passed over by anyone
        return
    correct = [stat.top_share(o) or 0.0 for o in stat.options if o.correct]
    bar = min(correct, default=0.0)
    for option in stat.options:
        if option.chosen == 0:
            option.flags.append(NEVER_CHOSEN)
        share = stat.top_share(option)
        if option.correct or share is None or share == 0:
            continue
        if share > STRONG_SHARE or share >= bar:
            option.flags.append(STRONG_CHOSEN)


def _correlation(xs: list[float], ys: list[float]) -> float | None:
    """Pearson's correlation of ``xs`` and ``ys`` (the point-biserial one when ``xs`` takes two values), or ``None``
    when fewer than two pairs or either has no variance."""
    n = len(xs)
    if n < 2:
        return None
    mean_x, mean_y = math.fsum(xs) / n, math.fsum(ys) / n
    sxx = math.fsum((x - mean_x) ** 2 for x in xs)
    syy = math.fsum((y - mean_y) ** 2 for y in ys)
    # Points are sums of spec values, so "no variance" is equality up to rounding in the last places.
    if sxx <= 1e-12 * max(1.0, mean_x * mean_x) * n or syy <= 1e-12 * max(1.0, mean_y * mean_y) * n:
        return None
    sxy = math.fsum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def format_share(share: float | None) -> str:
    """``67%``, or ``-`` when there is no share to give."""
    return "-" if share is None else f"{100 * share:.0f}%"


def format_discrimination(value: float | None) -> str:
    """``0.58``, or ``-`` when it is not defined."""
    return "-" if value is None else f"{value:.2f}"


_HEADER = (
    "exercise",
    "question",
    "type",
    "answered",
    "right",
    "facility",
    "discrimination",
    "option",
    "option_text",
    "correct",
    "chosen",
    "share",
    "top_group",
    "top_chosen",
    "top_share",
    "flags",
)


def format_items_csv(stats: list[QuestionStat]) -> str:
    """``quiz-items.csv``: one row per option of each choice question, one row per numeric question (option cells
    empty). Shares are fractions to four decimals; undefined values are empty cells. Text goes through the
    gradebook's ``inert_cell``: option texts are the author's, but a cell must never start a formula."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(_HEADER)
    for stat in stats:
        head = [
            inert_cell(stat.exercise),
            inert_cell(stat.question),
            stat.type,
            str(stat.answered),
            str(stat.right),
            _fraction(stat.facility),
            _fraction(stat.discrimination),
        ]
        if not stat.options:
            writer.writerow([*head, *[""] * (len(_HEADER) - len(head))])
        for option in stat.options:
            writer.writerow(
                [
                    *head,
                    option.letter,
                    inert_cell(option.text),
                    "yes" if option.correct else "no",
                    str(option.chosen),
                    _fraction(stat.share(option) if stat.answered else None),
                    str(stat.top),
                    str(option.top_chosen),
                    _fraction(stat.top_share(option)),
                    inert_cell("; ".join(option.flags)),
                ]
            )
    return out.getvalue()


def _fraction(value: float | None) -> str:
    return "" if value is None else format_points(value)
