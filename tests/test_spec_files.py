"""The one list of files a spec reads (``grader.spec.files``): complete, checked by the loader, keyed by the batch.

Each kind of file a spec names (reference solution, known-wrong solution,
given functions, a handout's reference answers) is edited in turn: the batch's
specs digest must change with it and come back when the edit is undone. A
string key added to the spec records must be classified here, as a file the
spec reads (then listed in ``spec/files.py``) or not.
"""

from __future__ import annotations

import shutil
import types
import typing
from pathlib import Path

import pytest

from grader.authoring.release import CHECKS_DIR, handout_files
from grader.batch.cache import spec_digest
from grader.errors import SpecError
from grader.safeyaml import load_yaml
from grader.spec.files import KNOWN_WRONG_PATH, PATH_KEYS, spec_files, spec_files_of
from grader.spec.loader import load_catalog
from grader.spec.models import ImplementationExercise, KnownWrong

ROOT = Path(__file__).resolve().parents[1]
GIVEN = "argmax-zero-gradient"  # the exercise with a functions: file

# Every string key of the records that is not a file the spec reads, and why not.
NOT_SPEC_FILES = {
    "id": "a name",
    "kind": "a tag",
    "title": "text",
    "lesson": "text",
    "prompt": "text",
    "scaffold": "Python code, written into the stub; the spec names no file with it",
    "misconception": "text",
    "gate": "a check id",
    "gradescope_hidden": "a setting",
    "entry_file": "the name of a learner's file, read as the learner's work",
}


def _alternatives(hint: object) -> tuple[object, ...]:
    return (
        typing.get_args(hint)
        if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union
        else (hint,)
    )


def _string_keys(record: type) -> set[str]:
    """The keys whose value is a string (or may be absent): those that could name a file."""
    hints = typing.get_type_hints(record)
    kinds = {name: set(_alternatives(hints[name])) - {type(None)} for name in record.model_fields}
    return {name for name, found in kinds.items() if found == {str}}


@pytest.mark.parametrize("record", [ImplementationExercise, KnownWrong], ids=["exercise", "known-wrong"])
def test_spec_files_every_string_key_is_a_listed_file_or_classified_as_none(record: type) -> None:
    listed = set(PATH_KEYS) if record is ImplementationExercise else {KNOWN_WRONG_PATH}
    unclassified = _string_keys(record) - listed - set(NOT_SPEC_FILES)
    assert not unclassified, f"{record.__name__}: classify {sorted(unclassified)} in spec/files.py or NOT_SPEC_FILES"
    assert listed <= _string_keys(record)


def _strings(data: object) -> list[str]:
    if isinstance(data, dict):
        return [text for value in data.values() for text in _strings(value)]
    if isinstance(data, list):
        return [text for value in data for text in _strings(value)]
    return [data] if isinstance(data, str) else []


def _names_a_file(root: Path, text: str) -> bool:
    if "\n" in text or len(text) > 255:
        return False
    try:
        return (root / text).is_file()
    except OSError:
        return False


def _handout(tmp_path: Path) -> Path:
    """The real catalog's handout, with stand-in reference answers (their bytes do not matter here)."""
    catalog = load_catalog(ROOT / "exercises")
    answers = {e.id: "{}\n" for e in catalog.exercises.values() if isinstance(e, ImplementationExercise)}
    for name, text in handout_files(catalog, answers).items():
        path = tmp_path / "handout" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path / "handout" / CHECKS_DIR


@pytest.mark.parametrize("where", ["exercises", "handout"])
def test_spec_files_lists_every_file_a_spec_names(where: str, tmp_path: Path) -> None:
    exercises = ROOT / "exercises" if where == "exercises" else _handout(tmp_path)
    catalog = load_catalog(exercises)
    listed = set(spec_files_of(catalog.exercises.values()))
    kinds = {found.key for e in catalog.exercises.values() for found in spec_files(e)}
    assert kinds == (
        {"reference_solution", "functions", "known_wrong"}
        if where == "exercises"
        else {"reference_answers", "functions"}
    )
    for source in catalog.sources.values():
        data, _ = load_yaml(source.read_text(encoding="utf-8"))
        named = {text for text in _strings(data) if _names_a_file(catalog.root, text)}
        assert named <= listed, f"{source.name} names files spec/files.py does not list: {sorted(named - listed)}"


def _project(tmp_path: Path) -> Path:
    """A copy of the exercise with given functions, with its reference and known-wrong solutions."""
    exercises = tmp_path / "project" / "exercises"
    exercises.mkdir(parents=True)
    shutil.copy(ROOT / "exercises" / f"{GIVEN}.yaml", exercises)
    shutil.copytree(ROOT / "solutions" / GIVEN, tmp_path / "project" / "solutions" / GIVEN)
    return exercises


def test_spec_digest_changes_with_each_kind_of_file_a_spec_reads(tmp_path: Path) -> None:
    folders = [_project(tmp_path), _handout(tmp_path)]
    seen: set[str] = set()
    for exercises in folders:
        catalog = load_catalog(exercises)
        first = spec_digest(catalog, exercises)
        for exercise in catalog.exercises.values():
            for found in spec_files(exercise):
                path = catalog.resolve(found.relative)
                before = path.read_bytes()
                path.write_bytes(before + b"\n# edited\n")
                assert spec_digest(catalog, exercises) != first, f"{exercise.id}: {found.key} {found.relative}"
                path.write_bytes(before)
                seen.add(found.key)
        assert spec_digest(catalog, exercises) == first
    assert seen == {"reference_solution", "known_wrong", "functions", "reference_answers"}


def test_spec_digest_of_a_named_file_gone_since_loading_is_a_digest_not_a_crash(tmp_path: Path) -> None:
    exercises = _project(tmp_path)
    catalog = load_catalog(exercises)
    first = spec_digest(catalog, exercises)
    given = catalog.resolve(catalog.exercises[GIVEN].functions or "")
    given.unlink()
    assert spec_digest(catalog, exercises) != first
    with pytest.raises(SpecError, match=r"functions: the solution file .* does not exist"):
        load_catalog(exercises)


def test_spec_digest_follows_a_spec_that_is_a_link(tmp_path: Path) -> None:
    exercises = _project(tmp_path)
    kept = tmp_path / "kept.yaml"
    (exercises / f"{GIVEN}.yaml").rename(kept)
    (exercises / f"{GIVEN}.yaml").symlink_to(kept)
    catalog = load_catalog(exercises)
    first = spec_digest(catalog, exercises)
    kept.write_text(kept.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    assert spec_digest(catalog, exercises) != first
