"""Self-test the catalog: every check can be passed, and every check catches what it claims to.

For each implementation exercise, ``validate_catalog`` grades

- the reference solution, which must give a number on every call a check
  asks of it (every expected value comes from it: one it cannot give is a
  ``SpecError``) and pass every check, public and hidden;
- each known-wrong solution, which must fail (``failed``, ``error`` or
  ``timeout``) every check its ``must_fail`` names;
- the separating calls of its plan (``engine.separation``): chosen from the
  reference's and every known-wrong solution's answers and kept on disk for
  grading, with a note for each pair of solutions no call tells apart.

For each quiz it grades the answer key (which must score full marks) and
each wrong option or listed numeric mistake (which must not), so an answer
key and its reasons cannot drift apart; a quiz with params, on several of
its variants (``validate_quiz``). Spec structure itself (exactly one
correct option for a single-choice question, a reason on every option...)
is enforced when the catalog loads.

Grading goes through one ``GradingSession`` (its warm sandbox parent and
limits), as ``grader grade --exercise ID`` does, so a passing validation
means what a learner's run will see. The
result is data (``ValidationReport``); ``grader validate`` prints its lines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace

from grader.authoring.validate_examples import check_examples, stubbed_entries
from grader.authoring.validate_quiz import located, validate_quiz, validation_variants
from grader.authoring.verdicts import ValidationLine, to_author
from grader.checks.guard import RespondsToInput, movable_problem, reference_still
from grader.engine.call_loop import SourceModule, grade_implementation
from grader.engine.case_variants import exercise_for_variant
from grader.engine.diagnosis import separation
from grader.engine.instructor_runs import reference_failure, reference_outcomes
from grader.engine.variants import VariantError
from grader.errors import SpecError, UsageError
from grader.grading import GradingSession
from grader.results import CheckResult, ExerciseResult
from grader.spec.crossrefs import top_level_functions
from grader.spec.loader import Catalog
from grader.spec.models import (
    ImplementationExercise,
    KnownWrong,
)
from grader.submission.files import read_submission

__all__ = ["ValidationLine", "ValidationReport", "to_author", "validate_catalog"]

CAUGHT = ("failed", "error", "timeout")


@dataclass
class ValidationReport:
    lines: list[ValidationLine] = field(default_factory=list)

    @property
    def problems(self) -> list[ValidationLine]:
        return [line for line in self.lines if line.verdict == "problem"]

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        count = len({line.exercise for line in self.lines})
        exercises = f"{count} exercise{'s' if count != 1 else ''}"
        if self.ok:
            return f"validate: {exercises} self-tested, no problems."
        problems = len(self.problems)
        return f"validate: {problems} problem{'s' if problems != 1 else ''} in {exercises}."


def validate_catalog(
    catalog: Catalog,
    *,
    session: GradingSession | None = None,
    exercise_ids: Iterable[str] = (),
    on_line: Callable[[ValidationLine], None] | None = None,
) -> ValidationReport:
    """Self-test the exercises of ``catalog`` (all, or those in ``exercise_ids``).

    Grading goes through ``session``, or one opened for this run. ``on_line``
    is called with each verdict as soon as it is known, for progress output.
    """
    if session is not None and session.catalog.root != catalog.root:
        raise UsageError(
            f"the grading session serves the exercises under {session.catalog.root}, "
            f"not {catalog.root}; open one with GradingSession(catalog)"
        )
    chosen = [catalog.exercise(i) for i in exercise_ids] or list(catalog.exercises.values())
    own = session is None
    grading = session or GradingSession(catalog, allow_weak_sandbox=True)  # trusted solutions only
    report = ValidationReport()
    try:
        for exercise in chosen:
            verdicts = (
                _implementation_variants(catalog, exercise, grading)
                if isinstance(exercise, ImplementationExercise)
                else iter(validate_quiz(catalog, exercise))
            )
            for line in verdicts:
                if on_line is not None:
                    on_line(line)
                report.lines.append(line)
    finally:
        if own:
            grading.close()
    return report


def _implementation_variants(
    catalog: Catalog, exercise: ImplementationExercise, session: GradingSession
) -> Iterator[ValidationLine]:
    """The self-test of an exercise; one with params, of three of its variants (both ends and one drawn), each
    line naming the variant, and a value that cannot be computed for one a problem at its file:line."""
    if not exercise.params:
        yield from _implementation(catalog, exercise, session)
        return
    for variant in validation_variants(exercise, drawn=1):
        try:
            concrete = exercise_for_variant(exercise, variant)
        except VariantError as error:
            yield ValidationLine(exercise.id, "variants", "problem", located(catalog, exercise.id, error))
            continue
        for line in _implementation(catalog, concrete, session):
            yield replace(line, message=f"{line.message} [variant {variant.describe()}]")


def _grade(
    catalog: Catalog, exercise: ImplementationExercise, relative: str, session: GradingSession
) -> ExerciseResult:
    """Grade one solution file on every check, in the session's sandbox, as ``grade --exercise`` would.

    Without diagnosis (matching the output against known-wrong solutions):
    it only rewords reasons, never changes a status, and would double the run.
    The files are the spec author's own, so they run even where the sandbox
    is weaker than tier A (where ``grade`` refuses to run hidden checks).
    """
    submission = read_submission(catalog.resolve(relative))
    if len(submission.python) != 1:
        return session.grade_loaded(submission, [exercise]).exercises[0]
    (module,) = submission.python
    return grade_implementation(
        exercise,
        SourceModule(dict(submission.python), module),
        session.factory,
        root=None,
        memo=session.memo,
        references=catalog.root,
    )


def check_reference_answers(catalog: Catalog, exercise: ImplementationExercise, session: GradingSession) -> None:
    """Raise a ``SpecError`` when the reference solution gives no number on a call a check needs from it.

    Every expected value comes from the reference solution, so one it
    cannot give is the spec's problem, not a verdict on a solution: one line
    naming the exercise, the check and the case.
    """
    if exercise.reference_solution is None:
        return
    defined = top_level_functions(catalog.resolve(exercise.reference_solution)) or set()
    if not set(exercise.entries) <= defined:
        return  # grading it says which entry it lacks
    plan = session.memo.plan(exercise, list(exercise.checks))
    outcomes = reference_outcomes(exercise, plan, session.factory, session.memo, catalog.root)
    session.factory.release()  # a reference's process asked between submissions is shared with none
    for planned in plan.checks:
        failed = reference_failure(plan, planned, outcomes)
        if failed is not None:
            index, what = failed
            raise SpecError(
                f"{exercise.id}: check {planned.check.id}: the reference solution {exercise.reference_solution} "
                f"{what} on {plan.call_text(planned, index)}",
                path=str(catalog.sources.get(exercise.id, exercise.id)),
            )


def _guard_applies(catalog: Catalog, exercise: ImplementationExercise, session: GradingSession) -> list[ValidationLine]:
    """A problem when the exercise's guard (``responds-to-input``) can tell nothing apart on its entry.

    It judges drawn inputs it can move and on which the reference's own
    output moves; with none, it would pass a constant, so the spec says why.
    """
    check = next((c for c in exercise.checks if c.id == exercise.gate), None)
    if not isinstance(check, RespondsToInput):
        return []
    plan = session.memo.plan(exercise, list(exercise.checks))
    planned = next(p for p in plan.checks if p.check.id == check.id)
    drawn = [index for index, case in enumerate(planned.cases) if case.origin == "random"]
    entry = f"{planned.entry}()"
    subject = f"guard {check.id}"
    if not drawn:
        why = "its case sets hold no drawn (random) inputs, the only ones where it judges a response"
        return [ValidationLine(exercise.id, subject, "problem", f"cannot apply to {entry}: {why}")]
    problems = [movable_problem(planned.cases[index]) for index in drawn]
    if all(problems):
        return [ValidationLine(exercise.id, subject, "problem", f"cannot apply to {entry}: {problems[0]}")]
    outcomes = reference_outcomes(exercise, plan, session.factory, session.memo, catalog.root)
    session.factory.release()
    if all(
        problem
        or reference_still(
            [
                outcomes[key]
                for call, key in zip(planned.calls[index], planned.keys[index], strict=True)
                if call.on == "reference" and key in outcomes
            ]
        )
        for index, problem in zip(drawn, problems, strict=True)
    ):
        why = (
            "on every drawn input the reference's own output stays the same when the guard moves its arguments "
            "(float arrays and the arrays bound to given functions; float numbers when there are none; integers "
            "when nothing else moves), so the guard could not tell a constant from a computation"
        )
        return [ValidationLine(exercise.id, subject, "problem", f"cannot apply to {entry}: {why}")]
    return []


def _implementation(
    catalog: Catalog, exercise: ImplementationExercise, session: GradingSession
) -> Iterator[ValidationLine]:
    """The verdicts on one exercise, each as soon as its solution is graded."""
    reference = exercise.reference_solution
    if reference is None:
        yield ValidationLine(
            exercise.id,
            "reference",
            "problem",
            "the spec names no reference_solution, so nothing shows its checks can be passed",
        )
    else:
        stub = stubbed_entries(catalog.resolve(reference), exercise)
        if stub:
            yield ValidationLine(
                exercise.id,
                f"reference {reference}",
                "problem",
                f"is still a stub ({stub} only raises NotImplementedError): write the reference "
                "implementation there, then validate again",
            )
        else:
            check_reference_answers(catalog, exercise, session)
            yield from _guard_applies(catalog, exercise, session)
            graded = _grade(catalog, exercise, reference, session)
            yield from _reference(exercise, reference, graded)
            if graded.status != "missing" and graded.checks:
                yield from check_examples(
                    exercise,
                    lambda copy: _grade(catalog, copy, reference, session),
                    source=catalog.sources.get(exercise.id),
                )
    for wrong in exercise.known_wrong:
        stub = stubbed_entries(catalog.resolve(wrong.path), exercise)
        if stub:
            yield ValidationLine(
                exercise.id,
                f"known-wrong {wrong.id} ({wrong.path})",
                "problem",
                f"is still a stub ({stub} only raises NotImplementedError): write the mistake "
                "it stands for, then validate again",
            )
            continue
        yield from _known_wrong(exercise, wrong, _grade(catalog, exercise, wrong.path, session))
    yield from _separating(catalog, exercise, session)
    named = {check_id for wrong in exercise.known_wrong for check_id in wrong.must_fail}
    unproven = [check.id for check in exercise.checks if check.id not in named]
    if unproven:
        yield ValidationLine(
            exercise.id, "checks", "note", "no known-wrong solution is required to fail " + ", ".join(unproven)
        )


def _separating(
    catalog: Catalog, exercise: ImplementationExercise, session: GradingSession
) -> Iterator[ValidationLine]:
    """The calls that tell the known-wrong solutions apart (chosen and kept for grading), and the pairs none does.

    A mistake is named to a learner only when their answers agree with it on
    these calls too (``engine.separation``); two solutions no call tells
    apart can never be told apart in a learner's answers, so neither is named.
    """
    if not exercise.known_wrong or exercise.reference_solution is None:
        return
    plan = session.memo.plan(exercise, list(exercise.checks))
    found = separation(exercise, plan, session.factory, session.memo, catalog.root)
    session.factory.release()  # instructor processes asked between submissions are shared with none
    count = sum(len(keys) for keys in found.keys.values())
    if not found.unseparated:
        solutions = len(exercise.known_wrong)
        yield ValidationLine(
            exercise.id,
            "diagnosis",
            "ok",
            f"{count} separating call{'s tell' if count != 1 else ' tells'} its {solutions} known-wrong "
            f"solution{'s' if solutions != 1 else ''} and the reference apart",
        )
        return
    for first, second in found.unseparated:
        yield ValidationLine(
            exercise.id,
            "diagnosis",
            "note",
            f"{_named_solution(first)} and {_named_solution(second)} answer every call of the checks alike, "
            "so neither is named to a learner whose answers match them; add a case on which they differ",
        )


def _named_solution(label: str) -> str:
    return "the reference" if label == "reference" else f"known-wrong {label}"


def _reference(exercise: ImplementationExercise, path: str, result: ExerciseResult) -> list[ValidationLine]:
    subject = f"reference {path}"
    if result.status == "missing":
        names = ", ".join(f"{name}()" for name in exercise.entries)
        return [
            ValidationLine(
                exercise.id,
                subject,
                "problem",
                f"does not define {names}: a reference solution defines every entry of the spec",
            )
        ]
    if not result.checks:
        return [ValidationLine(exercise.id, subject, "problem", f"cannot be graded: {to_author(result.reason)}")]
    failing = [check for check in result.checks if check.status != "passed"]
    if not failing:
        return [ValidationLine(exercise.id, subject, "ok", f"passes all {len(result.checks)} checks")]
    if len(failing) > 1 and len({check.reason for check in failing}) == 1:
        return [
            ValidationLine(
                exercise.id,
                subject,
                "problem",
                f"fails all {len(failing)} of {len(result.checks)} checks: {to_author(failing[0].reason)}",
            )
        ]
    return [ValidationLine(exercise.id, subject, "problem", _failure(check)) for check in failing]


def _failure(check: CheckResult) -> str:
    """``fails CHECK (failed) on INPUT: expected ..., got ...``: the check and the case, to the spec's author."""
    if check.input:
        said = f"fails {check.id} ({check.status}) on {check.input}"
        if check.expected or check.got:
            said += f": expected {check.expected or '-'}, got {check.got or '-'}"
        return said
    return f"fails {check.id} ({check.status}): {to_author(check.reason)}"


def _known_wrong(exercise: ImplementationExercise, wrong: KnownWrong, result: ExerciseResult) -> list[ValidationLine]:
    subject = f"known-wrong {wrong.id} ({wrong.path})"
    if result.status == "missing":
        return [ValidationLine(exercise.id, subject, "problem", f"is not graded: {to_author(result.reason)}")]
    if len(result.checks) > 1 and len({(check.status, check.reason) for check in result.checks}) == 1:
        shared = result.checks[0].reason
        why = result.reason if shared.startswith("Not run:") else shared  # an import failure is told in the exercise's
        return [
            ValidationLine(
                exercise.id,
                subject,
                "problem",
                f"every check fails for one reason, so it shows nothing about its must_fail checks: {to_author(why)}",
            )
        ]
    statuses = {check.id: check for check in result.checks}
    escaped = [statuses[check_id] for check_id in wrong.must_fail if statuses[check_id].status not in CAUGHT]
    if not escaped:
        return [ValidationLine(exercise.id, subject, "ok", "is caught by " + ", ".join(wrong.must_fail))]
    return [
        ValidationLine(
            exercise.id,
            subject,
            "problem",
            f"{check.id} lets it through ({check.status}), though must_fail names it: {check.reason}",
        )
        for check in escaped
    ]
