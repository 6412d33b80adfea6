"""One word per outcome: the JSON result, gradebook.csv, the feedback and summary.md say the same thing.

Each outcome is built by grading through the in-process fake runner (``tests.fakes``), with a process that
reports a timeout where the learner's function calls ``hang()``, so no test waits for a clock.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from grader.batch.gradebook import GradebookRow, format_gradebook, status_column
from grader.batch.summary import class_stats, format_summary_markdown
from grader.engine.call_loop import SourceModule, grade_implementation
from grader.engine.memory import GradingMemo
from grader.report.markdown import format_markdown
from grader.report.text import format_text
from grader.results import ExerciseResult, Report, report_from_json, report_to_json
from grader.sandbox.calls import CallBatch
from grader.sandbox.outcomes import CallOutcome, Stop
from tests.fakes import InProcessFactory, InProcessProcess

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = (ROOT / "solutions" / "temperature" / "reference.py").read_text()


class _Hang(Exception):
    """Raised by a fixture where a learner's code would loop forever."""


class _HangingProcess(InProcessProcess):
    """A learner process whose calls that raise ``_Hang`` time out, ending the process as a real timeout does."""

    def start(self, ahead: CallBatch | None = None):  # type: ignore[no-untyped-def]
        start = super().start(ahead)
        if self.module is not None:
            self.module.hang, self.module.crash = _hang, _crash
        return start

    def call_many(self, calls: CallBatch, deadline: float | None = None, *, batch: bool = False) -> list[CallOutcome]:
        outcomes = super().call_many(calls, deadline, batch=batch)
        for index, outcome in enumerate(outcomes):
            kind = outcome.error.get("type") if outcome.status == "raised" and outcome.error else None
            if kind in ("_Hang", "_Crash"):
                self.alive = False
                ended = [] if batch else [_STOPPED[kind]]
                rest = [CallOutcome(status="not_run")] * (len(outcomes) - index - len(ended))
                return outcomes[:index] + ended + rest
        return outcomes


class _Crash(Exception):
    """Raised by a fixture where a learner's code would kill its process."""


def _hang() -> None:
    raise _Hang("the learner's loop never ends")


def _crash() -> None:
    raise _Crash("the learner's process dies")


_STOPPED = {
    "_Hang": CallOutcome(status="timeout", stop=Stop(kind="timeout", seconds=2.0)),
    "_Crash": CallOutcome(status="crashed", stop=Stop(kind="ended", end={"signal": 11, "signal_name": "SIGSEGV"})),
}


class _HangingFactory(InProcessFactory):
    def open(self, files, module, entries, call_seconds):  # type: ignore[no-untyped-def]
        process = _HangingProcess(files, module, entries)
        self.opened.append(process)
        return process


def _grade(catalog, exercise_id: str, source: str) -> ExerciseResult:  # type: ignore[no-untyped-def]
    return grade_implementation(
        catalog.exercise(exercise_id),
        SourceModule({"mine.py": source.encode()}, "mine.py"),
        _HangingFactory(),
        memo=GradingMemo(),
        references=ROOT,
    )


# Correct, but it never returns at a tiny temperature or at T = 2: the checks whose calls use one time out,
# and none of the others may be lost with them.
HANGS_ON_SOME = REFERENCE.replace(
    "def softmax_with_temperature(z, T):",
    "def softmax_with_temperature(z, T):\n    if 0 < T < 0.05 or T == 2.0:\n        hang()",
    1,
)


def test_a_timeout_on_some_calls_keeps_the_verdicts_of_checks_whose_calls_were_quick(catalog) -> None:
    result = _grade(catalog, "temperature", HANGS_ON_SOME)
    statuses = {check.id: check.status for check in result.checks}
    assert "timeout" in statuses.values()
    for check in result.checks:  # each check either passed or timed out on an input of its own
        assert check.status in ("passed", "timeout"), (check.id, check.reason)
        if check.status == "timeout":
            assert check.input is not None or "same time limit" in check.reason, check.reason
    assert statuses["rejects-non-positive-temperature"] == "passed"
    assert statuses["uniform-at-high-temperature"] == "passed"


def _source(body: str) -> str:
    return REFERENCE.replace("def softmax_with_temperature(z, T):", "def softmax_with_temperature(z, T):\n" + body, 1)


OUTCOMES = {
    "timeout": HANGS_ON_SOME,
    "import-error": "import numpy as np\nraise RuntimeError('not ready')\n" + REFERENCE,
    "syntax-error": REFERENCE + "\ndef broken(:\n",
    "missing": "import numpy as np\n\ndef something_else(z):\n    return z\n",
    "error": _source("    crash()"),
    "failed": _source("    T = T * 2"),
    "passed": REFERENCE,
}


