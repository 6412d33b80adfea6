"""``run_batch``: grade a class folder into a gradebook, feedback and the class picture.

The run, in order: load the specs, find the learners, skip every learner
whose stored result has the key it would have now, hand the others to the
executor, store each result atomically the moment it arrives, then rebuild
``gradebook.csv``, ``summary.md`` and ``report.html`` from all stored results.
An interrupted run keeps every result it stored; the next run grades the rest.

A result is stored under the key of the files it graded: the worker
fingerprints a learner's entry before and after grading it, and grades again
while the two differ (``worker.grade_settled``); a result of files that never
held still is stored under no learner's key, so the next run grades it again.
The output folder is checked before anything is graded (``outdir``).

A learner the grader itself failed on is stored with an error result that
asks to report it, and tried again by the next run; when that fails too, the
failure is kept like a result (``cache.GRADER_ERROR_TRIES``) until the
learner's files, the specs or the grader change, or the run is forced. So
one failure never costs the other learners, and a grader bug that one learner
meets is not met again on every run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.batch.cache import (
    KeyRecord,
    read_key,
    remove_stale_temporaries,
    result_key,
    spec_digest,
)
from grader.batch.executors import DaskExecutor, Executor, LocalPool, default_jobs
from grader.batch.fingerprint import Fingerprint, fingerprint_learner
from grader.batch.learners import Learner, discover_learners
from grader.batch.lock import OutputLock
from grader.batch.mistakes import (
    failing_to_json,
    take_failing,
)
from grader.batch.outdir import OUTPUT_FILES, check_out, check_output_files, make_out
from grader.batch.overrides import find_overrides, load_overrides
from grader.batch.progress import NoProgress, Progress
from grader.batch.rebuild import failing_path, feedback_text, output_paths, rebuild_outputs, write_output
from grader.batch.summary import (
    ClassStats,
    format_summary_text,
)
from grader.batch.worker import Outcome, Task, WorkerConfig, grader_error_report, prepare
from grader.engine.quiz_variants import require_variant_secret
from grader.engine.variants import variant_environ
from grader.errors import UsageError, closest_name
from grader.results import Report, report_from_worker
from grader.spec.models import Exercise, ImplementationExercise

__all__ = ["BatchSummary", "run_batch"]

ExecutorFactory = Callable[[WorkerConfig], Executor]


@dataclass
class BatchSummary:
    """What a batch run did and what the class looks like.

    ``grader_errors``: learners the grader failed on in this run;
    ``kept_grader_errors``: learners it failed on in earlier runs, as often
    as it tries, and left alone in this one (``reused`` counts them).
    """

    out: Path
    learners: int
    graded: int
    reused: int
    stats: ClassStats
    grader_errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    kept_grader_errors: list[str] = field(default_factory=list)
    similarity: bool = False  # similarity.html was written

    def text(self) -> str:
        """The summary for a terminal."""
        head = f"{self.learners} learners: {self.graded} graded now, {self.reused} unchanged since the last run.\n"
        tail = f"Wrote {self.out}/gradebook.csv, summary.md, report.html, results/ and feedback/.\n"
        if self.similarity:
            tail += f"Wrote {self.out}/similarity.html: pairs of learners alike, evidence to look at, for you alone.\n"
        notes = "".join(f"note: {note}\n" for note in self.notes)
        return head + notes + format_summary_text(self.stats) + tail


def run_batch(
    directory: str | os.PathLike[str],
    *,
    assignment: str,
    out: str | os.PathLike[str],
    jobs: int | None = None,
    force: bool = False,
    scheduler: str | None = None,
    progress: Progress | None = None,
    exercises_dir: str | os.PathLike[str] | None = None,
    executor: ExecutorFactory | None = None,
    allow_weak_sandbox: bool = False,
    warm_parent: Any = None,
    catalog: Any = None,
    before_grading: Callable[[], Any] | None = None,
    overrides: str | os.PathLike[str] | None = None,
    only: Collection[str] = (),
    similarity: Sequence[str] | None = None,
) -> BatchSummary:
    """Grade every learner under ``directory`` for ``assignment`` into ``out``.

    ``jobs`` worker processes (default: one per core) grade in parallel on
    this machine, or a Dask cluster does when ``scheduler`` is its address.
    ``force`` grades every learner again. ``allow_weak_sandbox`` lets every
    worker (remote ones included) grade hidden checks below sandbox tier A.
    ``executor`` replaces the executor
    (a factory given the worker configuration), for tests. ``warm_parent``: the
    command's warm parent, which local workers are then given clones of
    (see ``LocalPool``); it stays the caller's to close. ``catalog``: what
    ``prepare`` returned for these specs, when the caller loaded them already
    (``grader batch`` does, while its warm parent boots). ``before_grading``
    runs once the learners are found and hashed, before anything is written
    or graded (``grader batch`` passes its sandbox preflight, which waits for
    the warm parent: the hashing is done meanwhile). ``overrides``: the
    instructor's overrides file (default: ``overrides.yaml`` beside the
    exercises folder, when there is one; see ``grader.batch.overrides``),
    applied to the outputs, never to the stored grading. ``only``: grade
    these learners now, whether or not they changed, and no one else.
    ``similarity``: the code every learner was handed (stubs, scaffold), to
    write ``similarity.html`` (``grader.batch.similarity``) leaving it out;
    ``None`` writes no such page and removes one an earlier run left. Raises
    ``UsageError`` for bad arguments; ``KeyboardInterrupt`` passes through
    after the finished results are stored.
    """
    from grader.spec.loader import find_exercises_dir

    folder, out_dir = Path(directory), Path(out)
    if not folder.is_dir():
        raise UsageError(f"{directory}: not a folder (expected one entry per learner in it)")
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {jobs}")
    exercises_path = find_exercises_dir(exercises_dir).resolve()
    catalog = catalog if catalog is not None else prepare(exercises_path, assignment)
    exercises = catalog.assignment(assignment)
    require_variant_secret(exercises)  # before any learner: without it, every one would fail alike
    check_out(folder, out_dir)
    learners, notes = discover_learners(folder)
    if not learners:
        raise UsageError(f"{directory}: no learners in it (expected one folder or file per learner)")
    chosen = _chosen(only, learners, directory)
    override_file = find_overrides(None if overrides is None else os.fspath(overrides), exercises_path)
    names = [learner.name for learner in learners]
    adjust = load_overrides(override_file, learners=names, exercises=exercises) if override_file else []
    check_output_files([out_dir / name for name in (*OUTPUT_FILES, OutputLock.NAME)])
    check_output_files(path for learner in learners for path in output_paths(out_dir, learner))
    specs = spec_digest(catalog, exercises_path)
    prints = {learner.name: fingerprint_learner(learner.path) for learner in learners}
    keys = {name: result_key(found.digest, specs, assignment) for name, found in prints.items()}
    if before_grading is not None:
        before_grading()
    results, feedback = make_out(out_dir)
    with OutputLock(out_dir):
        for where in (results, feedback, out_dir / "failing", out_dir):
            remove_stale_temporaries(where)
        records = {learner.name: _stored(out_dir, learner, keys[learner.name]) for learner in learners}
        # --only grades the learners it names now, changed or not, and leaves every other stored result alone
        due = {name for name in records if force or not _finished(records[name], prints[name])}
        todo = [learner for learner in learners if learner.name in (chosen or due)]
        graded_now = {learner.name for learner in todo}
        kept = [
            name
            for name, record in records.items()
            if name not in graded_now and record is not None and record.failure_kept
        ]
        config = WorkerConfig(
            exercises_dir=str(exercises_path),
            assignment=assignment,
            spec_digest=specs,
            allow_weak_sandbox=allow_weak_sandbox,
            environ=variant_environ(),
        )
        if executor is not None:
            runner = executor(config)
        elif scheduler:
            runner = DaskExecutor(config, scheduler)
        else:
            runner = LocalPool(config, jobs or default_jobs(), watchdog=_watchdog(exercises), warm_parent=warm_parent)
        shown = progress or NoProgress()
        by_name = {learner.name: learner for learner in learners}
        tasks = [
            Task(learner=one.name, path=str(one.path.absolute()), label=one.entry, notes=prints[one.name].notes)
            for one in todo
        ]
        shown.start(len(learners), len(learners) - len(todo))
        stored: dict[str, Report] = {}
        failed: list[str] = []
        unsettled: list[str] = []
        try:
            for task, outcome in _each(runner.map(tasks)):
                learner = by_name[task.learner]
                key = graded_key(outcome, keys[learner.name], specs, assignment)
                previous = records[learner.name] if key == keys[learner.name] else None
                report, error = _store(out_dir, learner, key, outcome, exercises, previous)
                stored[learner.name] = report
                if outcome.unsettled:
                    unsettled.append(learner.name)
                if error is not None:
                    failed.append(learner.name)
                shown.update(
                    learner.name, below_full=report.score < report.max_score - 1e-9, grader_error=error is not None
                )
        finally:
            shown.finish()
        title = _title(catalog, assignment)
        notes = notes + _kept_notes(kept) + _unlisted_notes(learners, prints) + _unsettled_notes(unsettled)
        if adjust and override_file is not None:
            notes.append(f"{len(adjust)} override{'s' if len(adjust) != 1 else ''} read from {override_file.name}")
        stats, _, more_notes = rebuild_outputs(out_dir, learners, exercises, title, notes, stored, adjust, similarity)
    return BatchSummary(
        out=out_dir,
        learners=len(learners),
        graded=len(todo),
        reused=len(learners) - len(todo),
        stats=stats,
        grader_errors=sorted(failed),
        notes=notes + more_notes,
        kept_grader_errors=kept,
        similarity=similarity is not None,
    )


_UNSETTLED_KEY = "unsettled"  # no learner's key: a result stored under it is graded again by the next run


def graded_key(outcome: Outcome, planned: str, specs: str, assignment: str) -> str:
    """The key to store an outcome under: that of the files the worker graded, when it knows them."""
    if outcome.unsettled:
        return _UNSETTLED_KEY
    if outcome.graded_digest is not None:
        return result_key(outcome.graded_digest, specs, assignment)
    return planned  # an executor that does not fingerprint (a test's): the key the batch found


def _each(pairs: Iterator[tuple[Task, Outcome]]) -> Iterator[tuple[Task, Outcome]]:
    """Iterate, and close the executor's iterator however the loop ends (its processes stop)."""
    try:
        yield from pairs
    finally:
        close = getattr(pairs, "close", None)
        if close is not None:
            close()


