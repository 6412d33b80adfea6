"""The contract every check follows, and the pieces checks share.

A check is a spec record (``grader.record``): its fields are what a spec
may configure (validated by pydantic, and ``extra="forbid"`` makes a typo an
error), its methods are the property.
The engine (``grader.engine.call_loop``) drives every check the same way:

1. ``plan(case)`` lists the calls one case needs (most need one; a shift
   invariance check needs two). All calls of all cases go to the learner
   process in one round trip.
2. Calls that did not return a value (raised, timed out, crashed) are
   judged by the engine itself; ``judge(case, outcomes)`` sees only calls
   that returned numbers, as plain decoded arrays, and returns a
   ``Finding`` (what came back, what was expected) or ``None``.
3. ``describe()`` is the property in one sentence; ``verified(cases)`` says
   what a pass verified.

Judging happens in the grader's process only; a learner process never sees
a reference value, a tolerance or a hidden check.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Literal

import numpy as np
from msgspec import Struct, field

from grader.checks.cases import Case
from grader.checks.display import count_of, format_number
from grader.checks.numbers import nothing_judged
from grader.record import ConfigDict, Field, Record, field_validator
from grader.sandbox.calls import TrustedFunction
from grader.sandbox.outcomes import CallOutcome

__all__ = [
    "FAILURE_MODES",
    "FOLLOWS_INPUT",
    "ArrayCheck",
    "Call",
    "Check",
    "Compared",
    "FailureMode",
    "Finding",
    "Hint",
    "Premise",
    "TrustedFunction",
    "Visibility",
    "Item",
    "array_result",
    "extremes",
    "form_of",
    "picked",
    "structure_finding",
]

# Which value of a structured result a check judges: an index into a returned tuple, or a field of a returned dict.
Item = int | str

Visibility = Literal["public", "hidden", "after_due_date", "after_published"]
# How a failing case failed (``engine.failure_modes`` tells them apart); a check's hints are chosen by mode.
FailureMode = Literal["nan", "inf", "dtype", "shape", "exception", "timeout", "wrong-value"]
FAILURE_MODES: tuple[FailureMode, ...] = ("nan", "inf", "dtype", "shape", "exception", "timeout", "wrong-value")
# A float warning a hint's premise names: its kind, and optionally the NumPy function that raised it.
_WARNING = re.compile(r"^(overflow|invalid|divide)( in [a-z_][a-z0-9_]*)?$")


class Premise(Record):
    """What the failing case must show for a hint to be true of the learner's code; every key given must hold.

    Each is tested on the failing case's own data (``engine.failure_modes``):
    the failure's mode; the known mistake the learner's answers agree with;
    the float warning, the exception or the change to an input their call made.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    mode: list[FailureMode] = Field(default_factory=list, description="the failure is of one of these modes")
    like: str | None = Field(
        default=None,
        description="the id of a known_wrong solution whose answers the learner's equal, within the check's "
        "tolerance, on every case the check fails (and which fails them too)",
    )
    warned: list[str] = Field(
        default_factory=list,
        description="the learner's call raised one of these NumPy float warnings: overflow, invalid or divide, "
        "alone or with the function NumPy names (overflow in exp)",
    )

    @field_validator("warned")
    @classmethod
    def _float_warnings(cls, value: list[str]) -> list[str]:
        for item in value:
            if not _WARNING.match(item):
                raise ValueError(
                    f"{item!r} is not a float warning: write overflow, invalid or divide, or e.g. 'overflow in exp'"
                )
        return value

    raised: str | None = Field(
        default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="the learner's call raised this exception"
    )
    changed: list[str] = Field(default_factory=list, description="the learner's call wrote into one of these arguments")

    def shows_something(self) -> bool:
        """Whether it asks more than that the values are wrong (a wrong value alone shows no premise)."""
        return bool(self.like or self.warned or self.raised or self.changed or set(self.mode) - {"wrong-value"})


