"""Executors: who grades the learners of a batch, and where.

The contract of an executor is one method::

    map(tasks) -> iterator of (task, Outcome)

It yields one pair for every task, in the order they finish, and never
raises for a single learner: a learner whose grading crashed or hung comes
back as ``Outcome(grader_error=...)``. Closing the iterator (the consumer
stopped, or Ctrl-C) stops the work and every process it started.

``LocalPool`` runs a pool of worker processes on this machine; ``DaskExecutor``
sends the tasks to a Dask distributed cluster (the optional ``dask`` extra).
Tests can pass any object with the same ``map``.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import threading
import time
import traceback
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, Protocol

from grader.batch.affinity import cores_to_use, keep_to
from grader.batch.worker import Outcome, Task, WorkerConfig, grade_task, start_worker, task_id
from grader.errors import SandboxError, UsageError
from grader.sandbox.confine.privileges import die_with_parent

__all__ = ["DaskExecutor", "Executor", "LocalPool"]


class Executor(Protocol):
    """Runs grading tasks; see the module docstring for the contract."""

    def map(self, tasks: Iterable[Task]) -> Iterator[tuple[Task, Outcome]]: ...


def run_worker(
    config: WorkerConfig,
    connection: Connection,
    warm_parent: Any = None,
    inherited: Any = None,
    core: int | None = None,
) -> None:
    """A pool process: start one grading session, then grade what the parent sends until told to stop.

    ``warm_parent``: a warm parent cloned for this process (forked pools); ``inherited``:
    the parent's own warm parent client, whose socket a fork copied here and which is not ours to use.
    ``core``: the one core this process keeps to (``affinity``); a warm parent it starts itself inherits it.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    if core is not None:
        keep_to(0, core)
    if inherited is not None:  # forked from the batch: it grades nothing once the batch is gone
        parent = multiprocessing.parent_process()
        if parent is not None and parent.pid is not None:
            die_with_parent(parent.pid)
        inherited.abandon()
    try:
        worker = start_worker(config, warm_parent)
    except BaseException:  # noqa: BLE001 - reported to the parent, which decides
        connection.send(("failed", traceback.format_exc()))
        return
    # What the worker loaded (catalog, plans, the modules grading imports) lives as long as it does: kept out of
    # the collector's full passes, which would otherwise walk all of it again for every few learners graded.
    gc.freeze()
    connection.send(("ready", None))
    try:
        while True:
            try:
                task = connection.recv()
            except EOFError:
                break
            if task is None:
                break
            connection.send(("done", worker.grade(task)))
    finally:
        worker.close()


@dataclass
class Slot:
    """A pool process as the pool sees it: its connection, whether it is ready, and the learners sent to it."""

    process: Any
    connection: Connection
    ready: bool = False
    tasks: deque[Task] = field(default_factory=deque)  # sent, in order: the first is being graded
    started: float = 0.0  # when the first began (about: when the one before it came back)
    core: int | None = None

    @property
    def task(self) -> Task | None:
        """The learner this process is grading now, if any."""
        return self.tasks[0] if self.tasks else None


