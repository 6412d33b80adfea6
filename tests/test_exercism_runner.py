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
RUNNER = ROOT / "platforms" / "exercism" / "run.sh"


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
