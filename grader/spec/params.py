"""Per-learner parameters of a quiz (``params:``): how each is drawn, and the texts and answers that use them.

A quiz that declares ``params:`` is a template: each learner gets a variant
of it (``grader.engine.variants`` draws one from the learner's id and the
course's secret). A param is drawn one way::

    params:
      a: {uniform: [1, 5], round: 2}   # a float in [1, 5), rounded to 2 decimals
      n: {integers: [3, 9]}            # an integer from 3 to 9, both included
      unit: {choice: [cm, m, km]}      # one of the listed values

Texts (the quiz's and each question's prompt, option texts and reasons)
write ``{a}`` where the learner's value goes (``{{`` and ``}}`` for a brace
itself); a numeric question's ``answer`` and a mistake's ``value`` may be an
expression of the params in the relation language
(``grader.checks.expressions``: parsed against a whitelist, never eval).
An implementation exercise may declare ``params:`` too: its case sets'
argument values (in ``examples:``, in the value lists of ``random.args``
and ``matrices.args``) and a check's ``where:`` values may then be
computed from them, written ``{expr: "[a, a + 1, n * a]"}``, and its prompt
writes ``{a}`` like a quiz's texts.
This module checks all of that when the spec loads; nothing here draws.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from grader.checks.expressions import NUMPY_FUNCTIONS, ExpressionError, parse_expression
from grader.record import ConfigDict, Field, Record, model_validator
from grader.spec.crossrefs import SpecProblem

__all__ = [
    "PARAM_NAME",
    "ParamSpec",
    "check_case_params",
    "check_params_names",
    "check_quiz_params",
    "computed_text",
    "computed_values",
    "fill_text",
    "number_or_expression",
    "placeholders",
]

PARAM_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,30}$")
# ``{{`` and ``}}`` stand for one brace; ``{name}`` for a param's value; any other brace is text.
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")
_RESERVED = frozenset(NUMPY_FUNCTIONS) | {"inf", "nan", "pi", "reference"}
MAX_CHOICES = 1000
MAX_SPAN = 10**12  # integers: wider ranges gain nothing and lose exactness in the draw


class ParamSpec(Record):
    """How one param is drawn: exactly one of ``uniform`` (with an optional ``round``), ``integers``, ``choice``."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    uniform: list[float] | None = Field(
        default=None, min_length=2, max_length=2, description="[low, high]: a float drawn uniformly, low <= x < high"
    )
    round: int | None = Field(
        default=None, ge=0, le=12, description="with uniform: the decimals kept (the value shown is the value used)"
    )
    integers: list[int] | None = Field(
        default=None, min_length=2, max_length=2, description="[low, high]: an integer, both ends included"
    )
    choice: list[int | float | str] | None = Field(
        default=None, min_length=1, max_length=MAX_CHOICES, description="one of these values, each equally likely"
    )

    @model_validator(mode="after")
    def _one_way(self) -> ParamSpec:
        ways = [name for name in ("uniform", "integers", "choice") if getattr(self, name) is not None]
        if len(ways) != 1:
            raise ValueError(
                "a param is drawn one way: give exactly one of 'uniform: [low, high]', 'integers: [low, high]' "
                f"or 'choice: [...]' (this one gives {', '.join(ways) or 'none'})"
            )
        if self.round is not None and self.uniform is None:
            raise ValueError("'round' goes with 'uniform' only")
        if self.uniform is not None:
            low, high = self.uniform
            if not (math.isfinite(low) and math.isfinite(high) and low < high):
                raise ValueError(f"uniform: [low, high] needs finite low < high, not [{low:g}, {high:g}]")
        if self.integers is not None:
            low_int, high_int = self.integers
            if not low_int <= high_int or high_int - low_int > MAX_SPAN:
                raise ValueError(f"integers: [low, high] needs low <= high within {MAX_SPAN:g} of each other")
        for value in self.choice or []:
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError("choice: every value is finite")
        return self


def placeholders(text: str) -> Iterator[str]:
    """The param names ``text`` writes as ``{name}``, in order (escaped braces are not placeholders)."""
    for match in _PLACEHOLDER.finditer(text):
        if match.group(1) is not None:
            yield match.group(1)