@dataclass
class LocalPool:
    """Worker processes on this machine, each with its own warm sandbox parent.

    Given the command's warm parent (``warm_parent``), the processes are forked
    from this one, which has loaded everything they need, and each gets a
    clone of that warm parent: a worker then starts in milliseconds instead
    of an interpreter start and two imports of numpy. Forking needs this
    process to run a single thread; otherwise (or without ``warm_parent``) they
    are started from a ``forkserver`` (a clean, preloaded parent) and start
    their own warm parents. The parent knows which learner each process
    holds, so a process that dies is blamed on that learner's grading alone
    and replaced; ``watchdog`` seconds bound the grading of one learner, as a
    backstop for a grader bug (learner code has its own, much shorter, limits
    in the sandbox). A process is sent its next learner while it grades one
    (``ahead``), so it never waits while this process stores a result:
    storing one (three files, each flushed to disk) is slow next to grading
    one. With ``pin`` and no more processes
    than cores, each process, its warm parent and its learner processes keep
    to a core of their own (``affinity``); ``worker_main``
    is then also given ``core=``.
    """

    config: WorkerConfig
    jobs: int
    watchdog: float = 600.0
    context: str = "forkserver"
    warm_parent: Any = None
    worker_main: Callable[..., None] = run_worker
    pin: bool = True
    ahead: int = 1
    _slots: list[Slot] = field(default_factory=list, init=False)
    _cores: list[int] | None = field(default=None, init=False)

    def map(self, tasks: Iterable[Task]) -> Iterator[tuple[Task, Outcome]]:
        pending = list(tasks)
        pending.reverse()  # pop() from the end keeps the given order
        if not pending:
            return
        context = _context(self.context)
        wanted = max(1, min(self.jobs, len(pending)))
        self._cores = cores_to_use(wanted) if self.pin else None
        failures: list[str] = []
        try:
            for _ in range(wanted):
                self._start(context)
            while pending or any(slot.tasks for slot in self._slots):
                for slot in self._slots:
                    self._send_next(slot, pending)
                if not self._slots:
                    raise SandboxError("no grading process could start: " + (failures[-1] if failures else "unknown"))
                yield from self._collect(context, failures, pending)
        finally:
            self._stop()

    def _start(self, context: Any) -> None:
        twin = None
        # A fork copies one thread: no other thread may hold a lock.
        if self.warm_parent is not None and threading.active_count() == 1:
            try:
                twin = self.warm_parent.clone()
                context = multiprocessing.get_context("fork")
            except SandboxError:  # the worker starts a warm parent of its own, as without one to clone
                pass
        core = self._free_core()
        ours, theirs = context.Pipe()
        extra: dict[str, Any] = {"warm_parent": twin, "inherited": self.warm_parent} if twin is not None else {}
        if core is not None:
            extra["core"] = core
            if twin is not None and twin.pid is not None:
                keep_to(twin.pid, core)  # and so every learner process it forks
        process = context.Process(
            target=self.worker_main, args=(self.config, theirs), kwargs=extra, daemon=True, name="grader-batch-worker"
        )
        try:
            process.start()
        finally:
            theirs.close()
            if twin is not None:
                twin.abandon()  # the worker holds the clone's socket now; the clone ends when the worker does
        self._slots.append(Slot(process, ours, core=core))

    def _send_next(self, slot: Slot, pending: list[Task]) -> None:
        """Give a ready process learners up to one being graded and ``ahead`` more.

        Near the end (fewer learners left than processes) none is sent ahead,
        so the last ones do not queue behind another while a process is idle.
        """
        if not slot.ready:
            return
        depth = 1 + (self.ahead if len(pending) > len(self._slots) else 0)
        while pending and len(slot.tasks) < depth:
            task = pending.pop()
            try:
                slot.connection.send(task)
            except OSError:  # it has just died: its sentinel says so, and the learner waits for another process
                pending.append(task)
                return
            if not slot.tasks:
                slot.started = time.monotonic()
            slot.tasks.append(task)

    def _requeue(self, slot: Slot, pending: list[Task]) -> None:
        """The learners sent ahead to a process that is gone go back to the front of the queue."""
        pending.extend(reversed(list(slot.tasks)[1:]))

    def _free_core(self) -> int | None:
        """A core no live grading process keeps to (a replacement takes its predecessor's), or ``None``."""
        if not self._cores:
            return None
        taken = {slot.core for slot in self._slots}
        return next((core for core in self._cores if core not in taken), None)

    def _collect(self, context: Any, failures: list[str], pending: list[Task]) -> Iterator[tuple[Task, Outcome]]:
        """Wait for one event (a message, a death, a deadline) and handle what happened.

        A process that finishes gets its next learner before the result is
        handed on, so it grades while the caller stores what it sent.
        """
        waits: dict[Any, Slot] = {slot.connection: slot for slot in self._slots}
        waits.update({slot.process.sentinel: slot for slot in self._slots})
        busy = [slot.started + self.watchdog for slot in self._slots if slot.tasks]
        timeout = max(0.0, min(busy) - time.monotonic()) if busy else None
        for ready in wait(list(waits), timeout=timeout):
            slot = waits[ready]
            if slot not in self._slots:
                continue
            if ready is slot.connection:
                try:
                    kind, payload = slot.connection.recv()
                except (EOFError, OSError):
                    continue  # it died: its sentinel says so
                if kind == "ready":
                    slot.ready = True
                elif kind == "failed":
                    failures.append(str(payload).strip().splitlines()[-1])
                    self._drop(slot)
                elif kind == "done" and slot.tasks:
                    done = slot.tasks.popleft()
                    slot.started = time.monotonic()  # the next one sent began as this one came back
                    self._send_next(slot, pending)
                    yield done, payload
            elif not slot.process.is_alive():
                lost = slot.task
                self._requeue(slot, pending)
                self._drop(slot)
                if lost is not None:
                    code = slot.process.exitcode
                    how = f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"
                    yield (
                        lost,
                        Outcome(
                            grader_error=f"the grading process stopped unexpectedly ({how}) while grading this learner"
                        ),
                    )
                    if pending:
                        self._start(context)
        now = time.monotonic()
        for slot in list(self._slots):
            if slot.tasks and now - slot.started > self.watchdog:
                task = slot.tasks[0]
                self._requeue(slot, pending)
                self._drop(slot)
                yield (
                    task,
                    Outcome(
                        grader_error=f"grading this learner took longer than {self.watchdog:g} s, "
                        "so the grader stopped it (learner code has far shorter limits: "
                        "this points at a grader or machine problem)"
                    ),
                )
                if pending:
                    self._start(context)

    def _drop(self, slot: Slot) -> None:
        self._slots.remove(slot)
        if slot.process.is_alive():
            slot.process.kill()
        slot.process.join(5)
        slot.connection.close()

    def _stop(self) -> None:
        """Idle processes are asked to stop; busy ones (we were interrupted) are killed at once."""
        for slot in self._slots:
            if slot.tasks:
                slot.process.kill()
                continue
            try:
                slot.connection.send(None)
            except (OSError, ValueError):
                pass
        deadline = time.monotonic() + 5
        for slot in self._slots:
            slot.process.join(max(0.0, deadline - time.monotonic()))
            if slot.process.is_alive():
                slot.process.kill()
                slot.process.join(5)
            slot.connection.close()
        self._slots.clear()


