"""What a grading worker does with one learner, whatever executor runs it.

A worker process holds one ``GradingSession`` (so one warm sandbox parent)
for its whole life and grades one learner at a time. Only paths go in and
only the contract's JSON text comes out: learner data never crosses between
processes as a pickle. Anything the learner did becomes a graded result; only
a fault of the grader itself becomes ``Outcome.grader_error``, which the
batch turns into an "ask your instructor" result, tries once more on its next
run, then keeps (see ``run``).

A result is only as good as the files it graded, and a class folder may be
copied again while the batch runs (``rsync``, an LMS download). So the worker
fingerprints the learner's entry right before grading and again right after
(``grade_settled``): the result is of the fingerprinted files only when both
saw the same files, nothing written in between; otherwise the learner is
graded again, up to ``SETTLE_TRIES`` times, and the result says so. The
batch stores a result under the digest the worker graded
(``Outcome.graded_digest``), never under one taken earlier, and a result of
files that never held still under no key at all, so the next run grades it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader import __version__
from grader.batch.fingerprint import Fingerprint, fingerprint_learner
from grader.results import ExerciseResult, Report

__all__ = [
    "GRADER_ERROR_REASON",
    "SETTLE_TRIES",
    "Outcome",
    "Settled",
    "Task",
    "WorkerConfig",
    "grade_settled",
    "grade_task",
    "grader_error_report",
    "prepare",
]

SETTLE_TRIES = 3  # a copy still running after three gradings is left for the next run
# File times advance by the kernel's clock tick, not by the nanosecond: a write in the tick of the one before
# could leave st_ctime_ns as it was. Files changed that recently are hashed again once a tick has passed.
_TICK_NS = 20_000_000

GRADER_ERROR_REASON = (
    "The grader itself failed while grading this submission, so it has not been graded yet; "
    "this is not a fault of your work. Please report it to your instructor, who has the details."
)


@dataclass(frozen=True)
class WorkerConfig:
    """What every worker needs to know: where the specs are, what to grade, and the specs' digest.

    ``environ``: the variables a worker sets before it grades (the variant secret's, ``engine.variants``): a worker
    forked from a forkserver, or started on a Dask machine, does not inherit the batch's environment.
    """

    exercises_dir: str
    assignment: str
    spec_digest: str
    allow_weak_sandbox: bool = False
    environ: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Task:
    """One learner to grade: the exact name, the entry's absolute path and the label shown in the result.

    ``notes``: what the batch found while fingerprinting the entry (files it did not read, and why); the
    worker fingerprints the entry again when it grades it, and puts its own findings in the result.
    """

    learner: str
    path: str
    label: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Outcome:
    """The JSON result, or (for a grader fault) a message for the instructor.

    ``graded_digest``: the fingerprint digest of the files the result is of,
    when they held still while graded (the batch stores the result under it);
    ``unsettled``: they changed during every try, so the result stands for no
    state of the files. Neither is set by an executor that does not know.
    """

    result_json: str | None = None
    grader_error: str | None = None
    graded_digest: str | None = None
    unsettled: bool = False


@dataclass(frozen=True)
class Settled:
    """What ``grade_settled`` found: the report, the files it is of, and how many gradings it took."""

    report: Report
    fingerprint: Fingerprint
    settled: bool
    tries: int


def grade_settled(path: Path, grade: Callable[[tuple[str, ...]], Report], *, tries: int = SETTLE_TRIES) -> Settled:
    """Grade ``path`` until its files held still from the fingerprint before to the one after, at most ``tries`` times.

    ``grade`` is given the fingerprint's notes for the result. A report of
    files that changed says so in its problems, with or without a try that
    held still.
    """
    before = _fingerprint_settled(path)
    for attempt in range(1, tries + 1):
        report = grade(before.notes)
        after = fingerprint_learner(path)
        if before.same_files(after):
            if attempt > 1:
                report = _noted(
                    report,
                    f"The files changed while they were being graded, so they were graded again "
                    f"({attempt} times in all); this result is of the files as they were at the last grading.",
                )
            return Settled(report, before, True, attempt)
        before = after
    report = _noted(
        report,
        f"The files changed while they were being graded, each of the {tries} times the grader tried, so this "
        "result may not be of the final files; the next batch run grades them again.",
    )
    return Settled(report, before, False, tries)


def _fingerprint_settled(path: Path) -> Fingerprint:
    """The fingerprint of ``path``, taken a clock tick after its latest change, so any later write shows."""
    found = fingerprint_learner(path)
    waited = time.time_ns() - found.newest_change_ns
    if 0 <= waited < _TICK_NS:
        time.sleep((_TICK_NS - waited) / 1e9)
        found = fingerprint_learner(path)
    return found


def _noted(report: Report, note: str) -> Report:
    return dataclasses.replace(report, problems=[*report.problems, note])


# What ``prepare`` loaded, by exercises folder (the catalog, and a memo holding its plans):
# a worker forked from this process grades with them.
_PREPARED: dict[str, tuple[Any, Any]] = {}


def prepared_catalog(exercises_dir: Path) -> Any:
    """The catalog the latest :func:`prepare` loaded for ``exercises_dir``, which workers forked now grade with."""
    return _PREPARED.get(str(exercises_dir), (None, None))[0]


def prepare(exercises_dir: Path, assignment: str) -> Any:
    """Load the catalog, and what grading its ``assignment`` loads on first use, into this process.

    ``grader batch`` calls it while its warm parent boots: the local workers,
    forked from this process afterwards, then start with the catalog, every
    exercise's plan and the modules grading imports already in memory,
    instead of each loading them while grading its first learner. Returns
    the catalog (raises as ``load_catalog`` does); an assignment that does
    not resolve is left for the batch to report. Workers use the catalog of
    the latest call for their folder.
    """
    from grader.engine.memory import GradingMemo
    from grader.spec.loader import load_catalog

    catalog = load_catalog(exercises_dir)  # afresh: the specs may have changed
    memo = GradingMemo()
    _PREPARED[str(exercises_dir)] = (catalog, memo)
    try:
        exercises = catalog.assignment(assignment)
    except Exception:  # noqa: BLE001 - run_batch reports it, with the catalog's own message
        return catalog
    memo.warm(exercises)
    from grader.report import json as _json  # noqa: F401 - what a worker renders every result with
    from grader.safeyaml import warm as warm_yaml

    warm_yaml()
    return catalog


class _Worker:
    """A grading session, its chosen exercises, and the digest of the specs it loaded."""

    def __init__(self, config: WorkerConfig, warm_parent: Any = None) -> None:
        from grader.batch.cache import spec_digest
        from grader.grading import GradingSession

        self.warm_parent = warm_parent
        os.environ.update(dict(config.environ))
        catalog, memo = _PREPARED.get(config.exercises_dir, (None, None))
        self.session = GradingSession(
            catalog,
            exercises_dir=config.exercises_dir,
            warm_parent=warm_parent,
            memo=memo,
            allow_weak_sandbox=True if config.allow_weak_sandbox else None,
            keep_failing=True,  # the class's shared mistakes are found from them (batch.mistakes)
        )
        self.selected = self.session.select(assignment=config.assignment) or []
        self.digest = spec_digest(self.session.catalog, Path(config.exercises_dir))
        self.expected = config.spec_digest

    def grade(self, task: Task) -> Outcome:
        if self.digest != self.expected:
            return Outcome(
                grader_error="the exercise specs, solutions or grader code this worker loaded differ from "
                "those the batch started with: they changed during the run, or a remote "
                "worker has other files; run the batch again once every worker has the "
                f"same files (specs digest {self.digest[:12]}, expected {self.expected[:12]})"
            )
        path = Path(task.path)
        try:
            found = grade_settled(
                path,
                lambda notes: grade_entry(
                    self.session, self.selected, path, task.label, notes=notes, learner=task.learner
                ),
            )
        except Exception:  # noqa: BLE001 - a fault of ours, never of the learner: keep the traceback for the instructor
            return Outcome(grader_error=traceback.format_exc())
        from grader.report import render

        return Outcome(
            result_json=render(found.report, "json"),
            graded_digest=found.fingerprint.digest if found.settled else None,
            unsettled=not found.settled,
        )

    def close(self) -> None:
        self.session.close()
        if self.warm_parent is not None:  # given to us, so the session leaves it open
            self.warm_parent.close()


def grade_entry(
    session: Any,
    selected: list[Any],
    path: Path,
    label: str,
    *,
    notes: tuple[str, ...] = (),
    learner: str | None = None,
) -> Report:
    """Grade one learner's entry; an entry with nothing gradable still gets a result that says why.

    ``notes`` go into the result after the submission's own; ``learner`` (the batch's name for them) picks
    their variant of quizzes with params.
    """
    from grader.errors import SubmissionError
    from grader.submission.files import Submission, read_submission

    if path.is_symlink():
        submission = Submission(
            label=label,
            notes=[
                (
                    f"{label} is a symbolic link; the grader does not follow links, so nothing was graded. "
                    "Hand in the files themselves."
                )
            ],
        )
    else:
        try:
            submission = read_submission(path)
        except SubmissionError as error:
            message = str(error)
            prefix = f"{path}: "
            message = message.removeprefix(prefix)
            submission = Submission(label=label, notes=[f"{label}: {message}"])
        except OSError as error:  # a folder the grader may not list: how the learner's files are, not a grader fault
            submission = Submission(
                label=label,
                notes=[
                    f"{label}: cannot be read ({error.strerror or error}); "
                    "nothing was graded. Hand in files the grader can read."
                ],
            )
    submission.label = label
    submission.notes.extend(notes)
    return session.grade_loaded(submission, selected, learner=learner)


def grader_error_report(label: str, exercises: list[Any]) -> Report:
    """The result of a learner the grader failed on: every exercise in error, nothing scored, nothing blamed."""
    results = [ExerciseResult.unscored(e, "error", GRADER_ERROR_REASON) for e in exercises]
    return Report(
        grader_version=__version__,
        submission=label,
        score=0.0,
        max_score=float(sum(e.max_score for e in exercises)),
        exercises=results,
        problems=[GRADER_ERROR_REASON],
    )


# One worker per process and thread: a Dask worker may run tasks on several threads,
# and one sandbox client serves one thread at a time.
_local = threading.local()


def grade_task(config: WorkerConfig, task: Task) -> Outcome:
    """Grade ``task`` with this process's (and thread's) worker, starting it on first use."""
    workers: dict[WorkerConfig, _Worker] | None = getattr(_local, "workers", None)
    if workers is None:
        workers = _local.workers = {}
    worker = workers.get(config)
    if worker is None:
        try:
            worker = workers[config] = _Worker(config)
        except Exception:  # noqa: BLE001 - becomes a grader-error outcome
            return Outcome(grader_error="the grading worker could not start:\n" + traceback.format_exc())
    return worker.grade(task)


def start_worker(config: WorkerConfig, warm_parent: Any = None) -> _Worker:
    """A worker for a long-lived process of the local pool.

    ``warm_parent``: a warm parent made for it, else it starts one.
    """
    return _Worker(config, warm_parent)


def task_id(task: Task) -> str:
    """A stable, printable id for a task (Dask keys, logs)."""
    return "grade-" + hashlib.sha256(task.learner.encode("utf-8", "surrogateescape")).hexdigest()[:16]
