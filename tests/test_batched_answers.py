"""Answers travel in batches, yet a call that hangs or crashes is still the one blamed, with its exact input."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.grading import GradingSession
from grader.sandbox.runner import Limits

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = (ROOT / "solutions/stable-softmax/reference.py").read_text()

# Right everywhere except on one rare input shape (a single 2x2 array among 137 calls), where it misbehaves.
MISBEHAVES_ON_2x2 = (
    REFERENCE.replace("def softmax(", "def _softmax(")
    + """
import os

def softmax(z, axis=-1):
    if getattr(z, "shape", None) == (2, 2):
        {action}
    return _softmax(z, axis)
"""
)


def _grade(tmp_path: Path, action: str, session: GradingSession):  # type: ignore[no-untyped-def]
    path = tmp_path / "mine.py"
    path.write_text(MISBEHAVES_ON_2x2.format(action=action))
    return session.grade(path, exercise_ids=["stable-softmax"]).exercises[0]


@pytest.fixture()
def quick_session(catalog, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("GRADER_CALL_SECONDS", "0.5")
    with GradingSession(catalog, limits=Limits()) as session:
        yield session


@pytest.mark.slow
@pytest.mark.parametrize(
    ("action", "status", "words"),
    [
        ("while True: pass", "timeout", "no answer within 0.5 s"),
        ("os._exit(7)", "error", "exited with status 7"),
    ],
)
def test_the_failing_call_is_named_exactly(tmp_path: Path, quick_session, action, status, words) -> None:
    exercise = _grade(tmp_path, action, quick_session)
    failed = [check for check in exercise.checks if check.status != "passed"]
    assert failed, "the 2x2 input must be caught"
    for check in failed:
        assert check.status == status, check.reason
        assert words in check.reason
        assert "shape" not in (check.input or "") and check.input and "[[" in check.input
        assert check.input.count("[") == 3 and check.input.count(",") >= 3  # a 2x2 array, named as a call
    assert all(check.status == "passed" for check in exercise.checks if check not in failed)
    assert len(failed) < len(exercise.checks)  # the other checks lost nothing to the failure
