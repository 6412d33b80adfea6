"""The gradebook's status per exercise: what stopped a learner's code, told apart without opening files."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from grader.batch.gradebook import GradebookRow, format_gradebook
from grader.batch.status import STATUSES, exercise_status
from grader.results import CheckResult, ExerciseResult, Report


def _check(status: str, reason: str = "r.", *, ran: bool = False) -> CheckResult:
    """A check result; ``ran``: it carries the input and value of a call, as a check that ran does."""
    return CheckResult(
        id=f"c-{status}",
        status=status,
        score=1.0 if status == "passed" else 0.0,  # type: ignore[arg-type]
        max_score=1.0,
        visibility="public",
        reason=reason,
        input="softmax(z=array([1.]))" if ran else None,
        got="something" if ran else None,
    )


def _exercise(
    status: str, checks: list[CheckResult], reason: str = "r.", kind: str = "implementation", exercise_id: str = "impl"
) -> ExerciseResult:
    return ExerciseResult(
        id=exercise_id,
        kind=kind,
        status=status,  # type: ignore[arg-type]
        score=float(sum(c.score for c in checks)),
        max_score=2.0,
        reason=reason,
        checks=checks,
    )


NOT_RUN_SYNTAX = "Not run: your file has a SyntaxError at line 3 (invalid syntax): def softmax(z:."
# One result of each kind, shaped as the engine and the quiz grader write them.
RESULTS = {
    "passed": _exercise("passed", [_check("passed", ran=True)]),
    "failed": _exercise(
        "failed", [_check("passed", ran=True), _check("failed", ran=True), _check("timeout", ran=True)]
    ),
    "missing": _exercise("missing", [_check("skipped", "Not attempted: your file does not define softmax().")]),
    "syntax-error": _exercise(
        "error",
        [_check("error", NOT_RUN_SYNTAX)] * 2,
        "Your file has a SyntaxError at line 3 (invalid syntax): def softmax(z:; none of its checks could run.",
    ),
    "indentation-error": _exercise(
        "error",
        [_check("error", "Not run.")],
        "Your file has a IndentationError at line 2 (unexpected indent); none of its checks could run.",
    ),
    "import-error": _exercise(
        "error",
        [_check("error", "Not run.")] * 2,
        "While being imported, your file tried to import a module that is not available here: "
        "scipy; none of its checks could run.",
    ),
    "system-exit": _exercise(
        "error",
        [_check("error", "Not run.")],
        "Your file stopped Python while it was being imported (SystemExit 3); none of its checks could run.",
    ),
    "import-timeout": _exercise(
        "error",
        [_check("timeout", "Not run.")] * 2,
        "Your file could not be imported: no answer within 5 s (wall-clock limit); none of its checks could run.",
    ),
    "call-timeout": _exercise(
        "error",
        [
            _check("timeout", ran=True),
            _check("timeout", "softmax: not run, because it already ran out of time 2 times."),
        ],
    ),
    "some-passed-rest-timed-out": _exercise("error", [_check("passed", ran=True), _check("timeout", ran=True)]),
    "raised": _exercise("error", [_check("error", "softmax raised TypeError: no.", ran=True)] * 2),
    "raised-and-timed-out": _exercise("error", [_check("error", ran=True), _check("timeout", ran=True)]),
    "entry-undefined-rest-passed": _exercise(
        "error", [_check("passed", ran=True), _check("error", "not checked: no softmax_jacobian().")]
    ),
    "quiz-unreadable": _exercise(
        "error",
        [_check("error", "Your answers could not be read: a.yaml: not valid YAML (SyntaxError-like) (line 2)")],
        kind="quiz",
    ),
    "quiz-missing": _exercise("missing", [_check("skipped", "No answers.")], kind="quiz"),
}
EXPECTED = {
    "passed": "passed",
    "failed": "failed",
    "missing": "missing",
    "syntax-error": "syntax-error",
    "indentation-error": "syntax-error",
    "import-error": "import-error",
    "system-exit": "import-error",
    "import-timeout": "timeout",
    "call-timeout": "timeout",
    "some-passed-rest-timed-out": "timeout",
    "raised": "error",
    "raised-and-timed-out": "error",
    "entry-undefined-rest-passed": "error",
    "quiz-unreadable": "error",
    "quiz-missing": "missing",
}


@pytest.mark.parametrize("kind", sorted(RESULTS))
def test_exercise_status_tells_what_stopped_the_code(kind: str) -> None:
    assert exercise_status(RESULTS[kind]) == EXPECTED[kind]


def _gradebook(rows: list[GradebookRow], ids: list[str]) -> list[list[str]]:
    return list(csv.reader(io.StringIO(format_gradebook(rows, ids))))


def test_gradebook_has_a_status_column_per_exercise_after_the_scores() -> None:
    rows = []
    for kind, result in RESULTS.items():
        quiz = _exercise("passed", [_check("passed")], kind="quiz", exercise_id="quiz")
        rows.append(
            GradebookRow(
                kind, Report(grader_version="0", submission=kind, score=0.0, max_score=3.0, exercises=[quiz, result])
            )
        )
    parsed = _gradebook(rows, ["quiz", "impl"])
    assert parsed[0] == ["learner", "score", "max_score", "quiz", "impl", "quiz:status", "impl:status"]
    by_learner = {row[0]: row for row in parsed[1:]}
    for kind, expected in EXPECTED.items():
        assert by_learner[kind][3] == "1" and by_learner[kind][5:] == ["passed", expected], kind
    assert {row[-1] for row in parsed[1:]} == set(STATUSES)


def test_gradebook_status_cells_are_empty_where_the_grader_failed_or_the_exercise_is_absent() -> None:
    report = Report(
        grader_version="0",
        submission="x",
        score=1.0,
        max_score=3.0,
        exercises=[_exercise("passed", [_check("passed")], exercise_id="quiz")],
    )
    parsed = _gradebook(
        [GradebookRow("broken", report, grader_error=True), GradebookRow("old", report)], ["quiz", "impl"]
    )
    assert parsed[1] == ["broken", "", "3", "", "", "", ""]
    assert parsed[2] == ["old", "1", "3", "1", "", "passed", ""]


SUBMISSIONS = {  # what a learner hands in for stable-softmax, and the status the gradebook must show
    "passed": (
        "import numpy as np\n\n\ndef softmax(z, axis=-1):\n    z = np.asarray(z, dtype=float)\n"
        "    peak = np.max(z, axis=axis, keepdims=True)\n    peak = np.where(np.isfinite(peak), peak, 0.0)\n"
        "    weights = np.exp(z - peak)\n    return weights / np.sum(weights, axis=axis, keepdims=True)\n"
    ),
    "failed": (
        "import numpy as np\n\n\ndef softmax(z, axis=-1):\n    with np.errstate(all='ignore'):\n"
        "        weights = np.exp(np.asarray(z, dtype=float))\n"
        "        return weights / np.sum(weights, axis=axis, keepdims=True)\n"
    ),
    "missing": "def something_else():\n    return 1\n",
    "syntax-error": "def softmax(z, axis=-1:\n    return z\n",
    "import-error": "import scipy\n\n\ndef softmax(z, axis=-1):\n    return z\n",
    "timeout": "import time\n\ntime.sleep(100)\n\n\ndef softmax(z, axis=-1):\n    return z\n",
    "error": "def softmax(z, axis=-1):\n    raise TypeError('not written yet')\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("expected", sorted(SUBMISSIONS))
def test_gradebook_status_of_real_submissions(session, tmp_path: Path, expected: str) -> None:
    path = tmp_path / "work.py"
    path.write_text(SUBMISSIONS[expected])
    report = session.grade(path, exercise_ids=["stable-softmax"])
    (exercise,) = report.exercises
    assert exercise_status(exercise) == expected, exercise.reason
    parsed = _gradebook([GradebookRow("learner", report)], ["stable-softmax"])
    assert parsed[1][-1] == expected
