"""What an exercise spec may say, as spec records (validated by pydantic, see ``grader.record``).

Three kinds, told apart by ``kind``: ``implementation`` (also written
``witness``) names entry functions, case sets and checks; ``quiz`` names
questions with a reason for every option; ``assignment`` groups exercises.
Every model forbids unknown keys, so a typo is an error with a location.
"""

from __future__ import annotations

import ast
import re
from typing import Annotated, Any, Literal, cast

from grader.checks.base import Visibility
from grader.checks.cases import CaseGenerator
from grader.checks.given import GivenFunction
from grader.checks.registry import CheckSpec
from grader.record import ConfigDict, Field, Record, field_validator, model_validator

__all__ = [
    "Assignment",
    "EntrySpec",
    "Exercise",
    "ExpectedException",
    "ImplementationExercise",
    "KnownWrong",
    "QuizExercise",
    "QuizReveal",
    "Spec",
]

_ID = r"^[a-z0-9]+(-[a-z0-9]+)*$"
ArgKind = Literal["float_array", "int_array", "bool_array", "number_array", "float", "int", "bool", "callable", "any"]
# What quiz feedback on a wrong answer says beyond the learner's own picks; named like a check's ``reveal``
# (``full`` shows everything). There is no due date at grading time: a quiz says ``picked`` while learners can
# still resubmit, and ``full`` once the due date has passed and the class is graded again.
QuizReveal = Literal["full", "picked"]
# On Gradescope, when learners see an exercise's ``hidden`` checks: once grades are published, or never.
GradescopeHidden = Literal["after_published", "hidden"]
_GRADESCOPE_HIDDEN = (
    "on Gradescope, when learners see this exercise's hidden checks and their reasons: "
    "'after_published' (once the instructor publishes grades) or 'hidden' (never; instructors only)"
)


class _Strict(Record):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class EntrySpec(_Strict):
    """One function the learner writes, or (``kind: class``) one class, exercised by script cases."""

    kind: Literal["function", "class"] = Field(
        default="function",
        description="'class': the entry is a class, its signature the constructor's, its cases scripts "
        "(grader.checks.scripts)",
    )
    signature: str = Field(description="as the learner sees it, e.g. 'softmax(z, axis=-1)'")
    methods: list[str] = Field(
        default_factory=list,
        description="a class's methods as the learner sees them, e.g. 'update(x)': what scripts may call, and the stub",
    )
    attributes: list[str] = Field(
        default_factory=list,
        description="a class's attributes or properties that scripts may read, e.g. 'mean' (stubbed as properties)",
    )
    args: dict[str, ArgKind] = Field(default_factory=dict, description="argument names in order, with their kinds")
    returns: str = Field(default="a NumPy array of floats", description="what it returns, in words")
    output: str = Field(
        default="result",
        pattern=r"^[A-Za-z][A-Za-z -]{0,39}$",
        description="what reasons call the returned values: weights, probabilities, loss; by default result",
    )


class PublicExample(_Strict):
    """An example shown to learners by ``grader show`` and in the handout."""

    call: str
    result: str
    note: str = ""


class ExpectedException(_Strict):
    """The exception a known-wrong solution raises, as a learner making the same mistake would raise it."""

    type: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="exception class name, e.g. TypeError")
    message: str = Field(description="a regular expression the learner's exception message must contain a match of")

    @field_validator("message")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return value


class KnownWrong(_Strict):
    """A known-wrong solution: the checks that must catch it, and the misconception it embodies."""

    id: str = Field(pattern=_ID)
    path: str = Field(description="relative to the project root (the folder holding exercises/)")
    misconception: str = Field(min_length=1, description="told to a learner whose output matches this solution's")
    must_fail: list[str] = Field(min_length=1, description="ids of checks that must catch it")
    raises: ExpectedException | None = Field(
        default=None,
        description="where it raises: a learner's exception matches when its type is this and its message matches "
        "this pattern (without it, type and message must equal the solution's own)",
    )