def _stored(out_dir: Path, learner: Learner, key: str) -> KeyRecord | None:
    """The record of the learner's stored result when it is fully written under the key the learner has now."""
    result, feedback, key_path = output_paths(out_dir, learner)
    record = read_key(key_path)
    if record is None or record.key != key or record.learner != learner.name:
        return None
    return record if result.is_file() and feedback.is_file() else None


def _finished(record: KeyRecord | None, found: Fingerprint) -> bool:
    """Nothing to grade: a result stands under the learner's key, or a failure kept after every try.

    A learner whose fingerprint cannot tell a change is graded every run, unless the grader keeps failing on it.
    """
    if record is None:
        return False
    if record.grader_error is not None:
        return record.failure_kept
    return found.complete


def _chosen(only: Collection[str], learners: list[Learner], directory: object) -> set[str]:
    """The learners ``--only`` names, each one of the class; ``UsageError`` for a name that is not."""
    names = [learner.name for learner in learners]
    for name in (name for name in only if name not in names):
        close = closest_name(name, names)
        hint = f" (did you mean {close!r}?)" if close is not None else ""
        raise UsageError(f"--only: {name!r} is not a learner in {directory}{hint}")
    return set(only)


def _kept_notes(kept: list[str]) -> list[str]:
    if not kept:
        return []
    names = ", ".join(repr(name) for name in kept)
    return [
        f"the grader failed on {names} in earlier runs, each time it tried; the error result is kept until "
        "their files, the specs or the grader change. Please report it; 'grader batch --force' tries again."
    ]


