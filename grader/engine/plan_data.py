"""A built plan as plain JSON data and back, for the disk cache (``engine.disk_cache``).

Drawing an exercise's cases needs ``numpy.random`` and planning every
check's calls encodes each of them, which is most of what a cold grade
spends beyond importing numpy; reading them back is a JSON parse and one
checked array decode per array. Only data is written: the checks' ids (the
live checks a loaded plan refers to, matched by id and order), each call's
function, flags and arguments, each case's arguments, and the call table's
index. An argument is a JSON scalar, a list, or a tagged object: ``{"a": N}``
the array numbered N (the protocol's checked encoding, base64; an array
shared by a case and its calls is written once and shared again when read),
``{"f": NAME, "b": [[ARG, VALUE], ...]}`` a given function with bound arrays,
``{"t": [...]}`` a tuple, ``{"d": {...}}`` a mapping, ``{"n": [DTYPE, V]}`` a
numpy scalar. Calls' wire encodings are not kept: they are made again when
first asked for, from the checked arguments.

:func:`plan_from_data` checks every type, every call number and every array
and raises ``ValueError`` for anything else.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any

import numpy as np

from grader.checks.base import Call, Check
from grader.checks.cases import Case
from grader.engine.plan import CallTable, Plan, PlannedCheck
from grader.sandbox.calls import TrustedFunction
from grader.sandbox.protocol import ProtocolError, decode_array, encode_array
from grader.sandbox.scripts import Script, Step

if TYPE_CHECKING:
    from grader.spec.models import ImplementationExercise

__all__ = ["plan_data", "plan_from_data"]

_SCALARS = (str, int, float, bool, type(None))
_NUMPY_SCALARS = {"<f8": np.float64, "<f4": np.float32, "<i8": np.int64, "|b1": np.bool_}
_ON = ("learner", "reference")


def plan_data(plan: Plan) -> dict[str, Any]:
    """``plan`` as plain JSON data; ``TypeError`` for a value that has no plain form (the plan is then not kept)."""
    writer = _Writer()
    return {
        "checks": [planned.check.id for planned in plan.checks],
        "signatures": plan.signatures,
        "index": plan.table.index,
        "calls": [writer.call(call) for call in plan.table.calls],
        "planned": [
            {
                "entry": planned.entry,
                "cases": [writer.case(case) for case in planned.cases],
                "calls": [[writer.call(call) for call in calls] for calls in planned.calls],
                "keys": planned.keys,
            }
            for planned in plan.checks
        ],
        "whole": plan.whole_keys,
        "arrays": writer.arrays,
    }


class _Writer:
    def __init__(self) -> None:
        self.arrays: list[str] = []
        self._numbers: dict[int, int] = {}
        self._held: list[np.ndarray] = []  # keeps each written array alive, so no id() is reused

    def call(self, call: Call) -> dict[str, Any]:
        return {
            "function": call.function,
            "args": self.mapping(call.args),
            "return_inputs": call.return_inputs,
            "on": call.on,
            "on_answer": call.on_answer,
        }

    def case(self, case: Case) -> dict[str, Any]:
        extra = {name: value for name, value in case.extra.items() if name != "_size"}  # worked out when asked
        args, extra = self.mapping(case.args), self.mapping(extra)
        return {"args": args, "origin": case.origin, "label": case.label, "extra": extra}

    def mapping(self, values: dict[str, Any]) -> dict[str, Any]:
        if not all(type(name) is str for name in values):
            raise TypeError("a mapping with keys other than strings")
        return {name: self.value(value) for name, value in values.items()}

    def value(self, value: Any) -> Any:
        if type(value) in _SCALARS:
            return value
        if type(value) is np.ndarray:
            return {"a": self.array(value)}
        if type(value) is TrustedFunction:
            return {"f": value.name, "b": [[name, {"a": self.array(array)}] for name, array in value.bound]}
        if type(value) is Script:  # each step as [op, name, args, keep, raises]
            steps = [[s.op, s.name, [[k, self.value(v)] for k, v in s.args], s.keep, s.raises] for s in value.steps]
            return {"s": steps}
        if type(value) is list:
            return [self.value(item) for item in value]
        if type(value) is tuple:
            return {"t": [self.value(item) for item in value]}
        if type(value) is dict:
            return {"d": self.mapping(value)}
        if isinstance(value, np.generic) and value.dtype.str in _NUMPY_SCALARS:
            return {"n": [value.dtype.str, value.item()]}
        raise TypeError(f"a {type(value).__name__} has no plain form")

    def array(self, array: np.ndarray) -> int:
        number = self._numbers.get(id(array))
        if number is None:
            number = self._numbers[id(array)] = len(self.arrays)
            self.arrays.append(base64.b64encode(encode_array(array)).decode("ascii"))
            self._held.append(array)
        return number


def plan_from_data(data: Any, exercise: ImplementationExercise, checks: list[Check]) -> Plan:
    """The plan ``plan_data`` wrote, for the live ``exercise`` and ``checks``; ``ValueError`` if it is not one."""
    _need(type(data) is dict and data.keys() == _KEYS, "not a plan")
    _need(data["checks"] == [check.id for check in checks], "a plan of other checks")
    signatures = data["signatures"]
    _need(
        type(signatures) is dict and all(_strings(names) for names in signatures.values()),
        "a plan's signatures are not lists of names",
    )
    reader = _Reader(data["arrays"])
    table = CallTable()
    table.calls = [reader.call(item) for item in _list(data["calls"])]
    count = len(table.calls)
    index = data["index"]
    _need(type(index) is dict and sorted(index.values()) == list(range(count)), "a plan's index does not fit its calls")
    table.index = index
    planned_data = _list(data["planned"])
    _need(len(planned_data) == len(checks), "a plan of other checks")
    planned = []
    for check, item in zip(checks, planned_data, strict=True):
        _need(type(item) is dict and item.keys() == {"entry", "cases", "calls", "keys"}, "not a planned check")
        _need(type(item["entry"]) is str, "a planned check's entry is not a name")
        cases = [reader.case(case) for case in _list(item["cases"])]
        calls = [[reader.call(call) for call in _list(row)] for row in _list(item["calls"])]
        keys = [_numbers(row, count) for row in _list(item["keys"])]
        _need(len(calls) == len(keys) == len(cases) and all(map(_same_length, calls, keys)), "a planned check's parts")
        planned.append(PlannedCheck(check, item["entry"], cases, calls, keys))
    return Plan(exercise, table, planned, signatures, _numbers(data["whole"], count))


_KEYS = {"checks", "signatures", "index", "calls", "planned", "whole", "arrays"}


class _Reader:
    def __init__(self, arrays: Any) -> None:
        self.texts = _list(arrays)
        self.decoded: dict[int, np.ndarray] = {}

    def call(self, item: Any) -> Call:
        _need(type(item) is dict and item.keys() == {"function", "args", "return_inputs", "on", "on_answer"}, "a call")
        _need(type(item["function"]) is str and item["on"] in _ON, "a call's function or side")
        _need(type(item["return_inputs"]) is bool and type(item["on_answer"]) is bool, "a call's flags")
        return Call(item["function"], self.mapping(item["args"]), item["return_inputs"], item["on"], item["on_answer"])

    def case(self, item: Any) -> Case:
        _need(type(item) is dict and item.keys() == {"args", "origin", "label", "extra"}, "not a case")
        _need(type(item["origin"]) is str and type(item["label"]) in (str, type(None)), "a case's origin or label")
        return Case(self.mapping(item["args"]), item["origin"], item["label"], self.mapping(item["extra"]))

    def mapping(self, data: Any) -> dict[str, Any]:
        _need(type(data) is dict, "arguments that are not a mapping")
        return {name: self.value(value) for name, value in data.items()}

    def value(self, data: Any) -> Any:
        if type(data) in _SCALARS:
            return data
        if type(data) is list:
            return [self.value(item) for item in data]
        _need(type(data) is dict and len(data) in (1, 2), "an argument of no known form")
        if data.keys() == {"a"}:
            return self.array(data["a"])
        if data.keys() == {"f", "b"}:
            bound = _list(data["b"])
            _need(type(data["f"]) is str and all(type(b) is list and len(b) == 2 for b in bound), "a given function")
            pairs = [(name, self.value(value)) for name, value in bound]
            _need(all(type(n) is str and type(a) is np.ndarray for n, a in pairs), "a given function's bound arrays")
            return TrustedFunction(data["f"], tuple(pairs))
        if data.keys() == {"s"}:
            return Script(tuple(self.step(item) for item in _list(data["s"])))
        if data.keys() == {"t"}:
            return tuple(self.value(item) for item in _list(data["t"]))
        if data.keys() == {"d"}:
            return self.mapping(data["d"])
        _need(data.keys() == {"n"} and type(data["n"]) is list and len(data["n"]) == 2, "an argument of no known form")
        dtype, number = data["n"]
        _need(dtype in _NUMPY_SCALARS and type(number) in (int, float, bool), "a numpy scalar of no known type")
        return _NUMPY_SCALARS[dtype](number)

    def step(self, data: Any) -> Step:
        _need(type(data) is list and len(data) == 5, "a script step of no known form")
        op, name, args, keep, raises = data
        _need(op in ("new", "call", "read") and all(type(t) is str for t in (name, keep, raises)), "a script step")
        pairs = [_list(pair) for pair in _list(args)]
        _need(all(len(pair) == 2 and type(pair[0]) is str for pair in pairs), "a script step's arguments")
        return Step(op, name, tuple((key, self.value(value)) for key, value in pairs), keep, raises)

    def array(self, number: Any) -> np.ndarray:
        _need(type(number) is int and 0 <= number < len(self.texts), "an array number out of range")
        if number not in self.decoded:
            try:
                self.decoded[number] = decode_array(base64.b64decode(self.texts[number], validate=True))
            except (TypeError, binascii.Error, ProtocolError) as problem:
                raise ValueError(f"an array that is not the wire's encoding ({problem})") from None
        return self.decoded[number]


def _need(condition: bool, what: str) -> None:
    if not condition:
        raise ValueError(what)


def _list(data: Any) -> list[Any]:
    _need(type(data) is list, "a list expected")
    return data


def _strings(data: Any) -> bool:
    return type(data) is list and all(type(item) is str for item in data)


def _numbers(data: Any, count: int) -> list[int]:
    _need(type(data) is list and all(type(n) is int and 0 <= n < count for n in data), "call numbers out of range")
    return data


def _same_length(calls: list[Call], keys: list[int]) -> bool:
    return len(calls) == len(keys)
