"""``identity``: a relation between calls of the learner's entries (and the reference's functions), from YAML.

``relation: "sigmoid(-x) == 1 - sigmoid(x)"`` holds on every case, within
``rtol``/``atol``. The relation is parsed and checked when the spec loads
(``grader.checks.expressions``: a whitelist of nodes and numpy functions,
never ``eval``); the names it reads and the functions it calls are checked
against the exercise (``spec_problems``). Planning computes each call's
arguments from the case (and each ``where`` value); judging evaluates the
relation on what the calls returned.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator, Mapping
from typing import Any, Literal

import numpy as np

from grader.checks.base import Call, Check, Finding, array_result, form_of
from grader.checks.cases import Case
from grader.checks.display import format_number, format_pair, format_value
from grader.checks.expressions import (
    CallSite,
    ExpressionError,
    PlannedCall,
    Relation,
    evaluate,
    parse_relation,
    planned_calls,
)
from grader.checks.kinds import coerce_argument
from grader.checks.numbers import nothing_judged
from grader.checks.properties import beyond_float32
from grader.errors import SpecError, did_you_mean
from grader.record import Field, field_validator
from grader.sandbox.outcomes import CallOutcome

__all__ = ["Identity", "call_argument", "calls_of", "site_problems"]

_MAX_COMBINATIONS = 64


class Identity(Check):
    """A relation between calls holds on every case, e.g. ``sigmoid(-x) == 1 - sigmoid(x)``.

    ``==`` holds where ``|left - right| <= atol + rtol * |right|`` (NaN on
    both sides counts as equal, but not when every entry is NaN for inputs
    that are all finite); ``<=`` and ``>=`` allow ``atol`` of slack;
    ``<`` and ``>`` are strict. Both sides must have one shape, or one must
    be a single number that is not a learner's answer standing in for an
    array. A side that came back empty holds nothing. ``where`` adds variables: each combination of their
    values is tried on every case.
    """

    property: Literal["identity"]
    relation: str = Field(description="one comparison between calls, e.g. 'f(-x) == 1 - f(x)'")
    where: dict[str, list[Any]] = Field(
        default_factory=dict, description="extra variables, each mapped to the values to try"
    )
    rtol: float = Field(default=1e-9, ge=0, description="relative tolerance of ==")
    atol: float = Field(default=1e-12, ge=0, description="absolute tolerance of ==, and the slack of <= and >=")

    def reference_functions(self) -> tuple[str, ...]:
        """The reference solution's functions the relation calls (``reference.softmax(...)``)."""
        return tuple(
            dict.fromkeys(site.function for site in parse_relation(self.relation).calls if site.on == "reference")
        )

    @field_validator("relation")
    @classmethod
    def _relation_parses(cls, value: str) -> str:
        parse_relation(value)  # ExpressionError is a ValueError: the loader names the file and line
        return value

    @field_validator("where")
    @classmethod
    def _where_is_small(cls, value: dict[str, list[Any]]) -> dict[str, list[Any]]:
        combinations = 1
        for name, values in value.items():
            if not name.isidentifier() or name.startswith("_") or name == "reference":
                raise ValueError(f"{name!r} is not a variable name a relation can use")
            if not values:
                raise ValueError(f"{name!r} has no values to try")
            for item in values:
                if isinstance(item, dict) and list(item) == ["expr"]:  # computed per learner (grader.spec.params)
                    continue
                try:
                    array = np.asarray(item, dtype=float)
                except (TypeError, ValueError):
                    raise ValueError(f"{name!r}: {item!r} is not a number or an array of numbers") from None
                if array.size > 10_000:
                    raise ValueError(f"{name!r}: a value of {array.size} numbers; at most 10000")
            combinations *= len(values)
        if combinations > _MAX_COMBINATIONS:
            raise ValueError(f"where gives {combinations} combinations of values; at most {_MAX_COMBINATIONS}")
        return value

    def reads_structure(self) -> bool:
        """Whether the relation reads a field of a returned dict (``stats(x)["mean"]``); a str is refused by judge."""
        relation = parse_relation(self.relation)
        return any(
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
            for side in (relation.left, relation.right)
            for node in ast.walk(side)
        )

    def default_description(self, entry: str) -> str:
        return f"{self.relation} holds for every input"

    def spec_problems(self, entry: str, signatures: Mapping[str, Mapping[str, bool]]) -> Iterator[tuple[str, str]]:
        """Names the relation reads or calls that the exercise does not have, each with the key it is written in."""
        relation = parse_relation(self.relation)
        known = set(signatures.get(entry, {})) | set(self.where)
        for name in sorted(relation.names() - known):
            yield (
                f"the relation reads {name!r}, which is neither an argument of {entry} nor a where variable"
                f"{did_you_mean(name, known)}",
                "relation",
            )
        for site in relation.calls:
            yield from site_problems(site, signatures, "relation")

    def plan(self, case: Case, entry: str) -> list[Call]:
        return self.plan_in(case, entry, {})

    def plan_in(self, case: Case, entry: str, parameters: Mapping[str, Mapping[str, str]]) -> list[Call]:
        """The call a reason shows, then each relation call for each ``where`` combination.

        The call shown is the case's own call of the entry when the relation makes it, else the first learner
        call the relation makes: a reason names a call that was judged, never one the relation does not make.
        Each argument reaches an entry as the kind its ``args:`` promise (``-x`` of a 0-d array is a 0-d
        array, never a Python float); a reference function that is not an entry gets what was computed.
        """
        relation = parse_relation(self.relation)
        calls = [Call(entry, case.args)]
        for variables in self._variables(case):
            try:
                calls.extend(calls_of(planned_calls(relation, variables), parameters))
            except Exception as exc:  # an argument that cannot be computed on this case is the spec's fault
                raise SpecError(
                    f"check {self.id}: the arguments of {self.relation!r} cannot be computed for "
                    f"{_shown(variables)}: {exc}"
                ) from None
        made = [call for call in calls[1:] if call.on == "learner"]
        if made and not any(_same_call(calls[0], call) for call in made):
            calls[0] = Call(made[0].function, made[0].args)
        return calls

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        relation = parse_relation(self.relation)
        per = len(relation.calls)
        itemised = _itemised_calls(relation)
        for number, variables in enumerate(self._variables(case)):
            answered = outcomes[1 + number * per : 1 + (number + 1) * per]
            for site, outcome in zip(relation.calls, answered, strict=True):
                if site.indexed and outcome.kind in ("tuple", "mapping"):  # newton(x)[0], stats(x)["mean"]
                    problem = _tuple_problem(outcome)
                elif id(site.node) in itemised and outcome.values and outcome.values[0].ndim == 0:  # no items
                    who = f"reference.{site.function}" if site.on == "reference" else site.function
                    problem = Finding(
                        got=f"{who} returned {form_of(outcome)}, which holds no items to index",
                        expected=f"{self.relation}{_given(self.where, variables)} on a result that holds them",
                    )
                else:
                    _, problem = array_result(outcome)
                if problem is not None:
                    return problem
            results = [outcome.value for outcome in answered]
            try:
                left, right = evaluate(relation, variables, results)
            except (ExpressionError, ValueError, TypeError, IndexError) as exc:
                return Finding(
                    got=f"values the relation cannot be computed on ({exc})",
                    expected=f"{self.relation}{_given(self.where, variables)}",
                )
            vacant = _nothing_compared(relation, left, right, results, variables)
            if vacant is not None:
                return Finding(
                    got=vacant,
                    expected=f"{self.relation}{_given(self.where, variables)} on the values themselves",
                    extra={name: variables[name] for name in self.where},
                )
            rtol, atol = self._tolerances(case, answered)
            results32 = [value for outcome in answered for value in outcome.values if value.dtype == np.float32]
            if results32:  # a value float32 had no room for is judged with the spec's own atol
                atol = beyond_float32(results32[0], case, right, atol, self.atol)
            finding = _compare(relation, left, right, rtol, atol)
            if finding is not None:
                got, tolerance = finding
                return Finding(
                    got=got,
                    expected=f"{self.relation}{_given(self.where, variables)} ({tolerance})",
                    extra={name: variables[name] for name in self.where},
                )
        return None

    def _variables(self, case: Case) -> Iterator[dict[str, Any]]:
        names = list(self.where)
        for values in itertools.product(*(self.where[name] for name in names)):
            extra = {name: call_argument(value) for name, value in zip(names, values, strict=True)}
            yield {**case.args, **extra}

    def _tolerances(self, case: Case, outcomes: list[CallOutcome]) -> tuple[float, float]:
        low = any(value.dtype == np.float32 for outcome in outcomes for value in outcome.values) or any(
            isinstance(v, np.ndarray) and v.dtype == np.float32 for v in case.args.values()
        )
        return (max(self.rtol, 1e-5), max(self.atol, 1e-6)) if low else (self.rtol, self.atol)


