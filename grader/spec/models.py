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
from grader.spec.params import ParamSpec, check_case_params, check_quiz_params, number_or_expression

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


_EXERCISE_ID = "kebab-case id of the exercise; it appears in reports and gradebooks"
_TITLE = "a short title, shown by grader list"
_LESSON = "optional: what it follows, e.g. the id of an earlier exercise"


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

    call: str = Field(description="a call of an entry, as the learner would write it")
    result: str = Field(description="what it returns; plain values are checked against the reference by validate")
    note: str = Field(default="", description="a remark shown beside the example")


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

    id: str = Field(pattern=_ID, description="kebab-case id of this known-wrong solution")
    path: str = Field(description="relative to the project root (the folder holding exercises/)")
    misconception: str = Field(min_length=1, description="told to a learner whose output matches this solution's")
    must_fail: list[str] = Field(min_length=1, description="ids of checks that must catch it")
    raises: ExpectedException | None = Field(
        default=None,
        description="where it raises: a learner's exception matches when its type is this and its message matches "
        "this pattern (without it, type and message must equal the solution's own)",
    )


class ImplementationExercise(_Strict):
    """An exercise where the learner writes functions (the entries), graded by property checks.

    ``kind: witness`` is one whose entry returns a counterexample, judged by a ``witness`` check.
    """

    id: str = Field(pattern=_ID, description=_EXERCISE_ID)
    kind: Literal["implementation", "witness"] = Field(
        description="implementation, or witness: the entry returns a counterexample"
    )
    title: str = Field(description=_TITLE)
    lesson: str = Field(default="", description=_LESSON)
    prompt: str = Field(description="the task as the learner reads it")
    entries: dict[str, EntrySpec] = Field(min_length=1, description="the functions the learner writes, by name")
    examples: list[PublicExample] = Field(default_factory=list, description="public examples shown with the prompt")
    cases: dict[str, list[CaseGenerator]] = Field(
        default_factory=dict, description="named case sets the checks run on, each a list of generators"
    )
    checks: list[CheckSpec] = Field(min_length=1, description="the property checks, each with an id and a property")
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
    known_wrong: list[KnownWrong] = Field(
        default_factory=list, description="wrong solutions that grader validate proves the checks catch"
    )
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

    params: dict[str, ParamSpec] = Field(
        default_factory=dict,
        description="values drawn for each learner, as a quiz's: case values and where: values written "
        '{expr: "[a, 2 * a]"} are computed from them, and the prompt writes {a} (grader.spec.params)',
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
        check_case_params(self)
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
    """One option of a choice question."""

    text: str = Field(description="the option as the learner reads it")
    correct: bool = Field(default=False, description="whether picking it is right")
    reason: str = Field(min_length=1, description="why this option is right, or the misconception behind it")


class _Question(_Strict):
    id: str = Field(pattern=_ID, description="kebab-case id of the question; the key of its answer")
    prompt: str = Field(description="the question as the learner reads it")
    points: float = Field(default=1.0, gt=0, description="what the question is worth; default 1")
    reveal: QuizReveal | None = Field(default=None, description="this question's reveal, replacing the quiz's")


class ChoiceQuestion(_Question):
    """A question answered by picking options: one (single) or several (multiple)."""

    type: Literal["single", "multiple"] = Field(description="single: exactly one correct option; multiple: one or more")
    options: list[Option] = Field(min_length=2, max_length=26, description="the options, 2 to 26, each with a reason")

    @model_validator(mode="after")
    def _has_correct(self) -> ChoiceQuestion:
        correct = sum(option.correct for option in self.options)
        if self.type == "single" and correct != 1:
            raise ValueError(f"a single-choice question needs exactly one correct option, not {correct}")
        if self.type == "multiple" and correct < 1:
            raise ValueError("a multiple-choice question needs at least one correct option")
        return self


# A number, or (in a quiz with params:) an expression of the params, such as "a * n" (grader.spec.params).
NumberOrExpression = float | str


class NumericMistake(_Strict):
    """A common wrong number and the misconception behind it."""

    value: NumberOrExpression = Field(description="the wrong number (in a quiz with params, or an expression of them)")
    tolerance: float = Field(default=0.001, ge=0, description="how far from value an answer still counts as it")
    reason: str = Field(min_length=1, description="told to a learner who answers it")

    @field_validator("value")
    @classmethod
    def _number_or_expression(cls, value: NumberOrExpression) -> NumberOrExpression:
        return number_or_expression(value)


class NumericQuestion(_Question):
    """A question answered with a number, right within a tolerance."""

    type: Literal["numeric"] = Field(description="numeric: the answer is a number")
    answer: NumberOrExpression = Field(description="the right number (in a quiz with params, or an expression of them)")
    tolerance: float = Field(ge=0, description="how far from answer an answer is still right")
    reason_correct: str = Field(min_length=1, description="told to a learner who answers right")
    reason_wrong: str = Field(min_length=1, description="for any other number: how to get the right one")
    mistakes: list[NumericMistake] = Field(default_factory=list, description="common wrong numbers and why")

    @field_validator("answer")
    @classmethod
    def _number_or_expression(cls, value: NumberOrExpression) -> NumberOrExpression:
        return number_or_expression(value)


Question = Annotated[ChoiceQuestion | NumericQuestion, Field(discriminator="type")]


class QuizExercise(_Strict):
    """A quiz: questions with options or a numeric answer, each option and mistake with its reason."""

    id: str = Field(pattern=_ID, description=_EXERCISE_ID)
    kind: Literal["quiz"] = Field(description="quiz")
    title: str = Field(description=_TITLE)
    lesson: str = Field(default="", description=_LESSON)
    prompt: str = Field(default="", description="an introduction shown before the questions")
    visibility: Visibility = Field(default="public", description="as a check's visibility, for the whole quiz")
    reveal: QuizReveal = Field(
        default="picked",
        description="what feedback on a wrong answer names beyond the options the learner picked: 'picked' counts "
        "the correct options left out without naming them; 'full' names them, and the right answer of a single-choice "
        "or numeric question. Set 'full' once the due date has passed",
    )
    gradescope_hidden: GradescopeHidden = Field(default="after_published", description=_GRADESCOPE_HIDDEN)
    questions: list[Question] = Field(min_length=1, description="the questions, each with a unique id")
    params: dict[str, ParamSpec] = Field(
        default_factory=dict,
        description="values drawn for each learner, e.g. '{a: {uniform: [1, 5], round: 2}, n: {integers: [3, 9]}}': "
        "texts write {a} where the learner's value goes, numeric answers may be expressions of them "
        "(grader.spec.params)",
    )

    @model_validator(mode="after")
    def _unique(self) -> QuizExercise:
        ids = [q.id for q in self.questions]
        if len(set(ids)) != len(ids):
            raise ValueError("question ids must be unique")
        check_quiz_params(self)
        return self

    @property
    def max_score(self) -> float:
        return float(sum(q.points for q in self.questions))


class Assignment(_Strict):
    """A group of exercises graded together (grader grade --assignment, grader batch)."""

    id: str = Field(pattern=_ID, description="kebab-case id of the assignment")
    kind: Literal["assignment"] = Field(description="assignment")
    title: str = Field(description=_TITLE)
    exercises: list[str] = Field(min_length=1, description="ids of its exercises")


Exercise = ImplementationExercise | QuizExercise
Spec = Annotated[ImplementationExercise | QuizExercise | Assignment, Field(discriminator="kind")]
