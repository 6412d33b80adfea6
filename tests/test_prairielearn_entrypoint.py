"""PrairieLearn's entrypoint script, run in a temporary /grade: results.json for PrairieLearn, whatever happens."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main

ROOT = Path(__file__).resolve().parents[1]
PLATFORM = ROOT / "grader" / "export" / "platforms" / "prairielearn"
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
        f'#!/bin/sh\nif [ "$2" = "-m" ]; then echo "Traceback (most recent call last):" >&2; exit 3; fi\n'
        f'exec {sys.executable} "$@"\n'
    )
    fake.chmod(0o755)
    results = grade(root, PYTHON=str(fake), GRADER_EXERCISES=str(ROOT / "exercises"))
    assert results["gradable"] is False and "status 3" in results["message"]
    assert "Traceback" not in json.dumps(results)


@pytest.fixture(scope="module")
def image_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What 'grader export prairielearn DIR' writes: the image's whole build context."""
    folder = tmp_path_factory.mktemp("pl-image")
    result = CliRunner().invoke(main, ["export", "prairielearn", str(folder)])
    assert result.exit_code == 0, result.output
    return folder


def _copied_sources(folder: Path) -> list[str]:
    sources: list[str] = []
    for line in re.findall(r"^COPY (.+)$", (folder / "Dockerfile").read_text(), flags=re.MULTILINE):
        sources += line.split()[:-1]
    return sources


def test_dockerfile_copies_files_that_exist_and_runs_the_entrypoint(image_folder: Path) -> None:
    text = (image_folder / "Dockerfile").read_text()
    for source in _copied_sources(image_folder):
        assert (image_folder / source).exists(), source
    assert 'CMD ["/opt/grader-pl/entrypoint.sh"]' in text
    assert os.access(image_folder / "entrypoint.sh", os.X_OK)


def test_the_public_image_holds_no_spec_and_no_solution(image_folder: Path) -> None:
    """PrairieLearn pulls grader images from a public registry: nothing in one may be a hidden check."""
    text = (image_folder / "Dockerfile").read_text()
    context = [path.relative_to(image_folder) for path in image_folder.rglob("*") if path.is_file()]
    assert sorted(path.as_posix() for path in context if path.parts[0] != "wheels") == [
        "Dockerfile",
        "entrypoint.sh",
        "finish_results.py",
        "grader.txt",
        "requirements.txt",
    ]
    assert not any(path.suffix in (".yaml", ".yml") for path in context)
    with zipfile.ZipFile(next((image_folder / "wheels").glob("grader-*.whl"))) as wheel:
        names = wheel.namelist()
    assert names and all(name.startswith(("grader/", "grader-")) for name in names)
    assert "exercises" not in text.replace("serverFilesCourse/grader/exercises", "")
    assert "solutions" not in text.replace("specs, no solutions", "").replace("specs and solutions", "")
    assert re.search(r"^FROM --platform=linux/amd64 python:\d+\.\d+-slim$", text, flags=re.MULTILINE)
    assert "docker build --platform linux/amd64" in text


def test_the_entrypoint_reads_specs_only_from_the_course_files() -> None:
    text = ENTRYPOINT.read_text()
    assert "/opt/grader-course" not in text
    assert 'EXERCISES="${GRADER_EXERCISES:-$ROOT/serverFilesCourse/grader/exercises}"' in text
    assert '"$PYTHON" -I -m grader.cli' in text


def test_entrypoint_without_course_files_asks_for_the_instructor(tmp_path: Path) -> None:
    root = student(tmp_path, BUGGY)
    env = {key: value for key, value in os.environ.items() if key != "GRADER_EXERCISES"}
    merged = {**env, "GRADE_ROOT": str(root), "PYTHON": sys.executable, "GRADER_EXERCISE": "stable-softmax"}
    done = subprocess.run(["bash", str(ENTRYPOINT)], env=merged, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["gradable"] is False and "contact your instructor" in results["message"]


@pytest.mark.slow
def test_entrypoint_ignores_a_grader_folder_beside_the_student_files(tmp_path: Path) -> None:
    root = student(tmp_path, BUGGY)
    (root / "student" / "grader").mkdir()
    (root / "student" / "grader" / "__init__.py").write_text("import os\nos._exit(0)\n")
    (root / "grader").mkdir()
    (root / "grader" / "__init__.py").write_text("import os\nos._exit(0)\n")
    env = {"GRADER_EXERCISES": str(ROOT / "exercises"), "GRADER_EXERCISE": "stable-softmax"}
    merged = {**os.environ, "GRADE_ROOT": str(root), "PYTHON": sys.executable, "PYTHONPATH": str(root), **env}
    done = subprocess.run(
        ["bash", str(ENTRYPOINT)], env=merged, capture_output=True, text=True, timeout=300, cwd=root / "student"
    )
    assert done.returncode == 0, done.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["gradable"] is True and 0 < results["score"] < 1


def test_a_refusal_names_the_students_folder_not_the_machines(tmp_path: Path) -> None:
    root = tmp_path / "grade"
    (root / "student").mkdir(parents=True)
    (root / "student" / "notes.txt").write_text("no code here\n")
    results = grade(root, GRADER_EXERCISES=str(ROOT / "exercises"), GRADER_EXERCISE="stable-softmax")
    assert results["gradable"] is False and "student: nothing to grade" in results["message"]
    assert str(tmp_path) not in json.dumps(results)
