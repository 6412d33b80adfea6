"""Errors the grader raises about its own inputs and itself.

A learner's mistake is never one of these: it becomes a graded result with a
reason. These are for the people who run the grader::

    GraderError                 base; exit status 3 unless a subclass says otherwise
    +-- UsageError              bad command-line use or API arguments (exit 2)
    |   +-- SubmissionError     a submission path that cannot be read at all (exit 2)
    |   +-- WeakSandboxError    hidden checks asked for where the sandbox is weak (exit 2)
    +-- SpecError               an exercise spec that is malformed or invalid (exit 2)
    +-- SandboxError            the learner process could not be set up (exit 3)

Each carries a message that tells the reader what to do. ``SpecError`` also
carries the file and line at fault, so the CLI can print
``exercises/x.yaml:14: checks[2].points: must be greater than 0``.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "GraderError",
    "SandboxError",
    "SpecError",
    "SubmissionError",
    "UsageError",
    "WeakSandboxError",
    "closest_name",
    "did_you_mean",
]


class GraderError(Exception):
    """Base of every error the grader raises on purpose."""

    exit_code = 3


class UsageError(GraderError):
    """The grader was asked for something it cannot do as asked."""

    exit_code = 2


class SubmissionError(UsageError):
    """A submission path that is missing, empty or unreadable as a whole."""


class WeakSandboxError(UsageError):
    """Hidden checks were asked for, but the sandbox here is below tier A or failed its start-up self-test.

    Learner code could read the hidden checks (or more), so the grader refuses
    unless told ``--allow-weak-sandbox``; the message names the flag.
    """


class SpecError(GraderError):
    """An exercise spec is malformed or refers to something that does not exist."""

    exit_code = 2

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None):
        self.message = message
        self.path = path
        self.line = line
        super().__init__(self.location_message())

    def location_message(self) -> str:
        """The message prefixed with ``file:line:`` where known."""
        where = ""
        if self.path:
            where = f"{self.path}:{self.line}: " if self.line else f"{self.path}: "
        return where + self.message


class SandboxError(GraderError):
    """The learner process could not be started or confined: the grader's fault, not the learner's."""


def closest_name(word: str, choices: Iterable[object]) -> str | None:
    """The one of ``choices`` spelt most like ``word`` (``difflib``'s ratio at least 0.6), or ``None``.

    For the "did you mean" of an error message about a name that is not one of ``choices``.
    """
    import difflib  # only a message about a misspelt name needs it: a grade never imports it

    found = difflib.get_close_matches(word, [str(choice) for choice in choices], n=1)
    return found[0] if found else None


def did_you_mean(word: str, choices: Iterable[object]) -> str:
    """``"; did you mean 'x'?"`` for the closest of ``choices`` (:func:`closest_name`), or ``""`` for none."""
    close = closest_name(word, choices)
    return f"; did you mean {close!r}?" if close is not None else ""
