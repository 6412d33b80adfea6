"""Gradescope: a submission's files are found in its folders too, and what the learner reads names no machine path."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner

from grader.cli import main

ROOT = Path(__file__).resolve().parents[1]
COLLECTOR = ROOT / "grader/export/platforms/gradescope/collect_submission.py"
BUGGY = ROOT / "solutions/stable-softmax/wrong_no_max_shift.py"


def _collector() -> ModuleType:
    spec = importlib.util.spec_from_file_location("collect_submission", COLLECTOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write(root: Path, relative: str, text: str = "x = 1\n", modified: int | None = None) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if modified is not None:
        os.utime(path, ns=(modified, modified))


def test_files_in_folders_are_found_and_junk_folders_are_not(tmp_path: Path) -> None:
    for relative in (
        "my-work/softmax.py",
        "repo/src/helpers.py",
        "repo/answers.yaml",
        "repo/README.md",
        "__MACOSX/my-work/._softmax.py",
        "repo/.git/hooks/hook.py",
        "repo/.venv/lib/site.py",
        "repo/env/pyvenv.cfg",
        "repo/env/lib/python3.11/numpy.py",
        "repo/src/__pycache__/helpers.py",
        "repo/node_modules/x.json",
        "repo/._softmax.py",
    ):
        _write(tmp_path, relative)
    found = [path for path, _ in _collector().found_files(str(tmp_path))]
    assert found == ["my-work/softmax.py", "repo/answers.yaml", "repo/src/helpers.py"]


def test_a_name_held_twice_is_the_most_recently_modified_one_and_the_learner_is_told(tmp_path: Path) -> None:
    _write(tmp_path, "draft/softmax.py", "old\n", modified=1_000_000_000)
    _write(tmp_path, "final/softmax.py", "new\n", modified=2_000_000_000)
    _write(tmp_path, "final/helpers.py", modified=1_000_000_000)
    collector = _collector()
    stage, notes = tmp_path / "stage", tmp_path / "notes.txt"
    assert collector.main(["collect", str(tmp_path), str(stage), str(notes)]) == 0
    assert sorted(p.name for p in stage.iterdir()) == ["helpers.py", "softmax.py"]
    assert (stage / "softmax.py").read_text() == "new\n"
    assert (stage / "softmax.py").stat().st_mtime_ns == 2_000_000_000  # the entry rule reads it
    assert notes.read_text() == (
        "Your submission holds softmax.py more than once; graded final/softmax.py, the most recently modified, "
        "not draft/softmax.py.\n"
    )


def test_a_tie_is_broken_by_path_and_the_walk_is_bounded(tmp_path: Path) -> None:
    _write(tmp_path, "b/f.py", "b\n", modified=5)
    _write(tmp_path, "a/f.py", "a\n", modified=5)
    _write(tmp_path, "/".join(["d"] * 12) + "/deep.py")
    collector = _collector()
    chosen, _ = collector.chosen_files(collector.found_files(str(tmp_path)))
    assert chosen == {"f.py": "a/f.py"}  # deep.py is below MAX_DEPTH folders


@pytest.fixture(scope="module")
def autograder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundle unzipped as Gradescope does, with this interpreter standing in for setup.sh's venv."""
    root = tmp_path_factory.mktemp("autograder")
    bundle = root / "autograder.zip"
    result = CliRunner().invoke(main, ["export", "gradescope", "--assignment", "why-softmax", "--out", str(bundle)])
    assert result.exit_code == 0, result.output
    with zipfile.ZipFile(io.BytesIO(bundle.read_bytes())) as archive:
        archive.extractall(root / "source")
    (root / "source" / ".grader-python").write_text(sys.executable + "\n")
    return root


def _grade(autograder: Path, files: dict[str, Path | str], modified: dict[str, int] | None = None) -> dict:
    submission = autograder / "submission"
    shutil.rmtree(submission, ignore_errors=True)
    submission.mkdir()
    for relative, content in files.items():
        target = submission / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path):
            shutil.copy(content, target)
        else:
            target.write_text(content)
    for relative, when in (modified or {}).items():
        os.utime(submission / relative, ns=(when, when))
    env = {**os.environ, "AUTOGRADER_ROOT": str(autograder)}
    done = subprocess.run(
        ["bash", str(autograder / "source" / "run_autograder")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=autograder,
    )
    assert done.returncode == 0, done.stderr
    return json.loads((autograder / "results" / "results.json").read_text())


def test_nothing_to_grade_names_the_submission_not_the_machines_folders(autograder: Path) -> None:
    results = _grade(autograder, {"notes/README.md": "my notes\n", "__MACOSX/._a.py": "x"})
    assert results["score"] == 0 and "nothing to grade" in results["output"]
    assert "submission: nothing to grade" in results["output"]
    assert str(autograder) not in json.dumps(results) and "/tmp" not in results["output"]


@pytest.mark.slow
def test_a_repository_with_src_is_graded_and_a_duplicate_is_said(autograder: Path) -> None:
    results = _grade(
        autograder,
        {"repo/src/softmax.py": BUGGY, "repo/old/softmax.py": "x = (\n"},
        modified={"repo/src/softmax.py": 2_000_000_000_000_000_000, "repo/old/softmax.py": 1_000_000_000},
    )
    assert results["tests"] and 0 < results["score"] < results["extra_data"]["max_score"]
    assert results["output"].startswith(
        "Your submission holds softmax.py more than once; graded repo/src/softmax.py, the most recently modified, "
        "not repo/old/softmax.py.\n\n"
    )
    assert results["extra_data"]["submission"] == "submission"
    assert str(autograder) not in json.dumps(results)