def _unsettled_notes(names: list[str]) -> list[str]:
    if not names:
        return []
    return [
        f"{', '.join(repr(name) for name in sorted(names))}: the files changed while they were being graded, "
        "each time the grader tried, so the result stored may not be of the final "
        "files; the next run grades them again"
    ]


def _unlisted_notes(learners: list[Learner], prints: dict[str, Fingerprint]) -> list[str]:
    names = [learner.name for learner in learners if not prints[learner.name].complete]
    if not names:
        return []
    return [
        f"{', '.join(repr(name) for name in names)}: too many entries in the folder to tell whether it "
        "changed, so graded on every run"
    ]


def _store(
    out_dir: Path, learner: Learner, key: str, outcome: Outcome, exercises: list[Exercise], previous: KeyRecord | None
) -> tuple[Report, str | None]:
    """Write result, feedback, then the key (the commit marker); each atomically.

    ``previous``: the record stored under the same key, if any; a grader failure counts on from its failures.
    """
    error = outcome.grader_error
    report: Report | None = None
    text = outcome.result_json
    if text is not None:
        try:
            report = report_from_worker(text)
        except ValueError as exc:
            error = f"the worker sent a result that is not a valid report ({exc})"
    if report is None or text is None:
        report = grader_error_report(learner.entry, exercises)
        from grader.report import render

        text = render(report, "json")
        error = error or "no result came back"
    result, feedback, key_path = output_paths(out_dir, learner)
    failing = take_failing(report)
    if failing:  # the result as grader grade writes it; the failing cases, hidden inputs and all, kept apart
        from grader.report import render

        text = render(report, "json")
    write_output(failing_path(out_dir, learner), failing_to_json(failing))
    write_output(result, text)
    write_output(feedback, feedback_text(report))
    failures = 0
    if error is not None:
        failures = 1 + (previous.failures if previous is not None and previous.grader_error is not None else 0)
    write_output(
        key_path,
        KeyRecord(key=key, learner=learner.name, entry=learner.entry, grader_error=error, failures=failures).dumps(),
    )
    return report, error


def _title(catalog: object, assignment: str) -> str:
    found = getattr(catalog, "assignments", {}).get(assignment)
    return f"{assignment}: {found.title}" if found is not None and found.title else f"Assignment {assignment}"


def _watchdog(exercises: list[Exercise]) -> float:
    """A generous bound on grading one learner: every check restarting a process that then times out."""
    from grader.sandbox.runner import Limits

    limits = Limits()
    total = 0.0
    for exercise in exercises:
        if isinstance(exercise, ImplementationExercise):
            total += (len(exercise.checks) + 3) * (limits.import_seconds + exercise.time_limit)
        else:
            total += 5.0
    return 2 * total + 120.0
