"""The form of what an entry returns: a NumPy float vector, a number, a string, or a tuple such as ``(z, i, j)``.

Witness entries take no arguments, so there is nothing to compare their
result with; what can still be checked is that it has the promised form.
The learner process reports the Python type of every returned item, so a
list that NumPy would happily convert is still told apart from an array.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from grader.checks.base import Check, Finding, Item, picked
from grader.checks.cases import Case
from grader.checks.display import count_of, format_value
from grader.record import Field, model_validator
from grader.sandbox.outcomes import CallOutcome

__all__ = ["ReturnsForm", "not_an_ndarray", "shown_as_returned"]

ItemKind = Literal["float-vector", "index", "float", "int", "bool", "str"]

_WORDS = {
    "float-vector": "a 1-D NumPy array of floats",
    "index": "an integer index",
    "float": "a float",
    "int": "an int",
    "bool": "a bool",
    "str": "a str",
}
# The Python and NumPy types a single number of each kind may have (a 0-d ndarray is an array, not a number).
_SCALARS = {
    "float": ("float", "float64", "float32", "float16", "longdouble"),
    "int": ("int", "int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8"),
    "bool": ("bool", "bool_"),
}
_SCALAR_NOTES = {
    "float": "A float is one number such as 1.5: float(...) around a NumPy value or a 1-element array makes one.",
    "int": "An int is a whole number such as 3: a count kept in a Python int, or int(...) around it.",
    "bool": "A bool is True or False: bool(...) around a comparison makes one.",
}


class ReturnsForm(Check):
    """The entry returns values of the documented kinds: one float vector, or a tuple of exactly the listed items."""

    property: Literal["returns-form"]
    items: list[ItemKind] = Field(
        min_length=1, description="one kind: a single value of that kind; several: a tuple of exactly these, in order"
    )
    names: list[str] = Field(default_factory=list, description="names of the items, as the prompt writes them")
    item: Item | None = Field(
        default=None,
        description="judge one value of what is returned: an index into its tuple or a field of its dict, "
        "of the one kind in `items`",
    )

    @model_validator(mode="after")
    def _one_kind_for_an_item(self) -> ReturnsForm:
        if self.item is not None and len(self.items) != 1:
            raise ValueError("with `item`, `items` names the one kind that value has")
        return self

    def reads_structure(self) -> bool:
        return True

    def default_description(self, entry: str) -> str:
        if self.item is not None:
            which = f"item {self.item}" if isinstance(self.item, int) else f"the field {self.item!r}"
            return f"{which} of what {entry} returns is {_WORDS[self.items[0]]}"
        return f"{entry} returns {self._form()}"

    def wanted(self) -> str:
        return self._form()

    def _form(self) -> str:
        if len(self.items) == 1:
            return _WORDS[self.items[0]]
        names = self.names if len(self.names) == len(self.items) else [f"item {k}" for k in range(len(self.items))]
        return f"a tuple ({', '.join(names)}) of " + ", ".join(_WORDS[item] for item in self.items)

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        outcome = outcomes[0]
        # The learner process names each value's type; a list that does not name every value is not used.
        types = (
            outcome.types if len(outcome.types) == len(outcome.values) else [type(v).__name__ for v in outcome.values]
        )
        if self.item is not None:
            value, problem = picked(outcome, self.item)
            if problem is not None:
                return problem
            position = self.item if isinstance(self.item, int) else outcome.keys.index(self.item)
            return _item_finding(self.items[0], value, types[position], str(self.item))
        if outcome.kind == "mapping":
            return Finding(got=f"a dict with the fields {', '.join(outcome.keys)}", expected=self._form())
        if len(self.items) == 1:
            if outcome.kind == "tuple":
                return Finding(
                    got=_tuple_of(len(outcome.values)),
                    expected=self._form(),
                    note="Return the array itself, not a tuple holding it.",
                )
            return _item_finding(self.items[0], outcome.item(0), types[0], "")
        if outcome.kind != "tuple":
            return Finding(
                got=shown_as_returned(outcome.values[0], types[0]),
                expected=self._form(),
                note=(
                    f"Separate the items with commas: return {', '.join(self.names)} makes a tuple."
                    if len(self.names) == len(self.items) > 1
                    else "Values written after return, separated by commas, make a tuple."
                ),
            )
        if len(outcome.values) != len(self.items):
            return Finding(got=_tuple_of(len(outcome.values)), expected=self._form())
        for position, (kind, type_name) in enumerate(zip(self.items, types, strict=True)):
            name = self.names[position] if position < len(self.names) else f"item {position}"
            finding = _item_finding(kind, outcome.item(position), type_name, name)
            if finding:
                return finding
        return None

    def verified(self, cases: list[Case]) -> str:
        return "on what it returned"


def _tuple_of(count: int) -> str:
    return f"a tuple of {count_of(count, 'value')}"


def shown_as_returned(value: np.ndarray, type_name: str) -> str:
    """``a list [1.0, -2.0]``, ``an ndarray array([1., -2.])``: the type as returned, then the value."""
    article = "an" if type_name[:1] in "aeiou" else "a"
    text = format_value(value) if type_name == "ndarray" or value.ndim == 0 else repr(value.tolist())
    return f"{article} {type_name} {text}"


def _item_finding(kind: ItemKind, value: np.ndarray | str, type_name: str, name: str) -> Finding | None:
    label = f"{name}: " if name else ""
    if isinstance(value, str) or kind == "str":
        if isinstance(value, str) and kind == "str":
            return None
        shown = f"a str {value[:80]!r}" if isinstance(value, str) else shown_as_returned(value, type_name)
        return Finding(got=f"{label}{shown}", expected=f"{label}{_WORDS[kind]}")
    if kind in _SCALARS:
        if type_name in _SCALARS[kind] and value.ndim == 0:
            return None
        return Finding(
            got=f"{label}{shown_as_returned(value, type_name)}",
            expected=f"{label}{_WORDS[kind]}",
            note=_SCALAR_NOTES[kind],
        )
    if kind == "index":
        if value.ndim == 0 and value.dtype.kind in "iu":
            return None
        return Finding(
            got=f"{label}{shown_as_returned(value, type_name)}",
            expected=f"{label}{_WORDS[kind]}",
            note="An index is a whole number such as 0 or 2 (int), not a float or an array.",
        )
    if type_name != "ndarray":
        return Finding(
            got=f"{label}{shown_as_returned(value, type_name)}",
            expected=f"{label}{_WORDS[kind]}",
            note="Wrap the numbers in np.array([...], dtype=float).",
        )
    if value.dtype.kind != "f":
        return Finding(
            got=f"{label}an array of dtype {value.dtype}, {format_value(value)}",
            expected=f"{label}{_WORDS[kind]}",
            note="Scores are real numbers: write 2.0 rather than 2, or pass dtype=float.",
        )
    if value.ndim != 1 or value.size == 0:
        return Finding(
            got=f"{label}an array of shape {value.shape}",
            expected=f"{label}a non-empty {_WORDS[kind][2:]}",
            note="One score per entry, in a flat array such as np.array([2.0, -3.0]).",
        )
    return None


def not_an_ndarray(outcome: CallOutcome, expected: str) -> Finding | None:
    """A finding when a call returned its single array as something other than a ``numpy.ndarray`` (a list, a matrix).

    The learner process converts what came back into an array and reports the
    Python type it had (``outcome.types``); without that report nothing is said.
    """
    type_name = outcome.types[0] if outcome.types else "ndarray"
    if outcome.kind == "tuple" or type_name == "ndarray":
        return None
    return Finding(
        got=shown_as_returned(outcome.values[0], type_name),
        expected=f"a numpy.ndarray{expected}",
        note=f"It returned a {type_name}; the contract asks for a numpy.ndarray, so this costs the form point "
        "(the numbers themselves are judged by the other checks). np.asarray(...) around the result fixes it.",
    )