class Hint(Record):
    """A hint and the premise under which it is true: shown only when the failing case shows ``when``."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    text: str = Field(min_length=1, description="what to change, in a sentence")
    when: Premise = Field(description="what the failing case must show for the hint to be true of the code")

    @field_validator("when")
    @classmethod
    def _shows_a_premise(cls, value: Premise) -> Premise:
        # ``value`` is the validator's model of a Premise, with its fields but not its methods.
        if not Premise.shows_something(value):
            raise ValueError(
                "a hint's premise must show more than a wrong value: give `like` (a known_wrong id), `warned`, "
                "`raised`, `changed`, or a `mode` other than wrong-value"
            )
        return value


class Call(Struct):
    """One call of a function: positional arguments in signature order.

    ``on`` says who answers it: the learner's process (an entry function),
    or the process running the exercise's own reference solution (the
    expected value of a learner's call, or a helper the reference defines).
    A check that needs an expected value plans the reference's twin of its
    call next to the learner's and finds its outcome among its ``outcomes``.

    ``on_answer``: a reference call whose arguments are made from the
    learner's answer to the case's first call (``Check.answer_args``), asked
    once that answer is in: a witness is verified by the reference solution's
    own function applied to what the learner returned.
    """

    function: str
    args: dict[str, Any]
    return_inputs: bool = False
    on: Literal["learner", "reference"] = "learner"
    on_answer: bool = False


class Finding(Struct):
    """Why one case breaks the property: what came back and what was expected.

    ``extra[FOLLOWS_INPUT]``: the check is a guard and what it found is a wrong value, not an output that ignores
    its input (it saw the output follow the input on the rest of the case), so its failure withholds no credit.
    """

    got: str
    expected: str
    note: str = ""
    status: Literal["failed", "error", "timeout"] = "failed"
    extra: dict[str, Any] = field(default_factory=dict)


FOLLOWS_INPUT = "follows_input"


class Compared(Struct, frozen=True):
    """What a value check compared on one case: the learner's value, the expected one, and the tolerance used."""

    got: Any
    expected: Any
    rtol: float
    atol: float


