"""Exercism's runner script: run.sh SLUG INPUT_DIR OUTPUT_DIR always leaves a version-3 results.json and exits 0."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUNNER = ROOT / "grader" / "export" / "platforms" / "exercism" / "run.sh"


def run(slug: str, tmp_path: Path, source: Path) -> dict:
    (tmp_path / "in").mkdir()
    shutil.copy(source, tmp_path / "in" / "softmax.py")
    env = {**os.environ, "PYTHON": sys.executable, "GRADER_EXERCISES": str(ROOT / "exercises")}
    done = subprocess.run(
        [str(RUNNER), slug, f"{tmp_path / 'in'}/", f"{tmp_path / 'out'}/"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["version"] == 3
    return results


@pytest.mark.slow
def test_runner_reports_the_failing_tests(tmp_path: Path) -> None:
    results = run("stable-softmax", tmp_path, ROOT / "solutions/stable-softmax/wrong_no_max_shift.py")
    assert results["status"] == "fail"
    assert any(t["status"] == "fail" and t["test_code"].startswith("softmax(z=") for t in results["tests"])


def test_runner_turns_a_refusal_into_an_error_result(tmp_path: Path) -> None:
    results = run("stable-sofmax", tmp_path, ROOT / "solutions/stable-softmax/reference.py")
    assert results["status"] == "error" and "unknown exercise 'stable-sofmax'" in results["message"]


def test_runner_writes_the_solutions_folder_as_solution_dir(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    env = {**os.environ, "PYTHON": sys.executable, "GRADER_EXERCISES": str(ROOT / "exercises")}
    done = subprocess.run(
        [str(RUNNER), "stable-softmax", f"{tmp_path / 'in'}/", f"{tmp_path / 'out'}/"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "out" / "results.json").read_text()
    results = json.loads(text)
    assert results["status"] == "error" and results["message"].startswith("The tests could not run: <solution-dir>")
    assert str(tmp_path) not in text


def test_finishing_keeps_paths_of_other_folders_and_the_output_cap(tmp_path: Path) -> None:
    written = {
        "version": 3,
        "status": "fail",
        "message": None,
        "tests": [
            {"name": "t", "status": "fail", "message": "/solution/a.py; /solutions/b.py", "output": "/solution" * 60}
        ],
    }
    (tmp_path / "results.json").write_text(json.dumps(written))
    finish = RUNNER.parent / "finish_results.py"
    done = subprocess.run(
        [sys.executable, "-I", str(finish), str(tmp_path / "results.json"), "1", "/dev/null", "/solution/"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    (test,) = json.loads((tmp_path / "results.json").read_text())["tests"]
    assert test["message"] == "<solution-dir>/a.py; /solutions/b.py"
    assert len(test["output"]) == 500 and test["output"].endswith("Please limit to 500 chars.]")


@pytest.mark.slow
def test_a_checks_task_in_its_spec_becomes_the_tests_task_id(tmp_path: Path) -> None:
    specs = tmp_path / "specs" / "exercises"
    specs.mkdir(parents=True)
    text = (ROOT / "exercises/stable-softmax.yaml").read_text(encoding="utf-8")
    marked = text.replace("  - id: rows-sum-to-one\n", "  - id: rows-sum-to-one\n    task: 1\n", 1)
    assert marked != text
    (specs / "stable-softmax.yaml").write_text(marked, encoding="utf-8")
    (tmp_path / "specs" / "solutions").symlink_to(ROOT / "solutions")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "--exercises",
            str(specs),
            "grade",
            str(ROOT / "solutions/stable-softmax/wrong_no_max_shift.py"),
            "--exercise",
            "stable-softmax",
            "--format",
            "exercism",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    tests = {t["name"]: t for t in json.loads(done.stdout)["tests"]}
    assert tests["stable-softmax / rows-sum-to-one"]["task_id"] == 1
    assert [name for name, test in tests.items() if "task_id" in test] == ["stable-softmax / rows-sum-to-one"]
