"""Spec loading: valid specs load; every mistake is reported with file, line and a way out."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader.errors import SpecError, UsageError
from grader.spec.loader import load_catalog, load_spec_file

GOOD = Path(__file__).resolve().parents[1] / "exercises" / "stable-softmax.yaml"


def _broken(tmp_path: Path, old: str, new: str) -> Path:
    text = GOOD.read_text()
    assert old in text, old
    path = tmp_path / "exercises" / "stable-softmax.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace(old, new, 1))
    return path


def _line_of(path: Path, fragment: str) -> int:
    return next(number for number, line in enumerate(path.read_text().splitlines(), 1) if fragment in line)


def test_load_catalog_reads_the_real_exercises(catalog) -> None:
    assert "stable-softmax" in catalog.exercises
    assert catalog.assignment("all")


@pytest.mark.parametrize(
    ("old", "new", "marker", "expected"),
    [
        (
            "    points: 2\n    visibility: public\n",
            "    points: 0\n    visibility: public\n",
            "points: 0",
            "checks[1].points: must be greater than 0",
        ),
        (
            "    property: sums-to-one\n",
            "    property: sums-to-on\n",
            "sums-to-on",
            "unknown property 'sums-to-on'; did you mean 'sums-to-one'?",
        ),
        (
            "    visibility: public\n    hints:",
            "    visibilty: public\n    hints:",
            "visibilty",
            "unknown key 'visibilty'; did you mean 'visibility'?",
        ),
        (
            "    cases: [basic, non-square, extreme]\n",
            "    cases: [basic, nonsquare, extreme]\n",
            "nonsquare",
            "names the case set 'nonsquare', which is not in cases; did you mean 'non-square'?",
        ),
        ("id: stable-softmax\n", "id: Stable Softmax\n", "Stable Softmax", "id: must be lower-case words"),
    ],
    ids=["points-not-positive", "unknown-property", "misspelt-key", "unknown-case-set", "bad-id"],
)
def test_load_spec_file_reports_file_line_and_fix(
    tmp_path: Path, old: str, new: str, marker: str | None, expected: str
) -> None:
    path = _broken(tmp_path, old, new)
    with pytest.raises(SpecError) as caught:
        load_spec_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:")
    assert expected in message
    if marker:
        assert caught.value.line == _line_of(path, marker)


def test_load_spec_file_refuses_yaml_aliases(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("id: &a x\nkind: quiz\ntitle: *a\n")
    with pytest.raises(SpecError, match="aliases") as caught:
        load_spec_file(path)
    assert caught.value.line == 3


def test_load_spec_file_reports_non_utf8(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_bytes(b"id: caf\xe9\n")
    with pytest.raises(SpecError, match="not UTF-8"):
        load_spec_file(path)


def test_load_spec_file_reports_yaml_syntax_with_line(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("id: x\nkind: quiz\ntitle: [unclosed\n")
    with pytest.raises(SpecError, match="not valid YAML") as caught:
        load_spec_file(path)
    assert caught.value.line is not None


def test_load_catalog_reports_missing_solution_file(tmp_path: Path) -> None:
    _broken(tmp_path, "wrong_global_max.py", "wrong_gone.py")
    shutil.copytree(GOOD.parents[1] / "solutions" / "stable-softmax", tmp_path / "solutions" / "stable-softmax")
    with pytest.raises(SpecError, match="'solutions/stable-softmax/wrong_gone.py' does not exist"):
        load_catalog(tmp_path / "exercises")


def test_load_catalog_without_directory_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--exercises DIR"):
        load_catalog(tmp_path / "nowhere")


def test_catalog_unknown_exercise_suggests_closest(catalog) -> None:
    with pytest.raises(UsageError, match="did you mean 'stable-softmax'"):
        catalog.exercise("stable-sofmax")