class Check(Record):
    """Base of every property; subclasses set ``property`` to a Literal tag and implement ``judge``."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", description="stable kebab-case id stating the property")
    entry: str | None = Field(default=None, description="entry function checked; default: the exercise's first")
    cases: list[str] = Field(default_factory=list, description="names of the exercise's case sets to run")
    points: float = Field(default=1.0, gt=0, description="what the check is worth; default 1")
    visibility: Visibility = Field(
        default="hidden",
        description="public (in the handout, a learner can run it), hidden (the default), or on Gradescope "
        "after_due_date or after_published (when its result is shown)",
    )
    task: int | None = Field(
        default=None,
        ge=1,
        description="the numbered task of the instructions this check tests (Exercism's '## 1. ...'); "
        "give it only when the check tests that one task",
    )
    reveal: Literal["full", "property"] = Field(
        default="full", description="after grading, show the failing input and hint (full) or only the property"
    )
    hint: str = Field(
        default="", description="what to look at when this check fails with wrong values (or in the hint_modes)"
    )
    hint_modes: list[FailureMode] = Field(
        default=["wrong-value"],
        min_length=1,
        description="the failure modes `hint` fits: nan, inf, dtype, shape, exception, timeout, wrong-value",
    )
    hints: list[Hint] | dict[FailureMode, str] = Field(
        default_factory=list,
        description="hints, each with the premise (`when`) the failing case must show; the first that holds is "
        "shown (a mapping from failure mode to hint is the older form)",
    )
    description: str | None = Field(default=None, description="the property in one sentence, replacing the default")
    noun: str | None = Field(
        default=None, description="what the reason calls the entry's output; by default the entry's `output`"
    )
    time_limit: float | None = Field(
        default=None, gt=0, le=60, description="seconds of wall clock per call of this check; default: the exercise's"
    )

    wants_inputs_back: ClassVar[bool] = False
    expects_exception: ClassVar[bool] = False
    merge_calls: ClassVar[bool] = True  # False: identical calls really run twice (reproducibility checks)
    uses_reference: ClassVar[bool] = False  # True: it plans calls the exercise's reference solution answers
    plans_answer_calls: ClassVar[bool] = False  # True: some of them are made from the learner's answer (on_answer)

    def hint_list(self) -> list[Hint]:
        """Every hint of the check with its premise, in the order tried; ``hint`` and a mapping ``hints`` (the older
        forms) are premised on their failure modes alone."""
        if isinstance(self.hints, list):
            listed, modes = list(self.hints), list(self.hint_modes)
        else:
            listed = [_mode_hint(text, [mode]) for mode, text in self.hints.items()]
            modes = [mode for mode in self.hint_modes if mode not in self.hints]
        if self.hint and modes:
            listed.append(_mode_hint(self.hint, modes))
        return listed

    def hint_for(self, mode: FailureMode) -> str:
        """The first hint premised on this failure mode alone; empty when none is (an overflow hint helps no
        TypeError). Hints with other premises are chosen by ``engine.failure_modes.fitting_hint``."""
        for hint in self.hint_list():
            when = hint.when
            if mode in when.mode and not (when.like or when.warned or when.raised or when.changed):
                return hint.text
        return ""

    def describe(self, entry: str) -> str:
        """The property in one sentence."""
        return self.description or self.default_description(entry)

    def default_description(self, entry: str) -> str:
        raise NotImplementedError

    def wanted(self) -> str:
        """What a call should have given, said when it gave nothing to judge (it raised, crashed, returned
        something that is not numbers): by default a value; a check that asks for a particular form says so."""
        return "a returned value"

    def reference_functions(self) -> tuple[str, ...]:
        """Functions of the reference solution it calls by name, besides its ``reference:`` (checked at load)."""
        return ()

    def reads_structure(self) -> bool:
        """Whether it judges results that are dicts or hold strings itself; by default not: such a result is
        refused for it as a value that is not numbers (``sandbox.answers.numbers_only``), before ``judge``."""
        return False

    def calls_reference(self) -> bool:
        """Whether the check plans calls the exercise's reference solution answers (so it needs one, or its answers)."""
        return self.uses_reference or bool(self.reference_functions())

    def output(self) -> str:
        """The entry's output as reasons name it: ``the weights``, ``the loss``, ``the result``."""
        return f"the {self.noun or 'result'}"

    def plan(self, case: Case, entry: str) -> list[Call]:
        """The calls one case needs; by default the entry on the case's arguments."""
        return [Call(entry, case.args, return_inputs=self.wants_inputs_back)]

    def plan_in(self, case: Case, entry: str, parameters: Mapping[str, Mapping[str, str]]) -> list[Call]:
        """``plan``, for a check that also calls other entries.

        ``parameters``: each entry's parameters in signature order, each with the kind its ``args:``
        promise (``float_array``, ``int``, ...), which every argument the check computes must keep.
        """
        return self.plan(case, entry)

    def spec_problems(self, entry: str, signatures: Mapping[str, Mapping[str, bool]]) -> Iterable[tuple[str, str]]:
        """What this check names that the exercise lacks, as (message, key it is written in); by default nothing.

        ``signatures``: each entry's parameters, each with whether it has a default.
        """
        return ()

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        """A finding when the case breaks the property, else ``None``."""
        raise NotImplementedError

    def compared(self, case: Case, outcomes: list[CallOutcome]) -> Compared | None:
        """The values this check compared on a failing case, read for a relation that explains every failure
        (``engine.explanations``); ``None``, the default: it compares no learner value with an expected one."""
        return None

    def answer_args(self, case: Case, answer: CallOutcome) -> dict[str, Any] | None:
        """The arguments of the case's ``on_answer`` call, made from the learner's ``answer``; ``None``: not asked.

        Only checks that plan an ``on_answer`` call implement it; an answer the
        reference should not be shown (malformed, not finite) gives ``None``,
        and ``judge`` then finds the problem without the reference's view.
        """
        return None

    def verified(self, cases: list[Case]) -> str:
        """What a pass verified, e.g. ``on 40 inputs, including entries of magnitude 1e+300``."""
        return f"on {len(cases)} input{'s' if len(cases) != 1 else ''}{extremes(cases)}"


def _mode_hint(text: str, modes: list[FailureMode]) -> Hint:
    """A hint of the older forms, premised on its failure modes alone (its fields were validated with the check)."""
    when = Premise.construct_trusted({"mode": list(modes)})
    return typing.cast(Hint, Hint.construct_trusted({"text": text, "when": when}))


class ArrayCheck(Check):
    """A check of one call that must return a single array of real numbers (or, with ``item``, hold one there).

    ``judge`` turns anything else (a tuple, a non-numeric dtype, an empty
    array for inputs that are not empty) into a finding; subclasses
    implement ``judge_array`` on the float array.
    """

    item: Item | None = Field(
        default=None,
        description="the value judged when the entry returns several: an index into its tuple (0 for the first) or "
        "a field of its dict; default: the whole result, which must be one array",
    )

    def reads_structure(self) -> bool:
        return self.item is not None

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        got, problem = array_result(outcomes[0], self.item)
        if problem:
            return problem
        assert got is not None
        if nothing_judged([got], case.args):  # np.all of nothing is True: an empty result shows no property
            return Finding(got=f"an empty array of shape {got.shape}", expected=f"{self.output()} with values to judge")
        return self.judge_array(case, got, outcomes)

    def judge_array(self, case: Case, got: np.ndarray, outcomes: list[CallOutcome]) -> Finding | None:
        """A finding when ``got`` (the first call's array, as floats) breaks the property, else ``None``."""
        raise NotImplementedError


