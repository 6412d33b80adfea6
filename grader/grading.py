"""Orchestration: a submission and the catalog in, a ``Report`` out. No click, no printing.

``GradingSession`` keeps what is worth keeping between submissions (the
catalog, one warm parent behind the sandbox front end, and its memo of
plans, findings and known-wrong answers), so a batch of 300 pays for them
once. ``grade_submission`` is the one-shot API.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from grader import __version__
from grader.engine.call_loop import SourceModule, grade_implementation
from grader.engine.case_variants import grade_variant
from grader.engine.memory import GradingMemo
from grader.engine.reasons import describe_start_failure
from grader.engine.variants import read_secret, variant_for
from grader.errors import UsageError
from grader.results import ExerciseResult, Report, SandboxInfo
from grader.sandbox.front import Sandbox
from grader.sandbox.limits import Layers, Limits
from grader.sandbox.replies import ReplyBudget
from grader.sandbox.warm_parent import WarmParent
from grader.spec.folder import HANDOUT_MARKER, HANDOUT_SPECS
from grader.spec.loader import Catalog, load_catalog
from grader.spec.models import Exercise, ImplementationExercise, QuizExercise
from grader.submission.bindings import scan_names
from grader.submission.entry_files import choose_entry_file
from grader.submission.excerpts import SHOWN, bounded_notes, excerpt, listing
from grader.submission.files import Submission, read_submission
from grader.submission.locations import entry_location

if TYPE_CHECKING:
    from grader.engine.quiz import QuizForm

# The quiz engine is imported where a quiz is graded: a cold grade of one function does not load it.

__all__ = ["GradingSession", "grade_submission", "handout_note", "preflight_sandbox", "weak_sandbox_allowed"]

NOT_OF_RECORD = "a self-check, not a grade of record"


def preflight_sandbox(
    *, allow_weak_sandbox: bool | None = None, layers: Layers | None = None, warm_parent: WarmParent | None = None
) -> SandboxInfo:
    """Run the start-up self-test in a warm parent of its own; refuse a weak sandbox unless allowed.

    For commands that hand grading to other processes (``grader batch``):
    they learn before any learner runs whether hidden checks may be graded.
    ``warm_parent``: a warm parent started earlier (it is left running). Raises
    ``WeakSandboxError``; returns the ``sandbox`` block otherwise.
    """
    own = warm_parent is None
    warm_parent = warm_parent or WarmParent.start()
    try:
        sandbox = Sandbox(
            warm_parent,
            Limits(),
            layers or Layers.from_environment(),
            allow_weak=weak_sandbox_allowed(allow_weak_sandbox),
        )
        sandbox.require_strong()
        return sandbox.info()
    finally:
        if own:
            warm_parent.close()


def weak_sandbox_allowed(flag: bool | None = None) -> bool:
    """``--allow-weak-sandbox``, or ``GRADER_ALLOW_WEAK_SANDBOX=1`` when no flag was given (batch workers)."""
    if flag is not None:
        return flag
    return os.environ.get("GRADER_ALLOW_WEAK_SANDBOX", "").strip().lower() in ("1", "yes", "true")


class GradingSession:
    """Grades many submissions against one catalog with one warm parent.

    ``factory`` is the sandbox front end (``sandbox.front.Sandbox``); ``memo``
    what grading remembers between submissions (``engine.memory.GradingMemo``):
    pass one prepared earlier (``batch.worker.prepare``) to start with its plans.
    ``keep_failing``: each failed check's result keeps its first failing case for the instructor
    (``CheckResult.failing``); ``grader batch`` asks for it, ``grader grade`` does not.
    """

    def __init__(
        self,
        catalog: Catalog | None = None,
        *,
        exercises_dir: str | os.PathLike[str] | None = None,
        warm_parent: WarmParent | None = None,
        limits: Limits | None = None,
        layers: Layers | None = None,
        only: Iterable[str] = (),
        allow_weak_sandbox: bool | None = None,
        memo: GradingMemo | None = None,
        keep_failing: bool = False,
    ) -> None:
        self.keep_failing = keep_failing
        self._own_warm_parent = warm_parent is None
        self.warm_parent = warm_parent or WarmParent.start()
        self.catalog = catalog or load_catalog(exercises_dir, only=only)
        self.factory = Sandbox(
            self.warm_parent,
            limits or Limits(),
            layers or Layers.from_environment(),
            allow_weak=weak_sandbox_allowed(allow_weak_sandbox),
        )
        self.memo = memo if memo is not None else GradingMemo()

    def close(self) -> None:
        self.memo.close()  # reference processes kept for learners' witnesses
        if self._own_warm_parent:
            self.warm_parent.close()

    def __enter__(self) -> GradingSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def select(self, exercise_ids: Iterable[str] = (), assignment: str | None = None) -> list[Exercise] | None:
        """The exercises asked for, in order, or ``None`` to grade whatever the submission attempts."""
        chosen: list[Exercise] = []
        if assignment:
            chosen.extend(self.catalog.assignment(assignment))
        for exercise_id in exercise_ids:
            exercise = self.catalog.exercise(exercise_id)
            if exercise not in chosen:
                chosen.append(exercise)
        return chosen or None

    def grade(
        self,
        path: str | os.PathLike[str],
        *,
        exercise_ids: Iterable[str] = (),
        assignment: str | None = None,
        public_only: bool = False,
        label: str | None = None,
        learner: str | None = None,
    ) -> Report:
        """Grade one submission (a file or a folder); ``learner`` (their id) picks their variant of quizzes with
        params."""
        selected = self.select(exercise_ids, assignment)
        submission = read_submission(path)
        if label is not None:
            submission.label = label
        return self.grade_loaded(submission, selected, public_only=public_only, learner=learner)

    def grade_loaded(
        self,
        submission: Submission,
        selected: list[Exercise] | None,
        *,
        public_only: bool = False,
        learner: str | None = None,
    ) -> Report:
        """Grade an already-read submission against ``selected`` (or what it attempts).

        Raises ``WeakSandboxError`` (before any learner code runs) when hidden
        checks would run on a machine whose sandbox is weaker than tier A or
        failed its self-test, unless the session allows a weak sandbox; a
        ``UsageError`` when a quiz with params is graded with no ``learner``.
        """
        formed: list[QuizForm] = []  # quizzes a handout knows only by the form of their answers
        if selected is not None and submission.python:  # before the wait below: the warm parent may still be booting
            self.memo.warm(selected, public_only=public_only)
        self._require_sandbox(submission, selected, public_only)
        try:
            problems = list(submission.notes)
            modules, choices = self.locate_with_notes(submission, selected)
            if selected is None:
                selected = self._attempted(submission, modules)
                if submission.answers_problem and not any(isinstance(e, QuizExercise) for e in selected):
                    # no quiz it names: nothing else would say the file was there and unreadable
                    problems.append(f"Your answers could not be read: {submission.answers_problem}")
                forms = _quiz_forms(self.catalog) if submission.answers else {}
                formed = [
                    forms[key] for key in submission.answers if key in forms and key not in self.catalog.exercises
                ]
                unknown = [key for key in submission.answers if key not in self.catalog.exercises and key not in forms]
                if unknown:
                    named = listing([repr(excerpt(key)) for key in unknown[:SHOWN]], len(unknown), separator=", ")
                    which = "which is not a quiz here" if len(unknown) == 1 else "which are not quizzes here"
                    known = [e.id for e in self.catalog.exercises.values() if isinstance(e, QuizExercise)]
                    known += [key for key in forms if key not in known]
                    problems.append(
                        f"The answers file names {named}, {which}; known quizzes: {', '.join(known) or 'none'}"
                    )
                if not selected and not problems and not formed:
                    problems.append(
                        "Nothing here attempts an exercise: no entry function is defined "
                        "and no quiz is answered. "
                        "Run 'grader list' to see the exercises and their entry functions."
                    )
            # drawn before anything runs: an exercise with params and no learner is bad usage
            variants = {exercise.id: variant_for(exercise, learner, read_secret) for exercise in selected}
            graded: dict[int, ExerciseResult] = {}
            replies = ReplyBudget()  # what the submission's processes may send the grader, all exercises together
            # Exercises that hand the learner process the exercise's given functions go last: that process then
            # serves no other exercise, so graded last it is the only one of the submission to need a new process.
            for index in sorted(range(len(selected)), key=lambda i: _hands_over_functions(selected[i])):
                exercise = selected[index]
                if isinstance(exercise, QuizExercise):
                    given = submission.answers.get(exercise.id)
                    # answers another, readable file gives are graded; an unreadable file explains only the rest
                    problem = submission.answers_problem if given is None else None
                    from grader.engine.quiz_variants import grade_quiz_variant

                    graded[index] = grade_quiz_variant(exercise, given, problem, variants.get(exercise.id))
                else:
                    graded[index] = grade_variant(
                        exercise,
                        variants.get(exercise.id),
                        lambda concrete: self._grade_implementation(concrete, modules, public_only, replies),
                    )
                    graded[index].note = _choice_note(exercise, choices)
                    _locate(graded[index], submission, modules, exercise)
            results = [graded[index] for index in range(len(selected))]
            if formed:
                from grader.engine.quiz import check_quiz_form

                results += [check_quiz_form(form, submission.answers.get(form.id)) for form in formed]
        finally:
            self.factory.release()  # the exercises shared one process; it ends with the submission
        hidden = sum(r.hidden_not_run for r in results)
        return Report(
            grader_version=__version__,
            submission=submission.label,
            score=float(sum(r.score for r in results)),
            max_score=float(sum(r.max_score for r in results)),
            exercises=results,
            public_only=public_only,
            hidden_not_run=hidden,
            problems=bounded_notes(problems),
            sandbox=self.factory.info(),
            unsandboxed=self.factory.unsandboxed,
            handout=handout_note(self.catalog, selected),
        )

    def _require_sandbox(self, submission: Submission, selected: list[Exercise] | None, public_only: bool) -> None:
        """Refuse hidden checks on a weak sandbox: learner code could read them (quiz keys stay in this process)."""
        if public_only or not submission.python:
            return
        candidates = selected if selected is not None else list(self.catalog.exercises.values())
        if any(
            isinstance(exercise, ImplementationExercise)
            and any(check.visibility != "public" for check in exercise.checks)
            for exercise in candidates
        ):
            self.factory.require_strong()

    def _grade_implementation(
        self,
        exercise: ImplementationExercise,
        modules: dict[str, SourceModule],
        public_only: bool,
        replies: ReplyBudget,
    ) -> ExerciseResult:
        source = next((modules[e] for e in exercise.entries if e in modules), None)
        if source is None:
            source = modules.get("*")
        if source is None:
            names = ", ".join(f"{name}()" for name in exercise.entries)
            reason = f"Not attempted: no file of the submission defines {names}."
            return ExerciseResult.unscored(exercise, "missing", reason)
        result = grade_implementation(
            exercise,
            source,
            self.factory,
            public_only=public_only,
            root=self.catalog.root,
            memo=self.memo,
            replies=replies,
            keep_failing=self.keep_failing,
        )
        if source.failed_start is not None and result.status == "error" and not _mentions(source, exercise):
            # The file could not be imported, and nothing in it names this exercise's entries: its failure
            # belongs to the exercises it attempts, not to this one.
            names = ", ".join(f"{name}()" for name in exercise.entries)
            why = describe_start_failure(source.failed_start).rstrip(".")
            reason = f"Not attempted: your file does not mention {names} (and {why})."
            return ExerciseResult.unscored(exercise, "missing", reason)
        return result

    def locate(self, submission: Submission, selected: list[Exercise] | None) -> dict[str, SourceModule]:
        """Map each entry name to the file that defines it (``*``: the only file, when there is one)."""
        return GradingSession.locate_with_notes(self, submission, selected)[0]  # needs only catalog and _probe

    def locate_with_notes(
        self, submission: Submission, selected: list[Exercise] | None
    ) -> tuple[dict[str, SourceModule], dict[str, str]]:
        """``locate``, and for each entry several files define, the note on which was graded (``entry_files``)."""
        implementations = [
            e
            for e in (selected if selected is not None else self.catalog.exercises.values())
            if isinstance(e, ImplementationExercise)
        ]
        if not submission.python or not implementations:
            return {}, {}
        named = {name: e.entry_file for e in reversed(implementations) for name in e.entries if e.entry_file}
        names = sorted({name for e in implementations for name in e.entries})
        sources = {module: SourceModule(dict(submission.python), module) for module in submission.python}
        if len(submission.python) == 1 and selected is not None:
            return {"*": next(iter(sources.values()))}, {}
        scans = {
            module: scan_names(data.decode("utf-8", "replace"), names) for module, data in submission.python.items()
        }
        definers: dict[str, list[str]] = {}
        unsure: list[str] = []
        for name in names:  # reading the source finds the defining files without starting a process
            binders = [module for module, scan in scans.items() if name in scan.bound]
            if binders:  # bound at the top level of each: the rule below chooses among them
                definers[name] = binders
            elif any(name in scan.mentioned for scan in scans.values()):
                unsure.append(name)  # no file visibly binds it: importing each tells which really defines it
        if unsure:
            definers.update(self._probe(submission, sources, unsure))
        located: dict[str, SourceModule] = {}
        notes: dict[str, str] = {}
        for name, modules in definers.items():
            stems = {module.removesuffix(".py"): module for module in modules}
            own = [m for m in modules if stems.get(scans[m].imported.get(name, "").lstrip(".")) in (None, m)]
            modules = own or modules  # a file importing the entry from another that defines it is not a rival
            choice = choose_entry_file(name, modules, submission.modified, submission.origins, named.get(name))
            located[name] = sources[choice.module]
            if choice.note:
                notes[name] = choice.note
        return located, notes

    def _probe(
        self, submission: Submission, sources: dict[str, SourceModule], names: list[str]
    ) -> dict[str, list[str]]:
        """Import each file in a learner process to see which define the names reading could not place.

        A file whose import fails counts as defining the names it mentions: its failure is then what is graded.
        """
        located: dict[str, list[str]] = {}
        for module, source in sources.items():
            process = self.factory.open(submission.python, module, names, 2.0)
            try:
                start = process.start()
            finally:
                process.close()
            if start.status == "ok":
                for name, defined in start.entries.items():
                    if defined:
                        located.setdefault(name, []).append(module)
            else:
                source.failed_start = start
                mentioned = scan_names(submission.python[module].decode("utf-8", "replace"), names).mentioned
                for name in names:
                    if name in mentioned:
                        located.setdefault(name, []).append(module)
        return located

    def _attempted(self, submission: Submission, modules: dict[str, SourceModule]) -> list[Exercise]:
        attempted: list[Exercise] = []
        for exercise in self.catalog.exercises.values():
            if isinstance(exercise, QuizExercise):
                if exercise.id in submission.answers:
                    attempted.append(exercise)
            elif any(name in modules for name in exercise.entries):
                attempted.append(exercise)
        return attempted


def _quiz_forms(catalog: Catalog) -> dict[str, QuizForm]:
    """The quizzes a handout's ``public-checks`` describes by the form of their answers (none elsewhere).

    A handout holds no answer key: these let ``grade answers.yaml --public`` say whether each answer is read.
    A forms file that cannot be read gives none, so the answers file's quizzes are named as unknown.
    """
    if not (catalog.root / HANDOUT_MARKER).is_file():
        return {}
    from grader.engine.quiz import QUIZ_FORMS, QuizForm

    path = catalog.root / HANDOUT_SPECS / QUIZ_FORMS
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        forms = [QuizForm.from_data(item) for item in data["quizzes"]]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return {form.id: form for form in forms}


def _mentions(source: SourceModule, exercise: ImplementationExercise) -> bool:
    """Whether the graded file of ``source`` names any of ``exercise``'s entry functions anywhere in its text."""
    text = source.files.get(source.module, b"").decode("utf-8", "replace")
    return bool(scan_names(text, exercise.entries).mentioned)