def _compare(relation: Relation, left: Any, right: Any, rtol: float, atol: Any) -> tuple[str, str] | None:
    """``None`` when the sides satisfy the comparison, else (what the sides were, the tolerance applied)."""
    a = np.asarray(left, dtype=float)
    b = np.asarray(right, dtype=float)
    if a.ndim and b.ndim and a.shape != b.shape:
        return f"left side of shape {a.shape}, right side of shape {b.shape}", "both sides of one shape"
    with np.errstate(all="ignore"):
        if relation.op == "==":
            near = np.isfinite(b) & (np.abs(a - b) <= atol + rtol * np.abs(b))  # an infinity only equals itself
            ok = (a == b) | near | (np.isnan(a) & np.isnan(b))
            tolerance = f"rtol {format_number(rtol)}, atol {format_number(float(np.max(atol)))}"
        elif relation.op == "<=":
            ok, tolerance = a <= b + atol, f"atol {format_number(float(np.max(atol)))}"
        elif relation.op == ">=":
            ok, tolerance = a >= b - atol, f"atol {format_number(float(np.max(atol)))}"
        elif relation.op == "<":
            ok, tolerance = a < b, "strictly"
        else:
            ok, tolerance = a > b, "strictly"
    if np.all(ok):
        return None
    pair = format_pair(a, b, rtol=rtol, atol=atol, apart=~np.asarray(ok))
    sides = f"left side {pair.got}, right side {pair.expected}"
    return (sides + (f", which differ at {pair.where.removeprefix('differs at ')}" if pair.where else "")), tolerance


