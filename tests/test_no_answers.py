"""Neither the installed package nor a released handout holds an answer: no reference or known-wrong code,
no hidden case, no answer key. A handout still grades its public checks, with the wheel alone installed."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader.authoring.leaks import secrets_of
from grader.authoring.release import release_assignment
from grader.export.wheel import build_wheel
from grader.spec.loader import Catalog
from grader.spec.models import ImplementationExercise
from tests.fresh_venv import fresh_venv_env

ROOT = Path(__file__).resolve().parents[1]


def _found(catalog: Catalog, texts: dict[str, str]) -> list[str]:
    """Each secret of the catalog (``grader.authoring.leaks.secrets_of``) found in ``texts``, plus known-wrong paths."""
    found = []
    for what, pattern, exercise_id in secrets_of(catalog):
        for name, text in texts.items():
            if exercise_id is not None and Path(name).stem != exercise_id:
                continue
            if pattern.search(text):
                found.append(f"{what} in {name}")
    for exercise in catalog.exercises.values():
        if isinstance(exercise, ImplementationExercise):
            for wrong in exercise.known_wrong:
                found += [f"{wrong.path} in {name}" for name, text in texts.items() if Path(wrong.path).stem in text]
    return found


def _wheel_texts(wheel: Path) -> dict[str, str]:
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(name).decode("utf-8", "replace") for name in archive.namelist()}


# What the package must not hold: solutions' code and the texts only graders see. (File names such as
# reference.py are in the authors' scaffold and the README, which the wheel's METADATA carries: not answers.)
_IN_CODE = ("code of", "the reason", "a mistake reason", "the hint of", "the description of", "the misconception")


def _package_answers(catalog: Catalog, texts: dict[str, str]) -> list[str]:
    code = {name: text for name, text in texts.items() if not name.endswith("/METADATA")}
    # A block header (``for j in range(n):``) computes nothing: only the lines that compute count.
    found = [leak for leak in _found(catalog, code) if leak.startswith(_IN_CODE) and ":')" not in leak]
    solutions = {path.read_text().strip() for path in (ROOT / "solutions").rglob("*.py")}
    return found + [f"a whole solution in {name}" for name, text in code.items() if text.strip() in solutions]


def test_the_wheel_holds_no_reference_or_known_wrong_code(catalog: Catalog, tmp_path: Path) -> None:
    texts = _wheel_texts(build_wheel(tmp_path))
    assert any(name.endswith("grader/engine/call_loop.py") for name in texts)
    assert not [name for name in texts if "references" in name or name.endswith("sandbox/trusted.py")]
    assert not [name for name in texts if name.startswith(("solutions/", "exercises/", "tests/"))]
    assert _package_answers(catalog, texts) == []


@pytest.mark.slow
def test_a_wheel_built_by_pip_holds_no_reference_or_known_wrong_code(catalog: Catalog, tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if built.returncode != 0:
        pytest.skip(f"pip cannot build the wheel here: {built.stderr.strip().splitlines()[-1:]}")
    (wheel,) = tmp_path.glob("grader-*.whl")
    texts = _wheel_texts(wheel)
    assert not [name for name in texts if name.startswith(("solutions/", "exercises/", "tests/"))]
    assert _package_answers(catalog, texts) == []


@pytest.mark.slow
def test_a_handout_grades_its_public_checks_with_only_the_wheel_installed(catalog: Catalog, tmp_path: Path) -> None:
    handout = tmp_path / "handout"
    release_assignment(catalog, "why-softmax", out=handout)
    texts = {str(p.relative_to(handout)): p.read_text() for p in handout.rglob("*") if p.is_file()}
    assert "public-checks/argmax-zero-gradient.answers.json" in texts
    assert _found(catalog, texts) == []
    # One file answering two exercises, written as a learner would (the course's solutions, copied).
    mine = "\n\n".join(
        (ROOT / "solutions" / exercise / "reference.py").read_text()
        for exercise in ("stable-softmax", "argmax-zero-gradient")
    )
    (handout / "mine.py").write_text(mine)

    env = fresh_venv_env(tmp_path)
    fresh = tmp_path / "venv"
    wheel = build_wheel(tmp_path / "dist")
    env["HOME"] = str(tmp_path / "home")
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")  # a cold grader cache: nothing of this checkout's runs
    install = subprocess.run(
        [str(fresh / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    probe = subprocess.run(
        [str(fresh / "bin" / "python"), "-c", "import grader, sys; print(grader.__file__)"],
        env=env,
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.stdout.startswith(str(fresh)), probe.stdout + probe.stderr  # not this checkout
    graded = subprocess.run(
        [str(fresh / "bin" / "grader"), "grade", "mine.py", "--public", "--allow-weak-sandbox"],
        env=env,
        cwd=handout,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert graded.returncode == 0, graded.stdout + graded.stderr
    assert "matches-softmax-jacobian" in graded.stdout and "matches-reference" in graded.stdout
    shutil.rmtree(fresh, ignore_errors=True)