def handout_note(catalog: Catalog, graded: Iterable[Exercise]) -> str | None:
    """The sentence marking a report graded against a handout, or ``None`` for the instructor's specs.

    A handout (``grader release``) holds the public specs and the
    reference's answers to their calls, in files its holder can rewrite:
    answers computed from wrong code make wrong code pass. So a report is
    marked when its specs are a handout's: some spec takes its expected
    values from an answers file (``reference_answers``, which only a
    handout's specs use), or they sit in a handout's ``public-checks``
    folder or beside its marker file. The sentence names the answers files
    the graded exercises used.
    """
    answers = sorted(
        {e.reference_answers for e in graded if isinstance(e, ImplementationExercise) and e.reference_answers}
    )
    from_handout = (
        any(isinstance(e, ImplementationExercise) and e.reference_answers for e in catalog.exercises.values())
        or any(path.parent.name == HANDOUT_SPECS for path in catalog.sources.values())
        or (catalog.root / HANDOUT_MARKER).is_file()
    )
    if not answers and not from_handout:
        return None
    used = f" and its reference answers ({', '.join(answers)})" if answers else ""
    return (
        f"Graded against a handout's public checks{used}, which whoever holds the handout can change: {NOT_OF_RECORD}."
    )


def _choice_note(exercise: ImplementationExercise, choices: dict[str, str]) -> str | None:
    """The notes on which file was graded for the exercise's entries, when several files define one."""
    notes = [choices[name] for name in exercise.entries if name in choices]
    return " ".join(notes) or None