def _nothing_compared(
    relation: Relation, left: Any, right: Any, results: list[Any], variables: Mapping[str, Any]
) -> str | None:
    """What came back, when the comparison would hold without comparing a single number.

    A side that is empty (``np.all`` of nothing is True), a learner's single number broadcast against
    the array the other side is, or NaN throughout on both sides (NaN matches NaN under ``==``) for
    inputs that are all finite numbers, where no correct answer is NaN.
    """
    a = np.asarray(left, dtype=float)
    b = np.asarray(right, dtype=float)
    empty = [side for side, value in (("left", a), ("right", b)) if value.size == 0]
    if empty and nothing_judged([np.empty(0)], variables):
        return f"{'both sides' if len(empty) == 2 else 'the ' + empty[0] + ' side'} came back empty"
    for side, here, there in (("left", relation.left, b), ("right", relation.right, a)):
        value = a if side == "left" else b
        if value.ndim == 0 and there.ndim and _learner_number_in(here, relation, results):
            return (
                f"the {side} side came back a single number, {format_value(value)}, where an array of shape "
                f"{there.shape} was expected"
            )
    if relation.op == "==":
        nan = nothing_judged([a, b], variables, nan_counts=True)
        if nan is not None:
            return f"both sides {nan}"
    return None


def _itemised_calls(relation: Relation) -> set[int]:
    """The calls (by node id) the relation takes an item of with a written index or field: ``newton(a)[0]``."""
    nodes = [node for side in (relation.left, relation.right) for node in ast.walk(side)]
    return {
        id(node.value)
        for node in nodes
        if isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Call)
        and isinstance(node.slice, ast.Constant)
        and type(node.slice.value) in (int, str)
    }


def _tuple_problem(outcome: CallOutcome) -> Finding | None:
    """A returned tuple or dict the relation takes apart holds real numbers in every item."""
    form = "a dict" if outcome.kind == "mapping" else "a tuple"
    if "str" in outcome.types:
        return Finding(got=f"{form} holding a str", expected="real numbers")
    odd = [value.dtype for value in outcome.values if value.dtype.kind not in "biuf"]
    return Finding(got=f"{form} holding a value of dtype {odd[0]}", expected="real numbers") if odd else None


