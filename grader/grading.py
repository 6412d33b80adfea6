"""Orchestration: a submission and the catalog in, a ``Report`` out. No click, no printing.

``GradingSession`` keeps what is worth keeping between submissions (the
catalog, one warm sandbox parent, built cases, known-wrong outputs), so a
batch of 300 pays for them once. ``grade_submission`` is the one-shot API.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable

from grader import __version__
from grader.checks.engine import SourceModule, grade_implementation
from grader.checks.quiz import grade_quiz
from grader.errors import UsageError
from grader.results import ExerciseResult, Report, SandboxInfo
from grader.sandbox.outcomes import CallOutcome
from grader.sandbox.runner import Layers, LearnerProcess, Limits, Zygote
from grader.spec.loader import Catalog, load_catalog
from grader.spec.models import Exercise, ImplementationExercise, QuizExercise
from grader.submission import Submission, read_submission

__all__ = ["GradingSession", "SandboxFactory", "grade_submission"]


class SandboxFactory:
    """Opens confined learner processes from one warm parent; remembers which layers held."""

    def __init__(self, zygote: Zygote, limits: Limits, layers: Layers) -> None:
        self.zygote, self.limits, self.layers = zygote, limits, layers
        self.held: dict[str, Any] = {}

    def open(self, files: dict[str, bytes], module: str, entries: list[str], call_seconds: float) -> "_Recording":
        limits = replace(self.limits, call_seconds=call_seconds)
        return _Recording(self, LearnerProcess(self.zygote, files, module, entries, limits, self.layers))

    def info(self) -> SandboxInfo:
        facts = self.zygote.facts
        held = self.held
        abi = int(held.get("landlock_abi") or 0) if held else 0
        seccomp = bool(held.get("seccomp")) if held else False
        caps = bool(held.get("caps_dropped")) if held else False
        tier = "A" if abi and seccomp else "B" if seccomp else "C"
        warning = None
        missing = [name for name, on in (("landlock", abi), ("seccomp", seccomp)) if not on]
        if held and missing:
            weaker = {"landlock": "file reads are not confined", "seccomp": "processes, sockets and signals are not blocked"}
            warning = "sandbox tier {}: {}".format(tier, "; ".join(weaker[m] for m in missing))
        return SandboxInfo(tier=tier, landlock_abi=abi, seccomp=seccomp,
                           caps_dropped=caps or not facts.get("root"), warning=warning)


class _Recording:
    """A learner process that reports the layers it confirmed to its factory."""

    def __init__(self, factory: SandboxFactory, process: LearnerProcess) -> None:
        self._factory, self._process = factory, process

    @property
    def output(self) -> Any:
        return self._process.output

    @property
    def alive(self) -> bool:
        return self._process.alive

    def start(self) -> Any:
        start = self._process.start()
        if start.layers and not self._factory.held:
            self._factory.held = {k: v for k, v in start.layers.items() if k != "errors"}
        return start

    def call_many(self, calls: list[dict[str, Any]], blobs: list[bytes],
                  deadline: float | None = None) -> list[CallOutcome]:
        return self._process.call_many(calls, blobs, deadline)

    def close(self) -> None:
        self._process.close()


class GradingSession:
    """Grades many submissions against one catalog with one warm sandbox parent."""

    def __init__(
        self,
        catalog: Catalog | None = None,
        *,
        exercises_dir: str | os.PathLike[str] | None = None,
        zygote: Zygote | None = None,
        limits: Limits | None = None,
        layers: Layers | None = None,
    ) -> None:
        self._own_zygote = zygote is None
        self.zygote = zygote or Zygote.start()
        self.catalog = catalog or load_catalog(exercises_dir)
        self.factory = SandboxFactory(self.zygote, limits or Limits(), layers or Layers.from_environment())
        self.diagnosis_cache: dict[str, list[CallOutcome]] = {}

    def close(self) -> None:
        if self._own_zygote:
            self.zygote.close()

    def __enter__(self) -> "GradingSession":
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
    ) -> Report:
        """Grade one submission (a file or a folder)."""
        selected = self.select(exercise_ids, assignment)
        submission = read_submission(path)
        if label is not None:
            submission.label = label
        return self.grade_loaded(submission, selected, public_only=public_only)

    def grade_loaded(self, submission: Submission, selected: list[Exercise] | None, *, public_only: bool = False) -> Report:
        """Grade an already-read submission against ``selected`` (or what it attempts)."""
        problems = list(submission.notes)
        modules = self._locate(submission, selected)
        if selected is None:
            selected = self._attempted(submission, modules)
            if submission.answers_problem:
                problems.append(f"Your answers could not be read: {submission.answers_problem}")
            unknown = [key for key in submission.answers if key not in self.catalog.exercises]
            for key in unknown:
                problems.append(f"The answers file names {key!r}, which is not a quiz here; known quizzes: "
                                + ", ".join(e.id for e in self.catalog.exercises.values() if isinstance(e, QuizExercise)))
            if not selected and not problems:
                problems.append("Nothing here attempts an exercise: no entry function is defined and no quiz is answered. "
                                "Run 'grader list' to see the exercises and their entry functions.")
        results: list[ExerciseResult] = []
        for exercise in selected:
            if isinstance(exercise, QuizExercise):
                problem = submission.answers_problem if submission.has_answers_file else None
                results.append(grade_quiz(exercise, submission.answers.get(exercise.id), problem))
            else:
                results.append(self._grade_implementation(exercise, modules, public_only))
        hidden = sum(r.hidden_not_run for r in results)
        return Report(
            grader_version=__version__, submission=submission.label,
            score=float(sum(r.score for r in results)), max_score=float(sum(r.max_score for r in results)),
            exercises=results, public_only=public_only, hidden_not_run=hidden, problems=problems,
            sandbox=self.factory.info() if self.factory.held else None,
        )

    def _grade_implementation(self, exercise: ImplementationExercise, modules: dict[str, SourceModule],
                              public_only: bool) -> ExerciseResult:
        source = next((modules[e] for e in exercise.entries if e in modules), None)
        if source is None:
            source = modules.get("*")
        if source is None:
            names = ", ".join(f"{name}()" for name in exercise.entries)
            reason = f"Not attempted: no file of the submission defines {names}."
            return ExerciseResult(id=exercise.id, title=exercise.title, kind=exercise.kind, status="missing",
                                  score=0.0, max_score=exercise.max_score, reason=reason, checks=[])
        return grade_implementation(exercise, source, self.factory, public_only=public_only,
                                    root=self.catalog.root, diagnosis_cache=self.diagnosis_cache)

    def _locate(self, submission: Submission, selected: list[Exercise] | None) -> dict[str, SourceModule]:
        """Map each entry name to the file that defines it (``*``: the only file, when there is one)."""
        implementations = [e for e in (selected if selected is not None else self.catalog.exercises.values())
                           if isinstance(e, ImplementationExercise)]
        if not submission.python or not implementations:
            return {}
        names = sorted({name for e in implementations for name in e.entries})
        if len(submission.python) == 1 and selected is not None:
            (module,) = submission.python
            return {"*": SourceModule(dict(submission.python), module)}
        located: dict[str, SourceModule] = {}
        for module in submission.python:
            source = SourceModule(dict(submission.python), module)
            process = self.factory.open(submission.python, module, names, 2.0)
            try:
                start = process.start()
            finally:
                process.close()
            if start.status == "ok":
                for name, defined in start.entries.items():
                    if defined and name not in located:
                        located[name] = source
            else:
                source.failed_start = start
                text = submission.python[module].decode("utf-8", "replace")
                for name in names:
                    if name not in located and re.search(rf"\b{re.escape(name)}\b", text):
                        located[name] = source
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


def grade_submission(
    path: str | os.PathLike[str],
    *,
    exercises: Iterable[str] = (),
    assignment: str | None = None,
    catalog: Catalog | None = None,
    exercises_dir: str | os.PathLike[str] | None = None,
    public_only: bool = False,
    zygote: Zygote | None = None,
    limits: Limits | None = None,
    layers: Layers | None = None,
) -> Report:
    """Grade one submission and return the result model.

    ``exercises``/``assignment`` choose what to grade; with neither, every
    exercise the submission attempts is graded. The learner's code runs in a
    confined child process, never in this one.
    """
    if not Path(path).exists():
        raise UsageError(f"{path}: no such file or directory")
    with GradingSession(catalog, exercises_dir=exercises_dir, zygote=zygote, limits=limits, layers=layers) as session:
        return session.grade(path, exercise_ids=exercises, assignment=assignment, public_only=public_only)
