"""Records: declared without pydantic, validated exactly as pydantic models were, and grading needs no pydantic."""

from __future__ import annotations

import copy
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from grader.checks.bridge import EntropyGrows
from grader.checks.reference import MatchesReference
from grader.record import Field, Record
from grader.record.validation import model_for
from grader.spec.loader import load_spec_file
from grader.spec.models import ChoiceQuestion, EntrySpec, ImplementationExercise, Option

ROOT = Path(__file__).resolve().parents[1]


def _check(**fields):  # type: ignore[no-untyped-def]
    return MatchesReference.model_validate(
        {"id": "matches-reference", "property": "matches-reference", "reference": "softmax", **fields}
    )


def test_validation_fills_defaults_and_coerces_like_pydantic() -> None:
    check = _check(rtol=1)
    assert check.rtol == 1.0 and isinstance(check.rtol, float)
    assert (check.atol, check.points, check.visibility, check.cases) == (1e-9, 1.0, "hidden", [])


@pytest.mark.parametrize(
    ("fields", "location", "kind"),
    [
        ({"rtol": -1}, ("rtol",), "greater_than_equal"),
        ({"id": "Not Kebab"}, ("id",), "string_pattern_mismatch"),
        ({"tolerance": 1}, ("tolerance",), "extra_forbidden"),
        ({"points": 0}, ("points",), "greater_than"),
    ],
)
def test_validation_errors_keep_pydantic_locations_and_kinds(fields, location, kind):  # type: ignore[no-untyped-def]
    with pytest.raises(ValidationError) as caught:
        _check(**fields)
    error = caught.value.errors()[0]
    assert (tuple(error["loc"]), error["type"]) == (location, kind)


def test_field_and_model_validators_still_refuse() -> None:
    with pytest.raises(ValidationError, match="strictly increasing"):
        EntropyGrows.model_validate({"id": "e", "property": "entropy-grows", "values": [1.0, 1.0]})
    options = [{"text": "a", "correct": True, "reason": "r"}, {"text": "b", "correct": True, "reason": "r"}]
    with pytest.raises(ValidationError, match="exactly one correct option"):
        ChoiceQuestion.model_validate({"id": "q", "prompt": "p", "type": "single", "options": options})


def test_building_a_record_directly_validates_it() -> None:
    with pytest.raises(ValidationError, match="at least 1 character"):
        Option(text="a", reason="")
    assert Option(text="a", reason="because").correct is False


def test_records_are_frozen_values() -> None:
    check = _check()
    with pytest.raises(TypeError, match="frozen"):
        check.rtol = 1.0  # type: ignore[misc]
    changed = check.model_copy(update={"rtol": 0.5})
    assert (changed.rtol, check.rtol) == (0.5, 1e-6)
    assert _check() == check
    assert hash(Option(text="a", reason="r")) == hash(Option(text="a", reason="r"))  # hashable fields: hashable
    assert changed != check
    assert pickle.loads(pickle.dumps(check)) == check


def test_a_field_overridden_without_annotation_is_refused_at_class_creation() -> None:
    with pytest.raises(TypeError, match="without an annotation"):

        class Looser(MatchesReference):  # defining it is the test
            rtol = 1e-3


@pytest.mark.parametrize("name", ["source_key", "model_dump", "model_copy"], ids=["source-key", "dump", "copy"])
def test_a_field_named_like_a_record_attribute_is_refused_at_class_creation(name: str) -> None:
    with pytest.raises(TypeError, match=f"may not be named '{name}'"):
        type("Clash", (Record,), {"__annotations__": {name: "str"}})


def test_source_key_is_carried_by_the_record_not_by_its_value_or_copies(cache_dir: Path) -> None:
    """A loaded spec knows the cache key of its file; equal values, dumps and pickles ignore it; copies lack it."""
    loaded = load_spec_file(ROOT / "exercises" / "stable-softmax.yaml")
    assert loaded.source_key is not None
    again = load_spec_file(ROOT / "exercises" / "stable-softmax.yaml")
    assert again is not loaded and again.source_key == loaded.source_key
    fresh = ImplementationExercise.model_validate(loaded.model_dump())
    assert fresh.source_key is None and fresh == loaded
    assert "source_key" not in loaded.model_dump()
    copies = [loaded.model_copy(), copy.copy(loaded), copy.deepcopy(loaded), pickle.loads(pickle.dumps(loaded))]
    assert [(item == loaded, item.source_key) for item in copies] == [(True, None)] * 4


def test_each_record_class_keeps_its_own_validating_model() -> None:
    class Base(Record):
        size: int = Field(default=1, gt=0)

    class Sized(Base):
        label: str = "x"

    assert model_for(Base) is model_for(Base)
    assert set(model_for(Sized).model_fields) == {"size", "label"}  # not the base's model, built first
    assert Sized.model_validate({"size": "2"}) == Sized.construct_trusted({"size": 2, "label": "x"})
    with pytest.raises(ValidationError):
        Sized.model_validate({"size": 0})


def test_dump_leaves_out_defaults_only_when_asked() -> None:
    entry = EntrySpec.model_validate({"signature": "softmax(z)", "args": {"z": "float_array"}})
    assert entry.model_dump(exclude_defaults=True) == {"signature": "softmax(z)", "args": {"z": "float_array"}}
    assert entry.model_dump()["returns"] == "a NumPy array of floats"
    assert ImplementationExercise.model_fields["time_limit"].default == 2.0


def _imported_after(code: str, cwd: Path) -> list[str]:
    heavy = "('pydantic', 'pydantic_core', 'yaml')"
    probe = code + f"\nimport sys\nprint(sorted(m for m in {heavy} if m in sys.modules))\n"
    done = subprocess.run([sys.executable, "-c", probe], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return eval(done.stdout.strip().splitlines()[-1])  # our own probe's list of names


def test_the_whole_check_library_loads_without_pydantic() -> None:
    assert _imported_after("import grader.spec.models, grader.checks.registry, grader.engine.call_loop", ROOT) == []


@pytest.mark.slow
def test_a_cold_grade_from_the_spec_cache_imports_no_pydantic(tmp_path: Path, cache_dir: Path) -> None:
    """The first grade validates (and caches) the spec; the next one reads it back and never loads pydantic."""
    shutil.copytree(ROOT / "exercises", tmp_path / "exercises")
    shutil.copytree(ROOT / "solutions", tmp_path / "solutions")
    grade = (
        "from grader.cli import main\n"
        "try:\n"
        "    main(['grade', 'solutions/stable-softmax/reference.py', '--exercise', 'stable-softmax'],"
        " standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
    )
    assert "pydantic" in _imported_after(grade, tmp_path)  # nothing cached yet: validated with pydantic
    assert _imported_after(grade, tmp_path) == []  # nor yaml: the spec comes from the cache