def _learner_number_in(side: ast.expr, relation: Relation, results: list[Any]) -> bool:
    """Whether a learner's call on ``side`` of the relation returned a single number (a 0-d value)."""
    nodes = {id(node) for node in ast.walk(side)}
    return any(
        site.on == "learner" and id(site.node) in nodes and not isinstance(result, tuple) and np.ndim(result) == 0
        for site, result in zip(relation.calls, results, strict=True)
    )


def site_problems(site: CallSite, signatures: Mapping[str, Mapping[str, bool]], key: str) -> Iterator[tuple[str, str]]:
    """What a learner or reference call of a relation gets wrong against the exercise's entries, under ``key``."""
    signature = signatures.get(site.function)
    if site.on == "learner" and signature is None:
        yield (
            f"the {key} calls {site.function}(), which is neither an entry nor a numpy function it may "
            f"use{did_you_mean(site.function, signatures)}",
            key,
        )
    elif signature is None:
        if site.node.keywords:
            yield (
                f"reference.{site.function}() is not an entry, so its parameter names are not known: "
                "pass its arguments by position",
                key,
            )
    else:
        for message, _ in _argument_problems(site.function, site.node, signature):
            yield message.replace("the relation", f"the {key}", 1), key


def calls_of(planned: list[PlannedCall], parameters: Mapping[str, Mapping[str, str]]) -> list[Call]:
    """Planned calls as ``Call``s, their arguments named by the entry's parameters (``#0``... for a non-entry).

    Each argument reaches an entry as the kind its ``args:`` promise (``-x`` of a 0-d array is a 0-d
    array, never a Python float); ``ValueError`` when it cannot be that kind (2.5 for an int).
    """
    calls = []
    for call in planned:
        kinds = parameters.get(call.site.function) or {f"#{i}": "any" for i in range(len(call.args))}
        args = dict(zip(kinds, call.args, strict=False))
        args.update(call.kwargs)
        args = {name: coerce_argument(value, kinds.get(name, "any")) for name, value in args.items()}
        calls.append(Call(call.site.function, args, on="reference" if call.site.on == "reference" else "learner"))
    return calls


def call_argument(value: Any) -> Any:
    """A value as a call argument: arrays and numbers as numpy values, lists as float arrays."""
    if isinstance(value, (list, tuple)):
        return np.asarray(value, dtype=float)
    return value


def _argument_problems(function: str, node: Any, signature: Mapping[str, bool]) -> Iterator[tuple[str, str]]:
    names = list(signature)
    if len(node.args) > len(names):
        yield f"the relation calls {function}() with {len(node.args)} arguments; it takes {len(names)}", "relation"
        return
    given = set(names[: len(node.args)])
    for keyword in node.keywords:
        if keyword.arg not in signature:
            yield (
                f"the relation passes {keyword.arg}= to {function}(), which has no such parameter"
                f"{did_you_mean(str(keyword.arg), names)}",
                "relation",
            )
        elif keyword.arg in given:
            yield f"the relation passes {keyword.arg} to {function}() twice", "relation"
        given.add(str(keyword.arg))
    missing = [name for name, has_default in signature.items() if not has_default and name not in given]
    if missing:
        yield f"the relation calls {function}() without {', '.join(missing)}", "relation"


def _same_call(a: Call, b: Call) -> bool:
    """Whether two calls are of one function with equal arguments."""
    if a.function != b.function or a.args.keys() != b.args.keys():
        return False
    for name, value in a.args.items():
        other = b.args[name]
        if isinstance(value, np.ndarray) or isinstance(other, np.ndarray):
            if not (
                isinstance(value, np.ndarray)
                and isinstance(other, np.ndarray)
                and value.dtype == other.dtype
                and np.array_equal(value, other, equal_nan=value.dtype.kind == "f")
            ):
                return False
        elif type(value) is not type(other) or value != other:
            return False
    return True


def _given(where: Mapping[str, Any], variables: Mapping[str, Any]) -> str:
    if not where:
        return ""
    return " with " + ", ".join(f"{name}={format_value(variables[name])}" for name in where)


def _shown(variables: Mapping[str, Any]) -> str:
    return ", ".join(f"{name}={format_value(value)}" for name, value in variables.items())