def _hands_over_functions(exercise: Exercise) -> bool:
    """Whether some entry of ``exercise`` takes a function (the grader's own, built in the learner process)."""
    return isinstance(exercise, ImplementationExercise) and any(
        kind == "callable" for entry in exercise.entries.values() for kind in entry.args.values()
    )


def grade_submission(
    path: str | os.PathLike[str],
    *,
    exercises: Iterable[str] = (),
    assignment: str | None = None,
    catalog: Catalog | None = None,
    exercises_dir: str | os.PathLike[str] | None = None,
    public_only: bool = False,
    warm_parent: WarmParent | None = None,
    limits: Limits | None = None,
    layers: Layers | None = None,
    allow_weak_sandbox: bool | None = None,
) -> Report:
    """Grade one submission and return the result model.

    ``exercises``/``assignment`` choose what to grade; with neither, every
    exercise the submission attempts is graded. The learner's code runs in a
    confined child process, never in this one.
    """
    if not Path(path).exists():
        raise UsageError(f"{path}: no such file or directory")
    exercises = list(exercises)
    only = exercises if exercises and not assignment else ()
    with GradingSession(
        catalog,
        exercises_dir=exercises_dir,
        warm_parent=warm_parent,
        limits=limits,
        layers=layers,
        only=only,
        allow_weak_sandbox=allow_weak_sandbox,
    ) as session:
        return session.grade(path, exercise_ids=exercises, assignment=assignment, public_only=public_only)


def _locate(
    result: ExerciseResult, submission: Submission, modules: dict[str, SourceModule], exercise: Exercise
) -> None:
    """Record in ``result`` the file and line that define the exercise's entry, when it was graded."""
    if result.status == "missing":
        return
    names = list(exercise.entries) if isinstance(exercise, ImplementationExercise) else []
    source = next((modules[name] for name in names if name in modules), modules.get("*"))
    if source is not None:
        result.file, result.line = entry_location(submission, source.module, names)
