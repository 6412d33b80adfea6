"""Shell completion of exercise and assignment ids: from the catalog or ``--exercises``, never a traceback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main

ROOT = Path(__file__).resolve().parents[1]


def complete(words: str, env: dict[str, str] | None = None) -> tuple[int, list[str], str]:
    """What bash would be offered for the last word of ``words`` (the values), and the exit code and stderr."""
    argv = words.split(" ")
    result = CliRunner().invoke(
        main,
        [],
        prog_name="grader",
        env={"_GRADER_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(len(argv) - 1), **(env or {})},
    )
    values = [line.split(",", 1)[1] for line in result.stdout.splitlines() if line.startswith("plain,")]
    return result.exit_code, values, result.stderr


def _one_quiz_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "exercises"
    folder.mkdir()
    shutil.copy(ROOT / "exercises" / "why-softmax-quiz.yaml", folder)
    return folder


def test_show_completes_exercise_ids_not_assignments(cache_dir: Path) -> None:
    code, values, _ = complete("grader show stable")
    assert code == 0
    assert "stable-softmax" in values
    assert all(value.startswith("stable") for value in values)
    _, every, _ = complete("grader show ")
    assert "all" not in every and "why-softmax-quiz" in every


@pytest.mark.parametrize(
    "words",
    [
        "grader grade x.py --assignment ",
        "grader batch learners --assignment ",
        "grader export gradescope --assignment ",
    ],
    ids=["grade", "batch", "export"],
)
def test_assignment_options_complete_assignment_ids_and_all(words: str, cache_dir: Path) -> None:
    code, values, _ = complete(words)
    assert code == 0
    assert "all" in values
    assert "stable-softmax" not in values  # an exercise, not an assignment


@pytest.mark.parametrize(
    "words",
    ["grader --exercises {folder} grade x.py --exercise ", "grader grade x.py --exercises {folder} --exercise "],
    ids=["before-the-command", "after-the-command"],
)
def test_completion_reads_the_exercises_folder_given(words: str, tmp_path: Path, cache_dir: Path) -> None:
    folder = _one_quiz_folder(tmp_path)
    code, values, _ = complete(words.format(folder=folder))
    assert (code, values) == (0, ["why-softmax-quiz"])


def test_completion_reads_grader_exercises_from_the_environment(tmp_path: Path, cache_dir: Path) -> None:
    folder = _one_quiz_folder(tmp_path)
    assert complete("grader validate --exercise why", env={"GRADER_EXERCISES": str(folder)})[:2] == (
        0,
        ["why-softmax-quiz"],
    )


@pytest.mark.parametrize("broken", ["missing", "invalid-yaml"], ids=["missing-folder", "invalid-spec"])
def test_completion_offers_nothing_and_says_nothing_when_specs_cannot_load(
    broken: str, tmp_path: Path, cache_dir: Path
) -> None:
    folder = tmp_path / "exercises"
    if broken == "invalid-yaml":
        folder.mkdir()
        (folder / "bad.yaml").write_text("id: bad\nkind: quiz\n  title: [unclosed\n", encoding="utf-8")
    code, values, stderr = complete(f"grader --exercises {folder} show ")
    assert (code, values, stderr) == (0, [], "")


def test_bash_source_prints_the_completion_script() -> None:
    result = CliRunner().invoke(main, [], prog_name="grader", env={"_GRADER_COMPLETE": "bash_source"})
    assert result.exit_code == 0
    assert "_GRADER_COMPLETE=bash_complete" in result.stdout