class ImplementationExercise(_Strict):
    id: str = Field(pattern=_ID)
    kind: Literal["implementation", "witness"]
    title: str
    lesson: str = ""
    prompt: str
    entries: dict[str, EntrySpec] = Field(min_length=1)
    examples: list[PublicExample] = Field(default_factory=list)
    cases: dict[str, list[CaseGenerator]] = Field(default_factory=dict)
    checks: list[CheckSpec] = Field(min_length=1)
    reference_solution: str | None = Field(
        default=None,
        description="path of a solution that passes every check; it also gives every expected value the checks "
        "compare with (run in a learner process, never in the grader's)",
    )
    reference_answers: str | None = Field(
        default=None,
        description="in a released handout, in place of reference_solution: the reference's answers to the public "
        "checks' calls (written by grader release)",
    )
    functions: str | None = Field(
        default=None,
        description="path of a public Python file whose top-level functions cases may hand to an entry that takes "
        "a function ('f: softmax', or '{function: linear, A: [[1.0]]}' to fix keyword arguments)",
    )
    given_functions: list[GivenFunction] = Field(
        default_factory=list,
        description="given functions written as expressions of the relation language, "
        "'{name: line, params: [x, m, c], expression: \"m * x + c\"}': cases hand them to an entry that takes a "
        "function like those of the functions: file, and no Python file is needed",
    )
    scaffold: str = Field(
        default="",
        description="Python code the learner receives: written into the handout's stub (an entry it defines is "
        "not stubbed again) and shown with the prompt; its lines are public, so the leak scan lets them through",
    )
    known_wrong: list[KnownWrong] = Field(default_factory=list)
    time_limit: float = Field(default=2.0, gt=0, le=60, description="seconds of wall clock per call")
    gate: str | None = Field(
        default=None,
        description="id of the exercise's guard check, usually 'responds-to-input' on hidden inputs: while it fails, "
        "the other checks of its entry earn nothing, because properties such as 'non-negative' hold for code that "
        "computes nothing (constant, uniform or tabulated outputs); once it holds, every check that held earns its "
        "points (grader.engine.credit)",
    )
    gradescope_hidden: GradescopeHidden = Field(default="after_published", description=_GRADESCOPE_HIDDEN)
    entry_file: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*\.(py|ipynb)$",
        description="the file to grade when several files of a submission define an entry, e.g. 'softmax.py'; "
        "without it, the most recently modified of them is graded (grader.submission.entry_files), "
        "and the result says so",
    )

    @field_validator("scaffold")
    @classmethod
    def _scaffold_parses(cls, value: str) -> str:
        try:
            ast.parse(value)
        except SyntaxError as exc:
            raise ValueError(f"the scaffold is not Python that parses: {exc.msg} (its line {exc.lineno})") from None
        except (ValueError, RecursionError, MemoryError):
            raise ValueError("the scaffold could not be read as Python") from None
        return value

    @model_validator(mode="after")
    def _references_resolve(self) -> ImplementationExercise:
        """Every name the spec's parts give one another resolves (``grader.spec.crossrefs``)."""
        from grader.spec.crossrefs import first_problem

        problem = first_problem(self)
        if problem is not None:
            raise problem
        return self

    @property
    def max_score(self) -> float:
        return float(sum(check.points for check in self.checks))

    def entry_of(self, check: Any) -> str:
        return check.entry or next(iter(self.entries))

    def with_output_nouns(self) -> ImplementationExercise:
        """This exercise with each check that names no ``noun`` itself given its entry's ``output`` noun.

        The loader's finishing step, once the spec is valid, so reasons never
        need the exercise to name what a check's entry returns.
        """
        checks = [
            check
            if check.noun is not None
            else check.model_copy(update={"noun": self.entries[self.entry_of(check)].output})
            for check in self.checks
        ]
        return cast(ImplementationExercise, self.model_copy(update={"checks": checks}))


class Option(_Strict):
    text: str
    correct: bool = False
    reason: str = Field(min_length=1, description="why this option is right, or the misconception behind it")


class _Question(_Strict):
    id: str = Field(pattern=_ID)
    prompt: str
    points: float = Field(default=1.0, gt=0)
    reveal: QuizReveal | None = Field(default=None, description="this question's reveal, replacing the quiz's")


class ChoiceQuestion(_Question):
    type: Literal["single", "multiple"]
    options: list[Option] = Field(min_length=2, max_length=26)

    @model_validator(mode="after")
    def _has_correct(self) -> ChoiceQuestion:
        correct = sum(option.correct for option in self.options)
        if self.type == "single" and correct != 1:
            raise ValueError(f"a single-choice question needs exactly one correct option, not {correct}")
        if self.type == "multiple" and correct < 1:
            raise ValueError("a multiple-choice question needs at least one correct option")
        return self


class NumericMistake(_Strict):
    value: float
    tolerance: float = Field(default=0.001, ge=0)
    reason: str = Field(min_length=1)


class NumericQuestion(_Question):
    type: Literal["numeric"]
    answer: float
    tolerance: float = Field(ge=0)
    reason_correct: str = Field(min_length=1)
    reason_wrong: str = Field(min_length=1, description="for any other number: how to get the right one")
    mistakes: list[NumericMistake] = Field(default_factory=list, description="common wrong numbers and why")


Question = Annotated[ChoiceQuestion | NumericQuestion, Field(discriminator="type")]


class QuizExercise(_Strict):
    id: str = Field(pattern=_ID)
    kind: Literal["quiz"]
    title: str
    lesson: str = ""
    prompt: str = ""
    visibility: Visibility = "public"
    reveal: QuizReveal = Field(
        default="picked",
        description="what feedback on a wrong answer names beyond the options the learner picked: 'picked' counts "
        "the correct options left out without naming them; 'full' names them, and the right answer of a single-choice "
        "or numeric question. Set 'full' once the due date has passed",
    )
    gradescope_hidden: GradescopeHidden = Field(default="after_published", description=_GRADESCOPE_HIDDEN)
    questions: list[Question] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> QuizExercise:
        ids = [q.id for q in self.questions]
        if len(set(ids)) != len(ids):
            raise ValueError("question ids must be unique")
        return self

    @property
    def max_score(self) -> float:
        return float(sum(q.points for q in self.questions))


class Assignment(_Strict):
    id: str = Field(pattern=_ID)
    kind: Literal["assignment"]
    title: str
    exercises: list[str] = Field(min_length=1)


Exercise = ImplementationExercise | QuizExercise
Spec = Annotated[ImplementationExercise | QuizExercise | Assignment, Field(discriminator="kind")]
