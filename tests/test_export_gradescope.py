"""``grader export gradescope``: the bundle, unzipped into a fake /autograder, installs and grades in a fresh venv."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.export.gradescope_scripts import FINISH_RESULTS
from grader.export.wheel import build_wheel
from tests.fresh_venv import fresh_venv_env

ROOT = Path(__file__).resolve().parents[1]
BUGGY = ROOT / "solutions/stable-softmax/wrong_no_max_shift.py"
# What Gradescope documents for results.json, at the top and per test.
TOP_LEVEL = {
    "score",
    "execution_time",
    "output",
    "output_format",
    "test_output_format",
    "test_name_format",
    "visibility",
    "stdout_visibility",
    "extra_data",
    "tests",
}
PER_TEST = {"score", "max_score", "status", "name", "number", "output", "tags", "visibility", "extra_data"}


def export(out: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["export", "gradescope", "--out", str(out), *args])
    return result.exit_code, result.output


def test_bundle_holds_scripts_wheel_specs_and_solutions_and_is_deterministic(tmp_path: Path) -> None:
    assert export(tmp_path / "a.zip", "--assignment", "why-softmax")[0] == 0
    assert export(tmp_path / "b.zip", "--assignment", "why-softmax")[0] == 0
    assert (tmp_path / "a.zip").read_bytes() == (tmp_path / "b.zip").read_bytes()
    with zipfile.ZipFile(tmp_path / "a.zip") as archive:
        names = set(archive.namelist())
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
        run_autograder = archive.read("run_autograder").decode()
    assert {"setup.sh", "run_autograder", "finish_results.py", "collect_submission.py", "requirements.txt"} <= names
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    assert any(n.startswith("wheels/grader-") and n.endswith("-py3-none-any.whl") for n in names)
    assert {"exercises/why-softmax.yaml", "exercises/stable-softmax.yaml", "exercises/why-softmax-quiz.yaml"} <= names
    assert "exercises/temperature.yaml" not in names  # another assignment's
    assert {"solutions/stable-softmax/reference.py", "solutions/stable-softmax/wrong_no_max_shift.py"} <= names
    assert "--assignment why-softmax" in run_autograder and "--format gradescope" in run_autograder
    assert "--allow-weak-sandbox" not in run_autograder


def test_allow_weak_sandbox_is_written_into_run_autograder(tmp_path: Path) -> None:
    assert export(tmp_path / "a.zip", "--assignment", "softmax-bridge", "--allow-weak-sandbox")[0] == 0
    with zipfile.ZipFile(tmp_path / "a.zip") as archive:
        assert "--allow-weak-sandbox" in archive.read("run_autograder").decode()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--assignment", "stable-softmax"], "is an exercise, not an assignment"),
        (["--assignment", "nope"], "unknown assignment 'nope'"),
    ],
    ids=["exercise", "unknown"],
)
def test_bad_assignment_is_a_usage_error(args: list[str], expected: str, tmp_path: Path) -> None:
    code, output = export(tmp_path / "a.zip", *args)
    assert code == 2 and expected in output and not (tmp_path / "a.zip").exists()


def test_a_solution_outside_the_project_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "course"
    shutil.copytree(ROOT / "exercises", project / "exercises")
    shutil.copytree(ROOT / "solutions", project / "solutions")
    shutil.copy(BUGGY, tmp_path / "outside.py")
    spec = project / "exercises" / "stable-softmax.yaml"
    spec.write_text(
        spec.read_text().replace("path: solutions/stable-softmax/wrong_no_max_shift.py", "path: ../outside.py")
    )
    code, output = export(tmp_path / "a.zip", "--assignment", "why-softmax", "--exercises", str(project / "exercises"))
    assert code == 2 and "'../outside.py' is outside" in output


@pytest.mark.parametrize(
    ("status", "log", "expected"),
    [
        (3, "grader: internal error: the grader itself failed\nTraceback ...", "failed before it could grade"),
        (
            2,
            "grader: error: the sandbox here is tier C ...; pass --allow-weak-sandbox to grade anyway",
            "cannot confine submitted code",
        ),
        (2, "grader: error: /autograder/submission: nothing to grade: no .py file", "nothing to grade"),
        (1, "", "wrote no result"),
    ],
    ids=["crash", "weak-sandbox", "nothing-to-grade", "no-file"],
)
def test_a_grader_failure_still_writes_a_valid_result(status: int, log: str, expected: str, tmp_path: Path) -> None:
    script = tmp_path / "finish_results.py"
    script.write_text(FINISH_RESULTS)
    (tmp_path / "log").write_text(log)
    results = tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, str(script), str(results), str(status), "0", str(tmp_path / "log")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(results.read_text())
    assert data["score"] == 0 and data["tests"] == [] and expected in data["output"]
    assert "instructor" in data["output"] and "Traceback" not in data["output"]
    assert {"execution_time", "visibility", "stdout_visibility"} <= set(data)


def test_finish_results_adds_the_measured_time_to_the_graders_result(tmp_path: Path) -> None:
    from grader.report.gradescope import format_gradescope
    from grader.results import CheckResult, ExerciseResult, Report

    check = CheckResult(id="sums", status="passed", score=1.0, max_score=1.0, visibility="hidden", reason="holds.")
    report = Report(
        grader_version="0",
        submission="s.py",
        score=1.0,
        max_score=1.0,
        exercises=[ExerciseResult(id="e", status="passed", score=1.0, max_score=1.0, reason="ok.", checks=[check])],
    )
    written = json.loads(format_gradescope(report))
    script, results = tmp_path / "finish_results.py", tmp_path / "results.json"
    script.write_text(FINISH_RESULTS)
    results.write_text(json.dumps(written))
    (tmp_path / "log").write_text("")
    started = str(int(time.time()) - 3)
    done = subprocess.run(
        [sys.executable, str(script), str(results), "0", started, str(tmp_path / "log")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(results.read_text())
    assert 3 <= data.pop("execution_time") < 60
    assert data == written  # the grader's own fields, visibilities included, are kept as written


def test_wheel_of_the_installed_grader_installs_as_the_grader(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        record = archive.read(next(n for n in names if n.endswith("/RECORD"))).decode()
        metadata = archive.read(next(n for n in names if n.endswith("/METADATA"))).decode()
    assert names[-1].endswith("/RECORD") and all(name in record for name in names)
    assert "Name: grader" in metadata and "Requires-Dist: numpy" in metadata
    assert build_wheel(tmp_path / "again").read_bytes() == wheel.read_bytes()


# --- the whole round: setup.sh and run_autograder in a fresh venv ---------------------------------


@pytest.mark.slow
def test_bundle_installs_and_grades_a_buggy_submission_in_a_fresh_venv(tmp_path: Path) -> None:
    autograder = tmp_path / "autograder"
    bundle = tmp_path / "autograder.zip"
    assert export(bundle, "--assignment", "why-softmax")[0] == 0
    with zipfile.ZipFile(io.BytesIO(bundle.read_bytes())) as archive:
        archive.extractall(autograder / "source")
    for name in ("setup.sh", "run_autograder"):
        (autograder / "source" / name).chmod(0o755)  # as Gradescope's unzip keeps them
    # A zip holding a folder, as a Mac makes it: the file is one folder down, beside the Mac's metadata.
    (autograder / "submission" / "my-work").mkdir(parents=True)
    shutil.copy(BUGGY, autograder / "submission" / "my-work" / "softmax.py")
    (autograder / "submission" / "__MACOSX" / "my-work").mkdir(parents=True)
    (autograder / "submission" / "__MACOSX" / "my-work" / "._softmax.py").write_bytes(b"\x00\x05\x16\x07")
    fresh = tmp_path / "venv"
    wheelhouse = tmp_path / "pinned"
    downloaded = subprocess.run(  # the pinned dependencies, fetched here so setup.sh's pip needs no network
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "-q",
            "-d",
            str(wheelhouse),
            "-r",
            str(autograder / "source" / "requirements.txt"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if downloaded.returncode != 0:
        pytest.skip(f"the pinned dependencies cannot be fetched here: {downloaded.stderr.strip()[-300:]}")
    env = {**fresh_venv_env(tmp_path), "AUTOGRADER_ROOT": str(autograder)}
    env["PIP_FIND_LINKS"] = f"{env['PIP_FIND_LINKS']} {wheelhouse}"
    setup = subprocess.run(
        ["bash", str(autograder / "source" / "setup.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=autograder / "source",
    )
    assert setup.returncode == 0, setup.stdout + setup.stderr
    grader_python = (autograder / "source" / ".grader-python").read_text().strip()
    assert grader_python == str(autograder / "venv" / "bin" / "python")  # a venv of its own
    harness = subprocess.run(["python", "-I", "-c", "import grader"], env=env, capture_output=True, timeout=60)
    assert harness.returncode != 0 and str(fresh) in shutil.which("python", path=env["PATH"])  # untouched
    pins = dict(line.split("==") for line in (autograder / "source" / "requirements.txt").read_text().splitlines())
    frozen = subprocess.run([grader_python, "-I", "-m", "pip", "freeze"], capture_output=True, text=True, timeout=60)
    assert {name.lower(): version for name, version in pins.items()}.items() <= {
        name.lower(): version for name, _, version in (line.partition("==") for line in frozen.stdout.splitlines())
    }.items()
    shutil.copy(autograder / "source" / "run_autograder", autograder / "run_autograder")  # where Gradescope runs it
    graded = subprocess.run(
        [str(autograder / "run_autograder")], env=env, capture_output=True, text=True, timeout=600, cwd=autograder
    )
    assert graded.returncode == 0, graded.stderr
    results = json.loads((autograder / "results" / "results.json").read_text())
    assert TOP_LEVEL <= set(results), sorted(TOP_LEVEL - set(results))
    assert results["tests"] and all(PER_TEST <= set(test) for test in results["tests"])
    assert results["visibility"] in ("visible", "hidden", "after_due_date", "after_published")
    assert isinstance(results["execution_time"], (int, float)) and results["execution_time"] >= 0
    total = sum(test["score"] for test in results["tests"])
    maximum = sum(test["max_score"] for test in results["tests"])
    assert results["score"] == pytest.approx(total)
    assert 0 < results["score"] < maximum == results["extra_data"]["max_score"]
    failing = [t for t in results["tests"] if t["status"] == "failed" and t["name"].startswith("stable-softmax")]
    assert failing and any("1000." in t["output"] for t in failing)
    assert results["extra_data"]["submission"] == "submission"  # relative: no folder of the machine
    assert str(tmp_path) not in json.dumps(results)


def test_every_python_the_bundle_starts_is_isolated() -> None:
    """No folder beside the submission, in the working directory or on PYTHONPATH can stand in for pip or the grader."""
    from grader.export.gradescope_scripts import run_autograder, setup_sh

    for script in (setup_sh("w.whl", "0" * 64, "3.11"), run_autograder("why-softmax", allow_weak_sandbox=False)):
        starts = re.findall(r'(?:"\$PYTHON"|"\$GRADER"|\|\| python3) (?!--version)(\S+)', script)
        assert starts and all(flag == "-I" for flag in starts), starts