def extremes(cases: list[Case]) -> str:
    """``, including entries of magnitude 1e+300`` when the cases reach far from 1."""
    largest = max((case.size()[1] for case in cases), default=0.0)
    has_inf = any(
        isinstance(v, np.ndarray) and v.dtype.kind == "f" and np.isinf(v).any()
        for case in cases
        for v in case.args.values()
    )
    parts = []
    if largest >= 1e3:
        parts.append(f"entries of magnitude {format_number(largest)}")
    if has_inf:
        parts.append("-inf entries")
    return f", including {' and '.join(parts)}" if parts else ""


def array_result(outcome: CallOutcome, item: Item | None = None) -> tuple[np.ndarray | None, Finding | None]:
    """The single array a call returned (or its ``item``), or a finding saying why there is none."""
    label = ""
    if item is not None:
        found, problem = picked(outcome, item)
        if problem is not None:
            return None, problem
        value, label = found, f"{_label(item)}: "
    elif outcome.kind == "tuple":
        return None, Finding(
            got=f"a tuple of {count_of(len(outcome.values), 'value')}",
            expected="one array",
            note="Return the array itself, not a tuple.",
        )
    elif outcome.kind == "mapping":
        return None, Finding(got=form_of(outcome), expected="one array")
    else:
        value = outcome.item(0)
    if isinstance(value, str):
        return None, Finding(got=f"{label}a str {_text(value)}", expected=f"{label}an array of real numbers")
    if value.dtype.kind not in "biuf":
        return None, Finding(got=f"{label}an array of dtype {value.dtype}", expected=f"{label}an array of real numbers")
    return value.astype(float, copy=False), None


def _label(item: Item) -> str:
    return f"item {item}" if isinstance(item, int) else f"field {item!r}"


def _text(value: str, limit: int = 60) -> str:
    """A returned string as a reason quotes it: ``repr`` (escaped), cut to ``limit`` characters."""
    return repr(value) if len(value) <= limit else repr(value[:limit]) + f" (and {len(value) - limit} more characters)"


_ONE = {"ndarray": "one array", "float": "a float", "int": "an int", "bool": "a bool", "str": "a str", "list": "a list"}


def form_of(outcome: CallOutcome, names: list[str] | tuple[str, ...] = ()) -> str:
    """What a call returned, as a form: ``one array``, ``a float``, ``a tuple of 2: (root, iterations)``,
    ``a dict with the fields mean, std``. ``names``: the items of a tuple, as the prompt writes them."""
    if outcome.kind == "mapping":
        return f"a dict with the field{'s' if len(outcome.keys) != 1 else ''} {', '.join(outcome.keys) or '(none)'}"
    if outcome.kind == "tuple":
        count = len(outcome.values)
        shown = f": ({', '.join(names)})" if len(names) == count else ""
        return f"a tuple of {count}{shown}"
    name = outcome.types[0] if outcome.types else "ndarray"
    return _ONE.get(name, f"a {name}" if name[:1] not in "aeiou" else f"an {name}")


def picked(outcome: CallOutcome, item: Item) -> tuple[Any, Finding | None]:
    """Item ``item`` of a returned tuple, or field ``item`` of a returned dict (an array, or a str), or a finding
    saying that the result holds no such item."""
    if isinstance(item, int):
        if outcome.kind == "tuple" and -len(outcome.values) <= item < len(outcome.values):
            return outcome.item(item), None
        return None, Finding(got=form_of(outcome), expected=f"a tuple holding item {item}")
    if outcome.kind == "mapping" and item in outcome.keys:
        return outcome.item(outcome.keys.index(item)), None
    return None, Finding(got=form_of(outcome), expected=f"a dict with the field {item!r}")


def structure_finding(mine: CallOutcome, reference: CallOutcome, names: list[str]) -> Finding | None:
    """A finding when the reference returns a tuple or dict and the learner's result is not one of the same
    items (as many items; the same fields, in any order); ``None`` when the forms agree or the reference's is one
    value. A result the reference would not recognise is never judged on part of it."""
    if reference.kind == "single":
        return None
    same = mine.kind == reference.kind and (
        len(mine.values) == len(reference.values) if mine.kind == "tuple" else set(mine.keys) == set(reference.keys)
    )
    if same:
        return None
    return Finding(
        got=form_of(mine),
        expected=f"{form_of(reference, names)}, as the reference solution returns",
    )
