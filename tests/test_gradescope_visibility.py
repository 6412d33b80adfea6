"""``grader grade --format gradescope`` takes each exercise's ``gradescope_hidden`` from its spec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from tests.batch_helpers import ASSIGNMENT, NO_MAX_SHIFT, make_exercises


def _grade(tmp_path: Path, setting: str | None) -> dict:
    exercises = make_exercises(tmp_path / setting if setting else tmp_path / "default")
    if setting:
        spec = exercises / "stable-softmax.yaml"
        spec.write_text(spec.read_text(encoding="utf-8") + f"gradescope_hidden: {setting}\n", encoding="utf-8")
    submission = tmp_path / "softmax.py"
    submission.write_text(NO_MAX_SHIFT)
    result = CliRunner().invoke(
        main,
        ["--exercises", str(exercises), "grade", str(submission), "--assignment", ASSIGNMENT, "--format", "gradescope"],
    )
    assert result.exit_code == 1, result.output
    return json.loads(result.output)


@pytest.mark.slow
def test_hidden_checks_follow_the_exercise_spec(tmp_path: Path) -> None:
    default, never = _grade(tmp_path, None), _grade(tmp_path, "hidden")

    def words(results: dict) -> set[str]:
        return {t["visibility"] for t in results["tests"] if t["tags"] == ["stable-softmax"]}

    assert "after_published" in words(default) and "hidden" not in words(default)
    assert "hidden" in words(never) and "after_published" not in words(never)
    assert "never shown" in never["output"] and "never shown" not in default["output"]
    assert default["visibility"] == never["visibility"] == "visible"