def _words_in_every_format(result: ExerciseResult) -> dict[str, str]:
    """The word each format shows for ``result``'s outcome: JSON, gradebook.csv, text and Markdown feedback,
    summary.md."""
    report = Report(
        grader_version="0",
        submission="mine.py",
        score=result.score,
        max_score=result.max_score,
        exercises=[result],
    )
    words = {"json": json.loads(report_to_json(report))["exercises"][0]["outcome"]}
    stored = report_from_json(report_to_json(report))  # what the batch reads back
    gradebook = format_gradebook([GradebookRow("ada", stored)], [result.id])
    (row,) = csv.DictReader(io.StringIO(gradebook))
    words["gradebook"] = row[status_column(result.id)]
    words["text"] = format_text(report).splitlines()[0].split()[-1]
    table = next(line for line in format_markdown(report).splitlines() if line.startswith(f"| {result.id} |"))
    words["markdown"] = table.split("|")[2].strip()
    checks = [(result.id, check.id) for check in result.checks]
    summary = format_summary_markdown(class_stats({"ada": stored}, checks, result.max_score), title="T")
    header, counts = _summary_row(summary, result.id)
    named = dict(zip(header, counts, strict=False))
    words["summary"] = next(word for word, count in named.items() if count == "1")
    return words


def _summary_row(summary: str, exercise_id: str) -> tuple[list[str], list[str]]:
    """The header and ``exercise_id``'s row of summary.md's table of how each exercise ended."""
    lines = summary.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| exercise |"))
    header = [cell.strip() for cell in lines[start].strip("|").split("|")]
    row = next(line for line in lines[start:] if line.startswith(f"| {exercise_id} |"))
    return header, [cell.strip() for cell in row.strip("|").split("|")]


@pytest.mark.parametrize("outcome", list(OUTCOMES), ids=list(OUTCOMES))
def test_every_format_says_the_same_word_for_one_outcome(catalog, outcome: str) -> None:
    result = _grade(catalog, "temperature", OUTCOMES[outcome])
    words = _words_in_every_format(result)
    assert set(words.values()) == {outcome}, words


def test_a_timeout_after_checks_ran_is_not_counted_as_stopping_before_any_check(catalog) -> None:
    result = _grade(catalog, "temperature", HANGS_ON_SOME)
    assert any(check.status == "passed" for check in result.checks)
    report = Report(
        grader_version="0", submission="a", score=result.score, max_score=result.max_score, exercises=[result]
    )
    stats = class_stats({"ada": report}, [(result.id, c.id) for c in result.checks], result.max_score)
    (exercise,) = stats.exercises
    assert exercise.statuses["timeout"] == 1 and exercise.stopped == 0


@pytest.mark.slow
def test_an_import_failure_counts_only_on_the_exercises_the_file_attempts(session, tmp_path: Path) -> None:
    path = tmp_path / "mine.py"
    path.write_text("raise RuntimeError('not ready')\n\ndef softmax_with_temperature(z, T):\n    return z\n")
    report = session.grade(path, exercise_ids=["temperature", "log-softmax", "cross-entropy"])
    words = {exercise.id: exercise.outcome for exercise in report.exercises}
    assert words == {"temperature": "import-error", "log-softmax": "missing", "cross-entropy": "missing"}
    missing = next(exercise for exercise in report.exercises if exercise.id == "log-softmax")
    assert "does not mention log_softmax()" in missing.reason and "RuntimeError" in missing.reason


class _LimitRecordingFactory(_HangingFactory):
    """Records the time limit each process was opened with, beside the process."""

    def __init__(self) -> None:
        super().__init__()
        self.limits: list[float] = []

    def open(self, files, module, entries, call_seconds):  # type: ignore[no-untyped-def]
        self.limits.append(call_seconds)
        return super().open(files, module, entries, call_seconds)


def test_a_check_with_its_own_time_limit_has_its_calls_answered_within_that_limit(catalog) -> None:
    exercise = catalog.exercise("temperature")
    checks = [
        check.model_copy(update={"time_limit": 7.0}) if check.id == "uniform-at-high-temperature" else check
        for check in exercise.checks
    ]
    limited = exercise.model_copy(update={"checks": checks})
    factory = _LimitRecordingFactory()
    result = grade_implementation(
        limited,
        SourceModule({"mine.py": REFERENCE.encode()}, "mine.py"),
        factory,
        memo=GradingMemo(),
        references=ROOT,
    )
    assert result.status == "passed", [c.reason for c in result.checks if c.status != "passed"]
    assert factory.limits[0] == exercise.time_limit and 7.0 in factory.limits
    (slow,) = [p for p, limit in zip(factory.opened, factory.limits, strict=True) if limit == 7.0]
    assert 0 < slow.calls_received < sum(p.calls_received for p in factory.opened)
