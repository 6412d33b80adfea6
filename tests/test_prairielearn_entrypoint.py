"""PrairieLearn's entrypoint script, run in a temporary /grade: results.json for PrairieLearn, whatever happens."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = ROOT / "platforms" / "prairielearn"
ENTRYPOINT = PLATFORM / "entrypoint.sh"
BUGGY = ROOT / "solutions/stable-softmax/wrong_no_max_shift.py"


def grade(root: Path, **env: str) -> dict:
    merged = {**os.environ, "GRADE_ROOT": str(root), "PYTHON": sys.executable, **env}
    done = subprocess.run(["bash", str(ENTRYPOINT)], env=merged, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads((root / "results" / "results.json").read_text())


def student(tmp_path: Path, source: str | Path) -> Path:
    root = tmp_path / "grade"
    (root / "student").mkdir(parents=True)
    target = root / "student" / "softmax.py"
    if isinstance(source, Path):
        shutil.copy(source, target)
    else:
        target.write_text(source)
    return root


@pytest.mark.slow
def test_entrypoint_grades_a_buggy_submission(tmp_path: Path) -> None:
    root = student(tmp_path, BUGGY)
    results = grade(root, GRADER_EXERCISES=str(ROOT / "exercises"), GRADER_EXERCISE="stable-softmax")
    assert results["gradable"] is True and 0 < results["score"] < 1
    assert results["tests"] and all(
        {"name", "points", "max_points", "message", "output"} <= set(t) for t in results["tests"]
    )
    assert any(t["points"] < t["max_points"] and "1000." in t["output"] for t in results["tests"])


@pytest.mark.slow
def test_entrypoint_finds_the_specs_in_server_files_course(tmp_path: Path) -> None:
    root = student(tmp_path, BUGGY)
    course = root / "serverFilesCourse" / "grader"
    shutil.copytree(ROOT / "exercises", course / "exercises")
    shutil.copytree(ROOT / "solutions", course / "solutions")
    env = {key: value for key, value in os.environ.items() if key != "GRADER_EXERCISES"}
    merged = {**env, "GRADE_ROOT": str(root), "PYTHON": sys.executable, "GRADER_ASSIGNMENT": "why-softmax"}
    done = subprocess.run(["bash", str(ENTRYPOINT)], env=merged, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["gradable"] is True and 0 < results["score"] < 1
    assert any(t["name"].startswith("why-softmax-quiz / ") for t in results["tests"])


@pytest.mark.slow
def test_entrypoint_marks_a_syntax_error_not_gradable(tmp_path: Path) -> None:
    root = student(tmp_path, "import numpy as np\n\ndef softmax(z, axis=-1):\n    return np.exp(z) / (\n")
    results = grade(root, GRADER_EXERCISES=str(ROOT / "exercises"), GRADER_EXERCISE="stable-softmax")
    assert results["gradable"] is False and results["score"] == 0
    assert any("SyntaxError" in error for error in results["format_errors"])


def test_entrypoint_refusal_still_writes_a_valid_result(tmp_path: Path) -> None:
    root = student(tmp_path, BUGGY)
    results = grade(root, GRADER_EXERCISES=str(tmp_path / "nowhere"), GRADER_EXERCISE="stable-softmax")
    assert results["gradable"] is False and "no exercises directory" in results["format_errors"][0]
    assert "contact your instructor" in results["message"]


def test_entrypoint_crash_still_writes_a_valid_result(tmp_path: Path) -> None:
    root = student(tmp_path, BUGGY)
    fake = tmp_path / "python"
    fake.write_text(
        f'#!/bin/sh\nif [ "$1" = "-m" ]; then echo "Traceback (most recent call last):" >&2; exit 3; fi\n'
        f'exec {sys.executable} "$@"\n'
    )
    fake.chmod(0o755)
    results = grade(root, PYTHON=str(fake), GRADER_EXERCISES=str(ROOT / "exercises"))
    assert results["gradable"] is False and "status 3" in results["message"]
    assert "Traceback" not in json.dumps(results)


def test_dockerfile_copies_files_that_exist_and_runs_the_entrypoint() -> None:
    text = (PLATFORM / "Dockerfile").read_text()
    for line in re.findall(r"^COPY (.+)$", text, flags=re.MULTILINE):
        *sources, _target = line.split()
        for source in sources:
            assert (ROOT / source).exists(), source
    assert 'CMD ["/opt/grader-pl/entrypoint.sh"]' in text
    assert os.access(ENTRYPOINT, os.X_OK)
