"""What each check's calls printed: the output of an exercise's learner processes, cut by call, given to checks.

The plan's calls are pooled and sent once however many checks name them, so
output is gathered by call (``CallOutput``, fed by ``call_loop``) and only
then handed to checks (``CallOutput.by_check``): a call several checks
share gives its output to the first of them in the plan's order, so nothing
is shown twice. The import's output is the first process's only: a process
started again after a crash imports the file again and prints it again.
"""

from __future__ import annotations

from collections.abc import Iterable

from grader.engine.plan import Plan
from grader.results import PrintedOutput
from grader.sandbox.contracts import CapturedOutput

__all__ = ["CallOutput"]

# A check's text at most: many calls printing past what the capture keeps each add a line saying so, and
# no format shows more than a few hundred characters of a check's output.
_CHECK_CHARS = 8 << 10


class CallOutput:
    """The output of one exercise's learner processes, by plan call, in the order it was printed.

    ``sent`` records the plan keys each ``call_many`` asked for, ``collect``
    takes a process's output once it is closed (its pipe drained). A process
    whose output was not cut by call (one that never got through its import,
    a test double) gives nothing; when none was cut, there is nothing to give
    checks (``by_check`` is ``None``) and the exercise shows its output whole.
    """

    def __init__(self) -> None:
        self._sent: list[int] = []  # plan keys sent to the current process, in the order sent
        self._by_key: dict[int, list[tuple[int, str]]] = {}  # key -> (when, text) of each process that printed
        self._printed = 0  # texts collected so far: the order they were printed in
        self._imported: str | None = None

    def sent(self, keys: list[int]) -> None:
        """The current process is asked for the calls numbered ``keys``, in this order."""
        self._sent.extend(keys)

    def collect(self, output: CapturedOutput) -> None:
        """Take what the current process printed (it is closed: everything it printed has been read)."""
        sent, self._sent = self._sent, []
        imported = output.import_excerpt()
        if imported is None:
            return
        if self._imported is None:
            self._imported = imported
        for call, text in sorted(output.call_excerpts().items()):
            if 0 <= call < len(sent):
                self._by_key.setdefault(sent[call], []).append((self._printed, text))
                self._printed += 1

    def by_check(self, plan: Plan) -> PrintedOutput | None:
        """The output cut by import and by check, each call's going to the first check of ``plan`` naming it."""
        if self._imported is None:
            return None
        claimed: set[int] = set()
        checks: dict[str, str] = {}
        for planned in plan.checks:
            texts: list[tuple[int, str]] = []
            for keys in planned.keys:
                for key in keys:
                    if key not in claimed:
                        claimed.add(key)
                        texts += self._by_key.get(key, [])
            if texts:
                checks[planned.check.id] = _joined(text for _, text in sorted(texts))[:_CHECK_CHARS]
        return PrintedOutput(imported=self._imported, checks=checks)


def _joined(texts: Iterable[str]) -> str:
    """Texts one after the other, each starting on a line of its own."""
    out = ""
    for text in texts:
        out += text if not out or out.endswith("\n") else "\n" + text
    return out
