"""Known mistakes as the premises of hints: which known-wrong solutions a failing check's answers agree with.

A hint written for one mistake (``when: {like: global-max}``) is true of a
learner's code only when their answers are that mistake's on the failing
cases; ``KnownMistakes`` asks that of the solutions the check's hints name,
and of no other, through ``engine.diagnosis`` (the known-wrong solutions'
answers are asked once per session and kept on disk).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct

from grader.engine.diagnosis import agrees_with
from grader.engine.findings import CheckRun
from grader.engine.plan import Plan
from grader.sandbox.outcomes import CallOutcome

if TYPE_CHECKING:
    from grader.engine.memory import GradingMemo
    from grader.sandbox.contracts import ProcessFactory
    from grader.spec.models import ImplementationExercise

__all__ = ["KnownMistakes"]


class KnownMistakes(Struct):
    """The known-wrong solutions of one exercise, asked whether a failing check's answers agree with theirs."""

    exercise: ImplementationExercise
    factory: ProcessFactory
    root: Path
    memo: GradingMemo
    plan: Plan
    references: dict[int, CallOutcome]

    def shown(self, run: CheckRun) -> frozenset[str]:
        """The ids, among those the check's hints name, of the known mistakes ``run``'s failing answers show."""
        named = {hint.when.like for hint in run.check.hint_list() if hint.when.like}
        if not named or not run.failing:
            return frozenset()
        return frozenset(
            wrong.id
            for wrong in self.exercise.known_wrong
            if wrong.id in named
            and agrees_with(self.exercise, wrong, run, self.factory, self.root, self.memo, self.plan, self.references)
        )
