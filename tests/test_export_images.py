"""``grader export prairielearn DIR`` and ``grader export exercism DIR``: build folders from the installed grader.

What the Dockerfiles copy is there, the grader goes in as its wheel by sha256 with its dependencies pinned,
an Exercism image holds public checks only, and the exports run from a wheel installed outside the repository.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.authoring.release import release_assignment
from grader.cli import main
from grader.export.pins import pinned_requirements
from grader.spec.loader import load_catalog
from tests.fresh_venv import fresh_venv_env

ROOT = Path(__file__).resolve().parents[1]
BUGGY = ROOT / "solutions/stable-softmax/wrong_no_max_shift.py"
PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"


@pytest.fixture(scope="module")
def public_checks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The handout's public-checks folder, what an Exercism image may hold."""
    handout = tmp_path_factory.mktemp("handout")
    release_assignment(load_catalog(ROOT / "exercises"), "all", out=handout)
    return handout / "public-checks"


def _export(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def _copied(folder: Path) -> list[str]:
    """The sources of the Dockerfile's COPY lines."""
    lines = re.findall(r"^COPY (.+)$", (folder / "Dockerfile").read_text(), flags=re.MULTILINE)
    return [source for line in lines for source in line.split()[:-1]]


def _installs_the_wheel_by_its_hash(folder: Path, prefix: str) -> None:
    (wheel,) = (folder / "wheels").glob("grader-*-py3-none-any.whl")
    line = (folder / "grader.txt").read_text()
    assert line == f"{prefix}/{wheel.name} --hash=sha256:{hashlib.sha256(wheel.read_bytes()).hexdigest()}\n"
    text = (folder / "Dockerfile").read_text()
    assert re.search(rf"^FROM --platform=linux/amd64 python:{re.escape(PYTHON)}-slim$", text, flags=re.MULTILINE)
    assert "--no-deps --require-hashes -r" in text and "-r requirements.txt" in text.replace("/opt/grader-pl/", "")
    for source in _copied(folder):
        assert (folder / source).exists(), source


def test_pins_are_the_installed_versions_of_every_runtime_requirement() -> None:
    pins = dict(line.split("==") for line in pinned_requirements().splitlines())
    for name in ("numpy", "pydantic", "PyYAML", "click", "rich"):
        assert pins[importlib.metadata.distribution(name).metadata["Name"]] == importlib.metadata.version(name)
    assert "pydantic_core" in pins or "pydantic-core" in pins  # pydantic's own requirement, pinned too
    assert not {"pytest", "hypothesis", "dask"} & {name.lower() for name in pins}  # the test extra is not


def test_prairielearn_folder_builds_the_entrypoint_image_from_the_wheel(tmp_path: Path) -> None:
    code, output = _export("export", "prairielearn", str(tmp_path / "pl"))
    assert code == 0, output
    folder = tmp_path / "pl"
    _installs_the_wheel_by_its_hash(folder, "/opt/grader-pl/wheels")
    assert (folder / "entrypoint.sh").stat().st_mode & 0o111
    assert (folder / "requirements.txt").read_text() == pinned_requirements()
    assert 'CMD ["/opt/grader-pl/entrypoint.sh"]' in (folder / "Dockerfile").read_text()


def test_exercism_folder_has_the_test_runner_layout(public_checks: Path, tmp_path: Path) -> None:
    code, output = _export("--exercises", str(public_checks), "export", "exercism", str(tmp_path / "ex"))
    assert code == 0, output
    folder = tmp_path / "ex"
    _installs_the_wheel_by_its_hash(folder, "/opt/test-runner/wheels")
    text = (folder / "Dockerfile").read_text()
    assert "WORKDIR /opt/test-runner" in text and 'ENTRYPOINT ["/opt/test-runner/bin/run.sh"]' in text
    assert (folder / "bin/run.sh").stat().st_mode & 0o111
    specs = load_catalog(folder / "specs" / "exercises")
    assert "stable-softmax" in specs.exercises
    assert all(check.visibility == "public" for e in specs.exercises.values() for check in getattr(e, "checks", []))
    assert not list(folder.rglob("reference.py")) and not list(folder.rglob("wrong_*.py"))


def test_exercism_export_refuses_hidden_checks_and_solutions(tmp_path: Path) -> None:
    code, output = _export("--exercises", str(ROOT / "exercises"), "export", "exercism", str(tmp_path / "ex"))
    assert code == 2 and "an Exercism runner image is public" in output and "public-checks" in output
    assert not (tmp_path / "ex").exists()  # refused before any file is written


@pytest.mark.slow
def test_exports_run_from_a_wheel_installed_outside_the_repository(public_checks: Path, tmp_path: Path) -> None:
    source = tmp_path / "source"  # a copy: building in the checkout would rewrite its grader.egg-info
    shutil.copytree(ROOT / "grader", source / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for isolation in (["--no-build-isolation"], []):  # this environment's setuptools, else the index's
        built = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", *isolation, "-w", str(tmp_path), str(source)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if built.returncode == 0:
            break
    else:
        pytest.skip(f"pip cannot build the wheel here: {built.stderr.strip().splitlines()[-1:]}")
    (wheel,) = tmp_path.glob("grader-*.whl")
    env = fresh_venv_env(tmp_path / "fresh")
    work = tmp_path / "work"
    work.mkdir()

    def run(*command: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(command), cwd=work, env={**env, **extra}, capture_output=True, text=True, timeout=600
        )

    installed = run("python", "-I", "-m", "pip", "install", "--no-deps", str(wheel))
    assert installed.returncode == 0, installed.stderr
    assert run("grader", "export", "prairielearn", "pl").returncode == 0
    exported = run("grader", "--exercises", str(public_checks), "export", "exercism", "ex")
    assert exported.returncode == 0, exported.stderr
    for folder in (work / "pl", work / "ex"):
        for source in _copied(folder):
            assert (folder / source).exists(), source
        for path in folder.rglob("*"):
            if path.is_file() and path.suffix != ".whl":
                assert str(ROOT) not in path.read_text(), path  # nothing of the source tree is named
    # The exported runner grades with the installed grader, as its image will.
    (tmp_path / "in").mkdir()
    shutil.copy(BUGGY, tmp_path / "in" / "softmax.py")
    graded = run(
        "bash",
        str(work / "ex/bin/run.sh"),
        "stable-softmax",
        f"{tmp_path / 'in'}/",
        f"{tmp_path / 'out'}/",
        PYTHON="python",
        GRADER_EXERCISES=str(work / "ex/specs/exercises"),
    )
    assert graded.returncode == 0, graded.stderr
    results = json.loads((tmp_path / "out/results.json").read_text())
    assert results["version"] == 3 and results["status"] == "fail"
    with zipfile.ZipFile(next((work / "ex/wheels").glob("*.whl"))) as exported_wheel:
        assert "grader/export/platforms/exercism/run.sh" in exported_wheel.namelist()