def fill_text(text: str, shown: Mapping[str, str]) -> str:
    """``text`` with each ``{name}`` replaced by ``shown[name]`` and ``{{``/``}}`` by one brace."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name is None:
            return match.group(0)[0]
        return shown.get(name, match.group(0))

    return _PLACEHOLDER.sub(replace, text)


def check_params_names(params: Mapping[str, ParamSpec]) -> None:
    """Refuse a param name an expression could not read as a variable of its own."""
    for name in params:
        if not PARAM_NAME.match(name) or name in _RESERVED:
            raise SpecProblem(
                f"param {name!r} needs a lower-case name (letters, digits, '_') that is not a numpy function "
                "or constant of the relation language",
                "params",
                name,
            )


def computed_text(value: Any) -> str | None:
    """The expression of a value written ``{expr: "..."}`` (computed from the params), else ``None``."""
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get("expr"), str):
        return str(value["expr"])
    return None


def check_case_params(exercise: Any) -> None:
    """Refuse what an implementation exercise's params cannot mean: a bad name, a placeholder or an
    ``{expr: ...}`` value naming no param, or such a value in an exercise without params."""
    params: Mapping[str, ParamSpec] = exercise.params
    check_params_names(params)
    known = ", ".join(params) or "none"
    if params:
        for name in placeholders(exercise.prompt):
            if name not in params:
                raise SpecProblem(
                    f"{{{name}}} names no param (the params are {known}); write {{{{ and }}}} for a brace itself",
                    "prompt",
                )
    for loc, value in computed_values(exercise):
        text = computed_text(value)
        if text is not None:
            _check_expression(text, params, known, loc, "a value {expr: ...}")


def computed_values(exercise: Any) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """Every value of the exercise's case sets and checks' ``where:`` that may be written ``{expr: ...}``."""
    for set_name, generators in exercise.cases.items():
        for number, generator in enumerate(generators):
            at: tuple[str | int, ...] = ("cases", set_name, number)
            if hasattr(generator, "examples"):
                for index, example in enumerate(generator.examples):
                    for arg, value in example.items():
                        yield (*at, "examples", index, arg), value
                continue
            kind = next((name for name in ("random", "matrices") if hasattr(generator, name)), None)
            if kind is None:  # a class entry's scripts: their steps' arguments are written out as they are
                continue
            spec = getattr(generator, kind)
            for arg, values in spec.args.items():
                if isinstance(values, list):
                    for index, value in enumerate(values):
                        yield (*at, kind, "args", arg, index), value
    for number, check in enumerate(exercise.checks):
        where = getattr(check, "where", None)
        if isinstance(where, dict):
            for name, values in where.items():
                for index, value in enumerate(values):
                    yield ("checks", number, "where", name, index), value


def number_or_expression(value: float | str) -> float | str:
    """A numeric answer as a field holds it: a number, or text that may be an expression of params.

    Whether its names are params is the quiz's check (``check_quiz_params``); here, text that is neither a
    number nor an expression whose names could be params is refused where it is written.
    """
    if not isinstance(value, str):
        return value
    try:
        float(value)
        return value
    except ValueError:
        pass
    try:
        names = parse_expression(value).names()
    except ExpressionError:
        names = {"?"}
    if not names or not all(PARAM_NAME.match(name) for name in names):
        raise ValueError(f"must be a valid number, or in a quiz with params: an expression of them, not {value!r}")
    return value


def check_quiz_params(quiz: Any) -> None:
    """Refuse what a quiz's params cannot mean: a bad name, a placeholder or an answer naming no param.

    Raises ``SpecProblem`` located where the fault is written. A quiz without
    params may hold braces and must have plain numbers as answers.
    """
    params: Mapping[str, ParamSpec] = quiz.params
    check_params_names(params)
    known = ", ".join(params) or "none"
    for loc, text in _texts(quiz):
        if not params:
            break
        for name in placeholders(text):
            if name not in params:
                raise SpecProblem(
                    f"{{{name}}} names no param (the params are {known}); write {{{{ and }}}} for a brace itself",
                    *loc,
                )
    for number, question in enumerate(quiz.questions):
        if question.type != "numeric":
            continue
        _check_answer(question.answer, params, known, ("questions", number, "answer"))
        for index, mistake in enumerate(question.mistakes):
            _check_answer(mistake.value, params, known, ("questions", number, "mistakes", index, "value"))


def _check_answer(answer: float | str, params: Mapping[str, ParamSpec], known: str, loc: tuple[str | int, ...]) -> None:
    if not isinstance(answer, str):
        return
    try:
        float(answer)  # a number the YAML left as text ("1e-3")
        return
    except ValueError:
        pass
    if not params:
        raise SpecProblem("an answer is a number unless the quiz declares params: to compute it from", *loc)
    _check_expression(answer, params, known, loc, "the answer expression")


def _check_expression(
    text: str, params: Mapping[str, ParamSpec], known: str, loc: tuple[str | int, ...], what: str
) -> None:
    if not params:
        raise SpecProblem(f"{what} computes from params, and the exercise declares no params:", *loc)
    try:
        expression = parse_expression(text)
    except ExpressionError as error:
        raise SpecProblem(f"{what} {text!r} is not allowed: {error}", *loc) from None
    if expression.calls:
        raise SpecProblem(f"{what} may call numpy functions only, not reference.NAME", *loc)
    unknown = sorted(expression.names() - set(params))
    if unknown:
        raise SpecProblem(f"{what} {text!r} reads {unknown[0]!r}, which is not a param (params: {known})", *loc)


def _texts(quiz: Any) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Every text of a quiz a learner reads, with where it is written."""
    yield ("prompt",), quiz.prompt
    for number, question in enumerate(quiz.questions):
        at: tuple[str | int, ...] = ("questions", number)
        yield (*at, "prompt"), question.prompt
        if question.type == "numeric":
            yield (*at, "reason_correct"), question.reason_correct
            yield (*at, "reason_wrong"), question.reason_wrong
            for index, mistake in enumerate(question.mistakes):
                yield (*at, "mistakes", index, "reason"), mistake.reason
            continue
        for index, option in enumerate(question.options):
            yield (*at, "options", index, "text"), option.text
            yield (*at, "options", index, "reason"), option.reason
