"""What a grading session remembers between submissions, so the next one does not work it out again.

One ``GradingMemo`` is owned by a ``GradingSession`` (or by whoever grades
several exercises in a row) and passed explicitly to
``grade_implementation``. It holds each exercise's plan (with its call
texts and encodings) and what its checks concluded (``PlanFindings``), the
case lists plans share, and
the answers of instructor solutions (references and known-wrong ones) and
of handouts' answers files. Every store is a bounded LRU
(``grader.memo.BoundedMemo``) keyed by values: an exercise's id with the ids
of the checks asked for, a case set's name, a batch's key. A plan found
under its key is used only for the very exercise object it was built for,
so two catalogs with an exercise of the same id never share one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from grader.checks.base import Check
from grader.checks.cases import Case, build_cases
from grader.engine.disk_cache import stored_held, stored_plan
from grader.engine.findings import PlanFindings
from grader.engine.plan import Plan, build_plan, checks_to_run
from grader.engine.separation import Separation
from grader.memo import BoundedMemo
from grader.sandbox.outcomes import CallOutcome

if TYPE_CHECKING:
    from grader.sandbox.contracts import LearnerProcessLike
    from grader.spec.models import ImplementationExercise

__all__ = ["GradingMemo"]

_PLANS_KEPT = 64
_CASE_SETS_KEPT = 256
_INSTRUCTOR_KEPT = 128
_ANSWER_FILES_KEPT = 16
_PROCESSES_KEPT = 4


class GradingMemo:
    """Plans, case sets and instructor solutions' answers of one grading session (see the module's docstring)."""

    def __init__(self) -> None:
        self.plans: BoundedMemo[tuple[str, tuple[str, ...]], Plan] = BoundedMemo(_PLANS_KEPT)
        self.judged: BoundedMemo[tuple[str, tuple[str, ...]], PlanFindings] = BoundedMemo(_PLANS_KEPT)
        self.case_sets: BoundedMemo[tuple[str, str], tuple[ImplementationExercise, list[Case]]] = BoundedMemo(
            _CASE_SETS_KEPT
        )
        # By the solution file's path and the key of the batch it answered (``engine.instructor_runs``).
        self.instructor: BoundedMemo[tuple[str, str], list[CallOutcome]] = BoundedMemo(_INSTRUCTOR_KEPT)
        self.answer_files: BoundedMemo[str, dict[str, CallOutcome]] = BoundedMemo(_ANSWER_FILES_KEPT)
        # By exercise id and check ids: the plan and its calls that tell known mistakes apart (``engine.diagnosis``).
        self.separations: BoundedMemo[tuple[str, tuple[str, ...]], tuple[Plan, Separation]] = BoundedMemo(_PLANS_KEPT)
        # Reference processes kept open for calls made from learners' answers (``instructor_runs.ask_kept``).
        self.kept: dict[Any, LearnerProcessLike] = {}

    def keep(self, key: Any, process: LearnerProcessLike) -> None:
        """Keep ``process`` under ``key`` for later calls; the oldest kept one is closed beyond a few."""
        self.kept[key] = process
        while len(self.kept) > _PROCESSES_KEPT:
            self.kept.pop(next(iter(self.kept))).close()

    def close(self) -> None:
        """Close the processes kept for instructor solutions (the session is done)."""
        while self.kept:
            self.kept.popitem()[1].close()

    def plan(self, exercise: ImplementationExercise, checks: list[Check]) -> Plan:
        """The exercise's plan for these checks: remembered, else loaded from disk, else built (and stored)."""
        key = (exercise.id, tuple(check.id for check in checks))
        plan = self.plans.get(key)
        if plan is None or plan.exercise is not exercise:
            plan = stored_plan(exercise, checks, self._build)
            self.plans[key] = plan
        return plan

    def findings(self, plan: Plan) -> PlanFindings:
        """What the checks of ``plan`` concluded so far this session, begun with what earlier runs kept on disk."""
        key = (plan.exercise.id, plan.check_ids())
        found = self.judged.get(key)
        if found is None or found.plan is not plan:
            found = PlanFindings(plan, stored_held(plan.exercise, plan.check_ids()))
            self.judged[key] = found
        return found

    def warm(self, exercises: list[Any], *, public_only: bool = False) -> None:
        """Build (or load) the plan of every implementation exercise among ``exercises`` now, as grading would."""
        for exercise in exercises:
            # an ImplementationExercise; one with params is planned per learner, as their variant
            if exercise.kind in ("implementation", "witness") and not exercise.params:
                self.plan(exercise, checks_to_run(exercise, public_only))

    def cases(self, exercise: ImplementationExercise, name: str, kinds: dict[str, str]) -> list[Case]:
        """The exercise's case set ``name``, drawn once per session (specs do not change)."""
        hit = self.case_sets.get((exercise.id, name))
        if hit is None or hit[0] is not exercise:
            hit = (exercise, build_cases(list(exercise.cases[name]), kinds, (exercise.id, name)))
            self.case_sets[(exercise.id, name)] = hit
        return hit[1]

    def _build(self, exercise: ImplementationExercise, checks: list[Check]) -> Plan:
        return build_plan(exercise, checks, self.cases)
