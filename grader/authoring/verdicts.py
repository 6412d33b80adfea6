"""What ``grader validate`` says: one verdict a line, in words for the author of the solution it is about.

Both the catalog's self-test (``validate``) and the public examples'
(``validate_examples``) write these lines, so they live apart from either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["ValidationLine", "to_author"]


@dataclass(frozen=True)
class ValidationLine:
    """One verdict: ``ok`` or ``problem``, about an exercise's reference, a known-wrong solution or a quiz."""

    exercise: str
    subject: str
    verdict: Literal["ok", "problem", "note"]
    message: str

    def render(self) -> str:
        label = {"ok": "ok", "problem": "PROBLEM", "note": "note"}[self.verdict]
        return f"{label:<7} {self.exercise} {self.subject}: {self.message}"


def to_author(reason: str) -> str:
    """A reason written for a learner, reworded for the author of the solution it is about."""
    return (
        reason.replace("Not attempted: your file", "the file")
        .replace("your file", "the file")
        .replace("Your file", "The file")
        .replace("your code", "the code")
        .replace("Your code", "The code")
    )
