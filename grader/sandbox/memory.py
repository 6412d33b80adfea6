"""What the sandbox side of a grading session remembers between learner processes.

One ``SandboxMemo`` is owned by the session's sandbox front end
(``sandbox.front.Sandbox``) and handed to every learner process it opens:
the requests encoded so far (``requests.RequestMemo``) and recent batches
of answers already decoded (``answers.KnownAnswers``). Both are bounded.
"""

from __future__ import annotations

from msgspec import Struct, field

from grader.sandbox.answers import KnownAnswers
from grader.sandbox.requests import RequestMemo

__all__ = ["SandboxMemo"]


class SandboxMemo(Struct):
    """Encoded requests and known answers, shared by the learner processes of one session."""

    requests: RequestMemo = field(default_factory=RequestMemo)
    answers: KnownAnswers = field(default_factory=KnownAnswers)
