"""Progress of a batch, on standard error: a live bar on a terminal, plain periodic lines in a CI log.

A ``Progress`` is told three things: ``start(total, reused)`` once, ``update(...)``
after every learner graded in this run, ``finish()`` once. Both kinds show the
counts, the time elapsed, the time left once the pace is known, and the
learner graded last (with several grading processes, several are under way at
once; the last one finished is the one the grader can name truthfully).
``auto_progress`` picks the bar when standard error is a terminal and rich is
installed, plain lines otherwise. Nothing of it goes to standard output, which
holds the summary alone (``grader batch ... > summary.txt``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, Protocol, TextIO

from grader.report._common import printable
from grader.report.runner_safe import inert_lines
from grader.submission.excerpts import excerpt

__all__ = ["PlainProgress", "Progress", "RichProgress", "auto_progress"]


class Progress(Protocol):
    def start(self, total: int, reused: int) -> None: ...
    def update(self, learner: str, *, below_full: bool, grader_error: bool) -> None: ...
    def finish(self) -> None: ...


class _Counts:
    """Counts so far, and the time left estimated from the pace at which learners finish.

    The pace is measured from the first learner finished to the last, so the
    start-up (loading specs, starting the sandbox and the workers, the first
    learners' imports) does not count as grading time. Before ``MIN_FOR_ESTIMATE``
    learners have finished there is no estimate: better nothing than a wrong one.
    """

    MIN_FOR_ESTIMATE = 3

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.began = clock()  # the progress is made as the batch begins: elapsed counts its whole run
        self.total = self.todo = self.done = self.below = self.errors = 0
        self.first_done: float | None = None
        self.last_done = 0.0
        self.last_learner = ""

    def start(self, total: int, reused: int) -> None:
        self.total, self.todo = total, total - reused

    def update(self, learner: str, below_full: bool, grader_error: bool) -> None:
        self.last_learner = excerpt(learner, 60)  # a learner's folder name: any length, any characters
        self.done += 1
        self.below += below_full
        self.errors += grader_error
        self.last_done = self.clock()
        if self.first_done is None:
            self.first_done = self.last_done

    def seconds_elapsed(self) -> float:
        return max(0.0, self.clock() - self.began)

    def seconds_left(self) -> float | None:
        """Seconds until the last learner is graded, or None when the learners finished so far cannot tell."""
        if self.first_done is None or self.done < self.MIN_FOR_ESTIMATE or self.done >= self.todo:
            return None
        span = self.last_done - self.first_done
        if span <= 0:  # all finished at once (parallel workers): no pace to measure yet
            return None
        per_learner = span / (self.done - 1)
        return max(0.0, per_learner * (self.todo - self.done) - (self.clock() - self.last_done))


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class PlainProgress:
    """Lines like ``graded 120/300, 14 below full marks, 80 s elapsed, ~9 s left; last: alice``, at most one per
    ``interval`` seconds, on standard error unless told another stream."""

    def __init__(
        self, stream: TextIO | None = None, *, interval: float = 10.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.stream: TextIO | None = stream or sys.stderr
        self.interval = interval
        self.counts = _Counts(clock)
        self._last = 0.0

    def start(self, total: int, reused: int) -> None:
        self.counts.start(total, reused)
        self._last = self.counts.clock()
        unchanged = f", {reused} unchanged since the last run" if reused else ""
        self._say(f"{total} learner{'s' if total != 1 else ''}{unchanged}; grading {total - reused}")

    def update(self, learner: str, *, below_full: bool, grader_error: bool) -> None:
        self.counts.update(learner, below_full, grader_error)
        now = self.counts.clock()
        if now - self._last >= self.interval and self.counts.done < self.counts.todo:
            self._last = now
            self._say(self._line())

    def finish(self) -> None:
        if self.counts.todo:
            self._say(self._line())

    def _line(self) -> str:
        counts = self.counts
        line = f"graded {counts.done}/{counts.todo}, {counts.below} below full marks"
        if counts.errors:
            line += f", {counts.errors} grader error{'s' if counts.errors != 1 else ''}"
        line += f", {_duration(counts.seconds_elapsed())} elapsed"
        left = counts.seconds_left()
        if left is not None:
            line += f", ~{_duration(left)} left"
        return f"{line}; last: {counts.last_learner}" if counts.last_learner else line

    def _say(self, line: str) -> None:
        if self.stream is None:
            return
        try:
            print(inert_lines(printable(line)), file=self.stream, flush=True)
        except (OSError, ValueError):  # a closed pipe (``| head``) must not stop the grading
            self.stream = None


class RichProgress:
    """A live bar: done/total, learners below full marks so far, grader errors, elapsed, time left (once known),
    the learner graded last."""

    def __init__(self, stream: TextIO | None = None) -> None:
        from rich.console import Console

        self.console = Console(file=stream or sys.stderr)
        self.counts = _Counts(time.monotonic)
        self._bar: Any = None
        self._task: Any = None

    def start(self, total: int, reused: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.counts.start(total, reused)
        if reused:
            self.console.print(f"{reused} of {total} learners unchanged since the last run")
        if total == reused:
            return
        self._bar = Progress(
            TextColumn("grading"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("· {task.fields[below]} below full marks{task.fields[errors]} ·"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[left]}"),
            TextColumn("{task.fields[last]}", markup=False),  # a learner's name is text, never rich markup
            console=self.console,
            transient=False,
            auto_refresh=False,
        )  # no refresh thread: grading processes are forked from this one
        self._task = self._bar.add_task("grading", total=total - reused, below=0, errors="", left="", last="")
        self._bar.start()

    def update(self, learner: str, *, below_full: bool, grader_error: bool) -> None:
        self.counts.update(learner, below_full, grader_error)
        count = self.counts.errors
        errors = f", {count} grader error{'s' if count != 1 else ''}" if count else ""
        if self._bar is not None and self._task is not None:
            seconds = self.counts.seconds_left()  # the same estimate as the plain lines, not rich's own
            left = f"~{_duration(seconds)} left" if seconds is not None else ""
            last = f"last: {self.counts.last_learner}"
            self._bar.update(
                self._task, advance=1, below=self.counts.below, errors=errors, left=left, last=last, refresh=True
            )

    def finish(self) -> None:
        if self._bar is not None:
            self._bar.stop()


class NoProgress:
    """Says nothing (the API's default)."""

    def start(self, total: int, reused: int) -> None:
        pass

    def update(self, learner: str, *, below_full: bool, grader_error: bool) -> None:
        pass

    def finish(self) -> None:
        pass


def auto_progress(stream: TextIO | None = None) -> Progress:
    """A bar when ``stream`` (standard error by default) is a terminal and rich is installed, plain lines elsewhere."""
    stream = stream or sys.stderr
    if stream.isatty():
        try:
            return RichProgress(stream)
        except ImportError:
            pass
    return PlainProgress(stream)