@dataclass
class DaskExecutor:
    """Grade on a Dask distributed cluster (``pip install 'grader[dask]'``).

    Every Dask worker must see the class folder and the exercises at the same
    paths as this machine (a shared file system): tasks carry paths, results
    come back as JSON text. Each worker process keeps one grading session
    per thread. A worker that dies has its task retried by Dask, then reported
    as a grader error for that learner.
    """

    config: WorkerConfig
    scheduler: str
    connect_timeout: float = 30.0

    def map(self, tasks: Iterable[Task]) -> Iterator[tuple[Task, Outcome]]:
        try:
            from distributed import Client, as_completed
        except ImportError:
            raise UsageError("--scheduler needs Dask: pip install 'grader[dask]' (dask[distributed])") from None
        tasks = list(tasks)
        if not tasks:
            return
        try:
            client = Client(self.scheduler, timeout=self.connect_timeout)
        except OSError as exc:
            raise UsageError(f"cannot reach the Dask scheduler at {self.scheduler!r} ({exc})") from None
        try:
            run = uuid.uuid4().hex[:8]  # a scheduler may still hold an earlier run's keys
            futures = {
                client.submit(grade_task, self.config, task, key=f"{task_id(task)}-{run}", pure=False): task
                for task in tasks
            }
            for future in as_completed(futures):
                task = futures.pop(future)
                try:
                    outcome = future.result()
                except Exception as exc:  # noqa: BLE001 - the worker died or Dask gave up on it
                    outcome = Outcome(
                        grader_error=f"the Dask cluster could not grade this learner: {type(exc).__name__}: {exc}"
                    )
                yield task, outcome
        finally:
            for future in list(futures):
                future.cancel()
            client.close()


_PRELOAD = ["grader.batch.worker", "grader.grading", "grader.report"]


def _context(name: str) -> Any:
    """The multiprocessing context; a forkserver one preloads the grading modules."""
    context = multiprocessing.get_context(name)
    if name == "forkserver":
        context.set_forkserver_preload(_PRELOAD)
    return context


def default_jobs() -> int:
    """One worker per core."""
    return os.cpu_count() or 1
