"""How many bytes a submission's learner processes may send the grader: per answer, per exercise, per submission.

Whatever a learner process sends is read into the grader's memory, and an
exercise's answers are held until they are judged. Each limit is checked
on a frame's length prefix, before its payload is read (``frames.MessageParser``),
so a refused frame costs the grader nothing.

The sizes come from what the catalog needs, measured on every exercise's
whole plan: the largest answer of a reference solution is 1.1 KiB
(attention-weights), the most an exercise's reference answers add up to is
19 KiB (temperature, 120 calls), and all of them together 107 KiB. A wrong
answer of a plausible shape must still be judged, not refused: an outer
product of a call's inputs (cross-entropy's 240 numbers) is 450 KiB, one on
every call of an exercise 1.1 MiB, on every call of the catalog 2.2 MiB.
Each limit is a few times the largest of these; the grader then stays
within a small multiple of them whatever a submission returns.

Standard library only: the learner process reads ``ANSWER_BYTES`` to refuse
a value it would not be allowed to hand back.
"""

from __future__ import annotations

from typing import Any

from grader.sandbox.frames import LimitExceeded

__all__ = ["ANSWER_BYTES", "EXERCISE_BYTES", "HEADER_BYTES", "SUBMISSION_BYTES", "ReplyBudget", "size_error"]

ANSWER_BYTES = 1 << 20  # numbers in one answer: twice the largest plausible wrong shape (450 KiB)
EXERCISE_BYTES = 4 << 20  # an exercise's answers: 3.5 times plausible wrong shapes on every call (1.1 MiB)
SUBMISSION_BYTES = 16 << 20  # a submission's answers: 7 times plausible wrong shapes on every call (2.2 MiB)
# A message's JSON header (and the heads of its arrays), beside its numbers. A header becomes Python
# objects of many times its size, so it is kept well below an answer; a learner process's largest
# honest one (an exception with 20 frames of escaped text, or a batch, which it cuts at 128 KiB) fits.
HEADER_BYTES = 256 << 10

SCOPES = ("answer", "exercise", "submission")


def size_error(scope: str, limit: int) -> dict[str, Any]:
    """The facts of a reply refused for its size, as a call outcome's ``error`` (``reasons`` phrases them)."""
    return {"type": "ValueError", "message": "", "frames": [], "kind": "size", "scope": scope, "limit": limit}


class ReplyBudget:
    """The bytes one submission's learner processes may still send: the allowance of their frame parsers.

    One budget serves a submission; :meth:`start_exercise` opens each
    exercise's share. Every frame is charged before it is read, length
    prefix included; one that does not fit raises ``LimitExceeded`` naming
    the limit. Once the exercise's or the submission's limit is reached it
    stays reached (``spent``): a new process would only be refused again.
    """

    def __init__(
        self,
        answer: int = ANSWER_BYTES,
        exercise: int = EXERCISE_BYTES,
        submission: int = SUBMISSION_BYTES,
        header: int = HEADER_BYTES,
    ) -> None:
        self.limits = {"answer": answer, "exercise": exercise, "submission": submission}
        self.header = header
        self._exercise_sent = 0
        self._submission_sent = 0
        self.spent: LimitExceeded | None = None

    def start_exercise(self) -> None:
        """Begin the next exercise's share (a spent submission stays spent)."""
        self._exercise_sent = 0
        if self.spent is not None and self.spent.scope == "exercise":
            self.spent = None

    def admit(self, frame: int, message: int) -> None:
        """Charge ``frame`` bytes to a message of ``message`` bytes so far; ``LimitExceeded`` if they do not fit.

        An answer may carry ``header`` bytes beside its numbers; a batch of
        answers is held to the same size as one answer (the learner process
        cuts its batches to fit).
        """
        if self.spent is not None:
            raise LimitExceeded(self.spent.scope, self.spent.limit)
        if message + frame > self.limits["answer"] + self.header:
            raise LimitExceeded("answer", self.limits["answer"])
        for scope, sent in (("exercise", self._exercise_sent), ("submission", self._submission_sent)):
            if sent + frame > self.limits[scope]:
                self.spent = LimitExceeded(scope, self.limits[scope])
                raise LimitExceeded(scope, self.limits[scope])
        self._exercise_sent += frame
        self._submission_sent += frame

    def spent_error(self) -> dict[str, Any] | None:
        """``size_error`` of the exercise's or submission's limit once reached, else ``None``."""
        return None if self.spent is None else size_error(self.spent.scope, self.spent.limit)
