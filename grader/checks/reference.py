"""matches-reference: a learner's result against the reference solution's on the same arguments.

One array within tolerance (float32 judged with float32's), every item of a
tuple or field of a mapping (each named in the reason), or one picked by
``item``; text exactly, after folding case or white space, or by a pattern.
A form unlike the reference's fails with a reason that says so.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import numpy as np

from grader.checks.base import ArrayCheck, Call, Compared, Finding, Item, picked, structure_finding
from grader.checks.cases import Case
from grader.checks.display import format_number, format_pair, format_value
from grader.checks.numbers import close
from grader.checks.properties import (
    NAMES_FIELD,
    REFERENCE_FIELD,
    beyond_float32,
    reference_value,
    shape_finding,
    tolerances,
)
from grader.record import Field, field_validator
from grader.sandbox.outcomes import CallOutcome

__all__ = ["MatchesReference", "TextComparison"]


TextComparison = Literal["exact", "casefold", "whitespace", "pattern"]


class MatchesReference(ArrayCheck):
    """The result equals what the exercise's reference solution returns on the same arguments, within tolerance.

    Where the reference returns a tuple or a dict, the learner's result must
    be one of the same items (``structure_finding``), and then every item is
    compared, or only ``item``. Numbers compare within ``rtol``/``atol``; a
    string compares by ``compare``: ``exact``, ``casefold`` (case ignored),
    ``whitespace`` (runs of whitespace as one space, the ends stripped), or
    ``pattern`` (the learner's string matches the regular expression
    ``pattern`` whole, whatever the reference's).
    """

    property: Literal["matches-reference"]
    uses_reference = True
    reference: str | None = Field(default=None, description=REFERENCE_FIELD)
    rtol: float = Field(default=1e-6, ge=0, description="relative tolerance")
    atol: float = Field(default=1e-9, ge=0, description="absolute tolerance")
    names: list[str] = Field(default_factory=list, description=NAMES_FIELD)
    compare: TextComparison = Field(
        default="exact", description="how a returned string compares: exact, casefold, whitespace or pattern"
    )
    pattern: str | None = Field(
        default=None, max_length=500, description="with compare: pattern, the regular expression a string matches"
    )

    @field_validator("pattern")
    @classmethod
    def _pattern_compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"{value!r} is not a regular expression: {exc}") from None
        return value

    def reads_structure(self) -> bool:
        return True

    def default_description(self, entry: str) -> str:
        if self.compare == "pattern":
            which = f"{self._label(self.item)[:-2]} of what {entry} returns" if self.item is not None else entry
            return f"{which} is a str matching {self.pattern!r}"
        if self.item is not None:
            return f"{self._label(self.item)[:-2]} of what {entry} returns is the reference solution's"
        return f"{entry} returns the same values as the reference solution"

    def plan(self, case: Case, entry: str) -> list[Call]:
        return [Call(entry, case.args), Call(self.reference or entry, case.args, on="reference")]

    def judge(self, case: Case, outcomes: list[CallOutcome]) -> Finding | None:
        mine, theirs = outcomes
        if theirs.kind == "single" and self.item is None and not theirs.holds_text_or_fields():
            return super().judge(case, outcomes)  # one array against one array, as it always was
        problem = structure_finding(mine, theirs, self.names)
        if problem is not None:
            return problem
        for item in self._items(theirs):
            got, problem = picked(mine, item) if item is not None else (mine.item(0), None)
            expected = picked(theirs, item)[0] if item is not None else theirs.item(0)
            if problem is None:
                problem = self._judge_item(case, got, expected, self._label(item))
            if problem is not None:
                return problem
        return None

    def _items(self, reference: CallOutcome) -> list[Item | None]:
        if self.item is not None:
            return [self.item]
        if reference.kind == "tuple":
            return list(range(len(reference.values)))
        return list(reference.keys) if reference.kind == "mapping" else [None]

    def _label(self, item: Item | None) -> str:
        if item is None:
            return ""
        if isinstance(item, int) and 0 <= item < len(self.names):
            return f"item {item} ({self.names[item]}): " if item == self.item else f"{self.names[item]}: "
        return f"item {item}: " if isinstance(item, int) else f"{item}: "

    def _judge_item(self, case: Case, got: Any, expected: Any, label: str) -> Finding | None:
        if isinstance(expected, str) or (self.compare == "pattern" and isinstance(got, str)):
            return self._judge_text(got, expected, label)
        if isinstance(got, str):
            return Finding(got=f"{label}a str {got!r:.80}", expected=f"{label}numbers, {format_value(expected)}")
        if got.dtype.kind not in "biuf":
            return Finding(got=f"{label}an array of dtype {got.dtype}", expected=f"{label}an array of real numbers")
        finding = self._judge_numbers(case, got, np.asarray(expected, dtype=float))
        if finding is not None and label:
            finding.got, finding.expected = f"{label}{finding.got}", f"{label}{finding.expected}"
        return finding

    def _judge_text(self, got: Any, expected: Any, label: str) -> Finding | None:
        wanted = f"{label}{_TEXT_WANTED[self.compare]}"
        if not isinstance(got, str):
            shown = format_value(got) if isinstance(got, np.ndarray) else repr(got)
            return Finding(got=f"{label}{shown}, not a str", expected=wanted.format(expected=_quoted(expected)))
        if self.compare == "pattern":
            if re.fullmatch(self.pattern or "", got):
                return None
            return Finding(got=f"{label}{_quoted(got)}", expected=f"{label}a str matching {self.pattern!r}")
        if isinstance(expected, str) and _normalised(got, self.compare) == _normalised(expected, self.compare):
            return None
        return Finding(got=f"{label}{_quoted(got)}", expected=wanted.format(expected=_quoted(expected)))

    def judge_array(self, case: Case, got: np.ndarray, outcomes: list[CallOutcome]) -> Finding | None:
        return self._judge_numbers(case, got, reference_value(outcomes[1]), outcomes[0].values[0])

    def _judge_numbers(self, case: Case, got: np.ndarray, expected: np.ndarray, raw: Any = None) -> Finding | None:
        raw = got if raw is None else raw
        shape = shape_finding(got, expected.shape)
        if shape:
            return shape
        got = got.astype(float, copy=False)
        rtol, atol = tolerances(raw, case, self.rtol, self.atol)
        if close(got, expected, rtol, beyond_float32(raw, case, expected, atol, self.atol)):
            return None
        pair = format_pair(got, expected, rtol=rtol, atol=atol)
        return Finding(
            got=pair.got_with_where(),
            expected=f"{pair.expected} (rtol {format_number(rtol)}, atol {format_number(atol)})",
        )

    def compared(self, case: Case, outcomes: list[CallOutcome]) -> Compared | None:
        mine, reference = outcomes[0], outcomes[1]
        if mine.status != "ok" or reference.status != "ok" or not mine.values:
            return None
        if reference.kind != "single" or self.item is not None or mine.holds_text_or_fields():
            return None  # a relation read off the values explains one array against one array
        rtol, atol = tolerances(mine.values[0], case, self.rtol, self.atol)
        return Compared(mine.value, reference_value(reference), rtol, atol)


_TEXT_WANTED = {
    "exact": "{expected}",
    "casefold": "{expected}, in any case",
    "whitespace": "{expected}, spaces aside",
    "pattern": "{expected}",
}


def _normalised(text: str, how: str) -> str:
    if how == "casefold":
        return text.casefold()
    if how == "whitespace":
        return " ".join(text.split())
    return text


def _quoted(value: Any) -> str:
    """A string as a reason quotes it: escaped, at most 80 characters."""
    if not isinstance(value, str):
        return format_value(value)
    return repr(value) if len(value) <= 80 else f"{value[:80]!r} (and {len(value) - 80} more characters)"
